"""Elementwise families an eighth differential round found (rounded integer division, addcmul
and addcdiv in the result dtype, complex values as bools and in logical ops, float16 fills past
the range, float16 vector products, complex float_power, complex linspace and logspace); each
checked against torch on every device."""

import pytest
from test_fuzz_families import both

import clgrad


def _exact(t):
    """A tensor as (dtype name, values as Python numbers): compared exactly, where ``both``
    would allow a relative error (an int64 quotient one off at 2**24)."""
    return [str(t.dtype).split(".")[-1], t.tolist()]


def _wide(*tensors):
    """Each tensor as (dtype name, values in float32): torch's ``.numpy()`` refuses bfloat16,
    which ``both`` would take for the same exception on both sides."""
    return [[str(t.dtype).split(".")[-1], t.detach().float()] for t in tensors]


def _outcomes(calls):
    """What each of ``calls`` gives: its result, or the name of the built-in class of what it
    raised (a list: ``both`` alone compares a case's first exception only)."""
    out = []
    for call in calls:
        try:
            out.append(call())
        except Exception as e:  # the class is what is compared
            out.append(next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"))
    return out


def _float64_on(device):
    return device == "cpu" or clgrad.device(device).supports(clgrad.float64)


# ---- div(..., rounding_mode="trunc") -------------------------------------------------------
def test_trunc_division_of_integers_is_exact(device):
    """Integer quotients above 2**24 (they went through float32), in place too; a Python
    number divisor wrapped to the dtype first (uint8 200 by -3 divides by 253)."""

    def case(lib, dev):
        def trunc(a, b):
            return _exact(lib.div(a, b, rounding_mode="trunc"))

        def ints(values, dtype=lib.int64):
            return lib.tensor(values, dtype=dtype, device=dev)

        big = ints([16777217, 2**40 + 1, -(2**40) - 1, 7, -7])
        signs = ints([1, -3, -3, 2, 2])
        into = big.clone()
        into.div_(signs, rounding_mode="trunc")
        i8, u8 = ints([100, -100, 7], lib.int8), ints([200, 7], lib.uint8)
        return [
            trunc(big, 1),
            trunc(big, signs),
            _exact(into),
            trunc(ints([-7, 7, -7, 7]), ints([2, 2, -2, -2])),
            trunc(u8, -3),
            _exact(u8.clone().div_(-3, rounding_mode="trunc")),
            trunc(i8, 200),
            trunc(i8, lib.tensor(200)),
            trunc(u8, ints(-3, lib.int8)),
            trunc(-7, ints([2, -2])),
            trunc(ints([7]), True),
        ]

    both(device, case)


def test_trunc_division_refusals(device):
    """Integer division by zero raises RuntimeError (ZeroDivisionError), also where the number
    wraps to 0 in the dtype (int16 by 65536); bool and complex operands NotImplementedError."""

    def case(lib, dev):
        x = lib.tensor([3, -9], dtype=lib.int16, device=dev)
        pairs = [
            (x, 0),
            (x, lib.tensor([2, 0], device=dev)),
            (x, 65536),
            (x > 0, True),
            (lib.tensor([1j], device=dev), 1),
            (x > 0, x < 0),
        ]
        return _outcomes((lambda a=a, b=b: lib.div(a, b, rounding_mode="trunc")) for a, b in pairs)

    both(device, case)


def test_floor_division_by_a_number_that_wraps_to_zero(device):
    def case(lib, dev):
        return lib.tensor([3], dtype=lib.int16, device=dev) // 65536

    both(device, case)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_trunc_division_of_16_bit_floats_rounds_as_torch(device, dtype):
    """By a one-element divisor (a number, a (1,) tensor) the float32 quotient is truncated
    and rounded once; by a tensor of several elements the quotient is rounded first. The
    gradient is zero for both operands."""

    def case(lib, dev):
        dt = getattr(lib, dtype)
        near = [-187.375, -186.875] if dtype == "float16" else [-60.25, -56.25]
        x = lib.tensor([*near, 1.0, 7.0], dtype=dt, device=dev, requires_grad=True)
        a = lib.full((4,), 2047.0, dtype=dt, device=dev)
        b = lib.full((4,), 682.4, dtype=dt, device=dev, requires_grad=True)
        by_number = lib.div(x, 0.1, rounding_mode="trunc")
        by_tensor = lib.div(x, b, rounding_mode="trunc")
        (by_number.sum() + by_tensor.sum()).backward()
        return _wide(
            by_number,
            lib.div(a, b[:1], rounding_mode="trunc"),
            lib.div(a, b, rounding_mode="trunc"),
            x.grad,
            b.grad,
        )

    both(device, case)


# ---- addcmul / addcdiv ---------------------------------------------------------------------
def test_addcmul_and_addcdiv_compute_in_the_result_dtype(device):
    """The product or quotient of float16 or uint8 operands is taken in the result dtype
    (float32 here), not in theirs (inf, 0, a wrapped 40000), a 0-d input too; float16
    results computed in float32 and rounded once."""

    def case(lib, dev):
        h = lib.tensor([300.0, 1e-4], dtype=lib.float16, device=dev)
        u = lib.tensor([200, 3], dtype=lib.uint8, device=dev)
        zeros = lib.zeros(2, device=dev)
        into = lib.zeros(2, device=dev)
        into.addcmul_(h, h)
        return [
            lib.addcmul(zeros, h, h),
            lib.addcdiv(zeros, h, 1 / h),
            lib.addcmul(zeros, u, u),
            lib.addcmul(lib.tensor(0.0, device=dev), u, u),
            lib.addcmul(lib.tensor([1, 2], device=dev), u, u),
            lib.addcmul(h, h, h, value=1e-5),
            lib.addcmul(h, h, h, value=1e6),
            into,
            lib.zeros(2, dtype=lib.float16, device=dev).addcmul_(h, h, value=1e-5),
        ]

    both(device, case)


def test_addcmul_value_conversions(device):
    """``value`` converted to the result dtype as PyTorch's Scalar is: a float truncated for
    integers, a bool as 1, a complex one refused by a real dtype (unless its imaginary part is
    zero), a number past the range refused; integer (or bool) addcdiv operands and bool
    addcmul refused, a number operand too."""

    def case(lib, dev):
        f = lib.tensor([1.5, 2.0], device=dev)
        i = lib.tensor([7, -3], device=dev)
        u = lib.tensor([200, 3], dtype=lib.uint8, device=dev)
        h = f.half()
        return _outcomes(
            [
                lambda: lib.addcmul(i, i, i, value=2.5),
                lambda: lib.addcmul(i, i, i, value=True),
                lambda: lib.addcmul(f, f, f, value=True),
                lambda: lib.addcmul(f, f, f, value=1j),
                lambda: lib.addcmul(f, f, f, value=2 + 0j),
                lambda: lib.addcmul(u, u, u, value=-1),
                lambda: lib.addcmul(u, u, u, value=300),
                lambda: lib.addcmul(h, h, h, value=1e39),
                lambda: i.clone().addcmul_(i, i, value=1.5),
                lambda: lib.addcdiv(f, f, f, value=True),
                lambda: lib.addcdiv(f, i, i),
                lambda: lib.addcdiv(f, i, i > 0),
                lambda: lib.addcmul(i > 0, i > 0, i > 0),
                lambda: lib.addcmul(f, f, 2),
            ]
        )

    both(device, case)


def test_addcdiv_and_addcmul_of_complex_tensors(device):
    def case(lib, dev):
        a = lib.tensor([1 + 1j, 2 - 1j], device=dev)
        b = lib.tensor([2j, 1 + 0.5j], device=dev)
        c = lib.tensor([1 - 1j, 3j], device=dev)
        f = lib.tensor([2.0, 4.0], device=dev)
        return [
            lib.addcdiv(a, b, c),
            lib.addcdiv(a, b, c, value=2 - 1j),
            lib.addcdiv(f, b, f, value=0.5),
            lib.addcmul(a, b, c, value=1j),
            lib.addcmul(a, f, f),
        ]

    both(device, case)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv_gradients(device, op):
    """Each operand's gradient as torch's autograd gives it, across mixed dtypes."""

    def case(lib, dev):
        out = []
        for dtypes, value in (
            (("float32", "float16", "float16"), 0.5),
            (("float16", "float32", "float16"), -3),
            (("float32", "bfloat16", "float32"), 2),
        ):
            # 300 * 300 and 300 / 1e-3 are past float16's range: the result is float32
            xs = [
                lib.tensor(v, dtype=getattr(lib, d), device=dev, requires_grad=True)
                for v, d in zip(([1.5, -2.0], [300.0, 0.25], [300.0, 1e-3]), dtypes)
            ]
            y = getattr(lib, op)(*xs, value=value)
            (y * lib.tensor([1.5, -1.0], device=dev)).sum().backward()
            out += _wide(y, *(x.grad for x in xs))
        return out

    both(device, case)


# ---- complex values as bools ---------------------------------------------------------------
def test_complex_to_bool_is_true_where_either_part_is_nonzero(device):
    """2j is true (only the real part was read), through ``.bool()``, ``.to(bool)``,
    ``copy_`` and a fill with a complex number; NaN is nonzero, -0 is zero."""

    def case(lib, dev):
        c = lib.tensor([2j, 0j, 1 + 0j, complex(0, float("nan")), complex(-0.0, -0.0)], device=dev)
        copied = lib.zeros(5, dtype=lib.bool, device=dev)
        copied.copy_(c)
        filled = lib.zeros(2, dtype=lib.bool, device=dev)
        filled.fill_(2j)
        return [
            c.bool(),
            c.to(lib.bool),
            c.reshape(1, 5).t().bool(),
            copied,
            filled,
            lib.full((2,), 2j, dtype=lib.bool, device=dev),
            lib.tensor(1j, device=dev).bool().item(),
        ]

    both(device, case)


def test_complex_tensor_written_into_bool_slice(device):
    def case(lib, dev):
        b = lib.zeros(3, dtype=lib.bool, device=dev)
        b[:] = lib.tensor([2j, 0j, 1 + 0j], device=dev)
        return b

    both(device, case)


def test_complex_number_filled_into_a_real_tensor(device):
    """A complex number with an imaginary part cannot be stored in a real tensor
    (RuntimeError, not the TypeError of its conversion to float); one without is its real
    part."""

    def case(lib, dev):
        return _outcomes(
            (lambda dt=dt, v=v: lib.zeros(2, dtype=dt, device=dev).fill_(v))
            for dt in (lib.float32, lib.int64)
            for v in (2j, 3 + 0j)
        )

    both(device, case)


# ---- fills of float16 / bfloat16 past the range --------------------------------------------
def test_fill_past_the_float16_range(device):
    """PyTorch fills a one-element float16 or bfloat16 tensor with an infinity, where its
    fill of several elements (and masked_fill, index_fill, scatter, and any float32 fill)
    raises RuntimeError. (Its 0-d fill gives an infinity too; clgrad's still raises: see
    ``core._UNCHECKED_ONE_ELEMENT_FILLS``.)"""

    def case(lib, dev):
        h, bf = lib.float16, lib.bfloat16
        return _outcomes(
            [
                lambda: lib.full((1,), -1e9, dtype=h, device=dev),
                lambda: lib.zeros(1, dtype=h, device=dev).fill_(1e6),
                lambda: lib.zeros(3, dtype=h, device=dev)[1:2].fill_(1e6),
                lambda: lib.linspace(1e8, 1e8 + 10, 1, dtype=h, device=dev),
                lambda: lib.full((1, 1), 1e300, dtype=bf, device=dev).float(),
                lambda: lib.full((2,), 1e6, dtype=h, device=dev),
                lambda: lib.zeros(2, dtype=h, device=dev).fill_(1e6),
                lambda: lib.zeros(1, dtype=h, device=dev).masked_fill(
                    lib.tensor([True], device=dev), 1e6
                ),
                lambda: lib.full((1,), 1e39, device=dev),
                lambda: lib.zeros(2, dtype=h, device=dev).index_fill(
                    0, lib.tensor([0], device=dev), 1e6
                ),
                lambda: lib.zeros(2, dtype=h, device=dev).scatter(
                    0, lib.tensor([0], device=dev), 1e6
                ),
            ]
        )

    both(device, case)


def test_linspace_of_few_steps(device):
    """No steps: empty, the ends unchecked; one: filled with start as fill_ converts it (end
    unread: -16 into uint8 is no error there); more: both ends range checked, bool refused."""

    def case(lib, dev):
        calls = []
        for dt in (lib.float16, lib.uint8, lib.bool):
            for steps in (0, 1, 2):
                for start, end in ((3.0, -16.0), (1e8, 1e8 + 10), (0, 1)):
                    calls.append(
                        lambda s=start, e=end, n=steps, dt=dt: lib.linspace(
                            s, e, n, dtype=dt, device=dev
                        )
                    )
        return _outcomes(calls)

    both(device, case)


# ---- float16 vector products ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_vector_products_accumulate_in_float32(device, dtype):
    """300 * 300 overflows float16: PyTorch's dot and matrix-vector kernels multiply and add
    in float32 and round once (0, not NaN)."""

    def case(lib, dev):
        dt = getattr(lib, dtype)
        big = 300.0 if dtype == "float16" else 1e19
        a = lib.tensor([big, big], dtype=dt, device=dev)
        b = lib.tensor([big, -big], dtype=dt, device=dev)
        m = lib.stack([a, b])
        # the products rounded to the dtype lose the 2**-19 (float16) the sum keeps
        ulp = 2.0**-10 if dtype == "float16" else 2.0**-7
        c = lib.tensor([1 + ulp, 1.0], dtype=dt, device=dev)
        d = lib.tensor([1 + 2 * ulp, -1.0], dtype=dt, device=dev)
        return _wide(
            a.dot(b),
            lib.vdot(a, b),
            a @ b,
            m @ b,
            lib.mv(m, b),
            a @ m,
            m.expand(3, 2, 2) @ b,
            c @ d,
            lib.stack([c, d]) @ d,
        )

    both(device, case)


def test_16_bit_vector_product_gradients(device):
    def case(lib, dev):
        x = lib.tensor([300.0, 300.0, 3.0], dtype=lib.float16, device=dev, requires_grad=True)
        y = lib.tensor([300.0, -300.0, -1.0], dtype=lib.float16, device=dev, requires_grad=True)
        m = lib.tensor([[1.0, 2.0, 3.0], [300.0, 300.0, 6.0]], dtype=lib.float16, device=dev)
        m.requires_grad_()
        out = (x @ y) + (m @ y).sum()
        out.backward()
        return [out, x.grad, y.grad, m.grad]

    both(device, case)


# ---- float_power with complex operands -----------------------------------------------------
def test_float_power_of_complex_operands_is_complex128(device):
    """A complex operand (a tensor or a number) makes the result complex128, where it was
    float64 without the imaginary parts; in place, only a complex128 tensor takes it."""
    if not _float64_on(device):
        pytest.skip("complex128 needs float64")

    def case(lib, dev):
        c = lib.tensor([1 + 1j, -2j], device=dev)
        f = lib.tensor([2.0, 3.0], device=dev)
        return _outcomes(
            [
                lambda: lib.float_power(c, 2),
                lambda: lib.float_power(f, c),
                lambda: lib.float_power(f, 1j),
                lambda: lib.float_power(1j, f),
                lambda: lib.float_power(lib.tensor([2, 3], device=dev), 1 + 1j),
                lambda: c.float_power(0.5),
                lambda: c.to(lib.complex128).float_power_(2),
                lambda: c.clone().float_power_(2),
                lambda: f.double().float_power_(c),
                lambda: lib.float_power(f, 2),
            ]
        )

    both(device, case)


def test_float_power_gradient_through_complex(device):
    if not _float64_on(device):
        pytest.skip("complex128 needs float64")

    def case(lib, dev):
        x = lib.tensor([1 + 1j, -2j], device=dev, requires_grad=True)
        y = lib.float_power(x, 2)
        y.abs().sum().backward()
        return [y, x.grad]

    both(device, case)


# ---- logical ops with complex operands -----------------------------------------------------
@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_of_complex_operands(device, op):
    """A complex element is true where either part is nonzero (2j, NaN j)."""

    def case(lib, dev):
        c = lib.tensor([2j, 0j, 1 + 0j, 0j, complex(0, float("nan"))], device=dev)
        r = lib.tensor([1.0, 1.0, 0.0, 0.0, 0.0], device=dev)
        b = lib.tensor([True, False, True, False, True], device=dev)
        fn = getattr(lib, op)
        return [
            fn(c, r),
            fn(r, c),
            fn(b, c),
            fn(c, c.flip(0)),
            getattr(c, op)(r),
            getattr(c.clone(), op + "_")(r),
            getattr(b.clone(), op + "_")(c),
            fn(c, r, out=lib.zeros(5, dtype=lib.bool, device=dev)),
        ]

    both(device, case)


# ---- complex linspace and logspace ---------------------------------------------------------
@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_linspace_and_logspace_of_complex_dtype(device, steps):
    def case(lib, dev):
        c = lib.complex64
        return [
            lib.linspace(0, 1, steps, dtype=c, device=dev),
            lib.linspace(3.0, -16.0, steps, dtype=c, device=dev),
            lib.linspace(1 + 1j, 3 - 2j, steps, device=dev),
            lib.logspace(0, 2, steps, dtype=c, device=dev),
            lib.logspace(-1, 3, steps, base=2, dtype=c, device=dev),
            lib.logspace(0, 3, steps, base=-2, dtype=c, device=dev),
            lib.logspace(1j, 2, steps, device=dev),
        ]

    both(device, case)


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
def test_complex_end_with_a_real_dtype_is_refused(device, fn):
    def case(lib, dev):
        return getattr(lib, fn)(1j, 2, 3, dtype=lib.float32, device=dev)

    both(device, case)


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_integer_and_bool_logspace(device, steps):
    """Integer logspace as ATen's kernel: the ends converted to the dtype (-1 wraps to 255 in
    uint8, -16.0 is refused), the powers converted as C converts (through int32); one step
    fills base ** start (0.5 into bool is True); bool refused for more steps."""

    def case(lib, dev):
        calls = [
            lambda s=start, e=end, b=base, name=dtype: _exact(
                lib.logspace(s, e, steps, b, dtype=getattr(lib, name), device=dev)
            )
            for start, end, base, dtype in (
                (0, 2, 10.0, "uint8"),
                (1, 20, 10.0, "uint8"),
                (-1, 3, 2.0, "uint8"),
                (0, 3, -2.0, "uint8"),
                (-1, 3, -3.0, "int8"),
                (0, 6, 10.0, "int16"),
                (0, 30, 10.0, "int32"),
                (0.5, 3.7, 2.5, "int64"),
                (-1, 3, 2.0, "bool"),
                (3.0, -16.0, 10.0, "uint8"),
            )
        ]
        return _outcomes(calls)

    both(device, case)


def test_fill_of_an_expanded_float16_tensor_is_range_checked(device):
    """One element expanded to three is a three-element fill to PyTorch: range checked."""

    def case(lib, dev):
        return lib.zeros(1, dtype=lib.float16, device=dev).expand(3).fill_(1e6)

    both(device, case)
