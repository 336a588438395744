"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian.

Each reduces to one backend primitive, ``sort`` (every row of a contiguous tensor, stably, NaN
as the largest value, as PyTorch orders): the dim is moved last and made contiguous, sorted, and
the result laid back. The selections are views and gathers of the sorted values, so their
gradients flow through those and then through ``Sort``'s (the gradient of each sorted value goes
back to the position its index names).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, index_arg, wrap_dim
from .core import check_out, int_dim, refuse_bool, with_out, write_out
from .creation import arange, full, linspace, ones, tensor, zeros
from .elementwise import where
from .indexing import ScatterAdd
from .movement import cat
from .registry import SCALAR_TYPE_NAMES
from .results import return_type

# torch.return_types' names: ``values, indices = x.sort()`` and ``.values`` / ``.indices`` work
sort_result = return_type("sort", ["values", "indices"])
topk_result = return_type("topk", ["values", "indices"])
kthvalue_result = return_type("kthvalue", ["values", "indices"])
median_result = return_type("median", ["values", "indices"])
nanmedian_result = return_type("nanmedian", ["values", "indices"])


class Sort(Function):
    """Values and int64 indices of ``x`` sorted along ``dim`` (of a tensor with >= 1 dim)."""

    @staticmethod
    def forward(ctx, x, dim, descending):
        values, indices = _sorted_rows(x, dim, descending)
        values, indices = _laid_back(values, dim), _laid_back(indices, dim)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim = x._shape, dim
        return values, indices

    @staticmethod
    def backward(ctx, g, _):
        (indices,) = ctx.saved_tensors
        z = Tensor._full(ctx.shape, 0, g.dtype, g.device)
        return ScatterAdd.apply(z, ctx.dim, indices, g), None, None


class Topk(Sort):
    """The first ``k`` of ``Sort`` along ``dim`` (``largest``: descending), in one node as
    PyTorch's TopkBackward0: the gradient goes to their places (as the sort's node scattering
    a slice's gradient, zeros past ``k``, did)."""

    @staticmethod
    def forward(ctx, x, dim, largest, k):
        picked = _select(x, dim, largest, k)
        if picked is None:  # the first k of each sorted row, laid back row-major as
            # PyTorch's results (a narrow of the whole sort would refuse their .view())
            rows = _sorted_rows(x, dim, largest)
            values, indices = (_laid_back(r.narrow(-1, 0, k), dim) for r in rows)
        else:
            values, indices = picked
        ctx.shape, ctx.dim = x._shape, dim
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, _):
        return *Sort.backward(ctx, g, _), None


def _select(x, dim, largest, k):
    """(values, indices) of the first ``k`` along ``dim`` in the sort's order, through the
    backend's selection (``Backend.topk``), or None where it has none for this case."""
    n = x._shape[dim]
    if not n or not x.device.backend.selects_topk(x.numel() // n, n, k):
        return None
    src = _rows_along(x, dim)
    shape = src._shape[:-1] + (k,)
    values = Tensor._empty(shape, x.dtype, x.device)
    indices = Tensor._empty(shape, D.int64, x.device)
    if values.numel():
        x.device.backend.topk(values._record(), indices._record(), src._record(), k, largest)
    return _laid_back(values, dim), _laid_back(indices, dim)


def _sorted_rows(x, dim, descending):
    """(values, indices) of ``x``'s rows along ``dim`` (``_rows_along``'s) each sorted."""
    src = _rows_along(x, dim)
    values = Tensor._empty(src._shape, x.dtype, x.device)
    indices = Tensor._empty(src._shape, D.int64, x.device)
    if values.numel():
        x.device.backend.sort(values._record(), indices._record(), src._record(), bool(descending))
    return values, indices


def _rows_along(x, dim):
    """x with ``dim`` swapped with the last dim, contiguous: the rows a backend sorts or
    selects from."""
    last = x.ndim - 1
    if dim == last:
        return x.contiguous()
    perm = list(range(x.ndim))
    perm[dim], perm[last] = last, dim
    return x.permute(perm).contiguous()


def _laid_back(rows, dim):
    """``rows`` (``_rows_along``'s rows, or a narrow of their last dim) with its last dim
    swapped back to ``dim``, row-major as PyTorch's results (a transposed or narrowed layout
    would refuse the .view() PyTorch's takes)."""
    last = rows.ndim - 1
    if dim == last:
        return rows.contiguous()
    shape, stride = list(rows._shape), list(rows._stride)
    shape[dim], shape[last] = shape[last], shape[dim]
    stride[dim], stride[last] = stride[last], stride[dim]
    return Tensor._make(rows._storage, tuple(shape), stride, rows._offset, rows.dtype).contiguous()


def _refuse_complex(x, kernel):
    """ATen's CPU kernel ``kernel`` refusing a complex input (its dtype dispatch)."""
    if x.dtype.category == 3:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[x.dtype.name]}'"
        )


