"""Parallel training, as ``torch.nn.parallel``: ``DataParallel`` over the devices of one
process, ``DistributedDataParallel`` over ``clgrad.distributed`` (MPI)."""

from .data_parallel import (
    DataParallel,
    data_parallel,
    gather,
    parallel_apply,
    replicate,
    scatter,
    scatter_kwargs,
)
from .distributed import DistributedDataParallel

__all__ = [
    "DataParallel",
    "DistributedDataParallel",
    "data_parallel",
    "gather",
    "parallel_apply",
    "replicate",
    "scatter",
    "scatter_kwargs",
]
