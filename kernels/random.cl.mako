## Philox4x32-10 (Salmon et al. 2011), the same arithmetic as clgrad/backend/philox.py.
##   kind: "uniform" in [0, 1): the top `bits` bits of a draw times 2**-bits, exact in the stored
##         type (a rounding store never gives 1); "normal": Box-Muller over two consecutive
##         counters of centred 24-bit uniforms in (0, 1)
<%include file="_prelude.cl.mako"/>
<%
def store(v):
    return h.store(out_ct, False, "out", "i", v)
%>
inline uint cg_philox(ulong counter, uint k0, uint k1)
{
  uint c0 = (uint)counter, c1 = (uint)(counter >> 32), c2 = 0, c3 = 0;
  for (int r = 0; r < 10; ++r) {
    const uint hi0 = mul_hi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const uint hi1 = mul_hi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    const uint n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return c0;
}

inline ${acc} cg_uniform(ulong counter, uint k0, uint k1)
{
  return ((${acc})(cg_philox(counter, k0, k1) >> 8) + (${acc})0.5) * (${acc})(1.0 / 16777216.0);
}

__kernel void cg_random(__global ${out_ct} *out, const ulong out_off, const uint k0, const uint k1,
                        const ulong offset, const ulong n)
{
  for (ulong j = get_global_id(0); j < n; j += get_global_size(0)) {
    const ulong i = out_off + j;
% if kind == "normal":
    const ${acc} u1 = cg_uniform(offset + 2 * j, k0, k1), u2 = cg_uniform(offset + 2 * j + 1, k0, k1);
    ${store(f"sqrt(({acc})-2 * log(u1)) * cos(({acc})6.283185307179586 * u2)")};
% else:
    ${store(f"(({acc})(cg_philox(offset + j, k0, k1) >> {32 - bits}) * ({acc})({1.0 / (1 << bits)!r}))")};
% endif
  }
}
