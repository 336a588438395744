"""Batched matmul on an OpenCL device: picks one of the kernel families of matmul.cl.mako.

* ``tiled`` (GPUs): local-memory tiles read straight through the operands' strides.
* ``packed`` (CPUs, floating point, big enough to repay an extra launch): B is first packed on
  the device into zero-padded panels in the accumulation type, then a vector micro-kernel
  computes an MR x NR block per work-item from a B panel and MR rows of A (read in place).
* ``direct`` (CPUs, as packed but with few rows of A and a row-major B): the same micro-kernel
  reads B in place, since packing it would not be repaid.
* ``general`` (everything else: small, integer, K == 0): a small register block per
  work-item, read through the strides.

Entry point: ``matmul(rt, out, a, b, acc)``, ``rt`` the device's ``Runtime``, ``out``, ``a``,
``b`` 3-D ``View`` records. What a call launches is planned once per geometry and replayed
(``plans``): everything below ``matmul`` runs once per key, launching through a recorder.
"""

from __future__ import annotations

from ..base import View
from . import plans
from .launch import INDEX_NP, extent, index_type
from .plans import SLOTS

TEMPLATE = "matmul.cl.mako"

# general: RM x RN block per work-item.
GENERAL_TILE = (4, 4)
# packed and direct: (MR, NR, VW, UK, KB) per accumulation type: an MR x NR block per
# work-item in VW-wide vectors, the k loop unrolled UK times, KB B-panel rows per packing
# work-item. MR*NR/VW vector accumulators plus NR/VW for the B row and one broadcast must fit
# the vector registers: AVX2's 16 hold 6 x 16 floats as 12 float8 sums, 6 x 8 doubles as 12
# double4 sums (the shape of OpenBLAS's Haswell kernels); on a device whose native vectors are
# VW_WIDE wide (AVX-512: 32 registers of 16 floats), 8 x 32 floats in 16 float16 sums, 8 x 16
# doubles in 16 double8 sums: twice the GFLOP/s of the AVX2 tile on an AVX-512 Xeon.
PACKED_TILE = {"float": (6, 16, 8, 2, 16), "double": (6, 8, 4, 2, 16)}
PACKED_TILE_WIDE = {"float": (8, 32, 16, 1, 16), "double": (8, 16, 8, 1, 16)}
# Work-items per work-group of the 1-D launches (all but tiled): fixed, with the range padded
# and the kernels bounds-checked, because PoCL compiles a kernel again for each local size it
# meets, which a local size of None would make depend on the shape. A group of the packed
# micro-kernel is a run of row blocks under one B panel, which it shares in cache; the cheap
# copies take bigger groups, since each group costs PoCL about 0.1 us.
LOCAL = 16
LOCAL_COPY = 64
# The micro-kernel (packed or direct) beats general from about this many multiply-adds in
# all, and per matrix (below it, its blocks are mostly padding).
MICRO_MIN_MACS = 40**3
MICRO_MIN_MACS_EACH = 8**3
# direct (B read in place) beats packing B up to about this many rows of A, which is how
# often each packed element would be reused; it needs whole NR-wide blocks to be quick.
DIRECT_MAX_M = 48
# A transposed A (a Linear weight's gradient g.T @ x) is read in place up to this size: its MR
# words per k are adjacent, and every work-group walks all of it, which stays in the L2 cache
# (256 x 256 floats: 10% faster than packing it and a launch less, 10 x 256 30%); a bigger one
# is packed into MR-row panels first, whose one contiguous stream reads 2x faster at 1024^3.
PACK_A_MIN_BYTES = 256 << 10
# packed: scratch per chunk of batches; a chunk always holds at least one batch.
PACKED_SCRATCH_BYTES = 256 << 20
# dot (``product_sum``): an RM x RN block of VW-wide partial sums per work-item: 9 vector sums
# and 3 + 3 vector loads fill AVX2's 16 registers. The batches are cut into chunks until
# there are about DOT_ITEMS work-items (a convolution's weight gradient has few blocks).
DOT_TILE = {"float": (3, 3, 8), "double": (3, 3, 4)}
DOT_ITEMS = 128
# ... and only for a small (M, N): the micro-kernel, with B packed and a sum after it, wins
# from (16, 144) and (32, 72) (the second convolution of a small CNN); dot wins at (16, 9)
# (the first: 2.8x), (64, 9), (16, 48), (64, 27)
DOT_MAX_SIDE = 27
DOT_MAX_OTHER = 128
# tiled: (TM, TN, TK, WM, WN), a 16 x 16 work-group; at most MAX_GRID_Z groups along the
# batch (CUDA-based drivers cap the third grid dimension), the kernel loops over the rest.
TILED_TILE = (64, 64, 16, 4, 4)
MAX_GRID_Z = 65535


