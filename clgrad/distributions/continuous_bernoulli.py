"""``ContinuousBernoulli``, as ``torch.distributions.continuous_bernoulli`` (Loaiza-Ganem and
Cunningham, 2019): the density ``C(p) p**x (1 - p)**(1 - x)`` on [0, 1], the normalized
Bernoulli likelihood that VAEs with [0, 1]-valued pixels should use.

Its closed forms divide by ``2p - 1`` (and ``log(p / (1 - p))``), zero at p = 1/2: within
``lims`` of 1/2 each uses its Taylor expansion there instead, as torch's."""

from __future__ import annotations

import math
from numbers import Number

from ..autograd.grad_mode import no_grad
from ..functional import broadcast_tensors, rand
from ..nn import functional as F
from ..ops.creation import ones_like, zeros_like
from ..ops.elementwise import where
from ..tensor import Size, Tensor
from . import constraints
from .distribution import (
    _NO_SHAPE,
    Distribution,
    _as_tensor,
    _broadcast_all,
    _clamp_probs,
    _probs_to_logits,
)
from .exp_family import ExponentialFamily
from .utils import lazy_property

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution with ``probs`` in (0, 1) or real ``logits``
    (neither a probability nor log-odds here, but named as Bernoulli's), as
    ``torch.distributions.ContinuousBernoulli``; ``rsample`` is reparameterized.

    >>> d = clgrad.distributions.ContinuousBernoulli(clgrad.tensor([0.3]))
    >>> d.log_prob(clgrad.tensor([0.5])), d.mean, d.cdf(clgrad.tensor([0.5]))
    (tensor([-0.0297]), tensor([0.4302]), tensor([0.6044]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = _broadcast_all(probs)
            # as torch's: checked here, before the clamp, and only when validate_args is given
            # (the clamped values would always pass)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = _clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = _broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        batch_shape = Size() if is_scalar else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in vars(self):
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in vars(self):
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """``log C(p)``, the log normalizing constant as a function of ``probs``."""
        cut_probs = self._cut_probs()
        below_half = where(cut_probs <= 0.5, cut_probs, zeros_like(cut_probs))
        above_half = where(cut_probs >= 0.5, cut_probs, ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - where(
            cut_probs <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log()
        )
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / ((-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x**2) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut_probs = self._cut_probs()
        variances = (
            cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs) ** 2
            + 1.0 / ((-cut_probs).log1p() - cut_probs.log()) ** 2
        )
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return _probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return _clamp_probs(self.logits.sigmoid())

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.probs)
        logits, value = broadcast_tensors(self.logits, value)
        bce = F.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.probs)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs**value * (1.0 - cut_probs) ** (1.0 - value) + cut_probs - 1.0) / (
            2.0 * cut_probs - 1.0
        )
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.probs)
        cut_probs = self._cut_probs()
        log1m_cut = (-cut_probs).log1p()
        numerator = (-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p() - log1m_cut
        inverted = numerator / (cut_probs.log() - log1m_cut)
        return where(self._outside_unstable_region(), inverted, value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x):
        """``log C`` as a function of the natural parameter ``x`` (the logits)."""
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = where(out_unst_reg, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut_nat_params.expm1().abs().log() - cut_nat_params.abs().log()
        taylor = 0.5 * x + x**2 / 24.0 - x**4 / 2880.0
        return where(out_unst_reg, log_norm, taylor)
