"""softmax and log_softmax (one kernel each: kernels/softmax.cl.mako) against PyTorch: every
dim, float16/32/64, 0-d, empty, non-contiguous and offset inputs, dtype=, rows shorter and
longer than a work-group, infinities and NaN, gradients and gradcheck."""

import numpy as np
import pytest
import torch

import clgrad
from clgrad.backend.opencl import softmax as softmax_family
from tests.conftest import supports, tolerance

FUNCTIONS = ["softmax", "log_softmax"]
DTYPES = ["float32", "float64", "float16"]


def _need(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")


def _check(got, want, dtype):
    """``got`` (clgrad) against ``want`` (torch, computed in float64 and rounded to dtype)."""
    assert str(got.dtype).split(".")[-1] == dtype
    rtol, atol = tolerance(np.dtype(dtype))
    np.testing.assert_allclose(
        got.detach().cpu().numpy().astype(np.float64),
        want.detach().numpy().astype(np.float64),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
    )


def _reference(fn, x, dim, dtype):
    return getattr(torch.from_numpy(x.astype(np.float64)), fn)(dim).to(getattr(torch, dtype))


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, dim",
    [((5,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((4, 1000), 1)]
    + [((300, 5), 0), ((2, 1, 3), 1), ((1, 1), 0)],
)
def test_values(device, fn, dtype, shape, dim):
    _need(device, dtype)
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) * 4
    got = getattr(clgrad.tensor(x, device=device), fn)(dim)
    _check(got, _reference(fn, x, dim, dtype), dtype)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_non_contiguous_and_offset(device, fn):
    x = np.random.default_rng(1).standard_normal((6, 9, 5)).astype(np.float32)
    t = clgrad.tensor(x, device=device)
    for view, ref in [
        (t.transpose(0, 2), x.transpose(2, 1, 0)),
        (t[1:, ::2, 1:4], x[1:, ::2, 1:4]),
        (t[2], x[2]),
    ]:
        for dim in range(view.ndim):
            _check(getattr(view, fn)(dim), _reference(fn, ref, dim, "float32"), "float32")


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_zero_dim_empty_and_dtype_argument(device, fn):
    f = getattr(clgrad, fn)
    tf = getattr(torch, fn)
    x = clgrad.tensor(2.5, device=device)
    _check(f(x, 0), tf(torch.tensor(2.5), 0), "float32")
    e = f(clgrad.zeros(0, 3, device=device), 1)
    assert e.shape == (0, 3) and e.dtype == clgrad.float32
    assert f(clgrad.zeros(2, 0, device=device), 1).shape == (2, 0)
    ints = np.arange(12).reshape(3, 4)
    y = f(clgrad.tensor(ints, device=device), 1, dtype=clgrad.float32)
    _check(y, tf(torch.tensor(ints), 1, dtype=torch.float32), "float32")
    h = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float16)
    y = f(clgrad.tensor(h, device=device), 0, dtype=clgrad.float32)
    _check(y, tf(torch.tensor(h), 0, dtype=torch.float32), "float32")
    with pytest.raises((NotImplementedError, RuntimeError)):
        f(clgrad.tensor(ints, device=device), 1)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_large_values_infinities_and_nan(device, fn):
    inf, nan = float("inf"), float("nan")
    x = np.array(
        [
            [1000.0, 999.0, -1000.0, 0.0],
            [-inf, 0.0, 1.0, -inf],
            [-inf, -inf, -inf, -inf],
            [1.0, nan, 2.0, 3.0],
            [inf, 1.0, 2.0, 3.0],
            [-3e38, 3e38, 0.0, 1.0],
        ],
        np.float32,
    )
    got = getattr(clgrad.tensor(x, device=device), fn)(1)
    _check(got, getattr(torch.tensor(x), fn)(1), "float32")


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_specials_inside_vectors_and_masked_rows(device, fn):
    """Rows long enough for a CPU device's vec kernel (whole vectors, then a tail): a NaN, an
    inf and -inf inside a vector reach their rows as torch's do, and attention-style masked
    rows (most of each -inf or -1e4: terms below float's normal range, which the vec kernel
    gives as 0 where torch rounds to denormals) match torch, forward and gradient."""
    inf, nan = float("inf"), float("nan")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 20)).astype(np.float32)
    x[0, 3], x[1, 9], x[2, 5], x[3, 17] = nan, inf, -inf, -inf
    got = getattr(clgrad.tensor(x, device=device), fn)(1)
    _check(got, getattr(torch.tensor(x), fn)(1), "float32")
    scores = rng.standard_normal((6, 67, 67)).astype(np.float32) * 3
    causal = np.tril(np.ones((67, 67), bool))
    for fill in (-inf, -1e4):
        masked = np.where(causal, scores, np.float32(fill)).reshape(-1, 67)
        g = rng.standard_normal(masked.shape).astype(np.float32)
        _check_gradient(device, fn, masked, g, 1, check_output=True)


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradient_matches_torch(device, fn, dim):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 300)).astype(np.float32)
    g = rng.standard_normal((4, 300)).astype(np.float32)
    _check_gradient(device, fn, x, g, dim)


def _check_gradient(device, fn, x, g, dim, check_output=False):
    """``fn``'s gradient along ``dim`` for the incoming ``g`` against torch's (float32); with
    ``check_output`` the forward too."""
    t = clgrad.tensor(x, device=device, requires_grad=True)
    y = getattr(t, fn)(dim)
    if check_output:
        _check(y, _reference(fn, x, dim, "float32"), "float32")
    y.backward(clgrad.tensor(g, device=device))
    r = torch.tensor(x, requires_grad=True)
    getattr(r, fn)(dim).backward(torch.tensor(g))
    np.testing.assert_allclose(t.grad.cpu().numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_gradcheck(device, fn):
    _need(device, "float64")
    x = clgrad.tensor(
        np.random.default_rng(4).standard_normal((3, 5, 2)),
        dtype=clgrad.float64,
        device=device,
        requires_grad=True,
    )
    for dim in (0, 1, 2):
        assert clgrad.autograd.gradcheck(lambda a, d=dim: getattr(a, fn)(d), (x,))
        assert clgrad.autograd.gradgradcheck(lambda a, d=dim: getattr(a, fn)(d), (x,))


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("split", [False, True])
def test_both_kernel_forms(cl_device, fn, split, monkeypatch):
    """The GPU form (no barrier per row step) and the CPU form give the same values on any
    device, for both kernels (a row per group, a row per item), forward and gradient."""
    monkeypatch.setattr(softmax_family, "SPLIT", split)
    x = np.random.default_rng(5).standard_normal((3, 700)).astype(np.float32)
    g = np.random.default_rng(6).standard_normal((3, 700)).astype(np.float32)
    for dim in (0, 1):
        _check_gradient(cl_device, fn, x, g, dim, check_output=True)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_float16_gradient(device, fn):
    """The gradient's kernel reads and writes float16 and computes in float32."""
    _need(device, "float16")
    rng = np.random.default_rng(7)
    x, g = rng.standard_normal((6, 40)), rng.standard_normal((6, 40))
    t = clgrad.tensor(x, dtype=clgrad.float16, device=device, requires_grad=True)
    getattr(t, fn)(1).backward(clgrad.tensor(g, dtype=clgrad.float16, device=device))
    r = torch.tensor(x, requires_grad=True)
    getattr(r, fn)(1).backward(torch.tensor(g))
    assert t.grad.dtype == clgrad.float16
    np.testing.assert_allclose(t.grad.cpu().numpy(), r.grad.numpy(), rtol=1e-2, atol=1e-2)
