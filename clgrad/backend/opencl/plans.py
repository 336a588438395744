"""Launch plans: what a kernel family launches for one geometry, decided once and replayed.

Planning a reduction or a matmul (merging runs, choosing a kernel and a split, building the
argument list) costs several times its enqueue, and a program launches the same geometries
over and over. A family's entry point names the call's buffers and a key (everything the plan
depends on: kernel, dtypes, offsets, shapes, strides, the tunables tests switch); on a miss its
planner runs once against a ``Recorder``, with ``SLOTS`` standing for the buffers and the
recorder handing out scratch, and the launches it records are replayed with the buffers of
each later call. ``OpenCLBackend.elementwise`` caches its plans in the same spirit.
"""

from __future__ import annotations

import weakref

import numpy as np

# plans kept per device before its cache starts over (geometries that keep changing)
PLAN_CACHE_SIZE = 4096
# A plan over buffers of this many bytes in all opens the runtime's gate after its launches
# (``Runtime.submit``): work of that size keeps the device busy while the host goes on.
HEAVY_BYTES = 1 << 18
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Runtime -> {key: plan}


class Slot:
    """A buffer named in a recorded launch: the i-th of the call's buffers, then scratch."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"Slot({self.index})"


# what a planner passes for the call's buffers, in the order the entry point gives them
SLOTS = tuple(Slot(i) for i in range(4))


class Recorder:
    """Collects the launches and scratch sizes of one plan (``rt.launch``'s signature)."""

    def __init__(self, rt, n_buffers):
        self.rt = rt
        self.n_buffers = n_buffers
        self.launches = []
        self.scratch_sizes = []

    def scratch(self, nbytes) -> Slot:
        """A scratch buffer of ``nbytes``: taken from the allocator at each replay, returned
        after its last launch (the queue runs in order, so later work cannot clobber it)."""
        self.scratch_sizes.append(nbytes)
        return Slot(self.n_buffers + len(self.scratch_sizes) - 1)

    def launch(self, kernel, global_size, local_size, args):
        self.launches.append((kernel, tuple(global_size), local_size, list(args)))

    def launch1d(self, kernel, n, args, per_item=1):
        """``Runtime.launch1d``'s grid-stride sizes over ``n`` items."""
        rt = self.rt
        items = max(1, min(-(-n // per_item), rt.max_work_items))
        items = -(-items // rt.local_size) * rt.local_size
        self.launch(kernel, (items,), (rt.local_size,), args)

    def plan(self) -> tuple:
        """(steps, scratch sizes): each step a kernel, its sizes, its arguments and the
        (position, slot) of each buffer among them. Kernels get their argument types here,
        so that a replay only enqueues."""
        rt = self.rt
        steps = []
        for k, global_size, local_size, args in self.launches:
            if k not in rt.typed:
                rt.type_like(k, args)
            slots = tuple((i, a.index) for i, a in enumerate(args) if type(a) is Slot)
            # the values as Python numbers, now that the kernel knows their C types: pyopencl
            # packs those 3x faster than NumPy scalars (a 12-argument launch: 3.8 vs 11 us)
            values = tuple(a.item() if isinstance(a, np.generic) else a for a in args)
            steps.append((k, global_size, local_size, values, slots))
        return tuple(steps), tuple(self.scratch_sizes)


def run(rt, key, buffers, planner, *args) -> None:
    """Enqueues the plan of ``key`` with ``buffers`` in its slots; on a miss it is made by
    ``planner(recorder, *args)``, which launches through the recorder with ``SLOTS`` for
    ``buffers``. An unhashable key (a geometry given as lists) is planned for this call."""
    plans = _PLANS.get(rt)
    if plans is None:
        plans = _PLANS[rt] = {}
    try:
        plan = plans.get(key)
    except TypeError:
        plan = key = None
    if plan is None:
        rec = Recorder(rt, len(buffers))
        planner(rec, *args)
        # heavy: the plan's work keeps the device's threads busy (Runtime.HEAVY_ITEMS)
        heavy = sum(b.size for b in buffers) >= HEAVY_BYTES
        plan = (*rec.plan(), heavy)
        if key is not None:
            if len(plans) >= PLAN_CACHE_SIZE:
                plans.clear()
            plans[key] = plan
    steps, scratch, heavy = plan
    if not scratch and len(steps) == 1:  # the common case, without the scratch bookkeeping
        k, global_size, local_size, template, slots = steps[0]
        launch_args = list(template)
        for i, s in slots:
            launch_args[i] = buffers[s]
        rt.enqueue(k, global_size, local_size, launch_args)
        if heavy:
            rt.submit()
        return
    bufs = list(buffers)
    allocator = rt.allocator
    try:
        for nbytes in scratch:
            bufs.append(_scratch(rt, nbytes))
        for k, global_size, local_size, template, slots in steps:
            launch_args = list(template)
            for i, s in slots:
                launch_args[i] = bufs[s]
            rt.enqueue(k, global_size, local_size, launch_args)
        if heavy:
            rt.submit()
    finally:
        for buf, nbytes in zip(bufs[len(buffers) :], scratch):
            allocator.release(buf, nbytes)


def _scratch(rt, nbytes: int):
    """A scratch buffer of ``nbytes``. During a flush, none that its launches touch: a storage
    that died while deferred launches read it gave its buffer back, and a scratch buffer is
    written now, ahead of the launches after this one (a reduction's partials overwrote the
    input of the add that read its result)."""
    allocator = rt.allocator
    buf = allocator.alloc(nbytes)
    if not rt.flush_buffers:
        return buf
    touched = {id(b) for b in rt.flush_buffers}
    aside = []
    while id(buf) in touched:
        aside.append(buf)
        buf = allocator.alloc(nbytes)
    for b in aside:
        allocator.put_back(b, nbytes)
    return buf


def clear() -> None:
    """Forgets every plan (they are rebuilt on their next use)."""
    _PLANS.clear()
