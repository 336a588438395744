"""Upsampling layers: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, and the shuffles
PixelShuffle, PixelUnshuffle and ChannelShuffle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


class Upsample(Module):
    """Resizes ``(N, C, *spatial)`` inputs to ``size`` or by ``scale_factor``, as
    ``torch.nn.Upsample`` (see ``clgrad.nn.functional.interpolate`` for the modes).

    >>> up = clgrad.nn.Upsample(scale_factor=2, mode="bilinear")
    >>> up
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> up(clgrad.ones(1, 3, 4, 5)).shape
    clgrad.Size([1, 3, 8, 10])
    """

    def __init__(
        self,
        size: int | Sequence[int] | None = None,
        scale_factor: float | Sequence[float] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``interpolate(input, size, scale_factor, mode, align_corners)``."""
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` inputs, as
    ``torch.nn.UpsamplingNearest2d``.

    >>> clgrad.nn.UpsamplingNearest2d(scale_factor=2)(clgrad.ones(1, 1, 2, 3)).shape
    clgrad.Size([1, 1, 4, 6])
    """

    def __init__(
        self,
        size: int | Sequence[int] | None = None,
        scale_factor: float | Sequence[float] | None = None,
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` inputs with ``align_corners=True``, as
    ``torch.nn.UpsamplingBilinear2d``.

    >>> clgrad.nn.UpsamplingBilinear2d(size=3)(clgrad.ones(1, 1, 2, 2)).shape
    clgrad.Size([1, 1, 3, 3])
    """

    def __init__(
        self,
        size: int | Sequence[int] | None = None,
        scale_factor: float | Sequence[float] | None = None,
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """Rearranges ``(*, C * r ** 2, H, W)`` into ``(*, C, H * r, W * r)``, as
    ``torch.nn.PixelShuffle``.

    >>> clgrad.nn.PixelShuffle(2)(clgrad.ones(1, 8, 3, 3)).shape
    clgrad.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``pixel_shuffle(input, upscale_factor)``."""
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r ** 2, H, W)``, as
    ``torch.nn.PixelUnshuffle``.

    >>> clgrad.nn.PixelUnshuffle(2)(clgrad.ones(1, 2, 6, 6)).shape
    clgrad.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``pixel_unshuffle(input, downscale_factor)``."""
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleaves the channels of ``(N, C, *)`` inputs from ``groups`` groups, as
    ``torch.nn.ChannelShuffle``.

    >>> clgrad.nn.ChannelShuffle(2)(clgrad.arange(4.0).reshape(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        """``channel_shuffle(input, groups)``."""
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
