"""Distances: CosineSimilarity, PairwiseDistance; and the sliding-block layers Fold, Unfold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


class CosineSimilarity(Module):
    """The cosine similarity of two inputs along ``dim``, as ``torch.nn.CosineSimilarity``.

    >>> cos = clgrad.nn.CosineSimilarity(dim=1)
    >>> cos(clgrad.tensor([[1.0, 0.0]]), clgrad.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """``cosine_similarity(x1, x2, dim, eps)``."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm distance of two inputs along the last dim, as
    ``torch.nn.PairwiseDistance``.

    >>> clgrad.nn.PairwiseDistance(p=1)(clgrad.tensor([[0.0, 0.0]]), clgrad.tensor([[3.0, 4.0]]))
    tensor([7.0000])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """``pairwise_distance(x1, x2, p, eps, keepdim)``."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Unfold(Module):
    """Extracts sliding blocks of ``(N, C, H, W)`` inputs into ``(N, C * kh * kw, L)``, as
    ``torch.nn.Unfold``.

    >>> clgrad.nn.Unfold(kernel_size=2)(clgrad.ones(1, 3, 4, 4)).shape
    clgrad.Size([1, 12, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        """``unfold(input, kernel_size, dilation, padding, stride)``."""
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )


class Fold(Module):
    """Sums ``(N, C * kh * kw, L)`` sliding blocks into ``(N, C, *output_size)``, as
    ``torch.nn.Fold``.

    >>> clgrad.nn.Fold(output_size=(4, 4), kernel_size=2)(clgrad.ones(1, 12, 9)).shape
    clgrad.Size([1, 3, 4, 4])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        """``fold(input, output_size, kernel_size, dilation, padding, stride)``."""
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )
