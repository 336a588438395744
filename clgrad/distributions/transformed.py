"""Distributions of transformed draws, as torch's: ``TransformedDistribution`` (a base
distribution pushed through a list of ``Transform``s, densities by the change of variables),
and the ones torch defines through it: ``LogNormal``, ``Gumbel``, ``RelaxedBernoulli`` and
``RelaxedOneHotCategorical`` (the Gumbel-softmax / Concrete relaxations) with their logit- and
log-space bases ``LogitRelaxedBernoulli`` and ``ExpRelaxedCategorical``."""

from __future__ import annotations

import math

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..functional import broadcast_tensors, rand
from ..ops.creation import full_like, ones_like
from ..tensor import Size, Tensor
from . import constraints
from .continuous import Normal, Uniform
from .discrete import Categorical, _binary_logits, _binary_probs
from .distribution import (
    _NO_SHAPE,
    Distribution,
    _as_tensor,
    _broadcast_all,
    _clamp_probs,
    _sum_rightmost,
)
from .independent import Independent
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, Transform
from .utils import lazy_property

__all__ = [
    "TransformedDistribution",
    "LogNormal",
    "Gumbel",
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "ExpRelaxedCategorical",
    "RelaxedOneHotCategorical",
]

_EULER_GAMMA = 0.57721566490153286060


class TransformedDistribution(Distribution):
    """The distribution of ``transforms[-1](...transforms[0](x))`` for x drawn from
    ``base_distribution``; ``log_prob`` subtracts each transform's log-det-Jacobian, as
    ``torch.distributions.TransformedDistribution``. A SAC policy squashes a Gaussian so:

    >>> D, T = clgrad.distributions, clgrad.distributions.transforms
    >>> d = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.TanhTransform(cache_size=1)])
    >>> d.log_prob(clgrad.tensor(0.5))
    tensor(-0.7821)
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(
                f"base_distribution needs to have shape with size at least "
                f"{transform.domain.event_dim}, but got {base_shape}."
            )
        forward_shape = Size(transform.forward_shape(base_shape))
        expanded_base_shape = Size(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:  # a transform's parameters broadcast the batch
            cut = len(expanded_base_shape) - base_event_dim
            base_distribution = base_distribution.expand(expanded_base_shape[:cut])
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The same transforms of the base distribution expanded to the matching batch shape
        (``_instance``: a subclass's new instance with its own parameters already set).

        >>> D, T = clgrad.distributions, clgrad.distributions.transforms
        >>> d = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.ExpTransform()])
        >>> d.expand((3,)).sample().shape
        clgrad.Size([3])
        """
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        shape = Size(tuple(batch_shape) + tuple(self.event_shape))
        for transform in reversed(self.transforms):
            shape = Size(transform.inverse_shape(shape))
        base_batch_shape = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @constraints.dependent_property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, _first_param(self.base_dist))
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            ladj = transform.log_abs_det_jacobian(x, y)
            log_prob = log_prob - _sum_rightmost(ladj, event_dim - transform.domain.event_dim)
            y = x
        base = self.base_dist.log_prob(y)
        return log_prob + _sum_rightmost(base, event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """The base's cdf as this one's: ``1 - cdf`` through a decreasing transform."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value) -> Tensor:
        value = _as_tensor(value, _first_param(self.base_dist))
        for transform in reversed(self.transforms):
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value) -> Tensor:
        value = _as_tensor(value, _first_param(self.base_dist))
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _first_param(dist):
    """A tensor parameter of ``dist`` (or of its base), whose dtype and device numbers take."""
    while isinstance(dist, (Independent, TransformedDistribution)):
        dist = dist.base_dist
    return next((v for v in vars(dist).values() if isinstance(v, Tensor)), None)


class LogNormal(TransformedDistribution):
    """``exp(X)`` for X ~ N(loc, scale**2), as ``torch.distributions.LogNormal``
    (a ``TransformedDistribution`` of ``Normal`` by ``ExpTransform``).

    >>> d = clgrad.distributions.LogNormal(0.0, 1.0)
    >>> d.log_prob(clgrad.tensor(1.0)), d.mean, d.entropy()
    (tensor(-0.9189), tensor(1.6487), tensor(1.4189))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return LogNormal(
            self.loc.expand(batch_shape), self.scale.expand(batch_shape), self._validate_args
        )

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale**2 / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale**2).exp()

    @property
    def variance(self) -> Tensor:
        scale2 = self.scale**2
        return scale2.expm1() * (2 * self.loc + scale2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution with ``loc`` and ``scale``, as
    ``torch.distributions.Gumbel`` (uniform noise through ``-log(-log u)``).

    >>> d = clgrad.distributions.Gumbel(0.0, 1.0)
    >>> d.log_prob(clgrad.tensor(0.0)), d.mean, d.cdf(clgrad.tensor(0.0))
    (tensor(-1.), tensor(0.5772), tensor(0.3679))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        finfo = D.finfo(self.loc.dtype)
        # the open unit interval: log(0) and log(-log(1)) would be infinite
        base_dist = Uniform(
            full_like(self.loc, finfo.tiny),
            full_like(self.loc, 1 - finfo.eps),
            validate_args=validate_args,
        )
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=self.loc, scale=-self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return Gumbel(
            self.loc.expand(batch_shape), self.scale.expand(batch_shape), self._validate_args
        )

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev**2

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER_GAMMA)

    # torch's Gumbel shows its parameters, as a plain Distribution
    __repr__ = Distribution.__repr__


