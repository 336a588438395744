"""``torch.nn.modules.pixelshuffle``'s path to ``PixelShuffle`` and ``PixelUnshuffle``."""

from .upsampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