def matmul(rt, out: View, a: View, b: View, acc, *, path: str | None = None) -> None:
    """out[z, m, n] = sum_k a[z, m, k] * b[z, k, n] for 3-D views. Enqueues, never waits.

    ``out`` is contiguous; ``a`` and ``b`` are read through their strides (0 broadcasts a
    batch). ``acc`` is the dtype the sums are kept in. ``path`` forces a kernel family
    ("general", "packed", "direct" or "tiled"), for tests and benchmarks; by default the
    device and the shapes decide.
    """
    # [1:5]: offset, shape, strides, dtype (and b's storage size: direct may read the room
    # after its rows); the tunables after them are switched by tests
    key = ("matmul", out[1:5], a[1:5], b[1:6], acc, path)  # b[5]: its storage's size
    key += (PACKED_SCRATCH_BYTES, PACK_A_MIN_BYTES, MAX_GRID_Z, index_type)
    plans.run(rt, key, (out.buffer, a.buffer, b.buffer), _plan, out, a, b, acc, path)


def _plan(rec, out, a, b, acc, path):
    """Records ``matmul``'s launches in ``rec`` (a ``plans.Recorder``), with ``SLOTS`` for the
    buffers of out, a and b."""
    out, a, b = (v._replace(buffer=slot) for v, slot in zip((out, a, b), SLOTS))
    Z, M, N = out.shape
    K = a.shape[2]
    if Z == 0 or M == 0 or N == 0:
        return
    if path is None:
        path = _choose(rec.rt, b, acc, Z, M, N, K)
    if path in ("packed", "direct") and (K == 0 or acc.ctype not in PACKED_TILE):
        path = "general"  # nothing to pack, or no vector micro-kernel for this type
    if path == "direct" and not _row_major(b, acc):
        path = "packed"
    if path == "general":
        _general(rec, out, a, b, acc, Z, M, N, K)
    elif path == "tiled":
        _tiled(rec, out, a, b, acc, Z, M, N, K)
    else:
        _micro(rec, out, a, b, acc, Z, M, N, K, direct=path == "direct")


def _row_major(b, acc) -> bool:
    """Whether direct can read rows of b as vectors of the sums' type."""
    return b.strides[2] == 1 and b.dtype.ctype == acc.ctype


def packed_tile(rt, ct) -> tuple:
    """The micro-kernel's tile for sums of C type ``ct`` on ``rt``'s device (PACKED_TILE)."""
    wide = PACKED_TILE_WIDE[ct]
    return wide if rt.vector_width.get(ct, 0) >= wide[2] else PACKED_TILE[ct]


def row_align(rt, dtype) -> int:
    """The row length a direct product's B is best padded to on ``rt``'s device (NR, where
    the micro-kernel serves ``dtype``; 1 elsewhere). See ``Backend.matmul_row_align``."""
    if rt.is_gpu or dtype.ctype not in PACKED_TILE:
        return 1
    return packed_tile(rt, dtype.ctype)[1]


