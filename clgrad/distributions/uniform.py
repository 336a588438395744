"""``Uniform``, under torch's module name ``torch.distributions.uniform`` (defined in
``continuous``, with the related distributions)."""

from __future__ import annotations

from .continuous import Uniform

__all__ = ["Uniform"]
