"""``torch.utils.data._utils``: its ``collate`` module, which some programs import the collate
functions from."""

from . import collate

__all__ = ["collate"]
