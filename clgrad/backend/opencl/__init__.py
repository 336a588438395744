"""The OpenCL backend: devices, runtime (context, queue, allocator, kernel cache) and kernel
families rendered from ``kernels/*.cl.mako``.

Importing this package only registers the device kind: pyopencl, the runtime and the kernel
families load when the devices are first listed, so ``import clgrad`` stays quick and works
without pyopencl.
"""

from ...device import errors, register_kind


def _opencl_devices(first: int) -> list:
    try:
        from .device import opencl_devices
    except ImportError as e:  # pyopencl missing: cpu still works
        errors.append(f"pyopencl: {e}")
        return []
    return opencl_devices(first)


register_kind(_opencl_devices)
