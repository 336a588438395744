"""``Bernoulli``, under torch's module name ``torch.distributions.bernoulli`` (defined in
``discrete``, with the related distributions)."""

from __future__ import annotations

from .discrete import Bernoulli

__all__ = ["Bernoulli"]
