"""``torch.nn.modules.channelshuffle``'s path to ``ChannelShuffle``."""

from .upsampling import ChannelShuffle

__all__ = ["ChannelShuffle"]
