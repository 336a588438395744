"""cumprod, logcumsumexp, cummax and cummin run as the backends' scans (``Backend.scan`` by
product or logaddexp, ``Backend.cum_extreme``): values, dtypes, indices and gradients against
PyTorch on every device, with zeros, NaN, infinities, 0-d, empty and non-contiguous inputs; the
doubling scan of Tensor ops a GPU's few long lines take gives the same."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

FLOATS = ["float32", "float64", "float16", "bfloat16"]
DTYPES = [*FLOATS, "int64", "int32", "int8", "uint8", "bool"]
SHAPES = [(7,), (4, 37), (3, 5, 9), (1, 1)]


def _pair(a, dtype, device):
    t = torch.tensor(a).to(getattr(torch, dtype))
    host = t.float().numpy() if dtype == "bfloat16" else t.numpy()
    return clgrad.tensor(host, device=device).to(getattr(clgrad, dtype)), t


def _numpy(x):
    x = x.detach()
    return x.float().cpu().numpy() if x.dtype in (clgrad.bfloat16, torch.bfloat16) else x.numpy()


def _values(dtype, shape, rng, spread=2.0):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        a = np.round(rng.standard_normal(shape) * spread, 1)
        a.reshape(-1)[::11] = 0.0
        return a
    return rng.integers(0 if dtype == "uint8" else -3, 4, shape)


def _check(got, want, dtype, rtol=None):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    g, w = _numpy(got.cpu()), _numpy(want)
    if rtol is None:
        rtol = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}.get(dtype, 0)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol, rtol, True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["cumprod", "logcumsumexp", "cummax", "cummin"])
def test_against_torch(device, op, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        a = _values(dtype, shape, rng, 0.5 if op == "cumprod" else 2.0)
        if dtype in FLOATS and op != "cumprod":
            a.reshape(-1)[3::13] = np.nan
            a.reshape(-1)[5::17] = np.inf
        x, t = _pair(a, dtype, device)
        for dim in range(-len(shape), len(shape)):
            if op == "logcumsumexp" and dtype not in FLOATS:
                with pytest.raises(NotImplementedError):
                    torch.logcumsumexp(t, dim)
                with pytest.raises(NotImplementedError):
                    clgrad.logcumsumexp(x, dim)
                continue
            want = getattr(torch, op)(t, dim)
            got = getattr(clgrad, op)(x, dim)
            if op in ("cummax", "cummin"):
                _check(got.values, want.values, dtype)
                np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())
            else:
                _check(got, want, dtype, 5e-2 if dtype == "bfloat16" else None)


@pytest.mark.parametrize("op", ["cumprod", "logcumsumexp", "cummax", "cummin"])
def test_0d_empty_and_strided(device, op):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 10))
    x, t = _pair(base, "float32", device)
    cases = [
        (x[0, 0], t[0, 0], 0),
        (x[:, :0], t[:, :0], 1),
        (x[:0], t[:0], 0),
        (x.t(), t.t(), 0),
        (x[::2, 1::3], t[::2, 1::3], 1),
        (x[1].expand(4, 10), t[1].expand(4, 10), 0),
    ]
    for xv, tv, dim in cases:
        got, want = getattr(clgrad, op)(xv, dim), getattr(torch, op)(tv, dim)
        if op in ("cummax", "cummin"):
            _check(got.values, want.values, "float32")
            np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())
        else:
            _check(got, want, "float32")


def test_cumprod_gradients_with_zeros(device):
    """A line's first zero gets the product of the others, elements after it nothing; the
    second derivative too, as PyTorch's."""
    if not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 7))
    a[1, 2] = a[2, 1] = a[2, 4] = a[3, 0] = a[3, 6] = 0.0
    g = rng.standard_normal((4, 7))
    for dim in (0, 1):
        xt = torch.tensor(a, requires_grad=True)
        (gt,) = torch.autograd.grad(torch.cumprod(xt, dim), xt, torch.tensor(g), create_graph=True)
        (ggt,) = torch.autograd.grad((gt * gt).sum(), xt)
        xc = clgrad.tensor(a, device=device, requires_grad=True)
        y = clgrad.cumprod(xc, dim)
        (gc,) = clgrad.autograd.grad(y, xc, clgrad.tensor(g, device=device), create_graph=True)
        (ggc,) = clgrad.autograd.grad((gc * gc).sum(), xc)
        np.testing.assert_allclose(gc.detach().cpu().numpy(), gt.detach().numpy(), 1e-10, 1e-12)
        np.testing.assert_allclose(ggc.cpu().numpy(), ggt.numpy(), 1e-10, 1e-12)


