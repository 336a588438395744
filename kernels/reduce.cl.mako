## Reductions: sum, prod, max, min, argmax, argmin over any dims of a strided view.
##
## Every kernel sees the same problem: M outputs (the kept dims, merged: nk dims of size ks_d and
## input stride kt_d, row-major order = output order) times R reduced elements (the reduced dims,
## merged: nr dims of size rs_d and stride rt_d; r is their row-major index). Output m's
## reduced range [0, R) is cut into P chunks of `chunk` elements; (m, c) writes its result to
## out[o_off + m*o_sm + c*o_sc] (P > 1: a scratch buffer of partials that a second launch of
## this same template reduces, with idx_in carrying argmax/argmin's indices along).
##
##   mode "inner": one work-item per (m, c) walks its chunk; vw > 0 when the innermost reduced
##                 dim has stride 1: vloadN along it (CPU devices).
##   mode "outer": one work-item per (vw consecutive outputs of the innermost kept dim, which has
##                 stride 1; c): walks the chunk with vector loads across outputs (CPU devices).
##   mode "wg":    one work-group of lx*ly items per (lx consecutive outputs, c): the ly items of
##                 an output stride through the chunk (coalesced), then a tree in local memory (GPU).
##
## Params: op; in_ct (storage ctype of x); ct (compute / accumulate ctype); idx_in (x's indices
## come from the buffer xi, laid out as x); out_ct (storage ctype of the value output, or "" for
## none); out_bool; idx_out (write indices, long); nk, nr; vw; lx, ly; index_t; fp64.
<%include file="_prelude.cl.mako"/>
<%
I = index_t
arg = op in ("argmax", "argmin")
is_float = ct in ("float", "double")
cmp = ">" if op in ("max", "argmax") else "<"
EMPTY = "INT_MAX" if I == "int" else "LONG_MAX"  # the index of "nothing seen yet"
vec = f"{ct}{vw}" if vw else ""
ivec = f"{I}{vw}" if vw else ""
# what comparing two ct vectors gives (select wants a mask of ct's size)
mvec = {"float": "int", "double": "long", "uchar": "char"}.get(ct, ct) + str(vw) if vw else ""

_LIMITS = {"uchar": ("0", "UCHAR_MAX"), "char": ("CHAR_MIN", "CHAR_MAX"),
           "short": ("SHRT_MIN", "SHRT_MAX"), "int": ("INT_MIN", "INT_MAX"),
           "long": ("LONG_MIN", "LONG_MAX")}

def ident():
    if op == "sum":
        return f"({ct})0"
    if op == "prod":
        return f"({ct})1"
    big = op in ("min", "argmin")
    if is_float:
        return f"({ct})INFINITY" if big else f"({ct})(-INFINITY)"
    return f"({ct}){_LIMITS[ct][1 if big else 0]}"

def load(ptr, idx):
    if in_ct == "half":
        return f"(({ct})vload_half({idx}, {ptr}))"
    return f"(({ct}){ptr}[{idx}])"

def loadv(ptr, idx):
    if in_ct == "half":
        return f"convert_{vec}(vload_half{vw}(0, {ptr} + ({idx})))"
    return f"convert_{vec}(vload{vw}(0, {ptr} + ({idx})))"

def combine(a, b):
    """a op b for the value ops; the same text works on scalars and on vectors."""
    if op == "sum":
        return f"({a} + {b})"
    if op == "prod":
        return f"({a} * {b})"
    if is_float:  # NaN propagates: once a is NaN, nothing compares greater
        return f"((({b} {cmp} {a}) || isnan({b})) ? {b} : {a})"
    return f"{'max' if op == 'max' else 'min'}({a}, {b})"

def seq_better(v, s):
    """v replaces s when scanning in increasing index order (ties keep s; NaN is the extreme)."""
    if is_float:
        return f"(({v} {cmp} {s}) || (isnan({v}) && !isnan({s})))"
    return f"({v} {cmp} {s})"

def store(ptr, idx, val):
    if out_ct == "half":
        return f"vstore_half_rte((float)({val}), {idx}, {ptr})"
    if out_bool:
        return f"{ptr}[{idx}] = (uchar)(({val}) != 0)"
    return f"{ptr}[{idx}] = ({out_ct})({val})"

def storev(ptr, idx, val):
    if out_ct == "half":
        return f"vstore_half{vw}_rte(convert_float{vw}({val}), 0, {ptr} + ({idx}))"
    if out_bool:
        return f"vstore{vw}(convert_uchar{vw}(-(({val}) != ({vec})0)), 0, {ptr} + ({idx}))"
    return f"vstore{vw}(convert_{out_ct}{vw}({val}), 0, {ptr} + ({idx}))"