def _sorted(x, dim, descending):
    """(values, indices) of ``x`` sorted along ``dim``; a 0-d tensor is its own sort."""
    if x.dtype.category == 3:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
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
    clgrad.return_types.sort(
    values=tensor([1., 2., 3., nan]),
    indices=tensor([2, 3, 0, 1]))
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
    clgrad.return_types.topk(
    values=tensor([4., 3.]),
    indices=tensor([1, 3]))
    """
    d = wrap_dim(int_dim("topk", dim), input.ndim)
    n = input._shape[d] if input.ndim else 1
    k = index_arg(k)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.dtype is D.bool_:  # (after the dim's and k's checks, as ATen's)
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if input.dtype.category == 3:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if input.ndim == 0:
        return topk_result(*_sorted(input, d, largest))
    return topk_result(*Topk.apply(input, d, largest, k))


def _pick(values, indices, d, pos, keepdim, result):
    """The element at position ``pos`` along ``d`` of the sorted ``values``/``indices`` (an
    int, or an int64 tensor with a size-1 dim ``d``: one position per row)."""
    if isinstance(pos, int):  # (copied: PyTorch's results are row-major, a narrow is not)
        v, i = values.narrow(d, pos, 1).contiguous(), indices.narrow(d, pos, 1).contiguous()
    else:
        v, i = values.gather(d, pos), indices.gather(d, pos)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return result(v, i)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the ``k``-th smallest element (from 1) along ``dim``, like
    ``torch.kthvalue``.

    >>> clgrad.kthvalue(clgrad.tensor([4.0, 1.0, 3.0, 2.0]), 2)
    clgrad.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(3))
    """
    d = wrap_dim(int_dim("kthvalue", dim), input.ndim)
    _refuse_complex(input, "kthvalue_cpu")
    n = input._shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    k = index_arg(k)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim:  # (after the checks of dim and k; a 0-d input is its own answer, as ATen's)
        refuse_bool(input, "kthvalue_cpu")
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
        mask = ctx.mask  # (zero elsewhere, an infinite gradient too: ATen's masked_fill)
        return where(mask, g / mask.sum(), 0.0), None


# C's conversion of NaN (x86's "integer indefinite"), which an empty median's NaN goes through
_NAN_AS = {"int32": -(2**31), "int64": -(2**63), "bool": True}


def _median(input, dim, keepdim, skip_nan, name, result):
    if dim is None and input.numel() == 0:
        # PyTorch's NaN, converted as C converts it into the dtype (its kernel never runs, so
        # bool passes): int32 / int64 hold their smallest value, narrower ints 0, bool True
        dt = input.dtype
        nan = float("nan") if dt.is_floating_point else _NAN_AS.get(dt.name, 0)
        value = Tensor._full((), nan, dt, input.device)
        return EvenlyDistributed.apply(input, value)
    if dim is not None:  # ATen's order: the dim, an empty reduction (named median() by
        # nanmedian too), then the dtype
        d = wrap_dim(int_dim(name, dim), input.ndim)
        if input.ndim and input._shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    refuse_bool(input, "median_cpu" if dim is None else "median_out")
    x = input
    if dim is None:  # over every element: the value only
        x = input.reshape(-1)
        value = _median(x.detach(), 0, False, skip_nan, name, result).values
        return EvenlyDistributed.apply(input, value)
    if input.ndim == 0:
        values, indices = _sorted(input, 0, False)
        return result(values, indices)
    n = x._shape[d]
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
    clgrad.return_types.median(
    values=tensor([3]),
    indices=tensor([2]))
    """
    _refuse_complex(input, "median_cpu")
    return _median(input, dim, keepdim, False, "median", median_result)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median of the values of ``input`` that are not NaN, like
    ``torch.nanmedian``.

    >>> clgrad.nanmedian(clgrad.tensor([4.0, float("nan"), 1.0]))
    tensor(1.)
    """
    return _median(input, dim, keepdim, True, "nanmedian", nanmedian_result)


