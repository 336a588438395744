## A group of elementwise launches over one shape as one kernel (clgrad/backend/opencl/fusion.py):
## work-item _i computes element _i of every launch in program order, each value kept in a
## register r<k> in its storage type (what a store and a load back would give), stored only
## where the group's plan says so.
##   views: storage ctype of each memory view (p<j>, off<j>; strides in the general layout);
##     those not in ``stores`` are read only (const: GPUs then load through their read-only
##     cache)
##   loads: the views read from memory (all before any store: a view written in the group is read
##     back from its register)
##   scalars: compute ctype of each Python number (s<k>)
##   steps: per launch (C expression over v<j>/r<k>/s<k> already cast to its compute type,
##     out storage ctype, out is bool, view to store into or -1)
##   layout: flat (every view one contiguous run over the shape), general (maxd dims of
##     arguments, innermost first, padded with size 1, as the elementwise kernels) or rows (the
##     same arguments, a 2-D launch: dim 0 walks the innermost dim, dim 1 the rest, whose
##     divisions are then uniform across a work-group; for long inner rows, no reduction)
##   inner: (rows) per view its inner stride where it is 1 or 0, written into the code (PoCL
##     vectorizes those loads), or None: read from stride<j>_0
##   reds: full reductions of steps' values (then one work-group walks every element), each
##     (accumulator C type, neutral, map over x, combine of a and b, out storage C type, out is
##     bool, the step whose value it reduces); reduction m's result goes to rout<m>[rout<m>_off]
// Each op rounds its result as PyTorch does, fused or not: no multiply-add contraction across
// an op's expression (GPU compilers contract whatever they see by default, so a fused chain
// would round differently from the same ops run one by one).
#pragma OPENCL FP_CONTRACT OFF
## torch.special's functions that the steps' expressions call (none: nothing)
<%include file="_special.cl.mako" args="source=' '.join(step[0] for step in steps)"/>\
<% I = index_t %>
<%def name="outer_dims(first)">
## dims past the merged ones arrive as size 1: no test (h.split divides)
  % for d in range(first, maxd):
    {
      ${h.split(I, d)}
    % for j in range(len(views)):
      i${j} += c * stride${j}_${d};
    % endfor
    }
  % endfor
</%def>
__kernel void ${name}(
% for j, st in enumerate(views):
    __global ${"" if j in stores else "const "}${st} *p${j}, const ${I} off${j},
% endfor
% for k, ct in enumerate(scalars):
    const ${ct} s${k},
% endfor
% for m, red in enumerate(reds):
    __global ${red[4]} *rout${m}, const ${I} rout${m}_off,
% endfor
% if layout != "flat":
  % for d in range(maxd):
    const ${I} size${d}, const uint magic${d}, const uint shift${d},
    % for j in range(len(views)):
    const ${I} stride${j}_${d},
    % endfor
  % endfor
% endif
    const ${I} n)
{
% if reds:
  % for m, red in enumerate(reds):
  __local ${red[0]} cg_partial${m}[${local_size}];
  ${red[0]} cg_acc${m} = ${red[1]};
  % endfor
  for (${I} _i = get_local_id(0); _i < n; _i += ${local_size}) {
% elif layout == "rows":
  // The outer dims first, before any branch: they depend on get_global_id(1) alone, so PoCL
  // hoists their divisions out of the work-group's loop (as the elementwise rows kernels).
  ${I} rem = get_global_id(1);
  % for j in range(len(views)):
  ${I} i${j} = off${j};
  % endfor
  ${outer_dims(1)}
  const ${I} inner = get_global_id(0);
  if ((${I})(get_group_id(0) + 1) * (${I})get_local_size(0) > size0 && inner >= size0) return;
  {
    const ${I} _i = (${I})get_global_id(1) * size0 + inner;
  % for j in range(len(views)):
    % if inner[j] is None:
    i${j} += inner * stride${j}_0;
    % elif inner[j] == 1:
    i${j} += inner;
    % endif
  % endfor
% elif grid_stride:
  for (${I} _i = get_global_id(0); _i < n; _i += get_global_size(0)) {
% else:
  const ${I} _i = get_global_id(0);
  if (${h.in_range("n", I)}) {  // (whole work-groups skip the item test: h.in_range)
% endif
% if layout == "flat":
  % for j in range(len(views)):
    const ${I} i${j} = off${j} + _i;
  % endfor
% elif layout == "general":
    ${I} rem = _i;
  % for j in range(len(views)):
    ${I} i${j} = off${j};
  % endfor
    ${outer_dims(0)}
% endif
% for j in loads:
    const ${views[j]} v${j} = p${j}[i${j}];
% endfor
% for k, (expr, st, is_bool, store) in enumerate(steps):
  % if is_bool:
    const uchar r${k} = (uchar)((${expr}) != 0);
  % else:
    const ${st} r${k} = ${h.narrow(st, expr)};
  % endif
  % if store >= 0:
    p${store}[i${store}] = r${k};
  % endif
% endfor
% for m, red in enumerate(reds):
    {
      const ${red[0]} x = (${red[0]})r${red[6]};
      const ${red[0]} a = cg_acc${m}, b = ${red[2]};
      cg_acc${m} = ${red[3]};
    }
% endfor
  }
% if reds:
  const int lid = get_local_id(0);
  % for m, red in enumerate(reds):
  cg_partial${m}[lid] = cg_acc${m};
  % endfor
  // (global too: every work-item's loads of a buffer a result then overwrites come first)
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (int width = ${local_size // 2}; width > 0; width >>= 1) {
    if (lid < width) {
  % for m, red in enumerate(reds):
      {
        const ${red[0]} a = cg_partial${m}[lid], b = cg_partial${m}[lid + width];
        cg_partial${m}[lid] = ${red[3]};
      }
  % endfor
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
  % for m, red in enumerate(reds):
    ${h.store(red[4], red[5], f"rout{m}", f"rout{m}_off", f"cg_partial{m}[0]")};
  % endfor
  }
% endif
}
