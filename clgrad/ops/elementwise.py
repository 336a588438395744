"""Elementwise ops with broadcasting and PyTorch's type promotion, and their gradients.

Each gradient is written with Tensor ops, so it is itself differentiable.
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..autograd.function import Function
from .core import is_tensor, launch, sum_to


def _meta(x):
    """What a gradient needs of an input: its shape and dtype (None for a number). Keeping
    this instead of the tensor lets the input be freed while the graph lives on."""
    return (x.shape, x.dtype) if is_tensor(x) else None


def _numbers(*xs):
    return tuple(None if is_tensor(x) else x for x in xs)


def _grad_for(x, g):
    """``g`` reduced to the shape and dtype of input ``x`` (a tensor or its ``_meta``)."""
    if is_tensor(x):
        x = _meta(x)
    if not isinstance(x, tuple):
        return None
    shape, dt = x
    g = sum_to(g, shape)
    return g if g.dtype is dt else g.to(dt)


# ---- binary arithmetic -----------------------------------------------------------------------
def _arith(op, a, b, out=None):
    dt = D.result_type(a, b)
    if out is not None:
        _check_cast(dt, out.dtype, op)
    return launch(op, [a, b], dt if out is None else out.dtype, dt, out=out)


def _check_cast(dt, out_dt, op):
    if out_dt.category < dt.category:
        raise RuntimeError(
            f"result type {dt.name} can't be cast to the desired output type {out_dt.name} ({op})"
        )


def _linear(ctx, op, a, b):
    """a + b or a - b: the gradient needs only the inputs' shapes and dtypes."""
    if ctx.recording:
        ctx.inputs = (_meta(a), _meta(b))
    return _arith(op, a, b)


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return _linear(ctx, "add", a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return _grad_for(a, g), _grad_for(b, g)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        return _linear(ctx, "sub", a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return _grad_for(a, g), _grad_for(b, -g) if b is not None else None


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if is_tensor(a) else None, b if is_tensor(b) else None)
        ctx.numbers = _numbers(a, b)
        return _arith("mul", a, b)

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.saved_tensors
        a = sa if sa is not None else ctx.numbers[0]
        b = sb if sb is not None else ctx.numbers[1]
        return (
            _grad_for(a, g * b) if ctx.needs_input_grad[0] else None,
            _grad_for(b, g * a) if ctx.needs_input_grad[1] else None,
        )


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if is_tensor(a) else None, b if is_tensor(b) else None)
        ctx.numbers = _numbers(a, b)
        dt = D.to_float(D.result_type(a, b))
        return launch("div", [a, b], dt, dt)

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.saved_tensors
        a = sa if sa is not None else ctx.numbers[0]
        b = sb if sb is not None else ctx.numbers[1]
        return (
            _grad_for(a, g / b) if ctx.needs_input_grad[0] else None,
            _grad_for(b, -g * a / (b * b)) if ctx.needs_input_grad[1] else None,
        )


class Pow(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if is_tensor(a) else None, b if is_tensor(b) else None)
        ctx.numbers = _numbers(a, b)
        out = _arith("pow", a, b)
        return out

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.saved_tensors
        a = sa if sa is not None else ctx.numbers[0]
        b = sb if sb is not None else ctx.numbers[1]
        ga = gb = None
        if ctx.needs_input_grad[0]:
            # b * a^(b-1), taken as 0 where b == 0 (PyTorch's convention, also at a == 0)
            if is_tensor(b):
                ga = where(b == 0, 0.0, g * b * a ** (b - 1))
            else:
                ga = g * 0 if b == 0 else g * b * a ** (b - 1)
            ga = _grad_for(a, ga)
        if ctx.needs_input_grad[1]:
            # a^b log a, taken as 0 where a == 0 and b >= 0
            if is_tensor(a):
                gb = where((a == 0) & (b >= 0), 0.0, g * a**b * a.log())
            else:
                gb = g * a**b * (math.log(a) if a > 0 else float("nan") if a < 0 else 0.0)
            gb = _grad_for(b, gb)
        return ga, gb


