"""Storage: a flat block of memory on one device, shared by every view of it."""

from __future__ import annotations

from . import capture


class Storage:
    """``nbytes`` of memory on ``device``: ``data`` is whatever the device's allocator hands
    out (a host byte array, an OpenCL buffer) and goes back to it when the storage dies.

    ``version`` counts in-place writes, so autograd can tell a saved tensor was changed (and a
    capture, which storages its step writes).
    """

    __slots__ = ("device", "data", "nbytes", "_version", "__weakref__")

    def __init__(self, device, data, nbytes: int):
        self.device = device
        self.data = data
        self.nbytes = nbytes
        self._version = 0

    @property
    def version(self) -> int:
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        self._version = value
        if capture.active is not None:
            capture.note_write(self)

    @classmethod
    def allocate(cls, device, nbytes: int) -> Storage:
        return cls(device, device.allocator.alloc(nbytes), nbytes)

    def __del__(self):
        if self.data is not None:
            try:
                self.device.allocator.release(self.data, self.nbytes)
            except Exception:  # interpreter shutdown: the context is going away anyway
                pass
            self.data = None
