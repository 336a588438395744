"""``torch.nn.utils.init``'s path to ``skip_init``."""

from . import skip_init

__all__ = ["skip_init"]
