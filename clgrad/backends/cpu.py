"""``torch.backends.cpu``: the vector instructions of the host, as PyTorch names them.

>>> clgrad.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512", "VSX", "ZVECTOR")
True
"""

from __future__ import annotations

import platform


def get_cpu_capability() -> str:
    """The host's widest vector instruction set among PyTorch's names ("AVX512", "AVX2",
    "DEFAULT" on x86-64; "VSX", "ZVECTOR" on POWER and s390x), read from /proc/cpuinfo where
    there is one.

    >>> isinstance(clgrad.backends.cpu.get_cpu_capability(), str)
    True
    """
    machine = platform.machine().lower()
    if machine.startswith("ppc64"):
        return "VSX"
    if machine == "s390x":
        return "ZVECTOR"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(
                (line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []
            )
    except OSError:
        return "DEFAULT"
    # PyTorch's AVX512 kernels need these four (its CPU capability check)
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "AVX512"
    if {"avx2", "fma"} <= set(flags):
        return "AVX2"
    return "DEFAULT"
