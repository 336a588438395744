"""Complex tensors: complex64 / complex128 elements are (real, imag) pairs of float32 / float64
stored interleaved, so a complex tensor's real view (``view_as_real``: shape (..., 2), strides
doubled, last stride 1) is an ordinary real tensor over the same storage. Complex math is the
real ops on the parts (no kernel of its own: the fuser fuses the real chains), and autograd
runs through them: for a real loss L, ``z.grad`` is dL/dRe + i dL/dIm, PyTorch's convention.

Declared elementwise ops and reductions reach here where their dtype resolution meets a
complex dtype (``core.ComplexOperands``, raised on a cache miss only: real ops never pass).
"""

from __future__ import annotations

import builtins
import math
import numbers

from .. import dtypes as D
from ..autograd.function import Function
from ..tensor import Tensor, wrap_dim
from .core import (
    COMPLEX_HOOKS,
    SCALAR_TYPE_NAMES,
    ComplexOperands,
    broadcast_shapes,
    complex_nonzero,
    complex_view,
    normalize_dims,
    real_view,
    warn_complex_to_real,
)
from .elementwise import maximum, where
from .registry import ELEMENTWISE

_pycomplex = builtins.complex


# ---- the two views ------------------------------------------------------------------------------
class ViewAsReal(Function):
    """A complex tensor's (real, imag) pairs as a real view; the gradient is viewed back."""

    @staticmethod
    def forward(ctx, x):
        return real_view(x)

    @staticmethod
    def backward(ctx, g):
        return view_as_complex(g.contiguous())


class ViewAsComplex(Function):
    """A real (..., 2) tensor's pairs as complex elements, a view; the gradient's real view."""

    @staticmethod
    def forward(ctx, x):
        return complex_view(x)

    @staticmethod
    def backward(ctx, g):
        return view_as_real(g)


# the node a complex result of an op gets (its last step, a ViewAsComplex), named as PyTorch
# names the op's node (MulBackward0, SumBackward1, ...) while ops.complex computes that op
_NODE = [None]
_NAMED: dict = {}


def _as_complex(r) -> Tensor:
    """``view_as_complex(r)`` recorded in the node of the op being computed (``_NODE``)."""
    name = _NODE[0]
    if name is None:
        return ViewAsComplex.apply(r)
    cls = _NAMED.get(name)
    if cls is None:
        cls = _NAMED[name] = type(
            name, (ViewAsComplex,), {"node_name": name, "__module__": __name__}
        )
    return cls.apply(r)


def _in_node(name, fn, *args):
    """``fn(*args)`` with its complex result recorded in a node named ``name``."""
    outer, _NODE[0] = _NODE[0], name
    try:
        return fn(*args)
    finally:
        _NODE[0] = outer


