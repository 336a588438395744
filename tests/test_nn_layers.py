"""The drop-in layers of clgrad.nn against PyTorch on every test device: N-d convolutions and
transposed convolutions, pooling, interpolation, padding, attention, transformers, recurrent
layers, normalization and activation modules.

Functional ops go through ``torch_helper.compare`` (forward, gradients, errors); modules are
built in torch, their state dict loaded into the clgrad module (PyTorch's parameter names), and
outputs plus input and parameter gradients compared. Few, small float32 shapes: every kernel
variant costs an OpenCL build from a cold cache."""

import functools

import numpy as np
import pytest
import torch
from conftest import DEVICES, supports
from torch_helper import Input, compare

import clgrad
import clgrad.nn as cnn
from clgrad.autograd import gradcheck

C = ("contiguous",)


# ---- functional ops --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda t, x, w, b: t.nn.functional.conv1d(x, w, b, 2, 1, 2), [(2, 4, 9), (6, 4, 3), (6,)]),
        (
            lambda t, x, w: t.nn.functional.conv1d(x, w, groups=2, padding="same"),
            [(2, 4, 8), (6, 2, 3)],
        ),
        (lambda t, x, w: t.nn.functional.conv1d(x, w), [(4, 7), (3, 4, 2)]),
        (
            lambda t, x, w, b: t.nn.functional.conv2d(x, w, b, (2, 1), (1, 2), (1, 2), 2),
            [(2, 4, 7, 6), (6, 2, 3, 2), (6,)],
        ),
        (
            lambda t, x, w, b: t.nn.functional.conv3d(x, w, b, 2, 1),
            [(1, 2, 5, 4, 6), (3, 2, 3, 2, 3), (3,)],
        ),
        (
            lambda t, x, w: t.nn.functional.conv3d(x, w, padding="valid"),
            [(2, 5, 4, 6), (3, 2, 1, 2, 3)],
        ),
        (
            lambda t, x, w, b: t.nn.functional.conv_transpose1d(x, w, b, 3, 1, 2),
            [(2, 4, 5), (4, 3, 3), (3,)],
        ),
        (
            lambda t, x, w, b: t.nn.functional.conv_transpose2d(
                x, w, b, 2, (1, 0), (1, 0), 2, (1, 2)
            ),
            [(2, 4, 4, 3), (4, 3, 3, 2), (6,)],
        ),
        (
            lambda t, x, w: t.nn.functional.conv_transpose2d(x, w, dilation=3, output_padding=2),
            [(1, 2, 3, 3), (2, 1, 2, 2)],
        ),
        (
            lambda t, x, w, b: t.nn.functional.conv_transpose3d(x, w, b, (1, 2, 2), 1),
            [(1, 2, 3, 4, 3), (2, 2, 3, 3, 2), (2,)],
        ),
        (lambda t, x, w: t.nn.functional.conv_transpose1d(x, w), [(3, 5), (3, 2, 2)]),
    ],
    ids=lambda v: "" if isinstance(v, list) else None,
)
def test_convolutions(fn, shapes):
    compare(fn, *shapes, layouts=C)


def test_convolution_errors():
    x, w = Input((1, 2, 5)), Input((3, 2, 2))
    compare(lambda t, x, w: t.nn.functional.conv1d(x, w, stride=2, padding="same"), x, w)
    compare(lambda t, x, w: t.nn.functional.conv1d(x, w, stride=0), x, w)
    compare(lambda t, x, w: t.nn.functional.conv1d(x, w, groups=2), x, w)
    compare(lambda t, x, w: t.nn.functional.conv2d(x, w), x, w)
    compare(
        lambda t, x, w: t.nn.functional.conv_transpose1d(x, w, stride=2, output_padding=2),
        (1, 3, 4),
        w,
    )
    compare(lambda t, x, w: t.nn.functional.conv_transpose1d(x, w), x, w)
    # the bias: of the input's dtype, one element per output channel (torch's errors)
    for bias in (Input((3,), "float64"), Input((2,)), Input((1, 3))):
        compare(lambda t, x, w, b: t.nn.functional.conv1d(x, w, b), x, w, bias)


