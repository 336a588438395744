"""layer_norm and batch_norm as a kernel each way (kernels/norm.cl.mako): a work-group per
normalized group computes its statistics and writes the output, or the gradient, while the
group sits in cache, instead of ~20 small kernels for the means, the deviations and the
affine map (and their gradients)."""

from __future__ import annotations

from ..base import View
from .launch import INDEX_NP, SCALAR_NP, extent, index_type

# None: a barrier closes each step of a loop over a group on CPU devices only (as softmax's)
SPLIT = None


def _kernel(rt, function, x: View, weight, bias, per, acc, itype):
    st, ct = x.dtype.ctype, acc.compute_ctype
    affine = per if weight is not None else None
    with_bias = per if bias is not None else None
    split = not rt.is_gpu if SPLIT is None else SPLIT
    return rt.cached(
        ("norm", function, st, ct, affine, with_bias, itype, rt.local_size, split),
        "norm.cl.mako",
        function,
        st=st,
        ct=ct,
        affine=affine,
        bias=with_bias,
        ls=rt.local_size,
        split=split,
        index_t=itype,
        fp64="double" in (st, ct),
    )


def _optional(I, *views) -> list:
    """Buffer and offset of each view that is not None."""
    args = []
    for v in views:
        if v is not None:
            args += [v.buffer, I(v.offset)]
    return args


def norm(rt, y: View, stats, x: View, weight, bias, per, eps, acc) -> None:
    """See ``Backend.norm``."""
    a, c, b = x.shape
    itype = index_type(extent(x), extent(y), a * b + rt.local_size)
    I = INDEX_NP[itype]
    k = _kernel(rt, "cg_norm_forward", x, weight, bias, per, acc, itype)
    args = [x.buffer, I(x.offset), y.buffer, I(y.offset), *_optional(I, weight, bias)]
    args += [v.buffer for v in stats] + [I(a), I(c), I(b), SCALAR_NP[acc.compute_ctype](eps)]
    rt.launch(k, (c * rt.local_size,), (rt.local_size,), args)


def norm_backward(rt, dx: View, dw, db, x: View, g: View, weight, mean, rstd, per, acc) -> None:
    """See ``Backend.norm_backward``."""
    a, c, b = x.shape
    itype = index_type(extent(x), extent(g), extent(dx), a * b + rt.local_size)
    I = INDEX_NP[itype]
    bias = db if per == "c" else None  # the template's db slot is for per-channel sums only
    k = _kernel(rt, "cg_norm_backward", x, weight, bias, per, acc, itype)
    args = [x.buffer, I(x.offset), g.buffer, I(g.offset), dx.buffer, I(dx.offset)]
    args += _optional(I, weight, dw if per == "c" else None, bias)
    args += [mean.buffer, rstd.buffer, I(a), I(c), I(b)]
    rt.launch(k, (c * rt.local_size,), (rt.local_size,), args)
