"""``clgrad.special``: PyTorch's ``torch.special`` names for clgrad's ops (``gammaln``,
``digamma`` / ``psi``, ``polygamma``, ``zeta``, ``gammainc`` / ``gammaincc``, ``erfinv``,
``i0``, ``xlog1py``, the Bessel and Airy functions, ``ndtri``, ``erfcx`` and the orthogonal
polynomial families are ``ops/special_math.py``'s)."""

from __future__ import annotations

from . import functional as _F
from .autograd.function import Function as _Function
from .dtypes import get_default_dtype as _default_dtype
from .ops import reduction as _R
from .ops import special_math as _SM
from .ops.core import with_out as _with_out
from .ops.elementwise import where as _where

__all__ = ["expit", "logit", "erf", "erfc", "xlogy", "log1p", "expm1", "exp2", "logsumexp"]
__all__ += ["softmax", "log_softmax", "sinc", "round", "entr", "ndtr", "log_ndtr"]
__all__ += ["gammaln", "digamma", "psi", "erfinv", "i0", "xlog1py", "i1", "i0e", "i1e"]
__all__ += ["multigammaln", "polygamma", "zeta", "gammainc", "gammaincc"]
_KERNELS = (
    "ndtri erfcx airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
    "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 "
    "scaled_modified_bessel_k1 spherical_bessel_j0 chebyshev_polynomial_t chebyshev_polynomial_u "
    "chebyshev_polynomial_v chebyshev_polynomial_w shifted_chebyshev_polynomial_t "
    "shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
    "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
    "laguerre_polynomial_l legendre_polynomial_p"
).split()
__all__ += _KERNELS

gammaln, digamma, psi, erfinv, i0 = _SM.lgamma, _SM.digamma, _SM.digamma, _SM.erfinv, _SM.i0
xlog1py, i1, i0e, i1e, multigammaln = _SM.xlog1py, _SM.i1, _SM.i0e, _SM.i1e, _SM.multigammaln
polygamma, zeta, gammainc, gammaincc = _SM.polygamma, _SM.zeta, _SM.igamma, _SM.igammac

expit = _F.sigmoid
logit = _F.logit
erf = _F.erf
erfc = _F.erfc
xlogy = _F.xlogy
log1p = _F.log1p
expm1 = _F.expm1
exp2 = _F.exp2
logsumexp = _F.logsumexp
sinc = _F.sinc
round = _F.round


def softmax(input, dim, *, dtype=None):
    """``softmax`` along ``dim``, like ``torch.special.softmax``.

    >>> clgrad.special.softmax(clgrad.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    return _R.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log_softmax`` along ``dim``, like ``torch.special.log_softmax``.

    >>> clgrad.special.log_softmax(clgrad.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931])
    """
    return _R.log_softmax(input, dim, dtype)


def entr(input):
    """The elementwise entropy ``-x * log(x)`` (0 at 0, ``-inf`` for negative ``x``), like
    ``torch.special.entr``.

    >>> clgrad.special.entr(clgrad.tensor([0.0, 0.5, 1.0]))
    tensor([0.0000, 0.3466, -0.0000])
    """
    x = input if input.dtype.is_floating_point else input.to(_default_dtype())
    return _Entr.apply(x)


class _Entr(_Function):
    """``entr`` with PyTorch's derivative ``-(1 + log x)`` everywhere (NaN below 0, inf at 0),
    not the pieces' of its piecewise definition."""

    node_name = "SpecialEntrBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        inner = _F.where(x == 0, 0.0, -_F.xlogy(x, x))
        return _F.where(x < 0, float("-inf"), inner).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(1 + x.log())


def ndtr(input):
    """The standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``, like ``torch.special.ndtr``.

    >>> clgrad.special.ndtr(clgrad.tensor([0.0]))
    tensor([0.5000])
    """
    return (1 + _F.erf(input * 0.7071067811865476)) * 0.5


def log_ndtr(input):
    """``log(ndtr(x))``, finite far into both tails, like ``torch.special.log_ndtr``.

    >>> clgrad.special.log_ndtr(clgrad.tensor([0.0]))
    tensor([-0.6931])
    """
    x = input if input.dtype.is_floating_point else input.to(_default_dtype())
    # as ATen's: below -1 log(erfcx(-x / sqrt 2) / 2) - x^2 / 2, where erfc itself underflows
    # to 0 (log_ndtr(-50) was -inf), else log1p(-erfc(x / sqrt 2) / 2), exact near 0 (for
    # large x); each branch gets safe arguments where the other is taken (NaN gradients)
    low = x < -1
    below, above = _where(low, x, -2.0), _where(low, 0.0, x)
    tail = (_SM.erfcx(-below * 0.7071067811865476) * 0.5).log() - below * below * 0.5
    return _where(low, tail, (-0.5 * _F.erfc(above * 0.7071067811865476)).log1p())


# PyTorch's out= on the functions written here and in ops/special_math.py (the others are
# clgrad's functions, which take it already; softmax and log_softmax take none in
# torch.special either)
globals().update(
    {
        name: _with_out(globals().get(name) or getattr(_SM, name))
        for name in (
            "gammaln digamma psi erfinv i0 xlog1py i1 i0e i1e multigammaln entr ndtr log_ndtr "
            "polygamma zeta gammainc gammaincc"
        ).split()
        + _KERNELS
    }
)
