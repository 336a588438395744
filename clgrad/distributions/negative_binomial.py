"""``NegativeBinomial``, as ``torch.distributions.negative_binomial``: the number of successes
before ``total_count`` failures, drawn as a Poisson of a gamma-distributed rate."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops.creation import poisson
from ..tensor import Size, Tensor
from . import constraints
from .distribution import (
    _NO_SHAPE,
    Distribution,
    _as_tensor,
    _broadcast_all,
    _logits_to_probs,
    _probs_to_logits,
)
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes before ``total_count`` failures in trials of success probability ``probs``
    (or ``sigmoid(logits)``); ``total_count`` may be any non-negative real, as
    ``torch.distributions.NegativeBinomial``.

    >>> d = clgrad.distributions.NegativeBinomial(3.0, probs=clgrad.tensor(0.4))
    >>> d.log_prob(clgrad.tensor(2.0)), d.mean, d.variance
    (tensor(-1.5733), tensor(2.), tensor(3.3333))
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = _broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = _broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in vars(self):
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in vars(self):
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self) -> Tensor:
        return _probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return _logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    @lazy_property
    def _gamma(self) -> Gamma:
        # not validated: total_count may be 0
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            return poisson(rate.contiguous())

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self._param)
        log_unnormalized_prob = self.total_count * F.logsigmoid(
            -self.logits
        ) + value * F.logsigmoid(self.logits)
        log_normalization = (
            -(self.total_count + value).lgamma()
            + (1.0 + value).lgamma()
            + self.total_count.lgamma()
        )
        # total_count == 0 and value == 0 has probability 1, though lgamma(0) is infinite
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
