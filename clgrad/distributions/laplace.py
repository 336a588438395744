"""``Laplace``, under torch's module name ``torch.distributions.laplace`` (defined in
``continuous``, with the related distributions)."""

from __future__ import annotations

from .continuous import Laplace

__all__ = ["Laplace"]
