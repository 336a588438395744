"""``clgrad.cuda``: ``torch.cuda``'s functions for the OpenCL devices ``"cuda"`` names.

As PyTorch's ROCm build answers ``torch.cuda`` for AMD GPUs, clgrad answers it for OpenCL:
``"cuda"`` is the OpenCL device ``CLGRAD_DEVICE`` selects (a CPU OpenCL device such as PoCL
included), else the OpenCL GPUs (``clgrad.device.cuda_devices``). So
``device = "cuda" if torch.cuda.is_available() else "cpu"`` runs a PyTorch program on OpenCL.
A device argument is an int (``cuda:N``), a device string or a Device; None is the current one.

Besides the devices and the allocator's counters: streams and events (``streams``: handles on
each device's one in-order queue, and markers on it), the random state (``random``: clgrad's
one generator), CUDA graphs (``graphs``: ``clgrad.capture``'s recorded launches), ``nvtx``
(no-ops), ``mem_get_info``/``memory_stats``/``memory_summary``, and the legacy typed tensors
``FloatTensor`` & co. of the cuda device.

>>> device = "cuda" if clgrad.cuda.is_available() else "cpu"
>>> clgrad.ones(2, device=device).sum().item()
2.0
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

from .. import cl
from .. import dtypes as D
from ..device import Device, cuda_device, cuda_devices, cuda_index, set_cuda_index
from ..errors import OutOfMemoryError
from ..ops.creation import _legacy_new
from ..tensor import Tensor
from . import amp, graphs, nvtx, random, streams
from .graphs import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import (
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    get_stream_from_external,
    set_stream,
    stream,
)

__all__ = [
    "amp",
    "graphs",
    "nvtx",
    "random",
    "streams",
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CUDAGraph",
    "CharTensor",
    "DeviceProperties",
    "DoubleTensor",
    "Event",
    "ExternalStream",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "OutOfMemoryError",
    "ShortTensor",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_gencode_flags",
    "get_rng_state",
    "get_rng_state_all",
    "get_stream_from_external",
    "graph",
    "graph_pool_handle",
    "init",
    "initial_seed",
    "ipc_collect",
    "is_available",
    "is_bf16_supported",
    "is_current_stream_capturing",
    "is_initialized",
    "make_graphed_callables",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
]


def is_available() -> bool:
    """Whether ``"cuda"`` names an OpenCL device, as ``torch.cuda.is_available``.

    >>> isinstance(clgrad.cuda.is_available(), bool)
    True
    """
    return bool(cuda_devices())


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether a ``"cuda"`` device exists: every OpenCL device runs bfloat16 (stored in 16 bits,
    computed in float, which needs no extension), as ``torch.cuda.is_bf16_supported``.

    >>> clgrad.cuda.is_bf16_supported() == clgrad.cuda.is_available()
    True
    """
    return is_available()


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


def init() -> None:
    """Opens the current cuda device (its OpenCL context, queue and allocator), as
    ``torch.cuda.init``: every function opens it at its first use anyway. RuntimeError where
    there is no cuda device, as PyTorch's without a GPU.

    >>> if clgrad.cuda.is_available():
    ...     clgrad.cuda.init()
    ...     assert clgrad.cuda.is_initialized()
    """
    _ = cuda_device().runtime  # opened at its first access


def is_initialized() -> bool:
    """Whether a cuda device has been opened (by ``init`` or by its first use), as
    ``torch.cuda.is_initialized``.

    >>> isinstance(clgrad.cuda.is_initialized(), bool)
    True
    """
    return any("runtime" in d.__dict__ for d in cuda_devices())


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


class device_of(device):
    """Context manager making the device of tensor ``obj`` the current cuda device inside it,
    as ``torch.cuda.device_of``; a cpu tensor changes nothing.

    >>> with clgrad.cuda.device_of(clgrad.ones(1)):
    ...     pass
    """

    def __init__(self, obj) -> None:
        super().__init__(_index(obj.device) if obj.is_cuda else -1)


