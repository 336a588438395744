"""The losses, layers, nn.utils and utils.data pieces PyTorch programs reach for, against
PyTorch on every test device: values, gradients and error classes through
``torch_helper.compare``; modules with a torch state dict loaded. Few small float32 shapes."""

import numpy as np
import pytest
import torch
from torch_helper import Input, compare, index

import clgrad
from clgrad.autograd import gradcheck

C = ("contiguous",)
PM1 = np.array([1.0, -1.0, -1.0, 1.0, 1.0, -1.0], dtype="float32")  # {1, -1} targets


def _prob(shape, seed=1):
    p = np.random.default_rng(seed).uniform(0.1, 1, shape).astype("float32")
    return Input(values=p / p.sum(-1, keepdims=True), grad=False)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (
            lambda t, x, y: t.nn.functional.kl_div(x.log_softmax(-1), y, reduction="batchmean"),
            [(3, 4), _prob((3, 4))],
        ),
        (
            lambda t, x, y: t.nn.functional.kl_div(x, y, reduction="none", log_target=True),
            [(2, 3), (2, 3)],
        ),
        (lambda t, x, y: t.nn.functional.kl_div(x, y), [(2, 3), _prob((2, 3))]),
        (lambda t, x, y: t.nn.functional.huber_loss(x, y, delta=0.7), [(2, 3), (2, 3)]),
        (
            lambda t, x, y: t.nn.functional.smooth_l1_loss(x, y, beta=0.5, reduction="sum"),
            [(5,), (5,)],
        ),
        (
            lambda t, x, y: t.nn.functional.soft_margin_loss(x, y),
            [(6,), Input(values=PM1, grad=False)],
        ),
        (
            lambda t, x, y, w: t.nn.functional.multilabel_soft_margin_loss(
                x, y, w, reduction="none"
            ),
            [
                (2, 3),
                Input(values=np.eye(2, 3, dtype="float32"), grad=False),
                Input((3,), low=0.5, grad=False),
            ],
        ),
        (
            lambda t, x, y: t.nn.functional.multilabel_margin_loss(x, y),
            [
                (2, 4),
                Input(
                    values=np.array([[3, 0, -1, 1], [1, 2, 0, 3]]),
                    dtype="int64",
                    grad=False,
                    layouts=False,
                ),
            ],
        ),
        (lambda t, x, y: t.nn.functional.multi_margin_loss(x, y), [(3, 4), index((3,), 4)]),
        (
            lambda t, x, y, w: t.nn.functional.multi_margin_loss(
                x, y, p=2, margin=0.5, weight=w, reduction="sum"
            ),
            [(3, 4), index((3,), 4), Input((4,), low=0.5, grad=False)],
        ),
        (lambda t, x, y: t.nn.functional.multi_margin_loss(x, y), [(4,), index((), 4)]),
        (
            lambda t, a, b, y: t.nn.functional.margin_ranking_loss(a, b, y, margin=0.3),
            [(6,), (6,), Input(values=PM1, grad=False)],
        ),
        (
            lambda t, x, y: t.nn.functional.hinge_embedding_loss(x, y, margin=2.0),
            [(6,), Input(values=PM1, grad=False)],
        ),
        (
            lambda t, a, b, y: t.nn.functional.cosine_embedding_loss(
                a, b, y, margin=0.2, reduction="none"
            ),
            [(6, 3), (6, 3), Input(values=PM1, grad=False)],
        ),
        (
            lambda t, a, p, n: t.nn.functional.triplet_margin_loss(a, p, n, swap=True),
            [(4, 3), (4, 3), (4, 3)],
        ),
        (
            lambda t, a, p, n: t.nn.functional.triplet_margin_loss(a, p, n, p=1, margin=2.0),
            [(4, 3), (4, 3), (4, 3)],
        ),
        (
            lambda t, a, p, n: t.nn.functional.triplet_margin_with_distance_loss(
                a, p, n, distance_function=lambda x, y: 1 - t.nn.functional.cosine_similarity(x, y)
            ),
            [(4, 3), (4, 3), (4, 3)],
        ),
        (
            lambda t, x, y: t.nn.functional.poisson_nll_loss(x, y),
            [(2, 3), Input((2, 3), low=0, high=4, grad=False)],
        ),
        (
            lambda t, x, y: t.nn.functional.poisson_nll_loss(x, y, log_input=False, full=True),
            [Input((2, 3), low=0.1, high=3), Input((2, 3), low=0, high=4, grad=False)],
        ),
        (
            lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(x, y, v),
            [(2, 3), (2, 3), Input((2, 3), low=0.1, high=2)],
        ),
        (
            lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(
                x, y, v, full=True, reduction="sum"
            ),
            [(2, 3), (2, 3), Input((2, 1), low=0.0, high=2)],
        ),
        (
            lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(x, y, v),
            [(2, 3), (2, 3), Input((2,), low=0.1, high=2)],
        ),
        (
            lambda t, x, y, w: t.nn.functional.binary_cross_entropy_with_logits(x, y, pos_weight=w),
            [
                (2, 3),
                Input((2, 3), low=0, high=1, grad=False),
                Input((3,), low=0.5, high=2, grad=False),
            ],
        ),
        (
            lambda t, x, y, w: t.nn.functional.cross_entropy(
                x, y, w, ignore_index=1, label_smoothing=0.2
            ),
            [(4, 3, 2), index((4, 2), 3), Input((3,), low=0.5, grad=False)],
        ),
        (
            lambda t, x, y: t.nn.functional.cross_entropy(
                x, y, label_smoothing=0.1, reduction="none"
            ),
            [(3, 4), _prob((3, 4))],
        ),
        (
            lambda t, x, y, w: t.nn.functional.nll_loss(x.log_softmax(1), y, w, ignore_index=0),
            [(2, 3, 2, 2), index((2, 2, 2), 3), Input((3,), low=0.5, grad=False)],
        ),
    ],
    ids=lambda v: "" if isinstance(v, list) else None,
)
def test_losses(fn, inputs):
    compare(fn, *inputs, layouts=C)


