"""``Multinomial``, as ``torch.distributions.multinomial``: the counts of each category in
``total_count`` independent categorical draws."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..functional import broadcast_tensors
from ..ops.creation import ones_like, tensor
from ..ops.elementwise import where
from ..tensor import Size, Tensor
from . import constraints
from .discrete import Binomial, Categorical
from .distribution import _NO_SHAPE, Distribution, _as_tensor

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts over the last dim's categories in ``total_count`` draws with ``probs`` (or
    ``logits``), both normalized along the last dim, as ``torch.distributions.Multinomial``;
    ``log_prob`` takes any count totals, ``sample`` the one ``total_count``.

    >>> d = clgrad.distributions.Multinomial(4, clgrad.tensor([0.5, 0.25, 0.25]))
    >>> d.log_prob(clgrad.tensor([2.0, 1.0, 1.0])), d.mean, d.sample().sum()
    (tensor(-1.6740), tensor([2., 1., 1.]), tensor(4.))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(self.total_count, probs=new.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        sample_shape = Size(sample_shape)
        with no_grad():
            # (total_count, *sample_shape, *batch_shape) category indices, moved last and
            # counted per category
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            draws = draws.movedim(0, -1)
            counts = draws.new_zeros(tuple(self._extended_shape(sample_shape)))
            counts.scatter_add_(-1, draws, ones_like(draws))
            return counts.to(self.probs.dtype)

    def entropy(self) -> Tensor:
        n = tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - (n + 1).lgamma()
        # E[sum_k log x_k!], each x_k binomial(n, p_k): weights over the values 1..n
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        value = _as_tensor(value, self.logits)
        logits, value = broadcast_tensors(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # a category of probability 0 drawn 0 times contributes 0, not 0 * -inf
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
