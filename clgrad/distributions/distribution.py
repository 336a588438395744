"""The ``Distribution`` base class and the helpers every distribution shares: turning numbers
into tensors, broadcasting parameters, summing the rightmost dims, clamping probabilities."""

from __future__ import annotations

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..functional import broadcast_tensors
from ..ops.creation import tensor
from ..tensor import Size, Tensor
from . import constraints

_NO_SHAPE = Size()  # a default sample shape: one draw

__all__ = ["Distribution"]


def _as_tensor(value, like=None) -> Tensor:
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if like is not None else D.get_default_dtype()
    device = like.device if like is not None else None
    return tensor(float(value), dtype=dtype, device=device)


def _broadcast_all(*values) -> list:
    """The values as tensors of one shape; numbers take the first tensor's dtype and device."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    return list(broadcast_tensors(*(_as_tensor(v, like) for v in values)))


def _sum_rightmost(value, dims: int):
    """``value`` summed over its last ``dims`` dims (the dims of one event)."""
    return value.reshape(*value.shape[: value.ndim - dims], -1).sum(-1) if dims > 0 else value


def _clamp_probs(probs: Tensor) -> Tensor:
    eps = D.finfo(probs.dtype).eps
    return probs.clamp(eps, 1 - eps)


def _probs_to_logits(probs: Tensor, is_binary=False) -> Tensor:
    p = _clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def _logits_to_probs(logits: Tensor, is_binary=False) -> Tensor:
    return logits.sigmoid() if is_binary else logits.softmax(-1)


class Distribution:
    """Base class: ``batch_shape`` (independent distributions) and ``event_shape`` (one
    draw's shape); ``sample(sample_shape)`` draws without a graph, ``rsample`` with one where
    the distribution has a reparameterization; ``validate_args`` (PyTorch's default: on)
    checks the parameters against ``arg_constraints`` and the values given to ``log_prob``
    against ``support``, with ValueError.

    >>> d = clgrad.distributions.Normal(clgrad.zeros(2), 1.0)
    >>> d.batch_shape, d.event_shape, d.sample((3,)).shape
    (clgrad.Size([2]), clgrad.Size([]), clgrad.Size([3, 2]))
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    support = None
    # PyTorch's class attribute: the default an instance without validate_args reads (so that
    # set_default_validate_args reaches existing ones too, and code reading it finds it)
    _validate_args = True

    def __init__(self, batch_shape=_NO_SHAPE, event_shape=_NO_SHAPE, validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                # a parameter derived later (probs from logits) is not checked, as torch's;
                # one a property computes (Chi2's df) is
                if constraints.is_dependent(constraint):
                    continue
                if name not in vars(self) and not isinstance(
                    getattr(type(self), name, None), property
                ):
                    continue
                value = getattr(self, name)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of "
                        f"distribution {self!r} to satisfy the constraint {constraint!r}, but "
                        f"found invalid values:\n{value}"
                    )

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument validation on or off by default, as PyTorch's.

        >>> clgrad.distributions.Distribution.set_default_validate_args(True)
        """
        Distribution._validate_args = bool(value)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape=_NO_SHAPE) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape, _instance=None):
        """A view of this distribution with a larger ``batch_shape`` (its parameters expanded),
        as torch's ``Distribution.expand``.

        >>> clgrad.distributions.Normal(0.0, 1.0).expand((3,)).sample().shape
        clgrad.Size([3])
        """
        params = getattr(self, "_expand_params", None)
        if params is None:
            raise NotImplementedError(f"{type(self).__name__} has no expand")
        batch_shape = Size(batch_shape)
        new = type(self).__new__(type(self)) if _instance is None else _instance
        for name, event_dims in params.items():
            value = vars(self).get(name)
            if isinstance(value, Tensor):
                trailing = tuple(value.shape[value.ndim - event_dims :]) if event_dims else ()
                setattr(new, name, value.expand(tuple(batch_shape) + trailing))
            elif name in vars(self):
                setattr(new, name, value)
        for name, value in vars(self).items():
            if name not in params and not name.startswith("_"):
                setattr(new, name, value)
        if hasattr(self, "_num_events"):
            new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        """A new, uninitialized instance of ``type(self)`` for ``expand`` (or ``_instance``), as
        torch's: a subclass with its own ``__init__`` must write its own ``expand``."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__() method must also define a custom .expand() method."
            )
        return type(self).__new__(type(self)) if _instance is None else _instance

    def enumerate_support(self, expand=True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no enumerate_support")

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without a graph.

        >>> clgrad.distributions.Uniform(0.0, 1.0).sample((2, 3)).shape
        clgrad.Size([2, 3])
        """
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no rsample")

    def sample_n(self, n: int) -> Tensor:
        return self.sample(Size((n,)))

    def log_prob(self, value) -> Tensor:
        raise NotImplementedError

    def cdf(self, value) -> Tensor:
        raise NotImplementedError

    def icdf(self, value) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy)``.

        >>> clgrad.distributions.Bernoulli(probs=clgrad.tensor(0.5)).perplexity()
        tensor(2.)
        """
        return self.entropy().exp()

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _check(self, ok: Tensor, what: str, value) -> None:
        if self._validate_args and not bool(ok.all()):
            raise ValueError(
                f"Expected parameter {what} of distribution {type(self).__name__} to satisfy its "
                f"constraint, but found invalid values:\n{value}"
            )

    def _validate_sample(self, value: Tensor) -> None:
        """ValueError (when validating) for a value that is not a tensor, whose rightmost dims
        do not match ``event_shape``, that does not broadcast with ``batch_shape +
        event_shape``, or that lies outside ``support``, as torch's: the checks of
        ``log_prob``, ``cdf`` and the like."""
        if not self._validate_args:
            return
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        actual, event = tuple(value.shape), tuple(self._event_shape)
        if actual[len(actual) - len(event) :] != event:
            raise ValueError(
                f"The right-most size of value must match event_shape: {Size(actual)} vs "
                f"{Size(event)}."
            )
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{Size(actual)} vs {Size(expected)}."
                )
        support = self.support
        if support is None:
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within "
                f"the support ({support!r}) of the distribution {self!r}, but found invalid "
                f"values:\n{value}"
            )

    def __repr__(self) -> str:
        # as torch's: a one-element parameter shows its value, any other its size
        held = vars(self)
        inner = ", ".join(
            f"{n}: {held[n] if held[n].numel() == 1 else held[n].size()}"
            for n in self.arg_constraints
            if n in held
        )
        return f"{type(self).__name__}({inner})"
