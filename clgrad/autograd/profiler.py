"""``torch.autograd.profiler``: ``profile`` (the profiler as a ``with`` block) and
``record_function`` (a named range, as a ``with`` block or a decorator).

What is measured is host (CPU) time, with ``time.perf_counter_ns``: each ``record_function``
range, and each call of a clgrad op (``aten::add``, ``aten::mm``, ``aten::linear``, ...) made
through the ``clgrad`` namespaces or a Tensor method, while a profiler collects. The ops are
timed by wrappers ``clgrad.profiler`` puts on those functions and methods when the first
profiler starts and takes off when the last one stops: nothing is wrapped, and nothing costs,
while no profiler collects. An op's time is what the host spent in it (enqueueing its kernels
on an OpenCL device, or computing on ``cpu``); the device's own kernel time is not measured, so
the ``cuda``/``device`` columns are zeros (``clgrad.synchronize()`` inside a range makes the
range wait for the device).

>>> with clgrad.autograd.profiler.profile() as prof:
...     with clgrad.autograd.profiler.record_function("step"):
...         y = clgrad.ones(2, 2).mm(clgrad.ones(2, 2))
>>> sorted(e.key for e in prof.key_averages())
['aten::mm', 'aten::ones', 'step']
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import time
from collections.abc import Callable

from .profiler_util import EventList, FunctionEvent, _chrome_trace, _write_json

__all__ = ["profile", "record_function"]

# the collections recording now: replaced, never changed in place, so a thread reads it
# without the lock
_collecting: tuple[_Collection, ...] = ()
_lock = threading.Lock()
_ids = itertools.count(1)
# (install, uninstall) pairs: clgrad.profiler registers the wrappers that time each op call,
# which this layer (below the ops) cannot import; installed while anything collects
_instrumentation: list[tuple[Callable[[], None], Callable[[], None]]] = []


class _Wants:
    """What the collections recording now ask of each op call, beyond its interval."""

    shapes = False
    memory = False
    stack = False


def collecting() -> bool:
    """Whether a profiler is collecting now.

    >>> from clgrad.autograd.profiler import collecting
    >>> collecting()
    False
    """
    return bool(_collecting)


def _refresh() -> None:
    _Wants.shapes = any(c.record_shapes for c in _collecting)
    _Wants.memory = any(c.profile_memory for c in _collecting)
    _Wants.stack = any(c.with_stack for c in _collecting)


def _begin(collection: _Collection) -> None:
    global _collecting
    with _lock:
        first = not _collecting
        _collecting = (*_collecting, collection)
        _refresh()
        if first:
            for install, _ in _instrumentation:
                install()


def _end(collection: _Collection) -> None:
    global _collecting
    with _lock:
        _collecting = tuple(c for c in _collecting if c is not collection)
        _refresh()
        if not _collecting:
            for _, uninstall in _instrumentation:
                uninstall()


def _record(name, start_ns, end_ns, id, annotation, shapes=None, stack=None, allocated=None):
    """One finished range, to every collection that was recording when it began.
    ``allocated`` is {storage id: (bytes, on the host)} of the tensors an op made."""
    event = (name, start_ns, end_ns, id, annotation, threading.get_native_id())
    for c in _collecting:
        if c.start_ns <= start_ns:
            c.raw.append((*event, shapes, stack, allocated))


# frames of the profiling machinery itself, left out of the recorded stacks
_OWN_FILES = {__file__, contextlib.__file__}


def _python_stack() -> list[str]:
    """The caller's Python stack, innermost first, as torch's ``with_stack`` entries
    (``path(line): function``), without the profiler's own frames."""
    out = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename not in _OWN_FILES:
            out.append(f"{code.co_filename}({frame.f_lineno}): {code.co_name}")
        frame = frame.f_back
    return out


def _skip_file(path: str) -> None:
    """Leaves the frames of the module at ``path`` (clgrad.profiler's wrappers) out of stacks."""
    _OWN_FILES.add(path)


