## layer_norm and batch_norm: the statistics, the normalized output and the gradient, a
## work-group per normalized group in one kernel each way (instead of ~20 small kernels); CPU
## devices take the _item kernels at the end (a work-item per group).
##
## The input is laid out (A, C, B), contiguous from its offset; each c in C is normalized over
## its A * B elements: element e = (a, b) of group c is at (a * C + c) * B + b. layer_norm is
## (1, rows, n): a group per row. batch_norm is (N, C, spatial): a group per channel.
##
##   cg_norm_forward   y = (x - mean) * rstd [* w] [+ bias] with the mean and biased variance
##                     of the group (two passes: the deviations, not E[x^2] - E[x]^2), and
##                     mean[c], var[c] (running statistics) and rstd[c] (the gradient);
##   cg_norm_backward  dx = rstd * (h - mean(h) - xhat * mean(h * xhat)) for h = g [* w] and
##                     xhat = (x - mean) * rstd; per-group weights also get dw[c] = the sum
##                     of g * xhat and db[c] = the sum of g.
##
## Whether there is a weight (has_w) and a bias (has_b), and whether they hold a value per
## group (per_c: batch_norm's channels) or per position b in the group (layer_norm's normalized
## shape, where A is 1), are arguments, uniform over the launch: one program per dtype serves
## every layer (an absent vector's buffer is any buffer, never touched). split (CPU devices): a
## barrier closes every step of a loop over the group, as in softmax.cl.mako, so that PoCL
## vectorizes the code between barriers across the work-group's items.
##
## Params: st (x's, y's and the weights' storage type), ct (compute type), ls (work-group size,
## a power of 2), split, index_t, fp64.
<%
I = index_t
%>
<%def name="combine(var)">\
## var = the sum over the group's items; every item gets it
  red[lid] = ${var};
  barrier(CLK_LOCAL_MEM_FENCE);
% for s in [ls >> k for k in range(1, ls.bit_length())]:
  if (lid < ${s}) red[lid] += red[lid + ${s}];
  barrier(CLK_LOCAL_MEM_FENCE);
% endfor
  ${var} = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // red is written again by the next combine
</%def>
<%def name="each()">\
## opens a loop over the group's elements that declares a, b, the offset at and ok
  for (${I} e0 = 0; e0 < n; e0 += ${ls}) {
    const ${I} e = e0 + lid;
    const bool ok = e < n;
    const ${I} a = ok ? e / B : 0, b = ok ? e - a * B : 0;
    const ${I} at = (a * C + c) * B + b;
</%def>
<%def name="done()">\
% if split:
    barrier(CLK_LOCAL_MEM_FENCE);
% endif
  }
</%def>
<%def name="sizes()">\
    const ${I} A, const ${I} C, const ${I} B, const int has_w, const int has_b, const int per_c\
</%def>
<%def name="at_position(ptr, off)">\
## the element of a weight or bias vector that applies at b in group c
${h.load(st, ct, ptr, f"{off} + (per_c ? c : b)")}\
</%def>

__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void cg_norm_forward(
    __global const ${st} *restrict x, const ${I} x_off,
    __global ${st} *restrict y, const ${I} y_off,
    __global const ${st} *restrict w, const ${I} w_off,
    __global const ${st} *restrict bias, const ${I} b_off,
    __global ${ct} *restrict mean_out, const ${I} mean_off,
    __global ${ct} *restrict var_out, const ${I} var_off,
    __global ${ct} *restrict rstd_out, const ${I} rstd_off, ${sizes()}, const ${ct} eps)
{
  __local ${ct} red[${ls}];
  const int lid = get_local_id(0);
  const ${I} c = get_group_id(0), n = A * B;
  ${ct} s = 0;
  ${each()}
    if (ok) s += ${h.load(st, ct, "x", "x_off + at")};
  ${done()}
  ${combine("s")}
  const ${ct} mean = s / (${ct})n;
  ${ct} q = 0;
  ${each()}
    if (ok) { const ${ct} d = ${h.load(st, ct, "x", "x_off + at")} - mean; q += d * d; }
  ${done()}
  ${combine("q")}
  const ${ct} var = q / (${ct})n, rstd = cg_rsqrt_${ct}(var + eps);
  ${each()}
    if (ok) {
      ${ct} v = (${h.load(st, ct, "x", "x_off + at")} - mean) * rstd;
      if (has_w) v *= ${at_position("w", "w_off")};
      if (has_b) v += ${at_position("bias", "b_off")};
      ${h.store(st, False, "y", "y_off + at", "v")};
    }
  ${done()}
  if (lid == 0) {
    mean_out[mean_off + c] = mean;
    var_out[var_off + c] = var;
    rstd_out[rstd_off + c] = rstd;
  }
}

