"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian.

Each reduces to one backend primitive, ``sort`` (every row of a contiguous tensor, stably, NaN
as the largest value, as PyTorch orders): the dim is moved last and made contiguous, sorted, and
the result laid back. The selections are views and gathers of the sorted values, so their
gradients flow through those and then through ``Sort``'s (the gradient of each sorted value goes
back to the position its index names).
"""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes as D
from ..autograd.function import Function
from ..tensor import Tensor, wrap_dim
from .core import int_dim
from .indexing import ScatterAdd

# torch.return_types' names: ``values, indices = x.sort()`` and ``.values`` / ``.indices`` work
sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
median_result = namedtuple("median", ["values", "indices"])
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])


class Sort(Function):
    """Values and int64 indices of ``x`` sorted along ``dim`` (of a tensor with >= 1 dim)."""

    @staticmethod
    def forward(ctx, x, dim, descending):
        last = x.ndim - 1
        perm = list(range(x.ndim))
        perm[dim], perm[last] = last, dim
        src = x.permute(perm).contiguous() if dim != last else x.contiguous()
        values = Tensor._empty(src._shape, x.dtype, x.device)
        indices = Tensor._empty(src._shape, D.int64, x.device)
        if values.numel():
            x.device.backend.sort(
                values._record(), indices._record(), src._record(), bool(descending)
            )
        if dim != last:  # the sorted rows laid back along dim (a transposed layout, no copy)
            stride = list(values._stride)
            stride[dim], stride[last] = stride[last], stride[dim]
            values = Tensor._make(values._storage, x._shape, stride, 0, values.dtype)
            indices = Tensor._make(indices._storage, x._shape, stride, 0, D.int64)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim = x._shape, dim
        return values, indices

    @staticmethod
    def backward(ctx, g, _):
        (indices,) = ctx.saved_tensors
        z = Tensor._full(ctx.shape, 0, g.dtype, g.device)
        return ScatterAdd.apply(z, ctx.dim, indices, g), None, None


def _sorted(x, dim, descending):
    """(values, indices) of ``x`` sorted along ``dim``; a 0-d tensor is its own sort."""
    d = wrap_dim(int_dim("sort", dim), x.ndim)
    if x.ndim == 0:
        values, indices = Sort.apply(x.reshape(1), 0, descending)
        return values.reshape(()), indices.reshape(())
    return Sort.apply(x, d, descending)


def sort(
    input: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = False
) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of ``input`` sorted along ``dim``, ascending unless
    ``descending``, like ``torch.sort``. The sort is always stable (equal elements keep their
    order, ``stable=True``'s promise); NaN sorts as the largest value.

    >>> clgrad.sort(clgrad.tensor([3.0, float("nan"), 1.0, 2.0]))
    sort(values=tensor([ 1.,  2.,  3., nan]), indices=tensor([2, 3, 0, 1]))
    >>> clgrad.tensor([[1, 5], [7, 2]]).sort(dim=0, descending=True).indices
    tensor([[1, 0],
            [0, 1]])
    """
    return sort_result(*_sorted(input, dim, descending))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (``sort(...).indices``), like
    ``torch.argsort``.

    >>> clgrad.argsort(clgrad.tensor([3, 1, 2]))
    tensor([1, 2, 0])
    """
    return _sorted(input, dim, descending)[1]


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dim, like ``torch.msort``.

    >>> clgrad.msort(clgrad.tensor([[3, 1], [1, 2]]))
    tensor([[1, 1],
            [3, 2]])
    """
    return _sorted(input, 0, False)[0]


def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the ``k`` largest elements along ``dim`` (smallest with
    ``largest=False``), in sorted order, like ``torch.topk`` (NaN counts as the largest).

    >>> clgrad.topk(clgrad.tensor([1.0, 4.0, 2.0, 3.0]), 2)
    topk(values=tensor([4., 3.]), indices=tensor([1, 3]))
    """
    d = wrap_dim(int_dim("topk", dim), input.ndim)
    n = input._shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    values, indices = _sorted(input, d, largest)
    if input.ndim == 0:
        return topk_result(values, indices)
    return topk_result(values.narrow(d, 0, k), indices.narrow(d, 0, k))


def _pick(values, indices, d, pos, keepdim, result):
    """The element at position ``pos`` along ``d`` of the sorted ``values``/``indices`` (an
    int, or an int64 tensor with a size-1 dim ``d``: one position per row)."""
    if isinstance(pos, int):
        v, i = values.narrow(d, pos, 1), indices.narrow(d, pos, 1)
    else:
        v, i = values.gather(d, pos), indices.gather(d, pos)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return result(v, i)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the ``k``-th smallest element (from 1) along ``dim``, like
    ``torch.kthvalue``.

    >>> clgrad.kthvalue(clgrad.tensor([4.0, 1.0, 3.0, 2.0]), 2)
    kthvalue(values=tensor(2.), indices=tensor(3))
    """
    d = wrap_dim(int_dim("kthvalue", dim), input.ndim)
    n = input._shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = _sorted(input, d, False)
    if input.ndim == 0:
        return kthvalue_result(values, indices)
    return _pick(values, indices, d, k - 1, keepdim, kthvalue_result)


class EvenlyDistributed(Function):
    """A value chosen among ``x``'s elements (``median()`` over all of them): the gradient
    is shared evenly by every element equal to it (NaN equal to NaN), as PyTorch's
    ``evenly_distribute_backward``."""

    @staticmethod
    def forward(ctx, x, value):
        mask = x == value
        if x.dtype.is_floating_point:
            mask = mask | (x.isnan() & value.isnan())
        ctx.mask = mask
        return value.clone()

    @staticmethod
    def backward(ctx, g):
        mask = ctx.mask
        return mask * (g / mask.sum()), None


def _median(input, dim, keepdim, skip_nan, name, result):
    x = input
    if dim is None:  # over every element: the value only
        x = input.reshape(-1)
        if x.numel() == 0:
            value = Tensor._full((), float("nan"), input.dtype, input.device)
        else:
            value = _median(x.detach(), 0, False, skip_nan, name, result).values
        return EvenlyDistributed.apply(input, value)
    d = wrap_dim(int_dim(name, dim), input.ndim)
    if input.ndim == 0:
        values, indices = _sorted(input, 0, False)
        return result(values, indices)
    n = x._shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = _sorted(x, d, False)
    if not x.dtype.is_floating_point:
        return _pick(values, indices, d, (n - 1) // 2, keepdim, result)
    # NaNs sort last: ``count`` values come before them in each row
    count = x.isnan().logical_not().sum(d, keepdim=True)
    if skip_nan:  # the median of the values; a row of NaN gives its first
        pos = ((count - 1).clamp_min(0)) // 2
    else:  # a row holding NaN gives its first NaN
        pos = (count < n) * count + (count == n) * ((n - 1) // 2)
    return _pick(values, indices, d, pos, keepdim, result)


def median(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median of ``input`` (NaN where there is a NaN); with ``dim``, ``(values,
    indices)`` along it, like ``torch.median``.

    >>> clgrad.median(clgrad.tensor([4.0, 1.0, 3.0, 2.0]))
    tensor(2.)
    >>> clgrad.tensor([[1, 5, 3]]).median(dim=1)
    median(values=tensor([3]), indices=tensor([2]))
    """
    return _median(input, dim, keepdim, False, "median", median_result)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median of the values of ``input`` that are not NaN, like
    ``torch.nanmedian``.

    >>> clgrad.nanmedian(clgrad.tensor([4.0, float("nan"), 1.0]))
    tensor(1.)
    """
    return _median(input, dim, keepdim, True, "nanmedian", nanmedian_result)