class record_function(contextlib.ContextDecorator):
    """A named range the profiler records (as a ``user_annotation``): a ``with`` block or a
    decorator, as ``torch.profiler.record_function``. Nothing is recorded, and next to
    nothing spent, while no profiler collects.

    >>> from clgrad.profiler import profile, record_function
    >>> @record_function("double")
    ... def double(x):
    ...     return x * 2
    >>> with profile() as prof:
    ...     with record_function("block"):
    ...         y = double(clgrad.ones(3))
    >>> {e.key: e.count for e in prof.key_averages() if not e.key.startswith("aten::")}
    {'block': 1, 'double': 1}
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._open: list = []  # (id, stack, start) of the ranges entered and not yet left

    def _recreate_cm(self):
        # each call of a decorated function its own range (calls may overlap, in threads)
        return record_function(self.name, self.args)

    def __enter__(self):
        if _collecting:
            stack = _python_stack() if _Wants.stack else None
            self._open.append((next(_ids), stack, time.perf_counter_ns()))
        else:
            self._open.append(None)
        return self

    def __exit__(self, *exc) -> bool:
        end = time.perf_counter_ns()
        opened = self._open.pop() if self._open else None
        if opened is not None:
            id, stack, start = opened
            _record(self.name, start, end, id, True, stack=stack)
        return False


class _Collection:
    """The ranges recorded between one start and stop of a profiler."""

    def __init__(self, record_shapes, profile_memory, with_stack, use_device):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.use_device = use_device
        self.raw: list[tuple] = []
        self.start_ns = time.perf_counter_ns()
        # the wall clock at start_ns, for the trace's timestamps
        self.base_ns = time.time_ns()


def _function_events(raw: list[tuple], origin_ns: int, use_device) -> list[FunctionEvent]:
    """FunctionEvents of recorded ranges, their times in microseconds from ``origin_ns``."""
    out = []
    for name, start, end, id, annotation, tid, shapes, stack, allocated in raw:
        trace_name = name
        if name.startswith("ProfilerStep#"):  # torch sums the steps under one key
            name = "ProfilerStep*"
        event = FunctionEvent(
            id,
            name,
            tid,
            (start - origin_ns) / 1000.0,
            (end - origin_ns) / 1000.0,
            input_shapes=shapes or [],
            stack=stack or [],
            trace_name=trace_name,
            is_user_annotation=annotation,
            use_device=use_device,
        )
        event._allocated = allocated
        out.append(event)
    return out


def _count_memory(events: EventList) -> None:
    """Each event's memory: the bytes of the tensors it and the ranges inside it allocated, as
    torch counts the allocations within a range (frees are not tracked). An op that returns
    what an op inside it made allocated nothing more: its outputs whose storage a range inside
    it made are not counted again."""

    def count(e) -> set:
        made_inside, host, device = set(), 0, 0
        for child in e.cpu_children:
            made_inside |= count(child)
            host += child.cpu_memory_usage
            device += child.device_memory_usage
        for storage, (n, on_host) in (e._allocated or {}).items():
            if storage not in made_inside:
                made_inside.add(storage)
                host, device = (host + n, device) if on_host else (host, device + n)
        e.cpu_memory_usage, e.device_memory_usage = host, device
        return made_inside

    for e in events:
        if e.cpu_parent is None:
            count(e)


class profile:
    """``torch.autograd.profiler.profile``: records, between entering and leaving, the host
    time of each clgrad op call and ``record_function`` range (see the module's docstring).
    ``record_shapes`` keeps the shapes of the tensor arguments (``key_averages
    (group_by_input_shape=True)`` groups by them), ``profile_memory`` the bytes of the tensors
    the ops inside each range made (``cpu_memory_usage``, ``device_memory_usage`` for OpenCL
    devices; ``self_*`` less those of the ranges inside; frees are not tracked),
    ``with_stack`` the Python stack of each call.
    ``use_cuda``, ``use_device``, ``with_flops``, ``with_modules``, ``use_kineto`` and the
    rest are accepted.

    >>> with clgrad.autograd.profiler.profile(record_shapes=True) as prof:
    ...     z = clgrad.zeros(2, 3) + 1
    >>> [(e.key, e.input_shapes) for e in prof.key_averages(group_by_input_shape=True)]
    [('aten::zeros', [[], []]), ('aten::add', [[2, 3], []])]
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config=None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
        **_ignored,
    ):
        self.enabled = enabled
        self.use_device = use_device or ("cuda" if use_cuda else None)
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.entered = False
        self._collection: _Collection | None = None
        self._old: list = []  # the ranges of earlier collections (acc_events)
        self._function_events: EventList | None = None
        self._metadata: dict = {}

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._start_trace()
        return self

    def _prepare_trace(self) -> None:
        self.entered = True

    def _start_trace(self) -> None:
        self.entered = True
        if self._collection is not None and self.acc_events:
            self._old += self._collection.raw
        self._collection = _Collection(
            self.record_shapes, self.profile_memory, self.with_stack, self.use_device
        )
        if not self._old:  # times count from the first collection the events come from
            self._origin_ns = self._collection.start_ns
            self._origin_wall_ns = self._collection.base_ns
        self._function_events = None
        _begin(self._collection)

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if not self.enabled or self._collection is None:
            return False
        _end(self._collection)
        self._function_events = None
        return False

    def _events(self) -> EventList:
        if self._collection is None:
            raise RuntimeError("Profiler didn't finish running")
        if self._function_events is None:
            raw = self._old + self._collection.raw
            events = _function_events(raw, self._origin_ns, self.use_device)
            self._function_events = EventList(
                sorted(events, key=lambda e: (e.time_range.start, e.id)),
                use_device=self.use_device,
                profile_memory=self.profile_memory,
                with_flops=self.with_flops,
            )
            self._function_events._build_tree()
            if self.profile_memory:
                _count_memory(self._function_events)
        return self._function_events

    @property
    def function_events(self) -> EventList:
        """Every recorded range (an EventList of FunctionEvent), in the order they began."""
        return self._events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, **kwargs) -> EventList:
        """The recorded ranges summed by name (see ``EventList.key_averages``)."""
        return self._events().key_averages(group_by_input_shape, group_by_stack_n, **kwargs)

    def table(self, *args, **kwargs) -> str:
        """The recorded ranges as torch's table (see ``EventList.table``)."""
        return self._events().table(*args, **kwargs)

    def total_average(self):
        """Every recorded range summed into one (see ``EventList.total_average``)."""
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The host time of the recorded ranges, in microseconds."""
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path: str, metadata: dict | None = None, **_ignored) -> None:
        """Writes the recorded ranges to ``path`` as a Chrome trace (the JSON object torch's
        Kineto writes; gzip-compressed where ``path`` ends in ``.gz``)."""
        events = self._events()
        metadata = {**self._metadata, **(metadata or {})}
        _write_json(path, _chrome_trace(events, metadata, self._origin_wall_ns, path))

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes the recorded stacks (``with_stack=True``) for flame graph tools."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._events().export_stacks(path, metric)

    def __str__(self):
        return "<unfinished profile>" if self._collection is None else str(self._events())

    def __repr__(self):
        return "<unfinished profile>" if self._collection is None else repr(self._events())