@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_is_one_node(groups):
    """A convolution records PyTorch's one node, ConvolutionBackward0 over input, weight and
    bias; its gradients, and their own gradients (the column matrix made again with its graph
    under create_graph), as torch's."""
    for dev in DEVICES:
        ours = cnn.Conv2d(4, 6, 3, padding=1, groups=groups).to(dev)
        theirs = torch.nn.Conv2d(4, 6, 3, padding=1, groups=groups)
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(ours.weight.detach().cpu().numpy()))
            theirs.bias.copy_(torch.tensor(ours.bias.detach().cpu().numpy()))
        xn = np.random.default_rng(0).normal(size=(2, 4, 5, 6)).astype(np.float32)
        x = clgrad.tensor(xn, device=dev, requires_grad=True)
        tx = torch.tensor(xn, requires_grad=True)
        out, tout = ours(x), theirs(tx)
        assert out.grad_fn.name() == tout.grad_fn.name() == "ConvolutionBackward0"
        edges = [n.name() for n, _ in out.grad_fn.next_functions[:3]]
        assert edges == [n.name() for n, _ in tout.grad_fn.next_functions]
        (gx,) = clgrad.autograd.grad((out * out).sum(), x, create_graph=True)
        (tgx,) = torch.autograd.grad((tout * tout).sum(), tx, create_graph=True)
        np.testing.assert_allclose(gx.detach().cpu().numpy(), tgx.detach().numpy(), 1e-4, 1e-4)
        (gx * gx).sum().backward()
        (tgx * tgx).sum().backward()
        for a, b in ((x, tx), (ours.weight, theirs.weight), (ours.bias, theirs.bias)):
            np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), 1e-4, 1e-3)


@pytest.mark.parametrize(
    "fn, shape",
    [
        (
            lambda t, x: t.nn.functional.max_pool1d(
                x, 3, 2, 1, ceil_mode=True, return_indices=True
            ),
            (2, 3, 10),
        ),
        (lambda t, x: t.nn.functional.max_pool1d(x, 2, dilation=2), (3, 9)),
        (
            lambda t, x: t.nn.functional.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), True, True),
            (2, 3, 7, 8),
        ),
        (
            lambda t, x: t.nn.functional.max_pool3d(
                x, 2, 2, 1, return_indices=True, ceil_mode=True
            ),
            (1, 2, 5, 4, 5),
        ),
        (lambda t, x: t.nn.functional.avg_pool1d(x, 3, 2, 1, True, False), (2, 3, 10)),
        (lambda t, x: t.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 8, 7)),
        (
            lambda t, x: t.nn.functional.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
            (1, 2, 5, 6, 7),
        ),
        (lambda t, x: t.nn.functional.avg_pool3d(x, 2, 1, divisor_override=3), (2, 4, 3, 3)),
        (lambda t, x: t.nn.functional.adaptive_avg_pool1d(x, 3), (2, 3, 10)),
        (lambda t, x: t.nn.functional.adaptive_avg_pool3d(x, (2, 3, None)), (1, 2, 5, 7, 3)),
        (lambda t, x: t.nn.functional.adaptive_max_pool1d(x, 4, return_indices=True), (2, 3, 10)),
        (
            lambda t, x: t.nn.functional.adaptive_max_pool2d(x, (3, 4), return_indices=True),
            (2, 3, 7, 9),
        ),
        (lambda t, x: t.nn.functional.adaptive_max_pool3d(x, (2, 3, 2), True), (1, 2, 5, 7, 3)),
        (lambda t, x: t.nn.functional.lp_pool1d(x.abs() + 0.1, 2, 3, 2), (2, 3, 10)),
        (
            lambda t, x: t.nn.functional.lp_pool2d(x.abs() + 0.1, 3.0, (2, 3), ceil_mode=True),
            (2, 3, 7, 8),
        ),
        (
            lambda t, x: t.nn.functional.max_unpool1d(
                *t.nn.functional.max_pool1d(x, 3, 2, 1, return_indices=True), 3, 2, 1
            ),
            (2, 3, 9),
        ),
        (
            lambda t, x: t.nn.functional.max_unpool2d(
                *t.nn.functional.max_pool2d(x, 2, return_indices=True), 2, output_size=(5, 7)
            ),
            (2, 3, 5, 7),
        ),
    ],
    ids=lambda v: "" if isinstance(v, tuple) else None,
)
def test_pooling(fn, shape):
    compare(fn, shape, layouts=C)


