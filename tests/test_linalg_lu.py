"""The LU family (clgrad/ops/lu.py) against torch on every test device: linalg.lu_factor,
lu_factor_ex, lu, lu_solve, torch.lu_unpack and the deprecated torch.lu / torch.lu_solve (and
their Tensor methods): values, pivots, infos, shapes (batched, rectangular, empty), dtypes,
gradients (torch's and finite differences), errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import supports
from torch_helper import Input, compare

import clgrad

DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-5, "float64": 1e-11}


def _need(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")


def _pair(a, device, requires_grad=False):
    """The same array as a torch tensor and as a clgrad tensor on ``device``."""
    t = torch.tensor(a, requires_grad=requires_grad)
    c = clgrad.tensor(a, device=device, requires_grad=requires_grad)
    return t, c


def _host(x):
    return x.detach().cpu().numpy()


def _close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(
        _host(got), want.detach().numpy(), rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale
    )


def _random(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


SHAPES = [(3, 3), (2, 4, 4), (2, 1, 3, 5), (3, 5, 2), (1, 1), (6, 6)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_factor_values_and_pivots(device, dtype, shape):
    _need(device, dtype)
    a = _random(shape, dtype)
    t, c = _pair(a, device)
    LU, pivots, info = clgrad.linalg.lu_factor_ex(c)
    tLU, tpivots, tinfo = torch.linalg.lu_factor_ex(t)
    for x in (LU, pivots, info):
        assert str(x.device) == device
    assert LU.dtype == getattr(clgrad, dtype) and LU.shape == tLU.shape
    assert pivots.dtype == clgrad.int32 and info.dtype == clgrad.int32
    np.testing.assert_array_equal(_host(pivots), tpivots.numpy())
    np.testing.assert_array_equal(_host(info), tinfo.numpy())
    _close(LU, tLU, dtype, scale=10)
    LU2, pivots2 = clgrad.linalg.lu_factor(c)
    np.testing.assert_array_equal(_host(LU2), _host(LU))
    np.testing.assert_array_equal(_host(pivots2), _host(pivots))
    # named fields, as torch's return types
    named = clgrad.linalg.lu_factor_ex(c)
    assert named.LU.shape == LU.shape and _host(named.pivots).tolist() == _host(pivots).tolist()
    assert _host(named.info).tolist() == _host(info).tolist()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_linalg_lu_reconstructs_and_matches_torch(device, dtype, shape):
    _need(device, dtype)
    a = _random(shape, dtype, seed=1)
    t, c = _pair(a, device)
    P, L, U = clgrad.linalg.lu(c)
    tP, tL, tU = torch.linalg.lu(t)
    for x, y in ((P, tP), (L, tL), (U, tU)):
        assert tuple(x.shape) == tuple(y.shape) and str(x.device) == device
        assert x.dtype == getattr(clgrad, dtype)
    np.testing.assert_array_equal(_host(P), tP.numpy())
    _close(L, tL, dtype, scale=10)
    _close(U, tU, dtype, scale=10)
    # the factors' structure: A = P L U, L unit lower, U upper
    np.testing.assert_allclose(_host(P @ L @ U), a, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    k = min(shape[-2:])
    np.testing.assert_array_equal(np.diagonal(_host(L), 0, -2, -1), np.ones(shape[:-2] + (k,)))
    assert not np.triu(_host(L), 1).any() and not np.tril(_host(U), -1).any()
    named = clgrad.linalg.lu(c)
    np.testing.assert_array_equal(_host(named.P), _host(P))
    np.testing.assert_array_equal(_host(named.U), _host(U))


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 3), (2, 3, 0), (0, 0)], ids=str)
def test_empty_inputs(device, shape):
    a = np.zeros(shape, np.float32)
    t, c = _pair(a, device)
    for got, want in zip(clgrad.linalg.lu_factor_ex(c), torch.linalg.lu_factor_ex(t)):
        assert tuple(got.shape) == tuple(want.shape)
        assert got.dtype.name == str(want.dtype).rpartition(".")[2]
    for got, want in zip(clgrad.linalg.lu(c), torch.linalg.lu(t)):
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(_host(got), want.numpy())


def test_transposed_and_sliced_inputs(device):
    """The factorization reads a strided view as the matrix it shows."""
    base = _random((2, 5, 5), "float32", seed=2)
    t, c = _pair(base, device)
    for view in (lambda x: x.mT, lambda x: x[:, ::2, 1:4]):
        LU, pivots = clgrad.linalg.lu_factor(view(c))
        tLU, tpivots = torch.linalg.lu_factor(view(t))
        np.testing.assert_array_equal(_host(pivots), tpivots.numpy())
        _close(LU, tLU, "float32", scale=10)


SINGULAR = [
    [[1.0, 2.0], [2.0, 4.0]],
    [[0.0, 0.0], [0.0, 0.0]],
    [[0.0, 1.0], [0.0, 3.0]],
    [[1.0, 0.0], [0.0, 1.0]],
]


def test_singular_infos(device):
    a = np.array(SINGULAR, np.float32)
    t, c = _pair(a, device)
    LU, pivots, info = clgrad.linalg.lu_factor_ex(c)
    tLU, tpivots, tinfo = torch.linalg.lu_factor_ex(t)
    np.testing.assert_array_equal(_host(info), tinfo.numpy())
    assert _host(info).tolist() == [2, 1, 1, 0]
    np.testing.assert_array_equal(_host(pivots), tpivots.numpy())
    np.testing.assert_array_equal(_host(LU), tLU.numpy())
    # linalg.lu and torch.lu factor a singular matrix without an error, as torch's
    P, L, U = clgrad.linalg.lu(c)
    np.testing.assert_allclose(_host(P @ L @ U), a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        legacy = clgrad.lu(c, get_infos=True)
    np.testing.assert_array_equal(_host(legacy.info), tinfo.numpy())
    # lu_factor and lu_factor_ex(check_errors=True) raise torch's error for the first failure
    for fn, name in (
        (lambda x: clgrad.linalg.lu_factor(x), "lu_factor"),
        (lambda x: clgrad.linalg.lu_factor_ex(x, check_errors=True), "lu_factor_ex"),
    ):
        tfn = getattr(torch.linalg, name)
        kwargs = {"check_errors": True} if name == "lu_factor_ex" else {}
        for sl in (slice(None), 0):
            with pytest.raises(RuntimeError) as want:
                tfn(t[sl], **kwargs)
            with pytest.raises(RuntimeError) as got:
                fn(c[sl])
            assert str(got.value) == str(want.value)
            assert "Batch element 0" in str(got.value) or sl == 0
    assert clgrad.linalg.lu_factor_ex(c[3], check_errors=True).info.item() == 0


def test_lu_unpack(device):
    a = _random((2, 4, 4), "float64" if supports(device, clgrad.float64) else "float32", 3)
    tLU, tpivots = torch.linalg.lu_factor(torch.tensor(a))
    LU = clgrad.tensor(tLU.numpy(), device=device)
    pivots = clgrad.tensor(tpivots.numpy(), device=device)
    for kwargs in ({}, {"unpack_data": False}, {"unpack_pivots": False}):
        got = clgrad.lu_unpack(LU, pivots, **kwargs)
        want = torch.lu_unpack(tLU, tpivots, **kwargs)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape) and str(g.device) == device
            np.testing.assert_array_equal(_host(g), w.numpy())
    named = clgrad.lu_unpack(LU, pivots)
    np.testing.assert_array_equal(_host(named.L), torch.lu_unpack(tLU, tpivots).L.numpy())
    # any valid pivots, rectangular matrices, an integer LU
    for shape, piv in (((3, 3), [1, 1, 1]), ((4, 3), [2, 3, 4]), ((3, 5), [3, 3, 3])):
        lu = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
        want = torch.lu_unpack(torch.tensor(lu), torch.tensor(piv, dtype=torch.int32))
        got = clgrad.lu_unpack(
            clgrad.tensor(lu, device=device), clgrad.tensor(piv, dtype=clgrad.int32, device=device)
        )
        for g, w in zip(got, want):
            assert g.dtype == clgrad.int64
            np.testing.assert_array_equal(_host(g), w.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((4, 4), (4, 3)), ((2, 4, 4), (4, 1)), ((3, 3), (2, 1, 3, 2)), ((2, 3, 3), (2, 3, 3))],
    ids=str,
)
def test_lu_solve(device, dtype, left, adjoint, a_shape, b_shape):
    _need(device, dtype)
    n = a_shape[-1]
    a = _random(a_shape, dtype, 4) + 3 * np.eye(n, dtype=dtype)
    b = _random(b_shape, dtype, 5)
    if not left:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    ta, ca = _pair(a, device)
    tb, cb = _pair(b, device)
    X = clgrad.linalg.lu_solve(*clgrad.linalg.lu_factor(ca), cb, left=left, adjoint=adjoint)
    tX = torch.linalg.lu_solve(*torch.linalg.lu_factor(ta), tb, left=left, adjoint=adjoint)
    assert tuple(X.shape) == tuple(tX.shape) and str(X.device) == device
    assert X.dtype == getattr(clgrad, dtype)
    _close(X, tX, dtype, scale=10)
    # the system it solves
    op = np.swapaxes(a, -1, -2) if adjoint else a
    residual = _host(X) @ op - b if not left else op @ _host(X) - b
    assert np.abs(residual).max() < TOL[dtype] * 100


def test_legacy_forms(device):
    a = _random((2, 3, 3), "float32", 6)
    b = _random((2, 3, 2), "float32", 7)
    ta, ca = _pair(a, device)
    tb, cb = _pair(b, device)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        got = clgrad.lu(ca)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.lu(ta)
        assert len(got) == 2 and len(ca.lu()) == 2 and len(ca.lu(get_infos=True)) == 3
        infos = clgrad.lu(ca, get_infos=True)
        twant = torch.lu(ta, get_infos=True)
        np.testing.assert_array_equal(_host(infos.info), twant.info.numpy())
        np.testing.assert_array_equal(_host(ca.lu()[1]), ta.lu()[1].numpy())
        X = clgrad.lu_solve(cb, *got)
        tX = torch.lu_solve(tb, *want)
        Xm = cb.lu_solve(*got)
    np.testing.assert_array_equal(_host(got[1]), want[1].numpy())
    _close(got[0], want[0], "float32", scale=10)
    _close(X, tX, "float32", scale=10)
    _close(Xm, tX, "float32", scale=10)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        clgrad.lu_solve(cb, *got)


def test_out(device):
    a = _random((2, 3, 3), "float32", 8)
    c = clgrad.tensor(a, device=device)
    LU = clgrad.empty(0, device=device)
    pivots = clgrad.empty(0, dtype=clgrad.int32, device=device)
    result = clgrad.linalg.lu_factor(c, out=(LU, pivots))
    want = clgrad.linalg.lu_factor(c)
    assert result[0] is LU and result.pivots is pivots
    np.testing.assert_array_equal(_host(LU), _host(want.LU))
    np.testing.assert_array_equal(_host(pivots), _host(want.pivots))
    P, L, U = (clgrad.empty(0, device=device) for _ in range(3))
    clgrad.lu_unpack(LU, pivots, out=(P, L, U))
    np.testing.assert_allclose(_host(P @ L @ U), a, rtol=1e-5, atol=1e-5)
    X = clgrad.empty(0, device=device)
    clgrad.linalg.lu_solve(LU, pivots, c, out=X)
    np.testing.assert_allclose(_host(X), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-4)


def test_pivot_false(device):
    """PyTorch's CPU refuses LU without pivoting; its CUDA one computes it (P empty): clgrad's
    cpu device answers as the former, its OpenCL devices as the latter."""
    # diagonally dominant by columns: partial pivoting swaps nothing, so the factors, and the
    # gradients, are those of torch's pivoted LU
    a = _random((2, 4, 4), "float32", 9) + 6 * np.eye(4, dtype=np.float32)
    t, c = _pair(a, device, requires_grad=True)
    with pytest.raises(RuntimeError) as want:
        torch.linalg.lu(t.detach(), pivot=False)
    if device == "cpu":
        for fn in (clgrad.linalg.lu, clgrad.linalg.lu_factor, clgrad.linalg.lu_factor_ex):
            with pytest.raises(RuntimeError) as got:
                fn(c, pivot=False)
            assert str(got.value) == str(want.value)
        return
    tP, tL, tU = torch.linalg.lu(t)
    assert (torch.linalg.lu_factor(t.detach()).pivots == torch.arange(1, 5)).all()
    P, L, U = clgrad.linalg.lu(c, pivot=False)
    assert tuple(P.shape) == (0,)
    _close(L, tL, "float32", scale=10)
    _close(U, tU, "float32", scale=10)
    LU, pivots, info = clgrad.linalg.lu_factor_ex(c, pivot=False)
    assert _host(pivots).tolist() == [[1, 2, 3, 4]] * 2 and not _host(info).any()
    gL, gU = _random((2, 4, 4), "float32", 10), _random((2, 4, 4), "float32", 11)
    ((tL * torch.tensor(gL)).sum() + (tU * torch.tensor(gU)).sum()).backward()
    cgL, cgU = clgrad.tensor(gL, device=device), clgrad.tensor(gU, device=device)
    ((L * cgL).sum() + (U * cgU).sum()).backward()
    _close(c.grad, t.grad, "float32", scale=10)


# gradients against torch's: every differentiable output, a random cotangent (torch_helper)
GRADS = [
    ("lu", lambda t, x: tuple(t.linalg.lu(x))[1:], (3, 3)),
    ("lu-batched", lambda t, x: tuple(t.linalg.lu(x))[1:], (2, 4, 4)),
    ("lu-wide", lambda t, x: tuple(t.linalg.lu(x))[1:], (2, 3, 5)),
    ("lu-tall", lambda t, x: tuple(t.linalg.lu(x))[1:], (2, 5, 3)),
    ("lu-L-only", lambda t, x: t.linalg.lu(x).L, (4, 3)),
    ("lu-U-only", lambda t, x: t.linalg.lu(x).U, (3, 4)),
    ("lu_factor", lambda t, x: t.linalg.lu_factor(x).LU, (2, 4, 4)),
    ("lu_factor-wide", lambda t, x: t.linalg.lu_factor_ex(x).LU, (3, 5)),
    ("lu_factor-tall", lambda t, x: t.linalg.lu_factor(x)[0], (5, 2)),
    (
        "lu_unpack",
        lambda t, x: tuple(t.lu_unpack(*t.linalg.lu_factor(x)))[1:],
        (2, 3, 3),
    ),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, shape", [g[1:] for g in GRADS], ids=[g[0] for g in GRADS])
def test_gradients_against_torch(fn, shape, dtype):
    tol = 1e-9 if dtype == "float64" else 2e-4
    compare(fn, Input(shape, dtype), rtol=tol, atol=tol, grad_rtol=tol, grad_atol=tol)


SOLVES = [(left, adjoint) for left in (True, False) for adjoint in (False, True)]


@pytest.mark.parametrize("left, adjoint", SOLVES, ids=[f"left={a}-adjoint={b}" for a, b in SOLVES])
def test_lu_solve_gradients_against_torch(left, adjoint):
    def fn(t, a, b):
        A = a + 4 * t.eye(3, dtype=a.dtype, device=a.device)
        return t.linalg.lu_solve(*t.linalg.lu_factor(A), b, left=left, adjoint=adjoint)

    b_shape = (2, 3, 2) if left else (2, 2, 3)
    compare(fn, Input((2, 3, 3), "float64"), Input(b_shape, "float64"), rtol=1e-9, atol=1e-9,
            grad_rtol=1e-9, grad_atol=1e-9)  # fmt: skip


def _gradcheck_cases():
    eye = clgrad.eye
    return {
        "lu": (lambda a: tuple(clgrad.linalg.lu(a))[1:], (3, 3)),
        "lu-wide": (lambda a: tuple(clgrad.linalg.lu(a))[1:], (2, 3, 4)),
        "lu-tall": (lambda a: tuple(clgrad.linalg.lu(a))[1:], (4, 2)),
        "lu_factor": (lambda a: clgrad.linalg.lu_factor(a).LU, (2, 3, 3)),
        "lu_solve": (
            lambda a: clgrad.linalg.lu_solve(
                *clgrad.linalg.lu_factor(a + 4 * eye(3, dtype=a.dtype, device=a.device)), a
            ),
            (3, 3),
        ),
        "lu_solve-right-adjoint": (
            lambda a: clgrad.linalg.lu_solve(
                *clgrad.linalg.lu_factor(a + 4 * eye(3, dtype=a.dtype, device=a.device)),
                a[:2],
                left=False,
                adjoint=True,
            ),
            (3, 3),
        ),
    }


@pytest.mark.parametrize("name", list(_gradcheck_cases()))
def test_gradcheck(device, name):
    """float64 finite differences of each backward, and of the backward's own gradient."""
    _need(device, "float64")
    fn, shape = _gradcheck_cases()[name]
    a = clgrad.tensor(_random(shape, "float64", 12), device=device, requires_grad=True)
    assert clgrad.autograd.gradcheck(fn, (a,), eps=1e-6, atol=1e-5)
    if name in ("lu", "lu-wide", "lu_solve"):
        assert clgrad.autograd.gradgradcheck(fn, (a,), eps=1e-6, atol=1e-5)


