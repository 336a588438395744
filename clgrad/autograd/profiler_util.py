"""What the profilers report, as ``torch.autograd.profiler_util``: ``FunctionEvent`` (one
recorded op call or ``record_function`` range), ``FunctionEventAvg`` (the events of one key
summed), ``EventList`` (a list of either, with ``key_averages``, ``table`` and
``export_chrome_trace``). Times are microseconds of host (CPU) time, as torch's ``cpu_time*``.

>>> events = EventList([FunctionEvent(0, "aten::add", 1, 0.0, 4.0),
...                     FunctionEvent(1, "aten::add", 1, 5.0, 7.0)])
>>> avg = events.key_averages()[0]
>>> avg.key, avg.count, avg.cpu_time_total, avg.cpu_time
('aten::add', 2, 6.0, 3.0)
"""

from __future__ import annotations

import gzip
import json
import os
from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]

_US_IN_SECOND = 1000.0 * 1000.0
_US_IN_MS = 1000.0


def _format_time(time_us: float) -> str:
    """A time in microseconds as torch's tables print it.

    >>> _format_time(12.5), _format_time(1234.0), _format_time(2.5e6)
    ('12.500us', '1.234ms', '2.500s')
    """
    if time_us >= _US_IN_SECOND:
        return f"{time_us / _US_IN_SECOND:.3f}s"
    if time_us >= _US_IN_MS:
        return f"{time_us / _US_IN_MS:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_time_us: float) -> str:
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    """A size in bytes as torch's tables print it.

    >>> _format_memory(512), _format_memory(4096), _format_memory(3 * 1024**2)
    ('512 B', '4.00 KB', '3.00 MB')
    """
    kb = 1024
    mb, gb = 1024 * kb, 1024 * kb * kb
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return str(nbytes) + " B"


def _time_unit(time_us: float, unit: str | None) -> str:
    if unit == "s":
        return f"{time_us / _US_IN_SECOND:.3f}s"
    if unit == "ms":
        return f"{time_us / _US_IN_MS:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


class Interval:
    """A start and an end, in microseconds.

    >>> Interval(1.0, 3.5).elapsed_us()
    2.5
    """

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _Times:
    """The averages and their strings, from ``*_time_total`` and ``count``."""

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else 1.0 * self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else 1.0 * self.device_time_total / self.count

    cuda_time = device_time

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self) -> str:
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self) -> str:
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return _format_time(self.self_device_time_total)

    # clgrad measures host time only: the device columns are torch's zeros
    device_time_total = 0.0
    self_device_time_total = 0.0
    cuda_time_total = 0.0
    self_cuda_time_total = 0.0


class FunctionEvent(_Times):
    """One recorded range: an op call (``aten::mm``) or a ``record_function`` block, with its
    host interval in microseconds from the start of profiling, its thread, and (as recorded)
    its input shapes, Python stack and the bytes its outputs took.

    >>> e = FunctionEvent(3, "aten::mm", 1, 10.0, 25.0, input_shapes=[[2, 3], [3, 4]])
    >>> e.key, e.cpu_time_total, e.self_cpu_time_total, e.cpu_time_str
    ('aten::mm', 15.0, 15.0, '15.000us')
    """

    def __init__(
        self,
        id,
        name,
        thread,
        start_us,
        end_us,
        input_shapes=None,
        stack=None,
        cpu_memory_usage=0,
        device_memory_usage=0,
        trace_name=None,
        is_user_annotation=False,
        use_device=None,
    ):
        self.id = id
        self.node_id = -1
        self.name = name
        self.overload_name = ""
        self.trace_name = name if trace_name is None else trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = None
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = [] if input_shapes is None else input_shapes
        self.stack = [] if stack is None else stack
        self.scope = 0
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = False
        self.is_remote = False
        self.sequence_nr = -1
        self.device_type = "CPU"
        self.device_index = 0
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        # {storage id: (bytes, on the host)} of the tensors an op made (profile_memory)
        self._allocated = None

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self) -> int:
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    self_cuda_memory_usage = self_device_memory_usage

    def append_cpu_child(self, child: FunctionEvent) -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        self.cpu_parent = parent

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
            f"device_type=DeviceType.CPU node_id={self.node_id} cpu_time={self.cpu_time_str} "
            f"start_us={self.time_range.start} end_us={self.time_range.end} "
            f"cpu_children={[c.id for c in self.cpu_children]} "
            f"{self.use_device}_time={self.device_time_str} name={self.name} "
            f"thread={self.thread} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} "
            f"{self.use_device}_memory_usage={self.device_memory_usage} is_async=False "
            f"is_remote=False seq_nr=-1 is_legacy=False>"
        )


