"""Elementwise fusion: launches deferred until something needs the queue, then run as few kernels.

``OpenCLBackend.elementwise`` plans each launch as before (kernel, sizes, arguments: every check
and error has already happened at the call) and, with fusion on, hands it to ``Runtime.defer``
instead of the queue. Anything else that touches the queue or the device's memory (another
kernel family, a read, a write, a copy, ``synchronize``) calls ``Runtime.flush`` first, so the
queue sees every command in program order, as eager execution would have queued it.

``flush`` cuts the deferred launches into groups that one kernel can run: consecutive launches
over one output shape, where every buffer a group writes is accessed through one same view
(offset and strides) by every launch in it. Then work-item ``i`` computes element ``i`` of every
launch in program order, so a value one launch writes is the value the next one reads at the same
index: it stays in a register. A store is left out where the buffer is rewritten later in the group,
or where its storage has died (``Runtime.release`` marks the launches that wrote it) and no later
deferred launch reads it: ``exp(2 * x + 1)`` reads ``x`` and writes the result, once.

A group's kernel is rendered from the ops' declared expressions (``kernels/fused.cl.mako``) and
keyed by the group's structure: which ops, dtypes and layouts, where each operand comes from,
which stores remain. Sizes, offsets and Python numbers are arguments, so a training loop builds
each of its chains once. A structure is built on its ``FUSE_AFTER``-th sighting (a chain seen once,
as in most tests, is not worth a build), in a background thread; until its kernel is ready its
launches run one by one, as planned.

Planning costs a few microseconds per launch, more than a small launch saves; but a training
loop flushes the same launches over the same buffers step after step. So what a flush runs is
decided once per ``signature`` (the launches' structures, which buffers at which offsets, which
outputs died) and kept: a repeated flush only fills in its buffers and Python numbers.

``CLGRAD_FUSION=0`` turns fusion off (every launch goes to the queue at once);
``CLGRAD_FUSE_AFTER`` sets the sighting that builds; ``CLGRAD_DEBUG=1`` logs each fused kernel
with the ops it holds.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor

import pyopencl as cl

from ..base import View
from . import reduce as reduce_family
from . import template_helpers as h
from .launch import (
    INDEX_NP,
    SCALAR_NP,
    broadcast_strides,
    contiguous_strides,
    dims_args,
    dims_types,
    merge_dims,
)
from .render import BUILD_LOCK, render
from .template_helpers import FLOAT16_STORAGE, subst

log = logging.getLogger("clgrad")

# A group holds at most this many launches, memory views, Python numbers and reductions: a
# kernel's parameters are bounded (OpenCL promises 1 KiB: a view takes at most 32 bytes with its
# offset and strides, a number 8, a reduction's result 16, the sizes 64), and each reduction
# takes a work-group's worth of local memory.
MAX_LAUNCHES = 32
MAX_VIEWS = 20
MAX_SCALARS = 24
MAX_REDUCES = 8
# A group with a reduction runs as one work-group: past this many elements, launches after a
# reduction start a new group rather than join that single work-group's walk.
JOIN_AFTER_REDUCE_MAX = 8192
STRIDED_DIMS = 4  # as the elementwise kernels: up to 4 merged dims share one kernel
# A group earns a kernel of its own with this many launches, or this many elements: a build and
# its code generation cost ~0.3 s on PoCL, which two small launches never win back in a short
# job, while longer chains and large tensors do (launches and memory traffic saved).
FUSE_MIN_LAUNCHES = 3
FUSE_MIN_NUMEL = 1 << 16
# A smaller group (two launches, or a launch and its reduction: a gradient's ``g * x`` summed
# to a bias or a scalar weight) earns its kernel once seen this many times: a training loop's
# steps repeat it, a test's few calls do not.
FUSE_SMALL_AFTER = 32


# A launch's kind, as a fused kernel sees it (op, compute C types, out dtype, each operand's
# dtype or None for a number), numbered once: structure keys hold these small ints, so looking a
# structure up hashes no nested tuple, and a new shape or layout of the same ops keys the same.
_KINDS: dict[tuple, int] = {}
KINDS: list[tuple] = []


def _kind(kind: tuple) -> int:
    n = _KINDS.get(kind)
    if n is None:
        n = _KINDS[kind] = len(KINDS)
        KINDS.append(kind)
    return n


class Fusable:
    """What a launch's place in a fused kernel depends on, decided by its plan (and cached
    with it): its ``kind`` (``KINDS``), the output's shape and ``out_st``, and per operand None (a
    number) or (strides over the output's shape, dtype). ``flat``: every view is one
    contiguous run over the shape."""

    __slots__ = ("kind", "shape", "out_st", "operands", "flat", "numel")

    def __init__(self, kernel, out, operands, compute):
        self.shape = out.shape
        self.out_st = (out.strides, out.dtype)  # the output's, as an operand's (strides, dtype)
        self.operands = tuple(
            (broadcast_strides(x, out.shape), x.dtype) if type(x) is View else None
            for x in operands
        )
        self.kind = _kind(
            (
                kernel,
                tuple(dt.compute_ctype for dt in compute),
                out.dtype,
                tuple(None if x is None else x[1] for x in self.operands),
            )
        )
        contiguous = contiguous_strides(out.shape)
        self.flat = out.strides == contiguous and all(
            x is None or x[0] == contiguous for x in self.operands
        )
        self.numel = out.numel()


def fusion_info(kernel, out, operands, compute):
    """A launch's ``Fusable``, or None where it may not join a group: half and bfloat16 values
    round on every store (no register holds that)."""
    if out.dtype.ctype in FLOAT16_STORAGE:
        return None
    for x in operands:
        if type(x) is View and x.dtype.ctype in FLOAT16_STORAGE:
            return None
    return Fusable(kernel, out, operands, compute)


class Deferred:
    """One planned elementwise launch: ``out = kernel(operands)`` (Views and Python numbers in
    their compute types) by ``plan`` (kernel object, global size, local size, the arguments
    after the operands, ...: ``OpenCLBackend.elementwise_plan``); ``info``: its ``Fusable`` or
    None. ``dead``: the output's storage died before the launch reached the queue."""

    __slots__ = ("info", "out", "operands", "plan", "dead")

    def __init__(self, info, out, operands, plan):
        self.info = info
        self.out = out
        self.operands = operands
        self.plan = plan
        self.dead = False

    @property
    def launch(self) -> tuple:
        """``alone(plan, out, operands)``: made only for a launch that runs alone (most are
        fused, or dead)."""
        return alone(self.plan, self.out, self.operands)


def alone(plan, out, operands) -> tuple:
    """(kernel object, global size, local size, arguments) that run an elementwise ``plan``
    over these views and numbers as a launch of its own."""
    k, global_size, local_size, tail = plan[:4]
    args = [out[0], out[1]]  # buffer, offset (View fields by index: once per launch)
    for x in operands:
        if type(x) is View:
            args += x[:2]
        else:
            args.append(x)
    args += tail
    return k, global_size, local_size, args


class ReduceEntry:
    """A deferred full reduction (``out`` holds one element) of ``x``, the output of a
    deferred launch: ``plan`` attaches it to that launch's group, whose kernel then reduces the
    launch's value as it computes it (the value need not be stored), or runs it alone
    (``reduce.reduce``)."""

    __slots__ = ("kernel", "out", "x", "dims", "acc", "operands", "dead")
    info = None  # never joins a group as a launch

    def __init__(self, kernel, out, x, dims, acc):
        self.kernel, self.out, self.x, self.dims, self.acc = kernel, out, x, dims, acc
        self.operands = (x,)
        self.dead = False


MIXED = ()  # a buffer the group reads through more than one view
SCALAR = "s"  # an operand that is a Python number


class Group:
    """Launches one kernel can run (see the module docstring), in order.

    ``sources``: per launch, per operand, SCALAR, the index of the launch whose register holds
    it (>= 0) or ``-1 - j`` for memory view ``j``. ``views``: (buffer, offset, strides over the
    shape, dtype) in order of first use; ``outs``: each launch's output view. A buffer the group
    writes is touched through one view only (``access``), so work-item i reads and writes only
    element i of it, in program order.
    """

    __slots__ = (
        "entries",
        "shape",
        "open",
        "sources",
        "views",
        "outs",
        "scalars",
        "access",
        "writer",
        "reads",
        "index",
        "keep",
        "reduces",
        "reduced",
        "start",
    )

    def __init__(self, e, start=0):
        self.start = start  # the position of its first entry in the flushed list
        self.entries = []
        self.shape = e.out.shape
        self.open = e.info is not None  # more launches may join
        self.sources, self.views, self.outs, self.scalars = [], [], [], []
        self.access: dict[int, tuple] = {}  # buffer id -> (offset, (strides, dtype)) or MIXED
        self.writer: dict[int, int] = {}  # buffer id -> the last launch writing it
        self.reads: set[int] = set()  # buffer ids read from memory
        self.index: dict[tuple, int] = {}  # (buffer id, (offset, (strides, dtype))) -> view
        self.keep = None  # per launch: whether its store happens (``plan``)
        # (number of launches before it, ReduceEntry, the launch whose value it reduces)
        self.reduces: list[tuple] = []
        self.reduced: set[int] = set()  # buffer ids the reductions write (at the kernel's end)
        self._commit(e)

    def add(self, e) -> bool:
        """Adds launch ``e`` if the group can hold it (else returns False, unchanged)."""
        info = e.info
        if (
            info is None
            or not self.open
            or info.shape != self.shape
            or len(self.entries) >= MAX_LAUNCHES
            or len(self.views) + len(info.operands) >= MAX_VIEWS
            or len(self.scalars) + len(info.operands) > MAX_SCALARS
        ):
            return False
        if self.reduces and info.numel > JOIN_AFTER_REDUCE_MAX:
            return False
        access, writer, reduced = self.access, self.writer, self.reduced
        o = e.out
        ob = id(o[0])  # View fields by index: this runs for every deferred launch
        if ob in reduced:
            return False
        osig = (o[1], info.out_st)
        refs = []  # per operand: None (a number), or (buffer id, (offset, (strides, dtype)))
        for x, st in zip(e.operands, info.operands):
            if st is None:
                refs.append(None)
                continue
            b = id(x[0])
            sig = (x[1], st)
            if b in reduced:  # written only once the kernel's loop is over
                return False
            if b in writer:
                if access[b] != sig:
                    return False
            elif b == ob and sig != osig:
                return False
            refs.append((b, sig))
        seen = access.get(ob)
        if seen is not None and seen != osig:
            return False
        self._commit(e, refs, ob, osig)
        return True

    def attach(self, r) -> bool:
        """Adds reduction ``r`` where it reduces the output of one of the group's launches,
        through the view that launch wrote, into a buffer no launch of the group writes (its
        result is stored once the group's loop is over: earlier launches may have read the
        buffer's old contents, as a recycled buffer's were) (else returns False). Later
        launches may join, except those touching its result."""
        x = r.x
        b = id(x.buffer)
        ob = id(r.out.buffer)
        j = self.writer.get(b)
        if (
            not self.open
            or j is None
            or len(self.reduces) >= MAX_REDUCES
            or x.shape != self.shape
            or self.access.get(b) != (x.offset, (x.strides, x.dtype))
            or ob in self.writer
            or ob in self.reduced
        ):
            return False
        self.reduces.append((len(self.entries), r, j))
        self.reduced.add(ob)
        return True

    def _commit(self, e, refs=None, ob=None, osig=None):
        """Appends launch ``e``; ``refs``, ``ob``, ``osig``: what ``add`` worked out of it."""
        info = e.info
        writer = self.writer
        sources = []
        if info is not None:
            if refs is None:
                o = e.out
                ob, osig = id(o[0]), (o[1], info.out_st)
                refs = [
                    None if st is None else (id(x[0]), (x[1], st))
                    for x, st in zip(e.operands, info.operands)
                ]
            access, index, views, reads = self.access, self.index, self.views, self.reads
            for x, ref in zip(e.operands, refs):
                if ref is None:
                    sources.append(SCALAR)
                    self.scalars.append(x)
                    continue
                b, sig = ref
                w = writer.get(b)
                if w is not None:  # aligned with the write (``add``): the register holds it
                    sources.append(w)
                    continue
                reads.add(b)
                if access.setdefault(b, sig) != sig:
                    access[b] = MIXED
                j = index.get(ref)
                if j is None:
                    j = index[ref] = len(views)
                    views.append((x[0], sig[0], *sig[1]))
                sources.append(-1 - j)
            # (a first launch may read its output's buffer through another, disjoint view:
            # then nothing later may touch that buffer)
            access[ob] = osig if access.get(ob, osig) == osig else MIXED
            key = (ob, osig)
            j = index.get(key)
            if j is None:
                j = index[key] = len(views)
                views.append((e.out[0], osig[0], *info.out_st))
            self.outs.append(j)
        else:
            ob = id(e.out[0])
            for x in e.operands:
                if type(x) is View:
                    self.reads.add(id(x[0]))
        writer[ob] = len(self.entries)
        self.sources.append(tuple(sources))
        self.entries.append(e)


def plan(entries) -> list:
    """The deferred launches cut into groups, in order, each with its stores decided: not
    where a later launch of the group rewrites the same elements, nor where the storage died
    and no later group reads it."""
    groups, current = [], None
    for i, e in enumerate(entries):
        if current is not None and (
            current.attach(e) if type(e) is ReduceEntry else current.add(e)
        ):
            continue
        current = Group(e, i)
        groups.append(current)
    read_later: set[int] = set()
    for g in reversed(groups):
        writer = g.writer
        keep = []
        for i, e in enumerate(g.entries):
            b = id(e.out.buffer)
            keep.append(writer[b] == i and (not e.dead or b in read_later))
        g.keep = keep
        read_later |= g.reads
    return groups


# a full reduction joins a group's kernel up to this many elements (one work-group walks them);
# CLGRAD_FUSE_REDUCE=0 keeps reductions apart
FUSE_REDUCE_MAX = (1 << 16) if os.environ.get("CLGRAD_FUSE_REDUCE", "1").strip() != "0" else 0


def _reduce_local_size(rt) -> int:
    """The work-group size of a fused reduction: a power of two (its tree halves it)."""
    n = 1
    while n * 2 <= rt.local_size:
        n *= 2
    return n


def _used_views(g) -> tuple:
    """(views, sources, stored) of group ``g`` as its kernel sees them: only the views it
    loads from or stores into (an output kept in a register alone is no parameter), numbered
    in order of first use."""
    stored = [j if s else -1 for j, s in zip(g.outs, g.keep)]
    used = {-1 - s for srcs in g.sources for s in srcs if s != SCALAR and s < 0}
    used.update(j for j in stored if j >= 0)
    if len(used) == len(g.views):
        return g.views, tuple(g.sources), tuple(stored)
    order = sorted(used)
    number = {j: n for n, j in enumerate(order)}
    sources = tuple(
        tuple(s if s == SCALAR or s >= 0 else -1 - number[-1 - s] for s in srcs)
        for srcs in g.sources
    )
    return [g.views[j] for j in order], sources, tuple(number.get(j, -1) for j in stored)


# a flush's steps (``Fuser.flush_plan``), each a tuple headed by its kind
ENQUEUE, REDUCE, APART, FUSED = range(4)
# flush plans kept before the cache starts over
PLAN_CACHE_SIZE = 512


def signature(entries, hold_last) -> tuple:
    """(key, buffers, offsets, numbers) of a list of deferred launches. ``key`` holds all that
    ``plan`` and ``Fuser.flush_plan`` decide by: each launch's ``Fusable`` (its kind, shapes,
    strides), whether its output died, which buffers (numbered in order of first use) each
    launch and reduction touches and through which of each buffer's offsets (numbered in order
    of first use too), the reductions' geometry. ``buffers`` (by number), ``offsets`` (per
    buffer, its offsets by number) and ``numbers`` (the Python numbers, in order) only fill in
    arguments: the plans decide by which views are the same, never by where they start, so a
    loop over a tensor's slices (an RNN's time steps) keeps one plan for all of them.

    The key is one flat tuple (no tuple per launch: a flush of 256 launches hashes and compares
    it in one pass); it still reads back unambiguously: each launch starts with its ``Fusable``
    (a reduction with its kernel object), which no number or buffer index equals and which
    tells how many operands follow, each a None (a number) or a buffer's and its offset's
    numbers."""
    number: dict[int, int] = {}
    buffers, offsets, numbers = [], [], []
    key = [hold_last]
    add = key.append
    for e in entries:
        if type(e) is Deferred:
            # a launch with no Fusable (half) says how many operands follow: its Fusable would
            add(e.info or (None, len(e.operands)))
            add(e.dead)
            views = (e.out, *e.operands)
        else:
            key += (e.kernel, e.dims, e.acc, e.out[2:5], e.x[2:5])
            views = (e.out, e.x)
        for x in views:  # (this loop runs for every deferred launch: inline, no calls)
            if type(x) is View:
                c = number.get(id(x[0]))
                if c is None:
                    c = number[id(x[0])] = len(buffers)
                    buffers.append(x[0])
                    offsets.append([x[1]])
                    q = 0
                else:
                    seen = offsets[c]
                    if seen[0] == x[1]:  # (a buffer is mostly touched at one offset)
                        q = 0
                    elif x[1] in seen:
                        q = seen.index(x[1])
                    else:
                        q = len(seen)
                        seen.append(x[1])
                add(c)
                add(q)
            else:
                numbers.append(x)
                add(None)
    return tuple(key), buffers, offsets, numbers


class Fuser:
    """A runtime's fused kernels: structure -> kernel, and how often each structure was seen.

    A structure's kernel is built in a background thread (the driver's compiler releases the
    GIL), and the group runs unfused until it is ready: a first run pays no build for fusion.
    ``wait``: build in the calling thread instead (tests, for determinism).
    """

    def __init__(self, rt, fuse_after: int, wait: bool = False):
        self.rt = rt
        self.fuse_after = fuse_after
        self.wait = wait
        self.min_launches = FUSE_MIN_LAUNCHES
        self.kernels: dict[tuple, object] = {}  # structure -> kernel, or None: it failed to build
        self.seen: dict[tuple, int] = {}
        self.building: dict[tuple, Future] = {}
        self._pool = None
        self.launched = 0  # fused launches (tests and the debug log read it)
        self.plans: dict[tuple, tuple] = {}  # signature -> steps (``flush_plan``)

    def _kernel(self, key, small=False):
        """The fused kernel of structure ``key``, or None while there is none to use (a
        ``small`` group waits for more sightings: FUSE_SMALL_AFTER)."""
        k = self.kernels.get(key, False)
        if k is not False:
            return k
        n = self.seen.get(key, 0) + 1
        self.seen[key] = n
        if n < (max(self.fuse_after, FUSE_SMALL_AFTER) if small else self.fuse_after):
            return None
        if self.wait:
            k = self.kernels[key] = self._try_build(key)
            return k
        future = self.building.get(key)
        if future is None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="clgrad-fusion")
            self.building[key] = self._pool.submit(self._try_build, key)
            return None
        if not future.done():
            return None
        del self.building[key]
        k = self.kernels[key] = future.result()
        return k

    def _try_build(self, key):
        """``_build``, or None (logged) where the driver refuses the source: the group then
        always runs unfused, as it would without fusion."""
        try:
            return self._build(key)
        except Exception as e:  # a driver's compiler bug must not fail the user's program
            log.warning("clgrad: fused kernel not built (running its ops one by one): %s", e)
            return None

    def run(self, entries, hold_last=False) -> list:
        """Enqueues ``entries`` (deferred launches, in order) as groups; with ``hold_last``
        all but the last group, whose entries are returned (else nothing is).

        A training loop flushes the same launches over the same buffers step after step:
        what a flush runs is decided once per ``signature`` and kept (``flush_plan``), so a
        repeated flush only fills in the arguments."""
        if len(entries) == 1 and type(entries[0]) is Deferred:
            # the common flush: one launch before another kernel family (a reduction left
            # alone, held back by the last flush, takes the general path: a REDUCE step)
            e = entries[0]
            if not e.dead:
                k, gs, ls, args = e.launch
                self.rt.enqueue_now(k, gs, ls, args)
            return []
        key, buffers, offsets, numbers = signature(entries, hold_last)
        steps = self.plans.get(key)
        if steps is None:
            steps, final = self.flush_plan(entries, hold_last, buffers, offsets)
            if final:  # every kernel it uses is built (or failed for good)
                if len(self.plans) >= PLAN_CACHE_SIZE:  # flushes that keep changing
                    self.plans.clear()
                self.plans[key] = steps
        held_from = steps[-1]
        rt = self.rt
        rt.flush_buffers = buffers
        try:
            self._execute(steps, entries, buffers, offsets, numbers)
        finally:
            rt.flush_buffers = []
        return entries[held_from:] if held_from is not None else []

    def flush_plan(self, entries, hold_last, buffers, offsets) -> tuple:
        """(steps, final): what ``run`` does with ``entries``, the last step the position
        from which entries stay deferred (``hold_last``) or None; ``final`` unless a group runs
        apart only while its kernel is being built."""
        groups = plan(entries)
        held_from = None
        if hold_last and len(groups) > 1:
            held_from = groups.pop().start
        # a view's (buffer number, offset number): what a FUSED step's arguments are filled from
        number = {
            (id(b), off): (c, q) for c, b in enumerate(buffers) for q, off in enumerate(offsets[c])
        }
        before = [0]  # Python numbers in the entries before each position
        for e in entries:
            n = 0 if type(e) is ReduceEntry else sum(type(x) is not View for x in e.operands)
            before.append(before[-1] + n)
        steps, final = [], True
        for g in groups:
            first = g.entries[0]
            end = g.start + len(g.entries) + len(g.reduces)
            if type(first) is ReduceEntry:  # one its group's chain could not hold
                steps.append((REDUCE, g.start))
            elif len(g.entries) == 1 and not g.reduces:
                if g.keep[0]:
                    steps.append((ENQUEUE, g.start))
            elif not any(g.keep) and not g.reduces:
                pass  # nothing it computes is ever read
            else:
                small = (
                    len(g.entries) + len(g.reduces) < self.min_launches
                    and first.info.numel < FUSE_MIN_NUMEL
                )
                step, built = self._fused_step(g, number, before[g.start], before[end], small)
                if step is None:  # no kernel (yet): its launches one by one
                    step = (APART, g.start, end)
                final = final and built
                steps.append(step)
        steps.append(held_from)
        return tuple(steps), final

    def _execute(self, steps, entries, buffers, offsets, numbers):
        """Runs a flush's ``steps`` over ``entries``, arguments filled in from ``buffers``,
        ``offsets`` and ``numbers`` (``signature``)."""
        rt = self.rt
        enqueue = rt.enqueue_now
        for i in range(len(steps) - 1):
            step = steps[i]
            kind = step[0]
            if kind == ENQUEUE:
                k, gs, ls, args = entries[step[1]].launch
                enqueue(k, gs, ls, args)
            elif kind == FUSED:
                _, k, gs, ls, views, first, last, reduces, tail = step
                args = []
                for c, q in views:
                    args += (buffers[c], offsets[c][q])
                args += numbers[first:last]
                for c, q in reduces:
                    args += (buffers[c], offsets[c][q])
                args += tail
                enqueue(k, gs, ls, args)
                self.launched += 1
            elif kind == REDUCE:
                r = entries[step[1]]
                reduce_family.reduce(rt, r.kernel, r.out, r.x, r.dims, r.acc)
            else:  # APART: every store made (a later launch reads it from memory)
                for e in entries[step[1] : step[2]]:
                    if type(e) is ReduceEntry:
                        reduce_family.reduce(rt, e.kernel, e.out, e.x, e.dims, e.acc)
                    else:
                        k, gs, ls, args = e.launch
                        enqueue(k, gs, ls, args)

    def _structure(self, g) -> tuple:
        """(structure key, views, merged shape and strides) of group ``g``'s kernel."""
        views, sources, stored = _used_views(g)
        if not views or all(e.info.flat for e in g.entries):
            layout, maxd, mshape, mstrides = "flat", 0, None, None
        else:
            mshape, mstrides = merge_dims(g.shape, [v[2] for v in views])
            if len(mshape) == 1 and all(s[0] == 1 for s in mstrides):
                layout, maxd = "flat", 0
            else:
                ndim = len(mshape)
                maxd = STRIDED_DIMS if ndim <= STRIDED_DIMS else ndim
                # a 2-D launch pays off once rows are long enough to fill work-groups
                layout = "rows" if mshape[-1] >= 64 and not g.reduces else "general"
        # a rows kernel walks each view's inner dim by a stride of 1 or 0 (a bias, a row
        # broadcast) written into its code: PoCL then vectorizes the work-group's loop, where a
        # stride it reads from an argument makes every load a gather (a bias add 5x slower)
        inner = (
            tuple(s[-1] if s[-1] in (0, 1) else None for s in mstrides) if layout == "rows" else ()
        )
        key = (
            layout,
            maxd,
            tuple(e.info.kind for e in g.entries),
            sources,
            stored,
            tuple(v[3] for v in views),
            tuple(
                (j, r.kernel, (r.acc or r.out.dtype).compute_ctype, r.out.dtype)
                for _, r, j in g.reduces
            ),
            inner,
        )
        return key, views, mshape, mstrides

    def _fused_step(self, g, number, first, last, small):
        """(the FUSED step of group ``g``, or None where it has no kernel; whether that is
        final: a kernel, or one that failed to build, not one still to be built). Its Python
        numbers are ``numbers[first:last]``."""
        rt = self.rt
        key, views, mshape, mstrides = self._structure(g)
        k = self._kernel(key, small)
        if k is None:
            return None, key in self.kernels  # kernels[key] is None: the build failed
        layout, maxd = key[0], key[1]
        tail = []
        if layout != "flat":
            tail += dims_args(mshape, mstrides, maxd)
        numel = g.entries[0].info.numel
        tail.append(numel)
        if g.reduces:  # one work-group walks every element
            L = _reduce_local_size(rt)
            gs, ls = (L,), (L,)
        elif layout == "rows":
            L = rt.local_size
            inner = mshape[-1]
            gs, ls = (-(-inner // L) * L, numel // inner), (L, 1)
        else:
            L = rt.local_size
            items = max(1, min(numel, rt.max_work_items))
            gs, ls = (-(-items // L) * L,), (L,)
        step = (
            FUSED,
            k,
            gs,
            ls,
            tuple(number[id(v[0]), v[1]] for v in views),
            first,
            last,
            tuple(number[id(r.out.buffer), r.out.offset] for _, r, _ in g.reduces),
            tuple(tail),
        )
        return step, True

    def _generate_code(self, program, name, types, local):
        """Launches the kernel once over no element, from a kernel object of its own on the
        runtime's side queue: drivers such as PoCL generate a kernel's code at its first launch
        (for its work-group size), which this moves off the user's thread when the build runs in
        the background."""
        rt = self.rt
        k = cl.Kernel(program, name)
        k.set_scalar_arg_dtypes(types)
        scratch = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 64)
        args = [scratch if t is None else 0 for t in types]  # n = 0: no element is touched
        queue = rt.side_queue  # (made under the runtime's lock: not while holding BUILD_LOCK)
        with BUILD_LOCK:  # code generation is the driver's compiler too
            k(queue, (local,), (local,), *args).wait()

    def _build(self, key):
        """Renders and builds structure ``key``'s kernel, typed (outside the runtime's lock: it
        may run in the background while the runtime builds and launches other kernels)."""
        rt = self.rt
        layout, maxd, kinds, sources, stored, view_dtypes, reductions, inner = key
        itype = "int"  # deferred launches index with 32 bits (larger ones are not deferred)
        steps, scalar_cts = [], []
        ops = [KINDS[n] for n in kinds]  # (kernel, compute C types, out dtype, operand dtypes)
        for (kernel, cts, out_dtype, _), srcs, store in zip(ops, sources, stored):
            names = {}
            for k, (src, ct) in enumerate(zip(srcs, cts)):
                if src == SCALAR:
                    names[f"in{k}"] = f"s{len(scalar_cts)}"
                    scalar_cts.append(ct)
                elif src >= 0:
                    names[f"in{k}"] = f"(({ct})r{src})"
                else:
                    names[f"in{k}"] = f"(({ct})v{-1 - src})"
            ct0 = cts[0] if cts else out_dtype.compute_ctype
            expr = kernel.expr.replace("{T}", ct0)
            steps.append(
                (
                    subst(expr, **names) if names else expr,
                    out_dtype.ctype,
                    out_dtype.name == "bool",
                    store,
                )
            )
        loads = sorted({-1 - s for srcs in sources for s in srcs if s != SCALAR and s < 0})
        name = "cg_fused_" + "_".join(op[0].name for op in ops[:4]) + f"_{len(ops)}"
        fp64 = (
            any(dt.name == "float64" for dt in view_dtypes)
            or "double" in scalar_cts
            or any("double" in op[1] for op in ops)
        )
        reds = []
        for j, rkernel, acc, out_dtype in reductions:
            reds.append(
                (
                    acc,
                    h.neutral(rkernel.neutral, acc),
                    h.ctext(rkernel.map_expr, acc),
                    h.ctext(rkernel.reduce_expr, acc),
                    out_dtype.ctype,
                    out_dtype.name == "bool",
                    j,
                )
            )
            fp64 = fp64 or "double" in (acc, out_dtype.ctype)
        if reds:
            name += f"_{reductions[0][1].name}" + (f"_{len(reds)}" if len(reds) > 1 else "")
        source = render(
            "fused.cl.mako",
            name=name,
            reds=tuple(reds),
            local_size=_reduce_local_size(rt),
            views=tuple(dt.ctype for dt in view_dtypes),
            stores=tuple(sorted({j for j in stored if j >= 0})),
            loads=tuple(loads),
            scalars=tuple(scalar_cts),
            steps=tuple(steps),
            layout=layout,
            inner=inner,
            maxd=maxd,
            index_t=itype,
            fp64=fp64,
            grid_stride=rt.is_gpu,
        )
        program = rt.build(source, "fused.cl.mako")
        I = INDEX_NP[itype]
        types = [None, I] * len(view_dtypes) + [SCALAR_NP[ct] for ct in scalar_cts]
        types += [None, I] * len(reds)
        if layout != "flat":
            types += dims_types(I, len(view_dtypes), maxd)
        types.append(I)
        local = _reduce_local_size(rt) if reds else rt.local_size
        self._generate_code(program, name, types, local)
        k = cl.Kernel(program, name)
        rt.set_arg_types(k, types)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "fused kernel %s on %s: %s",
                name,
                rt.device,
                " -> ".join(
                    op[0].name + ("" if s >= 0 else " (not stored)") for op, s in zip(ops, stored)
                ),
            )
        return k
