"""Utilities: ``clgrad.utils.data`` (datasets and the DataLoader),
``clgrad.utils.checkpoint`` (activation checkpointing) and ``clgrad.utils.benchmark`` (timing
statements, as ``torch.utils.benchmark``)."""

from . import benchmark, checkpoint, data
from .data import distributed as _data_distributed  # noqa: F401 -- as torch, imported with data

__all__ = ["benchmark", "checkpoint", "data"]