def test_pooling_errors():
    compare(lambda t, x: t.nn.functional.max_pool1d(x, 2), (2, 3, 4, 5))
    compare(lambda t, x: t.nn.functional.avg_pool1d(x, 2), (3,))
    compare(lambda t, x: t.nn.functional.max_pool2d(x, 2, padding=2), (1, 4, 4))


@pytest.mark.parametrize(
    "mode, shape",
    [
        ("nearest", (2, 3, 5)),
        ("nearest-exact", (1, 2, 5, 4)),
        ("nearest", (1, 2, 3, 4, 5)),
        ("linear", (2, 3, 5)),
        ("bilinear", (1, 2, 5, 4)),
        ("bicubic", (1, 2, 5, 4)),
        ("trilinear", (1, 2, 3, 4, 3)),
        ("area", (1, 2, 5, 4)),
    ],
)
def test_interpolate(mode, shape):
    nd = len(shape) - 2
    corners = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
    size = tuple(range(3, 3 + nd))
    for ac in corners:
        compare(
            lambda t, x, ac=ac: t.nn.functional.interpolate(
                x, scale_factor=1.7, mode=mode, align_corners=ac
            ),
            shape,
            layouts=C,
        )
        compare(
            lambda t, x, ac=ac: t.nn.functional.interpolate(
                x, size=size, mode=mode, align_corners=ac
            ),
            shape,
            layouts=C,
        )
    if mode != "area":
        compare(
            lambda t, x: t.nn.functional.interpolate(
                x, scale_factor=0.6, mode=mode, recompute_scale_factor=True
            ),
            shape,
            layouts=C,
        )


@pytest.mark.parametrize("mode, shape", [("linear", (1, 2, 4)), ("bilinear", (1, 2, 4, 3))])
@pytest.mark.parametrize("resize", ["size kept", "scale 1.2 kept", "halved", "bicubic kept"])
def test_interpolate_infinities_and_kept_sizes(device, mode, shape, resize):
    """Each output is its taps' products added, as PyTorch's kernels: an infinite neighbour
    gives inf (a dense interpolation matrix's zero weights made NaN), a linear dim of unchanged
    size is ATen's copy (the element twice, weighed 1 and 0: NaN where it is infinite, whatever
    the scale factor), and bicubic keeps its taps there too."""
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x.flat[1], x.flat[5] = np.inf, -np.inf
    kw = {
        "size kept": dict(size=shape[2:]),
        "scale 1.2 kept": dict(scale_factor=1.2),
        "halved": dict(scale_factor=0.5, recompute_scale_factor=True),
        "bicubic kept": dict(size=shape[2:]),
    }[resize]
    if resize == "bicubic kept":
        if mode != "bilinear":
            pytest.skip("bicubic is 2-d")
        mode = "bicubic"
    want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kw).numpy()
    got = cnn.functional.interpolate(clgrad.tensor(x, device=device), mode=mode, **kw)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("nd, out", [(1, (3,)), (2, (2, 3)), (3, (2, 1, 2))])
