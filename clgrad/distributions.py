"""Probability distributions, as ``torch.distributions``: ``Normal``, ``Uniform``,
``Bernoulli`` and ``Categorical`` (sampling, reparameterized sampling where there is one,
``log_prob``, ``entropy``, moments) and ``kl_divergence`` between two of a kind. Parameters
broadcast; arguments are validated as PyTorch validates them (``validate_args``)."""

from __future__ import annotations

import math

from . import dtypes as D
from .autograd.grad_mode import no_grad
from .functional import broadcast_tensors, multinomial, normal, rand
from .nn import functional as F
from .ops.creation import tensor
from .tensor import Size, Tensor

_NO_SHAPE = Size()  # a default sample shape: one draw

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "kl_divergence"]


def _as_tensor(value, like=None) -> Tensor:
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if like is not None else D.get_default_dtype()
    device = like.device if like is not None else None
    return tensor(float(value), dtype=dtype, device=device)


class Distribution:
    """Base class: ``batch_shape`` (independent distributions) and ``event_shape`` (one
    draw's shape); ``sample(sample_shape)`` draws without a graph, ``rsample`` with one where
    the distribution has a reparameterization; ``validate_args`` (PyTorch's default: on)
    checks the parameters and the values given to ``log_prob``, with ValueError."""

    has_rsample = False
    _validate_default = True

    def __init__(self, batch_shape=_NO_SHAPE, event_shape=_NO_SHAPE, validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument validation on or off by default, as PyTorch's."""
        Distribution._validate_default = bool(value)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape=_NO_SHAPE) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without a graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no rsample")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _check(self, ok: Tensor, what: str, value) -> None:
        if self._validate_args and not bool(ok.all()):
            raise ValueError(
                f"Expected parameter {what} of distribution {type(self).__name__} to satisfy its "
                f"constraint, but found invalid values:\n{value}"
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Normal(Distribution):
    """The normal distribution N(loc, scale**2), as ``torch.distributions.Normal``.

    >>> d = clgrad.distributions.Normal(clgrad.tensor([0.0]), clgrad.tensor([2.0]))
    >>> d.log_prob(clgrad.tensor([0.0]))
    tensor([-1.6121])
    >>> d.entropy()
    tensor([2.1121])
    """

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        like = loc if isinstance(loc, Tensor) else scale if isinstance(scale, Tensor) else None
        self.loc, self.scale = broadcast_tensors(_as_tensor(loc, like), _as_tensor(scale, like))
        super().__init__(self.loc.shape, validate_args=validate_args)
        self._check(self.scale > 0, "scale (GreaterThan(lower_bound=0.0))", self.scale)

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

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = normal(self.loc.new_zeros(()).expand(shape), self.loc.new_ones(()).expand(shape))
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        return (
            -((value - self.loc) ** 2) / (2 * self.scale**2)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, self.loc)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def __repr__(self) -> str:
        return f"Normal(loc: {self.loc.shape}, scale: {self.scale.shape})"


class Uniform(Distribution):
    """The uniform distribution on [low, high), as ``torch.distributions.Uniform``.

    >>> clgrad.distributions.Uniform(0.0, 4.0).entropy()
    tensor(1.3863)
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        like = low if isinstance(low, Tensor) else high if isinstance(high, Tensor) else None
        self.low, self.high = broadcast_tensors(_as_tensor(low, like), _as_tensor(high, like))
        super().__init__(self.low.shape, validate_args=validate_args)
        self._check(self.low < self.high, "low (LessThan)", self.low)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value) -> Tensor:
        value = _as_tensor(value, self.low)
        if self._validate_args:
            self._check((self.low <= value) & (value <= self.high), "value (Interval)", value)
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def __repr__(self) -> str:
        return f"Uniform(low: {self.low.shape}, high: {self.high.shape})"


class Bernoulli(Distribution):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0, as
    ``torch.distributions.Bernoulli``.

    >>> clgrad.distributions.Bernoulli(probs=clgrad.tensor([0.25])).log_prob(clgrad.tensor([1.0]))
    tensor([-1.3863])
    """

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = _as_tensor(probs)
            super().__init__(self.probs.shape, validate_args=validate_args)
            self._check((self.probs >= 0) & (self.probs <= 1), "probs (Interval)", self.probs)
            eps = D.finfo(self.probs.dtype).eps
            p = self.probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (-p).log1p()
        else:
            self.logits = _as_tensor(logits)
            super().__init__(self.logits.shape, validate_args=validate_args)
            self.probs = self.logits.sigmoid()

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return (rand(shape, dtype=self.probs.dtype, device=self.probs.device) < self.probs).to(
                self.probs.dtype
            )

    def log_prob(self, value) -> Tensor:
        value = _as_tensor(value, self.logits)
        if self._validate_args:
            self._check((value == 0) | (value == 1), "value (Boolean)", value)
        logits, value = broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def __repr__(self) -> str:
        return f"Bernoulli(probs: {self.probs.shape})"


class Categorical(Distribution):
    """A draw of one of ``K`` categories with ``probs`` (normalized along the last dim) or
    ``logits`` (unnormalized log-probabilities), as ``torch.distributions.Categorical``.

    >>> d = clgrad.distributions.Categorical(probs=clgrad.tensor([0.5, 0.25, 0.25]))
    >>> d.log_prob(clgrad.tensor(1)), d.entropy()
    (tensor(-1.3863), tensor(1.0397))
    """

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self._check_simplex(probs, validate_args)
            self.probs = probs / probs.sum(-1, keepdim=True)
            eps = D.finfo(self.probs.dtype).eps
            self.logits = self.probs.clamp(eps, 1 - eps).log()
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1], validate_args=validate_args)

    def _check_simplex(self, probs, validate_args):
        self._validate_args = self._validate_default if validate_args is None else validate_args
        self._check((probs >= 0).all() & (probs.sum(-1) > 0).all(), "probs (Simplex)", probs)

    @property
    def param_shape(self) -> Size:
        return self.probs.shape

    @property
    def mean(self) -> Tensor:
        return self.probs.new_full(self._extended_shape(), float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        sample_shape = Size(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        probs_2d = self.probs.reshape(-1, self._num_events)
        with no_grad():
            draws = multinomial(probs_2d, n, True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value) -> Tensor:
        value = _as_tensor(value, self.logits) if not isinstance(value, Tensor) else value
        if self._validate_args:
            ok = (value >= 0) & (value < self._num_events) & (value == value.floor())
            self._check(ok, "value (IntegerInterval)", value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = D.finfo(self.logits.dtype).min
        return -(self.logits.clamp(min=min_real) * self.probs).sum(-1)

    def __repr__(self) -> str:
        return f"Categorical(probs: {self.probs.shape})"


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) for two distributions of one kind (Normal, Uniform, Bernoulli, Categorical),
    as ``torch.distributions.kl_divergence`` (NotImplementedError for other pairs).

    >>> N = clgrad.distributions.Normal
    >>> clgrad.distributions.kl_divergence(N(0.0, 1.0), N(1.0, 1.0))
    tensor(0.5000)
    """
    if type(p) is not type(q) or type(p) not in _KL:
        raise NotImplementedError
    return _KL[type(p)](p, q)


def _kl_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


def _kl_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return result.masked_fill(outside, float("inf"))


def _kl_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, float("inf")).masked_fill(p.probs == 1, 0)
    return t1 + t2


def _kl_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0)
    return t.sum(-1)


_KL = {
    Normal: _kl_normal,
    Uniform: _kl_uniform,
    Bernoulli: _kl_bernoulli,
    Categorical: _kl_categorical,
}