def floor_divide(a, b):
    return _arith("floordiv", a, b)


def remainder(a, b):
    return _arith("mod", a, b)


def true_divide(a, b):
    return Div.apply(a, b)


def add(a, b, alpha=1):
    return Add.apply(a, b if alpha == 1 else b * alpha)


def sub(a, b, alpha=1):
    return Sub.apply(a, b if alpha == 1 else b * alpha)


def mul(a, b):
    return Mul.apply(a, b)


def div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return Div.apply(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        q = Div.apply(a, b)
        return q.trunc().to(D.result_type(a, b))
    raise ValueError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
        f"found '{rounding_mode}'"
    )


def pow(a, b):
    return Pow.apply(a, b)


# ---- unary -----------------------------------------------------------------------------------
def _unary(op, x, floating=True):
    dt = D.to_float(x.dtype) if floating else x.dtype
    return launch(op, [x], dt, dt)


def _unary_fn(op, grad, saves="input", name=None, floating=True):
    """A Function for ``op`` whose gradient is ``grad(g, x, y)`` (x input, y output)."""

    def forward(ctx, x):
        y = _unary(op, x, floating)
        if grad is not None:
            ctx.save_for_backward(x if saves == "input" else y)
        return y

    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return grad(g, s)

    cls = type(
        name or op.capitalize(),
        (Function,),
        {
            "forward": staticmethod(forward),
            "backward": staticmethod(backward),
            "__module__": __name__,
        },
    )
    return cls


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
Exp = _unary_fn("exp", lambda g, y: g * y, saves="output")
Log = _unary_fn("log", lambda g, x: g / x)
Log1p = _unary_fn("log1p", lambda g, x: g / (x + 1))
Expm1 = _unary_fn("expm1", lambda g, y: g * (y + 1), saves="output")
Sqrt = _unary_fn("sqrt", lambda g, y: g / (2 * y), saves="output")
Rsqrt = _unary_fn("rsqrt", lambda g, y: -0.5 * g * y * y * y, saves="output")
Sin = _unary_fn("sin", lambda g, x: g * x.cos())
Cos = _unary_fn("cos", lambda g, x: -g * x.sin())
Tanh = _unary_fn("tanh", lambda g, y: g * (1 - y * y), saves="output")
Sigmoid = _unary_fn("sigmoid", lambda g, y: g * y * (1 - y), saves="output")
Erf = _unary_fn("erf", lambda g, x: g * (2 / math.sqrt(math.pi)) * (-(x * x)).exp())
Relu = _unary_fn("relu", lambda g, y: g * (y > 0), saves="output", name="Relu", floating=False)
Gelu = _unary_fn(
    "gelu",
    lambda g, x: (
        g
        * (
            0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
            + x * (-(x * x) * 0.5).exp() * (1 / math.sqrt(2 * math.pi))
        )
    ),
    name="Gelu",
)
Silu = _unary_fn("silu", lambda g, x: g * (x.sigmoid() * (1 + x * (1 - x.sigmoid()))), name="Silu")
Softplus = _unary_fn("softplus", lambda g, x: g * x.sigmoid(), name="Softplus")
Abs = _unary_fn("abs", lambda g, x: g * x.sign(), floating=False)
Neg = _unary_fn("neg", lambda g, x: -g, saves="none", floating=False)
Neg.backward = staticmethod(lambda ctx, g: -g)


def _zero_grad_fn(op):
    return _unary_fn(op, lambda g, x: g * 0, floating=False)


Floor, Ceil, Round, Trunc = (_zero_grad_fn(op) for op in ("floor", "ceil", "round", "trunc"))


