"""Reductions (sum, prod, max, min, argmax, argmin) and cumsum as OpenCL kernels.

Both read their input in place, whatever its strides (transposed, stepped, broadcast, offset):
the kept dims and the reduced (or scanned) dims are each merged into as few runs as they allow
(value reductions first order the reduced dims by stride), and the kernels walk those runs with
sizes and strides as arguments; the number of runs is a template parameter. Index arithmetic is
int, or long where a launch's offsets could pass 2**31.

The work is M outputs x R reduced elements. On CPU devices (PoCL), by layout:

* "inner": the reduced run is innermost (or nothing is contiguous). A work-item owns an output
  and walks its elements, with aligned 32-byte vector loads and four accumulators when they
  are contiguous; argmax/argmin take each block's extreme at max speed and rescan only a block
  that beats the best so far. Too few outputs to fill the cores (a full reduction has one):
  each output's range is cut into P chunks, a first launch writes M*P partials to scratch and
  a second, small launch of the same kernels combines them.
* "rows": the outputs are adjacent in memory and many rows reduce into them (sum over dim 0).
  An item owns 16 KB of adjacent outputs and a range of rows, walks them 8 rows at a time across
  all its outputs with their running values in a cache-resident scratch, so memory is read in
  long runs; a second launch combines the row ranges.
* "outer": the same layout when small, and argmax/argmin on it: an item owns unroll*vw adjacent
  outputs in registers and walks the rows.

On GPUs ("wg"): a work-group per (lx outputs, chunk); its ly items per output stride through
the chunk reading adjacent addresses (lx > 1 when adjacent outputs are adjacent in memory, or
rows are short), then combine in a tree in local memory; the same two-pass scheme. GPU_PATH
forces either path (the tests run the GPU kernels on PoCL).

cumsum: "lines" scans a line per item (a contiguous line 8 elements at a time with a prefix in
registers), "tiles" scans unroll*vw adjacent lines per item with vectors when lines are adjacent
in memory, "wg" (GPU) scans tiles of a line in local memory. Few long lines are cut into chunks
whose sums come from the reduction kernels; each chunk starts from the sum of those before it.

Semantics are NumPy's / PyTorch's: sum of nothing 0, prod 1; max/min propagate NaN; argmax and
argmin give the first extreme, a NaN counting as the extreme.
"""

from __future__ import annotations

import math

from .launch import INDEX_NP, extent, index_type, merge_dims

ARG_OPS = ("argmax", "argmin")
VALUE_OPS = ("sum", "prod", "max", "min")

# None: GPU kernels on GPUs only. True/False forces a path (tests run the GPU kernels on PoCL).
GPU_PATH = None
# CPU: a chunk is at least this many elements, so partials stay few and cheap to combine.
MIN_CHUNK = 1 << 14
# CPU: work-items per compute unit to aim for (PoCL balances work-groups across its threads).
ITEMS_PER_CU = 64
# CPU outer mode: accumulators per item (of vw lanes), rows an item walks before handing over a
# partial (short walks keep the items of a work-group on adjacent memory), most partials.
OUTER_UNROLL = 8
OUTER_ROWS = 32
MAX_PARTS = 1024
# CPU outer mode: below this many elements one launch beats two.
OUTER_SPLIT_MIN = 1 << 18
# CPU rows mode: rows walked at a time, bytes of adjacent outputs an item owns, items per CU.
ROWS_BLOCK = 8
ROWS_COLS_BYTES = 16384
ROWS_ITEMS_PER_CU = 16
# CPU cumsum across adjacent lines: vectors of lines per item.
SCAN_UNROLL = 8
# GPU work-group size (a power of two every OpenCL GPU supports).
WG = 256

_SIZES = {
    "uchar": 1,
    "char": 1,
    "short": 2,
    "half": 2,
    "int": 4,
    "float": 4,
    "long": 8,
    "double": 8,
}


def _gpu(rt) -> bool:
    return rt.is_gpu if GPU_PATH is None else bool(GPU_PATH)