class LogitRelaxedBernoulli(Distribution):
    """The logit of a ``RelaxedBernoulli`` draw: ``(logit(u) + logits) / temperature``, as
    ``torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli``.

    >>> D = clgrad.distributions.transformed
    >>> d = D.LogitRelaxedBernoulli(clgrad.tensor(0.5), logits=clgrad.tensor(0.0))
    >>> d.log_prob(clgrad.tensor(0.0))
    tensor(-2.0794)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _expand_params = {"probs": 0, "logits": 0}

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        param = probs if probs is not None else logits
        is_scalar = not isinstance(param, Tensor)
        if probs is not None:
            (self.probs,) = _broadcast_all(probs)
            param = self.probs
        else:
            (self.logits,) = _broadcast_all(logits)
            param = self.logits
        self.temperature = _as_tensor(temperature, param)
        super().__init__(Size() if is_scalar else param.shape, validate_args=validate_args)

    logits = lazy_property(_binary_logits)
    probs = lazy_property(_binary_probs)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = _clamp_probs(self.probs.expand(shape))
        u = _clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.logits)
        logits, value = broadcast_tensors(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A continuous relaxation of ``Bernoulli`` on (0, 1) (the binary Concrete
    distribution): draws are differentiable in ``probs``/``logits``, and approach 0/1 as
    ``temperature`` falls, as ``torch.distributions.RelaxedBernoulli``.

    >>> d = clgrad.distributions.RelaxedBernoulli(clgrad.tensor(0.5), probs=clgrad.tensor(0.5))
    >>> d.log_prob(clgrad.tensor(0.5)), d.rsample((2,)).shape
    (tensor(-0.6931), clgrad.Size([2]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits, validate_args)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` draw (event shape ``(K,)``), as
    ``torch.distributions.relaxed_categorical.ExpRelaxedCategorical``.

    >>> D = clgrad.distributions.transformed
    >>> d = D.ExpRelaxedCategorical(clgrad.tensor(1.0), logits=clgrad.zeros(2))
    >>> d.log_prob(clgrad.tensor([0.0, 0.0]).log_softmax(-1))
    tensor(-1.3863)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.temperature = _as_tensor(temperature, self._categorical.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape, False)
        new._validate_args = self._validate_args
        return new

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value) -> Tensor:
        k = self._categorical._num_events
        self._validate_sample(value)
        logits, value = broadcast_tensors(self.logits, value)
        log_scale = full_like(self.temperature, float(k)).lgamma() - self.temperature.log() * (
            -(k - 1)
        )
        score = logits - value * self.temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A continuous relaxation of ``OneHotCategorical`` on the simplex (the Gumbel-softmax /
    Concrete distribution): ``softmax((logits + Gumbel noise) / temperature)``, as
    ``torch.distributions.RelaxedOneHotCategorical``.

    >>> D = clgrad.distributions
    >>> d = D.RelaxedOneHotCategorical(clgrad.tensor(1.0), probs=clgrad.tensor([0.5, 0.5]))
    >>> d.log_prob(clgrad.tensor([0.5, 0.5])), d.rsample().shape
    (tensor(0.), clgrad.Size([2]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
