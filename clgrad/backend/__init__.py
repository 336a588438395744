"""Backends: the primitives each device kind runs. Importing this package registers the host
and the OpenCL device kinds with ``clgrad.device``."""

from . import host, opencl

__all__ = ["host", "opencl"]
