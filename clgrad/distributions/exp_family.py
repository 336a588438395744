"""``ExponentialFamily``, the base class of distributions whose density has the form
``exp(<t(x), theta> - F(theta) + k(x))``, as ``torch.distributions.exp_family``: a subclass
gives its natural parameters ``theta`` (``_natural_params``), its log normalizer ``F``
(``_log_normalizer``) and the expected carrier measure ``E[k(x)]`` (``_mean_carrier_measure``),
and the entropy (and the KL divergence between two members of one family, in ``kl``) follow
from the Bregman divergence of ``F``, its gradient taken by autograd."""

from __future__ import annotations

from ..autograd.engine import grad
from ..tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential families; ``entropy()`` is ``F(theta) - <theta, grad F> -
    E[k(x)]`` (Nielsen and Nock, "Entropies and cross-entropies of exponential families").
    A subclass that defines only the three pieces gets its entropy:

    >>> D = clgrad.distributions
    >>> class Rate(D.ExponentialFamily):  # the exponential distribution, by its pieces
    ...     def __init__(self, rate):
    ...         self.rate = rate
    ...         super().__init__(rate.shape)
    ...     _natural_params = property(lambda self: (-self.rate,))
    ...     _log_normalizer = staticmethod(lambda x: -(-x).log())
    ...     _mean_carrier_measure = 0
    >>> Rate(clgrad.tensor([0.5, 2.0])).entropy()
    tensor([1.6931, 0.3069], grad_fn=<...>)
    >>> D.Exponential(clgrad.tensor([0.5, 2.0])).entropy()
    tensor([1.6931, 0.3069])
    """

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters ``theta``, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params) -> Tensor:
        """The log normalizer ``F(theta)`` at the given natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """``E[k(x)]``, the expected carrier measure."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*nparams)
        gradients = grad(log_normalizer.sum(), nparams, create_graph=True)
        result = result + log_normalizer
        for theta, g in zip(nparams, gradients):
            result = result - (theta * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
