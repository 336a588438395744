"""Sorting rows on an OpenCL device: the bitonic network of ``kernels/sort.cl.mako``."""

from __future__ import annotations

import numpy as np

# rows up to this padded length sort in local memory, one launch (cg_sort_local): keys and
# int indices of 2048 elements take 24 KiB at most (8-byte keys), within every device's 32 KiB
LOCAL_MAX = 2048
# topk selects in one pass over each row (``topk``) for k up to this (a work-item's list), on a
# GPU only from this many rows (one work-item each)
TOPK_MAX_K = 64
TOPK_GPU_MIN_ROWS = 4096


def sort(rt, values, indices, x, descending):
    """Sorts each row (the last dim) of the contiguous view ``x`` into contiguous ``values``
    and int64 ``indices``: P the row length rounded up to a power of two, a row of P <=
    LOCAL_MAX in one launch (a work-group per row runs the bitonic network in local memory),
    a longer one in log2(P) * (log2(P) + 1) / 2 launches of one compare-exchange stage each
    (PoCL: (256, 1024) float32 rows 89 -> 15 ms of CPU time, int64 ones 101 -> 20 ms)."""
    n = x.shape[-1] if x.shape else 1
    rows = x.numel() // n if n else 0
    if rows == 0 or n == 0:
        return
    P = 1 << max(0, (n - 1).bit_length())
    st, ct = x.dtype.ctype, x.dtype.compute_ctype
    params = dict(st=st, ct=ct, descending=bool(descending), fp64=x.dtype.name == "float64", K=None)
    L = np.int64
    # an item per compare-exchange where the group may be that large (PoCL then vectorizes
    # each stage, a loop over pairs inside it took 2-3x the time); GPUs loop in groups of 256
    ls = min(P // 2, rt.max_work_group_size, 256 if rt.is_gpu else 1024)
    if 2 <= P <= LOCAL_MAX:
        k = rt.cached(
            ("sort_local", x.dtype, bool(descending), P, ls),
            "sort.cl.mako",
            "cg_sort_local",
            P=P,
            ls=ls,
            **params,
        )
        args = [x.buffer, x.buffer, L(x.offset), L(n), values.buffer, L(values.offset)]
        rt.launch(k, (rows * ls,), (ls,), args + [indices.buffer, L(indices.offset)])
        return

    def kernel(function):
        return rt.cached(
            ("sort", function, x.dtype, bool(descending)),
            "sort.cl.mako",
            function,
            P=None,
            ls=None,
            **params,
        )

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


def selects(rt, rows, n, k) -> bool:
    """Whether ``topk`` serves k of (rows, n) rows: k up to TOPK_MAX_K, enough rows to fill a
    GPU, a row short enough for llvmpipe to let a work-item loop over it."""
    if not 0 < k <= TOPK_MAX_K or (rt.is_gpu and rows < TOPK_GPU_MIN_ROWS):
        return False
    # (llvmpipe counts each loop's exit test too: an element takes at most k + 2)
    return rt.loop_limit is None or n * (k + 2) + k + 1 <= rt.loop_limit


def topk(rt, values, indices, x, k, descending):
    """The first ``k`` of each row (the last dim) of the contiguous ``x`` in ``sort``'s order
    into contiguous (rows, k) ``values`` and ``indices``, without sorting the rows: one
    work-item per row keeps a sorted list of k (``cg_topk_rows``; (256, 1024) float32 rows,
    k = 10, on PoCL: about 1 ms against 50 ms for the whole sort)."""
    n = x.shape[-1]
    rows = x.numel() // n
    K = 1 << max(0, (k - 1).bit_length())
    kernel = rt.cached(
        ("topk", x.dtype, bool(descending), K),
        "sort.cl.mako",
        "cg_topk_rows",
        st=x.dtype.ctype,
        ct=x.dtype.compute_ctype,
        descending=bool(descending),
        fp64=x.dtype.name == "float64",
        P=None,
        ls=None,
        K=K,
    )
    L = np.int64
    args = [x.buffer, x.buffer, L(x.offset), L(n), L(k), L(rows), values.buffer]
    rt.launch1d(kernel, rows, args + [L(values.offset), indices.buffer, L(indices.offset)])
