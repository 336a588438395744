## cdist's distances in one pass: out[b, i, j] = the p-norm over m of x1[b, i, m] - x2[b, j, m],
## a work-item per output element (grid-stride), no (P, R, M) array of differences.
##
## out is contiguous (B, P, R) from out_off; x1 (B, P, M) and x2 (B, R, M) are strided views.
## norm picks the code: "zero" (how many coordinates differ; a NaN makes it NaN, as PyTorch's
## min(ceil(|d|), 1)), "one" (sum of |d|),
## "two" (root of the summed squares, as PyTorch's), "inf" (the largest |d|: a NaN is passed
## over, as PyTorch's max(agg, d) does), "three" (cubes multiplied out) or "p" (the sum of
## |d|^p to the power 1/p, p an argument).
##
## Params: norm, st (storage type of x1, x2 and out), ct (compute type), index_t, fp64.
<%
I = index_t

def load(ptr, idx):
    return h.load(st, ct, ptr, idx)
%>
__kernel void cg_cdist(
    __global ${st} *restrict out, const ${I} out_off,
    __global const ${st} *restrict x1, const ${I} x1_off,
    const ${I} s1b, const ${I} s1p, const ${I} s1m,
    __global const ${st} *restrict x2, const ${I} x2_off,
    const ${I} s2b, const ${I} s2r, const ${I} s2m,
    const ${I} P, const ${I} R, const ${I} M, const ${ct} p, const ${I} n)
{
  for (${I} e = get_global_id(0); e < n; e += get_global_size(0)) {
    const ${I} q = e / R, j = e - q * R;
    const ${I} b = q / P, i = q - b * P;
    const ${I} a0 = x1_off + b * s1b + i * s1p, c0 = x2_off + b * s2b + j * s2r;
    ${ct} acc = 0;
    for (${I} m = 0; m < M; m++) {
      const ${ct} d = ${load("x1", "a0 + m * s1m")} - ${load("x2", "c0 + m * s2m")};
      // |d| by a compare, not fabs: on a CPU device a builtin may be a library call, and one
      // call keeps the work-group's loop from being vectorized (p = 1 ran 5x slower than p = 2)
      const ${ct} ad = d < 0 ? -d : d;
% if norm == "zero":
      acc += d != d ? d : d != 0 ? (${ct})1 : (${ct})0;
% elif norm == "one":
      acc += ad;
% elif norm == "two":
      acc += d * d;
% elif norm == "inf":
      acc = ad > acc ? ad : acc;
% elif norm == "three":
      acc += ad * ad * ad;
% else:
      // |d|^p through the prelude's log2 and exp2 (polynomials on CPU devices: libm's pow is
      // a call there, 80 ns an element); |d| = 0 gives exp2(-inf) = 0
      acc += cg_exp2_${ct}(p * cg_log2_${ct}(ad));
% endif
    }
% if norm == "two":
    acc = sqrt(acc);
% elif norm in ("three", "p"):
    acc = pow(acc, (${ct})1 / p);
% endif
    ${h.store(st, False, "out", "out_off + e", "acc")};
  }
}
