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


def test_out_tuples():
    """A decomposition's out= takes a tuple of tensors and returns it as its named tuple."""

    def fn(t):
        q, r = t.empty(0), t.empty(0)
        got = t.linalg.qr(t.tensor([[2.0, 0.0], [0.0, 3.0]]), out=(q, r))
        assert got[0] is q and got.R is r
        return [q.abs().tolist(), r.abs().tolist()]

    (want, _), (got, _) = _both(fn)
    assert got == want


def _same_outcome(want, got):
    """The two libraries' results alike: the same exception class, or the same dtype and shape
    and values within float32 rounding."""
    if isinstance(want, type) or isinstance(got, type):
        assert got is want, (want, got)
        return
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    assert tuple(got.shape) == tuple(want.shape)
    assert got.flatten().tolist() == pytest.approx(want.flatten().tolist(), rel=1e-5)


_OUT_CALLS = [
    lambda t, o: t.zeros(2, 3, out=o),
    lambda t, o: t.ones((2,), out=o),
    lambda t, o: t.full((2,), 2.5, out=o),
    lambda t, o: t.empty(3, out=o).zero_(),
    lambda t, o: t.arange(4, out=o),
    lambda t, o: t.arange(1.0, 2.0, 0.25, out=o),
    lambda t, o: t.range(0, 3, out=o),
    lambda t, o: t.linspace(0, 5, 4, out=o),
    lambda t, o: t.logspace(0, 2, 3, out=o),
    lambda t, o: t.eye(2, 3, out=o),
    lambda t, o: t.randperm(4, out=o).sort()[0],
    lambda t, o: t.randint(3, 4, (5,), out=o),
    lambda t, o: t.rand(6, out=o).lt(1),
    lambda t, o: t.randn(6, out=o).isfinite(),
    lambda t, o: t.zeros(2, dtype=t.float32, out=o),  # a dtype unlike out's: RuntimeError
    lambda t, o: t.softmax(t.tensor([1.0, 2.0]), 0, out=o),  # only into its own dtype
    lambda t, o: t.log_softmax(t.tensor([1.0, 2.0]), 0, out=o),
    lambda t, o: t.histc(t.tensor([1.0, 2.0, 2.5]), 3, out=o),
    lambda t, o: t.isin(t.tensor([1, 2]), t.tensor([2]), out=o),
    lambda t, o: t.multinomial(t.tensor([0.0, 1.0]), 1, out=o),
    lambda t, o: t.lgamma(t.tensor([1.5, 3.0]), out=o),
    lambda t, o: t.digamma(t.tensor([1.5, 3.0]), out=o),
    lambda t, o: t.erfinv(t.tensor([0.5, 0.0]), out=o),
    lambda t, o: t.i0(t.tensor([0.5, 1.0]), out=o),
    lambda t, o: t.gcd(t.tensor([4, 6]), t.tensor([6, 4]), out=o),
    lambda t, o: t.lcm(t.tensor([4, 6]), t.tensor([6, 4]), out=o),
    lambda t, o: t.ldexp(t.tensor([1.0, 2.0]), t.tensor([2, 3]), out=o),
    lambda t, o: t.inner(t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0]), out=o),
    lambda t, o: t.addr(t.zeros(2, 2), t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0]), out=o),
    lambda t, o: t.matrix_power(t.tensor([[1.0, 1.0], [0.0, 1.0]]), 3, out=o),
    lambda t, o: t.chain_matmul(t.eye(2), t.ones(2, 2), out=o),
    lambda t, o: t.renorm(t.ones(2, 2), 2, 0, 1.0, out=o),
    lambda t, o: t.narrow_copy(t.arange(5.0), 0, 1, 2, out=o),
    lambda t, o: t.slice_scatter(t.zeros(4), t.ones(2), 0, 1, 3, out=o),
    lambda t, o: t.concatenate([t.ones(2), t.zeros(1)], out=o),  # cat's TypeError into int64
    lambda t, o: t.stack([t.ones(2)], out=o),
    lambda t, o: t.bernoulli(t.ones(3), out=o),
    lambda t, o: t.linalg.vector_norm(t.tensor([3.0, 4.0]), out=o),
    lambda t, o: t.linalg.matrix_norm(t.eye(2), out=o),
    lambda t, o: t.linalg.inv(2 * t.eye(2), out=o),
    lambda t, o: t.linalg.det(2 * t.eye(2), out=o),
    lambda t, o: t.linalg.matmul(t.eye(2), t.ones(2, 2), out=o),
    lambda t, o: t.special.ndtr(t.tensor([0.0, 1.0]), out=o),
    lambda t, o: t.special.entr(t.tensor([0.5, 1.0]), out=o),
    lambda t, o: t.special.i1(t.tensor([0.5, 1.0]), out=o),
]


