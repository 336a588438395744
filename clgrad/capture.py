"""What ``clgrad.compile`` records while a step runs once for real: the kernel launches, and
everything that makes a launch-level replay of them wrong or incomplete.

The layers that launch kernels, move data, allocate and change Python state call the hooks
below; each is one global read while nothing is being captured. The recording itself lives
here, at the bottom of the layers, so that the runtime, the backends, autograd and the
optimizers can all report to it without importing ``clgrad.compile`` (which sits on top).

A *scalar source* covers the Python numbers that change on every call and are baked into a
launch's arguments (Adam's bias corrections, a random kernel's Philox offset): the code that
computes them hands a function that advances its Python state and returns the new numbers
(``scalar_source``); the backend primitive that launches the kernel says which argument
positions they fill (``bind_source``). A replay calls the functions in the order of capture
and patches those positions.
"""

from __future__ import annotations

import weakref

#: The ``Recording`` being made, or None.
active: Recording | None = None

#: Why a step that runs on the ``cpu`` device is not replayed (it runs eagerly, as documented).
HOST_WORK = "work on the cpu device (NumPy, no kernel to replay)"


class Patch:
    """At each replay ``source()`` gives new numbers for ``positions`` of launch ``index``,
    through ``convert`` (the argument types that launch takes)."""

    __slots__ = ("index", "positions", "source", "convert")

    def __init__(self, index, positions, source, convert):
        self.index = index
        self.positions = positions
        self.source = source
        self.convert = convert


class Recording:
    """The launches of one capture, in order, as ``[runtime, kernel, global, local, args]``,
    and what was seen besides them.

    >>> rec = Recording()
    >>> rec.fail("read to the host")
    >>> rec.fail("something later")
    >>> rec.unsupported
    'read to the host'
    """

    def __init__(self):
        self.launches: list[list] = []
        self.patches: list[Patch] = []
        self.unsupported: str | None = None  # the first reason a replay would diverge
        self.allocated: set[int] = set()  # int_ptr of the buffers handed out while capturing
        # id(leaf) -> [leaf, its .grad when the capture first touched it, "set" or "accumulate"]
        self.leaves: dict[int, list] = {}
        self.accumulated = False  # whether a backward reached a leaf
        self.optimizers: dict[int, object] = {}
        # (container, key) pairs whose values the patches' sources advance at each replay
        self.claims: list[tuple] = []
        self.source = None  # (function, claims) waiting for the launch it feeds
        self.first_optimizer = None  # called with each optimizer when it is first seen
        # (flag, fail, inputs): an input check whose flag a replay computes on the device and
        # reads
        self.checks: list[tuple] = []
        # id -> weak reference of each storage whose version the capture counted up: memory the
        # step writes, which a replay writes again (without the ops that count versions)
        self.written: dict[int, object] = {}

    def fail(self, reason: str) -> None:
        if self.unsupported is None:
            self.unsupported = reason


def start() -> Recording:
    """Starts recording (one capture at a time, in one thread); ``stop`` ends it.

    >>> from clgrad import capture
    >>> rec = capture.start()
    >>> y = clgrad.ones(2) * 2  # on the cpu device: nothing a replay could redo
    >>> capture.stop() is rec, rec.launches, rec.unsupported
    (True, [], 'work on the cpu device (NumPy, no kernel to replay)')
    """
    global active
    if active is not None:
        raise RuntimeError("clgrad.compile: a captured step cannot run inside another capture")
    active = Recording()
    return active


def stop() -> Recording | None:
    global active
    rec, active = active, None
    return rec


# ---- hooks -----------------------------------------------------------------------------------
def record_launch(runtime, kernel, global_size, local_size, args) -> None:
    """Called by ``Runtime.launch``/``enqueue`` for every kernel while capturing."""
    active.launches.append([runtime, kernel, global_size, local_size, list(args)])


def note_write(storage) -> None:
    """A storage's version counted up (an in-place write) while capturing."""
    written = active.written
    if id(storage) not in written:
        written[id(storage)] = weakref.ref(storage)


def note_transfer(what: str) -> None:
    """A copy between the host (or another device) and a device: a replay would not redo it."""
    if active is not None:
        active.fail(what)


def note_host_work() -> None:
    """Work on the ``cpu`` device (NumPy on the host): a replay of launches would skip it."""
    if active is not None:
        active.fail(HOST_WORK)


def note_grad(leaf, how: str) -> None:
    """A leaf's ``.grad`` is about to change: ``how`` is "set" (assigned, or reset by
    ``zero_grad``) or "accumulate" (backward adds into it, or creates it when None)."""
    rec = active
    if rec is not None:
        if how == "accumulate":
            rec.accumulated = True
        if id(leaf) not in rec.leaves:
            rec.leaves[id(leaf)] = [leaf, leaf._grad, how]


def note_optimizer(optimizer) -> None:
    """An optimizer's ``step`` runs: its hyperparameters become guards, its state is checked."""
    rec = active
    if rec is not None and id(optimizer) not in rec.optimizers:
        rec.optimizers[id(optimizer)] = optimizer
        if rec.first_optimizer is not None:
            rec.first_optimizer(optimizer)


def defer_check(flag, fail, inputs=()) -> None:
    """An input check (``fail()`` raises when the one-element tensor ``flag`` is true) that
    would read the device while capturing: the replay computes ``flag`` and reads it after
    its launches, unless ``flag`` depends on ``inputs`` alone and they are unchanged since it
    last passed (see ``clgrad.nn.functional.device_check``)."""
    active.checks.append((flag, fail, tuple(inputs)))


def scalar_source(function, claims=()) -> None:
    """The numbers of the next primitive's launch come from ``function()`` at each replay, which
    also advances the Python state named by ``claims`` ((dict or object, key) pairs)."""
    rec = active
    if rec is not None:
        if rec.source is not None:
            rec.fail("a scalar source no kernel launch consumed")
        rec.source = (function, tuple(claims))


def bind_source(positions, convert) -> None:
    """Called by a primitive right after its launch: the pending scalar source fills
    ``positions`` of that launch through ``convert(*numbers)``."""
    rec = active
    if rec is not None and rec.source is not None:
        function, claims = rec.source
        rec.source = None
        rec.patches.append(Patch(len(rec.launches) - 1, positions, function, convert))
        rec.claims.extend(claims)


def get_claim(container, key):
    return container[key] if isinstance(container, dict) else getattr(container, key)


def set_claim(container, key, value) -> None:
    if isinstance(container, dict):
        container[key] = value
    else:
        setattr(container, key, value)