class FunctionEventAvg(_Times):
    """The events of one key (and, as grouped, one input shape or stack) summed: ``count``
    calls, ``cpu_time_total`` / ``self_cpu_time_total`` in microseconds, ``cpu_time`` the
    average per call.

    >>> avg = FunctionEventAvg()
    >>> avg += FunctionEvent(0, "blk", 1, 0.0, 2.0)
    >>> avg += FunctionEvent(1, "blk", 1, 3.0, 7.0)
    >>> avg.count, avg.cpu_time_total, avg.cpu_time
    (2, 6.0, 3.0)
    """

    def __init__(self):
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = "CPU"
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other) -> FunctionEventAvg:
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        return self

    def __iadd__(self, other) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self):
        device = self.use_device or "cuda"
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{device}_time={self.self_device_time_total_str} "
            f"{device}_time={self.device_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} "
            f"{device}_memory_usage={self.device_memory_usage}>"
        )


class EventList(list):
    """A list of ``FunctionEvent`` (or ``FunctionEventAvg``) with torch's reports.

    >>> events = EventList([FunctionEvent(0, "outer", 1, 0.0, 10.0, is_user_annotation=True),
    ...                     FunctionEvent(1, "aten::mul", 1, 2.0, 5.0)])
    >>> events._build_tree()
    >>> events[0].self_cpu_time_total, [c.name for c in events[0].cpu_children]
    (7.0, ['aten::mul'])
    >>> lines = events.table(sort_by="cpu_time_total").splitlines()
    >>> lines[1].split()[-3:], lines[-1]
    (['#', 'of', 'Calls'], 'Self CPU time total: 10.000us')
    >>> lines[3].split()
    ['outer', '70.00%', '7.000us', '100.00%', '10.000us', '10.000us', '1']
    """

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self) -> None:
        """Links each event to the innermost event of its thread that encloses it, as torch's
        ``_populate_cpu_children``: ``self_cpu_time_total`` is the event's time less its
        direct children's."""
        by_thread = defaultdict(list)
        for e in self:
            if isinstance(e, FunctionEvent):
                e.cpu_children, e.cpu_parent = [], None
                by_thread[e.thread].append(e)
        for events in by_thread.values():
            # parents first: the earlier start, then the later end, then the earlier begun
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end, e.id))
            open_events: list[FunctionEvent] = []
            for e in events:
                while open_events and open_events[-1].time_range.end <= e.time_range.start:
                    open_events.pop()
                # an event that begun inside one and ended after it (record_function ranges
                # closed out of order) is not that one's child
                while open_events and open_events[-1].time_range.end < e.time_range.end:
                    open_events.pop()
                if open_events:
                    open_events[-1].append_cpu_child(e)
                    e.set_cpu_parent(open_events[-1])
                open_events.append(e)
        self._tree_built = True

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, **_ignored):
        """The events summed by key (and by input shapes, and by the top ``group_by_stack_n``
        stack entries, where asked), in the order their keys first appear: an EventList of
        ``FunctionEventAvg``. (``group_by_overload_name`` is accepted: clgrad's ops have one
        overload each.)

        >>> EventList([FunctionEvent(0, "a", 1, 0.0, 1.0)]).key_averages()[0].count
        1
        """
        if not self._tree_built:
            self._build_tree()
        stats: dict[tuple, FunctionEventAvg] = defaultdict(FunctionEventAvg)
        for e in self:
            key = [e.key]
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += list(e.stack[:group_by_stack_n])
            stats[tuple(key)].add(e)
        out = EventList(
            stats.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )
        for avg in out:
            avg.stack = list(avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
        out._tree_built = True
        return out

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one, keyed "Total".

        >>> EventList([FunctionEvent(0, "a", 1, 0.0, 1.0),
        ...            FunctionEvent(1, "b", 1, 2.0, 4.0)]).total_average().cpu_time_total
        3.0
        """
        total = FunctionEventAvg()
        for e in self:
            total.key = e.key  # summing across keys: each one is accepted in turn
            total.add(e)
        total.key = "Total"
        return total

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ) -> str:
        """The events as torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg (then CPU Mem and Self CPU Mem where memory was profiled), # of Calls
        (then Input Shapes and Source Location where recorded), sorted by the attribute
        ``sort_by`` names (``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time``,
        ``count``, ``cpu_memory_usage``, ...; ``cuda``/``device`` names read the zeros of
        host-only profiling), at most ``row_limit`` rows (-1: all).

        >>> EventList([]).table()
        ''
        """
        if not self._tree_built:
            self._build_tree()
        return _build_table(
            self,
            sort_by=sort_by,
            header=header,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            profile_memory=self._profile_memory,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events to ``path`` as a Chrome trace (a JSON list of complete "X" events,
        as torch's ``EventList.export_chrome_trace``), to load in ``chrome://tracing`` or
        Perfetto.

        >>> import json, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> EventList([FunctionEvent(0, "aten::add", 1, 0.0, 3.0)]).export_chrome_trace(path)
        >>> [(e["name"], e["dur"]) for e in json.load(open(path))]
        [('aten::add', 3.0)]
        """
        events = [
            {
                "name": e.trace_name,
                "ph": "X",
                "ts": e.time_range.start,
                "dur": e.time_range.elapsed_us(),
                "tid": e.thread,
                "pid": "CPU functions",
                "args": {},
            }
            for e in self
        ]
        _write_json(path, events)

    def supported_export_stacks_metrics(self) -> list[str]:
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total"]

    def export_stacks(self, path: str, metric: str) -> None:
        """Writes each event's stack (recorded with ``with_stack=True``) and its ``metric`` in
        the "collapsed stacks" format flame graph tools read, as torch does."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError(
                "metric should be one of: " + str(self.supported_export_stacks_metrics())
            )
        attribute = metric.replace("cuda", "device").replace("xpu", "device")
        translate = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for e in self:
                value = getattr(e, attribute)
                if e.stack and int(value) > 0:
                    frames = ";".join(entry.translate(translate) for entry in reversed(e.stack))
                    f.write(f"{frames} {int(value)}\n")


def _write_json(path: str, obj) -> None:
    """``obj`` as JSON to ``path``, gzip-compressed where the name ends in ``.gz``."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt") as f:
        json.dump(obj, f)