def view_as_real(input: Tensor) -> Tensor:
    """A view of complex ``input`` as real numbers with a last dim of 2 (real, imaginary),
    like ``torch.view_as_real``.

    >>> clgrad.view_as_real(clgrad.tensor([1 + 2j, 3 - 1j]))
    tensor([[ 1.,  2.],
            [ 3., -1.]])
    """
    if input.dtype.category != 3:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A view of a real tensor whose last dim has size 2 as complex numbers, like
    ``torch.view_as_complex``.

    >>> clgrad.view_as_complex(clgrad.tensor([[1.0, 2.0], [3.0, -1.0]]))
    tensor([1.+2.j, 3.-1.j])
    """
    if input.dtype not in (D.float32, D.float64):
        name = SCALAR_TYPE_NAMES.get(input.dtype.name, input.dtype.name)
        raise RuntimeError(
            "view_as_complex is only supported for float and double tensors, but got a tensor "
            f"of scalar type: {name}"
        )
    if not input._shape or input._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input._stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input._stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(input)


# ---- parts ------------------------------------------------------------------------------------
def parts(x):
    """(real, imag) of a complex tensor (recorded views), of a real tensor (imag None) or of a
    Python number."""
    if isinstance(x, Tensor):
        if x.dtype.category == 3:
            r = view_as_real(x)
            return r.select(-1, 0), r.select(-1, 1)
        return x, None
    if isinstance(x, _pycomplex):
        return x.real, x.imag
    if isinstance(x, numbers.Real) and not isinstance(x, (bool, int, float)):
        return float(x), None  # a NumPy float
    if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real):
        x = _pycomplex(x)
        return x.real, x.imag
    return x, None


def join(re, im, cdt, device=None) -> Tensor:
    """The complex tensor of dtype ``cdt`` with parts ``re`` and ``im`` (tensors or numbers;
    ``im`` None is zero), broadcast together."""
    rdt = cdt.to_real()
    tensors = [t for t in (re, im) if isinstance(t, Tensor)]
    if device is None:
        device = tensors[0].device if tensors else None

    def as_tensor(v):
        if isinstance(v, Tensor):
            return v if v.dtype is rdt else v.to(rdt)
        from .creation import full

        return full((), 0.0 if v is None else v, dtype=rdt, device=device)

    re, im = as_tensor(re), as_tensor(im)
    shape = broadcast_shapes(re._shape, im._shape)
    if re._shape != shape:
        re = re.expand(shape)
    if im._shape != shape:
        im = im.expand(shape)
    from .movement import stack

    return _as_complex(stack([re, im], -1))


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _sub(a, b):
    if b is None:
        return a
    if a is None:
        return -b
    return a - b


def _mul(a, b):
    return None if a is None or b is None else a * b


def _cmul(x, y):
    (a, b), (c, d) = x, y
    return _sub(_mul(a, c), _mul(b, d)), _add(_mul(a, d), _mul(b, c))


def _abs2(c, d):
    return c * c if d is None else c * c + d * d


def _cdiv(x, y):
    """x / y by parts, with the divisor scaled by its larger part first: c^2 + d^2 of a
    divisor past 1.8e19 overflowed float32 (a NaN quotient) and of a tiny one underflowed."""
    (a, b), (c, d) = x, y
    if d is None:
        return a / c, (None if b is None else b / c)
    if isinstance(c, Tensor) or isinstance(d, Tensor):
        ac, ad = abs(c), abs(d)
        if isinstance(ac, Tensor) and isinstance(ad, Tensor):
            big = maximum(ac, ad)
        else:  # (one part a number)
            big = ac.clamp(min=ad) if isinstance(ac, Tensor) else ad.clamp(min=ac)
        scale = where(big == 0, 1.0, where(big.isfinite(), big, 1.0))  # (0 and inf: as before)
    else:
        big = max(abs(c), abs(d))
        scale = big if big and math.isfinite(big) else 1.0
    c, d = c / scale, d / scale
    den = _abs2(c, d) * scale
    return _add(_mul(a, c), _mul(b, d)) / den, _sub(_mul(b, c), _mul(a, d)) / den


def _as_tensor_part(v, like):
    from .creation import full

    return v if isinstance(v, Tensor) else full((), v, dtype=like.dtype, device=like.device)


def _cexp(x):
    a, b = x
    e = a.exp()
    return (e, None) if b is None else (e * b.cos(), e * b.sin())


def _clog(x, z):
    return abs_(z).log(), angle_(z)


def _csqrt(z):
    r, t = abs_(z), angle_(z) * 0.5
    s = r.sqrt()
    return s * t.cos(), s * t.sin()


def _parts_tensor(z):
    """(re, im) of a complex tensor, both tensors."""
    a, b = parts(z)
    return a, b


# ---- abs and angle: their own gradients (0 at 0, as PyTorch's) ---------------------------------
class _Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, r):
        a, b = r.select(-1, 0), r.select(-1, 1)
        out = ELEMENTWISE["hypot"].run(a, b)
        ctx.save_for_backward(r, out)
        return out

    @staticmethod
    def backward(ctx, g):
        r, out = ctx.saved_tensors
        safe = out.masked_fill(out == 0, 1.0).unsqueeze(-1)
        return (g.unsqueeze(-1) * r / safe).masked_fill((out == 0).unsqueeze(-1), 0.0)


class _Angle(Function):
    node_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, r):
        a, b = r.select(-1, 0), r.select(-1, 1)
        ctx.save_for_backward(r)
        return ELEMENTWISE["atan2"].run(b, a)

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        a, b = r.select(-1, 0), r.select(-1, 1)
        den = a * a + b * b
        zero = den == 0
        den = den.masked_fill(zero, 1.0)
        from .movement import stack

        out = stack([-b * g / den, a * g / den], -1)
        return out.masked_fill(zero.unsqueeze(-1), 0.0)


def abs_(z: Tensor) -> Tensor:
    """|z| of a complex tensor: a real tensor of its part dtype."""
    return _Abs.apply(view_as_real(z))


def angle_(z: Tensor) -> Tensor:
    """The argument of complex ``z`` in (-pi, pi]: a real tensor of its part dtype."""
    return _Angle.apply(view_as_real(z))


# ---- elementwise ops on complex operands -----------------------------------------------------
_NOT_ORDERED = ("lt", "le", "gt", "ge")
_CLAMPS = frozenset(
    "clamp relu relu6 hardtanh leaky_relu elu celu selu gelu silu mish hardsigmoid hardswish "
    "hardshrink softshrink softplus logsigmoid tanhshrink softsign threshold maximum minimum "
    "fmax fmin".split()
)
_ROUNDING = frozenset("floor ceil round trunc frac".split())


def _refuse(name, cdt):
    if name in _NOT_ORDERED:
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{SCALAR_TYPE_NAMES[cdt.name]}'"
        )
    if name in _CLAMPS:
        raise NotImplementedError("clamp is not supported for complex types")
    if name in _ROUNDING:
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    if name == "sign":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead."
        )
    raise ComplexOperands(name)


def _unary(name, z):
    a, b = parts(z)
    if b is None:  # (a real operand of a complex op: only through pow and its kin)
        b = a * 0
    if name == "neg":
        return -a, -b
    if name == "exp":
        return _cexp((a, b))
    if name == "exp2":  # 2^z = exp(z ln 2)
        k = math.log(2.0)
        return _cexp((a * k, b * k))
    if name == "log":
        return _clog((a, b), z)
    if name in ("log2", "log10"):
        k = 1.0 / math.log(2.0 if name == "log2" else 10.0)
        re, im = _clog((a, b), z)
        return re * k, im * k
    if name == "sqrt":
        return _csqrt(z)
    if name == "rsqrt":
        return _cdiv((1.0, None), _csqrt(z))
    if name == "reciprocal":
        return _cdiv((1.0, None), (a, b))
    if name == "sin":
        return a.sin() * b.cosh(), a.cos() * b.sinh()
    if name == "cos":
        return a.cos() * b.cosh(), -(a.sin() * b.sinh())
    if name == "sinh":
        return a.sinh() * b.cos(), a.cosh() * b.sin()
    if name == "cosh":
        return a.cosh() * b.cos(), a.sinh() * b.sin()
    if name == "tanh":
        den = (2 * a).cosh() + (2 * b).cos()
        return (2 * a).sinh() / den, (2 * b).sin() / den
    if name == "tan":
        den = (2 * a).cos() + (2 * b).cosh()
        return (2 * a).sin() / den, (2 * b).sinh() / den
    if name == "sigmoid":
        ea, eb = _cexp((-a, -b))
        return _cdiv((1.0, None), (1.0 + ea, eb))
    if name == "log1p":  # log(1 + z): the modulus and angle of 1 + z
        one_plus = 1.0 + a
        return one_plus.hypot(b).log(), b.atan2(one_plus)
    if name == "expm1":  # exp(z) - 1: e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b / 2)
        re = a.expm1() * b.cos() - 2 * (b / 2).sin().square()
        return re, a.exp() * b.sin()
    return None


def _pow(x, y, cdt):
    """x ** y with at least one complex operand."""
    if isinstance(y, (int, float)) and not isinstance(y, bool) and isinstance(x, Tensor):
        if y == 2:
            return _cmul(parts(x), parts(x))
        if y == 0:  # ones, whatever the base (NaN and 0 too), as PyTorch's shortcut
            a = parts(x)[0]
            return a.new_ones(a.shape), None
        if y == 1:
            return parts(x)
        if y == 0.5:
            return _csqrt(x)
        if y == -1:  # (1 / 0 is NaN there; torch's inf + NaN j)
            return _zero_base(x, y, *_cdiv((1.0, None), parts(x)))
    z = x if isinstance(x, Tensor) and x.dtype.category == 3 else None
    if z is None:
        if isinstance(x, Tensor):
            z = join(x, None, cdt)
        else:  # a number base, a tensor exponent
            from .creation import full

            dev = y.device
            z = full((), _pycomplex(x), dtype=cdt, device=dev)
    log = _clog(parts(z), z)
    return _zero_base(z, y, *_cexp(_cmul(log, parts(y))))


def _zero_base(z, y, re, im):
    """(re, im) of z ** y where z is 0 as PyTorch's (C99's cpow), where exp(y log 0) is NaN:
    0 where y's real part is positive, inf + NaN j where it is negative, NaN where it is 0."""
    a, b = parts(z)
    zero = (a == 0) & (b == 0)
    yr = parts(y)[0]
    yr = yr if isinstance(yr, Tensor) else a.new_full((), yr)
    positive, negative = zero & (yr > 0), zero & (yr < 0)
    other = zero & ~positive & ~negative
    re = re.masked_fill(positive, 0.0).masked_fill(negative, math.inf).masked_fill(other, math.nan)
    im = im.masked_fill(positive, -0.0).masked_fill(negative | other, math.nan)
    return re, im


