## Convolution's column matrix: unfold (im2col) and its adjoint fold (col2im), in 3 spatial
## dims (1-d and 2-d convolutions arrive with leading dims of size 1, so one kernel serves all).
##
##   cg_conv_unfold: cols[n, c, k0, k1, k2, o0, o1, o2] = x[n, c, i0, i1, i2] with
##                   i_j = o_j * s_j - p_j + k_j * d_j, or 0 where i_j falls in the padding.
##                   cols is contiguous, (N, C * K, L) per batch: the row-major B the matmul's
##                   micro-kernel reads in place. x is read through its strides.
##   cg_conv_fold:   out[n, c, i0, i1, i2] = the sum of every cols element unfold would have
##                   copied from there: a gather per output element (each is written by one
##                   work-item, once), so no atomics and one rounding for half.
##   cg_conv_fold_taps: the same sums at unit stride with a small kernel window: a work-item
##                   per output element, its window unrolled (vectorized by PoCL).
##   cg_window_max:  max pooling's forward: the largest element of every window of a window
##                   view (N, C, O0, O1, O2, K0, K1, K2; any strides) and its index in the
##                   window, in one pass over the input (no copy of the windows).
##   cg_window_put:  its gradient where the windows tile the input: each window's picked
##                   element gets the gradient, the others 0.
##
## Params: st (storage C type; unfold moves half and bool as their raw bits), ct (the type fold
## sums in), index_t (int where every offset fits in 31 bits, else long), CH (fold: the output
## elements of one row a work-item sums in private memory), taps (fold's unrolled window, or
## None), window (pooling: the window's
## sizes where its walk unrolls, or None), dims (pooling: the windows' merged position dims),
## fp64. Sizes, strides and the geometry are kernel arguments. Pointers are restrict: the output
## is always a new buffer, so the compiler may vectorize the row loops without an overlap check.
<%
I = index_t
raw = h.raw_type(st)
%>
## Work-item per ``span1`` output rows (n, c, k0, k1, k2, o0, o1..), and of each row the
## ``span2`` elements from o2 = q2 * span2: they are three runs, the left padding, the copied
## span and the right padding, so the copy loop has no branch and the divisions are paid per
## work-item, not per element. GPUs take one row per work-item (span1 = 1: many work-items);
## CPU devices a whole (o1, o2) plane (a 32-wide row per work-item spent more on the work-item
## than on its copy). span2 is the whole row but where a driver limits a work-item's loop
## iterations (llvmpipe: ``Runtime.loop_limit``).
__kernel void cg_conv_unfold(
    __global ${raw} *restrict out, const ${I} out_off,
    __global const ${raw} *restrict x, const ${I} x_off, const ${I} xs_n, const ${I} xs_c,
    const ${I} xs0, const ${I} xs1, const ${I} xs2,
    const ${I} C, const ${I} W0, const ${I} W1, const ${I} W2,
    const ${I} K0, const ${I} K1, const ${I} K2,
    const ${I} O0, const ${I} O1, const ${I} O2,
    const ${I} s0, const ${I} s1, const ${I} s2,
    const ${I} d0, const ${I} d1, const ${I} d2,
    const ${I} p0, const ${I} p1, const ${I} p2,
    const ${I} block, const ${I} span1, const ${I} span2, const ${I} items)
{
  if (get_global_id(0) >= items) return;  // compared as size_t: the padded range may pass 2^31
  const ${I} item = get_global_id(0);
  const ${I} Q1 = (O1 + span1 - 1) / span1;  // work-items per (n, c, k0, k1, k2, o0) and row
  const ${I} Q2 = (O2 + span2 - 1) / span2;  // chunk
  ${I} r = item;
  const ${I} q2 = r % Q2; r /= Q2;
  const ${I} q1 = r % Q1; r /= Q1;
  const ${I} o0 = r % O0; r /= O0;
  // out's (n, c, k0, k1, k2) blocks of O0 * O1 * O2 elements lie ``block`` apart
  __global ${raw} *const out_block = out + out_off + r * block + o0 * O1 * O2;
  const ${I} k2 = r % K2; r /= K2;
  const ${I} k1 = r % K1; r /= K1;
  const ${I} k0 = r % K0; r /= K0;
  const ${I} c = r % C;
  const ${I} n = r / C;
  const ${I} i0 = o0 * s0 - p0 + k0 * d0;
  // the o2 whose i2 = o2 * s2 + off lies in [0, W2): [lo2, hi2)
  const ${I} off = k2 * d2 - p2;
  ${I} lo2 = off >= 0 ? 0 : (s2 - 1 - off) / s2;
  ${I} hi2 = off >= W2 ? 0 : (W2 - 1 - off) / s2 + 1;
  if (i0 < 0 || i0 >= W0) lo2 = hi2 = 0;
  hi2 = min(hi2, O2);
  lo2 = min(lo2, hi2);
  const ${I} step = s2 * xs2;
  const ${I} o1_end = min(O1, (q1 + 1) * span1);
  const ${I} c0 = q2 * span2, c1 = min(O2, c0 + span2);  // this work-item's part of a row
  for (${I} o1 = q1 * span1; o1 < o1_end; ++o1) {
    const ${I} i1 = o1 * s1 - p1 + k1 * d1;
    const bool inside = i1 >= 0 && i1 < W1;
    // the row's runs clipped to [c0, c1): zeros [c0, lo), the copy [lo, hi), zeros [hi, c1)
    const ${I} hi = clamp(inside ? hi2 : 0, c0, c1), lo = clamp(inside ? lo2 : 0, c0, hi);
    __global ${raw} *dst = out_block + o1 * O2;
    for (${I} o = c0; o < lo; ++o) dst[o] = 0;
    if (lo < hi) {
      __global const ${raw} *src =
          x + x_off + n * xs_n + c * xs_c + i0 * xs0 + i1 * xs1 + off * xs2;
      if (step == 1) {
        for (${I} o = lo; o < hi; ++o) dst[o] = src[o];
      } else {
        for (${I} o = lo; o < hi; ++o) dst[o] = src[o * step];
      }
    }
    for (${I} o = hi; o < c1; ++o) dst[o] = 0;
  }
}

## Work-item per CH elements [j0, j0 + CH) of an output row (n, c, i0, i1): for every kernel
## position (k0, k1) whose window row lands on (i0, i1) and every k2, the cols row's span that
## lands in the chunk is added into private sums; then the chunk is stored once.
__kernel void cg_conv_fold(
    __global ${st} *restrict out, const ${I} out_off,
    __global const ${st} *restrict cols, const ${I} cols_off,
    const ${I} W0, const ${I} W1, const ${I} W2,
    const ${I} K0, const ${I} K1, const ${I} K2,
    const ${I} O0, const ${I} O1, const ${I} O2,
    const ${I} s0, const ${I} s1, const ${I} s2,
    const ${I} d0, const ${I} d1, const ${I} d2,
    const ${I} p0, const ${I} p1, const ${I} p2,
    const ${I} chunks, const ${I} items)
{
  if (get_global_id(0) >= items) return;
  const ${I} id = get_global_id(0);
  const ${I} j0 = id % chunks * ${CH};
  ${I} r = id / chunks;  // the output row: (n * C + c) * W0 * W1 + i0 * W1 + i1
  const ${I} i1 = r % W1; r /= W1;
  const ${I} i0 = r % W0;
  const ${I} nc = r / W0;
  const ${I} len = min((${I})${CH}, W2 - j0);
  ${ct} acc[${CH}];
  for (${I} j = 0; j < ${CH}; ++j) acc[j] = 0;
  const ${I} L = O0 * O1 * O2;
  for (${I} k0 = 0; k0 < K0; ++k0) {
    const ${I} t0 = i0 + p0 - k0 * d0;
    if (t0 < 0 || t0 % s0) continue;
    const ${I} o0 = t0 / s0;
    if (o0 >= O0) continue;
    for (${I} k1 = 0; k1 < K1; ++k1) {
      const ${I} t1 = i1 + p1 - k1 * d1;
      if (t1 < 0 || t1 % s1) continue;
      const ${I} o1 = t1 / s1;
      if (o1 >= O1) continue;
      for (${I} k2 = 0; k2 < K2; ++k2) {
        // cols row (n, c, k0, k1, k2) at (o0, o1, o2) adds into i2 = o2 * s2 + off
        const ${I} off = k2 * d2 - p2;
        __global const ${st} *src =
            cols + cols_off + ((nc * K0 + k0) * K1 + k1) * K2 * L + k2 * L + (o0 * O1 + o1) * O2;
        // the o2 landing in [j0, j0 + len): [lo, hi)
        const ${I} a = j0 - off, b = j0 + len - off;  // o2 * s2 in [a, b)
        const ${I} lo = a <= 0 ? 0 : (a + s2 - 1) / s2;
        const ${I} hi = min(O2, b <= 0 ? 0 : (b + s2 - 1) / s2);
        if (s2 == 1) {
          for (${I} o = lo; o < hi; ++o) acc[o + off - j0] += ${h.load(st, ct, "src", "o")};
        } else {
          for (${I} o = lo; o < hi; ++o) acc[o * s2 + off - j0] += ${h.load(st, ct, "src", "o")};
        }
      }
    }
  }
  const ${I} dst = out_off + id / chunks * W2 + j0;
  for (${I} j = 0; j < len; ++j) ${h.store(st, False, "out", "dst + j", "acc[j]")};
}

