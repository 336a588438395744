"""Dropout: active in training mode only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training mode, zeroes each element independently with probability ``p`` and scales
    the others by ``1 / (1 - p)``; in eval mode, returns the input unchanged, as
    ``torch.nn.Dropout``.

    >>> _ = clgrad.manual_seed(0)
    >>> drop = clgrad.nn.Dropout(p=0.5)
    >>> sorted(set(drop(clgrad.ones(8)).tolist()))
    [0.0, 2.0]
    >>> drop.eval()(clgrad.ones(3))
    tensor([1., 1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``dropout(input, p, training)``."""
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """In training mode, zeroes whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` inputs,
    each with probability ``p``, and scales the others by ``1 / (1 - p)``; in eval mode,
    returns the input unchanged, as ``torch.nn.Dropout2d``.

    >>> _ = clgrad.manual_seed(0)
    >>> y = clgrad.nn.Dropout2d(p=0.5)(clgrad.ones(2, 4, 3, 3))
    >>> y.shape, bool((y.amax((2, 3)) == y.amin((2, 3))).all())
    (clgrad.Size([2, 4, 3, 3]), True)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``dropout2d(input, p, training)``."""
        return F.dropout2d(input, self.p, self.training, self.inplace)
