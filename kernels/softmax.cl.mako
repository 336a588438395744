## softmax / log_softmax along one dim in one pass over memory.
##
## The input and the output are laid out alike as (outer, n, inner) with strides
## (n * inner, inner, 1) from their offsets (the launcher makes the input so); row r is
## (r / inner, r % inner) and holds n elements ``inner`` apart. A row is read three times
## while it sits in cache:
##   1. its max;
##   2. the sum of exp(x - max); softmax also stores exp(x - max) when the output is in the
##      compute type, so step 3 scales it instead of taking exp again;
##   3. the output: exp(x - max) / sum, or (x - max) - log(sum).
## An all -inf row gives NaN (-inf - -inf), as PyTorch's does; a NaN reaches its whole row.
##
## With ``backward``, the same two layouts compute the gradient from the output y (x's slot)
## and the incoming gradient g, in two passes: the row's sum of g (log_softmax) or of g * y
## (softmax), then g - exp(y) * sum, or y * (g - sum).
##
## Two kernels:
##   cg_softmax_<name>_group  a work-group of ls items per long contiguous row (inner is 1):
##                            the items stride through the row ls apart (adjacent items read
##                            adjacent addresses) and combine max and sum in local memory;
##   cg_softmax_<name>_item   a work-item per row, for rows ``inner`` apart (adjacent items
##                            read adjacent addresses) and short rows.
##   cg_softmax_<name>_vec    (CPU devices, float rows that are contiguous: inner is 1) a
##                            work-item per row, walking it in VW-wide vectors with no barrier:
##                            the item kernel's barrier per element and the group kernel's
##                            per step of ls elements cost PoCL a loop over the group's items
##                            each (softmax over rows of 256 floats: 13x faster).
## split (CPU devices): a barrier closes every step of a loop over a row. PoCL runs the code
## between two barriers as one loop over the group's items, which it vectorizes; a loop over
## the row inside that region would run each item's elements one by one in scalar code.
##
## Params: in_ct (input storage), ct (compute), out_ct (output storage), ls (the work-group
## size, a power of 2), log (log_softmax), backward, split, vec (the vector width of the vec
## kernel, or 0: the group and item kernels), index_t, fp64.
<%
I = index_t
name = "log_softmax" if log else "softmax"
reuse = not log and out_ct == ct
%>
<%def name="combine(var, op)">\
## var = op over the group's items (op(a, b) a C expression); every item gets it
  red[lid] = ${var};
  barrier(CLK_LOCAL_MEM_FENCE);
% for s in [ls >> k for k in range(1, ls.bit_length())]:
  if (lid < ${s}) { const ${ct} a = red[lid], b = red[lid + ${s}]; red[lid] = ${op}; }
  barrier(CLK_LOCAL_MEM_FENCE);
% endfor
  ${var} = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // red is written again by the next combine
</%def>
<%def name="split()">\
% if split:
    barrier(CLK_LOCAL_MEM_FENCE);
% endif
</%def>
<%def name="over_row(loops)">\
## caller's body for each element of the row, once per loop of ``loops`` (see passes)
% for opening in loops:
  ${opening}
    if (ok) {
${caller.body()}
    }
    ${split()}
  }
% endfor
</%def>
<%def name="passes(loops, idx, grouped)">\
## the three passes; loops: C texts each opening a loop over the row that declares j (the
## element) and ok (whether this item has one this step); idx: j's offset in the row
  // a NaN wins (b != b)
  ${ct} m = -INFINITY;
  <%self:over_row loops="${loops}">
      const ${ct} v = ${h.load(in_ct, ct, "row", idx)};
      m = (v > m || v != v) ? v : m;
  </%self:over_row>
% if grouped:
  ${combine("m", "((b > a || b != b) ? b : a)")}
% endif
  ${ct} s = 0;
  <%self:over_row loops="${loops}">
      const ${ct} e = cg_exp_${ct}(${h.load(in_ct, ct, "row", idx)} - m);
% if reuse:
      orow[${idx}] = e;
% endif
      s += e;
  </%self:over_row>
% if grouped:
  ${combine("s", "a + b")}
% endif
% if log:
  // (x - m) - log(sum), not x - (m + log(sum)): m + log(sum) would round at m's magnitude
  const ${ct} log_s = cg_log_${ct}(s);
% else:
  const ${ct} inv = (${ct})1 / s;
