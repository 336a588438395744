"""``StudentT``, under torch's module name ``torch.distributions.studentT`` (defined in ``gamma``,
with the related distributions)."""

from __future__ import annotations

from .gamma import StudentT

__all__ = ["StudentT"]