def test_adaptive_avg_pool_infinities(device, nd, out):
    """Each window's elements added and divided by its width, as PyTorch's: an infinite
    element makes only its windows infinite (a dense averaging matrix's zero weights made the
    others NaN)."""
    shape = (1, 2) + (5, 4, 3)[:nd]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x.flat[0], x.flat[7] = np.inf, -np.inf
    fn = f"adaptive_avg_pool{nd}d"
    want = getattr(torch.nn.functional, fn)(torch.tensor(x), out).numpy()
    got = getattr(cnn.functional, fn)(clgrad.tensor(x, device=device), out)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.nn.functional.interpolate(t.zeros(8, 0, 1), size=(2,)),
        lambda t: t.nn.functional.interpolate(t.zeros(2, 0, 3, 3), size=2, mode="bilinear"),
        lambda t: t.nn.functional.interpolate(t.zeros(0, 2, 3), size=2, mode="linear"),
        lambda t: t.nn.functional.interpolate(t.zeros(2, 2, 0, 3), size=2, mode="bilinear"),
        lambda t: t.nn.functional.pad(t.zeros(0, 4, 2), (1, 1, 0, 1), mode="replicate"),
        lambda t: t.nn.functional.pad(t.zeros(2, 0, 2), (1, 1), mode="reflect"),
        lambda t: t.nn.functional.pad(t.zeros(0, 4, 3), (1, 1), mode="replicate"),
        lambda t: t.nn.functional.pad(t.zeros(0, 4, 2), (1, 1), mode="circular"),
        lambda t: t.nn.functional.adaptive_avg_pool2d(t.zeros(2, 2, 0, 3), 2),
        lambda t: t.nn.functional.adaptive_avg_pool2d(t.zeros(2, 0, 3, 3), 2),
    ],
)
def test_empty_dims_of_interpolate_pad_and_pooling(call):
    """ATen's checks: an empty batch passes, an empty channel or spatial dim is a RuntimeError
    with its message (circular padding and adaptive pooling take an empty channel dim)."""
    results = []
    for lib in (torch, clgrad):
        try:
            results.append(tuple(call(lib).shape))
        except RuntimeError as e:
            results.append(str(e))
    assert results[0] == results[1]


def test_interpolate_errors():
    x = (1, 1, 4, 4)
    compare(lambda t, x: t.nn.functional.interpolate(x, scale_factor=2, mode="linear"), x)
    compare(lambda t, x: t.nn.functional.interpolate(x, scale_factor=2, align_corners=True), x)
    compare(lambda t, x: t.nn.functional.interpolate(x, size=3, scale_factor=2), x)
    compare(lambda t, x: t.nn.functional.interpolate(x), x)
    compare(lambda t, x: t.nn.functional.interpolate(x, size=(2, 3, 4)), x)
    compare(lambda t, x: t.nn.functional.interpolate(x, size=2), (4, 4))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes(mode):
    compare(lambda t, x: t.nn.functional.pad(x, (2, 1), mode), (2, 3, 4), layouts=C)
    compare(lambda t, x: t.nn.functional.pad(x, (1, 2, 0, 1), mode), (1, 2, 3, 4), layouts=C)
    compare(
        lambda t, x: t.nn.functional.pad(x, (1, 1, 2, 0, 1, 1), mode), (1, 2, 3, 3, 3), layouts=C
    )


def test_attention():
    sdpa = "scaled_dot_product_attention"
    q, k, v = (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)
    compare(lambda t, q, k, v: getattr(t.nn.functional, sdpa)(q, k, v), q, k, v, layouts=C)
    compare(
        lambda t, q, k, v, m: getattr(t.nn.functional, sdpa)(q, k, v, m, scale=0.3),
        q,
        k,
        v,
        (4, 5),
        layouts=C,
    )
    # a bool mask with a fully masked query row: PyTorch's safe softmax gives zeros there
    allowed = np.ones((4, 5), bool)
    allowed[1] = False
    allowed[2, :3] = False
    compare(
        lambda t, q, k, v, m: getattr(t.nn.functional, sdpa)(q, k, v, m),
        q, k, v, Input(values=allowed, dtype="bool", grad=False),
        layouts=C,
    )  # fmt: skip
    compare(
        lambda t, q: getattr(t.nn.functional, sdpa)(q, q, q, is_causal=True), (3, 4, 8), layouts=C
    )
    compare(
        lambda t, q, k, v: getattr(t.nn.functional, sdpa)(q, k, v, enable_gqa=True),
        (1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8),
        layouts=C,
    )  # fmt: skip


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda t, x: t.nn.functional.pixel_shuffle(x, 2), [(2, 8, 3, 2)]),
        (lambda t, x: t.nn.functional.pixel_unshuffle(x, 2), [(3, 4, 6)]),
        (lambda t, x: t.nn.functional.channel_shuffle(x, 3), [(2, 6, 2)]),
        (lambda t, x, y: t.nn.functional.cosine_similarity(x, y, dim=-1), [(3, 5), (1, 5)]),
        (lambda t, x, y: t.nn.functional.pairwise_distance(x, y), [(3, 5), (3, 5)]),
        (
            lambda t, x, y: t.nn.functional.pairwise_distance(x, y, p=3.0, keepdim=True),
            [(3, 5), (3, 5)],
        ),
        (lambda t, x: t.nn.functional.local_response_norm(x, 3), [(2, 5, 4)]),
        (lambda t, x: t.nn.functional.local_response_norm(x, 2, k=2.0), [(1, 4, 3, 2)]),
        (
            lambda t, x, w, b: t.nn.functional.instance_norm(x, weight=w, bias=b),
            [(2, 3, 5), (3,), (3,)],
        ),
        (lambda t, x: t.nn.functional.glu(x, 1), [(2, 6, 3)]),
        (lambda t, x, w: t.nn.functional.prelu(x, w), [(2, 3, 4), (3,)]),
        (lambda t, x: t.nn.functional.threshold(x, 0.5, -2.0), [(3, 4)]),
        (lambda t, x: t.nn.functional.rrelu(x, training=False), [(3, 4)]),
        (lambda t, x: t.nn.functional.unfold(x, 2, padding=1, stride=2), [(3, 5, 4)]),
        (lambda t, x: t.nn.functional.fold(x, (4, 5), 2), [(6, 12)]),
    ],
    ids=lambda v: "" if isinstance(v, list) else None,
)
def test_other_functionals(fn, shapes):
    compare(fn, *shapes, layouts=C)