class Sign(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        op = "sign_float" if x.dtype.is_floating_point else "sign_int"
        return launch(op, [x], x.dtype, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g * 0


def round_(x, decimals=0):
    if decimals == 0:
        return x if not x.dtype.is_floating_point else Round.apply(x)
    scale = 10.0**decimals
    return Round.apply(x * scale) / scale


def neg(x):
    if x.dtype is D.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator "
            "instead."
        )
    return Neg.apply(x)


def _integral_passthrough(cls):
    """floor/ceil/round/trunc of an integer tensor is a copy of it, as in PyTorch."""
    return lambda x: cls.apply(x) if x.dtype.is_floating_point else x.clone()


floor, ceil, trunc = (_integral_passthrough(c) for c in (Floor, Ceil, Trunc))


# ---- comparisons and logic (no gradient) -----------------------------------------------------
def compare(op, a, b):
    return launch(op, [a, b], D.bool_, D.result_type(a, b))


def _bitwise(op, a, b):
    dt = D.result_type(a, b)
    if dt.is_floating_point:
        raise RuntimeError(
            f'"bitwise_{op[3:]}" is only defined for bool and integer tensors, got {dt}'
        )
    return launch(op, [a, b], dt, dt)


def bitwise_and(a, b):
    return _bitwise("bitand", a, b)


def bitwise_or(a, b):
    return _bitwise("bitor", a, b)


def bitwise_xor(a, b):
    return _bitwise("bitxor", a, b)


def bitwise_not(x):
    if x.dtype.is_floating_point:
        raise RuntimeError(
            f"bitwise_not is only defined for bool and integer tensors, got {x.dtype}"
        )
    return launch("lognot" if x.dtype is D.bool_ else "bitnot", [x], x.dtype, x.dtype)


def logical_not(x):
    return launch("lognot", [x], D.bool_, x.dtype)


def isnan(x):
    if not x.dtype.is_floating_point:
        return launch("false", [x], D.bool_, x.dtype)
    return launch("isnan", [x], D.bool_, x.dtype)


def isinf(x):
    if not x.dtype.is_floating_point:
        return launch("false", [x], D.bool_, x.dtype)
    return launch("isinf", [x], D.bool_, x.dtype)


def isfinite(x):
    return logical_not(isnan(x) | isinf(x))


# ---- selection ---------------------------------------------------------------------------------
class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        if ctx.recording:
            ctx.inputs = (_meta(a), _meta(b))
        dt = D.result_type(a, b)
        return launch("where", [cond, a, b], dt, [D.bool_, dt, dt])

    @staticmethod
    def backward(ctx, g):
        (cond,) = ctx.saved_tensors
        a, b = ctx.inputs
        zero = g * 0
        return (
            None,
            _grad_for(a, where(cond, g, zero)) if ctx.needs_input_grad[1] else None,
            _grad_for(b, where(cond, zero, g)) if ctx.needs_input_grad[2] else None,
        )


def where(cond, a=None, b=None):
    if a is None and b is None:
        return cond.nonzero(as_tuple=True)
    if cond.dtype is not D.bool_:
        cond = cond.to(D.bool_)
    return Where.apply(cond, a, b)


class Maximum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _arith("maximum", a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # ties split the gradient evenly, as PyTorch does
        wa = (a > b) + (a == b) * 0.5
        return _grad_for(a, g * wa), _grad_for(b, g * (1 - wa))


class Minimum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _arith("minimum", a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        wa = (a < b) + (a == b) * 0.5
        return _grad_for(a, g * wa), _grad_for(b, g * (1 - wa))


class Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.bounds = (lo, hi)
        dt = D.result_type(x, *(v for v in (lo, hi) if v is not None))
        if lo is not None and hi is not None:
            return launch("clamp", [x, lo, hi], dt, dt)
        if lo is not None:
            return launch("clamp_min", [x, lo], dt, dt)
        return launch("clamp_max", [x, hi], dt, dt)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        keep = None
        if lo is not None:
            keep = x >= lo
        if hi is not None:
            keep = (x <= hi) if keep is None else keep & (x <= hi)
        return g * keep, None, None


def clamp(x, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return Clamp.apply(x, min, max)


# ---- casts -----------------------------------------------------------------------------------
class Cast(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dt):
        ctx.dtype = x.dtype
        return launch("copy", [x], dt, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return (g.to(ctx.dtype) if ctx.dtype.is_floating_point else None), None


def cast(x, dt):
    dt = D.as_dtype(dt)
    return x if dt is x.dtype else Cast.apply(x, dt)
