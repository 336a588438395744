"""``Parameter``: a Tensor that a Module registers when it is assigned as an attribute."""

from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter, as ``torch.nn.Parameter``: assigning one as an
    attribute of a ``Module`` registers it, so it shows up in ``parameters()`` and the state
    dict. It is a leaf that requires grad unless ``requires_grad=False``; ``Parameter(data)``
    shares ``data``'s storage (detached from its history), and ``Parameter()`` is empty.

    >>> p = clgrad.nn.Parameter(clgrad.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> p.is_leaf, isinstance(p, clgrad.Tensor)
    (True, True)
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor, got {type(data).__name__}")
        p = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        p._counter = data._counter  # as PyTorch's, which wraps data.detach()
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self.detach().clone(), self.requires_grad)
        if self._grad is not None:
            p._grad = self._grad.clone()
        memo[id(self)] = p
        return p

    def __reduce__(self):
        return (
            _rebuild_parameter,
            (self.detach().cpu().numpy(), str(self.device), self._requires_grad),
        )


def _rebuild_parameter(array, device, requires_grad):
    from ..ops.creation import tensor

    return Parameter(tensor(array, device=device), requires_grad)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet, like ``torch.nn.UninitializedParameter``: an
    empty placeholder holding the device and dtype; ``materialize(shape)`` gives it storage of
    that shape and turns it into a plain ``Parameter`` (the same object, so a module's
    attribute and any reference to it see the change). The lazy modules (``LazyLinear``) hold
    these until their first forward.

    >>> p = clgrad.nn.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', clgrad.Size([2, 3]))
    """

    __slots__ = ()

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> UninitializedParameter:
        from ..ops.creation import empty

        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Gives the parameter uninitialized storage of ``shape`` (on ``device``, in ``dtype``,
        by default its own) and makes it a ``Parameter``."""
        from ..ops.creation import empty

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self.__class__ = Parameter

    def __repr__(self):
        return "<UninitializedParameter>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedParameter(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]