@pytest.mark.parametrize(
    "name",
    [
        "softsign",
        "hardsigmoid",
        "hardswish",
        "selu",
        "celu",
        "mish",
        "hardshrink",
        "softshrink",
        "tanhshrink",
    ],
)
def test_activation_functionals(name):
    # values away from the kinks (+-3, +-0.5), where the one-sided gradients differ
    vals = np.array([-4.0, -2.2, -1.0, -0.3, 0.2, 0.7, 1.4, 2.5, 3.5], dtype=np.float32)
    compare(lambda t, x: getattr(t.nn.functional, name)(x), Input(values=vals), layouts=C)


def test_gradcheck_float64():
    dev = next((d for d in DEVICES if supports(d, clgrad.float64)), None)
    if dev is None:
        pytest.skip("no float64 device")
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return clgrad.tensor(
            rng.normal(size=shape), dtype=clgrad.float64, device=dev, requires_grad=True
        )

    F = clgrad.nn.functional
    # a GPU adds a backward's overlapping contributions in whatever order its work-items
    # finish (as PyTorch's CUDA kernels do), so a repeated backward may differ in the last bits
    check = functools.partial(gradcheck, nondet_tol=1e-12)
    x, w = leaf(1, 2, 4, 3), leaf(2, 3, 2, 2)
    assert check(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1).sum(), [x, w])
    x = leaf(1, 2, 3, 4)
    assert check(lambda x: (F.interpolate(x, size=(5, 3), mode="bicubic") ** 2).sum(), [x])
    q, k = leaf(2, 3, 4), leaf(2, 5, 4)
    assert check(lambda q, k: (F.scaled_dot_product_attention(q, k, k) ** 2).sum(), [q, k])


# ---- modules against torch modules with the same weights ---------------------------------------
def _to_clgrad(a, device):
    if isinstance(a, torch.Tensor):
        return clgrad.tensor(a.detach().numpy(), device=device, requires_grad=a.requires_grad)
    if isinstance(a, tuple):
        return tuple(_to_clgrad(x, device) for x in a)
    return a


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [out] if out is not None else []


