## Sorting every row of a contiguous (rows, n) input: a bitonic network over each row padded
## to P (a power of two). Only int64 indices move (idx: rows x P); keys are read through them,
## so one network serves every dtype and gives the permutation PyTorch returns besides.
##
## Order: ascending or descending by value, NaN the largest value (as PyTorch), ties by the
## original index, so the sort is stable (PyTorch's stable=True; its CPU sort is stable too).
## Padding (an index >= n) goes after every element whichever the direction.
##
##   cg_sort_init: idx[r][i] = i
##   cg_sort_step: one compare-exchange stage (k, j) of the network over every row
##   cg_sort_out:  values[r][i] = x[r][idx[r][i]], indices[r][i] = idx[r][i] for i < n
##   cg_sort_local: the whole network of a row in one launch, a work-group of ls items per
##                  row, keys and indices in local memory (rows of P <= a few thousand): the
##                  same order as the launches above give; each key mapped to an unsigned
##                  that orders as cg_before (cg_order): compare-exchanges without branches
##
##   cg_topk_rows: the first k (<= K) of each row in that order, one work-item per row keeping
##                 them in a sorted list: a selection, not a sort (topk of a long row)
##
## Params: st (storage C type), ct (compute C type), descending, fp64; P, ls (cg_sort_local's:
## the padded row length, the work-group size; None where only the others are built); K
## (cg_topk_rows' list length; None where it is not built).
<%
raw = h.raw_type(st)
nan = h.has_nan(ct)
%>
static inline ${ct} cg_key(__global const ${st} *x, const long i) { return ${h.load(st, ct, "x", "i")}; }

// whether element (a, ia) goes before (b, ib)
static inline bool cg_before(const ${ct} a, const long ia, const ${ct} b, const long ib, const long n)
{
  if (ia >= n) return false;
  if (ib >= n) return true;
% if nan:
  const bool an = a != a, bn = b != b;  // NaN (isnan: see _prelude)
  if (an || bn) {
    if (an && bn) return ia < ib;
    return ${"an" if descending else "bn"};
  }
% endif
  if (a != b) return ${"a > b" if descending else "a < b"};
  return ia < ib;
}

__kernel void cg_sort_init(__global long *idx, const long P, const long total)
{
  for (long t = get_global_id(0); t < total; t += get_global_size(0)) idx[t] = t % P;
}

__kernel void cg_sort_step(__global const ${st} *x, const long x_off, const long n,
                           __global long *idx, const long P, const long k, const long j,
                           const long total)
{
  const long half_p = P / 2;
  for (long t = get_global_id(0); t < total; t += get_global_size(0)) {
    const long r = t / half_p, i = t - r * half_p;
    const long lo = (i / j) * 2 * j + (i % j), hi = lo + j;
    __global long *row = idx + r * P;
    const long ia = row[lo], ib = row[hi];
    const long base = x_off + r * n;
    const ${ct} a = ia < n ? cg_key(x, base + ia) : (${ct})0;
    const ${ct} b = ib < n ? cg_key(x, base + ib) : (${ct})0;
    const bool up = (lo & k) == 0;
    if (up ? cg_before(b, ib, a, ia, n) : cg_before(a, ia, b, ib, n)) {
      row[lo] = ib;
      row[hi] = ia;
    }
  }
}

