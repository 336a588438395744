"""``clgrad.cuda.amp``: ``torch.cuda.amp``'s deprecated spellings of ``clgrad.amp`` for the
``"cuda"`` device type (the OpenCL devices), with PyTorch's FutureWarning."""

from __future__ import annotations

import warnings

from .. import amp
from .. import dtypes as D

__all__ = ["GradScaler", "autocast"]


class autocast(amp.autocast):
    """``clgrad.amp.autocast("cuda", ...)``, as ``torch.cuda.amp.autocast`` (deprecated)."""

    def __init__(self, enabled: bool = True, dtype=D.float16, cache_enabled: bool = True):
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """``clgrad.amp.GradScaler("cuda", ...)``, as ``torch.cuda.amp.GradScaler`` (deprecated)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):  # fmt: skip
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. "
            "Please use `torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
