## nll_loss (cross_entropy's second half): its forward and its gradient, a kernel each, instead
## of a one-hot mask, a select and a reduction over the classes (and their gradients).
##
## The log-probabilities x are laid out (outer, C, inner), contiguous from x_off; the targets
## (outer, inner), int64, contiguous; the weights (C) contiguous where ``weighted`` (an argument:
## one program serves both; without weights their buffer is any buffer, never read). Element
## e = o * inner + i picks x[o, t, i] with t = target[e]. It counts where 0 <= t < C and
## t != ignore: an out-of-range target counts nothing here (the caller's bounds check raises
## for it), so no read leaves the tensors.
##   cg_nll_terms  a work-item per element: out[e] = -w[t] * x[o, t, i], 0 where e doesn't count;
##   cg_nll_total  a work-group per ``chunk`` consecutive elements: out[2g] = the sum of
##                 -w[t] * x[o, t, i], out[2g + 1] = the sum of w[t], over the elements of group
##                 g that count (combined in local memory; the caller sums the groups' pairs
##                 where there is more than one);
##   cg_nll_grad   a work-item per element of x: out[o, j, i] = -w[t] * g[e] where j == t and e
##                 counts, else 0 (g[e] is at g_off + e * g_step: one value for every element
##                 has g_step 0).
##
## Params: st (x's and the weights' storage type), ct (compute type), index_t, ls (the
## work-group size, a power of 2), fp64.
<%
I = index_t
%>
<%def name="pick()">\
## t, whether element e counts, and its weight w; the caller declares e, o and i
  const long t = target[t_off + e];
  const bool counts = t >= 0 && t < C && t != ignore;
  const ${I} tc = counts ? (${I})t : 0;
  const ${ct} w = !counts ? (${ct})0 : weighted ? ${h.load(st, ct, "weight", "w_off + tc")} : (${ct})1;
</%def>
<%def name="params()">\
    __global const long *restrict target, const ${I} t_off,
    __global const ${st} *restrict weight, const ${I} w_off, const int weighted,
    const ${I} C, const ${I} inner, const long ignore\
</%def>

__kernel void cg_nll_terms(
    __global ${st} *restrict out, const ${I} out_off,
    __global const ${st} *restrict x, const ${I} x_off,
    ${params()}, const ${I} n)
{
  if (!${h.in_range("n", I)}) return;
  const ${I} e = get_global_id(0);
  const ${I} o = e / inner, i = e - o * inner;
  ${pick()}
  const ${ct} v = counts ? ${h.load(st, ct, "x", "x_off + (o * C + tc) * inner + i")} : (${ct})0;
  ${h.store(st, False, "out", "out_off + e", "counts ? -(w * v) : 0")};  // +0 where it doesn't count
}

__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
void cg_nll_total(
    __global ${ct} *restrict out, const ${I} out_off,
    __global const ${st} *restrict x, const ${I} x_off,
    ${params()}, const ${I} n, const ${I} chunk)
{
  __local ${ct} loss_part[${ls}], weight_part[${ls}];
  const int lid = get_local_id(0);
  const ${I} first = (${I})get_group_id(0) * chunk;
  const ${I} end = min(first + chunk, n);
  ${ct} loss = 0, total = 0;
  for (${I} e = first + lid; e < end; e += ${ls}) {
    const ${I} o = e / inner, i = e - o * inner;
    ${pick()}
    if (counts) {
      loss -= w * ${h.load(st, ct, "x", "x_off + (o * C + tc) * inner + i")};
      total += w;
    }
  }
  loss_part[lid] = loss;
  weight_part[lid] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
% for s in [ls >> k for k in range(1, ls.bit_length())]:
  if (lid < ${s}) {
    loss_part[lid] += loss_part[lid + ${s}];
    weight_part[lid] += weight_part[lid + ${s}];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
% endfor
  if (lid == 0) {
    out[out_off + 2 * get_group_id(0)] = loss_part[0];
    out[out_off + 2 * get_group_id(0) + 1] = weight_part[0];
  }
}

__kernel void cg_nll_grad(
    __global ${st} *restrict out, const ${I} out_off,
    __global const ${st} *restrict g, const ${I} g_off, const ${I} g_step,
    ${params()}, const ${I} numel)
{
  if (!${h.in_range("numel", I)}) return;
  const ${I} k = get_global_id(0);  // (o, j, i)
  const ${I} i = k % inner, oj = k / inner;
  const ${I} o = oj / C, j = oj - o * C;
  const ${I} e = o * inner + i;
  ${pick()}
  const ${ct} v = (counts && tc == j) ? -(w * ${h.load(st, ct, "g", "g_off + e * g_step")}) : (${ct})0;
  ${h.store(st, False, "out", "out_off + k", "v")};
}
