"""``HalfCauchy``, as ``torch.distributions.half_cauchy``: ``|X|`` for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math

from ..ops.elementwise import where
from ..tensor import Tensor
from . import constraints
from .continuous import Cauchy
from .distribution import _as_tensor
from .transformed import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """``|X|`` for X ~ Cauchy(0, ``scale``) (no mean: it is infinite), as
    ``torch.distributions.HalfCauchy``; ``rsample`` is reparameterized.

    >>> d = clgrad.distributions.HalfCauchy(clgrad.tensor([1.0]))
    >>> d.log_prob(clgrad.tensor([1.0])), d.cdf(clgrad.tensor([1.0])), d.entropy()
    (tensor([-1.1447]), tensor([0.5000]), tensor([1.8379]))
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return self.scale.new_full(self._extended_shape(), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.scale.new_zeros(()).expand(self.scale.shape)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.scale)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.scale)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob) -> Tensor:
        prob = _as_tensor(prob, self.scale)
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
