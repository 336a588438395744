"""Loss modules: each holds its options and calls the function of the same name."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Literal

from .. import functional as F
from .linear import Linear
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
        self.reduction = F._legacy_reduction(size_average, reduce, reduction)


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


class LinearCrossEntropyLoss(_WeightedLoss):
    """A linear layer and the cross entropy of its scores, as
    ``torch.nn.LinearCrossEntropyLoss``: ``linear`` (``in_features`` to ``num_classes`` times
    the ``out_features`` dims, a K-dimensional loss) holds the weights, and ``forward(input,
    target)`` is ``F.linear_cross_entropy`` of them with this module's ``weight``,
    ``reduction``, ``ignore_index``, ``label_smoothing`` and ``options``.

    >>> loss = clgrad.nn.LinearCrossEntropyLoss(4, 3)
    >>> loss(clgrad.ones(2, 4), clgrad.tensor([0, 2])).shape
    clgrad.Size([])
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: _Reduction = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options=None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        # Linear's weight is 2-D: the (C, *out_features, in) weight is a reshape of it
        self.linear = Linear(
            in_features,
            math.prod(out_features, start=num_classes),
            bias=bias,
            device=device,
            dtype=dtype,
        )
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``F.linear_cross_entropy`` of ``linear``'s weights with this module's options."""
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input,
            self.linear.weight.reshape((*shape, self.linear.in_features)),
            target,
            linear_bias=bias.reshape(shape) if bias is not None else None,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )


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
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
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
        return F.nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its deprecated name, as ``torch.nn.NLLLoss2d``: the same options and
    loss (``(N, C, H, W)`` inputs are what it was named for); making one gives torch's
    FutureWarning.

    >>> import warnings
    >>> logp = clgrad.zeros(1, 2, 1, 1).log_softmax(1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     loss = clgrad.nn.NLLLoss2d()
    >>> loss(logp, clgrad.zeros(1, 1, 1, dtype=clgrad.int64))
    tensor(0.6931)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: _Reduction = "mean",
    ) -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
            "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more "
            "details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss, as ``torch.nn.CTCLoss``: the negative
    log-likelihood of each target sequence under every alignment to its input's
    log-probabilities (``F.ctc_loss``); ``blank`` is the blank class.

    >>> loss = clgrad.nn.CTCLoss()
    >>> logp = clgrad.full((4, 1, 3), 1 / 3).log()
    >>> loss(logp, clgrad.tensor([[1, 2]]), [4], [2]).shape
    clgrad.Size([])
    """

    def __init__(
        self, blank: int = 0, reduction: _Reduction = "mean", zero_infinity: bool = False
    ) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths) -> Tensor:
        """``ctc_loss(log_probs, targets, input_lengths, target_lengths, ...)``."""
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )


