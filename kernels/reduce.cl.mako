## Reductions declared as data: the op is a clgrad.backend.base.ReduceKernel (`kernel`): each
## loaded element is mapped by kernel.map_expr, values combine by kernel.reduce_expr from
## kernel.neutral; an arg reduction (kernel.arg) keeps the first index for which kernel.better
## holds. Nothing here names an op.
##
## Every kernel sees the same problem: M outputs (the kept dims, merged: nk dims of size ks_d and
## input stride kt_d, row-major order = output order) times R reduced elements (the reduced dims,
## merged: nr dims of size rs_d and stride rt_d; r is their row-major index). Output m's
## reduced range [0, R) is cut into P chunks of `chunk` elements; (m, c) writes its result to
## out[o_off + m*o_sm + c*o_sc] (P > 1: a scratch buffer of partials that a second launch of
## this same template reduces, with idx_in carrying an arg reduction's indices along).
##
##   mode "inner": one work-item per (m, c) walks its chunk; vw > 0 when the innermost reduced
##                 dim has stride 1: aligned vector loads along it (CPU devices).
##   mode "outer": one work-item per (unroll*vw adjacent outputs of the innermost kept dim, which
##                 has stride 1; c) walks the chunk with vector loads across outputs, `unroll`
##                 accumulators (CPU devices). aligned: every such vector is vw-aligned.
##   mode "rows":  as "outer" but an item owns cb outputs (unroll*vw at a time) and walks rb rows
##                 at a time across them, its running results in a ct scratch (CPU devices).
##   mode "wg":    one work-group of lx*ly items per (lx adjacent outputs, c): the ly items of
##                 an output stride through the chunk (coalesced), then a tree in local memory (GPU).
##
## Arg reductions: a serial walk keeps the first best element (a NaN counts as the best); "inner"
## takes each block of 8 vectors' best value at max speed and rescans (from cache) only a block
## that beats the best so far; "outer" keeps one per vector lane; work-items and chunks merge
## preferring the smaller index on ties. An index of EMPTY means "only neutral values seen"
## (all -inf, or INT_MIN, ...): the first element of the walk is then the answer.
##
## One program holds the kernels of every reduction in ``kernels`` (the same code for each, their
## helpers named after them): the backend bundles reductions on CPU devices, where a program costs
## per build (see Runtime.bundle).
##
## Params: mode, kernels, in_ct (storage ctype of x), ct (compute / accumulate ctype), apply_map
## (map x's elements: a first pass; partials are mapped already), idx_in (x's indices come from
## xi, laid out as x), out_ct (storage ctype of the value output, "" for none), out_bool, idx_out
## (write indices: long), nk, nr, vw, unroll, aligned, cb, rb, lx, ly, index_t, fp64, conv (how
## x's elements become ct where a C conversion would not cast as PyTorch's: None; "bool": read
## in x's own compute type, mapped there, then x != 0; "cast": read and mapped so, then cast
## (a narrow integer through long). Scalar loads only: vw is 0).
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
## Walks [lo, hi) one run of the innermost reduced dim at a time: r, roff, len, st.
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
% for kernel in kernels:
<%
I = index_t
arg = kernel.arg
nan = h.has_nan(ct)
EMPTY = "INT_MAX" if I == "int" else "LONG_MAX"  # the index of "nothing kept yet"
vec = h.vtype(ct, vw) if vw else ""
ivec = h.vtype(I, vw) if vw else ""
mvec = h.mask_type(ct, vw) if vw else ""  # what comparing two vec gives
ABLK = 8  # arg reductions: vectors per block
esize = h.SIZES[in_ct]
IDENT = h.neutral(kernel.neutral, ct)

def ident(n=0):
    return h.neutral(kernel.neutral, ct, n) if n else IDENT

# the type x's elements are mapped in: x's own compute type where they are cast after
xt = "float" if in_ct in h.FLOAT16_STORAGE else in_ct
mt = xt if conv else ct

def map_body(T):
    """kernel.map_expr over x of type T (a scalar or vector type)."""
    return h.ctext(kernel.map_expr, T, mt if T == mt else ct)

def load(ptr, idx):
    if conv:  # PyTorch's order: the element mapped (nansum's NaN to 0), then cast
        v = h.load(in_ct, xt, ptr, idx)
        v = f"cg_reduce_map_{kernel.name}({v})" if apply_map else v
        if conv == "bool":
            return f"(({ct})(({v}) != 0))"
        # a narrow integer through long, as uint8 must: a float past char's range wraps as
        # x86's conversion through int does (PoCL's vectorized char conversion saturated)
        return f"(({ct})(long)({v}))" if h.SIZES[ct] < 4 else f"(({ct})({v}))"
    v = h.load(in_ct, ct, ptr, idx)
    return f"cg_reduce_map_{kernel.name}({v})" if apply_map else v

