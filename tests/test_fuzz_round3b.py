"""Families a third differential-fuzzing round found (random programs over binary and
in-place ops, small dtypes, shape ops, convolutions and pooling, run in torch and clgrad), each
checked against torch on every device."""

import numpy as np
import pytest
from conftest import supports
from test_fuzz_families import both

import clgrad

_A = np.array([[1.5, -2.0], [0.5, 3.0]], dtype=np.float32)
_B = np.array([[2.0, 1.0], [-1.0, 4.0]], dtype=np.float32)

# ops whose gradient for one operand reads only the other: PyTorch saves an operand only for
# its partner's gradient, so writing into it afterwards (its partner needing none) is fine
_PRODUCTS = {
    "mul": lambda lib, a, b: a * b,
    "div by": lambda lib, a, b: a / b,
    "addcmul": lambda lib, a, b: lib.addcmul(a, a, b),
    "lerp": lambda lib, a, b: lib.lerp(a, b, 0.3),
    "matmul": lambda lib, a, b: a @ b,
    "mm": lambda lib, a, b: lib.mm(a, b),
    "batched": lambda lib, a, b: a.unsqueeze(0) @ b.unsqueeze(0),
    "mv": lambda lib, a, b: lib.mv(a, b[:, 0]),
    "dot": lambda lib, a, b: lib.dot(a[0], b[0]),
    "outer": lambda lib, a, b: lib.outer(a[0], b[0]),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b),
    "linear, bias": lambda lib, a, b: lib.nn.functional.linear(b, a, a[0]),
    "addmm": lambda lib, a, b: lib.addmm(a, a, b),
    "baddbmm": lambda lib, a, b: lib.baddbmm(a[None], a[None], b[None]),
    "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
    "kron": lambda lib, a, b: lib.kron(a, b),
    "bicubic": lambda lib, a, b: lib.nn.functional.interpolate(
        a[None, None], size=(3, 5), mode="bicubic", align_corners=True
    ),
}


@pytest.mark.parametrize("op", list(_PRODUCTS))
@pytest.mark.parametrize("written", ["first", "second"])
def test_writing_an_operand_whose_partner_needs_no_gradient(device, op, written):
    """The operand that needs a gradient is written in place after the op; backward does not
    refuse it (its partner needs no gradient, so nothing saved it), as PyTorch's."""
    if op == "div by" and written == "second":
        pytest.skip("b's gradient reads b itself: torch refuses it too (checked by 'first')")
    if op == "bicubic" and written == "second":
        pytest.skip("one operand")

    def case(lib, dev):
        a0 = lib.tensor(_A, device=dev, requires_grad=True)
        b0 = lib.tensor(_B, device=dev, requires_grad=True)
        a, b = a0 * 1, b0 * 1  # non-leaves: writable in place
        if written == "first":
            y = _PRODUCTS[op](lib, a, b.detach().clone())
            a.add_(1)
        else:
            y = _PRODUCTS[op](lib, a.detach().clone(), b)
            b.add_(1)
        (y * lib.arange(y.numel(), device=dev).reshape(y.shape)).sum().backward()
        return [y, a0.grad, b0.grad]

    both(device, case)


@pytest.mark.parametrize("op", ["mul", "matmul", "linear"])
def test_writing_a_saved_operand_is_still_refused(device, op):
    """An operand the other one's gradient reads is saved: writing into it is refused at
    backward, as PyTorch's."""

    def case(lib, dev):
        a = lib.tensor(_A, device=dev, requires_grad=True)
        b = lib.tensor(_B, device=dev) * 1
        y = _PRODUCTS[op](lib, a, b)
        b.add_(1)
        y.sum().backward()
        return a.grad

    both(device, case)


