## Batched matmul: out[z, m, n] = sum_k a[z, m, k] * b[z, k, n].
##   variant: "general" (any dtype, any strides; a small register block per work-item),
##            "packed"  (CPU fast path: pack B into panels, then a vector micro-kernel),
##            "direct"  (the same micro-kernel reading a row-major B in place: for few rows),
##            "tiled"   (GPU path: local-memory tiles, a TM/WM x TN/WN block per work-item)
##   a_ct, b_ct, out_ct: storage ctypes; acc: the ctype products are summed in
##   tile: what the variant's loops are shaped by (one parameter, so every variant takes the
##   same names: Mako's strict_undefined checks names in branches that are not rendered too)
##     general: (RM, RN)              RM x RN block per work-item
##     packed, direct: (MR, NR, VW, UK, KB)  MR x NR block per work-item in VW-wide vectors,
##                                    k-loop unrolled UK times; KB B-panel rows per packing item
##     tiled:   (TM, TN, TK, WM, WN)  TM x TN tile per work-group, TK deep, WM x WN per item
##   a_panels: (packed, direct) a has been packed by cg_matmul_pack_a; else read in place
##   index_t: int where every offset a launch can form fits in 31 bits, else long (a batched
##   offset z*stride can pass 2^31 even where each matrix is small)
## Sizes, strides and offsets are kernel arguments: a new shape never rebuilds a program.
## general, packed and the packing kernels run on a 1-D range over exactly the work there is
## (batch outermost), padded to a fixed local size: PoCL compiles a kernel once per local size,
## and with 3-D ranges a small matrix in a big batch left most of each work-group idle.
<%
I = index_t
def load(ct, ptr, idx):
    # half and bf16 are stored, never computed in: vload_half and cg_widen_bf16 widen them to
    # float
    return h.load(ct, acc, ptr, idx)

def store(ptr, idx, val):
    return h.store(out_ct, False, ptr, idx, val)

def mad(c, a, b):
    # A plain multiply-add, which OpenCL C may contract to an FMA (FP_CONTRACT is on by
    # default): PoCL leaves mad() and fma() on vectors as out-of-line calls, 3x slower.
    return f"{c} += {a} * {b}"
%>
% if variant == "general":
<% RM, RN = tile %>
## One work-item per RM x RN block of one matrix. Loads clamp their row/column to the last
## valid one, so every read is in bounds without a branch in the k loop; stores are guarded.
__kernel void cg_matmul_general(
    __global ${out_ct} *out, const ${I} out_off,
    __global const ${a_ct} *a, const ${I} a_off, const ${I} a_sz, const ${I} a_sm, const ${I} a_sk,
    __global const ${b_ct} *b, const ${I} b_off, const ${I} b_sz, const ${I} b_sk, const ${I} b_sn,
    const ${I} M, const ${I} N, const ${I} K, const ${I} nblk_n, const ${I} nblk_m,
    const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} id = get_global_id(0);
  const ${I} bn = id % nblk_n;  // block column fastest: neighbours share the rows of a
  const ${I} bm = (id / nblk_n) % nblk_m;
  const ${I} z = id / nblk_n / nblk_m;
  const ${I} m0 = bm * ${RM}, n0 = bn * ${RN};
% for i in range(RM):
  const ${I} ar${i} = a_off + z * a_sz + min(m0 + ${i}, M - 1) * a_sm;
% endfor
% for j in range(RN):
  const ${I} bc${j} = b_off + z * b_sz + min(n0 + ${j}, N - 1) * b_sn;
% endfor
% for i in range(RM):
  % for j in range(RN):
  ${acc} c${i}_${j} = 0;
  % endfor
% endfor
  for (${I} k = 0; k < K; ++k) {
% for i in range(RM):
    const ${acc} a${i} = ${load(a_ct, "a", f"ar{i} + k * a_sk")};
% endfor
% for j in range(RN):
    const ${acc} b${j} = ${load(b_ct, "b", f"bc{j} + k * b_sk")};
% endfor
% for i in range(RM):
  % for j in range(RN):
    ${mad(f"c{i}_{j}", f"a{i}", f"b{j}")};
  % endfor
% endfor
  }
  const ${I} o = out_off + (z * M + m0) * N + n0;
