"""Sparse COO tensors, as ``torch.sparse``'s (``clgrad.sparse`` is their public namespace):
``sparse_coo_tensor(indices, values, size)``, the legacy ``torch.sparse.FloatTensor(indices,
values, size)``, ``Tensor.to_sparse()``, and the
products graph networks use (``torch.sparse.mm``, ``torch.spmm``, ``sparse @ dense``).

A sparse tensor keeps its ``indices`` (int64, ``(sparse_dim, nnz)``) and ``values`` (``(nnz,
*dense_shape)``) as ordinary tensors on its device; every operation is written with Tensor ops
on them, so gradients reach the values (and the dense operand of a product) through autograd:
``mm`` gathers the dense rows each entry reads and adds the products into the rows they belong
to (``index_add``), which costs ``nnz`` row operations, not a dense matrix's size.

Indices are checked against the size where the tensor is made (one read of their extremes), so
no kernel indexes outside the memory it was given, as PyTorch's invariant checks would.
"""

from __future__ import annotations

import math
from numbers import Number

from .. import dtypes as D
from ..dtypes import layout
from ..tensor import Size, Tensor
from . import creation as _creation
from . import indexing as _indexing
from . import sorting as _sorting
from .movement import cat, stack
from .nn_ops import EmbeddingFn

sparse_coo = layout("sparse_coo")

__all__ = ["addmm", "mm", "sparse_coo", "sum", "FloatTensor", "DoubleTensor", "LongTensor"]

# torch's message for sparse + dense (only dense + sparse is defined)
SPARSE_PLUS_DENSE = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."


