"""PyTorch's OpInfo variants (in-place, method, ``out=``, second-order gradients) where clgrad
differed, each case run with torch and with clgrad on every test device: the same values,
shapes, dtypes, version counters, warnings and gradients, or the same exception class.

Found by running OpInfo's sample inputs through each variant: an in-place op whose gradient
saved the tensor it overwrote (``div_(..., rounding_mode="trunc")``, ``scatter_reduce_`` with
prod/amin/amax, ``index_reduce_``, ``logit_(eps)``); in-place view ops and ``resize_`` that
did not count as writes; linalg and quantile ``out=`` written by ``copy_`` (no resize, no
dtype rule); ops without ``out=`` (frexp, cholesky_solve, cholesky_inverse, conj_physical);
cumsum/cumprod not computing in out's dtype; factories warning where PyTorch resizes
silently; second derivatives that were wrong (i0/i1 at 0, remainder's).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import clgrad

A = np.array([[0.3, -1.2, 2.5], [1.7, 0.0, -0.4]], dtype=np.float64)
B = np.array([[1.1, 0.7, -2.0], [0.6, -1.3, 0.9]], dtype=np.float64)
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=np.float64)


def _tensor(lib, device, values, dtype=None, requires_grad=False):
    dtype = dtype or lib.float64
    t = (
        lib.tensor(values, dtype=dtype)
        if device is None
        else lib.tensor(values, dtype=dtype, device=device)
    )
    return t.requires_grad_(requires_grad)


def _values(x):
    if isinstance(x, (tuple, list)):
        return [_values(v) for v in x]
    if hasattr(x, "detach"):
        return (x.detach().cpu().numpy(), str(x.dtype).split(".")[-1], tuple(x.shape))
    return x


def _run(lib, device, case):
    """(result, error class, resize-warning count) of ``case`` run with ``lib``."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result, error = _values(case(lib, device)), None
        except Exception as e:  # the class is what is compared
            result, error = None, type(e).__name__
    resized = sum("resized" in str(w.message) for w in seen)
    return result, error, resized


def _assert_same(expected, actual):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            _assert_same(e, a)
    elif isinstance(expected, tuple):
        (ev, edt, es), (av, adt, as_) = expected, actual
        assert (adt, as_) == (edt, es)
        np.testing.assert_allclose(av, ev, rtol=1e-9, atol=1e-12)
    else:
        assert actual == expected


def _grads_after(method_call):
    """Gradients of a weighted sum of ``method_call(lib, x)`` (an in-place op on a non-leaf
    copy of a leaf ``x``) w.r.t. that leaf, with the copy's version counter."""

    def case(lib, device):
        leaf = _tensor(lib, device, A, requires_grad=True)
        x = leaf * 1
        before = x._version
        y = method_call(lib, device, x)
        (g,) = lib.autograd.grad((y * _tensor(lib, device, B)).sum(), [leaf])
        return [y, g, x._version - before]

    return case


def _gradgrad(fn, values=A):
    """The gradient of the (weighted) first gradient of ``fn(x).sum()``, w.r.t. ``x``."""

    def case(lib, device):
        x = _tensor(lib, device, values, requires_grad=True)
        (g,) = lib.autograd.grad(fn(lib, x).sum(), [x], create_graph=True)
        (gg,) = lib.autograd.grad((g * _tensor(lib, device, B)).sum(), [x])
        return [g, gg]

    return case


def _out(fn, shape, dtype="float64"):
    """``fn(lib, device, out)`` with an ``out`` of ``shape`` (zeros) and ``dtype``; out after."""

    def case(lib, device):
        out = _tensor(lib, device, np.zeros(shape), dtype=getattr(lib, dtype))
        returned = fn(lib, device, out)
        return [out, returned is out]

    return case


def _spd(lib, device):
    return _tensor(lib, device, SPD)


def _chol(lib, device):
    return lib.linalg.cholesky(_spd(lib, device))


ZERO_AND_MORE = np.array([[0.0, 0.5, -1.5], [2.0, -3.0, 25.0]])

