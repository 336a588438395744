## take / put / put_add through int64 element offsets into a storage, and gather_rows /
## add_rows along one dim of a 3-D view (outer O, indexed R, inner I) by a 1-D int64 index.
##   ct: storage C type; raw copies move half and bf16 as their 16 bits (ushort)
##   atomic64: the device has cl_khr_int64_base_atomics (else put_add on 64-bit types runs serially)
##   logical: the storage holds bools (uchar 0/1): put_add ORs, as PyTorch's bool sum saturates
##   gpu: add_rows' kernels for a GPU (one item per column, atomic runs) or for a CPU device
## Every offset is clamped to [0, limit): indices are checked on the host first, and the clamp
## keeps a kernel inside its buffer whatever happens.
% if atomic64 and ct in ("double", "long"):
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
% endif
<%
raw = h.raw_type(ct)
serial = ct in ("double", "long") and not atomic64
%>
static inline long cg_clamp_offset(long o, long limit) { return o < 0 ? 0 : (o >= limit ? limit - 1 : o); }

__kernel void cg_index_take(__global ${raw} *out, const long out_off, __global const ${raw} *src,
                            const long limit, __global const long *offsets, const long off_off,
                            const long n)
{
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    out[out_off + i] = src[cg_clamp_offset(offsets[off_off + i], limit)];
}

// out[o, j, i] = src[o, index[j], i] (out contiguous (O, J, I), src through its strides): one
// row per work-item of dim 1, dim 0 along it: along i (rows (o, j)), i's stride 1 written in
// where it is (``unit``: PoCL loads vectors then), or along j where rows are short (rows
// (o, i)). Whole work-groups skip the item test (h.in_range: PoCL vectorizes them).
% for along, unit in (("inner", True), ("inner", False), ("index", False)):
__kernel void cg_index_gather_rows_${along}${"_unit" if unit else ""}(
    __global ${raw} *out, const long out_off, __global const ${raw} *src, const long src_off,
    const long limit, const long so, const long sr, const long si,
    __global const long *index, const long index_off, const long J, const long I, const long n0)
{
  const long row = get_group_id(1);
  % if along == "inner":
  const long o = row / J, j = row - o * J;
  const long base = src_off + o * so + index[index_off + j] * sr;
  % else:
  const long o = row / I, i = row - o * I;
  const long base = src_off + o * so + i * si;
  % endif
  % if unit:
  // (the whole row clamped into the storage at once)
  const long start = base < 0 ? 0 : (base > limit - I ? limit - I : base);
  % endif
  if (${h.in_range("n0", "long")}) {
    const long a = get_global_id(0);
  % if unit:
    out[out_off + row * I + a] = src[start + a];
  % elif along == "inner":
    out[out_off + row * I + a] = src[cg_clamp_offset(base + a * si, limit)];
  % else:
    out[out_off + (o * J + a) * I + i] = src[cg_clamp_offset(base + index[index_off + a] * sr, limit)];
  % endif
  }
}
% endfor

__kernel void cg_index_put(__global ${raw} *dst, const long limit, __global const long *offsets,
                           const long off_off, __global const ${raw} *values, const long val_off,
                           const long n)
{
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    dst[cg_clamp_offset(offsets[off_off + i], limit)] = values[val_off + i];
}

% if serial:
## no 64-bit atomics: put_add runs in one work-item, in order
% elif ct in ("float", "double", "int", "long"):
<%
    word = {"float": "uint", "double": "ulong", "int": "uint", "long": "ulong"}[ct]
    cas = "atomic_cmpxchg" if word == "uint" else "atom_cmpxchg"
    as_word = f"as_{word}"
    as_val = f"as_{ct}"
%>
static inline void cg_atomic_add(__global ${ct} *p, const ${ct} v)
{
  volatile __global ${word} *w = (volatile __global ${word} *)p;
  ${word} old = *w, assumed;
  do {
    assumed = old;
    old = ${cas}(w, assumed, ${as_word}(${as_val}(assumed) + v));
  } while (old != assumed);
}
% else:
## 8- and 16-bit types: compare-and-swap the aligned 32-bit word that holds the element
<%
    bits = 8 * h.SIZES[ct]
%>
static inline void cg_atomic_add(__global ${ct} *p, const ${"float" if ct in h.FLOAT16_STORAGE else ct} v)
{
  const ulong addr = (ulong)p;
  volatile __global uint *w = (volatile __global uint *)(addr & ~(ulong)3);
  const uint shift = (uint)(addr & 3) * 8, mask = ((1u << ${bits}) - 1u) << shift;
  uint old = *w, assumed;
  do {
    assumed = old;
    ${"ushort" if bits == 16 else "uchar"} bits = (assumed & mask) >> shift;
  % if ct == "half":
    float sum = vload_half(0, (const __private half *)&bits) + v;
    vstore_half_rte(sum, 0, (__private half *)&bits);
  % elif ct == "bf16":
    bits = cg_narrow_bf16(cg_widen_bf16(bits) + v);
  % elif logical:
    bits = (uchar)(bits | (v != 0));
  % else:
    bits = (${"ushort" if bits == 16 else "uchar"})(as_${ct}(bits) + v);
  % endif
    old = atomic_cmpxchg(w, assumed, (assumed & ~mask) | ((uint)bits << shift));
  } while (old != assumed);
}
% endif

