"""Discrete distributions: ``Bernoulli``, ``Categorical``, ``OneHotCategorical`` (and its
straight-through ``OneHotCategoricalStraightThrough``), ``Binomial``, ``Geometric``,
``Poisson``, as ``torch.distributions``' (``probs`` or ``logits``, as torch takes them;
integer-valued draws as floats, category indices as int64)."""

from __future__ import annotations

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..functional import broadcast_tensors, multinomial, rand
from ..nn import functional as F
from ..ops.creation import arange, eye, poisson
from ..ops.elementwise import where
from ..tensor import Size, Tensor
from . import constraints
from .distribution import (
    _NO_SHAPE,
    Distribution,
    _as_tensor,
    _broadcast_all,
    _probs_to_logits,
)
from .exp_family import ExponentialFamily
from .utils import lazy_property

__all__ = [
    "Bernoulli",
    "Categorical",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Binomial",
    "Geometric",
    "Poisson",
]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


# A two-outcome distribution keeps the parameter it was given; the other is derived on first
# use (``lazy_property``), as torch's: no work for a form never read, and ``repr``,
# ``vars`` and argument validation see the given one alone.
def _binary_logits(self) -> Tensor:
    return _probs_to_logits(self.probs, is_binary=True)


def _binary_probs(self) -> Tensor:
    return self.logits.sigmoid()


