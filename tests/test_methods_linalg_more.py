"""Tensor's storage and geometry methods (set_, is_set_to, resize, as_strided_, map_, ...),
torch.linalg's tensorinv / tensorsolve / ldl family, and the nn leftovers (NLLLoss2d,
CrossMapLRN2d, Container, nn.grad, F.multi_head_attention_forward), against torch on every test
device: values, dtypes, aliasing, version counters, gradients, error classes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, clgrad.Tensor) else t.detach().numpy()


def _close(got, want, rtol=1e-5, atol=1e-5):
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(got), _np(want), rtol=rtol, atol=atol)


def _both(device, fn):
    """``fn(lib, device)`` with clgrad on ``device`` and torch on cpu."""
    return fn(clgrad, device), fn(torch, "cpu")


def _raises_like(device, fn):
    """``fn`` raises the same exception class with clgrad as with torch."""
    with pytest.raises(Exception) as want:
        fn(torch, "cpu")
    expected = clgrad.linalg.LinAlgError if want.type is torch.linalg.LinAlgError else want.type
    with pytest.raises(expected):
        fn(clgrad, device)


# ---- set_ and is_set_to ----------------------------------------------------------------------
def test_set_tensor_shares_storage(device):
    def run(t, dev):
        a = t.arange(6.0, device=dev)
        b = t.zeros(2, device=dev)
        v = b._version
        out = b.set_(a[1:].view(5))
        assert out is b
        assert b.is_set_to(a[1:]) and a[1:].is_set_to(b) and not b.is_set_to(a)
        b[0] = 9.0  # a write through b is seen by a
        a[5] = -1.0  # and one through a by b
        return a, b, b._version - v, b.storage_offset(), b.data_ptr() == a[1:].data_ptr()

    (a, b, dv, off, same), (ta, tb, tdv, toff, tsame) = _both(device, run)
    _close(a, ta)
    _close(b, tb)
    assert (dv, off, same) == (tdv, toff, tsame)


def test_set_storage_geometry(device):
    def run(t, dev):
        a = t.arange(8.0, device=dev)
        c = t.zeros(3, device=dev).set_(a.untyped_storage(), 2, (2, 2), (1, 2))
        d = t.zeros(3, device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d.set_(a.storage())
        e = t.zeros(1, device=dev).set_(a.untyped_storage(), 3, (2,))
        c[1, 1] = 40.0
        return a, c, d, e

    for got, want in zip(*_both(device, run)):
        _close(got, want)


def test_set_empty_and_grown(device):
    def run(t, dev):
        x = t.ones(3, device=dev).set_()
        a = t.arange(4.0, device=dev)
        b = t.zeros(1, device=dev).set_(a.untyped_storage(), 2, (2, 2), (1, 2))  # past the end
        return x.shape, x.untyped_storage().nbytes(), a.untyped_storage().nbytes(), b[:, 0]

    (s, n, grown, col), (ts, tn, tgrown, tcol) = _both(device, run)
    assert (tuple(s), n, grown) == (tuple(ts), tn, tgrown)
    _close(col, tcol)


@pytest.mark.parametrize(
    "bad",
    [
        lambda t, dev: t.zeros(2, device=dev, requires_grad=True).set_(t.zeros(2, device=dev)),
        lambda t, dev: t.zeros(2, device=dev).set_(t.zeros(2, dtype=t.int64, device=dev)),
        lambda t, dev: t.zeros(2, device=dev).set_(t.zeros(2, device=dev).untyped_storage(), 1),
        lambda t, dev: t.zeros(2, device=dev).set_(
            t.zeros(2, device=dev).untyped_storage(), -1, (1,)
        ),
        lambda t, dev: t.zeros(2, device=dev).set_(5),
        lambda t, dev: t.zeros(2, device=dev).set_(
            t.zeros(2, device=dev).untyped_storage(), 0, (2,), (1, 2)
        ),
    ],
)
def test_set_errors(device, bad):
    _raises_like(device, bad)


# ---- resize / resize_as / resize_as_ -------------------------------------------------------
def test_resize_deprecated_forms(device):
    def run(t, dev):
        x = t.arange(6.0, device=dev, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = x.resize_as(t.zeros(3, 2))
        (y * y).sum().backward()
        w = t.arange(6.0, device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = w.resize(3, 2)
        v[0, 0] = 7.0  # a view of a contiguous tensor
        return y, z, x.grad, w

    for got, want in zip(*_both(device, run)):
        _close(got, want)


def test_resize_errors_and_resize_as_(device):
    def bad(t, dev):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t.arange(6.0, device=dev).resize(4)

    _raises_like(device, bad)

    def run(t, dev):
        return t.arange(6.0, device=dev).resize_as_(t.zeros(3, 2))

    _close(*_both(device, run))


# ---- as_strided_ and as_strided_scatter -------------------------------------------------------
def test_as_strided_inplace(device):
    def run(t, dev):
        a = t.arange(6.0, device=dev)
        v = a._version
        out = a.as_strided_((2, 2), (1, 2), 1)
        x = t.arange(4.0, device=dev, requires_grad=True)
        y = x * 1
        y.as_strided_((2,), (2,))
        (y * t.tensor([1.0, 3.0], device=dev)).sum().backward()
        return out is a, a._version - v, a, y, x.grad

    (same, dv, *got), (tsame, tdv, *want) = _both(device, run)
    assert (same, dv) == (tsame, tdv)
    for g, w in zip(got, want):
        _close(g, w)
    _raises_like(
        device, lambda t, dev: t.zeros(4, device=dev, requires_grad=True).as_strided_((2,), (1,))
    )
    _raises_like(device, lambda t, dev: t.zeros(4, device=dev).as_strided_((3,), (2,)))


def test_as_strided_scatter(device):
    def run(t, dev):
        inp = t.arange(6.0, device=dev).reshape(2, 3).requires_grad_()
        src = t.tensor([10.0, 20.0], device=dev, requires_grad=True)
        out = t.as_strided_scatter(inp, src, (2,), (3,), 1)
        out.pow(2).sum().backward()
        method = inp.detach().as_strided_scatter(src.detach(), (2,), (3,))
        transposed = t.zeros(2, 3, device=dev).t().as_strided_scatter(src.detach(), (2,), (1,))
        return out, src.grad, method, transposed

    for got, want in zip(*_both(device, run)):
        _close(got, want)
    # input's gradient: the output's outside the written region (torch's own formula returns
    # the region's instead, its "as_strided_scatter backward" note: compared with the same
    # function composed of clone and a strided copy_ there)
    inp = clgrad.arange(6.0, device=device).reshape(2, 3).requires_grad_()
    clgrad.as_strided_scatter(inp, clgrad.ones(2, device=device), (2,), (3,), 1).pow(
        2
    ).sum().backward()
    tinp = torch.arange(6.0).reshape(2, 3).requires_grad_()
    tout = tinp.clone()
    tout.as_strided((2,), (3,), 1).copy_(torch.ones(2))
    tout.pow(2).sum().backward()
    _close(inp.grad, tinp.grad)
    _raises_like(
        device,
        lambda t, dev: t.as_strided_scatter(
            t.zeros(3, device=dev), t.ones(3, device=dev), (2,), (1,)
        ),
    )


# ---- storage_type, const_data_ptr, map_, map2_, as_subclass ---------------------------------
def test_storage_type_and_const_data_ptr(device):
    for dt in ("float32", "int64", "bool", "uint8"):
        x = clgrad.zeros(2, dtype=getattr(clgrad, dt), device=device)
        want = torch.zeros(2, dtype=getattr(torch, dt)).storage_type()
        assert x.storage_type().__name__ == want.__name__
        assert x.storage_type() is getattr(clgrad, want.__name__)
    x = clgrad.arange(4.0, device=device)
    assert x[1:].const_data_ptr() == x[1:].data_ptr() != x.const_data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(x.storage(), clgrad.FloatStorage)
        assert not isinstance(x.storage(), clgrad.LongStorage)


def test_map(device):
    def run(t, dev):
        a = t.arange(4.0, device=dev)
        a.map_(t.ones(4, device=dev), lambda u, v: u + v + 0.5)
        b = t.arange(4, device=dev)
        b.map_(t.ones(4, dtype=t.int64, device=dev), lambda u, v: u * 2.7)
        c = t.arange(4.0, device=dev)
        c.map2_(t.ones(4, device=dev), t.tensor([2.0], device=dev), lambda u, v, w: u * v * w)
        return a, b, c

    if device == "cpu":
        for got, want in zip(*_both(device, run)):
            _close(got, want)
    else:  # torch's map_ / map2_ take cpu tensors only: TypeError elsewhere (its cuda's)
        with pytest.raises(TypeError, match="only implemented on CPU tensors"):
            run(clgrad, device)
    bad = [
        lambda t, dev: t.arange(4.0, device=dev, requires_grad=True).map_(
            t.ones(4, device=dev), lambda u, v: u
        ),
        lambda t, dev: t.arange(4.0, device=dev).map_(
            t.ones(4, dtype=t.int64, device=dev), lambda u, v: u
        ),
        lambda t, dev: t.arange(4.0, device=dev).map2_(
            t.ones(4, device=dev), t.ones(4, dtype=t.int64, device=dev), lambda u, v, w: u
        ),
    ]
    for fn in bad:
        _raises_like(device, fn)


def test_as_subclass(device):
    class Mine(clgrad.Tensor):
        pass

    class TMine(torch.Tensor):
        pass

    x = clgrad.arange(3.0, device=device, requires_grad=True)
    tx = torch.arange(3.0, requires_grad=True)
    s, ts = x.as_subclass(Mine), tx.as_subclass(TMine)
    assert type(s) is Mine and type(ts) is TMine
    assert s.requires_grad == ts.requires_grad and (s.grad_fn is None) == (ts.grad_fn is None)
    assert s.data_ptr() == x.data_ptr()
    (s * s).sum().backward()
    (ts * ts).sum().backward()
    _close(x.grad, tx.grad)
    plain = clgrad.zeros(2, device=device).as_subclass(Mine)
    plain[0] = 5.0
    assert not plain.requires_grad and isinstance(plain, clgrad.Tensor)
    with pytest.raises(TypeError):
        torch.zeros(2).as_subclass(int)
    with pytest.raises(TypeError):
        clgrad.zeros(2, device=device).as_subclass(int)


# ---- torch.linalg: tensorinv, tensorsolve, ldl_factor(_ex), ldl_solve ----------------------
def _pair(device, array, requires_grad=False):
    dt = str(array.dtype)
    c = clgrad.tensor(array, dtype=getattr(clgrad, dt), device=device)
    t = torch.tensor(array, dtype=getattr(torch, dt))
    return c.requires_grad_(requires_grad), t.requires_grad_(requires_grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tensorinv_tensorsolve(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    tol = 1e-4 if dtype == "float32" else 1e-10
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 6, 8, 3)) + 0).astype(dtype)
    a = (a.reshape(24, 24) + 8 * np.eye(24, dtype=dtype)).reshape(4, 6, 8, 3)
    ca, ta = _pair(device, a, True)
    got = clgrad.linalg.tensorinv(ca.detach().reshape(24, 4, 6), ind=1)
    _close(got, torch.linalg.tensorinv(ta.detach().reshape(24, 4, 6), ind=1), tol, tol)
    b = rng.standard_normal((24, 24)).astype(dtype) + 8 * np.eye(24, dtype=dtype)
    cb, tb = _pair(device, b.reshape(4, 6, 24), True)
    _close(clgrad.linalg.tensorinv(cb, ind=2), torch.linalg.tensorinv(tb, ind=2), tol, tol)
    got, want = clgrad.linalg.tensorinv(ca), torch.linalg.tensorinv(ta)
    _close(got, want, tol, tol)
    (got * got).sum().backward()
    (want * want).sum().backward()
    _close(ca.grad, ta.grad, 1e-3 if dtype == "float32" else 1e-9, tol)
    # tensorsolve, with and without dims
    rhs = rng.standard_normal((4, 6)).astype(dtype)
    cr, tr = _pair(device, rhs, True)
    ca.grad = ta.grad = None
    got, want = clgrad.linalg.tensorsolve(ca, cr), torch.linalg.tensorsolve(ta, tr)
    _close(got, want, tol, tol)
    got.sum().backward()
    want.sum().backward()
    _close(ca.grad, ta.grad, 1e-3 if dtype == "float32" else 1e-9, tol)
    _close(cr.grad, tr.grad, 1e-3 if dtype == "float32" else 1e-9, tol)
    c = (rng.standard_normal((6, 4, 4, 3, 2)) + 0).astype(dtype)
    c = np.moveaxis(
        (np.moveaxis(c, (1, 3), (3, 4)).reshape(24, 24) + 8 * np.eye(24, dtype=dtype)).reshape(
            6, 4, 2, 4, 3
        ),
        (3, 4),
        (1, 3),
    )
    cc, tc = _pair(device, np.ascontiguousarray(c))
    cr2, tr2 = _pair(device, rng.standard_normal((6, 4)).astype(dtype))
    _close(
        clgrad.linalg.tensorsolve(cc, cr2, dims=(1, 3)),
        torch.linalg.tensorsolve(tc, tr2, dims=(1, 3)),
        tol,
        tol,
    )


@pytest.mark.parametrize(
    "bad",
    [
        lambda t, dev: t.linalg.tensorinv(t.ones(4, 6, 8, 3, device=dev), ind=0),
        lambda t, dev: t.linalg.tensorinv(t.ones(4, 6, 8, 3, device=dev), ind=1),
        lambda t, dev: t.linalg.tensorinv(t.zeros(2, 2, 4, device=dev)),  # singular
        lambda t, dev: t.linalg.tensorinv(t.ones(2, 2, 4, dtype=t.int64, device=dev)),
        lambda t, dev: t.linalg.tensorsolve(t.ones(2, 3, 6, device=dev), t.ones(5, device=dev)),
    ],
)
def test_tensorinv_tensorsolve_errors(device, bad):
    _raises_like(device, bad)


def _symmetric_cases(dtype):
    rng = np.random.default_rng(1)
    cases = [np.array([[1.0, 2, 3], [2, 1, 4], [3, 4, 1]]), np.array([[4.0, 2], [2, 3]])]
    for n in (1, 4, 7, 12):
        a = rng.standard_normal((n, n))
        cases.append(a + a.T)  # indefinite: 1 x 1 and 2 x 2 pivots, interchanges
        cases.append(a @ a.T + n * np.eye(n))  # definite: no pivoting
        small = a + a.T
        small[np.diag_indices(n)] *= 0.01  # small diagonal: 2 x 2 blocks
        cases.append(small)
    cases.append(rng.standard_normal((3, 5, 5)))  # a batch; only the lower triangle is read
    return [c.astype(dtype) for c in cases]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldl_factor_solve(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    tol = 1e-4 if dtype == "float32" else 1e-10
    rng = np.random.default_rng(2)
    for a in _symmetric_cases(dtype):
        ca, ta = _pair(device, a)
        got, want = clgrad.linalg.ldl_factor_ex(ca), torch.linalg.ldl_factor_ex(ta)
        # LAPACK sytrf's layout and pivots exactly (torch's)
        np.testing.assert_array_equal(_np(got.pivots), _np(want.pivots))
        assert got.pivots.dtype == clgrad.int32 and got.info.dtype == clgrad.int32
        _close(got.LD, want.LD, tol, tol)
        _close(got.info, want.info)
        LD, piv = clgrad.linalg.ldl_factor(ca, hermitian=True)
        tLD, tpiv = torch.linalg.ldl_factor(ta, hermitian=True)
        _close(LD, tLD, tol, tol)
        b = rng.standard_normal(a.shape[:-1] + (2,)).astype(dtype)
        cb, tb = _pair(device, b)
        x = clgrad.linalg.ldl_solve(LD, piv, cb)
        _close(x, torch.linalg.ldl_solve(tLD, tpiv, tb), 10 * tol, 10 * tol)
        sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)  # the matrix factored
        np.testing.assert_allclose(sym @ _np(x), b, rtol=100 * tol, atol=100 * tol)
    # batch broadcast of the right-hand sides
    a = _symmetric_cases(dtype)[2]
    LD, piv = clgrad.linalg.ldl_factor(_pair(device, a)[0])
    tLD, tpiv = torch.linalg.ldl_factor(_pair(device, a)[1])
    cb, tb = _pair(device, rng.standard_normal((2,) + a.shape[:-1] + (3,)).astype(dtype))
    _close(clgrad.linalg.ldl_solve(LD, piv, cb), torch.linalg.ldl_solve(tLD, tpiv, tb), tol, tol)


def test_ldl_singular_and_not_differentiable(device):
    got = clgrad.linalg.ldl_factor_ex(clgrad.zeros(3, 3, device=device))
    want = torch.linalg.ldl_factor_ex(torch.zeros(3, 3))
    for g, w in zip(got, want):
        _close(g, w)
    for t, dev in ((torch, "cpu"), (clgrad, device)):
        with pytest.raises(RuntimeError):
            t.linalg.ldl_factor(t.zeros(3, 3, device=dev))
        a = t.tensor([[4.0, 2.0], [2.0, 3.0]], device=dev, requires_grad=True)
        LD, piv, _ = t.linalg.ldl_factor_ex(a)
        assert LD.requires_grad and not piv.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex"):
            LD.sum().backward()
        b = t.ones(2, 1, device=dev, requires_grad=True)
        x = t.linalg.ldl_solve(LD.detach(), piv, b)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve"):
            x.sum().backward()


@pytest.mark.parametrize(
    "bad",
    [
        lambda t, dev: t.linalg.ldl_factor(t.zeros(3, 4, device=dev)),
        lambda t, dev: t.linalg.ldl_factor(t.zeros(3, device=dev)),
        lambda t, dev: t.linalg.ldl_factor(t.zeros(3, 3, dtype=t.int64, device=dev)),
        lambda t, dev: t.linalg.ldl_solve(
            *t.linalg.ldl_factor(t.eye(3, device=dev)), t.zeros(4, 2, device=dev)
        ),
        lambda t, dev: t.linalg.ldl_solve(
            *t.linalg.ldl_factor(t.eye(3, device=dev)), t.zeros(3, device=dev)
        ),
        lambda t, dev: t.linalg.ldl_solve(
            *t.linalg.ldl_factor(t.eye(3, device=dev)), t.zeros(3, 1, dtype=t.int64, device=dev)
        ),
    ],
)
def test_ldl_errors(device, bad):
    _raises_like(device, bad)


# ---- nn: NLLLoss2d, CrossMapLRN2d, Container, nn.grad ----------------------------------------
def test_nll_loss_2d(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    target = np.random.default_rng(1).integers(0, 3, (2, 4, 5))
    target[0, 0, 0] = -100
    weight = np.array([0.5, 1.0, 2.0], np.float32)

    def run(t, dev):
        inp = t.tensor(x, device=dev).requires_grad_()
        tgt = t.tensor(target, device=dev)
        w = t.tensor(weight, device=dev)
        with pytest.warns(FutureWarning, match="NLLLoss2d"):
            loss = t.nn.NLLLoss2d(weight=w)(inp.log_softmax(1), tgt)
        loss.backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            none = t.nn.NLLLoss2d(reduction="none")(inp.detach(), tgt)
        return loss, none, inp.grad

    for got, want in zip(*_both(device, run)):
        _close(got, want)
    assert issubclass(clgrad.nn.NLLLoss2d, clgrad.nn.NLLLoss)


@pytest.mark.parametrize("shape, size", [((2, 7, 3, 4), 5), ((1, 3, 2, 2), 3), ((2, 6, 2, 3), 2)])
def test_cross_map_lrn2d(device, shape, size):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    go = np.random.default_rng(3).standard_normal(shape).astype(np.float32)

    def run(t, dev):
        inp = t.tensor(x, device=dev, requires_grad=True)
        out = t.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=2.0)(inp)
        out.backward(t.tensor(go, device=dev))
        return out, inp.grad

    for got, want in zip(*_both(device, run)):
        _close(got, want)
    assert repr(clgrad.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    _raises_like(device, lambda t, dev: t.nn.CrossMapLRN2d(3)(t.ones(2, 3, 4, device=dev)))


def test_container_warns():
    for t in (torch, clgrad):
        with pytest.warns(FutureWarning, match="nn.Container"):
            c = t.nn.Container(a=t.nn.Linear(2, 3), b=t.nn.ReLU())
        assert isinstance(c, t.nn.Module)
        assert [n for n, _ in c.named_children()] == ["a", "b"]
        assert len(list(c.parameters())) == 2
        with pytest.warns(FutureWarning, match="nn.Container"):

            class Sub(t.nn.Container):
                def __init__(self, lib=t):
                    super().__init__()
                    self.lin = lib.nn.Linear(1, 1)

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(list(Sub().parameters())) == 2  # a subclass's instances do not warn


_CONV_CASES = [
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, dilation=1, groups=2)),
    (2, (2, 4, 7, 6), (6, 2, 3, 2), dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    (3, (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(stride=1, padding=(1, 0, 1))),
]


@pytest.mark.parametrize("n, xshape, wshape, kw", _CONV_CASES, ids=["1d", "2d", "3d"])
def test_nn_grad(device, n, xshape, wshape, kw):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(xshape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    out_shape = getattr(torch.nn.functional, f"conv{n}d")(torch.tensor(x), torch.tensor(w), **kw)
    go = rng.standard_normal(tuple(out_shape.shape)).astype(np.float32)

    def run(t, dev):
        wt = t.tensor(w, device=dev, requires_grad=True)
        g = t.tensor(go, device=dev)
        gin = getattr(t.nn.grad, f"conv{n}d_input")(xshape, wt, g, **kw)
        gw = getattr(t.nn.functional.grad, f"conv{n}d_weight")(
            t.tensor(x, device=dev), wshape, g, **kw
        )
        gin.sum().backward()  # differentiable in the weight, as torch's
        return gin, gw, wt.grad

    for got, want in zip(*_both(device, run)):
        _close(got, want, rtol=1e-4, atol=1e-4)
    assert clgrad.nn.functional.grad is clgrad.nn.grad
    _raises_like(
        device,
        lambda t, dev: t.nn.grad.conv1d_input(
            (1, 1, 5), t.ones(1, 1, 2, device=dev), t.ones(1, 1, 3, device=dev)
        ),
    )


# ---- F.multi_head_attention_forward (what nn.MultiheadAttention runs) -------------------------
def _mha_args(lib, device, rng, separate=False, bias_kv=False, kdim=4):
    def t(a, grad=True):
        x = lib.tensor(a.astype(np.float32), **({"device": device} if lib is clgrad else {}))
        return x.requires_grad_(grad)

    e = 4
    args = {
        "query": t(rng.standard_normal((3, 2, e))),
        "key": t(rng.standard_normal((5, 2, kdim))),
        "value": t(rng.standard_normal((5, 2, kdim))),
        "embed_dim_to_check": e,
        "num_heads": 2,
        "in_proj_weight": None if separate else t(rng.standard_normal((3 * e, e))),
        "in_proj_bias": t(rng.standard_normal(3 * e)),
        "bias_k": t(rng.standard_normal((1, 1, e))) if bias_kv else None,
        "bias_v": t(rng.standard_normal((1, 1, e))) if bias_kv else None,
        "add_zero_attn": bias_kv,
        "dropout_p": 0.0,
        "out_proj_weight": t(rng.standard_normal((e, e))),
        "out_proj_bias": t(rng.standard_normal(e)),
    }
    if separate:
        args["use_separate_proj_weight"] = True
        args["q_proj_weight"] = t(rng.standard_normal((e, e)))
        args["k_proj_weight"] = t(rng.standard_normal((e, kdim)))
        args["v_proj_weight"] = t(rng.standard_normal((e, kdim)))
    return args


@pytest.mark.parametrize(
    "case",
    [
        {},
        {"separate": True, "kdim": 3},
        {"bias_kv": True},
        {"mask": "bool", "kpm": True, "average_attn_weights": False},
        {"mask": "float", "need_weights": False},
        {"mask": "causal", "is_causal": True, "need_weights": False},
        {"unbatched": True},
        {"static": True},
    ],
)
def test_multi_head_attention_forward(device, case):
    out = []
    for lib, dev in ((clgrad, device), (torch, "cpu")):
        rng = np.random.default_rng(3)
        args = _mha_args(lib, dev, rng, case.get("separate", False), case.get("bias_kv", False),
                         case.get("kdim", 4))  # fmt: skip
        kw = {
            k: case[k] for k in ("need_weights", "average_attn_weights", "is_causal") if k in case
        }
        mask = case.get("mask")
        if mask == "bool":
            kw["attn_mask"] = lib.tensor(rng.random((3, 5)) < 0.3)
        elif mask == "float":
            kw["attn_mask"] = lib.tensor(rng.standard_normal((4, 3, 5)).astype(np.float32))
        elif mask == "causal":
            kw["attn_mask"] = lib.ones(3, 5, dtype=lib.bool).triu(1)
        if case.get("kpm"):
            kw["key_padding_mask"] = lib.tensor([[False] * 4 + [True], [False] * 5])
        if lib is clgrad:
            kw = {k: v.to(dev) if isinstance(v, clgrad.Tensor) else v for k, v in kw.items()}
        if case.get("unbatched"):
            for name in ("query", "key", "value"):
                args[name] = args[name].detach()[:, 0].requires_grad_()
        if case.get("static"):
            static = rng.standard_normal((4, 6, 2)).astype(np.float32)
            kw["static_k"] = lib.tensor(static).to(dev)
            kw["static_v"] = lib.tensor(static * 2).to(dev)
        o, w = lib.nn.functional.multi_head_attention_forward(**args, **kw)
        (o.sum() + (w.pow(2).sum() if w is not None else 0)).backward()
        grads = [a.grad for a in args.values() if isinstance(a, (clgrad.Tensor, torch.Tensor))]
        out.append((o, w, grads))
    (o, w, grads), (to, tw, tgrads) = out
    _close(o, to, 1e-4, 1e-4)
    assert (w is None) == (tw is None)
    if w is not None:
        _close(w, tw, 1e-4, 1e-4)
    for g, tg in zip(grads, tgrads):
        assert (g is None) == (tg is None)
        if g is not None:
            _close(g, tg, 1e-3, 1e-4)


def test_multihead_attention_module_runs_the_functional(device):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(4, 2, batch_first=True, kdim=3, vdim=3)
    m = clgrad.nn.MultiheadAttention(4, 2, batch_first=True, kdim=3, vdim=3, device=device)
    m.load_state_dict({k: clgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(4)
    q, kv = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 3))
    o, w = m(*(clgrad.tensor(a, dtype=clgrad.float32, device=device) for a in (q, kv, kv)))
    to, tw = tm(*(torch.tensor(a, dtype=torch.float32) for a in (q, kv, kv)))
    _close(o, to, 1e-4, 1e-4)
    _close(w, tw, 1e-4, 1e-4)


@pytest.mark.parametrize(
    "change",
    [
        {"embed_dim_to_check": 8},
        {"is_causal": True},
        {"attn_mask": "bad2d"},
        {"query": "4d"},
        {"bias_k_only": True},
    ],
)
def test_multi_head_attention_forward_errors(device, change):
    def run(lib, dev):
        args = _mha_args(lib, dev, np.random.default_rng(5))
        for k, v in change.items():
            if v == "bad2d":
                args[k] = lib.zeros(2, 2, device=dev)
            elif v == "4d":
                args[k] = lib.zeros(1, 3, 2, 4, device=dev)
            elif k == "bias_k_only":
                args["bias_k"] = lib.zeros(1, 1, 4, device=dev)
            else:
                args[k] = v
        lib.nn.functional.multi_head_attention_forward(**args)

    _raises_like(device, run)


@pytest.mark.parametrize("case", ["source", "nonleaf", "storage", "no_grad"])
def test_set_autograd(device, case):
    """set_ has no derivative in torch: a result with a history gets its NotImplemented node."""

    def run(t, dev):
        a = t.arange(3.0, device=dev, requires_grad=True) * 1
        b = t.zeros(3, device=dev)
        if case == "source":
            b.set_(a)
        elif case == "nonleaf":
            b = t.arange(3.0, device=dev, requires_grad=True) * 2
            b.set_(t.ones(3, device=dev))
        elif case == "storage":
            b.set_(a, 1, (2,))
        else:
            with t.no_grad():
                b.set_(a)
        name = type(b.grad_fn).__name__ if b.grad_fn is not None else None
        return b.requires_grad, name

    assert run(clgrad, device) == run(torch, "cpu")
    if case in ("source", "nonleaf"):
        _raises_like(device, lambda t, dev: _set_backward(t, dev, case))


def _set_backward(t, dev, case):
    x = t.arange(3.0, device=dev, requires_grad=True)
    b = t.zeros(3, device=dev) if case == "source" else x * 2
    b.set_(x * 1 if case == "source" else t.ones(3, device=dev))
    b.sum().backward()
