"""Indexing: basic keys are views; integer-tensor and mask keys gather through element offsets.

Advanced indexing, gather and scatter_add all reduce to two primitives on a storage: ``take``
(out[i] = storage[offsets[i]]) and ``put`` (storage[offsets[i]] = / += values[i]). The offsets
are built on the device with broadcast int64 arithmetic; indices are bounds-checked first, and
the kernels clamp besides, so no input can reach outside a storage.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from numbers import Number
from typing import Any

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function
from ..backend.base import COPY
from ..tensor import Tensor, real_view, wrap_dim
from .core import (
    COMPLEX_HOOKS,
    broadcast_shapes,
    check_no_overlap,
    complex_nonzero,
    copy_into,
    launch,
    overflow_error,
    overflows,
    refuse_bool,
    same_device,
    sum_to,
)
from .creation import arange, full, tensor, zeros
from .elementwise import add, remainder, where
from .inplace import (
    copy_,
    distinct_elements,
    inplace,
    recording,
    shared_dims,
    warn_expanded,
)
from .movement import Select, Slice, cat, stack
from .registry import SCALAR_TYPE_NAMES

# ---- keys --------------------------------------------------------------------------------------
_INDEX_DTYPES = (D.int64, D.int32, D.uint8, D.bool_)
# a 0-d tensor of these dtypes indexes as the int it holds (PyTorch's applySelect; a 0-d uint8
# or bool tensor is a mask)
_INT_SELECTS = frozenset(dt for dt in D.ALL if dt.category == 1 and dt is not D.uint8)


def _as_index_tensor(k, device):
    """An index key as a tensor on ``device``: int64 or int32 indices, or a bool mask (uint8
    is a mask too, deprecated, as in PyTorch); other dtypes raise IndexError."""
    if isinstance(k, Tensor):
        if k.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k.dtype is D.uint8:
            warnings.warn(
                "indexing with dtype clgrad.uint8 is now deprecated, please use a dtype "
                "clgrad.bool instead.",
                UserWarning,
                stacklevel=4,
            )
            k = k != 0
        if k.device != device and not k.device.is_cpu:  # cpu indices go anywhere, as in torch
            raise RuntimeError(
                "indices should be either on cpu or on the same device as the indexed tensor "
                f"({device}), but found indices on {k.device}"
            )
        return k if k.device == device else k.to(device)
    if isinstance(k, (str, bytes)):  # a sequence to PyTorch, whose tensor constructor refuses it
        raise TypeError(f"new(): invalid data type '{type(k).__name__}'")
    arr = np.asarray(k)
    if arr.dtype.kind in "USa":
        raise TypeError(f"new(): invalid data type '{type(arr.flat[0]).__name__}'")
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    # PyTorch's indexing tensor from data: bools are a mask, any other numbers become int64
    # indices (floats truncated: x[[1.7]] is x[[1]])
    return tensor(arr, dtype=D.bool_ if arr.dtype.kind == "b" else D.int64, device=device)


def _sequence_as_tuple(key) -> bool:
    """PyTorch's (and NumPy's legacy) rule: a short list holding a sequence, slice, ``...``,
    None or tensor is a tuple of indices (``x[[(0, 1), (1, 0)]] == x[(0, 1), (1, 0)]``)."""
    if not isinstance(key, list) or len(key) >= 32:
        return False
    return any(
        isinstance(k, (Tensor, np.ndarray, slice)) or _is_sequence(k) or k is None or k is Ellipsis
        for k in key
    )


def _is_sequence(k) -> bool:
    """An index PyTorch reads as a sequence of indices (``PySequence_Check``): a list or tuple,
    and any other sequence (``range(n)``, a ``deque``), but not a string."""
    return isinstance(k, Sequence) and not isinstance(k, (str, bytes))


def _parse(x, key):
    """Splits ``key`` into a basic view (shape, stride, offset, basic_key) and advanced indices
    [(dim of the view, int64 index tensor)]."""
    if _sequence_as_tuple(key):
        key = tuple(key)
    if not isinstance(key, tuple):
        if isinstance(key, slice):  # PyTorch unpacks a lone slice first: its step errors lead
            _check_step(key)
        key = (key,)
    items = []
    refused = None  # data PyTorch's tensor constructor refuses: raised after the count check
    for k in key:
        if isinstance(k, Tensor) and not k.ndim and k.dtype in _INT_SELECTS:
            items.append(int(k.item()))  # an int to PyTorch: a view, not a copy (reads it)
        elif isinstance(k, (np.ndarray, Tensor, str, bytes)) or _is_sequence(k):
            try:
                items.append(_as_index_tensor(k, x.device))
            except TypeError as e:
                refused = refused or e
                items.append(0)  # one dim, as PyTorch counts a sequence
        elif isinstance(k, (bool, np.bool_)):
            items.append(_as_index_tensor(np.array(k), x.device))
        else:
            items.append(k)
    consumed = sum(
        (k.ndim if k.dtype is D.bool_ else 1)
        if isinstance(k, Tensor)
        else 0
        if k is None or k is Ellipsis
        else 1
        for k in items
    )
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    if refused is not None:
        raise refused
    items = _expand_ellipses(items, x.ndim, consumed)

    shape, stride, offset = [], [], x._offset
    basic_key, advanced = [], []
    d = 0  # dim of x
    for k in items:
        if k is None:
            shape.append(1)
            stride.append(0)
            basic_key.append(None)
        elif isinstance(k, Tensor):
            if k.dtype is D.bool_:
                if tuple(k.shape) != x._shape[d : d + k.ndim]:
                    bad = next(i for i in range(k.ndim) if k.shape[i] != x._shape[d + i])
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {bad} does not match the "
                        f"shape of the indexed tensor {list(x._shape)} at index {d + bad}"
                    )
                for j, idx in enumerate(k.nonzero(as_tuple=True) if k.ndim else _scalar_mask(k)):
                    advanced.append((len(shape), idx))
                    if k.ndim:
                        shape.append(x._shape[d + j])
                        stride.append(x._stride[d + j])
                        basic_key.append(slice(None))
                    else:
                        shape.append(1)
                        stride.append(0)
                        basic_key.append(None)
                d += k.ndim
            else:
                if k.dtype.is_floating_point:
                    raise IndexError(
                        "tensors used as indices must be long, int, byte or bool tensors"
                    )
                advanced.append((len(shape), k))
                shape.append(x._shape[d])
                stride.append(x._stride[d])
                basic_key.append(slice(None))
                d += 1
        elif isinstance(k, slice):
            n = x._shape[d]
            _check_step(k)
            start, stop, step = k.indices(n)
            count = max(0, -(-(stop - start) // step))
            offset += start * x._stride[d] if count else 0
            shape.append(count)
            stride.append(x._stride[d] * step)
            basic_key.append(k)
            d += 1
        else:
            try:
                i = int(k.__index__())
            except (AttributeError, TypeError):
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                    f"Variables are valid indices (got {type(k).__name__})"
                ) from None
            n = x._shape[d]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {n}")
            offset += (i % n) * x._stride[d]
            basic_key.append(i)
            d += 1
    return tuple(shape), tuple(stride), offset, tuple(basic_key), advanced


def _check_step(k):
    if k.step is not None and k.step <= 0:
        raise ValueError(
            "slice step cannot be zero" if k.step == 0 else "step must be greater than zero"
        )


def _expand_ellipses(items, ndim, consumed):
    """``items`` with each ``...`` as the full slices of the dims no item names, and those
    dims added at the end where there is no ``...``. PyTorch takes several ellipses: each
    skips those dims again; the ones past the last dim are dropped, and an index that comes
    after them is one too many."""
    free = ndim - consumed
    out, pad = [], []  # pad[i]: out[i] comes from an ellipsis
    for k in items:
        if k is Ellipsis:
            out += [slice(None)] * free
            pad += [True] * free
        else:
            out.append(k)
            pad.append(False)
    if not any(k is Ellipsis for k in items):
        return out + [slice(None)] * free
    excess = sum(pad) - free
    while excess > 0 and pad[-1]:
        out.pop()
        pad.pop()
        excess -= 1
    if excess > 0:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return out


def _scalar_mask(k):
    """x[True] adds a dim of 1, x[False] a dim of 0: as an index tensor into a new size-1 dim."""

    n = 1 if bool(k.item()) else 0
    return (zeros(n, dtype=D.int64, device=k.device),)


# ---- offsets -----------------------------------------------------------------------------------
def _checked(idx, n, dim, wrap=True, error=None, touches=True):
    """Index tensor as int64 in [0, n), negatives wrapped (``wrap``; else a negative index is
    out of range, as for gather and scatter); IndexError if any is out of range, or ``error``:
    (exception class, message) to raise instead. ``touches`` False: each index names a slice
    of no element, which PyTorch reads and writes without a check (``x[i]`` of a (2, 0) x).

    Reads the smallest and largest index (one wait for the device): the shape of what follows
    does not depend on them, but an error must be raised here, not inside a kernel.
    """
    if idx.dtype is not D.int64:
        idx = idx.to(D.int64)
    if idx.numel() and touches and not idx.is_meta:  # (a meta tensor has no index to check)
        lo, hi = stack([idx.amin(), idx.amax()]).tolist()
        low = -n if wrap else 0
        if lo < low or hi >= n:
            wrong = hi if hi >= n else lo
            if error is not None:
                raise error[0](error[1].format(index=wrong, dim=dim, size=n))
            raise IndexError(f"index {wrong} is out of bounds for dimension {dim} with size {n}")
        if lo < 0:
            idx = remainder(idx, n)
    return idx


# gather and scatter name a bad index in a RuntimeError (PyTorch's)
_SCATTER_RANGE = (
    RuntimeError,
    "index {index} is out of bounds for dimension {dim} with size {size}",
)


def check_advanced(v, advanced):
    """The advanced indices of a key, checked against v's shape once (forward), so that the
    backward reuses them without reading the device again."""
    dims = {d for d, _ in advanced}
    for d, i in advanced:  # ATen's AdvancedIndex: checked whatever the result holds
        if not v._shape[d] and i.numel():
            raise IndexError("index is out of bounds for dimension with size 0")
    touches = math.prod(n for k, n in enumerate(v._shape) if k not in dims) != 0
    return [(d, _checked(i, v._shape[d], d, touches=touches)) for d, i in advanced]


def _arange_along(n, stride, pos, ndim, device):

    r = arange(n, device=device) * stride
    return r.reshape((1,) * pos + (n,) + (1,) * (ndim - pos - 1))


def _index_geometry(v, advanced):
    """(the indices' broadcast shape, v's dims before them in the result, those after, the
    result's shape) of v[advanced]: the indices' dims in place where they are adjacent, else
    first (NumPy's and PyTorch's rule)."""
    dims = [d for d, _ in advanced]
    shapes = [i._shape for _, i in advanced]
    try:
        bshape = broadcast_shapes(*shapes)
    except RuntimeError:
        listed = ", ".join(str(list(s)) for s in shapes)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}"
        ) from None
    rest = [d for d in range(v.ndim) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    first = dims[0] if adjacent else 0
    before = [d for d in rest if d < first] if adjacent else []
    after = [d for d in rest if d not in before]
    out_shape = tuple(v._shape[d] for d in before) + bshape + tuple(v._shape[d] for d in after)
    return bshape, before, after, out_shape


def _offsets(v, advanced):
    """int64 offsets into v's storage of every element of v[advanced], and the result's shape.

    ``advanced`` holds checked indices (``check_advanced``).
    """
    dims = [d for d, _ in advanced]
    idxs = [i for _, i in advanced]
    bshape, before, after, out_shape = _index_geometry(v, advanced)
    nd = len(out_shape)
    lead = len(before)
    off = None
    for d, i in zip(dims, idxs):
        term = (i * v._stride[d]) if v._stride[d] != 1 else i
        off = term if off is None else off + term
    off = off.reshape((1,) * lead + bshape + (1,) * len(after))
    for pos, d in enumerate(before):
        off = off + _arange_along(v._shape[d], v._stride[d], pos, nd, v.device)
    for j, d in enumerate(after):
        off = off + _arange_along(v._shape[d], v._stride[d], lead + len(bshape) + j, nd, v.device)
    off = (off + v._offset).expand(out_shape)
    return off.contiguous() if not off.is_contiguous() else off, out_shape


def _run(shape, strides):
    """(elements, stride) of dims that walk memory as one run of equal steps, or None."""
    size, step = 1, 0
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if size == 1:
            size, step = n, s
        elif s == step * size:
            size *= n
        else:
            return None
    return size, step


def _rows(v, d, parts=1):
    """v as (O, R, I) (its dims before ``d``, the ``parts`` dims from ``d``: an index's, none
    for a 0-d one; those after), each one run (through a copy of v where one is not): the
    tensor and its record reshaped."""
    groups = [(0, d), (d, d + parts), (d + parts, v.ndim)]
    runs = [_run(v._shape[a:b], v._stride[a:b]) for a, b in groups]
    if None in runs:
        v = v.contiguous()
        runs = [_run(v._shape[a:b], v._stride[a:b]) for a, b in groups]
    shape, strides = zip(*runs)
    return v, v._record()._replace(shape=shape, strides=strides)


def gather_rows(v, d, index):
    """``v[(slice(None),) * d + (index,)]`` for one int64 ``index`` (any shape, in range):
    v's dims before ``d``, index's dims, v's dims after, gathered row by row by the backend
    (``gather_rows``), not through an int64 offset per element as ``take``."""
    flat = index.reshape(-1).contiguous()
    out = Tensor._empty(v._shape[:d] + index._shape + v._shape[d + 1 :], v.dtype, v.device)
    if out.numel():
        v, src = _rows(v, d)
        _, rec = _rows(out, d, index.ndim)
        v.device.backend.gather_rows(rec, src, flat._record())
    return out


def add_rows(dst, d, index, values):
    """``dst[(slice(None),) * d + (index,)] += values`` in place for one int64 ``index`` (in
    range): every row of a repeated index added (``put``'s accumulate), row by row by the
    backend (``add_rows``). ``values`` is broadcast to the indexed shape (an expanded one is
    read in place). The caller counts the write (``write`` bumps the version)."""
    shape = dst._shape[:d] + index._shape + dst._shape[d + 1 :]
    if math.prod(shape) == 0:
        return
    # (every tensor a record is taken of stays bound until the launch: a storage that dies
    # first takes the pending work that writes it along, ``Runtime.release``)
    flat = index.reshape(-1).contiguous()
    values, src = _rows(_values_like(dst, values, shape), d, index.ndim)
    view, out = _rows(dst, d)
    dst.device.backend.add_rows(out, flat._record(), src)
    if view is not dst:  # (no run of memory: added into a copy, copied back)
        launch(COPY, [view], dst.dtype, dst.dtype, out=dst)


def _values_like(dst, values, shape):
    """``values`` (a tensor on dst's device, or a number) in dst's dtype, broadcast to
    ``shape`` (a view: nothing copied)."""
    if isinstance(values, Tensor):
        values = _on_device_of(dst, values)
    else:
        values = full((), values, dtype=dst.dtype, device=dst.device)
    return values.to(dst.dtype).expand(shape)


def take(v, offsets):
    out = Tensor._empty(offsets._shape, v.dtype, v.device)
    if out.numel():
        v.device.backend.take(out._record(), v._record(), offsets._record())
    return out


def put(dst, offsets, values, accumulate):
    """dst's storage at offsets = values (or += with accumulate); values broadcast to offsets."""
    if offsets.numel() == 0:
        return
    values = _values_like(dst, values, offsets._shape).contiguous()
    if dst.dtype.category == 3 and accumulate:
        # the device kernels add reals (atomically): a complex element is its two parts, at
        # storage offsets 2k and 2k + 1 of the real view
        parts = stack([offsets * 2, offsets * 2 + 1], -1)
        put(real_view(dst), parts, real_view(values), True)
        dst._bump_version()
        return
    dst.device.backend.put(dst._record(), offsets._record(), values._record(), accumulate)
    dst._bump_version()


# ---- autograd ----------------------------------------------------------------------------------
class Index(Function):
    @staticmethod
    def forward(ctx, v, advanced):
        # the index tensors are saved (version-checked), as PyTorch's: an index changed in
        # place before backward raises there instead of scattering to the new positions
        ctx.shape, ctx.dims = v.shape, [d for d, _ in advanced]
        ctx.save_for_backward(*[i for _, i in advanced])
        if len(advanced) == 1 and v.dtype.category != 3:
            return gather_rows(v, *advanced[0])
        offsets, _ = _offsets(v, advanced)
        return take(v, offsets)

    @staticmethod
    def backward(ctx, g):
        advanced = list(zip(ctx.dims, ctx.saved_tensors))
        z = zeros(ctx.shape, dtype=g.dtype, device=g.device)
        return IndexPut.apply(z, g, (), advanced, True), None


class IndexPut(Function):
    """out = x with x[basic_key][advanced] = values (or += values with accumulate); out of place.

    PyTorch's name for the node of an indexed assignment is CopySlices.
    """

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, x, values, basic_key, advanced, accumulate):
        ctx.key, ctx.accumulate = (basic_key, advanced), accumulate
        ctx.values_shape = values.shape if isinstance(values, Tensor) else None
        out = x.clone()
        write(out, basic_key, advanced, values, accumulate)
        return out

    @staticmethod
    def backward(ctx, g):
        basic_key, advanced = ctx.key
        gv = None
        if ctx.values_shape is not None and ctx.needs_input_grad[1]:
            gv = sum_to(index_parsed(g, basic_key, advanced), ctx.values_shape)
        gx = None
        if ctx.needs_input_grad[0]:
            gx = g if ctx.accumulate else IndexPut.apply(g, 0.0, basic_key, advanced, False)
        return gx, gv, None, None, None


def basic_view(x, basic_key):
    """The view ``x[basic_key]`` as a plain tensor (no graph)."""
    shape, stride, offset, _, _ = _parse(x, basic_key)
    return x._view(shape, stride, offset)


def _drop_leading_ones(values, ndim):
    """``values`` without the leading size-1 dims it has beyond the target's ``ndim``:
    PyTorch's copy into an indexed tensor accepts ``x[1] = tensor([5.0])`` (more dims than the
    target, all of them 1). No more are dropped: ``w.data[:] -= lr * g`` writes a value in
    w's own layout back into it, which must stay that layout to read as the same elements."""
    if isinstance(values, Tensor) and values.ndim > ndim and values._shape[0] == 1:
        extra = values.ndim - ndim
        lead = next((i for i, n in enumerate(values._shape[:extra]) if n != 1), extra)
        return values._view(values._shape[lead:], values._stride[lead:], values._offset)
    return values


def write(x, basic_key, advanced, values, accumulate=False):
    """Writes ``values`` into x[basic_key][advanced] in place (no graph, bumps the version)."""
    v = basic_view(x, basic_key)
    values = _drop_leading_ones(values, v.ndim)
    if advanced:
        if isinstance(values, Tensor) and values.dtype is not x.dtype:
            names = SCALAR_TYPE_NAMES
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{names[x.dtype.name]} for the destination and {names[values.dtype.name]} for "
                "the source."
            )
        if accumulate and len(advanced) == 1 and x.dtype.category != 3:
            add_rows(v, *advanced[0], values)
            x._bump_version()
            return
        offsets, _ = _offsets(v, advanced)
        put(x, offsets, values, accumulate)
        return
    if isinstance(values, Tensor):
        broadcast_shapes(v._shape, values._shape)  # names both shapes when they don't fit
        if values.dtype.category == 3 and v.dtype is D.bool_:  # nonzero in either part
            values = complex_nonzero(values)
        elif values.dtype.category == 3 and v.dtype.category != 3:
            values = real_view(values)[..., 0]  # (PyTorch's copy keeps the real parts)
    if accumulate:
        add.op.run(v, values, out=v)
    else:
        launch(
            COPY,
            [values],
            v.dtype,
            values.dtype if isinstance(values, Tensor) else v.dtype,
            out=v,
        )
    x._bump_version()


def index_parsed(x, basic_key, advanced):

    shape, stride, offset, _, _ = _parse(x, basic_key)
    v = Slice.apply(x, shape, stride, offset, basic_key)
    return Index.apply(v, advanced) if advanced else v


# the nodes of the views x[key] ends on besides Slice and Select (they are Slice's view)
Alias = type("Alias", (Slice,), {"__module__": __name__})
UnsqueezeView = type(
    "UnsqueezeView", (Slice,), {"__module__": __name__, "node_name": "UnsqueezeBackward0"}
)


def _whole(k, n):
    """Whether slice ``k`` is one PyTorch's indexing skips along a dim of size ``n``: from 0
    (as written: -n is sliced), step 1, to n or past it."""
    try:
        start = 0 if k.start is None else operator.index(k.start)
        stop = n if k.stop is None else operator.index(k.stop)
        step = 1 if k.step is None else operator.index(k.step)
    except TypeError:
        return False
    return start == 0 and step == 1 and stop >= n


def _view_node(x, key, basic_key):
    """The node of the view ``x[key]`` (no tensor index): PyTorch's indexing runs an op per
    item in the key's order and the last one is the result's grad_fn, printed with it:
    ``x[0]`` SelectBackward0, ``x[None]`` UnsqueezeBackward0, ``x[1:]`` SliceBackward0; a lone
    slice is always sliced, a slice of a tuple that keeps the whole dim is skipped, and a key
    that runs no op (``x[...]``, ``x[:, :]``) gives an alias (AliasBackward0)."""
    if isinstance(key, slice):
        return Slice
    node, d = Alias, 0
    for k in basic_key:
        if k is None:
            node = UnsqueezeView
            continue
        if not isinstance(k, slice):
            node = Select
        elif not _whole(k, x._shape[d]):
            node = Slice
        d += 1
    return node


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``: a view for ints, slices, None and ``...``; a copy for tensor and mask keys."""
    return _getitem(x, key, Index)


# index_select's node: x[:, index]'s gather, in PyTorch's name for it
IndexSelect = type("IndexSelect", (Index,), {"__module__": __name__})


def _getitem(x, key, gather, in_range=False):
    """``x[key]``, its tensor indices gathered by ``gather`` (Index, or IndexSelect); with
    ``in_range`` they are int64 tensors clgrad made itself, in range: not checked."""
    shape, stride, offset, basic_key, advanced = _parse(x, key)
    if advanced and x.dtype.category == 3:
        return COMPLEX_HOOKS["getitem"](x, key)

    if (
        advanced  # (x[...] and x[:] alone are new views of x, as in PyTorch)
        and (shape, stride, offset) == (x._shape, x._stride, x._offset)
        and all(isinstance(k, slice) and k == slice(None) for k in basic_key)
    ):
        v = x
    else:
        node = Slice if advanced else _view_node(x, key, basic_key)
        v = node.apply(x, shape, stride, offset, basic_key)
    if not advanced:
        return v
    return gather.apply(v, advanced if in_range else check_advanced(v, advanced))


def _lone_mask(key, value) -> Tensor | None:
    """The index tensor PyTorch writes one value through with ``masked_fill_`` (where it is a
    mask): a key of one index tensor, a value of one element."""
    items = key if isinstance(key, tuple) else tuple(key) if _sequence_as_tuple(key) else (key,)
    advanced = [k for k in items if isinstance(k, (Tensor, np.ndarray)) or _is_sequence(k)]
    one_value = not isinstance(value, Tensor) or value.numel() == 1
    if len(advanced) == 1 and isinstance(advanced[0], Tensor) and one_value:
        return advanced[0]
    return None


def _check_byte_mask_fill(key, value):
    """``masked_fill_`` takes bool masks only: a uint8 mask (still a mask when reading) is a
    RuntimeError there."""
    mask = _lone_mask(key, value)
    if mask is not None and mask.dtype is D.uint8:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
        )


def _put_value(x, key, value, accumulate=False):
    """The value tensor an indexed write of ``x`` writes, as PyTorch's ``index_put_`` takes
    it: through its ``masked_fill_`` (one mask as the key, a one-element cpu value) the value
    in x's dtype; a 0-d cpu value moved to x's device (``_on_device_of``: other values on another
    device are refused)."""
    if not isinstance(value, Tensor):
        return value
    if not accumulate and value.dtype is not x.dtype and value.device.is_cpu and value.numel() == 1:
        mask = _lone_mask(key, value)
        if mask is not None and mask.dtype in (D.bool_, D.uint8) and mask.device == x.device:
            value = value.reshape(()).to(x.dtype)
    return _on_device_of(x, value)


def _number_put(x, value):
    """A Python number written by ``x[key] = value``: PyTorch converts it to a float16 or
    bfloat16 tensor without the range check of ``fill_``, so a number past their range is
    stored as the infinity it rounds to (``scores[mask] = -1e9`` in float16); other dtypes
    still refuse what they cannot hold."""
    if x.dtype in _HALVES and type(value) in (int, float) and overflows(value, x.dtype):
        with np.errstate(over="ignore"):
            narrow = np.float16 if x.dtype is D.float16 else np.float32
            return float(narrow(value))  # (bfloat16 rounds from float32: its range is wider)
    return value


_HALVES = (D.float16, D.bfloat16)


def _without_leading_ones(value):
    """``value`` without its leading size-1 dims (PyTorch's slicePrefix1sSize, a view that
    records as one): an indexed write broadcasts what is left to the indexed shape."""
    shape = value._shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.reshape(shape[lead:]) if lead else value


def setitem(x: Tensor, key: Any, value: Tensor | Number) -> None:
    """``x[key] = value`` in place, ``value`` broadcast to the indexed shape."""

    shape, _, _, basic_key, advanced = _parse(x, key)
    if x.dtype.category == 3 and (advanced or isinstance(value, Tensor) or recording(x, value)):
        return COMPLEX_HOOKS["setitem"](x, key, value)
    if isinstance(value, Tensor):
        if advanced:
            value = _without_leading_ones(_put_value(x, key, value))
        elif value.device != x.device:  # a basic index writes with copy_, which moves, as torch's
            value = value.to(x.device)
    else:
        value = _number_put(x, value)
    _check_byte_mask_fill(key, value)
    if advanced:
        advanced = check_advanced(basic_view(x, basic_key), advanced)
        if shared_dims(x):  # PyTorch's index_put_ (and masked_fill_) warnings; then written
            warn_expanded("index_put_", "tensor[indices] = tensor")
            mask = _lone_mask(key, value)
            if mask is not None and mask.dtype is D.bool_:
                warn_expanded("masked_fill_", "tensor[mask] = scalar")
        if isinstance(value, Tensor) and value._storage is x._storage:  # index_put_'s check
            check_no_overlap(basic_view(x, basic_key), (value,))
    inplace(
        x,
        lambda old: IndexPut.apply(old, value, basic_key, advanced, False),
        lambda: write(x, basic_key, advanced, value),
        value,
    )


# ---- gather / scatter / select -----------------------------------------------------------------
def _dim_offsets(t, dim, idx):
    """Offsets into t's storage of t[i0, .., idx[i], .., in] over idx's shape (idx checked)."""
    nd = idx.ndim
    off = idx * t._stride[dim]
    for d in range(nd):
        if d != dim:
            off = off + _arange_along(idx._shape[d], t._stride[d], d, nd, t.device)
    return (off + t._offset).contiguous()


def _check_gather(name, x, dim, index, src=None):
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if max(index.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(x.ndim):
        if d != dim and index._shape[d] > x._shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be "
                f"smaller than self {list(x.shape)} apart from dimension {dim}"
            )
    if src is not None:
        if max(src.ndim, 1) != max(index.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        if any(i > s for i, s in zip(index._shape, src._shape)):
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self {list(x.shape)} "
                f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}"
            )


class Gather(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.shape, ctx.dim = x.shape, dim
        out = Tensor._empty(index._shape, x.dtype, x.device)
        if out.numel():  # (one pass: no int64 offset per element built first)
            x.device.backend.gather_dim(out._record(), x._record(), index._record(), dim)
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors

        z = zeros(ctx.shape, dtype=g.dtype, device=g.device)
        return ScatterAdd.apply(z, ctx.dim, index, g), None, None


def gather(x: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Values of ``x`` picked along ``dim`` by the int64 ``index`` (``out[i][j] =
    x[i][index[i][j]]`` for ``dim=1``); the result has ``index``'s shape, like
    ``torch.gather`` (``sparse_grad``: x's gradient is dense all the same, the values a sparse
    one would hold).

    >>> x = clgrad.tensor([[1, 2], [3, 4]])
    >>> clgrad.gather(x, 1, clgrad.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    same_device(x, index)
    d = wrap_dim(dim, x.ndim)
    _check_gather("gather", x, d, index)
    if x.dtype.category == 3:
        return COMPLEX_HOOKS["per_part"](lambda t: gather(t, d, index), x)
    if x.ndim == 0 or index.ndim == 0:
        return gather(x.reshape(-1), 0, index.reshape(-1)).reshape(index.shape)
    return Gather.apply(x, d, _checked(index, x._shape[d], d, False, _SCATTER_RANGE))


class ScatterAdd(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim = dim
        out = x.clone()
        src = src[tuple(slice(0, n) for n in index._shape)] if src._shape != index._shape else src
        put(out, _dim_offsets(out, dim, index), src, accumulate=True)
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        return g, None, None, Gather.apply(g, ctx.dim, index)


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``x`` with each value of ``src`` added at the position ``index`` names
    along ``dim`` (``out[index[i]] += src[i]`` for 1-d; repeated indices accumulate), like
    ``torch.scatter_add``.

    >>> index = clgrad.tensor([0, 1, 0, 2])
    >>> clgrad.scatter_add(clgrad.zeros(3), 0, index, clgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([4., 2., 4.])
    """
    if not isinstance(src, Tensor):  # (scatter takes a number; scatter_add does not)
        raise TypeError(
            f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}"
        )
    d, checked = _scatter_args("scatter_add", x, dim, index, src)
    if x.ndim == 0 or index.ndim == 0:
        flat = scatter_add(x.reshape(-1), 0, index.reshape(-1), src.reshape(-1))
        return flat.reshape(x.shape)
    return ScatterAdd.apply(x, d, checked, src)


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``x`` along ``dim`` at the positions in the 1-d integer ``index``
    (repeats allowed), as a new tensor, like ``torch.index_select``.

    >>> x = clgrad.tensor([[1, 2], [3, 4]])
    >>> clgrad.index_select(x, 0, clgrad.tensor([1, 0, 1]))
    tensor([[3, 4],
            [1, 2],
            [3, 4]])
    """
    same_device(x, index)
    d = wrap_dim(dim, x.ndim)
    if x.dtype.category == 3:
        return COMPLEX_HOOKS["index_select"](x, d, index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if x.ndim == 0 and index.numel() != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)"
        )
    flat = x.reshape(1) if x.ndim == 0 else x
    # PyTorch's CPU kernels: RuntimeError along dim 1 (its dim-1 kernel), else IndexError; an x
    # of no element (past 1-d) is checked by its own loop, a RuntimeError along any dim
    error = (
        (IndexError, "index out of range in self")
        if (d != 1 or x.ndim <= 1) and (x.numel() or x.ndim <= 1)
        else (RuntimeError, "INDICES element is out of DATA bounds, id={index} axis_dim={size}")
    )
    if x.ndim > 1 and not x.numel() and index.numel() and not x._shape[d]:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    index = _checked(index.reshape(-1), flat._shape[d], d, False, error)
    if x.ndim == 0:
        return getitem(flat, index).reshape(())
    return _getitem(x, (slice(None),) * d + (index,), IndexSelect)


def select_positions(x: Tensor, dim: int, positions) -> Tensor:
    """``x.index_select(dim, positions)`` for positions clgrad computed itself (a NumPy array
    or a list of ints, each in ``[0, x.shape[dim])``): the same gather and gradient, without the
    range check, which waits for the device to read back the smallest and largest index (a pad,
    an interpolation or a pooling would wait once per call for indices that cannot be wrong).

    >>> from clgrad.ops.indexing import select_positions
    >>> select_positions(clgrad.tensor([[1.0, 2.0, 3.0]]), 1, [2, 0, 0])
    tensor([[3., 1., 1.]])
    """
    index = tensor(np.asarray(positions, dtype=np.int64).reshape(-1), device=x.device)
    d = wrap_dim(dim, x.ndim)
    if x.dtype.category == 3 or x.ndim == 0:  # (complex: through its real view's gather)
        return index_select(x, d, index)
    return _getitem(x, (slice(None),) * d + (index,), IndexSelect, in_range=True)


def masked_fill(x: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    """A copy of ``x`` with ``value`` where the bool ``mask`` (broadcast to ``x``'s shape) is
    True, in ``x``'s dtype, like ``torch.masked_fill``.

    >>> x = clgrad.tensor([1.0, 2.0, 3.0])
    >>> clgrad.masked_fill(x, clgrad.tensor([True, False, True]), -1.0)
    tensor([-1.,  2., -1.])
    """
    if mask.dtype is not D.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}"
        )

    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got "
                f"tensor with {value.ndim} dimension(s)."
            )
        value = value.to(x.dtype)
    elif overflows(value, x.dtype):
        raise overflow_error(x.dtype)
    elif x.dtype is D.bool_:  # stored as a bool: where would promote a number past bool's
        value = bool(value)
    return (MaskedFillValue if isinstance(value, Tensor) else MaskedFill).apply(x, value, (mask,))


class MaskedFill(Function):
    """``masked_fill``'s node, PyTorch's: MaskedFillBackward0 for a number value (the input's
    edge alone), MaskedFillBackward1 for a tensor (its edge too; the gradient where the mask
    holds, summed). The mask comes in a tuple: it has no edge, as in PyTorch."""

    @staticmethod
    def forward(ctx, x, value, masks):
        (mask,) = masks
        ctx.save_for_backward(mask)
        out = where(mask, value, x)  # broadcast with the mask, as PyTorch's out-of-place form
        return out if out.dtype is x.dtype else out.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_x = where(mask, 0.0, g) if needs[0] else None
        return grad_x, where(mask, g, 0.0).sum() if needs[1] else None, None


MaskedFillValue = type(
    "MaskedFillValue", (MaskedFill,), {"__module__": __name__, "node_name": "MaskedFillBackward1"}
)


def fill_shared(x: Tensor, written: Tensor, value, warn: str | None = None) -> Tensor:
    """``x[written] = value`` in place for ``x`` whose elements share memory (``shared_dims``,
    an expanded tensor's, which PyTorch's masked_fill_, index_fill_, tril_ and triu_ write one
    element after the other): each memory location takes ``value`` where ``written`` holds for
    any of its elements. ``warn``: the op PyTorch warns about, first. A write autograd records
    raises (``inplace``'s refusal), as every other write into such a tensor."""
    if warn is not None:
        warn_expanded(warn, "tensor[mask] = scalar")
    distinct = distinct_elements(x)
    once = written.expand(x._shape).any(shared_dims(x), keepdim=True)
    return inplace(
        x,
        lambda old: masked_fill(old, written, value),
        lambda: copy_into(distinct, masked_fill(distinct, once, value)),
    )


def masked_fill_(x: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    """In-place ``masked_fill``; into an expanded tensor too, with PyTorch's warning."""
    result = masked_fill(x, mask, value)  # (its checks)
    if not shared_dims(x) or result._shape != x._shape:  # (copy_ raises for the latter)
        return copy_(x, result)
    return fill_shared(x, mask, value, "masked_fill_")


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` cut or padded (with rows of ``fill_value``) to ``size`` rows, like
    ``torch.nonzero_static``: a shape known ahead of the data.

    >>> clgrad.nonzero_static(clgrad.tensor([0, 3, 5]), size=3)
    tensor([[ 1],
            [ 2],
            [-1]])
    """
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    found = nonzero(input)[:size]
    missing = size - found.shape[0]
    if missing == 0:
        return found.clone()
    padding = found.new_full((missing, found.shape[1]), fill_value)
    return cat([found, padding])


def nonzero(x: Tensor, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The indices of the nonzero elements of ``x`` in row-major order: an int64 tensor of
    shape ``(count, x.ndim)``, or with ``as_tuple`` one 1-d tensor per dim, like
    ``torch.nonzero``.

    >>> clgrad.nonzero(clgrad.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    >>> clgrad.tensor([0, 3, 5]).nonzero(as_tuple=True)
    (tensor([1, 2]),)
    """

    idx = x.device.backend.nonzero(x._record())
    result = tensor(idx, dtype=D.int64, device=x.device)
    if as_tuple:
        return (
            tuple(result[:, i] for i in range(result.shape[1]))
            if x.ndim
            else (result.new_zeros((result.shape[0],)),)  # a 0-d tensor's index: 0, if nonzero
        )
    return result


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``x`` where the bool ``mask`` is True (the two broadcast together), as
    a new 1-d tensor, like ``torch.masked_select``.

    >>> x = clgrad.tensor([[1, 2], [3, 4]])
    >>> clgrad.masked_select(x, x > 1)
    tensor([2, 3, 4])
    """
    if mask.dtype is not D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    mask = mask.expand(broadcast_shapes(x._shape, mask._shape))
    return getitem(x.expand(mask.shape), mask)


# ---- the scatter and index_* families ----------------------------------------------------------
class Scatter(Function):
    """A copy of ``x`` with ``src`` (a tensor cut to ``index``'s shape, or a number) written
    at the positions ``index`` names along ``dim``."""

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim, ctx.src_shape = dim, src.shape if isinstance(src, Tensor) else None
        out = x.clone()
        if isinstance(src, Tensor) and src._shape != index._shape:
            src = src[tuple(slice(0, n) for n in index._shape)]
        put(out, _dim_offsets(out, dim, index), src, accumulate=False)
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gx = Scatter.apply(g, ctx.dim, index, 0) if ctx.needs_input_grad[0] else None
        gs = None
        if ctx.src_shape is not None and ctx.needs_input_grad[3]:
            gs = Gather.apply(g, ctx.dim, index)
            if tuple(gs.shape) != tuple(ctx.src_shape):  # src was larger than index
                z = zeros(ctx.src_shape, dtype=gs.dtype, device=gs.device)
                gs = IndexPut.apply(z, gs, tuple(slice(0, n) for n in gs.shape), [], False)
        return gx, None, None, gs


def _scatter_args(name, x, dim, index, src, bool_kernel=None):
    """dim wrapped and index checked (a RuntimeError out of range, no wrapping), as PyTorch's
    scatter family; src a tensor of x's dtype or a number; ``refuse_bool(x, bool_kernel)``
    between the two."""
    if isinstance(src, Tensor):
        same_device(x, index, src)
        if src.dtype is not x.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    else:
        same_device(x, index)
    d = wrap_dim(dim, x.ndim)
    _check_gather(name, x, d, index, src if isinstance(src, Tensor) else None)
    refuse_bool(x, bool_kernel)
    return d, _checked(index, x._shape[d] if x.ndim else 1, d, False, _SCATTER_RANGE)


def _flat_if_scalar(x, index, src, fn):
    """Runs ``fn(x, index, src)`` on 1-d forms of 0-d operands, shaped back as x."""
    src = src.reshape(-1) if isinstance(src, Tensor) else src
    return fn(x.reshape(-1), index.reshape(-1), src).reshape(x.shape)


def scatter(
    input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None
) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or the number ``value``) written along
    ``dim`` at the positions ``index`` names (``out[index[i][j]][j] = src[i][j]`` for
    ``dim=0``), like ``torch.scatter``; ``reduce='add'`` or ``'multiply'`` combines instead.

    >>> clgrad.zeros(3).scatter(0, clgrad.tensor([2, 0]), clgrad.tensor([5.0, 7.0]))
    tensor([7., 0., 5.])
    >>> clgrad.zeros(2, 2).scatter(1, clgrad.tensor([[1], [0]]), 1.0)
    tensor([[0., 1.],
            [1., 0.]])
    """
    if src is None:
        src = value
    if input.dtype.category == 3 and reduce in (None, "add"):
        return COMPLEX_HOOKS["scatter"](scatter, input, dim, index, src, reduce)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        if not isinstance(src, Tensor):
            src = Tensor._full(index._shape, src, input.dtype, input.device)
        return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    d, index = _scatter_args("scatter", input, dim, index, src)
    if input.ndim == 0 or index.ndim == 0:
        return _flat_if_scalar(input, index, src, lambda x, i, s: scatter(x, 0, i, s))
    return Scatter.apply(input, d, index, src)


def _host_scatter_reduce(x, dim, index, src, reduce, include_self):
    """prod / amax / amin scattered through NumPy's ``ufunc.at`` (no device kernel combines
    those yet: the operands make a round trip through host memory)."""
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    a = x.detach().cpu()._numpy().copy()
    i = index.detach().cpu()._numpy()
    s = src.detach().cpu()._numpy()[tuple(slice(0, n) for n in i.shape)]
    pos = list(np.indices(i.shape, sparse=False))
    pos[dim] = i
    pos = tuple(pos)
    if not include_self:
        # start each written position from a neutral: 1, or one of its own values (max and
        # min of a group that holds it twice are the same)
        if reduce == "prod":
            a[pos] = 1
        else:
            a[pos] = s
    with np.errstate(all="ignore"):
        ufunc.at(a, pos, s)
    return Tensor._from_numpy(a, x.dtype, x.device)


class ScatterExtreme(Function):
    """scatter_reduce's amax / amin: the gradient is shared evenly by the elements (of
    input, where included, and of src) equal to each result, as PyTorch's."""

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        out = _host_scatter_reduce(x, dim, index, src, reduce, include_self)
        ctx.save_for_backward(x, index, src, out)
        ctx.args = (dim, include_self)
        return out

    @staticmethod
    def backward(ctx, g):
        x, index, src, out = ctx.saved_tensors
        dim, include_self = ctx.args
        src = src[tuple(slice(0, n) for n in index._shape)]
        picked = Gather.apply(out, dim, index)
        src_hit = (src == picked) | (src.isnan() & picked.isnan())
        self_hit = (x == out) | (x.isnan() & out.isnan())
        if not include_self:
            touched = Scatter.apply(
                zeros(x.shape, dtype=D.bool_, device=x.device), dim, index, True
            )
            self_hit = self_hit & touched.logical_not()
        count = ScatterAdd.apply(self_hit.to(g.dtype), dim, index, src_hit.to(g.dtype))
        share = g / count.clamp_min(1)
        return self_hit * share, None, None, src_hit * Gather.apply(share, dim, index), None, None


class ScatterProd(Function):
    """scatter_reduce's prod, with PyTorch's gradient: through each factor the product of the
    others, exact where factors are zero (one zero in a group: the others' product reaches it;
    two or more: 0)."""

    @staticmethod
    def forward(ctx, x, dim, index, src, include_self):
        out = _host_scatter_reduce(x, dim, index, src, "prod", include_self)
        ctx.save_for_backward(x, index, src, out)
        ctx.args = (dim, include_self)
        return out

    @staticmethod
    def backward(ctx, g):
        x, index, src, out = ctx.saved_tensors
        dim, include_self = ctx.args
        src = src[tuple(slice(0, n) for n in index._shape)]
        # self: the product with self's own factor made 1, over that factor
        masked_self = x.masked_fill(x == 0, 1)
        grad_self = g * scatter_reduce(masked_self, dim, index, src, "prod", include_self=True)
        grad_self = grad_self / masked_self
        if not include_self:  # a written position's own value was not a factor
            touched = Scatter.apply(
                zeros(x.shape, dtype=D.bool_, device=x.device), dim, index, True
            )
            grad_self = grad_self.masked_fill(touched, 0)
        # src: the product over the factor; a lone zero factor gets the others' product
        src_zero = src == 0
        zeros_at = ScatterAdd.apply(
            zeros(x.shape, dtype=g.dtype, device=x.device), dim, index, src_zero.to(g.dtype)
        )
        zeros_there = Gather.apply(zeros_at, dim, index)
        lone_zero = src_zero & (zeros_there == 1)
        others = scatter_reduce(
            x, dim, index, src.masked_fill(lone_zero, 1), "prod", include_self=include_self
        )
        grad_src = where(
            lone_zero,
            Gather.apply(g * others, dim, index),
            Gather.apply(g * out, dim, index) / src.masked_fill(src_zero, 1),
        )
        grad_src = grad_src.masked_fill(zeros_there > 1, 0)
        return grad_self, None, None, grad_src, None


def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """A copy of ``input`` with the values of ``src`` combined along ``dim`` into the
    positions ``index`` names by ``reduce`` (``'sum'``, ``'prod'``, ``'mean'``, ``'amax'``,
    ``'amin'``), with or without ``input``'s own value there (``include_self``), like
    ``torch.scatter_reduce``.

    >>> x, i = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([0, 0, 2])
    >>> x.scatter_reduce(0, i, clgrad.tensor([5.0, 6.0, 7.0]), "amax")
    tensor([6., 2., 7.])
    >>> x.scatter_reduce(0, i, clgrad.tensor([5.0, 6.0, 7.0]), "mean", include_self=False)
    tensor([5.5000, 2.0000, 7.0000])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # (PyTorch's aliases)
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    mean = "scatter_gather_tensor_cpu_reduce_mean" if reduce == "mean" else None
    d, index = _scatter_args("scatter_reduce", input, dim, index, src, mean)
    if input.ndim == 0 or index.ndim == 0:
        return _flat_if_scalar(
            input,
            index,
            src,
            lambda x, i, s: scatter_reduce(x, 0, i, s, reduce, include_self=include_self),
        )
    if reduce in ("amax", "amin"):
        return ScatterExtreme.apply(input, d, index, src, reduce, include_self)
    if reduce == "prod":
        return ScatterProd.apply(input, d, index, src, include_self)
    base = input if include_self else Scatter.apply(input, d, index, 0)
    total = ScatterAdd.apply(base, d, index, src)
    if reduce == "sum":
        return total
    ones = Tensor._full(input._shape, 1 if include_self else 0, input.dtype, input.device)
    count = ScatterAdd.apply(
        ones, d, index, Tensor._full(index._shape, 1, input.dtype, input.device)
    )
    count = count.masked_fill(count == 0, 1)
    if input.dtype.is_floating_point:
        return total / count
    return total.div(count, rounding_mode="floor")


def _on_device_of(x, t):
    """``t`` on x's device: ``same_device`` lets a 0-d cpu tensor join any device (a number
    there), and an index or value read as a buffer must be on the device that reads it."""
    same_device(x, t)
    return t if t.device == x.device else t.to(x.device)


def _index_args(name, x, dim, index, wrap, error=None, source=None, bool_kernel=None):
    """dim wrapped, index (1-d, int64/int32) checked against x's size along dim (negatives
    wrapped where ``wrap``; ``error``: what an index out of range raises); before that range,
    ``source`` checked (``_check_source``, returned too where given) and
    ``refuse_bool(x, bool_kernel)``."""
    index = _on_device_of(x, index)
    d = wrap_dim(dim, x.ndim)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    n = x._shape[d] if x.ndim else 1
    if name == "index_reduce":  # (checked even where the slices hold nothing, as PyTorch's)
        touches = True
    elif name == "index_add" and x.ndim > 1:  # ATen's returns first where x holds nothing
        touches = x.numel() != 0
    else:
        touches = math.prod(x._shape[:d] + x._shape[d + 1 :]) != 0
    if source is not None:
        source = _check_source(name, x, d, index, source)
    refuse_bool(x, bool_kernel)
    index = _checked(index.reshape(-1), n, d, wrap, error, touches)
    return (d, index) if source is None else (d, index, source)


def _index_write(x, d, index, values, accumulate):
    """A copy of ``x`` with ``values`` written (or added) at x[..., index, ...] along d."""
    if x.ndim == 0:
        flat = _index_write(
            x.reshape(1),
            0,
            index,
            values if not isinstance(values, Tensor) else values.reshape(-1),
            accumulate,
        )
        return flat.reshape(())
    return IndexPut.apply(x, values, (), [(d, index)], accumulate)


def _check_source(name, x, d, index, source):
    source = _on_device_of(x, source)
    if source.dtype is not x.dtype:
        raise RuntimeError(
            f"{name}(): self ({x.dtype}) and source ({source.dtype}) must have the same scalar type"
        )
    want = list(x._shape)
    if want:
        want[d] = index.numel()
    if name == "index_copy" and source.ndim and x.ndim:  # ATen's order: dims, slices, count
        if source.ndim != x.ndim:
            raise IndexError(
                "index_copy_(): When source and destination are not scalars, their "
                f"dimensionality must match. Source dimensionality ({source.ndim}), destination "
                f"dimensionality ({x.ndim})"
            )
        slices = [n for i, n in enumerate(source._shape) if i != d]
        if slices == [n for i, n in enumerate(x._shape) if i != d] and source._shape[d] != (
            index.numel()
        ):
            raise IndexError(
                f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                f"source.size(dim) ({source._shape[d]})"
            )
    if list(source._shape if source.ndim else ()) != want and source.numel() != index.numel() * (
        x.numel() // max(x._shape[d], 1) if x.ndim else 1
    ):
        raise RuntimeError(
            f"{name}(): Source/destination tensor must have same slice shapes. Destination slice "
            f"shape: {want} and source slice shape: {list(source.shape)}"
        )
    return source.reshape(want) if x.ndim else source.reshape(-1)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source``'s slices added along ``dim`` at the
    positions ``index`` names (repeats accumulate), like ``torch.index_add``.

    >>> clgrad.zeros(3).index_add(0, clgrad.tensor([0, 2, 0]), clgrad.tensor([1.0, 2.0, 3.0]))
    tensor([4., 0., 2.])
    """
    # PyTorch's CPU kernels: a RuntimeError naming the index past 1-d where alpha is 1 (its
    # scatter_add path), IndexError otherwise (its loop; a bool alpha is no 1 there)
    unscaled = type(alpha) is not bool and alpha == 1
    error = (
        _SCATTER_RANGE
        if input.ndim > 1 and unscaled
        else (IndexError, "index out of range in self")
    )
    d, index = _index_args("index_add", input, dim, index, False, error)
    source = _check_source("index_add", input, d, index, source)
    if not input.numel():  # nowhere to add (an index there, unchecked, has no offset to take)
        return input.clone()
    if alpha != 1:  # (in source's dtype: a bool source times 2 is still a bool)
        source = (source * alpha).to(source.dtype)
    return _index_write(input, d, index, source, True)


def index_reduce(
    input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self=True
) -> Tensor:
    """A copy of ``input`` with ``source``'s slices combined along ``dim`` into the positions
    ``index`` names, by ``reduce`` (``'prod'``, ``'mean'``, ``'amax'``, ``'amin'``), with or
    without ``input``'s own values (``include_self``), like ``torch.index_reduce``:
    ``scatter_reduce`` with ``index`` spread over ``source``'s other dims (and its gradients).

    >>> clgrad.ones(3).index_reduce(0, clgrad.tensor([0, 0, 2]), clgrad.tensor([2.0, 3.0, 4.0]),
    ...                             "prod")
    tensor([6., 1., 4.])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    d, index, source = _index_args(
        "index_reduce",
        input,
        dim,
        index,
        False,
        (IndexError, "index out of range in self"),
        source,
        # (past 1-d, ATen's CPU kernel takes bool where the input's values are included)
        "index_reduce_func_exclude_input_init"
        if not include_self
        else "index_func_"
        if input.ndim <= 1
        else None,
    )
    if input.ndim == 0:
        return scatter_reduce(
            input, 0, index, source.reshape(-1), reduce, include_self=include_self
        )
    shape = [1] * source.ndim
    shape[d] = -1
    spread = index.reshape(shape).expand(source.shape)
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with ``source``'s slices written along ``dim`` at the positions
    ``index`` names, like ``torch.index_copy``.

    >>> clgrad.zeros(3).index_copy(0, clgrad.tensor([2, 0]), clgrad.tensor([1.0, 2.0]))
    tensor([2., 0., 1.])
    """
    d, index = _index_args(
        "index_copy",
        input,
        dim,
        index,
        False,
        (
            IndexError,
            "index_copy_(): index {index} is out of bounds for dimension {dim} with size {size}",
        ),
    )
    source = _check_source("index_copy", input, d, index, source)
    return _index_write(input, d, index, source, False)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of ``input`` with ``value`` in the slices along ``dim`` that ``index`` names,
    like ``torch.index_fill``.

    >>> clgrad.zeros(2, 3).index_fill(1, clgrad.tensor([0, 2]), -1.0)
    tensor([[-1.,  0., -1.],
            [-1.,  0., -1.]])
    """
    d, index = _index_args("index_fill", input, dim, index, True)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        value = value.to(input.dtype)
        if value.requires_grad:
            # value's gradient sums each filled element once, however often index names it
            # (PyTorch's formula takes the unique index): a where over the filled slices
            size = input._shape[d] if input.ndim else 1
            hit = _index_write(zeros(size, dtype=D.bool_, device=input.device), 0, index, 1, False)
            filled = hit.reshape([size if i == d else 1 for i in range(input.ndim)])
            return where(filled, value, input)
    return _index_write(input, d, index, value, False)


def index_fill_(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """In-place ``index_fill``; into an expanded tensor too, with PyTorch's warning."""
    result = index_fill(input, dim, index, value)  # (its checks)
    if not shared_dims(input):
        return copy_(input, result)
    written = index_fill(zeros(input._shape, dtype=D.bool_, device=input.device), dim, index, 1)
    return fill_shared(input, written, value, "index_fill_")


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written (or added, ``accumulate``) at
    ``input[indices]``, ``indices`` a tuple of index tensors, like ``torch.index_put``.

    >>> clgrad.zeros(3).index_put((clgrad.tensor([0, 0]),), clgrad.tensor(1.0), accumulate=True)
    tensor([2., 0., 0.])
    """
    _, _, _, basic_key, advanced = _parse(input, tuple(indices))
    advanced = check_advanced(basic_view(input, basic_key), advanced)
    values = _put_value(input, tuple(indices), values, accumulate)
    if advanced and isinstance(values, Tensor):
        # values broadcast to the indexed shape as they are: index_put takes no leading ones
        # away (``x[i] = v`` does)
        result = _index_geometry(basic_view(input, basic_key), advanced)[3]
        try:
            fits = broadcast_shapes(result, values._shape) == result
        except RuntimeError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(values._shape)} cannot be "
                f"broadcast to indexing result of shape {list(result)}"
            )
    return IndexPut.apply(input, values, basic_key, advanced, accumulate)


def index_put_(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """In-place ``index_put``; into an expanded tensor too, with PyTorch's warning: each
    element written in turn through its memory offset (``x[i] = v``'s write), so an element
    sharing memory with others takes the value written last, or with ``accumulate`` the sum of
    them all."""
    check_no_overlap(input, (indices, values))
    values = _put_value(input, tuple(indices), values, accumulate)
    result = index_put(input, indices, values, accumulate)  # (its checks)
    if not shared_dims(input):
        return copy_(input, result)
    warn_expanded("index_put_", "tensor[indices] = tensor")
    mask = _lone_mask(tuple(indices), values)
    if mask is not None and mask.dtype is D.bool_:  # PyTorch's write: masked_fill_
        warn_expanded("masked_fill_", "tensor[mask] = scalar")
    _, _, _, basic_key, advanced = _parse(input, tuple(indices))
    advanced = check_advanced(basic_view(input, basic_key), advanced)
    return inplace(
        input,
        lambda old: IndexPut.apply(old, values, basic_key, advanced, accumulate),
        lambda: write(input, basic_key, advanced, values, accumulate),
        values,
    )


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` (broadcast with ``mask``) with the elements of ``source``, in
    order, where the bool ``mask`` is True, like ``torch.masked_scatter``.

    >>> x = clgrad.zeros(4)
    >>> x.masked_scatter(clgrad.tensor([True, False, True, False]), clgrad.tensor([1.0, 2.0]))
    tensor([1., 0., 2., 0.])
    """
    if mask.dtype is not D.bool_:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    same_device(input, mask, source)
    if source.dtype is not input.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got "
            f"{input.dtype} and {source.dtype}"
        )
    shape = broadcast_shapes(input._shape, mask._shape)
    x, m = input.expand(shape), mask.expand(shape)
    _, _, _, basic_key, advanced = _parse(x, m)
    count = advanced[0][1].numel() if advanced else int(m.sum().item())
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    values = source.reshape(-1).narrow(0, 0, count)
    if not advanced:  # a 0-d mask
        return where(m, values.reshape(()) if count else x, x) if count else x.clone()
    return IndexPut.apply(x, values, basic_key, advanced, False)


_TAKE_RANGE = (
    IndexError,
    "out of range: tried to access index {index} on a tensor of {size} elements.",
)


def take_elements(input: Tensor, index: Tensor) -> Tensor:
    """The elements of ``input`` at the positions ``index`` names in its flattened form
    (negative counting from the end), in ``index``'s shape, like ``torch.take``.

    >>> clgrad.take(clgrad.tensor([[1, 2], [3, 4]]), clgrad.tensor([0, -1]))
    tensor([1, 4])
    """
    index = _on_device_of(input, index)
    if index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype}")
    if input.dtype.category == 3:
        return COMPLEX_HOOKS["per_part"](lambda t: take_elements(t, index), input)
    flat = input.reshape(-1)
    idx = _checked(index, flat._shape[0], 0, True, _TAKE_RANGE)
    return Index.apply(flat, [(0, idx.reshape(-1))]).reshape(index._shape)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Values of ``input`` picked along ``dim`` by ``indices`` (the two broadcast over the
    other dims; without ``dim``, from the flattened tensor), like ``torch.take_along_dim``.

    >>> x = clgrad.tensor([[10, 30, 20], [60, 40, 50]])
    >>> clgrad.take_along_dim(x, x.argmax(1, keepdim=True), 1)
    tensor([[30],
            [60]])
    """
    if indices.dtype is not D.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be int64 but got {indices.dtype}"
        )
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
            "dimensions for indices"
        )
    d = wrap_dim(dim, input.ndim)
    sizes = list(input._shape)
    if sizes:
        sizes[d] = indices._shape[d]
    shape = list(broadcast_shapes(tuple(sizes), indices._shape))
    idx = indices.expand(shape)
    if shape:
        shape[d] = input._shape[d]
    if idx.numel():  # with a dim, PyTorch counts negative indices from the end
        n = input._shape[d] if input.ndim else 1
        idx = _checked(idx, n, d, True, _SCATTER_RANGE)
    return gather(input.expand(shape), d, idx)


def put_elements(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source``'s elements written (or added) at the positions
    ``index`` names in its flattened form, like ``torch.put``.

    >>> clgrad.zeros(2, 2).put(clgrad.tensor([3, 0]), clgrad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 1.]])
    """
    same_device(input, index, source)
    index, source = _on_device_of(input, index), _on_device_of(input, source)
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{input.dtype} and source.dtype = {source.dtype}"
        )
    if source.numel() != index.numel():
        raise IndexError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    flat = input.reshape(-1)
    idx = _checked(index.reshape(-1), flat._shape[0], 0, True, _TAKE_RANGE)
    out = IndexPut.apply(flat, source.reshape(-1), (), [(0, idx)], accumulate)
    return out.reshape(input._shape)


def argwhere(input: Tensor) -> Tensor:
    """The indices of the nonzero elements, one row each: ``nonzero(input)``, like
    ``torch.argwhere``.

    >>> clgrad.argwhere(clgrad.tensor([0, 3, 5]))
    tensor([[1],
            [2]])
    """
    return nonzero(input)


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of each flat index in ``indices``, one int64
    tensor per dimension, like ``torch.unravel_index``: indices wrap modulo the size (as torch's
    floor division and remainder do), so -1 is the last element.

    >>> clgrad.unravel_index(clgrad.tensor([5, -1]), (2, 4))
    (tensor([1, 1]), tensor([1, 3]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not {type(indices)}")
    if indices.is_floating_point() or indices.dtype == D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(not isinstance(n, int) for n in shape):
        raise TypeError("expected 'shape' sequence to only contain ints")
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    idx = indices.to(D.int64)
    out, stride = [], 1
    for n in reversed(shape):
        # floor division then remainder: Python's wrapping for negative indices, as torch
        out.append(idx.div(stride, rounding_mode="floor").remainder(n))
        stride *= n
    return tuple(reversed(out))
