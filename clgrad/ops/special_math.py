"""Special functions composed from elementwise Tensor ops, so they run on every device: the
gamma family (``lgamma``, ``digamma``), ``erfinv``, the Bessel function ``i0``, ``xlog1py``,
and the integer and float-splitting ops ``gcd``, ``lcm``, ``frexp``, ``ldexp``.

Each series is evaluated in float64 where the device has it (then rounded to the input's
dtype), which keeps float32 results as close to PyTorch's as its own kernels are. Those with a
gradient are Functions whose backward is the exact derivative (``lgamma``' = ``digamma``,
``digamma``' = ``trigamma``, ...), itself made of Tensor ops, so double backward works.
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..autograd.function import Function
from ..tensor import Tensor
from .core import broadcast_shapes
from .elementwise import where

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _floating(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x if x.dtype.is_floating_point else x.to(D.get_default_dtype())


def _wide(x):
    """``x`` in float64 where its device computes float64 (a series accumulates rounding)."""
    return x.double() if x.device.supports(D.float64) else x.float()


def _lgamma_pos(y):
    """lgamma for y >= 0.5: shift to z >= 7 by the recurrence, then Stirling's series."""
    small = y < 7
    ys = y.clamp(max=7.0)
    prod = ys
    for k in range(1, 7):
        prod = prod * (ys + k)
    z = where(small, y + 7, y)
    r = 1 / z
    r2 = r * r
    # Stirling's series to r^13: below 1e-15 for z >= 7
    series = r * (
        1 / 12
        + r2
        * (
            -1 / 360
            + r2 * (1 / 1260 + r2 * (-1 / 1680 + r2 * (1 / 1188 + r2 * (-691 / 360360 + r2 / 156))))
        )
    )
    out = (z - 0.5) * z.log() - z + _HALF_LOG_2PI + series
    return out - where(small, prod.log(), 0.0)


def _lgamma_values(x):
    y = _wide(x)
    reflect = y < 0.5
    pos = _lgamma_pos(where(reflect, 1 - y, y))
    # Euler's reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    s = (math.pi * (y - y.floor())).sin().abs()
    out = where(reflect, math.log(math.pi) - s.log() - pos, pos)
    # exact zeros where Gamma is 1, as PyTorch's (the series leaves ~1e-16 there)
    out = where((y == 1) | (y == 2), 0.0, out)
    return out.to(x.dtype)


def _digamma_pos(y, shift=7):
    small = y < shift
    ys = y.clamp(max=float(shift))
    acc = 1 / ys
    for k in range(1, shift):
        acc = acc + 1 / (ys + k)
    z = where(small, y + shift, y)
    r = 1 / z
    r2 = r * r
    series = r2 * (
        1 / 12
        - r2
        * (
            1 / 120
            - r2 * (1 / 252 - r2 * (1 / 240 - r2 * (1 / 132 - r2 * (691 / 32760 - r2 / 12))))
        )
    )
    return z.log() - 0.5 * r - series - where(small, acc, 0.0)


def _digamma_values(x):
    y = _wide(x)
    reflect = y < 0.5
    pos = _digamma_pos(where(reflect, 1 - y, y))
    # psi(1 - x) - psi(x) = pi / tan(pi x)
    frac = y - y.floor()
    out = where(reflect, pos - math.pi / (math.pi * frac).tan(), pos)
    out = where(y == 0, float("-inf"), out)
    out = where((y < 0) & (frac == 0), float("nan"), out)
    return out.to(x.dtype)


