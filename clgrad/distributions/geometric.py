"""``Geometric``, under torch's module name ``torch.distributions.geometric`` (defined in
``discrete``, with the related distributions)."""

from __future__ import annotations

from .discrete import Geometric

__all__ = ["Geometric"]
