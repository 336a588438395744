"""Batched matmul on an OpenCL device: picks one of three kernel families of matmul.cl.mako.

* ``tiled`` (GPUs): local-memory tiles read straight through the operands' strides.
* ``packed`` (CPUs, floating point, big enough to repay two extra launches): A and B are first
  packed on the device into zero-padded panels in the accumulation type, then a vector
  micro-kernel computes an MR x NR block per work-item from two contiguous streams.
* ``general`` (everything else: small, integer, K == 0): a small register block per
  work-item, read through the strides.
"""

from __future__ import annotations

import numpy as np

TEMPLATE = "matmul.cl.mako"

# general: RM x RN block per work-item.
GENERAL_TILE = (4, 4)
# packed: (MR, NR, VW, UK, order) per accumulation type. MR*NR/VW vector accumulators plus
# NR/VW for the B row and one broadcast must fit AVX2's 16 registers: 6 x 16 floats is 12
# float8 sums, 6 x 8 doubles 12 double4 sums (the shape of OpenBLAS's Haswell kernels).
PACKED_TILE = {"float": (6, 16, 8, 2, "mfirst"), "double": (6, 8, 4, 2, "mfirst")}
# Work-items per work-group, along dimension 0, for every launch: fixed (with the global size
# padded and the kernels bounds-checked) because PoCL compiles a kernel again for each local
# size it meets, which a local size of None would make depend on the shape. In packed, the
# group runs along M, so it shares one B panel while it is in cache.
LOCAL = 16
# packed is worth its two packing launches (and the scratch) from about this many MACs.
PACKED_MIN_MACS = 48**3
# packed: scratch per chunk of batches; a chunk always holds at least one batch.
PACKED_SCRATCH_BYTES = 256 << 20
# tiled: (TM, TN, TK, WM, WN), a 16 x 16 work-group.
TILED_TILE = (64, 64, 16, 4, 4)

_L = np.int64  # every size, stride and offset argument is a long


def matmul(out, a, b, acc, *, path: str | None = None) -> None:
    """out[z, m, n] = sum_k a[z, m, k] * b[z, k, n] for 3-D tensors. Enqueues, never waits.

    ``out`` is contiguous; ``a`` and ``b`` are read through their strides (0 broadcasts a
    batch). ``acc`` is the dtype the sums are kept in. ``path`` forces a kernel family
    ("general", "packed" or "tiled") for tests; by default the device decides.
    """
    Z, M, N = out._shape
    K = a._shape[2]
    if Z == 0 or M == 0 or N == 0:
        return
    rt = out.device.runtime
    if path is None:
        path = _choose(rt, Z, M, N, K, acc)
    if path == "packed" and (K == 0 or acc.ctype not in PACKED_TILE):
        path = "general"  # nothing to pack, or no vector micro-kernel for this type
    {"general": _general, "packed": _packed, "tiled": _tiled}[path](rt, out, a, b, acc, Z, M, N, K)


def _choose(rt, Z, M, N, K, acc) -> str:
    if rt.is_gpu:
        return "tiled"
    if acc.ctype in PACKED_TILE and M * N * K >= PACKED_MIN_MACS and K > 0:
        return "packed"
    return "general"


def _params(out, a, b, acc, variant, tile):
    return dict(
        variant=variant, tile=tile, a_ct=a.dtype.ctype, b_ct=b.dtype.ctype,
        out_ct=out.dtype.ctype, acc=acc.ctype,
        fp64=any(d.name == "float64" for d in (out.dtype, a.dtype, b.dtype, acc)),
    )


