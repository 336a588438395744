"""``Poisson``, under torch's module name ``torch.distributions.poisson`` (defined in ``discrete``,
with the related distributions)."""

from __future__ import annotations

from .discrete import Poisson

__all__ = ["Poisson"]
