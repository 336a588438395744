"""Activation checkpointing, as ``torch.utils.checkpoint``: a function's intermediate results
are not kept for backward but computed again there, trading compute for memory."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..autograd import backward as _backward
from ..autograd.engine import _is_checkpoint_valid
from ..autograd.function import Function, modified_in_place
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..ops import autocast as _autocast
from ..ops.creation import get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]


class CheckpointError(RuntimeError):
    """A checkpointed function's recomputation did not match its forward (it saved more
    tensors, so it is not deterministic), as ``torch.utils.checkpoint.CheckpointError``."""


def noop_context_fn() -> tuple[
    contextlib.AbstractContextManager, contextlib.AbstractContextManager
]:
    """``checkpoint``'s default ``context_fn``: no context around the forward or its
    recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with each tensor detached, keeping its ``requires_grad`` (other values as
    they are), as ``torch.utils.checkpoint.detach_variable``: a hand-written checkpoint's
    leaves."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    return tuple(
        x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs
    )


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warns, as PyTorch's, where no tensor of ``inputs`` requires grad."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


_early_stop = [True]
_debug = [None]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether the recomputation of a non-reentrant checkpoint may stop once it has the saved
    tensors backward needs, as PyTorch's switch; clgrad's recomputation runs the function to its
    end either way, so the flag is recorded only."""
    previous, _early_stop[0] = _early_stop[0], enable
    try:
        yield
    finally:
        _early_stop[0] = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Overrides checkpoint's ``debug`` flag inside the block (None defers to it), as PyTorch's;
    clgrad records the flag (its checkpoint keeps no operator trace to print)."""
    previous, _debug[0] = _debug[0], enabled
    try:
        yield
    finally:
        _debug[0] = previous


class CheckpointFunction(Function):
    """``run_function(*args)`` computed without a graph; backward runs it again with one (the
    random-number state restored, so dropout draws the same mask, and the forward's autocast
    state) and back-propagates through it: the gradients of the tensor arguments are returned,
    those of the tensors it uses inside (a module's parameters) accumulate into their
    ``.grad``."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.autocast = _autocast.snapshot()
        ctx.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.positions])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        args = list(ctx.others)
        for i, t in zip(ctx.positions, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        if ctx.rng_state is not None:
            now = get_rng_state()
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad(), _autocast.restored(ctx.autocast):
                outputs = ctx.run_function(*args)
        finally:
            if ctx.rng_state is not None:
                set_rng_state(now)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *[a.grad if isinstance(a, Tensor) else None for a in args])


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` without keeping its intermediate results for backward,
    which computes them again, as ``torch.utils.checkpoint.checkpoint``.

    With ``use_reentrant=True`` (the default, with PyTorch's warning that it should be
    given) the function runs without a graph and again in backward; its inputs must include
    a tensor that requires grad for anything to be differentiated. ``use_reentrant=False``
    records the function's graph but not the tensors it saves (``saved_tensors_hooks``): the
    first backward that needs one runs the function again and takes them from there, as
    PyTorch's (so a BatchNorm inside updates its running statistics twice, as there). There,
    ``context_fn()`` gives the two context managers the forward and its recomputation run in;
    ``determinism_check`` is ``"default"`` (a recomputation that saves more tensors than the
    forward raises CheckpointError) or ``"none"``; ``debug`` and ``early_stop`` are accepted.

    >>> from clgrad.utils.checkpoint import checkpoint
    >>> lin = clgrad.nn.Linear(2, 2)
    >>> x = clgrad.ones(3, 2, requires_grad=True)
    >>> y = checkpoint(lambda t: lin(t).relu(), x, use_reentrant=True)
    >>> y.sum().backward()
    >>> x.grad.shape, lin.weight.grad is not None
    (clgrad.Size([3, 2]), True)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            UserWarning,
            stacklevel=2,
        )
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if not use_reentrant:
        contexts = context_fn()
        return _checkpoint_without_reentrant(
            function, preserve_rng_state, contexts, determinism_check, *args, **kwargs
        )
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not noop_context_fn or debug is not False:
        raise ValueError(
            "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
        )
    if is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None",
            UserWarning,
            stacklevel=2,
        )
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def _checkpoint_without_reentrant(
    function, preserve_rng_state, contexts, determinism_check, *args, **kwargs
):
    """PyTorch's non-reentrant checkpoint: the graph is recorded, each tensor it would save is
    kept as its index only, and the first unpack reruns ``function`` (the random state it
    started from restored) to take the tensors it saves, in the same order. ``contexts`` are
    the context managers the forward and the recomputation run in."""
    forward_context, recompute_context = contexts
    rng_state = get_rng_state() if preserve_rng_state else None
    autocast_state = _autocast.snapshot()
    count = [0]
    recomputed: list = []
    # the inputs' versions: one written in place since is PyTorch's error at the recompute
    # (which would silently start from the new values)
    versions = [(a, a._version) for a in args if isinstance(a, Tensor)]

    def pack(t):
        count[0] += 1
        return count[0] - 1

    def recompute():
        for a, version in versions:
            if a._version != version:
                raise modified_in_place(a, version)
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in args]  # fmt: skip
        if rng_state is not None:
            now = get_rng_state()
            set_rng_state(rng_state)
        try:
            with (
                enable_grad(),
                _autocast.restored(autocast_state),
                recompute_context,
                saved_tensors_hooks(_keep_in(recomputed), _never_unpacked),
            ):
                function(*inputs, **kwargs)
        finally:
            if rng_state is not None:
                set_rng_state(now)

    def unpack(index):
        if not recomputed:
            recompute()
        if index >= len(recomputed):
            raise CheckpointError(
                "torch.utils.checkpoint: the recomputed forward saved fewer tensors than the "
                "original one (it must be deterministic)"
            )
        if determinism_check == "default" and len(recomputed) > count[0]:
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation "
                "than during the original forward pass."
            )
        return recomputed[index]

    with forward_context, saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def _keep_in(kept: list):
    def keep(t):
        kept.append(t)

    return keep


def _never_unpacked(packed):
    raise RuntimeError("torch.utils.checkpoint: the recomputed graph is not backpropagated")


def checkpoint_sequential(
    functions: Sequence[Callable[..., Any]] | Any,
    segments: int,
    input: Tensor,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Runs the modules of ``functions`` (a Sequential, or a list) in ``segments`` chunks, each
    chunk but the last checkpointed, as ``torch.utils.checkpoint.checkpoint_sequential``."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for fn in functions[start : end + 1]:
                x = fn(x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
