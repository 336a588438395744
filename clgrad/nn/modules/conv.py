"""Convolutions: Conv1d/2d/3d and ConvTranspose1d/2d/3d (im2col, see clgrad.nn.functional), and
their lazy forms (LazyConv2d, ...: in_channels from the first input)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
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
        *,
        transposed: bool = False,
        output_padding: int | tuple[int, ...] = 0,
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
        self.transposed, self.output_padding = transposed, _tuple(output_padding, n)
        kw = {"device": device, "dtype": dtype}
        # a transposed convolution's weight maps in_channels to out_channels / groups each
        wshape = (
            (in_channels, out_channels // groups)
            if transposed
            else (out_channels, in_channels // groups)
        )
        self.weight = Parameter(empty(*wshape, *self.kernel_size, **kw))
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
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
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


class Conv3d(_ConvNd):
    """Applies a 3-D convolution (cross-correlation) over ``(N, C_in, D, H, W)`` or unbatched
    ``(C_in, D, H, W)`` inputs, as ``torch.nn.Conv3d``: ``weight`` is ``(out_channels,
    in_channels / groups, kd, kh, kw)``; the other options as in Conv2d.

    >>> conv = clgrad.nn.Conv3d(2, 4, kernel_size=3, stride=2, padding=1)
    >>> conv(clgrad.ones(1, 2, 5, 6, 7)).shape
    clgrad.Size([1, 4, 3, 3, 4])
    """

    _n = 3

    def forward(self, input: Tensor) -> Tensor:
        """``conv3d(input, weight, bias, ...)``, after padding per ``padding_mode``."""
        x, padding = self._explicit_pad(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] = 0,
        output_padding: int | tuple[int, ...] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | tuple[int, ...] = 1,
        padding_mode: Literal["zeros"] = "zeros",
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, device, dtype, transposed=True, output_padding=output_padding,
        )  # fmt: skip

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output ``output_size`` (PyTorch's rule: it may
        name the batch and channel dims too, and must be reachable with a padding below the
        stride)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        size = tuple(int(s) for s in output_size)
        if len(size) not in (n, n + 1, n + 2):
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                f"{n + 2} elements (got {len(size)})"
            )
        size = size[-n:]
        extra = []
        for i in range(n):
            dim = input.shape[input.ndim - n + i]
            lo = (
                (dim - 1) * self.stride[i]
                - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel_size[i] - 1)
                + 1
            )
            hi = lo + self.stride[i] - 1
            if not lo <= size[i] <= hi:
                raise ValueError(
                    f"requested an output size of {list(size)}, but valid sizes range from "
                    f"{lo} to {hi} (for an input of {list(input.shape[-n:])})"
                )
            extra.append(size[i] - lo)
        return tuple(extra)

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        """``conv_transpose{n}d(input, weight, bias, ...)``; ``output_size`` picks the
        output_padding that gives that size."""
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        extra = self._output_padding(input, output_size)
        return fn(
            input, self.weight, self.bias, self.stride, self.padding, extra, self.groups,
            self.dilation,
        )  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    """Applies a 1-D transposed convolution (the gradient of Conv1d with respect to its input)
    over ``(N, C_in, L)`` or ``(C_in, L)`` inputs, as ``torch.nn.ConvTranspose1d``: ``weight``
    is ``(in_channels, out_channels / groups, k)``; ``output_padding`` (or ``output_size`` in
    the call) adds to one side of the output.

    >>> up = clgrad.nn.ConvTranspose1d(4, 2, kernel_size=3, stride=2, padding=1)
    >>> up(clgrad.ones(1, 4, 5)).shape
    clgrad.Size([1, 2, 9])
    >>> up(clgrad.ones(1, 4, 5), output_size=[10]).shape
    clgrad.Size([1, 2, 10])
    """

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Applies a 2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)``
    inputs, as ``torch.nn.ConvTranspose2d``: ``weight`` is ``(in_channels, out_channels /
    groups, kh, kw)``.

    >>> up = clgrad.nn.ConvTranspose2d(4, 2, kernel_size=2, stride=2)
    >>> up
    ConvTranspose2d(4, 2, kernel_size=(2, 2), stride=(2, 2))
    >>> up(clgrad.ones(1, 4, 5, 5)).shape
    clgrad.Size([1, 2, 10, 10])
    """

    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Applies a 3-D transposed convolution over ``(N, C_in, D, H, W)`` or
    ``(C_in, D, H, W)`` inputs, as ``torch.nn.ConvTranspose3d``.

    >>> up = clgrad.nn.ConvTranspose3d(2, 2, kernel_size=2, stride=2)
    >>> up(clgrad.ones(1, 2, 2, 3, 2)).shape
    clgrad.Size([1, 2, 4, 6, 4])
    """

    _n = 3


class _LazyConvNd(LazyModuleMixin):
    """The lazy convolutions: ``in_channels`` from the first input's channel dim."""

    def __init__(
        self,
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
        **output_padding,
    ) -> None:
        # by keyword: a transposed convolution's constructor orders its arguments otherwise
        super().__init__(
            0, 0, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups,
            bias=False, padding_mode=padding_mode, device=device, dtype=dtype, **output_padding,
        )  # fmt: skip
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Initializes the parameters as the convolution does, once they have a shape."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """``in_channels`` from the input: dim 1 of a batch, dim 0 of an unbatched input; set
        too where a state dict gave the shapes."""
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise RuntimeError(
                f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {list(input.shape)}"
            )
        self.in_channels = input.shape[input.ndim - n - 1]
        if not self.has_uninitialized_params():
            return
        if self.in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with no_grad():
            self.weight.materialize((*shape, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConvTransposeNd(_LazyConvNd):
    def __init__(
        self,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] = 0,
        output_padding: int | tuple[int, ...] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | tuple[int, ...] = 1,
        padding_mode: Literal["zeros"] = "zeros",
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__(
            out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
            device, dtype, output_padding=output_padding,
        )  # fmt: skip


class LazyConv1d(_LazyConvNd, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is read off its first input, as
    ``torch.nn.LazyConv1d``: it becomes a ``Conv1d`` then (``LazyModuleMixin``).

    >>> conv = clgrad.nn.LazyConv1d(4, 3)
    >>> conv(clgrad.ones(2, 5, 8)).shape, conv
    (clgrad.Size([2, 4, 6]), Conv1d(5, 4, kernel_size=(3,), stride=(1,)))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvNd, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is read off its first input, as
    ``torch.nn.LazyConv2d``: it becomes a ``Conv2d`` then (``LazyModuleMixin``).

    >>> conv = clgrad.nn.LazyConv2d(8, 3, padding=1)
    >>> conv
    LazyConv2d(0, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    >>> conv(clgrad.ones(1, 3, 4, 4)).shape, conv.weight.shape
    (clgrad.Size([1, 8, 4, 4]), clgrad.Size([8, 3, 3, 3]))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvNd, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` is read off its first input, as
    ``torch.nn.LazyConv3d``: it becomes a ``Conv3d`` then (``LazyModuleMixin``).

    >>> clgrad.nn.LazyConv3d(2, 2)(clgrad.ones(1, 3, 3, 3, 3)).shape
    clgrad.Size([1, 2, 2, 2, 2])
    """

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` is read off its first input, as
    ``torch.nn.LazyConvTranspose1d``: it becomes a ``ConvTranspose1d`` then.

    >>> clgrad.nn.LazyConvTranspose1d(2, 3, stride=2)(clgrad.ones(1, 4, 5)).shape
    clgrad.Size([1, 2, 11])
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` is read off its first input, as
    ``torch.nn.LazyConvTranspose2d``: it becomes a ``ConvTranspose2d`` then.

    >>> clgrad.nn.LazyConvTranspose2d(2, 2, stride=2)(clgrad.ones(1, 4, 3, 3)).shape
    clgrad.Size([1, 2, 6, 6])
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` is read off its first input, as
    ``torch.nn.LazyConvTranspose3d``: it becomes a ``ConvTranspose3d`` then.

    >>> clgrad.nn.LazyConvTranspose3d(2, 2)(clgrad.ones(1, 4, 2, 2, 2)).shape
    clgrad.Size([1, 2, 3, 3, 3])
    """

    cls_to_become = ConvTranspose3d
