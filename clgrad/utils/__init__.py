"""Utilities: ``clgrad.utils.data`` (datasets and the DataLoader),
``clgrad.utils.checkpoint`` (activation checkpointing) and ``clgrad.utils.benchmark`` (timing
statements, as ``torch.utils.benchmark``), ``clgrad.utils.hooks`` (``RemovableHandle``);
``clgrad.utils._pytree`` (nested containers as
leaves and a spec). ``clgrad.utils.tensorboard`` is imported on demand, as torch's."""

from . import _pytree, benchmark, checkpoint, data, hooks  # noqa: F401 -- _pytree: as torch.utils
from .data import distributed as _data_distributed  # noqa: F401 -- as torch, imported with data

__all__ = ["benchmark", "checkpoint", "data", "hooks"]
