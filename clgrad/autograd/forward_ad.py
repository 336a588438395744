"""``clgrad.autograd.forward_ad``: PyTorch's forward-mode AD interface (``dual_level``,
``make_dual``, ``unpack_dual``), for programs that compute Jacobian-vector products with it.

clgrad has no forward-mode AD: a dual tensor is its primal plus a zero "seed" that requires
grad, recorded with its tangent in the current level, and ``unpack_dual(out)`` takes
``J @ tangent`` as the gradient, with respect to a cotangent ``u``, of ``<J^T u, tangent>``
(two reverse passes over the graph the ops recorded, as ``clgrad.func.jvp``). So the
tangents are exact, but a dual tensor and what is computed from it require grad (for the
reverse passes), where PyTorch's do not. A custom ``autograd.Function`` takes part through its
``jvp``, as in PyTorch (one without it raises NotImplementedError): its outputs become duals
whose tangents ``jvp`` gave, and the reverse passes do not go through its ``backward``.

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
from .function import (
    Function,
    _dual_levels,
    _forward_mode,
    _tangent_pass,
    grad_accumulator,
)
from .grad_mode import enable_grad, no_grad

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]  # fmt: skip


class _Dual(NamedTuple):
    dual: Tensor  # what make_dual returned
    seed: Tensor  # the zeros it adds, whose gradient is the primal's
    tangent: Tensor
    version: int = -1  # the dual's when made: an in-place write since makes its tangent stale


# the levels entered and not exited, innermost last: each, its duals in the order made
_levels: list[list[_Dual]] = _dual_levels


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal and its tangent (None where it has none)."""

    primal: Tensor
    tangent: Tensor | None


def __getattr__(name: str) -> Any:
    # ``fwAD._current_level``, PyTorch's module global (-1 outside any level), read live
    if name == "_current_level":
        return len(_levels) - 1
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def enter_dual_level() -> int:
    """Enters a new forward-AD level (the one ``make_dual`` and ``unpack_dual`` use); its
    number. One level at a time, as PyTorch's: entering a second raises RuntimeError.

    >>> import clgrad.autograd.forward_ad as fwAD
    >>> fwAD.enter_dual_level(), fwAD._current_level
    (0, 0)
    >>> fwAD.exit_dual_level()
    >>> fwAD._current_level
    -1
    """
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
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


def _check_tangent_size(tensor, tangent) -> None:
    """PyTorch's refusal of a tangent whose shape is not its primal's."""
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )


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
        if t.is_complex():  # (tangents come from reverse passes, which need a real loss)
            raise NotImplementedError(f"forward AD of a complex {what} is not supported")
        if not t.is_floating_point():
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")
    _check_tangent_size(tensor, tangent)
    if tangent.requires_grad and _tangent(tangent, duals) is not None:
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level"
            f"{len(_levels) - 1} is not supported."
        )
    seed = tensor.detach().new_zeros(tensor.shape).requires_grad_(True)
    with enable_grad():
        dual = tensor + seed
    duals.append(_Dual(dual, seed, _as_forward_grad(tensor, tangent), dual._version))
    return dual


