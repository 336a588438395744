"""Loss modules: each holds its options and calls the function of the same name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor

    _Reduction = Literal["mean", "sum", "none"]


class _Loss(Module):
    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
    ) -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            size_average = True if size_average is None else size_average
            reduce = True if reduce is None else reduce
            reduction = "none" if not reduce else ("mean" if size_average else "sum")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """The cross entropy between the unnormalized scores ``input`` (``(N, C)``, ``(C,)`` or
    ``(N, C, d1, ...)``) and ``target``, as ``torch.nn.CrossEntropyLoss``: ``log_softmax``
    over the class dim, then the negative log-likelihood. Targets are int64 class indices
    (``(N)``, ``()`` or ``(N, d1, ...)``; ``ignore_index`` ones are skipped) or class
    probabilities of the input's shape; ``weight`` rescales each class, ``label_smoothing``
    mixes in the uniform distribution, and ``reduction`` is "mean" (weighted), "sum" or "none".

    >>> loss = clgrad.nn.CrossEntropyLoss()
    >>> logits = clgrad.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
    >>> loss(logits, clgrad.tensor([0, 2]))
    tensor(0.1755)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``cross_entropy(input, target, ...)`` with this module's options."""
        return F.cross_entropy(
            input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood of int64 class-index targets given log-probabilities
    ``input`` (``(N, C)``, ``(C,)`` or ``(N, C, d1, ...)``), as ``torch.nn.NLLLoss``:
    ``-weight[t] * input[t]`` per element, ``ignore_index`` targets skipped, the "mean"
    divided by the sum of the weights used.

    >>> logp = clgrad.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]]).log_softmax(1)
    >>> clgrad.nn.NLLLoss()(logp, clgrad.tensor([0, 2]))
    tensor(0.1755)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``nll_loss(input, target, ...)`` with this module's options."""
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(_Loss):
    """The squared error ``(input - target) ** 2``, element-wise, reduced by ``reduction``
    ("mean", "sum" or "none"), as ``torch.nn.MSELoss``.

    >>> loss = clgrad.nn.MSELoss()
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(1.4167)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``mse_loss(input, target, reduction)``."""
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """The absolute error ``|input - target|``, element-wise, reduced by ``reduction``, as
    ``torch.nn.L1Loss``.

    >>> loss = clgrad.nn.L1Loss()
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(0.8333)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``l1_loss(input, target, reduction)``."""
        return F.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """``0.5 * d ** 2 / beta`` where ``d = |input - target| < beta``, else ``d - 0.5 * beta``,
    element-wise, reduced by ``reduction``, as ``torch.nn.SmoothL1Loss``.

    >>> loss = clgrad.nn.SmoothL1Loss()
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(0.5417)
    """

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``smooth_l1_loss(input, target, reduction, beta)``."""
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """``0.5 * d ** 2`` where ``d = |input - target| < delta``, else
    ``delta * (d - 0.5 * delta)``, element-wise, reduced by ``reduction``, as
    ``torch.nn.HuberLoss``.

    >>> loss = clgrad.nn.HuberLoss(delta=1.0)
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(0.5417)
    """

    def __init__(self, reduction: _Reduction = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``huber_loss(input, target, reduction, delta)``."""
        return F.huber_loss(input, target, self.reduction, self.delta)


class BCELoss(_WeightedLoss):
    """The binary cross entropy between probabilities ``input`` (in [0, 1]) and ``target`` of
    the same shape, ``-weight * (t * log(x) + (1 - t) * log(1 - x))`` with each log clamped at
    -100, reduced by ``reduction``, as ``torch.nn.BCELoss``.

    >>> loss = clgrad.nn.BCELoss()
    >>> loss(clgrad.tensor([0.9, 0.2, 0.6]), clgrad.tensor([1.0, 0.0, 1.0]))
    tensor(0.2798)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``binary_cross_entropy(input, target, weight, reduction)``."""
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """The binary cross entropy of ``sigmoid(input)`` and ``target``, computed stably from the
    logits ``input``, as ``torch.nn.BCEWithLogitsLoss``; ``pos_weight`` weights the positive
    term (per class, broadcast over the last dim) and ``weight`` each element.

    >>> loss = clgrad.nn.BCEWithLogitsLoss()
    >>> loss(clgrad.tensor([2.0, -1.0, 0.5]), clgrad.tensor([1.0, 0.0, 1.0]))
    tensor(0.3048)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight)``."""
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, self.reduction, self.pos_weight
        )