def test_loss_errors():
    x = Input((3, 4))
    compare(lambda t, x, y: t.nn.functional.multi_margin_loss(x, y, p=3), x, index((3,), 4))
    compare(lambda t, x, y: t.nn.functional.multi_margin_loss(x, y), x, index((2,), 4))
    compare(lambda t, x, y: t.nn.functional.gaussian_nll_loss(x, y, -1.0), x, x)
    compare(lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(x, y, v), x, x, Input((4, 3)))
    compare(lambda t, x, y: t.nn.functional.kl_div(x, y, reduction="avg"), x, x)
    compare(lambda t, x, y: t.nn.functional.triplet_margin_loss(x, y, y[None]), x, x)
    compare(lambda t, x, y: t.nn.functional.margin_ranking_loss(x, y, y[0]), x, x)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (lambda t, x, w: t.nn.functional.rms_norm(x, (4,), w), [(2, 3, 4), (4,)]),
        (lambda t, x: t.nn.functional.rms_norm(x, (3, 4), eps=1e-3), [(2, 3, 4)]),
        (lambda t, x: t.nn.functional.alpha_dropout(x, 0.3, training=False), [(2, 3)]),
        (lambda t, x: t.nn.functional.dropout1d(x, 0.5, training=False), [(2, 3, 4)]),
        (lambda t, x: t.nn.functional.dropout1d(x), [(2,)]),
        (lambda t, x: t.nn.functional.dropout3d(x, 1.0), [(1, 2, 2, 1, 2)]),
        (
            lambda t, th: t.nn.functional.affine_grid(th, (2, 1, 3, 4), align_corners=False),
            [(2, 2, 3)],
        ),
        (
            lambda t, th: t.nn.functional.affine_grid(th, (1, 1, 2, 3, 2), align_corners=True),
            [(1, 3, 4)],
        ),
    ],
    ids=lambda v: "" if isinstance(v, list) else None,
)
def test_layers(fn, inputs):
    compare(fn, *inputs, layouts=C)


