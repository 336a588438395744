"""``Beta``, under torch's module name ``torch.distributions.beta`` (defined in ``gamma``, with the
related distributions)."""

from __future__ import annotations

from .gamma import Beta

__all__ = ["Beta"]