def check_module(tmod, cmod, *inputs, device, train=False, rtol=1e-4, atol=1e-5, call=None):
    """Loads ``tmod``'s state dict into ``cmod``, moves it to ``device``, runs both on the same
    inputs (torch tensors; floating ones require grad) and compares the outputs, then the
    gradients of the inputs and of every parameter for one random cotangent per output."""
    missing = cmod.load_state_dict(
        {k: clgrad.tensor(v.numpy()) for k, v in tmod.state_dict().items()}
    )
    assert not missing.missing_keys and not missing.unexpected_keys
    cmod = cmod.to(device)
    tmod.train(train)
    cmod.train(train)
    call = call or (lambda m, *xs: m(*xs))
    t_in = [
        x.clone().requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x
        for x in inputs
    ]
    c_in = [_to_clgrad(x, device) for x in t_in]
    t_out, c_out = _flat(call(tmod, *t_in)), _flat(call(cmod, *c_in))
    assert len(t_out) == len(c_out)
    rng = np.random.default_rng(0)
    t_loss, c_loss = 0, 0
    for a, b in zip(t_out, c_out):
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        np.testing.assert_allclose(
            b.detach().cpu().numpy(), a.detach().numpy(), rtol=rtol, atol=atol
        )
        if a.requires_grad:
            g = rng.normal(size=tuple(a.shape)).astype(np.float32)
            t_loss = t_loss + (a * torch.tensor(g)).sum()
            c_loss = c_loss + (b * clgrad.tensor(g, device=device)).sum()
    t_loss.backward()
    c_loss.backward()
    for a, b in zip(t_in, c_in):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            np.testing.assert_allclose(
                b.grad.cpu().numpy(), a.grad.numpy(), rtol=rtol * 10, atol=atol * 10
            )
    c_params = dict(cmod.named_parameters())
    for name, p in tmod.named_parameters():
        got = c_params[name].grad
        want = p.grad
        if want is None:
            assert got is None or not got.cpu().numpy().any(), name
            continue
        np.testing.assert_allclose(
            got.cpu().numpy(), want.numpy(), rtol=rtol * 10, atol=atol * 10, err_msg=name
        )


def _x(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).normal(size=shape).astype(np.float32))


def _pair(name, *args, **kw):
    torch.manual_seed(0)
    return getattr(torch.nn, name)(*args, **kw), getattr(cnn, name)(*args, **kw)


@pytest.mark.parametrize(
    "name, args, kw, shape",
    [
        ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 2, "padding_mode": "reflect"}, (2, 4, 9)),
        (
            "Conv2d",
            (4, 6, 3),
            {"groups": 2, "padding": "same", "padding_mode": "circular"},
            (1, 4, 5, 6),
        ),
        (
            "Conv3d",
            (2, 4, (2, 3, 2)),
            {"stride": (1, 2, 1), "padding": 1, "bias": False},
            (1, 2, 4, 5, 3),
        ),
        ("ConvTranspose1d", (4, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 5)),
        ("ConvTranspose2d", (4, 6, 2), {"stride": 2, "groups": 2, "dilation": 2}, (1, 4, 3, 4)),
        ("ConvTranspose3d", (2, 2, 2), {"stride": 2}, (2, 2, 3, 2)),
        ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 8)),
        ("MaxPool3d", (2,), {"ceil_mode": True}, (1, 2, 3, 5, 4)),
        ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (2, 3, 8)),
        ("AvgPool3d", (2,), {"stride": 1}, (1, 2, 3, 4, 3)),
        ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
        ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 3, 5, 7)),
        ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 3, 5, 4)),
        ("LPPool2d", (2, 2), {}, (1, 2, 4, 4)),
        ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 4)),
        ("UpsamplingNearest2d", (), {"size": (5, 3)}, (1, 2, 3, 4)),
        ("UpsamplingBilinear2d", (), {"scale_factor": 1.5}, (1, 2, 3, 4)),
        ("ZeroPad2d", ((1, 0, 2, 1),), {}, (1, 2, 3, 4)),
        ("ConstantPad1d", (2, 1.5), {}, (2, 3)),
        ("ReflectionPad2d", (1,), {}, (1, 2, 3, 4)),
        ("ReplicationPad3d", ((1, 0, 0, 1, 1, 0),), {}, (1, 2, 3, 2, 2)),
        ("CircularPad1d", ((2, 1),), {}, (2, 3, 4)),
        ("GroupNorm", (2, 4), {}, (2, 4, 3)),
        ("BatchNorm1d", (3,), {"bias": False}, (4, 3)),
        ("BatchNorm2d", (3,), {"momentum": None}, (2, 3, 2, 2)),
        ("LayerNorm", ((3, 2),), {"bias": False}, (4, 3, 2)),
        ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 5)),
        ("InstanceNorm2d", (3,), {}, (3, 4, 4)),
        ("InstanceNorm3d", (2,), {"affine": True, "track_running_stats": True}, (2, 2, 2, 3, 2)),
        ("LocalResponseNorm", (3,), {}, (2, 5, 3)),
        ("PixelShuffle", (2,), {}, (1, 8, 2, 3)),
        ("PixelUnshuffle", (2,), {}, (1, 2, 4, 6)),
        ("ChannelShuffle", (2,), {}, (1, 4, 3)),
        ("Flatten", (), {}, (2, 3, 4)),
        ("Unflatten", (1, (2, 3)), {}, (2, 6)),
        ("Identity", (), {}, (2, 3)),
        ("Softmax2d", (), {}, (2, 3, 2, 2)),
        ("PReLU", (3,), {}, (2, 3, 4)),
        ("RReLU", (), {}, (2, 3)),
        ("GLU", (), {}, (2, 4)),
        ("Threshold", (0.1, 20.0), {}, (2, 3)),
        ("Softsign", (), {}, (2, 3)),
        ("Tanhshrink", (), {}, (2, 3)),
        ("CELU", (2.0,), {}, (2, 3)),
        ("SELU", (), {}, (2, 3)),
        ("Mish", (), {}, (2, 3)),
        ("Hardswish", (), {}, (2, 3)),
        ("Hardsigmoid", (), {}, (2, 3)),
        ("Hardshrink", (0.3,), {}, (2, 3)),
        ("Softshrink", (), {}, (2, 3)),
        ("Unfold", (2,), {"padding": 1}, (1, 2, 3, 3)),
        ("Fold", ((3, 4), 2), {}, (1, 8, 6)),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_modules(name, args, kw, shape, device):
    tmod, cmod = _pair(name, *args, **kw)
    assert repr(tmod).replace("torch.nn", "") == repr(cmod), (repr(tmod), repr(cmod))
    check_module(tmod, cmod, _x(*shape), device=device)


