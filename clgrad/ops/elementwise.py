"""Elementwise ops, each declared once (see ``registry``): kernel expression, NumPy reference,
dtype rule, gradient and the public function with its example.

In an expression ``in0``, ``in1``, ... are the operands converted to the compute type ``{T}``;
the ``cg_*`` helpers come from ``kernels/_prelude.cl.mako``.
"""

from __future__ import annotations

import math
import numbers
from numbers import Number

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function
from ..backend.base import COPY
from ..tensor import Tensor
from .core import (
    COMPLEX_HOOKS,
    TYPE_META_NAMES,
    is_tensor,
    kernel_scalar,
    launch,
    overflow_error,
    overflows,
)
from .registry import (
    ALL_DTYPES,
    ELEMENTWISE,
    FLOAT_DTYPES,
    INTEGRAL_DTYPES,
    NUMERIC_DTYPES,
    SCALAR_TYPE_NAMES,
    check_cast,
    elementwise,
    floating,
    integral,
    predicate,
)

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _overload(name, node_name, edges=None):
    """The apply of op ``name`` recording PyTorch's node of one of its overloads (see
    ``ElementwiseOp.variant``)."""
    return ELEMENTWISE[name].variant(node_name, edges).apply


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _np_erf(x):
    return _erf(x).astype(np.result_type(x, np.float32))


def _np_sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _np_floordiv(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.floor_divide(a, safe))
    # ATen's div_floor_floating (Python's float //), as the kernels: see _prelude.cl.mako
    dt = np.result_type(a, b)
    a, b = np.asarray(a, dtype=dt), np.asarray(b, dtype=dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = a / b
        m = np.fmod(a, b)
        d = (a - m) / b
        d = np.where((m != 0) & ((b < 0) != (m < 0)), d - 1, d)
        f = np.floor(d)
        f = np.where(d - f > 0.5, f + 1, f)
        out = np.where(d != 0, f, np.copysign(np.zeros((), dt), q))
        return np.where(b == 0, q, out).astype(dt, copy=False)


def _np_mod(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.mod(a, safe))
    return np.mod(a, b)


_SQRT_DTYPES = frozenset((D.float32, D.float64))


def _np_sqrt(a, _):
    with np.errstate(invalid="ignore"):
        return np.sqrt(a)


def _np_rsqrt(a, _):
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 / np.sqrt(a)


def _np_pow(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        neg = b < 0
        r = np.power(a, np.where(neg, 0, b))
        # a ** -k for integers: 1 for a == 1, +-1 for a == -1, else 0 (as C and PyTorch do)
        return np.where(neg, np.where(a == 1, 1, np.where(a == -1, np.where(b % 2, -1, 1), 0)), r)
    return np.power(a, b)


def _np_clamp(a, lo, hi):
    with np.errstate(invalid="ignore"):
        r = np.minimum(np.maximum(a, lo), hi)
    if np.issubdtype(np.asarray(r).dtype, np.floating):
        r = np.where(np.isnan(a) | np.isnan(lo) | np.isnan(hi), np.nan, r)
    return r


def _check_divisor(input, other):
    """Integer division (//, %, rounded div) by zero raises RuntimeError, as PyTorch's CPU
    kernels do: a number divisor is checked here, a tensor one read from its device (one wait,
    integer operands only). The divisor is checked as the kernel sees it, converted to the
    result dtype: an int16 division by 65536 divides by zero."""
    dt = D.result_type(input, other)
    if dt.is_floating_point:
        return
    if any(is_tensor(x) and x.numel() == 0 for x in (input, other)):
        return  # an empty result divides nothing
    divisor = _as_dtype(other, dt)
    zero = bool((divisor == 0).any()) if is_tensor(divisor) else divisor == 0
    if zero:
        raise RuntimeError("ZeroDivisionError")


def _require_tensors(name, input, other):
    """PyTorch's TypeError where an op takes tensors only (no Python numbers)."""
    for position, (arg, x) in enumerate((("input", input), ("other", other)), 1):
        if not is_tensor(x):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(x).__name__}"
            )


def _zero_grad(grad):
    """A gradient that is zero everywhere, as PyTorch's ``zeros_like(grad)``: an infinite or
    NaN incoming gradient stays out of it (``grad * 0`` would be NaN there)."""
    return Tensor._full(grad._shape, 0, grad.dtype, grad.device)


def _tie_grad(grad, loses, input, other):
    """maximum's and minimum's gradient for one operand, as PyTorch's: half at a tie, none
    where the operand ``loses`` (selected, so an infinite ``grad`` gives no NaN there), all of
    it elsewhere (a NaN operand takes it)."""
    return where(loses, 0.0, where(input == other, grad / 2, grad))


def _scaled(input, other, alpha):
    """``alpha * other`` for ``add`` and ``sub``, computed in the dtype of the result as
    PyTorch's kernels do (so bool stays bool and a bool or 0-d operand doesn't promote
    through the number); PyTorch's checks of ``alpha`` first."""
    if alpha == 1 and not isinstance(alpha, bool):
        return other
    dt = D.result_type(input, other)
    if isinstance(alpha, bool) and dt is not D.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and dt.category < 2:  # (complex results take one, as torch's)
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if isinstance(alpha, complex) and not dt.is_complex:
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )
    if overflows(alpha, dt):
        raise overflow_error(dt)
    if dt is D.bool_:  # alpha as a bool: True keeps other, False gives zeros
        return other * bool(alpha) if is_tensor(other) else bool(other and alpha)
    return (other.to(dt) if is_tensor(other) else other) * alpha


def _log(x):
    """log of a tensor or of a Python number (a pow operand may be either)."""
    if is_tensor(x):
        return x.log()
    return math.log(x) if x > 0 else (float("nan") if x < 0 else float("-inf"))