def _readable_width(b, Z, K, N) -> int:
    """How many elements of each row of B (Z, K, N; row-major) may be read: its row stride
    where every row's room up to it lies in B's storage (a padded column matrix), else N."""
    bz, bk = b.strides[0], b.strides[1]
    last_row = b.offset + (Z - 1) * bz + (K - 1) * bk
    if bk > N and bz >= 0 and last_row + bk <= b.nbytes // b.dtype.itemsize:
        return bk
    return N


def _choose(rt, b, acc, Z, M, N, K) -> str:
    if rt.is_gpu:
        return "tiled"
    macs = M * N * K
    if acc.ctype not in PACKED_TILE or macs < MICRO_MIN_MACS_EACH or Z * macs < MICRO_MIN_MACS:
        return "general"  # integers, K == 0, or too little work to repay the extra launch
    if M == 1 or N == 1:
        # A vector product (v @ M, M @ v, mv, addmv, (B,1,K) @ (B,K,N)) reads each matrix
        # element once, so packing is never repaid, and its scratch would be 16x the vector
        # (B's NR-wide panels) or a whole copy of a transposed matrix: read both in place.
        return "direct" if M == 1 and _row_major(b, acc) else "general"
    if M <= DIRECT_MAX_M and N >= packed_tile(rt, acc.ctype)[1] and _row_major(b, acc):
        return "direct"
    return "packed"


def _params(out, a, b, acc, variant, tile, *scratch):
    """Template parameters, and the numpy type of the index arguments they call for."""
    itype = index_type(extent(out), extent(a), extent(b), *scratch)
    params = dict(
        variant=variant,
        tile=tile,
        index_t=itype,
        a_ct=a.dtype.ctype,
        b_ct=b.dtype.ctype,
        out_ct=out.dtype.ctype,
        acc=acc.ctype,
        a_panels=False,
        fp64=any(d.name == "float64" for d in (out.dtype, a.dtype, b.dtype, acc)),
    )
    return params, INDEX_NP[itype]


def _kernel(rt, function, params):
    """Kernel ``function`` rendered with ``params``, looked up by their values (the dicts come
    from ``_params``, so their keys are always the same, in the same order)."""
    return rt.cached(("matmul", function, *params.values()), TEMPLATE, function, **params)


def _scratch(rec, dt, n) -> View:
    """A View over a scratch buffer of n ``dt`` elements of the plan ``rec`` records."""
    nbytes = n * dt.itemsize
    return View(rec.scratch(nbytes), 0, (n,), (1,), dt, nbytes)


