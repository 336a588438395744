"""``Kumaraswamy``, as ``torch.distributions.kumaraswamy``: a beta-like distribution on the
unit interval whose CDF ``1 - (1 - x**a)**b`` inverts in closed form, so a uniform draw maps
straight to one (``rsample`` is reparameterized)."""

from __future__ import annotations

import math

from ..ops.creation import full_like
from ..ops.elementwise import where
from ..tensor import Tensor
from . import constraints
from .continuous import Uniform
from .distribution import _broadcast_all
from .transformed import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """The n-th raw moment, ``b B(1 + n / a, b)``."""
    arg1 = 1 + n / a
    log_value = arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution with ``concentration1`` (a) and ``concentration0`` (b)
    (density ``a b x**(a-1) (1 - x**a)**(b-1)`` on [0, 1]), as
    ``torch.distributions.Kumaraswamy``.

    >>> d = clgrad.distributions.Kumaraswamy(clgrad.tensor(2.0), clgrad.tensor(3.0))
    >>> d.log_prob(clgrad.tensor(0.5)), d.mean, d.mode
    (tensor(0.5232), tensor(0.4571), tensor(0.4472))

    ``mode`` is the density's maximum, ``((a - 1) / (a b - 1)) ** (1 / a)`` (NaN unless both
    concentrations are at least 1): torch's formula here is NaN for every b > 1.
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            full_like(self.concentration0, 0),
            full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        # where the density's derivative vanishes, in log space; with a concentration below 1
        # the density is unbounded at an end
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        return where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean**2

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = (self.concentration0 + 1).digamma() + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