def _vw(*cts: str) -> int:
    """Lanes of a CPU vector: 32 bytes of the widest type involved, at most 16 lanes.

    PoCL on AVX2 (no AVX-512) miscompiles or crashes on 64-byte vectors (float16, long8)
    handed to its builtins, so no vector here is wider than 256 bits.
    """
    return min(16, 32 // max(max(_SIZES[c], 4) if c == "half" else _SIZES[c] for c in cts))


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def _wg_size(rt) -> int:
    return min(WG, _pow2_floor(rt.device._cl.max_work_group_size))


def _aligned(rt, lanes, esize, *offsets) -> bool:
    """Whether vectors of ``lanes`` elements at these element offsets (all multiples of lanes)
    are aligned: they are when buffers start aligned to the vector, and OpenCL buffers start
    aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN."""
    return rt.device._cl.mem_base_addr_align // 8 >= lanes * esize and all(
        o % lanes == 0 for o in offsets
    )


def _fp64(*cts) -> bool:
    return "double" in cts


def _cpu_items(rt) -> int:
    """Most work-items a CPU launch runs; past that, items loop grid-stride."""
    return 1 << 22


def _cpu_launch(rt, kernel, n_items, args):
    """A CPU device: an item per task (no grid-stride loop: short tasks are faster so), in
    groups of up to 64 that still leave 8 groups per core to balance (PoCL runs a group's
    items one after another on one core)."""
    cu = rt.device.compute_units
    items = max(1, min(n_items, _cpu_items(rt)))
    local = 1
    while local < 64 and items // (local * 2) >= 8 * cu:
        local *= 2
    items = _cdiv(items, local) * local
    rt.launch(kernel, (items,), (local,), args)


class _Src:
    """What a reduction launch reads: a buffer, its element ctype, kept and reduced runs."""

    __slots__ = ("buf", "off", "ct", "idx", "kshape", "kstr", "rshape", "rstr", "ext")

    def __init__(self, buf, off, ct, idx, kshape, kstr, rshape, rstr, ext):
        self.buf, self.off, self.ct, self.idx = buf, off, ct, idx
        self.kshape, self.kstr, self.rshape, self.rstr = kshape, kstr, rshape, rstr
        self.ext = ext  # one past the largest element offset read


def _itype(*extents) -> str:
    """int or long: every index a launch forms, grid-stride overshoot included, fits."""
    return index_type(2 * max(extents) + (1 << 20))


class _Plan:
    """How one launch covers M outputs x R elements: the kernel's mode and shape of work."""

    __slots__ = ("mode", "vw", "lx", "ly", "base", "unroll", "aligned", "cb", "rb")

    def __init__(self, mode, base, vw=0, lx=0, ly=0, unroll=0, aligned=False, cb=0, rb=0):
        self.mode, self.base, self.vw, self.lx, self.ly = mode, base, vw, lx, ly
        self.unroll, self.aligned, self.cb, self.rb = unroll, aligned, cb, rb
        # base: work-items (work-groups for "wg") per chunk of the reduced range


