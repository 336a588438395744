"""Sorting rows on an OpenCL device: the bitonic network of ``kernels/sort.cl.mako``."""

from __future__ import annotations

import numpy as np


def sort(rt, values, indices, x, descending):
    """Sorts each row (the last dim) of the contiguous view ``x`` into contiguous ``values``
    and int64 ``indices``: log2(P) * (log2(P) + 1) / 2 launches of one compare-exchange stage
    each, P the row length rounded up to a power of two."""
    n = x.shape[-1] if x.shape else 1
    rows = x.numel() // n if n else 0
    if rows == 0 or n == 0:
        return
    P = 1 << max(0, (n - 1).bit_length())
    st, ct = x.dtype.ctype, x.dtype.compute_ctype
    params = dict(st=st, ct=ct, descending=bool(descending), fp64=x.dtype.name == "float64")

    def kernel(function):
        return rt.cached(
            ("sort", function, x.dtype, bool(descending)), "sort.cl.mako", function, **params
        )

    L = np.int64
    idx_bytes = rows * P * 8
    idx = rt.allocator.alloc(idx_bytes)
    try:
        rt.launch1d(kernel("cg_sort_init"), rows * P, [idx, L(P), L(rows * P)])
        step = kernel("cg_sort_step")
        half = rows * (P // 2)
        k = 2
        while k <= P:
            j = k // 2
            while j >= 1:
                rt.launch1d(
                    step, half, [x.buffer, L(x.offset), L(n), idx, L(P), L(k), L(j), L(half)]
                )
                j //= 2
            k *= 2
        rt.launch1d(
            kernel("cg_sort_out"),
            rows * n,
            [
                x.buffer,
                L(x.offset),
                L(n),
                idx,
                L(P),
                values.buffer,
                L(values.offset),
                indices.buffer,
                L(indices.offset),
                L(rows * n),
            ],
        )
    finally:
        # the queue runs in order: the scratch indices may go back once the launches are queued
        rt.allocator.release(idx, idx_bytes)