def _launch1d(rec, kernel, I, items, args, local=LOCAL):
    """One work-item per item, in groups of ``local``; ``items`` is the kernel's last argument."""
    rec.launch(kernel, (-(-items // local) * local,), (local,), [*args, I(items)])


def _operand_args(I, v, z0=0):
    """buffer, offset, batch, row and column strides of a 3-D operand from batch z0 on."""
    sz, sr, sc = v.strides
    return [v.buffer, I(v.offset + z0 * sz), I(sz), I(sr), I(sc)]


def _strided_args(I, out, a, b, M, N, K):
    """The arguments the kernels that read both operands through their strides begin with."""
    return [
        out.buffer,
        I(out.offset),
        *_operand_args(I, a),
        *_operand_args(I, b),
        I(M),
        I(N),
        I(K),
    ]


def _general(rec, out, a, b, acc, Z, M, N, K):
    RM, RN = GENERAL_TILE
    params, I = _params(out, a, b, acc, "general", GENERAL_TILE)
    kernel = _kernel(rec.rt, "cg_matmul_general", params)
    nbm, nbn = -(-M // RM), -(-N // RN)
    args = _strided_args(I, out, a, b, M, N, K) + [I(nbn), I(nbm)]
    _launch1d(rec, kernel, I, nbn * nbm * Z, args)


def _tiled(rec, out, a, b, acc, Z, M, N, K):
    TM, TN, TK, WM, WN = TILED_TILE
    params, I = _params(out, a, b, acc, "tiled", TILED_TILE)
    kernel = _kernel(rec.rt, "cg_matmul_tiled", params)
    lx, ly = TN // WN, TM // WM
    args = _strided_args(I, out, a, b, M, N, K) + [I(Z)]
    rec.launch(kernel, (-(-N // TN) * lx, -(-M // TM) * ly, min(Z, MAX_GRID_Z)), (lx, ly, 1), args)


def _micro(rec, out, a, b, acc, Z, M, N, K, direct):
    """The micro-kernel, with B packed into panels first, or (direct) read as it is."""
    tile = packed_tile(rec.rt, acc.ctype)
    MR, NR, VW, KB = tile[0], tile[1], tile[2], tile[4]
    mq, np_ = -(-M // MR), -(-N // NR)
    isz = acc.itemsize
    # Scratch: B packed into panels (unless direct). A is read in place when it is in the
    # sums' type and its rows are contiguous, or it is transposed (rows not contiguous) but
    # small (PACK_A_MIN_BYTES); else copied first: packed into MR-row panels when transposed,
    # converted row by row when only its type differs.
    # An operand with batch stride 0 (broadcast) is prepared once and shared by every batch.
    converted = a.dtype.ctype != acc.ctype
    if a.strides[2] != 1 and K > 1 and (converted or M * K * isz > PACK_A_MIN_BYTES):
        a_mode = "panels"
    else:
        a_mode = "rows" if converted else None
    b_size = 0 if direct else np_ * NR * K  # scratch elements per batch
    a_size = {"panels": mq * MR * K, "rows": M * K, None: 0}[a_mode]
    b_shared, a_shared = b.strides[0] == 0 or Z == 1, a.strides[0] == 0 or Z == 1
    per_batch = (0 if b_shared else b_size) + (0 if a_shared else a_size)
    fixed = (b_size if b_shared else 0) + (a_size if a_shared else 0)
    chunk = (
        Z if per_batch == 0 else max(1, min(Z, (PACKED_SCRATCH_BYTES // isz - fixed) // per_batch))
    )
    b_elems = (1 if b_shared else chunk) * b_size
    a_elems = (1 if a_shared else chunk) * a_size
    variant = "direct" if direct else "packed"
    params, I = _params(out, a, b, acc, variant, tile, b_elems, a_elems)
    # The micro-kernel reads a as it is, or its copy.
    gemm = _kernel(
        rec.rt,
        f"cg_matmul_{variant}",
        dict(params, a_ct=acc.ctype, a_panels=a_mode == "panels") if a_mode else params,
    )
    if not direct:
        pack_b = _kernel(rec.rt, "cg_matmul_pack_b", params)
        bp = _scratch(rec, acc, b_elems)
        b_zs = 0 if b_shared else b_size
    if a_mode:
        name = "cg_matmul_pack_a" if a_mode == "panels" else "cg_matmul_convert_a"
        prep_a = _kernel(rec.rt, name, dict(params, variant="packed"))
        ap = _scratch(rec, acc, a_elems)
        a_zs = 0 if a_shared else a_size
    if direct:
        readable = I(_readable_width(b, Z, K, N))
    for z0 in range(0, Z, chunk):
        zc = min(chunk, Z - z0)
        if direct:
            b_args = [*_operand_args(I, b, z0)[:-1], readable]  # no column stride: it is 1
        else:
            if z0 == 0 or not b_shared:
                kq = -(-K // KB)
                _launch1d(
                    rec,
                    pack_b,
                    I,
                    kq * np_ * (1 if b_shared else zc),
                    [bp.buffer, I(b_zs), *_operand_args(I, b, z0), I(N), I(K), I(np_), I(kq)],
                    LOCAL_COPY,
                )
            b_args = [bp.buffer, I(b_zs)]
        if a_mode is None:
            a_args = _operand_args(I, a, z0)
        else:
            zs = 1 if a_shared else zc
            if z0 == 0 or not a_shared:
                if a_mode == "panels":
                    kq = -(-K // KB)
                    _launch1d(
                        rec,
                        prep_a,
                        I,
                        mq * kq * zs,
                        [ap.buffer, I(a_zs), *_operand_args(I, a, z0), I(M), I(K), I(mq), I(kq)],
                        LOCAL_COPY,
                    )
                else:
                    kq = -(-K // VW)
                    _launch1d(
                        rec,
                        prep_a,
                        I,
                        kq * M * zs,
                        [ap.buffer, I(a_zs), *_operand_args(I, a, z0)[:-1], I(M), I(K), I(kq)],
                        LOCAL_COPY,
                    )
            # panels: row stride unused, k stride MR; rows: contiguous
            a_args = [ap.buffer, I(0), I(a_zs), I(K), I(MR if a_mode == "panels" else 1)]
        args = [
            out.buffer,
            I(out.offset + z0 * M * N),
            *a_args,
            *b_args,
            I(M),
            I(N),
            I(K),
            I(mq),
            I(np_),
        ]
        _launch1d(rec, gemm, I, mq * np_ * zc, args)
    # scratch goes back to the allocator after the last launch of each replay (plans.run)


def product_sum_chunks(rt, Z, G, M, N, K, dtype) -> int:
    """How many chunks of batches ``product_sum`` cuts a sum over ``Z`` batches of ``G`` groups'
    (M, K) x (K, N) products of ``dtype`` into on ``rt``'s device; 0 where it does not run
    there (GPUs, whose tiled product keeps them busy; a type without the kernel; K too short to
    repay summing along it in vectors)."""
    ct = dtype.ctype
    if rt.is_gpu or ct not in DOT_TILE:
        return 0
    RM, RN, VW = DOT_TILE[ct]
    if K < 4 * VW or Z == 0 or min(M, N) > DOT_MAX_SIDE or max(M, N) > DOT_MAX_OTHER:
        return 0  # (the micro-kernel is 2-3x as fast on a product with blocks enough)
    if rt.loop_limit is not None and K > rt.loop_limit // 2:
        return 0
    blocks = -(-M // RM) * -(-N // RN) * G
    chunks = max(1, min(Z, -(-DOT_ITEMS // blocks)))
    if rt.loop_limit is not None:  # a work-item's loops take zc * K iterations in all
        most = max(1, rt.loop_limit // 2 // K)
        chunks = max(chunks, -(-Z // most))
    return -(-Z // -(-Z // chunks))  # no empty chunk


def product_sum(rt, out: View, a: View, b: View, acc) -> None:
    """out (C, G, M, N), contiguous = for each of the C chunks of the Z batches (as
    ``product_sum_chunks`` cut them) and each group g, the sum over its batches z of a[z, g] @
    b[z, g].T, where a (Z, G, M, K) and b (Z, G, N, K) are both contiguous along K (stride
    1); ``acc`` is their dtype."""
    chunks, G, M, N = out.shape
    Z, _, _, K = a.shape
    zc = -(-Z // chunks)
    tile = DOT_TILE[acc.ctype]
    params, I = _params(out, a, b, acc, "dot", tile)
    kernel = _kernel(rt, "cg_matmul_dot", params)
    nbm, nbn = -(-M // tile[0]), -(-N // tile[1])
    items = nbm * nbn * G * chunks
    args = [
        out.buffer,
        I(out.offset),
        a.buffer,
        I(a.offset),
        *map(I, a.strides[:3]),  # batch, group and row strides: along K it is 1
        b.buffer,
        I(b.offset),
        *map(I, b.strides[:3]),
        I(M),
        I(N),
        I(K),
        I(Z),
        I(G),
        I(zc),
        I(nbm),
        I(nbn),
        I(items),
    ]
    rt.launch(kernel, (-(-items // LOCAL) * LOCAL,), (LOCAL,), args)