class Bernoulli(ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0, as
    ``torch.distributions.Bernoulli``.

    >>> clgrad.distributions.Bernoulli(probs=clgrad.tensor([0.25])).log_prob(clgrad.tensor([1.0]))
    tensor([-1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0
    _expand_params = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = _broadcast_all(probs)
            super().__init__(self.probs.shape, validate_args=validate_args)
        else:
            (self.logits,) = _broadcast_all(logits)
            super().__init__(self.logits.shape, validate_args=validate_args)

    logits = lazy_property(_binary_logits)
    probs = lazy_property(_binary_probs)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

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
        self._validate_sample(value)
        value = _as_tensor(value, self.logits)
        logits, value = broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True) -> Tensor:
        """The values 0 and 1 along a new leading dim.

        >>> clgrad.distributions.Bernoulli(clgrad.tensor([0.3, 0.6])).enumerate_support()
        tensor([[0., 0.],
                [1., 1.]])
        """
        values = arange(2, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple:
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()


class Categorical(Distribution):
    """A draw of one of ``K`` categories with ``probs`` (normalized along the last dim) or
    ``logits`` (unnormalized log-probabilities), as ``torch.distributions.Categorical``.

    >>> d = clgrad.distributions.Categorical(probs=clgrad.tensor([0.5, 0.25, 0.25]))
    >>> d.log_prob(clgrad.tensor(1)), d.entropy()
    (tensor(-1.3863), tensor(1.0397))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _expand_params = {"probs": 1, "logits": 1}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self._check_simplex(probs, validate_args)
            self.probs = probs / probs.sum(-1, keepdim=True)
            given = self.probs
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            given = self.logits
        self._num_events = given.shape[-1]
        super().__init__(given.shape[:-1], validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return _probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return self.logits.softmax(-1)

    def _check_simplex(self, probs, validate_args):
        if validate_args is not None:
            self._validate_args = validate_args
        self._check((probs >= 0).all() & (probs.sum(-1) > 0).all(), "probs (Simplex)", probs)

    @constraints.dependent_property(is_discrete=True)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        given = vars(self).get("probs")
        return (self.logits if given is None else given).shape

    @property
    def mean(self) -> Tensor:
        return self.probs.new_full(self._extended_shape(), float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.probs.new_full(self._extended_shape(), float("nan"))

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
        self._validate_sample(value)
        value = _as_tensor(value, self.logits) if not isinstance(value, Tensor) else value
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = D.finfo(self.logits.dtype).min
        return -(self.logits.clamp(min=min_real) * self.probs).sum(-1)

    def enumerate_support(self, expand=True) -> Tensor:
        """The category indices ``0 .. K-1`` along a new leading dim.

        >>> clgrad.distributions.Categorical(clgrad.tensor([0.5, 0.5])).enumerate_support()
        tensor([0, 1])
        """
        values = arange(self._num_events, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """A ``Categorical`` draw as a one-hot vector of length ``K`` (event shape ``(K,)``), as
    ``torch.distributions.OneHotCategorical``.

    >>> d = clgrad.distributions.OneHotCategorical(probs=clgrad.tensor([0.5, 0.25, 0.25]))
    >>> d.log_prob(clgrad.tensor([0.0, 1.0, 0.0])), d.sample().shape
    (tensor(-1.3863), clgrad.Size([3]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(
            self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape, False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return F.one_hot(self.probs.argmax(-1), self.probs.shape[-1]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, self.probs.shape[-1]).to(self.probs.dtype)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand=True) -> Tensor:
        """The K one-hot vectors along a new leading dim.

        >>> d = clgrad.distributions.OneHotCategorical(clgrad.tensor([0.5, 0.5]))
        >>> d.enumerate_support()
        tensor([[1., 0.],
                [0., 1.]])
        """
        n = self.event_shape[0]
        values = eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` whose ``rsample`` passes gradients straight through (Bengio et
    al., 2013): the draw's value, with the gradient of ``probs``, as
    ``torch.distributions.OneHotCategoricalStraightThrough``.

    >>> logits = clgrad.tensor([0.0, 1.0], requires_grad=True)
    >>> d = clgrad.distributions.OneHotCategoricalStraightThrough(logits=logits)
    >>> x = d.rsample()
    >>> (x * clgrad.tensor([1.0, 2.0])).sum().backward()
    >>> x.sum().item(), logits.grad
    (1.0, tensor([-0.1966,  0.1966]))
    """

    has_rsample = True

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Binomial(Distribution):
    """The number of successes in ``total_count`` independent trials of success probability
    ``probs`` (or ``sigmoid(logits)``), as ``torch.distributions.Binomial``.

    >>> d = clgrad.distributions.Binomial(4, probs=clgrad.tensor(0.5))
    >>> d.log_prob(clgrad.tensor(2.0)), d.mean, d.variance
    (tensor(-0.9808), tensor(2.), tensor(1.))
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True
    _expand_params = {"total_count": 0, "probs": 0, "logits": 0}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = _broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            super().__init__(self.probs.shape, validate_args=validate_args)
        else:
            self.total_count, self.logits = _broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            super().__init__(self.logits.shape, validate_args=validate_args)

    logits = lazy_property(_binary_logits)
    probs = lazy_property(_binary_probs)

    @constraints.dependent_property(is_discrete=True)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        most = int(self.total_count.max().item()) if self.total_count.numel() else 0
        with no_grad():
            # the sum of total_count Bernoulli trials; trials past an entry's count are masked
            trial = arange(most, dtype=self.probs.dtype, device=self.probs.device)
            u = rand((*shape, most), dtype=self.probs.dtype, device=self.probs.device)
            success = (u < self.probs.unsqueeze(-1)) & (trial < self.total_count.unsqueeze(-1))
            return success.to(self.probs.dtype).sum(-1)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.logits)
        n, logits = self.total_count, self.logits
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        # n * log(1 + exp(logits)), written so that neither sign of logits overflows
        clamped = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
        normalizer = n * clamped + n * (-logits.abs()).exp().log1p() - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalizer

    def enumerate_support(self, expand=True) -> Tensor:
        """The values ``0 .. total_count`` along a new leading dim (one ``total_count`` for the
        whole batch, as torch requires).

        >>> clgrad.distributions.Binomial(2, probs=clgrad.tensor(0.5)).enumerate_support()
        tensor([0., 1., 2.])
        """
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = arange(1 + total, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values

    def entropy(self) -> Tensor:
        values = self.enumerate_support(False)
        log_prob = self.log_prob(values)
        return -(log_prob.exp() * log_prob).sum(0)


class Geometric(Distribution):
    """The number of failures before the first success in trials of success probability
    ``probs`` (or ``sigmoid(logits)``), as ``torch.distributions.Geometric``.

    >>> d = clgrad.distributions.Geometric(probs=clgrad.tensor(0.25))
    >>> d.log_prob(clgrad.tensor(2.0)), d.mean
    (tensor(-1.9617), tensor(3.))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_params = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = _broadcast_all(probs)
            super().__init__(self.probs.shape, validate_args=validate_args)
            if self._validate_args and not bool((self.probs > 0).all()):
                raise ValueError(
                    f"Expected parameter probs (Tensor of shape {tuple(self.probs.shape)}) of "
                    f"distribution {self!r} to be positive but found invalid values:\n{self.probs}"
                )
        else:
            (self.logits,) = _broadcast_all(logits)
            super().__init__(self.logits.shape, validate_args=validate_args)

    logits = lazy_property(_binary_logits)
    probs = lazy_property(_binary_probs)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return self.probs.new_zeros(()).expand(self.batch_shape)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = D.finfo(self.probs.dtype).tiny
        with no_grad():
            u = rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.probs)
        value, probs = broadcast_tensors(value, self.probs)
        # probs == 1 puts all mass on 0: 0 * log(0) there is 0, not NaN
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        bce = F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs


class Poisson(ExponentialFamily):
    """Counts with mean ``rate`` (pmf ``rate**k exp(-rate) / k!``), as
    ``torch.distributions.Poisson``; draws are made on the host.

    >>> d = clgrad.distributions.Poisson(clgrad.tensor(2.0))
    >>> d.log_prob(clgrad.tensor(3.0)), d.variance
    (tensor(-1.7123), tensor(2.))
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand_params = {"rate": 0}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        with no_grad():
            return poisson(self.rate.expand(self._extended_shape(sample_shape)).contiguous())

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.rate)
        rate, value = broadcast_tensors(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
