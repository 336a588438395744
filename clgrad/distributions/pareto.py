"""``Pareto``, as ``torch.distributions.pareto``: the Pareto type I distribution, ``scale``
times the exponential of an Exponential(``alpha``) draw."""

from __future__ import annotations

from ..tensor import Tensor
from . import constraints
from .continuous import Exponential
from .distribution import _broadcast_all
from .transformed import TransformedDistribution
from .transforms import AffineTransform, ExpTransform

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto type I distribution with minimum ``scale`` and tail index ``alpha``
    (density ``alpha scale**alpha / x**(alpha + 1)`` for x >= scale), as
    ``torch.distributions.Pareto``; ``rsample`` is reparameterized.

    >>> d = clgrad.distributions.Pareto(clgrad.tensor(1.0), clgrad.tensor(3.0))
    >>> d.log_prob(clgrad.tensor(2.0)), d.mean, d.cdf(clgrad.tensor(2.0))
    (tensor(-1.6740), tensor(1.5000), tensor(0.8750))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = _broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)  # infinite for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)  # infinite for alpha <= 2
        return self.scale**2 * a / ((a - 1) ** 2 * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
