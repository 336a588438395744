## out = expr(in0, in1, ...), broadcast over any strides, for each (name, expr) of ``ops``: ops
## that share operand types and result type. Each op has three layouts (below). PoCL's cost is
## mostly per program, and it generates each kernel's code only when that kernel first runs, so a
## CPU device builds one program for every op of a compute type and result dtype (the backend's
## ``bundle``), whatever the operands' storage types; other drivers build one op per program:
##   cg_elementwise_<name>_flat     every operand is one contiguous run: no index arithmetic;
##   cg_elementwise_<name>_rows     2-D launch, dim 0 walks the innermost dim, dim 1 the rest:
##                                  the divisions are uniform across a work-group (hoisted by
##                                  PoCL); for long inner rows;
##   cg_elementwise_<name>_general  1-D launch, each work-item divides its index by every size.
## The strided layouts take ``maxd`` dims of arguments, innermost first; dims past those merging
## left arrive as size 1 (the launch pads them), so one kernel serves every dim count. Each size comes with its ``launch.divisor`` (magic, shift).
##   ops: (name, C expression of in0.. and _i, the output's linear index), per op
##   ins: per input (storage ctype, or None for a scalar argument; compute ctype)
##   index_t: int where every offset fits in 31 bits, else long
##   grid_stride: (flat, general) loop over n with as many work-items as fill a GPU; on CPU
##     devices one work-item per element (a loop in the body stops PoCL vectorizing)
// Each op rounds its result as PyTorch does, fused or not: no multiply-add contraction across
// an op's expression (GPU compilers contract whatever they see by default, so a fused chain
// would round differently from the same ops run one by one).
#pragma OPENCL FP_CONTRACT OFF
## torch.special's functions that the ops' expressions call (none: nothing)
<%include file="_special.cl.mako" args="source=' '.join(expr for _, expr in ops)"/>\
<%
tensors = [k for k, (st, ct) in enumerate(ins) if st is not None]
I = index_t
%>
<%def name="params(layout)">
    __global ${out_ct} *out, const ${I} out_off,
% for k, (st, ct) in enumerate(ins):
  % if st is None:
    const ${ct} s${k},
  % else:
    __global const ${st} *p${k}, const ${I} off${k},
  % endif
% endfor
% if layout != "flat":
  % for d in range(maxd):
    const ${I} size${d}, const uint magic${d}, const uint shift${d}, const ${I} ostride${d},
    % for k in tensors:
    const ${I} stride${k}_${d},
    % endfor
  % endfor
% endif
    const ${I} n
</%def>
<%def name="outer_dims(first)">
## dims past the merged ones arrive as size 1 (the launch pads them): no test needed
  % for d in range(first, maxd):
    {
      ${h.split(I, d)}
      o += c * ostride${d};
    % for k in tensors:
      i${k} += c * stride${k}_${d};
    % endfor
    }
  % endfor
</%def>
<%def name="load_apply_store(expr)">
% for k, (st, ct) in enumerate(ins):
  % if st is None:
    const ${ct} in${k} = s${k};
  % else:
    const ${ct} in${k} = ${h.load(st, ct, f"p{k}", f"i{k}")};
  % endif
% endfor
    ${h.store(out_ct, out_bool, "out", "o", expr)};
</%def>
<%def name="items()">
% if grid_stride:
  for (${I} _i = get_global_id(0); _i < n; _i += get_global_size(0)) {
% else:
  const ${I} _i = get_global_id(0);
  if (${h.in_range("n", I)}) {  // (whole work-groups skip the item test: h.in_range)
% endif
</%def>

% for name, expr in ops:
__kernel void cg_elementwise_${name}_flat(${params("flat")})
{
  ${items()}
    const ${I} o = out_off + _i;
% for k in tensors:
    const ${I} i${k} = off${k} + _i;
% endfor
    ${load_apply_store(expr)}
  }
}

__kernel void cg_elementwise_${name}_general(${params("general")})
{
  ${items()}
    ${I} rem = _i, o = out_off;
% for k in tensors:
    ${I} i${k} = off${k};
% endfor
    ${outer_dims(0)}
    ${load_apply_store(expr)}
  }
}

__kernel void cg_elementwise_${name}_rows(${params("rows")})
{
  // The outer dims first, before any branch: they depend on get_global_id(1) alone, so PoCL
  // hoists their divisions out of the work-group's loop (under a branch it divides per
  // element, and a row broadcast ran at a third of a contiguous add).
  ${I} rem = get_global_id(1), o = out_off;
% for k in tensors:
  ${I} i${k} = off${k};
% endfor
  ${outer_dims(1)}
  const ${I} inner = get_global_id(0);
  // (as in items(): a group-uniform test first, so whole groups vectorize)
  if ((${I})(get_group_id(0) + 1) * (${I})get_local_size(0) > size0 && inner >= size0) return;
  const ${I} _i = (${I})get_global_id(1) * size0 + inner;
  o += inner * ostride0;
% for k in tensors:
  i${k} += inner * stride${k}_0;
% endfor
  {
    ${load_apply_store(expr)}
  }
}
% endfor
