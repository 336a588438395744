"""Error classes clgrad raises besides Python's own."""


class OutOfMemoryError(RuntimeError):
    """A device allocation failed even after the allocator freed its cached blocks."""


class KernelBuildError(RuntimeError):
    """An OpenCL program failed to build: the message names the device, the build log and
    where the rendered source was written."""


class LinAlgError(RuntimeError):
    """A matrix a decomposition or solver needs invertible (or positive-definite) is not:
    ``torch.linalg.LinAlgError``, also a RuntimeError."""
