"""``Categorical``, under torch's module name ``torch.distributions.categorical`` (defined in
``discrete``, with the related distributions)."""

from __future__ import annotations

from .discrete import Categorical

__all__ = ["Categorical"]