% endif
  <%self:over_row loops="${loops}">
% if log:
      ${h.store(out_ct, False, "orow", idx, "(" + h.load(in_ct, ct, "row", idx) + " - m) - log_s")};
% elif reuse:
      orow[${idx}] *= inv;
% else:
      ${h.store(out_ct, False, "orow", idx, f"cg_exp_{ct}({h.load(in_ct, ct, 'row', idx)} - m) * inv")};
% endif
  </%self:over_row>
</%def>
<%def name="grad_passes(loops, idx, grouped)">\
## the gradient: s = the row's sum of g (log_softmax) or of g * y (softmax), then
## out = g - exp(y) * s, or y * (g - s)
  ${ct} s = 0;
  <%self:over_row loops="${loops}">
% if log:
      s += ${h.load(in_ct, ct, "grow", idx)};
% else:
      s += ${h.load(in_ct, ct, "grow", idx)} * ${h.load(in_ct, ct, "row", idx)};
% endif
  </%self:over_row>
% if grouped:
  ${combine("s", "a + b")}
% endif
  <%self:over_row loops="${loops}">
      const ${ct} gv = ${h.load(in_ct, ct, "grow", idx)}, yv = ${h.load(in_ct, ct, "row", idx)};
% if log:
      ${h.store(out_ct, False, "orow", idx, f"gv - cg_exp_{ct}(yv) * s")};
% else:
      ${h.store(out_ct, False, "orow", idx, "yv * (gv - s)")};
% endif
  </%self:over_row>
</%def>
<%
fn = f"cg_softmax_backward_{name}" if backward else f"cg_softmax_{name}"
body = grad_passes if backward else passes
%>
<%def name="params()">\
    __global const ${in_ct} *x, const ${I} x_off,
% if backward:
    __global const ${in_ct} *g, const ${I} g_off,
% endif
    __global ${out_ct} *out, const ${I} o_off,
    const ${I} n, const ${I} inner, const ${I} rows\
</%def>
<%def name="rows_from(base)">\
  __global const ${in_ct} *row = x + x_off + ${base};
% if backward:
  __global const ${in_ct} *grow = g + g_off + ${base};
% endif
  __global ${out_ct} *orow = out + o_off + ${base};
</%def>

% if not vec:
__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void ${fn}_group(${params()})
{
  __local ${ct} red[${ls}];
  const int lid = get_local_id(0);
  const ${I} base = (${I})get_group_id(0) * n;
  ${rows_from("base")}
  // the whole steps (every item has an element: no test, so PoCL vectorizes them), then the
  // row's last, partial step (at most one); a test per item on every step left them scalar
  ${body([
      f"for ({I} c = 0; c + {ls} <= n; c += {ls}) {{ const {I} j = c + lid; const bool ok = true;",
      f"for ({I} c = n / {ls} * {ls}; c < n; c += {ls}) {{ const {I} j = c + lid; const bool ok = j < n;",
  ], "j", True)}
}

__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void ${fn}_item(${params()})
{
  const ${I} r = get_global_id(0);
  // items past the last row run the loops (every item of a group meets each barrier) idle
  const bool active = r < rows;
  const ${I} q = (active ? r : 0) / inner;
  const ${I} base = q * n * inner + ((active ? r : 0) - q * inner);
  ${rows_from("base")}
  ${body([f"for ({I} j = 0; j < n; ++j) {{ const bool ok = active;"], "j * inner", False)}
}
% endif

