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


class Dropout1d(_DropoutNd):
    """In training mode, zeroes whole channels of ``(N, C, L)`` or ``(C, L)`` inputs, as
    ``torch.nn.Dropout1d``.

    >>> clgrad.nn.Dropout1d().eval()(clgrad.ones(1, 2, 3)).shape
    clgrad.Size([1, 2, 3])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``dropout1d(input, p, training)``."""
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """In training mode, zeroes whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    inputs, as ``torch.nn.Dropout3d``.

    >>> clgrad.nn.Dropout3d().eval()(clgrad.ones(1, 2, 1, 1, 3)).shape
    clgrad.Size([1, 2, 1, 1, 3])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``dropout3d(input, p, training)``."""
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalizing mean and variance, as
    ``torch.nn.AlphaDropout``.

    >>> clgrad.nn.AlphaDropout(0.2).eval()(clgrad.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``alpha_dropout(input, p, training)``."""
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels, as ``torch.nn.FeatureAlphaDropout``.

    >>> clgrad.nn.FeatureAlphaDropout(0.2).eval()(clgrad.ones(1, 2))
    tensor([[1., 1.]])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``feature_alpha_dropout(input, p, training)``."""
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