% for i in range(RM):
  if (m0 + ${i} < M) {
  % for j in range(RN):
    if (n0 + ${j} < N) ${store("out", f"o + {i} * N + {j}", f"c{i}_{j}")};
  % endfor
  }
% endfor
}

% elif variant in ("packed", "direct"):
<%
MR, NR, VW, UK, KB = tile
NV = NR // VW
VT = f"{acc}{VW}"
VTU = f"cg_{VT}_u"
def load_row(ptr):
    # VW consecutive elements from anywhere: vloadN would do, but PoCL compiles it as an
    # out-of-line call; a load through a type aligned like its scalar is one unaligned move.
    if b_ct == acc:
        return f"*(__global const {VTU} *)({ptr})"
    if b_ct == "half":
        return f"vload_half{VW}(0, {ptr})"
    return h.loadv(b_ct, acc, VW, ptr, "0")
%>
## Vectors are VW wide (8 floats: one AVX register): PoCL's LLVM crashes or miscompiles
## 16-wide vectors passed to builtins (vstore16, mad) when the target lacks AVX-512, so a
## 16-wide row of the block is held as two 8-wide vectors instead.
typedef ${VT} ${VTU} __attribute__((aligned(${8 if acc == "double" else 4})));
% if variant == "packed":

## a in another type than the sums (half, bf16) with contiguous rows: copied to contiguous rows in
## the sums' type first, since the micro-kernel would otherwise convert each element once per
## NR columns.
__kernel void cg_matmul_convert_a(
    __global ${acc} *dst, const ${I} dst_zstride,
    __global const ${a_ct} *a, const ${I} a_off, const ${I} a_sz, const ${I} a_sm,
    const ${I} M, const ${I} K, const ${I} kq, const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} id = get_global_id(0);
  const ${I} k0 = id % kq * ${VW};  // VW elements of one row per work-item
  const ${I} m = id / kq % M;
  const ${I} z = id / kq / M;
  __global ${acc} *d = dst + z * dst_zstride + m * K + k0;
  __global const ${a_ct} *src = a + a_off + z * a_sz + m * a_sm + k0;
  if (k0 + ${VW} <= K) {
% if a_ct == "half":
    *(__global ${VTU} *)d = vload_half${VW}(0, src);
% else:
    *(__global ${VTU} *)d = ${h.loadv(a_ct, acc, VW, "src", "0")};
% endif
  } else {
    for (${I} j = 0; k0 + j < K; ++j) d[j] = ${load(a_ct, "src", "j")};
  }
}

## a whose rows are not contiguous (transposed): packed into panels, for each batch and each
## MR-row block q a K x MR panel in the sums' type (rows past M are zero), which the
## micro-kernel reads as one stream. Read in place, a transposed a would cost each work-item a
## cache line per k for MR words of it. Neighbouring work-items take neighbouring row blocks,
## whose words share cache lines in a transposed a.
__kernel void cg_matmul_pack_a(
    __global ${acc} *ap, const ${I} ap_zstride,
    __global const ${a_ct} *a, const ${I} a_off, const ${I} a_sz, const ${I} a_sm, const ${I} a_sk,
    const ${I} M, const ${I} K, const ${I} mq, const ${I} kq, const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} id = get_global_id(0);
  const ${I} q = id % mq;
  const ${I} k0 = id / mq % kq * ${KB};  // KB panel rows per work-item
  const ${I} z = id / mq / kq;
  const ${I} kend = min(k0 + ${KB}, K);
  __global ${acc} *d = ap + z * ap_zstride + (q * K + k0) * ${MR};
  __global const ${a_ct} *src = a + a_off + z * a_sz + q * ${MR} * a_sm + k0 * a_sk;
  if (q * ${MR} + ${MR} <= M) {
    for (${I} k = k0; k < kend; ++k, d += ${MR}, src += a_sk) {
% for i in range(MR):
      d[${i}] = ${load(a_ct, "src", f"{i} * a_sm")};
% endfor
    }
  } else {
    for (${I} k = k0; k < kend; ++k, d += ${MR}, src += a_sk) {
% for i in range(MR):
      d[${i}] = q * ${MR} + ${i} < M ? ${load(a_ct, "src", f"{i} * a_sm")} : (${acc})0;
% endfor
    }
  }
}

