## Inclusive scan along one dim of a strided view into a contiguous output: values combine by
## kernel.reduce_expr (C over a and b, valid on scalars and vectors: sum, product, logaddexp)
## from kernel.neutral.
##
## B lines (the other dims, merged: nb dims of size bs_d, input stride bx_d, output stride bo_d;
## line b is their row-major index) of L elements (input stride sx, output stride so). Each line
## is cut into P chunks of `chunk`; with has_part, part[b*ps_b + c*ps_c] holds chunk c's
## combined value (from the reduction kernels) and chunk c starts from the chunks before it.
##
##   mode "lines": one work-item per (line, chunk), serial; lvec > 0 when the line is contiguous
##                 in input and output: lvec elements at a time with an in-register prefix.
##   mode "tiles": one work-item per (unroll*vw adjacent lines, chunk) when adjacent lines are
##                 adjacent in memory (input and output): vector loads and stores across lines;
##                 aligned: every such vector is vw-aligned in input and output (CPU).
##   mode "wg":    one work-group of ls items per (line, chunk): tiles of ls elements scanned in
##                 local memory, carried from tile to tile (GPU).
##   mode "extreme": one work-item per line (P == 1): the running maximum (extreme "max") or
##                 minimum ("min") and, into idx (int64, at out's positions shifted to i_off),
##                 the index it came from: a later equal value takes the index, a NaN stays the
##                 extreme and a later NaN takes the index (PyTorch's cummax / cummin).
##
## Params: kernel (its combination; "extreme" ignores it), extreme, mode, in_ct, ct (the
## accumulator), out_ct, out_bool, nb, vw, unroll, aligned, lvec, ls, has_part, index_t, fp64.
<%
I = index_t
DIGITS = "0123456789abcdef"

def load(ptr, idx):
    return h.load(in_ct, ct, ptr, idx)

def loadv(n, ptr, idx, is_aligned=False):
    return h.loadv(in_ct, ct, n, ptr, idx, is_aligned)

def store(ptr, idx, val):
    return h.store(out_ct, out_bool, ptr, idx, val)

def storev(n, ptr, idx, val, is_aligned=False):
    return h.storev(out_ct, out_bool, ct, n, ptr, idx, val, is_aligned)

IDENT = h.neutral(kernel.neutral, ct)

def combine(a, b):
    """a and b (names: the expression may read each more than once) combined."""
    return h.subst(kernel.reduce_expr, a=a, b=b)

def shifted(n, k):
    """v's lanes moved up by k, the neutral value shifted in: (e, .., e, v.s0, .., v.s{n-k-1})."""
    return ", ".join([IDENT] * k + [f"v.s{DIGITS[j]}" for j in range(n - k)])

def carry_in(b):
    """Line b's chunks before chunk c, combined."""
    if not has_part:
        return IDENT
    return f"cg_scan_carry(part, {b}, ps_b, ps_c, c)"
%>
<%def name="line_offsets(b, upto)">\
## xb, ob = offsets of line b over batch dims [0, upto)
    ${index_t} xb = x_off, ob = o_off;
    {
      ${index_t} q_ = ${b};
% for d in reversed(range(1, upto)):
      { const ${index_t} t_ = q_ / bs${d}, c_ = q_ - t_ * bs${d}; xb += c_ * bx${d}; ob += c_ * bo${d}; q_ = t_; }
% endfor
% if upto > 0:
      xb += q_ * bx0; ob += q_ * bo0;
% endif
    }
</%def>
% if has_part:
static inline ${ct} cg_scan_carry(__global const ${ct} *part, ${I} b, ${I} ps_b, ${I} ps_c, ${I} c)
{
  ${ct} s = ${IDENT};
  for (${I} j = 0; j < c; j++) {
    const ${ct} p = part[b * ps_b + j * ps_c];
    s = ${combine("s", "p")};
  }
  return s;
}
% endif

