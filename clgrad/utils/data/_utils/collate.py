"""``torch.utils.data._utils.collate``'s path to ``default_collate`` and ``default_convert``."""

from .. import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
