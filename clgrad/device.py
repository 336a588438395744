"""Devices: the host (``cpu``) and every OpenCL device (``cl:N``), and CLGRAD_DEVICE parsing."""

from __future__ import annotations

import enum
import os
import re
import threading
from functools import cached_property

NO_OPENCL_HINT = (
    "no OpenCL platform was found. `pip install 'clgrad[pocl]'` (or `pip install "
    "'pyopencl[pocl]'`) gives a CPU OpenCL device with no root; for a GPU install its "
    "vendor's OpenCL driver (an ICD file under /etc/OpenCL/vendors)."
)


class DeviceType(enum.Enum):
    """What kind of device a ``Device`` is."""

    HOST = "host cpu"
    GPU = "opencl gpu"
    CPU = "opencl cpu"
    ACCELERATOR = "opencl accelerator"


class Device:
    """``cpu`` (host memory, NumPy compute) or ``cl:N`` (the N-th OpenCL device)."""

    __slots__ = ("type", "index", "_cl", "__dict__")

    def __new__(cls, spec="cpu", index=None):
        if isinstance(spec, Device):
            return spec
        return resolve(spec if index is None else f"{spec}:{index}")

    @classmethod
    def _make(cls, index, cl_device=None):
        self = object.__new__(cls)
        self.index = index
        self._cl = cl_device
        if cl_device is None:
            self.type = DeviceType.HOST
        else:
            import pyopencl as cl

            kinds = {cl.device_type.GPU: DeviceType.GPU, cl.device_type.CPU: DeviceType.CPU}
            self.type = next(
                (v for k, v in kinds.items() if cl_device.type & k), DeviceType.ACCELERATOR
            )
        return self

    is_cpu = property(lambda self: self._cl is None)
    is_cl = property(lambda self: self._cl is not None)

    def __repr__(self):
        return f"device(type='{self}')" if self.is_cpu else f"device(type='cl', index={self.index})"

    def __str__(self):
        return "cpu" if self.is_cpu else f"cl:{self.index}"

    def __eq__(self, other):
        if other is self:  # devices are singletons: the common case is one compare
            return True
        if isinstance(other, str):
            try:
                other = resolve(other)
            except RuntimeError:
                return False
        return isinstance(other, Device) and str(self) == str(other)

    def __hash__(self):
        return hash(self.index) if self.is_cl else -1

    def __reduce__(self):
        return (resolve, (str(self),))

    # ---- what the device is -------------------------------------------------------------------
    @cached_property
    def name(self):
        return "host (NumPy)" if self.is_cpu else self._cl.name.strip()

    @cached_property
    def platform(self):
        return "host" if self.is_cpu else self._cl.platform.name.strip()

    @cached_property
    def vendor(self):
        """NVIDIA, AMD, Intel, Apple, PoCL or other."""
        if self.is_cpu:
            return "host"
        text = f"{self._cl.platform.name} {self._cl.platform.vendor} {self._cl.vendor}".lower()
        for key, label in (
            ("pocl", "PoCL"),
            ("portable computing", "PoCL"),
            ("nvidia", "NVIDIA"),
            ("advanced micro", "AMD"),
            ("amd", "AMD"),
            ("intel", "Intel"),
            ("apple", "Apple"),
        ):
            if key in text:
                return label
        return "other"

    @cached_property
    def driver_version(self):
        return (
            "numpy " + __import__("numpy").__version__ if self.is_cpu else self._cl.driver_version
        )

    @cached_property
    def compute_units(self):
        return os.cpu_count() if self.is_cpu else self._cl.max_compute_units

    @cached_property
    def global_memory(self):
        if self.is_cpu:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return self._cl.global_mem_size

    @cached_property
    def supports_float64(self):
        return True if self.is_cpu else self.runtime.probe("double")

    @cached_property
    def supports_float16(self):
        """Whether half arithmetic compiles; half *storage* works on every device regardless."""
        return True if self.is_cpu else self.runtime.probe("half")

    @cached_property
    def backend(self):
        """The module of primitives for this device: NumPy for cpu, OpenCL otherwise."""
        if self.is_cpu:
            from .backend import numpy_backend

            return numpy_backend
        from .backend.opencl import ops

        return ops

    @cached_property
    def runtime(self):
        """The device's context, queue, allocator and kernel cache, opened at first use."""
        if self.is_cpu:
            raise RuntimeError("the cpu device has no OpenCL runtime")
        from .backend.opencl.runtime import Runtime

        return Runtime(self)

    def supports(self, dt) -> bool:
        # float16 is stored in half and computed in float everywhere
        return dt.name != "float64" or self.supports_float64