%>
<%def name="kept_offset(m, var, upto)">\
## var = x_off + offset of kept index m over kept dims [0, upto)
    ${index_t} ${var} = x_off;
    {
      ${index_t} q_ = ${m};
% for d in reversed(range(1, upto)):
      { const ${index_t} t_ = q_ / ks${d}; ${var} += (q_ - t_ * ks${d}) * kt${d}; q_ = t_; }
% endfor
% if upto > 0:
      ${var} += q_ * kt0;
% endif
    }
</%def>
<%def name="segments()">\
## Walks [lo, hi) one run of the innermost reduced dim at a time: roff, len, r.
      for (${index_t} r = lo; r < hi;) {
% if nr == 1:
        const ${index_t} len = hi - r;
        const ${index_t} roff = r * rt0;
% else:
        ${index_t} q_ = r / rs${nr - 1};
        const ${index_t} len = min(rs${nr - 1} - (r - q_ * rs${nr - 1}), hi - r);
        ${index_t} roff = (r - q_ * rs${nr - 1}) * rt${nr - 1};
  % for d in reversed(range(1, nr - 1)):
        { const ${index_t} t_ = q_ / rs${d}; roff += (q_ - t_ * rs${d}) * rt${d}; q_ = t_; }
  % endfor
        roff += q_ * rt0;
% endif
        const ${index_t} st = rt${nr - 1};
${caller.body()}
        r += len;
      }
</%def>
% if arg:
inline int cg_red_better(${ct} v, ${I} i, ${ct} s, ${I} si)
{
  % if is_float:
  if (isnan(s)) return isnan(v) && i < si;
  return isnan(v) || v ${cmp} s || (v == s && i < si);
  % else:
  return v ${cmp} s || (v == s && i < si);
  % endif
}
% endif

