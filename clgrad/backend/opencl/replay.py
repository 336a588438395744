"""Kernel launches captured and replayed, the machinery of the two kinds of captured step:
``clgrad.compile``'s graphs and ``clgrad.cuda.CUDAGraph`` (compile sits above cuda, so it is
here, below both). ``start_capture`` and ``stop_capture`` bracket a capture: the work the
runtimes deferred before it is queued first, the work deferred inside it is part of it, and
the runtimes fuse as a replayed step wants while it lasts.

A launch is bound to a kernel object of its own, its arguments set once, so that a replay is
only the enqueue; a *patched* launch (one whose arguments change from replay to replay: a
Python number fed in, a step counter) keeps its argument list and sets it at each replay.
"""

from __future__ import annotations

import weakref

import pyopencl as cl

from ... import capture
from . import runtime as cl_runtime


def flush_deferred() -> None:
    """Enqueues the elementwise launches every runtime defers (lazy fusion).

    >>> flush_deferred()
    """
    for rt in list(cl_runtime._runtimes):
        rt.flush()


def start_capture() -> tuple[capture.Recording, list]:
    """Starts recording the kernels launched on every runtime: (the recording, what
    ``stop_capture`` puts back). The work deferred until now is queued first, so it is not
    part of the capture.

    >>> recording, fusing = start_capture()
    >>> stop_capture(recording, fusing)
    >>> recording.launches
    []
    """
    flush_deferred()
    recording = capture.start()
    return recording, _fuse_now()


def stop_capture(recording: capture.Recording, fusing: list) -> None:
    """Ends ``recording``, where it is still the capture underway (the work it deferred is
    queued into it first), and puts back the fusion settings ``start_capture`` changed."""
    try:
        if capture.active is recording:
            try:
                flush_deferred()
            finally:
                capture.stop()
    finally:
        for fuser, wait, fuse_after, min_launches, backend, fuse in fusing:
            fuser.wait, fuser.fuse_after, fuser.min_launches = wait, fuse_after, min_launches
            backend.fuse = fuse


def _fuse_now() -> list:
    """Makes each runtime's fuser build the kernel of every group it meets now, in this thread:
    a capture happens once, and what it records is replayed every step, so its groups should
    run fused rather than one launch at a time while their kernels build in the background.
    Returns what ``stop_capture`` puts back."""
    saved = []
    for rt in list(cl_runtime._runtimes):
        fuser = rt.fuser
        if fuser is not None:
            backend = rt.device.backend
            saved.append(
                (fuser, fuser.wait, fuser.fuse_after, fuser.min_launches, backend, backend.fuse)
            )
            # every group of two or more, at once: a replay runs it each step
            fuser.wait, fuser.fuse_after, fuser.min_launches = True, 1, 2
            # On GPUs a captured CNN step replayed with deferred launches diverged from eager
            # (NVIDIA's driver, H100; PoCL and Mesa agree): until that is understood, a GPU's
            # capture launches each op as it comes.
            if rt.is_gpu:
                backend.fuse = False
    return saved


class BoundLaunches:
    """A recording's launches bound to replay (see ``bind``), what a replay needs besides, and
    every buffer they name and the capture allocated pinned (kept from the allocator's cache)
    until ``release`` or until it is dropped.

    >>> recording, fusing = start_capture()
    >>> stop_capture(recording, fusing)
    >>> launches = BoundLaunches(recording)
    >>> launches.replay()
    >>> launches.release()
    """

    def __init__(self, recording: capture.Recording) -> None:
        # A kernel object per launch with its arguments set once: a replay only enqueues
        # (setting a kernel's arguments cost as much as its enqueue; a fused kernel has dozens).
        # A patched launch sets them all at each replay, through pyopencl's typed invoker (one
        # by one, set_arg costs 6 us each).
        self.patches = recording.patches
        patched = {p.index for p in self.patches}
        self.bound = [bind(*r, i in patched) for i, r in enumerate(recording.launches)]
        # the storages the work writes in place: a replay counts their versions up, as the ops
        # it replays would have (autograd's checks, input checks and caches keyed by a
        # storage's version see the writes)
        self.written = list(recording.written.values())
        runtimes = list({id(r[0]): r[0] for r in recording.launches}.values())
        self.single = runtimes[0] if len(runtimes) == 1 else None
        # every buffer the launches name: pointer -> (runtime, buffer)
        self.buffers = {
            a.int_ptr: (r[0], a)
            for r in recording.launches
            for a in r[4]
            if isinstance(a, cl.MemoryObjectHolder)
        }
        ptrs = set(self.buffers) | recording.allocated
        pins = []
        for rt in runtimes:
            rt.allocator.pin(ptrs)
            pins.append((rt.allocator, ptrs))
        self.release = weakref.finalize(self, unpin, pins)
        self.release.atexit = False  # at exit the contexts go away with their buffers

    def replay(self) -> None:
        """Enqueues the launches again, after the work the runtimes deferred: the patched
        arguments set from their sources first, the written storages' versions counted up."""
        flush_deferred()
        for p in self.patches:
            args = self.bound[p.index][5]
            for pos, v in zip(p.positions, p.convert(*p.source())):
                args[pos] = v
        rt = self.single
        if rt is not None:
            with rt.launch_lock:  # behind one gate (CPU devices): the device's threads wake once
                rt.close_gate()
                for bound in self.bound:
                    enqueue_bound(*bound)
                rt.open_gate()
        else:
            for bound in self.bound:
                rt = bound[0]
                rt.flush()
                with rt.launch_lock:
                    rt.open_gate()
                    enqueue_bound(*bound)
        for ref in self.written:
            s = ref()
            if s is not None:
                s._version += 1


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