## Packed B: for each batch and each NR-column block p, a K x NR panel (columns past N are
## zero) in the accumulation type, so the micro-kernel reads one aligned contiguous stream
## whatever b's strides and type were. KB rows of one panel per work-item.
__kernel void cg_matmul_pack_b(
    __global ${acc} *bp, const ${I} bp_zstride,
    __global const ${b_ct} *b, const ${I} b_off, const ${I} b_sz, const ${I} b_sk, const ${I} b_sn,
    const ${I} N, const ${I} K, const ${I} np_, const ${I} kq, const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} id = get_global_id(0);
  const ${I} k0 = id % kq * ${KB};  // KB panel rows per work-item: the divisions cost more
  const ${I} p = id / kq % np_;     // than copying one row
  const ${I} z = id / kq / np_;
  const ${I} n0 = p * ${NR}, kend = min(k0 + ${KB}, K);
  __global ${acc} *dst = bp + z * bp_zstride + (p * K + k0) * ${NR};
  __global const ${b_ct} *src = b + b_off + z * b_sz + k0 * b_sk + n0 * b_sn;
  if (b_sn == 1 && n0 + ${NR} <= N) {  // whole rows of a row-major b: vector copies
    for (${I} k = k0; k < kend; ++k, dst += ${NR}, src += b_sk) {
% for v in range(NV):
      ((__global ${VT} *)dst)[${v}] = ${load_row(f"src + {v * VW}")};
% endfor
    }
  } else {
    for (${I} k = k0; k < kend; ++k, dst += ${NR}, src += b_sk) {
% for j in range(NR):
      dst[${j}] = n0 + ${j} < N ? ${load(b_ct, "src", f"{j} * b_sn")} : (${acc})0;
% endfor
    }
  }
}

% endif
<%
def kstep(bvec, indent):
    """One k step: NV vectors of a B row (bvec(v) gives each), MR broadcasts of a, the FMAs."""
    lines = [f"const {VT} b{v} = {bvec(v)};" for v in range(NV)]
    for i in range(MR):
        lines.append(f"const {VT} a{i} = ({VT}){load(a_ct, f'ar{i}', 'ka')};")
        lines += [mad(f"c{i}_{v}", f"a{i}", f"b{v}") + ";" for v in range(NV)]
    lines.append("ka += a_sk;")
    return "\n".join(" " * indent + l for l in lines)

def kloop(bvec, advance):
    """The k loop, unrolled UK times; advance: what else moves one k step."""
    body = "\n".join(" " * 4 + "{\n" + kstep(bvec, 6) + "\n" + " " * 6 + advance + "\n    }"
                     for u in range(UK))
    tail = kstep(bvec, 4) + "\n    " + advance
    return (f"for ({I} k = 0; k + {UK} <= K; k += {UK}) {{\n{body}\n  }}\n"
            f"  for ({I} k = K / {UK} * {UK}; k < K; ++k) {{\n{tail}\n  }}")