CASES = {
    # in place on a non-leaf: a gradient that saved the overwritten tensor must not see the write
    "div_-trunc": _grads_after(
        lambda lib, d, x: x.div_(_tensor(lib, d, B, requires_grad=True), rounding_mode="trunc")
    ),
    "div_-floor": _grads_after(
        lambda lib, d, x: x.div_(_tensor(lib, d, B, requires_grad=True), rounding_mode="floor")
    ),
    "scatter_reduce_-prod": _grads_after(
        lambda lib, d, x: x.scatter_reduce_(
            1, _tensor(lib, d, [[0, 0, 2], [1, 1, 0]], dtype=lib.int64), _tensor(lib, d, B), "prod"
        )
    ),
    "scatter_reduce_-amin": _grads_after(
        lambda lib, d, x: x.scatter_reduce_(
            0, _tensor(lib, d, [[1, 0, 1]], dtype=lib.int64), _tensor(lib, d, B[:1]), "amin"
        )
    ),
    "index_reduce_-amax": _grads_after(
        lambda lib, d, x: x.index_reduce_(
            0, _tensor(lib, d, [1, 1], dtype=lib.int64), _tensor(lib, d, B), "amax"
        )
    ),
    "logit_-eps": _grads_after(lambda lib, d, x: x.logit_(0.3)),
    # in-place view ops and resize_ are writes: the version counter moves
    "t_-version": _grads_after(lambda lib, d, x: x.t_().t_()),
    "unsqueeze_-squeeze_-version": _grads_after(lambda lib, d, x: x.unsqueeze_(0).squeeze_(0)),
    "transpose_-version": _grads_after(lambda lib, d, x: x.transpose_(0, 1).transpose_(1, 0)),
    "resize_-version": lambda lib, d: [
        (lambda x: [x.resize_(2, 3)._version, x.resize_(3, 2)._version])(_tensor(lib, d, A))
    ],
    "conj_physical_-version": lambda lib, d: (lambda x: [x.conj_physical_() is x, x._version])(
        _tensor(lib, d, A)
    ),
    "conj_physical_-leaf": lambda lib, d: _tensor(lib, d, A, requires_grad=True).conj_physical_(),
    # second derivatives
    "i0-gradgrad": _gradgrad(lambda lib, x: lib.i0(x), ZERO_AND_MORE),
    "i1-gradgrad": _gradgrad(lambda lib, x: lib.special.i1(x), ZERO_AND_MORE),
    "i0e-gradgrad": _gradgrad(lambda lib, x: lib.special.i0e(x), ZERO_AND_MORE),
    "i1e-gradgrad": _gradgrad(lambda lib, x: lib.special.i1e(x), ZERO_AND_MORE),
    "erfinv-gradgrad": _gradgrad(lambda lib, x: lib.erfinv(x), np.tanh(A)),
    "qr-wide-gradgrad": lambda lib, d: (
        lambda a: (lambda g: [g, lib.autograd.grad((g * g).sum(), [a])])(
            lib.autograd.grad(
                sum((t * _tensor(lib, d, np.ones(t.shape))).sum() for t in lib.linalg.qr(a)),
                [a],
                create_graph=True,
            )[0]
        )
    )(_tensor(lib, d, A, requires_grad=True)),  # 2 x 3: wide
    "remainder-gradgrad": lambda lib, d: (
        lambda x, y: [
            lib.autograd.grad(
                lib.autograd.grad(lib.remainder(x, y).sum(), [x, y], create_graph=True)[1].sum(),
                [x, y],
                allow_unused=True,
            )
        ]
    )(_tensor(lib, d, A, requires_grad=True), _tensor(lib, d, B, requires_grad=True)),
    # out=: resized (with or without PyTorch's warning), dtype rules, returned
    "cholesky-out-empty": _out(lambda lib, d, o: lib.cholesky(_spd(lib, d), out=o), (0,)),
    "cholesky-out-wrong": _out(lambda lib, d, o: lib.cholesky(_spd(lib, d), out=o), (2,)),
    "cholesky-out-int": _out(lambda lib, d, o: lib.cholesky(_spd(lib, d), out=o), (3, 3), "int64"),
    "inverse-out-wrong": _out(lambda lib, d, o: lib.inverse(_spd(lib, d), out=o), (4,)),
    "cholesky-out-requires-grad": lambda lib, d: lib.cholesky(
        _spd(lib, d).requires_grad_(), out=_tensor(lib, d, np.zeros((3, 3)))
    ),
    "cholesky_solve-out": _out(
        lambda lib, d, o: lib.cholesky_solve(_tensor(lib, d, B.T), _chol(lib, d), out=o), (0,)
    ),
    "cholesky_inverse-out": _out(
        lambda lib, d, o: lib.cholesky_inverse(_chol(lib, d), out=o), (5,)
    ),
    "quantile-out-wrong": _out(
        lambda lib, d, o: lib.quantile(_tensor(lib, d, A), 0.3, out=o), (3,)
    ),
    "quantile-out-int": _out(
        lambda lib, d, o: lib.quantile(_tensor(lib, d, A), 0.3, out=o), (), "int64"
    ),
    "nanquantile-out-float32": _out(
        lambda lib, d, o: lib.nanquantile(_tensor(lib, d, A), 0.3, dim=1, out=o), (2,), "float32"
    ),
    "frexp-out": lambda lib, d: (lambda m, e: [lib.frexp(_tensor(lib, d, A), out=(m, e)), m, e])(
        _tensor(lib, d, [0.0]), _tensor(lib, d, np.zeros(6), dtype=lib.int32)
    ),
    "frexp-out-int64-exponent": lambda lib, d: lib.frexp(
        _tensor(lib, d, A),
        out=(_tensor(lib, d, A), _tensor(lib, d, np.zeros((2, 3)), dtype=lib.int64)),
    ),
    "conj_physical-out": _out(lambda lib, d, o: lib.conj_physical(_tensor(lib, d, A), out=o), (0,)),
    "polygamma-out": _out(lambda lib, d, o: lib.polygamma(1, _tensor(lib, d, A + 3), out=o), (0,)),
    "igamma-out-int": _out(
        lambda lib, d, o: lib.igamma(_tensor(lib, d, A + 3), _tensor(lib, d, B + 3), out=o),
        (2, 3),
        "int64",
    ),
    "mvlgamma-out": _out(lambda lib, d, o: lib.mvlgamma(_tensor(lib, d, A + 3), 2, out=o), (3,)),
    "mode-out": lambda lib, d: (
        lambda v, i: [
            lib.mode(_tensor(lib, d, [[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]]), 1, out=(v, i)),
            v,
            i,
        ]
    )(_tensor(lib, d, [0.0]), _tensor(lib, d, [0], dtype=lib.int64)),
    "searchsorted-out": _out(
        lambda lib, d, o: lib.searchsorted(
            _tensor(lib, d, [0.0, 1.0, 2.0]), _tensor(lib, d, A), out=o
        ),
        (0,),
        "int64",
    ),
    "bucketize-out": _out(
        lambda lib, d, o: lib.bucketize(_tensor(lib, d, A), _tensor(lib, d, [0.0, 1.0]), out=o),
        (0,),
        "int64",
    ),
    "qr-legacy-out": lambda lib, d: (lambda q, r: [lib.qr(_tensor(lib, d, SPD), out=(q, r)), q, r])(
        _tensor(lib, d, [0.0]), _tensor(lib, d, np.zeros((2, 2)))
    ),
    "triangular_solve-out": lambda lib, d: (
        lambda x, c: [lib.triangular_solve(_tensor(lib, d, B.T), _chol(lib, d), out=(x, c)), x, c]
    )(_tensor(lib, d, [0.0]), _tensor(lib, d, [0.0])),
    "narrow_copy-out-resized-silently": _out(
        lambda lib, d, o: lib.narrow_copy(_tensor(lib, d, A), 1, 1, 2, out=o), (5,)
    ),
    "addbmm-out-resized-silently": _out(
        lambda lib, d, o: lib.addbmm(
            _tensor(lib, d, A[:, :2]), _tensor(lib, d, [A]), _tensor(lib, d, [B.T]), out=o
        ),
        (5,),
    ),
    "combinations-empty-requires-grad": lambda lib, d: (
        lambda x: (lambda c: [c, c.requires_grad, lib.autograd.grad(c.sum(), [x])])(
            lib.combinations(x, r=2)
        )
    )(_tensor(lib, d, [1.5], requires_grad=True)),
    "digamma_-int": lambda lib, d: _tensor(lib, d, [1, 2], dtype=lib.int64).digamma_(),
    "polygamma_-int": lambda lib, d: _tensor(lib, d, [1, 2], dtype=lib.int64).polygamma_(1),
    "mvlgamma_-int": lambda lib, d: _tensor(lib, d, [3, 4], dtype=lib.int64).mvlgamma_(2),
    "ldexp_-int": lambda lib, d: _tensor(lib, d, [3, 4], dtype=lib.int64).ldexp_(
        _tensor(lib, d, [1, 2], dtype=lib.int64)
    ),
    "polygamma_-grad": _grads_after(lambda lib, d, x: x.sigmoid_().add_(1).polygamma_(2)),
    "add-tuple-out": lambda lib, d: lib.add(
        _tensor(lib, d, A), 1.0, out=(_tensor(lib, d, np.zeros((2, 3))),)
    ),
    "nonzero-tuple-out": lambda lib, d: lib.nonzero(
        _tensor(lib, d, A), out=(_tensor(lib, d, [0], dtype=lib.int64),)
    ),
    "__rdiv__": lambda lib, d: _tensor(lib, d, A).__rdiv__(2.0),
    "cumsum-int-out": _out(
        lambda lib, d, o: lib.cumsum(_tensor(lib, d, A * 3), 1, out=o), (2, 3), "int64"
    ),
    "cumprod-int-out": _out(
        lambda lib, d, o: lib.cumprod(_tensor(lib, d, A * 3), 0, out=o), (0,), "int64"
    ),
    "cumsum-out-dtype-differs": _out(
        lambda lib, d, o: lib.cumsum(_tensor(lib, d, A), 1, dtype=lib.float64, out=o),
        (2, 3),
        "float32",
    ),
    "zeros-out-resized-silently": _out(lambda lib, d, o: lib.zeros(2, 2, out=o), (3,)),
    "linspace-out-resized-silently": _out(lambda lib, d, o: lib.linspace(0, 1, 5, out=o), (3,)),
    "arange-out-resized-warns": _out(lambda lib, d, o: lib.arange(5.0, out=o), (3,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_variant_matches_torch(name, device):
    if device != "cpu" and not clgrad.device(device).supports(clgrad.float64):
        pytest.skip("the cases compute in float64, which this device lacks")
    expected = _run(torch, None, lambda lib, _d: CASES[name](lib, None))
    actual = _run(clgrad, device, CASES[name])
    assert actual[1] == expected[1], (actual[1], expected[1])
    assert actual[2] == expected[2], f"resize warnings: {actual[2]} vs torch {expected[2]}"
    _assert_same(expected[0], actual[0])


def test_matrix_exp_half(device):
    """``linalg.matrix_exp`` takes float16, as PyTorch's does (clgrad refused it); compared
    with torch's float32 result rounded to half, since torch's own half kernel overflows to
    inf/NaN already for a matrix of 1-norm ~2 (a torch bug the OpInfo method run showed)."""
    a = (np.random.RandomState(0).randn(2, 3, 3) * 0.5).astype(np.float16)
    expected = torch.linalg.matrix_exp(torch.tensor(a).float()).half().numpy()
    actual = clgrad.linalg.matrix_exp(clgrad.tensor(a, device=device))
    assert actual.dtype is clgrad.float16
    np.testing.assert_allclose(actual.cpu().numpy(), expected, rtol=2e-3, atol=2e-3)