% if mode == "wg":
__kernel __attribute__((reqd_work_group_size(${lx}, ${ly}, 1)))
% else:
__kernel
% endif
void cg_reduce_${mode}_${op}(
    __global const ${in_ct} *x, const ${I} x_off,
% if idx_in:
    __global const long *xi,
% endif
% for d in range(nk):
    const ${I} ks${d}, const ${I} kt${d},
% endfor
% for d in range(nr):
    const ${I} rs${d}, const ${I} rt${d},
% endfor
    const ${I} M, const ${I} R, const ${I} chunk, const ${I} P,
% if out_ct:
    __global ${out_ct} *out,
% endif
% if idx_out:
    __global long *outi,
% endif
    const ${I} o_off, const ${I} o_sm, const ${I} o_sc, const ${I} n_items)
{
% if mode == "inner":
  for (${I} w = get_global_id(0); w < n_items; w += get_global_size(0)) {
    const ${I} m = w / P, c = w - m * P;
${kept_offset("m", "base", nk)}
    const ${I} lo = c * chunk, hi = min(R, lo + chunk);
    ${ct} s = ${ident()};
  % if arg:
    ${I} si = ${EMPTY};
  % endif
  % if vw:
    ${vec} sv = (${vec})(${ident()});
    % if arg:
    ${ivec} svi = (${ivec})(${EMPTY});
    const ${ivec} lane = (${ivec})(${", ".join(str(j) for j in range(vw))});
    % endif
  % endif
    <%self:segments>
  % if vw:
        ${I} k = 0;
        for (; k + ${vw} <= len; k += ${vw}) {
          const ${vec} v = ${loadv("x", "base + roff + k")};
    % if arg:
          const ${mvec} mask = ${seq_better("v", "sv")};
          sv = select(sv, v, mask);
          svi = select(svi, (${ivec})(r + k) + lane, convert_${ivec}(mask));
    % else:
          sv = ${combine("sv", "v")};
    % endif
        }
        for (; k < len; k++) {
  % else:
        for (${I} k = 0; k < len; k++) {
  % endif
          const ${ct} v = ${load("x", "base + roff + k * st")};
  % if arg and idx_in:
          const ${I} vi = xi[base + roff + k * st];
          if (cg_red_better(v, vi, s, si)) { s = v; si = vi; }
  % elif arg:
          if (${seq_better("v", "s")}) { s = v; si = r + k; }
  % else:
          s = ${combine("s", "v")};
  % endif
        }
    </%self:segments>
  % if vw:
    {
      ${ct} lanes[${vw}];
      vstore${vw}(sv, 0, lanes);
    % if arg:
      ${I} lanei[${vw}];
      vstore${vw}(svi, 0, lanei);
      for (int j = 0; j < ${vw}; j++)
        if (cg_red_better(lanes[j], lanei[j], s, si)) { s = lanes[j]; si = lanei[j]; }
    % else:
      ${ct} t = lanes[0];
      for (int j = 1; j < ${vw}; j++) t = ${combine("t", "lanes[j]")};
      s = ${combine("t", "s")};
    % endif
    }
  % endif
  % if arg and not idx_in:
    if (si == ${EMPTY}) si = lo;  // every element equalled the identity (-inf, INT_MIN, ...)
  % endif
    const ${I} o = o_off + m * o_sm + c * o_sc;
  % if out_ct:
    ${store("out", "o", "s")};
  % endif
  % if idx_out:
    outi[o] = si;
  % endif
  }
% elif mode == "outer":
  const ${I} K0 = ks${nk - 1};
  const ${I} T = (K0 + ${vw - 1}) / ${vw}, Q = M / K0;
  for (${I} w = get_global_id(0); w < n_items; w += get_global_size(0)) {
    const ${I} t = w % T, rest = w / T;
    const ${I} q = rest % Q, c = rest / Q;
${kept_offset("q", "base", nk - 1)}
    base += t * ${vw};
    const ${I} m0 = q * K0 + t * ${vw};
    const ${I} width = min((${I})${vw}, K0 - t * ${vw});
    const ${I} lo = c * chunk, hi = min(R, lo + chunk);
    const ${I} o = o_off + m0 * o_sm + c * o_sc;  // o_sm == 1 here
    if (width == ${vw}) {
      ${vec} sv = (${vec})(${ident()});
  % if arg:
      ${ivec} svi = (${ivec})(${EMPTY});
  % endif
    <%self:segments>
        for (${I} k = 0; k < len; k++) {
          const ${vec} v = ${loadv("x", "base + roff + k * st")};
  % if arg:
          const ${mvec} mask = ${seq_better("v", "sv")};
          sv = select(sv, v, mask);
          svi = select(svi, (${ivec})(r + k), convert_${ivec}(mask));
  % else:
          sv = ${combine("sv", "v")};
  % endif
        }
    </%self:segments>
  % if arg:
      svi = select(svi, (${ivec})(lo), svi == (${ivec})(${EMPTY}));
  % endif
  % if out_ct:
      ${storev("out", "o", "sv")};
  % endif
  % if idx_out:
      ${I} lanei[${vw}];
      vstore${vw}(svi, 0, lanei);
      for (int j = 0; j < ${vw}; j++) outi[o + j] = lanei[j];
  % endif
    } else {
      for (${I} j = 0; j < width; j++) {
        ${ct} s = ${ident()};
  % if arg:
        ${I} si = ${EMPTY};
  % endif
    <%self:segments>
        for (${I} k = 0; k < len; k++) {
          const ${ct} v = ${load("x", "base + j + roff + k * st")};
  % if arg:
          if (${seq_better("v", "s")}) { s = v; si = r + k; }
  % else:
          s = ${combine("s", "v")};
  % endif
        }
    </%self:segments>
  % if arg:
        if (si == ${EMPTY}) si = lo;
  % endif
  % if out_ct:
        ${store("out", "o + j", "s")};
  % endif
  % if idx_out:
        outi[o + j] = si;
  % endif
      }
    }
  }
% else:
## mode == "wg"
  __local ${ct} sv[${lx * ly}];
  % if arg:
  __local ${I} svi[${lx * ly}];
  % endif
  const int lx = get_local_id(0), ly = get_local_id(1), slot = ly * ${lx} + lx;
  const ${I} m = (${I})get_group_id(0) * ${lx} + lx;
  const ${I} c = get_group_id(1);
  ${ct} s = ${ident()};
  % if arg:
  ${I} si = ${EMPTY};
  % endif
  if (m < M) {
${kept_offset("m", "base", nk)}
    const ${I} lo = c * chunk, hi = min(R, lo + chunk);
    for (${I} r = lo + ly; r < hi; r += ${ly}) {
      ${I} roff = 0;
      {
        ${I} q_ = r;
  % for d in reversed(range(1, nr)):
        { const ${I} t_ = q_ / rs${d}; roff += (q_ - t_ * rs${d}) * rt${d}; q_ = t_; }
  % endfor
        roff += q_ * rt0;
      }
      const ${ct} v = ${load("x", "base + roff")};
  % if arg:
      const ${I} vi = ${"xi[base + roff]" if idx_in else "r"};
      if (cg_red_better(v, vi, s, si)) { s = v; si = vi; }
  % else:
      s = ${combine("s", "v")};
  % endif
    }
  }
  sv[slot] = s;
  % if arg:
  svi[slot] = si;
  % endif
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = ${ly // 2}; h > 0; h >>= 1) {
    if (ly < h) {
      const ${ct} v = sv[slot + h * ${lx}];
  % if arg:
      const ${I} vi = svi[slot + h * ${lx}];
      if (cg_red_better(v, vi, s, si)) { s = v; si = vi; sv[slot] = s; svi[slot] = si; }
  % else:
      s = ${combine("s", "v")};
      sv[slot] = s;
  % endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ly == 0 && m < M) {
    const ${I} o = o_off + m * o_sm + c * o_sc;
  % if out_ct:
    ${store("out", "o", "s")};
  % endif
  % if idx_out:
    outi[o] = si;
  % endif
  }
% endif
}
