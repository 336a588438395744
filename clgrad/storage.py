"""Storage: a flat block of memory on one device, shared by every view of it."""

from __future__ import annotations

from . import capture


class Storage:
    """``nbytes`` of memory on ``device``: ``data`` is whatever the device's allocator hands
    out (a host byte array, an OpenCL buffer) and goes back to it when the storage dies.

    ``version`` counts in-place writes, so autograd can tell a saved tensor was changed (and a
    capture, which storages its step writes); ``unseen`` counts those of them made through a
    tensor with a version counter of its own (``Tensor.data``'s), which autograd does not see.
    """

    __slots__ = ("device", "data", "nbytes", "_version", "unseen", "__weakref__")

    def __init__(self, device, data, nbytes: int):
        self.device = device
        self.data = data
        self.nbytes = nbytes
        self._version = 0
        self.unseen = 0

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


class UntypedStorage:
    """A tensor's memory as PyTorch's ``Tensor.untyped_storage()`` shows it: its size in bytes
    and a ``data_ptr()`` that every tensor over the same memory shares (a name for the memory,
    as ``Tensor.data_ptr``, not a host address).

    >>> x = clgrad.arange(4.0)
    >>> x[1:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    True
    >>> x.clone().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    False
    >>> x.untyped_storage().nbytes()
    16
    """

    __slots__ = ("_storage",)

    def __init__(self, storage: Storage):
        self._storage = storage

    def data_ptr(self) -> int:
        return id(self._storage) * 64

    def nbytes(self) -> int:
        return self._storage.nbytes

    def size(self) -> int:
        return self._storage.nbytes

    def __len__(self) -> int:
        return self._storage.nbytes

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        return self._storage.device

    def __repr__(self):
        return f"<clgrad.UntypedStorage of {self.nbytes()} bytes on {self.device}>"
