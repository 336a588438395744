"""layer_norm and batch_norm as a kernel each way (kernels/norm.cl.mako): a work-group per
normalized group on GPUs, a work-item per group walking it in vectors on CPU devices, computes
its statistics and writes the output, or the gradient, while the group sits in cache, instead
of ~20 small kernels for the means, the deviations and the affine map (and their gradients).
One program per dtype: the weight's and bias's presence and layout are arguments."""

from __future__ import annotations

import numpy as np

from ..base import View
from .launch import INDEX_NP, SCALAR_NP, extent, group_kernel, index_type

# None: a barrier closes each step of a loop over a group on CPU devices only (as softmax's)
SPLIT = None
# None: CPU devices take a work-item per group (the _item kernels), GPUs a work-group; True or
# False forces it (the tests run the work-group kernels on PoCL)
ITEM = None


# the walks over a group each kernel makes (forward: the mean, the deviations, the output)
PASSES = 3


def fits(rt, n: int) -> bool:
    """Whether the kernels normalize groups of ``n`` elements on ``rt``'s device: where loops
    are limited (``Runtime.loop_limit``), a work-group's items walk a group in steps of the
    group size, a pass after another."""
    limit = rt.loop_limit
    return limit is None or PASSES * -(-n // rt.local_size) <= limit


def _launch(rt, function, x: View, acc, itype, groups, args):
    """``function`` (or its _item variant) over ``groups`` normalized groups: a work-group per
    group where a work-item's walks would pass the device's loop limit."""
    split = not rt.is_gpu if SPLIT is None else SPLIT
    item = not rt.is_gpu if ITEM is None else ITEM
    if rt.loop_limit is not None and PASSES * x.shape[0] * x.shape[2] > rt.loop_limit:
        item = False
    name = function + "_item" if item else function
    k = group_kernel(rt, "norm.cl.mako", name, x, acc, itype, split=split)
    if item:  # one group a work-group, so that the device's cores share them out
        rt.launch(k, (groups,), (1,), args)
    else:
        rt.launch(k, (groups * rt.local_size,), (rt.local_size,), args)


def _vectors(I, x: View, *views) -> list:
    """Buffer and offset of each view; x's buffer for an absent one (never touched)."""
    args = []
    for v in views:
        args += [x.buffer, I(0)] if v is None else [v.buffer, I(v.offset)]
    return args


def _sizes(I, x: View, weight, bias, per) -> list:
    a, c, b = x.shape
    flags = (weight is not None, bias is not None, per == "c")
    return [I(a), I(c), I(b), *(np.int32(f) for f in flags)]


def norm(rt, y: View, stats, x: View, weight, bias, per, eps, acc) -> None:
    """See ``Backend.norm``."""
    a, c, b = x.shape
    itype = index_type(extent(x), extent(y), *map(extent, stats), a * b + rt.local_size)
    I = INDEX_NP[itype]
    args = [x.buffer, I(x.offset), y.buffer, I(y.offset), *_vectors(I, x, weight, bias)]
    args += [arg for v in stats for arg in (v.buffer, I(v.offset))]
    args += _sizes(I, x, weight, bias, per)
    args.append(SCALAR_NP[acc.compute_ctype](eps))
    _launch(rt, "cg_norm_forward", x, acc, itype, c, args)


def norm_backward(rt, dx: View, dw, db, x: View, g: View, weight, mean, rstd, per, acc) -> None:
    """See ``Backend.norm_backward``."""
    a, c, b = x.shape
    views = (x, g, dx, mean, rstd)
    itype = index_type(*map(extent, views), a * b + rt.local_size)
    I = INDEX_NP[itype]
    args = [x.buffer, I(x.offset), g.buffer, I(g.offset), dx.buffer, I(dx.offset)]
    args += _vectors(I, x, weight, dw, db)
    args += [mean.buffer, I(mean.offset), rstd.buffer, I(rstd.offset)]
    # has_b: whether db is written (only per group)
    args += _sizes(I, x, weight, db, per)
    _launch(rt, "cg_norm_backward", x, acc, itype, c, args)