# the declared elementwise ops computed for complex operands (others are refused)
SUPPORTED = frozenset(
    "add sub mul div pow neg exp log log2 log10 sqrt rsqrt reciprocal sin cos tan sinh cosh "
    "tanh sigmoid abs angle eq ne isnan isinf isfinite where lerp log1p expm1 exp2 "
    "logical_not logical_and logical_or logical_xor".split()
)


def complex_elementwise(op, operands):
    """``op`` (a declared elementwise op) over operands of which one is complex."""
    node = "".join(part.capitalize() for part in op.name.split("_")) + "Backward0"
    return _in_node(node, _elementwise, op, operands)


def _elementwise(op, operands):
    name = op.name
    operands = operands[: op.arity]
    tensors = [x for x in operands if isinstance(x, Tensor)]
    cdt = D.result_type(*(operands[1:] if op.mask_first else operands))
    device = tensors[0].device if tensors else None
    if name == "where":
        cond, x, y = operands
        (a, b), (c, d) = parts(x), parts(y)

        def pick(p, q):
            if p is None and q is None:
                return None
            return where(cond, 0.0 if p is None else p, 0.0 if q is None else q)

        return join(pick(a, c), pick(b, d), cdt, device)
    if name in ("eq", "ne"):
        (a, b), (c, d) = parts(operands[0]), parts(operands[1])
        same = (a == c) & ((0.0 if b is None else b) == (0.0 if d is None else d))
        return same if name == "eq" else ~same
    if name == "logical_not":  # true where both parts are zero
        a, b = parts(operands[0])
        return (a == 0) & (b == 0)
    if name in ("logical_and", "logical_or", "logical_xor"):
        # a complex operand is true where either part is nonzero; the real op on the truths
        truths = [complex_nonzero(x) if x.dtype.category == 3 else x for x in operands]
        return ELEMENTWISE[name].public(*truths)
    if name in ("isnan", "isinf", "isfinite"):
        a, b = parts(operands[0])
        if name == "isfinite":
            return a.isfinite() & b.isfinite()
        return getattr(a, name)() | getattr(b, name)()
    if name == "abs":
        return abs_(operands[0])
    if name == "angle":
        return angle_(operands[0])
    if name in ("add", "sub"):
        (a, b), (c, d) = parts(operands[0]), parts(operands[1])
        fn = _add if name == "add" else _sub
        if not isinstance(a, Tensor) and not isinstance(c, Tensor):
            a = _as_tensor_part(a, tensors[0])
        return join(fn(a, c), fn(b, d), cdt, device)
    if name == "mul":
        x, y = operands
        if not (isinstance(x, Tensor) and x.dtype.category == 3):
            x, y = y, x  # x a complex tensor, where one is
        real_y = isinstance(y, (int, float)) or (isinstance(y, Tensor) and y.dtype.category != 3)
        if real_y and isinstance(x, Tensor):
            # a real factor scales both parts: one product over the real view
            if x.dtype is cdt:
                scale = y.unsqueeze(-1) if isinstance(y, Tensor) else y
                product = view_as_real(x) * scale
                if product.dtype is cdt.to_real():
                    return _as_complex(product)
        re, im = _cmul(parts(x), parts(y))
        return join(re, im, cdt, device)
    if name == "div":
        re, im = _cdiv(parts(operands[0]), parts(operands[1]))
        if not isinstance(re, Tensor) and not isinstance(im, Tensor):
            re = _as_tensor_part(re, tensors[0])
        return join(re, im, cdt, device)
    if name == "pow":
        re, im = _pow(operands[0], operands[1], cdt)
        return join(re, im, cdt, device)
    if name == "lerp":  # input + weight * (end - input)
        start, end, weight = (parts(x) for x in operands)
        re, im = _cmul(weight, (_sub(end[0], start[0]), _sub(end[1], start[1])))
        return join(_add(start[0], re), _add(start[1], im), cdt, device)
    if op.arity == 1 and name in SUPPORTED:
        got = _unary(name, operands[0])
        if got is not None:
            return join(*got, cdt, device)
    _refuse(name, cdt)


