"""``clgrad.accelerator``: PyTorch 2.6+'s device-agnostic ``torch.accelerator``, answered for the
OpenCL devices ``"cuda"`` names (see ``clgrad.cuda``): the accelerator is the current one.

>>> device = clgrad.accelerator.current_accelerator() or clgrad.device("cpu")
>>> clgrad.ones(2, device=device).sum().item()
2.0
"""

from __future__ import annotations

from . import cl, cpu, cuda, mps, xpu
from .device import Device, cuda_device

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]


def is_available() -> bool:
    """Whether there is an accelerator (a device ``"cuda"`` names), as
    ``torch.accelerator.is_available``.

    >>> clgrad.accelerator.is_available() == clgrad.cuda.is_available()
    True
    """
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> Device | None:
    """The current accelerator device, or None where there is none, as
    ``torch.accelerator.current_accelerator``. PyTorch answers the device type
    (``device(type='cuda')``); clgrad answers the OpenCL device itself (it compares equal to
    ``"cuda"``), for its one name is ``cl:N``.

    >>> d = clgrad.accelerator.current_accelerator()
    >>> d is None or d == "cuda"
    True
    """
    return cuda_device() if cuda.is_available() else None


def device_count() -> int:
    """How many accelerator devices there are, as ``torch.accelerator.device_count``.

    >>> clgrad.accelerator.device_count() == clgrad.cuda.device_count()
    True
    """
    return cuda.device_count()


def current_device_index() -> int:
    """The current accelerator's index, as ``torch.accelerator.current_device_index``.

    >>> clgrad.accelerator.current_device_index()
    0
    """
    return cuda.current_device() if cuda.is_available() else 0


def set_device_index(device) -> None:
    """Makes ``device`` (an index, string or Device) the current accelerator, as
    ``torch.accelerator.set_device_index``.

    >>> clgrad.accelerator.set_device_index(0)
    """
    cuda.set_device(device)


# PyTorch 2.6's names, still there (deprecated) in later ones
current_device_idx, set_device_idx = current_device_index, set_device_index


class device_index(cuda.device):
    """Context manager making ``device`` the current accelerator inside it, as
    ``torch.accelerator.device_index``.

    >>> with clgrad.accelerator.device_index(0):
    ...     pass
    """


def synchronize(device=None) -> None:
    """Waits for the kernels queued on the accelerator, as ``torch.accelerator.synchronize``.

    >>> clgrad.accelerator.synchronize()
    """
    cuda.synchronize(device)


def memory_allocated(device_index=None) -> int:
    """Bytes held by live tensors, as ``torch.accelerator.memory_allocated``.

    >>> clgrad.accelerator.memory_allocated() >= 0
    True
    """
    return cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None) -> int:
    """The peak of ``memory_allocated``, as ``torch.accelerator.max_memory_allocated``.

    >>> clgrad.accelerator.max_memory_allocated() >= 0
    True
    """
    return cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None) -> int:
    """Bytes the caching allocator holds, as ``torch.accelerator.memory_reserved``.

    >>> clgrad.accelerator.memory_reserved() >= 0
    True
    """
    return cuda.memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None) -> None:
    """Starts ``max_memory_allocated`` over, as ``torch.accelerator.reset_peak_memory_stats``.

    >>> clgrad.accelerator.reset_peak_memory_stats()
    """
    cuda.reset_peak_memory_stats(device_index)


def empty_cache() -> None:
    """Gives the allocator's cached blocks back, as ``torch.accelerator.empty_cache``.

    >>> clgrad.accelerator.empty_cache()
    """
    cuda.empty_cache()


def current_stream(device=None, /) -> cuda.Stream:
    """The accelerator's current stream, as ``torch.accelerator.current_stream`` (see
    ``clgrad.cuda.Stream``: a handle on the device's one queue).

    >>> if clgrad.accelerator.is_available():
    ...     assert clgrad.accelerator.current_stream() == clgrad.cuda.current_stream()
    """
    return cuda.current_stream(device)


def set_stream(stream: cuda.Stream) -> None:
    """Makes ``stream`` the current stream of its device, as ``torch.accelerator.set_stream``.

    >>> if clgrad.accelerator.is_available():
    ...     clgrad.accelerator.set_stream(clgrad.accelerator.current_stream())
    """
    cuda.set_stream(stream)


def get_memory_info(device_index=None, /) -> tuple[int, int]:
    """(free, total) bytes of the accelerator's memory, as
    ``torch.accelerator.get_memory_info`` (see ``clgrad.cuda.mem_get_info``).

    >>> if clgrad.accelerator.is_available():
    ...     assert clgrad.accelerator.get_memory_info() == clgrad.cuda.mem_get_info()
    """
    return cuda.mem_get_info(device_index)


def memory_stats(device_index=None, /) -> dict[str, int]:
    """The allocator's counters, as ``torch.accelerator.memory_stats`` (see
    ``clgrad.cuda.memory_stats``).

    >>> clgrad.accelerator.memory_stats() == clgrad.cuda.memory_stats()
    True
    """
    return cuda.memory_stats(device_index)


def get_device_module(device: Device | str | None = None):
    """The module of a device's type, as ``torch.get_device_module``: ``clgrad.cpu``,
    ``clgrad.cuda`` ("cuda" names clgrad's OpenCL GPUs), ``clgrad.cl`` (an OpenCL device by its
    own name), ``clgrad.mps`` or ``clgrad.xpu``; with no device, the current accelerator's
    (``clgrad.cuda``), else ``clgrad.cpu``.

    >>> clgrad.get_device_module("cpu") is clgrad.cpu
    True
    >>> clgrad.get_device_module("cl:0").__name__
    'clgrad.cl'
    """
    if device is None:
        name = "cuda" if cuda.is_available() else "cpu"
    elif isinstance(device, Device):
        name = device.type
    elif isinstance(device, str):
        name = device.partition(":")[0]
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = {"cpu": cpu, "cuda": cuda, "cl": cl, "mps": mps, "xpu": xpu}.get(name)
    if module is None:
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'."
        )
    return module