def synchronize(device=None) -> None:
    """Waits for the kernels queued on a cuda device (default: the current one), as
    ``torch.cuda.synchronize``; nothing to wait for where there is no cuda device.

    >>> clgrad.cuda.synchronize()
    """
    if device is not None or is_available():
        cuda_device(device).synchronize()


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
    """What ``get_device_properties`` reports: PyTorch's ``name``, ``total_memory`` (bytes),
    ``multi_processor_count`` (OpenCL compute units) and ``major``/``minor`` (the capability,
    see ``get_device_capability``), and OpenCL's ``vendor`` and driver."""

    name: str
    total_memory: int
    multi_processor_count: int
    vendor: str
    driver_version: str
    major: int = 0  # the capability: see get_device_capability
    minor: int = 0


def get_device_properties(device=None) -> DeviceProperties:
    """The device's name, memory and compute units, as ``torch.cuda.get_device_properties``.

    >>> if clgrad.cuda.is_available():
    ...     assert clgrad.cuda.get_device_properties(0).total_memory > 0
    """
    d = cuda_device(device)
    major, minor = _opencl_version(d)
    return DeviceProperties(
        d.name, d.global_memory, d.compute_units, d.vendor, d.driver_version, major, minor
    )


def _opencl_version(d: Device) -> tuple[int, int]:
    """The OpenCL version the device reports ("OpenCL 3.0 ..."), (0, 0) where it says none."""
    cl_device = getattr(d, "_cl", None)  # (an OpenCL device's pyopencl device)
    m = re.match(r"OpenCL (\d+)\.(\d+)", getattr(cl_device, "version", "") or "")
    return (int(m[1]), int(m[2])) if m else (0, 0)


def get_device_capability(device=None) -> tuple[int, int]:
    """The device's (major, minor) capability, as ``torch.cuda.get_device_capability``: its
    OpenCL version (3.0 is ``(3, 0)``). CUDA's compute capabilities mean CUDA hardware
    features, which an OpenCL device does not promise; programs that test for 7.0 (float16
    tensor cores) or 8.0 (bfloat16, TF32) take their portable paths, and clgrad has no
    TF32 kernels anyway (its bfloat16 is computed in float on any device).

    >>> if clgrad.cuda.is_available():
    ...     major, minor = clgrad.cuda.get_device_capability()
    ...     assert major >= 1
    """
    props = get_device_properties(device)
    return props.major, props.minor


def get_arch_list() -> list[str]:
    """The CUDA architectures clgrad was compiled for, as ``torch.cuda.get_arch_list``: none
    (``[]``), for the OpenCL driver builds its kernels at run time.

    >>> clgrad.cuda.get_arch_list()
    []
    """
    return []


def get_gencode_flags() -> str:
    """NVCC's gencode flags for ``get_arch_list``, as ``torch.cuda.get_gencode_flags``: none.

    >>> clgrad.cuda.get_gencode_flags()
    ''
    """
    return ""


