## take / put / put_add through int64 element offsets into a storage.
##   ct: storage C type; raw copies move half and bf16 as their 16 bits (ushort)
##   atomic64: the device has cl_khr_int64_base_atomics (else put_add on 64-bit types runs serially)
##   logical: the storage holds bools (uchar 0/1): put_add ORs, as PyTorch's bool sum saturates
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
