"""``clgrad.cpu``: ``torch.cpu``'s functions for device-agnostic programs, which call
``getattr(torch, device_type).synchronize()`` and the like whatever the device is.

There is one ``cpu`` device; its ops finish before they return (NumPy on the host), so
synchronizing waits for nothing, and its streams and events are the placeholders PyTorch's are.

>>> clgrad.cpu.is_available(), clgrad.cpu.device_count(), clgrad.cpu.current_device()
(True, 1, 'cpu')
>>> with clgrad.cpu.stream(clgrad.cpu.Stream()):
...     clgrad.cpu.synchronize()
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from . import amp

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "amp",
    "current_device",
    "current_stream",
    "device_count",
    "get_capabilities",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]


def is_available() -> bool:
    """True: the host is always there."""
    return True


def is_initialized() -> bool:
    """True: the host needs no initialization."""
    return True


def device_count() -> int:
    """1: the host is one device, whatever its number of cores."""
    return 1


def current_device() -> str:
    """``'cpu'``, as PyTorch's ``torch.cpu.current_device``."""
    return "cpu"


def set_device(device) -> None:
    """Accepted and ignored: there is only one ``cpu`` device."""


def synchronize(device=None) -> None:
    """Returns at once: the ``cpu`` device's ops are done when they return."""


def get_capabilities() -> dict:
    """The host's instruction-set features PyTorch reports; clgrad's host ops run on NumPy,
    which picks its own kernels, so none are claimed."""
    return {}


class Stream:
    """The ``cpu`` device's stream: its work is never queued, so there is nothing to wait on."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        """Nothing to wait for."""

    def record_event(self) -> None:
        """Nothing to record (PyTorch's cpu stream returns None too)."""

    def wait_event(self, event) -> None:
        """Nothing to wait for."""


class Event:
    """A ``cpu`` event: always complete."""

    def query(self) -> bool:
        """True: the host's work is always done."""
        return True

    def record(self, stream=None) -> None:
        """Nothing to mark."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream=None) -> None:
        """Nothing to wait for."""


_default_stream = Stream()
_current = [_default_stream]


def current_stream(device=None) -> Stream:
    """The stream ``stream(...)`` selected, else the default one."""
    return _current[0]


class StreamContext(AbstractContextManager):
    """Selects ``stream`` as ``current_stream()`` inside the block (None selects nothing)."""

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        if self.stream is not None:
            self.prev_stream, _current[0] = _current[0], self.stream

    def __exit__(self, *exc) -> None:
        if self.stream is not None:
            _current[0] = self.prev_stream


def stream(stream: Stream | None) -> StreamContext:
    """``StreamContext(stream)``."""
    return StreamContext(stream)