def _pivots(values):
    return np.array(values, np.int32)


# (name, the call on torch or clgrad: ``m`` makes an input); the same class and message
ERRORS = [
    ("lu_factor-1d", lambda t, m: t.linalg.lu_factor(m((3,)))),
    ("lu_factor_ex-1d", lambda t, m: t.linalg.lu_factor_ex(m((3,)))),
    ("lu-1d", lambda t, m: t.linalg.lu(m((3,)))),
    ("lu_factor-int", lambda t, m: t.linalg.lu_factor(m((3, 3), "int64"))),
    ("lu-int32", lambda t, m: t.linalg.lu(m((3, 3), "int32"))),
    ("lu_factor-bool", lambda t, m: t.linalg.lu_factor(m((3, 3), "bool"))),
    ("lu_factor-half", lambda t, m: t.linalg.lu_factor(m((3, 3), "float16"))),
    ("torch.lu-int", lambda t, m: t.lu(m((3, 3), "int64"))),
    ("lu_unpack-1d", lambda t, m: t.lu_unpack(m((3,)), m((3,), "int32"))),
    ("lu_unpack-int64-pivots", lambda t, m: t.lu_unpack(m((3, 3)), m((3,), "int64"))),
    ("lu_unpack-pivot-range", lambda t, m: t.lu_unpack(m((3, 3)), m(_pivots([1, 2, 4])))),
    (
        "lu_solve-int",
        lambda t, m: t.linalg.lu_solve(m((3, 3), "int64"), m((3,), "int32"), m((3, 1), "int64")),
    ),
    (
        "lu_solve-dtypes",
        lambda t, m: t.linalg.lu_solve(m((3, 3)), m((3,), "int32"), m((3, 1), "float64")),
    ),
    (
        "lu_solve-pivots-int64",
        lambda t, m: t.linalg.lu_solve(m((3, 3)), m((3,), "int64"), m((3, 1))),
    ),
    ("lu_solve-1d", lambda t, m: t.linalg.lu_solve(m((3,)), m((3,), "int32"), m((3, 1)))),
    ("lu_solve-nonsquare", lambda t, m: t.linalg.lu_solve(m((3, 4)), m((3,), "int32"), m((3, 1)))),
    ("lu_solve-B-1d", lambda t, m: t.linalg.lu_solve(m((3, 3)), m((3,), "int32"), m((3,)))),
    ("lu_solve-B-rows", lambda t, m: t.linalg.lu_solve(m((3, 3)), m((3,), "int32"), m((4, 2)))),
    (
        "lu_solve-B-columns-right",
        lambda t, m: t.linalg.lu_solve(m((3, 3)), m((3,), "int32"), m((3, 2)), left=False),
    ),
    (
        "lu_solve-pivot-count",
        lambda t, m: t.linalg.lu_solve(m((3, 3)), m((2,), "int32"), m((3, 1))),
    ),
    (
        "lu_solve-pivot-batch",
        lambda t, m: t.linalg.lu_solve(m((2, 3, 3)), m((1, 3), "int32"), m((3, 1))),
    ),
    (
        "lu_solve-pivot-low",
        lambda t, m: t.linalg.lu_solve(m((3, 3)), m(_pivots([0, 2, 3])), m((3, 1))),
    ),
    (
        "lu_solve-pivot-high",
        lambda t, m: t.linalg.lu_solve(m((3, 3)), m(_pivots([4, 2, 3])), m((3, 1))),
    ),
    (
        "lu_solve-half",
        lambda t, m: t.linalg.lu_solve(
            m((3, 3), "float16"), m((3,), "int32"), m((3, 1), "float16")
        ),
    ),
    ("lu_solve-legacy-B-1d", lambda t, m: t.lu_solve(m((3,)), m((3, 3)), m((3,), "int32"))),
]


