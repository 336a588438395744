"""Philox4x32-10, the counter-based generator both devices run, so one seed gives one stream.

Element i of a draw that starts at ``offset`` uses counter (offset + i) and the first output
word (a float64 uniform the second word too); the same arithmetic runs in
kernels/random.cl.mako.
"""

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)


def philox_bits(seed: int, offset: int, n: int) -> np.ndarray:
    """The first output word of counters offset .. offset + n - 1 (uint32)."""
    return philox_words(seed, offset, n)[0]


def philox_words(seed: int, offset: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first two output words of counters offset .. offset + n - 1 (uint32 each)."""
    counter = np.arange(offset, offset + n, dtype=np.uint64)
    c0 = (counter & MASK).astype(np.uint32)
    c1 = (counter >> np.uint64(32)).astype(np.uint32)
    c2 = np.zeros(n, np.uint32)
    c3 = np.zeros(n, np.uint32)
    k0 = np.uint32(seed & 0xFFFFFFFF)
    k1 = np.uint32((seed >> 32) & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = M0 * c0.astype(np.uint64)
            p1 = M1 * c2.astype(np.uint64)
            hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), (p0 & MASK).astype(np.uint32)
            hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), (p1 & MASK).astype(np.uint32)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            k0 = np.uint32(k0 + W0)
            k1 = np.uint32(k1 + W1)
    return c0, c1


def uniform_bits(dtype_name: str) -> int:
    """Random bits in a uniform draw stored as ``dtype_name``: as many as its significand holds,
    so every value is exact and below 1 after the store: float64's 53 from a counter's first
    two words (PyTorch's double draws have 53 too), at most 24 from the first word otherwise.

    >>> uniform_bits("float64"), uniform_bits("float32"), uniform_bits("float16")
    (53, 24, 11)
    """
    return {"float16": 11, "bfloat16": 8, "float64": 53}.get(dtype_name, 24)


def philox_unit(seed: int, offset: int, n: int, bits: int) -> np.ndarray:
    """Uniform floats in [0, 1): the top ``bits`` of each draw, times 2**-bits (exact in any
    float type with that many significand bits, so rounding at the store never gives 1). Past
    32 bits, the first word is the top 32 and the second word's top bits the rest."""
    if bits > 32:
        high, low = philox_words(seed, offset, n)
        draws = high.astype(np.float64) * (1 << (bits - 32)) + (low >> np.uint32(64 - bits))
        return draws * (1.0 / (1 << bits))
    draws = philox_bits(seed, offset, n) >> np.uint32(32 - bits)
    return draws.astype(np.float64) * (1.0 / (1 << bits))


def philox_uniform(seed: int, offset: int, n: int, bits: int = 24) -> np.ndarray:
    """Uniform floats in (0, 1): ``bits`` random bits (24; a double's normal draws take 52 from
    two words, where the centred value is still exact), centred in their bucket so log() never
    sees 0."""
    if bits > 32:
        high, low = philox_words(seed, offset, n)
        draws = high.astype(np.float64) * (1 << (bits - 32)) + (low >> np.uint32(64 - bits))
    else:
        draws = (philox_bits(seed, offset, n) >> np.uint32(32 - bits)).astype(np.float64)
    return (draws + 0.5) * (1.0 / (1 << bits))
