"""In-place ops: a direct write when nothing is recorded; recorded otherwise, so gradients stay
right (the tensor takes the history of the out-of-place result, as PyTorch rebases it).

A write into a view rebases its base too (PyTorch's CopySlices): the base's new history
takes the view's region from the op's result and the rest from the base's old history, and
the view becomes a view of the new base (AsStridedBackward0). Other views of that base get
their new history when next used (``Tensor.grad_fn``).
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from .. import dtypes as D
from ..autograd.function import INFERENCE_VIEW, NO_GRAD_VIEW, Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..backend.base import COPY, FILL
from ..tensor import Tensor
from .core import (
    COMPLEX_HOOKS,
    broadcast_shapes,
    complex_view,
    copy_into,
    launch,
    real_view,
    scalar_fill_value,
    sum_to,
)

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_ERROR = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
_MULTI = (
    "This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation "
    "by an out-of-place one."
)
_CUSTOM = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)
_NO_GRAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
)
OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def recording(x, *others) -> bool:
    """Whether writing into ``x`` in place must be recorded."""
    if not is_grad_enabled():
        return False
    if x._requires_grad or (x._base is not None and (x._base._requires_grad or x.requires_grad)):
        return True
    return any(isinstance(o, Tensor) and o._requires_grad for o in others)


def inplace(x, functional, direct, *others):
    """Runs ``x.op_(...)``.

    ``functional(old)`` computes the new value out of place from a copy of x (a copy, so a
    gradient that needs x's old value still has it); ``direct()`` writes into x unrecorded.
    """
    if not recording(x, *others):
        direct()
        return x
    if any(s == 0 and n > 1 for n, s in zip(x._shape, x._stride)) and 0 not in x._shape:
        raise RuntimeError(OVERLAP_ERROR)
    if x._base is not None:
        return _inplace_view(x, functional)
    if x._grad_fn is None and x._requires_grad:
        raise RuntimeError(LEAF_ERROR)
    new = functional(x.clone())
    with no_grad():
        copy_into(x, new)
    _take_history(x, new)
    _saves_written(x, new)
    return x


def _saves_written(x, new):
    """The op's node keeps ``x`` where it saved its output ``new`` (exp_, tanh_, sigmoid_ and
    the other ops whose gradient reads their result), at x's version after the write, as
    PyTorch's in-place op saves self: a later in-place write into x then fails the backward
    that needs the old value, where the copy ``new`` kept it silently right (and alive)."""
    node = new._grad_fn
    ctx = getattr(node, "ctx", None)
    for saved in getattr(ctx, "_saved", None) or ():
        if (
            saved is not None
            and saved.output_nr is not None
            and saved.unpack_hook is None
            and saved.tensor._storage is new._storage
        ):
            saved.tensor = x.detach()
            saved.version = x._version


def _take_history(t, src):
    """``t``'s history becomes ``src``'s (an in-place write recorded); a gradient ``t``
    retains moves with it, as PyTorch's retain_grad hook does (``.grad`` is then the gradient
    of the value written, not of the one before)."""
    old, nr = t._grad_fn, t._output_nr
    t._requires_grad = src._requires_grad
    t._grad_fn = src._grad_fn
    t._output_nr = src._output_nr
    if t._retains_grad and old is not None and t._grad_fn is not None:
        old._retained.pop(nr, None)
        t._grad_fn.retain(t._output_nr, weakref.ref(t))


def _inplace_view(x, functional):
    base = x._base
    x.grad_fn  # noqa: B018 -- brings a stale view's history up to date first
    meta = x._view_meta
    if meta is INFERENCE_VIEW:
        raise RuntimeError(
            "A view was created in inference mode and is being modified inplace in normal mode. "
            "Given that this use case is ambiguous and error-prone, it is forbidden. You can "
            "clarify your code by moving both the view and the inplace either both inside the "
            "inference_mode block (if you don't want the inplace to be tracked) or both outside "
            "(if you want the inplace to be tracked)."
        )
    if meta is NO_GRAD_VIEW:
        raise RuntimeError(
            f"{_NO_GRAD} Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            "inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked)."
        )
    if meta is not None:
        kind, name, nr = meta
        why = _CUSTOM if kind == "custom" else _MULTI
        if x._requires_grad:
            raise RuntimeError(
                f"Output {nr} of {name} is a view and is being modified inplace. {why}"
            )
        raise RuntimeError(f"{_NO_GRAD} {why}")
    if base._grad_fn is None and base._requires_grad:
        raise RuntimeError(VIEW_LEAF_ERROR)
    new = functional(x.clone())
    if _mixed(base, x):
        out = _copy_slices_mixed(base, x, new)
    else:
        geom = (x._shape, x._stride, x._offset)
        out = CopySlices.apply(base, new, geom)  # writes the region, records the base's history
    _take_history(base, out)
    _as_view_of_base(x)
    _saves_written(x, new)
    return x


def _mixed(base, v) -> bool:
    """Whether view ``v`` and its base differ in being complex (``view_as_real``, ``.real``,
    ``.imag``, ``view_as_complex``): their geometries count different elements."""
    return (base.dtype.category == 3) is not (v.dtype.category == 3)


def _copy_slices_mixed(base, x, new):
    """``CopySlices`` for a view of the other kind (real of complex, or complex of real): the
    region written through the real side, the base's history taken through the views."""
    as_real, as_complex = COMPLEX_HOOKS["view_as_real"], COMPLEX_HOOKS["view_as_complex"]
    if base.dtype.category == 3:  # a real view of a complex base
        return as_complex(CopySlices.apply(as_real(base), new, _geom(x)))
    return CopySlices.apply(base, as_real(new), _pairs(_geom(x)))