@pytest.mark.parametrize("shape, chunks, dim", [((0, 4), 4, 0), ((3, 0), 2, -1), ((0,), 1, 0)])
def test_chunk_of_an_empty_dim(device, shape, chunks, dim):
    """``chunk`` along a dim of size 0 gives ``chunks`` empty pieces (ATen's
    split_with_sizes), not split's one."""

    def case(lib, dev):
        x = lib.zeros(shape, device=dev)
        pieces = x.chunk(chunks, dim)
        unsafe = lib.unsafe_chunk(x, chunks, dim)
        return [len(pieces), [tuple(p.shape) for p in pieces], len(unsafe)]

    both(device, case)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_floor_divide_is_atens(device, dtype):
    """Floating ``//`` is ATen's div_floor_floating (Python's): the quotient of
    ``a - fmod(a, b)``, so 1.0 // 0.001 is 999 and inf // x is nan, not floor(a / b)."""
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    a = [1.0, float("inf"), -1.0, 7.5, -7.5, 0.0, -0.0, 1.0, 5.0, -5.0, 0.3, -0.3, 0.7]
    b = [1e-3, 1e-3, 1e-3, -2.0, 2.0, -3.0, 3.0, 0.0, float("inf"), float("inf"), 0.1, 0.1, 0.1]

    def case(lib, dev):
        dt = getattr(lib, dtype)
        x, y = lib.tensor(a, dtype=dt, device=dev), lib.tensor(b, dtype=dt, device=dev)
        return [x // y, lib.div(x, y, rounding_mode="floor"), x // 0.1, 1.0 // y]

    both(device, case)


@pytest.mark.parametrize("op", ["%", "//", "trunc", "fmod"])
def test_integer_division_by_zero_of_an_empty_result(device, op):
    """An empty integer result divides nothing: no ZeroDivisionError, as PyTorch's; a
    non-empty one still raises."""
    f = {
        "%": lambda lib, a, b: a % b,
        "//": lambda lib, a, b: a // b,
        "trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
        "fmod": lambda lib, a, b: lib.fmod(a, b),
    }[op]

    def case(lib, dev):
        empty = lib.zeros(0, 1, dtype=lib.int16, device=dev)
        zeros = lib.zeros(3, dtype=lib.int64, device=dev)
        return [f(lib, empty, 0), f(lib, empty, zeros), f(lib, zeros[:0], zeros[:0])]

    both(device, case)

    def nonempty(lib, dev):
        return f(lib, lib.ones(2, dtype=lib.int64, device=dev), 0)

    both(device, nonempty)


@pytest.mark.parametrize(
    "a, b",
    [
        ("int64", "float64"),
        ("bool", "float64"),
        ("float16", "int64"),
        ("float32", "float64"),
        ("int64", "int32"),
        ("float64", "uint8"),
    ],
)
def test_ldexp_dtype(device, a, b):
    """ldexp's result has the operands' common dtype where that is floating (float16's stays
    float16, an integer's with a float64 exponent is float64), else the default dtype."""
    for name in (a, b):
        if not supports(device, getattr(clgrad, name)):
            pytest.skip(f"{device} has no {name}")

    def case(lib, dev):
        x = lib.tensor([1, 0, 3], device=dev).to(getattr(lib, a))
        e = lib.tensor([1, 2, 0], device=dev).to(getattr(lib, b))
        return lib.ldexp(x, e)

    both(device, case)


@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_composite_inplace_refuses_a_float_result_into_an_integer_tensor(device, op, dtype):
    """x.addcmul_(a, b) / x.addcdiv_(a, b) with float a, b into an integer (or bool) x raises
    torch's "result type Float can't be cast" RuntimeError instead of truncating."""

    def case(lib, dev):
        x = lib.tensor([1, 2, 3], device=dev).to(getattr(lib, dtype))
        a = lib.tensor([0.5, 1.5, 2.0], device=dev)
        getattr(x, op)(a, a + 1)
        return x

    both(device, case)


@pytest.mark.parametrize(
    "f",
    [
        lambda lib, dev: lib.gcd(
            lib.tensor([1.0, 2.0], device=dev), lib.tensor([2.0, 4.0], device=dev)
        ),
        lambda lib, dev: lib.lcm(
            lib.tensor([1, 2], device=dev), lib.tensor([2.0, 4.0], device=dev)
        ),
        lambda lib, dev: lib.gcd(lib.tensor([True], device=dev), lib.tensor([True], device=dev)),
        lambda lib, dev: lib.gcd(
            lib.tensor([True, False], device=dev), lib.tensor([2, 3], device=dev)
        ),
        lambda lib, dev: lib.lerp(
            lib.tensor([1, 2], device=dev), lib.tensor([2, 4], device=dev), 0.5
        ),
        lambda lib, dev: lib.tensor([1, 2], dtype=lib.int8, device=dev).lerp(
            lib.tensor([2, 4], dtype=lib.int8, device=dev), 0.5
        ),
    ],
    ids=["gcd float", "lcm int float", "gcd bool", "gcd bool int", "lerp long", "lerp int8"],
)
def test_integer_only_and_float_only_ops_raise_not_implemented(device, f):
    """gcd/lcm of a floating (or bool) common dtype and lerp of integers raise
    NotImplementedError, as ATen's kernels' dispatch; bool with int is int."""
    both(device, f)


@pytest.mark.parametrize(
    "shape, dim", [((2, 3, 4), 2), ((2, 3, 4), -1), ((2, 3, 4), 1), ((2, 3), 0), ((3,), 0)]
)
def test_index_select_out_of_range_error_class(device, shape, dim):
    """An index out of range raises RuntimeError along dim 1 (ATen's dim-1 kernel) and
    IndexError along any other dim, as torch's."""

    def case(lib, dev):
        return lib.index_select(lib.zeros(shape, device=dev), dim, lib.tensor([5], device=dev))

    both(device, case)


@pytest.mark.parametrize("index", [[-1], [5], [0, -3]])
@pytest.mark.parametrize("shape, dim", [((3, 2), 0), ((3, 2), 1), ((3,), 0)])
def test_index_add_out_of_range_error_class(device, index, shape, dim):
    """index_add_ of an out-of-range (or negative) index: torch's RuntimeError naming it past
    1-d, IndexError of a 1-d tensor (what torch wrote before it met the index is not
    compared)."""

    def case(lib, dev):
        x = lib.zeros(shape, device=dev)
        src_shape = list(shape)
        src_shape[dim] = len(index)
        try:
            x.index_add_(dim, lib.tensor(index, device=dev), lib.ones(src_shape, device=dev))
        except (IndexError, RuntimeError) as e:
            return type(e).__name__
        return x

    both(device, case)


@pytest.mark.parametrize(
    "bounds",
    [{"min": "t"}, {"max": "t"}, {"min": "t", "max": "t"}, {"min": True}, {"min": "i"}],
    ids=["min tensor", "max tensor", "both tensors", "min number", "min int tensor"],
)
@pytest.mark.parametrize("inplace", [False, True])
def test_clamp_of_bools(device, bounds, inplace):
    """clamp of a bool tensor by one bool tensor bound is maximum/minimum (ATen's clamp_min /
    clamp_max take bool); two bounds or a number bound raise NotImplementedError."""

    def case(lib, dev):
        x = lib.tensor([True, False, False], device=dev)
        t = lib.tensor([False, True, False], device=dev)
        i = lib.tensor([0, 2, -1], device=dev)
        kw = {k: {"t": t, "i": i}.get(v, v) if isinstance(v, str) else v for k, v in bounds.items()}
        if inplace:
            if "i" in bounds.values():
                return x.clamp(**kw)  # (an int result is not written into bools)
            x.clamp_(**kw)
            return x
        return x.clamp(**kw)

    both(device, case)


@pytest.mark.parametrize("op", ["clamp_", "add_", "zero_", "fill_", "mul_", "copy_"])
@pytest.mark.parametrize("grad", [False, True])
def test_inplace_into_an_empty_expanded_tensor(device, op, grad):
    """An empty view of an expanded tensor writes nothing: no internal-overlap error, as
    PyTorch's; a non-empty one still raises."""
    f = {
        "clamp_": lambda v: v.clamp_(min=0),
        "add_": lambda v: v.add_(2),
        "zero_": lambda v: v.zero_(),
        "fill_": lambda v: v.fill_(1),
        "mul_": lambda v: v.mul_(2),
        "copy_": lambda v: v.copy_(v * 0),
    }[op]

    def case(lib, dev):
        base = lib.zeros(1, 4, device=dev, requires_grad=grad) * 1
        x = base.expand(3, 4)
        out = []
        for v in (x[:, :0], x[:0], x[:2, 1:1]):
            f(v)
            out.append(tuple(v.shape))
        return out

    both(device, case)

    def nonempty(lib, dev):
        return f(lib.zeros(1, 4, device=dev).expand(3, 4))

    if op not in ("zero_", "fill_"):  # (which torch lets write one value over the overlap)
        both(device, nonempty)


@pytest.mark.parametrize("op", ["zero_", "fill_"])
def test_fill_of_an_expanded_tensor(device, op):
    """fill_/zero_ of an expanded tensor writes its one value over the shared memory, as
    torch's (which refuses no overlap there), where nothing records it."""

    def case(lib, dev):
        base = lib.zeros(2, 1, 3, device=dev)
        x = base.expand(2, 5, 3)
        getattr(x, op)(*(() if op == "zero_" else (7,)))
        y = lib.ones(1, device=dev).expand(4)[::2]
        getattr(y, op)(*(() if op == "zero_" else (-1,)))
        return [x, base, y]

    both(device, case)


@pytest.mark.parametrize("shape, dim", [((2, 0), -1), ((0, 2), -1), ((3, 0, 2), 1)])
def test_glu_of_an_empty_halving_dim(device, shape, dim):
    """glu over a dim of size 0 gives two empty halves (as torch's chunk), not a crash."""

    def case(lib, dev):
        x = lib.zeros(shape, device=dev, requires_grad=True)
        y = lib.nn.functional.glu(x, dim)
        y.sum().backward()
        return [y, x.grad]

    both(device, case)
