## Shared by every template: extensions and the helpers an expression may call, put before each
## template's source by render.py. (The helpers the templates' own Python shares are `h`:
## clgrad/backend/opencl/template_helpers.py, which render.py passes to every render.)
## helper_types: the C types whose helpers are defined, those the source after this prelude
## names (cg_<fn>_<type>): a helper's definition costs its parse in every program's build
## (a third of a small program's build on PoCL), and a program names one or two types.
## double only where the device runs it; half is stored with vload_half/vstore_half (core 1.2)
## and computed in float, so no cl_khr_fp16 is needed.
% if fp64:
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
// The helpers built on other helpers that PoCL's inliner left as calls (softplus and
// logaddexp on log1p and exp, gelu on erf, erf on exp) are inlined always: past LLVM's size
// threshold one stays a call, and PoCL then leaves the whole work-group loop scalar (softplus
// ran at a fifteenth of exp's speed). Marking every helper so made exp itself slower: only
// where measured.
// Every helper of every template is `static inline`: a plain `inline` function is C99's inline
// definition only, which a compiler that keeps the call (NVIDIA's with -cl-opt-disable:
// CLGRAD_BUILD_OPT=0) cannot link ("Unresolved extern function").
#define CG_INLINE static inline __attribute__((always_inline))
// Comparisons and selects, not the builtins isnan, isinf, fabs, fmax, fmin: PoCL implements
// those as library calls, which keep its compiler from vectorizing a work-group (max pooling
// ran 3.5x slower with isnan, fabs and fmax cost 2x a copy). x != x holds for NaN only,
// x == INFINITY for +inf; no build uses fast-math, so neither is folded away.
// Python semantics: floor division and a remainder with the divisor's sign. Division by
// zero gives 0 and INT_MIN / -1 wraps, instead of trapping the device as plain C would.
#define CG_INT_HELPERS(T) \
  static inline T cg_floordiv_##T(T a, T b) { \
    if (b == 0) return 0; \
    if (b == -1) return (T)(0 - a); \
    T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; } \
  static inline T cg_mod_##T(T a, T b) { \
    if (b == 0 || b == -1) return 0; \
    T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; } \
  static inline T cg_pow_##T(T a, T b) { \
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0); \
    T r = 1; while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; } \
  CG_INT_ROUNDING(T)
// an integer is whole: the rounding ops' expressions compile in the integer programs that
// bundle every op of a type signature (the ops themselves return a copy for integers); so do
// pow's variants for the exponents 0.5 and -0.5, which an integer program never runs (a
// fractional exponent makes the result floating): the root's integer part, or its reciprocal's
#define CG_INT_ROUNDING(T) \
  static inline T cg_floor_##T(T x) { return x; } \
  static inline T cg_ceil_##T(T x) { return x; } \
  static inline T cg_trunc_##T(T x) { return x; } \
  static inline T cg_rint_##T(T x) { return x; } \
  static inline T cg_sqrt_##T(T x) { return (T)sqrt((float)x); } \
  static inline T cg_rsqrt_##T(T x) { return (T)rsqrt((float)x); }
% for T in ("char", "short", "int", "long"):
  % if T in helper_types:
CG_INT_HELPERS(${T})
  % endif
% endfor
% if "uchar" in helper_types:
static inline uchar cg_floordiv_uchar(uchar a, uchar b) { return b ? a / b : 0; }
static inline uchar cg_mod_uchar(uchar a, uchar b) { return b ? a % b : 0; }
static inline uchar cg_pow_uchar(uchar a, uchar b) {
  uchar r = 1; while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; }
