"""Storage: a flat block of memory on one device, shared by every view of it."""

from __future__ import annotations

import numpy as np


class Storage:
    """Host storage is a 1-D NumPy array; OpenCL storage is a pooled cl.Buffer.

    ``version`` counts in-place writes, so autograd can tell a saved tensor was changed.
    """

    __slots__ = ("device", "data", "nbytes", "version", "__weakref__")

    def __init__(self, device, data, nbytes):
        self.device = device
        self.data = data
        self.nbytes = nbytes
        self.version = 0

    @classmethod
    def allocate(cls, device, numel: int, dt) -> Storage:
        nbytes = max(numel, 0) * dt.itemsize
        if device.is_cpu:
            return cls(device, np.empty(max(numel, 0), dt.np), nbytes)
        return cls(device, device.runtime.allocator.alloc(nbytes), nbytes)

    def __del__(self):
        if self.device.is_cl and self.data is not None:
            try:
                self.device.runtime.allocator.release(self.data, self.nbytes)
            except Exception:  # interpreter shutdown: the context is going away anyway
                pass
            self.data = None
