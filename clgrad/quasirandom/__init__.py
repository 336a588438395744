"""``torch.quasirandom``: ``SobolEngine``, Sobol' low-discrepancy sequences as PyTorch draws
them.

The direction numbers are S. Joe and F. Y. Kuo's (``new-joe-kuo-6.21201``, the set torch uses),
read from ``_sobol_direction_numbers.npz`` beside this module (``tools/make_sobol_table.py``
made it and checked it against torch's own state), so every one of torch's 21201 dimensions is
here and unscrambled draws equal torch's exactly. Scrambling is torch's algorithm (a random
lower-triangular binary matrix applied to each dimension's direction numbers, then a random
digital shift), its random bits drawn from clgrad's generator, whose numbers differ from
torch's: scrambled points are as good as torch's, not the same ones.

>>> import clgrad.quasirandom
>>> clgrad.quasirandom.SobolEngine(2).draw(4)
tensor([[0.0000, 0.0000],
        [0.5000, 0.5000],
        [0.7500, 0.2500],
        [0.2500, 0.7500]])
"""

from __future__ import annotations

import functools
import os

import numpy as np

from .. import dtypes as _D
from ..ops import creation as _C

__all__ = ["SobolEngine"]

# ATen's names of the dtypes draw's error names (torch's first point alone takes any dtype)
_ATEN_NAMES = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}
_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sobol_direction_numbers.npz")


@functools.lru_cache(maxsize=1)
def _table() -> tuple[np.ndarray, np.ndarray]:
    """(poly, vinit) of all 21201 dimensions, loaded once."""
    with np.load(_TABLE) as z:
        return z["poly"].astype(np.int64), z["vinit"].astype(np.int64)


def _initial_state(dimension: int, maxbit: int) -> np.ndarray:
    """ATen's ``_sobol_engine_initialize_state_``: (dimension, maxbit) int64 direction numbers,
    each shifted to the top of ``maxbit`` bits (the first dimension's are all ones)."""
    poly, vinit = _table()
    state = np.zeros((dimension, maxbit), dtype=np.int64)
    state[0, :] = 1
    degree = np.array([int(p).bit_length() - 1 for p in poly[:dimension]], dtype=np.int64)
    for m in np.unique(degree[1:]):
        m = int(m)
        rows = np.nonzero(degree == m)[0]
        rows = rows[rows >= 1]
        s = state[rows]
        s[:, :m] = vinit[rows, :m]
        p = poly[rows]
        for j in range(m, maxbit):
            newv = s[:, j - m].copy()
            for k in range(m):
                bit = (p >> (m - 1 - k)) & 1
                newv ^= bit * (s[:, j - k - 1] << (k + 1))
            s[:, j] = newv
        state[rows] = s
    return state << np.arange(maxbit - 1, -1, -1, dtype=np.int64)


def _scramble_state(state: np.ndarray, ltm: np.ndarray, maxbit: int) -> np.ndarray:
    """ATen's ``_sobol_engine_scramble_``: each dimension's direction numbers times its lower
    triangular binary matrix ``ltm`` (ones put on its diagonal) over GF(2)."""
    ltm = ltm.astype(np.int64).copy()
    idx = np.arange(maxbit)
    ltm[:, idx, idx] = 1
    pow2 = np.int64(1) << np.arange(maxbit - 1, -1, -1, dtype=np.int64)
    dots = (ltm * pow2).sum(-1)  # (dimension, maxbit): row p's bits, column k at 2^(maxbit-1-k)
    out = np.zeros_like(state)
    for p in range(maxbit):
        both = dots[:, p, None] & state  # (dimension, maxbit)
        parity = np.zeros_like(both)
        for k in range(maxbit):
            parity ^= (both >> k) & 1
        out |= parity << (maxbit - 1 - p)
    return out


def _rightmost_zero(n: np.ndarray) -> np.ndarray:
    """The index of each number's lowest zero bit (ATen's ``rightmost_zero``)."""
    return np.log2(((n + 1) & ~n).astype(np.float64)).astype(np.int64)


def _walk(quasi: np.ndarray, state: np.ndarray, n: int, num_generated: int) -> np.ndarray:
    """The next ``n`` states after ``quasi`` (n, dimension): ATen's draw loop, each point the
    previous one XOR the direction number of its count's lowest zero bit."""
    cols = _rightmost_zero(np.arange(num_generated, num_generated + n, dtype=np.int64))
    steps = np.ascontiguousarray(state.T)[cols]  # (n, dimension)
    steps[0] ^= quasi
    return np.bitwise_xor.accumulate(steps, axis=0, out=steps)


def _gray_xor(state: np.ndarray, count: int) -> np.ndarray:
    """The XOR of the direction numbers of the bits of ``count``'s Gray code: stepping from
    count ``a`` to count ``b`` XORs the state with ``_gray_xor(a) ^ _gray_xor(b)``."""
    gray = count ^ (count >> 1)
    out = np.zeros(state.shape[0], dtype=np.int64)
    for bit in range(state.shape[1]):
        if (gray >> bit) & 1:
            out ^= state[:, bit]
    return out