def _maker(lib, device):
    """``m(shape, dtype)``: ones plus the identity (a 1-d int32 one: the pivots 1, 2, ...);
    ``m(array)``: those values."""

    def make(shape_or_values, dtype="float32"):
        if lib is not torch and dtype == "float64":
            if not clgrad.device(device).supports(clgrad.float64):
                pytest.skip("the device has no float64")
        if isinstance(shape_or_values, np.ndarray):
            a = shape_or_values
        elif dtype == "int32" and len(shape_or_values) == 1:
            a = np.arange(1, shape_or_values[0] + 1, dtype=np.int32)
        elif len(shape_or_values) >= 2:
            a = np.ones(shape_or_values, dtype) + np.eye(*shape_or_values[-2:], dtype=dtype)
        else:
            a = np.ones(shape_or_values, dtype)
        return torch.tensor(a) if lib is torch else clgrad.tensor(a, device=device)

    return make


@pytest.mark.parametrize("fn", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_as_torch(device, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            fn(torch, _maker(torch, device))
        with pytest.raises(Exception) as got:
            fn(clgrad, _maker(clgrad, device))
    assert type(got.value) is type(want.value), (got.value, want.value)
    assert str(got.value) == str(want.value)


def test_lu_solve_of_a_singular_factor_raises(device):
    """A zero on U's diagonal: clgrad's triangular solve raises LinAlgError (torch returns
    inf / nan there), a RuntimeError as torch's errors are."""
    LU, pivots, info = clgrad.linalg.lu_factor_ex(clgrad.tensor(SINGULAR[0], device=device))
    assert info.item() == 2
    with pytest.raises(clgrad.linalg.LinAlgError):
        clgrad.linalg.lu_solve(LU, pivots, clgrad.ones(2, 1, device=device))
    assert issubclass(clgrad.linalg.LinAlgError, RuntimeError)


def test_names_are_registered():
    for name in ("lu_factor", "lu_factor_ex", "lu", "lu_solve"):
        assert name in clgrad.linalg.__all__ and callable(getattr(clgrad.linalg, name))
    for name in ("lu", "lu_unpack", "lu_solve"):
        assert callable(getattr(clgrad, name))
    for name in ("lu", "lu_solve"):
        assert callable(getattr(clgrad.Tensor, name))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_triangular_solve_as_torch(device, upper, transpose, unitriangular):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    B = rng.standard_normal((2, 3, 2))
    results = []
    for lib, dev in ((clgrad, device), (torch, "cpu")):
        a = lib.tensor(A, dtype=lib.float32, device=dev, requires_grad=True)
        b = lib.tensor(B, dtype=lib.float32, device=dev, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = lib.triangular_solve(
                b, a, upper=upper, transpose=transpose, unitriangular=unitriangular
            )
        if lib is clgrad:  # (torch warns once per process)
            assert any("deprecated" in str(w.message) for w in caught)
        x, coefficient = got
        (x * x).sum().backward()
        results.append(
            [t.detach().cpu().numpy() for t in (got.solution, coefficient, a.grad, b.grad)]
        )
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
