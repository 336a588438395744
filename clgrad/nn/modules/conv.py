"""Convolutions: Conv1d and Conv2d (im2col, see clgrad.nn.functional.conv2d)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

if TYPE_CHECKING:
    from ...device import Device
    from ...dtypes import dtype as DType
    from ...tensor import Tensor


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] | Literal["valid", "same"] = 0,
        dilation: int | tuple[int, ...] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: Literal["zeros", "reflect", "replicate", "circular"] = "zeros",
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                "padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but "
                f"got padding_mode='{padding_mode}'"
            )
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of ['valid', 'same']"
                )
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride, self.dilation = _tuple(stride, n), _tuple(dilation, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        kw = {"device": device, "dtype": dtype}
        self.weight = Parameter(empty(out_channels, in_channels // groups, *self.kernel_size, **kw))
        if bias:
            self.bias = Parameter(empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` and ``bias`` with PyTorch's default initialization
        (U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in_channels / groups * kernel size)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _explicit_pad(self, input):
        """Non-zero padding modes pad first (PyTorch's _reversed_padding_repeated_twice)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if isinstance(self.padding, str):
            if self.padding == "valid":
                return input, 0
            pads = []
            for k, d in zip(reversed(self.kernel_size), reversed(self.dilation)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
        else:
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        return F.pad(input, pads, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * self._n:
            s += (
                f", padding={self.padding!r}"
                if isinstance(self.padding, str)
                else f", padding={self.padding}"
            )
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """Applies a 2-D convolution (cross-correlation) over ``(N, C_in, H, W)`` or unbatched
    ``(C_in, H, W)`` inputs, as ``torch.nn.Conv2d``: ``weight`` is ``(out_channels,
    in_channels / groups, kh, kw)``, ``bias`` ``(out_channels,)``; ``stride``, ``padding`` (an
    int, a pair, "valid" or "same"), ``dilation`` and ``groups`` as in PyTorch, and
    ``padding_mode`` "zeros", "reflect", "replicate" or "circular".

    >>> conv = clgrad.nn.Conv2d(3, 8, kernel_size=3, padding=1)
    >>> conv
    Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    >>> conv(clgrad.ones(2, 3, 16, 16)).shape
    clgrad.Size([2, 8, 16, 16])
    >>> clgrad.nn.Conv2d(3, 8, 3, stride=2)(clgrad.ones(2, 3, 16, 16)).shape
    clgrad.Size([2, 8, 7, 7])
    """

    _n = 2

    def forward(self, input: Tensor) -> Tensor:
        """``conv2d(input, weight, bias, ...)``, after padding per ``padding_mode``."""
        x, padding = self._explicit_pad(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """Applies a 1-D convolution (cross-correlation) over ``(N, C_in, L)`` or unbatched
    ``(C_in, L)`` inputs, as ``torch.nn.Conv1d``: ``weight`` is ``(out_channels,
    in_channels / groups, k)``; the other options as in Conv2d.

    >>> conv = clgrad.nn.Conv1d(4, 6, kernel_size=5, padding="same")
    >>> conv(clgrad.ones(2, 4, 10)).shape
    clgrad.Size([2, 6, 10])
    """

    _n = 1

    def forward(self, input: Tensor) -> Tensor:
        """``conv1d(input, weight, bias, ...)``, after padding per ``padding_mode``."""
        x, padding = self._explicit_pad(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)