CG_INT_ROUNDING(uchar)
% endif
// ---- exp, log and the functions built on them: cg_<fn>_<T>, what every expression calls ------
// On CPU devices (CG_POLY_MATH, defined by the runtime for devices that are not GPUs) float's
// are plain arithmetic and bit tricks, as SLEEF and Cephes write them: PoCL turns a kernel's
// loop over work-items into vector code, but a call into libm is a scalar call it cannot
// widen (exp ran at a tenth of a + b's bandwidth). GPU drivers have fast native exp and log,
// so there, and for double everywhere, the helpers are libm's.
% if "float" in helper_types:
#ifdef CG_POLY_MATH
#define CG_LOG2E_F 1.44269504088896341f
// ln 2 in two parts (Cody-Waite): the high part has 9 significant bits, so k * CG_LN2_HI_F is
// exact for every |k| < 2^15 and x - k ln 2 loses nothing, with or without fma
#define CG_LN2_HI_F 0.693359375f
#define CG_LN2_LO_F -2.12194440e-4f
// round to nearest without rint (a libm call on some drivers): adding 1.5 * 2^23 leaves the
// integer part in the low mantissa bits, valid for |x| < 2^22
#define CG_ROUND_MAGIC_F 12582912.0f
// x limited to [lo, hi], NaN kept. Both tests read x: a select of a select (the usual form)
// crashes Mesa's llvmpipe on a float converted from char, and fmin/fmax are calls on PoCL.
static inline float cg_clamp_f32(float x, float lo, float hi) {
  float y = x > hi ? hi : x;
  return x < lo ? lo : y;
}
// 2^k for -126 <= k <= 127, straight into the exponent field
static inline float cg_pow2i_f32(int k) { return as_float((k + 127) << 23); }
// exp(r) - 1 for |r| <= ln2 / 2: Cephes' expf minimax polynomial (r + r^2 P(r), so the
// relative error stays ~1 ulp as r goes to 0: expm1 uses it as it is)
static inline float cg_expm1_reduced_f32(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * (r * r) + r;
}
// x = k ln2 + r with |r| <= ln2 / 2, for x in [-104, 89] (callers clamp): returns r, sets k
static inline float cg_reduce_ln2_f32(float x, int *k) {
  float t = x * CG_LOG2E_F + CG_ROUND_MAGIC_F;
  *k = as_int(t) - as_int(CG_ROUND_MAGIC_F);
  float kf = t - CG_ROUND_MAGIC_F;
  return (x - kf * CG_LN2_HI_F) - kf * CG_LN2_LO_F;
}
// (1 + p) * 2^k for k in [-151, 129], in two exponent steps so that a result in the
// denormals is rounded once and 2^128 overflows to inf as exp does
static inline float cg_scale_f32(float one_plus_p, int k) {
  int k1 = k >> 1;
  return one_plus_p * cg_pow2i_f32(k1) * cg_pow2i_f32(k - k1);
}
static inline float cg_exp_float(float x) {
  // past 89 the result is inf, below -104 it is 0: clamping keeps k in range
  float xc = cg_clamp_f32(x, -104.0f, 89.0f);
  int k;
  float r = cg_reduce_ln2_f32(xc, &k);
  float y = cg_scale_f32(cg_expm1_reduced_f32(r) + 1.0f, k);
  return x != x ? x : y;
}
static inline float cg_exp2_float(float x) {
  float xc = cg_clamp_f32(x, -151.0f, 129.0f);
  float t = xc + CG_ROUND_MAGIC_F;
  int k = as_int(t) - as_int(CG_ROUND_MAGIC_F);
  float r = (xc - (t - CG_ROUND_MAGIC_F)) * 0.693147180559945309f;  // exact difference
  float y = cg_scale_f32(cg_expm1_reduced_f32(r) + 1.0f, k);
  return x != x ? x : y;
}
static inline float cg_expm1_float(float x) {
  // below -18 the result rounds to -1; past 89 it is inf
  float xc = cg_clamp_f32(x, -18.0f, 89.0f);
  int k;
  float r = cg_reduce_ln2_f32(xc, &k);
  float p = cg_expm1_reduced_f32(r);
  // 2^k (1 + p) - 1 = 2^k p + (2^k - 1): exact scalings and one rounding, while 2^k is a
  // normal float; at k = 128 the -1 no longer matters
  float s = cg_pow2i_f32(k < 127 ? k : 127);
  float y = k < 128 ? s * p + (s - 1.0f) : cg_scale_f32(p + 1.0f, k);
  return (x != x || x == 0.0f) ? x : y;  // NaN, and -0 keeps its sign
}
// log(m) - f with m = 1 + f in [sqrt(1/2), sqrt(2)), split out so log2 can add the exponent
// exactly: x = 2^e m for a positive finite x (a denormal is scaled up first)
static inline float cg_log_reduce_f32(float x, float *f, float *e) {
  int sub = x < 1.17549435e-38f;
  int ix = as_int(sub ? x * 8388608.0f : x);
  // subtracting sqrt(1/2)'s bits puts m's range at [sqrt(1/2), sqrt(2)) (musl's logf)
  ix += 0x3f800000 - 0x3f3504f3;
  *e = (float)((ix >> 23) - 127 - (sub ? 23 : 0));
  float g = as_float((ix & 0x007fffff) + 0x3f3504f3) - 1.0f;
  *f = g;
  // Cephes' logf polynomial: log(1 + g) = g - g^2 / 2 + g^3 P(g)
  float z = g * g;
  float p = 7.0376836292e-2f;
  p = p * g - 1.1514610310e-1f;
  p = p * g + 1.1676998740e-1f;
  p = p * g - 1.2420140846e-1f;
  p = p * g + 1.4249322787e-1f;
  p = p * g - 1.6668057665e-1f;
  p = p * g + 2.0000714765e-1f;
  p = p * g - 2.4999993993e-1f;
  p = p * g + 3.3333331174e-1f;
  return p * g * z - 0.5f * z;
}
// the result where x is not a positive finite number: NaN below 0, -inf at 0, inf at inf
static inline float cg_log_special_f32(float x, float y) {
  return x > 0.0f ? (x == INFINITY ? x : y) : (x == 0.0f ? -INFINITY : NAN);
}
static inline float cg_log_float(float x) {
  float f, e;
  float q = cg_log_reduce_f32(x, &f, &e);
  float y = (e * CG_LN2_LO_F + q + f) + e * CG_LN2_HI_F;
  return x != x ? x : cg_log_special_f32(x, y);
}
static inline float cg_log2_float(float x) {
  float f, e;
  float q = cg_log_reduce_f32(x, &f, &e);
  float y = e + (f + q) * CG_LOG2E_F;  // exact at powers of 2 (f = q = 0)
  return x != x ? x : cg_log_special_f32(x, y);
}
static inline float cg_log1p_float(float x) {
  // log(u) + c / u, u = 1 + x rounded and c its rounding error (exact: Fast2Sum, the larger
  // operand first), so log1p(x) = log(u + c) = log(u) + log1p(c / u); where u rounds to 1 it
  // is x, and -0 stays -0
  float u = 1.0f + x;
  float c = x > 1.0f ? 1.0f - (u - x) : x - (u - 1.0f);
  float y = cg_log_float(u) + c / u;
  return (u == 1.0f || x == INFINITY) ? x : (u == 0.0f ? -INFINITY : y);
}
static inline float cg_tanh_float(float x) {
  // expm1(2a) / (expm1(2a) + 2) with a = |x| stays accurate near 0; from 10 on it is 1.
  // (Selects, not fabs and copysign: PoCL calls those, which stops its vectorizer.)
  float a = cg_clamp_f32(x < 0.0f ? -x : x, 0.0f, 10.0f);
  float e = cg_expm1_float(a + a);
  float t = e / (e + 2.0f);
  return x < 0.0f ? -t : t;
}
// floor, ceil, trunc and rint without their library calls (floor ran at a third, rint at a
// tenth of a + b's speed on PoCL). From 2^23 on a float is whole (and inf and NaN are
// themselves); below, the int conversion truncates and the sign bit is put back (-0.5 gives
// -0.0), and rint adds and subtracts 2^23, which rounds half to even as the FPU does.
static inline float cg_trunc_float(float x) {
  float t = as_float(as_uint((float)(int)x) | (as_uint(x) & 0x80000000u));
  return (x < 8388608.0f && x > -8388608.0f) ? t : x;
}
static inline float cg_floor_float(float x) {
  float t = cg_trunc_float(x);
  return t > x ? t - 1.0f : t;
}
static inline float cg_ceil_float(float x) {
  float t = cg_trunc_float(x);
  return t < x ? t + 1.0f : t;
}
static inline float cg_rint_float(float x) {
  float m = x < 0.0f ? -8388608.0f : 8388608.0f;
  float r = as_float(as_uint((x + m) - m) | (as_uint(x) & 0x80000000u));
  return (x < 8388608.0f && x > -8388608.0f) ? r : x;
}
// erf(x) = x T(x^2) for |x| < 1 (Cephes' erff)
static inline float cg_erf_small_f32(float x) {
  float z = x * x;
  float p = 7.853861353153693e-5f;
  p = p * z - 8.010193625184903e-4f;
  p = p * z + 5.188327685732524e-3f;
  p = p * z - 2.685381193529856e-2f;
  p = p * z + 1.128358514861418e-1f;
  p = p * z - 3.761262582423300e-1f;
  p = p * z + 1.128379165726710f;
  return x * p;
}
// erfc(a) for a >= 1: exp(-a^2) / a * P(1 / a^2), Cephes' erfcf (P below 2, R from 2 on; both
// computed, one selected: a branch would stop the vectorizer). exp(-a^2) comes from a split
// a = head + tail, head of 12 bits so that head^2 is exact (rounding a^2 itself would cost up
// to ~50 ulp near a = 9): exp(-head^2) exp(-d), d = tail (a + head) < 0.1, the second factor
// a polynomial (a second exp made the body too large for PoCL's vectorizer: 6x slower).
// From a = 10 on it is 0 (erfc(10) is float's least denormal).
CG_INLINE float cg_erfc_large_f32(float a) {
  float ac = a < 10.0f ? a : 10.0f;
  float head = as_float(as_uint(ac) & 0xfffff000u);
  float tail = ac - head;
  float e = cg_exp_float(-head * head) * (1.0f + cg_expm1_reduced_f32(-tail * (ac + head)));
  float q = 1.0f / ac;
  float w = q * q;
  float p = 2.326819970068386e-2f;
  p = p * w - 1.387039388740657e-1f;
  p = p * w + 3.687424674597105e-1f;
  p = p * w - 5.824733027278666e-1f;
  p = p * w + 6.210004621745983e-1f;
  p = p * w - 4.944515323274145e-1f;
  p = p * w + 3.404879937665872e-1f;
  p = p * w - 2.741127028184656e-1f;
  p = p * w + 5.638259427386472e-1f;
  float r = -1.047766399936249e+1f;
  r = r * w + 1.297719955372516e+1f;
  r = r * w - 7.495518717768503f;
  r = r * w + 2.921019019210786f;
  r = r * w - 1.015265279202700f;
  r = r * w + 4.218463358204948e-1f;
  r = r * w - 2.820767439740514e-1f;
  r = r * w + 5.641895067754075e-1f;
  return a < 10.0f ? e * q * (ac < 2.0f ? p : r) : 0.0f;
}
CG_INLINE float cg_erf_float(float x) {
  float a = x < 0.0f ? -x : x;
  float big = 1.0f - cg_erfc_large_f32(a < 1.0f ? 1.0f : a);
  float y = a < 1.0f ? cg_erf_small_f32(x) : (x < 0.0f ? -big : big);
  return x != x ? x : y;
}
CG_INLINE float cg_erfc_float(float x) {
  float a = x < 0.0f ? -x : x;
  float e = cg_erfc_large_f32(a < 1.0f ? 1.0f : a);
  float y = a < 1.0f ? 1.0f - cg_erf_small_f32(x) : (x < 0.0f ? 2.0f - e : e);
  return x != x ? x : y;
}
#endif
% endif
// libm's: double everywhere, float where the driver's are fast (GPUs)
#define CG_LIBM_HELPERS(T) \
  static inline T cg_exp_##T(T x) { return exp(x); } \
  static inline T cg_exp2_##T(T x) { return exp2(x); } \
  static inline T cg_expm1_##T(T x) { return expm1(x); } \
  static inline T cg_log_##T(T x) { return log(x); } \
  static inline T cg_log2_##T(T x) { return log2(x); } \
  static inline T cg_log1p_##T(T x) { return log1p(x); } \
  static inline T cg_tanh_##T(T x) { return tanh(x); } \
  static inline T cg_erf_##T(T x) { return erf(x); } \
  static inline T cg_erfc_##T(T x) { return erfc(x); } \
  static inline T cg_trunc_##T(T x) { return trunc(x); } \
  static inline T cg_floor_##T(T x) { return floor(x); } \
  static inline T cg_ceil_##T(T x) { return ceil(x); } \
  static inline T cg_rint_##T(T x) { return rint(x); }