# ---- the registry ------------------------------------------------------------------------------
_lock = threading.Lock()
_registry: list[Device] | None = None
_opencl_error: str | None = None
CPU = Device._make(0)


def _opencl_devices() -> list[Device]:
    """Every OpenCL device on every platform, in one stable order (platform name, then index)."""
    global _registry, _opencl_error
    with _lock:
        if _registry is None:
            try:
                import pyopencl as cl

                platforms = sorted(cl.get_platforms(), key=lambda p: (p.name, p.vendor))
                found = [d for p in platforms for d in p.get_devices()]
            except Exception as e:  # no ICD loader, no platform: cpu still works
                found, _opencl_error = [], f"{type(e).__name__}: {e}"
            _registry = [Device._make(i, d) for i, d in enumerate(found)]
        return _registry


def devices() -> list[Device]:
    """Every device clgrad can use: ``cpu`` first, then ``cl:0``, ``cl:1``, ..."""
    return [CPU, *_opencl_devices()]


def _no_device(spec, why):
    listed = ", ".join(f"{d} ({d.vendor} {d.name})" for d in devices())
    hint = f" Note: {NO_OPENCL_HINT}" if not _opencl_devices() else ""
    return RuntimeError(f"no device matches {spec!r}: {why}. Devices: {listed}.{hint}")


def _best_cl() -> Device:
    cls = _opencl_devices()
    if not cls:
        raise _no_device("cl", "there is no OpenCL device")
    return next((d for d in cls if d.type is DeviceType.GPU), cls[0])


def _parse(spec: str) -> Device:
    s = spec.strip().lower()
    cls = _opencl_devices()
    if s == "cpu":
        return CPU
    if s == "cl":
        env = os.environ.get("CLGRAD_DEVICE", "").strip().lower()
        if env and env != "cl" and env != "cpu":
            chosen = _parse(env)
            if chosen.is_cl:
                return chosen
        return _best_cl()
    m = re.fullmatch(r"(cl|gpu):(\d+)", s)
    if m:
        pool = cls if m[1] == "cl" else [d for d in cls if d.type is DeviceType.GPU]
        n = int(m[2])
        if n >= len(pool):
            raise _no_device(spec, f"there are {len(pool)} {m[1]} devices")
        return pool[n]
    if s == "gpu":
        gpus = [d for d in cls if d.type is DeviceType.GPU]
        if not gpus:
            raise _no_device(spec, "there is no OpenCL GPU")
        return gpus[0]
    for d in cls:
        if s and s in f"{d.vendor}\n{d.platform}\n{d.name}".lower():
            return d
    raise _no_device(spec, "nothing has that name, vendor or platform")


_resolved: dict[str, Device] = {}


def resolve(spec) -> Device:
    """A Device from a Device, 'cpu', 'cl', 'cl:N', 'gpu', 'gpu:N' or a vendor/name substring."""
    if isinstance(spec, Device):
        return spec
    if spec is None:
        return default_device()
    if not isinstance(spec, str):
        raise TypeError(f"expected a device string or Device, got {type(spec).__name__}")
    dev = _resolved.get(spec)
    if dev is None:
        dev = _resolved[spec] = _parse(spec)
    return dev


def device(spec="cpu", index=None) -> Device:
    """``clgrad.device("cl")``: the OpenCL device CLGRAD_DEVICE selects, or the best one."""
    return Device(spec, index)


_default: Device | None = None


def default_device() -> Device:
    """Where tensors are created when no ``device=`` is given: CLGRAD_DEVICE, else ``cpu``."""
    global _default
    if _default is None:
        env = os.environ.get("CLGRAD_DEVICE", "").strip()
        _default = _parse(env) if env else CPU
    return _default


def set_default_device(spec) -> None:
    global _default
    _default = None if spec is None else resolve(spec)


def synchronize(device=None) -> None:
    """Waits until every kernel queued on ``device`` (default: every opened device) is done."""
    for d in [resolve(device)] if device is not None else devices():
        if d.is_cl and "runtime" in d.__dict__:
            d.runtime.synchronize()
