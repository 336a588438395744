"""Error classes clgrad raises besides Python's own."""


class OutOfMemoryError(RuntimeError):
    """A device allocation failed even after the allocator freed its cached blocks."""


class KernelBuildError(RuntimeError):
    """An OpenCL program failed to build; the message has the device, the log and the source path."""