__kernel void cg_sort_out(__global const ${raw} *x, const long x_off, const long n,
                          __global const long *idx, const long P,
                          __global ${raw} *values, const long v_off,
                          __global long *indices, const long i_off, const long total)
{
  for (long t = get_global_id(0); t < total; t += get_global_size(0)) {
    const long r = t / n, i = t - r * n;
    const long id = idx[r * P + i];
    values[v_off + t] = x[x_off + r * n + id];
    indices[i_off + t] = id;
  }
}
% if P is not None:
<%
# each key as an unsigned of its width that orders as cg_before does (cg_order)
small = ct in ("float", "int", "short", "char", "uchar")
ot = "uint" if small else "ulong"
top = "0x80000000u" if small else "0x8000000000000000ul"
ones = "0xFFFFFFFFu" if small else "0xFFFFFFFFFFFFFFFFul"
%>
// the value as an unsigned that orders as cg_before (NaN the largest, -0.0 equal to 0.0)
static inline ${ot} cg_order(${ct} v)
{
% if ct in ("float", "double"):
  if (v != v) return ${ones};
  const ${ot} u = as_${ot}(v == (${ct})0 ? (${ct})0 : v);
  return (u & ${top}) ? ~u : (u | ${top});
% elif ct == "uchar":
  return (uint)v;
% elif small:
  return as_uint((int)v) ^ ${top};
% else:
  return as_ulong(v) ^ ${top};
% endif
}

__kernel void cg_sort_local(__global const ${st} *x, __global const ${raw} *x_raw,
                            const long x_off, const long n,
                            __global ${raw} *values, const long v_off,
                            __global long *indices, const long i_off)
{
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  const long base = x_off + r * n;
  // (order, index) pairs, compared in that order, the order complemented for a descending
  // sort; padding: the largest order and an index >= n, after every element
  __local ${ot} key[${P}];
  __local int id[${P}];
  for (int i = lid; i < ${P}; i += ${ls}) {
    key[i] = i < n ? ${"~" if descending else ""}cg_order(cg_key(x, base + i)) : ${ones};
    id[i] = i;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 2; k <= ${P}; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
## one pair per item where the group is P / 2 items: no loop (PoCL vectorizes the region)
% if 2 * ls == P:
      {
        const int t = lid;
% else:
      for (int t = lid; t < ${P // 2}; t += ${ls}) {
% endif
        const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1)), hi = lo + j;
        const ${ot} a = key[lo], b = key[hi];
        const int ia = id[lo], ib = id[hi];
        // a compare-exchange without branches
        const bool swap = ((lo & k) == 0) == (b < a || (b == a && ib < ia));
        key[lo] = swap ? b : a;
        key[hi] = swap ? a : b;
        id[lo] = swap ? ib : ia;
        id[hi] = swap ? ia : ib;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  const long out = r * n;
  for (int i = lid; i < n; i += ${ls}) {
    const int s = id[i];
    values[v_off + out + i] = x_raw[base + s];
    indices[i_off + out + i] = s;
  }
}
% endif

% if K:
// The first k (<= K) elements of each row in cg_before's order, one work-item per row: a list
// of them, sorted, in private memory. An element enters where it goes before the list's last
// (most of a long row's elements do not: one comparison each) and moves the later ones down;
// scanning in index order keeps equal elements in index order, as the sort does.
__kernel void cg_topk_rows(__global const ${st} *x, __global const ${raw} *x_raw,
                           const long x_off, const long n, const long k, const long rows,
                           __global ${raw} *values, const long v_off,
                           __global long *indices, const long i_off)
{
  const long r = get_global_id(0);
  if (r >= rows) return;
  const long base = x_off + r * n;
  ${ct} kv[${K}];
  long ki[${K}];
  long held = 0;
  for (long i = 0; i < n; ++i) {
    const ${ct} v = cg_key(x, base + i);
    if (held == k && !cg_before(v, i, kv[k - 1], ki[k - 1], n)) continue;
    long p = held < k ? held : k - 1;  // the free slot: the list grows, or its last drops
    while (p > 0 && cg_before(v, i, kv[p - 1], ki[p - 1], n)) {
      kv[p] = kv[p - 1];
      ki[p] = ki[p - 1];
      --p;
    }
    kv[p] = v;
    ki[p] = i;
    held += held < k;
  }
  for (long t = 0; t < k; ++t) {
    values[v_off + r * k + t] = x_raw[base + ki[t]];  // (the stored bits: half and bf16 exact)
    indices[i_off + r * k + t] = ki[t];
  }
}
% endif
