## layer_norm and batch_norm: the statistics, the normalized output and the gradient, a
## work-group per normalized group in one kernel each way (instead of ~20 small kernels).
##
## The input is laid out (A, C, B), contiguous from its offset; each c in C is normalized over
## its A * B elements: element e = (a, b) of group c is at (a * C + c) * B + b. layer_norm is
## (1, rows, n): a group per row. batch_norm is (N, C, spatial): a group per channel.
##
##   cg_norm_forward   y = (x - mean) * rstd [* w] [+ b] with the mean and biased variance of
##                     the group (two passes: the deviations, not E[x^2] - E[x]^2), and
##                     mean[c], rstd[c] for the gradient;
##   cg_norm_backward  dx = rstd * (h - mean(h) - xhat * mean(h * xhat)) for h = g [* w] and
##                     xhat = (x - mean) * rstd; per-channel weights also get dw[c] = sum of
##                     g * xhat and db[c] = sum of g.
##
## affine: None (no weight), "c" (a weight per group: batch_norm's channels) or "b" (a weight
## per position in the group: layer_norm's normalized shape, which has A = 1). split (CPU
## devices): a barrier closes every step of a loop over the group, as in softmax.cl.mako, so
## that PoCL vectorizes the code between barriers across the work-group's items.
##
## Params: st (x's, y's and the weights' storage type), ct (compute type), ls (work-group size,
## a power of 2), affine, bias, split, index_t, fp64.
<%include file="_prelude.cl.mako"/>
<%
I = index_t
weight = {"c": "wc", "b": h.load(st, ct, "w", "w_off + b")}.get(affine)
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
<%def name="group_params()">\
    const ${I} A, const ${I} C, const ${I} B\
</%def>

__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void cg_norm_forward(
    __global const ${st} *restrict x, const ${I} x_off,
    __global ${st} *restrict y, const ${I} y_off,
% if affine:
    __global const ${st} *restrict w, const ${I} w_off,
% endif
% if bias:
    __global const ${st} *restrict bias, const ${I} b_off,
% endif
    __global ${ct} *restrict mean_out, __global ${ct} *restrict var_out,
    __global ${ct} *restrict rstd_out, ${group_params()}, const ${ct} eps)
{
  __local ${ct} red[${ls}];
  const int lid = get_local_id(0);
  const ${I} c = get_group_id(0), n = A * B;
% if affine == "c":
  const ${ct} wc = ${h.load(st, ct, "w", "w_off + c")};
% endif
% if bias == "c":
  const ${ct} bc = ${h.load(st, ct, "bias", "b_off + c")};
% endif
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
% if weight:
      v *= ${weight};
% endif
% if bias == "c":
      v += bc;
% elif bias == "b":
      v += ${h.load(st, ct, "bias", "b_off + b")};
% endif
      ${h.store(st, False, "y", "y_off + at", "v")};
    }
  ${done()}
  if (lid == 0) {
    mean_out[c] = mean;
    var_out[c] = var;
    rstd_out[c] = rstd;
  }
}

__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void cg_norm_backward(
    __global const ${st} *restrict x, const ${I} x_off,
    __global const ${st} *restrict g, const ${I} g_off,
    __global ${st} *restrict dx, const ${I} dx_off,
% if affine:
    __global const ${st} *restrict w, const ${I} w_off,
% endif
% if affine == "c":
    __global ${st} *restrict dw, const ${I} dw_off,
% endif
% if bias == "c":
    __global ${st} *restrict db, const ${I} db_off,
% endif
    __global const ${ct} *restrict mean_in, __global const ${ct} *restrict rstd_in,
    ${group_params()})
{
  __local ${ct} red[${ls}];
  const int lid = get_local_id(0);
  const ${I} c = get_group_id(0), n = A * B;
  const ${ct} mean = mean_in[c], rstd = rstd_in[c];
% if affine == "c":
  const ${ct} wc = ${h.load(st, ct, "w", "w_off + c")};
% endif
  // sums of h and h * xhat; with a weight per group, of g and g * xhat (h = wc * g)
  ${ct} sh = 0, shx = 0;
  ${each()}
    if (ok) {
      const ${ct} xhat = (${h.load(st, ct, "x", "x_off + at")} - mean) * rstd;
% if affine == "b":
      const ${ct} hv = ${h.load(st, ct, "g", "g_off + at")} * ${weight};
% else:
      const ${ct} hv = ${h.load(st, ct, "g", "g_off + at")};
% endif
      sh += hv;
      shx += hv * xhat;
    }
  ${done()}
  ${combine("sh")}
  ${combine("shx")}
% if bias == "c":
  if (lid == 0) {
    ${h.store(st, False, "db", "db_off + c", "sh")};  // the sum of g
  }
% endif
% if affine == "c":
  if (lid == 0) {
    ${h.store(st, False, "dw", "dw_off + c", "shx")};  // the sum of g * xhat
  }
  sh *= wc;
  shx *= wc;
% endif
  const ${ct} mean_h = sh / (${ct})n, mean_hx = shx / (${ct})n;
  ${each()}
    if (ok) {
      const ${ct} xhat = (${h.load(st, ct, "x", "x_off + at")} - mean) * rstd;
% if affine:
      const ${ct} hv = ${h.load(st, ct, "g", "g_off + at")} * ${weight};
% else:
      const ${ct} hv = ${h.load(st, ct, "g", "g_off + at")};
% endif
      ${h.store(st, False, "dx", "dx_off + at", "rstd * (hv - mean_h - xhat * mean_hx)")};
    }
  ${done()}
}