@pytest.mark.parametrize("op", ["logcumsumexp", "cummax", "cummin"])
def test_gradients(device, op):
    rng = np.random.default_rng(3)
    a = np.round(rng.standard_normal((5, 8)), 1)  # ties: cummax's gradient goes to the last
    g = rng.standard_normal((5, 8))
    g32 = g.astype(np.float32)  # (the device may have no float64)
    for dim in (0, 1):
        xt = torch.tensor(a, dtype=torch.float32, requires_grad=True)
        yt = getattr(torch, op)(xt, dim)
        (yt[0] if isinstance(yt, tuple) else yt).backward(torch.tensor(g, dtype=torch.float32))
        xc = clgrad.tensor(a, dtype=clgrad.float32, device=device, requires_grad=True)
        yc = getattr(clgrad, op)(xc, dim)
        (yc[0] if isinstance(yc, tuple) else yc).backward(clgrad.tensor(g32, device=device))
        np.testing.assert_allclose(xc.grad.cpu().numpy(), xt.grad.numpy(), 1e-5, 1e-5)


def test_gradcheck(device):
    if not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")
    rng = np.random.default_rng(4)
    x = clgrad.tensor(rng.standard_normal((3, 6)), device=device, requires_grad=True)
    for fn in (lambda t: clgrad.cumprod(t, 1), lambda t: clgrad.logcumsumexp(t, 0)):
        assert clgrad.autograd.gradcheck(fn, (x,))
        assert clgrad.autograd.gradgradcheck(fn, (x,))


def test_doubling_path_agrees(cl_device, monkeypatch):
    """Where the backend declines (a GPU's few long lines), cummax / cummin scan with Tensor
    ops: the same values and indices."""
    rng = np.random.default_rng(5)
    a = np.round(rng.standard_normal((3, 300)), 1)
    a[1, 40] = np.nan
    x = clgrad.tensor(a.astype(np.float32), device=cl_device)
    kernel = [clgrad.cummax(x, 1), clgrad.cummin(x, 0)]
    backend = type(x.device.backend)
    monkeypatch.setattr(backend, "scans_extreme", lambda self, lines, length: False)
    doubling = [clgrad.cummax(x, 1), clgrad.cummin(x, 0)]
    for k, d in zip(kernel, doubling):
        np.testing.assert_array_equal(k.values.cpu().numpy(), d.values.cpu().numpy())
        np.testing.assert_array_equal(k.indices.cpu().numpy(), d.indices.cpu().numpy())


def test_loop_limit(cl_device, monkeypatch):
    """Where a work-item's loops are limited (llvmpipe), lines past the limit take the doubling
    scan: right values either way."""
    a = (np.arange(150.0, dtype=np.float32) % 7).reshape(1, 150)
    x = clgrad.tensor(a, device=cl_device)
    backend = x.device.backend
    monkeypatch.setattr(x.device.runtime, "loop_limit", 100)
    assert backend.scans_extreme(1, 99) != backend.rt.is_gpu or backend.scans_extreme(1, 64)
    assert not backend.scans_extreme(1, 100)
    got = clgrad.cummax(x, 1)
    want = torch.cummax(torch.tensor(a), 1)
    np.testing.assert_array_equal(got.values.cpu().numpy(), want.values.numpy())
    np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())


def test_host_float_scans_run_in_double():
    """The host device sums and multiplies float32 lines in double, as PyTorch's CPU kernels: a
    running product that passes float's range and comes back is finite there, as torch's."""
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((20, 300)) * 3).astype(np.float32)
    for op in ("cumprod", "cumsum"):
        got = getattr(clgrad, op)(clgrad.tensor(a), 1).numpy()
        want = getattr(torch, op)(torch.tensor(a), 1).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
