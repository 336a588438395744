"""PoCL on a CPU newer than its compiler: naming the CPU so that programs build.

pyopencl's wheels bundle PoCL 3.0, built on LLVM 14. On a CPU that LLVM 14 does not know (AMD's
Zen 5, family 1Ah, is one), LLVM's host detection answers "generic", PoCL passes it to clang as
``-target-cpu generic``, and clang refuses it: every program build fails with "unknown target
CPU 'generic'", so the device runs nothing. PoCL 5 and later read ``POCL_LLVM_CPU_NAME``; PoCL 3.0
has no such switch and refuses ``-target-cpu`` among build options.

So clgrad names the CPU itself, once per device, before the device's first context: the CPU of
the kernel-library variant that PoCL's distro build picks for the host's features (skylake-avx512
where the host has AVX-512, haswell for AVX2, ...), so that kernels and PoCL's builtins are built
for one target that the host runs. ``CLGRAD_POCL_CPU`` names another CPU LLVM knows, or ``off``.

The name lives in the device's ``llvm_cpu`` field, a pointer to a C string. clgrad finds it as the
only pointer field of the device whose string is "generic" (reading through ``/proc/self/mem``,
where an address nothing is mapped at gives an error, not a fault) and points it at a copy of the
new name made with the C library's ``malloc`` (PoCL may ``free`` it). It touches nothing unless the
device is a PoCL CPU device whose version string ends in "-generic" and exactly one field matches.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

# PoCL's distro kernel libraries, each with the CPU it is built for and the host features it
# needs (/proc/cpuinfo's names), best last: PoCL picks the last one the host has
_KERNEL_LIBRARIES = (
    ("athlon64", {"sse2"}),
    ("core2", {"sse2", "ssse3", "cx16"}),
    ("penryn", {"sse2", "sse4_1", "cx16"}),
    ("sandybridge", {"sse2", "avx", "cx16", "popcnt"}),
    ("ivybridge", {"sse2", "avx", "cx16", "popcnt", "f16c"}),
    ("bdver1", {"sse2", "avx", "cx16", "popcnt", "xop", "fma4"}),
    ("haswell", {"sse2", "avx", "avx2", "cx16", "popcnt", "abm", "f16c", "fma", "bmi1", "bmi2"}),
    ("skylake-avx512", {"sse2", "avx512f"}),
)
_UNNAMED = b"generic\0"
# PoCL 3.0's device struct: the field sits at byte 640; devices lie 1024 bytes apart, so a
# longer read would meet the next device's field
_DEVICE_BYTES = 1024


def cpu_for(flags: set[str]) -> str | None:
    """The CPU PoCL's kernel library is built for on a host with these /proc/cpuinfo flags.

    >>> cpu_for({"sse2", "avx512f", "avx2"})
    'skylake-avx512'
    >>> cpu_for({"sse2", "ssse3", "cx16"})
    'core2'
    >>> cpu_for(set()) is None
    True
    """
    best = None
    for cpu, needs in _KERNEL_LIBRARIES:
        if needs <= flags:
            best = cpu
    return best


def _host_flags() -> set[str]:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.partition(":")[2].split())
    return set()


def needs_cpu_name(cl_device) -> bool:
    """Whether this is a PoCL CPU device whose compiler was left with no CPU name."""
    import pyopencl as cl

    return (
        "PoCL" in cl_device.version
        and cl_device.version.rstrip().endswith("-generic")
        and bool(cl_device.type & cl.device_type.CPU)
        and platform.system() == "Linux"
        and platform.machine() == "x86_64"
    )


def name_cpu(cl_device) -> str | None:
    """Give a PoCL device left with no CPU name (see the module) the host's; returns the name
    given, or None where nothing was done."""
    chosen = os.environ.get("CLGRAD_POCL_CPU", "").strip()
    if chosen.lower() == "off" or not needs_cpu_name(cl_device):
        return None
    try:
        chosen = chosen or cpu_for(_host_flags())
        fd = os.open("/proc/self/mem", os.O_RDWR)
    except OSError:
        return None
    if not chosen:
        return None
    try:
        return chosen if _repoint(fd, cl_device.int_ptr, chosen) else None
    finally:
        os.close(fd)


def _read(fd: int, address: int, n: int) -> bytes | None:
    if not 4096 <= address < 1 << 47:  # below: null and small integers; above: not user space
        return None
    try:
        return os.pread(fd, n, address)
    except OSError:  # nothing mapped there
        return None


def _repoint(fd: int, device: int, cpu: str) -> bool:
    fields = _read(fd, device, _DEVICE_BYTES) or b""
    words = struct.iter_unpack("<Q", fields[: len(fields) // 8 * 8])
    found = [i * 8 for i, (w,) in enumerate(words) if _read(fd, w, len(_UNNAMED)) == _UNNAMED]
    if len(found) != 1:
        return False
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    name = cpu.encode() + b"\0"
    copy = libc.malloc(len(name))
    if not copy:
        return False
    ctypes.memmove(copy, name, len(name))
    os.pwrite(fd, struct.pack("<Q", copy), device + found[0])
    return True
