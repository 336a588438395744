"""Utilities: ``clgrad.utils.data`` (datasets and the DataLoader)."""

from . import data
from .data import distributed as _data_distributed  # noqa: F401 -- as torch, imported with data

__all__ = ["data"]
