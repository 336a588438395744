"""``VonMises``, as ``torch.distributions.von_mises``: the circular normal distribution.

Densities use torch's polynomial approximations of log I0 and log I1 (Abramowitz and Stegun
9.8.1-9.8.4), so values agree with torch's to rounding. Draws use Best and Fisher's (1979)
rejection sampler, vectorized (every entry proposes each round until all are accepted), in
float64 where the device has it: at concentrations near 1e-4 the float32 acceptance test
rounds to never accepting (torch's issue #88443)."""

from __future__ import annotations

import math

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..functional import rand
from ..ops.elementwise import where
from ..tensor import Size, Tensor
from . import constraints
from .distribution import _NO_SHAPE, Distribution, _as_tensor, _broadcast_all

__all__ = ["VonMises"]

_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [
    0.39894228,
    0.1328592e-1,
    0.225319e-2,
    -0.157565e-2,
    0.916281e-2,
    -0.2057706e-1,
    0.2635537e-1,
    -0.1647633e-1,
    0.392377e-2,
]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [
    0.39894228,
    -0.3988024e-1,
    -0.362018e-2,
    0.163801e-2,
    -0.1031555e-1,
    0.2282967e-1,
    -0.2895312e-1,
    0.1787654e-1,
    -0.420059e-2,
]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Tensor, coef: list) -> Tensor:
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log(I_order(x))`` for x > 0 and order 0 or 1."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, shape) -> Tensor:
    x = loc.new_zeros(()).expand(shape).contiguous()
    done = x != x  # all False: nothing accepted yet
    while not bool(done.all()):
        u1, u2, u3 = rand((3, *shape), dtype=loc.dtype, device=loc.device).unbind(0)
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution on the circle with mean direction ``loc`` (radians) and
    ``concentration`` (density ``exp(k cos(x - loc)) / (2 pi I0(k))``); ``loc`` and values
    may be any reals, read modulo 2 pi; ``mean`` and ``variance`` are the circular ones, as
    ``torch.distributions.VonMises``.

    >>> d = clgrad.distributions.VonMises(clgrad.tensor(1.0), clgrad.tensor(2.0))
    >>> d.log_prob(clgrad.tensor(0.5)), d.variance
    (tensor(-0.9067), tensor(0.3022))
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = _broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return type(self)(
            self.loc.expand(batch_shape),
            self.concentration.expand(batch_shape),
            validate_args=self._validate_args,
        )

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        log_prob = self.concentration * (value - self.loc).cos()
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    def _wide(self, x: Tensor) -> Tensor:
        return x.double() if x.device.supports(D.float64) else x.float()

    def _proposal_r(self, kappa: Tensor) -> Tensor:
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        # the second-order Taylor expansion at 0, where the closed form cancels
        return where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            loc, kappa = self._wide(self.loc), self._wide(self.concentration)
            draws = _rejection_sample(loc, kappa, self._proposal_r(kappa), shape)
            return draws.to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        log_ratio = _log_modified_bessel_fn(k, order=1) - _log_modified_bessel_fn(k, order=0)
        return 1 - log_ratio.exp()
