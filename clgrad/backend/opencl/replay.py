"""Recorded launches made ready to replay, for the two kinds of captured step that replay them:
``clgrad.compile``'s graphs and ``clgrad.cuda.CUDAGraph``.

A launch is bound to a kernel object of its own, its arguments set once, so that a replay is
only the enqueue; a *patched* launch (one whose arguments change from replay to replay: a
Python number fed in, a step counter) keeps its argument list and sets it at each replay.
"""

from __future__ import annotations

import pyopencl as cl


def bind(rt, kernel, global_size, local_size, args, patched) -> tuple:
    """(runtime, queue, a new kernel object of ``kernel``'s, sizes, None or the argument list
    a ``patched`` launch sets at each replay): its arguments set now, in the types the runtime
    gave ``kernel`` (None: a buffer, or a NumPy scalar that carries its type)."""
    types = rt.typed.get(kernel) or (None,) * len(args)
    bound = cl.Kernel(kernel.program, kernel.function_name)
    if patched:
        bound.set_scalar_arg_dtypes(types)
        return rt, rt.queue, bound, global_size, local_size, list(args)
    for i, (a, t) in enumerate(zip(args, types)):
        bound.set_arg(i, a if t is None or type(a) is t else t(a))
    return rt, rt.queue, bound, global_size, local_size, None


def enqueue_bound(rt, queue, kernel, global_size, local_size, args) -> None:
    """Enqueues a ``bind`` launch: as bound, or with its patched argument list."""
    if args is None:
        cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size)
    else:
        kernel(queue, global_size, local_size, *args)


def unpin(pins) -> None:
    """Hands back the memory a captured step pinned: ``pins`` is (allocator, pointers) pairs."""
    for allocator, ptrs in pins:
        allocator.unpin(ptrs)