%>
## The micro-kernel: an MR x NR block of out in MR*NV vector accumulators; per k one NR-wide
## row of B and MR scalars of a, broadcast. a is read in place through its strides: MR
## sequential streams (row-major a) or MR adjacent words (transposed a) are both cache
## friendly, and skipping its packing saves a launch and a pass over a. B comes from
##   packed: its panels, one aligned contiguous stream (any b; pays off for many rows of a);
##   direct: b itself, which must be row-major (b_sn == 1), in the sums' type: no packing
##           launch or pass over b, for few rows of a, where packing would not be repaid.
% if variant == "packed":
__kernel void cg_matmul_packed(
% else:
__kernel void cg_matmul_direct(
% endif
    __global ${out_ct} *out, const ${I} out_off,
    __global const ${a_ct} *a, const ${I} a_off, const ${I} a_sz, const ${I} a_sm, const ${I} a_sk,
% if variant == "packed":
    __global const ${acc} *bp, const ${I} bp_zstride,
% else:
    __global const ${acc} *b, const ${I} b_off, const ${I} b_sz, const ${I} b_sk,
    const ${I} Nb,  // the elements of each row of b that may be read (N, or its row stride)
% endif
    const ${I} M, const ${I} N, const ${I} K, const ${I} mq, const ${I} np_, const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} id = get_global_id(0);
  const ${I} q = id % mq;  // row block fastest: a work-group shares one B panel in cache
  const ${I} p = id / mq % np_;
  const ${I} z = id / mq / np_;
  const ${I} m0 = q * ${MR}, n0 = p * ${NR};
% if a_panels:
  // a packed into panels (a_sk is MR): row m0 + i of this block is word i of each panel row.
% for i in range(MR):
  __global const ${a_ct} *ar${i} = a + a_off + z * a_sz + q * K * ${MR} + ${i};
% endfor
% else:
  // Rows past M re-read row M - 1, so the loop needs no branch; their sums are never stored.
% for i in range(MR):
  __global const ${a_ct} *ar${i} = a + a_off + z * a_sz + min(m0 + ${i}, M - 1) * a_sm;
% endfor
% endif
% for i in range(MR):
  % for v in range(NV):
  ${VT} c${i}_${v} = (${VT})0;
  % endfor
% endfor
  ${I} ka = 0;  // k * a_sk
% if variant == "packed":
  // A vector pointer, not vload: PoCL leaves vloadN an out-of-line call, which spills every
  // accumulator around it. Panels start at multiples of NR elements, so the cast is aligned.
  __global const ${VT} *pb = (__global const ${VT} *)(bp + z * bp_zstride + p * K * ${NR});
  ${kloop(lambda v: f"pb[{v}]", f"pb += {NV};")}
% else:
  __global const ${acc} *br = b + b_off + z * b_sz + n0;  // row k of the block's columns
  // whole vectors where the block's columns may all be read: a row's last block too, where
  // the rows have room after them (a padded column matrix; the columns past N never stored)
  if (n0 + ${NR} <= Nb) {
    ${kloop(lambda v: f"*(__global const {VTU} *)(br + {v * VW})", "br += b_sk;")}
  } else {
    // The last, partial block: columns past N re-read column N - 1 (never stored).
% for j in range(NR):
    const ${I} bc${j} = min((${I})${j}, N - 1 - n0);
% endfor
<%
    def edge(v):
        return f"({VT})(" + ", ".join(f"br[bc{v * VW + j}]" for j in range(VW)) + ")"
%>
    ${kloop(edge, "br += b_sk;")}
  }
% endif
  __global ${out_ct} *o = out + out_off + (z * M + m0) * N + n0;
  if (n0 + ${NR} <= N) {
% for i in range(MR):
    if (m0 + ${i} < M) {
  % for v in range(NV):
    % if out_ct == "half":
      vstore_half${VW}_rte(c${i}_${v}, 0, o + ${i} * N + ${v * VW});
    % elif out_ct == acc:
      *(__global ${VTU} *)(o + ${i} * N + ${v * VW}) = c${i}_${v};
    % else:
      ${h.storev(out_ct, False, acc, VW, "o", f"{i} * N + {v * VW}", f"c{i}_{v}")};
    % endif
  % endfor
    }
% endfor
  } else {
% for i in range(MR):
    if (m0 + ${i} < M) {
      const ${acc} r[${NR}] = {${", ".join(f"c{i}_{j // VW}.s{j % VW:x}" for j in range(NR))}};
      for (${I} j = 0; j < N - n0; ++j) ${store("o", f"{i} * N + j", "r[j]")};
    }
% endfor
  }
}

