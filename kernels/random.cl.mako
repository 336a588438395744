## Philox4x32-10 (Salmon et al. 2011), the same arithmetic as clgrad/backend/philox.py.
##   kind: "uniform" in [0, 1): the top `bits` bits of a draw times 2**-bits, exact in the stored
##         type (a rounding store never gives 1; past 32 bits, the first word is the top 32 and
##         the second word's top bits the rest); "normal": Box-Muller over two consecutive
##         counters of centred uniforms in (0, 1), 24-bit (52-bit for a double's); "bits": the draw's 32 bits as an
##         integer in [0, 2**32) (randint's raw material)
##   grid_stride: a loop over n with as many work-items as fill a GPU; on CPU devices one
##     work-item per element (a loop in the body stops PoCL vectorizing: rand ran at 20 ns an
##     element), where Box-Muller's log and cos are float polynomials (cg_log_float,
##     cg_cos_2pi_f32: randn's last bits differ from other devices'). On every device Philox's
##     32x32 -> 64-bit products are written out (mul_hi is a call on PoCL).
<%
def store(v):
    return h.store(out_ct, False, "out", "i", v)
%>
static inline uint2 cg_philox2(ulong counter, uint k0, uint k1)
{
  uint c0 = (uint)counter, c1 = (uint)(counter >> 32), c2 = 0, c3 = 0;
  for (int r = 0; r < 10; ++r) {
    const ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
    const uint hi0 = (uint)(p0 >> 32), lo0 = (uint)p0;
    const uint hi1 = (uint)(p1 >> 32), lo1 = (uint)p1;
    const uint n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return (uint2)(c0, c1);
}

static inline uint cg_philox(ulong counter, uint k0, uint k1)
{
  return cg_philox2(counter, k0, k1).x;
}

% if normal_bits > 32:
// a double's: normal_bits (52) bits, the first word's 32 and the second's top ones (52, not
// 53: the centred value is then exact in a double, so host and device agree to the bit)
static inline double cg_uniform(ulong counter, uint k0, uint k1)
{
  const uint2 words = cg_philox2(counter, k0, k1);
  const ulong draw = ((ulong)words.x << ${normal_bits - 32}) | (words.y >> ${64 - normal_bits});
  return ((double)draw + 0.5) * ${repr(1.0 / (1 << normal_bits))};
}
% else:
static inline ${acc} cg_uniform(ulong counter, uint k0, uint k1)
{
  return ((${acc})(cg_philox(counter, k0, k1) >> 8) + (${acc})0.5) * (${acc})(1.0 / 16777216.0);
}
% endif

% if kind == "normal" and acc == "float":
#ifdef CG_POLY_MATH
// cos(2 pi u) for u in (0, 1): u - q / 4 (q the nearest quarter turn, exact) is within an
// eighth of a turn, where Cephes' sinf and cosf polynomials hold; q picks which and the sign
static inline float cg_cos_2pi_f32(float u) {
  const float q = cg_rint_float(u * 4.0f) * 0.25f;
  const int quadrant = (int)(q * 4.0f) & 3;
  const float x = (u - q) * 6.28318530717958648f, z = x * x;
  const float s = x + x * z * ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f);
  const float c = 1.0f - 0.5f * z
      + z * z * ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f);
  return quadrant == 0 ? c : (quadrant == 1 ? -s : (quadrant == 2 ? -c : s));
}
#define CG_BOX_MULLER(u1, u2) (cg_sqrt_float(-2.0f * cg_log_float(u1)) * cg_cos_2pi_f32(u2))
#else
#define CG_BOX_MULLER(u1, u2) (sqrt(-2.0f * log(u1)) * cos(6.28318530717958648f * (u2)))
#endif
% endif

__kernel void cg_random(__global ${out_ct} *out, const ulong out_off, const uint k0, const uint k1,
                        const ulong offset, const ulong n)
{
% if grid_stride:
  for (ulong j = get_global_id(0); j < n; j += get_global_size(0)) {
% else:
  const ulong j = get_global_id(0);
  if (${h.in_range("n", "ulong")}) {  // (whole work-groups skip the item test: h.in_range)
% endif
    const ulong i = out_off + j;
% if kind == "normal":
    const ${acc} u1 = cg_uniform(offset + 2 * j, k0, k1), u2 = cg_uniform(offset + 2 * j + 1, k0, k1);
  % if acc == "float":
    ${store("CG_BOX_MULLER(u1, u2)")};
  % else:
    ${store(f"sqrt(({acc})-2 * log(u1)) * cos(({acc})6.283185307179586 * u2)")};
  % endif
% elif kind == "bits":
    ${store("cg_philox(offset + j, k0, k1)")};
% elif bits > 32:
    const uint2 words = cg_philox2(offset + j, k0, k1);
    const ulong draw = ((ulong)words.x << ${bits - 32}) | (words.y >> ${64 - bits});
    ${store(f"(({acc})draw * ({acc})({1.0 / (1 << bits)!r}))")};
% else:
    ${store(f"(({acc})(cg_philox(offset + j, k0, k1) >> {32 - bits}) * ({acc})({1.0 / (1 << bits)!r}))")};
% endif
  }
}