def _prod(x, dims, keepdim):
    """The product of complex ``x`` over ``dims``: pairwise products, halving each dim."""
    from .creation import ones
    from .movement import cat

    for d in dims:
        while x._shape[d] > 1:
            n = x._shape[d]
            if n % 2:
                shape = list(x._shape)
                shape[d] = 1
                x = cat([x, ones(shape, dtype=x.dtype, device=x.device)], d)
                n += 1
            x = x.narrow(d, 0, n // 2) * x.narrow(d, n // 2, n // 2)
        if x._shape[d] == 0:
            shape = list(x._shape)
            shape[d] = 1
            x = ones(shape, dtype=x.dtype, device=x.device)
    if not keepdim:
        for d in sorted(dims, reverse=True):
            x = x.squeeze(d)
    return x


def complex_reduction(op, x, dim, keepdim, dtype):
    """A declared reduction of complex ``x``: sum and nansum over the real view, prod as
    pairwise complex products."""
    if op.name == "prod":
        if dtype is not None:
            x = x.to(dtype)
        if x.ndim == 0:
            return x.clone()
        return _prod(x.clone(), normalize_dims(dim, x.ndim), keepdim)
    if op.name not in ("sum", "nansum"):
        if op.name in ("amax", "amin"):
            raise NotImplementedError(
                f"\"{op.name[1:]}_all\" not implemented for '{SCALAR_TYPE_NAMES[x.dtype.name]}'"
            )
        raise ComplexOperands(op.name)
    if dtype is not None:
        dt = D.as_dtype(dtype)
        if dt.category != 3:
            raise RuntimeError(f"{op.name}(): complex input requires a complex dtype, got {dt}")
        x = x.to(dt)
    if x.ndim == 0:
        return x.clone()
    dims = normalize_dims(dim, x.ndim)
    if not dims:
        return x.clone()
    r = view_as_real(x)
    if op.name == "nansum":
        r = r.nan_to_num(0.0, math.inf, -math.inf)
    node = f"{'Sum' if op.name == 'sum' else 'Nansum'}Backward{0 if dim is None else 1}"
    return _in_node(node, _as_complex, r.sum(dim=dims, keepdim=keepdim))


def complex_mean(x, dim, keepdim, dt):
    """``mean`` of a complex tensor: the mean of its real view over the same dims."""
    if dt.category != 3:
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {SCALAR_TYPE_NAMES[dt.name]}"
        )
    if x.dtype is not dt:
        x = x.to(dt)
    if x.ndim == 0:
        return x.clone()
    dims = normalize_dims(dim, x.ndim)
    mean = view_as_real(x).mean(dim=dims, keepdim=keepdim)
    return _in_node(f"MeanBackward{0 if dim is None else 1}", _as_complex, mean)


