"""``clgrad.Stream`` and ``clgrad.Event``: PyTorch's device-agnostic ``torch.Stream`` and
``torch.Event``.

On an accelerator (a device ``"cuda"`` names) they are ``clgrad.cuda``'s: ``Stream(device=...)``
gives a ``clgrad.cuda.Stream`` (a handle on the device's one in-order queue) and
``Event(device=...)`` a ``clgrad.cuda.Event`` on that device; both count as instances of these
classes, as PyTorch's ``torch.cuda.Stream`` derives from ``torch.Stream``. On ``cpu`` and
``meta`` they are what PyTorch's cpu and meta backends give: the one stream (id 0), always
idle, and events that cannot be recorded. With no device, the current accelerator is used, else
``cpu``, as in PyTorch.

>>> s = clgrad.Stream(device="cpu")
>>> with s:
...     y = clgrad.ones(2) * 2
>>> s.query(), s.stream_id, clgrad.Event(device="cpu").query()
(True, 0, True)
"""

from __future__ import annotations

from . import cuda
from .device import Device, cuda_device, cuda_devices, resolve

__all__ = ["Event", "Stream"]

# PyTorch's c10::DeviceType numbers of the devices a Stream here can be on besides accelerators
_DEVICE_TYPE_NUMBERS = {"cpu": 0, "meta": 14}


def _device(device, caller: str) -> Device:
    """The device of a ``Stream(device=...)`` / ``Event(device=...)``: None is the current
    accelerator, else ``cpu``; an int is that accelerator, as in PyTorch. An OpenCL device that
    ``"cuda"`` does not name is refused as ``clgrad.cuda.Stream`` refuses it (ValueError)."""
    if isinstance(device, int) and not isinstance(device, bool):
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return cuda_device(device)
    if device is None:
        return cuda_device() if cuda.is_available() else resolve("cpu")
    if not isinstance(device, (str, Device)):
        raise TypeError(
            f"{caller}(): argument 'device' must be torch.device, not {type(device).__name__}"
        )
    dev = resolve(device)
    pool = cuda_devices()
    if dev.is_cl and dev not in pool:  # an OpenCL device PyTorch has no name for
        raise ValueError(f"{dev} is not a cuda device (cuda devices: {', '.join(map(str, pool))})")
    return dev


class _AlsoCudaKind(type):
    """The metaclass of ``Stream`` and ``Event``: ``clgrad.cuda``'s stream and event classes
    (``cuda_kind``) count as their subclasses, as PyTorch's ``torch.cuda.Stream`` derives from
    ``torch.Stream``."""

    cuda_kind: type

    def __instancecheck__(cls, obj) -> bool:
        return cls.__subclasscheck__(type(obj))

    def __subclasscheck__(cls, sub) -> bool:
        return type.__subclasscheck__(cls, sub) or issubclass(sub, cls.cuda_kind)


def _no_events(device: Device) -> RuntimeError:
    return RuntimeError(f"{device.type} backend doesn't support events.")