class MSELoss(_Loss):
    """The squared error ``(input - target) ** 2``, element-wise, reduced by ``reduction``
    ("mean", "sum" or "none"), as ``torch.nn.MSELoss``.

    >>> loss = clgrad.nn.MSELoss()
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(1.4167)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``mse_loss(input, target, reduction)``."""
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """The absolute error ``|input - target|``, element-wise, reduced by ``reduction``, as
    ``torch.nn.L1Loss``.

    >>> loss = clgrad.nn.L1Loss()
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(0.8333)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``l1_loss(input, target, reduction)``."""
        return F.l1_loss(input, target, reduction=self.reduction)


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
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``0.5 * d ** 2`` where ``d = |input - target| < delta``, else
    ``delta * (d - 0.5 * delta)``, element-wise, reduced by ``reduction``, as
    ``torch.nn.HuberLoss``.

    >>> loss = clgrad.nn.HuberLoss(delta=1.0)
    >>> loss(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0]))
    tensor(0.5417)
    """

    def __init__(self, reduction: _Reduction = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
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
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


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
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence between log-probabilities ``input`` and ``target``
    (probabilities, or log-probabilities with ``log_target``), as ``torch.nn.KLDivLoss``;
    ``reduction="batchmean"`` divides the sum by the batch size.

    >>> loss = clgrad.nn.KLDivLoss(reduction="batchmean")
    >>> loss(clgrad.tensor([[0.25, 0.75]]).log(), clgrad.tensor([[0.5, 0.5]]))
    tensor(0.1438)
    """

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``kl_div(input, target, reduction=..., log_target=...)``."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-target * input))`` for targets in {1, -1}, as ``torch.nn.SoftMarginLoss``.

    >>> clgrad.nn.SoftMarginLoss()(clgrad.tensor([0.0, 2.0]), clgrad.tensor([1.0, -1.0]))
    tensor(1.4100)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``soft_margin_loss(input, target, reduction=...)``."""
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The one-versus-all logistic loss of 0/1 multi-label targets, as
    ``torch.nn.MultiLabelSoftMarginLoss``.

    >>> loss = clgrad.nn.MultiLabelSoftMarginLoss()
    >>> loss(clgrad.tensor([[1.0, -1.0]]), clgrad.tensor([[1.0, 0.0]]))
    tensor(0.3133)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``multilabel_soft_margin_loss(input, target, weight, reduction=...)``."""
        return F.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss of int64 class lists ended by -1, as
    ``torch.nn.MultiLabelMarginLoss``.

    >>> loss = clgrad.nn.MultiLabelMarginLoss()
    >>> loss(clgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), clgrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``multilabel_margin_loss(input, target, reduction=...)``."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss, as ``torch.nn.MultiMarginLoss``.

    >>> loss = clgrad.nn.MultiMarginLoss()
    >>> loss(clgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), clgrad.tensor([3]))
    tensor(0.3250)
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D "
                "instead"
            )
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``multi_margin_loss(input, target, p, margin, weight, reduction=...)``."""
        return F.multi_margin_loss(
            input, target, self.p, self.margin, self.weight, reduction=self.reduction
        )


class _MarginLoss(_Loss):
    """A loss whose one option besides the reduction is ``margin`` (MarginRankingLoss,
    CosineEmbeddingLoss; HingeEmbeddingLoss with its own default of 1)."""

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """``max(0, -target * (input1 - input2) + margin)``, as ``torch.nn.MarginRankingLoss``.

    >>> loss = clgrad.nn.MarginRankingLoss()
    >>> loss(clgrad.tensor([1.0, 2.0]), clgrad.tensor([2.0, 0.0]), clgrad.tensor([1.0, 1.0]))
    tensor(0.5000)
    """

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """``margin_ranking_loss(input1, input2, target, margin, reduction=...)``."""
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1, as
    ``torch.nn.HingeEmbeddingLoss``.

    >>> clgrad.nn.HingeEmbeddingLoss()(clgrad.tensor([0.3, 0.4]), clgrad.tensor([1.0, -1.0]))
    tensor(0.4500)
    """

    def __init__(
        self,
        margin: float = 1.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``hinge_embedding_loss(input, target, margin, reduction=...)``."""
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for -1, as
    ``torch.nn.CosineEmbeddingLoss``.

    >>> loss = clgrad.nn.CosineEmbeddingLoss()
    >>> loss(clgrad.tensor([[1.0, 0.0]]), clgrad.tensor([[1.0, 1.0]]), clgrad.tensor([1.0]))
    tensor(0.2929)
    """

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """``cosine_embedding_loss(input1, input2, target, margin, reduction=...)``."""
        return F.cosine_embedding_loss(
            input1, input2, target, self.margin, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` with the ``p``-norm distance, as
    ``torch.nn.TripletMarginLoss``.

    >>> loss = clgrad.nn.TripletMarginLoss()
    >>> loss(clgrad.zeros(1, 2), clgrad.ones(1, 2), clgrad.ones(1, 2))
    tensor(1.0000)
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """``triplet_margin_loss(anchor, positive, negative, ...)`` with this module's options."""
        return F.triplet_margin_loss(
            anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
            reduction=self.reduction,
        )  # fmt: skip


class TripletMarginWithDistanceLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` with any ``distance_function`` (default
    ``pairwise_distance``), as ``torch.nn.TripletMarginWithDistanceLoss``.

    >>> loss = clgrad.nn.TripletMarginWithDistanceLoss(margin=2.0)
    >>> loss(clgrad.zeros(1, 2), clgrad.zeros(1, 2), clgrad.zeros(1, 2))
    tensor(2.)
    """

    def __init__(
        self,
        *,
        distance_function=None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function = distance_function
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """``triplet_margin_with_distance_loss(anchor, positive, negative, ...)``."""
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


class PoissonNLLLoss(_Loss):
    """The Poisson negative log-likelihood, as ``torch.nn.PoissonNLLLoss``.

    >>> loss = clgrad.nn.PoissonNLLLoss()
    >>> loss(clgrad.tensor([0.0, 1.0]), clgrad.tensor([1.0, 2.0]))
    tensor(0.8591)
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """``poisson_nll_loss(input, target, log_input, full, eps=..., reduction=...)``."""
        return F.poisson_nll_loss(
            log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction
        )


class GaussianNLLLoss(_Loss):
    """The Gaussian negative log-likelihood given predicted means and variances, as
    ``torch.nn.GaussianNLLLoss``.

    >>> loss = clgrad.nn.GaussianNLLLoss()
    >>> loss(clgrad.tensor([[1.0, 2.0]]), clgrad.tensor([[1.5, 2.0]]), clgrad.ones(1, 1))
    tensor(0.0625)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        """``gaussian_nll_loss(input, target, var, full, eps, reduction)``."""
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)
