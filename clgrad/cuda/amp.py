"""``clgrad.cuda.amp``: ``torch.cuda.amp``'s deprecated spellings of ``clgrad.amp`` for the
``"cuda"`` device type (the OpenCL devices), with PyTorch's FutureWarning."""

from __future__ import annotations

from .. import dtypes as D
from ..amp import deprecated_device_classes

__all__ = ["GradScaler", "autocast"]

autocast, GradScaler = deprecated_device_classes("cuda", D.float16)
