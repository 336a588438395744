"""``clgrad.cpu.amp``: ``torch.cpu.amp``'s deprecated spellings of ``clgrad.amp`` for the
``"cpu"`` device type, with PyTorch's FutureWarning (and its bfloat16 default)."""

from __future__ import annotations

import warnings

from .. import amp
from .. import dtypes as D

__all__ = ["GradScaler", "autocast"]


class autocast(amp.autocast):
    """``clgrad.amp.autocast("cpu", ...)``, as ``torch.cpu.amp.autocast`` (deprecated)."""

    def __init__(self, enabled: bool = True, dtype=D.bfloat16, cache_enabled: bool = True):
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """``clgrad.amp.GradScaler("cpu", ...)``, as ``torch.cpu.amp.GradScaler`` (deprecated)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):  # fmt: skip
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. "
            "Please use `torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