class SparseCooTensor:
    """A tensor in PyTorch's ``sparse_coo`` layout (see the module docstring): ``indices``
    (``sparse_dim`` x ``nnz``) and ``values`` (``nnz`` x the dense dims), of ``shape``.

    >>> s = clgrad.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> s.to_dense()
    tensor([[0., 0., 3.],
            [4., 0., 5.]])
    >>> s.is_sparse, s.layout, s._nnz()
    (True, clgrad.sparse_coo, 3)
    """

    is_sparse = True
    is_sparse_csr = False
    layout = sparse_coo

    def __init__(self, indices: Tensor, values: Tensor, shape, coalesced: bool = False):
        self._indices_t, self._values_t = indices, values
        self.shape = Size(shape)
        # the autograd engine's and nodes' shape checks read a gradient's ``_shape``
        self._shape = tuple(self.shape)
        self._coalesced = coalesced

    # ---- what a tensor tells about itself ---------------------------------------------------
    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return len(self.shape)

    ndim = property(dim)
    dtype = property(lambda self: self._values_t.dtype)
    device = property(lambda self: self._values_t.device)
    requires_grad = property(lambda self: self._values_t.requires_grad)
    grad_fn = property(lambda self: self._values_t.grad_fn)
    is_cuda = property(lambda self: self._values_t.is_cuda)

    def sparse_dim(self) -> int:
        return self._indices_t.shape[0]

    def dense_dim(self) -> int:
        return self._values_t.ndim - 1

    def _nnz(self) -> int:
        return self._indices_t.shape[1]

    def indices(self) -> Tensor:
        """The indices, of a coalesced tensor (as torch, which refuses an uncoalesced one)."""
        if not self._coalesced:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._indices_t

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._values_t

    def _indices(self) -> Tensor:
        return self._indices_t

    def _values(self) -> Tensor:
        return self._values_t

    def is_coalesced(self) -> bool:
        return self._coalesced

    def numel(self) -> int:
        return math.prod(self.shape)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the values are complex, as ``Tensor.is_complex``.

        >>> clgrad.sparse_coo_tensor([[0]], [1.0], (2,)).is_complex()
        False
        """
        return self.dtype.is_complex

    # ---- conversions ------------------------------------------------------------------------
    def _with_values(self, values: Tensor, coalesced: bool | None = None) -> SparseCooTensor:
        keep = self._coalesced if coalesced is None else coalesced
        return SparseCooTensor(self._indices_t, values, self.shape, keep)

    def to(self, *args, **kwargs) -> SparseCooTensor:
        values = self._values_t.to(*args, **kwargs)
        indices = self._indices_t.to(values.device)
        return SparseCooTensor(indices, values, self.shape, self._coalesced)

    def cuda(self, device=None) -> SparseCooTensor:
        return self.to("cuda" if device is None else device)

    def cpu(self) -> SparseCooTensor:
        return self.to("cpu")

    def float(self) -> SparseCooTensor:
        return self._with_values(self._values_t.float())

    def double(self) -> SparseCooTensor:
        return self._with_values(self._values_t.double())

    def detach(self) -> SparseCooTensor:
        return self._with_values(self._values_t.detach())

    def clone(self) -> SparseCooTensor:
        return SparseCooTensor(
            self._indices_t.clone(), self._values_t.clone(), self.shape, self._coalesced
        )

    def requires_grad_(self, requires_grad: bool = True) -> SparseCooTensor:
        self._values_t.requires_grad_(requires_grad)
        return self

    def detach_(self) -> SparseCooTensor:
        """Detaches the values in place (an optimizer's ``zero_grad`` on a sparse gradient).

        >>> s = clgrad.sparse_coo_tensor([[0]], clgrad.ones(1, requires_grad=True), (2,))
        >>> s.detach_().requires_grad
        False
        """
        self._values_t = self._values_t.detach()
        return self

    def zero_(self) -> SparseCooTensor:
        """No entries left (``nnz`` 0), as torch zeroes a sparse tensor: what
        ``zero_grad(set_to_none=False)`` does to a sparse gradient.

        >>> s = clgrad.sparse_coo_tensor([[1]], [2.0], (3,))
        >>> s.zero_()._nnz(), s.to_dense()
        (0, tensor([0., 0., 0.]))
        """
        self._indices_t = self._indices_t[:, :0]
        self._values_t = self._values_t.detach()[:0]
        self._coalesced = True
        return self

    def coalesce(self) -> SparseCooTensor:
        """The same tensor with its indices sorted and duplicates summed, as
        ``Tensor.coalesce``.

        >>> s = clgrad.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0], (2,))
        >>> c = s.coalesce()
        >>> c.indices(), c.values()
        (tensor([[0, 1]]), tensor([2., 4.]))
        """
        if self._coalesced:
            return self
        keys = self._linear()
        unique, inverse = _sorting.unique(keys, return_inverse=True)
        values = _creation.zeros(
            (unique.shape[0], *self._values_t.shape[1:]),
            dtype=self.dtype,
            device=self.device,
        ).index_add(0, inverse, self._values_t)
        return SparseCooTensor(self._unlinear(unique), values, self.shape, True)

    def _linear(self) -> Tensor:
        """Each entry's row-major position over the sparse dims."""
        keys = _creation.zeros(self._nnz(), dtype=D.int64, device=self.device)
        for d in range(self.sparse_dim()):
            keys = keys * self.shape[d] + self._indices_t[d]
        return keys

    def _unlinear(self, keys: Tensor) -> Tensor:
        rows = []
        for d in reversed(range(self.sparse_dim())):
            rows.append(keys % self.shape[d])
            keys = keys.div(self.shape[d], rounding_mode="floor")
        return stack(rows[::-1])

    def to_dense(self) -> Tensor:
        """The dense tensor (repeated indices add up), differentiable in the values."""
        flat = _creation.zeros(
            (math.prod(self.shape[: self.sparse_dim()]), *self._values_t.shape[1:]),
            dtype=self.dtype,
            device=self.device,
        )
        return flat.index_add(0, self._linear(), self._values_t).reshape(self.shape)

    def to_sparse(self, sparse_dim: int | None = None) -> SparseCooTensor:
        return self

    # ---- arithmetic -------------------------------------------------------------------------
    def t(self) -> SparseCooTensor:
        if self.dim() != 2 or self.sparse_dim() != 2:
            raise RuntimeError("t() expects a 2-D sparse tensor with 2 sparse dims")
        indices = stack([self._indices_t[1], self._indices_t[0]])
        return SparseCooTensor(indices, self._values_t, (self.shape[1], self.shape[0]))

    def transpose(self, dim0: int, dim1: int) -> SparseCooTensor:
        if sorted((dim0 % self.dim(), dim1 % self.dim())) != [0, 1]:
            raise NotImplementedError("clgrad transposes a sparse matrix's two sparse dims only")
        return self.t()

    def mm(self, other: Tensor) -> Tensor:
        return mm(self, other)

    def matmul(self, other: Tensor) -> Tensor:
        return mm(self, other)

    __matmul__ = matmul

    def sum(self, dim=None) -> Tensor | SparseCooTensor:
        return sum(self, dim)

    def add(self, other, *, alpha=1) -> SparseCooTensor:
        """``self + alpha * other`` for a sparse ``other`` of the same size: the entries of both,
        uncoalesced, as torch's sparse addition. A dense ``other`` raises torch's RuntimeError
        (``dense + sparse`` is the defined order).

        >>> a = clgrad.sparse_coo_tensor([[0]], [1.0], (2,))
        >>> a.add(clgrad.sparse_coo_tensor([[0, 1]], [1.0, 3.0], (2,)), alpha=2).to_dense()
        tensor([3., 6.])
        """
        if not isinstance(other, SparseCooTensor):
            raise RuntimeError(SPARSE_PLUS_DENSE)
        return self + (other if alpha == 1 else other * alpha)

    def add_(self, other, *, alpha=1) -> SparseCooTensor:
        """``add`` in place: this tensor takes the sum's entries.

        >>> s = clgrad.sparse_coo_tensor([[0]], [1.0], (2,))
        >>> s.add_(clgrad.sparse_coo_tensor([[1]], [2.0], (2,))).to_dense()
        tensor([1., 2.])
        """
        total = self.add(other, alpha=alpha)
        self._indices_t, self._values_t, self._coalesced = total._indices_t, total._values_t, False
        return self

    def mul_(self, other) -> SparseCooTensor:
        """Scales the values in place by a scalar (a sparse momentum buffer's decay).

        >>> clgrad.sparse_coo_tensor([[1]], [2.0], (2,)).mul_(0.5).to_dense()
        tensor([0., 1.])
        """
        self._values_t = (self * other)._values_t
        return self

    def _gather(self, dense: Tensor) -> Tensor:
        """The rows of ``dense`` at this tensor's entries: for a coalesced tensor, the values
        of torch's ``dense.sparse_mask(self)`` (what sparse optimizers read of their state)."""
        rows = math.prod(self.shape[: self.sparse_dim()])
        flat = dense.reshape((rows, *self._values_t.shape[1:]))
        return _indexing.index_select(flat, 0, self._linear().to(dense.device))

    def _add_into(self, dense: Tensor, alpha=1) -> Tensor:
        """Adds ``alpha * self`` into ``dense`` in place (``dense.add_(sparse)`` in torch): the
        rows it holds, ``nnz`` row additions, not a dense tensor of its size."""
        values = self._values_t if self.dtype is dense.dtype else self._values_t.to(dense.dtype)
        if dense.is_contiguous():
            rows = math.prod(self.shape[: self.sparse_dim()])
            flat = dense.view((rows, *self._values_t.shape[1:]))
            keys, values = self._linear().to(dense.device), values.to(dense.device)
            flat.index_add_(0, keys, values, alpha=alpha)
        else:  # a strided tensor: its rows are not one flat view to index
            dense.add_(self._with_values(values).to_dense().to(dense.device), alpha=alpha)
        return dense

    def __mul__(self, other) -> SparseCooTensor:
        if isinstance(other, Number) or (isinstance(other, Tensor) and other.ndim == 0):
            return self._with_values(self._values_t * other)
        raise NotImplementedError("clgrad multiplies a sparse tensor by a scalar only")

    __rmul__ = __mul__

    def __truediv__(self, other) -> SparseCooTensor:
        if isinstance(other, Number) or (isinstance(other, Tensor) and other.ndim == 0):
            return self._with_values(self._values_t / other)
        raise NotImplementedError("clgrad divides a sparse tensor by a scalar only")

    def __neg__(self) -> SparseCooTensor:
        return self._with_values(-self._values_t)

    def __add__(self, other):
        if isinstance(other, SparseCooTensor):
            if other.shape != self.shape:
                raise RuntimeError(
                    f"add: expected 'self' and 'other' to have same size, but self has size "
                    f"{list(self.shape)} while other has size {list(other.shape)}"
                )
            indices = cat([self._indices_t, other._indices_t.to(self.device)], 1)
            values = cat([self._values_t, other._values_t.to(self.device)], 0)
            return SparseCooTensor(indices, values, self.shape)
        return self.to_dense() + other  # a dense sum, as torch's sparse + dense

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __repr__(self) -> str:
        indices = repr(self._indices_t).replace("\n", "\n" + " " * 15)
        values = repr(self._values_t).replace("\n", "\n" + " " * 7)
        grad = self._values_t.grad_fn
        tail = f",\n       grad_fn=<{grad.name()}>" if grad is not None else ""
        if grad is None and self.requires_grad:
            tail = ", requires_grad=True"
        dtype = "" if self.dtype is D.get_default_dtype() else f", dtype={self.dtype}"
        return (
            f"tensor(indices={indices},\n       values={values},\n       size={tuple(self.shape)}, "
            f"nnz={self._nnz()}{dtype}, layout={sparse_coo}{tail})"
        )


