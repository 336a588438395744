"""``clgrad.cuda.Stream`` and ``clgrad.cuda.Event``: ``torch.cuda``'s streams and events on the
OpenCL devices ``"cuda"`` names.

clgrad queues every kernel of a device on that device's one in-order OpenCL queue, so a
``Stream`` is a handle on that queue: every stream of a device, the default one and those a
program makes, run the device's work in the order it was queued. What a program does with
streams stays right: ``with torch.cuda.stream(s):`` runs its work (on the queue),
``s.synchronize()`` waits for it, ``wait_stream`` and ``wait_event`` order work (already in
order on one device; across devices the other queue waits for a marker). Work on two streams of
a device never overlaps, where CUDA may overlap it.

An ``Event`` is an OpenCL marker on the device's queue: it completes when the work queued
before it has. With ``enable_timing=True`` a second marker, on a profiling queue of the same
device, waits for it, and ``elapsed_time`` reads the two markers' completion times from the
driver's clock (the device's time, not the host's).

>>> if clgrad.cuda.is_available():
...     start, end = clgrad.cuda.Event(enable_timing=True), clgrad.cuda.Event(enable_timing=True)
...     start.record()
...     y = clgrad.ones(64, 64, device="cuda") @ clgrad.ones(64, 64, device="cuda")
...     end.record()
...     end.synchronize()
...     assert start.elapsed_time(end) >= 0.0
"""

from __future__ import annotations

import itertools
import threading
import weakref
from time import perf_counter, sleep

import numpy as np
import pyopencl as cl

from ..device import Device, cuda_device, cuda_devices

__all__ = [
    "Event",
    "ExternalStream",
    "Stream",
    "StreamContext",
    "current_stream",
    "default_stream",
    "get_stream_from_external",
    "set_stream",
    "stream",
]

_COMPLETE = cl.command_execution_status.COMPLETE
QUERY_GRACE = 2e-3  # seconds ``Stream.query`` gives a new marker (see there)


def _device(device) -> Device:
    """The cuda device of a stream's ``device`` argument: None or a negative index is the
    current one, as in PyTorch."""
    if device is None or (isinstance(device, int) and not isinstance(device, bool) and device < 0):
        return cuda_device()
    return cuda_device(device)


def _cuda_index(dev: Device) -> int:
    pool = cuda_devices()
    if dev not in pool:
        raise ValueError(f"{dev} is not a cuda device (cuda devices: {', '.join(map(str, pool))})")
    return pool.index(dev)


def _marker(queue) -> cl.Event:
    """A marker after everything queued on ``queue`` (called by ``Runtime.host_wait``, with the
    deferred launches queued and the gate open: nothing before the marker waits on the host),
    handed to the device at once so that it completes without anyone waiting for it."""
    event = cl.enqueue_marker(queue)
    queue.flush()
    return event


def _mark(dev: Device) -> cl.Event:
    return dev.runtime.host_wait(_marker)


# ---- streams ---------------------------------------------------------------------------------
_ids = itertools.count(1)  # stream ids: 0 is each device's default stream, as in PyTorch
_local = threading.local()  # ``streams``: device -> its current stream in this thread


