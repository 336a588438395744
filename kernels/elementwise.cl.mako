## out = expr(in0, in1, ...), broadcast over any strides.
##   ins: per input (storage ctype, or None for a scalar argument; compute ctype)
##   expr: a C expression of in0.. and _i (the output's linear index)
##   ndim: dims after merging (the last is the innermost)
##   layout: "flat"    every operand is one contiguous run: no index arithmetic;
##           "rows"    2-D launch, dim 0 walks the innermost dim, dim 1 the rest: the
##                     division by sizes is uniform across a work-group (hoisted by PoCL);
##           "general" 1-D launch, each work-item divides its index by every size
##   index_t: int where every offset fits in 31 bits, else long
##   grid_stride: (flat, general) loop over n with as many work-items as fill a GPU; on CPU
##     devices one work-item per element (a loop in the body stops PoCL vectorizing)
<%include file="_prelude.cl.mako"/>
<%
tensors = [k for k, (st, ct) in enumerate(ins) if st is not None]
I = index_t
outer_dims = range(ndim - 1) if layout == "rows" else range(ndim)
%>
__kernel void cg_elementwise_${name}(
    __global ${out_ct} *out, const ${I} out_off,
% for k, (st, ct) in enumerate(ins):
  % if st is None:
    const ${ct} s${k},
  % else:
    __global const ${st} *p${k}, const ${I} off${k},
  % endif
% endfor
% if layout != "flat":
  % for d in range(ndim):
    const ${I} size${d}, const ${I} ostride${d},
    % for k in tensors:
    const ${I} stride${k}_${d},
    % endfor
  % endfor
% endif
    const ${I} n)
{
% if layout == "rows":
  const ${I} inner = get_global_id(0);
  // (as below: a group-uniform test first, so whole groups vectorize)
  if ((${I})(get_group_id(0) + 1) * (${I})get_local_size(0) > size${ndim - 1}
      && inner >= size${ndim - 1}) return;
  ${I} rem = get_global_id(1);
  const ${I} _i = rem * size${ndim - 1} + inner;
  ${I} o = out_off + inner * ostride${ndim - 1};
  % for k in tensors:
  ${I} i${k} = off${k} + inner * stride${k}_${ndim - 1};
  % endfor
  {
% elif grid_stride:
  for (${I} _i = get_global_id(0); _i < n; _i += get_global_size(0)) {
% else:
  const ${I} _i = get_global_id(0);
  // Whole work-groups skip the bounds test: a branch that is the same for the whole group
  // lets PoCL vectorize the group's loop without masked stores.
  const bool whole = (${I})(get_group_id(0) + 1) * (${I})get_local_size(0) <= n;
  if (whole || _i < n) {
% endif
% if layout == "flat":
    const ${I} o = out_off + _i;
  % for k in tensors:
    const ${I} i${k} = off${k} + _i;
  % endfor
% else:
  % if layout == "general":
    ${I} rem = _i, o = out_off;
    % for k in tensors:
    ${I} i${k} = off${k};
    % endfor
  % endif
  % for d in reversed(outer_dims):
    {
      const ${I} c = rem % size${d};
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
    const ${ct} in${k} = ${h.load(st, ct, f"p{k}", f"i{k}")};
  % endif
% endfor
    ${h.store(out_ct, out_bool, "out", "o", expr)};
  }
}