def _as_long(indices, device) -> Tensor:
    if isinstance(indices, Tensor):
        if indices.dtype is not D.int64:
            raise RuntimeError(f"indices must be an int64 tensor, got {indices.dtype}")
        return indices.to(device)
    return _creation.tensor(indices, dtype=D.int64, device=device)


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    check_invariants=None,
    is_coalesced=None,
) -> SparseCooTensor:
    """A sparse COO tensor from ``indices`` (``(sparse_dim, nnz)`` ints) and ``values``
    (``(nnz, *dense_dims)``), of ``size`` (inferred from the largest index where not given),
    as ``torch.sparse_coo_tensor``. Indices outside ``size`` raise RuntimeError.

    >>> clgrad.sparse_coo_tensor([[0, 2]], [1.0, 5.0]).to_dense()
    tensor([1., 0., 5.])
    """
    if not isinstance(values, Tensor):
        values = _creation.tensor(values, dtype=dtype, device=device)
    elif dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    indices = _as_long(indices, values.device)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dim, nnz = indices.shape
    if values.ndim < 1 or values.shape[0] != nnz:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz "
            f"from values: {values.shape[0] if values.ndim else 0}"
        )
    dense = tuple(values.shape[1:])
    lows = indices.amin(1).tolist() if nnz else [0] * sparse_dim
    highs = indices.amax(1).tolist() if nnz else [-1] * sparse_dim
    if size is None:
        size = tuple(h + 1 for h in highs) + dense
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + len(dense) or size[sparse_dim:] != dense:
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
            f"({len(dense)}), but got {len(size)}"
        )
    for d, (lo, hi) in enumerate(zip(lows, highs)):
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= size[d]:
            raise RuntimeError(
                f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                f"index {hi}"
            )
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return SparseCooTensor(indices, values, size, bool(is_coalesced))