def test_two_input_modules(device):
    for name in ("CosineSimilarity", "PairwiseDistance"):
        tmod, cmod = _pair(name)
        check_module(tmod, cmod, _x(3, 4), _x(3, 4, seed=1), device=device)
    tmod, cmod = _pair("Bilinear", 3, 4, 2)
    check_module(tmod, cmod, _x(5, 3), _x(5, 4, seed=1), device=device)


def test_conv_transpose_output_size(device):
    tmod, cmod = _pair("ConvTranspose2d", 2, 3, 3, stride=2, padding=1)
    check_module(
        tmod, cmod, _x(1, 2, 4, 5), device=device, call=lambda m, x: m(x, output_size=[8, 10])
    )
    with pytest.raises(ValueError):
        cmod(clgrad.ones(1, 2, 4, 5, device=device), output_size=[12, 10])


def test_instance_norm_running_stats(device):
    tmod, cmod = _pair("InstanceNorm1d", 3, track_running_stats=True)
    check_module(tmod, cmod, _x(2, 3, 5), device=device, train=True)
    for buf in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            getattr(cmod, buf).cpu().numpy(), getattr(tmod, buf).numpy(), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize(
    "name, kw",
    [
        ("RNN", {"num_layers": 2, "nonlinearity": "relu"}),
        ("RNN", {"bidirectional": True, "batch_first": True, "bias": False}),
        ("LSTM", {"num_layers": 2, "bidirectional": True}),
        ("LSTM", {"batch_first": True}),
        ("GRU", {"num_layers": 2, "batch_first": True, "bidirectional": True}),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_recurrent(name, kw, device):
    tmod, cmod = _pair(name, 3, 4, **kw)
    assert repr(tmod).replace("torch.nn", "") == repr(cmod)
    seq = _x(2, 5, 3) if kw.get("batch_first") else _x(5, 2, 3)
    check_module(tmod, cmod, seq, device=device)
    dirs = 2 if kw.get("bidirectional") else 1
    h0 = _x(kw.get("num_layers", 1) * dirs, 2, 4, seed=3)
    state = (h0, _x(*h0.shape, seed=4)) if name == "LSTM" else h0
    tmod, cmod = _pair(name, 3, 4, **kw)
    check_module(tmod, cmod, seq, state, device=device)
    tmod, cmod = _pair(name, 3, 4, **kw)  # unbatched
    check_module(tmod, cmod, _x(5, 3), device=device)
    # the weights as PyTorch lists them (cuDNN's flatten_parameters is a no-op here)
    cmod.flatten_parameters()
    assert [[tuple(w.shape) for w in ws] for ws in cmod.all_weights] == [
        [tuple(w.shape) for w in ws] for ws in tmod.all_weights
    ]


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(name, device):
    tmod, cmod = _pair(name, 3, 4)
    assert repr(tmod).replace("torch.nn", "") == repr(cmod)
    check_module(tmod, cmod, _x(2, 3), device=device)
    tmod, cmod = _pair(name, 3, 4)
    state = (_x(2, 4, seed=1), _x(2, 4, seed=2)) if name == "LSTMCell" else _x(2, 4, seed=1)
    check_module(tmod, cmod, _x(2, 3), state, device=device)
    tmod, cmod = _pair(name, 3, 4, bias=False)
    check_module(tmod, cmod, _x(3), device=device)


def test_multihead_attention(device):
    def call(need, avg=True, **masks):
        return lambda m, q, k, v: m(q, k, v, need_weights=need, average_attn_weights=avg, **masks)

    tmod, cmod = _pair("MultiheadAttention", 8, 2)
    q, kv = _x(4, 3, 8), _x(5, 3, 8, seed=1)
    check_module(tmod, cmod, q, kv, kv, device=device, call=call(True))
    pad = torch.zeros(3, 5, dtype=torch.bool)
    pad[0, 3:] = True
    attn = torch.zeros(4, 5, dtype=torch.bool)
    attn[:, 0] = True
    masks = {"key_padding_mask": pad, "attn_mask": attn}
    c_masks = lambda m: {k: clgrad.tensor(v.numpy(), device=device) for k, v in m.items()}  # noqa: E731
    check_module(
        tmod, cmod, q, kv, kv, device=device,
        call=lambda m, q, k, v: m(q, k, v, average_attn_weights=False,
                                   **(masks if isinstance(q, torch.Tensor) else c_masks(masks))),
    )  # fmt: skip
    tmod, cmod = _pair(
        "MultiheadAttention", 8, 4, kdim=5, vdim=3, batch_first=True, add_bias_kv=True,
        add_zero_attn=True,
    )  # fmt: skip
    check_module(tmod, cmod, _x(2, 4, 8), _x(2, 6, 5, seed=1), _x(2, 6, 3, seed=2), device=device,
                 call=call(False))  # fmt: skip
    tmod, cmod = _pair("MultiheadAttention", 8, 2, bias=False)  # unbatched
    check_module(
        tmod, cmod, _x(4, 8), _x(5, 8, seed=1), _x(5, 8, seed=2), device=device, call=call(True)
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_layers(norm_first, device):
    kw = {"dim_feedforward": 16, "dropout": 0.0, "norm_first": norm_first}
    tmod, cmod = _pair("TransformerEncoderLayer", 8, 2, batch_first=True, activation="gelu", **kw)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[1, 4] = True
    check_module(
        tmod, cmod, _x(2, 5, 8), device=device,
        call=lambda m, x: m(x, src_key_padding_mask=pad if isinstance(x, torch.Tensor)
                            else clgrad.tensor(pad.numpy(), device=device)),
    )  # fmt: skip
    tmod, cmod = _pair("TransformerEncoderLayer", 8, 2, batch_first=True, **kw)
    t_enc = torch.nn.TransformerEncoder(
        tmod, 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False
    )
    c_enc = cnn.TransformerEncoder(cmod, 2, norm=cnn.LayerNorm(8))
    check_module(t_enc, c_enc, _x(2, 5, 8), device=device)
    tmod, cmod = _pair("TransformerDecoderLayer", 8, 2, **kw)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    check_module(
        tmod, cmod, _x(4, 2, 8), _x(5, 2, 8, seed=1), device=device,
        call=lambda m, t, s: m(t, s, tgt_mask=mask if isinstance(t, torch.Tensor)
                               else clgrad.tensor(mask.numpy(), device=device)),
    )  # fmt: skip


def test_transformer(device):
    tmod, cmod = _pair("Transformer", 8, 2, 1, 1, dim_feedforward=16, dropout=0.0, batch_first=True)
    check_module(tmod, cmod, _x(2, 5, 8), _x(2, 3, 8, seed=1), device=device)
