"""Convolution's column matrix on an OpenCL device: the unfold (im2col) and fold (col2im)
kernels of ``kernels/conv.cl.mako``, and max pooling's window maximum and its gradient.

Entry points: ``unfold(rt, out, x, stride, dilation, padding)``, ``fold(rt, out, cols,
stride, dilation, padding)``, ``window_max(rt, values, indices, win)`` and
``window_put(rt, out, grad, indices, win)``, ``rt`` the device's ``Runtime``. The column views
are (N, C, *kernel, *out) and the images (N, C, *spatial), 1 to 3 spatial dims; the kernels
work in 3, so shorter geometries are padded with leading dims of size 1.
"""

from __future__ import annotations

import math

import numpy as np

from ..base import View
from .launch import (
    INDEX_NP,
    dims_args,
    dims_types,
    divisor,
    extent,
    index_type,
    merge_dims,
)

TEMPLATE = "conv.cl.mako"
SPATIAL = 3  # the kernels' spatial dims
# Work-items per work-group: fixed, with the range padded and the kernels bounds-checked,
# because PoCL compiles a kernel again for each local size it meets.
LOCAL = 64
# window_max, window_put: windows of up to this many elements have their walk unrolled (a
# program per window size); larger ones loop over sizes given as arguments
UNROLL_WINDOW = 64
# fold: output elements of one row a work-item sums in private memory (a 32-wide image row
# is one work-item's; wider rows are split among several)
FOLD_CHUNK = 32


def _geometry(spatial, kernel, outs, stride, dilation, padding):
    """The geometry as kernel arguments: the sizes of the 3 spatial dims, then the kernel,
    out, stride, dilation and padding of each, with leading dims of size 1."""
    lead = SPATIAL - len(spatial)

    def three(v, fill):
        return (fill,) * lead + tuple(v)

    return [
        *three(spatial, 1),
        *three(kernel, 1),
        *three(outs, 1),
        *three(stride, 1),
        *three(dilation, 1),
        *three(padding, 0),
    ]


def _kernel(rt, function, dt, itype, window=None, dims=1, taps=None):
    """``function`` of the template for dtype ``dt`` (one program per dtype, index type,
    ``window``, the pooling window whose walk unrolls, or None, ``dims``, the pooling
    windows' merged position dims, and ``taps``, fold's unrolled kernel window, or None)."""
    ct = dt.compute_ctype
    return rt.cached(
        ("conv", function, dt, itype, window, dims, taps),
        TEMPLATE,
        function,
        st=dt.ctype,
        ct=ct,
        index_t=itype,
        CH=FOLD_CHUNK,
        window=window,
        dims=dims,
        taps=taps,
        fp64=dt.name == "float64",
    )


