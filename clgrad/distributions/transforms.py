"""Invertible maps between spaces for ``TransformedDistribution``, as
``torch.distributions.transforms``: ``y = t(x)``, ``x = t.inv(y)`` and
``t.log_abs_det_jacobian(x, y)`` (log |dy/dx|, summed over the transform's event dims).
``cache_size=1`` remembers the last pair, so ``t.inv(t(x))`` returns ``x`` itself (SAC's tanh
squashing relies on it: atanh of a value rounded to +-1 is infinite)."""

from __future__ import annotations

import math
import weakref
from numbers import Number

from .. import dtypes as D
from ..functional import broadcast_shapes
from ..nn import functional as F
from ..tensor import Tensor
from . import constraints
from .distribution import _as_tensor, _sum_rightmost

__all__ = [
    "Transform",
    "ComposeTransform",
    "ExpTransform",
    "AffineTransform",
    "SigmoidTransform",
    "TanhTransform",
    "AbsTransform",
    "identity_transform",
]


class Transform:
    """Base class of the invertible maps; subclasses write ``_call`` (forward), ``_inverse``
    and ``log_abs_det_jacobian``.

    >>> t = clgrad.distributions.transforms.ExpTransform()
    >>> t.inv(t(clgrad.tensor([0.5]))), t.sign
    (tensor([0.5000]), 1)
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size: int = 0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``inv.inv`` is this one).

        >>> clgrad.distributions.transforms.ExpTransform().inv(clgrad.tensor(1.0))
        tensor(0.)
        """
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)  # a strong reference both ways would be a cycle
        return inv

    @property
    def sign(self):
        """+1 or -1: whether the map increases or decreases (monotone bijections only)."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: its inverse's forward and backward swapped."""

    def __init__(self, transform: Transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the forward transform keeps a weak one

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{self._inv!r}.inv"


class ComposeTransform(Transform):
    """Applies ``parts`` in order (``parts[-1](...parts[0](x))``); its log-det-Jacobian is the
    sum of theirs, as ``torch.distributions.transforms.ComposeTransform``.

    >>> T = clgrad.distributions.transforms
    >>> t = T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.ExpTransform()])
    >>> x = clgrad.tensor(0.5)
    >>> t(x), t.log_abs_det_jacobian(x, t(x))
    (tensor(2.7183), tensor(1.6931))
    """

    def __init__(self, parts, cache_size: int = 0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # the event dims a draw needs so that every part sees whole events
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x.new_zeros(()).expand(x.shape)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = 0.0
        event_dim = self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:]):
            term = part.log_abs_det_jacobian(x_in, y_out)
            total = total + _sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"ComposeTransform(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """``y = exp(x)``.

    >>> clgrad.distributions.transforms.ExpTransform()(clgrad.tensor(1.0))
    tensor(2.7183)
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class AbsTransform(Transform):
    """``y = |x|`` (not injective: its inverse picks the non-negative root).

    >>> clgrad.distributions.transforms.AbsTransform()(clgrad.tensor(-2.0))
    tensor(2.)
    """

    domain = constraints.real
    codomain = constraints.nonnegative

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, kept inside the open unit interval (so the inverse is finite).

    >>> clgrad.distributions.transforms.SigmoidTransform()(clgrad.tensor(0.0))
    tensor(0.5000)
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        finfo = D.finfo(x.dtype)
        return x.sigmoid().clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        finfo = D.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``; with ``cache_size=1`` the inverse of a value it made is the value it
    came from (as SAC's squashed Gaussian policy needs).

    >>> t = clgrad.distributions.transforms.TanhTransform()
    >>> t(clgrad.tensor(0.5)), t.log_abs_det_jacobian(clgrad.tensor(0.5), t(clgrad.tensor(0.5)))
    (tensor(0.4621), tensor(-0.2402))
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written without the cancellation of 1 - y^2 near |y| = 1
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AffineTransform(Transform):
    """``y = loc + scale * x`` (``loc`` and ``scale`` numbers or tensors); ``event_dim`` sums
    its log-det-Jacobian over that many rightmost dims.

    >>> t = clgrad.distributions.transforms.AffineTransform(1.0, 3.0)
    >>> x = clgrad.tensor(2.0)
    >>> t(x), t.inv(clgrad.tensor(7.0)), t.log_abs_det_jacobian(x, t(x))
    (tensor(7.), tensor(2.), tensor(1.0986))
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self):
        return (
            constraints.independent(constraints.real, self._event_dim)
            if self._event_dim
            else (constraints.real)
        )

    @property
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, Number) and isinstance(theirs, Number):
                if mine != theirs:
                    return False
            elif not bool((_as_tensor_like(mine, theirs) == theirs).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, Number):
            result = x.new_full(x.shape, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        shape = x.shape
        if self._event_dim:
            result = _sum_rightmost(result, self._event_dim)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.loc, self.scale)

    def inverse_shape(self, shape):
        return _broadcast_shape(shape, self.loc, self.scale)


def _broadcast_shape(shape, *params):
    return broadcast_shapes(shape, *(p.shape for p in params if isinstance(p, Tensor)))


def _as_tensor_like(value, like):
    return _as_tensor(value, like if isinstance(like, Tensor) else None)
