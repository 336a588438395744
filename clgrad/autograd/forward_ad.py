"""``clgrad.autograd.forward_ad``: PyTorch's forward-mode AD interface (``dual_level``,
``make_dual``, ``unpack_dual``), for programs that compute Jacobian-vector products with it.

clgrad has no forward-mode AD: a dual tensor is its primal plus a zero "seed" that requires
grad, recorded with its tangent in the current level, and ``unpack_dual(out)`` takes
``J @ tangent`` as the gradient, with respect to a cotangent ``u``, of ``<J^T u, tangent>``
(two reverse passes over the graph the ops recorded, as ``clgrad.func.jvp``). So the
tangents are exact, but a dual tensor and what is computed from it require grad (for the
reverse passes), where PyTorch's do not; a custom ``autograd.Function`` takes part through its
``backward`` (differentiable twice), not its ``jvp``.

>>> import clgrad.autograd.forward_ad as fwAD
>>> x, v = clgrad.tensor([1.0, 2.0]), clgrad.tensor([1.0, 0.5])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, v) ** 3
...     fwAD.unpack_dual(y).tangent
tensor([3., 6.])
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..tensor import Tensor
from .engine import grad
from .grad_mode import enable_grad

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]  # fmt: skip


class _Dual(NamedTuple):
    dual: Tensor  # what make_dual returned
    seed: Tensor  # the zeros it adds, whose gradient is the primal's
    tangent: Tensor


# the levels entered and not exited, innermost last: each, its duals in the order made
_levels: list[list[_Dual]] = []


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal and its tangent (None where it has none)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Enters a new forward-AD level (the one ``make_dual`` and ``unpack_dual`` use); its
    number."""
    _levels.append([])
    return len(_levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Leaves the innermost level, forgetting its tangents (only the innermost may be left)."""
    current = len(_levels) - 1
    if level is None:
        level = current
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _levels.pop()


class dual_level:
    """The region of a forward-AD level: entered on ``with``, left (its tangents forgotten) at
    the block's end, as ``torch.autograd.forward_ad.dual_level``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _level(level: int | None) -> list[_Dual] | None:
    index = len(_levels) - 1 if level is None else level
    return _levels[index] if 0 <= index < len(_levels) else None


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """``tensor`` with ``tangent`` as its forward gradient at the current level, as
    ``torch.autograd.forward_ad.make_dual``; gradients still flow back to ``tensor``."""
    duals = _level(level)
    if duals is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not t.is_floating_point():
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    seed = tensor.detach().new_zeros(tensor.shape).requires_grad_(True)
    with enable_grad():
        dual = tensor + seed
    duals.append(_Dual(dual, seed, tangent.detach().to(tensor.device, tensor.dtype)))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at the current level, as
    ``torch.autograd.forward_ad.unpack_dual``: the tangent is ``J @ v`` over the duals it was
    computed from (None where it depends on none of them, or outside a level)."""
    duals = _level(level)
    if not duals or not isinstance(tensor, Tensor) or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    for d in duals:
        if d.dual is tensor:
            return UnpackedDualTensor(tensor.detach(), d.tangent)
    with enable_grad():
        cotangent = tensor.detach().new_zeros(tensor.shape).requires_grad_(True)
        seeds = [d.seed for d in duals]
        vjps = grad(tensor, seeds, cotangent, create_graph=True, allow_unused=True)
        products = [(g * d.tangent).sum() for g, d in zip(vjps, duals) if g is not None]
        if not products:
            return UnpackedDualTensor(tensor.detach(), None)
        total = products[0]
        for p in products[1:]:
            total = total + p
        if not total.requires_grad:  # J^T u does not depend on u: J is zero
            return UnpackedDualTensor(tensor.detach(), tensor.detach().new_zeros(tensor.shape))
        (jvp,) = grad(total, [cotangent], allow_unused=True)
    if jvp is None:
        jvp = tensor.detach().new_zeros(tensor.shape)
    return UnpackedDualTensor(tensor.detach(), jvp.detach())
