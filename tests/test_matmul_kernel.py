"""The matmul kernels alone, on ``View`` records over buffers from the device's allocator:
every path, dtype, stride pattern, edge."""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest

import clgrad
from clgrad import dtypes
from clgrad.backend.base import View
from clgrad.backend.opencl.matmul import matmul

GUARD = 7  # elements of sentinel on each side of out, to catch stray writes


class DeviceUnderTest:
    """The device under test: its runtime, and the buffers a test took from its allocator."""

    def __init__(self, name):
        dev = clgrad.device(name)
        self.rt, self.fp64 = dev.runtime, dev.supports_float64
        self.taken = []

    def buffer(self, host: np.ndarray):
        """A buffer from the allocator holding ``host`` (at least one byte: OpenCL has no
        empty buffers)."""
        nbytes = max(host.nbytes, 1)
        buf = self.rt.allocator.alloc(nbytes)
        self.taken.append((buf, nbytes))
        if host.size:
            cl.enqueue_copy(self.rt.queue, buf, np.ascontiguousarray(host), is_blocking=True)
        return buf

    def give_back(self):
        self.rt.synchronize()
        for buf, nbytes in self.taken:
            self.rt.allocator.release(buf, nbytes)
        self.taken.clear()


def upload(device, view: np.ndarray, flat: np.ndarray, dt) -> View:
    """A View of ``view``, which must look into the 1-D array ``flat``; flat goes to the device."""
    item = flat.itemsize
    offset = (view.__array_interface__["data"][0] - flat.__array_interface__["data"][0]) // item
    strides = tuple(s // item for s in view.strides)
    return View(device.buffer(flat), offset, tuple(view.shape), strides, dt, flat.nbytes)


def make_operand(rng, shape, np_t, layout, pad):
    """A (Z, R, C) array in ``layout`` ("c", "t": last two dims transposed, "bcast": batch
    stride 0, "bcast_t": both, "strided": every other column, "room", "room_tight": rows with
    room after them), ``pad`` elements into its flat
    storage."""
    Z, R, C = shape
    integer = np.issubdtype(np_t, np.integer)

    def vals(n):
        return rng.integers(-9, 10, n) if integer else rng.uniform(-1, 1, n)

    if layout == "c":
        flat = vals(pad + Z * R * C).astype(np_t)
        return flat, flat[pad:].reshape(Z, R, C)
    if layout == "t":
        flat = vals(pad + Z * R * C).astype(np_t)
        return flat, flat[pad:].reshape(Z, C, R).transpose(0, 2, 1)
    if layout == "bcast":
        flat = vals(pad + R * C).astype(np_t)
        return flat, np.broadcast_to(flat[pad:].reshape(1, R, C), (Z, R, C))
    if layout == "bcast_t":
        flat = vals(pad + R * C).astype(np_t)
        return flat, np.broadcast_to(flat[pad:].reshape(1, C, R).transpose(0, 2, 1), (Z, R, C))
    if layout == "strided":
        flat = vals(pad + Z * R * C * 2).astype(np_t)
        return flat, flat[pad:].reshape(Z, R, 2 * C)[:, :, ::2]
    if layout in ("room", "room_tight"):
        # rows with room after them, as a padded column matrix has: the room after the last
        # row is in the buffer ("room": the direct kernel may read it), or not ("room_tight")
        width = C + ROOM
        size = Z * R * width - (ROOM if layout == "room_tight" else 0)
        flat = vals(pad + size).astype(np_t)
        item = flat.itemsize
        rows = np.lib.stride_tricks.as_strided(
            flat[pad:], (Z, R, C), (R * width * item, width * item, item), writeable=False
        )
        return flat, rows
    raise ValueError(layout)


ACC = {"float16": dtypes.float32, "float32": dtypes.float32, "float64": dtypes.float64}


def check(device, Z, M, N, K, dt, a_layout="c", b_layout="c", pad=0, path=None, seed=0):
    if not device.rt.device.supports(dt):
        pytest.skip(f"{device.rt.device} cannot run {dt}")
    rng = np.random.default_rng(seed)
    acc = ACC.get(dt.name, dtypes.int64)
    fa, va = make_operand(rng, (Z, M, K), dt.np, a_layout, pad)
    fb, vb = make_operand(rng, (Z, K, N), dt.np, b_layout, pad + 3)
    a, b = upload(device, va, fa, dt), upload(device, vb, fb, dt)
    sentinel = np.full(Z * M * N + 2 * GUARD, 77, dt.np)
    out_buf = device.buffer(sentinel)
    out = View(out_buf, GUARD, (Z, M, N), (M * N, N, 1), dt, sentinel.nbytes)
    matmul(device.rt, out, a, b, acc, path=path)
    host = np.empty_like(sentinel)
    cl.enqueue_copy(device.rt.queue, host, out_buf, is_blocking=True)
    assert (host[:GUARD] == 77).all() and (host[GUARD + Z * M * N :] == 77).all(), "stray write"
    got = host[GUARD : GUARD + Z * M * N].reshape(Z, M, N)
    if dt.is_floating_point:
        want = np.matmul(va.astype(np.float64), vb.astype(np.float64))
        tol = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dt.name] * max(K, 1) ** 0.5
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)
    else:
        want = np.matmul(va.astype(np.int64), vb.astype(np.int64)).astype(dt.np)
        np.testing.assert_array_equal(got, want)