## Work-item per output element (n, c, i0, i1, i2) where the strides are 1 and the kernel
## window is small (``taps``: its sizes (K0, K1, K2), the walk unrolled): element i gets cols
## row (n, c, k0, k1, k2) at o = i + p - k * d, where o lies inside the outs. Neighbouring
## work-items read neighbouring cols elements, and the body has no loop, so PoCL vectorizes
## the work-group's loop (the row kernel above, a row per work-item summing into a private
## array, stays scalar: conv2d's backward spent 3.2 ms in it, 14x14 images of 16 channels,
## batch 128). The taps add in the row kernel's order (k0, k1, k2): the same rounding. The
## inside test is one unsigned compare per dim, joined by & (&&'s branches kept PoCL from
## vectorizing the kernel at all: 7 ms).
% if taps is not None:
<%
TK = taps[0] * taps[1] * taps[2]
U = "u" + I  # one unsigned compare tests 0 <= o < O
%>
__kernel void cg_conv_fold_taps(
    __global ${st} *restrict out, const ${I} out_off,
    __global const ${st} *restrict cols, const ${I} cols_off,
% for d in range(3):
    const ${I} size${d}, const uint magic${d}, const uint shift${d},
% endfor
    const ${I} O0, const ${I} O1, const ${I} O2,
    const ${I} d0, const ${I} d1, const ${I} d2,
    const ${I} p0, const ${I} p1, const ${I} p2,
    const ${I} items)
{
  if (!${h.in_range("items", I)}) return;
  const ${I} item = get_global_id(0);
  // (size0, size1, size2) = (W2, W1, W0): the element's coordinates, innermost first
  ${I} rem = item;
  ${I} i2, i1, i0;
  { ${h.split(I, 0)} i2 = c; }
  { ${h.split(I, 1)} i1 = c; }
  { ${h.split(I, 2)} i0 = c; }
  const ${I} L = O0 * O1 * O2;
  // (n, c)'s cols rows; a tap outside the outs reads the block's first element, unused
  __global const ${st} *const block = cols + cols_off + rem * ${TK} * L;
  ${ct} acc = 0;
% for k0 in range(taps[0]):
  % for k1 in range(taps[1]):
    % for k2 in range(taps[2]):
  {
    const ${I} o0 = i0 + p0 - ${k0} * d0, o1 = i1 + p1 - ${k1} * d1, o2 = i2 + p2 - ${k2} * d2;
    const bool inside = (${U})o0 < (${U})O0 & (${U})o1 < (${U})O1 & (${U})o2 < (${U})O2;
    const ${ct} v = ${h.load(st, ct, "block", f"inside ? {(k0 * taps[1] + k1) * taps[2] + k2} * L + (o0 * O1 + o1) * O2 + o2 : 0")};
    acc += inside ? v : (${ct})0;
  }
    % endfor
  % endfor
% endfor
  ${h.store(st, False, "out", "out_off + item", "acc")};
}
% endif