@pytest.mark.parametrize("align_corners", [True, False])
def test_identity_affine_grid_samples_as_torch(device, align_corners):
    # the spatial transformer tutorial's start: an identity theta, whose grid points sit on
    # pixel centres up to their last bits; torch's rounding of the base grid (linspace, then
    # * (n - 1) / n) decides which side of each pixel they fall on, and so theta's gradient
    x = np.random.default_rng(0).random((1, 1, 4, 5)).astype(np.float32)
    grads = []
    for lib, kw in ((torch, {}), (clgrad, {"device": device})):
        F = lib.nn.functional
        theta = lib.tensor([[[1.0, 0, 0], [0, 1, 0]]], requires_grad=True, **kw)
        grid = F.affine_grid(theta, (1, 1, 4, 5), align_corners=align_corners)
        out = F.grid_sample(lib.tensor(x, **kw), grid, align_corners=align_corners)
        (out * lib.arange(20.0, **kw).reshape(1, 1, 4, 5)).sum().backward()
        grads.append(theta.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    # nearest's grid gradient is zeros, but the grid is in the graph (torch's is one op)
    grid = Input((2, 3, 2, 2), low=-1.4, high=1.4)
    compare(
        lambda t, x, g: t.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners),
        (2, 2, 4, 3),
        grid,
        layouts=C,
    )


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_volume(mode, padding_mode):
    # a 3-d spatial transformer: (x, y, z) of a (N, D, H, W, 3) grid sample (N, C, D, H, W)
    compare(
        lambda t, x, g: t.nn.functional.grid_sample(x, g, mode, padding_mode, False),
        (2, 2, 3, 4, 3),
        Input((2, 2, 3, 2, 3), low=-1.4, high=1.4),
        layouts=C,
    )


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_on_the_border(mode, padding_mode, align_corners):
    # the identity grid of a spatial transformer's initial state puts points on the image's
    # border (+-1 with align_corners, +-0.75 without, in a 4 x 4 image), where the padding's
    # clipping passes no gradient to the grid (ATen's clip_coordinates_set_grad); and past it
    ends = [-1.2, -1.0, -0.75, -0.5, 0.0, 0.5, 0.75, 1.0, 1.2]
    grid = np.array(np.meshgrid(ends, ends[::-1]), dtype="float32").transpose(1, 2, 0)
    compare(
        lambda t, x, g: t.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners),
        (1, 2, 4, 4),
        Input(values=grid[None]),
        layouts=C,
    )


def test_grid_sample_checks():
    F = "t.nn.functional.grid_sample"
    for x, g, mode in [
        ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), "bicubic"),
        ((1, 1, 2, 2), (1, 1, 1, 3), "bilinear"),
        ((1, 1, 2, 2), (2, 1, 1, 2), "bilinear"),
        ((1, 1, 2, 2), (1, 1, 1, 1, 2), "bilinear"),
        ((1, 1, 0, 2), (1, 1, 1, 2), "bilinear"),
        ((1, 1, 2), (1, 1, 1), "bilinear"),
        ((0, 1, 2, 2), (0, 3, 1, 2), "nearest"),
    ]:
        compare(
            eval(f"lambda t, x, g: {F}(x, g, {mode!r}, align_corners=False)"),
            x,
            g,
            grad=False,
            layouts=C,
        )
    for lib in (torch, clgrad):
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            lib.nn.functional.affine_grid(lib.eye(2, 3)[None], (1, 1, 2, 2))


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (
            lambda t, w, i, o: t.nn.functional.embedding_bag(i, w, o, mode="sum"),
            [
                (5, 3),
                index((7,), 5),
                Input(values=np.array([0, 2, 2, 6]), dtype="int64", grad=False, layouts=False),
            ],
        ),
        (
            lambda t, w, i, o: t.nn.functional.embedding_bag(i, w, o, padding_idx=1),
            [
                (5, 3),
                index((7,), 5),
                Input(values=np.array([0, 3, 7]), dtype="int64", grad=False, layouts=False),
            ],
        ),
        (
            lambda t, w, i: t.nn.functional.embedding_bag(i, w, mode="max"),
            [(5, 3), index((2, 3), 5)],
        ),
        (
            lambda t, w, i, o, s: t.nn.functional.embedding_bag(
                i, w, o, mode="sum", per_sample_weights=s, include_last_offset=True
            ),
            [
                (5, 3),
                index((6,), 5),
                Input(values=np.array([0, 2, 6]), dtype="int64", grad=False, layouts=False),
                (6,),
            ],
        ),
        (
            lambda t, w, i: t.nn.functional.embedding(i, w, padding_idx=2),
            [(5, 3), index((2, 4), 5)],
        ),
        (
            lambda t, w, i, o: t.nn.functional.embedding_bag(
                i, w, o, mode="max", per_sample_weights=o
            ),
            [
                (5, 3),
                index((6,), 5),
                Input(values=np.array([0, 2]), dtype="int64", grad=False, layouts=False),
            ],
        ),
    ],
    ids=lambda v: "" if isinstance(v, list) else None,
)
def test_embedding_bag(fn, inputs):
    compare(fn, *inputs, layouts=C)


