"""Pooling: max, average, power-average, adaptive and unpooling layers in 1, 2 and 3 dims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxPoolNd(Module):
    _n = 2

    def __init__(
        self,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] | None = None,
        padding: int | tuple[int, ...] = 0,
        dilation: int | tuple[int, ...] = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        """``max_pool{n}d(input, ...)``: the pooled values (and their indices)."""
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self._n - 1]
        return fn(
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


class MaxPool1d(_MaxPoolNd):
    """Takes the maximum over sliding windows of ``(N, C, L)`` or ``(C, L)`` inputs, as
    ``torch.nn.MaxPool1d`` (the options as in MaxPool2d).

    >>> clgrad.nn.MaxPool1d(2)(clgrad.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[3., 2.]])
    """

    _n = 1


class MaxPool2d(_MaxPoolNd):
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

    _n = 2


class MaxPool3d(_MaxPoolNd):
    """Takes the maximum over sliding windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    inputs, as ``torch.nn.MaxPool3d``.

    >>> clgrad.nn.MaxPool3d(2, stride=1)(clgrad.ones(1, 2, 3, 3, 3)).shape
    clgrad.Size([1, 2, 2, 2, 2])
    """

    _n = 3


class _AvgPoolNd(Module):
    _n = 2

    def __init__(
        self,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] | None = None,
        padding: int | tuple[int, ...] = 0,
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
        """``avg_pool{n}d(input, ...)``."""
        args = (self.kernel_size, self.stride, self.padding, self.ceil_mode)
        if self._n == 1:
            return F.avg_pool1d(input, *args, self.count_include_pad)
        fn = F.avg_pool2d if self._n == 2 else F.avg_pool3d
        return fn(input, *args, self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Averages over sliding windows of ``(N, C, L)`` or ``(C, L)`` inputs, as
    ``torch.nn.AvgPool1d`` (which has no ``divisor_override``).

    >>> clgrad.nn.AvgPool1d(2)(clgrad.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[2., 1.]])
    """

    _n = 1

    def __init__(
        self,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] | None = None,
        padding: int | tuple[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        # PyTorch keeps AvgPool1d's sizes as 1-tuples (its repr shows them so)
        super().__init__(
            _tuple(kernel_size, 1),
            _tuple(stride if stride is not None else kernel_size, 1),
            _tuple(padding, 1),
            ceil_mode,
            count_include_pad,
        )


class AvgPool2d(_AvgPoolNd):
    """Averages over sliding ``kernel_size`` windows of ``(N, C, H, W)`` or ``(C, H, W)``
    inputs, as ``torch.nn.AvgPool2d``; ``stride`` defaults to ``kernel_size``, and
    ``count_include_pad`` / ``divisor_override`` choose the divisor as in PyTorch.

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> clgrad.nn.AvgPool2d(2)(x).flatten().tolist()
    [2.5, 4.5, 10.5, 12.5]
    """

    _n = 2


class AvgPool3d(_AvgPoolNd):
    """Averages over sliding windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs, as
    ``torch.nn.AvgPool3d``.

    >>> clgrad.nn.AvgPool3d(2)(clgrad.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[3.5000]]]])
    """

    _n = 3


class _LPPoolNd(Module):
    _n = 2

    def __init__(
        self,
        norm_type: float,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] | None = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        """``lp_pool{n}d(input, norm_type, ...)``."""
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._n - 1]
        return fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """The power-average pooling ``(sum x ** p) ** (1 / p)`` over sliding windows of
    ``(N, C, L)`` or ``(C, L)`` inputs, as ``torch.nn.LPPool1d``.

    >>> clgrad.nn.LPPool1d(2, 2)(clgrad.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """

    _n = 1


class LPPool2d(_LPPoolNd):
    """The power-average pooling over sliding windows of ``(N, C, H, W)`` inputs, as
    ``torch.nn.LPPool2d``.

    >>> clgrad.nn.LPPool2d(1, 2)(clgrad.full((1, 2, 2), 2.0))
    tensor([[[8.]]])
    """

    _n = 2


class LPPool3d(_LPPoolNd):
    """The power-average pooling over sliding windows of ``(N, C, D, H, W)`` inputs, as
    ``torch.nn.LPPool3d``.

    >>> clgrad.nn.LPPool3d(1, 2)(clgrad.full((1, 2, 2, 2), 2.0))
    tensor([[[[16.]]]])
    """

    _n = 3


