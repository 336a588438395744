"""Writes clgrad/quasirandom/_sobol_direction_numbers.npz, the table clgrad.quasirandom's
SobolEngine starts from (a developer's tool: clgrad itself needs neither torch nor SciPy).

Provenance: the direction numbers are S. Joe and F. Y. Kuo's "new-joe-kuo-6.21201" set
(https://web.maths.unsw.edu.au/~fkuo/sobol/, "Constructing Sobol sequences with better
two-dimensional projections", SIAM J. Sci. Comput. 30, 2635-2654, 2008), which both PyTorch
(ATen's SobolEngineOpsUtils) and SciPy (scipy/stats/_sobol_direction_numbers.npz) ship. This
script reads SciPy's copy (``poly``: each dimension's primitive polynomial with its leading and
trailing 1 bits, as torch's ``poly`` table holds it; ``vinit``: its initial direction numbers
m_1..m_s, zero-padded to 18) and, before writing anything, checks that it gives, by torch's own
initialization (``_sobol_engine_initialize_state_``), exactly the ``sobolstate`` that
``torch.quasirandom.SobolEngine(21201)`` holds for every one of its 21201 dimensions.

Stored compressed, in the narrowest dtypes that hold the values (``poly`` < 2^19, ``vinit`` <
2^18): about 0.5 MB.

    python tools/make_sobol_table.py
"""

from __future__ import annotations

import os
import sys

import numpy as np

MAXBIT, MAXDIM = 30, 21201
OUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "clgrad",
    "quasirandom",
    "_sobol_direction_numbers.npz",
)


def initial_state(poly: np.ndarray, vinit: np.ndarray) -> np.ndarray:
    """torch's ``_sobol_engine_initialize_state_`` for every dimension, vectorized over them:
    (MAXDIM, MAXBIT) int64 direction numbers, each shifted to the top of MAXBIT bits."""
    dims = len(poly)
    state = np.zeros((dims, MAXBIT), dtype=np.int64)
    state[0, :] = 1
    degree = np.array([int(p).bit_length() - 1 for p in poly])
    for m in np.unique(degree[1:]):
        rows = np.nonzero(degree == m)[0]
        rows = rows[rows >= 1]
        s = state[rows]
        s[:, :m] = vinit[rows, :m]
        p = poly[rows].astype(np.int64)
        for j in range(m, MAXBIT):
            newv = s[:, j - m].copy()
            pow2 = 1
            for k in range(m):
                pow2 <<= 1
                bit = (p >> (m - 1 - k)) & 1
                newv ^= np.where(bit == 1, pow2 * s[:, j - k - 1], 0)
            s[:, j] = newv
        state[rows] = s
    return state * (2 ** np.arange(MAXBIT - 1, -1, -1, dtype=np.int64))


def main() -> int:
    import scipy.stats
    import torch

    src = np.load(
        os.path.join(os.path.dirname(scipy.stats.__file__), "_sobol_direction_numbers.npz")
    )
    poly, vinit = src["poly"], src["vinit"]
    assert poly.shape == (MAXDIM,) and vinit.shape == (MAXDIM, 18)
    assert torch.quasirandom.SobolEngine.MAXDIM == MAXDIM
    assert torch.quasirandom.SobolEngine.MAXBIT == MAXBIT
    expected = torch.quasirandom.SobolEngine(MAXDIM).sobolstate.numpy()
    got = initial_state(poly, vinit)
    if not np.array_equal(got, expected):
        bad = np.nonzero((got != expected).any(axis=1))[0]
        print(f"SciPy's table differs from torch's state in {len(bad)} dimensions: {bad[:10]}")
        return 1
    assert poly.max() < 2**32 and vinit.max() < 2**32 and vinit.min() >= 0
    np.savez_compressed(OUT, poly=poly.astype(np.uint32), vinit=vinit.astype(np.uint32))
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes), equal to torch's state for {MAXDIM} dims")
    return 0


if __name__ == "__main__":
    sys.exit(main())
