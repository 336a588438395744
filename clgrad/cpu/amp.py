"""``clgrad.cpu.amp``: ``torch.cpu.amp``'s deprecated spellings of ``clgrad.amp`` for the
``"cpu"`` device type, with PyTorch's FutureWarning (and its bfloat16 default)."""

from __future__ import annotations

from .. import dtypes as D
from ..amp import deprecated_device_classes

__all__ = ["GradScaler", "autocast"]

autocast, GradScaler = deprecated_device_classes("cpu", D.bfloat16)