SHAPES = [
    (1, 1, 1, 1),
    (1, 3, 5, 7),
    (2, 17, 33, 65),
    (3, 13, 40, 9),
    (1, 0, 5, 4),
    (1, 5, 0, 4),
    (1, 5, 4, 0),
    (0, 5, 4, 3),
    (2, 70, 50, 37),
    (1, 1, 97, 130),
]
LAYOUTS = [
    ("c", "c"),
    ("t", "c"),
    ("c", "t"),
    ("t", "t"),
    ("bcast", "c"),
    ("c", "bcast"),
    ("bcast_t", "bcast_t"),
    ("strided", "strided"),
]
PATHS = [None, "general", "packed", "direct", "tiled"]
ROOM = 11  # elements of room after each row of the "room" layouts


@pytest.fixture
def cldev(cl_device):
    """conftest runs each test on every OpenCL device (``cl_device`` is its name)."""
    d = DeviceUnderTest(cl_device)
    yield d
    d.give_back()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_shapes_float32(cldev, shape, path):
    check(cldev, *shape, dtypes.float32, path=path)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda l: "-".join(l))
def test_layouts(cldev, layout, path):
    check(cldev, 3, 29, 35, 22, dtypes.float32, *layout, pad=5, path=path)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", ["float16", "float64", "int32", "int64", "int8", "uint8", "int16"])
def test_dtypes(cldev, name, path):
    dt = getattr(dtypes, name)
    if name == "float64" and not cldev.fp64:
        pytest.skip("no float64 on this device")
    check(cldev, 2, 19, 37, 23, dt, "t", "c", pad=2, path=path)
    check(cldev, 1, 40, 33, 70, dt, "c", "bcast", pad=1, path=path)


@pytest.mark.parametrize("path", PATHS)
def test_k_zero_gives_zeros(cldev, path):
    check(cldev, 2, 6, 9, 0, dtypes.float32, path=path)
    check(cldev, 2, 6, 9, 0, dtypes.int64, path=path)


@pytest.mark.parametrize("path", [None, "tiled"])
def test_large(cldev, path):
    check(cldev, 1, 1024, 1024, 1024, dtypes.float32, path=path)


def test_large_odd_transposed_batched(cldev):
    check(cldev, 3, 301, 259, 517, dtypes.float32, "t", "bcast", pad=11)
    check(cldev, 2, 129, 67, 255, dtypes.float64, "strided", "t", pad=3)
    check(cldev, 2, 130, 65, 200, dtypes.float16, "c", "t", pad=1)


def test_batch_chunks(cldev, monkeypatch):
    """Scratch too small for every batch: the packed path runs in chunks of batches."""
    from clgrad.backend.opencl import matmul as mm

    monkeypatch.setattr(mm, "PACKED_SCRATCH_BYTES", 40_000)
    check(cldev, 5, 33, 47, 65, dtypes.float32, "c", "c", path="packed")
    check(cldev, 5, 33, 47, 65, dtypes.float32, "t", "bcast", path="packed")
    check(cldev, 5, 33, 47, 65, dtypes.float16, "c", "strided", path="packed")


@pytest.mark.parametrize("path", ["packed", "direct"])
@pytest.mark.parametrize("layout", [("t", "c"), ("strided", "c"), ("bcast_t", "c"), ("t", "t")])
def test_transposed_a_in_place_or_packed(cldev, layout, path, monkeypatch):
    """A transposed (or strided) A is read in place up to PACK_A_MIN_BYTES and packed into
    panels past it: both give the product."""
    from clgrad.backend.opencl import matmul as mm

    for limit in (0, 1 << 30):
        monkeypatch.setattr(mm, "PACK_A_MIN_BYTES", limit)
        check(cldev, 3, 29, 35, 22, dtypes.float32, *layout, pad=5, path=path)
        check(cldev, 2, 7, 33, 1, dtypes.float32, *layout, pad=1, path=path)


@pytest.mark.parametrize("path", PATHS)
def test_long_index(cldev, path, monkeypatch):
    """Views whose offsets pass 2^31 get long index arithmetic; force it on small ones."""
    from clgrad.backend.opencl import matmul as mm

    monkeypatch.setattr(mm, "index_type", lambda *extents: "long")
    check(cldev, 2, 19, 37, 23, dtypes.float32, "t", "bcast", pad=4, path=path)
    check(cldev, 2, 19, 37, 23, dtypes.int64, "c", "t", pad=4, path=path)


@pytest.mark.parametrize("b_layout", ["room", "room_tight"])
@pytest.mark.parametrize("path", PATHS)
def test_rows_with_room(cldev, path, b_layout):
    """A right operand whose rows have room after them (a padded column matrix): the direct
    kernel reads a row's last block as whole vectors where the room is in the buffer, column
    by column where the last row's is not; columns past N are never stored."""
    for Z, M, N, K in ((2, 17, 37, 23), (3, 5, 130, 9), (1, 30, 16, 4)):
        check(cldev, Z, M, N, K, dtypes.float32, "c", b_layout, path=path)


def test_tiled_batches_past_the_grid(cldev, monkeypatch):
    """More batches than the grid's third dimension holds: the tiled kernel loops over them."""
    from clgrad.backend.opencl import matmul as mm

    monkeypatch.setattr(mm, "MAX_GRID_Z", 2)
    check(cldev, 5, 70, 66, 20, dtypes.float32, "c", "t", pad=3, path="tiled")