def _pad(n: int) -> int:
    return -(-n // LOCAL) * LOCAL


def _operand_args(t, z0=0):
    """buffer, offset, batch, row and column strides of a 3-D operand from batch z0 on."""
    sz, sr, sc = t._stride
    return [t._storage.data, _L(t._offset + z0 * sz), _L(sz), _L(sr), _L(sc)]


def _general(rt, out, a, b, acc, Z, M, N, K):
    RM, RN = GENERAL_TILE
    kernel = rt.kernel(TEMPLATE, "cg_matmul_general", **_params(out, a, b, acc, "general",
                                                                 GENERAL_TILE))
    nbm, nbn = -(-M // RM), -(-N // RN)
    args = [out._storage.data, _L(out._offset), *_operand_args(a), *_operand_args(b),
            _L(M), _L(N), _L(K), _L(nbn)]
    rt.launch(kernel, (_pad(nbn), nbm, Z), (LOCAL, 1, 1), args)


def _tiled(rt, out, a, b, acc, Z, M, N, K):
    TM, TN, TK, WM, WN = TILED_TILE
    kernel = rt.kernel(TEMPLATE, "cg_matmul_tiled", **_params(out, a, b, acc, "tiled",
                                                               TILED_TILE))
    lx, ly = TN // WN, TM // WM
    args = [out._storage.data, _L(out._offset), *_operand_args(a), *_operand_args(b),
            _L(M), _L(N), _L(K)]
    rt.launch(kernel, (-(-N // TN) * lx, -(-M // TM) * ly, Z), (lx, ly, 1), args)


def _packed(rt, out, a, b, acc, Z, M, N, K):
    tile = PACKED_TILE[acc.ctype]
    MR, NR = tile[0], tile[1]
    params = _params(out, a, b, acc, "packed", tile)
    pack_a = rt.kernel(TEMPLATE, "cg_matmul_pack_a", **params)
    pack_b = rt.kernel(TEMPLATE, "cg_matmul_pack_b", **params)
    gemm = rt.kernel(TEMPLATE, "cg_matmul_packed", **params)
    mq, np_ = -(-M // MR), -(-N // NR)
    a_panel, b_panel = mq * MR * K, np_ * NR * K  # elements of one batch's packed operand
    # A batch stride of 0 (a broadcast operand) is packed once and shared by every batch.
    a_shared, b_shared = a._stride[0] == 0 or Z == 1, b._stride[0] == 0 or Z == 1
    isz = 8 if acc.ctype == "double" else 4
    per_batch = ((0 if a_shared else a_panel) + (0 if b_shared else b_panel)) * isz
    fixed = ((a_panel if a_shared else 0) + (b_panel if b_shared else 0)) * isz
    chunk = Z if per_batch == 0 else max(1, min(Z, (PACKED_SCRATCH_BYTES - fixed) // per_batch))
    za, zb = (1 if a_shared else chunk), (1 if b_shared else chunk)
    a_bytes, b_bytes = za * a_panel * isz, zb * b_panel * isz
    alloc = rt.allocator
    ap, bp = alloc.alloc(a_bytes), alloc.alloc(b_bytes)
    a_zs, b_zs = (0 if a_shared else a_panel), (0 if b_shared else b_panel)
    for z0 in range(0, Z, chunk):
        zc = min(chunk, Z - z0)
        if z0 == 0 or not a_shared:
            rt.launch(pack_a, (_pad(K), mq, 1 if a_shared else zc), (LOCAL, 1, 1),
                      [ap, _L(a_zs), *_operand_args(a, z0), _L(M), _L(K), _L(mq)])
        if z0 == 0 or not b_shared:
            rt.launch(pack_b, (_pad(K), np_, 1 if b_shared else zc), (LOCAL, 1, 1),
                      [bp, _L(b_zs), *_operand_args(b, z0), _L(N), _L(K), _L(np_)])
        args = [out._storage.data, _L(out._offset + z0 * M * N), ap, _L(a_zs), bp, _L(b_zs),
                _L(M), _L(N), _L(K), _L(mq), _L(np_)]
        if tile[4] == "mfirst":
            rt.launch(gemm, (_pad(mq), np_, zc), (LOCAL, 1, 1), args)
        else:
            rt.launch(gemm, (_pad(np_), mq, zc), (LOCAL, 1, 1), args)
    # The queue is in order: the kernels above run before anything that reuses the scratch.
    alloc.release(ap, a_bytes)
    alloc.release(bp, b_bytes)