% if mode == "wg":
__kernel __attribute__((reqd_work_group_size(${ls}, 1, 1)))
% else:
__kernel
% endif
void cg_scan_${mode}(
    __global const ${in_ct} *x, const ${I} x_off,
% for d in range(nb):
    const ${I} bs${d}, const ${I} bx${d}, const ${I} bo${d},
% endfor
    const ${I} L, const ${I} sx, const ${I} so, const ${I} chunk, const ${I} P,
% if has_part:
    __global const ${ct} *part, const ${I} ps_b, const ${I} ps_c,
% endif
    __global ${out_ct} *out, const ${I} o_off,
% if mode == "extreme":
    __global long *idx, const ${I} i_off,
% endif
    const ${I} n_items)
{
% if mode == "extreme":
<%
    keeps = "v >= best" if extreme == "max" else "v <= best"
    if h.has_nan(ct):
        keeps = f"isnan(v) || (!isnan(best) && {keeps})"
%>\
  for (${I} b = get_global_id(0); b < n_items; b += get_global_size(0)) {
${line_offsets("b", nb)}
    const ${I} ib = ob - o_off + i_off;
    ${ct} best = ${load("x", "xb")};
    long at = 0;
    ${store("out", "ob", "best")};
    idx[ib] = 0;
    for (${I} i = 1; i < L; i++) {
      const ${ct} v = ${load("x", "xb + i * sx")};
      if (${keeps}) {
        best = v;
        at = i;
      }
      ${store("out", "ob + i * so", "best")};
      idx[ib + i * so] = at;
    }
  }
% elif mode == "lines":
  for (${I} w = get_global_id(0); w < n_items; w += get_global_size(0)) {
    const ${I} b = w / P, c = w - b * P;
${line_offsets("b", nb)}
    const ${I} lo = c * chunk, hi = min(L, lo + chunk);
    ${ct} carry = ${carry_in("b")};
    ${I} i = lo;
  % if lvec:
    ## contiguous line (sx == so == 1): scalars up to an aligned input address, then lvec at a
    ## time with a prefix within the vector, then the carry
    {
      const ${I} mis = (${I})(((size_t)(x + xb + i) / ${h.SIZES[in_ct]}) & ${lvec - 1});
      const ${I} head = min(hi - i, mis ? ${lvec} - mis : (${I})0);
      for (const ${I} e = i + head; i < e; i++) {
        const ${ct} v = ${load("x", "xb + i")};
        carry = ${combine("carry", "v")};
        ${store("out", "ob + i", "carry")};
      }
    }
    <% last = DIGITS[lvec - 1] %>
    if ((((size_t)(out + ob + i) / ${h.SIZES[out_ct]}) & ${lvec - 1}) == 0) {
      for (; i + ${lvec} <= hi; i += ${lvec}) {
        ${ct}${lvec} v = ${loadv(lvec, "x", "xb + i", True)};
    % for sh in (1, 2, 4, 8):
      % if sh < lvec:
        { const ${ct}${lvec} u = (${ct}${lvec})(${shifted(lvec, sh)}); v = ${combine("v", "u")}; }
      % endif
    % endfor
        { const ${ct}${lvec} u = (${ct}${lvec})carry; v = ${combine("u", "v")}; }
        ${storev(lvec, "out", "ob + i", "v", True)};
        carry = v.s${last};
      }
    } else {
      for (; i + ${lvec} <= hi; i += ${lvec}) {
        ${ct}${lvec} v = ${loadv(lvec, "x", "xb + i", True)};
    % for sh in (1, 2, 4, 8):
      % if sh < lvec:
        { const ${ct}${lvec} u = (${ct}${lvec})(${shifted(lvec, sh)}); v = ${combine("v", "u")}; }
      % endif
    % endfor
        { const ${ct}${lvec} u = (${ct}${lvec})carry; v = ${combine("u", "v")}; }
        ${storev(lvec, "out", "ob + i", "v")};
        carry = v.s${last};
      }
    }
  % endif
    for (; i < hi; i++) {
      const ${ct} v = ${load("x", "xb + i * sx")};
      carry = ${combine("carry", "v")};
      ${store("out", "ob + i * so", "carry")};
    }
  }
% elif mode == "tiles":
<% TW = unroll * vw %>\
  const ${I} K0 = bs${nb - 1};
  const ${I} T = (K0 + ${TW - 1}) / ${TW}, Q = (n_items / P) / T;
  for (${I} w = get_global_id(0); w < n_items; w += get_global_size(0)) {
    const ${I} t = w % T, rest = w / T;
    const ${I} q = rest % Q, c = rest / Q;
${line_offsets("q", nb - 1)}
    xb += t * ${TW};
    ob += t * ${TW};
    const ${I} b0 = q * K0 + t * ${TW};
    const ${I} width = min((${I})${TW}, K0 - t * ${TW});
    const ${I} lo = c * chunk, hi = min(L, lo + chunk);
    ${I} g = 0;
    if (width == ${TW}) {
  % for u in range(unroll):
      ${ct}${vw} c${u};
      {
        ${ct} init[${vw}];
        for (int j = 0; j < ${vw}; j++) init[j] = ${carry_in(f"b0 + {u * vw} + j")};
        c${u} = vload${vw}(0, init);
      }
  % endfor
      for (${I} i = lo; i < hi; i++) {
  % for u in range(unroll):
        { const ${ct}${vw} v = ${loadv(vw, "x", f"xb + {u * vw} + i * sx", aligned)}; c${u} = ${combine(f"c{u}", "v")}; }
        ${storev(vw, "out", f"ob + {u * vw} + i * so", f"c{u}", aligned)};
  % endfor
      }
      g = ${TW};
    }
    for (; g + ${vw} <= width; g += ${vw}) {  // the whole vectors of a partial tile
      ${ct}${vw} cv;
      {
        ${ct} init[${vw}];
        for (int j = 0; j < ${vw}; j++) init[j] = ${carry_in("b0 + g + j")};
        cv = vload${vw}(0, init);
      }
      for (${I} i = lo; i < hi; i++) {
        { const ${ct}${vw} v = ${loadv(vw, "x", "xb + g + i * sx", aligned)}; cv = ${combine("cv", "v")}; }
        ${storev(vw, "out", "ob + g + i * so", "cv", aligned)};
      }
    }
    for (; g < width; g++) {  // and its last few lines one by one
      ${ct} carry = ${carry_in("b0 + g")};
      for (${I} i = lo; i < hi; i++) {
        const ${ct} v = ${load("x", "xb + g + i * sx")};
        carry = ${combine("carry", "v")};
        ${store("out", "ob + g + i * so", "carry")};
      }
    }
  }
% else:
## mode == "wg"
  __local ${ct} s[${ls}];
  const int lid = get_local_id(0);
  const ${I} g = get_group_id(0);
  const ${I} b = g / P, c = g - b * P;
${line_offsets("b", nb)}
  const ${I} lo = c * chunk, hi = min(L, lo + chunk);
  ${ct} carry = ${carry_in("b")};
  for (${I} t0 = lo; t0 < hi; t0 += ${ls}) {
    const ${I} i = t0 + lid;
    s[lid] = i < hi ? ${load("x", "xb + i * sx")} : ${IDENT};
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = 1; h < ${ls}; h <<= 1) {
      const ${ct} add = lid >= h ? s[lid - h] : ${IDENT};
      barrier(CLK_LOCAL_MEM_FENCE);
      { const ${ct} own = s[lid]; s[lid] = ${combine("add", "own")}; }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    { const ${ct} own = s[lid]; if (i < hi) ${store("out", "ob + i * so", combine("carry", "own"))}; }
    { const ${ct} last = s[${ls - 1}]; carry = ${combine("carry", "last")}; }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
% endif
}
