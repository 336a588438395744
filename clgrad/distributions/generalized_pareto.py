"""``GeneralizedPareto``, as ``torch.distributions.generalized_pareto`` (after TensorFlow
Probability's): the tail distribution of peaks over a threshold. Concentration 0 is the
exponential distribution; there the closed forms divide by zero, so each formula takes its
limit wherever the concentration is (numerically) zero."""

from __future__ import annotations

import math
from numbers import Number

from ..functional import rand
from ..ops.creation import ones_like, zeros_like
from ..ops.elementwise import isclose, where
from ..tensor import Size, Tensor
from . import constraints
from .distribution import _NO_SHAPE, Distribution, _as_tensor, _broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and ``concentration`` (xi:
    0 the exponential, > 0 a Pareto, -1 the uniform), as
    ``torch.distributions.GeneralizedPareto``; ``rsample`` is reparameterized.

    >>> d = clgrad.distributions.GeneralizedPareto(0.0, 2.0, 0.5)
    >>> d.log_prob(clgrad.tensor(1.0)), d.mean, d.icdf(clgrad.tensor(0.5))
    (tensor(-1.3626), tensor(4.), tensor(1.6569))
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = _broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _zero_and_safe(self):
        """Where the concentration is 0, and the concentration with those entries 1."""
        conc = self.concentration
        eq_zero = isclose(conc, zeros_like(conc))
        return eq_zero, where(eq_zero, ones_like(conc), conc)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        z = self._z(value)
        eq_zero, safe_conc = self._zero_and_safe()
        y = 1 / safe_conc + ones_like(z)
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value) -> Tensor:
        """``log(1 - cdf(value))``.

        >>> d = clgrad.distributions.GeneralizedPareto(0.0, 1.0, 0.0)
        >>> d.log_survival_function(clgrad.tensor(2.0))
        tensor(-2.)
        """
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        z = self._z(value)
        eq_zero, safe_conc = self._zero_and_safe()
        where_nonzero = -(safe_conc * z).log1p() / safe_conc
        return where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        eq_zero, safe_conc = self._zero_and_safe()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        where_zero = self.loc - self.scale * logu
        return where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return where(valid, result, math.nan)

    def entropy(self) -> Tensor:
        entropy = self.scale.log() + self.concentration + 1
        return entropy.expand(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
