"""``torch.nn.modules.fold``'s path to ``Fold`` and ``Unfold``."""

from .distance import Fold, Unfold

__all__ = ["Fold", "Unfold"]