# ---- arithmetic -------------------------------------------------------------------------------
@elementwise("in0 + in1", np.add, grad=(lambda grad: grad, lambda grad: grad), inplace=True)
def add(apply, input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """``input + alpha * other``, broadcast, with PyTorch's type promotion.

    >>> clgrad.add(clgrad.tensor([1, 2]), 10)
    tensor([11, 12])
    >>> clgrad.tensor([1.0, 2.0]).add(clgrad.tensor([1.0, 1.0]), alpha=2)
    tensor([3., 4.])
    """
    return apply(input, _scaled(input, other, alpha))


def _sub_nodes(input, other):
    # PyTorch's rsub(Tensor, Scalar), the node of ``1 - x``: RsubBackward1, x's edge alone
    return ("RsubBackward1", 0) if not is_tensor(input) and is_tensor(other) else None


@elementwise(
    "in0 - in1",
    np.subtract,
    grad=(lambda grad: grad, lambda grad: -grad),
    inplace=True,
    nodes=_sub_nodes,
)
def sub(apply, input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """``input - alpha * other``.

    >>> clgrad.sub(clgrad.tensor([5.0, 7.0]), 2)
    tensor([3., 5.])
    """
    _sub_check(input, other)
    return apply(input, _scaled(input, other, alpha))


def _sub_check(input, other):
    """PyTorch's ``sub_check``, before promotion: a bool on either side (a bool tensor or a
    Python bool) is refused, whatever the other operand, so ``int_tensor - True`` and
    ``bool_tensor - 1`` raise as ``bool_tensor - bool_tensor`` does (``rsub``, ``sub_`` and
    ``subtract`` come here too)."""
    bools = [x.dtype is D.bool_ if is_tensor(x) else isinstance(x, bool) for x in (input, other)]
    if all(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if any(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


@elementwise(
    "in0 * in1",
    np.multiply,
    grad=(lambda grad, other: grad * other, lambda grad, input: grad * input),
    inplace=True,
    saves_numbers=True,
)
def mul(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * other``.

    >>> clgrad.mul(clgrad.tensor([1.0, 2.0]), 3)
    tensor([3., 6.])
    """
    return apply(input, other)


@elementwise(
    "in0 / in1",
    np.true_divide,
    result=floating,
    grad=(
        lambda grad, other: grad / other,
        lambda grad, input, other: -grad * input / (other * other),
    ),
    inplace=True,
    saves_numbers=True,
)
def div(
    apply, input: Tensor | Number, other: Tensor | Number, *, rounding_mode: str | None = None
) -> Tensor:
    """``input / other``: true division (a float result), or rounded with ``rounding_mode``
    ``"trunc"`` or ``"floor"``.

    >>> clgrad.div(clgrad.tensor([1, 7]), 2)
    tensor([0.5000, 3.5000])
    >>> clgrad.div(clgrad.tensor([-7, 7]), 2, rounding_mode="floor")
    tensor([-4,  3])
    """
    if rounding_mode is None:
        return apply(input, other)
    if rounding_mode in ("floor", "trunc"):
        return DivRounded.apply(input, other, rounding_mode)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
        f"found '{rounding_mode}'"
    )


def true_divide(input, other):
    """``input / other`` (``div`` without rounding).

    >>> clgrad.true_divide(clgrad.tensor([3]), 2)
    tensor([1.5000])
    """
    return div(input, other)


class DivRounded(Function):
    """``div(input, other, rounding_mode="floor" | "trunc")``: the rounded quotient, and a zero
    gradient for each operand, as PyTorch's (a step function). It saves no operand, so an
    in-place ``div_(..., rounding_mode=...)`` on a tensor another node saved stays
    differentiable, as PyTorch's."""

    node_name = "DivBackward2"

    @staticmethod
    def forward(ctx, input, other, rounding_mode):
        ctx.operands = [
            (x.shape, x.dtype, x.device) if is_tensor(x) else None for x in (input, other)
        ]
        if rounding_mode == "floor":
            return floor_divide(input, other)
        dt = D.result_type(input, other)
        if dt is D.bool_ or dt.is_complex:
            raise NotImplementedError(
                f"\"div_trunc_cpu\" not implemented for '{SCALAR_TYPE_NAMES[dt.name]}'"
            )
        _check_divisor(input, other)
        if dt.is_floating_point:
            return _trunc_divide_floats(input, other, dt)
        # PyTorch's kernel divides the operands converted to the result dtype (a number
        # wrapped to an integer dtype's width: uint8 200 by -3 divides by 253)
        a, b = (_as_dtype(x, dt) for x in (input, other))
        return _trunc_divide_integers(a, b, dt)

    @staticmethod
    def backward(ctx, grad):
        return tuple(
            None if meta is None else grad.new_zeros(meta[0], dtype=meta[1], device=meta[2])
            for meta in ctx.operands
        ) + (None,)


def _as_dtype(x, dt):
    """Operand ``x`` (a tensor or a Python number) as ``dt`` holds it: a tensor converted, an
    integer number wrapped to the dtype's width as C converts, a float one rounded."""
    if is_tensor(x):
        return x.to(dt)
    return D.held(x, dt) if dt.is_floating_point else kernel_scalar(x, dt)


def _trunc_divide_floats(input, other, dt):
    """``trunc(input / other)`` of floating dtype ``dt``, rounded where PyTorch's CPU kernel
    rounds: float16 and bfloat16 quotients by a tensor of several elements are rounded to
    ``dt`` before the trunc (its vector code); by a one-element divisor (a number, a 0-d or
    one-element tensor) the dividend in ``dt`` is divided by that value in float32 and the
    trunc rounded once."""
    if dt in (D.float16, D.bfloat16) and (not is_tensor(other) or other.numel() == 1):
        a = _as_dtype(input, dt)
        a = a.to(D.float32) if is_tensor(a) else a
        b = other.to(D.float32) if is_tensor(other) else other
        return div(a, b).trunc().to(dt)
    return div(input, other).trunc().to(dt)


def _trunc_divide_integers(a, b, dt):
    """C's integer division (toward zero) of ``a`` by ``b``, both of integer dtype ``dt``, in
    exact integer arithmetic (a float quotient rounds past 2**24): the floor quotient, one
    more where the division leaves a remainder and the operands' signs differ."""
    q = floor_divide(a, b)
    if not dt.is_signed:
        return q
    toward_zero = (remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return q + toward_zero.to(dt)


def _no_floor_divide_derivative(grad):
    # PyTorch records floor division's node and refuses at backward: it has no formula there
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


@elementwise(
    "cg_floordiv_{T}(in0, in1)",
    _np_floordiv,
    grad=(_no_floor_divide_derivative, _no_floor_divide_derivative),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
)
def floor_divide(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input // other``, rounded toward negative infinity. Its backward raises
    RuntimeError, as PyTorch's (``div(..., rounding_mode="floor")`` has a zero gradient).

    >>> clgrad.floor_divide(clgrad.tensor([-7, 7]), 2)
    tensor([-4,  3])
    """
    _check_divisor(input, other)
    return apply(input, other)


@elementwise(
    "cg_mod_{T}(in0, in1)",
    _np_mod,
    grad=(
        lambda grad: grad,
        lambda grad, input, other: -grad * div(input, other, rounding_mode="floor"),
    ),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
)
def remainder(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input % other`` with the sign of ``other`` (Python's modulo).

    >>> clgrad.remainder(clgrad.tensor([-3, 3]), 2)
    tensor([1, 1])
    """
    _check_divisor(input, other)
    return apply(input, other)


def _pow_grad_input(grad, input, exponent):
    # exponent * input^(exponent-1), taken as 0 where exponent == 0 (PyTorch, also at input 0)
    if not is_tensor(exponent):
        if exponent == 0:
            return _zero_grad(grad)
        # x ** 2, the commonest power (a squared error): input ** 1 is input, one kernel less
        power = input if exponent == 2 else input ** (exponent - 1)
        return grad * exponent * power
    return where(exponent == 0, 0.0, grad * exponent * input ** (exponent - 1))


def _pow_grad_exponent(grad, input, exponent, result):
    # input^exponent * log(input), taken as 0 where input == 0 and exponent >= 0 (PyTorch's
    # formula: a number base 0 gives -inf where exponent < 0)
    if not is_tensor(input):
        g = grad * result * _log(input)
        return where(exponent >= 0, 0.0, g) if input == 0 else g
    return where((input == 0) & (exponent >= 0), 0.0, grad * result * input.log())


def _pow_nodes(input, exponent):
    # PyTorch's overloads: pow(Tensor, Scalar) PowBackward0, pow(Tensor, Tensor) PowBackward1,
    # pow(Scalar, Tensor) PowBackward2; a Scalar has no edge in the node
    if not is_tensor(exponent):
        return "PowBackward0", 1
    return ("PowBackward1", None) if is_tensor(input) else ("PowBackward2", 0)


def _pow_exponent_type(dt):
    # PyTorch's float and double pow kernels take a number exponent as a double
    return D.float64 if dt in (D.float32, D.float64) else dt


@elementwise(
    "cg_pow_{T}(in0, in1)",
    _np_pow,
    grad=(_pow_grad_input, _pow_grad_exponent),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
    domain=(0.1, 4),  # a negative base with a fractional exponent is NaN
    exact=("exponent",),
    scalar_type=_pow_exponent_type,
    shortcut=lambda input, exponent: isinstance(exponent, bool) and is_tensor(input),
    # PyTorch's CPU kernels for a number exponent: products for 2 and 3 (as cg_pow's own
    # shortcuts); for float and double, sqrt for 0.5 and rsqrt for -0.5 (whose -inf and -0
    # differ from pow's)
    variants={2: "(in0 * in0)", 3: "(in0 * in0 * in0)"}
    | {0.5: ("cg_sqrt_{T}(in0)", _np_sqrt, _SQRT_DTYPES)}
    | {-0.5: ("cg_rsqrt_{T}(in0)", _np_rsqrt, _SQRT_DTYPES)},
    nodes=_pow_nodes,
)
def pow(apply, input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """``input ** exponent``; a bool tensor to a Python bool is the tensor itself (``True``) or
    ones (``False``), as PyTorch's exponent-1 and exponent-0 shortcuts (before its kernels'
    dtype dispatch, which takes no bool).

    >>> clgrad.pow(clgrad.tensor([1.0, 2.0, 3.0]), 2)
    tensor([1., 4., 9.])
    >>> clgrad.tensor([True, False]) ** True
    tensor([ True, False])
    """
    if isinstance(exponent, bool) and is_tensor(input) and input.dtype is D.bool_:
        # the kernels take no bool; other dtypes compute x ** 1 and x ** 0 exactly already
        return input.clone() if exponent else input.new_ones(input.shape)
    if (
        is_tensor(input)
        and input.dtype.category < 2  # (integral: a complex base takes any power)
        and isinstance(exponent, (int, np.integer))
        and exponent < 0
    ):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return apply(input, exponent)


def _atan2_recip(input, other):
    # 1 / (input^2 + other^2), 0 where that is 0: the gradient at the origin (or where the
    # squares underflow) is 0, not 0 * inf, as PyTorch's
    squares = input * input + other * other
    zero = squares == 0  # (safe inside too: its own derivatives would be 0 * inf there)
    return where(zero, 0.0, where(zero, 1.0, squares).reciprocal())


@elementwise(
    "atan2(in0, in1)",
    np.arctan2,
    result=floating,
    grad=(
        lambda grad, input, other: grad * other * _atan2_recip(input, other),
        lambda grad, input, other: grad * -input * _atan2_recip(input, other),
    ),
    inplace=True,
)
def atan2(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right quadrant.

    >>> clgrad.atan2(clgrad.tensor([1.0, -1.0]), clgrad.tensor([-1.0, -1.0]))
    tensor([ 2.3562, -2.3562])
    """
    _require_tensors("atan2", input, other)
    return apply(input, other)


@elementwise(
    "((in0 != in0 || in0 > in1) ? in0 : in1)",
    np.maximum,
    grad=(
        lambda grad, input, other: _tie_grad(grad, input < other, input, other),
        lambda grad, input, other: _tie_grad(grad, input > other, input, other),
    ),
)
def maximum(apply, input: Tensor, other: Tensor) -> Tensor:
    """The larger of two tensors, elementwise (NaN wins; ties share the gradient).

    >>> clgrad.maximum(clgrad.tensor([1, 5]), clgrad.tensor([3, 2]))
    tensor([3, 5])
    """
    _require_tensors("maximum", input, other)
    return apply(input, other)


@elementwise(
    "((in0 != in0 || in0 < in1) ? in0 : in1)",
    np.minimum,
    grad=(
        lambda grad, input, other: _tie_grad(grad, input > other, input, other),
        lambda grad, input, other: _tie_grad(grad, input < other, input, other),
    ),
)
def minimum(apply, input: Tensor, other: Tensor) -> Tensor:
    """The smaller of two tensors, elementwise (NaN wins; ties share the gradient).

    >>> clgrad.minimum(clgrad.tensor([1, 5]), clgrad.tensor([3, 2]))
    tensor([1, 2])
    """
    _require_tensors("minimum", input, other)
    return apply(input, other)


def _clamp_grads():
    # PyTorch's clamp_backward_min_max: where min > max the result is max, so its gradient
    # goes to max alone (min's needs min < max, max's takes max < min too)
    def keep(grad, input, min, max):
        return where((input >= min) & (input <= max), grad, 0.0)

    return (
        keep,
        lambda grad, input, min, max: where((input < min) & (min < max), grad, 0.0),
        lambda grad, input, min, max: where((input > max) | (max < min), grad, 0.0),
    )


def _clamp_nodes(input, min, max):
    # PyTorch's overloads: clamp(Tensor, Scalar?, Scalar?) ClampBackward1, whose node has the
    # input's edge alone; clamp(Tensor, Tensor?, Tensor?) the op's own ClampBackward0
    return None if is_tensor(min) or is_tensor(max) else ("ClampBackward1", 1)


def _bool_clamp_by_a_tensor(input, min, max):
    """Whether ``clamp`` of bools has one bound, a tensor: ATen's clamp_min/clamp_max then,
    whose kernels (maximum's, minimum's) take bool."""
    bound = min if max is None else max if min is None else None
    return is_tensor(bound) and D.result_type(input, bound) is D.bool_


@elementwise(
    "((in0 != in0 || in1 != in1 || in2 != in2) ? in0 + in1 + in2 "
    ": ((in0 < in1 ? in1 : in0) > in2 ? in2 : (in0 < in1 ? in1 : in0)))",
    _np_clamp,
    grad=_clamp_grads(),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
    exact=("min", "max"),
    shortcut=lambda input, min=None, max=None: _bool_clamp_by_a_tensor(input, min, max),
    nodes=_clamp_nodes,
)
def clamp(
    apply, input: Tensor, min: Tensor | Number | None = None, max: Tensor | Number | None = None
) -> Tensor:
    """Limits every element to ``[min, max]`` (either bound may be left out; a NaN bound gives
    NaN, as in PyTorch).

    >>> clgrad.clamp(clgrad.tensor([-2.0, 0.5, 3.0]), min=0.0, max=1.0)
    tensor([0.0000, 0.5000, 1.0000])
    >>> clgrad.tensor([1, 5, 9]).clamp(max=6)
    tensor([1, 5, 6])
    """
    return _clamp(apply, input, min, max)


def _clamp(apply, input, min, max):
    """``clamp``'s work, run by ``apply`` (clamp_min and clamp_max pass theirs)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _bool_clamp_by_a_tensor(input, min, max):
        return maximum(input, min) if max is None else minimum(input, max)
    dt = D.result_type(input, *(b for b in (min, max) if b is not None))
    if dt.is_floating_point:
        lowest, highest = -math.inf, math.inf
    else:
        if dt.category == 3:
            raise NotImplementedError("clamp is not supported for complex types")
        info = np.iinfo(dt.np)
        lowest, highest = int(info.min), int(info.max)
    return apply(input, lowest if min is None else min, highest if max is None else max)


def _one_bound(name, input, min, max):
    """clamp_min or clamp_max (``name``), in PyTorch's node of each: ClampMinBackward0 for a
    number bound, ClampMinBackward1 for a tensor, the input's edge and a tensor bound's."""
    ELEMENTWISE["clamp"]._check_operands((input, min, max))
    node = f"{name}Backward{int(is_tensor(min) or is_tensor(max))}"
    return _clamp(_overload("clamp", node, 1), input, min, max)


def clip(input, min=None, max=None):
    """Alias of ``clamp``.

    >>> clgrad.clip(clgrad.tensor([-1.0, 2.0]), 0.0, 1.0)
    tensor([0., 1.])
    """
    return clamp(input, min, max)


def clamp_min(input, min):
    """``clamp(input, min=min)``.

    >>> clgrad.clamp_min(clgrad.tensor([-1.0, 2.0]), 0.0)
    tensor([0., 2.])
    """
    return _one_bound("ClampMin", input, min, None)


def clamp_max(input, max):
    """``clamp(input, max=max)``.

    >>> clgrad.clamp_max(clgrad.tensor([-1.0, 2.0]), 0.0)
    tensor([-1.,  0.])
    """
    return _one_bound("ClampMax", input, None, max)


# ---- unary math -------------------------------------------------------------------------------
def _float_unary(
    name, expr, numpy, grad, doc_in, doc_out, domain=None, inplace=True, dtypes=ALL_DTYPES
):
    """Declares a float-result unary op whose docstring example is ``name(doc_in)``."""

    def body(apply, input: Tensor) -> Tensor:
        return apply(input)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = (
        f"``{name}`` of every element (integer inputs give floats).\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor({doc_in}))\n    {doc_out}\n    "
    )
    return elementwise(
        expr, numpy, result=floating, grad=grad, inplace=inplace, domain=domain, dtypes=dtypes
    )(body)


exp = _float_unary(
    "exp", "cg_exp_{T}(in0)", np.exp, lambda grad, result: grad * result, "[0.0, 1.0]",
    "tensor([1.0000, 2.7183])",
)  # fmt: skip
log = _float_unary(
    "log", "cg_log_{T}(in0)", np.log, lambda grad, input: grad / input, "[1.0, 2.0]",
    "tensor([0.0000, 0.6931])", domain=(0.1, 4),
)  # fmt: skip
log1p = _float_unary(
    "log1p", "cg_log1p_{T}(in0)", np.log1p, lambda grad, input: grad / (input + 1), "[0.0, 1.0]",
    "tensor([0.0000, 0.6931])", domain=(-0.9, 4),
)  # fmt: skip
expm1 = _float_unary(
    "expm1", "cg_expm1_{T}(in0)", np.expm1, lambda grad, result: grad * (result + 1), "[0.0, 1.0]",
    "tensor([0.0000, 1.7183])",
)  # fmt: skip
sqrt = _float_unary(
    "sqrt", "cg_sqrt_{T}(in0)", np.sqrt, lambda grad, result: grad / (2 * result), "[4.0, 9.0]",
    "tensor([2., 3.])", domain=(0.1, 4),
)  # fmt: skip
# its gradient reads the result, as PyTorch's (which refuses it written in place before backward)
reciprocal = _float_unary(
    "reciprocal", "(({T})1 / in0)", lambda a: 1 / a,
    lambda grad, result: -grad * result * result, "[2.0, 4.0]", "tensor([0.5000, 0.2500])",
    domain=(0.1, 4),
)  # fmt: skip
rsqrt = _float_unary(
    "rsqrt", "cg_rsqrt_{T}(in0)", lambda a: 1 / np.sqrt(a),
    lambda grad, result: -0.5 * grad * result * result * result, "[4.0, 0.25]",
    "tensor([0.5000, 2.0000])", domain=(0.1, 4),
)  # fmt: skip
sin = _float_unary(
    "sin", "sin(in0)", np.sin, lambda grad, input: grad * input.cos(), "[0.0, 1.5708]",
    "tensor([0., 1.])",
)  # fmt: skip
cos = _float_unary(
    "cos", "cos(in0)", np.cos, lambda grad, input: -grad * input.sin(), "[0.0, 3.1416]",
    "tensor([ 1., -1.])",
)  # fmt: skip
tanh = _float_unary(
    "tanh", "cg_tanh_{T}(in0)", np.tanh, lambda grad, result: grad * (1 - result * result),
    "[0.0, 1.0]", "tensor([0.0000, 0.7616])",
)  # fmt: skip
sigmoid = _float_unary(
    "sigmoid", "cg_sigmoid_{T}(in0)", _np_sigmoid,
    lambda grad, result: grad * result * (1 - result), "[0.0, 2.0]", "tensor([0.5000, 0.8808])",
)  # fmt: skip
erf = _float_unary(
    "erf", "cg_erf_{T}(in0)", _np_erf,
    lambda grad, input: grad * (2 / math.sqrt(math.pi)) * (-(input * input)).exp(),
    "[0.0, 1.0]", "tensor([0.0000, 0.8427])",
)  # fmt: skip


def _gelu_grad(grad, input):
    cdf = 0.5 * (input * (-1 / math.sqrt(2))).erfc()  # (1 + erf(x / sqrt 2)) / 2, no cancellation
    pdf = (-(input * input) * 0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + input * pdf)


@elementwise(
    "cg_gelu_{T}(in0)",
    lambda a: 0.5 * a * _np_erfc(a * -np.sqrt(0.5)),
    result=floating,
    grad=_gelu_grad,
    dtypes=FLOAT_DTYPES,
)
def gelu(apply, input: Tensor, *, approximate: str = "none") -> Tensor:
    """The Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the standard normal CDF), or
    its tanh approximation with ``approximate="tanh"``; floating tensors only, as PyTorch.

    >>> clgrad.gelu(clgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8413])
    >>> clgrad.gelu(clgrad.tensor([1.0]), approximate="tanh")
    tensor([0.8412])
    """
    if approximate == "tanh":
        # 0.5 * (1 + tanh(u)) == sigmoid(2u): the same function without 1 - tanh(u)**2 in the
        # gradient, which a tanh that stops one ulp short of 1 (PoCL's, for u > 9) makes
        # about x**3 * 1e-7 instead of 0
        c = 2 * _SQRT_2_OVER_PI
        return input * (c * (input + 0.044715 * input * input * input)).sigmoid()
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return apply(input)


silu = _float_unary(
    "silu", "in0 * cg_sigmoid_{T}(in0)", lambda a: a * _np_sigmoid(a),
    lambda grad, input: grad * (input.sigmoid() * (1 + input * (1 - input.sigmoid()))),
    "[0.0, 1.0]", "tensor([0.0000, 0.7311])", inplace=False, dtypes=FLOAT_DTYPES,
)  # fmt: skip


@elementwise(
    "cg_softplus_{T}(in0)",
    lambda a: np.where(a > 20, a, np.log1p(np.exp(np.minimum(a, 20)))),
    result=floating,
    grad=lambda grad, input: grad * input.sigmoid(),
    dtypes=FLOAT_DTYPES,
)
def softplus(apply, input: Tensor, *, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``;
    floating tensors only, as PyTorch.

    >>> clgrad.softplus(clgrad.tensor([0.0, 1.0]))
    tensor([0.6931, 1.3133])
    >>> clgrad.softplus(clgrad.tensor([0.0, 4.0]), beta=2.0, threshold=3.0)
    tensor([0.3466, 4.0000])
    """
    if beta == 1.0 and threshold == 20.0:  # the kernel's own constants
        return apply(input)
    return where(input * beta > threshold, input, apply(input * beta) / beta)


@elementwise(
    "((in0 > 0 || in0 != in0) ? in0 : ({T})0)",
    lambda a: np.where((a > 0) | (a != a), a, np.zeros_like(a)),
    # PyTorch's threshold_backward: the gradient passes unless result <= 0 (so it does at NaN)
    grad=lambda grad, result: where(result <= 0, 0.0, grad),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
    refuse="Boolean inputs not supported for relu",
    out=False,
)
def relu(apply, input: Tensor) -> Tensor:
    """``max(input, 0)`` elementwise.

    >>> clgrad.relu(clgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return apply(input)


@elementwise(
    "(in0 < 0 ? -in0 : in0)",
    np.abs,
    grad=lambda grad, input: grad * input.sign(),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
)
def abs(apply, input: Tensor) -> Tensor:
    """``|input|`` elementwise.

    >>> clgrad.abs(clgrad.tensor([-1, 2]))
    tensor([1, 2])
    """
    return apply(input)


@elementwise("-in0", np.negative, grad=lambda grad: -grad, inplace=True)
def neg(apply, input: Tensor) -> Tensor:
    """``-input``.

    >>> clgrad.neg(clgrad.tensor([1.0, -2.0]))
    tensor([-1.,  2.])
    """
    if input.dtype is D.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return apply(input)


@elementwise(
    "(({T})(in0 > 0) - ({T})(in0 < 0))",
    lambda a: np.where(a > 0, 1, 0) - np.where(a < 0, 1, 0),
    grad=_zero_grad,
    inplace=True,
)
def sign(apply, input: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element (0 for NaN, as PyTorch).

    >>> clgrad.sign(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    return apply(input)


def _rounding(name, expr, numpy, example_out):
    def body(apply, input: Tensor) -> Tensor:
        # an integer tensor is already whole: a copy of it, as in PyTorch
        return apply(input) if input.dtype.is_floating_point else input.clone()

    body.__name__ = body.__qualname__ = name
    body.__doc__ = (
        f"``{name}`` of every element; integer tensors come back unchanged.\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor([-1.5, 0.5, 2.7]))\n    {example_out}\n    "
    )
    # integer tensors come back unchanged (a copy); bool is not taken, as in PyTorch
    return elementwise(expr, numpy, grad=_zero_grad, inplace=True, dtypes=NUMERIC_DTYPES)(body)


floor = _rounding("floor", "cg_floor_{T}(in0)", np.floor, "tensor([-2.,  0.,  2.])")
ceil = _rounding("ceil", "cg_ceil_{T}(in0)", np.ceil, "tensor([-1.,  1.,  3.])")
trunc = _rounding("trunc", "cg_trunc_{T}(in0)", np.trunc, "tensor([-1.,  0.,  2.])")


@elementwise("cg_rint_{T}(in0)", np.round, grad=_zero_grad, inplace=True, dtypes=NUMERIC_DTYPES)
def round(apply, input: Tensor, *, decimals: int | None = None) -> Tensor:
    """Rounds half to even, to ``decimals`` places (floating tensors only when ``decimals``
    is given, as PyTorch: its rounding to places has no integer kernel).

    >>> clgrad.round(clgrad.tensor([0.5, 1.5, 2.25]))
    tensor([0., 2., 2.])
    >>> clgrad.round(clgrad.tensor([2.25]), decimals=1)
    tensor([2.2000])
    """
    if not input.dtype.is_floating_point:
        if decimals is not None:
            raise NotImplementedError(
                f"\"round\" not implemented for '{SCALAR_TYPE_NAMES[input.dtype.name]}'"
            )
        return input.clone()
    if not decimals:
        return apply(input)
    scale = 10.0**decimals
    return round(input * scale) / scale


# ---- predicates and logic (no gradient) ---------------------------------------------------
def _float_predicate(dt):
    return D.bool_, D.to_float(dt)


@elementwise("(in0 != in0)", np.isnan, result=predicate, out=False)
def isnan(apply, input: Tensor) -> Tensor:
    """Which elements are NaN.

    >>> clgrad.isnan(clgrad.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """
    return apply(input)


@elementwise("(in0 == INFINITY || in0 == -INFINITY)", np.isinf, result=_float_predicate, out=False)
def isinf(apply, input: Tensor) -> Tensor:
    """Which elements are +-infinity.

    >>> clgrad.isinf(clgrad.tensor([1.0, float("-inf")]))
    tensor([False,  True])
    """
    return apply(input)


@elementwise(
    "(in0 == in0 && in0 != INFINITY && in0 != -INFINITY)",
    np.isfinite,
    result=_float_predicate,
    out=False,
)
def isfinite(apply, input: Tensor) -> Tensor:
    """Which elements are neither infinite nor NaN.

    >>> clgrad.isfinite(clgrad.tensor([1.0, float("inf"), float("nan")]))
    tensor([ True, False, False])
    """
    return apply(input)


def _comparison(name, expr, numpy, symbol):
    def body(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
        return apply(input, other)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = (
        f"``input {symbol} other`` elementwise, as a bool tensor.\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor([1, 2, 3]), 2)\n"
        f"    tensor({numpy(np.array([1, 2, 3]), 2).tolist()})\n    "
    ).replace("True", " True")
    return elementwise(expr, numpy, result=predicate)(body)


eq = _comparison("eq", "(in0 == in1)", np.equal, "==")
ne = _comparison("ne", "(in0 != in1)", np.not_equal, "!=")
lt = _comparison("lt", "(in0 < in1)", np.less, "<")
le = _comparison("le", "(in0 <= in1)", np.less_equal, "<=")
gt = _comparison("gt", "(in0 > in1)", np.greater, ">")
ge = _comparison("ge", "(in0 >= in1)", np.greater_equal, ">=")


def _bitwise(name, expr, numpy, symbol, example):
    def body(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
        return apply(input, other)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = (
        f"``input {symbol} other`` for bool and integer tensors.\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor([12]), clgrad.tensor([10]))\n"
        f"    tensor([{example}])\n    "
    )
    return elementwise(expr, numpy, result=integral, inplace=True, dtypes=INTEGRAL_DTYPES)(body)


bitwise_and = _bitwise("bitwise_and", "(in0 & in1)", np.bitwise_and, "&", 8)
bitwise_or = _bitwise("bitwise_or", "(in0 | in1)", np.bitwise_or, "|", 14)
bitwise_xor = _bitwise("bitwise_xor", "(in0 ^ in1)", np.bitwise_xor, "^", 6)


@elementwise("(~in0)", np.invert, result=integral, inplace=True, dtypes=INTEGRAL_DTYPES)
def bitwise_not(apply, input: Tensor) -> Tensor:
    """``~input``: bitwise NOT of integers, logical NOT of bools.

    >>> clgrad.bitwise_not(clgrad.tensor([0, 5]))
    tensor([-1, -6])
    """
    if input.dtype is D.bool_:
        return logical_not(input)
    return apply(input)


@elementwise("(!in0)", np.logical_not, result=predicate)
def logical_not(apply, input: Tensor) -> Tensor:
    """``not input`` elementwise, as a bool tensor.

    >>> clgrad.logical_not(clgrad.tensor([0, 2]))
    tensor([ True, False])
    """
    return apply(input)


# ---- selection --------------------------------------------------------------------------------
@elementwise(
    "(in0 ? in1 : in2)",
    np.where,
    mask_first=True,
    # a number the result's dtype cannot hold raises, as PyTorch's; float16's is not checked
    # there (where(mask, half_scores, -3.4e38) masks with -inf)
    exact=("input", "other"),
    scalar_type=lambda dt: D.float64 if dt is D.float16 else dt,
    grad=(
        None,
        lambda grad, condition: where(condition, grad, 0.0),
        lambda grad, condition: where(condition, 0.0, grad),
    ),
)
def where(
    apply,
    condition: Tensor,
    input: Tensor | Number | None = None,
    other: Tensor | Number | None = None,
) -> Tensor | tuple[Tensor, ...]:
    """``input`` where ``condition`` holds, else ``other``; ``where(condition)`` alone gives
    the indices of the true elements (``nonzero(as_tuple=True)``).

    >>> clgrad.where(clgrad.tensor([True, False]), clgrad.tensor([1, 2]), 0)
    tensor([1, 0])
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    if condition.dtype is D.uint8:  # deprecated in PyTorch, still a mask
        condition = condition != 0
    if condition.dtype is not D.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{SCALAR_TYPE_NAMES[condition.dtype.name]}"
        )
    return apply(condition, input, other)


# ---- casts ------------------------------------------------------------------------------------
class Cast(Function):
    """A copy converted to another dtype; the gradient is converted back."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dt):
        ctx.dtype = x.dtype
        return launch(COPY, [x], dt, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return (g.to(ctx.dtype) if ctx.dtype.is_floating_point else None), None


def cast(x, dt):
    """``x`` converted to dtype ``dt`` (``x`` itself when it already has it)."""
    dt = D.as_dtype(dt)
    if dt is x.dtype:
        return x
    if dt.category == 3 or x.dtype.category == 3:
        return COMPLEX_HOOKS["cast"](x, dt)
    return Cast.apply(x, dt)


def square(input):
    """``input ** 2``, as PyTorch defines it (a bool tensor gives int64).

    >>> clgrad.square(clgrad.tensor([2, 3]))
    tensor([4, 9])
    >>> clgrad.square(clgrad.tensor([True, False]))
    tensor([1, 0])
    """
    return pow(input, 2)


# ---- trigonometric, hyperbolic, logarithms and powers ------------------------------------------
_PI = math.pi
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _np_erfc(x):
    return _erfc(x).astype(np.result_type(x, np.float32))


def _np_sinc(a):
    with np.errstate(all="ignore"):
        p = a * np.asarray(_PI, a.dtype)
        return np.where(a == 0, np.ones_like(a), np.sin(p) / p)


tan = _float_unary(
    "tan", "tan(in0)", np.tan, lambda grad, result: grad * (1 + result * result),
    "[0.0, 0.5]", "tensor([0.0000, 0.5463])", domain=(-1.2, 1.2),
)  # fmt: skip
asin = _float_unary(
    "asin", "asin(in0)", np.arcsin, lambda grad, input: grad / (1 - input * input).sqrt(),
    "[0.0, 1.0]", "tensor([0.0000, 1.5708])", domain=(-0.9, 0.9),
)  # fmt: skip
acos = _float_unary(
    "acos", "acos(in0)", np.arccos, lambda grad, input: -grad / (1 - input * input).sqrt(),
    "[1.0, 0.0]", "tensor([0.0000, 1.5708])", domain=(-0.9, 0.9),
)  # fmt: skip
atan = _float_unary(
    "atan", "atan(in0)", np.arctan, lambda grad, input: grad / (1 + input * input),
    "[0.0, 1.0]", "tensor([0.0000, 0.7854])",
)  # fmt: skip
sinh = _float_unary(
    "sinh", "sinh(in0)", np.sinh, lambda grad, input: grad * input.cosh(), "[0.0, 1.0]",
    "tensor([0.0000, 1.1752])",
)  # fmt: skip
cosh = _float_unary(
    "cosh", "cosh(in0)", np.cosh, lambda grad, input: grad * input.sinh(), "[0.0, 1.0]",
    "tensor([1.0000, 1.5431])",
)  # fmt: skip
asinh = _float_unary(
    "asinh", "asinh(in0)", np.arcsinh, lambda grad, input: grad / (input * input + 1).sqrt(),
    "[0.0, 1.0]", "tensor([0.0000, 0.8814])",
)  # fmt: skip
acosh = _float_unary(
    "acosh", "acosh(in0)", np.arccosh, lambda grad, input: grad / (input * input - 1).sqrt(),
    "[1.0, 2.0]", "tensor([0.0000, 1.3170])", domain=(1.1, 4),
)  # fmt: skip
atanh = _float_unary(
    "atanh", "atanh(in0)", np.arctanh, lambda grad, input: grad / (1 - input * input),
    "[0.0, 0.5]", "tensor([0.0000, 0.5493])", domain=(-0.9, 0.9),
)  # fmt: skip
# the factor rounded to the compute type first, as PyTorch multiplies by it
deg2rad = _float_unary(
    "deg2rad", "(in0 * ({T})0.017453292519943295)",
    lambda a: a * np.asarray(_PI / 180, a.dtype), lambda grad: grad * (_PI / 180),
    "[180.0, 90.0]", "tensor([3.1416, 1.5708])",
)  # fmt: skip
rad2deg = _float_unary(
    "rad2deg", "(in0 * ({T})57.295779513082320876)",
    lambda a: a * np.asarray(180 / _PI, a.dtype), lambda grad: grad * (180 / _PI),
    "[3.0, 1.0]", "tensor([171.8873,  57.2958])",
)  # fmt: skip
# a real number's angle: pi below zero, 0 elsewhere (+inf and -0.0 too), NaN kept
angle = _float_unary(
    "angle", "(in0 != in0 ? in0 : (in0 < 0 ? ({T})3.14159265358979323846 : ({T})0))",
    lambda a: np.where(np.isnan(a), a, np.where(a < 0, np.asarray(_PI, a.dtype), 0)),
    _zero_grad, "[-1.0, 2.0]", "tensor([3.1416, 0.0000])", inplace=False,
)  # fmt: skip
log2 = _float_unary(
    "log2", "cg_log2_{T}(in0)", np.log2, lambda grad, input: grad / (input * math.log(2)),
    "[1.0, 8.0]", "tensor([0., 3.])", domain=(0.1, 4),
)  # fmt: skip
log10 = _float_unary(
    "log10", "log10(in0)", np.log10, lambda grad, input: grad / (input * math.log(10)),
    "[1.0, 0.5]", "tensor([ 0.0000, -0.3010])", domain=(0.1, 4),
)  # fmt: skip
exp2 = _float_unary(
    "exp2", "cg_exp2_{T}(in0)", np.exp2, lambda grad, result: grad * result * math.log(2),
    "[0.0, 3.0]", "tensor([1., 8.])",
)  # fmt: skip
erfc = _float_unary(
    "erfc", "cg_erfc_{T}(in0)", _np_erfc,
    lambda grad, input: grad * (-2 / math.sqrt(math.pi)) * (-(input * input)).exp(),
    "[0.0, 1.0]", "tensor([1.0000, 0.1573])",
)  # fmt: skip
sinc = _float_unary(
    "sinc", "(in0 == 0 ? ({T})1 : sin(({T})3.14159265358979323846 * in0) "
    "/ (({T})3.14159265358979323846 * in0))", _np_sinc,
    # 0 wherever x*x underflows to 0 (not only at 0): 0/0 there, as torch's gradient is not
    lambda grad, input: grad * where(
        input * input == 0, 0.0,
        ((_PI * input) * (_PI * input).cos() - (_PI * input).sin()) / (_PI * input * input),
    ),
    "[0.0, 0.5]", "tensor([1.0000, 0.6366])",
)  # fmt: skip


@elementwise(
    "(in0 - cg_trunc_{T}(in0))",
    lambda a: a - np.trunc(a),
    grad=lambda grad: grad,
    inplace=True,
    dtypes=FLOAT_DTYPES,
)
def frac(apply, input: Tensor) -> Tensor:
    """The fractional part ``input - trunc(input)`` (with the sign of ``input``); floating
    tensors only, as PyTorch.

    >>> clgrad.frac(clgrad.tensor([1.5, -2.25]))
    tensor([ 0.5000, -0.2500])
    """
    return apply(input)


@elementwise(
    "cg_log_{T}(in0 / (({T})1 - in0))",
    lambda a: np.log(a / (1 - a)),
    result=floating,
    # NaN outside [0, 1], where the function is not real, as PyTorch's logit_backward
    grad=lambda grad, input: where(
        (input < 0) | (input > 1), math.nan, grad / (input * (1 - input))
    ),
    inplace=True,
    domain=(0.05, 0.95),
    scalars=("eps",),  # an option: the body clamps with it
)
def logit(apply, input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given
    (the gradient is then 0 outside, as PyTorch).

    >>> clgrad.logit(clgrad.tensor([0.5, 0.75]))
    tensor([0.0000, 1.0986])
    >>> clgrad.logit(clgrad.tensor([0.0]), eps=0.25)
    tensor([-1.0986])
    """
    if eps is None:
        return apply(input)
    lo = float(eps)
    # a clamped input passes no gradient outside the bounds, as PyTorch's logit_backward
    x = input if input.dtype.is_floating_point else input.to(D.to_float(input.dtype))
    if x is input and input.requires_grad:
        # clamp saves its input for the gradient, and logit_ overwrites this one
        x = input.clone()
    return apply(x.clamp(lo, 1 - lo))


# ---- binary math --------------------------------------------------------------------------------
@elementwise(
    "hypot(in0, in1)",
    np.hypot,
    grad=(
        lambda grad, input, result: grad * input / result,
        lambda grad, other, result: grad * other / result,
    ),
    inplace=True,
    dtypes=FLOAT_DTYPES,
    tensors=("input", "other"),
)
def hypot(apply, input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow in the squares.

    >>> clgrad.hypot(clgrad.tensor([3.0]), clgrad.tensor([4.0]))
    tensor([5.])
    """
    _require_tensors("hypot", input, other)
    return apply(input, other)


@elementwise(
    "cg_logaddexp_{T}(in0, in1)",
    np.logaddexp,
    grad=(
        lambda grad, input, other: grad / (1 + (other - input).exp()),
        lambda grad, input, other: grad / (1 + (input - other).exp()),
    ),
    dtypes=FLOAT_DTYPES,
    tensors=("input", "other"),
)
def logaddexp(apply, input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))``, computed without overflow.

    >>> clgrad.logaddexp(clgrad.tensor([0.0, 1000.0]), clgrad.tensor([0.0, 999.0]))
    tensor([6.9315e-01, 1.0003e+03])
    """
    _require_tensors("logaddexp", input, other)
    return apply(input, other)


@elementwise(
    "cg_logaddexp2_{T}(in0, in1)",
    np.logaddexp2,
    grad=(
        lambda grad, input, other: grad / (1 + exp2(other - input)),
        lambda grad, input, other: grad / (1 + exp2(input - other)),
    ),
    dtypes=FLOAT_DTYPES,
    tensors=("input", "other"),
)
def logaddexp2(apply, input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)``, computed without overflow.

    >>> clgrad.logaddexp2(clgrad.tensor([1.0]), clgrad.tensor([1.0]))
    tensor([2.])
    """
    _require_tensors("logaddexp2", input, other)
    return apply(input, other)


def _np_fmod(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        return np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b)))
    return np.fmod(a, b)


@elementwise(
    "cg_fmod_{T}(in0, in1)",
    _np_fmod,
    grad=(lambda grad: grad, lambda grad, input, other: -grad * div(input, other).trunc()),
    inplace=True,
    dtypes=NUMERIC_DTYPES,
)
def fmod(apply, input: Tensor, other: Tensor | Number) -> Tensor:
    """C's remainder: ``input - trunc(input / other) * other``, with the sign of ``input``
    (``remainder`` takes the sign of ``other``).

    >>> clgrad.fmod(clgrad.tensor([-3, 3]), 2)
    tensor([-1,  1])
    """
    _check_divisor(input, other)
    return apply(input, other)


def _np_xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where(np.isnan(y), y, np.where(x == 0, 0, x * np.log(y)))


@elementwise(
    "(in1 != in1 ? in1 : (in0 == 0 ? ({T})0 : in0 * cg_log_{T}(in1)))",
    _np_xlogy,
    result=floating,
    grad=(
        # PyTorch's: xlogy(grad, other), 0 only where input is 0 and other is not positive
        lambda grad, input, other: where((input == 0) & (other <= 0), 0.0, xlogy(grad, other)),
        lambda grad, input, other: grad * input / other,
    ),
    inplace=True,
    domain=(0.1, 4),  # log of a negative is NaN
)
def xlogy(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * log(other)``, and 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> clgrad.xlogy(clgrad.tensor([0.0, 2.0]), clgrad.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    return apply(input, other)


@elementwise(
    "copysign(in0, in1)",
    np.copysign,
    result=floating,
    grad=(
        lambda grad, input, result: (
            grad * where(input == 0, 0.0, result / where(input == 0, 1.0, input))
        ),
        _zero_grad,
    ),
    inplace=True,
)
def copysign(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (a float result).

    >>> clgrad.copysign(clgrad.tensor([1.0, -2.0]), -1)
    tensor([-1., -2.])
    """
    return apply(input, other)


@elementwise(
    "nextafter(in0, in1)",
    np.nextafter,
    # PyTorch passes the gradient to input unchanged (the step is below its precision)
    grad=(lambda grad: grad, _zero_grad),
    inplace=True,
    # half is computed in float, where the next value is another one: not taken
    dtypes=(D.float32, D.float64),
    tensors=("input", "other"),
)
def nextafter(apply, input: Tensor, other: Tensor) -> Tensor:
    """The next representable value after ``input`` toward ``other``.

    >>> clgrad.nextafter(clgrad.tensor([1.0]), clgrad.tensor([2.0])) - 1
    tensor([1.1921e-07])
    """
    _require_tensors("nextafter", input, other)
    return apply(input, other)


def _np_heaviside(a, b):
    return np.where(a == 0, b, (a > 0).astype(np.result_type(a, b)))


def _no_heaviside_derivative(grad):
    # PyTorch records the node and refuses at backward: it has no formula
    raise RuntimeError("derivative for aten::heaviside is not implemented")


@elementwise(
    "(in0 == 0 ? in1 : ({T})(in0 > 0))",
    _np_heaviside,
    grad=(_no_heaviside_derivative, _no_heaviside_derivative),
    inplace=True,
)
def heaviside(apply, input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where ``input < 0`` (and NaN), 1 where ``input > 0``, ``values``
    where it is 0; both tensors of one dtype, as PyTorch.

    >>> clgrad.heaviside(clgrad.tensor([-1.0, 0.0, 2.0]), clgrad.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    _require_tensors("heaviside", input, values)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return apply(input, values)


def _fmax_fmin(name, expr, numpy, keep_input):
    def body(apply, input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(name, input, other)
        return apply(input, other)

    def first(grad, input, other):
        return where(keep_input(input, other) | other.isnan(), grad, 0.0)

    def second(grad, input, other):
        return where(keep_input(input, other) | other.isnan(), 0.0, grad)

    body.__name__ = body.__qualname__ = name
    example = numpy(np.array([1.0, np.nan, 4.0]), np.array([2.0, 3.0, np.nan])).tolist()
    body.__doc__ = (
        f"The {'larger' if name == 'fmax' else 'smaller'} of two tensors elementwise, ignoring "
        f"NaN (NaN only where both are).\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor([1.0, float('nan'), 4.0]), "
        f"clgrad.tensor([2.0, 3.0, float('nan')]))\n"
        f"    tensor([{', '.join(f'{v:g}.' for v in example)}])\n    "
    )
    # ties and a NaN ``other`` give the gradient to ``input``, as PyTorch
    return elementwise(expr, numpy, grad=(first, second))(body)


fmax = _fmax_fmin(
    "fmax", "((in1 != in1 || in0 >= in1) && !(in0 != in0) ? in0 : in1)", np.fmax,
    lambda input, other: input >= other,
)  # fmt: skip
fmin = _fmax_fmin(
    "fmin", "((in1 != in1 || in0 <= in1) && !(in0 != in0) ? in0 : in1)", np.fmin,
    lambda input, other: input <= other,
)  # fmt: skip


def _np_lerp(a, b, w):
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _lerp_dtypes(input, end, weight, out=None) -> None:
    """ATen's lerp: ``end`` (and a ``weight`` tensor of any dims) of ``input``'s dtype; the
    tensors' common dtype (a 0-d weight promotes as 0-d tensors do: int64 tensors with a float64
    one lerp in float64) castable into ``out``, then one its kernels take (floating). A number
    weight takes no part: an int tensor is not made float by 0.5 (NotImplementedError, not in
    place "can't be cast")."""
    for what, x in (("end", end), ("weight", weight)):
        if is_tensor(x) and x.dtype is not input.dtype and (what == "end" or x.ndim):
            raise RuntimeError(
                f"expected dtype {TYPE_META_NAMES[input.dtype.name]} for `{what}` but got dtype "
                f"{TYPE_META_NAMES[x.dtype.name]}"
            )
    tensors = (input, end, weight) if is_tensor(weight) else (input, end)
    common = D.result_type(*tensors)
    if out is not None:
        check_cast(common, out.dtype)
    if common.category < 2:  # (complex lerps too: ops/complex.py)
        kernel = "lerp_kernel_tensor" if is_tensor(weight) else "lerp_kernel_scalar"
        name = SCALAR_TYPE_NAMES[common.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


@elementwise(
    # PyTorch's two-sided form: exact at weight 0 and at weight 1
    "((in2 < ({T})0.5 && in2 > ({T})-0.5) ? in0 + in2 * (in1 - in0)"
    " : in1 - (in1 - in0) * (({T})1 - in2))",
    _np_lerp,
    grad=(
        lambda grad, weight: grad * (1 - weight),
        lambda grad, weight: grad * weight,
        lambda grad, input, end: grad * (end - input),
    ),
    inplace=True,
    dtypes=FLOAT_DTYPES,
    tensors=("input", "end"),
    dtype_check=_lerp_dtypes,
)
def lerp(apply, input: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    """``input + weight * (end - input)``; ``end`` (and a tensor ``weight``) of ``input``'s
    dtype, as PyTorch.

    >>> clgrad.lerp(clgrad.tensor([0.0, 10.0]), clgrad.tensor([10.0, 20.0]), 0.5)
    tensor([ 5., 15.])
    """
    return apply(input, end, weight)


def _float_power_operands(input, exponent):
    """float_power's dtype, complex128 where either operand is complex (a tensor or a number),
    else float64, and the operands in it."""
    is_complex = [
        x.dtype.is_complex
        if is_tensor(x)
        else isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real)
        for x in (input, exponent)
    ]
    dt, number = (D.complex128, complex) if any(is_complex) else (D.float64, float)
    return dt, [x.to(dt) if is_tensor(x) else number(x) for x in (input, exponent)]


def float_power(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """``input ** exponent`` computed in double precision: a float64 result, complex128 where
    either operand is complex.

    >>> clgrad.float_power(clgrad.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=clgrad.float64)
    """
    _, operands = _float_power_operands(input, exponent)
    return pow(*operands)


def float_power_(self: Tensor, exponent: Tensor | Number) -> Tensor:
    """In-place ``float_power``: ``self`` must be of its result dtype (float64, complex128
    where an operand is complex), as PyTorch.

    >>> clgrad.tensor([3.0], dtype=clgrad.float64).float_power_(2)
    tensor([9.], dtype=clgrad.float64)
    """
    dt, (_, exponent) = _float_power_operands(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {SCALAR_TYPE_NAMES[self.dtype.name]} "
            f"but the operation's result requires dtype {SCALAR_TYPE_NAMES[dt.name]}"
        )
    return self.pow_(exponent)


# ---- shifts, logic and predicates ---------------------------------------------------------------
_SHIFT_DTYPES = tuple(d for d in INTEGRAL_DTYPES if d is not D.bool_)


def _np_shift(a, b, left):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    bits = 8 * a.dtype.itemsize
    out = (b < 0) | (b >= bits)
    safe = np.where(out, 0, b).astype(a.dtype)
    if left:
        return np.where(out, 0, np.left_shift(a, safe))
    return np.where(out, np.where(a < 0, -1, 0), np.right_shift(a, safe))


def _shift(name, expr, left, symbol, example):
    def body(apply, input: Tensor | Number, other: Tensor | Number) -> Tensor:
        return apply(input, other)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = (
        f"``input {symbol} other`` for integer tensors; a shift by a negative count or by the "
        f"type's width or more gives {'0' if left else '0 (-1 for a negative input)'}, as "
        f"PyTorch.\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor([-16, 5]), 2)\n    tensor({example})\n    "
    )
    return elementwise(
        expr,
        lambda a, b: _np_shift(a, b, left),
        result=integral,
        inplace=True,
        dtypes=_SHIFT_DTYPES,
    )(body)


# C leaves shifts past the width undefined (and of a negative left operand): the count is
# checked, and a left shift runs on the unsigned bits
bitwise_left_shift = _shift(
    "bitwise_left_shift",
    "((in1 < 0 || in1 >= ({T})(8 * sizeof({T}))) ? ({T})0 : ({T})((ulong)in0 << in1))",
    True, "<<", "[-64,  20]",
)  # fmt: skip
bitwise_right_shift = _shift(
    "bitwise_right_shift",
    "((in1 < 0 || in1 >= ({T})(8 * sizeof({T}))) ? (in0 < 0 ? ({T})-1 : ({T})0) : "
    "({T})(in0 >> in1))",
    False, ">>", "[-4,  1]",
)  # fmt: skip


def _logical(name, expr, numpy, word, example):
    def body(apply, input: Tensor, other: Tensor) -> Tensor:
        _require_tensors(name, input, other)
        return apply(input, other)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = (
        f"``input {word} other`` elementwise (nonzero is true), as a bool tensor.\n\n"
        f"    >>> clgrad.{name}(clgrad.tensor([0, 1, 2]), clgrad.tensor([0, 0, 3]))\n"
        f"    tensor({example})\n    "
    )
    return elementwise(expr, numpy, result=predicate, inplace=True)(body)


logical_and = _logical(
    "logical_and", "((in0 != 0) && (in1 != 0))", np.logical_and, "and",
    "[False, False,  True]",
)  # fmt: skip
logical_or = _logical(
    "logical_or", "((in0 != 0) || (in1 != 0))", np.logical_or, "or", "[False,  True,  True]"
)  # fmt: skip
logical_xor = _logical(
    "logical_xor", "((in0 != 0) != (in1 != 0))", np.logical_xor, "xor",
    "[False,  True, False]",
)  # fmt: skip


@elementwise("(in0 == INFINITY)", np.isposinf, result=_float_predicate)
def isposinf(apply, input: Tensor) -> Tensor:
    """Which elements are +infinity.

    >>> clgrad.isposinf(clgrad.tensor([1.0, float("inf"), float("-inf")]))
    tensor([False,  True, False])
    """
    return apply(input)


@elementwise("(in0 == -INFINITY)", np.isneginf, result=_float_predicate)
def isneginf(apply, input: Tensor) -> Tensor:
    """Which elements are -infinity.

    >>> clgrad.isneginf(clgrad.tensor([1.0, float("inf"), float("-inf")]))
    tensor([False, False,  True])
    """
    return apply(input)


@elementwise("signbit(in0)", np.signbit, result=_float_predicate)
def signbit(apply, input: Tensor) -> Tensor:
    """Which elements have their sign bit set (-0.0 too).

    >>> clgrad.signbit(clgrad.tensor([-1.0, -0.0, 2.0]))
    tensor([ True,  True, False])
    """
    return apply(input)


def isreal(input: Tensor) -> Tensor:
    """Which elements are real: every element of a real tensor, those of a complex one whose
    imaginary part is 0.

    >>> clgrad.isreal(clgrad.tensor([1.0, 2.0]))
    tensor([True, True])
    """
    if input.dtype.category == 3:
        return input.imag == 0
    return Tensor._full(input._shape, True, D.bool_, input.device)


def positive(input: Tensor) -> Tensor:
    """``input`` itself (``+input``); a bool tensor is a RuntimeError, as PyTorch.

    >>> x = clgrad.tensor([1, -2])
    >>> clgrad.positive(x) is x
    True
    """
    if input.dtype is D.bool_:
        raise RuntimeError(
            "The `+` operator, on a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead."
        )
    return input


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` (equal infinities are close, NaN is
    close to NaN with ``equal_nan``); both tensors of one dtype, as PyTorch.

    >>> clgrad.isclose(clgrad.tensor([1.0, 2.0]), clgrad.tensor([1.0 + 1e-7, 2.1]))
    tensor([ True, False])
    """
    _require_tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"{SCALAR_TYPE_NAMES[input.dtype.name]} did not match "
            f"{SCALAR_TYPE_NAMES[other.dtype.name]}"
        )
    if rtol < 0 or atol < 0:
        which, v = ("rtol", rtol) if rtol < 0 else ("atol", atol)
        raise RuntimeError(f"{which} must be greater than or equal to zero, but got {v}")
    close = input == other
    if (input.dtype.is_floating_point or input.dtype.is_complex) and equal_nan:
        close = close | (input.isnan() & other.isnan())
    if input.dtype is D.bool_ or (rtol == 0 and atol == 0):
        return close
    actual = (input - other).abs()
    allowed = atol + (other * rtol).abs()
    return close | (actual.isfinite() & (actual <= allowed))


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element is ``isclose`` (a Python bool).

    >>> clgrad.allclose(clgrad.tensor([1.0, 2.0]), clgrad.tensor([1.0, 2.0 + 1e-6]))
    True
    """
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have one shape and equal elements (a Python bool).

    >>> clgrad.equal(clgrad.tensor([1, 2]), clgrad.tensor([1.0, 2.0]))
    True
    """
    _require_tensors("equal", input, other)
    return input.shape == other.shape and bool((input == other).all())


# other names PyTorch gives these ops (functions, methods and in-place methods)
ALIASES = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "absolute": "abs",
    "sgn": "sign",  # the sign of a real number (PyTorch's sgn differs from sign for complex only)
    "negative": "neg",
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "fix": "trunc",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
}


# ---- compositions PyTorch programs call by name (optimizers' addcmul / addcdiv, ...) -----------
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``sub`` with the operands swapped), like ``torch.rsub``.

    >>> clgrad.rsub(clgrad.tensor([1.0, 2.0]), 5.0)
    tensor([4., 3.])
    """
    return sub(other, input, alpha=alpha)


def _scalar_as(value, dt):
    """PyTorch's ``Scalar.to<dt>()`` of the number ``value``: range checked (RuntimeError), a
    float truncated toward zero for an integer dtype, a complex number taken by a real dtype
    only where its imaginary part is zero (``kernel_scalar``'s exact conversion)."""
    return complex(value) if dt.is_complex else kernel_scalar(value, dt, exact=True)


def _addc(fn, name, input, tensor1, tensor2, value):
    """``fn.apply`` (``Addcmul`` or ``Addcdiv``) after PyTorch's checks: tensors only (its
    TypeError), no bool result (its kernels' NotImplementedError)."""
    operands = (("input", input), ("tensor1", tensor1), ("tensor2", tensor2))
    for position, (arg, x) in enumerate(operands, 1):
        if not is_tensor(x):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(x).__name__}"
            )
    if D.result_type(input, tensor1, tensor2) is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    return fn.apply(input, tensor1, tensor2, value.item() if is_tensor(value) else value)


class _AddcFunction(Function):
    """``input + value * tensor1 <combine> tensor2`` as PyTorch's addcmul and addcdiv kernels
    compute it: every operand converted to the result dtype and computed in it (float16 and
    bfloat16 in float32, rounded once), so a product or quotient the operands' own dtype
    cannot hold (uint8 200 * 200, float16 300 * 300) is not lost before the sum. The
    gradients are PyTorch's formulas, in the operands' own dtypes as there. A subclass
    names the ``combine`` (mul, div), its ``operand_grads`` and which operands they read
    (``saved``): only those are saved, so writing into one that no formula reads afterwards
    is no error at backward, as in PyTorch."""

    @classmethod
    def forward(cls, ctx, input, tensor1, tensor2, value):
        if ctx.recording:
            needs = ctx.needs_input_grad
            operands = enumerate((tensor1, tensor2), 1)
            ctx.save_for_backward(*(t if cls.saved(i, needs) else None for i, t in operands))
        ctx.value = value
        ctx.dtypes = [x.dtype for x in (input, tensor1, tensor2)]
        dt = D.result_type(input, tensor1, tensor2)
        compute = D.accumulation(dt)
        scale = _scalar_as(value, compute)
        self, a, b = (x.to(dt).to(compute) for x in (input, tensor1, tensor2))
        if scale != 1:
            a = a * scale
        return (self + cls.combine(a, b)).to(dt)

    @classmethod
    def backward(cls, ctx, grad):
        tensor1, tensor2 = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grads = [grad if needs[0] else None, *cls.operand_grads(grad, tensor1, tensor2, ctx)]
        # a real operand takes the real part of a complex result's gradient
        grads = [
            g.real if g is not None and g.dtype.is_complex and not dt.is_complex else g
            for g, dt in zip(grads, ctx.dtypes)
        ]
        return (*grads, None)


class Addcmul(_AddcFunction):
    node_name = "AddcmulBackward0"
    combine = staticmethod(mul)

    @staticmethod
    def saved(i, needs):
        return needs[3 - i]  # each operand's gradient reads the other one

    @staticmethod
    def operand_grads(grad, tensor1, tensor2, ctx):
        needs, value = ctx.needs_input_grad, ctx.value
        return (
            grad * (tensor2 * value).conj() if needs[1] else None,
            grad * (tensor1 * value).conj() if needs[2] else None,
        )


class Addcdiv(_AddcFunction):
    node_name = "AddcdivBackward0"
    combine = staticmethod(div)

    @staticmethod
    def saved(i, needs):
        # tensor1's gradient reads tensor2; tensor2's reads both
        return needs[2] if i == 1 else needs[1] or needs[2]

    @staticmethod
    def operand_grads(grad, tensor1, tensor2, ctx):
        needs, value = ctx.needs_input_grad, ctx.value
        return (
            grad * (value / tensor2).conj() if needs[1] else None,
            -grad * (value * tensor1 / (tensor2 * tensor2)).conj() if needs[2] else None,
        )


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, broadcast, like ``torch.addcmul``: computed in
    the result dtype of the three tensors (float16's in float32).

    >>> clgrad.addcmul(clgrad.tensor([1.0]), clgrad.tensor([2.0]), clgrad.tensor([3.0]), value=0.5)
    tensor([4.])
    """
    return _addc(Addcmul, "addcmul", input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``, broadcast, like ``torch.addcdiv`` (integer or
    bool ``tensor1`` and ``tensor2`` together are refused, as there): computed in the result
    dtype of the three tensors (float16's in float32).

    >>> clgrad.addcdiv(clgrad.tensor([1.0]), clgrad.tensor([3.0]), clgrad.tensor([2.0]), value=2)
    tensor([4.])
    """
    if all(is_tensor(t) and t.dtype.category < 2 for t in (tensor1, tensor2)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    return _addc(Addcdiv, "addcdiv", input, tensor1, tensor2, value)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``input`` with NaN replaced by ``nan`` and infinities by ``posinf`` / ``neginf`` (by
    default the dtype's largest and lowest finite values), like ``torch.nan_to_num``; the
    gradient flows where ``input`` is finite.

    >>> clgrad.nan_to_num(clgrad.tensor([float("nan"), 1.0, float("inf")]), posinf=9.0)
    tensor([0., 1., 9.])
    """
    if input.dtype.category == 3:  # each part on its own, as PyTorch's
        parts = [nan_to_num(p, nan, posinf, neginf) for p in (input.real, input.imag)]
        return parts[0] + parts[1] * 1j
    if not input.dtype.is_floating_point:
        return input.clone()
    info, dt = D.finfo(input.dtype), input.dtype
    # a replacement past the dtype's range becomes its infinity, as PyTorch casts it
    posinf = info.max if posinf is None else D.held(posinf, dt)
    neginf = info.min if neginf is None else D.held(neginf, dt)
    nan = D.held(nan, dt)
    out = where(isnan(input), nan, where(isposinf(input), posinf, input))
    return where(isneginf(input), neginf, out).to(input.dtype)
