## out = expr(in0, in1, ...), broadcast over any strides.
##   ins: per input (storage ctype, or None for a scalar argument; compute ctype)
##   expr: a C expression of in0.. and _i (the output's linear index)
##   ndim: dims after merging; contiguous: every operand is one flat run (no index arithmetic)
##   index_t: int where every offset fits in 31 bits, else long
<%include file="_prelude.cl.mako"/>
<%
def load(ct, ptr, idx):
    return f"vload_half({idx}, {ptr})" if ct == "half" else f"{ptr}[{idx}]"

def store(ptr, idx, val):
    if out_ct == "half":
        return f"vstore_half_rte((float)({val}), {idx}, {ptr})"
    if out_bool:
        return f"{ptr}[{idx}] = (uchar)(({val}) != 0)"
    return f"{ptr}[{idx}] = ({out_ct})({val})"

tensors = [k for k, (st, ct) in enumerate(ins) if st is not None]
%>
__kernel void cg_elementwise_${name}(
    __global ${out_ct} *out, const ${index_t} out_off,
% for k, (st, ct) in enumerate(ins):
  % if st is None:
    const ${ct} s${k},
  % else:
    __global const ${st} *p${k}, const ${index_t} off${k},
  % endif
% endfor
% if not contiguous:
  % for d in range(ndim):
    const ${index_t} size${d}, const ${index_t} ostride${d},
    % for k in tensors:
    const ${index_t} stride${k}_${d},
    % endfor
  % endfor
% endif
    const ${index_t} n)
{
  const ${index_t} step = get_global_size(0);
  for (${index_t} _i = get_global_id(0); _i < n; _i += step) {
% if contiguous:
    const ${index_t} o = out_off + _i;
  % for k in tensors:
    const ${index_t} i${k} = off${k} + _i;
  % endfor
% else:
    ${index_t} rem = _i, o = out_off;
  % for k in tensors:
    ${index_t} i${k} = off${k};
  % endfor
  % for d in reversed(range(ndim)):
    {
      const ${index_t} c = rem % size${d};
      rem /= size${d};
      o += c * ostride${d};
    % for k in tensors:
      i${k} += c * stride${k}_${d};
    % endfor
    }
  % endfor
% endif
% for k, (st, ct) in enumerate(ins):
  % if st is None:
    const ${ct} in${k} = s${k};
  % else:
    const ${ct} in${k} = (${ct})${load(st, f"p{k}", f"i{k}")};
  % endif
% endfor
    ${store("out", "o", expr)};
  }
}
