"""``torch._dynamo``: what PyTorch programs use of it around ``torch.compile``, for
``clgrad.compile``'s captured steps: ``config``, ``reset``, ``disable``, ``is_compiling``,
``optimize``, and the shape marks (``mark_dynamic``, ``mark_static``, ...), which clgrad
accepts and needs not (it captures one graph per input shape).

>>> import clgrad._dynamo
>>> clgrad._dynamo.config.suppress_errors = True
>>> clgrad._dynamo.reset()
>>> clgrad._dynamo.is_compiling()
False
>>> clgrad._dynamo.config.suppress_errors = False
"""

from __future__ import annotations

import functools
import gc
import threading

from .. import capture
from ..compile import CompiledFunction
from ..compile import compile as _compile
from ..nn import Module
from . import config, eval_frame

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "eval_frame",
    "is_compiling",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
]


class _Disabled(threading.local):
    depth = 0  # calls of functions under ``disable`` open in this thread


_disabled = _Disabled()


def is_compiling() -> bool:
    """Whether ``clgrad.compile`` is capturing the step that runs now (where torch's would be
    tracing it), outside the functions under ``disable``. The capture's branch is what replays
    repeat, so code under ``if is_compiling():`` is what compiled calls run; a compiled
    function's first (warm-up) call and its eager fallbacks are not captured: False there.

    >>> is_compiling()
    False
    """
    return capture.active is not None and _disabled.depth == 0


def reset() -> None:
    """Drops the captured graphs of every compiled function: each one warms up and captures
    again at its next calls, as after torch's reset its functions compile again.

    >>> reset()
    """
    # the compiled functions are the user's objects, held nowhere else: found among the live
    # ones (a reset is rare, and clgrad.compile stays untouched); type(), not isinstance: a
    # dead weak proxy or a lazy module's __class__ would raise or warn
    for obj in gc.get_objects():
        if issubclass(type(obj), CompiledFunction):
            for entry in obj.entries.values():
                if entry.graph is not None:
                    entry.graph.close()
            obj.entries.clear()


def disable(fn=None, recursive: bool = True, *, reason: str | None = None, wrapping=True):
    """``fn`` kept out of compiled steps, as torch's: a step that calls it runs eagerly (the
    whole step: a clgrad capture replays kernels, so what ``fn`` does in Python, printing or
    counting, would not happen at a replay), and ``fn`` sees ``is_compiling()`` False. With
    ``fn`` None: a decorator (``@disable(reason=...)``). A Module has its ``forward`` disabled.

    >>> @disable
    ... def log_step(x):
    ...     return x
    >>> log_step(3)
    3
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason, wrapping=wrapping)
    if isinstance(fn, Module):
        fn.forward = disable(fn.forward, recursive, reason=reason)
        return fn
    why = f"it calls {getattr(fn, '__qualname__', fn)!s}, which is under clgrad.compiler.disable"
    if reason:
        why += f" ({reason})"

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        if capture.active is not None:
            capture.active.fail(why)
        _disabled.depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _disabled.depth -= 1

    eager._torchdynamo_disable = True
    return eager


def allow_in_graph(fn):
    """``fn`` itself: everything a clgrad step launches is captured already.

    >>> allow_in_graph(len) is len
    True
    """
    return fn


def assume_constant_result(fn):
    """``fn`` itself, marked as torch marks it (a capture runs it, and replays keep what it
    returned then, as torch's compiled code would).

    >>> assume_constant_result(len) is len
    True
    """
    try:
        fn._dynamo_marked_constant = True
    except (AttributeError, TypeError):  # a builtin takes no attribute
        pass
    return fn


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The ``backend`` names ``clgrad.compile`` takes (each one runs the same captured step).

    >>> list_backends()
    ['cudagraphs', 'inductor']
    """
    return ["cudagraphs", "inductor"]


def mark_dynamic(t, index, *, min=None, max=None, **_ignored) -> None:
    """Accepted: clgrad captures a graph per input shape, so no dimension needs marking.

    >>> mark_dynamic(clgrad.zeros(2, 3), 0)
    """


def maybe_mark_dynamic(t, index) -> None:
    """Accepted, as ``mark_dynamic``."""


def mark_static(t, index=None) -> None:
    """Accepted: every dimension is static for a clgrad capture."""


def mark_static_address(t, guard: bool = False) -> None:
    """Accepted: a capture keeps its own copies of its tensor inputs."""


def optimize(backend="inductor", *, nopython: bool = False, disable: bool = False, **_ignored):
    """torch's older decorator factory: ``optimize(backend)(fn)`` is
    ``clgrad.compile(fn, backend=backend, fullgraph=nopython)``.

    >>> f = optimize("inductor")(lambda x: x + 1)
    >>> f(clgrad.ones(2))
    tensor([2., 2.])
    """
    return functools.partial(_compile, backend=backend, fullgraph=nopython, disable=disable)
