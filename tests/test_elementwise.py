"""Elementwise ops against NumPy on every device: dtypes, 0-d, empty, broadcast, strided inputs."""

import math

import numpy as np
import pytest
from conftest import assert_close, supports

import clgrad

FLOATS = ["float32", "float64", "float16"]
INTS = ["int32", "int64", "int8", "uint8", "int16"]
ALL = FLOATS + INTS + ["bool"]


def sample(shape, dtype, rng, low=-3, high=3):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in INTS:
        lo = 0 if dtype == "uint8" else low
        return rng.integers(lo, high + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def layouts(a, device, dt):
    """The same values as a contiguous, a transposed and a stepped-slice tensor."""
    t = clgrad.tensor(a, device=device, dtype=dt)
    yield "contiguous", t
    if a.ndim >= 2:
        tt = clgrad.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device, dtype=dt)
        yield "transposed", tt.transpose(-1, -2)
    if a.ndim >= 1 and a.size:
        wide = np.repeat(a, 2, axis=-1)
        yield "stepped", clgrad.tensor(wide, device=device, dtype=dt)[..., ::2]


def skip_unsupported(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
}


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_binary_arith_layouts(device, op, dtype):
    skip_unsupported(device, dtype)
    rng = np.random.default_rng(0)
    a, b = sample((3, 4), dtype, rng), sample((3, 4), dtype, rng)
    f, ref = BINARY[op]
    dt = getattr(clgrad, dtype)
    for (_, x), (_, y) in zip(layouts(a, device, dt), layouts(b, device, dt)):
        out = f(x, y)
        assert out.dtype == dt and out.device == clgrad.device(device)
        assert_close(out, ref(a, b).astype(dtype))


@pytest.mark.parametrize(
    "shapes",
    [((), ()), ((0,), (0,)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5, 0), (1,)), ((1,), (2, 3))],
)
def test_broadcast_shapes_values(device, shapes):
    rng = np.random.default_rng(1)
    a, b = sample(shapes[0], "float32", rng), sample(shapes[1], "float32", rng)
    x, y = clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
    assert_close(x * y + x, a * b + a)
    assert_close(x - y, a - b)


@pytest.mark.parametrize(
    "shapes", [((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), ()), ((4, 1, 3), (2, 1)), ((0, 3), (3,))]
)
def test_in_place_broadcast(device, shapes):
    """An in-place op with an operand that broadcasts to the written tensor (a bias added into
    a product), its Python-number-first form and the writes PyTorch refuses, against torch."""
    import torch

    rng = np.random.default_rng(2)
    a, b = sample(shapes[0], "float32", rng), sample(shapes[1], "float32", rng)
    x, y = clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
    tx, ty = torch.tensor(a), torch.tensor(b)
    if tuple(torch.broadcast_shapes(tx.shape, ty.shape)) != tx.shape:
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x.add_(y)
        with pytest.raises(RuntimeError):
            tx.add_(ty)
        assert_close(x, a)  # unchanged
        return
    x.add_(y).mul_(2.0)
    tx.add_(ty).mul_(2.0)
    assert_close(x, tx.numpy())
    assert_close(0.5 * x + y, (0.5 * tx + ty).numpy())
    if a.size and a.ndim == 2:
        # part of the written memory as an operand: PyTorch's error, and nothing written
        before = x.cpu().numpy().copy()
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            x.sub_(x[0])
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            tx.sub_(tx[0])
        assert_close(x, before)
        # another row of the same storage shares no element: read as it is
        x[0].add_(x[1])
        tx[0].add_(tx[1])
        assert_close(x, tx.numpy())


def test_broadcast_mismatch_names_shapes(device):
    x, y = clgrad.ones(2, 3, device=device), clgrad.ones(4, device=device)
    with pytest.raises(RuntimeError, match=r"\[2, 3\].*\[4\]"):
        x + y


