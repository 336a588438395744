"""The OpenCL reduction and scan kernels against NumPy, on strided views of raw buffers.

Calls the backend's entry points directly with ``View`` records over buffers from the device's
allocator and the declared ``REDUCE_KERNELS``, so no Tensor is involved. Every case runs both
the CPU kernels and (forced) the GPU work-group kernels.
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pyopencl as cl
import pytest

import clgrad
from clgrad import dtypes as D
from clgrad.backend.base import LOGADDEXP, PROD, SUM, View
from clgrad.ops.reduction import REDUCE_KERNELS

R = pytest.importorskip("clgrad.backend.opencl.reduce")

pytestmark = pytest.mark.skipif(
    not any(d.is_cl for d in clgrad.devices()), reason="no OpenCL device"
)

ALL = [D.bool_, D.uint8, D.int8, D.int16, D.int32, D.int64, D.float16, D.float32, D.float64]
FLOATS = [D.float16, D.float32, D.float64]
OPS = ["sum", "prod", "amax", "amin", "argmax", "argmin"]
ARG_OPS = ("argmax", "argmin")


@pytest.fixture(scope="module")
def rt():
    return clgrad.device("cl:0").runtime


# (buffer, bytes) taken from the allocator by this test: given back when it ends
_TAKEN: list = []


@pytest.fixture(autouse=True)
def _give_back(rt):
    yield
    rt.synchronize()
    for buf, nbytes in _TAKEN:
        rt.allocator.release(buf, nbytes)
    _TAKEN.clear()


# The GPU kernels build slowly on PoCL (barriers): their runs cover fewer dtypes and layouts.
GPU_DTYPES = {"float32", "float64", "float16", "int8", "int64", "bool"}


def gpu_only(path, dt):
    if path == "gpu-kernels" and dt.name not in GPU_DTYPES:
        pytest.skip("the GPU kernels run on a subset of dtypes here")


# On PoCL every GPU kernel is a fresh build of barrier code (seconds each, cold): by default the
# forced GPU path runs a smoke set in float32; CLGRAD_TEST_ALL_PATHS=1 runs all of it.
GPU_SMOKE = {
    "test_reduce_all_dtypes",
    "test_nan",
    "test_nansum",
    "test_large_two_pass",
    "test_all_any_bool",
    "test_scan_all_dtypes",
    "test_empty_reductions",
    "test_zero_outputs",
}


@pytest.fixture(params=["cpu-kernels", "gpu-kernels"])
def path(request):
    if request.param == "gpu-kernels" and not os.environ.get("CLGRAD_TEST_ALL_PATHS"):
        dt = request.node.callspec.params.get("dt")
        name = request.node.originalname
        if name not in GPU_SMOKE or (dt is not None and dt.name != "float32"):
            pytest.skip("GPU-path variant: set CLGRAD_TEST_ALL_PATHS=1 to run it on this device")
    old = R.GPU_PATH
    R.GPU_PATH = request.param == "gpu-kernels"
    yield request.param
    R.GPU_PATH = old


def _contig_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def _buffer(rt, nbytes):
    """A buffer of at least one byte (OpenCL has no empty buffers) for this test."""
    buf = rt.allocator.alloc(max(nbytes, 1))
    _TAKEN.append((buf, max(nbytes, 1)))
    return buf


def upload(rt, base: np.ndarray, dt, shape, stride, offset):
    """A View (shape, stride, offset) of a buffer holding base's elements; and its NumPy twin."""
    base = np.ascontiguousarray(base.reshape(-1), dtype=dt.np)
    buf = _buffer(rt, base.nbytes)
    if base.size:
        cl.enqueue_copy(rt.queue, buf, base, is_blocking=True)
    view = np.lib.stride_tricks.as_strided(
        base[offset:], shape, tuple(s * base.itemsize for s in stride)
    )
    return View(buf, offset, tuple(shape), tuple(stride), dt, base.nbytes), view


def empty(rt, dt, shape, offset=0):
    """A contiguous View starting ``offset`` elements into a new buffer."""
    nbytes = (offset + math.prod(shape)) * dt.itemsize
    return View(_buffer(rt, nbytes), offset, tuple(shape), _contig_strides(shape), dt, nbytes)


