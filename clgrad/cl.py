"""``clgrad.cl``: the OpenCL devices' caching allocator, with ``torch.cuda``'s names.

Freed device memory stays with clgrad's allocator, cached for the next tensor of a similar
size (sizes are rounded into buckets; the cache is capped, least recently freed blocks go
first). ``memory_allocated`` counts the bytes of live tensors' blocks, ``memory_reserved``
those plus the cache. Every function takes an optional device (default: the selected OpenCL
device, ``clgrad.device("cl")``) and reports 0 where no OpenCL device exists or the device was
never used.

>>> x = clgrad.zeros(1000, device="cl" if clgrad.cl.is_available() else "cpu")
>>> clgrad.cl.memory_reserved() >= clgrad.cl.memory_allocated() >= 0
True
"""

from __future__ import annotations

from .device import Device, accelerators, resolve
from .device import synchronize as _synchronize_all

__all__ = [
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "synchronize",
]


def is_available() -> bool:
    """Whether any OpenCL device was found.

    >>> isinstance(clgrad.cl.is_available(), bool)
    True
    """
    return bool(accelerators())


def device_count() -> int:
    """How many OpenCL devices were found (``cl:0`` ... ``cl:N-1``).

    >>> clgrad.cl.device_count() == len(clgrad.devices()) - 1
    True
    """
    return len(accelerators())


def _allocator(device):
    """The allocator of ``device``'s opened runtime, or None (no OpenCL device, never used)."""
    if device is None:
        if not accelerators():
            return None
        device = resolve("cl")
    elif not isinstance(device, Device):
        device = resolve(device)
    if not device.is_cl:
        raise ValueError(f"expected an OpenCL device, got {device}")
    runtime = device.__dict__.get("runtime")  # opened at the device's first use
    return None if runtime is None else runtime.allocator


def memory_allocated(device=None) -> int:
    """Bytes of device memory held by live tensors (whole allocator blocks).

    >>> before = clgrad.cl.memory_allocated()
    >>> if clgrad.cl.is_available():
    ...     x = clgrad.zeros(1 << 20, device="cl")
    ...     assert clgrad.cl.memory_allocated() >= before + 4 * (1 << 20)
    """
    a = _allocator(device)
    return 0 if a is None else a.stats()[0]


def memory_reserved(device=None) -> int:
    """Bytes of device memory the allocator holds: live tensors' blocks and its cache.

    >>> clgrad.cl.memory_reserved() >= clgrad.cl.memory_allocated()
    True
    """
    if (a := _allocator(device)) is None:
        return 0
    in_use, cached, _ = a.stats()
    return in_use + cached


def max_memory_allocated(device=None) -> int:
    """The largest ``memory_allocated`` since the device's first use or the last
    ``reset_peak_memory_stats``.

    >>> clgrad.cl.max_memory_allocated() >= clgrad.cl.memory_allocated()
    True
    """
    a = _allocator(device)
    return 0 if a is None else a.stats()[2]


def reset_peak_memory_stats(device=None) -> None:
    """Starts ``max_memory_allocated`` over from the memory allocated now.

    >>> clgrad.cl.reset_peak_memory_stats()
    >>> clgrad.cl.max_memory_allocated() == clgrad.cl.memory_allocated()
    True
    """
    a = _allocator(device)
    if a is not None:
        a.reset_peak()


def empty_cache(device=None) -> None:
    """Gives the allocator's cached blocks back to the driver (live tensors keep theirs).

    >>> clgrad.cl.empty_cache()
    >>> clgrad.cl.memory_reserved() == clgrad.cl.memory_allocated()
    True
    """
    a = _allocator(device)
    if a is not None:
        a.empty_cache()


def synchronize(device: Device | str | int | None = None) -> None:
    """Waits until every kernel queued on the OpenCL ``device`` (default: every device) is
    done, as ``torch.cuda.synchronize`` (device-agnostic code reaches it through
    ``clgrad.get_device_module``).

    >>> clgrad.cl.synchronize()
    """
    if isinstance(device, int):
        device = f"cl:{device}"
    _synchronize_all(device)