def test_gradcheck_float64():
    x = clgrad.randn(2, 3, dtype=clgrad.float64, requires_grad=True)
    y = clgrad.randn(2, 3, dtype=clgrad.float64)
    assert gradcheck(lambda a: clgrad.nn.functional.kl_div(a.log_softmax(1), y.softmax(1)), (x,))
    g = (clgrad.rand(1, 2, 2, 2, dtype=clgrad.float64) * 1.6 - 0.8).requires_grad_()
    img = clgrad.randn(1, 1, 3, 3, dtype=clgrad.float64, requires_grad=True)
    assert gradcheck(
        lambda i, gr: clgrad.nn.functional.grid_sample(i, gr, align_corners=True), (img, g)
    )


def test_random_layers(device):
    F = clgrad.nn.functional
    x = clgrad.randn(2, 4, 3, 5, device=device)
    y = F.alpha_dropout(x, 0.5, training=True)
    dropped = -1.7580993408473766 * (1 / np.sqrt((1.7580993408473766**2 * 0.5 + 1) * 0.5)) + (
        1.7580993408473766 * (1 / np.sqrt((1.7580993408473766**2 * 0.5 + 1) * 0.5)) * 0.5
    )
    vals = y.cpu().numpy()
    assert np.isclose(vals, dropped, atol=1e-5).any()
    f = F.feature_alpha_dropout(x, 0.5, training=True).cpu().numpy()
    d = np.isclose(f, dropped, atol=1e-5).all(axis=(2, 3))
    assert d.any() and (np.isclose(f, dropped, atol=1e-5).any(axis=(2, 3)) == d).all()
    z = F.dropout3d(clgrad.ones(2, 6, 1, 2, 2, device=device)).cpu().numpy()
    assert (z.max(axis=(2, 3, 4)) == z.min(axis=(2, 3, 4))).all()
    logits = clgrad.randn(3, 5, device=device, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert np.allclose(soft.sum(-1).detach().cpu().numpy(), 1, atol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True, dim=1)
    assert sorted(np.unique(hard.detach().cpu().numpy())) == [0.0, 1.0]
    hard.mul(clgrad.arange(5.0, device=device)).sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum().item() > 0


def _load(cm, tm):
    cm.load_state_dict({k: clgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return cm


def test_modules(device):
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2, 4)).astype("float32")
    for name, args in (("BatchNorm3d", (3,)), ("RMSNorm", ((2, 4),))):
        tm = getattr(torch.nn, name)(*args)
        with torch.no_grad():
            for p in tm.parameters():
                p.uniform_(0.5, 1.5)
        cm = _load(getattr(clgrad.nn, name)(*args), tm).to(device)
        for _ in range(2):
            tx = torch.tensor(x, requires_grad=True)
            cx = clgrad.tensor(x, device=device, requires_grad=True)
            tm(tx).square().sum().backward()
            cm(cx).square().sum().backward()
            np.testing.assert_allclose(cx.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-4)
        for (k, tv), cv in zip(tm.state_dict().items(), cm.state_dict().values()):
            np.testing.assert_allclose(cv.cpu().numpy(), tv.numpy(), atol=1e-5, err_msg=k)
    tm = torch.nn.EmbeddingBag(6, 3, mode="max")
    cm = _load(clgrad.nn.EmbeddingBag(6, 3, mode="max"), tm).to(device)
    idx = np.array([[0, 5, 2], [1, 1, 3]])
    np.testing.assert_allclose(
        cm(clgrad.tensor(idx, device=device)).detach().cpu().numpy(),
        tm(torch.tensor(idx)).detach().numpy(),
        atol=1e-6,
    )
    for name, kw in (
        ("KLDivLoss", {"reduction": "batchmean", "log_target": True}),
        ("SoftMarginLoss", {}),
        ("MultiLabelSoftMarginLoss", {}),
        ("PoissonNLLLoss", {"full": True}),
        ("HuberLoss", {"delta": 0.5}),
    ):
        a, b = np.random.default_rng(1).uniform(0, 2, (2, 2, 3)).astype("float32")
        want = getattr(torch.nn, name)(**kw)(torch.tensor(a), torch.tensor(b))
        got = getattr(clgrad.nn, name)(**kw)(
            clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
        )
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5, err_msg=name)
    with pytest.raises(ValueError):
        clgrad.nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError):
        clgrad.nn.MultiMarginLoss(p=3)