def download(rt, v):
    host = np.empty(v.shape, v.dtype.np)
    if host.size:
        off = v.offset * v.dtype.itemsize
        cl.enqueue_copy(rt.queue, host, v.buffer, src_offset=off, is_blocking=True)
    return host


def values(rng, dt, n, op):
    """Test data for op: small values (ties for arg ops), near 1 for float products, some NaN
    for nansum."""
    if dt.name == "bool":
        return rng.random(n) < 0.5
    if dt.is_floating_point:
        if op == "prod":
            return rng.uniform(0.97, 1.03, n)
        v = np.round(rng.uniform(-4, 4, n), 1)
        if op == "nansum":
            v[rng.random(n) < 0.1] = np.nan
        return v
    lo = 0 if dt.name == "uint8" else -3
    return rng.integers(lo, 4, n)


# ---- references -------------------------------------------------------------------------------


def result_dtype(op, dt):
    if op in ARG_OPS:
        return D.int64, None
    if op in ("sum", "prod", "nansum"):
        if not dt.is_floating_point:
            return D.int64, D.int64
        return dt, (D.float32 if dt.name == "float16" else dt)
    return dt, None


def reference(op, a, dims, acc):
    """NumPy's answer, by the kernel's own declared reference (``ReduceKernel.numpy``)."""
    dims = tuple(dims)
    fn = REDUCE_KERNELS[op].numpy
    if op in ARG_OPS:
        if len(dims) == 1 and a.ndim > 1:
            return fn(a, axis=dims[0])
        return np.asarray(fn(a.reshape(-1)))
    if op in ("sum", "prod", "nansum"):
        a = a.astype(np.float32 if acc.name == "float16" else acc.np)
    return fn(a, axis=dims)


def check(op, dt, got, want, a, dims):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if op in ("sum", "prod", "nansum") and dt.is_floating_point:
        with np.errstate(over="ignore"):
            want = want.astype(got.dtype)  # float16 results overflow as the kernels' do
        special = ~np.isfinite(want)
        np.testing.assert_array_equal(got[special], want[special])
        got, want = got[~special].astype(np.float64), want[~special].astype(np.float64)
        if op in ("sum", "nansum"):
            scale = np.nansum(np.abs(a.astype(np.float64)), axis=tuple(dims))[~special]
            tol = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dt.name]
            assert np.all(np.abs(got - want) <= tol * scale + np.abs(want) * tol), (got, want)
        else:
            rtol = {"float16": 2e-3, "float32": 3e-4, "float64": 1e-12}[dt.name]
            atol = 1e-7 if dt.name == "float16" else 0  # half subnormals
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    elif dt.is_floating_point and op in ("amax", "amin"):
        np.testing.assert_array_equal(got, want.astype(dt.np))
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def run_reduce(rt, op, x, a, dims):
    out_dt, acc = result_dtype(op, x.dtype)
    kept = [n for d, n in enumerate(x.shape) if d not in dims]
    out = empty(rt, out_dt, kept, offset=3)  # an output that does not start its buffer
    R.reduce(rt, REDUCE_KERNELS[op], out, x, tuple(dims), acc)
    got = download(rt, out)
    check(op, x.dtype, got, reference(op, a, dims, acc), a, dims)


# ---- views ------------------------------------------------------------------------------------


def views(shape):
    """(name, base size, shape, stride, offset) views of one shape, each a different layout."""
    n = math.prod(shape)
    nd = len(shape)
    c = _contig_strides(shape)
    yield "contiguous", n, shape, c, 0
    yield "offset", n + 7, shape, c, 7
    if nd >= 2:
        perm = tuple(reversed(range(nd)))
        pshape = tuple(shape[p] for p in perm)
        pc = _contig_strides(pshape)
        stride = [0] * nd
        for i, p in enumerate(perm):
            stride[p] = pc[i]
        yield "transposed", n, shape, tuple(stride), 0
    if nd >= 1:
        # every dim stepped: base is (2*n0, n1, 3*n2, ...) viewed [::2, :, ::3]
        steps = [(2, 1, 3)[i % 3] for i in range(nd)]
        bshape = tuple(s * k for s, k in zip(shape, steps))
        bc = _contig_strides(bshape)
        yield "stepped", math.prod(bshape) + 3, shape, tuple(a * k for a, k in zip(bc, steps)), 3
    if nd >= 2:
        # dim 1 broadcast (stride 0)
        bshape = tuple(s for i, s in enumerate(shape) if i != 1)
        bc = list(_contig_strides(bshape))
        bc.insert(1, 0)
        yield "broadcast", math.prod(bshape), shape, tuple(bc), 0


