"""Reductions (any ``ReduceKernel``: sum, prod, max, min, argmax, ...) and cumsum as OpenCL
kernels.

Entry points: ``reduce(rt, kernel, out, x, dims, acc)`` and ``cumsum(rt, out, x, dim, acc)``,
where ``rt`` is the device's ``Runtime`` and ``out``, ``x`` are ``View`` records. The op is
data (``clgrad.backend.base.ReduceKernel``): kernels/reduce.cl.mako renders any declaration,
and nothing here names an op. What a call launches is planned once per geometry and
replayed (``plans``): the planning below runs once per key.

Both read their input in place, whatever its strides (transposed, stepped, broadcast, offset):
the kept dims and the reduced (or scanned) dims are each merged into as few runs as they allow
(value reductions first order the reduced dims by stride), and the kernels walk those runs with
sizes and strides as arguments; the number of runs is a template parameter. Index arithmetic is
int, or long where a launch's offsets could pass 2**31.

The work is M outputs x R reduced elements. On CPU devices (PoCL), by layout:

* "inner": the reduced run is innermost (or nothing is contiguous). A work-item owns an output
  and walks its elements, with aligned 32-byte vector loads and four accumulators when they
  are contiguous; arg reductions take each block's extreme at max speed and rescan only a block
  that beats the best so far. Too few outputs to fill the cores (a full reduction has one):
  each output's range is cut into P chunks, a first launch writes M*P partials to scratch and
  a second, small launch of the same kernels combines them.
* "rows": the outputs are adjacent in memory and many rows reduce into them (sum over dim 0).
  An item owns 16 KB of adjacent outputs and a range of rows, walks them 8 rows at a time across
  all its outputs with their running values in a cache-resident scratch, so memory is read in
  long runs; a second launch combines the row ranges.
* "outer": the same layout when small, and arg reductions on it: an item owns unroll*vw adjacent
  outputs in registers and walks the rows.

On GPUs ("wg"): a work-group per (lx outputs, chunk); its ly items per output stride through
the chunk reading adjacent addresses (lx > 1 when adjacent outputs are adjacent in memory, or
rows are short), then combine in a tree in local memory; the same two-pass scheme. GPU_PATH
forces either path (the tests run the GPU kernels on PoCL).

cumsum: "lines" scans a line per item (a contiguous line 8 elements at a time with a prefix in
registers), "tiles" scans unroll*vw adjacent lines per item with vectors when lines are adjacent
in memory, "wg" (GPU) scans tiles of a line in local memory. Few long lines are cut into chunks
whose sums come from the reduction kernels; each chunk starts from the sum of those before it.

Semantics are NumPy's / PyTorch's: a reduction of nothing is the kernel's neutral value (sum 0,
prod 1); arg reductions give the first extreme, a NaN counting as the extreme (max/min propagate
NaN by their declared reduce_expr).
"""

from __future__ import annotations

import math

from ... import dtypes as D
from ..base import SUM, ReduceKernel, View
from . import plans
from .launch import INDEX_NP, extent, index_type, merge_dims
from .plans import SLOTS
from .template_helpers import FLOAT16_STORAGE, SIZES

TEMPLATE = "reduce.cl.mako"
# cumsum's chunk sums (a backend never imports clgrad.ops, where the ops are declared)

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
# CPU work-group sizes (``_cpu_launch``): few items share the cores in groups of the first, many
# in groups of the second.
CPU_LOCAL = (4, 64)
# GPU work-group size (a power of two every OpenCL GPU supports).
WG = 256


def _gpu(rt) -> bool:
    return rt.is_gpu if GPU_PATH is None else bool(GPU_PATH)