def _as_view_of_base(v):
    """Gives view ``v`` the history of a view of its base's current history."""
    v._view_version = v._storage.version
    with enable_grad():
        base = v._base
        if _mixed(base, v):
            as_real, as_complex = COMPLEX_HOOKS["view_as_real"], COMPLEX_HOOKS["view_as_complex"]
            if base.dtype.category == 3:
                out = AsStrided.apply(as_real(base), v._shape, v._stride, v._offset)
            else:
                out = as_complex(AsStrided.apply(base, *_pairs(_geom(v))))
        else:
            out = AsStrided.apply(base, v._shape, v._stride, v._offset)
    _take_history(v, out)


def _refresh_view(v):
    """A view whose storage was written since its history was set: when its base requires
    grad, its history becomes a view of the base's current one (PyTorch regenerates it too)."""
    if v._view_meta is NO_GRAD_VIEW or v._view_meta is INFERENCE_VIEW or not v._base._requires_grad:
        v._view_version = v._storage.version
        return
    _as_view_of_base(v)


Tensor._refresh_view = staticmethod(_refresh_view)


# ---- the nodes: geometry is (shape, strides, offset) in elements of the shared storage ----------
def _span(t):
    """(first, count) of the storage elements a root tensor covers (strides >= 0)."""
    return _span_of(*_geom(t))


def _span_of(shape, stride, offset):
    if any(n == 0 for n in shape):
        return offset, 0
    return offset, sum((n - 1) * s for n, s in zip(shape, stride)) + 1


def _union_span(*geoms):
    """(first, count) of the storage elements covering every geometry (strides >= 0)."""
    spans = [_span_of(*g) for g in geoms]
    spans = [(lo, lo + n) for lo, n in spans if n]
    if not spans:
        return 0, 0
    lo = min(a for a, _ in spans)
    return lo, max(b for _, b in spans) - lo


def _overlapping(shape, stride) -> bool:
    """Whether two elements of a geometry may share a storage element: False only where each
    dim's stride steps past all that the smaller strides reach."""
    if any(n == 0 for n in shape):
        return False
    reach = 0
    for n, s in sorted(((n, s) for n, s in zip(shape, stride) if n > 1), key=lambda p: p[1]):
        if s <= reach:
            return True
        reach += (n - 1) * s
    return False


