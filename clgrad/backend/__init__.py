"""Backends: the primitives each device kind runs. Importing this package registers the host
and, where pyopencl imports, the OpenCL device kinds with ``clgrad.device``."""

from . import host  # noqa: F401  (registers cpu)

try:
    from . import opencl  # noqa: F401  (registers cl:N)
except ImportError as e:  # pyopencl missing: cpu still works
    from ..device import errors

    errors.append(f"pyopencl: {e}")
