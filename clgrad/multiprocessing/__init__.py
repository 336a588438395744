"""``clgrad.multiprocessing``: Python's ``multiprocessing`` under ``torch.multiprocessing``'s
name, with its additions: ``spawn`` / ``start_processes`` (``fn(i, *args)`` in ``nprocs``
processes, a child's exception raised in the parent as ``ProcessRaisedException``) and the
sharing strategies.

clgrad tensors (and Parameters) pickle by value, on their device, so they pass through a
``Queue`` or a ``Process``'s arguments as copies: unlike PyTorch's CPU tensors, whose storage
moves into shared memory, a child's in-place changes are not seen by the parent
(``share_memory_()`` changes nothing). The sharing strategy is recorded and reported, as
PyTorch's is, but tensors are copied whichever is set.

>>> ctx = clgrad.multiprocessing.get_context("spawn")
>>> sorted(clgrad.multiprocessing.get_all_sharing_strategies())
['file_descriptor', 'file_system']
"""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *  # noqa: F403 - torch.multiprocessing re-exports the module

from .spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "init_reductions",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]

# PyTorch's strategies: Linux offers both (file descriptors by default), macOS only file_system
_all_sharing_strategies = (
    {"file_system"} if sys.platform == "darwin" else {"file_descriptor", "file_system"}
)
_sharing_strategy = ["file_system" if sys.platform == "darwin" else "file_descriptor"]


def set_sharing_strategy(new_strategy: str) -> None:
    """Records the strategy for sharing CPU tensors between processes; one not in
    ``get_all_sharing_strategies()`` is refused (AssertionError, as PyTorch's)."""
    assert new_strategy in _all_sharing_strategies
    _sharing_strategy[0] = new_strategy


def get_sharing_strategy() -> str:
    """The strategy ``set_sharing_strategy`` recorded (the platform's default until then)."""
    return _sharing_strategy[0]


def get_all_sharing_strategies() -> set[str]:
    """The strategies this platform offers."""
    return set(_all_sharing_strategies)


def init_reductions() -> None:
    """PyTorch registers its tensors' shared-memory picklers here; clgrad's tensors pickle by
    value with ``Tensor.__reduce_ex__``, so there is nothing to register."""
