## torch.gather's values in one pass: out[c] = src[c with its coordinate along dim d replaced by
## index[c]], for each coordinate c of index's shape (out contiguous, src and index strided), no
## int64 offset per element built first.
##
## A work-item per element (grid-stride): its coordinates from the sizes (size_k), src's offset
## from src's strides (ss_k) but along d, where index's value (at index's strides is_k) steps
## ss_d. The index values were checked on the host; the offset is clamped into src's storage
## anyway, so no value can take a read outside it.
##
## Params: ct (storage C type; half and bf16 move as their 16 bits), nd (dims), d (the dim).
<% raw = h.raw_type(ct) %>
__kernel void cg_gather_dim(
    __global ${raw} *out, const long out_off, __global const ${raw} *src, const long src_off,
    const long limit, __global const long *index, const long index_off,
% for k in range(nd):
    const long size${k}, const long ss${k}, const long is${k},
% endfor
    const long n)
{
  for (long e = get_global_id(0); e < n; e += get_global_size(0)) {
    long rem = e, so = src_off, io = index_off;
% for k in reversed(range(nd)):
    {
      const long c = rem % size${k};
      rem /= size${k};
      io += c * is${k};
  % if k != d:
      so += c * ss${k};
  % endif
    }
% endfor
    so += index[io] * ss${d};
    out[out_off + e] = src[so < 0 ? 0 : (so >= limit ? limit - 1 : so)];
  }
}