def _lay(buf, t, geom, lo):
    """Writes ``t`` into ``buf`` (a storage span starting at element ``lo``) at ``geom``;
    elements of an overlapping geometry that share a location add up there (the adjoint of
    reading one location many times)."""
    shape, stride, offset = geom
    if not _overlapping(shape, stride):
        launch(COPY, [t], t.dtype, t.dtype, out=buf._view(shape, stride, offset - lo))
        return
    offs = np.full((), offset - lo, np.int64)
    for n, s in zip(shape, stride):
        offs = np.add.outer(offs, np.arange(n, dtype=np.int64) * s)
    offs = Tensor._from_numpy(offs, D.int64, t.device)
    # the copy held until the launch: one that died first would never be made (fusion.py
    # leaves out the stores of storages that died before their launch ran)
    values = t.contiguous()
    t.device.backend.put(buf._record(), offs._record(), values._record(), True)


def _geom(t):
    return (t._shape, t._stride, t._offset)


def _pairs(geometry):
    """A complex view's geometry as its real view's (a last dim of the two parts)."""
    shape, stride, offset = geometry
    return (*shape, 2), (*(2 * s for s in stride), 1), 2 * offset


class _Restride(Function):
    """``t`` laid into a zero buffer (the base's storage span) at geometry ``src`` (``zero``
    cleared after), read back at geometry ``dst``: moves a gradient between a base and its
    view. Its adjoint is the same move the other way, so it differentiates any number of
    times."""

    @staticmethod
    def forward(ctx, t, src, dst, zero, lo, n):
        if t.dtype.category == 3:  # a complex gradient: moved as its real view's pairs
            out = _Restride.forward(
                ctx, real_view(t), _pairs(src), _pairs(dst), zero and _pairs(zero), 2 * lo, 2 * n
            )
            ctx.args = (src, dst, zero, lo, n)
            return complex_view(out)
        ctx.args = (src, dst, zero, lo, n)
        buf = Tensor._full((n,), 0, t.dtype, t.device)
        if n and t.numel():
            _lay(buf, t, src, lo)
            if zero is not None:
                shape, stride, offset = zero
                launch(FILL, [0], t.dtype, t.dtype, out=buf._view(shape, stride, offset - lo))
        shape, stride, offset = dst
        if not n:
            return Tensor._full(shape, 0, t.dtype, t.device)
        return launch(COPY, [buf._view(shape, stride, offset - lo)], t.dtype, t.dtype)

    @staticmethod
    def backward(ctx, g):
        src, dst, zero, lo, n = ctx.args
        return _Restride.apply(g, dst, src, zero, lo, n), None, None, None, None, None


class AsStrided(Function):
    """A view of a tensor's storage at any geometry: ``Tensor.as_strided``, and the history
    of a view written in place (as PyTorch's AsStridedBackward0). The gradient is laid into a
    zero span of the storage at the view's geometry (overlapping elements adding up) and read
    back at the input's, divided where the input's own elements share a location, as PyTorch
    does."""

    @staticmethod
    def forward(ctx, x, shape, stride, offset):
        view = (tuple(shape), tuple(stride), offset)
        lo, n = _union_span(_geom(x), view)
        ctx.args = (_geom(x), view, lo, n)
        return x._view(shape, stride, offset)

    @staticmethod
    def backward(ctx, g):
        src, view, lo, n = ctx.args
        gx = _Restride.apply(g, view, src, None, lo, n)
        if _overlapping(src[0], src[1]):
            with no_grad():  # how many of the input's elements share each one's location
                ones = Tensor._full(src[0], 1, g.dtype.to_real(), g.device)
                count = _Restride.apply(ones, src, src, None, lo, n)
            # (the division outside no_grad: under create_graph it is part of the gradient)
            gx = gx / count
        return gx, None, None, None


