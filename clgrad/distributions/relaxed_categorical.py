"""``ExpRelaxedCategorical`` and ``RelaxedOneHotCategorical``, under torch's module name
``torch.distributions.relaxed_categorical`` (defined in ``transformed``, with the related
distributions)."""

from __future__ import annotations

from .transformed import ExpRelaxedCategorical, RelaxedOneHotCategorical

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