class Stream:
    """A handle on a cuda device's one in-order queue, as ``torch.cuda.Stream`` (see the
    module's docstring): work queued "on" any stream of a device runs in the order it was
    queued. ``device`` None or a negative index is the current device; ``priority`` is
    accepted and is 0, the queue's one priority (PyTorch maps priorities out of the device's
    range to its nearest, here the range is 0 to 0).

    >>> if clgrad.cuda.is_available():
    ...     s = clgrad.cuda.Stream()
    ...     with clgrad.cuda.stream(s):
    ...         y = clgrad.ones(3, device="cuda") * 2
    ...     s.synchronize()
    ...     assert y.sum().item() == 6.0 and s.query()
    """

    def __init__(self, device=None, priority: int = 0, **kwargs) -> None:
        # PyTorch's current_stream() makes Streams from (stream_id, device_index, device_type)
        if "stream_id" in kwargs:
            dev = _device(kwargs.get("device_index"))
            self.stream_id = int(kwargs["stream_id"])
        else:
            dev = _device(device)
            self.stream_id = next(_ids)
        self.device = dev
        self.device_index = _cuda_index(dev)
        self.priority = 0

    @property
    def cuda_stream(self) -> int:
        """The device's OpenCL queue (``cl_command_queue``) as an int, as PyTorch's
        ``cudaStream_t``: the same for every stream of the device."""
        return self.device.runtime.queue.int_ptr

    def wait_event(self, event: Event) -> None:
        """Makes the work queued after this call wait for ``event``, as
        ``torch.cuda.Stream.wait_event``; returns at once."""
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Makes the work queued after this call wait for the work queued on ``stream`` so
        far, as ``torch.cuda.Stream.wait_stream``; returns at once."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Records ``event`` (a new ``Event`` when None) here and returns it, as
        ``torch.cuda.Stream.record_event``."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether all the work queued on the device has completed, as
        ``torch.cuda.Stream.query``."""
        if "runtime" not in self.device.__dict__:  # never used: nothing was queued
            return True
        # A marker queued now completes when the work before it has, but the driver takes a
        # moment to get to it even on an idle queue (PoCL: 15 us typically, 0.3 ms at worst
        # here): it gets QUERY_GRACE, or a loop polling an idle stream might never see True.
        marker = _mark(self.device)
        deadline = perf_counter() + QUERY_GRACE
        while marker.command_execution_status != _COMPLETE:
            if perf_counter() > deadline:
                return False
            sleep(0)  # (lets the driver's threads run, on a machine of few cores)
        return True

    def synchronize(self) -> None:
        """Waits for the work queued on the device, as ``torch.cuda.Stream.synchronize``."""
        self.device.synchronize()

    def __enter__(self):
        """``with stream:`` makes it the current stream inside, as ``torch.Stream``."""
        self._entered = getattr(self, "_entered", [])
        self._entered.append(current_stream(self.device))
        set_stream(self)
        return self

    def __exit__(self, *exc):
        set_stream(self._entered.pop())
        return False

    def __eq__(self, other) -> bool:
        if isinstance(other, Stream):
            return (self.stream_id, self.device) == (other.stream_id, other.device)
        return False

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device))

    def __repr__(self) -> str:
        return f"<clgrad.cuda.Stream device={self.device} stream_id={self.stream_id}>"


class ExternalStream(Stream):
    """``torch.cuda.ExternalStream``: a stream made elsewhere, by its handle. Work still goes
    to the device's queue; ``cuda_stream`` gives ``stream_ptr`` back.

    >>> if clgrad.cuda.is_available():
    ...     assert clgrad.cuda.ExternalStream(1234).cuda_stream == 1234
    """

    def __init__(self, stream_ptr: int, device=None, **kwargs) -> None:
        super().__init__(device)
        self.stream_ptr = int(stream_ptr)

    @property
    def cuda_stream(self) -> int:
        return self.stream_ptr


def get_stream_from_external(data_ptr: int, device=None) -> Stream:
    """An ``ExternalStream`` of ``data_ptr``, as ``torch.cuda.get_stream_from_external``.

    >>> if clgrad.cuda.is_available():
    ...     assert clgrad.cuda.get_stream_from_external(7).cuda_stream == 7
    """
    return ExternalStream(data_ptr, device)


def current_stream(device=None) -> Stream:
    """The current stream of ``device`` (default: the current cuda device) in this thread, as
    ``torch.cuda.current_stream``: the default stream unless ``set_stream`` or
    ``stream(...)`` chose another. RuntimeError where there is no cuda device.

    >>> if clgrad.cuda.is_available():
    ...     assert clgrad.cuda.current_stream() == clgrad.cuda.default_stream()
    """
    dev = _device(device)
    chosen = getattr(_local, "streams", {}).get(dev)
    return chosen if chosen is not None else default_stream(dev)


def default_stream(device=None) -> Stream:
    """The default stream (id 0) of ``device``, as ``torch.cuda.default_stream``.

    >>> if clgrad.cuda.is_available():
    ...     assert clgrad.cuda.default_stream().stream_id == 0
    """
    dev = _device(device)
    return Stream(stream_id=0, device_index=_cuda_index(dev))


def set_stream(stream: Stream | None) -> None:
    """Makes ``stream`` the current stream of its device in this thread, as
    ``torch.cuda.set_stream``; None does nothing.

    >>> clgrad.cuda.set_stream(None)
    """
    if stream is None:
        return
    if not hasattr(_local, "streams"):
        _local.streams = {}
    _local.streams[stream.device] = stream


class StreamContext:
    """Context manager making ``stream`` the current stream of its device inside it, as
    ``torch.cuda.StreamContext``; a no-op for None.

    >>> with clgrad.cuda.StreamContext(None):
    ...     pass
    """

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev: Stream | None = None

    def __enter__(self):
        if self.stream is not None:
            self.prev = current_stream(self.stream.device)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.prev)
        return False


def stream(stream: Stream | None) -> StreamContext:
    """``StreamContext(stream)``, as ``torch.cuda.stream``.

    >>> with clgrad.cuda.stream(None):
    ...     pass
    """
    return StreamContext(stream)


# ---- events ----------------------------------------------------------------------------------
class _EventError(ValueError, RuntimeError):
    """What ``Event.elapsed_time`` raises for events made without timing or not recorded:
    PyTorch 2.13 raises ValueError there (``TORCH_CHECK_VALUE``), its earlier versions
    RuntimeError, and programs catch either."""


_timing_queues: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_timing_lock = threading.Lock()


def _timing_queue(runtime) -> tuple[cl.CommandQueue, cl.Buffer]:
    """The profiling queue of a device's runtime (made at its first timed event) and a 4-byte
    buffer to write there: the device's own queue has no profiling, and a marker there has no
    times to read."""
    with _timing_lock:
        timing = _timing_queues.get(runtime)
        if timing is None:
            props = cl.command_queue_properties.PROFILING_ENABLE
            queue = cl.CommandQueue(runtime.context, runtime.device._cl, properties=props)
            timing = queue, cl.Buffer(runtime.context, cl.mem_flags.READ_WRITE, 4)
            _timing_queues[runtime] = timing
        return timing


def _timestamp(runtime, after: cl.Event) -> cl.Event:
    """A command on the profiling queue that runs once ``after`` has completed: its end time
    is when that happened. A real write, not a marker: NVIDIA's driver gives every marker on
    that queue the same time (two events 0.0 ms apart around 0.2 s of matrix products)."""
    queue, scratch = _timing_queue(runtime)
    event = cl.enqueue_fill_buffer(queue, scratch, np.uint32(0), 0, 4, wait_for=[after])
    queue.flush()
    return event


class Event:
    """A marker on a cuda device's queue, as ``torch.cuda.Event`` (see the module's
    docstring): ``record`` queues it, ``query``/``synchronize`` ask for/wait for the work
    queued before it, ``wait`` makes a stream's later work wait for it, and with
    ``enable_timing=True`` ``elapsed_time`` is the device time in milliseconds between two
    recorded events. ``blocking``, ``interprocess`` and ``external`` are accepted (waiting
    blocks the host thread anyway; there is no IPC).

    >>> e = clgrad.cuda.Event()
    >>> e.query(), e.device is None  # not recorded yet: nothing to wait for
    (True, True)
    """

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        external: bool = False,
    ) -> None:
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self.external = bool(external)
        self._device: Device | None = None
        self._marker: cl.Event | None = None  # on the device's queue
        self._timed: cl.Event | None = None  # on its profiling queue, after ``_marker``

    @property
    def device(self) -> Device | None:
        """The device the event was recorded on; None before its first ``record``."""
        return self._device

    @property
    def cuda_event(self) -> int:
        """The OpenCL event (``cl_event``) as an int; 0 before the first ``record``."""
        return 0 if self._marker is None else self._marker.int_ptr

    def record(self, stream: Stream | None = None) -> None:
        """Records the event after the work queued on ``stream``'s device so far (default:
        the current stream), as ``torch.cuda.Event.record``; RuntimeError on a stream of
        another device than the one it was first recorded on."""
        if stream is None:
            stream = current_stream()
        dev = stream.device
        if self._device is not None and dev != self._device:
            raise RuntimeError(
                f"Event device {_cuda_index(self._device)} does not match recording stream's "
                f"device {stream.device_index}."
            )
        marker = _mark(dev)
        if self.enable_timing:
            self._timed = _timestamp(dev.runtime, marker)
        self._marker, self._device = marker, dev

    def query(self) -> bool:
        """Whether the work recorded by the event has completed (True if never recorded), as
        ``torch.cuda.Event.query``."""
        return self._marker is None or self._marker.command_execution_status == _COMPLETE

    def synchronize(self) -> None:
        """Waits for the work recorded by the event, as ``torch.cuda.Event.synchronize``."""
        if self._marker is not None:
            self._marker.wait()

    def wait(self, stream: Stream | None = None) -> None:
        """Makes the work queued on ``stream`` (default: the current stream) after this call
        wait for the event, as ``torch.cuda.Event.wait``: on the event's own device its
        in-order queue does so already; another device of the same OpenCL context queues a
        marker waiting for it; a device of another context waits on the host."""
        if self._marker is None:
            return
        if stream is None:
            stream = current_stream()
        dev = stream.device
        if dev == self._device:
            return
        marker = self._marker
        if dev.runtime.context == self._device.runtime.context:
            dev.runtime.host_wait(lambda q: cl.enqueue_marker(q, wait_for=[marker]))
        else:
            marker.wait()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds of device time from this event to ``end_event``, as
        ``torch.cuda.Event.elapsed_time``, with PyTorch's errors: both must be made with
        ``enable_timing=True`` and recorded (ValueError, also a RuntimeError), and completed
        (RuntimeError: ``synchronize`` first)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise _EventError("Both events must be created with argument 'enable_timing=True'.")
        if self._timed is None or end_event._timed is None:
            raise _EventError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        if self._device != end_event._device:  # two devices' clocks: nothing to subtract
            raise RuntimeError("elapsed_time: both events must be recorded on the same device")
        # the timestamps follow their events on the profiling queue: complete at once
        self._timed.wait()
        end_event._timed.wait()
        return (end_event._timed.profile.end - self._timed.profile.end) / 1e6

    def __repr__(self) -> str:
        if self._marker is None:
            return "<clgrad.cuda.Event uninitialized>"
        return f"<clgrad.cuda.Event {self.cuda_event:#x}>"
