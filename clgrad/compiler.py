"""``torch.compiler``: ``compile`` (``clgrad.compile``: a step captured as its kernel launches
and replayed), ``disable``, ``is_compiling``, ``reset`` and the rest PyTorch programs call
around it.

>>> import clgrad.compiler
>>> clgrad.compiler.is_compiling()
False
>>> @clgrad.compiler.disable
... def show(x):
...     return x
>>> show(1)
1
"""

from __future__ import annotations

from . import _dynamo
from ._dynamo import allow_in_graph, assume_constant_result, list_backends
from .compile import compile as _compile

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "list_backends",
    "reset",
]


def compile(*args, **kwargs):
    """``clgrad.compile``.

    >>> clgrad.compiler.compile(lambda x: x * 2)(clgrad.ones(2))
    tensor([2., 2.])
    """
    return _compile(*args, **kwargs)


def reset() -> None:
    """Drops every captured graph: compiled functions capture again (``clgrad._dynamo.reset``).

    >>> clgrad.compiler.reset()
    """
    _dynamo.reset()


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """``fn`` kept out of compiled steps (see ``clgrad._dynamo.disable``): as a decorator, with
    or without arguments.

    >>> @clgrad.compiler.disable(reason="logs")
    ... def log(x):
    ...     return x
    >>> log(2)
    2
    """
    return _dynamo.disable(fn, recursive, reason=reason)


def is_compiling() -> bool:
    """Whether ``clgrad.compile`` is capturing the code that runs now (see
    ``clgrad._dynamo.is_compiling``).

    >>> clgrad.compiler.is_compiling()
    False
    """
    return _dynamo.is_compiling()


def is_dynamo_compiling() -> bool:
    """As ``is_compiling``: clgrad has one way to compile.

    >>> clgrad.compiler.is_dynamo_compiling()
    False
    """
    return _dynamo.is_compiling()


def is_exporting() -> bool:
    """False: clgrad has no ``torch.export``.

    >>> clgrad.compiler.is_exporting()
    False
    """
    return False


def cudagraph_mark_step_begin() -> None:
    """Accepted: torch marks where a new step begins so a CUDA graph may overwrite the outputs
    of the last replay; clgrad's replays return fresh outputs, never overwritten.

    >>> clgrad.compiler.cudagraph_mark_step_begin()
    """
