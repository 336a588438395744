"""Padding layers: constant (ZeroPad, ConstantPad), reflection, replication and circular, in
1, 2 and 3 dims (see clgrad.nn.functional.pad)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


def _widths(padding, n):
    """An int pads every side; a sequence is (left, right, top, bottom, front, back)'s prefix."""
    if isinstance(padding, (tuple, list)):
        if len(padding) != 2 * n:
            raise ValueError(f"padding must be an int or a {2 * n}-tuple, got {padding}")
        return tuple(int(p) for p in padding)
    return (int(padding),) * (2 * n)


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _widths(padding, self._n)

    def forward(self, input: Tensor) -> Tensor:
        """``pad(input, padding, mode)``."""
        # torch's circular modules check the input's dims themselves (ValueError); the others
        # leave it to pad (NotImplementedError for a reflect/replicate padding of those dims)
        if self._mode == "circular" and input.ndim not in (self._n + 1, self._n + 2):
            raise ValueError(
                f"expected {self._n + 1}D or {self._n + 2}D input (got {input.ndim}D input)"
            )
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        """``pad(input, padding, "constant", value)``."""
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``, as ``torch.nn.ConstantPad1d``: ``padding`` an int or
    (left, right).

    >>> clgrad.nn.ConstantPad1d((1, 2), 3.5)(clgrad.ones(1, 2))
    tensor([[3.5000, 1.0000, 1.0000, 3.5000, 3.5000]])
    """

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``, as ``torch.nn.ConstantPad2d``: ``padding`` an
    int or (left, right, top, bottom).

    >>> clgrad.nn.ConstantPad2d(1, 0.5)(clgrad.ones(1, 2, 2)).shape
    clgrad.Size([1, 4, 4])
    """

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``, as ``torch.nn.ConstantPad3d``.

    >>> clgrad.nn.ConstantPad3d((1, 0, 0, 1, 2, 2), 0.0)(clgrad.ones(1, 2, 2, 2)).shape
    clgrad.Size([1, 6, 3, 3])
    """

    _n = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros, as ``torch.nn.ZeroPad1d``.

    >>> clgrad.nn.ZeroPad1d(1)(clgrad.ones(1, 2))
    tensor([[0., 1., 1., 0.]])
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros, as ``torch.nn.ZeroPad2d``.

    >>> clgrad.nn.ZeroPad2d((1, 0, 0, 1))(clgrad.ones(1, 1, 1))
    tensor([[[0., 1.],
             [0., 0.]]])
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros, as ``torch.nn.ZeroPad3d``.

    >>> clgrad.nn.ZeroPad3d(1)(clgrad.ones(1, 1, 1, 1)).shape
    clgrad.Size([1, 3, 3, 3])
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection (the edge not repeated), as
    ``torch.nn.ReflectionPad1d``.

    >>> clgrad.nn.ReflectionPad1d(2)(clgrad.tensor([[0.0, 1.0, 2.0]]))
    tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """

    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last two dims with their reflection, as ``torch.nn.ReflectionPad2d``.

    >>> clgrad.nn.ReflectionPad2d(1)(clgrad.ones(1, 2, 2)).shape
    clgrad.Size([1, 4, 4])
    """

    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pads the last three dims with their reflection, as ``torch.nn.ReflectionPad3d``.

    >>> clgrad.nn.ReflectionPad3d(1)(clgrad.ones(1, 1, 2, 2, 2)).shape
    clgrad.Size([1, 1, 4, 4, 4])
    """

    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values, as ``torch.nn.ReplicationPad1d``.

    >>> clgrad.nn.ReplicationPad1d((1, 2))(clgrad.tensor([[0.0, 1.0]]))
    tensor([[0., 0., 1., 1., 1.]])
    """

    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last two dims by repeating their edges, as ``torch.nn.ReplicationPad2d``.

    >>> clgrad.nn.ReplicationPad2d(1)(clgrad.ones(1, 2, 2)).shape
    clgrad.Size([1, 4, 4])
    """

    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pads the last three dims by repeating their edges, as ``torch.nn.ReplicationPad3d``.

    >>> clgrad.nn.ReplicationPad3d(1)(clgrad.ones(1, 1, 2, 2, 2)).shape
    clgrad.Size([1, 1, 4, 4, 4])
    """

    _n, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pads the last dim by wrapping around, as ``torch.nn.CircularPad1d``.

    >>> clgrad.nn.CircularPad1d(1)(clgrad.tensor([[0.0, 1.0, 2.0]]))
    tensor([[2., 0., 1., 2., 0.]])
    """

    _n, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pads the last two dims by wrapping around, as ``torch.nn.CircularPad2d``.

    >>> clgrad.nn.CircularPad2d(1)(clgrad.ones(1, 2, 2)).shape
    clgrad.Size([1, 4, 4])
    """

    _n, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pads the last three dims by wrapping around, as ``torch.nn.CircularPad3d``.

    >>> clgrad.nn.CircularPad3d(1)(clgrad.ones(1, 1, 2, 2, 2)).shape
    clgrad.Size([1, 1, 4, 4, 4])
    """

    _n, _mode = 3, "circular"
