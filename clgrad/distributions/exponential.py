"""``Exponential``, under torch's module name ``torch.distributions.exponential`` (defined in
``continuous``, with the related distributions)."""

from __future__ import annotations

from .continuous import Exponential

__all__ = ["Exponential"]