% if "float" in helper_types:
#ifndef CG_POLY_MATH
CG_LIBM_HELPERS(float)
#endif
// sqrt: on CPU devices clang's builtin (one instruction, which the vectorizer widens) where
// OpenCL's sqrt is a library call on PoCL (3x slower); both are correctly rounded. rsqrt as
// 1 / sqrt there (two roundings: within OpenCL's 2 ulp, and PyTorch's own formula).
#if defined(CG_POLY_MATH) && defined(__clang__)
static inline float cg_sqrt_float(float x) { return __builtin_sqrtf(x); }
static inline float cg_rsqrt_float(float x) { return 1.0f / __builtin_sqrtf(x); }
#else
static inline float cg_sqrt_float(float x) { return sqrt(x); }
static inline float cg_rsqrt_float(float x) { return rsqrt(x); }
#endif
% endif
% if fp64 and "double" in helper_types:
static inline double cg_sqrt_double(double x) { return sqrt(x); }
static inline double cg_rsqrt_double(double x) { return rsqrt(x); }
CG_LIBM_HELPERS(double)
% endif
// gelu as x erfc(-x / sqrt 2) / 2: the same value as x (1 + erf(x / sqrt 2)) / 2 without its
// cancellation where erf nears -1 (for x < -3 that form keeps few correct digits).
// pow: the exponents of x**2, x**3 and their gradients multiply, as PyTorch's CPU kernels do
// (the same values: pow rounds no better, and costs 30x a product on PoCL)
// floordiv: ATen's div_floor_floating (Python's float //): the quotient of a - fmod(a, b),
// not floor(a / b), which rounds up where a / b rounds to a whole number (1.0 // 0.001 is 999)
#define CG_FLOAT_HELPERS(T) \
  CG_INLINE T cg_floordiv_##T(T a, T b) { \
    if (b == (T)0) return a / b; \
    T m = fmod(a, b), d = (a - m) / b; \
    if (m != (T)0 && ((b < (T)0) != (m < (T)0))) d -= (T)1; \
    if (d == (T)0) return copysign((T)0, a / b); \
    T f = cg_floor_##T(d); return d - f > (T)0.5 ? f + (T)1 : f; } \
  CG_INLINE T cg_mod_##T(T a, T b) { T r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; } \
  CG_INLINE T cg_pow_##T(T a, T b) { \
    if (b == (T)2) return a * a; \
    if (b == (T)3) return a * a * a; \
    if (b == (T)1) return a; \
    return pow(a, b); } \
  CG_INLINE T cg_sign_##T(T a) { return a > 0 ? (T)1 : (a < 0 ? (T)-1 : a); } \
  CG_INLINE T cg_round_##T(T a) { return cg_rint_##T(a); } \
  CG_INLINE T cg_sigmoid_##T(T a) { \
    T e = cg_exp_##T(a > 0 ? -a : a); return (a >= 0 ? (T)1 : e) / ((T)1 + e); } \
  CG_INLINE T cg_softplus_##T(T a) { return a > (T)20 ? a : cg_log1p_##T(cg_exp_##T(a)); } \
  CG_INLINE T cg_gelu_##T(T a) { return (T)0.5 * a * cg_erfc_##T(a * (T)-0.70710678118654752440); }
