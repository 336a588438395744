"""The OpenCL backend: devices, runtime (context, queue, allocator, kernel cache) and kernel
families rendered from ``kernels/*.cl.mako``."""

from . import device  # noqa: F401  (registers the OpenCL device kind)