def test_division_family(device):
    a = np.array([[-7, -3, 0, 3, 7]], np.int64)
    b = np.array([[2], [-2], [3]], np.int64)
    x, y = clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
    q = x / y
    assert q.dtype == clgrad.float32
    assert_close(q, (a / b).astype(np.float32))
    assert_close(x // y, a // b)
    assert_close(x % y, a % b)
    af = a.astype(np.float32)
    bf = b.astype(np.float32)
    assert_close(
        clgrad.tensor(af, device=device) // clgrad.tensor(bf, device=device),
        np.floor_divide(af, bf),
    )
    assert_close(
        clgrad.tensor(af, device=device) % clgrad.tensor(bf, device=device), np.mod(af, bf)
    )
    # integer division by zero raises, as PyTorch, instead of trapping the device
    zero = clgrad.zeros(5, dtype=clgrad.int64, device=device)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x[0] // zero


def test_pow(device):
    a = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    x = clgrad.tensor(a, device=device)
    assert_close(x**2, a**2)
    assert_close(2**x, 2.0**a, rtol=1e-6)
    assert_close(x**x, a**a, rtol=1e-6)
    i = clgrad.tensor([2, 3, -2], device=device)
    assert (i**3).tolist() == [8, 27, -8]
    assert (i**3).dtype == clgrad.int64


def test_scalar_promotion(device):
    i = clgrad.tensor([1, 2, 3], device=device)
    assert (i + 1).dtype == clgrad.int64
    assert (i + 1.5).dtype == clgrad.float32
    assert (i * True).dtype == clgrad.int64
    b = clgrad.tensor([True, False], device=device)
    assert (b + 1).dtype == clgrad.int64
    h = clgrad.tensor([1.0], dtype=clgrad.float16, device=device)
    assert (h + 1.0).dtype == clgrad.float16
    assert (
        clgrad.tensor([1], dtype=clgrad.int32, device=device) + clgrad.tensor(5)
    ).dtype == clgrad.int32
    f = clgrad.tensor([1.0], device=device)
    assert (f + clgrad.tensor(2.0, dtype=clgrad.float64)).dtype == clgrad.float32
    u8 = clgrad.tensor([200], dtype=clgrad.uint8, device=device)
    assert (u8 + clgrad.tensor([1], dtype=clgrad.int8, device=device)).dtype == clgrad.int16
    assert clgrad.result_type(clgrad.tensor([1], dtype=clgrad.int8), 1000) == clgrad.int8


UNARY = {
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "log1p": (np.log1p, (-0.5, 5)),
    "expm1": (np.expm1, (-3, 3)),
    "sqrt": (np.sqrt, (0, 9)),
    "rsqrt": (lambda v: 1 / np.sqrt(v), (0.1, 9)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "tanh": (np.tanh, (-3, 3)),
    "sigmoid": (lambda v: 1 / (1 + np.exp(-v)), (-8, 8)),
    "relu": (lambda v: np.maximum(v, 0), (-3, 3)),
    "erf": (np.vectorize(math.erf), (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "sign": (np.sign, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)),
    "round": (np.round, (-3, 3)),
}


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float(device, op, dtype):
    skip_unsupported(device, dtype)
    fn, (lo, hi) = UNARY[op]
    rng = np.random.default_rng(2)
    a = rng.uniform(lo, hi, size=(4, 6)).astype(dtype)
    if op == "round":
        a[0, :3] = [0.5, 1.5, -2.5]  # halves round to even, as PyTorch
    dt = getattr(clgrad, dtype)
    for _, x in layouts(a, device, dt):
        out = getattr(x, op)()
        assert out.dtype == dt
        assert_close(
            out, fn(a.astype(np.float64)).astype(dtype), rtol=2e-3 if dtype == "float16" else 1e-5
        )


@pytest.mark.parametrize("op", ["exp", "sqrt", "sin", "sigmoid", "tanh"])
def test_unary_int_promotes_to_float(device, op):
    x = clgrad.tensor([0, 1, 2], device=device)
    out = getattr(x, op)()
    assert out.dtype == clgrad.float32
    assert_close(out, UNARY[op][0](np.array([0.0, 1, 2])).astype(np.float32), rtol=1e-6)


def test_unary_int_keeps_dtype(device):
    x = clgrad.tensor([-2, 0, 3], dtype=clgrad.int32, device=device)
    for op, ref in (
        ("abs", [2, 0, 3]),
        ("sign", [-1, 0, 1]),
        ("relu", [0, 0, 3]),
        ("floor", [-2, 0, 3]),
    ):
        out = getattr(x, op)()
        assert out.dtype == clgrad.int32 and out.tolist() == ref


@pytest.mark.parametrize("op", ["gelu", "silu", "softplus"])
def test_activations(device, op):
    a = np.linspace(-30, 30, 61).astype(np.float32)
    x = clgrad.tensor(a, device=device)
    erf = np.vectorize(math.erf)
    d = a.astype(np.float64)
    ref = {
        "gelu": 0.5 * d * (1 + erf(d / math.sqrt(2))),
        "silu": d / (1 + np.exp(-d)),
        "softplus": np.log1p(np.exp(d)),
    }[op]
    from clgrad.nn import functional as F

    assert_close(getattr(F, op)(x), ref.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_special_values(device):
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0], np.float32)
    x = clgrad.tensor(a, device=device)
    assert x.isnan().tolist() == [True, False, False, False, False]
    assert x.isinf().tolist() == [False, True, True, False, False]
    assert_close(x.relu(), np.array([np.nan, np.inf, 0, 0, 0], np.float32))
    assert_close(x.maximum(clgrad.zeros(5, device=device)), np.maximum(a, 0))
    assert_close(x.clamp(-2, 2), np.array([np.nan, 2, -2, 0, -1], np.float32))
    assert clgrad.tensor([1, 2], device=device).isnan().tolist() == [False, False]


def test_clamp_min_max_where(device):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 5)).astype(np.float32)
    x = clgrad.tensor(a, device=device)
    assert_close(x.clamp(min=-0.5), np.maximum(a, -0.5))
    assert_close(x.clamp(max=0.5), np.minimum(a, 0.5))
    assert_close(x.clamp(-0.5, 0.5), np.clip(a, -0.5, 0.5))
    assert_close(clgrad.where(x > 0, x, 0.0), np.where(a > 0, a, 0))
    y = clgrad.tensor(a[:1], device=device)
    assert_close(clgrad.maximum(x, y), np.maximum(a, a[:1]))
    assert_close(clgrad.minimum(x, y), np.minimum(a, a[:1]))
    # a cast in the middle: through float64 where the device runs it, else float16
    wide = clgrad.float64 if clgrad.device(device).supports_float64 else clgrad.float16
    fallback = a[:1].astype(wide.np).astype(np.float32)
    assert_close(clgrad.where(x > 0, x, y.to(wide).float()), np.where(a > 0, a, fallback))
    with pytest.raises(RuntimeError):
        x.clamp()


