"""``LogitRelaxedBernoulli`` and ``RelaxedBernoulli``, under torch's module name
``torch.distributions.relaxed_bernoulli`` (defined in ``transformed``, with the related
distributions)."""

from __future__ import annotations

from .transformed import LogitRelaxedBernoulli, RelaxedBernoulli

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
