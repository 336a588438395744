"""Distributions built from another: ``Independent`` (batch dims read as event dims) and
``MixtureSameFamily`` (a categorical mixture of one family's components), as torch's."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .discrete import Categorical
from .distribution import _NO_SHAPE, Distribution, _sum_rightmost

__all__ = ["Independent", "MixtureSameFamily"]


class Independent(Distribution):
    """``base_distribution`` with its rightmost ``reinterpreted_batch_ndims`` batch dims read
    as event dims: ``log_prob`` and ``entropy`` sum over them (a diagonal Gaussian from a
    batch of ``Normal``), as ``torch.distributions.Independent``.

    >>> base = clgrad.distributions.Normal(clgrad.zeros(3), clgrad.ones(3))
    >>> d = clgrad.distributions.Independent(base, 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(clgrad.zeros(3))
    (clgrad.Size([]), clgrad.Size([3]), tensor(-2.7568))
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}"
            )
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        base_shape = tuple(batch_shape) + tuple(self.event_shape[: self.reinterpreted_batch_ndims])
        return Independent(
            self.base_dist.expand(base_shape), self.reinterpreted_batch_ndims, self._validate_args
        )

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        support = self.base_dist.support
        if support is None or not self.reinterpreted_batch_ndims:
            return support
        return constraints.independent(support, self.reinterpreted_batch_ndims)

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value) -> Tensor:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamily(Distribution):
    """A mixture: pick a component from ``mixture_distribution`` (a ``Categorical`` over the
    rightmost batch dim of ``component_distribution``), then draw from it, as
    ``torch.distributions.MixtureSameFamily``.

    >>> D = clgrad.distributions
    >>> mix = D.Categorical(probs=clgrad.tensor([0.5, 0.5]))
    >>> d = D.MixtureSameFamily(mix, D.Normal(clgrad.tensor([-1.0, 1.0]), clgrad.ones(2)))
    >>> d.log_prob(clgrad.tensor(0.0)), d.mean, d.variance
    (tensor(-1.4189), tensor(0.), tensor(2.))
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an  instance of torch.distributions."
                "Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution need to be an instance of torch.distributions."
                "Distribution"
            )
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape)[:-1]
        for m, c in zip(reversed(mixture_batch), reversed(component_batch)):
            if m != 1 and c != 1 and m != c:
                raise ValueError(
                    "`mixture_distribution.batch_shape` "
                    f"({Size(mixture_batch)}) is not compatible with "
                    f"`component_distribution.batch_shape`({Size(component_batch)})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        """This mixture with a larger ``batch_shape``: its mixture distribution expanded to
        it, its components to it plus the component dim, as torch's.

        >>> D = clgrad.distributions
        >>> mix = D.Categorical(logits=clgrad.zeros(3))
        >>> d = D.MixtureSameFamily(mix, D.Normal(clgrad.zeros(3), 1.0)).expand((4,))
        >>> d.batch_shape, d.sample().shape
        (clgrad.Size([4]), clgrad.Size([4]))
        """
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(
            new, batch_shape, new._component_distribution.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @constraints.dependent_property
    def support(self):
        # a value must lie in every component's support, as torch's
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    def _pad(self, x: Tensor) -> Tensor:
        """``x`` with a component dim inserted before its event dims."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dims(self, x: Tensor) -> Tensor:
        """The mixture's weights shaped to broadcast against the components' values."""
        for _ in range(self._event_ndims):
            x = x.unsqueeze(-1)
        return x

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dims(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        # the law of total variance: E[Var(X | k)] + Var(E[X | k])
        probs = self._pad_mixture_dims(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim)
        spread = (self.component_distribution.mean - self._pad(self.mean)) ** 2
        return mean_cond_var + (probs * spread).sum(dim)

    def cdf(self, x) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        with no_grad():
            sample_len = len(sample_shape)
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            component = self.mixture_distribution.sample(sample_shape)
            component_draws = self.component_distribution.sample(sample_shape)
            index = component.reshape(tuple(component.shape) + (1,) * (len(self.event_shape) + 1))
            index = index.expand(tuple(component.shape) + (1,) + tuple(self.event_shape))
            return component_draws.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return (
            f"MixtureSameFamily(\n  {self.mixture_distribution!r},\n"
            f"  {self.component_distribution!r})"
        )
