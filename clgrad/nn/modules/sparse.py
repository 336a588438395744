"""Embedding: a lookup table of num_embeddings vectors; EmbeddingBag: reductions over bags of
looked-up rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

if TYPE_CHECKING:
    from ...device import Device
    from ...dtypes import dtype as DType
    from ...tensor import Tensor


class _EmbeddingTable(Module):
    """What Embedding and EmbeddingBag share: the ``(num_embeddings, embedding_dim)`` weight
    (given as ``_weight`` or drawn by ``reset_parameters``) and the ``padding_idx`` row."""

    @staticmethod
    def _wrap_padding_idx(padding_idx, num_embeddings, name):
        """``padding_idx`` made non-negative; ``name`` is how torch spells it in the error
        (its two modules differ: "Padding_idx" / "padding_idx")."""
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError(f"{name} must be within num_embeddings")
            padding_idx %= num_embeddings
        return padding_idx

    def _init_weight(self, _weight, requires_grad, device, dtype):
        """Sets ``weight``: ``_weight`` itself (shape checked) or a fresh N(0, 1) table."""
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is None:
            weight = empty(*shape, device=device, dtype=dtype)
            self.weight = Parameter(weight, requires_grad=requires_grad)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != shape:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=requires_grad)

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` from N(0, 1), zeroing the ``padding_idx`` row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from ...autograd.grad_mode import no_grad

            with no_grad():
                self.weight[self.padding_idx].fill_(0)


class Embedding(_EmbeddingTable):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, as
    ``torch.nn.Embedding``: an integer index tensor of any shape ``(*)`` gives the rows
    ``weight[input]``, of shape ``(*, embedding_dim)``. ``weight`` is initialized from N(0, 1),
    with the ``padding_idx`` row (which gets no gradient) set to zeros; ``max_norm`` renormalizes
    the looked-up rows in place; ``scale_grad_by_freq`` divides each lookup's gradient by its
    index's count in the batch. With ``sparse`` the weight's gradient is a sparse COO tensor of
    the looked-up rows (for ``optim.SparseAdam``, ``SGD``, ``Adagrad``).

    >>> emb = clgrad.nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(clgrad.tensor([[1, 2], [0, 9]])).shape
    clgrad.Size([2, 2, 3])
    >>> emb(clgrad.tensor([0])).tolist()
    [[0.0, 0.0, 0.0]]
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        padding_idx = self._wrap_padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self._init_weight(_weight, not _freeze, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        """``embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)``."""
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose weight is the 2-d tensor ``embeddings`` (its storage shared),
        frozen (``requires_grad=False``) unless ``freeze=False``, as
        ``torch.nn.Embedding.from_pretrained``.

        >>> table = clgrad.tensor([[0.0, 1.0], [2.0, 3.0]])
        >>> emb = clgrad.nn.Embedding.from_pretrained(table)
        >>> emb(clgrad.tensor([1])), emb.weight.requires_grad
        (tensor([[2., 3.]]), False)
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )


class EmbeddingBag(_EmbeddingTable):
    """Sums, means or maxima of bags of embeddings without materializing the looked-up rows
    per bag, as ``torch.nn.EmbeddingBag``: ``forward(input, offsets, per_sample_weights)``
    with a 2-d ``(B, L)`` input or a 1-d input split at ``offsets``. ``weight`` is
    initialized from N(0, 1).

    >>> bag = clgrad.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(clgrad.tensor([1, 2, 4, 5]), clgrad.tensor([0, 2])).shape
    clgrad.Size([2, 3])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = self._wrap_padding_idx(padding_idx, num_embeddings, "padding_idx")
        self._init_weight(_weight, True, device, dtype)

    def forward(
        self,
        input: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        """``embedding_bag(input, weight, offsets, ...)`` with this module's options."""
        return F.embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
            self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx,
        )  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag over the 2-d ``embeddings``, frozen unless ``freeze=False``, as
        ``torch.nn.EmbeddingBag.from_pretrained``.

        >>> bag = clgrad.nn.EmbeddingBag.from_pretrained(clgrad.eye(2), mode="sum")
        >>> bag(clgrad.tensor([[0, 1]]))
        tensor([[1., 1.]])
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
            include_last_offset, padding_idx,
        )  # fmt: skip
        bag.weight.requires_grad_(not freeze)
        return bag
