"""More of torch's top-level native forms, each against torch on every device: the view ops'
copying forms (``torch.t_copy``, ``torch.unbind_copy``, ...), the ``native_*`` tuples, the
norms, the RNN cells, ``torch.convolution``, ``torch.sym_*``: values, dtypes, shapes,
gradients and errors."""

import warnings

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

RNG = np.random.default_rng(5)


def _a(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _pair(a, device, grad=True):
    t = torch.tensor(a, requires_grad=grad and a.dtype.kind == "f")
    c = clgrad.tensor(a, device=device, requires_grad=grad and a.dtype.kind == "f")
    return t, c


def _close(got, want, rtol=1e-4, atol=1e-5):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol, atol)
        return
    if want is None:
        assert got is None
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=rtol, atol=atol
    )


def _backward(outs):
    outs = [o for o in (outs if isinstance(outs, (tuple, list)) else [outs])]
    outs = [o for o in outs if o is not None and o.requires_grad]
    if outs:
        sum((o * o).sum() for o in outs).backward()


X = _a(2, 3, 4)
# name -> (input, arguments)
COPY_CASES = {
    "alias_copy": (X, ()),
    "as_strided_copy": (X, ((3, 2), (2, 5), 1)),
    "detach_copy": (X, ()),
    "diagonal_copy": (X, (1, 1, 2)),
    "expand_copy": (_a(3, 1), ((2, 3, 4),)),
    "permute_copy": (X, ((2, 0, 1),)),
    "select_copy": (X, (1, -1)),
    "slice_copy": (X, (2, 1, None, 2)),
    "slice_copy-negative": (X, (-1, -3, 10)),
    "split_copy": (X, (2, 1)),
    "split_with_sizes_copy": (X, ([1, 3], 2)),
    "squeeze_copy": (_a(2, 1, 3, 1), ()),
    "squeeze_copy-dim": (_a(2, 1, 3, 1), (1,)),
    "t_copy": (_a(3, 4), ()),
    "transpose_copy": (X, (0, 2)),
    "unbind_copy": (X, (1,)),
    "unfold_copy": (X, (2, 2, 1)),
    "unsqueeze_copy": (X, (-1,)),
    "view_copy": (X, ((4, -1),)),
}


@pytest.mark.parametrize("name", list(COPY_CASES))
def test_copy_forms_match_torch(device, name):
    a, args = COPY_CASES[name]
    fn = name.split("-")[0]
    t, c = _pair(a, device)
    want, got = getattr(torch, fn)(t, *args), getattr(clgrad, fn)(c, *args)
    _close(got, want, 0, 0)
    for g in got if isinstance(got, (list, tuple)) else [got]:
        assert g.is_contiguous()
        assert g.requires_grad == (fn != "detach_copy")
    if fn != "detach_copy":
        _backward(want)
        _backward(got)
        _close(c.grad, t.grad, 1e-5, 1e-6)
    # a fresh tensor: writing it leaves the input as it was
    (got[0] if isinstance(got, (list, tuple)) else got).detach().fill_(7.0)
    np.testing.assert_array_equal(c.detach().cpu().numpy(), a)


def test_copy_forms_out(device):
    x = clgrad.tensor(X, device=device)
    out = clgrad.empty(4, 3, 2, device=device)
    assert clgrad.permute_copy(x, (2, 1, 0), out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), X.transpose(2, 1, 0))
    outs = [clgrad.empty(2, 3, 2, device=device) for _ in range(2)]
    assert clgrad.split_copy(x, 2, 2, out=outs) is None
    np.testing.assert_array_equal(outs[1].cpu().numpy(), X[..., 2:])
    i = clgrad.empty(0, dtype=clgrad.int64, device=device)
    with pytest.raises(RuntimeError):  # float into int64
        clgrad.t_copy(x[0], out=i)
    with pytest.raises(RuntimeError):  # out= under autograd
        clgrad.t_copy(x[0].requires_grad_(), out=out)