__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void cg_norm_backward(
    __global const ${st} *restrict x, const ${I} x_off,
    __global const ${st} *restrict g, const ${I} g_off,
    __global ${st} *restrict dx, const ${I} dx_off,
    __global const ${st} *restrict w, const ${I} w_off,
    __global ${st} *restrict dw, const ${I} dw_off,
    __global ${st} *restrict db, const ${I} db_off,
    __global const ${ct} *restrict mean_in, const ${I} mean_off,
    __global const ${ct} *restrict rstd_in, const ${I} rstd_off, ${sizes()})
{
  __local ${ct} red[${ls}];
  const int lid = get_local_id(0);
  const ${I} c = get_group_id(0), n = A * B;
  const ${ct} mean = mean_in[mean_off + c], rstd = rstd_in[rstd_off + c];
  // a weight per group scales the sums once, after them (unscaled, they are dw[c] and db[c])
  const bool per_position = has_w && !per_c;
  const ${ct} wc = has_w && per_c ? ${h.load(st, ct, "w", "w_off + c")} : (${ct})1;
  ${ct} sh = 0, shx = 0;  // the sums of h and h * xhat
  ${each()}
    if (ok) {
      const ${ct} xhat = (${h.load(st, ct, "x", "x_off + at")} - mean) * rstd;
      ${ct} hv = ${h.load(st, ct, "g", "g_off + at")};
      if (per_position) hv *= ${h.load(st, ct, "w", "w_off + b")};
      sh += hv;
      shx += hv * xhat;
    }
  ${done()}
  ${combine("sh")}
  ${combine("shx")}
  if (lid == 0 && per_c) {
    if (has_b) ${h.store(st, False, "db", "db_off + c", "sh")};
    if (has_w) ${h.store(st, False, "dw", "dw_off + c", "shx")};
  }
  const ${ct} mean_h = sh * wc / (${ct})n, mean_hx = shx * wc / (${ct})n;
  ${each()}
    if (ok) {
      const ${ct} xhat = (${h.load(st, ct, "x", "x_off + at")} - mean) * rstd;
      ${ct} hv = ${h.load(st, ct, "g", "g_off + at")} * wc;
      if (per_position) hv *= ${h.load(st, ct, "w", "w_off + b")};
      ${h.store(st, False, "dx", "dx_off + at", "rstd * (hv - mean_h - xhat * mean_hx)")};
    }
  ${done()}
}

## CPU devices: a work-item per group (cg_norm_forward_item, cg_norm_backward_item), the same
## arguments and results as the kernels above. A group is A runs of B contiguous elements; the
## item walks each run in VW-wide vectors, summing into vector accumulators (then added up in a
## tree), and the rest one by one. A work-group per group spends its time between barriers on
## PoCL, with element addresses it cannot tell apart from gathers (a + b split by B): batch norm
## of (128, 32, 14, 14) ran 3x slower that way, (64, 16, 8, 8) 2x.
<%
VW = 4 if ct == "double" else 8
VT = h.vtype(ct, VW)
def hsum(v):
    # the lanes of a VW-wide vector added in a tree
    halves = {8: ("lo", "hi"), 4: ("lo", "hi"), 2: ("x", "y")}
    out, n = v, VW
    while n > 1:
        a, b = halves[n]
        out = f"(({out}).{a} + ({out}).{b})"
        n //= 2
    return out

class Lanes:
    """What a walk's body needs to handle ``width`` elements at once (1: one at a time): T,
    their type; load and store at an offset; splat, a per-group value in T; sfx, the suffix
    of the walk's accumulators for this width ("v" for vectors)."""
    def __init__(self, width):
        self.width, self.sfx = width, "v" if width > 1 else ""
        self.T = VT if width > 1 else ct
    def load(self, ptr, idx):
        if self.width == 1:
            return h.load(st, ct, ptr, idx)
        return h.loadv(st, ct, self.width, ptr, idx)
    def store(self, ptr, idx, val):
        if self.width == 1:
            return h.store(st, False, ptr, idx, val)
        return h.storev(st, False, ct, self.width, ptr, idx, val)
    def splat(self, v):
        return v if self.width == 1 else f"({VT}){v}"
%>
<%def name="runs(body)">\
## for each run of the group: body(Lanes(VW)) at row + b, b a multiple of VW, then
## body(Lanes(1)) for its rest
  for (${I} a = 0; a < A; ++a) {
    const ${I} row = (a * C + c) * B;
    ${I} b = 0;
    for (; b + ${VW} <= B; b += ${VW}) {
      ${body(Lanes(VW))}
    }
    for (; b < B; ++b) {
      ${body(Lanes(1))}
    }
  }
</%def>

