"""``nn.AdaptiveLogSoftmaxWithLoss``: the efficient softmax of Grave et al. for large
vocabularies. Frequent classes (the shortlist) are scored by the head directly; each rarer
cluster gets one head logit, and its members are scored by a smaller projection only for the
rows whose target lies in it."""

from __future__ import annotations

from collections import namedtuple

from ...ops.movement import cat
from ...ops.reduction import argmax
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """``AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0,
    head_bias=False)``, as torch's: ``forward(input, target)`` returns ``(output, loss)``, the
    target log-probability of each row and their negated mean; ``log_prob(input)`` gives every
    class's, ``predict(input)`` the most likely class. Cluster ``i`` (classes ``cutoffs[i]`` to
    ``cutoffs[i+1]``) projects to ``in_features // div_value ** (i + 1)`` features first.

    >>> asm = clgrad.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
    >>> out, loss = asm(clgrad.randn(3, 8), clgrad.tensor([0, 5, 9]))
    >>> out.shape, loss.shape
    (clgrad.Size([3]), clgrad.Size([]))
    >>> asm.log_prob(clgrad.randn(3, 8)).exp().sum(1).allclose(clgrad.ones(3))
    True
    """

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs,
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **kw),
                    Linear(hidden, size, bias=False, **kw),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_, target_) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size",
                    input_.size(),
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size",
                    input_.size(),
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        rows = target.size(0)
        output = input.new_zeros(rows)
        head_index = target.new_empty(rows)  # the head logit each row's target goes through
        covered = 0
        bounds = [0, *self.cutoffs]
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            in_range = (target >= low) & (target < high)
            where = in_range.nonzero().squeeze()
            if where.numel() == 0:
                continue
            if i == 0:  # the shortlist: the class's own head logit
                head_index.index_copy_(0, where, target[in_range])
            else:  # the cluster's head logit, plus the class's log-probability inside it
                scores = self.tail[i - 1](input.index_select(0, where))
                inside = F.log_softmax(scores, dim=1).gather(
                    1, (target[in_range] - low).unsqueeze(1)
                )
                head_index.index_fill_(0, where, self.shortlist_size + i - 1)
                output.index_copy_(0, where, inside.squeeze(1))
            covered += where.numel()
        if covered != rows:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        head = F.log_softmax(self.head(input), dim=1)
        output += head.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, : self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster = F.log_softmax(projection(input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, dim=1)

    def log_prob(self, input):
        """Every class's log-probability for a minibatch ``(N, in_features)``: ``(N,
        n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row of a minibatch: the head's argmax where it lies
        in the shortlist, else the argmax of the full log-probabilities."""
        head_output = self.head(input)
        best = argmax(head_output, dim=1)
        rare = best >= self.shortlist_size
        if bool(rare.any()):
            best[rare] = argmax(self._full_log_prob(input[rare], head_output[rare]), dim=1)
        return best