def _trigamma_values(x):
    y = _wide(x)
    reflect = y < 0.5
    p = where(reflect, 1 - y, y)
    small = p < 7
    ps = p.clamp(max=7.0)
    acc = 1 / (ps * ps)
    for k in range(1, 7):
        acc = acc + 1 / ((ps + k) * (ps + k))
    z = where(small, p + 7, p)
    r = 1 / z
    r2 = r * r
    series = r + r2 / 2 + r * r2 * (1 / 6 - r2 * (1 / 30 - r2 * (1 / 42 - r2 / 30)))
    pos = series + where(small, acc, 0.0)
    # psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)
    s = (math.pi * y).sin()
    out = where(reflect, math.pi**2 / (s * s) - pos, pos)
    return out.to(x.dtype)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _lgamma_values(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * digamma(x)


class _Digamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _digamma_values(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _trigamma_values(x)


def lgamma(input: Tensor) -> Tensor:
    """``log|Gamma(x)|``, like ``torch.lgamma`` (``inf`` at 0 and the negative integers);
    integers give the default float dtype.

    >>> clgrad.lgamma(clgrad.tensor([1.0, 3.0, 0.5]))
    tensor([0.0000, 0.6931, 0.5724])
    """
    return _Lgamma.apply(_floating("lgamma", input))


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, like ``torch.digamma`` (``-inf`` at 0, NaN at the
    negative integers).

    >>> clgrad.digamma(clgrad.tensor([1.0, 2.0]))
    tensor([-0.5772,  0.4228])
    """
    return _Digamma.apply(_floating("digamma", input))


# Giles (2010), "Approximating the erfinv function": single precision, refined by Newton below
_GILES_CENTRAL = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941,
)  # fmt: skip
_GILES_TAIL = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682,
)  # fmt: skip


def _horner(coefs, w):
    p = coefs[0]
    for c in coefs[1:]:
        p = c + p * w
    return p


def _erfinv_values(x):
    y = _wide(x)
    w = -((1 - y) * (1 + y)).clamp(min=1e-300).log()
    central = _horner(_GILES_CENTRAL, w - 2.5)
    tail = _horner(_GILES_TAIL, w.clamp(min=5.0).sqrt() - 3)
    r = where(w < 5, central, tail) * y
    for _ in range(2):  # Newton on erf(r) = y: quadratic, from ~1e-7 to the dtype's precision
        r = r - (r.erf() - y) / (2 / math.sqrt(math.pi) * (-r * r).exp())
    r = where(y.abs() == 1, y * float("inf"), r)
    r = where(y.abs() > 1, float("nan"), r)
    return r.to(x.dtype)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx, x):
        out = _erfinv_values(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * (math.sqrt(math.pi) / 2) * (r * r).exp()


def erfinv(input: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1) (``±inf`` at ``±1``, NaN outside), like
    ``torch.erfinv``: Giles' approximation refined by two Newton steps, on the device.

    >>> clgrad.erfinv(clgrad.tensor([0.0, 0.5, -1.0]))
    tensor([0.0000, 0.4769,   -inf])
    """
    return _Erfinv.apply(_floating("erfinv", input))


def _bessel_i(x, nu, scaled=False):
    """I_nu(x) for nu in (0, 1) (times ``exp(-|x|)`` when ``scaled``): the power series for
    |x| <= 20, the asymptotic expansion beyond (where the series would need many more
    terms; scaled, it never forms ``exp(|x|)``, which overflows)."""
    y = _wide(x)
    a = y.abs()
    near = a.clamp(max=20.0)
    q = near * near / 4
    term = (near / 2) if nu else near * 0 + 1
    total = term
    for k in range(1, 60):  # (x^2/4)^k / (k! (k+nu)!): below 1e-17 of the sum by k = 60
        term = term * q / (k * (k + nu))
        total = total + term
    far = a.clamp(min=20.0)
    t = far * 0 + 1
    acc = t
    for k in range(1, 16):
        t = t * (-(4 * nu * nu - (2 * k - 1) ** 2)) / (8 * k * far)
        acc = acc + t
    asym = acc / (2 * math.pi * far).sqrt()
    if scaled:
        total = total * (-near).exp()
    else:
        asym = asym * far.exp()
    out = where(a <= 20, total, asym)
    if nu:
        out = where(y < 0, -out, out)  # I1 is odd
    return out.to(x.dtype)


class _I0(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _bessel_i(x, 0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _bessel_i(x, 1)  # I0' = I1


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0, like ``torch.i0``.

    >>> clgrad.i0(clgrad.tensor([0.0, 1.0]))
    tensor([1.0000, 1.2661])
    """
    return _I0.apply(_floating("i0", input))


def xlog1py(input, other) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN), like
    ``torch.special.xlog1py``.

    >>> clgrad.special.xlog1py(clgrad.tensor([0.0, 2.0]), clgrad.tensor([-1.0, 0.0]))
    tensor([0., 0.])
    """
    if not isinstance(input, Tensor):
        input = other.new_tensor(input) if isinstance(other, Tensor) else input
    if not isinstance(other, Tensor):
        other = input.new_tensor(other, dtype=None)
    x, y = input, other
    if not (x.dtype.is_floating_point or y.dtype.is_floating_point):
        x = x.to(D.get_default_dtype())
    prod = x * y.log1p()
    return where((x == 0) & ~y.isnan(), 0.0, prod).to(prod.dtype)


def _integral(name, *xs):
    for position, x in enumerate(xs, 1):
        if not isinstance(x, Tensor):  # torch takes tensors only (a number is a TypeError)
            which = "self" if position == 1 else "other"
            raise TypeError(
                f"{name}(): argument '{which}' (position {position}) must be Tensor, not "
                f"{type(x).__name__}"
            )
        if x.dtype.is_floating_point or x.dtype is D.bool_:
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{_torch_name(x.dtype)}'")


def _torch_name(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bool": "Bool"}.get(
        dt.name, dt.name
    )


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor of integer tensors (non-negative; ``gcd(0, 0) = 0``), like
    ``torch.gcd``: Euclid's algorithm as whole-tensor steps (``remainder`` until every pair is
    done; the magnitude bounds the number of steps).

    >>> clgrad.gcd(clgrad.tensor([12, -9, 0]), clgrad.tensor([18, 6, 0]))
    tensor([6, 3, 0])
    """
    _integral("gcd", input, other)
    a, b = input.abs(), other.abs()
    a, b = a + b * 0, b + a * 0  # broadcast and promote both alike
    while bool((b != 0).any()):
        nonzero = b != 0
        safe = where(nonzero, b, 1)
        a, b = where(nonzero, b, a), where(nonzero, a % safe, 0)
    return a


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple of integer tensors (non-negative; 0 when either is 0), like
    ``torch.lcm``.

    >>> clgrad.lcm(clgrad.tensor([4, -6, 0]), clgrad.tensor([6, 4, 5]))
    tensor([12, 12,  0])
    """
    _integral("lcm", input, other)
    g = gcd(input, other)
    return where(g == 0, g, (input // where(g == 0, 1, g) * other).abs())


def frexp(input: Tensor):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, ``|mantissa|`` in
    [0.5, 1) (0 for 0), like ``torch.frexp``; the exponent is int32.

    >>> clgrad.frexp(clgrad.tensor([8.0, -0.75, 0.0])).exponent
    tensor([4, 0, 0], dtype=clgrad.int32)
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"torch.frexp() only supports floating-point dtypes, but got {_torch_name(input.dtype)}"
        )
    a = input.abs()
    finite = a.isfinite() & (a != 0)
    safe = where(finite, a, 1.0)
    e = (safe.log2().floor() + 1).to(D.int32)
    m = (input / (2.0 ** e.to(_exponent_dtype(input)))).to(input.dtype)
    # log2 rounds near powers of two: one step fixes the mantissa back into [0.5, 1)
    big = m.abs() >= 1
    e, m = where(big, e + 1, e), where(big, m / 2, m)
    low = (m.abs() < 0.5) & finite
    e, m = where(low, e - 1, e), where(low, m * 2, m)
    e = where(finite, e, 0)
    m = where(finite, m, input)
    return _Frexp(m, e.to(D.int32))


def _exponent_dtype(x):
    return D.float64 if x.device.supports(D.float64) else D.float32


class _Frexp(tuple):
    def __new__(cls, mantissa, exponent):
        return super().__new__(cls, (mantissa, exponent))

    mantissa = property(lambda self: self[0])
    exponent = property(lambda self: self[1])

    def __repr__(self):
        return f"frexp(mantissa={self[0]!r}, exponent={self[1]!r})"


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other``, like ``torch.ldexp`` (a float result).

    >>> clgrad.ldexp(clgrad.tensor([1.0, 3.0]), clgrad.tensor([2, -1]))
    tensor([4.0000, 1.5000])
    """
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    return x * (2.0 ** other.to(x.dtype) if isinstance(other, Tensor) else 2.0**other)


class _I1(Function):
    @staticmethod
    def forward(ctx, x):
        out = _bessel_i(x, 1)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        # I1' = I0 - I1 / x, which is 1/2 at 0
        x, out = ctx.saved_tensors
        safe = where(x == 0, 1.0, x)
        return g * where(x == 0, 0.5, _bessel_i(x, 0) - out / safe)


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1, like
    ``torch.special.i1``.

    >>> clgrad.special.i1(clgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.5652])
    """
    return _I1.apply(_floating("i1", input))


def i0e(input: Tensor) -> Tensor:
    """``i0(x) * exp(-|x|)`` without overflow for large ``|x|``, like ``torch.special.i0e``
    (its gradient ``i1e(x) - sign(x) i0e(x)``).

    >>> clgrad.special.i0e(clgrad.tensor([0.0, 1000.0]))
    tensor([1.0000, 0.0126])
    """
    x = _floating("i0e", input)
    return _Scaled.apply(x, 0)


def i1e(input: Tensor) -> Tensor:
    """``i1(x) * exp(-|x|)`` without overflow for large ``|x|``, like ``torch.special.i1e``.

    >>> clgrad.special.i1e(clgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2079])
    """
    x = _floating("i1e", input)
    return _Scaled.apply(x, 1)


class _Scaled(Function):
    @staticmethod
    def forward(ctx, x, nu):
        out = _bessel_i(x, nu, scaled=True)
        ctx.save_for_backward(x, out)
        ctx.nu = nu
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        if ctx.nu == 0:  # i0e' = i1e - sign(x) i0e
            return g * (_bessel_i(x, 1, scaled=True) - x.sign() * out), None
        # i1e' = i0e - i1e (sign(x) + 1 / x), 1/2 at 0
        safe = where(x == 0, 1.0, x)
        d = _bessel_i(x, 0, scaled=True) - out * (x.sign() + 1 / safe)
        return g * where(x == 0, 0.5, d), None


# B_2j / (2j)! for j = 1..6: the Euler-Maclaurin tail of the Hurwitz zeta series
_BERNOULLI_OVER_FACTORIAL = (
    1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
)  # fmt: skip
_ZETA_SHIFT = 10  # the series' terms are summed until the argument is at least this


def _broadcast_pair(a, b):
    """``a`` and ``b`` expanded to their common shape (not by arithmetic: inf * 0 is NaN)."""
    shape = broadcast_shapes(a.shape, b.shape)
    return a.expand(shape), b.expand(shape)


def _hurwitz_zeta_values(s, q):
    """``zeta(s, q) = sum_k (q + k) ** -s``, elementwise (s > 1): the first terms summed until
    ``q + k`` reaches ``_ZETA_SHIFT``, then the Euler-Maclaurin tail (error below 1e-16 there).
    A pole (q a non-positive integer) gives inf; s = 1 inf, s < 1 NaN, as PyTorch's."""
    s, q = _broadcast_pair(_wide(s), _wide(q))
    low = float(q.min()) if q.numel() else _ZETA_SHIFT
    shift = max(_ZETA_SHIFT, math.ceil(_ZETA_SHIFT - low)) if math.isfinite(low) else 0
    head = q.new_zeros(q.shape)
    for k in range(shift):
        head = head + (q + k) ** -s
    z = q + shift
    tail = z ** (1 - s) / (s - 1) + 0.5 * z**-s
    rising = s  # s (s + 1) ... (s + 2j - 2), the 2j-1 factors of the j-th term
    power = z ** (-s - 1)
    for j, coefficient in enumerate(_BERNOULLI_OVER_FACTORIAL, 1):
        tail = tail + coefficient * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (z * z)
    out = where(s == 1, float("inf"), where(s < 1, float("nan"), head + tail))
    return out


class _Zeta(Function):
    node_name = "SpecialZetaBackward0"

    @staticmethod
    def forward(ctx, s, q):
        ctx.save_for_backward(s, q)
        return _hurwitz_zeta_values(s, q).to(q.dtype)

    @staticmethod
    def backward(ctx, g):
        s, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise RuntimeError("derivative for aten::special_zeta is not implemented")
        return None, g * -s * zeta(s + 1, q)


def zeta(input: Tensor, other: Tensor) -> Tensor:
    """The Hurwitz zeta function ``sum_k (other + k) ** -input``, elementwise, like
    ``torch.special.zeta`` (the Riemann zeta at ``other = 1``); differentiable in ``other``.

    >>> clgrad.special.zeta(clgrad.tensor([2.0]), clgrad.tensor([1.0]))  # pi^2 / 6
    tensor([1.6449])
    """
    s = input if isinstance(input, Tensor) else None
    q = other if isinstance(other, Tensor) else None
    like = s if s is not None else q
    if like is None:
        raise TypeError("zeta(): expected a Tensor argument")
    if s is None:
        s = Tensor._full(q.shape, float(input), q.dtype, q.device)
    if q is None:
        q = Tensor._full(s.shape, float(other), s.dtype, s.device)
    s, q = _floating("zeta", s), _floating("zeta", q)
    return _Zeta.apply(s, q)


class _Polygamma(Function):
    node_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        if n == 0:
            return _digamma_values(x)
        sign_factorial = (-1) ** (n + 1) * math.factorial(n)
        order = Tensor._full(x.shape, n + 1.0, x.dtype, x.device)
        return (sign_factorial * _hurwitz_zeta_values(order, x)).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * polygamma(ctx.n + 1, x), None


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of the digamma function, like ``torch.polygamma``:
    ``(-1)^(n+1) n! zeta(n + 1, x)`` (``digamma`` for n = 0); differentiable (the next order).

    >>> clgrad.polygamma(1, clgrad.tensor([1.0]))  # pi^2 / 6
    tensor([1.6449])
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _Polygamma.apply(_floating("polygamma", input), n)


_INCOMPLETE_GAMMA_CHECK = 16  # iterations between convergence checks (each reads the device)
_INCOMPLETE_GAMMA_MAX = 20_000


def _regularized_gamma_values(a, x, upper: bool):
    """P(a, x) (``upper``: Q = 1 - P), elementwise: the power series where x < a + 1, the
    continued fraction (modified Lentz) elsewhere, each to convergence in float64 where the
    device has it; PyTorch's conventions at the edges (a or x negative: NaN; x = 0: P = 0;
    a = 0, x > 0: P = 1; x = inf: P = 1)."""
    a, x = _broadcast_pair(_wide(a), _wide(x))
    series_side = x < a + 1
    # converged once a step changes nothing at this precision (more steps only add rounding)
    eps = float(D.finfo(x.dtype).eps)
    safe_a = where(a > 0, a, 1.0)
    safe_x = where(x > 0, x, 1.0)
    log_front = -safe_x + safe_a * safe_x.log() - _lgamma_values(safe_a)
    front = log_front.exp()
    # the series for P: sum_n x^n / (a (a+1) ... (a+n))
    xs = where(series_side, safe_x, 0.0)
    term = 1 / safe_a
    total = term
    n = 1
    while n < _INCOMPLETE_GAMMA_MAX:
        term = term * xs / (safe_a + n)
        total = total + term
        if n % _INCOMPLETE_GAMMA_CHECK == 0 and not bool((term > total * eps).any()):
            break
        n += 1
    p_series = total * front
    # the continued fraction for Q
    tiny = 1e-300 if x.dtype is D.float64 else 1e-30
    xc = where(series_side, safe_a + 2, safe_x)  # (the series side gets a harmless argument)
    b = xc + 1 - safe_a
    c = Tensor._full(b.shape, 1 / tiny, b.dtype, b.device)
    d = 1 / b
    h = d
    i = 1
    while i < _INCOMPLETE_GAMMA_MAX:
        an = -i * (i - safe_a)
        b = b + 2
        d = an * d + b
        d = where(d.abs() < tiny, tiny, d)
        c = b + an / c
        c = where(c.abs() < tiny, tiny, c)
        d = 1 / d
        step = d * c
        h = h * step
        if i % _INCOMPLETE_GAMMA_CHECK == 0 and not bool(((step - 1).abs() > eps).any()):
            break
        i += 1
    q_fraction = h * where(series_side, 0.0, front)
    p = where(series_side, p_series, 1 - q_fraction)
    p = where(x == 0, 0.0, where(a == 0, 1.0, p))
    p = where(x == float("inf"), 1.0, p)
    p = where((a < 0) | (x < 0) | ((a == 0) & (x == 0)) | (a != a) | (x != x), float("nan"), p)
    q = where(series_side, 1 - p_series, q_fraction)
    q = where(x == 0, 1.0, where(a == 0, 0.0, q))
    q = where(x == float("inf"), 0.0, q)
    q = where((a < 0) | (x < 0) | ((a == 0) & (x == 0)) | (a != a) | (x != x), float("nan"), q)
    return q if upper else p


class _RegularizedGamma(Function):
    @staticmethod
    def forward(ctx, a, x, upper):
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return _regularized_gamma_values(a, x, upper).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        # dP/dx = x^(a-1) e^-x / Gamma(a)
        density = (-x + (a - 1) * x.log() - lgamma(a)).exp()
        return None, g * (-density if ctx.upper else density), None


def _incomplete_gamma(name, input, other, upper):
    a, x = _floating(name, input), _floating(name, other)
    return _RegularizedGamma.apply(a, x, upper)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)`` of ``a = input`` and
    ``x = other``, like ``torch.igamma`` / ``torch.special.gammainc``; differentiable in x.

    >>> clgrad.igamma(clgrad.tensor([1.0]), clgrad.tensor([1.0]))  # 1 - 1/e
    tensor([0.6321])
    """
    return _incomplete_gamma("igamma", input, other, upper=False)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, like
    ``torch.igammac`` / ``torch.special.gammaincc``.

    >>> clgrad.igammac(clgrad.tensor([1.0]), clgrad.tensor([1.0]))  # 1/e
    tensor([0.3679])
    """
    return _incomplete_gamma("igammac", input, other, upper=True)


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``, like
    ``torch.special.multigammaln``: ``sum lgamma(x - i / 2) + p (p - 1) / 4 log(pi)``.

    >>> clgrad.special.multigammaln(clgrad.tensor([2.0]), 2)
    tensor([0.4516])
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floating("multigammaln", input)
    out = lgamma(x)
    for i in range(1, p):
        out = out + lgamma(x - i / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)