# ---- searching and counting: searches compose on the device; the counts whose length depends on
# the values (bincount, unique) are computed on the host, as nonzero is --------------------------
def _host(t):
    return t.detach().cpu()._numpy()


# isin compares every pair up to this many pairs (one kernel), else searches the sorted test
# elements (memory for the inputs only)
PAIRS = 1 << 20


def searchsorted(
    sorted_sequence: Tensor,
    input: Tensor | float,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """The indices where the values of ``input`` would be inserted into the innermost dim of
    ``sorted_sequence`` to keep it sorted (the first such place, the last with ``right`` or
    ``side="right"``), like ``torch.searchsorted``: its binary search, on the device.

    >>> clgrad.searchsorted(clgrad.tensor([1, 3, 5, 7]), clgrad.tensor([3, 6]))
    tensor([1, 3])
    >>> clgrad.searchsorted(clgrad.tensor([1, 3, 5, 7]), clgrad.tensor([3, 6]), right=True)
    tensor([2, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    values = input
    if not isinstance(input, Tensor):
        values = tensor(input, dtype=sorted_sequence.dtype, device=sorted_sequence.device)
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
            f"{list(values.shape)}"
        )
    seq, v = sorted_sequence.detach(), values.detach()
    return _binary_search(seq, v, right).to(D.int32 if out_int32 else D.int64)


def _binary_search(seq, v, right):
    """torch's binary search of every value at once: log2(n) steps of a gather and a
    comparison. Its test, ``not seq[mid] >= v`` (``>`` with ``right``), moves right past a
    NaN on either side, so a NaN lands where torch's lands, sorted sequence or not."""
    n = seq.shape[-1]
    lo = zeros(tuple(v.shape), dtype=D.int64, device=v.device)
    hi = full(tuple(v.shape), n, dtype=D.int64, device=v.device)
    for _ in range(n.bit_length()):  # each step halves [lo, hi)
        mid = lo + (hi - lo).div_(2, rounding_mode="floor")
        at = mid.clamp(max=max(n - 1, 0))  # (where lo == hi == n: not used)
        probe = seq.gather(-1, at) if seq.ndim > 1 else seq[at]
        after = ~((probe > v) if right else (probe >= v))
        searching = lo < hi
        lo = where(searching & after, mid + 1, lo)
        hi = where(searching & ~after, mid, hi)
    return lo


def bucketize(
    input: Tensor | float, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """The index of the bucket of each value of ``input`` given the sorted 1-d ``boundaries``
    (``boundaries[i-1] < x <= boundaries[i]``, or ``<= x <`` with ``right``), like
    ``torch.bucketize``.

    >>> clgrad.bucketize(clgrad.tensor([1, 5, 9]), clgrad.tensor([1, 3, 5, 7]))
    tensor([0, 2, 4])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``input`` in ``bins`` equal bins over ``[min, max]`` (the data's range
    when both are equal; values outside are ignored), like ``torch.histc``; computed on the
    host, each value's bin in the input's dtype as ATen's.

    >>> clgrad.histc(clgrad.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{SCALAR_TYPE_NAMES[input.dtype.name]}'"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    a = _host(input).ravel()
    lo, hi = float(min), float(max)
    if lo == hi and a.size:  # (a NaN among the data makes both ends NaN, as aminmax's)
        lo, hi = (float(v) for v in _extent(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    edges = _host(linspace(lo, hi, bins + 1, dtype=input.dtype))
    counts = _histogram(a, edges, input.dtype, None, "linear")
    return Tensor._from_numpy(counts, input.dtype, input.device)


histogram_result = return_type("histogram", ["hist", "bin_edges"])


def _extent(a):
    """(min, max) of the non-empty host array ``a``: both NaN where it holds a NaN."""
    if np.isnan(a).any():
        return np.nan, np.nan
    return a.min(), a.max()


def _rounded(dt):
    """A function rounding a host array's values to ``dt``: c10's BFloat16 arithmetic rounds
    each operation (NumPy's float16, float32 and float64 already round to their own type)."""
    if dt is D.bfloat16:
        return lambda v: D.bfloat16_values(D.bfloat16_bits(np.asarray(v, dtype=np.float32)))
    return lambda v: v


def _upper_bound(edges, a, first, last):
    """The index ``std::upper_bound`` gives for each value of ``a`` among ``edges[first:last]``
    (arrays of bounds, one per value), its halving steps taken as written, so edges out of
    order give what ATen's search gives."""
    first, length = first.copy(), last - first
    while length.any():
        half = length >> 1
        middle = first + half
        right = (length > 0) & ~(a < edges[np.minimum(middle, len(edges) - 1)])
        first = np.where(right, middle + 1, first)
        length = np.where(right, length - half - 1, half)
    return first


def _histogram(a, edges, dt, weight, search):
    """The counts (in ``dt``'s host type) of the host values ``a`` of the dtype ``dt`` in the
    bins between the ``edges`` (host, in ``dt``), as ATen's histogramdd kernels place them: a
    value outside [edges[0], edges[-1]] or NaN left out, then by ``search``: "binary" (any
    edges: their upper bound), "linear" (equal bins, histc's: ``(x - first) * bins / (last -
    first)`` in the dtype's arithmetic, truncated) or "local" (torch.histogram's: that bin,
    moved to where its neighbouring edges say); the last bin holds its upper edge. ``weight``
    (host) is summed in place of ones."""
    n = len(edges) - 1
    kept = (a >= edges[0]) & (a <= edges[-1])
    x = a[kept]
    if search == "binary":
        zero = np.zeros(x.shape, dtype=np.int64)
        pos = _upper_bound(edges, x, zero, zero + n + 1) - 1
    else:
        r, ct = _rounded(dt), D.host_type(dt).type
        with np.errstate(all="ignore"):  # (a range past the dtype's: what the cast gives)
            at = r(r(r(x - edges[0]) * r(ct(n))) / r(edges[-1] - edges[0]))
        pos = np.clip(np.nan_to_num(at, nan=0.0), 0, n).astype(np.int64)
        if search == "local":
            first = np.maximum(pos - 1, 0)
            pos = _upper_bound(edges, x, first, np.minimum(pos + 2, n + 1)) - 1
    pos = np.clip(pos, 0, n - 1)
    w = None if weight is None else weight[kept].astype(np.float64)
    return np.bincount(pos, w, minlength=n).astype(D.host_type(dt))


def histogram(input: Tensor, bins=100, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: a histogram of ``input``'s values in ``bins`` equal bins over
    ``range`` (the data's extent by default), or between the given increasing ``bins`` edges,
    like ``torch.histogram``: the last bin holds its upper edge, ``weight`` weighs each value,
    ``density`` scales to a density (integral 1). Computed on the host, as PyTorch's (CPU only),
    in the input's dtype (its edges a linspace of it).

    >>> clgrad.histogram(clgrad.tensor([1.0, 2.0, 1.0, 4.0]), bins=3)
    clgrad.return_types.histogram(
    hist=tensor([2., 1., 1.]),
    bin_edges=tensor([1., 2., 3., 4.]))
    """
    if input.dtype not in (D.float32, D.float64):  # (ATen's kernel: no 16-bit floats)
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{SCALAR_TYPE_NAMES[input.dtype.name]}'"
        )
    a = _host(input).ravel()
    if isinstance(bins, Tensor):  # ATen's checks of the edges, in its order
        if bins.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {input.dtype.name} and bins for dimension 0 with "
                f"dtype {bins.dtype.name}"
            )
        if bins.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{bins.ndim} dimensions in the bins tensor for dimension 0"
            )
        if bins.numel() == 0:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                "elements in the bins tensor for dimension 0"
            )
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({input.dtype.name}), and "
                f"weight({weight.dtype.name})"
            )
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(
                "torch.histogramdd(): if weight tensor is provided it should have the same "
                "shape as the input tensor excluding its innermost dimension"
            )
    w = None if weight is None else _host(weight).ravel()
    if isinstance(bins, Tensor):
        edges = _host(bins).copy()
        if len(edges) < 2:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {len(edges) - 1} for dimension 0"
            )
        search = "binary"
    else:
        if bins <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
            )
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif a.size:
            lo, hi = (float(v) for v in _extent(a))
        else:  # no data: PyTorch's [0, 1]
            lo, hi = 0.0, 1.0
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(
                f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite"
            )
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} "
                "for dimension 0"
            )
        if lo == hi:  # a range of width 0 widens by 1/2 on each side, as PyTorch's
            lo, hi = lo - 0.5, hi + 0.5
        edges = _host(linspace(lo, hi, bins + 1, dtype=input.dtype))
        search = "local"
    hist = _histogram(a, edges, input.dtype, w, search)
    if density:  # (in the dtype, as ATen's: over the total, then each bin's width)
        with np.errstate(all="ignore"):
            hist = hist / hist.dtype.type(hist.sum()) / np.diff(edges)
    results = (
        Tensor._from_numpy(hist.astype(D.host_type(input.dtype)), input.dtype, input.device),
        Tensor._from_numpy(edges, input.dtype, input.device),
    )
    return histogram_result(*no_formula("histogram", results, input, weight, bins))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0..max(input)`` occurs in the non-negative 1-d int ``input`` (the
    sum of ``weights`` there, when given), at least ``minlength`` long, like
    ``torch.bincount``; computed on the host.

    >>> clgrad.bincount(clgrad.tensor([0, 2, 2, 3]))
    tensor([1, 0, 2, 1])
    """
    if input.dtype.category != 1:  # (the dtype dispatch comes first, as in ATen)
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{SCALAR_TYPE_NAMES[input.dtype.name]}'"
        )
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = _host(input).astype(np.int64)
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return Tensor._from_numpy(np.bincount(a, minlength=minlength), D.int64, input.device)
    if weights.shape != input.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # PyTorch's result: float32 weights stay float32, every other dtype counts in float64
    dt = D.float32 if weights.dtype is D.float32 else D.float64
    counts = np.bincount(a, _host(weights).astype(np.float64), minlength=minlength)
    return Tensor._from_numpy(counts.astype(D.host_type(dt)), dt, input.device)


class _NoDerivative(Function):
    """A result torch records without a formula (unique's values): its backward raises."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, input, value, op):
        ctx.op = op
        return value

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(f"the derivative for '{ctx.op}' is not implemented.")


class _NoFormula(Function):
    """Results torch records under a node with no formula for them (an aten op its
    derivatives.yaml leaves out, as histogram): they require grad, and a backward through them
    raises torch's RuntimeError."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, op, n, *values_then_inputs):
        ctx.op = op
        return tuple(values_then_inputs[:n])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


def no_formula(op: str, values: tuple, *inputs) -> tuple:
    """``values`` (the results of aten's ``op`` on ``inputs``, any of them None or not a
    tensor), under a node whose backward raises where an input requires grad and grad is on,
    as torch's: the makemore lecture plots ``torch.histogram(t)`` of an activation that
    requires grad, with ``hx.detach()`` because torch's results require grad.

    >>> h = clgrad.histogram(clgrad.tensor([0.0, 1.0], requires_grad=True), bins=2)
    >>> h.hist.requires_grad, type(h.hist.grad_fn).__name__
    (True, 'NotImplemented')
    """
    inputs = [t for t in inputs if isinstance(t, Tensor)]
    if not (is_grad_enabled() and any(t.requires_grad for t in inputs)):
        return values
    return _NoFormula.apply(op, len(values), *values, *inputs)


def _unique_result(
    input, values, inverse, counts, return_inverse, return_counts, inv_shape, op="_unique2"
):
    out = [Tensor._from_numpy(np.ascontiguousarray(values), input.dtype, input.device)]
    if input.requires_grad and is_grad_enabled():
        out[0] = _NoDerivative.apply(input, out[0], op)
    if return_inverse:
        inv = np.asarray(inverse, dtype=np.int64).reshape(inv_shape)
        out.append(Tensor._from_numpy(inv, D.int64, input.device))
    if return_counts:
        out.append(Tensor._from_numpy(np.asarray(counts, dtype=np.int64), D.int64, input.device))
    return out[0] if len(out) == 1 else tuple(out)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Tensor | tuple[Tensor, ...]:
    """The distinct elements of ``input`` in ascending order (the distinct slices along
    ``dim``), optionally with each element's index into them and their counts, like
    ``torch.unique``; computed on the host (the result's length depends on the values).

    >>> clgrad.unique(clgrad.tensor([3, 1, 3]), return_inverse=True, return_counts=True)
    (tensor([1, 3]), tensor([1, 0, 1]), tensor([1, 2]))
    """
    _refuse_complex(input, "unique")
    a = _host(input)
    if dim is None:
        # each NaN is distinct (NaN != NaN), as in PyTorch; NumPy merges them by default
        values, inverse, counts = np.unique(
            a, return_inverse=True, return_counts=True, equal_nan=False
        )
        return _unique_result(
            input, values, inverse, counts, return_inverse, return_counts, a.shape
        )
    d = wrap_dim(dim, input.ndim)
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
    return _unique_result(
        input, values, inverse, counts, return_inverse, return_counts, (a.shape[d],), "unique_dim"
    )


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Tensor | tuple[Tensor, ...]:
    """``input`` with each run of equal consecutive elements (slices along ``dim``) kept once,
    optionally with each element's run index and the run lengths, like
    ``torch.unique_consecutive``; computed on the host.

    >>> clgrad.unique_consecutive(clgrad.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
    """
    a = _host(input)
    d = 0 if dim is None else wrap_dim(dim, input.ndim)
    flat = a.ravel() if dim is None else np.moveaxis(a, d, 0)
    n = flat.shape[0]
    if n == 0:
        starts = np.zeros(0, dtype=bool)
    else:
        per_slice = int(np.prod(flat.shape[1:]))  # (explicit: a -1 can't size an empty array)
        rest = (flat[1:] != flat[:-1]).reshape(n - 1, per_slice).any(axis=1)
        starts = np.concatenate([[True], rest])
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    values = flat[starts]
    if dim is not None:
        values = np.moveaxis(values, 0, d)
    shape = a.shape if dim is None else (n,)
    return _unique_result(
        input, values, inverse, counts, return_inverse, return_counts, shape, "unique_consecutive"
    )


mode_result = return_type("mode", ["values", "indices"])


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number), like
    ``torch.isin``: every pair compared on the device where there are few pairs, else a binary
    search of each element in the sorted test elements (memory for the inputs only).

    >>> clgrad.isin(clgrad.tensor([1, 2, 3]), clgrad.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor):
        elements = tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, Tensor):
        test_elements = tensor(test_elements, device=elements.device)
    if D.bool_ in (elements.dtype, test_elements.dtype):
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    flat = test_elements.reshape(-1)
    if flat.numel() == 0:
        hit = (elements.reshape(-1)[:0].sum() != 0).expand(tuple(elements.shape))
        return ~hit if invert else hit.clone()
    if elements.numel() * flat.numel() <= PAIRS:
        hit = (elements.unsqueeze(-1) == flat).any(-1)
    else:
        common = D.result_type(elements, flat)
        x, table = elements.to(common), sort(flat.to(common)).values
        at = searchsorted(table, x.reshape(-1)).clamp_(max=table.numel() - 1)
        hit = (table[at] == x.reshape(-1)).reshape(tuple(elements.shape))
    return ~hit if invert else hit


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    # ATen's checks in its order, each naming quantile() (nanquantile's too)
    scalar_q = not isinstance(q, Tensor)
    if scalar_q and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not scalar_q and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if not input.dtype.is_floating_point or input.dtype is D.bfloat16:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if scalar_q:
        qs = tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        scalar_q = q.ndim == 0
        qs = q.detach().reshape(-1)
    if dim is not None:
        wrap_dim(dim, input.ndim)  # (its IndexError before the values' check)
    if bool(((qs < 0) | (qs > 1)).any()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        d = wrap_dim(dim, input.ndim)
        x = input
    x = x.movedim(d, -1) if x.ndim else x.reshape(1)
    values = sort(x, -1).values  # NaN sorts last
    n = x.shape[-1]
    nan = values.isnan()
    count = (~nan).sum(-1, keepdim=True) if ignore_nan else None
    qv = qs.reshape((-1,) + (1,) * x.ndim)  # (Q, ..., 1)
    last = (count - 1).to(x.dtype) if ignore_nan else float(n - 1)
    rank = qv * last
    lo = rank.floor()
    hi = rank.ceil()
    if interpolation == "nearest":
        lo = hi = rank.round()
    elif interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    top = n - 1
    vals = values.unsqueeze(0).expand((qv.shape[0],) + tuple(values.shape))

    def pick(r):
        idx = r.clamp(0, top).long()
        return vals.gather(-1, idx.expand(tuple(vals.shape[:-1]) + (1,)))

    a, b = pick(lo), pick(hi)
    if interpolation == "midpoint":
        out = a + (b - a) * 0.5
    elif interpolation == "linear":
        out = a + (b - a) * (rank - lo)
    else:
        out = a
    out = out.squeeze(-1)
    if ignore_nan:
        out = where(count.squeeze(-1) == 0, float("nan"), out)
    else:
        out = where(nan.any(-1), float("nan"), out)
    # the q dim first, then the input's dims (the reduced one kept as 1 with keepdim)
    if keepdim:
        if dim is None:
            out = out.reshape((out.shape[0],) + (1,) * input.ndim)
        elif input.ndim:  # (a 0-d input's dim 0 is no dim to keep)
            out = out.unsqueeze(d + 1)
    return out.squeeze(0) if scalar_q else out


def _check_quantile_out(name, input, out):
    # PyTorch's quantile takes an out of the input's dtype only, and refuses one under autograd
    check_out(name, out, (input,), {})
    if out.dtype is not input.dtype:
        raise RuntimeError(f"{name}() out tensor must be same dtype as the input tensor")


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (``q`` a number or a 1-d tensor, whose dim comes first in the
    result) of ``input`` along ``dim`` (of every element when None), like ``torch.quantile``:
    sorted, then the two neighbouring values interpolated as ``interpolation`` says ("linear",
    "lower", "higher", "midpoint", "nearest"); a row with NaN gives NaN.

    >>> clgrad.quantile(clgrad.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)
    tensor(2.5000)
    """
    if out is not None:
        _check_quantile_out("quantile", input, out)
    r = _quantile(input, q, dim, keepdim, interpolation, False)
    return r if out is None else write_out(out, r)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """``quantile`` ignoring NaN (a row of NaN only gives NaN), like ``torch.nanquantile``.

    >>> clgrad.nanquantile(clgrad.tensor([1.0, float("nan"), 3.0]), 0.5)
    tensor(2.)
    """
    if out is not None:
        _check_quantile_out("nanquantile", input, out)
    r = _quantile(input, q, dim, keepdim, interpolation, True)
    return r if out is None else write_out(out, r)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of those
    tied) and the last index where it occurs, like ``torch.mode``: a stable sort makes each
    value a run, the longest run wins (each NaN is a run of its own: NaN equals nothing), and
    the run's last element came last in the input.

    >>> clgrad.mode(clgrad.tensor([1, 2, 2, 3, 3]))
    clgrad.return_types.mode(
    values=tensor(2),
    indices=tensor(2))
    """
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    x = input.movedim(d, -1) if input.ndim else input.reshape(1)
    n = x.shape[-1]
    if n == 0:
        raise IndexError("mode(): Expected reduction dim 0 to have non-zero size.")
    values, order = sort(x.detach(), -1, stable=True)
    it = D.int32 if n < 2**31 else D.int64
    position = arange(n, dtype=it, device=input.device).expand(values.shape)
    differs = values[..., 1:] != values[..., :-1]
    edge = ones(values.shape[:-1] + (1,), dtype=D.bool_, device=input.device)
    starts = cat([edge, differs], -1)  # where a run starts
    # the runs' starts in order (then n for each other position): a run ends where the next
    # starts, so its length is the difference (0 past the last run); a sort of int32 keys is
    # one launch where running max/min scans took dozens
    first = sort(where(starts, position, n), -1).values
    after = cat([first[..., 1:], Tensor._full(edge._shape, n, it, input.device)], -1)
    length = after - first
    best = length.amax(-1, keepdim=True)
    # the first longest run holds the smallest value tied: from its start to its last element
    which = (length == best).to(it).argmax(-1, keepdim=True)
    index = order.gather(-1, (first.gather(-1, which) + best - 1).long())
    out = x.gather(-1, index)  # from x: the gradient reaches the element picked
    if keepdim and input.ndim:
        out, index = out.movedim(-1, d), index.movedim(-1, d)
    else:
        out, index = out.squeeze(-1), index.squeeze(-1)
    return mode_result(out, index)


# PyTorch's out= (core.with_out) on the functions torch exposes with one (torch.mode's and
# torch.histogram's a tuple of two), however clgrad's namespaces bind them
mode, histogram, searchsorted, bucketize = (
    with_out(fn) for fn in (mode, histogram, searchsorted, bucketize)
)
