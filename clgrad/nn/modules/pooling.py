"""Pooling: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


class MaxPool2d(Module):
    """Takes the maximum over sliding ``kernel_size`` windows of ``(N, C, H, W)`` or
    ``(C, H, W)`` inputs, as ``torch.nn.MaxPool2d``; ``stride`` defaults to ``kernel_size``.
    With ``return_indices`` it also returns, per output, the flat index into the input's
    H * W plane of the chosen element (int64).

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> pool = clgrad.nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(x)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """

    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
        dilation: int | tuple[int, int] = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        """``max_pool2d(input, ...)``: the pooled values (and their indices)."""
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    """Averages over sliding ``kernel_size`` windows of ``(N, C, H, W)`` or ``(C, H, W)``
    inputs, as ``torch.nn.AvgPool2d``; ``stride`` defaults to ``kernel_size``, and
    ``count_include_pad`` / ``divisor_override`` choose the divisor as in PyTorch.

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> clgrad.nn.AvgPool2d(2)(x).flatten().tolist()
    [2.5, 4.5, 10.5, 12.5]
    """

    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """``avg_pool2d(input, ...)``."""
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Averages ``(N, C, H, W)`` or ``(C, H, W)`` inputs down to the spatial size
    ``output_size`` (an int, or a pair whose None entries keep the input's size), whatever the
    input's size, as ``torch.nn.AdaptiveAvgPool2d``.

    >>> pool = clgrad.nn.AdaptiveAvgPool2d((1, 1))
    >>> pool(clgrad.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[7.5000]]]])
    >>> clgrad.nn.AdaptiveAvgPool2d(3)(clgrad.ones(2, 5, 7, 7)).shape
    clgrad.Size([2, 5, 3, 3])
    """

    def __init__(self, output_size: int | tuple[int | None, int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """``adaptive_avg_pool2d(input, output_size)``."""
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