def test_copy_forms_dtypes(device):
    for dtype in (clgrad.int64, clgrad.float64, clgrad.bool):
        if not supports(device, dtype):
            continue
        x = clgrad.ones(2, 3, dtype=dtype, device=device)
        assert clgrad.t_copy(x).dtype is dtype
        assert clgrad.unbind_copy(x)[0].dtype is dtype


def test_copy_forms_errors(device):
    x = clgrad.tensor(X, device=device)
    for lib, y in ((torch, torch.tensor(X)), (clgrad, x)):
        with pytest.raises(RuntimeError):
            lib.permute_copy(y, (0, 1))
        with pytest.raises(RuntimeError):
            lib.slice_copy(y, 0, 0, 2, 0)
        with pytest.raises(IndexError):
            lib.select_copy(y, 0, 5)
        with pytest.raises(RuntimeError):
            lib.view_copy(y, (5, 5))


X4 = _a(4, 3, 2, 5)
# name -> (arguments: arrays are tensors (float ones need grad), anything else as is)
NATIVE_CASES = {
    "native_batch_norm": (X4, _a(3), _a(3), None, None, True, 0.1, 1e-5),
    "native_layer_norm": (X4, [2, 5], _a(2, 5), _a(2, 5), 1e-3),
    "native_layer_norm-plain": (X4, [5], None, None, 1e-5),
    "native_group_norm": (X4, _a(3), _a(3), 4, 3, 10, 3, 1e-5),
    "native_group_norm-plain": (_a(2, 4, 3), None, None, 2, 4, 3, 2, 1e-5),
    "native_dropout": (X4, 0.3, False),
    "feature_dropout": (X4, 0.3, False),
    "feature_alpha_dropout": (X4, 0.3, False),
}


def _call(lib, device, args):
    leaves, call = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            t = lib.tensor(a, device=device, requires_grad=a.dtype.kind == "f")
            leaves += [t] if t.requires_grad else []
            call.append(t)
        else:
            call.append(a)
    return leaves, call


@pytest.mark.parametrize("name", list(NATIVE_CASES))
def test_native_forms_match_torch(device, name):
    fn = name.split("-")[0]
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        leaves, call = _call(lib, dev, NATIVE_CASES[name])
        out = getattr(lib, fn)(*call)
        outs = out if isinstance(out, tuple) else (out,)
        flags = [o.requires_grad for o in outs]
        _backward(outs)
        results.append((outs, flags, [t.grad for t in leaves]))
    (want, want_flags, want_grads), (got, got_flags, got_grads) = results
    assert got_flags == want_flags
    _close(got, want, 1e-4, 1e-4)
    _close(got_grads, want_grads, 1e-3, 1e-4)


def test_native_channel_shuffle(device):
    # torch's has no derivative; clgrad's is F.channel_shuffle's, whose gradient is the
    # inverse shuffle (torch.nn.functional.channel_shuffle's)
    a = _a(2, 6, 3)
    t, c = _pair(a, device)
    _close(clgrad.native_channel_shuffle(c, 3), torch.native_channel_shuffle(t.detach(), 3), 0, 0)
    _backward(clgrad.native_channel_shuffle(c, 3))
    _backward(torch.nn.functional.channel_shuffle(t, 3))
    _close(c.grad, t.grad, 1e-6, 1e-6)


def test_native_batch_norm_running_stats_and_eval(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        rm, rv = lib.zeros(3, device=dev), lib.ones(3, device=dev)
        x = lib.tensor(X4, device=dev)
        lib.native_batch_norm(x, None, None, rm, rv, True, 0.2, 1e-5)
        out, m, s = lib.native_batch_norm(x, None, None, rm, rv, False, 0.2, 1e-5)
        if lib is torch:
            want = (rm, rv, out, m, s)
        else:
            _close((rm, rv, out, m, s), want, 1e-4, 1e-5)


def test_native_dropout_training(device):
    clgrad.manual_seed(0)
    x = clgrad.ones(400, device=device, requires_grad=True)
    out, mask = clgrad.native_dropout(x, 0.25, True)
    assert mask.dtype is clgrad.bool and out.dtype is clgrad.float32
    m = mask.cpu().numpy()
    np.testing.assert_allclose(out.detach().cpu().numpy(), m / 0.75, rtol=1e-6)
    assert 0.6 < m.mean() < 0.9
    out.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), m / 0.75, rtol=1e-6)
    out, mask = clgrad.native_dropout(x, 1.0, True)
    assert not mask.cpu().numpy().any() and not out.detach().cpu().numpy().any()