def _launch(rt, kernel, items, args):
    rt.launch(kernel, (-(-items // LOCAL) * LOCAL,), (LOCAL,), args)


def unfold(rt, out: View, x: View, stride, dilation, padding) -> None:
    """out (N, C, *kernel, *outs) = the windows of x (N, C, *spatial, any strides) at
    ``stride`` and ``dilation`` after ``padding`` zeros before each spatial dim (and as many
    after as the windows reach); out is contiguous but for its (n, c, *kernel) blocks of outs,
    which may lie further apart (a padded column matrix: ``Backend.matmul_row_align``)."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    kernel, outs = out.shape[2 : 2 + nd], out.shape[2 + nd :]
    o2 = outs[-1]
    rows = out.numel() // o2 if o2 else 0
    if rows == 0:
        return
    # o1 rows per work-item (the kernel's comment): one on GPUs, a whole plane on CPU devices;
    # of each row o2 elements, all but where the driver limits a work-item's loop iterations
    # (half of the limit: the row loop's iterations count too)
    o1 = outs[-2] if nd > 1 else 1
    span1 = 1 if rt.is_gpu else o1
    span2 = o2
    if rt.loop_limit is not None:
        budget = rt.loop_limit // 2
        span2 = min(o2, budget)
        span1 = max(1, min(span1, budget // span2))
    items = rows // o1 * -(-o1 // span1) * -(-o2 // span2)
    itype = index_type(extent(out), extent(x))
    I = INDEX_NP[itype]
    xs = (0,) * (SPATIAL - nd) + tuple(x.strides[2:])
    args = [
        out.buffer,
        I(out.offset),
        x.buffer,
        I(x.offset),
        I(x.strides[0]),
        I(x.strides[1]),
        *map(I, xs),
        I(c),
        *map(I, _geometry(x.shape[2:], kernel, outs, stride, dilation, padding)),
        I(out.strides[1 + nd]),  # the stride of the last kernel dim: one block of outs
        I(span1),
        I(span2),
        I(items),
    ]
    _launch(rt, _kernel(rt, "cg_conv_unfold", x.dtype, itype), items, args)


def fold(rt, out: View, cols: View, stride, dilation, padding) -> None:
    """out (N, C, *spatial), contiguous = the sum of the windows of cols (N, C, *kernel,
    *outs), contiguous, put back where ``unfold`` took them from (the adjoint of unfold)."""
    nd = out.ndim - 2
    spatial = out.shape[2:]
    kernel, outs = cols.shape[2 : 2 + nd], cols.shape[2 + nd :]
    w2 = spatial[-1]
    rows = out.numel() // w2 if w2 else 0
    if rows == 0:
        return
    geometry = _geometry(spatial, kernel, outs, stride, dilation, padding)
    taps = (1,) * (SPATIAL - nd) + tuple(kernel)
    if all(s == 1 for s in stride) and math.prod(taps) <= UNROLL_WINDOW and cols.numel():
        # a work-item per element, the window unrolled (the kernel's comment); geometry[6:9]
        # are the outs, [12:18] the dilations and paddings
        items = out.numel()
        itype = index_type(extent(out), extent(cols), items)
        I = INDEX_NP[itype]
        sizes = (spatial[-1], spatial[-2] if nd > 1 else 1, spatial[-3] if nd > 2 else 1)
        args = [out.buffer, I(out.offset), cols.buffer, I(cols.offset)]
        for size in sizes:
            args += [I(size), *map(np.uint32, divisor(size))]
        args += [*map(I, geometry[6:9]), *map(I, geometry[12:18]), I(items)]
        cl_kernel = _kernel(rt, "cg_conv_fold_taps", out.dtype, itype, taps=taps)
        _launch(rt, cl_kernel, items, args)
        return
    chunks = -(-w2 // FOLD_CHUNK)
    items = rows * chunks
    itype = index_type(extent(out), extent(cols), items)
    I = INDEX_NP[itype]
    args = [
        out.buffer,
        I(out.offset),
        cols.buffer,
        I(cols.offset),
        *map(I, geometry),
        I(chunks),
        I(items),
    ]
    _launch(rt, _kernel(rt, "cg_conv_fold", out.dtype, itype), items, args)


def window_max(rt, values: View, indices: View, win: View) -> None:
    """values, indices (N, C, *outs), contiguous = the largest element of each window of
    ``win`` (N, C, *outs, *kernel; 1 to 3 spatial dims, any strides) and its row-major index in
    the window (the first largest, or the last NaN, as PyTorch's max pooling)."""
    args = [values.buffer, indices.buffer, win.buffer]
    _windows_launch(rt, "cg_window_max", args, values, indices, win)


def window_put(rt, out: View, grad: View, indices: View, win: View) -> None:
    """Max pooling's gradient where ``win`` (N, C, *outs, *kernel), a windows view of
    ``out``, tiles it: each window's element at ``indices`` gets ``grad``, the others 0
    (``grad``, ``indices``: (N, C, *outs), contiguous)."""
    args = [out.buffer, grad.buffer, indices.buffer]
    _windows_launch(rt, "cg_window_put", args, grad, indices, win)


def _windows_launch(rt, function, buffers, per_window, indices, win):
    """Launches ``function`` (cg_window_max or cg_window_put: a work-item per window) with
    ``buffers`` and the geometry of ``win``; ``per_window`` and ``indices`` hold one element
    per window (N, C, *outs), contiguous."""
    nd = (win.ndim - 2) // 2
    windows = per_window.numel()
    if windows == 0:
        return
    # the window positions (N, C, *outs) merged where win walks them as one run: a pooled
    # contiguous image is (rows, O2), one split per window (each costs a multiply and a shift)
    positions, [strides] = merge_dims(win.shape[: 2 + nd], [win.strides[: 2 + nd]])
    kernel = win.shape[2 + nd :]
    lead = SPATIAL - nd
    itype = index_type(extent(win), extent(per_window), extent(indices))
    I = INDEX_NP[itype]
    window = (1,) * lead + tuple(kernel)
    unroll = math.prod(window) <= UNROLL_WINDOW  # a program per window size, walk unrolled
    dims = len(positions)
    args = [
        *buffers,
        I(per_window.offset),
        I(indices.offset),
        I(win.offset),
        *[t(a) for t, a in zip(dims_types(I, 1, dims), dims_args(positions, [strides], dims))],
        *([] if unroll else map(I, window)),
        *map(I, (0,) * lead + tuple(win.strides[2 + nd :])),
        I(windows),
    ]
    cl_kernel = _kernel(rt, function, win.dtype, itype, window if unroll else None, dims)
    _launch(rt, cl_kernel, windows, args)
