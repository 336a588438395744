"""``clgrad.cuda.nvtx``: ``torch.cuda.nvtx``'s range and mark functions, with its signatures and
return values, as no-ops: there is no NVIDIA Tools Extension on OpenCL, and a program that
annotates its phases for a profiler should run unchanged. The ranges are still counted, so
``range_push``/``range_pop`` return the depths NVTX returns.

>>> with clgrad.cuda.nvtx.range("epoch {}", 1):
...     clgrad.cuda.nvtx.mark("step")
"""

from __future__ import annotations

import contextlib
import itertools
import threading

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]

_local = threading.local()  # ``depth``: this thread's pushed ranges (NVTX's stack is per thread)
_handles = itertools.count(1)


def range_push(msg: str) -> int:
    """Pushes a range; returns its zero-based depth, as ``torch.cuda.nvtx.range_push``.

    >>> clgrad.cuda.nvtx.range_push("forward"), clgrad.cuda.nvtx.range_pop()
    (0, 0)
    """
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    return depth


def range_pop() -> int:
    """Pops a range; returns the zero-based depth of the range ended, or -1 where none was
    pushed (NVTX's error value), as ``torch.cuda.nvtx.range_pop``.

    >>> clgrad.cuda.nvtx.range_pop()
    -1
    """
    depth = getattr(_local, "depth", 0)
    if depth == 0:
        return -1
    _local.depth = depth - 1
    return depth - 1


def range_start(msg: str) -> int:
    """Starts a range that may end in another thread; returns its handle for ``range_end``,
    as ``torch.cuda.nvtx.range_start``.

    >>> clgrad.cuda.nvtx.range_end(clgrad.cuda.nvtx.range_start("load"))
    """
    return next(_handles)


def range_end(range_id: int) -> None:
    """Ends a range ``range_start`` started, as ``torch.cuda.nvtx.range_end``.

    >>> clgrad.cuda.nvtx.range_end(1)
    """


def mark(msg: str) -> None:
    """Marks an instant, as ``torch.cuda.nvtx.mark``.

    >>> clgrad.cuda.nvtx.mark("checkpoint")
    """


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):
    """Context manager (or decorator) pushing a range for its block, as
    ``torch.cuda.nvtx.range``; ``args`` and ``kwargs`` format ``msg``.

    >>> @clgrad.cuda.nvtx.range("train")
    ... def train():
    ...     return 1
    >>> train()
    1
    """
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