% if vec:
<%
VT = f"{ct}{vec}"
VTU = f"cg_{VT}_u"
lanes = [f"s{e:x}" for e in range(vec)]
%>
## VW consecutive elements from anywhere (rows start at any element): a load through a type
## aligned like its scalar is one unaligned move (vloadN is an out-of-line call on PoCL).
typedef ${VT} ${VTU} __attribute__((aligned(${4 if ct == "float" else 8})));
// cg_exp_float on a vector (PoCL's exp on a vector is a call per element), but 0 below
// ln(FLT_MIN) instead of a denormal: x86 takes a microcode assist for every denormal result or
// operand, which made a masked row (most of it -inf or -1e4) 3x slower than a plain one. A
// softmax's terms that small are below any sum's rounding.
static inline ${VT} cg_softmax_exp_v(${VT} x) {
  ${VT} xc = x < (${VT})(-87.3f) ? (${VT})(-87.3f) : x;
  xc = xc > (${VT})(89.0f) ? (${VT})(89.0f) : xc;
  const ${VT} t = xc * CG_LOG2E_F + CG_ROUND_MAGIC_F;
  const int${vec} k = as_int${vec}(t) - as_int(CG_ROUND_MAGIC_F);
  const ${VT} kf = t - CG_ROUND_MAGIC_F;
  const ${VT} r = (xc - kf * CG_LN2_HI_F) - kf * CG_LN2_LO_F;
  ${VT} p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const int${vec} k1 = k >> 1;
  const ${VT} y = (p * (r * r) + r + 1.0f) * as_${VT}((k1 + 127) << 23)
      * as_${VT}((k - k1 + 127) << 23);
  return x != x ? x : (x < (${VT})(-87.3f) ? (${VT})(0.0f) : y);
}
<%
def vload(ptr, vector):
    """The row's VW elements from j (vector) or element j."""
    return f"*(__global const {VTU} *)({ptr} + j)" if vector else f"{ptr}[j]"

def vexp(x, vector):
    return f"cg_softmax_exp_v({x})" if vector else f"cg_exp_{ct}({x})"

def hsum(v):
    return " + ".join(f"{v}.{l}" for l in lanes)
%>
__kernel void ${fn}_vec(${params()})
{
  const ${I} r = get_global_id(0);
  if (r >= rows) return;
  ${rows_from("r * n")}
  const ${I} nv = n / ${vec} * ${vec};
% if not backward:
  // a NaN wins (b != b)
  ${VT} mv = (${VT})(-INFINITY);
  for (${I} j = 0; j < nv; j += ${vec}) {
    const ${VT} v = ${vload("row", True)};
    mv = (v > mv || v != v) ? v : mv;
  }
  ${ct} m = mv.s0;
% for l in lanes[1:]:
  m = (mv.${l} > m || mv.${l} != mv.${l}) ? mv.${l} : m;
% endfor
  for (${I} j = nv; j < n; ++j) m = (row[j] > m || row[j] != row[j]) ? row[j] : m;
  ${VT} sv = 0;
  for (${I} j = 0; j < nv; j += ${vec}) {
    const ${VT} e = ${vexp(vload("row", True) + " - m", True)};
% if reuse:
    *(__global ${VTU} *)(orow + j) = e;
% endif
    sv += e;
  }
  ${ct} s = ${hsum("sv")};
  for (${I} j = nv; j < n; ++j) {
    const ${ct} e = ${vexp("row[j] - m", False)};
% if reuse:
    orow[j] = e;
% endif
    s += e;
  }
% if log:
  // (x - m) - log(sum), not x - (m + log(sum)): m + log(sum) would round at m's magnitude
  const ${ct} log_s = cg_log_${ct}(s);
  for (${I} j = 0; j < nv; j += ${vec})
    *(__global ${VTU} *)(orow + j) = (${vload("row", True)} - m) - log_s;
  for (${I} j = nv; j < n; ++j) orow[j] = (row[j] - m) - log_s;
% else:
  const ${ct} inv = (${ct})1 / s;
  for (${I} j = 0; j < nv; j += ${vec})
    *(__global ${VTU} *)(orow + j) = ${vload("orow", True) if reuse else vexp(vload("row", True) + " - m", True)} * inv;
  for (${I} j = nv; j < n; ++j) orow[j] = ${"orow[j]" if reuse else vexp("row[j] - m", False)} * inv;
% endif
% else:
  ${VT} sv = 0;
  for (${I} j = 0; j < nv; j += ${vec})
    sv += ${vload("grow", True) if log else vload("grow", True) + " * " + vload("row", True)};
  ${ct} s = ${hsum("sv")};
  for (${I} j = nv; j < n; ++j) s += ${"grow[j]" if log else "grow[j] * row[j]"};
  for (${I} j = 0; j < nv; j += ${vec}) {
    const ${VT} gv = ${vload("grow", True)}, yv = ${vload("row", True)};
    *(__global ${VTU} *)(orow + j) = ${"gv - " + vexp("yv", True) + " * s" if log else "yv * (gv - s)"};
  }
  for (${I} j = nv; j < n; ++j)
    orow[j] = ${"grow[j] - " + vexp("row[j]", False) + " * s" if log else "row[j] * (grow[j] - s)"};
% endif
}
% endif
