"""``Dirichlet``, under torch's module name ``torch.distributions.dirichlet`` (defined in ``gamma``,
with the related distributions)."""

from __future__ import annotations

from .gamma import Dirichlet

__all__ = ["Dirichlet"]
