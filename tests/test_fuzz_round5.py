"""Differences from torch that the differential fuzzer's fifth round found (seeds 70000+),
each checked against torch on every device."""

import numpy as np
import pytest
from test_fuzz_families import both


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["bool", "float32", "int64"])
@pytest.mark.parametrize(
    "shape, dim", [((0, 3), 0), ((2, 3), 5), ((2, 3), -4), ((), 0), ((2, 0), 1), ((2, 3), 1)]
)
def test_median_checks_in_atens_order(device, fn, dtype, shape, dim):
    """The dim (IndexError), an empty reduction dim (IndexError naming median() for nanmedian
    too), then the dtype (bool: NotImplementedError)."""

    def case(lib, dev):
        return getattr(lib.zeros(shape, dtype=getattr(lib, dtype), device=dev), fn)(dim)

    both(device, case)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("fn", ["cdist", "pdist"])
def test_distance_gradients_with_ties_and_equal_coordinates(device, p, fn):
    """PyTorch's _cdist_backward: a zero distance passes no gradient, p < 1 none through an
    equal coordinate (NaN before), p = inf all of it to every coordinate tied at the largest
    difference (split among them before)."""
    a = np.array([[1.0, 0.0, 2.0], [2.0, 1.0, 2.0], [1.0, 0.0, 2.0], [0.0, 1.0, 1.0]], np.float32)
    b = np.array([[1.0, 0.0, 1.0], [2.5, 1.0, 2.0]], np.float32)

    def case(lib, dev):
        x = lib.tensor(a, device=dev, requires_grad=True)
        y = lib.tensor(b, device=dev, requires_grad=True)
        d = lib.cdist(x, y, p=p) if fn == "cdist" else lib.pdist(x, p)
        w = lib.arange(1.0, d.numel() + 1, device=dev).reshape(d.shape)
        (d * w).sum().backward()
        return [d, x.grad] + ([y.grad] if fn == "cdist" else [])

    both(device, case)


def test_cdist_saves_its_result(device):
    """Writing into cdist's result before backward fails it, as PyTorch's (which saves it)."""

    def case(lib, dev):
        x = lib.tensor([[1.0, 2.0]], device=dev, requires_grad=True)
        d = lib.cdist(x, lib.tensor([[0.0, 0.0]], device=dev))
        d.mul_(2)
        d.sum().backward()

    both(device, case)


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(3, 0), (0,), (2, 3), ()])
def test_softmax_of_an_empty_tensor_takes_any_dtype(device, dtype, fn, shape):
    """ATen's kernel refuses integer and bool inputs, but never runs on an empty one: that
    comes back empty, of its own dtype."""

    def case(lib, dev):
        return getattr(lib.zeros(shape, dtype=getattr(lib, dtype), device=dev), fn)(0)

    both(device, case)


@pytest.mark.parametrize("n", [None, 0, 1, 2, 3])
@pytest.mark.parametrize("rows", [0, 1, 2])
def test_vander_records_as_torch(device, n, rows):
    """N <= 1 gives ATen's ones or empty columns, outside x's graph; more columns are powers
    of x, in it (an empty x too)."""

    def case(lib, dev):
        x = lib.tensor([1.5, 2.0], device=dev, requires_grad=True)[:rows]
        v = lib.vander(x, N=n)
        return [v, v.requires_grad]

    both(device, case)


_REFLECTED = {
    "2 + x": lambda x, b, i: 2 + x,
    "2 * x": lambda x, b, i: 2 * x,
    "1 - x": lambda x, b, i: 1 - x,
    "3.3 / x": lambda x, b, i: 3.3 / x,
    "2 ** x": lambda x, b, i: 2**x,
    "x - 2": lambda x, b, i: x - 2,
    "True & b": lambda x, b, i: True & b,
    "5 | i": lambda x, b, i: 5 | i,
    "6 ^ i": lambda x, b, i: 6 ^ i,
}


@pytest.mark.parametrize("expr", list(_REFLECTED))
def test_reflected_operators_as_torch(device, expr):
    """PyTorch's reflected operators: ``2 + x`` and ``2 * x`` (and the bitwise ones) are
    ``x + 2`` (self first: the number has no edge after x's), ``1 - x`` is rsub's
    RsubBackward1, ``3.3 / x`` is ``x.reciprocal() * 3.3`` (its rounding, bit for bit)."""

    def case(lib, dev):
        x = lib.tensor([0.7, -3.0, 11.0], device=dev, requires_grad=True)
        b = lib.tensor([True, False, True], device=dev)
        i = lib.tensor([3, 12, -7], device=dev)
        y = _REFLECTED[expr](x, b, i)
        node = y.grad_fn
        names = None
        if node is not None:
            edges = [type(n).__name__ if n is not None else None for n, _ in node.next_functions]
            names = [type(node).__name__, edges]
        return [y, names]

    both(device, case)
