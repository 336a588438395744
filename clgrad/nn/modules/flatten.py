"""``torch.nn.modules.flatten``'s path to ``Flatten`` and ``Unflatten``."""

from .linear import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