DIMS_3D = [(0,), (1,), (2,), (0, 2), (0, 1), (1, 2), (0, 1, 2)]


def dims_for(op, nd):
    if nd == 0:
        return []
    if nd == 1:
        return [(0,)]
    if op in ARG_OPS:
        return [(d,) for d in range(nd)] + [tuple(range(nd))]
    return DIMS_3D if nd == 3 else [(0,), (1,), (0, 1)]


# ---- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("op", OPS)
def test_reduce_all_dtypes(rt, path, op, dt):
    rng = np.random.default_rng(0)
    gpu = path == "gpu-kernels"
    if gpu and dt.name not in ("float32", "float16", "int64", "bool"):
        pytest.skip("the GPU kernels run on a subset of dtypes here")
    for shape in [(33,), (4, 5, 6)] if gpu else [(7,), (1,), (33,), (4, 5, 6), (3, 1, 17)]:
        for name, size, vshape, stride, off in views(shape):
            if gpu and name not in ("contiguous", "transposed"):
                continue
            base = values(rng, dt, size, op)
            x, a = upload(rt, base, dt, vshape, stride, off)
            for dims in dims_for(op, len(shape)):
                run_reduce(rt, op, x, a, dims)


@pytest.mark.parametrize("dt", [D.float32, D.int32, D.float16], ids=lambda d: d.name)
@pytest.mark.parametrize("op", OPS)
def test_reduce_wide_rows(rt, path, op, dt):
    """Rows long enough for the vector loops, across and along; odd sizes leave tails."""
    if path == "gpu-kernels" and dt.name != "float32":
        pytest.skip("the GPU kernels run on a subset of dtypes here")
    rng = np.random.default_rng(1)
    for shape in [(37, 101), (5, 19, 67), (67, 19, 5)]:
        for _name, size, vshape, stride, off in views(shape):
            base = values(rng, dt, size, op)
            x, a = upload(rt, base, dt, vshape, stride, off)
            for dims in dims_for(op, len(shape)):
                run_reduce(rt, op, x, a, dims)


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("dt", [D.float32, D.int64, D.bool_, D.float16], ids=lambda d: d.name)
def test_empty_reductions(rt, path, op, dt):
    for shape, dims in [((0,), (0,)), ((3, 0, 4), (1,)), ((3, 0, 4), (0, 1)), ((0, 5), (0,))]:
        x, a = upload(rt, np.zeros(0), dt, shape, _contig_strides(shape), 0)
        run_reduce(rt, op, x, a, dims)


def test_zero_outputs(rt, path):
    x, a = upload(rt, np.zeros(0), D.float32, (0, 5), (5, 1), 0)
    for op in OPS:
        run_reduce(rt, op, x, a, (1,))


