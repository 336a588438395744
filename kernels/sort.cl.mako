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
##
## Params: st (storage C type), ct (compute C type), descending, fp64.
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
