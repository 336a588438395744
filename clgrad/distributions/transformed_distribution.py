"""``TransformedDistribution``, under torch's module name
``torch.distributions.transformed_distribution`` (defined in ``transformed``, with the related
distributions)."""

from __future__ import annotations

from .transformed import TransformedDistribution

__all__ = ["TransformedDistribution"]