class SobolEngine:
    """An engine for (scrambled) Sobol' sequences of ``dimension`` (1 to 21201) dimensions,
    as ``torch.quasirandom.SobolEngine(dimension, scramble=False, seed=None)``.

    >>> e = clgrad.quasirandom.SobolEngine(3)
    >>> e.draw(2)
    tensor([[0.0000, 0.0000, 0.0000],
            [0.5000, 0.5000, 0.5000]])
    >>> e.fast_forward(1).draw(1, dtype=clgrad.float64)
    tensor([[0.2500, 0.7500, 0.7500]], dtype=clgrad.float64)
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(
                f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]"
            )
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _initial_state(dimension, self.MAXBIT)
        if not scramble:
            shift = np.zeros(dimension, dtype=np.int64)
        else:
            state, shift = self._scrambled(state)
        self.sobolstate = _C.tensor(state, dtype=_D.int64, device="cpu")
        self.shift = _C.tensor(shift, dtype=_D.int64, device="cpu")
        self.quasi = self.shift.clone()
        self._first_point = _C.tensor(
            self._scale(shift, _D.float32).reshape(1, -1), dtype=_D.float32, device="cpu"
        )
        self.num_generated = 0

    def _scrambled(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """torch's ``_scramble``: a random digital shift, then random lower-triangular
        matrices over the direction numbers, the bits from a generator seeded with ``seed``
        (the default generator without one)."""
        g = None
        if self.seed is not None:
            g = _C.Generator()
            g.manual_seed(self.seed)
        bits = (self.dimension, self.MAXBIT)
        shift_ints = _C.randint(2, bits, device="cpu", generator=g).numpy().astype(np.int64)
        shift = shift_ints @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64))
        ltm_dims = (self.dimension, self.MAXBIT, self.MAXBIT)
        ltm = np.tril(_C.randint(2, ltm_dims, device="cpu", generator=g).numpy())
        return _scramble_state(state, ltm, self.MAXBIT), shift

    def _scale(self, quasi: np.ndarray, dtype) -> np.ndarray:
        """Points in [0, 1) as ATen makes them: the integer rounded to float32, times 2^-30,
        then cast to ``dtype`` (so float64 draws hold float32's values, as torch's do)."""
        vals = quasi.astype(np.float32) * np.float32(1.0 / (1 << self.MAXBIT))
        return vals.astype(dtype.np)

    def _advance(self, n: int, num_generated: int, dtype):
        """``n`` points after the current state (ATen's ``_sobol_engine_draw``); the state
        moves past them. Walked in blocks of about 2^22 numbers, so the int64 states never take
        much more memory than the result."""
        if n < 0:  # ATen's error for the result's shape (draw(0) of a new engine asks for -1)
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n}: [{n}, {self.dimension}]"
            )
        if dtype not in (_D.float32, _D.float64):  # ATen dispatches on floating types only
            raise NotImplementedError(
                f'"_sobol_engine_draw" not implemented for {_ATEN_NAMES.get(dtype.name, dtype)!r}'
            )
        state, quasi = self.sobolstate.numpy(), self.quasi.numpy()
        out = np.empty((n, self.dimension), dtype=dtype.np)
        block = max(1, (1 << 22) // self.dimension)
        for start in range(0, n, block):
            stop = min(n, start + block)
            walked = _walk(quasi, state, stop - start, num_generated + start)
            out[start:stop] = self._scale(walked, dtype)
            quasi = walked[-1]
        if n:
            self.quasi = _C.tensor(quasi, dtype=_D.int64, device="cpu")
        return out

    def draw(self, n: int = 1, out=None, dtype=None):
        """The next ``n`` points of the sequence, a (n, dimension) cpu tensor in ``dtype`` (the
        default float dtype unless given), written into ``out`` when given.

        >>> clgrad.quasirandom.SobolEngine(1).draw(3)
        tensor([[0.0000],
                [0.5000],
                [0.7500]])
        """
        dtype = _D.get_default_dtype() if dtype is None else _D.as_dtype(dtype)
        if self.num_generated == 0:
            first = self._first_point.numpy().astype(dtype.np)
            if n == 1:
                vals = first
            else:
                vals = np.concatenate([first, self._advance(n - 1, 0, dtype)], axis=0)
        else:
            vals = self._advance(n, self.num_generated - 1, dtype)
        self.num_generated += n
        result = _C.tensor(vals, dtype=dtype, device="cpu")
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out=None, dtype=None):
        """The next ``2**m`` points; the total drawn must stay a power of 2 (ValueError
        otherwise), as the balance of Sobol' points needs.

        >>> clgrad.quasirandom.SobolEngine(2).draw_base2(1)
        tensor([[0.0000, 0.0000],
                [0.5000, 0.5000]])
        """
        n = 2**m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead."
            )
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point; returns the engine.

        >>> e = clgrad.quasirandom.SobolEngine(1)
        >>> _ = e.draw(5)
        >>> e.reset().draw(1)
        tensor([[0.]])
        """
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n: int):
        """Skips ``n`` points, as drawing them would; returns the engine.

        >>> clgrad.quasirandom.SobolEngine(1).fast_forward(2).draw(1)
        tensor([[0.7500]])
        """
        start = 0 if self.num_generated == 0 else self.num_generated - 1
        steps = n - 1 if self.num_generated == 0 else n
        if steps > 0:
            # ATen steps through every count; the Gray code gives the same state at once
            state = self.sobolstate.numpy()
            moved = self.quasi.numpy() ^ _gray_xor(state, start) ^ _gray_xor(state, start + steps)
            self.quasi.copy_(_C.tensor(moved, dtype=_D.int64, device="cpu"))
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"