def to_sparse(dense: Tensor, sparse_dim: int | None = None) -> SparseCooTensor:
    """The nonzero entries of ``dense`` as a coalesced sparse tensor, as ``Tensor.to_sparse``.

    >>> clgrad.sparse.to_sparse(clgrad.tensor([[0.0, 1.0], [2.0, 0.0]])).values()
    tensor([1., 2.])
    """
    sparse_dim = dense.ndim if sparse_dim is None else sparse_dim
    lead = dense.reshape((math.prod(dense.shape[:sparse_dim]), -1))
    rows = (lead != 0).any(1).nonzero().reshape(-1)
    positions = []
    keys = rows
    for d in reversed(range(sparse_dim)):
        positions.append(keys % dense.shape[d])
        keys = keys.div(dense.shape[d], rounding_mode="floor")
    indices = (
        stack(positions[::-1])
        if positions
        else _creation.zeros((0, rows.shape[0]), dtype=D.int64, device=dense.device)
    )
    values = _indexing.index_select(lead, 0, rows).reshape((-1, *dense.shape[sparse_dim:]))
    return SparseCooTensor(indices, values, dense.shape, True)


def mm(mat1: SparseCooTensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for a 2-D sparse ``mat1`` and a dense ``mat2``, as ``torch.sparse.mm``
    and ``torch.spmm``: differentiable in ``mat2`` and in ``mat1``'s values.

    >>> a = clgrad.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> clgrad.sparse.mm(a, clgrad.tensor([[1.0], [10.0]]))
    tensor([[20.],
            [ 3.]])
    """
    if not isinstance(mat1, SparseCooTensor):
        return mat1 @ mat2
    if isinstance(mat2, SparseCooTensor):
        mat2 = mat2.to_dense()
    if mat1.dim() != 2 or mat1.sparse_dim() != 2 or mat2.ndim not in (1, 2):
        raise RuntimeError(
            f"sparse.mm: expected a 2-D sparse matrix and a 1-D or 2-D dense one, got sizes "
            f"{list(mat1.shape)} and {list(mat2.shape)}"
        )
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{'x'.join(map(str, mat2.shape))})"
        )
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(
            f"expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}"
        )
    rows, cols = mat1._indices_t[0], mat1._indices_t[1]
    vector = mat2.ndim == 1
    dense = mat2.unsqueeze(1) if vector else mat2
    products = mat1._values_t.unsqueeze(1) * _indexing.index_select(dense, 0, cols)
    out = _creation.zeros(
        (mat1.shape[0], dense.shape[1]), dtype=products.dtype, device=products.device
    ).index_add(0, rows, products)
    return out.squeeze(1) if vector else out


def addmm(input: Tensor, mat1: SparseCooTensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for a sparse ``mat1``, as
    ``torch.sparse.addmm``.

    >>> a = clgrad.sparse_coo_tensor([[0], [0]], [2.0], (1, 1))
    >>> clgrad.sparse.addmm(clgrad.ones(1, 1), a, clgrad.ones(1, 1), alpha=3)
    tensor([[7.]])
    """
    return input * beta + mm(mat1, mat2) * alpha


def sum(input: SparseCooTensor, dim=None, dtype=None):
    """The sum of a sparse tensor's entries (a dense 0-d tensor), or over ``dim`` (a sparse
    tensor of the dims left, as torch's), as ``torch.sparse.sum``.

    >>> s = clgrad.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> clgrad.sparse.sum(s), clgrad.sparse.sum(s, 1).to_dense()
    (tensor(12.), tensor([3., 9.]))
    """
    values = input._values_t if dtype is None else input._values_t.to(dtype)
    if dim is None:
        return values.sum()
    dims = sorted({d % input.dim() for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dims = [d for d in dims if d < input.sparse_dim()]
    dense_dims = [d - input.sparse_dim() + 1 for d in dims if d >= input.sparse_dim()]
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(input.sparse_dim()) if d not in sparse_dims]
    shape = [input.shape[d] for d in range(input.dim()) if d not in dims]
    if not kept:  # every sparse dim summed: a dense tensor of the dense dims
        return values.sum(0)
    indices = input._indices_t[kept]
    return SparseCooTensor(indices, values, shape).coalesce()


def _legacy(dtype):
    def make(indices, values, size=None, *, device=None):
        """``torch.sparse.FloatTensor(indices, values, size)``, PyTorch's legacy form of
        ``sparse_coo_tensor``."""
        return sparse_coo_tensor(indices, values, size, dtype=dtype, device=device)

    return make


FloatTensor = _legacy(D.float32)
DoubleTensor = _legacy(D.float64)
LongTensor = _legacy(D.int64)


class EmbeddingSparseFn(EmbeddingFn):
    """``weight[idx]`` whose weight gradient is a sparse COO tensor, as torch's embedding with
    ``sparse=True``: one entry per lookup (the indices as looked up, uncoalesced, the
    ``padding_idx`` ones left out) holding that lookup's gradient row. An optimizer then
    touches only those rows. ``scale_grad_by_freq`` raises torch's RuntimeError at backward."""

    @staticmethod
    def forward(ctx, weight, idx, padding_idx, scale_grad_by_freq=False):
        # a weight computed from others gets a dense gradient: clgrad's other backward
        # functions take dense gradients only (its leaf's .grad then is dense)
        ctx.leaf = weight.grad_fn is None
        return EmbeddingFn.forward(ctx, weight, idx, padding_idx, scale_grad_by_freq)

    @staticmethod
    def backward(ctx, g):
        if not ctx.leaf:
            return EmbeddingFn.backward(ctx, g)
        (idx,) = ctx.saved_tensors
        num, padding_idx, scale_grad_by_freq = ctx.meta
        flat = idx.reshape(-1)
        rows = g.reshape((flat.shape[0], g.shape[-1]))
        if scale_grad_by_freq:  # torch's refusal, at backward as there
            raise RuntimeError(
                "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
            )
        if padding_idx is not None:
            keep = (flat != padding_idx).nonzero().reshape(-1)
            flat = _indexing.index_select(flat, 0, keep)
            rows = _indexing.index_select(rows, 0, keep)
        grad = SparseCooTensor(flat.unsqueeze(0), rows, (num, g.shape[-1]))
        return grad, None, None, None
