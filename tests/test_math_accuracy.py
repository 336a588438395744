"""float32 exp, log, erf and the functions built on them, against NumPy in float64, in ulps
over the whole float range: denormals, the overflow and underflow edges, infinities, NaN and -0.

On CPU OpenCL devices these are kernels/_prelude.cl.mako's polynomials (CG_POLY_MATH); on GPUs
and the host, libm's. Both are held to OpenCL's float32 bounds for the function (sigmoid, not an
OpenCL function, to 3 ulp); PyTorch's float32 tolerance (rtol 1.3e-6) is about 10 ulp.
The rounding functions (floor, ceil, trunc, round, frac) are held to exact results.
"""

import math
import os

import numpy as np
import pytest

import clgrad

# OpenCL 1.2 section 7.4's float32 ulp bounds
BOUNDS = {
    "exp": 3,
    "exp2": 3,
    "expm1": 3,
    "log": 3,
    "log2": 3,
    "log1p": 2,
    "tanh": 5,
    "sigmoid": 3,
    "erf": 16,
    "erfc": 16,
}

REFERENCE = {
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log1p": np.log1p,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
    "erfc": np.vectorize(math.erfc, otypes=[np.float64]),
}

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, 1e-45, -1e-45]
# around each function's edges: exp's overflow (88.72) and denormal results (-87.3 to -103.97),
# exp2's (128, -126 to -149), expm1 reaching -1, tanh reaching 1, log1p's pole
EDGES = [88.72283, 88.72284, -87.33655, -103.2789, -103.97208, 127.99999, 128.0, -126.0, -149.0]
EDGES += [-149.5, -150.0, -17.33, -17.34, 9.01, 10.0, -0.99999994, 1.1754942e-38, 3.4028235e38]


def float32_sample(step=40_009):
    """Every ``step``-th float32 bit pattern (both signs, every exponent, denormals, NaNs),
    the specials and edges, and a dense run around 0 and 1 where cancellation would show."""
    bits = np.arange(0, 2**32, step, dtype=np.uint64).astype(np.uint32)
    rng = np.random.default_rng(0)
    dense = np.concatenate([rng.uniform(-2, 2, 20_000), rng.uniform(-1e-3, 1e-3, 5_000)])
    edges = np.array(SPECIALS + EDGES, np.float64)
    near = np.concatenate([np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    with np.errstate(over="ignore"):  # past the largest float: inf, wanted
        extra = np.concatenate([edges, near, dense]).astype(np.float32)
    return np.concatenate([bits.view(np.float32), extra])


def ulp_error(got, want64):
    """|got - want| in ulps of the float32 nearest ``want64``; 0 where both are the same
    special value (same infinity, NaN, zero of the same sign)."""
    with np.errstate(all="ignore"):
        want = want64.astype(np.float32)
        same = (got == want) & (np.signbit(got) == np.signbit(want))
        same |= np.isnan(got) & np.isnan(want)
        unit = np.spacing(np.abs(want)).astype(np.float64)
        unit[~np.isfinite(unit)] = np.spacing(np.float32(3.4028235e38))
        err = np.abs(got.astype(np.float64) - want64) / unit
    err[np.isnan(err)] = np.inf  # a NaN where a number was due, or the reverse
    return np.where(same, 0.0, err)


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_float32_ulp_error(device, name):
    x = float32_sample()
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64))
    got = getattr(clgrad.tensor(x, device=device), name)().cpu().numpy()
    assert got.dtype == np.float32
    err = ulp_error(got, want)
    worst = int(np.argmax(err))
    assert err[worst] <= BOUNDS[name], (
        f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}: {err[worst]:.3g} ulp "
        f"(bound {BOUNDS[name]}); {int((err > BOUNDS[name]).sum())} values past it"
    )


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_float32_specials(device, name):
    """Infinities, NaN and zeros of both signs give exactly libm's values; the overflow and
    underflow edges libm's within a few ulp (or both a denormal-or-zero)."""
    x = np.array(SPECIALS + [88.8, -104.0, 200.0, -200.0], np.float32)
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    got = getattr(clgrad.tensor(x, device=device), name)().cpu().numpy()
    tiny = np.abs(want) < 1e-38  # denormal results may flush to zero on some devices
    ok = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    ok |= tiny & (np.abs(got) < 1e-38)
    ok |= np.isclose(got, want, rtol=5e-7, atol=0)  # finite results: a few ulp
    assert ok.all(), f"{name}: at {x[~ok]} got {got[~ok]}, want {want[~ok]}"
    if name in ("expm1", "log1p", "tanh"):  # odd at 0
        assert np.signbit(got[1]), f"{name}(-0.0) = {got[1]!r}: the sign of zero is lost"


def test_float32_exp_family_is_vectorizable_math_on_cpu_devices(cl_device):
    """The runtime selects the polynomials (a build define) on devices that are not GPUs."""
    if os.environ.get("CLGRAD_POLY_MATH"):
        pytest.skip("CLGRAD_POLY_MATH overrides the choice")
    rt = clgrad.device(cl_device).runtime
    assert ("-DCG_POLY_MATH" in rt.build_options) == (not rt.is_gpu)


ROUNDING = {
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.rint,  # half to even
    "frac": lambda x: x - np.trunc(x),
}


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_float32_rounding_is_exact(device, name):
    """floor, ceil, trunc, round and frac are exact over the whole float range (on CPU
    devices they are arithmetic, not library calls): halves, the 2^23 edge past which every
    float is whole, values past int's range, -0 and results that are -0 (-0.5 rounds to -0),
    infinities and NaN."""
    edges = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 8388607.5, -8388607.5, 8388608.0, 4194303.5]
    edges += [-0.0, 1e-40, -1e-40, 2147483648.0, -2147483904.0, 3e9, -0.99999994]
    x = np.concatenate([float32_sample(), np.array(edges, np.float32)])
    with np.errstate(all="ignore"):
        want = ROUNDING[name](x)
    got = getattr(clgrad.tensor(x, device=device), name)().cpu().numpy()
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | np.isnan(got) & np.isnan(want)
    assert same.all(), f"{name} at {x[~same][:5]}: got {got[~same][:5]}, want {want[~same][:5]}"
