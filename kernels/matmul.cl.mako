## Batched matmul: out[z, m, n] = sum_k a[z, m, k] * b[z, k, n].
##   variant: "general" (any dtype, any strides; a small register block per work-item),
##            "packed"  (CPU fast path: pack A and B into panels, then a vector micro-kernel),
##            "tiled"   (GPU path: local-memory tiles, a TM/WM x TN/WN block per work-item)
##   a_ct, b_ct, out_ct: storage ctypes; acc: the ctype products are summed in
##   tile: what the variant's loops are shaped by (one parameter, so every variant takes the
##   same names: Mako's strict_undefined checks names in branches that are not rendered too)
##     general: (RM, RN)              RM x RN block per work-item
##     packed:  (MR, NR, VW, UK, order)  MR x NR block per work-item in VW-wide vectors, k-loop
##                                    unrolled UK times, order "mfirst"/"nfirst": which block
##                                    index is dimension 0 (and so shares a work-group)
##     tiled:   (TM, TN, TK, WM, WN)  TM x TN tile per work-group, TK deep, WM x WN per item
## Sizes, strides and offsets are arguments (a new shape never rebuilds), all long: a batched
## offset z*stride can pass 2^31 even where each matrix is small.
<%include file="_prelude.cl.mako"/>
<%
def load(ct, ptr, idx):
    # half is stored, never computed in: vload_half widens it to float (core OpenCL 1.2)
    if ct == "half":
        return f"(({acc})vload_half({idx}, {ptr}))"
    return f"(({acc}){ptr}[{idx}])"

