"""layer_norm and batch_norm as a kernel each way (kernels/norm.cl.mako): a work-group per
normalized group computes its statistics and writes the output, or the gradient, while the
group sits in cache, instead of ~20 small kernels for the means, the deviations and the
affine map (and their gradients). One program per dtype: the weight's and bias's presence and
layout are arguments."""

from __future__ import annotations

import numpy as np

from ..base import View
from .launch import INDEX_NP, SCALAR_NP, extent, group_kernel, index_type

# None: a barrier closes each step of a loop over a group on CPU devices only (as softmax's)
SPLIT = None


def _kernel(rt, function, x: View, acc, itype):
    split = not rt.is_gpu if SPLIT is None else SPLIT
    return group_kernel(rt, "norm.cl.mako", function, x, acc, itype, split=split)


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
    k = _kernel(rt, "cg_norm_forward", x, acc, itype)
    args = [x.buffer, I(x.offset), y.buffer, I(y.offset), *_vectors(I, x, weight, bias)]
    args += [arg for v in stats for arg in (v.buffer, I(v.offset))]
    args += _sizes(I, x, weight, bias, per)
    args.append(SCALAR_NP[acc.compute_ctype](eps))
    rt.launch(k, (c * rt.local_size,), (rt.local_size,), args)


def norm_backward(rt, dx: View, dw, db, x: View, g: View, weight, mean, rstd, per, acc) -> None:
    """See ``Backend.norm_backward``."""
    a, c, b = x.shape
    views = (x, g, dx, mean, rstd)
    itype = index_type(*map(extent, views), a * b + rt.local_size)
    I = INDEX_NP[itype]
    k = _kernel(rt, "cg_norm_backward", x, acc, itype)
    args = [x.buffer, I(x.offset), g.buffer, I(g.offset), dx.buffer, I(dx.offset)]
    args += _vectors(I, x, weight, dw, db)
    args += [mean.buffer, I(mean.offset), rstd.buffer, I(rstd.offset)]
    # has_b: whether db is written (only per group)
    args += _sizes(I, x, weight, db, per)
    rt.launch(k, (c * rt.local_size,), (rt.local_size,), args)