def test_feature_dropouts_training(device):
    clgrad.manual_seed(1)
    x = clgrad.ones(8, 6, 5, device=device)
    for fn in (clgrad.feature_dropout, clgrad.feature_alpha_dropout):
        y = fn(x, 0.5, True).cpu().numpy()
        assert (y.max(2) == y.min(2)).all() and len(np.unique(y)) == 2
    y = clgrad.ones(3, 4, device=device)
    assert clgrad.feature_dropout_(y, 0.5, True) is y
    assert set(np.unique(y.cpu().numpy())) <= {0.0, 2.0}
    assert clgrad.feature_alpha_dropout_(y, 0.5, False) is y


def test_native_forms_errors(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.ones(2, 3, 4, device=dev)
        with pytest.raises(RuntimeError):
            lib.native_layer_norm(x, [3], None, None, 1e-5)
        with pytest.raises(RuntimeError):
            lib.native_group_norm(x, None, None, 2, 3, 4, 2, 1e-5)
        with pytest.raises(RuntimeError):
            lib.native_channel_shuffle(x, 2)
        with pytest.raises(RuntimeError):
            lib.native_dropout(x, 1.5, True)
        with pytest.raises(RuntimeError):
            lib.feature_dropout(x, -0.5, True)
        with pytest.raises(RuntimeError):
            lib.feature_alpha_dropout(lib.ones(3, device=dev), 0.5, True)


H = _a(3, 4)
MORE_CASES = {
    "frobenius_norm": (X4, [1, 3]),
    "frobenius_norm-keepdim": (X4, [2], True),
    "nuclear_norm": (_a(4, 3),),
    "nuclear_norm-dim": (_a(3, 2, 4), [0, 2], True),
    "norm_except_dim": (X4, 2, 1),
    "norm_except_dim-last": (X4, 3, 3),
    "norm_except_dim-whole": (X4, 2, -1),
    "rnn_tanh_cell": (_a(3, 5), H, _a(4, 5), _a(4, 4), _a(4), _a(4)),
    "rnn_relu_cell": (_a(3, 5), H, _a(4, 5), _a(4, 4)),
    "gru_cell": (_a(3, 5), H, _a(12, 5), _a(12, 4), _a(12), _a(12)),
    "convolution": (_a(2, 3, 7), _a(4, 3, 3), _a(4), [2], [1], [1], False, [0], 1),
    "convolution-2d": (
        _a(1, 4, 5, 5),
        _a(6, 2, 3, 3),
        None,
        [1, 1],
        [1, 0],
        [2, 1],
        False,
        [0, 0],
        2,
    ),
    "convolution-transposed": (
        _a(1, 3, 4, 4),
        _a(3, 2, 2, 2),
        _a(2),
        [2, 2],
        [0, 0],
        [1, 1],
        True,
        [1, 1],
        1,
    ),
    "grid_sampler": (_a(1, 2, 4, 5), _a(1, 3, 2, 2) / 2, 0, 0, False),
    "grid_sampler-nearest-border": (_a(1, 2, 4, 5), _a(1, 3, 2, 2), 1, 1, True),
    "grid_sampler-reflection": (_a(1, 2, 4, 5), _a(1, 3, 2, 2), 0, 2, False),
    "grid_sampler_2d": (_a(1, 2, 4, 5), _a(1, 3, 2, 2) / 2, 0, 1, True),
    "grid_sampler_3d": (_a(1, 2, 3, 4, 5), _a(1, 2, 3, 2, 3) / 2, 0, 2, False),
    "grid_sampler_3d-nearest": (_a(1, 2, 3, 4, 5), _a(1, 2, 3, 2, 3), 1, 1, True),
    "affine_grid_generator": (_a(2, 2, 3), [2, 1, 3, 4], False),
}


@pytest.mark.parametrize("name", list(MORE_CASES))
def test_more_forms_match_torch(device, name):
    fn = name.split("-")[0]
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        leaves, call = _call(lib, dev, MORE_CASES[name])
        with warnings.catch_warnings():  # torch's deprecation of frobenius/nuclear_norm
            warnings.simplefilter("ignore")
            out = getattr(lib, fn)(*call)
        _backward(out)
        results.append((out, [t.grad for t in leaves]))
    (want, want_grads), (got, got_grads) = results
    _close(got, want, 1e-4, 1e-4)
    for g, w in zip(got_grads, want_grads):
        if g is None and w is not None:  # nearest sampling: torch's grid gradient is zeros
            assert not w.any()
        else:
            _close(g, w, 1e-3, 1e-4)


def test_lstm_cell_matches_torch(device):
    args = (_a(3, 5), (_a(3, 4), _a(3, 4)), _a(16, 5), _a(16, 4), _a(16), _a(16))
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x, (h, c), *ws = [
            tuple(_pair(b, dev)[lib is clgrad] for b in a) if isinstance(a, tuple)
            else _pair(a, dev)[lib is clgrad] for a in args
        ]  # fmt: skip
        out = lib.lstm_cell(x, (h, c), *ws)
        _backward(out)
        results.append((out, [t.grad for t in (x, h, c, *ws)]))
    _close(results[1][0], results[0][0], 1e-4, 1e-5)
    _close(results[1][1], results[0][1], 1e-3, 1e-4)


def test_cells_and_norms_float64(device):
    if not supports(device, clgrad.float64):
        pytest.skip("no float64 on this device")
    x, h, w, u = (_a(2, 3), _a(2, 4), _a(12, 3), _a(12, 4))
    got = clgrad.gru_cell(
        *(clgrad.tensor(a, dtype=clgrad.float64, device=device) for a in (x, h, w, u))
    )
    want = torch.gru_cell(*(torch.tensor(a, dtype=torch.float64) for a in (x, h, w, u)))
    _close(got, want, 1e-10, 1e-12)
    m = _a(3, 3).astype(np.float64)
    _close(
        clgrad.nuclear_norm(clgrad.tensor(m, device=device)),
        torch.linalg.matrix_norm(torch.tensor(m), "nuc"),
        1e-9,
        1e-9,
    )


def test_empty_permuted_index_put_binomial(device):
    for layout in ((0, 1, 2), (2, 0, 1), (0, 2, 1)):
        t = torch.empty_permuted((2, 3, 4), layout)
        c = clgrad.empty_permuted((2, 3, 4), layout, device=device, dtype=clgrad.int64)
        assert tuple(c.shape) == tuple(t.shape) and c.stride() == t.stride()
        assert c.dtype is clgrad.int64 and c.device == clgrad.device(device)
    x = clgrad.zeros(3, 4, device=device)
    idx = (clgrad.tensor([0, 2, 0], device=device), clgrad.tensor([1, 3, 1], device=device))
    assert clgrad.index_put_(x, idx, clgrad.tensor(2.0, device=device), True) is x
    want = torch.index_put_(
        torch.zeros(3, 4),
        (torch.tensor([0, 2, 0]), torch.tensor([1, 3, 1])),
        torch.tensor(2.0),
        True,
    )
    _close(x, want, 0, 0)
    clgrad.manual_seed(0)
    count = clgrad.tensor([[0.0, 5.0, 20.0]], device=device).expand(2000, 3)
    prob = clgrad.tensor([0.5, 1.0, 0.25], device=device)
    s = clgrad.binomial(count, prob)
    assert s.dtype is clgrad.float32 and tuple(s.shape) == (2000, 3)
    s = s.cpu().numpy()
    assert (s[:, 0] == 0).all() and (s[:, 1] == 5).all() and 0 <= s.min() and s.max() <= 20
    assert abs(s[:, 2].mean() - 5.0) < 0.3 and abs(s[:, 2].var() - 3.75) < 0.6
    assert (s == np.round(s)).all()


def test_sym_helpers_match_torch():
    for name, args in (
        ("sym_int", (2.7,)), ("sym_int", (-2.7,)), ("sym_float", (3,)), ("sym_max", (1, 2)),
        ("sym_max", (3, 2.0)), ("sym_min", (np.int64(4), 2)), ("sym_min", (1.5, 2)),
        ("sym_not", (True,)), ("sym_not", (0,)), ("sym_sqrt", (9,)), ("sym_sum", ([1, 2, 3],)),
        ("sym_sum", (1, 2.5)), ("sym_sum", ((),)), ("sym_ite", (True, 1, 2)),
    ):  # fmt: skip
        got, want = getattr(clgrad, name)(*args), getattr(torch, name)(*args)
        assert got == want and type(got) is type(want), (name, args, got, want)
    for lib in (torch, clgrad):
        with pytest.raises(AssertionError):
            lib.sym_max("a", 1)
        with pytest.raises(AssertionError):
            lib.sym_ite(True, 1, 2.0)


def test_more_forms_errors(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.ones(2, 3, 4, device=dev)
        with warnings.catch_warnings(), pytest.raises(RuntimeError):
            warnings.simplefilter("ignore")
            lib.frobenius_norm(x, [0, 1, 2])
        with pytest.raises(RuntimeError):
            lib.empty_permuted((2, 3, 4), (0, 0, 1))
        with pytest.raises(RuntimeError):
            lib.convolution(
                x[0], lib.ones(3, 2, 2, 2, device=dev), None, [1], [0], [1], False, [0], 1
            )
        with pytest.raises(RuntimeError):
            lib.rnn_tanh_cell(
                lib.ones(2, 3, device=dev),
                lib.ones(2, 4, device=dev),
                lib.ones(4, 5, device=dev),
                lib.ones(4, 4, device=dev),
            )
        with pytest.raises(ValueError):
            lib.binomial(lib.tensor([5], device=dev), lib.tensor([0.5], device=dev))
        with pytest.raises(IndexError):
            lib.norm_except_dim(lib.ones(3, device=dev), 2, 1)


BAG_W = _a(7, 3)
BAG_IDX = np.array([1, 2, 4, 5, 4, 3, 6, 5], np.int64)
BAG_OFF = np.array([0, 2, 2, 4], np.int64)
BAG_CASES = {
    "sum": (BAG_OFF, 0, None, False, None),
    "sum-weights": (BAG_OFF, 0, _a(8), False, None),
    "sum-padding": (BAG_OFF, 0, None, False, 5),
    "mean": (BAG_OFF, 1, None, False, None),
    "mean-padding": (BAG_OFF, 1, None, False, 5),
    "mean-last": (np.array([0, 2, 2, 4, 8], np.int64), 1, None, True, None),
    "max": (BAG_OFF, 2, None, False, None),
    "max-padding": (BAG_OFF, 2, None, False, 5),
}


@pytest.mark.parametrize("name", list(BAG_CASES))
def test_embedding_bag_matches_torch(device, name):
    off, mode, psw, last, pad = BAG_CASES[name]
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        w = lib.tensor(BAG_W, device=dev, requires_grad=True)
        p = None if psw is None else lib.tensor(psw, device=dev, requires_grad=True)
        idx, o = lib.tensor(BAG_IDX, device=dev), lib.tensor(off, device=dev)
        out = lib.embedding_bag(w, idx, o, False, mode, False, p, last, pad)
        _backward(out[0])
        results.append((out, w.grad, None if p is None else p.grad))
    (want, *want_grads), (got, *got_grads) = results
    _close(got, want, 1e-5, 1e-6)
    _close(got_grads, want_grads, 1e-4, 1e-5)


def test_embedding_bag_errors(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        w, idx = lib.ones(4, 2, device=dev), lib.tensor([0, 1, 2], device=dev)
        with pytest.raises(RuntimeError):  # offsets past the indices
            lib.embedding_bag(w, idx, lib.tensor([0, 5], device=dev), False, 1)
        with pytest.raises(RuntimeError):  # an index past the weight's rows
            lib.embedding_bag(w, idx + 2, lib.tensor([0, 2], device=dev), False, 1)


def test_svd_and_pca_lowrank_match_torch(device):
    clgrad.manual_seed(0)
    # a full-rank 9 x 5 matrix and q = 5: the randomized basis spans its range, so the
    # factors reconstruct it, their singular values are torch's and the gradient of their sum
    # is the nuclear norm's
    a = _a(9, 5)
    for A in (a, a.T.copy()):
        t, c = torch.tensor(A), clgrad.tensor(A, device=device, requires_grad=True)
        tu, ts, tv = torch.svd_lowrank(t, q=5)
        U, S, V = clgrad.svd_lowrank(c, q=5)
        assert tuple(U.shape) == tuple(tu.shape) and tuple(V.shape) == tuple(tv.shape)
        np.testing.assert_allclose(S.detach().cpu().numpy(), ts.numpy(), rtol=1e-4)
        recon = (U * S) @ V.transpose(-2, -1)
        np.testing.assert_allclose(recon.detach().cpu().numpy(), A, atol=1e-4)
        S.sum().backward()
        want = torch.tensor(A, requires_grad=True)
        torch.linalg.svdvals(want).sum().backward()
        np.testing.assert_allclose(c.grad.cpu().numpy(), want.grad.numpy(), atol=1e-3)
    tu, ts, tv = torch.pca_lowrank(torch.tensor(a), q=5)
    U, S, V = clgrad.pca_lowrank(clgrad.tensor(a, device=device), q=5)
    np.testing.assert_allclose(S.cpu().numpy(), ts.numpy(), rtol=1e-3, atol=1e-4)
    centered = a - a.mean(0, keepdims=True)
    np.testing.assert_allclose(((U * S) @ V.T).cpu().numpy(), centered, atol=1e-4)
    for lib in (torch, clgrad):
        with pytest.raises(ValueError):
            lib.pca_lowrank(lib.ones(3, 4), q=5)


SEG_DATA = np.array([1.0, 0.0, 3.0, 3.0, -2.0, 6.0], np.float32)
SEG_CASES = {
    "sum": (SEG_DATA, {"lengths": [2, 0, 4]}),
    "mean": (SEG_DATA, {"lengths": [2, 0, 4]}),
    "mean-initial": (SEG_DATA, {"lengths": [2, 0, 4], "initial": 1.5}),
    "max": (SEG_DATA, {"lengths": [1, 3, 2, 0]}),
    "amin-initial": (SEG_DATA, {"lengths": [1, 3, 2, 0], "initial": 0.5}),
    "prod": (SEG_DATA, {"lengths": [3, 0, 3]}),
    "prod-initial": (SEG_DATA, {"lengths": [3, 0, 3], "initial": 2.0}),
    "sum-offsets": (SEG_DATA, {"offsets": [0, 2, 2, 6]}),
    "sum-axis1": (_a(2, 6, 3), {"lengths": [[1, 5], [3, 3]], "axis": 1}),
    "max-axis0": (_a(6, 2), {"lengths": [4, 2], "axis": 0}),
}


@pytest.mark.parametrize("name", list(SEG_CASES))
def test_segment_reduce_matches_torch(device, name):
    # clgrad.segment_reduce is clgrad.aten_native's; these cases add to tests/test_aten_native.py
    data, kw = SEG_CASES[name]
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor(data, device=dev, requires_grad=True)
        args = {k: lib.tensor(v, device=dev) if isinstance(v, list) else v for k, v in kw.items()}
        out = lib.segment_reduce(x, name.split("-")[0], **args)
        out.where(out.isfinite(), out.new_zeros(())).sum().backward()
        results.append((out, x.grad))
    _close(results[1], results[0], 1e-5, 1e-6)


def test_segment_reduce_errors(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        d = lib.arange(6.0, device=dev)
        with pytest.raises(RuntimeError):
            lib.segment_reduce(d, "foo", lengths=lib.tensor([6], device=dev))
        with pytest.raises(RuntimeError):
            lib.segment_reduce(d, "sum", lengths=lib.tensor([2, 2], device=dev))
        with pytest.raises(RuntimeError):
            lib.segment_reduce(d, "sum")


PTS = RNG.random((40, 3)).astype(np.float32)
HIST_CASES = {
    "int": (PTS, 3, {}),
    "per-dim": (PTS, [2, 3, 4], {}),
    "range-weight-density": (
        PTS,
        [2, 2, 3],
        {
            "range": [0.0, 1.0, 0.2, 0.8, 0.0, 2.0],
            "weight": RNG.random(40).astype(np.float32),
            "density": True,
        },
    ),
    "edges": (
        PTS[:, :2],
        [np.array([0.0, 0.3, 1.0], np.float32), np.array([0.0, 0.5, 0.75, 1.0], np.float32)],
        {},
    ),
    "batched-degenerate": (np.ones((2, 5, 2), np.float32), 2, {}),
}


@pytest.mark.parametrize("name", list(HIST_CASES))
def test_histogramdd_matches_torch(device, name):
    pts, bins, kw = HIST_CASES[name]
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        edges = isinstance(bins, list) and isinstance(bins[0], np.ndarray)
        b = [lib.tensor(e, device=dev) for e in bins] if edges else bins
        k = {
            n: lib.tensor(v, device=dev) if isinstance(v, np.ndarray) else v for n, v in kw.items()
        }
        results.append(lib.histogramdd(lib.tensor(pts, device=dev), bins=b, **k))
    (th, te), (ch, ce) = results
    _close(ch, th, 1e-5, 1e-6)
    _close(tuple(ce), tuple(te), 1e-6, 1e-7)
    assert results[1].hist is ch


def test_histogramdd_errors(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        with pytest.raises(RuntimeError):
            lib.histogramdd(lib.ones(3, 2, device=dev), bins=[2, 2, 2])
        with pytest.raises(RuntimeError):
            lib.histogramdd(lib.ones(3, 2, device=dev), bins=2, range=[1.0, 0.0, 0.0, 1.0])
        with pytest.raises(NotImplementedError):
            lib.histogramdd(lib.ones(3, 2, dtype=lib.int64, device=dev), bins=2)


def test_grid_sampler_2d_and_3d_refuse_other_ranks(device):
    messages = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        volume, grid = lib.ones(1, 1, 2, 2, 2, device=dev), lib.zeros(1, 1, 1, 1, 3, device=dev)
        image, flat_grid = lib.ones(1, 1, 2, 2, device=dev), lib.zeros(1, 1, 1, 2, device=dev)
        for sampler, args in (
            (lib.grid_sampler_2d, (volume, grid, 0)),
            (lib.grid_sampler_3d, (image, flat_grid, 0)),
            (lib.grid_sampler_3d, (volume, grid, 2)),  # bicubic: 4-D only
        ):
            with pytest.raises(RuntimeError) as caught:
                sampler(*args, 0, False)
            messages.append(str(caught.value))
    assert messages[:3] == messages[3:]


def test_aten_batch_norms_take_what_functional_refuses():
    # torch.batch_norm / native_batch_norm are ATen's: an eps of 0 and one value per channel
    # pass there, while torch.nn.functional.batch_norm refuses both
    import torch

    for lib in (torch, clgrad):
        x = lib.tensor([[1.0], [3.0]])
        assert lib.batch_norm(x, None, None, None, None, True, 0.1, 0.0, False).tolist() == [
            [-1.0],
            [1.0],
        ]
        out, mean, invstd = lib.native_batch_norm(x, None, None, None, None, True, 0.1, 0.0)
        assert out.tolist() == [[-1.0], [1.0]] and mean.tolist() == [2.0]
        assert lib.batch_norm(x[:1], None, None, None, None, True, 0.1, 1e-5, False).tolist() == [
            [0.0]
        ]
        with pytest.raises(ValueError, match="eps must be positive"):
            lib.nn.functional.batch_norm(x, None, None, training=True, eps=0.0)