% if "float" in helper_types:
CG_FLOAT_HELPERS(float)
% endif
% if fp64 and "double" in helper_types:
CG_FLOAT_HELPERS(double)
% endif
// C's fmod for integers (the sign of the dividend); a zero divisor gives 0 (the front end
// raises first) and INT_MIN % -1 is 0 instead of a trap.
#define CG_INT_FMOD(T) static inline T cg_fmod_##T(T a, T b) { return (b == 0 || b == (T)-1) ? (T)0 : a % b; }
% for T in ("char", "short", "int", "long"):
  % if T in helper_types:
CG_INT_FMOD(${T})
  % endif
% endfor
% if "uchar" in helper_types:
static inline uchar cg_fmod_uchar(uchar a, uchar b) { return b ? a % b : 0; }
% endif
// log(exp(a) + exp(b)) and its base-2 form as PyTorch computes them: equal infinities give
// themselves (inf - inf would be NaN), else the larger plus log1p of the smaller's share.
#define CG_FLOAT_HELPERS_2(T) \
  static inline T cg_fmod_##T(T a, T b) { return fmod(a, b); } \
  CG_INLINE T cg_logaddexp_##T(T a, T b) { \
    if (a == b && (a == INFINITY || a == -INFINITY)) return a; \
    T m = a > b ? a : b; return m + cg_log1p_##T(cg_exp_##T(a > b ? b - a : a - b)); } \
  CG_INLINE T cg_logaddexp2_##T(T a, T b) { \
    if (a == b && (a == INFINITY || a == -INFINITY)) return a; \
    T m = a > b ? a : b; return m + cg_log1p_##T(cg_exp2_##T(a > b ? b - a : a - b)) * (T)1.44269504088896340736; }
