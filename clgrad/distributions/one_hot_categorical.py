"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``, under torch's module name
``torch.distributions.one_hot_categorical`` (defined in ``discrete``, with the related
distributions)."""

from __future__ import annotations

from .discrete import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
