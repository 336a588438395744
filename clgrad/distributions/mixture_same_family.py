"""``MixtureSameFamily``, under torch's module name ``torch.distributions.mixture_same_family``
(defined in ``independent``, with the related distributions)."""

from __future__ import annotations

from .independent import MixtureSameFamily

__all__ = ["MixtureSameFamily"]
