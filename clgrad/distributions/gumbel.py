"""``Gumbel``, under torch's module name ``torch.distributions.gumbel`` (defined in ``transformed``,
with the related distributions)."""

from __future__ import annotations

from .transformed import Gumbel

__all__ = ["Gumbel"]