% if "float" in helper_types:
CG_FLOAT_HELPERS_2(float)
% endif
% if fp64 and "double" in helper_types:
CG_FLOAT_HELPERS_2(double)
% endif
// bfloat16 (storage type bf16): a float's high 16 bits, computed in float. Widening is a shift;
// narrowing rounds to nearest even (adding 0x7FFF plus the kept part's last bit carries into
// the kept bits exactly past half, or at half with them odd), and a NaN keeps its sign and top
// payload with the quiet bit set (the add could carry a NaN into infinity). The typedef is
// always there: a raw copy names the type without a helper.
typedef ushort bf16;
% if "bf16" in helper_types:
CG_INLINE float cg_widen_bf16(ushort b) { return as_float((uint)b << 16); }
CG_INLINE ushort cg_narrow_bf16(float f) {
  const uint u = as_uint(f);
  return (ushort)(f != f ? (u >> 16) | 0x40u : (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16); }
## (spelled out, not pasted by a macro: the lean build declares the builtins the source names)
  % for N in (2, 4, 8, 16):
CG_INLINE float${N} cg_widen${N}_bf16(ushort${N} b) { return as_float${N}(convert_uint${N}(b) << 16); }
CG_INLINE ushort${N} cg_narrow${N}_bf16(float${N} f) {
  const uint${N} u = as_uint${N}(f);
  return convert_ushort${N}(select((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, (u >> 16) | 0x40u,
                                as_uint${N}(f != f))); }
  % endfor
% endif
