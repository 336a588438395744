"""Philox4x32-10, the counter-based generator both devices run, so one seed gives one stream.

Element i of a draw that starts at ``offset`` uses counter (offset + i) and the first output
word (a float64 uniform the second word too); the same arithmetic runs in
kernels/random.cl.mako.
"""

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = np.uint64(0xFFFFFFFF)
SHIFT = np.uint64(32)


def philox_bits(seed: int, offset: int, n: int) -> np.ndarray:
    """The first output word of counters offset .. offset + n - 1 (uint32)."""
    return philox_words(seed, offset, n)[0]


def philox_words(seed: int, offset: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first two output words of counters offset .. offset + n - 1 (uint32 each).

    >>> first, second = philox_words(0, 0, 2)
    >>> first.dtype, second.dtype, bool((first == philox_bits(0, 0, 2)).all())
    (dtype('uint32'), dtype('uint32'), True)
    """
    # The four 32-bit words live in uint64 arrays, updated in place: no conversions between
    # uint32 and uint64 in the rounds (2.5x faster for the cpu device's draws)
    c1 = np.arange(offset, offset + n, dtype=np.uint64)
    c0 = c1 & MASK
    c1 >>= SHIFT
    c2 = np.zeros(n, np.uint64)
    c3 = np.zeros(n, np.uint64)
    p0, p1 = np.empty(n, np.uint64), np.empty(n, np.uint64)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for _ in range(10):
        np.multiply(c0, M0, out=p0)  # (32-bit words times 32-bit constants: below 2**64)
        np.multiply(c2, M1, out=p1)
        # c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        np.right_shift(p1, SHIFT, out=c0)
        c0 ^= c1
        c0 ^= np.uint64(k0)
        np.bitwise_and(p1, MASK, out=c1)
        np.right_shift(p0, SHIFT, out=c2)
        c2 ^= c3
        c2 ^= np.uint64(k1)
        np.bitwise_and(p0, MASK, out=c3)
        k0 = (k0 + W0) & 0xFFFFFFFF
        k1 = (k1 + W1) & 0xFFFFFFFF
    return c0.astype(np.uint32), c1.astype(np.uint32)


def uniform_bits(dtype_name: str) -> int:
    """Random bits in a uniform draw stored as ``dtype_name``: as many as its significand holds,
    so every value is exact and below 1 after the store: float64's 53 from a counter's first
    two words (PyTorch's double draws have 53 too), at most 24 from the first word otherwise.

    >>> uniform_bits("float64"), uniform_bits("float32"), uniform_bits("float16")
    (53, 24, 11)
    """
    return {"float16": 11, "bfloat16": 8, "float64": 53}.get(dtype_name, 24)


def normal_bits(dtype_name: str) -> int:
    """Random bits in each uniform a normal draw stored as ``dtype_name`` starts from: a
    double's 52 from two words (53 would make the centred value inexact), 24 otherwise.

    >>> normal_bits("float64"), normal_bits("float32")
    (52, 24)
    """
    return 52 if dtype_name == "float64" else 24


def _draws(seed: int, offset: int, n: int, bits: int) -> np.ndarray:
    """Each counter's top ``bits`` random bits as an integer-valued float64: past 32 bits the
    first word is the top 32 and the second word's top bits the rest (as the kernel's)."""
    if bits > 32:
        high, low = philox_words(seed, offset, n)
        return high.astype(np.float64) * (1 << (bits - 32)) + (low >> np.uint32(64 - bits))
    return (philox_bits(seed, offset, n) >> np.uint32(32 - bits)).astype(np.float64)


def philox_unit(seed: int, offset: int, n: int, bits: int) -> np.ndarray:
    """Uniform floats in [0, 1): the top ``bits`` of each draw, times 2**-bits (exact in any
    float type with that many significand bits, so rounding at the store never gives 1).

    >>> philox_unit(0, 0, 3, 24).dtype, bool((philox_unit(0, 0, 100, 53) < 1).all())
    (dtype('float64'), True)
    """
    return _draws(seed, offset, n, bits) * (1.0 / (1 << bits))


def philox_uniform(seed: int, offset: int, n: int, bits: int = 24) -> np.ndarray:
    """Uniform floats in (0, 1): ``bits`` random bits (``normal_bits``), centred in their
    bucket so log() never sees 0.

    >>> bool((philox_uniform(0, 0, 100, 52) > 0).all())
    True
    """
    return (_draws(seed, offset, n, bits) + 0.5) * (1.0 / (1 << bits))