## Work-item per window (n, c, o0, o1, o2), the windows in row-major order: it walks its window
## in row-major order and keeps the first largest element or, once it meets NaNs, the last NaN
## (PyTorch's max pooling: val > best || isnan(val); best == best in the test would cost the
## vectorizer 3x), in the compute type; values are stored in the storage type, indices as int (a
## window's index; the caller widens it where it must be int64: half the bytes of long).
## ``window``: the window's sizes (K0, K1, K2), its walk unrolled here (small windows): the body
## has no loop, so PoCL vectorizes the work-group's loop (one work-item per row, walking its row
## in a loop, ran at a third of this); or None: sizes as arguments, and loops.
<% floating = ct in ("float", "double") %>
<%def name="window_params()">
## the windows' positions, merged (launch.merge_dims): per dim, innermost first, its size, the
## size's launch.divisor (magic, shift) and its stride
% for d in range(dims):
    const ${I} size${d}, const uint magic${d}, const uint shift${d}, const ${I} stride${d},
% endfor
% if window is None:
    const ${I} K0, const ${I} K1, const ${I} K2,
% endif
    const ${I} sk0, const ${I} sk1, const ${I} sk2,
    const ${I} windows
</%def>
<%def name="window_start(base)">
  // whole work-groups skip the item test (h.in_range): PoCL vectorizes the group's loop (5x)
  if (!${h.in_range("windows", I)}) return;
  const ${I} item = get_global_id(0);
  ${I} rem = item, w = ${base};
% for d in range(dims - 1):
  {
    ${h.split(I, d)}
    w += c * stride${d};
  }
% endfor
  w += rem * stride${dims - 1};
</%def>
<%def name="walk(visit)">
% if window is None:
    int k = 0;  // (the first element meets itself: taken only if NaN, the same index)
    for (${I} k0 = 0; k0 < K0; ++k0)
      for (${I} k1 = 0; k1 < K1; ++k1)
        for (${I} k2 = 0; k2 < K2; ++k2, ++k)
          ${visit("k0 * sk0 + k1 * sk1 + k2 * sk2", "k")}
% else:
  % for k0 in range(window[0]):
    % for k1 in range(window[1]):
      % for k2 in range(window[2]):
    ${visit(f"{k0} * sk0 + {k1} * sk1 + {k2} * sk2", (k0 * window[1] + k1) * window[2] + k2)}
      % endfor
    % endfor
  % endfor
% endif
</%def>
<%def name="consider(offset, k)">
    {
      const ${ct} v = ${h.load(st, ct, "x", "w + " + offset)};
% if floating:
      const bool take = v > best || v != v;  // (v != v: NaN, see _prelude)
% else:
      const bool take = v > best;
% endif
      best = take ? v : best;
      at = take ? ${k} : at;
    }
</%def>
__kernel void cg_window_max(
    __global ${st} *restrict values, __global int *restrict indices,
    __global const ${st} *restrict x, const ${I} out_off, const ${I} idx_off, const ${I} x_off,
    ${window_params()})
{
  ${window_start("x_off")}
  ${ct} best = ${h.load(st, ct, "x", "w")};
  int at = 0;
  ${walk(consider)}
  ${h.store(st, False, "values", "out_off + item", "best")};
  indices[idx_off + item] = at;
}

## Max pooling's gradient where the windows tile the tensor (each element in exactly one
## window): work-item per window as cg_window_max, whose element at the row-major index
## ``indices`` gets ``grad``, its others 0. Every element is written once: no zeros first, no
## atomics; same geometry arguments as cg_window_max (``win`` is the windows view of ``out``),
## ``grad`` and ``indices`` contiguous (N, C, *outs).
<%def name="put(offset, k)">
    ${h.store(st, False, "out", "w + " + offset, f"at == {k} ? v : ({ct})0")};
</%def>
__kernel void cg_window_put(
    __global ${st} *restrict out, __global const ${st} *restrict grad,
    __global const int *restrict indices, const ${I} g_off, const ${I} idx_off,
    const ${I} out_off, ${window_params()})
{
  ${window_start("out_off")}
  const ${ct} v = ${h.load(st, ct, "grad", "g_off + item")};
  const int at = indices[idx_off + item];
  ${walk(put)}
}