def ipc_collect() -> None:
    """Does nothing, as ``torch.cuda.ipc_collect`` where no tensor was shared between
    processes: clgrad shares no device memory between processes.

    >>> clgrad.cuda.ipc_collect()
    """


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the device's memory, as ``torch.cuda.mem_get_info``: total is
    the memory the OpenCL device reports, free what clgrad's allocator does not hold
    (``memory_reserved``) of it. OpenCL does not tell memory other processes use (nor, on a
    CPU device, what the host's other programs use). RuntimeError where there is no cuda
    device.

    >>> if clgrad.cuda.is_available():
    ...     free, total = clgrad.cuda.mem_get_info()
    ...     assert 0 <= free <= total
    """
    d = cuda_device(device)
    total = d.global_memory
    return max(0, total - cl.memory_reserved(d)), total


def memory_stats(device=None) -> dict[str, int]:
    """The allocator's counters in PyTorch's names, as ``torch.cuda.memory_stats`` (which
    ``memory_allocated`` & co. read there): ``allocated_bytes.all.current``/``.peak`` (live
    tensors' blocks), ``active_bytes.all.current``/``.peak`` (the same here),
    ``reserved_bytes.all.current`` (those and the cache) and ``inactive_split_bytes.all.current``
    (the cache). Empty where there is no cuda device, as PyTorch's before CUDA starts.

    >>> stats = clgrad.cuda.memory_stats()
    >>> stats == {} or stats["reserved_bytes.all.current"] >= stats["allocated_bytes.all.current"]
    True
    """
    d = _device_or_none(device)
    if d is None:
        return OrderedDict()
    allocated, reserved = cl.memory_allocated(d), cl.memory_reserved(d)
    peak = cl.max_memory_allocated(d)
    stats = {
        "active_bytes.all.current": allocated,
        "active_bytes.all.peak": peak,
        "allocated_bytes.all.current": allocated,
        "allocated_bytes.all.peak": peak,
        "inactive_split_bytes.all.current": reserved - allocated,
        "reserved_bytes.all.current": reserved,
    }
    return OrderedDict(sorted(stats.items()))


def _size(n: int) -> str:
    """Bytes as PyTorch's memory summary writes them (B, KiB, MiB, ... once above 768 of them)."""
    unit = "B  "
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if n < 768 * 1024:
            break
        n, unit = n // 1024, bigger
    return f"{n:6d} {unit}"


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A table of ``memory_stats``, as ``torch.cuda.memory_summary`` (its layout, with the
    rows clgrad's allocator counts); zeros where there is no cuda device.

    >>> "memory summary" in clgrad.cuda.memory_summary()
    True
    """
    stats = memory_stats(device)
    index = "-" if not is_available() else _index(device)
    get = stats.get
    rows = [
        ("Allocated memory", get("allocated_bytes.all.current", 0),
         get("allocated_bytes.all.peak", 0)),
        ("Active memory", get("active_bytes.all.current", 0), get("active_bytes.all.peak", 0)),
        ("Reserved memory", get("reserved_bytes.all.current", 0), None),
        ("Cached (inactive) memory", get("inactive_split_bytes.all.current", 0), None),
    ]  # fmt: skip
    line, rule = "|" + "=" * 55 + "|", "|" + "-" * 55 + "|"
    out = [
        line,
        "|" + f"clgrad memory summary, cuda device ID {index}".center(55) + "|",
        rule,
        "| " + "Metric".ljust(28) + "| Cur Usage  | Peak Usage |",
        rule,
    ]
    for name, cur, peak in rows:
        shown = "-".center(10) if peak is None else _size(peak)
        out.append(f"| {name:<28}| {_size(cur)} | {shown} |")
    out.append(line)
    return "\n".join(out) + "\n"


# ---- PyTorch's legacy typed tensors of the cuda device: torch.cuda.FloatTensor, ... -----------
class _CudaLegacyType(type):
    """The type of ``clgrad.cuda.FloatTensor`` & co.: calling one makes a tensor of its dtype on
    the current cuda device (``device=`` another), and ``isinstance(t, FloatTensor)`` asks
    whether ``t`` is a float32 tensor on a cuda device, as PyTorch's metaclass does."""

    def __call__(cls, *args, device=None):
        dev = cuda_device(device)
        if len(args) == 1 and isinstance(args[0], Tensor) and args[0].device != dev:
            raise TypeError(f"expected {cls.__name__} on {dev} (got a tensor on {args[0].device})")
        return _legacy_new(cls.dtype, args, dev)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda


def _cuda_legacy_type(name, dt):
    doc = f"""PyTorch's legacy ``torch.cuda.{name}``: ``{name}(data)`` or ``{name}(*sizes)`` makes
    a {dt.name} tensor on the current cuda device; ``isinstance(t, clgrad.cuda.{name})`` asks
    whether ``t`` is a {dt.name} tensor on a cuda device.

    >>> isinstance(clgrad.ones(2, dtype=clgrad.{dt.name}), clgrad.cuda.{name})  # on the cpu
    False
    """
    attrs = {"dtype": dt, "is_cuda": True, "__doc__": doc, "__module__": "clgrad.cuda"}
    return _CudaLegacyType(name, (), attrs)


FloatTensor = _cuda_legacy_type("FloatTensor", D.float32)
DoubleTensor = _cuda_legacy_type("DoubleTensor", D.float64)
HalfTensor = _cuda_legacy_type("HalfTensor", D.float16)
BFloat16Tensor = _cuda_legacy_type("BFloat16Tensor", D.bfloat16)
LongTensor = _cuda_legacy_type("LongTensor", D.int64)
IntTensor = _cuda_legacy_type("IntTensor", D.int32)
ShortTensor = _cuda_legacy_type("ShortTensor", D.int16)
CharTensor = _cuda_legacy_type("CharTensor", D.int8)
ByteTensor = _cuda_legacy_type("ByteTensor", D.uint8)
BoolTensor = _cuda_legacy_type("BoolTensor", D.bool_)
