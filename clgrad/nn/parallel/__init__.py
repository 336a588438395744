"""Parallel training, as ``torch.nn.parallel``: ``DistributedDataParallel`` over
``clgrad.distributed`` (MPI)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
