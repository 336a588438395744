"""``LogisticNormal``, as ``torch.distributions.logistic_normal``: a normal vector mapped onto
the simplex by stick breaking."""

from __future__ import annotations

from ..tensor import Tensor
from . import constraints
from .continuous import Normal
from .transformed import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(X)`` for X ~ Normal(``loc``, ``scale``) (K - 1 coordinates
    give a point of the K-simplex), as ``torch.distributions.LogisticNormal``.

    >>> d = clgrad.distributions.LogisticNormal(clgrad.zeros(2), clgrad.ones(2))
    >>> d.log_prob(clgrad.tensor([0.2, 0.3, 0.5])), d.sample().shape
    (tensor(1.2980), clgrad.Size([3]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])  # one coordinate: a point of the 2-simplex
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
