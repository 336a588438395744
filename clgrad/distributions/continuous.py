"""Continuous distributions over the reals written directly: ``Normal``, ``Uniform``,
``Exponential``, ``Laplace``, ``Cauchy``, ``HalfNormal``, as ``torch.distributions``' (same
arguments, moments, ``log_prob``, ``cdf``/``icdf``, reparameterized ``rsample``)."""

from __future__ import annotations

import math

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..functional import normal, rand
from ..ops.elementwise import where
from ..tensor import Tensor
from . import constraints
from .distribution import _NO_SHAPE, Distribution, _as_tensor, _broadcast_all
from .exp_family import ExponentialFamily

__all__ = ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfNormal"]


def _standard_normal(shape, like: Tensor) -> Tensor:
    return normal(like.new_zeros(()).expand(shape), like.new_ones(()).expand(shape))


class Normal(ExponentialFamily):
    """The normal distribution N(loc, scale**2), as ``torch.distributions.Normal``.

    >>> d = clgrad.distributions.Normal(clgrad.tensor([0.0]), clgrad.tensor([2.0]))
    >>> d.log_prob(clgrad.tensor([0.0]))
    tensor([-1.6121])
    >>> d.entropy()
    tensor([2.1121])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale**2

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def _natural_params(self) -> tuple:
        return self.loc / self.scale**2, -0.5 * (self.scale**2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x**2 / y + 0.5 * (-math.pi / y).log()

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            # in loc's dtype, as torch's: its normal(mean, std) draws in the mean's dtype, and
            # its broadcast_all leaves float32 loc and float64 scale each as it is
            scale = self.scale.to(self.loc.dtype)
            return normal(self.loc.expand(shape), scale.expand(shape))

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return (
            -((value - self.loc) ** 2) / (2 * self.scale**2)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """The uniform distribution on [low, high), as ``torch.distributions.Uniform``.

    >>> clgrad.distributions.Uniform(0.0, 4.0).entropy()
    tensor(1.3863)
    """

    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True
    _expand_params = {"low": 0, "high": 0}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)
        self._check(self.low < self.high, "low (LessThan)", self.low)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        # closed, as torch's: draws fall in [low, high), but ``high`` is a valid value (its
        # density is 0 there; log_prob gives -inf rather than raising)
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return self.high.new_full(self.batch_shape, float("nan"))

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.low)
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.low)
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (density ``rate * exp(-rate * x)``, x >= 0),
    as ``torch.distributions.Exponential``.

    >>> d = clgrad.distributions.Exponential(clgrad.tensor([2.0]))
    >>> d.log_prob(clgrad.tensor([1.0])), d.mean, d.cdf(clgrad.tensor([1.0]))
    (tensor([-1.3069]), tensor([0.5000]), tensor([0.8647]))
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_params = {"rate": 0}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate.new_zeros(()).expand(self.batch_shape)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.rate.dtype, device=self.rate.device)
        return -(-u).log1p() / self.rate  # u < 1, so 1 - u > 0: a finite standard draw

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.rate)
        return self.rate.log() - self.rate * value

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.rate)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.rate)
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


class Laplace(Distribution):
    """The Laplace distribution (density ``exp(-|x - loc| / scale) / (2 scale)``), as
    ``torch.distributions.Laplace``.

    >>> d = clgrad.distributions.Laplace(0.0, 2.0)
    >>> d.log_prob(clgrad.tensor(1.0)), d.variance, d.icdf(clgrad.tensor(0.75))
    (tensor(-1.8863), tensor(8.), tensor(1.3863))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale**2

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = D.finfo(self.loc.dtype).eps
        # u in (-1, 1): at -1 the log1p below would be log(0)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) - (1 - eps)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Cauchy(Distribution):
    """The Cauchy distribution (median ``loc``, half width ``scale``; no mean or variance), as
    ``torch.distributions.Cauchy``.

    >>> d = clgrad.distributions.Cauchy(0.0, 1.0)
    >>> d.log_prob(clgrad.tensor(1.0)), d.cdf(clgrad.tensor(1.0)), d.mean
    (tensor(-1.8379), tensor(0.7500), tensor(nan))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc.new_full(self.batch_shape, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.loc.new_full(self.batch_shape, float("inf"))

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + ((u - 0.5) * math.pi).tan() * self.scale

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z**2).log1p()

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        return ((value - 0.5) * math.pi).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class HalfNormal(Distribution):
    """``|X|`` for X ~ N(0, scale**2), as ``torch.distributions.HalfNormal``.

    >>> d = clgrad.distributions.HalfNormal(clgrad.tensor(1.0))
    >>> d.log_prob(clgrad.tensor(1.0)), d.mean
    (tensor(-0.7258), tensor(0.7979))
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand_params = {"scale": 0}

    def __init__(self, scale, validate_args=None):
        (self.scale,) = _broadcast_all(scale)
        super().__init__(self.scale.shape, validate_args=validate_args)
        self.base_dist = Normal(self.scale.new_zeros(()), self.scale, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        return HalfNormal(self.scale.expand(batch_shape), validate_args=self._validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return self.scale.new_zeros(()).expand(self.batch_shape)

    @property
    def variance(self) -> Tensor:
        return self.scale**2 * (1 - 2 / math.pi)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        return self.base_dist.rsample(sample_shape).abs()

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.scale)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, float("-inf"))

    def cdf(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.scale)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob) -> Tensor:
        prob = _as_tensor(prob, self.scale)
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