class _AdaptiveAvgPoolNd(Module):
    _n = 2

    def __init__(self, output_size: int | tuple[int | None, ...]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """``adaptive_avg_pool{n}d(input, output_size)``."""
        fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._n - 1]
        return fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Averages ``(N, C, L)`` or ``(C, L)`` inputs down to the length ``output_size``,
    whatever the input's length, as ``torch.nn.AdaptiveAvgPool1d``.

    >>> clgrad.nn.AdaptiveAvgPool1d(2)(clgrad.tensor([[1.0, 2.0, 3.0, 6.0]]))
    tensor([[1.5000, 4.5000]])
    """

    _n = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Averages ``(N, C, H, W)`` or ``(C, H, W)`` inputs down to the spatial size
    ``output_size`` (an int, or a pair whose None entries keep the input's size), whatever the
    input's size, as ``torch.nn.AdaptiveAvgPool2d``.

    >>> pool = clgrad.nn.AdaptiveAvgPool2d((1, 1))
    >>> pool(clgrad.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[7.5000]]]])
    >>> clgrad.nn.AdaptiveAvgPool2d(3)(clgrad.ones(2, 5, 7, 7)).shape
    clgrad.Size([2, 5, 3, 3])
    """

    _n = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Averages ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs down to the spatial size
    ``output_size``, as ``torch.nn.AdaptiveAvgPool3d``.

    >>> clgrad.nn.AdaptiveAvgPool3d(1)(clgrad.ones(2, 3, 4, 5, 6)).shape
    clgrad.Size([2, 3, 1, 1, 1])
    """

    _n = 3


class _AdaptiveMaxPoolNd(Module):
    _n = 2

    def __init__(
        self, output_size: int | tuple[int | None, ...], return_indices: bool = False
    ) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        """``adaptive_max_pool{n}d(input, output_size, return_indices)``."""
        fn = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._n - 1]
        return fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Takes the maximum of ``(N, C, L)`` or ``(C, L)`` inputs over ``output_size`` adaptive
    windows, as ``torch.nn.AdaptiveMaxPool1d``.

    >>> clgrad.nn.AdaptiveMaxPool1d(2)(clgrad.tensor([[1.0, 3.0, 2.0, 0.0, 5.0]]))
    tensor([[3., 5.]])
    """

    _n = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Takes the maximum of ``(N, C, H, W)`` or ``(C, H, W)`` inputs over adaptive windows, as
    ``torch.nn.AdaptiveMaxPool2d``.

    >>> clgrad.nn.AdaptiveMaxPool2d((2, 3))(clgrad.ones(1, 4, 5, 7)).shape
    clgrad.Size([1, 4, 2, 3])
    """

    _n = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Takes the maximum of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs over adaptive
    windows, as ``torch.nn.AdaptiveMaxPool3d``.

    >>> clgrad.nn.AdaptiveMaxPool3d(2)(clgrad.ones(1, 2, 5, 5, 5)).shape
    clgrad.Size([1, 2, 2, 2, 2])
    """

    _n = 3


class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(
        self,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] | None = None,
        padding: int | tuple[int, ...] = 0,
    ) -> None:
        super().__init__()
        n = self._n
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride if stride is not None else kernel_size, n)
        self.padding = _tuple(padding, n)

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        """``max_unpool{n}d(input, indices, ...)``."""
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: each value back at its index, zeros elsewhere, as
    ``torch.nn.MaxUnpool1d``.

    >>> v, i = clgrad.nn.MaxPool1d(2, return_indices=True)(clgrad.tensor([[1.0, 3.0, 2.0, 0.0]]))
    >>> clgrad.nn.MaxUnpool1d(2)(v, i)
    tensor([[0., 3., 2., 0.]])
    """

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d, as ``torch.nn.MaxUnpool2d``.

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> v, i = clgrad.nn.MaxPool2d(2, return_indices=True)(x)
    >>> clgrad.nn.MaxUnpool2d(2)(v, i).shape
    clgrad.Size([1, 1, 4, 4])
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d, as ``torch.nn.MaxUnpool3d``.

    >>> v, i = clgrad.nn.MaxPool3d(2, return_indices=True)(clgrad.ones(1, 1, 2, 2, 2))
    >>> clgrad.nn.MaxUnpool3d(2)(v, i).shape
    clgrad.Size([1, 1, 2, 2, 2])
    """

    _n = 3


class _FractionalMaxPoolNd(Module):
    _n = 2

    def __init__(
        self,
        kernel_size: int | tuple[int, ...],
        output_size: int | tuple[int, ...] | None = None,
        output_ratio: float | tuple[float, ...] | None = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        super().__init__()
        n = self._n
        name = f"FractionalMaxPool{n}d"  # torch's messages name its class, not a subclass
        if n == 3 and (
            (isinstance(kernel_size, int) and kernel_size <= 0)
            or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))
        ):  # (only the 3d layer checks, as in PyTorch)
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _tuple(kernel_size, n)
        self.return_indices = return_indices
        # a buffer: given samples move with .to() and are saved in the state dict
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, n) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(
            0 < self.output_ratio[i] < 1 for i in range(n)
        ):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        """``fractional_max_pool{n}d(input, ...)`` with this layer's samples (new ones each call
        when it has none)."""
        fn = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of ``(N, C, H, W)`` or ``(C, H, W)`` inputs, as
    ``torch.nn.FractionalMaxPool2d``: ``kernel_size`` windows at pseudo-random steps, down to
    ``output_size`` or ``output_ratio`` (in (0, 1)) times the input's size; exactly one of the
    two is given. ``_random_samples`` (N, C, 2) fixes the steps (a buffer); without it each call
    draws new ones.

    >>> samples = clgrad.full((1, 1, 2), 0.5)
    >>> pool = clgrad.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=samples)
    >>> pool
    FractionalMaxPool2d()
    >>> pool(clgrad.arange(25.0).reshape(1, 1, 5, 5))
    tensor([[[[ 6.,  8.,  9.],
              [16., 18., 19.],
              [21., 23., 24.]]]])
    >>> clgrad.nn.FractionalMaxPool2d(3, output_ratio=0.5)(clgrad.ones(2, 4, 10, 8)).shape
    clgrad.Size([2, 4, 5, 4])
    """

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs, as
    ``torch.nn.FractionalMaxPool3d`` (``_random_samples`` of shape (N, C, 3)).

    >>> pool = clgrad.nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True)
    >>> values, indices = pool(clgrad.ones(1, 2, 6, 6, 6))
    >>> values.shape, indices.dtype
    (clgrad.Size([1, 2, 3, 3, 3]), clgrad.int64)
    """

    _n = 3