@pytest.mark.parametrize("dtype", ALL)
def test_comparisons(device, dtype):
    skip_unsupported(device, dtype)
    rng = np.random.default_rng(4)
    a, b = sample((3, 4), dtype, rng), sample((1, 4), dtype, rng)
    dt = getattr(clgrad, dtype)
    x, y = clgrad.tensor(a, device=device, dtype=dt), clgrad.tensor(b, device=device, dtype=dt)
    for f, ref in (
        (lambda p, q: p == q, np.equal),
        (lambda p, q: p != q, np.not_equal),
        (lambda p, q: p < q, np.less),
        (lambda p, q: p <= q, np.less_equal),
        (lambda p, q: p > q, np.greater),
        (lambda p, q: p >= q, np.greater_equal),
    ):
        out = f(x, y)
        assert out.dtype == clgrad.bool
        assert_close(out, ref(a, b))
    assert_close(x == 1, a == 1)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "uint8"])
def test_bitwise(device, dtype):
    rng = np.random.default_rng(5)
    a, b = sample((4, 3), dtype, rng), sample((4, 3), dtype, rng)
    dt = getattr(clgrad, dtype)
    x, y = clgrad.tensor(a, device=device, dtype=dt), clgrad.tensor(b, device=device, dtype=dt)
    assert_close(x & y, a & b)
    assert_close(x | y, a | b)
    assert_close(x ^ y, a ^ b)
    assert_close(~x, ~a)


def test_bitwise_rejects_float(device):
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):  # as torch
        clgrad.ones(2, device=device) & clgrad.ones(2, device=device)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ["float32", "float16", "int64", "uint8", "bool", "float64"])
def test_casts(device, src, dst):
    skip_unsupported(device, src)
    skip_unsupported(device, dst)
    rng = np.random.default_rng(6)
    a = sample((2, 5), src, rng, 0, 100)
    x = clgrad.tensor(a, device=device, dtype=getattr(clgrad, src))
    out = x.to(getattr(clgrad, dst))
    assert out.dtype == getattr(clgrad, dst)
    assert_close(out, a.astype(dst))


def test_cast_shortcuts(device):
    x = clgrad.tensor([1.7, -2.2], device=device)
    assert x.long().tolist() == [1, -2]
    assert x.int().dtype == clgrad.int32
    assert x.half().dtype == clgrad.float16
    assert x.bool().tolist() == [True, True]
    assert x.float() is x
    if supports(device, clgrad.float64):
        assert x.double().dtype == clgrad.float64