@pytest.mark.parametrize("call", _OUT_CALLS)
@pytest.mark.parametrize("out_dtype", ["float32", "int64"])
def test_out_where_pytorch_takes_it(call, out_dtype):
    """out= on the factories, the random draws and the other functions that take one:
    values in out's dtype, out resized, and PyTorch's exception where it raises."""

    def fn(t):
        out = t.empty(0, dtype=getattr(t, out_dtype))
        r = call(t, out)
        if isinstance(r, t.Tensor) and r.data_ptr() == out.data_ptr():
            assert r is out
        return r

    (want, _), (got, _) = _both(fn)
    if isinstance(want, type):  # the class, or a subclass of it (NotImplementedError)
        assert isinstance(got, type) and issubclass(got, want), (got, want)
    else:
        _same_outcome(want, got)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, o: t.relu(t.ones(2), out=o),
        lambda t, o: t.selu(t.ones(2), out=o),
        lambda t, o: t.celu(t.ones(2), out=o),
        lambda t, o: t.isnan(t.ones(2), out=o),
        lambda t, o: t.isinf(t.ones(2), out=o),
        lambda t, o: t.isfinite(t.ones(2), out=o),
        lambda t, o: t.flip(t.ones(2), [0], out=o),
        lambda t, o: t.roll(t.ones(2), 1, out=o),
        lambda t, o: t.rot90(t.ones(2, 2), out=o),
        lambda t, o: t.trace(t.ones(2, 2), out=o),
        lambda t, o: t.diagonal(t.ones(2, 2), out=o),
        lambda t, o: t.diagflat(t.ones(2), out=o),
        lambda t, o: t.einsum("i,i", t.ones(2), t.ones(2), out=o),
        lambda t, o: t.masked_fill(t.ones(2), t.ones(2).bool(), 0.0, out=o),
        lambda t, o: t.index_fill(t.ones(2), 0, t.tensor([0]), 0.0, out=o),
        lambda t, o: t.linalg.diagonal(t.ones(2, 2), out=o),
        lambda t, o: t.special.softmax(t.ones(2), 0, out=o),
    ],
)
def test_no_out_where_pytorch_has_none(call):
    """TypeError, as PyTorch's argument parser raises it, where its function has no out=."""
    (want, _), (got, _) = _both(lambda t: call(t, t.empty(0)))
    assert want is TypeError and got is TypeError


@pytest.mark.parametrize(
    "call",
    [
        # an op that reads its inputs while it writes out: any overlap is refused
        lambda t, x: t.cat([x[0]], out=x[0]),
        lambda t, x: t.cat([x[0]], out=x.view(-1)[2:6]),
        lambda t, x: t.cat([x[0]], out=x[1]),  # elsewhere in the same storage: fine
        lambda t, x: t.stack([x[0], x[1]], out=x[1:3]),
        lambda t, x: t.hstack([x[0]], out=x.view(-1)[2:6]),
        lambda t, x: t.vstack([x[0]], out=x[:1]),
        lambda t, x: t.dstack([x[0]], out=x[0].view(1, 4, 1)),
        lambda t, x: t.column_stack([x[0]], out=x.view(-1)[2:6].view(4, 1)),
        lambda t, x: t.index_select(x[0], 0, t.tensor([0, 1]), out=x[0, :2]),
        lambda t, x: t.gather(x[0], 0, t.tensor([0, 1]), out=x[0, 1:3]),
        lambda t, x: t.take_along_dim(x[0], t.tensor([0, 1]), 0, out=x[0, :2]),
        lambda t, x: t.masked_select(x[0], x[0] < 2, out=x[0, 1:3]),
        lambda t, x: t.take(x[0], t.tensor([0, 1]), out=x[0, :2]),
        lambda t, x: t.index_add(x[0], 0, t.tensor([0, 1]), x[1, :2], out=x[0]),  # fine
        lambda t, x: t.diff(x[0], out=x[0, :3]),
        lambda t, x: t.kron(x[0, :2], x[0, :2], out=x[0]),
        # elementwise, or computed from a copy of the input: only a partial overlap is refused
        lambda t, x: t.index_copy(x[0], 0, t.tensor([0, 1]), x[1, :2], out=x[0]),
        lambda t, x: t.index_copy(x[0].clone(), 0, t.tensor([0, 1]), x[0, :2], out=x[0]),
        lambda t, x: t.index_copy(x[0, :3], 0, t.tensor([0, 1]), x[1, :2], out=x[0, 1:4]),
        lambda t, x: t.scatter(x[0, :3], 0, t.tensor([0, 1]), x[1, :2], out=x[0, 1:4]),
        lambda t, x: t.scatter_add(x[0], 0, t.tensor([0, 1]), x[1, :2], out=x[0]),
        lambda t, x: t.addcmul(x[0], x[1], x[2], out=x[0]),
        lambda t, x: t.addcmul(x[0, :3], x[1, :3], x[2, :3], out=x[0, 1:4]),
        lambda t, x: t.addcdiv(x[0, :3], x[1, :3], x[2, :3] + 1, out=x[0, 1:4]),
        lambda t, x: t.nan_to_num(x[0, :3], out=x[0, 1:4]),
        lambda t, x: t.cumsum(x[0], 0, out=x[0]),
        lambda t, x: t.cumsum(x[0, :3], 0, out=x[0, 1:4]),
        lambda t, x: t.sort(x[0, :3], out=(x[0, 1:4], t.empty(3, dtype=t.int64)))[0],
        lambda t, x: t.clip(x[0, :3], 0, 5, out=x[0, 1:4]),
        lambda t, x: t.index_add(x[0], 0, t.tensor([0, 1]), x[0, 2:], out=x[0]),
        lambda t, x: t.square(x[0, :3], out=x[0, 1:4]),
        lambda t, x: t.true_divide(x[0], x[1], out=x[0]),
    ],
)
def test_out_over_an_input(call):
    """PyTorch's refusal of an out= over an input's memory, op by op: values where it takes
    the call, its RuntimeError (and nothing written) where it refuses."""

    def fn(t):
        x = t.arange(12.0).reshape(3, 4)
        try:
            call(t, x)
        except RuntimeError:
            assert x.tolist() == t.arange(12.0).reshape(3, 4).tolist()  # nothing written
            raise
        return x

    (want, _), (got, _) = _both(fn)
    _same_outcome(want, got)


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
