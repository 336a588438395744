"""``DistributedSampler``: each rank of a distributed job iterates over its own shard of a
dataset, as ``torch.utils.data.distributed`` (the class lives in ``clgrad.utils.data``, as
torch also exports it there).

>>> from clgrad.utils.data.distributed import DistributedSampler
>>> list(DistributedSampler(range(4), num_replicas=2, rank=0, shuffle=False))
[0, 2]
"""

from __future__ import annotations

from . import DistributedSampler

__all__ = ["DistributedSampler"]
