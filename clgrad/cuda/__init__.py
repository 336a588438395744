"""``clgrad.cuda``: ``torch.cuda``'s functions for the OpenCL devices ``"cuda"`` names.

As PyTorch's ROCm build answers ``torch.cuda`` for AMD GPUs, clgrad answers it for OpenCL:
``"cuda"`` is the OpenCL device ``CLGRAD_DEVICE`` selects (a CPU OpenCL device such as PoCL
included), else the OpenCL GPUs (``clgrad.device.cuda_devices``). So
``device = "cuda" if torch.cuda.is_available() else "cpu"`` runs a PyTorch program on OpenCL.
A device argument is an int (``cuda:N``), a device string or a Device; None is the current one.

>>> device = "cuda" if clgrad.cuda.is_available() else "cpu"
>>> clgrad.ones(2, device=device).sum().item()
2.0
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import cl
from ..device import Device, cuda_device, cuda_devices, cuda_index, set_cuda_index
from ..ops.creation import manual_seed as _manual_seed
from . import amp

__all__ = [
    "amp",
    "DeviceProperties",
    "current_device",
    "device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "is_bf16_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "set_device",
    "synchronize",
]


def is_available() -> bool:
    """Whether ``"cuda"`` names an OpenCL device, as ``torch.cuda.is_available``.

    >>> isinstance(clgrad.cuda.is_available(), bool)
    True
    """
    return bool(cuda_devices())


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: clgrad has no bfloat16 kernels on any device (``clgrad.bfloat16`` is a name
    only), so programs that choose their dtype by ``torch.cuda.is_bf16_supported()`` take
    float16 or float32.

    >>> clgrad.cuda.is_bf16_supported()
    False
    """
    return False


def device_count() -> int:
    """How many devices ``"cuda:N"`` names, as ``torch.cuda.device_count``.

    >>> clgrad.cuda.device_count() == len(cuda_devices())
    True
    """
    return len(cuda_devices())


def _index(device) -> int:
    """The cuda index of an int, a device string or a Device (None: the current device)."""
    if device is None:
        return cuda_index()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    dev = cuda_device(device)
    pool = cuda_devices()
    if dev not in pool:
        raise ValueError(f"{dev} is not a cuda device (cuda devices: {', '.join(map(str, pool))})")
    return pool.index(dev)


def current_device() -> int:
    """The index of the device plain ``"cuda"`` names, as ``torch.cuda.current_device``;
    RuntimeError where there is no cuda device.

    >>> clgrad.cuda.current_device() if clgrad.cuda.is_available() else 0
    0
    """
    cuda_device()  # raises, naming the devices, when there is none
    return cuda_index()


def set_device(device) -> None:
    """Makes ``device`` the one plain ``"cuda"`` names, as ``torch.cuda.set_device``; a negative
    index does nothing, as in PyTorch.

    >>> clgrad.cuda.set_device(0)
    """
    index = _index(device)
    if index >= 0:
        set_cuda_index(index)


class device:
    """Context manager making ``device`` the current cuda device inside it, as
    ``torch.cuda.device``; None or a negative index changes nothing.

    >>> with clgrad.cuda.device(0):
    ...     pass
    """

    def __init__(self, device) -> None:
        self.index = -1 if device is None else _index(device)

    def __enter__(self):
        self.prev = cuda_index()
        if self.index >= 0:
            set_cuda_index(self.index)
        return self

    def __exit__(self, *exc):
        set_cuda_index(self.prev)
        return False


def synchronize(device=None) -> None:
    """Waits for the kernels queued on a cuda device (default: the current one), as
    ``torch.cuda.synchronize``; nothing to wait for where there is no cuda device.

    >>> clgrad.cuda.synchronize()
    """
    if device is not None or is_available():
        cuda_device(device).synchronize()


def manual_seed(seed: int) -> None:
    """Seeds clgrad's random generator, as ``torch.cuda.manual_seed``. clgrad has one generator
    for every device (a counter-based one whose numbers are the same on each), so this seeds
    the cpu's numbers too.

    >>> clgrad.cuda.manual_seed(0)
    """
    _manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seeds clgrad's random generator, as ``torch.cuda.manual_seed_all`` (see ``manual_seed``).

    >>> clgrad.cuda.manual_seed_all(0)
    """
    _manual_seed(seed)


def _device_or_none(device) -> Device | None:
    """The device a memory function reads: None where there is no cuda device (0 bytes)."""
    return None if device is None and not is_available() else cuda_device(device)


def _memory(fn, device):
    dev = _device_or_none(device)
    return 0 if dev is None else fn(dev)


def memory_allocated(device=None) -> int:
    """Bytes of device memory held by live tensors, as ``torch.cuda.memory_allocated`` (see
    ``clgrad.cl``).

    >>> clgrad.cuda.memory_allocated() >= 0
    True
    """
    return _memory(cl.memory_allocated, device)


def max_memory_allocated(device=None) -> int:
    """The peak of ``memory_allocated``, as ``torch.cuda.max_memory_allocated``.

    >>> clgrad.cuda.max_memory_allocated() >= clgrad.cuda.memory_allocated()
    True
    """
    return _memory(cl.max_memory_allocated, device)


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds, as ``torch.cuda.memory_reserved``.

    >>> clgrad.cuda.memory_reserved() >= clgrad.cuda.memory_allocated()
    True
    """
    return _memory(cl.memory_reserved, device)


def reset_peak_memory_stats(device=None) -> None:
    """Starts ``max_memory_allocated`` over, as ``torch.cuda.reset_peak_memory_stats``.

    >>> clgrad.cuda.reset_peak_memory_stats()
    """
    _memory(cl.reset_peak_memory_stats, device)


def empty_cache() -> None:
    """Gives the cached blocks of every cuda device back to the driver, as
    ``torch.cuda.empty_cache``.

    >>> clgrad.cuda.empty_cache()
    """
    for d in cuda_devices():
        cl.empty_cache(d)


def get_device_name(device=None) -> str:
    """The OpenCL device's name, as ``torch.cuda.get_device_name``.

    >>> isinstance(clgrad.cuda.get_device_name(), str) if clgrad.cuda.is_available() else True
    True
    """
    return cuda_device(device).name


@dataclass(frozen=True)
class DeviceProperties:
    """What ``get_device_properties`` reports: PyTorch's ``name``, ``total_memory`` (bytes) and
    ``multi_processor_count`` (OpenCL compute units), and OpenCL's ``vendor`` and driver."""

    name: str
    total_memory: int
    multi_processor_count: int
    vendor: str
    driver_version: str


def get_device_properties(device=None) -> DeviceProperties:
    """The device's name, memory and compute units, as ``torch.cuda.get_device_properties``.

    >>> if clgrad.cuda.is_available():
    ...     assert clgrad.cuda.get_device_properties(0).total_memory > 0
    """
    d = cuda_device(device)
    return DeviceProperties(d.name, d.global_memory, d.compute_units, d.vendor, d.driver_version)
