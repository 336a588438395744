"""OpenCL devices: what pyopencl says of a device, read once, and the device's runtime."""

from __future__ import annotations

import threading
from functools import cached_property

import pyopencl as cl

from ...device import Device, DeviceType, errors
from .backend import OpenCLBackend
from .pocl_cpu import name_cpu
from .runtime import Runtime, mark_opened

_OPEN_LOCK = threading.Lock()  # (``OpenCLDevice.runtime``)

_VENDORS = (
    ("pocl", "PoCL"),
    ("portable computing", "PoCL"),
    ("nvidia", "NVIDIA"),
    ("advanced micro", "AMD"),
    ("amd", "AMD"),
    ("intel", "Intel"),
    ("apple", "Apple"),
)


class OpenCLDevice(Device):
    """``cl:N``: an OpenCL device; its context, queue and caches open at first use."""

    kind = "cl"
    is_cpu, is_cl = False, True

    @classmethod
    def from_cl(cls, index: int, cl_device) -> OpenCLDevice:
        if cl_device.type & cl.device_type.GPU:
            kind = DeviceType.GPU
        elif cl_device.type & cl.device_type.CPU:
            kind = DeviceType.CPU
        else:
            kind = DeviceType.ACCELERATOR
        return cls._make(index, _cl=cl_device, type=kind)

    @cached_property
    def name(self):
        return self._cl.name.strip()

    @cached_property
    def platform(self):
        return self._cl.platform.name.strip()

    @cached_property
    def vendor(self):
        """NVIDIA, AMD, Intel, Apple, PoCL or other."""
        p = self._cl.platform
        text = f"{p.name} {p.vendor} {self._cl.vendor}".lower()
        return next((label for key, label in _VENDORS if key in text), "other")

    @cached_property
    def driver_version(self):
        return self._cl.driver_version

    @cached_property
    def compute_units(self):
        return self._cl.max_compute_units

    @cached_property
    def global_memory(self):
        return self._cl.global_mem_size

    @cached_property
    def supports_float64(self):
        return self.runtime.probe("double")

    @cached_property
    def supports_float16(self):
        return self.runtime.probe("half")

    @cached_property
    def runtime(self):
        """The device's context, queue, allocator and kernel cache, opened at first use (once:
        threads that meet a device together would otherwise open a context each, and one's
        buffers are invalid on the other's queue)."""
        with _OPEN_LOCK:
            rt = self.__dict__.get("_opened")
            if rt is None:
                rt = self.__dict__["_opened"] = Runtime(self)
            return rt

    @cached_property
    def backend(self):
        return OpenCLBackend(self.runtime)

    @cached_property
    def allocator(self):
        return self.runtime.allocator

    def synchronize(self) -> None:
        if "runtime" in self.__dict__:  # a device never used has nothing queued
            self.runtime.synchronize()

    def flush(self) -> None:
        if "runtime" in self.__dict__:
            self.runtime.flush()


def opencl_devices(first: int) -> list[Device]:
    """Every OpenCL device on every platform, in one stable order (platform name, then index)."""
    mark_opened()  # a child forked after this cannot use OpenCL (the driver's threads are gone)
    try:
        platforms = sorted(cl.get_platforms(), key=lambda p: (p.name, p.vendor))
        found = [d for p in platforms for d in p.get_devices()]
    except Exception as e:  # no ICD loader, no platform: cpu still works
        errors.append(f"OpenCL: {type(e).__name__}: {e}")
        return []
    for d in found:  # before any context: PoCL on a CPU its LLVM cannot name builds nothing
        try:
            name_cpu(d)
        except Exception as e:  # a driver's odd answer or a refused write: list it as it is
            errors.append(f"OpenCL: naming the CPU of {d.name!r} for PoCL: {e}")
    return [OpenCLDevice.from_cl(first + i, d) for i, d in enumerate(found)]
