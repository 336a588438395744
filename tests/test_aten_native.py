"""clgrad.aten_native against torch on every device: torch.segment_reduce and torch.conv_tbc
(values, gradients, errors), and SyncBatchNorm's pieces (batch_norm_stats, batch_norm_elemt,
batch_norm_gather_stats(_with_counts), batch_norm_backward_reduce/elemt, which torch runs on
CUDA only: checked against torch's batch norm and its gradient; batch_norm_update_stats
against torch's own)."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

RNG = np.random.default_rng(11)


def _a(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _np(t):
    return t.detach().cpu().numpy()


def _close(got, want, rtol=1e-4, atol=1e-5):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(got), want.detach().numpy(), rtol=rtol, atol=atol)


# ---- segment_reduce ---------------------------------------------------------------------------
DATA = np.array([1.0, 2.0, 2.0, 0.0, 3.0, -1.0, 4.0], np.float32)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax"])
@pytest.mark.parametrize("initial", [None, 2.5])
def test_segment_reduce_matches_torch(device, reduce, initial):
    for kw in ({"lengths": [3, 0, 3, 1]}, {"offsets": [0, 3, 3, 6, 7]}):
        key, value = next(iter(kw.items()))
        t = torch.tensor(DATA, requires_grad=True)
        c = clgrad.tensor(DATA, device=device, requires_grad=True)
        want = torch.segment_reduce(t, reduce, initial=initial, **{key: torch.tensor(value)})
        got = clgrad.segment_reduce(
            c, reduce, initial=initial, **{key: clgrad.tensor(value, device=device)}
        )
        _close(got, want)
        finite = torch.isfinite(want)
        (want[finite] * torch.arange(1.0, 1 + int(finite.sum()))).sum().backward()
        w = clgrad.arange(1.0, 1 + int(finite.sum()), device=device)
        (got[clgrad.tensor(finite.numpy(), device=device)] * w).sum().backward()
        _close(c.grad, t.grad)


def test_segment_reduce_nd(device):
    a = _a(2, 5, 3)
    lengths = [[2, 3], [5, 0]]
    for reduce, axis, lens in (("sum", 0, [1, 1]), ("max", 1, lengths), ("mean", 1, lengths)):
        t = torch.tensor(a, requires_grad=True)
        c = clgrad.tensor(a, device=device, requires_grad=True)
        want = torch.segment_reduce(t, reduce, lengths=torch.tensor(lens), axis=axis)
        got = clgrad.segment_reduce(
            c, reduce, lengths=clgrad.tensor(lens, device=device), axis=axis
        )
        _close(got, want)
        want.nan_to_num(0.0, 0.0, 0.0).sum().backward()
        got.nan_to_num(0.0, 0.0, 0.0).sum().backward()
        _close(c.grad, t.grad)


def test_segment_reduce_empty_and_unsafe(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        empty = lib.zeros(0, device=dev)
        r = lib.segment_reduce(empty, "max", lengths=lib.tensor([0, 0], device=dev))
        assert r.tolist() == [-float("inf")] * 2
        d = lib.tensor(DATA, device=dev)
        r = lib.segment_reduce(d, "sum", lengths=lib.tensor([2, 2], device=dev), unsafe=True)
        assert r.tolist() == [3.0, 2.0]
    if supports(device, clgrad.float64):
        d = clgrad.tensor(DATA, dtype=clgrad.float64, device=device)
        r = clgrad.segment_reduce(d, "sum", lengths=clgrad.tensor([7], device=device))
        assert r.dtype is clgrad.float64 and r.item() == DATA.sum()


def test_segment_reduce_errors(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        d = lib.tensor(DATA, device=dev)
        ok = lib.tensor([3, 4], device=dev)
        with pytest.raises(RuntimeError):
            lib.segment_reduce(d, "foo", lengths=ok)
        with pytest.raises(RuntimeError):
            lib.segment_reduce(d, "sum")
        with pytest.raises(RuntimeError):  # lengths not summing to the axis's size
            lib.segment_reduce(d, "sum", lengths=lib.tensor([2, 2], device=dev))
        with pytest.raises(RuntimeError):
            lib.segment_reduce(d, "sum", lengths=lib.tensor([8, -1], device=dev))
        with pytest.raises(RuntimeError):  # axis not lengths' last dim
            lib.segment_reduce(d.reshape(1, 7), "sum", lengths=ok, axis=1)
        with pytest.raises(NotImplementedError):  # integer data
            lib.segment_reduce(d.long(), "sum", lengths=ok)


# ---- conv_tbc -------------------------------------------------------------------------------
@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc_matches_torch(device, pad):
    arrays = (_a(7, 2, 3), _a(3, 3, 4), _a(4))
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    cs = [clgrad.tensor(a, device=device, requires_grad=True) for a in arrays]
    want, got = torch.conv_tbc(*ts, pad), clgrad.conv_tbc(*cs, pad)
    _close(got, want)
    assert got.is_contiguous()
    g = _a(*want.shape)
    want.backward(torch.tensor(g))
    got.backward(clgrad.tensor(g, device=device))
    for c, t in zip(cs, ts):
        _close(c.grad, t.grad)


def test_conv_tbc_short_and_errors(device):
    x, w, b = _a(2, 2, 3), _a(3, 3, 4), _a(4)
    want = torch.conv_tbc(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    got = clgrad.conv_tbc(*(clgrad.tensor(a, device=device) for a in (x, w, b)))
    _close(got, want)  # time 0
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x, w, b = (lib.tensor(a, device=dev) for a in (_a(7, 2, 3), _a(3, 3, 4), _a(4)))
        with pytest.raises(RuntimeError):
            lib.conv_tbc(x, w[:, :2], b)
        with pytest.raises(RuntimeError):
            lib.conv_tbc(x, w, b[:2])
        with pytest.raises(RuntimeError):
            lib.conv_tbc(x[0], w, b)
        with pytest.raises(RuntimeError):
            lib.conv_tbc(x[:0], w, b)
        with pytest.raises(TypeError):
            lib.conv_tbc(x, w, None)


# ---- SyncBatchNorm's pieces ------------------------------------------------------------------
def test_batch_norm_stats_elemt_equal_batch_norm(device):
    a, w, b = _a(4, 3, 5), _a(3), _a(3)
    t = torch.tensor(a)
    want = torch.nn.functional.batch_norm(
        t, None, None, torch.tensor(w), torch.tensor(b), training=True, eps=1e-3
    )
    x = clgrad.tensor(a, device=device)
    mean, invstd = clgrad.batch_norm_stats(x, 1e-3)
    np.testing.assert_allclose(_np(mean), a.mean((0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(invstd), 1 / np.sqrt(a.var((0, 2)) + 1e-3), rtol=1e-4)
    cw, cb = clgrad.tensor(w, device=device), clgrad.tensor(b, device=device)
    _close(clgrad.batch_norm_elemt(x, cw, cb, mean, invstd, 1e-3), want)
    out = clgrad.empty(0, device=device)
    assert clgrad.batch_norm_elemt(x, cw, cb, mean, invstd, 1e-3, out=out) is out
    _close(out, want)
    plain = clgrad.batch_norm_elemt(x, None, None, mean, invstd, 1e-3)
    np.testing.assert_allclose(_np(plain), ((t - t.mean((0, 2), keepdim=True)) * torch.tensor(
        _np(invstd)).reshape(1, 3, 1)).numpy(), rtol=1e-4, atol=1e-5)  # fmt: skip


def test_batch_norm_gather_stats(device):
    # two "processes" with 12 and 8 rows: the gathered statistics are the whole batch's
    a = _a(20, 3)
    parts = [a[:12], a[12:]]
    stats = [clgrad.batch_norm_stats(clgrad.tensor(p, device=device), 1e-5) for p in parts]
    mean = clgrad.stack([s[0] for s in stats])
    invstd = clgrad.stack([s[1] for s in stats])
    rm, rv = clgrad.zeros(3, device=device), clgrad.ones(3, device=device)
    counts = clgrad.tensor([12.0, 8.0], device=device)
    x = clgrad.tensor(a, device=device)
    gm, gi = clgrad.batch_norm_gather_stats_with_counts(x, mean, invstd, rm, rv, 0.1, 1e-5, counts)
    np.testing.assert_allclose(_np(gm), a.mean(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(gi), 1 / np.sqrt(a.var(0) + 1e-5), rtol=1e-3)
    np.testing.assert_allclose(_np(rm), 0.1 * a.mean(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(rv), 0.9 + 0.1 * a.var(0, ddof=1), rtol=1e-4)
    same = clgrad.batch_norm_gather_stats(x, mean[:1], invstd[:1], None, None, 0.1, 1e-5, 12)
    np.testing.assert_allclose(_np(same[0]), _np(mean[0]), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):
        clgrad.batch_norm_gather_stats(x, mean[0], invstd[0], None, None, 0.1, 1e-5, 12)


def test_batch_norm_backward_pieces_equal_autograd(device):
    a, w, b, g = _a(4, 3, 5), _a(3), _a(3), _a(4, 3, 5)
    ts = [torch.tensor(v, requires_grad=True) for v in (a, w, b)]
    out = torch.nn.functional.batch_norm(ts[0], None, None, ts[1], ts[2], training=True)
    out.backward(torch.tensor(g))
    x, cw = clgrad.tensor(a, device=device), clgrad.tensor(w, device=device)
    dy = clgrad.tensor(g, device=device)
    mean, invstd = clgrad.batch_norm_stats(x, 1e-5)
    sum_dy, sum_dy_xmu, gw, gb = clgrad.batch_norm_backward_reduce(
        dy, x, mean, invstd, cw, True, True, True
    )
    _close(gw, ts[1].grad, 1e-3, 1e-4)
    _close(gb, ts[2].grad, 1e-4, 1e-5)
    count = clgrad.tensor([20], dtype=clgrad.int32, device=device)
    gx = clgrad.batch_norm_backward_elemt(dy, x, mean, invstd, cw, sum_dy, sum_dy_xmu, count)
    _close(gx, ts[0].grad, 1e-3, 1e-4)
    assert clgrad.batch_norm_backward_reduce(dy, x, mean, invstd, cw, False, False, True)[:3] == (
        None,
        None,
        None,
    )


def test_batch_norm_update_stats_matches_torch(device):
    a = _a(4, 3, 5)
    rm_t, rv_t = torch.zeros(3), torch.ones(3)
    want = torch.batch_norm_update_stats(torch.tensor(a), rm_t, rv_t, 0.2)
    rm, rv = clgrad.zeros(3, device=device), clgrad.ones(3, device=device)
    got = clgrad.batch_norm_update_stats(clgrad.tensor(a, device=device), rm, rv, 0.2)
    for g, w in zip((*got, rm, rv), (*want, rm_t, rv_t)):
        _close(g, w)
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        with pytest.raises(IndexError):
            lib.batch_norm_update_stats(lib.ones(3, device=dev), None, None, 0.1)


# ---- autocast's and anomaly mode's setters ---------------------------------------------------
def test_autocast_setters_match_torch(device):
    for lib in (torch, clgrad):
        with pytest.warns(DeprecationWarning):
            lib.set_autocast_cpu_enabled(True)
        try:
            assert lib.is_autocast_enabled("cpu")
        finally:
            with pytest.warns(DeprecationWarning):
                lib.set_autocast_cpu_enabled(False)
        assert not lib.is_autocast_enabled("cpu")
        with pytest.warns(DeprecationWarning):
            lib.set_autocast_gpu_dtype(lib.float16)
        assert lib.get_autocast_dtype("cuda") is lib.float16
        assert lib.is_autocast_cache_enabled()
        lib.set_autocast_cache_enabled(False)
        assert not lib.is_autocast_cache_enabled()
        lib.set_autocast_cache_enabled(True)
        with pytest.raises(TypeError):
            lib.set_autocast_cache_enabled("yes")
    # the setters drive clgrad's autocast: a cpu matmul runs in float16 while on
    previous = clgrad.get_autocast_dtype("cpu")
    with pytest.warns(DeprecationWarning):
        clgrad.set_autocast_cpu_dtype(clgrad.float16)
    assert clgrad.get_autocast_dtype("cpu") is clgrad.float16
    with pytest.warns(DeprecationWarning):
        clgrad.set_autocast_cpu_enabled(True)
    try:
        assert (clgrad.ones(2, 2) @ clgrad.ones(2, 2)).dtype is clgrad.float16
    finally:
        with pytest.warns(DeprecationWarning):
            clgrad.set_autocast_cpu_enabled(False)
        clgrad.set_autocast_dtype("cpu", previous)
    assert (clgrad.ones(2, 2) @ clgrad.ones(2, 2)).dtype is clgrad.float32


def test_set_anomaly_enabled(device):
    x = clgrad.tensor([0.0, 1.0], device=device, requires_grad=True)
    clgrad.set_anomaly_enabled(True)
    try:
        assert clgrad.is_anomaly_enabled() and torch.is_anomaly_enabled() is False
        with pytest.raises(RuntimeError, match="nan"):
            (x.sqrt() * clgrad.tensor([0.0, 1.0], device=device)).sum().backward()
    finally:
        clgrad.set_anomaly_enabled(False)
    assert not clgrad.is_anomaly_enabled()
    for lib in (torch, clgrad):
        with pytest.raises(TypeError):
            lib.set_anomaly_enabled(1)


# ---- matrix_rank (removed) and DLPack -----------------------------------------------------------
def test_matrix_rank_removed_as_torch(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9"):
            lib.matrix_rank(lib.eye(3, device=dev))


def test_dlpack_round_trips(device):
    x = clgrad.arange(6.0).reshape(2, 3)
    y = clgrad.from_dlpack(clgrad.to_dlpack(x))
    x[0, 0] = 7.0  # shared memory
    assert y.tolist() == [[7.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and y.device.type == "cpu"
    # clgrad -> torch -> clgrad, strides and dtypes kept
    t = torch.from_dlpack(clgrad.to_dlpack(x.t()))
    assert t.stride() == (1, 3) and t.tolist() == x.t().tolist()
    for dtype in (torch.int64, torch.int32, torch.bool, torch.float64, torch.float16):
        src = torch.arange(4).to(dtype)
        got = clgrad.from_dlpack(torch.to_dlpack(src))
        assert str(got.dtype).split(".")[-1] == str(dtype).split(".")[-1]
        assert got.tolist() == src.tolist()
    got = clgrad.from_dlpack(torch.ones(2, 0))  # __dlpack__ protocol, empty
    assert tuple(got.shape) == (2, 0)
    a = np.zeros((2, 3), np.float32)
    view = clgrad.from_dlpack(a[:, ::2])
    a[1, 2] = 4.0
    assert view.tolist() == [[0.0, 0.0], [0.0, 4.0]]
    assert clgrad.from_dlpack(np.array(2.0, np.float32)).item() == 2.0  # 0-d
    # a clgrad tensor: its own storage on its own device
    d = clgrad.ones(3, device=device)
    e = clgrad.from_dlpack(d)
    d.add_(1.0)
    assert e.device == d.device and e.tolist() == [2.0] * 3


def test_dlpack_errors(device):
    capsule = clgrad.to_dlpack(clgrad.ones(2))
    clgrad.from_dlpack(capsule)
    tcapsule = torch.to_dlpack(torch.ones(2))
    torch.from_dlpack(tcapsule)
    for lib, used in ((torch, tcapsule), (clgrad, capsule)):
        with pytest.raises(RuntimeError):  # a capsule is consumed once
            lib.from_dlpack(used)
        with pytest.raises(RuntimeError):
            lib.from_dlpack(5)
        with pytest.raises(TypeError):
            lib.to_dlpack(np.ones(2))
        with pytest.raises(BufferError):
            lib.from_dlpack(lib.ones(2, requires_grad=True))
    if device != "cpu":  # an OpenCL buffer is no DLPack memory: refused, not copied
        with pytest.raises(BufferError):
            clgrad.to_dlpack(clgrad.ones(2, device=device))
