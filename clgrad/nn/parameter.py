"""``Parameter``: a Tensor that a Module registers when it is assigned as an attribute."""

from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and that ``Module.__setattr__`` registers.

    ``Parameter(data)`` shares ``data``'s storage (detached from its history), as in PyTorch.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor, got {type(data).__name__}")
        p = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
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
