"""``Normal``, under torch's module name ``torch.distributions.normal`` (defined in ``continuous``,
with the related distributions)."""

from __future__ import annotations

from .continuous import Normal

__all__ = ["Normal"]
