"""softmax and log_softmax along one dim as one kernel (kernels/softmax.cl.mako), which
reads each row three times while it sits in cache, instead of the four kernels and three
intermediate tensors of max, exp, sum and divide.

A long contiguous row (the last dim) gets a work-group; rows along another dim (adjacent rows
adjacent in memory) and short rows get a work-item each, so that a work-group is not spent on
a few elements."""

from __future__ import annotations

from ..base import View
from .launch import INDEX_NP, extent, index_type

# a contiguous row at least this long gets a work-group
GROUP_ROW = 512
# None: a barrier closes each step of a row loop on CPU devices only (see the template).
# True/False forces it: the tests run the GPU kernels on PoCL.
SPLIT = None


# the passes a work-item makes over its part of a row (max, sum, write)
PASSES = 3
# Work-items per work-group on CPU devices. PoCL runs the code between two barriers as a loop
# over the group's items, so a group's combines (a tree of log2(ls) barrier steps) and each
# step of its walk cost a loop over all of them: 32 items per row made log_softmax's forward
# and backward 1.1-2.6x faster than the device's 256 (rows of 100 to 30,000 floats, the sizes
# alternating in one process), 16 and 8 slower again.
CPU_LOCAL = 32


# CPU devices: a contiguous float row is a work-item's, walked in vectors this wide (the vec
# kernel), in launches of VEC_LOCAL rows per work-group
VEC_WIDTH = 8
VEC_LOCAL = 16


def _vector(rt, n, inner, in_ct, ct, out_ct) -> bool:
    """Whether rows of ``n`` elements ``inner`` apart take the vec kernel on ``rt``'s device."""
    return not rt.is_gpu and inner == 1 and in_ct == ct == out_ct == "float" and SPLIT is None


def _grouped(n: int, inner: int) -> bool:
    """Whether rows of ``n`` elements ``inner`` apart get a work-group each."""
    return inner == 1 and n >= GROUP_ROW


def fits(rt, n: int, inner: int) -> bool:
    """Whether the kernels take rows of ``n`` elements ``inner`` apart on ``rt``'s device:
    where loops are limited (``Runtime.loop_limit``), a work-item walks its row, or its part
    of a work-group's row, ``PASSES`` times."""
    limit = rt.loop_limit
    walk = -(-n // _local_size(rt)) if _grouped(n, inner) else n
    if not rt.is_gpu and inner == 1:  # the vec kernel's: whole vectors, then the tail
        walk = max(walk, n // VEC_WIDTH + VEC_WIDTH)
    return limit is None or PASSES * walk <= limit


def _local_size(rt) -> int:
    """The kernels' work-group size (a power of 2): the device's, at most CPU_LOCAL on CPUs."""
    return rt.local_size if rt.is_gpu else min(rt.local_size, CPU_LOCAL)


def softmax(rt, out: View, x: View, dim: int, log: bool, acc, g: View | None = None) -> None:
    """out = (log_)softmax of x along ``dim``; with ``g``, out = its gradient for the
    incoming ``g`` where x is the (log_)softmax's output. x, g and out are contiguous, alike in
    shape, with at least one element; computed in ``acc``."""
    shape = x.shape
    n = shape[dim]
    inner = 1
    for s in shape[dim + 1 :]:
        inner *= s
    rows = x.numel() // n
    views = (x, out) if g is None else (x, g, out)
    in_ct, ct, out_ct = x.dtype.ctype, acc.compute_ctype, out.dtype.ctype
    vec = VEC_WIDTH if _vector(rt, n, inner, in_ct, ct, out_ct) else 0
    grouped = not vec and _grouped(n, inner)
    ls = VEC_LOCAL if vec else _local_size(rt)
    itype = index_type(*map(extent, views), rows * n + ls)
    name = "log_softmax" if log else "softmax"
    backward = g is not None
    split = not rt.is_gpu if SPLIT is None else SPLIT
    function = f"cg_softmax_{'backward_' if backward else ''}{name}"
    k = rt.cached(
        ("softmax", name, backward, grouped, in_ct, ct, out_ct, ls, split, vec, itype),
        "softmax.cl.mako",
        f"{function}_{'vec' if vec else 'group' if grouped else 'item'}",
        in_ct=in_ct,
        ct=ct,
        out_ct=out_ct,
        ls=ls,
        log=log,
        backward=backward,
        split=split,
        vec=vec,
        index_t=itype,
        fp64="double" in (ct, in_ct, out_ct),
    )
    I = INDEX_NP[itype]
    args = [a for v in views for a in (v.buffer, I(v.offset))] + [I(n), I(inner), I(rows)]
    items = rows * ls if grouped else -(-rows // ls) * ls
    rt.launch(k, (items,), (ls,), args)