def loadv(ptr, idx, is_aligned):
    v = h.loadv(in_ct, ct, vw, ptr, idx, is_aligned)
    return f"cg_reduce_mapv_{kernel.name}({v})" if apply_map else v

def better(v, s):
    return h.subst(kernel.better, v=v, s=s)

def combine(a, b):
    """Two values (scalars or vectors) combined. An arg reduction's values combine by keeping
    the better one, a NaN counting as better (nothing is better than a NaN)."""
    if not arg:
        return h.subst(kernel.reduce_expr, a=a, b=b)
    if nan:
        return f"(({better(b, a)} || ({b}) != ({b})) ? ({b}) : ({a}))"
    return f"({better(b, a)} ? ({b}) : ({a}))"

def seq_better(v, s):
    """v replaces s in a walk in increasing index order (ties keep s; NaN is the best)."""
    if nan:
        return f"({better(v, s)} || (({v}) != ({v}) && ({s}) == ({s})))"
    return f"({better(v, s)})"

def same_value(v, m):
    """v is the value m (NaN matching NaN)."""
    if nan:
        return h.subst("v == m || (m != m && v != v)", v=v, m=m)
    return h.subst("v == m", v=v, m=m)

def update(s, si, v, vi):
    """One element into a serial scalar state."""
    if not arg:
        return f"{s} = {combine(s, v)};"
    if idx_in:
        return f"if (cg_red_better_{kernel.name}({v}, {vi}, {s}, {si})) {{ {s} = {v}; {si} = {vi}; }}"
    return f"if ({seq_better(v, s)}) {{ {s} = {v}; {si} = {vi}; }}"

def updatev(s, si, v, vi):
    """One vector into a vector state, lane by lane (indices increase along each lane)."""
    if not arg:
        return f"{s} = {combine(s, v)};"
    return (f"{{ const {vec} v_ = {v}; const {mvec} mask_ = {seq_better('v_', s)}; "
            f"{s} = select({s}, v_, mask_); {si} = select({si}, {vi}, convert_{ivec}(mask_)); }}")

def store(ptr, idx, val):
    return h.store(out_ct, out_bool, ptr, idx, val)

def storev(ptr, idx, val):
    return h.storev(out_ct, out_bool, ct, vw, ptr, idx, val)

def hreduce(v, out):
    """const ct out = the vector v's lanes combined (halving: lo with hi)."""
    lines, cur, n, i = [], v, vw, 0
    while n > 1:
        n //= 2
        lines.append(f"const {h.vtype(ct, n)} {out}_{i} = {combine(cur + '.lo', cur + '.hi')};")
        cur, i = f"{out}_{i}", i + 1
    lines.append(f"const {ct} {out} = {cur};")
    return "\n          ".join(lines)

def write_vec(s, si, o):
    """A vector state's vw results to out / outi at o .. o + vw - 1."""
    text = []
    if out_ct:
        text.append(storev("out", o, s) + ";")
    if idx_out:
        text.append(f"{{ {I} lanei_[{vw}]; vstore{vw}({si}, 0, lanei_); "
                    f"for (int j_ = 0; j_ < {vw}; j_++) outi[{o} + j_] = lanei_[j_]; }}")
    return "\n      ".join(text)
%>
% if apply_map:
## each element of x as the reduction sees it (a function: the element is loaded once)
static inline ${mt} cg_reduce_map_${kernel.name}(const ${mt} x) { return ${map_body(mt)}; }
  % if vw:
static inline ${vec} cg_reduce_mapv_${kernel.name}(const ${vec} x) { return ${map_body(vec)}; }
  % endif
% endif
% if arg:
## (v, i) replaces (s, si) when merging walks: the better value, the smaller index on ties
static inline int cg_red_better_${kernel.name}(${ct} v, ${I} i, ${ct} s, ${I} si)
{
  % if nan:
  if (s != s) return v != v && i < si;  // (x != x: NaN, see _prelude)
  return v != v || ${better("v", "s")} || (v == s && i < si);
  % else:
  return ${better("v", "s")} || (v == s && i < si);
  % endif
}
% endif

