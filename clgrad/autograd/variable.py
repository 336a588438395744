"""``torch.autograd.Variable``: the pre-0.4 wrapper, kept so that old programs run. Every
tensor is a Variable (``isinstance`` says so) and ``Variable(x)`` is ``x`` detached, with the
``requires_grad`` asked for."""

from __future__ import annotations

import warnings

from .. import dtypes as D
from ..device import resolve
from ..tensor import Tensor
from .engine import queue_callback


class _ImperativeEngine:
    """``Variable._execution_engine``, PyTorch's handle on its autograd engine, for the one
    use programs make of it: ``queue_callback``."""

    queue_callback = staticmethod(queue_callback)


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: a new tensor over ``data``'s elements, with no
    history (a leaf), as PyTorch's, which is a Tensor (never a Parameter).

    >>> from clgrad.autograd import Variable
    >>> x = clgrad.ones(2)
    >>> v = Variable(x, requires_grad=True)
    >>> v.requires_grad, v.is_leaf, isinstance(x, Variable)
    (True, True, True)
    >>> (v * 3).sum().backward()
    >>> v.grad
    tensor([3., 3.])
    """

    _execution_engine = _ImperativeEngine()

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                stacklevel=2,
            )
        if data is None:
            return Tensor._empty((0,), D.get_default_dtype(), resolve("cpu"))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = Tensor._alias(data)  # detach(): the same elements and version counter
        out.requires_grad_(requires_grad)
        return out
