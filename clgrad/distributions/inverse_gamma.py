"""``InverseGamma``, as ``torch.distributions.inverse_gamma``: ``1 / X`` for X ~ Gamma."""

from __future__ import annotations

import math

from ..ops.elementwise import where
from ..tensor import Tensor
from . import constraints
from .gamma import Gamma
from .transformed import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """``1 / X`` for X ~ Gamma(``concentration``, ``rate``), as
    ``torch.distributions.InverseGamma``; ``rsample`` is reparameterized (through the gamma's
    implicit gradient).

    >>> d = clgrad.distributions.InverseGamma(clgrad.tensor(3.0), clgrad.tensor(2.0))
    >>> d.log_prob(clgrad.tensor(1.0)), d.mean, d.variance
    (tensor(-0.6137), tensor(1.), tensor(1.))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        result = self.rate**2 / ((c - 1) ** 2 * (c - 2))
        return where(c > 2, result, math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