def test_containers():
    d = clgrad.nn.ParameterDict({"a": clgrad.ones(2)})
    d["b"] = clgrad.nn.Parameter(clgrad.zeros(3))
    d.update({"c": clgrad.ones(1)})
    assert list(d) == ["a", "b", "c"] and isinstance(d["c"], clgrad.nn.Parameter)
    m = clgrad.nn.Module()
    m.p = d
    assert sorted(m.state_dict()) == ["p.a", "p.b", "p.c"]
    assert d.pop("b").shape == (3,) and "b" not in d and len(d) == 2


# ---- nn.utils --------------------------------------------------------------------------------
def test_clip_and_norms(device):
    a = clgrad.nn.Parameter(clgrad.tensor([3.0, 0.0], device=device))
    b = clgrad.nn.Parameter(clgrad.tensor([4.0], device=device))
    a.grad, b.grad = clgrad.tensor([3.0, 0.0], device=device), clgrad.tensor([4.0], device=device)
    U = clgrad.nn.utils
    assert U.get_total_norm([a.grad, b.grad]).item() == pytest.approx(5.0)
    assert U.get_total_norm([a.grad, b.grad], norm_type=1).item() == pytest.approx(7.0)
    total = U.clip_grad_norm_([a, b], 1.0, foreach=True)
    assert total.item() == pytest.approx(5.0)
    assert a.grad.tolist() == pytest.approx([0.6, 0.0], abs=1e-5)
    U.clip_grads_with_norm_([a, b], 0.5, clgrad.tensor(1.0, device=device))
    assert b.grad.tolist() == pytest.approx([0.4], abs=1e-5)
    U.clip_grad_value_([a, b], 0.1, foreach=False)
    assert b.grad.tolist() == pytest.approx([0.1])
    b.grad = clgrad.tensor([float("inf")], device=device)
    with pytest.raises(RuntimeError):
        U.clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True)
    v = U.parameters_to_vector([a, b])
    U.vector_to_parameters(v * 2, [a, b])
    assert b.tolist() == [8.0]


def test_weight_norm(device):
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    for dim in (0, 1, None):
        tm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3), dim=dim)
        cm = clgrad.nn.utils.parametrizations.weight_norm(clgrad.nn.Linear(4, 3), dim=dim)
        assert list(cm.state_dict()) == list(tm.state_dict())
        _load(cm, tm).to(device)
        tm(torch.tensor(x)).square().sum().backward()
        cm(clgrad.tensor(x, device=device)).square().sum().backward()
        for (k, tp), cp in zip(tm.named_parameters(), cm.parameters()):
            np.testing.assert_allclose(cp.grad.cpu().numpy(), tp.grad.numpy(), atol=1e-5, err_msg=k)
        clgrad.nn.utils.parametrize.remove_parametrizations(cm, "weight")
        np.testing.assert_allclose(
            cm.weight.detach().cpu().numpy(), tm.weight.detach().numpy(), atol=1e-6
        )
    with pytest.warns(FutureWarning):
        tm = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    cm = _load(clgrad.nn.utils.weight_norm(clgrad.nn.Linear(4, 3)), tm).to(device)
    np.testing.assert_allclose(
        cm(clgrad.tensor(x, device=device)).detach().cpu().numpy(),
        tm(torch.tensor(x)).detach().numpy(),
        atol=1e-5,
    )