def _plan(rt, op, ct, itype, src, M, R, direct=False) -> _Plan:
    """The kernel for M outputs over R elements each; direct: one that writes out itself."""
    K0, ks, rs = src.kshape[-1], src.kstr[-1], src.rstr[-1]
    if _gpu(rt):
        wg = _wg_size(rt)
        if M > 1 and ks == 1 and rs != 1 and K0 >= 16:  # adjacent outputs, adjacent in memory
            lx = 16 if K0 < 64 else 64
        elif M > 1 and R < wg // 4:  # short rows: several outputs per group, no idle items
            lx = wg // max(4, 1 << (max(R, 1) - 1).bit_length())
        else:
            lx = 1
        return _Plan("wg", _cdiv(M, lx), lx=lx, ly=wg // lx)
    arg = op in ARG_OPS
    vector_ok = src.idx is None  # a second argmax pass reads indices: scalar
    vw = _vw(src.ct, ct, *((itype,) if arg else ()))  # "outer" keeps indices in vectors too
    if vector_ok and M > 1 and ks == 1 and rs != 1 and K0 >= vw:
        # every vector starts vw-aligned when all offsets are multiples of vw
        aligned = _aligned(rt, vw, _SIZES[src.ct], src.off, *src.kstr[:-1], *src.rstr)
        if not (arg or direct) and M * R >= OUTER_SPLIT_MIN and R >= 4 * ROWS_BLOCK:
            unroll = OUTER_UNROLL
            cb = max(1, ROWS_COLS_BYTES // (_SIZES[ct] * unroll * vw)) * unroll * vw
            return _Plan(
                "rows",
                (M // K0) * _cdiv(K0, cb),
                vw=vw,
                unroll=unroll,
                aligned=aligned,
                cb=cb,
                rb=ROWS_BLOCK,
            )
        unroll = 4 if arg else OUTER_UNROLL
        return _Plan(
            "outer", (M // K0) * _cdiv(K0, unroll * vw), vw=vw, unroll=unroll, aligned=aligned
        )
    vw = _vw(src.ct, ct)
    return _Plan("inner", M, vw=vw if vector_ok and rs == 1 and R >= vw else 0)


def _split(rt, plan, R) -> tuple[int, int]:
    """(P, chunk): cut each output's R elements into P chunks when outputs alone are too few."""
    if R == 0:
        return 1, 0
    P = 1
    base = plan.base
    if plan.mode == "wg":
        # work-groups that fill the device (at least a few per compute unit)
        target = max(rt.max_work_items // (plan.lx * plan.ly), 4 * rt.device.compute_units)
        if base < target:
            P = min(_cdiv(target, base), R // (plan.ly * 16))
    elif plan.mode == "inner":
        target = rt.device.compute_units * ITEMS_PER_CU
        if base < target:
            P = min(_cdiv(target, base), R // MIN_CHUNK)
    elif plan.mode == "rows":
        target = rt.device.compute_units * ROWS_ITEMS_PER_CU
        if base < target:
            P = min(_cdiv(target, base), R // (4 * plan.rb))
    elif base * plan.vw * plan.unroll * R >= OUTER_SPLIT_MIN:
        # short walks: the items of a group then read adjacent tiles of the same few rows
        P = min(R // OUTER_ROWS, MAX_PARTS, max(1, (1 << 16) // base))
    chunk = _cdiv(R, max(P, 1))
    return _cdiv(R, chunk), chunk


def _launch(
    rt, op, ct, itype, plan, src, M, R, P, chunk, out, out_ct, out_bool, outi, o_off, o_sm, o_sc
):
    n_items = plan.base * P
    I = INDEX_NP[itype]
    kernel = rt.kernel(
        "reduce.cl.mako",
        f"cg_reduce_{plan.mode}_{op}",
        mode=plan.mode,
        op=op,
        in_ct=src.ct,
        ct=ct,
        idx_in=src.idx is not None,
        out_ct=out_ct if out is not None else "",
        out_bool=out_bool,
        idx_out=outi is not None,
        nk=len(src.kshape),
        nr=len(src.rshape),
        vw=plan.vw,
        unroll=plan.unroll,
        aligned=plan.aligned,
        cb=plan.cb,
        rb=plan.rb,
        lx=plan.lx,
        ly=plan.ly,
        index_t=itype,
        fp64=_fp64(src.ct, ct, out_ct),
    )
    args = [src.buf, I(src.off)]
    if src.idx is not None:
        args.append(src.idx)
    for n, s in zip(src.kshape, src.kstr):
        args += [I(n), I(s)]
    for n, s in zip(src.rshape, src.rstr):
        args += [I(n), I(s)]
    args += [I(M), I(R), I(chunk), I(P)]
    if out is not None:
        args.append(out)
    if outi is not None:
        args.append(outi)
    args += [I(o_off), I(o_sm), I(o_sc), I(n_items)]
    if plan.mode == "wg":
        rt.launch(kernel, (plan.base * plan.lx, P * plan.ly), (plan.lx, plan.ly), args)
    else:
        _cpu_launch(rt, kernel, n_items, args)


def _partials(rt, op, ct, itype, plan, src, M, R, P, chunk):
    """Launches a first pass into scratch; returns (vals, idx, o_sm, o_sc): release both."""
    vals = rt.allocator.alloc(M * P * _SIZES[ct])
    idx = rt.allocator.alloc(M * P * 8) if op in ARG_OPS else None
    # adjacent outputs side by side, [P][M], except "inner": [M][P]
    o_sm, o_sc = (P, 1) if plan.mode == "inner" else (1, M)
    _launch(rt, op, ct, itype, plan, src, M, R, P, chunk, vals, ct, False, idx, 0, o_sm, o_sc)
    return vals, idx, o_sm, o_sc


def _reduce_src(rt, op, ct, src, M, R, out, out_ct, out_bool, outi, o_off):
    itype = "int"
    while True:  # the plan (vector width of index lanes) depends on the index type
        plan = _plan(rt, op, ct, itype, src, M, R)
        P, chunk = _split(rt, plan, R)
        need = _itype(src.ext, o_off + M, M * P, plan.base * P, R + chunk)
        if need == itype:
            break
        itype = need
    if P == 1 and plan.mode != "rows":
        _launch(
            rt, op, ct, itype, plan, src, M, R, 1, chunk, out, out_ct, out_bool, outi, o_off, 1, 0
        )
        return
    vals, idx, o_sm, o_sc = _partials(rt, op, ct, itype, plan, src, M, R, P, chunk)
    second = _Src(vals, 0, ct, idx, (M,), (o_sm,), (P,), (o_sc,), M * P)
    plan2 = _plan(rt, op, ct, itype, second, M, P, direct=True)
    _launch(rt, op, ct, itype, plan2, second, M, P, 1, P, out, out_ct, out_bool, outi, o_off, 1, 0)
    rt.allocator.release(vals, M * P * _SIZES[ct])
    if idx is not None:
        rt.allocator.release(idx, M * P * 8)


def _stride_key(s):
    return math.inf if s == 0 else abs(s)


def reduce(op, out, x, dims, acc) -> None:
    """out = op over the dims ``dims`` of x (see the module docstring). Enqueues only."""
    M = out.numel()
    if M == 0:
        return
    rt = out.device.runtime
    arg = op in ARG_OPS
    if op not in ARG_OPS + VALUE_OPS:
        raise ValueError(f"unknown reduction {op!r}")
    dims = tuple(sorted(d % x.ndim for d in dims)) if x.ndim else ()
    kept = [d for d in range(x.ndim) if d not in dims]
    red = list(dims)
    R = math.prod(x._shape[d] for d in red)
    if not arg:  # any order sums the same: walk the smallest stride innermost
        red.sort(key=lambda d: -_stride_key(x._stride[d]))
    kshape, (kstr,) = merge_dims([x._shape[d] for d in kept], [[x._stride[d] for d in kept]])
    if R == 0:
        rshape, rstr = (1,), (0,)
    else:
        rshape, (rstr,) = merge_dims([x._shape[d] for d in red], [[x._stride[d] for d in red]])
    if op in ("sum", "prod"):
        ct = (acc or out.dtype).compute_ctype
    else:
        ct = x.dtype.compute_ctype
    src = _Src(
        x._storage.data, x._offset, x.dtype.ctype, None, kshape, kstr, rshape, rstr, extent(x)
    )
    if arg:
        _reduce_src(rt, op, ct, src, M, R, None, "", False, out._storage.data, out._offset)
    else:
        _reduce_src(
            rt,
            op,
            ct,
            src,
            M,
            R,
            out._storage.data,
            out.dtype.ctype,
            out.dtype.name == "bool",
            None,
            out._offset,
        )


def cumsum(out, x, dim, acc) -> None:
    """out = inclusive cumulative sum of x along dim, accumulated in acc. Enqueues only."""
    n = out.numel()
    if n == 0:
        return
    rt = out.device.runtime
    ct = (acc or out.dtype).compute_ctype
    if x.ndim == 0:
        L, sx, so, bshape, bx, bo = 1, 0, 0, (1,), (0,), (0,)
    else:
        dim %= x.ndim
        L, sx, so = x._shape[dim], x._stride[dim], out._stride[dim]
        others = [d for d in range(x.ndim) if d != dim]
        bshape, (bx, bo) = merge_dims(
            [x._shape[d] for d in others],
            [[x._stride[d] for d in others], [out._stride[d] for d in others]],
        )
    B = n // L
    gpu = _gpu(rt)
    K0 = bshape[-1]
    vw = _vw(x.dtype.ctype, ct, out.dtype.ctype)
    if gpu:
        # adjacent lines adjacent in memory: an item per line reads coalesced; else work-groups
        mode = "lines" if B > 1 and ((bx[-1] == 1 and sx != 1) or L < 64) else "wg"
        ls = _wg_size(rt) if mode == "wg" else 0
        unroll = 0
        base = B
        target = max(rt.max_work_items // max(ls, 1), 4 * rt.device.compute_units)
        min_chunk = ls * 16 if mode == "wg" else MIN_CHUNK
    else:
        tiles = B > 1 and bx[-1] == 1 and bo[-1] == 1 and K0 >= vw and sx != 1
        mode = "tiles" if tiles else "lines"
        ls = 0
        unroll = SCAN_UNROLL if tiles else 0
        base = (B // K0) * _cdiv(K0, unroll * vw) if tiles else B
        target = rt.device.compute_units * ITEMS_PER_CU
        min_chunk = MIN_CHUNK
    P = 1
    if base < target:
        P = max(1, min(_cdiv(target, base), L // min_chunk))
    chunk = _cdiv(L, P)
    P = _cdiv(L, chunk)
    lvec = min(8, vw) if mode == "lines" and not gpu and sx == 1 and so == 1 else 0
    aligned = mode == "tiles" and _aligned(
        rt,
        vw,
        max(_SIZES[x.dtype.ctype], _SIZES[out.dtype.ctype]),
        x._offset,
        *bx[:-1],
        sx,
        out._offset,
        *bo[:-1],
        so,
    )
    itype = _itype(extent(x), out._offset + n, B * P, base * P, L + chunk)
    I = INDEX_NP[itype]

    part = None
    if P > 1:  # each chunk starts from the sum of the chunks before it
        src = _Src(
            x._storage.data, x._offset, x.dtype.ctype, None, bshape, bx, (L,), (sx,), extent(x)
        )
        plan = _plan(rt, "sum", ct, itype, src, B, L, direct=True)
        part, _, ps_b, ps_c = _partials(rt, "sum", ct, itype, plan, src, B, L, P, chunk)

    kernel = rt.kernel(
        "scan.cl.mako",
        f"cg_scan_{mode}",
        mode=mode,
        in_ct=x.dtype.ctype,
        ct=ct,
        out_ct=out.dtype.ctype,
        out_bool=out.dtype.name == "bool",
        nb=len(bshape),
        vw=vw if mode == "tiles" else 0,
        unroll=unroll,
        aligned=aligned,
        lvec=lvec,
        ls=ls,
        has_part=part is not None,
        index_t=itype,
        fp64=_fp64(x.dtype.ctype, ct, out.dtype.ctype),
    )
    args = [x._storage.data, I(x._offset)]
    for size, a, b in zip(bshape, bx, bo):
        args += [I(size), I(a), I(b)]
    args += [I(L), I(sx), I(so), I(chunk), I(P)]
    if part is not None:
        args += [part, I(ps_b), I(ps_c)]
    n_items = base * P
    args += [out._storage.data, I(out._offset), I(n_items)]
    if mode == "wg":
        rt.launch(kernel, (n_items * ls,), (ls,), args)
    elif gpu:
        rt.launch1d(kernel, n_items, args)
    else:
        _cpu_launch(rt, kernel, n_items, args)
    if part is not None:
        rt.allocator.release(part, B * P * _SIZES[ct])


__all__ = ["reduce", "cumsum"]