def _as_forward_grad(tensor: Tensor, tangent: Tensor) -> Tensor:
    """The tangent kept for ``tensor``: ``tangent`` itself, as PyTorch's (``unpack_dual`` gives
    it back), where it is laid out as the primal (strides, offset, storage size, device);
    else a copy laid out so, so that writing the unpacked tangent leaves the caller's alone.
    Its dtype stays its own, as PyTorch's."""
    if tangent.device != tensor.device:
        tangent = tangent.to(tensor.device)
    if (
        tangent.stride() == tensor.stride()
        and tangent.storage_offset() == tensor.storage_offset()
        and tangent.untyped_storage().nbytes() // tangent.element_size()
        == tensor.untyped_storage().nbytes() // tensor.element_size()
    ):
        return tangent
    copy = Tensor._full(tensor.shape, 0, tangent.dtype, tensor.device)
    with no_grad():
        copy.copy_(tangent)
    return copy


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at the current level, as
    ``torch.autograd.forward_ad.unpack_dual``: the tangent is ``J @ v`` over the duals it was
    computed from (None where it depends on none of them, or outside a level)."""
    duals = _level(level)
    if not duals or not isinstance(tensor, Tensor) or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(tensor.detach(), _tangent(tensor, duals, differentiable=True))


def _tangent(tensor: Tensor, duals, differentiable: bool = False) -> Tensor | None:
    """``J @ v`` of ``tensor`` over ``duals`` (None where it depends on none of them): the
    gradient, with respect to a cotangent ``u``, of ``<J^T u, v>``. A custom Function's node
    whose outputs are duals of their own (its jvp) passes nothing back meanwhile. With
    ``differentiable`` the tangent keeps its history where it depends on tensors that require
    grad besides the level's own seeds (the primals' history, a tangent that requires grad), as
    PyTorch's tangents are differentiable (reverse over forward); in any grad mode, as
    PyTorch's tangent was computed with the forward."""
    if not tensor.requires_grad:
        return None
    for d in duals:
        if d.dual is tensor and d.version in (-1, tensor._version):
            return d.tangent
    _tangent_pass[0] += 1
    try:
        with enable_grad():
            cotangent = tensor.detach().new_zeros(tensor.shape).requires_grad_(True)
            seeds = [d.seed for d in duals]
            vjps = grad(tensor, seeds, cotangent, create_graph=True, allow_unused=True)
            products = [(g * d.tangent).sum() for g, d in zip(vjps, duals) if g is not None]
            if not products:
                return None
            total = products[0]
            for p in products[1:]:
                total = total + p
            if not total.requires_grad:  # J^T u does not depend on u: J is zero
                return tensor.detach().new_zeros(tensor.shape)
            keep = differentiable
            (jvp,) = grad(total, [cotangent], create_graph=keep, allow_unused=True)
    finally:
        _tangent_pass[0] -= 1
    if jvp is None:
        return tensor.detach().new_zeros(tensor.shape)
    if keep and jvp.requires_grad and _reaches_others(jvp, {id(s) for s in seeds}, cotangent):
        return jvp
    return jvp.detach()


def _reaches_others(t: Tensor, seeds: set, cotangent: Tensor) -> bool:
    """Whether ``t``'s history reaches a leaf that requires grad other than the level's
    seeds and ``cotangent`` (only then is the tangent differentiable, as PyTorch's)."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            if id(variable) not in seeds and variable is not cotangent:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions)
    return False


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and t.dtype.category >= 2  # floating point or complex


def _input_tangents(cls, args) -> list | None:
    """The tangents a custom Function's ``jvp`` gets, one per argument, read before its
    forward runs (None where no input carries one: the Function runs as in reverse mode).
    Without a ``jvp`` of its own, PyTorch's NotImplementedError."""
    duals = _dual_levels[-1]
    tangents = [_tangent(a, duals) if _differentiable(a) else None for a in args]
    if all(t is None for t in tangents):
        return None
    if cls.jvp is Function.jvp:
        cls.jvp(None)  # raises PyTorch's NotImplementedError
    return tangents


def _output_tangents(cls, ctx, node, args, tangents, outputs):
    """Runs ``cls.jvp`` on the input tangents and makes each differentiable output a dual of
    the current level with the tangent it gave (PyTorch's checks of what ``jvp`` returns):
    ``make_dual``'s ``tensor + seed`` without a new tensor or node, the zero seed an extra
    edge of the Function's ``node``, which passes it its output's gradient."""
    if ctx.materialize_grads:
        tangents = [
            a.detach().new_zeros(a.shape) if t is None and _differentiable(a) else t
            for t, a in zip(tangents, args)
        ]
    ctx._in_jvp = True
    try:
        with no_grad():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outputs)} but got {len(result)})"
        )
    duals = _dual_levels[-1]
    for i, (o, t) in enumerate(zip(outputs, result)):
        if t is None:
            continue
        if not _differentiable(o) or any(o is n for n in ctx._non_differentiable):
            raise RuntimeError(
                f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                "forward output is not a differentiable Tensor.You should return None at that "
                "position instead."
            )
        if not isinstance(t, Tensor):
            raise TypeError(f"jvp must return Tensors or None, got {type(t).__name__}")
        _check_tangent_size(o, t)
        seed = o.detach().new_zeros(o.shape).requires_grad_(True)
        node.next_functions += ((grad_accumulator(seed), 0),)
        node.seeded += (i,)
        duals.append(_Dual(o, seed, t.detach().to(o.device, o.dtype)))


_forward_mode.update(inputs=_input_tangents, outputs=_output_tangents)
