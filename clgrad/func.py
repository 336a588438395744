"""``clgrad.func``: PyTorch's ``torch.func`` names that clgrad has: ``functional_call``."""

from __future__ import annotations

from .nn.utils.stateless import functional_call

__all__ = ["functional_call"]