def test_rnn_utils(device):
    from torch.nn.utils import rnn as trnn

    from clgrad.nn.utils import rnn as crnn

    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 2)).astype("float32") for n in (2, 4, 1)]
    ts = [torch.tensor(s, requires_grad=True) for s in seqs]
    cs = [clgrad.tensor(s, device=device, requires_grad=True) for s in seqs]
    for kw in ({}, {"batch_first": True, "padding_value": -1.0, "padding_side": "left"}):
        np.testing.assert_array_equal(
            crnn.pad_sequence(cs, **kw).detach().cpu().numpy(),
            trnn.pad_sequence(ts, **kw).detach().numpy(),
        )
    tp, cp = (
        trnn.pack_sequence(ts, enforce_sorted=False),
        crnn.pack_sequence(cs, enforce_sorted=False),
    )
    for a, b in zip(cp, tp):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().numpy())
    (tpad, tl), (cpad, cl) = (
        trnn.pad_packed_sequence(tp, total_length=5),
        crnn.pad_packed_sequence(cp, total_length=5),
    )
    np.testing.assert_array_equal(cpad.detach().cpu().numpy(), tpad.detach().numpy())
    assert cl.tolist() == tl.tolist()
    assert [u.shape[0] for u in crnn.unpack_sequence(cp)] == [2, 4, 1]
    assert [u.shape[0] for u in crnn.unpad_sequence(cpad, cl)] == [2, 4, 1]
    with pytest.raises(RuntimeError):
        crnn.pack_padded_sequence(cpad, [1, 4, 2])
    for mode in ("RNN", "LSTM", "GRU"):
        tm = getattr(torch.nn, mode)(2, 3, num_layers=2, bidirectional=True, batch_first=True)
        cm = _load(
            getattr(clgrad.nn, mode)(2, 3, num_layers=2, bidirectional=True, batch_first=True), tm
        ).to(device)
        tx = [torch.tensor(s, requires_grad=True) for s in seqs]
        cx = [clgrad.tensor(s, device=device, requires_grad=True) for s in seqs]
        to, th = tm(trnn.pack_sequence(tx, enforce_sorted=False))
        co, ch = cm(crnn.pack_sequence(cx, enforce_sorted=False))
        th, ch = (th[0], ch[0]) if mode == "LSTM" else (th, ch)
        assert (
            isinstance(co, crnn.PackedSequence)
            and co.batch_sizes.tolist() == to.batch_sizes.tolist()
        )
        np.testing.assert_allclose(
            co.data.detach().cpu().numpy(), to.data.detach().numpy(), atol=1e-5
        )
        np.testing.assert_allclose(ch.detach().cpu().numpy(), th.detach().numpy(), atol=1e-5)
        (to.data.sum() + th.sum()).backward()
        (co.data.sum() + ch.sum()).backward()
        for a, b in zip(cx, tx):
            np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), atol=1e-5)


# ---- utils.data ------------------------------------------------------------------------------
def test_data_pieces():
    D = clgrad.utils.data

    class Count(D.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    loader = D.DataLoader(Count(5), batch_size=2, drop_last=True)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3]]
    assert list(D.DataLoader(Count(3), batch_size=None)) == [0, 1, 2]
    assert list(Count(2) + Count(1)) == [0, 1, 0]
    with pytest.raises(ValueError):
        D.DataLoader(Count(3), shuffle=True)
    with pytest.raises(ValueError):
        D.DataLoader(Count(3), sampler=[0, 1])
    stack = D.StackDataset(a=[1, 2], b=[3, 4])
    assert stack[1] == {"a": 2, "b": 4} and D.StackDataset([1], [2])[0] == (1, 2)
    with pytest.raises(ValueError):
        D.StackDataset([1], [2, 3])
    assert D.get_worker_info() is None
    g = clgrad.Generator().manual_seed(0)
    assert sorted(D.SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 20, generator=g))
    assert len(w) == 20 and set(w) <= {1, 3}
    assert sorted(D.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    with pytest.raises(ValueError):
        D.WeightedRandomSampler([1.0], 0)
    conv = D.default_convert({"x": np.arange(3), "t": (np.float32(2.0), "s")})
    want = torch.utils.data.default_convert({"x": np.arange(3), "t": (np.float32(2.0), "s")})
    assert conv["x"].tolist() == want["x"].tolist() and conv["t"][1] == "s"
    assert type(conv["t"]) is type(want["t"]) and conv["t"][0].dtype == clgrad.float32
    ds = D.TensorDataset(clgrad.arange(6.0))
    batches = D.DataLoader(
        ds, batch_sampler=D.BatchSampler(D.SubsetRandomSampler([0, 2, 4]), 2, False),
        collate_fn=lambda b: len(b), pin_memory=True, persistent_workers=False,
        worker_init_fn=lambda i: None, prefetch_factor=None,
    )  # fmt: skip
    assert list(batches) == [2, 1]
    assert [
        len(b[0]) for b in D.DataLoader(ds, batch_size=4, sampler=range(5), drop_last=True)
    ] == [4]
    gen = clgrad.Generator().manual_seed(3)
    first = [b[0].tolist() for b in D.DataLoader(ds, batch_size=6, shuffle=True, generator=gen)]
    assert sorted(first[0]) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize(
    "name, args",
    [
        ("uniform", ()),
        ("normal", ()),
        ("constant", (0.5,)),
        ("eye", ()),
        ("xavier_uniform", ()),
        ("xavier_normal", ()),
        ("kaiming_uniform", ()),
        ("kaiming_normal", ()),
        ("orthogonal", ()),
        ("sparse", (0.5,)),
    ],
)
def test_deprecated_init_names_warn_and_fill(name, args):
    """``nn.init.xavier_uniform(w)`` and the other names without the underscore: torch's
    FutureWarning, then the in-place fill (the same tensor back)."""
    for lib in (torch, clgrad):
        w = lib.zeros(4, 3)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}_"):
            out = getattr(lib.nn.init, name)(w, *args)
        assert out is w and bool((w != 0).any())
    w = clgrad.zeros(2, 2, 3)
    with pytest.warns(FutureWarning):
        clgrad.nn.init.dirac(w)
    assert float(w.sum()) == 2