class CopySlices(Function):
    """``base`` with the region at ``geom`` overwritten by ``new``, written into base's own
    storage; the gradient of the region goes to ``new``, the rest to base's old history."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, new, geom):
        lo, n = _span(base)
        ctx.args = (_geom(base), geom, lo, n, new.dtype)
        copy_into(base._view(*geom), new)
        return base

    @staticmethod
    def backward(ctx, g):
        base, view, lo, n, new_dt = ctx.args
        need_base, need_new = ctx.needs_input_grad[:2]
        gb = _Restride.apply(g, base, base, view, lo, n) if need_base else None
        gv = _Restride.apply(g, base, view, None, lo, n) if need_new else None
        if gv is not None and gv.dtype is not new_dt:
            gv = gv.to(new_dt)
        return gb, gv, None


class _Overwrite(Function):
    """``old``'s shape and dtype holding ``src`` (a tensor, broadcast, or a number): the
    recorded form of copy_ and fill_; ``old``'s gradient is zeros, as PyTorch's (not None: the
    graph before the write still runs, and a leaf under it gets a zero ``.grad``)."""

    @staticmethod
    def forward(ctx, old, src):
        out = Tensor._empty(old._shape, old.dtype, old.device)
        if isinstance(src, Tensor):
            ctx.src = (src._shape, src.dtype)
            launch(COPY, [src], old.dtype, src.dtype, out=out)
        else:
            ctx.src = None
            launch(FILL, [src], old.dtype, old.dtype, out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        g_old = Tensor._full(g._shape, 0, g.dtype, g.device) if ctx.needs_input_grad[0] else None
        if ctx.src is None:
            return g_old, None
        shape, dt = ctx.src
        g = sum_to(g, shape)
        return g_old, g if g.dtype is dt else g.to(dt)


def copy_(x, src, non_blocking=False):
    """Copies ``src`` (broadcast, converted) into ``x``.

    >>> x = clgrad.zeros(3)
    >>> x.copy_(clgrad.tensor([1, 2, 3]))
    tensor([1., 2., 3.])
    """
    if not isinstance(src, Tensor):
        src = Tensor._from_numpy(np.asarray(src), x.dtype, x.device)
    if broadcast_shapes(x._shape, src._shape) != x._shape:
        raise RuntimeError(
            f"output with shape {list(x._shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(x._shape, src._shape))}"
        )
    src_here = src.to(x.device)
    return inplace(
        x,
        lambda old: _Overwrite.apply(old, src_here),
        lambda: copy_into(x, src_here),
        src,
    )


def fill_(x, value):
    """Sets every element of ``x`` to ``value``.

    >>> clgrad.zeros(2).fill_(7)
    tensor([7., 7.])
    """
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        return copy_(x, value)

    def direct():
        # (the number as a fill of x converts it: an expanded x's one element is not x's size)
        launch(FILL, [scalar_fill_value(value, x)], x.dtype, x.dtype, out=distinct_elements(x))
        x._bump_version()

    return inplace(x, lambda old: _Overwrite.apply(old, value), direct)


def distinct_elements(x):
    """``x``, or where a dim of stride 0 makes elements share memory (an expanded tensor),
    the view of its distinct elements: one value written over them all is PyTorch's fill_,
    which refuses no overlap."""
    if 0 not in x._stride:  # (the common case, one check)
        return x
    shape = tuple(1 if s == 0 else n for n, s in zip(x._shape, x._stride))
    return x._view(shape, x._stride, x._offset)


def shared_dims(x) -> tuple:
    """The dims along which ``x``'s elements share memory (stride 0 over more than one
    element: an expanded tensor's), none where it has no element; where there are some,
    PyTorch's ``has_internal_overlap`` says Yes."""
    if 0 not in x._stride or 0 in x._shape:  # (the common case, one check)
        return ()
    return tuple(d for d, (n, s) in enumerate(zip(x._shape, x._stride)) if s == 0 and n > 1)


def warn_expanded(op: str, example: str) -> None:
    """PyTorch's warning for the writes it still lets into an expanded tensor (masked_fill_,
    index_fill_, index_put_), each element after the other."""
    warnings.warn(
        f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before "
        f"performing this operation. This also applies to advanced indexing e.g. {example}",
        UserWarning,
        stacklevel=3,
    )


def zero_(x):
    """Sets every element of ``x`` to zero.

    >>> clgrad.ones(2).zero_()
    tensor([0., 0.])
    """
    return fill_(x, 0)