% elif variant == "dot":
<%
RM, RN, VW = tile
VT = f"{acc}{VW}"
VTU = f"cg_{VT}_u"
%>
## out[c, g, m, n] = sum over the batches z of chunk c and over k of a[z, g, m, k] * b[z, g, n,
## k]: a product of two operands that are both contiguous along the sum (a convolution's
## weight gradient, each group's: the output gradient times the column matrix, each contiguous
## along the window positions), summed over the batch as it goes. The micro-kernel would need one of them
## packed transposed and a sum over the batch after it; here each work-item holds an RM x RN
## block of VW-wide partial sums over k, which it adds up across the vector at the end.
## Chunks of batches give the parallelism a small (M, N) lacks; the caller sums the chunks.
typedef ${VT} ${VTU} __attribute__((aligned(${8 if acc == "double" else 4})));
__kernel void cg_matmul_dot(
    __global ${out_ct} *out, const ${I} out_off,
    __global const ${a_ct} *a, const ${I} a_off, const ${I} a_sz, const ${I} a_sg,
    const ${I} a_sm,
    __global const ${b_ct} *b, const ${I} b_off, const ${I} b_sz, const ${I} b_sg,
    const ${I} b_sn,
    const ${I} M, const ${I} N, const ${I} K, const ${I} Z, const ${I} G, const ${I} zc,
    const ${I} nbm, const ${I} nbn, const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} id = get_global_id(0);
  const ${I} bn = id % nbn;
  const ${I} bm = id / nbn % nbm;
  const ${I} g = id / nbn / nbm % G;
  const ${I} c = id / nbn / nbm / G;
  const ${I} m0 = bm * ${RM}, n0 = bn * ${RN};
  const ${I} z1 = min(Z, (c + 1) * zc);
  // Rows past M (columns past N) re-read the last one, so the loop needs no branch; their
  // sums are never stored.
% for i in range(RM):
  const ${I} ar${i} = a_off + g * a_sg + min(m0 + ${i}, M - 1) * a_sm;
% endfor
% for j in range(RN):
  const ${I} bc${j} = b_off + g * b_sg + min(n0 + ${j}, N - 1) * b_sn;
% endfor
% for i in range(RM):
  % for j in range(RN):
  ${VT} v${i}_${j} = (${VT})0;
  ${acc} s${i}_${j} = 0;
  % endfor
% endfor
  const ${I} kv = K / ${VW} * ${VW};
  for (${I} z = c * zc; z < z1; ++z) {
% for i in range(RM):
    __global const ${a_ct} *pa${i} = a + ar${i} + z * a_sz;
% endfor
% for j in range(RN):
    __global const ${b_ct} *pb${j} = b + bc${j} + z * b_sz;
% endfor
    for (${I} k = 0; k < kv; k += ${VW}) {
% for i in range(RM):
      const ${VT} x${i} = *(__global const ${VTU} *)(pa${i} + k);
% endfor
% for j in range(RN):
      const ${VT} y${j} = *(__global const ${VTU} *)(pb${j} + k);
% endfor
% for i in range(RM):
  % for j in range(RN):
      ${mad(f"v{i}_{j}", f"x{i}", f"y{j}")};
  % endfor
% endfor
    }
    for (${I} k = kv; k < K; ++k) {
% for i in range(RM):
  % for j in range(RN):
      ${mad(f"s{i}_{j}", f"pa{i}[k]", f"pb{j}[k]")};
  % endfor
% endfor
    }
  }
  __global ${out_ct} *o = out + out_off + (c * G + g) * M * N;
