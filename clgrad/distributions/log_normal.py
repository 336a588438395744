"""``LogNormal``, under torch's module name ``torch.distributions.log_normal`` (defined in
``transformed``, with the related distributions)."""

from __future__ import annotations

from .transformed import LogNormal

__all__ = ["LogNormal"]
