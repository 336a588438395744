"""Backends: the primitives each device kind runs. Importing this package registers the host,
the meta and the OpenCL device kinds with ``clgrad.device``."""

from . import host, meta, opencl

__all__ = ["host", "meta", "opencl"]