% for i in range(RM):
  if (m0 + ${i} < M) {
  % for j in range(RN):
    if (n0 + ${j} < N) {
      const ${acc} t = s${i}_${j} + ${" + ".join(f"v{i}_{j}.s{e:x}" for e in range(VW))};
      ${store("o", f"(m0 + {i}) * N + n0 + {j}", "t")};
    }
  % endfor
  }
% endfor
}

% elif variant == "tiled":
<%
TM, TN, TK, WM, WN = tile
LM, LN = TM // WM, TN // WN   # work-group shape: LN x LM work-items
NT = LM * LN
%>
## A TM x TN tile of out per work-group, LN x LM work-items each holding WM x WN sums. Each
## TK step stages a TM x TK slice of A and a TK x TN slice of B in local memory (zeros past the
## edges, so the inner loop has no branches); work-item (tx, ty) owns rows ty + LM*i and
## columns tx + LN*j, so neighbours read neighbouring local words and write coalesced.
__kernel __attribute__((reqd_work_group_size(${LN}, ${LM}, 1)))
void cg_matmul_tiled(
    __global ${out_ct} *out, const ${I} out_off,
    __global const ${a_ct} *a, const ${I} a_off, const ${I} a_sz, const ${I} a_sm, const ${I} a_sk,
    __global const ${b_ct} *b, const ${I} b_off, const ${I} b_sz, const ${I} b_sk, const ${I} b_sn,
    const ${I} M, const ${I} N, const ${I} K, const ${I} Z)
{
  __local ${acc} As[${TK}][${TM + 1}];
  __local ${acc} Bs[${TK}][${TN + 1}];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * ${LN} + tx;
  const ${I} m0 = (${I})get_group_id(1) * ${TM}, n0 = (${I})get_group_id(0) * ${TN};
  // Batches past the grid's third dimension (65535 groups on some GPUs) loop.
  for (${I} z = get_group_id(2); z < Z; z += get_num_groups(2)) {
    const ${I} abase = a_off + z * a_sz, bbase = b_off + z * b_sz;
% for i in range(WM):
    % for j in range(WN):
    ${acc} c${i}_${j} = 0;
    % endfor
% endfor
    for (${I} k0 = 0; k0 < K; k0 += ${TK}) {
      // Stage A's slice: element e is row e / TK, column e % TK (consecutive work-items walk k).
      for (int e = tid; e < ${TM * TK}; e += ${NT}) {
        const int r = e / ${TK}, kk = e % ${TK};
        const ${I} m = m0 + r, k = k0 + kk;
        As[kk][r] = (m < M && k < K) ? ${load(a_ct, "a", "abase + m * a_sm + k * a_sk")} : (${acc})0;
      }
      // Stage B's slice: element e is row e / TN, column e % TN (consecutive work-items walk n).
      for (int e = tid; e < ${TK * TN}; e += ${NT}) {
        const int kk = e / ${TN}, cc = e % ${TN};
        const ${I} k = k0 + kk, n = n0 + cc;
        Bs[kk][cc] = (k < K && n < N) ? ${load(b_ct, "b", "bbase + k * b_sk + n * b_sn")} : (${acc})0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int kk = 0; kk < ${TK}; ++kk) {
% for i in range(WM):
        const ${acc} a${i} = As[kk][ty + ${LM * i}];
% endfor
% for j in range(WN):
        const ${acc} b${j} = Bs[kk][tx + ${LN * j}];
% endfor
% for i in range(WM):
    % for j in range(WN):
        ${mad(f"c{i}_{j}", f"a{i}", f"b{j}")};
    % endfor
% endfor
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const ${I} obase = out_off + z * M * N;
% for i in range(WM):
    {
      const ${I} m = m0 + ty + ${LM * i};
      if (m < M) {
    % for j in range(WN):
        {
          const ${I} n = n0 + tx + ${LN * j};
          if (n < N) ${store("out", "obase + m * N + n", f"c{i}_{j}")};
        }
    % endfor
      }
    }
% endfor
  }
}
% endif