% if mode == "wg":
__kernel __attribute__((reqd_work_group_size(${lx}, ${ly}, 1)))
% else:
__kernel
% endif
void cg_reduce_${mode}_${kernel.name}(
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
  % if vw and not arg:
    ${vec} sv = (${vec})(${ident()});
  % endif
    <%self:segments>
  % if vw:
        ## st == 1 here: scalars up to a vw-aligned address, vectors, scalars after
        const __global ${in_ct} *p = x + (base + roff);
        const ${I} mis = (${I})(((size_t)p / ${esize}) & ${vw - 1});
        const ${I} head = min(len, mis ? ${vw} - mis : (${I})0);
        ${I} k = 0;
        for (; k < head; k++) {
          const ${ct} v = ${load("p", "k")};
          ${update("s", "si", "v", "r + k")}
        }
    % if not arg:
        {  // four independent accumulators: one would wait on the adder's latency
          ${vec} s1 = (${vec})(${ident()}), s2 = s1, s3 = s1;
          for (; k + ${4 * vw} <= len; k += ${4 * vw}) {
            sv = ${combine("sv", loadv("p", "k", True))};
            s1 = ${combine("s1", loadv("p", f"k + {vw}", True))};
            s2 = ${combine("s2", loadv("p", f"k + {2 * vw}", True))};
            s3 = ${combine("s3", loadv("p", f"k + {3 * vw}", True))};
          }
          sv = ${combine(combine("sv", "s1"), combine("s2", "s3"))};
        }
        for (; k + ${vw} <= len; k += ${vw}) sv = ${combine("sv", loadv("p", "k", True))};
    % else:
        ## blocks of 8 vectors: the block's extreme at max/min speed; only a block that beats
        ## the best so far is scanned again (from L1) for the first index of its extreme
        for (; k + ${ABLK * vw} <= len; k += ${ABLK * vw}) {
          ${vec} b0 = ${loadv("p", "k", True)}, b1 = ${loadv("p", f"k + {vw}", True)};
          ${vec} b2 = ${loadv("p", f"k + {2 * vw}", True)}, b3 = ${loadv("p", f"k + {3 * vw}", True)};
          for (int j = ${4 * vw}; j < ${ABLK * vw}; j += ${4 * vw}) {
            b0 = ${combine("b0", loadv("p", "k + j", True))};
            b1 = ${combine("b1", loadv("p", f"k + j + {vw}", True))};
            b2 = ${combine("b2", loadv("p", f"k + j + {2 * vw}", True))};
            b3 = ${combine("b3", loadv("p", f"k + j + {3 * vw}", True))};
          }
          b0 = ${combine(combine("b0", "b1"), combine("b2", "b3"))};
          ${hreduce("b0", "bm")}
          if (${seq_better("bm", "s")}) {
            for (int j = 0; j < ${ABLK * vw}; j++) {
              const ${ct} v = ${load("p", "k + j")};
              if (${same_value("v", "bm")}) {
                s = v;
                si = r + k + j;
                break;
              }
            }
          }
        }
    % endif
        for (; k < len; k++) {
          const ${ct} v = ${load("p", "k")};
          ${update("s", "si", "v", "r + k")}
        }
  % else:
        for (${I} k = 0; k < len; k++) {
          const ${ct} v = ${load("x", "base + roff + k * st")};
          ${update("s", "si", "v", "xi[base + roff + k * st]" if idx_in else "r + k")}
        }
  % endif
    </%self:segments>
  % if vw and not arg:
    {
      ${hreduce("sv", "t")}
      s = ${combine("t", "s")};
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
% elif mode == "rows":
<% TW = unroll * vw %>\
  ## out: a ct scratch holding output m of chunk c at o_off + m + c * o_sc. An item owns cb
  ## adjacent outputs and walks its chunk `rb` rows at a time across all of them, keeping
  ## the running results there (cache-resident): memory is read a few rows by a few rows.
  const ${I} K0 = ks${nk - 1};
  const ${I} T = (K0 + ${cb - 1}) / ${cb}, Q = M / K0;
  for (${I} w = get_global_id(0); w < n_items; w += get_global_size(0)) {
    const ${I} t = w % T, rest = w / T;
    const ${I} q = rest % Q, c = rest / Q;
${kept_offset("q", "base", nk - 1)}
    base += t * ${cb};
    const ${I} width = min((${I})${cb}, K0 - t * ${cb});
    const ${I} lo = c * chunk, hi = min(R, lo + chunk);
    __global ${ct} *acc = out + (o_off + q * K0 + t * ${cb} + c * o_sc);
    for (${I} rb = lo; rb < hi; rb += ${rb}) {
      const int nrow = (int)min((${I})${rb}, hi - rb);
      const int first = rb == lo;
      ${I} roffs[${rb}];
      for (int i = 0; i < nrow; i++) {
        ${I} q_ = rb + i, ro_ = 0;
  % for d in reversed(range(1, nr)):
        { const ${I} t_ = q_ / rs${d}; ro_ += (q_ - t_ * rs${d}) * rt${d}; q_ = t_; }
  % endfor
        roffs[i] = base + ro_ + q_ * rt0;
      }
      ${I} j = 0;
      for (; j + ${TW} <= width; j += ${TW}) {
  % for u in range(unroll):
        ${vec} s${u} = first ? (${vec})(${ident()}) : vload${vw}(0, acc + j + ${u * vw});
  % endfor
        for (int i = 0; i < nrow; i++) {
          const __global ${in_ct} *p = x + (roffs[i] + j);
  % for u in range(unroll):
          s${u} = ${combine(f"s{u}", loadv("p", u * vw, aligned))};
  % endfor
        }
  % for u in range(unroll):
        vstore${vw}(s${u}, 0, acc + j + ${u * vw});
  % endfor
      }
      for (; j + ${vw} <= width; j += ${vw}) {
        ${vec} sv = first ? (${vec})(${ident()}) : vload${vw}(0, acc + j);
        for (int i = 0; i < nrow; i++) sv = ${combine("sv", loadv("x", "roffs[i] + j", aligned))};
        vstore${vw}(sv, 0, acc + j);
      }
      for (; j < width; j++) {
        ${ct} s = first ? ${ident()} : acc[j];
        for (int i = 0; i < nrow; i++) s = ${combine("s", load("x", "roffs[i] + j"))};
        acc[j] = s;
      }
    }
  }
% elif mode == "outer":
<% TW = unroll * vw %>\
  const ${I} K0 = ks${nk - 1};
  const ${I} T = (K0 + ${TW - 1}) / ${TW}, Q = M / K0;
  for (${I} w = get_global_id(0); w < n_items; w += get_global_size(0)) {
    const ${I} t = w % T, rest = w / T;
    const ${I} q = rest % Q, c = rest / Q;
${kept_offset("q", "base", nk - 1)}
    base += t * ${TW};
    const ${I} width = min((${I})${TW}, K0 - t * ${TW});
    const ${I} lo = c * chunk, hi = min(R, lo + chunk);
    const ${I} o = o_off + q * K0 + t * ${TW} + c * o_sc;  // o_sm == 1 here
    if (width == ${TW}) {
  % for u in range(unroll):
      ${vec} s${u} = (${vec})(${ident()});
    % if arg:
      ${ivec} si${u} = (${ivec})(${EMPTY});
    % endif
  % endfor
    <%self:segments>
        for (${I} k = 0; k < len; k++) {
          const __global ${in_ct} *p = x + (base + roff + k * st);
  % if arg:
          const ${ivec} vi = (${ivec})(r + k);
  % endif
  % for u in range(unroll):
          ${updatev(f"s{u}", f"si{u}", loadv("p", u * vw, aligned), "vi")}
  % endfor
        }
    </%self:segments>
  % for u in range(unroll):
    % if arg:
      si${u} = select(si${u}, (${ivec})(lo), si${u} == (${ivec})(${EMPTY}));
    % endif
      ${write_vec(f"s{u}", f"si{u}", f"o + {u * vw}")}
  % endfor
    } else {
      ${I} g = 0;
      for (; g + ${vw} <= width; g += ${vw}) {  // the whole vectors of a partial tile
        ${vec} sv = (${vec})(${ident()});
  % if arg:
        ${ivec} svi = (${ivec})(${EMPTY});
  % endif
    <%self:segments>
        for (${I} k = 0; k < len; k++) {
          ${updatev("sv", "svi", loadv("x", "base + g + roff + k * st", aligned), f"(({ivec})(r + k))")}
        }
    </%self:segments>
  % if arg:
        svi = select(svi, (${ivec})(lo), svi == (${ivec})(${EMPTY}));
  % endif
        ${write_vec("sv", "svi", "o + g")}
      }
      for (; g < width; g++) {  // and its last few outputs one by one
        ${ct} s = ${ident()};
  % if arg:
        ${I} si = ${EMPTY};
  % endif
    <%self:segments>
        for (${I} k = 0; k < len; k++) {
          const ${ct} v = ${load("x", "base + g + roff + k * st")};
          ${update("s", "si", "v", "r + k")}
        }
    </%self:segments>
  % if arg:
        if (si == ${EMPTY}) si = lo;
  % endif
  % if out_ct:
        ${store("out", "o + g", "s")};
  % endif
  % if idx_out:
        outi[o + g] = si;
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
      if (cg_red_better_${kernel.name}(v, vi, s, si)) { s = v; si = vi; }
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
      if (cg_red_better_${kernel.name}(v, vi, s, si)) { s = v; si = vi; sv[slot] = s; svi[slot] = si; }
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
% endfor
