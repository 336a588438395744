"""``HalfNormal``, under torch's module name ``torch.distributions.half_normal`` (defined in
``continuous``, with the related distributions)."""

from __future__ import annotations

from .continuous import HalfNormal

__all__ = ["HalfNormal"]