class Stream(metaclass=_AlsoCudaKind):
    """An in-order queue of work on ``device``, as ``torch.Stream(device=None, *,
    priority=0)``: a ``clgrad.cuda.Stream`` on an accelerator; on ``cpu`` / ``meta`` the
    backend's one stream (id 0, device index -1), which has always finished its work and records
    no events (PyTorch's RuntimeError). ``with stream:`` makes it the current stream inside.

    >>> s = clgrad.Stream(device="cpu")
    >>> s
    clgrad.Stream device_type=cpu, device_index=-1, stream_id=0
    >>> s.synchronize(), s.is_capturing(), s == clgrad.Stream("cpu")  # the cpu's one stream
    (None, False, True)
    """

    def __new__(cls, device=None, *, priority: int = 0):
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError(
                f"Stream(): argument 'priority' must be int, not {type(priority).__name__}"
            )
        dev = _device(device, "Stream")
        if dev.is_cl:  # an accelerator: its queue's handle
            return cuda.Stream(dev, priority)
        stream = super().__new__(cls)
        stream.device = dev
        return stream

    cuda_kind = cuda.Stream
    device_index = -1  # PyTorch's index of the cpu and meta devices' streams
    stream_id = 0  # their one stream

    @property
    def device_type(self) -> int:
        """The device's type as PyTorch numbers it (``c10::DeviceType``): 0 cpu, 14 meta."""
        return _DEVICE_TYPE_NUMBERS[str(self.device.type)]

    @property
    def native_handle(self) -> int:
        """The backend's stream handle: RuntimeError, as PyTorch's cpu backend has none."""
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def query(self) -> bool:
        """Whether the stream's work has completed: always, nothing runs asynchronously."""
        return True

    def synchronize(self) -> None:
        """Waits for the stream's work: there is none pending."""

    def is_capturing(self) -> bool:
        """Whether the stream is capturing a graph: never."""
        return False

    def record_event(self, event: Event | None = None) -> Event:
        """Records an event on the stream: RuntimeError, as PyTorch's cpu backend has none."""
        raise _no_events(self.device)

    def wait_event(self, event: Event) -> None:
        """Makes the stream's later work wait for ``event``: it does already."""

    def wait_stream(self, stream: Stream) -> None:
        """Makes the stream's later work wait for ``stream``'s: RuntimeError, as in PyTorch
        (it records an event on ``stream``)."""
        raise _no_events(stream.device)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __eq__(self, other) -> bool:
        if isinstance(other, Stream):
            return (other.device, other.stream_id) == (self.device, self.stream_id)
        return False

    def __hash__(self) -> int:
        return hash((self.device, self.stream_id))

    def __repr__(self) -> str:
        return (
            f"clgrad.Stream device_type={self.device.type}, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class _DeviceEvent(cuda.Event):
    """A ``clgrad.cuda.Event`` that belongs to ``device`` from the start, as PyTorch's
    ``torch.Event(device=...)``: recording it on another device's stream is an error."""

    def __init__(self, device: Device, **flags) -> None:
        super().__init__(**flags)
        self._device = device


class Event(metaclass=_AlsoCudaKind):
    """A marker in a stream's work, as ``torch.Event(device=None, *, enable_timing=False,
    blocking=False, interprocess=False)``: a ``clgrad.cuda.Event`` of the accelerator
    ``device``; on ``cpu`` / ``meta`` an event that is never recorded (``record`` raises
    PyTorch's RuntimeError), so it has always completed.

    >>> e = clgrad.Event(device="cpu")
    >>> e.query(), e.synchronize(), e.device
    (True, None, device(type='cpu'))
    """

    def __new__(
        cls,
        device=None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ):
        flags = {"enable_timing": enable_timing, "blocking": blocking, "interprocess": interprocess}
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise TypeError(
                    f"Event(): argument '{name}' must be bool, not {type(value).__name__}"
                )
        dev = _device(device, "Event")
        if dev.is_cl:  # an accelerator: a marker on its queue
            return _DeviceEvent(dev, **flags)
        event = super().__new__(cls)
        event.device, event.enable_timing = dev, enable_timing
        return event

    cuda_kind = cuda.Event
    event_id = 0  # never recorded

    def query(self) -> bool:
        """Whether the recorded work has completed: nothing was recorded."""
        return True

    def synchronize(self) -> None:
        """Waits for the recorded work: nothing was recorded."""

    def record(self, stream: Stream | None = None) -> None:
        """Records the event on ``stream``: RuntimeError, as PyTorch's cpu backend has none."""
        raise _no_events(self.device)

    def wait(self, stream: Stream | None = None) -> None:
        """Makes ``stream``'s later work wait for the event: nothing was recorded."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between two recorded events: PyTorch's errors, since events here are
        never recorded (ValueError, as PyTorch 2.13's)."""
        if not isinstance(end_event, Event):
            raise RuntimeError("expected other to be a torch.Event object")
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def __repr__(self) -> str:
        return (
            f"clgrad.Event device_type={self.device.type}, device_index=-1, "
            f"event_flag=0, event_id={self.event_id}"
        )
