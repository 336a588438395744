"""PyTorch's calling conventions on clgrad's functions, against torch: ``out=`` (resize,
casting, autograd), NumPy's ``axis=``/``keepdims=``, the shift operators, the aliases, the
bool-valued comparisons and the reductions built on the declared ones."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch_helper import Input, compare

import clgrad


def _both(fn):
    """fn(torch) and fn(clgrad): (value or exception class, warning classes)."""
    out = []
    for lib in (torch, clgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = fn(lib)
            except Exception as e:  # the class is the result compared
                r = type(e)
        out.append((r, [x.category for x in w]))
    return out


@pytest.mark.parametrize(
    "out_shape, out_dtype",
    [((2, 3), "float32"), ((0,), "float32"), ((5,), "float32"), ((2, 3), "int64"),
     ((2, 3), "float64")],
)  # fmt: skip
def test_out_rules(out_shape, out_dtype):
    def fn(t):
        out = t.ones(out_shape, dtype=getattr(t, out_dtype))
        r = t.add(t.ones(2, 3), t.arange(3), out=out)
        assert r is out
        return r.tolist(), str(r.dtype).rpartition(".")[2]

    (want, w_warn), (got, g_warn) = _both(fn)
    assert got == want and g_warn == w_warn


@pytest.mark.parametrize(
    "call",
    [
        lambda t, o: t.sum(t.ones(2, 3), 0, out=o),
        lambda t, o: t.matmul(t.ones(2, 3), t.ones(3, 2), out=o),
        lambda t, o: t.cat([t.ones(2), t.zeros(2)], out=o),
        lambda t, o: t.clamp(t.arange(4.0), 1, 2, out=o),
        lambda t, o: t.mean(t.ones(2, 3), 1, out=o),
        lambda t, o: t.arcsin(t.zeros(3), out=o),
    ],
)
def test_out_forms(call):
    def fn(t):
        out = t.empty(0)
        assert call(t, out) is out
        return out.tolist()

    (want, _), (got, _) = _both(fn)
    assert got == want


def test_out_refuses_autograd():
    def fn(t):
        return t.mul(t.ones(2, requires_grad=True), 2, out=t.empty(2))

    (want, _), (got, _) = _both(fn)
    assert want is RuntimeError and got is RuntimeError
    with clgrad.no_grad():
        assert clgrad.mul(clgrad.ones(2, requires_grad=True), 2, out=clgrad.empty(2)).tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda t, x: t.sum(x, axis=0, keepdims=True),
        lambda t, x: x.amax(axis=1),
        lambda t, x: x.mean(axis=1, keepdims=True),
        lambda t, x: t.softmax(x, axis=0),
        lambda t, x: t.std(x, axis=1),
        lambda t, x: t.var(x, False),
        lambda t, x: t.var(x, 1, correction=0),
        lambda t, x: t.std_mean(x, 0),
        lambda t, x: t.aminmax(x, dim=1, keepdim=True),
        lambda t, x: t.count_nonzero(x > 0, dim=0),
        lambda t, x: t.norm(x),
        lambda t, x: x.norm(p=1, dim=1),
        lambda t, x: t.norm(x, float("inf"), dim=0),
        lambda t, x: t.isclose(x, x + 1e-6),
        lambda t, x: t.allclose(x, x * 1.1),
        lambda t, x: t.equal(x, x.double()),
        lambda t, x: t.float_power(x, 2),
        lambda t, x: t.fix(x),
        lambda t, x: x.arctan2(x + 1),
    ],
)
def test_conventions(call):
    compare(call, Input((3, 4)), grad=False)


@pytest.mark.parametrize(
    "call",
    [
        lambda x, y: x << y,
        lambda x, y: x >> y,
        lambda x, y: 3 << y,
        lambda x, y: 300 >> y,
        lambda x, y: x.__ilshift__(y),
        lambda x, y: x.__irshift__(y),
    ],
)
def test_shift_operators(call):
    compare(call, Input((2, 3), "int32", -100, 100), Input((3,), "int32", -2, 40), grad=False)


def test_torch_errors():
    for fn in (
        lambda t: t.isclose(t.ones(2), t.ones(2).double()),
        lambda t: t.positive(t.ones(2).bool()),
        lambda t: t.ones(2).float_power_(2),
        lambda t: t.var(t.ones(2, dtype=t.int64)),
        lambda t: t.ones(2) << 1,
    ):
        (want, _), (got, _) = _both(fn)
        assert isinstance(want, type) and issubclass(got, want), (got, want)
