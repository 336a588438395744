"""In-place ops: a direct write when nothing is recorded; recorded otherwise, so gradients stay
right (the tensor takes the history of the out-of-place result, as PyTorch rebases it)."""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend.base import FILL
from ..tensor import Tensor
from .core import broadcast_shapes, copy_into, launch

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


def recording(x, *others) -> bool:
    return is_grad_enabled() and (
        x._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
    )


def inplace(x, functional, direct, *others):
    """Runs ``x.op_(...)``.

    ``functional(old)`` computes the new value out of place from a copy of x (a copy, so a
    gradient that needs x's old value still has it); ``direct()`` writes into x unrecorded.
    """
    if not recording(x, *others):
        direct()
        return x
    if x.is_leaf and x._requires_grad:
        raise RuntimeError(LEAF_ERROR)
    new = functional(x.clone())
    with no_grad():
        copy_into(x, new)
    x._requires_grad = new._requires_grad
    x.grad_fn = new.grad_fn
    x._output_nr = new._output_nr
    return x


def copy_(x, src, non_blocking=False):
    """Copies ``src`` (broadcast, converted) into ``x``.

    >>> x = clgrad.zeros(3)
    >>> x.copy_(clgrad.tensor([1, 2, 3]))
    tensor([1., 2., 3.])
    """
    if not isinstance(src, Tensor):
        src = Tensor._from_numpy(np.asarray(src), x.dtype, x.device)
    if broadcast_shapes(x._shape, src._shape) != x._shape:
        raise RuntimeError(
            f"output with shape {list(x._shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(x._shape, src._shape))}"
        )
    src_here = src.to(x.device)
    return inplace(
        x,
        lambda old: old * 0 + src_here.to(x.dtype),
        lambda: copy_into(x, src_here),
        src,
    )


def fill_(x, value):
    """Sets every element of ``x`` to ``value``.

    >>> clgrad.zeros(2).fill_(7)
    tensor([7., 7.])
    """
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        return copy_(x, value)

    def direct():
        launch(FILL, [value], x.dtype, x.dtype, out=x)
        x._storage.version += 1

    return inplace(x, lambda old: old * 0 + value, direct)


def zero_(x):
    """Sets every element of ``x`` to zero.

    >>> clgrad.ones(2).zero_()
    tensor([0., 0.])
    """
    return fill_(x, 0)
