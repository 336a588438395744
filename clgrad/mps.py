"""``torch.mps`` where there is no MPS device: clgrad has no Metal backend (an Apple GPU is
used through OpenCL), so this answers as PyTorch does on a machine without MPS.

``is_available()`` is False and ``device_count()`` 0; ``manual_seed`` does nothing (the global
``manual_seed`` may call it); the functions that need the device raise PyTorch's RuntimeError
("Cannot execute ... without MPS backend.").

>>> clgrad.mps.is_available(), clgrad.mps.device_count()
(False, 0)
"""

from __future__ import annotations

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "get_rng_state",
    "is_available",
    "manual_seed",
    "recommended_max_memory",
    "seed",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "synchronize",
]


def _absent(what: str):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    """False: no MPS device, as ``torch.mps.is_available`` without one.

    >>> clgrad.mps.is_available()
    False
    """
    return device_count() > 0


def device_count() -> int:
    """0, as ``torch.mps.device_count`` without MPS.

    >>> clgrad.mps.device_count()
    0
    """
    return 0


def synchronize() -> None:
    """RuntimeError, as ``torch.mps.synchronize`` without MPS (``clgrad.synchronize`` waits
    for clgrad's devices).

    >>> clgrad.mps.synchronize()
    Traceback (most recent call last):
    RuntimeError: Cannot execute deviceSynchronize() without MPS backend.
    """
    raise _absent("deviceSynchronize")


def empty_cache() -> None:
    """RuntimeError, as ``torch.mps.empty_cache`` without MPS.

    >>> clgrad.mps.empty_cache()
    Traceback (most recent call last):
    RuntimeError: Cannot execute emptyCache() without MPS backend.
    """
    raise _absent("emptyCache")


def manual_seed(seed: int) -> None:
    """Nothing, as ``torch.mps.manual_seed`` without MPS (``clgrad.manual_seed`` seeds
    clgrad's one generator).

    >>> clgrad.mps.manual_seed(0)
    """
    return None


def seed() -> None:
    """RuntimeError, as ``torch.mps.seed`` without MPS."""
    raise _absent("getDefaultGenerator")


def get_rng_state(device="mps"):
    """RuntimeError, as ``torch.mps.get_rng_state`` without MPS."""
    raise _absent("getDefaultGenerator")


def set_rng_state(new_state, device="mps") -> None:
    """RuntimeError, as ``torch.mps.set_rng_state`` without MPS."""
    raise _absent("getDefaultGenerator")


def set_per_process_memory_fraction(fraction) -> None:
    """RuntimeError, as ``torch.mps.set_per_process_memory_fraction`` without MPS."""
    raise _absent("setMemoryFraction")


def current_allocated_memory() -> int:
    """RuntimeError, as ``torch.mps.current_allocated_memory`` without MPS."""
    raise _absent("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    """RuntimeError, as ``torch.mps.driver_allocated_memory`` without MPS."""
    raise _absent("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    """RuntimeError, as ``torch.mps.recommended_max_memory`` without MPS."""
    raise _absent("getRecommendedMaxMemory")
