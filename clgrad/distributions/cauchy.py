"""``Cauchy``, under torch's module name ``torch.distributions.cauchy`` (defined in ``continuous``,
with the related distributions)."""

from __future__ import annotations

from .continuous import Cauchy

__all__ = ["Cauchy"]