@pytest.mark.parametrize("src", FLOATS)
def test_float_to_uint8_wraps_through_int64(device, src):
    """PyTorch converts a float to uint8 through int64 (``static_cast_with_inter_type``): a
    negative or large value wraps. C leaves it undefined, and NVIDIA's driver saturated -1 to 0."""
    skip_unsupported(device, src)
    a = np.array([[-1.0, -7.75, 300.0, 1e4], [-200.5, 255.9, 0.5, 3e4]], dtype=src)
    want = a.astype(np.int64).astype(np.uint8)
    for layout, t in layouts(a, device, getattr(clgrad, src)):
        assert t.to(clgrad.uint8).tolist() == want.tolist(), layout
    x = clgrad.tensor(a, device=device, dtype=getattr(clgrad, src))
    assert (x * 1).byte().tolist() == want.tolist()
    assert clgrad.empty(2, 4, dtype=clgrad.uint8, device=device).copy_(x).tolist() == want.tolist()


def test_empty_and_zero_dim(device):
    e = clgrad.ones(0, 3, device=device)
    assert (e + 1).shape == (0, 3)
    assert e.exp().numel() == 0
    s = clgrad.tensor(2.0, device=device)
    assert (s * 3).item() == 6.0 and (s * 3).shape == ()
    assert (s + clgrad.ones(2, device=device)).tolist() == [3.0, 3.0]


def test_zero_dim_cpu_tensor_joins_any_device(device):
    x = clgrad.ones(3, device=device)
    assert (x * clgrad.tensor(2.0)).tolist() == [2.0] * 3


def test_mixed_devices_error():
    cls = [d for d in clgrad.devices() if d.is_cl]
    if not cls:
        pytest.skip("no OpenCL device")
    a, b = clgrad.ones(2), clgrad.ones(2, device=cls[0])
    with pytest.raises(RuntimeError, match=r"cpu.*cl:0|cl:0.*cpu"):
        a + b


def test_large_offsets_use_long_index(device):
    # a view far into a storage, read through a stride: exercises index arithmetic
    base = clgrad.arange(100000, dtype=clgrad.float32, device=device)
    v = base[50000::7]
    assert_close(v * 2, np.arange(50000, 100000, 7, dtype=np.float32) * 2)


def test_a_layout_seen_before_takes_each_calls_buffers_offsets_and_numbers(device):
    """An op over a layout seen before skips planning (core._launch_fast keeps the plan per
    dtypes, shapes and strides): offsets into one storage, other storages, other Python numbers
    and a number that must raise still give each call's own result."""
    base = np.arange(40, dtype=np.float32)
    storage = clgrad.tensor(base, device=device)
    for start in range(4):  # one layout (shape (8,), stride (3,)) at four offsets
        x = storage[start : start + 24 : 3]
        for scale in (2.0, -0.5):
            got = (x * scale + start).cpu().numpy()
            np.testing.assert_array_equal(got, base[start : start + 24 : 3] * scale + start)
    for _ in range(2):  # a fresh storage each time, the same layout
        y = clgrad.tensor(base[:8] + 1, device=device)
        np.testing.assert_array_equal((y * y).cpu().numpy(), (base[:8] + 1) ** 2)
    small = clgrad.tensor([1, 2], dtype=clgrad.uint8, device=device)
    assert (small + 3).tolist() == [4, 5]
    assert (small + 300).tolist() == [45, 46]  # wrapped to uint8, as PyTorch does
    with pytest.raises(OverflowError):  # as PyTorch: 2**64 is no int64 nor uint64
        small + 2**64


def test_a_layout_seen_before_keeps_what_else_decides_the_result(device):
    """A declared op's kept launch (core.layout_key) is per kernel and default dtype too: the
    exponent's variant (``x ** 2`` as a product) and a new default float dtype give their own
    results, as PyTorch; a number of another type promotes anew."""
    import torch

    x = clgrad.tensor([1.5, -2.0, 3.0], device=device)
    tx = torch.tensor([1.5, -2.0, 3.0])
    for e in (2, 3, 2, 0.5, 2):
        assert_close(x**e, (tx**e).numpy())
    i = clgrad.tensor([1, 2], device=device)
    ti = torch.tensor([1, 2])
    for number in (2, 1.5, True, 2):
        got, want = (i * number).cpu().numpy(), (ti * number).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    if not supports(device, clgrad.float64):
        return
    old = clgrad.get_default_dtype()
    try:
        for dt, tdt in ((clgrad.float64, torch.float64), (clgrad.float32, torch.float32)):
            clgrad.set_default_dtype(dt)
            torch.set_default_dtype(tdt)
            assert (i * 1.5).dtype == dt and (ti * 1.5).dtype == tdt
    finally:
        clgrad.set_default_dtype(old)
        torch.set_default_dtype(torch.float32)
