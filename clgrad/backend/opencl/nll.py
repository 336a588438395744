"""nll_loss's forward and gradient as a kernel each (kernels/nll.cl.mako): cross_entropy of a
batch is then log_softmax, one nll kernel and a division, instead of ten small kernels for a
one-hot mask, a select and the reductions."""

from __future__ import annotations

import numpy as np

from ..base import View
from .launch import INDEX_NP, extent, group_kernel, index_type


def _common(I, target: View, weight, c: int, inner: int, ignore_index: int) -> list:
    """The arguments every nll kernel takes after its own: targets, weights, geometry."""
    args = [target.buffer, I(target.offset)]
    if weight is None:  # any buffer: the kernel reads no weight
        args += [target.buffer, I(0), np.int32(0)]
    else:
        args += [weight.buffer, I(weight.offset), np.int32(1)]
    return args + [I(c), I(inner), np.int64(ignore_index)]


def nll_terms(rt, out: View, x: View, target: View, weight, ignore_index: int, acc) -> None:
    """out (outer * inner) = -weight[t] * x[o, t, i] per element (0 where it doesn't count)."""
    n = out.numel()
    c, inner = x.shape[1], x.shape[2]
    itype = index_type(extent(x), extent(out), extent(target), n + rt.local_size)
    I = INDEX_NP[itype]
    k = group_kernel(rt, "nll.cl.mako", "cg_nll_terms", x, acc, itype)
    args = [out.buffer, I(out.offset), x.buffer, I(x.offset)]
    args += _common(I, target, weight, c, inner, ignore_index) + [I(n)]
    ls = rt.local_size
    rt.launch(k, (-(-n // ls) * ls,), (ls,), args)


def nll_total(rt, out: View, x: View, target: View, weight, ignore_index: int, acc) -> None:
    """out (groups, 2) in ``acc``, contiguous: per group of ceil(n / groups) consecutive
    elements, the sum of -weight[t] * x[o, t, i] and the sum of weight[t]."""
    n = target.numel()
    c, inner = x.shape[1], x.shape[2]
    groups = out.shape[0]
    chunk = -(-n // groups)
    itype = index_type(extent(x), extent(target), extent(out), n + chunk)
    I = INDEX_NP[itype]
    k = group_kernel(rt, "nll.cl.mako", "cg_nll_total", x, acc, itype)
    args = [out.buffer, I(out.offset), x.buffer, I(x.offset)]
    args += _common(I, target, weight, c, inner, ignore_index) + [I(n), I(chunk)]
    ls = rt.local_size
    rt.launch(k, (groups * ls,), (ls,), args)


def nll_grad(rt, out: View, g: View, target: View, weight, ignore_index: int, acc) -> None:
    """out (outer, C, inner) = -weight[t] * g[e] at each element's target class, else 0;
    ``g`` holds one value per element (outer * inner, any stride) or one for all (stride 0)."""
    numel = out.numel()
    c, inner = out.shape[1], out.shape[2]
    itype = index_type(extent(out), extent(g), extent(target), numel + rt.local_size)
    I = INDEX_NP[itype]
    k = group_kernel(rt, "nll.cl.mako", "cg_nll_grad", out, acc, itype)
    args = [out.buffer, I(out.offset), g.buffer, I(g.offset), I(g.strides[0])]
    args += _common(I, target, weight, c, inner, ignore_index) + [I(numel)]
    ls = rt.local_size
    rt.launch(k, (-(-numel // ls) * ls,), (ls,), args)