def test_prelu_and_unsafe_split_forms_match_torch(device):
    """``torch.prelu`` / ``Tensor.prelu`` (the functional's op) and the unsafe split family:
    values, gradients, and pieces whose in-place writes are not refused."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    w = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        xt = lib.tensor(x, device=dev, requires_grad=True)
        wt = lib.tensor(w, device=dev, requires_grad=True)
        outs = [lib.prelu(xt, wt), xt.prelu(wt)]
        sum(o.sum() for o in outs).backward()
        pieces = [
            lib.split_with_sizes(xt.detach(), [1, 2]),
            lib.unsafe_split(xt.detach(), 2, 1),
            xt.detach().unsafe_chunk(3, 2),
            xt.detach().unsafe_split_with_sizes([3, 1], 1),
        ]
        y = xt * 1
        a, _ = lib.unsafe_chunk(y, 2, 1)
        a.mul_(2)  # no multi-view error, unlike split's pieces
        results.append(
            (
                [o.detach().cpu().numpy() for o in outs],
                xt.grad.cpu().numpy(),
                wt.grad.cpu().numpy(),
                [[p.cpu().numpy() for p in ps] for ps in pieces],
                a.detach().cpu().numpy(),
            )
        )
    (o1, gx1, gw1, p1, a1), (o2, gx2, gw2, p2, a2) = results
    for u, v in zip(o1 + [gx1, gw1, a1], o2 + [gx2, gw2, a2]):
        np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)
    for ps, qs in zip(p1, p2):
        assert [q.shape for q in qs] == [p.shape for p in ps]
        for p, q in zip(ps, qs):
            np.testing.assert_array_equal(q, p)


def test_sync_batchnorm_alone_matches_torch(device):
    """Without a process group (or in eval mode) SyncBatchNorm is a batch norm of the local
    batch, as torch's; convert_sync_batchnorm swaps every batch norm, sharing its state.
    (Several ranks: tests/mpi_checks.py.)"""
    x = np.random.default_rng(4).standard_normal((4, 3, 5)).astype(np.float32)
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        model = lib.nn.Sequential(lib.nn.Linear(5, 5), lib.nn.BatchNorm1d(3)).to(dev)
        bn = model[1]
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        sync = converted[1]
        assert type(sync) is lib.nn.SyncBatchNorm and repr(sync) == repr(bn).replace(
            "BatchNorm1d", "SyncBatchNorm"
        )
        assert sync.weight is bn.weight and sync.running_mean is bn.running_mean
        xt = lib.tensor(x, device=dev, requires_grad=True)
        y = sync(xt)
        (y * y).sum().backward()
        results.append(
            (y.detach().cpu().numpy(), xt.grad.cpu().numpy(), sync.running_var.cpu().numpy())
        )
        for bad in (lib.ones(3, device=dev), lib.ones(2, 0, 3, device=dev)):
            with pytest.raises(ValueError):
                sync(bad)
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_deprecated_utils_match_torch(device):
    """clip_grad_norm (FutureWarning, then clip_grad_norm_), skip_init's checks, and
    torch.testing.assert_allclose's looser defaults, each as torch's."""
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        w = lib.nn.Parameter(lib.zeros(2, device=dev))
        w.grad = lib.tensor([3.0, 4.0], device=dev)
        with pytest.warns(FutureWarning):
            total = lib.nn.utils.clip_grad_norm([w], 1.0)
        assert float(total) == 5.0 and w.grad.tolist() == pytest.approx([0.6, 0.8])
        layer = lib.nn.utils.skip_init(lib.nn.Linear, 6, 1, device=dev)
        assert tuple(layer.weight.shape) == (1, 6)
        with pytest.raises(RuntimeError):
            lib.nn.utils.skip_init(int)
        with pytest.raises(RuntimeError):
            lib.nn.utils.skip_init(lib.nn.ReLU)
        with pytest.warns(FutureWarning):
            lib.testing.assert_allclose(lib.tensor([1.0, float("nan")]), [1.00005, float("nan")])
        with pytest.warns(FutureWarning), pytest.raises(AssertionError):
            lib.testing.assert_allclose(lib.tensor([1.0]), [1.001])


def _spectral_models(api, make):
    """The same layer under spectral norm in torch and clgrad, clgrad's state (weights and the
    power method's vectors) loaded from torch's."""
    torch.manual_seed(3)
    tm = getattr(torch.nn.utils, api)(make(torch))
    cm = getattr(clgrad.nn.utils, api)(make(clgrad))
    cm.load_state_dict({k: clgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, cm


@pytest.mark.parametrize("api", ["spectral_norm", "parametrizations.spectral_norm"])
@pytest.mark.parametrize(
    "layer, shape",
    [
        (lambda lib: lib.nn.Linear(5, 4), (3, 5)),
        (lambda lib: lib.nn.Conv2d(2, 3, 3), (2, 2, 5, 5)),
        (lambda lib: lib.nn.ConvTranspose2d(3, 2, 2), (1, 3, 3, 3)),  # normalized over dim 1
    ],
)
def test_spectral_norm_matches_torch(device, api, layer, shape):
    """Training steps (a power step per forward, then SGD), then eval (no step): outputs,
    weights, gradients and the power method's vectors as torch's."""
    if api.startswith("parametrizations."):
        api = api.split(".")[1]
        tm, cm = _spectral_models_new(layer)
    else:
        tm, cm = _spectral_models(api, layer)
    cm = cm.to(device)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    copt = clgrad.optim.SGD(cm.parameters(), lr=0.1)
    for _ in range(3):
        tout, cout = tm(torch.tensor(x)), cm(clgrad.tensor(x, device=device))
        tout.square().sum().backward()
        cout.square().sum().backward()
        np.testing.assert_allclose(cout.detach().cpu().numpy(), tout.detach().numpy(), 1e-4, 1e-5)
        topt.step(), copt.step()
        topt.zero_grad(), copt.zero_grad()
    for (name, tv), (cname, cv) in zip(tm.state_dict().items(), cm.state_dict().items()):
        assert name == cname
        np.testing.assert_allclose(cv.cpu().numpy(), tv.numpy(), 1e-4, 1e-5, err_msg=name)
    tm.eval(), cm.eval()
    np.testing.assert_allclose(
        cm(clgrad.tensor(x, device=device)).detach().cpu().numpy(),
        tm(torch.tensor(x)).detach().numpy(),
        1e-4,
        1e-5,
    )


def _spectral_models_new(make):
    torch.manual_seed(3)
    tm = torch.nn.utils.parametrizations.spectral_norm(make(torch))
    cm = clgrad.nn.utils.parametrizations.spectral_norm(make(clgrad))
    cm.load_state_dict({k: clgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, cm


def test_spectral_norm_errors_and_removal_match_torch():
    for lib in (torch, clgrad):
        layer = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3))
        with pytest.raises(RuntimeError):
            lib.nn.utils.spectral_norm(layer)
        layer.eval()
        expected = layer(lib.ones(1, 4))
        layer = lib.nn.utils.remove_spectral_norm(layer)
        assert sorted(layer.state_dict()) == ["bias", "weight"]
        assert bool((layer(lib.ones(1, 4)) - expected).abs().max() < 1e-6)
        with pytest.raises(ValueError):
            lib.nn.utils.remove_spectral_norm(layer)
        with pytest.raises(ValueError):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(IndexError):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2)