def _build_table(
    events,
    sort_by=None,
    header=None,
    row_limit=100,
    max_src_column_width=75,
    max_name_column_width=55,
    max_shapes_column_width=80,
    profile_memory=False,
    top_level_events_only=False,
    time_unit=None,
) -> str:
    """torch's ``_build_table`` for host-only events (its layout, widths and footer)."""
    if len(events) == 0:
        return ""
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attribute), reverse=True)

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in events if e.stack]
    src_width = None
    if stacks:
        src_width = max(max(len(entry) for entry in s) for s in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    use_device = getattr(events[0], "use_device", None)
    device_name = use_device.upper() if use_device else "None"
    # as torch: the device's columns where a device activity was profiled and used memory
    device_mem = bool(use_device) and any(e.self_device_memory_usage > 0 for e in events)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if device_mem:
            headers += [f"{device_name} Mem", f"Self {device_name} Mem"]
    headers.append("# of Calls")
    spacing = 2
    row_format, header_sep, line_length = "", "", -spacing

    def add_column(padding, text_dir=">"):
        nonlocal row_format, header_sep, line_length
        row_format += "{: " + text_dir + str(padding) + "}" + " " * spacing
        header_sep += "-" * padding + " " * spacing
        line_length += padding + spacing

    add_column(name_width)
    for _ in headers[1:]:
        add_column(12)
    if has_input_shapes:
        headers.append("Input Shapes")
        add_column(shapes_width)
    if stacks:
        headers.append("Source Location")
        add_column(src_width, text_dir="<")

    result = []

    def append(s):
        result.append(s)
        result.append("\n")

    total = sum(e.self_cpu_time_total for e in events)
    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)

    def trim_path(path, width):
        if len(path) > width:
            path = path[len(path) - width :]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, total)
        e.total_cpu_percent = _format_time_share(e.cpu_time_total, total)
        row = [
            name,
            e.self_cpu_percent,
            _time_unit(e.self_cpu_time_total, time_unit),
            e.total_cpu_percent,
            _time_unit(e.cpu_time_total, time_unit),
            _time_unit(e.cpu_time, time_unit),
        ]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if device_mem:
                row += [
                    _format_memory(e.device_memory_usage),
                    _format_memory(e.self_device_memory_usage),
                ]
        row.append(e.count)
        if has_input_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim_path(e.stack[0], src_width) if e.stack else "")
        append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (e.stack or [])[1:]:
                append(row_format.format(*(blank + [trim_path(entry, src_width)])))
            append(row_format.format(*(blank + [""])))
    append(header_sep)
    append(f"Self CPU time total: {_time_unit(total, time_unit)}")
    return "".join(result)


def _chrome_trace(events: EventList, metadata: dict, base_ns: int, path: str) -> dict:
    """A Chrome trace in the object form torch's Kineto writes: the process and thread names,
    one complete ("X") event per range, ``cpu_op`` for ops and ``user_annotation`` for
    ``record_function`` blocks, timestamps in microseconds since the epoch."""
    pid = os.getpid()
    threads = sorted({e.thread for e in events})
    trace = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    for tid in threads:
        trace.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"thread {tid} (python)"},
            }
        )
    base_us = base_ns / 1000.0
    for e in events:
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        trace.append(
            {
                "ph": "X",
                "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                "name": e.trace_name,
                "pid": pid,
                "tid": e.thread,
                "ts": round(base_us + e.time_range.start, 3),
                "dur": round(e.time_range.elapsed_us(), 3),
                "args": args,
            }
        )
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        **metadata,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base_ns,
        "traceEvents": trace,
        "traceName": path,
    }
