"""``Binomial``, under torch's module name ``torch.distributions.binomial`` (defined in
``discrete``, with the related distributions)."""

from __future__ import annotations

from .discrete import Binomial

__all__ = ["Binomial"]
