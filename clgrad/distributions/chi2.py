"""``Chi2``, under torch's module name ``torch.distributions.chi2`` (defined in ``gamma``, with the
related distributions)."""

from __future__ import annotations

from .gamma import Chi2

__all__ = ["Chi2"]