def store(ptr, idx, val):
    if out_ct == "half":
        return f"vstore_half_rte((float)({val}), {idx}, {ptr})"
    return f"{ptr}[{idx}] = ({out_ct})({val})"

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
    __global ${out_ct} *out, const long out_off,
    __global const ${a_ct} *a, const long a_off, const long a_sz, const long a_sm, const long a_sk,
    __global const ${b_ct} *b, const long b_off, const long b_sz, const long b_sk, const long b_sn,
    const long M, const long N, const long K, const long nblk_n)
{
  const long bn = get_global_id(0);  // block column: adjacent work-items share the A rows
  const long bm = get_global_id(1);
  const long z = get_global_id(2);
  if (bn >= nblk_n || bm * ${RM} >= M) return;
  const long m0 = bm * ${RM}, n0 = bn * ${RN};
% for i in range(RM):
  const long ar${i} = a_off + z * a_sz + min(m0 + ${i}, M - 1) * a_sm;
% endfor
% for j in range(RN):
  const long bc${j} = b_off + z * b_sz + min(n0 + ${j}, N - 1) * b_sn;
% endfor
% for i in range(RM):
  % for j in range(RN):
  ${acc} c${i}_${j} = 0;
  % endfor
% endfor
  for (long k = 0; k < K; ++k) {
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
  const long o = out_off + (z * M + m0) * N + n0;
% for i in range(RM):
  if (m0 + ${i} < M) {
  % for j in range(RN):
    if (n0 + ${j} < N) ${store("out", f"o + {i} * N + {j}", f"c{i}_{j}")};
  % endfor
  }
% endfor
}

% elif variant == "packed":
<%
MR, NR, VW, UK, order = tile
NV = NR // VW
VT = f"{acc}{VW}"
%>
## Vectors are VW wide (8: one AVX register): PoCL's LLVM miscompiles or crashes on 16-wide
## vectors passed to builtins (vstore16, mad) when the target lacks AVX-512, so a 16-wide row
## of the block is held as two 8-wide vectors instead.
## Packed A: for each batch and each MR-row block q, a K x MR panel (rows past M are zero), so
## the micro-kernel reads one contiguous stream whatever a's strides were.
__kernel void cg_matmul_pack_a(
    __global ${acc} *ap, const long ap_zstride,
    __global const ${a_ct} *a, const long a_off, const long a_sz, const long a_sm, const long a_sk,
    const long M, const long K, const long mq)
{
  const long k = get_global_id(0);
  const long q = get_global_id(1);
  const long z = get_global_id(2);
  if (k >= K || q >= mq) return;
  __global ${acc} *dst = ap + z * ap_zstride + (q * K + k) * ${MR};
  const long src = a_off + z * a_sz + k * a_sk;
% for i in range(MR):
  {
    const long m = q * ${MR} + ${i};
    dst[${i}] = m < M ? ${load(a_ct, "a", "src + m * a_sm")} : (${acc})0;
  }
% endfor
}

## Packed B: for each batch and each NR-column block p, a K x NR panel (columns past N zero).
__kernel void cg_matmul_pack_b(
    __global ${acc} *bp, const long bp_zstride,
    __global const ${b_ct} *b, const long b_off, const long b_sz, const long b_sk, const long b_sn,
    const long N, const long K, const long np_)
{
  const long k = get_global_id(0);
  const long p = get_global_id(1);
  const long z = get_global_id(2);
  if (k >= K || p >= np_) return;
  __global ${acc} *dst = bp + z * bp_zstride + (p * K + k) * ${NR};
  const long src = b_off + z * b_sz + k * b_sk;
% for j in range(NR):
  {
    const long n = p * ${NR} + ${j};
    dst[${j}] = n < N ? ${load(b_ct, "b", "src + n * b_sn")} : (${acc})0;
  }
% endfor
}

## The micro-kernel: an MR x NR block of out in MR*NV vector accumulators; per k one NR-wide
## row of the B panel and MR broadcast scalars of the A panel. The panels make both streams
## contiguous, so the loop is loads and FMAs only.
__kernel void cg_matmul_packed(
    __global ${out_ct} *out, const long out_off,
    __global const ${acc} *ap, const long ap_zstride,
    __global const ${acc} *bp, const long bp_zstride,
    const long M, const long N, const long K, const long mq, const long np_)
{
% if order == "mfirst":
  const long q = get_global_id(0);
  const long p = get_global_id(1);
% else:
  const long p = get_global_id(0);
  const long q = get_global_id(1);
% endif
  const long z = get_global_id(2);
  if (q >= mq || p >= np_) return;
  __global const ${acc} *pa = ap + z * ap_zstride + q * K * ${MR};
  // A vector pointer, not vload: PoCL leaves vloadN an out-of-line call, which spills every
  // accumulator around it. Panels start at multiples of NR elements, so the cast is aligned.
  __global const ${VT} *pb = (__global const ${VT} *)(bp + z * bp_zstride + p * K * ${NR});
% for i in range(MR):
  % for v in range(NV):
  ${VT} c${i}_${v} = (${VT})0;
  % endfor
% endfor
  long k = 0;
  for (; k + ${UK} <= K; k += ${UK}) {
% for u in range(UK):
    {
  % for v in range(NV):
      const ${VT} b${v} = pb[(k + ${u}) * ${NV} + ${v}];
  % endfor
  % for i in range(MR):
      const ${VT} a${i} = (${VT})pa[(k + ${u}) * ${MR} + ${i}];
    % for v in range(NV):
      ${mad(f"c{i}_{v}", f"a{i}", f"b{v}")};
    % endfor
  % endfor
    }
% endfor
  }
  for (; k < K; ++k) {
% for v in range(NV):
    const ${VT} b${v} = pb[k * ${NV} + ${v}];
% endfor
% for i in range(MR):
    const ${VT} a${i} = (${VT})pa[k * ${MR} + ${i}];
  % for v in range(NV):
    ${mad(f"c{i}_{v}", f"a{i}", f"b{v}")};
  % endfor
% endfor
  }
  const long m0 = q * ${MR}, n0 = p * ${NR};
  __global ${out_ct} *o = out + out_off + (z * M + m0) * N + n0;
  if (n0 + ${NR} <= N) {
% for i in range(MR):
    if (m0 + ${i} < M) {
  % for v in range(NV):
    % if out_ct == "half":
      vstore_half${VW}_rte(c${i}_${v}, 0, o + ${i} * N + ${v * VW});
    % else:
      vstore${VW}(c${i}_${v}, 0, o + ${i} * N + ${v * VW});
    % endif
  % endfor
    }
% endfor
  } else {
% for i in range(MR):
    if (m0 + ${i} < M) {
      const ${acc} r[${NR}] = {${", ".join(f"c{i}_{j // VW}.s{j % VW:x}" for j in range(NR))}};
      for (long j = 0; j < N - n0; ++j) ${store("o", f"{i} * N + j", "r[j]")};
    }
% endfor
  }
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
    __global ${out_ct} *out, const long out_off,
    __global const ${a_ct} *a, const long a_off, const long a_sz, const long a_sm, const long a_sk,
    __global const ${b_ct} *b, const long b_off, const long b_sz, const long b_sk, const long b_sn,
    const long M, const long N, const long K)
{
  __local ${acc} As[${TK}][${TM + 1}];
  __local ${acc} Bs[${TK}][${TN + 1}];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * ${LN} + tx;
  const long m0 = (long)get_group_id(1) * ${TM}, n0 = (long)get_group_id(0) * ${TN};
  const long z = get_group_id(2);
  const long abase = a_off + z * a_sz, bbase = b_off + z * b_sz;
% for i in range(WM):
  % for j in range(WN):
  ${acc} c${i}_${j} = 0;
  % endfor
% endfor
  for (long k0 = 0; k0 < K; k0 += ${TK}) {
    // Stage A's slice: element e is row e / TK, column e % TK (consecutive work-items walk k).
    for (int e = tid; e < ${TM * TK}; e += ${NT}) {
      const int r = e / ${TK}, kk = e % ${TK};
      const long m = m0 + r, k = k0 + kk;
      As[kk][r] = (m < M && k < K) ? ${load(a_ct, "a", "abase + m * a_sm + k * a_sk")} : (${acc})0;
    }
    // Stage B's slice: element e is row e / TN, column e % TN (consecutive work-items walk n).
    for (int e = tid; e < ${TK * TN}; e += ${NT}) {
      const int kk = e / ${TN}, cc = e % ${TN};
      const long k = k0 + kk, n = n0 + cc;
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
  const long obase = out_off + z * M * N;
% for i in range(WM):
  {
    const long m = m0 + ty + ${LM * i};
    if (m < M) {
  % for j in range(WN):
      {
        const long n = n0 + tx + ${LN * j};
        if (n < N) ${store("out", "obase + m * N + n", f"c{i}_{j}")};
      }
  % endfor
    }
  }
% endfor
}
% endif