def _vw(*cts: str) -> int:
    """Lanes of a CPU vector: 32 bytes of the widest type involved, at most 16 lanes.

    PoCL on AVX2 (no AVX-512) miscompiles or crashes on 64-byte vectors (float16, long8)
    handed to its builtins, so no vector here is wider than 256 bits. The 16-bit floats count
    as the floats they are computed in.
    """
    return min(16, 32 // max(max(SIZES[c], 4) if c in FLOAT16_STORAGE else SIZES[c] for c in cts))


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def _wg_size(rt) -> int:
    return min(WG, _pow2_floor(rt.max_work_group_size))


def _aligned(rt, lanes, esize, *offsets) -> bool:
    """Whether vectors of ``lanes`` elements at these element offsets (all multiples of lanes)
    are aligned: they are when buffers start aligned to the vector, and OpenCL buffers start
    aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN."""
    return rt.base_align_bytes >= lanes * esize and all(o % lanes == 0 for o in offsets)


def _fp64(*cts) -> bool:
    return "double" in cts


def _cpu_items(rt) -> int:
    """Most work-items a CPU launch runs; past that, items loop grid-stride."""
    return 1 << 22


def _cpu_launch(rt, rec, kernel, n_items, args):
    """A CPU device: an item per task (no grid-stride loop: short tasks are faster so), in
    groups of one of two fixed sizes (``CPU_LOCAL``), the range padded (the kernels check their
    bounds): PoCL compiles a kernel again for each local size it meets (~0.1 s each), and picking
    the largest size that leaves 8 groups per core (PoCL runs a group's items one after another
    on one core) met up to seven per kernel as batch sizes varied."""
    small, large = CPU_LOCAL
    items = max(1, min(n_items, _cpu_items(rt)))
    local = large if items >= large * 8 * rt.compute_units else small
    items = _cdiv(items, local) * local
    rec.launch(kernel, (items,), (local,), args)


class _Src:
    """What a reduction launch reads: a buffer, its element ctype, kept and reduced runs; raw:
    the input's elements (mapped by the kernel's map_expr), else partials (mapped already);
    conv: how a raw element becomes the accumulator's type (the template's ``conv``)."""

    __slots__ = (
        "buf", "off", "ct", "idx", "kshape", "kstr", "rshape", "rstr", "ext", "raw", "conv"
    )  # fmt: skip

    def __init__(self, buf, off, ct, idx, kshape, kstr, rshape, rstr, ext, raw=True, conv=None):
        self.buf, self.off, self.ct, self.idx = buf, off, ct, idx
        self.kshape, self.kstr, self.rshape, self.rstr = kshape, kstr, rshape, rstr
        self.ext = ext  # one past the largest element offset read
        self.raw = raw
        self.conv = conv if raw else None


def _conversion(x_dtype, acc) -> str | None:
    """How an element of ``x_dtype`` becomes the accumulator dtype ``acc`` as PyTorch casts
    it where a C conversion would not (the template's ``conv``): bool by ``x != 0`` (0.4 is
    True, 256 too), an integer from a float after the map (nansum's NaN is 0, then cast)."""
    if acc.category == 0 and x_dtype.category != 0:
        return "bool"
    if x_dtype.is_floating_point and acc.category == 1:
        return "cast"
    return None


class _Dst:
    """Where a reduction launch writes: a value buffer (None: none) of ``ct`` (bool: 0/1), an
    index buffer (None: none), and the element offset of output 0 in both."""

    __slots__ = ("buf", "ct", "is_bool", "idx", "off")

    def __init__(self, buf, ct, is_bool, idx, off):
        self.buf, self.ct, self.is_bool, self.idx, self.off = buf, ct, is_bool, idx, off


# the dtype of a scratch buffer of each compute ctype
_SCRATCH_DTYPE = {d.ctype: d for d in (D.uint8, D.int8, D.int16, D.int32, D.int64)}
_SCRATCH_DTYPE.update(float=D.float32, double=D.float64)


def _scratch(rec, dt, shape, strides) -> View:
    """A View over a scratch buffer of the plan ``rec`` records (taken from the device's
    allocator at each replay, and returned after its last launch)."""
    nbytes = math.prod(shape) * dt.itemsize
    return View(rec.scratch(nbytes), 0, tuple(shape), tuple(strides), dt, nbytes)


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


def _plan(rt, kernel, ct, itype, src, M, R, direct=False) -> _Plan:
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
    arg = kernel.arg
    # a second argmax pass reads indices, a cast as PyTorch's takes a scalar: scalar loads
    vector_ok = src.idx is None and src.conv is None
    vw = _vw(src.ct, ct, *((itype,) if arg else ()))  # "outer" keeps indices in vectors too
    if vector_ok and M > 1 and ks == 1 and rs != 1 and K0 >= vw:
        # every vector starts vw-aligned when all offsets are multiples of vw
        aligned = _aligned(rt, vw, SIZES[src.ct], src.off, *src.kstr[:-1], *src.rstr)
        if not (arg or direct) and M * R >= OUTER_SPLIT_MIN and R >= 4 * ROWS_BLOCK:
            unroll = OUTER_UNROLL
            cb = max(1, ROWS_COLS_BYTES // (SIZES[ct] * unroll * vw)) * unroll * vw
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
        target = max(rt.max_work_items // (plan.lx * plan.ly), 4 * rt.compute_units)
        if base < target:
            P = min(_cdiv(target, base), R // (plan.ly * 16))
    elif plan.mode == "inner":
        target = rt.compute_units * ITEMS_PER_CU
        if base < target:
            P = min(_cdiv(target, base), R // MIN_CHUNK)
    elif plan.mode == "rows":
        target = rt.compute_units * ROWS_ITEMS_PER_CU
        if base < target:
            P = min(_cdiv(target, base), R // (4 * plan.rb))
    elif base * plan.vw * plan.unroll * R >= OUTER_SPLIT_MIN:
        # short walks: the items of a group then read adjacent tiles of the same few rows
        P = min(R // OUTER_ROWS, MAX_PARTS, max(1, (1 << 16) // base))
    chunk = _cdiv(R, max(P, 1))
    return _cdiv(R, chunk), chunk


def _kernel(rt, key, kernel, **params):
    """``kernel``'s reduction kernel for ``params`` (cached under ``key``): in one program with
    every reduction declared alike (``backend.base.BUNDLES``, arg reductions apart) where the
    device bundles programs (``Runtime.bundled``)."""
    k = rt.kernels.get(key)
    if k is not None:
        return k
    function = f"cg_reduce_{params['mode']}_{kernel.name}"
    return rt.bundled(
        ("reduce", kernel.arg),
        kernel,
        lambda kernels: rt.cached(key, TEMPLATE, function, kernels=kernels, **params),
    )


def _launch(rt, rec, kernel, ct, itype, plan, src, M, R, P, chunk, dst, o_sm, o_sc):
    n_items = plan.base * P
    I = INDEX_NP[itype]
    mode, out_ct = plan.mode, dst.ct if dst.buf is not None else ""
    apply_map = src.raw and kernel.map_expr != "x"
    idx_in, idx_out = src.idx is not None, dst.idx is not None
    # two merged runs are launched as three (an outer run of one element): a process then
    # builds one program where it would build two, at the cost of a division by 1 per item
    kshape, kstr = _pad_runs(src.kshape, src.kstr)
    rshape, rstr = _pad_runs(src.rshape, src.rstr)
    nk, nr = len(kshape), len(rshape)
    conv = src.conv
    key = ("reduce", kernel, mode, src.ct, ct, apply_map, idx_in, out_ct, dst.is_bool, idx_out)
    key += (conv,)
    key += (nk, nr, plan.vw, plan.unroll, plan.aligned, plan.cb, plan.rb, plan.lx, plan.ly, itype)
    k = _kernel(
        rt,
        key,
        kernel,
        mode=mode,
        in_ct=src.ct,
        ct=ct,
        apply_map=apply_map,
        idx_in=idx_in,
        out_ct=out_ct,
        out_bool=dst.is_bool,
        idx_out=idx_out,
        nk=nk,
        nr=nr,
        vw=plan.vw,
        unroll=plan.unroll,
        aligned=plan.aligned,
        cb=plan.cb,
        rb=plan.rb,
        lx=plan.lx,
        ly=plan.ly,
        index_t=itype,
        fp64=_fp64(src.ct, ct, out_ct),
        conv=conv,
    )
    args = [src.buf, I(src.off)]
    if idx_in:
        args.append(src.idx)
    for n, s in zip(kshape, kstr):
        args += [I(n), I(s)]
    for n, s in zip(rshape, rstr):
        args += [I(n), I(s)]
    args += [I(M), I(R), I(chunk), I(P)]
    if dst.buf is not None:
        args.append(dst.buf)
    if idx_out:
        args.append(dst.idx)
    args += [I(dst.off), I(o_sm), I(o_sc), I(n_items)]
    if mode == "wg":
        rec.launch(k, (plan.base * plan.lx, P * plan.ly), (plan.lx, plan.ly), args)
    else:
        _cpu_launch(rt, rec, k, n_items, args)


def _pad_runs(shape: tuple, strides: tuple) -> tuple[tuple, tuple]:
    """Runs (sizes, strides) with outer runs of one element added up to three, when there
    are two: the kernels' variants are one run or three."""
    if len(shape) != 2:
        return shape, strides
    return (1, *shape), (0, *strides)


def _partials(rt, rec, kernel, ct, itype, plan, src, M, R, P, chunk):
    """Launches a first pass into scratch: Views (M, P) of its values and (arg reductions) of
    its indices, or None."""
    # adjacent outputs side by side, [P][M], except "inner": [M][P]
    strides = (P, 1) if plan.mode == "inner" else (1, M)
    vals = _scratch(rec, _SCRATCH_DTYPE[ct], (M, P), strides)
    idx = _scratch(rec, D.int64, (M, P), strides) if kernel.arg else None
    dst = _Dst(vals.buffer, ct, False, idx.buffer if idx else None, 0)
    _launch(rt, rec, kernel, ct, itype, plan, src, M, R, P, chunk, dst, *strides)
    return vals, idx


def _reduce_src(rt, rec, kernel, ct, src, M, R, dst):
    itype = "int"
    while True:  # the plan (vector width of index lanes) depends on the index type
        plan = _plan(rt, kernel, ct, itype, src, M, R)
        P, chunk = _split(rt, plan, R)
        need = _itype(src.ext, dst.off + M, M * P, plan.base * P, R + chunk)
        if need == itype:
            break
        itype = need
    if P == 1 and plan.mode != "rows":
        _launch(rt, rec, kernel, ct, itype, plan, src, M, R, 1, chunk, dst, 1, 0)
        return
    vals, idx = _partials(rt, rec, kernel, ct, itype, plan, src, M, R, P, chunk)
    (o_sm, o_sc), ib = vals.strides, idx.buffer if idx else None
    second = _Src(vals.buffer, 0, ct, ib, (M,), (o_sm,), (P,), (o_sc,), extent(vals), raw=False)
    plan2 = _plan(rt, kernel, ct, itype, second, M, P, direct=True)
    _launch(rt, rec, kernel, ct, itype, plan2, second, M, P, 1, P, dst, 1, 0)


def _stride_key(s):
    return math.inf if s == 0 else abs(s)


def reduce(rt, kernel: ReduceKernel, out: View, x: View, dims, acc) -> None:
    """out (contiguous, x's shape without ``dims``) = ``kernel`` over the dims ``dims`` of x,
    accumulated in dtype ``acc`` (None: out's dtype; an arg reduction compares in x's and
    writes int64 indices). Enqueues only (see the module docstring)."""
    if out.numel() == 0:
        return
    # x[1:5], out[1:5]: offset, shape, strides, dtype (the offsets decide alignment and the
    # index type); GPU_PATH: the tests switch it
    key = ("reduce", kernel, x[1:5], out[1:5], dims, acc, GPU_PATH)
    plans.run(rt, key, (x.buffer, out.buffer), _plan_reduce, kernel, out, x, dims, acc)


def _plan_reduce(rec, kernel, out, x, dims, acc) -> None:
    """Records ``reduce``'s launches in ``rec`` (a ``plans.Recorder``)."""
    rt = rec.rt
    M = out.numel()
    nd = x.ndim
    dims = tuple(sorted({d % nd for d in dims})) if nd else ()
    kept = [d for d in range(nd) if d not in dims]
    red = list(dims)
    shape, strides = x.shape, x.strides
    R = math.prod(shape[d] for d in red)
    if not kernel.arg:  # any order reduces the same: walk the smallest stride innermost
        red.sort(key=lambda d: -_stride_key(strides[d]))
    kshape, (kstr,) = merge_dims([shape[d] for d in kept], [[strides[d] for d in kept]])
    if R == 0:
        rshape, rstr = (1,), (0,)
    else:
        rshape, (rstr,) = merge_dims([shape[d] for d in red], [[strides[d] for d in red]])
    acc_dtype = acc or (x.dtype if kernel.arg else out.dtype)
    ct = acc_dtype.compute_ctype
    conv = _conversion(x.dtype, acc_dtype)
    src = _Src(
        SLOTS[0], x.offset, x.dtype.ctype, None, kshape, kstr, rshape, rstr, extent(x), conv=conv
    )
    if kernel.arg:
        dst = _Dst(None, "", False, SLOTS[1], out.offset)
    else:
        dst = _Dst(SLOTS[1], out.dtype.ctype, out.dtype.name == "bool", None, out.offset)
    _reduce_src(rt, rec, kernel, ct, src, M, R, dst)


def scan(rt, out: View, x: View, dim: int, acc, kernel: ReduceKernel = SUM) -> None:
    """out = the inclusive scan of x along dim by ``kernel``'s combination (sum, product,
    logaddexp), accumulated in dtype ``acc`` (None: out's). Enqueues only."""
    if out.numel() == 0:
        return
    key = ("scan", kernel, x[1:5], out[1:5], dim, acc, GPU_PATH)
    plans.run(rt, key, (x.buffer, out.buffer), _plan_scan, out, x, dim, acc, kernel)


def cum_extreme(rt, values: View, indices: View, x: View, dim: int, largest: bool) -> None:
    """values, indices = the running maximum (``largest``) or minimum of x along dim and the
    index each came from, as ``torch.cummax`` / ``torch.cummin``: ``values`` and ``indices``
    contiguous, x's shape. Enqueues only."""
    if values.numel() == 0:
        return
    key = ("cum_extreme", largest, x[1:5], values[1:5], indices[1:5], dim, GPU_PATH)
    bufs = (x.buffer, values.buffer, indices.buffer)
    plans.run(rt, key, bufs, _plan_cum_extreme, values, indices, x, dim, largest)


def _lines(out: View, x: View, dim: int):
    """(L, sx, so, bshape, bx, bo): x's and out's lines along ``dim`` (L elements, strides sx
    and so) and the other dims merged (sizes bshape, strides bx and bo)."""
    if x.ndim == 0:
        return 1, 0, 0, (1,), (0,), (0,)
    dim %= x.ndim
    others = [d for d in range(x.ndim) if d != dim]
    bshape, (bx, bo) = merge_dims(
        [x.shape[d] for d in others],
        [[x.strides[d] for d in others], [out.strides[d] for d in others]],
    )
    return x.shape[dim], x.strides[dim], out.strides[dim], bshape, bx, bo


def _scan_program(rt, mode, types, out_bool, nb, itype, kernel=SUM, extreme="", **layout):
    """The scan template's ``mode`` kernel for (input, accumulator, output) C ``types`` and
    ``nb`` merged batch dims; ``layout``: vw, unroll, aligned, lvec, ls, has_part (off by
    default)."""
    params = dict(vw=0, unroll=0, aligned=False, lvec=0, ls=0, has_part=False) | layout
    in_ct, ct, out_ct = types
    key = ("scan", mode, kernel, extreme, types, out_bool, nb, itype, *params.values())
    return rt.cached(
        key,
        "scan.cl.mako",
        f"cg_scan_{mode}",
        kernel=kernel,
        extreme=extreme,
        mode=mode,
        in_ct=in_ct,
        ct=ct,
        out_ct=out_ct,
        out_bool=out_bool,
        nb=nb,
        index_t=itype,
        fp64=_fp64(*types),
        **params,
    )


def _line_args(x, I, bshape, bx, bo) -> list:
    """A scan kernel's first arguments: x (its slot) and offset, each batch dim's size and
    strides."""
    args = [SLOTS[0], I(x.offset)]
    for size, a, b in zip(bshape, bx, bo):
        args += [I(size), I(a), I(b)]
    return args


def _plan_cum_extreme(rec, values, indices, x, dim, largest) -> None:
    """Records ``cum_extreme``'s launch in ``rec``: a work-item walks a line."""
    rt = rec.rt
    n = values.numel()
    L, sx, so, bshape, bx, bo = _lines(values, x, dim)
    B = n // L
    in_ct, out_ct = x.dtype.ctype, values.dtype.ctype
    ct = x.dtype.compute_ctype
    itype = _itype(extent(x), max(values.offset, indices.offset) + n, B, B, L)
    I = INDEX_NP[itype]
    kernel = _scan_program(
        rt, "extreme", (in_ct, ct, out_ct), values.dtype.name == "bool", len(bshape), itype,
        extreme="max" if largest else "min",
    )  # fmt: skip
    args = _line_args(x, I, bshape, bx, bo)
    args += [I(L), I(sx), I(so), I(L), I(1), SLOTS[1], I(values.offset)]
    args += [SLOTS[2], I(indices.offset), I(B)]
    if _gpu(rt):
        rec.launch1d(kernel, B, args)
    else:
        _cpu_launch(rt, rec, kernel, B, args)


def _plan_scan(rec, out, x, dim, acc, kernel) -> None:
    """Records ``scan``'s launches in ``rec`` (a ``plans.Recorder``)."""
    rt = rec.rt
    n = out.numel()
    ct = (acc or out.dtype).compute_ctype
    in_ct, out_ct = x.dtype.ctype, out.dtype.ctype
    L, sx, so, bshape, bx, bo = _lines(out, x, dim)
    B = n // L
    gpu = _gpu(rt)
    K0 = bshape[-1]
    vw = _vw(in_ct, ct, out_ct)
    if gpu:
        # adjacent lines adjacent in memory: an item per line reads coalesced; else work-groups
        mode = "lines" if B > 1 and ((bx[-1] == 1 and sx != 1) or L < 64) else "wg"
        ls = _wg_size(rt) if mode == "wg" else 0
        unroll = 0
        base = B
        target = max(rt.max_work_items // max(ls, 1), 4 * rt.compute_units)
        min_chunk = ls * 16 if mode == "wg" else MIN_CHUNK
    else:
        tiles = B > 1 and bx[-1] == 1 and bo[-1] == 1 and K0 >= vw and sx != 1
        mode = "tiles" if tiles else "lines"
        ls = 0
        unroll = SCAN_UNROLL if tiles else 0
        base = (B // K0) * _cdiv(K0, unroll * vw) if tiles else B
        target = rt.compute_units * ITEMS_PER_CU
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
        max(SIZES[in_ct], SIZES[out_ct]),
        x.offset,
        *bx[:-1],
        sx,
        out.offset,
        *bo[:-1],
        so,
    )
    itype = _itype(extent(x), out.offset + n, B * P, base * P, L + chunk)
    I = INDEX_NP[itype]

    part = None
    if P > 1:  # each chunk starts from the chunks before it, each reduced first
        src = _Src(SLOTS[0], x.offset, in_ct, None, bshape, bx, (L,), (sx,), extent(x))
        plan = _plan(rt, kernel, ct, itype, src, B, L, direct=True)
        part, _ = _partials(rt, rec, kernel, ct, itype, plan, src, B, L, P, chunk)

    has_part = part is not None
    vwt = vw if mode == "tiles" else 0
    program = _scan_program(
        rt, mode, (in_ct, ct, out_ct), out.dtype.name == "bool", len(bshape), itype,
        kernel=kernel, vw=vwt, unroll=unroll, aligned=aligned, lvec=lvec, ls=ls,
        has_part=has_part,
    )  # fmt: skip
    args = _line_args(x, I, bshape, bx, bo) + [I(L), I(sx), I(so), I(chunk), I(P)]
    if has_part:
        ps_b, ps_c = part.strides
        args += [part.buffer, I(ps_b), I(ps_c)]
    n_items = base * P
    args += [SLOTS[1], I(out.offset), I(n_items)]
    if mode == "wg":
        rec.launch(program, (n_items * ls,), (ls,), args)
    elif gpu:
        rec.launch1d(program, n_items, args)
    else:
        _cpu_launch(rt, rec, program, n_items, args)


__all__ = ["reduce", "scan", "cum_extreme"]
