"""``torch.xpu`` on a build without XPU: clgrad reaches Intel GPUs through OpenCL (as ``cl:N``
and ``cuda``), so this answers as PyTorch's CPU build does.

``is_available()`` is False and ``device_count()`` 0; the seeding functions do nothing, the
memory counters are 0 (``memory_stats()`` an empty OrderedDict), ``empty_cache()`` does
nothing; what needs a device (``synchronize``, ``current_device``, ``get_device_name``, ...)
raises PyTorch's ``AssertionError: Torch not compiled with XPU enabled``.

>>> clgrad.xpu.is_available(), clgrad.xpu.device_count(), clgrad.xpu.memory_allocated()
(False, 0, 0)
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_gencode_flags",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "synchronize",
]


def _not_compiled():
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available() -> bool:
    """False, as ``torch.xpu.is_available`` without XPU.

    >>> clgrad.xpu.is_available()
    False
    """
    return device_count() > 0


def device_count() -> int:
    """0, as ``torch.xpu.device_count`` without XPU.

    >>> clgrad.xpu.device_count()
    0
    """
    return 0


def is_initialized() -> bool:
    """False: XPU is never initialized.

    >>> clgrad.xpu.is_initialized()
    False
    """
    return False


def init() -> None:
    """AssertionError, as ``torch.xpu.init`` on a build without XPU.

    >>> clgrad.xpu.init()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with XPU enabled
    """
    _not_compiled()


def synchronize(device=None) -> None:
    """AssertionError, as ``torch.xpu.synchronize`` without XPU (``clgrad.synchronize`` waits
    for clgrad's devices).

    >>> clgrad.xpu.synchronize()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with XPU enabled
    """
    _not_compiled()


def empty_cache() -> None:
    """Nothing: no XPU memory is cached, as ``torch.xpu.empty_cache`` before initialization.

    >>> clgrad.xpu.empty_cache()
    """
    return None


def current_device() -> int:
    """AssertionError, as ``torch.xpu.current_device`` without XPU."""
    _not_compiled()


def set_device(device) -> None:
    """AssertionError, as ``torch.xpu.set_device`` without XPU."""
    _not_compiled()


def get_device_name(device=None) -> str:
    """AssertionError, as ``torch.xpu.get_device_name`` without XPU."""
    _not_compiled()


def get_device_properties(device=None):
    """AssertionError, as ``torch.xpu.get_device_properties`` without XPU."""
    _not_compiled()


def get_device_capability(device=None):
    """AssertionError, as ``torch.xpu.get_device_capability`` without XPU."""
    _not_compiled()


def mem_get_info(device=None):
    """AssertionError, as ``torch.xpu.mem_get_info`` without XPU."""
    _not_compiled()


def initial_seed() -> int:
    """AssertionError, as ``torch.xpu.initial_seed`` without XPU."""
    _not_compiled()


def get_rng_state(device="xpu"):
    """AssertionError, as ``torch.xpu.get_rng_state`` without XPU."""
    _not_compiled()


def set_rng_state(new_state, device="xpu") -> None:
    """AssertionError, as ``torch.xpu.set_rng_state`` without XPU."""
    _not_compiled()


def get_rng_state_all() -> list:
    """[]: one state per XPU device, of which there are none.

    >>> clgrad.xpu.get_rng_state_all()
    []
    """
    return []


def set_rng_state_all(new_states) -> None:
    """Nothing: no XPU device to seed."""
    return None


def manual_seed(seed: int) -> None:
    """Nothing, as ``torch.xpu.manual_seed`` without XPU (``clgrad.manual_seed`` seeds
    clgrad's one generator).

    >>> clgrad.xpu.manual_seed(0)
    """
    return None


def manual_seed_all(seed: int) -> None:
    """Nothing, as ``torch.xpu.manual_seed_all`` without XPU."""
    return None


def seed() -> None:
    """Nothing, as ``torch.xpu.seed`` without XPU."""
    return None


def seed_all() -> None:
    """Nothing, as ``torch.xpu.seed_all`` without XPU."""
    return None


def memory_stats(device=None) -> OrderedDict:
    """An empty OrderedDict, as ``torch.xpu.memory_stats`` without XPU.

    >>> clgrad.xpu.memory_stats()
    OrderedDict()
    """
    return OrderedDict()


def memory_allocated(device=None) -> int:
    """0, as ``torch.xpu.memory_allocated`` without XPU."""
    return 0


def max_memory_allocated(device=None) -> int:
    """0, as ``torch.xpu.max_memory_allocated`` without XPU."""
    return 0


def memory_reserved(device=None) -> int:
    """0, as ``torch.xpu.memory_reserved`` without XPU."""
    return 0


def max_memory_reserved(device=None) -> int:
    """0, as ``torch.xpu.max_memory_reserved`` without XPU."""
    return 0


def memory_snapshot() -> list:
    """[], as ``torch.xpu.memory_snapshot`` without XPU."""
    return []


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as ``torch.xpu.is_bf16_supported`` without XPU.

    >>> clgrad.xpu.is_bf16_supported()
    False
    """
    return False


def is_tf32_supported() -> bool:
    """False, as ``torch.xpu.is_tf32_supported`` without XPU."""
    return False


def get_arch_list() -> list:
    """[], as ``torch.xpu.get_arch_list`` on a build without XPU."""
    return []


def get_gencode_flags() -> str:
    """'', as ``torch.xpu.get_gencode_flags`` on a build without XPU."""
    return ""
