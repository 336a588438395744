## Shared by every template: extensions and the helpers an expression may call. (The helpers
## the templates' own Python shares are `h`: clgrad/backend/opencl/template_helpers.py, which
## render.py passes to every render.)
## double only where the device runs it; half is stored with vload_half/vstore_half (core 1.2)
## and computed in float, so no cl_khr_fp16 is needed.
% if fp64:
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
// Python semantics: floor division and a remainder with the divisor's sign. Division by
// zero gives 0 and INT_MIN / -1 wraps, instead of trapping the device as plain C would.
#define CG_INT_HELPERS(T) \
  inline T cg_floordiv_##T(T a, T b) { \
    if (b == 0) return 0; \
    if (b == -1) return (T)(0 - a); \
    T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; } \
  inline T cg_mod_##T(T a, T b) { \
    if (b == 0 || b == -1) return 0; \
    T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; } \
  inline T cg_pow_##T(T a, T b) { \
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0); \
    T r = 1; while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; }
CG_INT_HELPERS(char)
CG_INT_HELPERS(short)
CG_INT_HELPERS(int)
CG_INT_HELPERS(long)
inline uchar cg_floordiv_uchar(uchar a, uchar b) { return b ? a / b : 0; }
inline uchar cg_mod_uchar(uchar a, uchar b) { return b ? a % b : 0; }
inline uchar cg_pow_uchar(uchar a, uchar b) {
  uchar r = 1; while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; }
// pow: the exponents of x**2, x**3 and their gradients multiply, as PyTorch's CPU kernels do
// (the same values: pow rounds no better, and costs 30x a product on PoCL)
#define CG_FLOAT_HELPERS(T) \
  inline T cg_floordiv_##T(T a, T b) { return floor(a / b); } \
  inline T cg_mod_##T(T a, T b) { T r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; } \
  inline T cg_pow_##T(T a, T b) { \
    if (b == (T)2) return a * a; \
    if (b == (T)3) return a * a * a; \
    if (b == (T)1) return a; \
    return pow(a, b); } \
  inline T cg_sign_##T(T a) { return a > 0 ? (T)1 : (a < 0 ? (T)-1 : a); } \
  inline T cg_round_##T(T a) { return rint(a); } \
  inline T cg_sigmoid_##T(T a) { return a >= 0 ? (T)1 / ((T)1 + exp(-a)) : exp(a) / ((T)1 + exp(a)); } \
  inline T cg_softplus_##T(T a) { return a > (T)20 ? a : log1p(exp(a)); } \
  inline T cg_gelu_##T(T a) { return (T)0.5 * a * ((T)1 + erf(a * (T)0.70710678118654752440)); }
CG_FLOAT_HELPERS(float)
% if fp64:
CG_FLOAT_HELPERS(double)
% endif
// C's fmod for integers (the sign of the dividend); a zero divisor gives 0 (the front end
// raises first) and INT_MIN % -1 is 0 instead of a trap.
#define CG_INT_FMOD(T) inline T cg_fmod_##T(T a, T b) { return (b == 0 || b == (T)-1) ? (T)0 : a % b; }
CG_INT_FMOD(char)
CG_INT_FMOD(short)
CG_INT_FMOD(int)
CG_INT_FMOD(long)
inline uchar cg_fmod_uchar(uchar a, uchar b) { return b ? a % b : 0; }
// log(exp(a) + exp(b)) and its base-2 form as PyTorch computes them: equal infinities give
// themselves (inf - inf would be NaN), else the larger plus log1p of the smaller's share.
#define CG_FLOAT_HELPERS_2(T) \
  inline T cg_fmod_##T(T a, T b) { return fmod(a, b); } \
  inline T cg_logaddexp_##T(T a, T b) { \
    if (isinf(a) && a == b) return a; \
    T m = a > b ? a : b; return m + log1p(exp(-fabs(a - b))); } \
  inline T cg_logaddexp2_##T(T a, T b) { \
    if (isinf(a) && a == b) return a; \
    T m = a > b ? a : b; return m + log1p(exp2(-fabs(a - b))) * (T)1.44269504088896340736; }
CG_FLOAT_HELPERS_2(float)
% if fp64:
CG_FLOAT_HELPERS_2(double)
% endif