__kernel void cg_index_put_add(__global ${ct} *dst, const long limit,
                               __global const long *offsets, const long off_off,
                               __global const ${ct} *values, const long val_off, const long n)
{
% if serial:
  if (get_global_id(0) != 0) return;
  for (long i = 0; i < n; ++i)
    dst[cg_clamp_offset(offsets[off_off + i], limit)] += values[val_off + i];
% else:
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    __global ${ct} *p = dst + cg_clamp_offset(offsets[off_off + i], limit);
  % if ct == "half":
    cg_atomic_add(p, vload_half(val_off + i, values));
  % elif ct == "bf16":
    cg_atomic_add(p, cg_widen_bf16(values[val_off + i]));
  % else:
    cg_atomic_add(p, values[val_off + i]);
  % endif
  }
% endif
}

<%def name="add_one(p, v)">\
## *p += v, v the source element's expression in storage form
  % if ct == "half":
vstore_half(vload_half(0, (__global const half *)${p}) + vload_half(0, &${v}), 0, (__global half *)${p})\
  % elif ct == "bf16":
*${p} = cg_narrow_bf16(cg_widen_bf16(*${p}) + cg_widen_bf16(${v}))\
  % elif logical:
*${p} = (uchar)(*${p} | (${v} != 0))\
  % else:
*${p} += ${v}\
  % endif
</%def>
<%def name="add_atomic(p, v)">\
  % if ct == "half":
cg_atomic_add(${p}, vload_half(0, &${v}))\
  % elif ct == "bf16":
cg_atomic_add(${p}, cg_widen_bf16(${v}))\
  % else:
cg_atomic_add(${p}, ${v})\
  % endif
</%def>
// out[o, index[j], i] += src[o, j, i] for j in [j0, j0 + count) (both through their strides):
// work-item (i, o, k) adds the k-th of ``chunks`` runs of j, in order: consecutive items read
// consecutive elements of a row (a GPU's coalesced loads). One run (chunks 1) owns its (o, i)
// column alone: plain adds in index order; more runs add atomically (a GPU's work-items are
// many more than O * I). The inner strides are written in where they are 1 (out, src) or 0
// (src: an expanded gradient), as ``_<out>_<src>``.
## (a program holds the add_rows kernels of its device's kind only: the front end parses
## every kernel of a program, launched or not)
% for out_step, src_step in ((("1", "1"), ("1", "0"), ("1", "s"), ("s", "1"), ("s", "0"), ("s", "s")) if gpu else ()):
__kernel void cg_index_add_rows_${out_step}_${src_step}(
    __global ${ct} *restrict out, const long out_off, const long limit, const long so,
    const long sr, const long si, __global const long *restrict index, const long index_off,
    __global const ${ct} *restrict src,
    const long src_off, const long sso, const long ssj, const long ssi, const long I,
    const long j0, const long count, const long chunks)
{
  const long o = get_group_id(1) / chunks, k = get_group_id(1) - o * chunks;
  const long per = (count + chunks - 1) / chunks;
  const long first = j0 + k * per, last = min(j0 + count, first + per);
  const long i = get_global_id(0);
  const int inside = ${h.in_range("I", "long")};
  for (long j = first; j < last; ++j) {
    const long row = out_off + o * so + index[index_off + j] * sr;
    if (inside) {
  % if out_step == "1":
      // (the whole row clamped into the storage at once)
      __global ${ct} *p = out + (row < 0 ? 0 : (row > limit - I ? limit - I : row)) + i;
  % else:
      __global ${ct} *p = out + cg_clamp_offset(row + i * si, limit);
  % endif
      const long from = src_off + o * sso + j * ssj${" + i" if src_step == "1" else "" if src_step == "0" else " + i * ssi"};
  % if serial:
      ${add_one("p", "src[from]")};
  % else:
      if (chunks == 1)
        ${add_one("p", "src[from]")};
      else
        ${add_atomic("p", "src[from]")};
  % endif
    }
  }
}
% endfor

// add_rows on a CPU device: work-item (o, c) adds the columns [c * W, c * W + W) of every row
// j in [j0, j0 + count), in order, alone (no atomics): its loop over the columns is a plain
// loop LLVM vectorizes, over contiguous runs of both rows (one item per column read each
// row's elements 32 bytes at a time, from as many streams as columns: 9 ms against 1.6 ms for
// 16384 rows of 384 floats into 65).
% for out_step, src_step in ((("1", "1"), ("1", "0"), ("s", "s")) if not gpu else ()):
__kernel void cg_index_add_rows_cpu_${out_step}_${src_step}(
    __global ${ct} *restrict out, const long out_off, const long limit, const long so,
    const long sr, const long si, __global const long *restrict index, const long index_off,
    __global const ${ct} *restrict src, const long src_off, const long sso, const long ssj,
    const long ssi, const long I, const long j0, const long count, const long W,
    const long n_chunks, const long O)
{
  const long o = get_global_id(0) / n_chunks, c0 = (get_global_id(0) - o * n_chunks) * W;
  if (o >= O) return;
  const long c1 = min(I, c0 + W);
  for (long j = j0; j < j0 + count; ++j) {
    const long row = out_off + o * so + index[index_off + j] * sr;
    const long from = src_off + o * sso + j * ssj;
  % if out_step == "1":
    // (the whole row clamped into the storage at once)
    __global ${ct} *restrict p = out + (row < 0 ? 0 : (row > limit - I ? limit - I : row));
  % endif
    for (long c = c0; c < c1; ++c) {
  % if out_step == "1":
      ${add_one("(p + c)", "src[from" + (" + c" if src_step == "1" else "") + "]")};
  % else:
      ${add_one("(out + cg_clamp_offset(row + c * si, limit))", "src[from + c * ssi]")};
  % endif
    }
  }
}
% endfor
