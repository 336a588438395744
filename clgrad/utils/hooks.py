"""``torch.utils.hooks``' path to ``RemovableHandle``, what registering a hook returns."""

from ..hooks import RemovableHandle

__all__ = ["RemovableHandle"]
