"""``FisherSnedecor``, as ``torch.distributions.fishersnedecor``: the F-distribution, a ratio
of two scaled gamma (chi-squared) draws, so ``rsample`` is reparameterized."""

from __future__ import annotations

import math
from numbers import Number

from .. import dtypes as D
from ..ops.elementwise import where
from ..tensor import Size, Tensor
from . import constraints
from .distribution import _NO_SHAPE, Distribution, _as_tensor, _broadcast_all
from .gamma import Gamma

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F-distribution with ``df1`` and ``df2`` degrees of freedom, as
    ``torch.distributions.FisherSnedecor``.

    >>> d = clgrad.distributions.FisherSnedecor(clgrad.tensor(4.0), clgrad.tensor(6.0))
    >>> d.log_prob(clgrad.tensor(1.0)), d.mean, d.mode
    (tensor(-0.8802), tensor(1.5000), tensor(0.3750))
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = _broadcast_all(df1, df2)
        # X1 ~ Gamma(df1 / 2, df1) is chi2(df1) / df1: the ratio of two such is F(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        numbers = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(Size() if numbers else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return where(self.df2 > 2, self.df2 / (self.df2 - 2), math.nan)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self) -> Tensor:
        df2 = where(self.df2 > 4, self.df2, math.nan)
        return 2 * df2**2 * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2) ** 2 * (df2 - 4))

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = D.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.df1)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