def complex_matmul(a, b):
    """``a @ b`` of two complex tensors: four real products."""
    from .linalg import matmul

    (ar, ai), (br, bi) = parts(a), parts(b)
    return join(matmul(ar, br) - matmul(ai, bi), matmul(ar, bi) + matmul(ai, br), a.dtype)


def complex_cast(x, dt):
    """``x.to(dt)`` where ``x`` or ``dt`` is complex."""
    if x.dtype.category == 3 and dt.category == 3:
        return view_as_complex(view_as_real(x).to(dt.to_real()))
    if x.dtype.category == 3 and dt is D.bool_:  # (no part is discarded: PyTorch won't warn)
        return complex_nonzero(x)
    if x.dtype.category == 3:
        warn_complex_to_real(5)
        return parts(x)[0].to(dt)
    return join(x, None, dt)


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` of each complex element (0 at 0); ``sign`` of a real tensor, like
    ``torch.sgn``.

    >>> clgrad.sgn(clgrad.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    if input.dtype.category != 3:
        return ELEMENTWISE["sign"].public(input)
    r = abs_(input)
    zero = r == 0
    scale = 1.0 / r.masked_fill(zero, 1.0)
    return (input * scale.masked_fill(zero, 0.0)).to(input.dtype)


def real(input: Tensor) -> Tensor:
    """The real parts of a complex tensor as a view (writable); a real tensor itself, like
    ``torch.real``.

    >>> clgrad.real(clgrad.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    if input.dtype.category != 3:
        return input
    return view_as_real(input).select(-1, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor as a view (writable), like ``torch.imag``.

    >>> clgrad.imag(clgrad.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    if input.dtype.category != 3:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a new tensor here; PyTorch's is a lazy view), a real tensor
    itself, like ``torch.conj``.

    >>> clgrad.conj(clgrad.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    if input.dtype.category != 3:
        return input
    a, b = parts(input)
    return join(a, -b, input.dtype)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001  (torch's name, shadowed here)
    """The complex tensor ``real + i imag`` of two float tensors of one dtype, like
    ``torch.complex``.

    >>> clgrad.complex(clgrad.tensor([1.0, 2.0]), clgrad.tensor([0.5, -1.0]))
    tensor([1.+0.5000j, 2.-1.0000j])
    """
    for name, t in (("real", real), ("imag", imag)):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {SCALAR_TYPE_NAMES[real.dtype.name]} but got scalar "
            f"type {SCALAR_TYPE_NAMES[imag.dtype.name]} for second argument"
        )
    if real.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{SCALAR_TYPE_NAMES[real.dtype.name]} and {SCALAR_TYPE_NAMES[imag.dtype.name]}"
        )
    cdt = real.dtype.to_complex()
    return join(real, imag, cdt)


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002  (torch's names)
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``, like ``torch.polar``.

    >>> clgrad.polar(clgrad.tensor([2.0]), clgrad.tensor([0.0]))
    tensor([2.+0.j])
    """
    return complex(abs * angle.cos(), abs * angle.sin())


def complex_getitem(x, key):
    """``x[key]`` of a complex tensor with tensor indices: on the real view."""
    items = key if isinstance(key, tuple) else (key,)
    return view_as_complex(view_as_real(x)[(*items, slice(None))])


def real_value(value, cdt, device):
    """A value written into a complex tensor, as its real view's values."""
    if isinstance(value, Tensor):
        if value.dtype.category != 3:
            value = join(value, None, cdt)
        elif value.dtype is not cdt:
            value = value.to(cdt)
        return view_as_real(value)
    from .creation import tensor

    c = _pycomplex(value)
    return tensor([c.real, c.imag], dtype=cdt.to_real(), device=device)


def complex_setitem(x, key, value):
    """``x[key] = value`` for complex ``x``: written through the real view."""
    items = key if isinstance(key, tuple) else (key,)
    view_as_real(x)[(*items, slice(None))] = real_value(value, x.dtype, x.device)


def complex_index_select(x, dim, index):
    from .indexing import index_select

    return view_as_complex(index_select(view_as_real(x), wrap_dim(dim, x.ndim), index))


def per_part(fn, z):
    """A real-linear op of complex ``z`` (gather, take, cumsum, ...): ``fn`` of each part."""
    a, b = parts(z)
    return join(fn(a), fn(b), z.dtype)


def per_part_sum(fn, z):
    """``fn(re) + fn(im)``: a real result (var: the parts' variances summed)."""
    a, b = parts(z)
    return fn(a) + fn(b)


def complex_scatter(scatter, input, dim, index, src, reduce):
    """``scatter`` into a complex input: each part scattered."""
    cdt = input.dtype
    if isinstance(src, Tensor) and src.dtype is not cdt:
        src = src.to(cdt)
    (a, b), (c, d) = parts(input), parts(src)
    if not isinstance(src, Tensor):
        d = 0.0 if d is None else d
    return join(
        scatter(a, dim, index, c, reduce=reduce), scatter(b, dim, index, d, reduce=reduce), cdt
    )


def complex_random(kind, shape, dt, device, generator, requires_grad):
    """rand / randn of a complex dtype: each part drawn on its own (randn's with variance 1/2,
    so that E|z|^2 = 1, as PyTorch's)."""
    from .creation import _random

    r = _random(kind, (*shape, 2), dt.to_real(), device, generator, False)
    if kind == "normal":
        r = r * math.sqrt(0.5)
    out = view_as_complex(r)
    out = Tensor._alias(out)
    return out.requires_grad_(True) if requires_grad else out


COMPLEX_HOOKS["view_as_real"] = view_as_real
COMPLEX_HOOKS["view_as_complex"] = view_as_complex
COMPLEX_HOOKS["elementwise"] = complex_elementwise
COMPLEX_HOOKS["supported"] = SUPPORTED
COMPLEX_HOOKS["refuse"] = _refuse
COMPLEX_HOOKS["reduction"] = complex_reduction
COMPLEX_HOOKS["mean"] = complex_mean
COMPLEX_HOOKS["matmul"] = complex_matmul
COMPLEX_HOOKS["cast"] = complex_cast
COMPLEX_HOOKS["getitem"] = complex_getitem
COMPLEX_HOOKS["setitem"] = complex_setitem
COMPLEX_HOOKS["index_select"] = complex_index_select
COMPLEX_HOOKS["random"] = complex_random
COMPLEX_HOOKS["per_part"] = per_part
COMPLEX_HOOKS["per_part_sum"] = per_part_sum
COMPLEX_HOOKS["scatter"] = complex_scatter
