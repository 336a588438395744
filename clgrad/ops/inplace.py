"""In-place ops: a direct write when nothing is recorded; recorded otherwise, so gradients stay
right (the tensor takes the history of the out-of-place result, as PyTorch rebases it)."""

from __future__ import annotations

from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor

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
    with _no_grad():
        direct_copy(x, new)
    x._requires_grad = new._requires_grad
    x.grad_fn = new.grad_fn
    x._output_nr = new._output_nr
    return x


def direct_copy(x, src):
    from .. import dtypes as D
    from .core import launch

    if src.device != x.device:
        src = src.to(x.device)
    launch("copy", [src], x.dtype, src.dtype if src.dtype is not D.bool_ else D.bool_, out=x)
    x._storage.version += 1


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()


def binary_(op, x, other):
    """add_, sub_, mul_, div_ and friends: writes straight into x when not recording."""
    from . import elementwise as E

    functional = {"add": E.add, "sub": E.sub, "mul": E.mul, "div": E.div, "pow": E.pow}[op]

    def direct():
        if op in ("div", "pow") and not x.dtype.is_floating_point:
            new = functional(x, other)
            E._check_cast(new.dtype, x.dtype, op)
            direct_copy(x, new)
            return
        E._arith(op, x, other, out=x)
        x._storage.version += 1

    return inplace(x, lambda old: functional(old, other), direct, other)


def unary_(x, functional):
    """relu_, exp_, clamp_, ...: computed out of place, then copied in."""
    return inplace(x, functional, lambda: direct_copy(x, functional(x)))


def copy_(x, src):
    from .creation import tensor

    if not isinstance(src, Tensor):
        src = tensor(src, dtype=x.dtype, device=x.device)
    from .core import broadcast_shapes

    if broadcast_shapes(x._shape, src._shape) != x._shape:
        raise RuntimeError(
            f"output with shape {list(x._shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(x._shape, src._shape))}"
        )
    src_here = src.to(x.device)
    return inplace(
        x,
        lambda old: old * 0 + src_here.to(x.dtype),
        lambda: direct_copy(x, src_here),
        src,
    )


def fill_(x, value):
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        return copy_(x, value)
    from .core import launch

    def direct():
        launch("fill", [value], x.dtype, x.dtype, out=x)
        x._storage.version += 1

    return inplace(x, lambda old: old * 0 + value, direct)