@pytest.mark.parametrize("dt", [D.float32, D.float16, D.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["amax", "amin", "argmax", "argmin", "sum", "nansum"])
def test_nan(rt, path, op, dt):
    rng = np.random.default_rng(2)
    for shape in [(40,), (9, 40), (40, 9), (3, 1000)]:
        base = values(rng, dt, math.prod(shape), op)
        base[rng.random(base.size) < 0.03] = np.nan
        base[3] = np.nan  # at least one, not first
        x, a = upload(rt, base, dt, shape, _contig_strides(shape), 0)
        for dims in dims_for(op, len(shape)):
            run_reduce(rt, op, x, a, dims)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_nansum(rt, path, dt):
    """NaN maps to 0, then sums: every layout, and every mode (vector loads, rows, outer, two
    passes), where the map applies to the input's elements only, never to partials."""
    rng = np.random.default_rng(9)
    for shape in [(7,), (33,), (4, 5, 6), (37, 101), (67, 19, 5)]:
        for _name, size, vshape, stride, off in views(shape):
            base = values(rng, dt, size, "nansum")
            x, a = upload(rt, base, dt, vshape, stride, off)
            for dims in dims_for("nansum", len(shape)):
                run_reduce(rt, "nansum", x, a, dims)
    for shape, dims in [
        ((1_000_003,), (0,)),
        ((3, 300_001), (1,)),
        ((3000, 130), (0,)),
        ((25_000, 40), (0,)),
        ((60, 70, 190), (0, 1)),
    ]:
        base = values(rng, dt, math.prod(shape), "nansum")
        base[:: 1 + math.prod(shape) // 1000] = np.nan
        x, a = upload(rt, base, dt, shape, _contig_strides(shape), 0)
        run_reduce(rt, "nansum", x, a, dims)


@pytest.mark.parametrize("op", ["amax", "amin", "argmax", "argmin"])
@pytest.mark.parametrize("dt", ALL, ids=lambda d: d.name)
def test_identity_valued(rt, path, op, dt):
    """Every element equals the reduction's identity (-inf, INT_MIN, ...): first index wins."""
    if path == "gpu-kernels" and dt.name not in ("float32", "int8"):
        pytest.skip("the GPU kernels run on a subset of dtypes here")
    big = op in ("amin", "argmin")
    if dt.is_floating_point:
        v = np.inf if big else -np.inf
    elif dt.name == "bool":
        v = big
    else:
        info = np.iinfo(dt.np)
        v = info.max if big else info.min
    for shape in [(37,), (5, 37), (37, 5), (40, 3, 19), (2, 1500)]:
        base = np.full(math.prod(shape), v, dt.np)
        x, a = upload(rt, base, dt, shape, _contig_strides(shape), 0)
        for dims in dims_for(op, len(shape)):
            run_reduce(rt, op, x, a, dims)


@pytest.mark.parametrize("op", OPS)
def test_large_two_pass(rt, path, op):
    """Few outputs over millions of elements: the partials-then-combine path."""
    rng = np.random.default_rng(3)
    dt = D.float32 if op != "prod" else D.int32
    n = 3_000_000
    base = values(rng, dt, n + 5, op)
    if op in ("argmax", "argmin"):
        base[2_345_678] = 100 if op == "argmax" else -100
        base[2_900_001] = 100 if op == "argmax" else -100
    for shape, stride, off, dims in [
        ((n,), (1,), 5, (0,)),
        ((3, n // 3), (n // 3, 1), 0, (1,)),
        ((n // 3, 3), (3, 1), 0, (0,)),
        ((n // 40, 40), (40, 1), 0, (0,)),
        ((n // 2,), (2,), 1, (0,)),
        ((2, n // 4, 2), (n // 2, 2, 1), 0, (0, 1)),
    ]:
        if op in ("argmax", "argmin") and 1 < len(dims) < len(shape):
            dims = tuple(range(len(shape)))  # arg ops take one dim or all
        x, a = upload(rt, base, dt, shape, stride, off)
        run_reduce(rt, op, x, a, dims)


@pytest.mark.parametrize(
    "dt", [D.float32, D.float16, D.float64, D.int32, D.uint8, D.bool_], ids=lambda d: d.name
)
@pytest.mark.parametrize("op", OPS)
def test_reduce_columns_large(rt, path, op, dt):
    """Many rows reduced into adjacent outputs: the row-block kernels, partial tiles included."""
    if path == "gpu-kernels" and dt.name not in ("float32", "int32"):
        pytest.skip("the GPU kernels run on a subset of dtypes here")
    rng = np.random.default_rng(8)
    for shape, dims in [
        ((3000, 130), (0,)),
        ((2, 700, 517), (1,)),
        ((60, 70, 190), (0, 1)),
        ((5000, 64), (0,)),
    ]:
        if op in ("argmax", "argmin") and len(dims) > 1:
            continue
        for name, size, vshape, stride, off in views(shape):
            if name in ("transposed", "broadcast") and path == "gpu-kernels":
                continue
            base = values(rng, dt, size, op)
            if dt.is_floating_point and op in ("amax", "amin"):
                base[rng.random(size) < 1e-4] = np.nan
            x, a = upload(rt, base, dt, vshape, stride, off)
            run_reduce(rt, op, x, a, dims)


def test_argmax_nan_large(rt, path):
    rng = np.random.default_rng(4)
    base = rng.standard_normal(2_000_000).astype(np.float32)
    base[1_500_000] = np.nan
    base[1_700_000] = np.nan
    x, a = upload(rt, base, D.float32, (base.size,), (1,), 0)
    for op in ("argmax", "argmin", "amax", "amin"):
        run_reduce(rt, op, x, a, (0,))


def test_all_any_bool(rt, path):
    rng = np.random.default_rng(5)
    base = rng.random(6 * 50 * 7) < 0.9
    x, a = upload(rt, base, D.bool_, (6, 50, 7), (350, 7, 1), 0)
    for op, dims in itertools.product(["amax", "amin"], DIMS_3D):
        out = empty(rt, D.bool_, [n for d, n in enumerate(x.shape) if d not in dims])
        R.reduce(rt, REDUCE_KERNELS[op], out, x, dims, None)
        want = (np.all if op == "amin" else np.any)(a, axis=dims)
        np.testing.assert_array_equal(download(rt, out), want)


# ---- scans -----------------------------------------------------------------------------------

SCANS = {"sum": SUM, "prod": PROD, "logaddexp": LOGADDEXP}
SCAN_REFERENCE = {"sum": np.cumsum, "prod": np.cumprod, "logaddexp": np.logaddexp.accumulate}


def run_scan(rt, x, a, dim, op="sum"):
    dt = x.dtype
    out_dt = dt if dt.is_floating_point else D.int64
    acc = D.float32 if dt.name == "float16" else out_dt
    out = empty(rt, out_dt, x.shape, offset=5)
    R.scan(rt, out, x, dim, acc, SCANS[op])
    got = download(rt, out)
    src = a.astype(np.float32 if dt.name == "float16" else acc.np)
    want = SCAN_REFERENCE[op](src, axis=dim) if a.ndim else src
    if dt.is_floating_point:
        # a sum's error grows with the sum of magnitudes; a product's and a logaddexp's with
        # the result's (the chunks combine in another order than NumPy's serial walk)
        if op == "sum" and a.ndim:
            scale = np.cumsum(np.abs(src.astype(np.float64)), axis=dim)
        else:
            scale = np.abs(want.astype(np.float64)) * (1 + (a.shape[dim] if a.ndim else 1)) ** 0.5
        tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}[dt.name]
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        assert np.all(err <= tol * (scale + 1) + np.abs(want) * tol), np.max(err)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def scan_values(rng, dt, n, op):
    """Test data for a scan by op: logaddexp's spread wide (each term matters somewhere)."""
    if op == "logaddexp":
        return rng.uniform(-30, 30, n)
    return values(rng, dt, n, op)


SCAN_DTYPES = {"sum": ALL, "prod": ALL, "logaddexp": FLOATS}
SCAN_CASES = [(op, dt) for op, dts in SCAN_DTYPES.items() for dt in dts]


@pytest.mark.parametrize("op,dt", SCAN_CASES, ids=lambda c: getattr(c, "name", c))
def test_scan_all_dtypes(rt, path, op, dt):
    rng = np.random.default_rng(6)
    shapes = [(7,), (1,), (4, 5, 6), (3, 1, 40), (40, 3, 17), (70, 128), (9, 130)]
    if path == "gpu-kernels":
        gpu_only(path, dt)
        shapes = [(7,), (4, 5, 6), (70, 128)]
    for shape in shapes:
        for _name, size, vshape, stride, off in views(shape):
            base = scan_values(rng, dt, size, op)
            x, a = upload(rt, base, dt, vshape, stride, off)
            for dim in range(len(shape)):
                run_scan(rt, x, a, dim, op)


@pytest.mark.parametrize("op", SCANS)
def test_scan_0d(rt, path, op):
    x, a = upload(rt, np.array([2.5]), D.float32, (), (), 0)
    run_scan(rt, x, a, 0, op)


@pytest.mark.parametrize("op", SCANS)
def test_scan_empty(rt, path, op):
    x, a = upload(rt, np.zeros(0), D.float32, (3, 0), (0, 1), 0)
    run_scan(rt, x, a, 1, op)
    run_scan(rt, x, a, 0, op)


@pytest.mark.parametrize(
    "op,dt",
    [("sum", D.float32), ("sum", D.int32), ("sum", D.float64), ("prod", D.float32)]
    + [("prod", D.int64), ("logaddexp", D.float32)],
    ids=lambda c: getattr(c, "name", c),
)
def test_scan_long_lines(rt, path, op, dt):
    """Few long lines: cut into chunks that start from the chunks before, each reduced by the
    scan's own combination."""
    rng = np.random.default_rng(7)
    n = 1_000_003
    base = scan_values(rng, dt, n + 1, op)
    for shape, stride, off, dim in [
        ((n,), (1,), 1, 0),
        ((n,), (1,), 0, 0),
        ((n // 2,), (2,), 0, 0),
        ((n // 256, 256), (256, 1), 0, 0),
        ((3, n // 3), (n // 3, 1), 0, 1),
        ((n // 3, 3), (3, 1), 0, 0),
        ((n // 20, 20), (20, 1), 0, 0),
    ]:
        x, a = upload(rt, base, dt, shape, stride, off)
        run_scan(rt, x, a, dim, op)


def cum_extreme_reference(a, dim, largest):
    """(values, indices) by a walk of each line: a later equal value or NaN takes the index."""
    lines = np.moveaxis(a, dim, -1)
    values, indices = np.empty(lines.shape, lines.dtype), np.zeros(lines.shape, np.int64)
    for line in np.ndindex(lines.shape[:-1]):
        best, at = None, 0
        for i, v in enumerate(lines[line]):
            if best is None or np.isnan(v):
                keeps = True
            else:
                keeps = not np.isnan(best) and (v >= best if largest else v <= best)
            if keeps:
                best, at = v, i
            values[line + (i,)], indices[line + (i,)] = best, at
    return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)


@pytest.mark.parametrize("largest", [True, False], ids=["max", "min"])
@pytest.mark.parametrize("dt", ALL, ids=lambda d: d.name)
def test_cum_extreme(rt, dt, largest):
    rng = np.random.default_rng(8)
    for shape in [(7,), (1,), (4, 5, 6), (3, 1, 40), (9, 13)]:
        for _name, size, vshape, stride, off in views(shape):
            base = values(rng, dt, size, "amax")
            if dt.is_floating_point:  # NaN and both zeros
                base = base.astype(np.float64)
                base[rng.random(size) < 0.05] = np.nan
                base[rng.random(size) < 0.1] = -0.0
            x, a = upload(rt, base, dt, vshape, stride, off)
            for dim in range(len(shape)):
                got_values = empty(rt, dt, x.shape, offset=3)
                got_indices = empty(rt, D.int64, x.shape, offset=1)
                R.cum_extreme(rt, got_values, got_indices, x, dim, largest)
                want_values, want_indices = cum_extreme_reference(a, dim, largest)
                np.testing.assert_array_equal(download(rt, got_indices), want_indices)
                got = download(rt, got_values)
                np.testing.assert_array_equal(got, want_values)
                # the value is the element at its index (-0.0 and 0.0 apart)
                picked = np.take_along_axis(a, want_indices, dim) if a.ndim else a
                np.testing.assert_array_equal(np.signbit(got), np.signbit(picked))


def test_more_than_2_31_elements(rt):
    """Long indices: a broadcast view of 2**31 + 4096 elements over a 2 MB buffer."""
    rows = 2**19 + 1
    base = np.zeros(rows, np.int32)
    base[::7] = 1
    base[400_000] = 5  # argmax: flat index 400_000 * 4096 > 2**31
    x, a = upload(rt, base, D.int32, (rows, 4096), (1, 0), 0)
    assert x.numel() > 2**31
    out = empty(rt, D.int64, ())
    R.reduce(rt, REDUCE_KERNELS["sum"], out, x, (0, 1), D.int64)
    assert download(rt, out) == 4096 * int(base.sum())
    R.reduce(rt, REDUCE_KERNELS["argmax"], out, x, (0, 1), None)
    assert download(rt, out) == 400_000 * 4096
    out = empty(rt, D.int64, (4096,))
    R.reduce(rt, REDUCE_KERNELS["sum"], out, x, (0,), D.int64)
    assert np.all(download(rt, out) == int(base.sum()))