__kernel void cg_norm_forward_item(
    __global const ${st} *restrict x, const ${I} x_off,
    __global ${st} *restrict y, const ${I} y_off,
    __global const ${st} *restrict w, const ${I} w_off,
    __global const ${st} *restrict bias, const ${I} b_off,
    __global ${ct} *restrict mean_out, const ${I} mean_off,
    __global ${ct} *restrict var_out, const ${I} var_off,
    __global ${ct} *restrict rstd_out, const ${I} rstd_off, ${sizes()}, const ${ct} eps)
{
  if (get_global_id(0) >= (size_t)C) return;
  const ${I} c = get_global_id(0), n = A * B;
  ${VT} sv = (${VT})0;
  ${ct} s = 0;
  ${runs(lambda L: f"s{L.sfx} += {L.load('x', 'x_off + row + b')};")}
  const ${ct} mean = (s + ${hsum("sv")}) / (${ct})n;
  ${VT} qv = (${VT})0;
  ${ct} q = 0;
  ${runs(lambda L: f"const {L.T} d = {L.load('x', 'x_off + row + b')} - mean; q{L.sfx} += d * d;")}
  const ${ct} var = (q + ${hsum("qv")}) / (${ct})n, rstd = cg_rsqrt_${ct}(var + eps);
  // a weight and a bias per group are the same for every element: read once
  const ${ct} wc = has_w && per_c ? ${h.load(st, ct, "w", "w_off + c")} : (${ct})1;
  const ${ct} bc = has_b && per_c ? ${h.load(st, ct, "bias", "b_off + c")} : (${ct})0;
  const bool per_position = !per_c;
  ${runs(lambda L:
      f"{L.T} v = ({L.load('x', 'x_off + row + b')} - mean) * rstd;\n"
      f"      if (has_w) v *= per_position ? {L.load('w', 'w_off + b')} : {L.splat('wc')};\n"
      f"      if (has_b) v += per_position ? {L.load('bias', 'b_off + b')} : {L.splat('bc')};\n"
      f"      {L.store('y', 'y_off + row + b', 'v')};")}
  mean_out[mean_off + c] = mean;
  var_out[var_off + c] = var;
  rstd_out[rstd_off + c] = rstd;
}

__kernel void cg_norm_backward_item(
    __global const ${st} *restrict x, const ${I} x_off,
    __global const ${st} *restrict g, const ${I} g_off,
    __global ${st} *restrict dx, const ${I} dx_off,
    __global const ${st} *restrict w, const ${I} w_off,
    __global ${st} *restrict dw, const ${I} dw_off,
    __global ${st} *restrict db, const ${I} db_off,
    __global const ${ct} *restrict mean_in, const ${I} mean_off,
    __global const ${ct} *restrict rstd_in, const ${I} rstd_off, ${sizes()})
{
  if (get_global_id(0) >= (size_t)C) return;
  const ${I} c = get_global_id(0), n = A * B;
  const ${ct} mean = mean_in[mean_off + c], rstd = rstd_in[rstd_off + c];
  // a weight per group scales the sums once, after them (unscaled, they are dw[c] and db[c])
  const bool per_position = has_w && !per_c;
  const ${ct} wc = has_w && per_c ? ${h.load(st, ct, "w", "w_off + c")} : (${ct})1;
  ${VT} shv = (${VT})0, shxv = (${VT})0;
  ${ct} sh = 0, shx = 0;  // the sums of h and h * xhat
  ${runs(lambda L:
      f"const {L.T} xhat = ({L.load('x', 'x_off + row + b')} - mean) * rstd;\n"
      f"      {L.T} hv = {L.load('g', 'g_off + row + b')};\n"
      f"      if (per_position) hv *= {L.load('w', 'w_off + b')};\n"
      f"      sh{L.sfx} += hv;\n"
      f"      shx{L.sfx} += hv * xhat;")}
  sh += ${hsum("shv")};
  shx += ${hsum("shxv")};
  if (per_c) {
    if (has_b) ${h.store(st, False, "db", "db_off + c", "sh")};
    if (has_w) ${h.store(st, False, "dw", "dw_off + c", "shx")};
  }
  const ${ct} mean_h = sh * wc / (${ct})n, mean_hx = shx * wc / (${ct})n;
  ${runs(lambda L:
      f"const {L.T} xhat = ({L.load('x', 'x_off + row + b')} - mean) * rstd;\n"
      f"      {L.T} hv = {L.load('g', 'g_off + row + b')} * wc;\n"
      f"      if (per_position) hv *= {L.load('w', 'w_off + b')};\n"
      f"      {L.store('dx', 'dx_off + row + b', 'rstd * (hv - mean_h - xhat * mean_hx)')};")}
}
