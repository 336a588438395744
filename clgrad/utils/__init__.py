"""Utilities: ``clgrad.utils.data`` (datasets and the DataLoader) and
``clgrad.utils.checkpoint`` (activation checkpointing)."""

from . import checkpoint, data
from .data import distributed as _data_distributed  # noqa: F401 -- as torch, imported with data

__all__ = ["checkpoint", "data"]
