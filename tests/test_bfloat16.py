"""bfloat16 tensors against PyTorch's, on every test device: stored in 16 bits, computed in
float32 and rounded to nearest even on every store, as torch's CPU kernels do, so most results
are equal bit for bit; sums and products, which torch's kernels accumulate in another order,
may differ by an ulp of bfloat16 (8 significand bits: an ulp is 2**-7 of the leading bit)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import torch

import clgrad
from clgrad.dtypes import bfloat16_bits, bfloat16_values

torch.set_num_threads(1)


def _values(t) -> np.ndarray:
    """A tensor's numbers as float64 (a torch or clgrad bfloat16 tensor through float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.is_floating_point() else t).numpy().astype(np.float64)
    t = t.detach()
    return (t.float() if t.dtype.is_floating_point else t).cpu().numpy().astype(np.float64)


def _bf16_ulp(x: np.ndarray) -> np.ndarray:
    """One bfloat16 ulp at each value (of its leading bit; the smallest normal's below it)."""
    mag = np.maximum(np.abs(np.nan_to_num(x, posinf=0, neginf=0)), 2.0**-126)
    return 2.0 ** (np.floor(np.log2(mag)) - 7)


def assert_matches(got, want, ulps=0, of_largest=False):
    """clgrad's tensor ``got`` has torch's ``want``'s shape and dtype, and values equal (NaN
    where NaN, the same infinities) or within ``ulps`` bfloat16 ulps of torch's: of each value,
    or ``of_largest``, of the largest (a sum whose terms cancel is as far from torch's as an
    ulp of its terms, whatever its own size)."""
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    g, w = _values(got), _values(want)
    assert np.array_equal(np.isnan(g), np.isnan(w)), (g, w)
    finite = np.isfinite(w)
    assert np.array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)]), (g, w)
    err = np.abs(g[finite] - w[finite])
    ulp = _bf16_ulp(np.abs(w[finite]).max(initial=0) if of_largest else w[finite])
    assert (err <= ulps * ulp).all(), f"off by {np.max(err / ulp)} ulps: {g} vs {w}"


def pair(device, *shapes, seed=0, low=-3.0, high=3.0, grad=False):
    """The same random bfloat16 inputs for torch and clgrad (on ``device``)."""
    rng = np.random.default_rng(seed)
    theirs, ours = [], []
    for shape in shapes:
        a = rng.uniform(low, high, size=shape).astype(np.float32)
        t = torch.from_numpy(a).bfloat16().requires_grad_(grad)
        c = clgrad.tensor(a, device=device).bfloat16().requires_grad_(grad)
        theirs.append(t)
        ours.append(c)
    return theirs, ours


def check(device, fn, *shapes, ulps=0, of_largest=False, seed=0, low=-3.0, high=3.0):
    """``fn(lib, *inputs)`` on bfloat16 inputs of ``shapes``: clgrad's result matches torch's
    (``assert_matches``)."""
    theirs, ours = pair(device, *shapes, seed=seed, low=low, high=high)
    want = fn(torch, *theirs)
    got = fn(clgrad, *ours)
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want):
            assert_matches(g, w, ulps, of_largest)
    else:
        assert_matches(got, want, ulps, of_largest)


# ---- conversions --------------------------------------------------------------------------


def _special_floats() -> np.ndarray:
    """float32 values that test every rounding case: ties to even both ways, just past and short
    of half an ulp, subnormals, the largest finite values and overflow, zeros, inf, NaN."""
    bits = np.array(
        [
            0x3F808000,  # 1 + half an ulp: a tie, to the even 1.0
            0x3F818000,  # 1 + 1.5 ulps: a tie, to the even 1 + 2 ulps
            0x3F808001,  # just past half: up
            0x3F807FFF,  # just short of half: down
            0xBF818000,  # a negative tie
            0x00000001,  # the smallest float32 subnormal: to +0
            0x00008000,  # a subnormal tie, to even (0)
            0x00018000,  # a subnormal tie, to even (0x0002)
            0x007FFFFF,  # the largest subnormal: up to the smallest normal
            0x80400000,  # a negative subnormal bfloat16 holds exactly
            0x7F7F7FFF,  # just under bfloat16's max + half an ulp: its max
            0x7F7F8000,  # bfloat16's max + half an ulp, a tie to even: inf
            0x7F7FFFFF,  # float32's max: overflows to inf
            0xFF7FFFFF,  # and -inf
            0x00000000,
            0x80000000,
            0x7F800000,
            0xFF800000,
            0x7FC00000,  # NaN
            0xFFC00001,  # a negative NaN with a payload
            0x7F800001,  # a signaling NaN: the add would carry it into inf
        ],
        dtype=np.uint32,
    )
    return bits.view(np.float32)


def test_float32_to_bfloat16_matches_torch_bit_for_bit(device):
    f = _special_floats()
    rng = np.random.default_rng(1)
    f = np.concatenate([f, rng.standard_normal(1000).astype(np.float32) * 1e3])
    want = torch.from_numpy(f).bfloat16().view(torch.int16).numpy().view(np.uint16)
    got = clgrad.tensor(f, device=device).bfloat16()
    bits = got.view(clgrad.int16).cpu().numpy().view(np.uint16)
    nan = np.isnan(f)
    assert np.array_equal(bits[~nan], want[~nan])
    # a NaN stays a NaN of its sign (torch's vector path makes every NaN 0xFFFF: no match there)
    assert np.isnan(got.float().cpu().numpy()[nan]).all()
    assert np.array_equal(bits[nan] >> 15, f[nan].view(np.uint32) >> 31)
    assert got.float().cpu().numpy()[f.view(np.uint32) == 0x7F7F8000][0] == np.inf


def test_bfloat16_to_float32_is_exact(device):
    # every bit pattern
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    t = torch.from_numpy(patterns.view(np.int16)).view(torch.bfloat16).float().numpy()
    ours = clgrad.tensor(patterns.view(np.int16), device=device).view(clgrad.bfloat16)
    got = ours.float().cpu().numpy()
    assert np.array_equal(got.view(np.uint32), t.view(np.uint32))
    # and the host helpers agree
    assert np.array_equal(bfloat16_values(patterns).view(np.uint32), t.view(np.uint32))


def test_python_numbers_and_float64_round_as_torch(device):
    values = [1.0, 1.00390625, 1.01171875, 3.14159, -2.5e-40, 1e39, -1e39, 0.1, 65504.0]
    want = torch.tensor(values, dtype=torch.bfloat16)
    got = clgrad.tensor(values, dtype=clgrad.bfloat16, device=device)
    assert_matches(got, want)
    assert got.tolist() == want.tolist()
    assert clgrad.tensor(2.75, dtype=clgrad.bfloat16).item() == 2.75
    assert isinstance(got[0].item(), float)
    d = np.array([1.0 + 2.0**-8 + 2.0**-30, -3.3333333333, 7e-39])  # double rounding, as torch
    want = torch.from_numpy(d).bfloat16()
    assert_matches(clgrad.tensor(d, dtype=clgrad.bfloat16, device=device), want)
    if clgrad.device(device).supports(clgrad.float64):  # a float64 tensor's cast, on the device
        assert_matches(clgrad.tensor(d, device=device).bfloat16(), want)
    assert np.array_equal(
        bfloat16_bits(d), torch.from_numpy(d).bfloat16().view(torch.int16).numpy().view(np.uint16)
    )


ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


@pytest.mark.parametrize("other", ALL)
def test_casts_to_and_from_every_dtype(device, other):
    if other == "float64" and not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device}: no float64")
    values = np.array([0, 1, -1, 2.5, -7.75, 100, 127, 200, 0.3, 1e4], dtype=np.float32)
    theirs = torch.from_numpy(values).bfloat16()
    ours = clgrad.tensor(values, device=device).bfloat16()
    t_dt, c_dt = getattr(torch, other), getattr(clgrad, other)
    # bfloat16 -> other (int8 from in-range values: out of range is undefined in C; uint8
    # goes through int64 in PyTorch, which defines it)
    keep = slice(0, 3) if other == "int8" else slice(None)
    assert_matches(ours[keep].to(c_dt), theirs[keep].to(t_dt))
    # other -> bfloat16
    src_t = theirs.to(t_dt)
    src_c = clgrad.tensor(src_t.float().numpy(), device=device).to(c_dt)
    assert_matches(src_c.to(clgrad.bfloat16), src_t.to(torch.bfloat16))
    assert_matches(src_c.bfloat16(), src_t.bfloat16())


def test_tensor_api(device):
    x = clgrad.ones(2, 3, device=device, dtype=clgrad.bfloat16)
    assert x.dtype is clgrad.bfloat16 and x.element_size() == 2 and x.is_floating_point()
    assert "dtype=clgrad.bfloat16" in repr(x)
    assert x.to("cpu").dtype is clgrad.bfloat16
    assert clgrad.zeros_like(x).dtype is clgrad.bfloat16
    assert clgrad.full((2,), 1.5, dtype=clgrad.bfloat16, device=device).tolist() == [1.5, 1.5]
    assert clgrad.tensor([1.0], dtype="bfloat16").dtype is clgrad.bfloat16
    assert x.type(clgrad.float32).dtype is clgrad.float32
    with pytest.raises(TypeError, match="BFloat16"):
        x.cpu().numpy()
    with pytest.raises(TypeError, match="BFloat16"):
        torch.ones(1, dtype=torch.bfloat16).numpy()  # (what torch does)
    layer = clgrad.nn.Linear(3, 2).to(device).bfloat16()
    assert layer.weight.dtype is clgrad.bfloat16 and layer.bias.dtype is clgrad.bfloat16
    # torch.tensor of a bfloat16 tensor, the legacy names
    assert clgrad.tensor(x * 1.5).dtype is clgrad.bfloat16 and clgrad.tensor(x * 1.5).tolist()[0]
    kind = "clgrad.BFloat16Tensor" if device == "cpu" else "clgrad.cuda.BFloat16Tensor"
    assert x.type() == kind and x.cpu().storage_type() is clgrad.BFloat16Storage
    assert clgrad.BFloat16Tensor([1.5, 2]).dtype is clgrad.bfloat16
    assert clgrad.ones(2).type("torch.BFloat16Tensor").dtype is clgrad.bfloat16


@pytest.mark.parametrize(
    "values",
    [[1.0039, 3.14159, 1e-5], [1.5, 2.25, -3.0], [1e10, 1.0], [0.1, 0.2], [math.nan, -math.inf]],
)
def test_repr_as_torch(device, values):
    ours = clgrad.tensor(values, dtype=clgrad.bfloat16, device=device).cpu()
    theirs = torch.tensor(values, dtype=torch.bfloat16)
    assert repr(ours).replace("clgrad.", "") == repr(theirs).replace("torch.", "")


def test_finfo_and_promotion():
    ours, theirs = clgrad.finfo(clgrad.bfloat16), torch.finfo(torch.bfloat16)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, name) == getattr(theirs, name), name
    for other in ALL:
        want = torch.promote_types(torch.bfloat16, getattr(torch, other))
        got = clgrad.promote_types(clgrad.bfloat16, getattr(clgrad, other))
        assert got.name == str(want).rpartition(".")[2]


def test_promotion_in_ops(device):
    b = clgrad.ones(3, dtype=clgrad.bfloat16, device=device)
    tb = torch.ones(3, dtype=torch.bfloat16)
    assert (b + clgrad.ones(3, dtype=clgrad.float16, device=device)).dtype is clgrad.float32
    assert (b + clgrad.ones(3, dtype=clgrad.int64, device=device)).dtype is clgrad.bfloat16
    assert (b + 2).dtype is clgrad.bfloat16 and (b * 2.5).dtype is clgrad.bfloat16
    zero_d = clgrad.tensor(1.5, device=device)  # a 0-d float32 tensor does not promote
    assert (b + zero_d).dtype is clgrad.bfloat16
    assert (b + clgrad.ones(3, device=device)).dtype is clgrad.float32
    assert_matches(b + zero_d, tb + torch.tensor(1.5))
    assert_matches(b / 3, tb / 3)
    assert_matches(clgrad.arange(4, device=device) * b[0], torch.arange(4) * tb[0])


# ---- ops --------------------------------------------------------------------------------

UNARY = {
    "neg": lambda t, x: -x,
    "abs": lambda t, x: x.abs(),
    "exp": lambda t, x: x.exp(),
    "log": lambda t, x: x.abs().log(),
    "sqrt": lambda t, x: x.abs().sqrt(),
    "rsqrt": lambda t, x: (x.abs() + 0.1).rsqrt(),
    "sin": lambda t, x: x.sin(),
    "tanh": lambda t, x: x.tanh(),
    "sigmoid": lambda t, x: x.sigmoid(),
    "relu": lambda t, x: t.relu(x),
    "gelu": lambda t, x: t.nn.functional.gelu(x),
    "silu": lambda t, x: t.nn.functional.silu(x),
    "floor": lambda t, x: x.floor(),
    "round": lambda t, x: (x * 10).round(),
    "clamp": lambda t, x: x.clamp(-1, 1.5),
    "pow": lambda t, x: x**2,
    "reciprocal": lambda t, x: x.reciprocal(),
    "square": lambda t, x: x * x,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(device, name):
    # transcendental functions: torch's CPU kernels and ours may round float32 differently
    # in the last place, which can move a bfloat16 rounding by an ulp
    check(device, UNARY[name], (4, 33), ulps=1)


BINARY = {
    "add": lambda t, x, y: x + y,
    "sub": lambda t, x, y: x - y,
    "mul": lambda t, x, y: x * y,
    "div": lambda t, x, y: x / y,
    "maximum": lambda t, x, y: t.maximum(x, y),
    "minimum": lambda t, x, y: t.minimum(x, y),
    "where": lambda t, x, y: t.where(x > y, x, y),
    "atan2": lambda t, x, y: t.atan2(x, y),
    "add_alpha": lambda t, x, y: t.add(x, y, alpha=0.5),
    "broadcast": lambda t, x, y: x[:, :1] * y[:1],
    "lt": lambda t, x, y: x < y,
    "eq": lambda t, x, y: x == y.round(),
    "lerp": lambda t, x, y: t.lerp(x, y, 0.3),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(device, name):
    check(device, BINARY[name], (5, 17), (5, 17), ulps=1 if name == "atan2" else 0)


def test_inplace_and_scalars(device):
    (tx, ty), (cx, cy) = pair(device, (3, 7), (3, 7))
    tx.mul_(ty).add_(1.25).div_(3)
    cx.mul_(cy).add_(1.25).div_(3)
    assert_matches(cx, tx)
    tx.clamp_(min=-0.5)
    cx.clamp_(min=-0.5)
    assert_matches(cx, tx)


REDUCTIONS = {
    "sum": lambda t, x: x.sum(),
    "sum_dim": lambda t, x: x.sum(1),
    "mean": lambda t, x: x.mean(0),
    "max": lambda t, x: x.max(),
    "max_dim": lambda t, x: x.max(dim=1),
    "min": lambda t, x: x.amin(0),
    "argmax": lambda t, x: x.argmax(1),
    "argmin": lambda t, x: x.argmin(),
    "prod": lambda t, x: (x / 3 + 1).prod(1),
    "norm": lambda t, x: x.norm(),
    "var": lambda t, x: x.var(1),
    "std": lambda t, x: x.std(0),
    "logsumexp": lambda t, x: x.logsumexp(1),
    "cumsum": lambda t, x: x.cumsum(1),
    "sort": lambda t, x: x.sort(dim=1, stable=True),
    "sort_descending": lambda t, x: x.sort(dim=0, descending=True, stable=True),
    "topk": lambda t, x: x.topk(3, 1)[0],  # (ties: either index)
    "any": lambda t, x: (x > 2).any(1),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(device, name):
    # torch sums a row's floats in another order (and cumsum rounds each partial sum to
    # bfloat16, where we keep float32 partial sums): an ulp or two of the result
    # (prod rounds each partial product to bfloat16 in torch)
    ulps = {"cumsum": 8, "var": 2, "std": 2, "prod": 8, "norm": 1, "logsumexp": 1}.get(name, 1)
    check(device, REDUCTIONS[name], (6, 40), ulps=ulps)


@pytest.mark.parametrize(
    "name", ["sum", "sum0", "amax", "argmax", "softmax", "layer_norm", "cumsum", "sort", "mm"]
)
def test_long_rows_take_the_vector_paths(device, name):
    # rows of 1000: the reductions', scans' and products' vector loads and stores of bf16
    fn = {
        "sum": lambda t, x: x.sum(1),
        "sum0": lambda t, x: x.sum(0),
        "amax": lambda t, x: x.amax(1),
        "argmax": lambda t, x: x.argmax(1),
        "softmax": lambda t, x: x.softmax(1),
        "layer_norm": lambda t, x: t.nn.functional.layer_norm(x, (1000,)),
        "cumsum": lambda t, x: x.cumsum(1),
        "sort": lambda t, x: x.sort(1)[0],
        "mm": lambda t, x: x @ x.T,
    }[name]
    check(device, fn, (64, 1000), ulps=1)


def test_matmul_and_linear(device):
    check(device, lambda t, a, b: a @ b, (7, 33), (33, 5), ulps=1)
    check(device, lambda t, a, b: a @ b, (64, 96), (96, 80), ulps=1, high=1.0, low=-1.0)
    check(device, lambda t, a, b: t.bmm(a, b), (3, 4, 9), (3, 9, 6), ulps=1)
    check(device, lambda t, a, b: a @ b.T, (2, 16), (24, 16), ulps=1)
    check(device, lambda t, a, b: a @ b, (16,), (16, 8), ulps=1)
    check(
        device,
        lambda t, x, w, b: t.nn.functional.linear(x, w, b),
        (4, 10),
        (6, 10),
        (6,),
        ulps=1,
    )


def test_conv2d(device):
    check(
        device,
        lambda t, x, w, b: t.nn.functional.conv2d(x, w, b, padding=1),
        (2, 3, 8, 8),
        (4, 3, 3, 3),
        (4,),
        ulps=1,
        of_largest=True,  # (torch adds the bias to the float sums, we to their rounding)
        low=-1.0,
        high=1.0,
    )
    check(
        device,
        lambda t, x: t.nn.functional.max_pool2d(x, 2),
        (2, 3, 8, 8),
    )


def test_softmax_and_layer_norm(device):
    check(device, lambda t, x: x.softmax(-1), (5, 19), ulps=1)
    check(device, lambda t, x: x.log_softmax(1), (5, 19), ulps=1)
    check(device, lambda t, x: x.softmax(0), (5, 19), ulps=1)
    check(
        device,
        lambda t, x, w, b: t.nn.functional.layer_norm(x, (19,), w, b),
        (5, 19),
        (19,),
        (19,),
        ulps=1,
    )
    check(device, lambda t, x: t.nn.functional.layer_norm(x, (19,)), (5, 19), ulps=1)


def test_cross_entropy(device):
    (tx,), (cx,) = pair(device, (6, 5))
    target = [0, 4, 2, 2, 1, 3]
    want = torch.nn.functional.cross_entropy(tx, torch.tensor(target))
    got = clgrad.nn.functional.cross_entropy(cx, clgrad.tensor(target, device=device))
    assert_matches(got, want, ulps=1)


def test_indexing_and_movement(device):
    idx = [3, 0, 0, 2]
    check(device, lambda t, x: x[1:4, ::2], (5, 6))
    check(device, lambda t, x: x[[3, 0, 0, 2]], (5, 6))
    check(device, lambda t, x: x[x > 0], (5, 6))
    check(device, lambda t, x: x.T.contiguous(), (5, 6))
    check(device, lambda t, x: x.permute(2, 0, 1).reshape(-1, 4), (2, 3, 4))
    check(device, lambda t, x: x.flip(0), (5, 6))
    check(device, lambda t, x, y: t.cat([x, y], 0), (2, 6), (3, 6))
    check(device, lambda t, x, y: t.stack([x, y], 1), (2, 6), (2, 6))
    check(
        device, lambda t, x: t.gather(x, 1, t.tensor([[0, 5], [1, 1]] * 2, device=x.device)), (4, 6)
    )
    check(device, lambda t, x: x.index_select(0, t.tensor(idx, device=x.device)), (5, 6))
    check(device, lambda t, x: x.masked_fill(x > 1, -2.0), (5, 6))
    check(device, lambda t, x: x.unfold(1, 2, 2), (3, 6))
    check(device, lambda t, x: t.nn.functional.pad(x, (1, 2)), (3, 6))
    check(device, lambda t, x: x.repeat(2, 1), (3, 6))
    check(device, lambda t, x: x.expand(4, 3, 6).clone(), (3, 6))
    check(device, lambda t, x: t.tril(x), (5, 6))


def test_copy_and_writes(device):
    (tx, ty), (cx, cy) = pair(device, (4, 6), (4, 6))
    tx[1] = ty[2]
    cx[1] = cy[2]
    tx[:, 0] = 7.3
    cx[:, 0] = 7.3
    assert_matches(cx, tx)
    tx.copy_(ty.float() * 1.001)
    cx.copy_(cy.float() * 1.001)
    assert_matches(cx, tx)
    # index_put_ with accumulate adds each repeated index's values in turn, rounding each sum
    idx = [0, 2, 0, 0, 3]
    tv = torch.tensor([1.0, 0.00390625, 0.00390625, 0.00390625, 2.0]).bfloat16()
    cv = clgrad.tensor(tv.float().numpy(), device=device).bfloat16()
    tz, cz = (
        torch.ones(4, dtype=torch.bfloat16),
        clgrad.ones(4, dtype=clgrad.bfloat16, device=device),
    )
    tz.index_put_((torch.tensor(idx),), tv, accumulate=True)
    cz.index_put_((clgrad.tensor(idx, device=device),), cv, accumulate=True)
    if device == "cpu":  # (atomic adds on a device run in any order)
        assert_matches(cz, tz)
    else:
        assert_matches(cz, tz, ulps=2)
    cpu = cx.to("cpu")
    assert cpu.dtype is clgrad.bfloat16
    assert_matches(cpu.to(device), tx)


def test_nonzero_sees_negative_zero_as_zero(device):
    values = [0.0, -0.0, 1.0, -2.0]
    x = clgrad.tensor(values, dtype=clgrad.bfloat16, device=device)
    want = torch.tensor(values, dtype=torch.bfloat16)
    assert x.nonzero().tolist() == want.nonzero().tolist()
    assert x.bool().tolist() == want.bool().tolist()
    assert (x == 0).tolist() == (want == 0).tolist()


def test_random_and_creation(device):
    clgrad.manual_seed(0)
    r = clgrad.rand(100000, dtype=clgrad.bfloat16, device=device)
    # in [0, 1) after the store too: a draw of 24 bits would round up to 1.0 near the top
    assert r.dtype is clgrad.bfloat16 and 0 <= r.min().item() and r.max().item() < 1
    assert abs(r.float().mean().item() - 0.5) < 0.01
    n = clgrad.randn(1000, dtype=clgrad.bfloat16, device=device)
    assert abs(n.float().mean().item()) < 0.2
    want = torch.arange(0, 3, 0.37, dtype=torch.bfloat16)
    assert_matches(clgrad.arange(0, 3, 0.37, dtype=clgrad.bfloat16, device=device), want)
    # (torch steps in bfloat16 arithmetic, we in float64: an ulp apart at most)
    want = torch.linspace(-1, 2, 9, dtype=torch.bfloat16)
    assert_matches(clgrad.linspace(-1, 2, 9, dtype=clgrad.bfloat16, device=device), want, 1)
    assert_matches(
        clgrad.eye(3, dtype=clgrad.bfloat16, device=device), torch.eye(3, dtype=torch.bfloat16)
    )


def _index(t, x, values):
    return t.tensor(values, device=x.device)


# ops with their gradients, in bfloat16
WITH_GRADS = {
    "conv1d": ([(2, 3, 9), (4, 3, 3)], lambda t, x, w: t.nn.functional.conv1d(x, w, padding=1)),
    "conv_transpose2d": (
        [(1, 2, 5, 5), (2, 3, 3, 3)],
        lambda t, x, w: t.nn.functional.conv_transpose2d(x, w, stride=2),
    ),
    "avg_pool2d": ([(2, 3, 6, 6)], lambda t, x: t.nn.functional.avg_pool2d(x, 2)),
    "max_pool1d": ([(2, 3, 8)], lambda t, x: t.nn.functional.max_pool1d(x, 3, 2)),
    "bilinear": (
        [(1, 2, 4, 4)],
        lambda t, x: t.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    ),
    "batch_norm": (
        [(4, 3, 5)],
        lambda t, x: t.nn.functional.batch_norm(x, None, None, training=True),
    ),
    "group_norm": ([(2, 4, 5)], lambda t, x: t.nn.functional.group_norm(x, 2)),
    "attention": (
        [(2, 4, 8), (2, 4, 8), (2, 4, 8)],
        lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v),
    ),
    "mse_loss": ([(4, 5), (4, 5)], lambda t, x, y: t.nn.functional.mse_loss(x, y)),
    "bce_with_logits": (
        [(4, 5), (4, 5)],
        lambda t, x, y: t.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid()),
    ),
    "label_smoothing": (
        [(4, 5)],
        lambda t, x: t.nn.functional.cross_entropy(
            x, _index(t, x, [0, 1, 2, 4]), label_smoothing=0.1
        ),
    ),
    "embedding": (
        [(6, 4)],
        lambda t, w: t.nn.functional.embedding(_index(t, w, [[0, 5], [2, 2]]), w),
    ),
    "logcumsumexp": ([(3, 6)], lambda t, x: x.logcumsumexp(1)),
    "cumprod": ([(3, 6)], lambda t, x: (x / 3 + 1).cumprod(1)),
    "median": ([(3, 7)], lambda t, x: x.median(1)[0]),
    "index_add": ([(5, 3), (2, 3)], lambda t, x, s: x.index_add(0, _index(t, x, [1, 1]), s)),
    "scatter_add": (
        [(5, 3), (2, 3)],
        lambda t, x, s: x.scatter_add(0, _index(t, x, [[1, 0, 4], [1, 1, 1]]), s),
    ),
    "fold": ([(1, 8, 9)], lambda t, x: t.nn.functional.fold(x, (4, 4), 2)),
    "grid_sample": (
        [(1, 2, 4, 4), (1, 3, 3, 2)],
        lambda t, x, g: t.nn.functional.grid_sample(x, g.tanh(), align_corners=False),
    ),
    "baddbmm": ([(2, 3, 4), (2, 3, 5), (2, 5, 4)], lambda t, x, y, z: t.baddbmm(x, y, z)),
}


@pytest.mark.parametrize("name", sorted(WITH_GRADS))
def test_ops_and_their_gradients(device, name):
    shapes, fn = WITH_GRADS[name]
    theirs, ours = pair(device, *shapes, low=-2.0, high=2.0, grad=True)
    want, got = fn(torch, *theirs), fn(clgrad, *ours)
    # composite ops round their intermediates where torch's fused CPU kernels may not: a few
    # ulps of the largest value
    assert_matches(got, want, ulps=4, of_largest=True)
    # a random cotangent: a plain sum's gradient through a normalization is 0 up to noise
    cotangent = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(np.float32)
    want.float().backward(torch.from_numpy(cotangent))
    got.float().backward(clgrad.tensor(cotangent, device=device))
    for c, t in zip(ours, theirs):
        assert c.grad.dtype is clgrad.bfloat16
        assert_matches(c.grad, t.grad, ulps=8, of_largest=True)


def test_torchs_refusals_and_special_values(device):
    x = clgrad.ones(3, 2, dtype=clgrad.bfloat16, device=device)
    with pytest.raises(NotImplementedError, match="'BFloat16'"):
        clgrad.cdist(x, x)  # torch: "cdist" not implemented for 'BFloat16'
    with pytest.raises(RuntimeError, match="float or double"):
        x.quantile(0.5)
    with pytest.raises(NotImplementedError, match="'BFloat16'"):
        clgrad.special.chebyshev_polynomial_t(x, 2)
    values = [math.inf, -math.inf, math.nan, 1.0]
    ours = clgrad.tensor(values, dtype=clgrad.bfloat16, device=device)
    want = torch.tensor(values, dtype=torch.bfloat16)
    assert_matches(ours.nan_to_num(), want.nan_to_num())  # bfloat16's own max
    assert_matches(
        ours.nan_to_num(posinf=1e39, neginf=-3.0), want.nan_to_num(posinf=1e39, neginf=-3.0)
    )
    assert_matches(ours.isinf(), want.isinf())
    assert_matches(ours.isnan(), want.isnan())


def test_bfloat16_never_joins_a_fused_group(cl_device):
    from clgrad.backend.opencl.fusion import fusion_info

    record = clgrad.ones(4, dtype=clgrad.bfloat16, device=cl_device)._record()
    other = clgrad.ones(4, device=cl_device)._record()
    add = clgrad.ops.registry.ELEMENTWISE["add"].kernel
    assert fusion_info(add, record, [other, other], [clgrad.float32] * 2) is None
    assert fusion_info(add, other, [record, other], [clgrad.float32] * 2) is None
    assert fusion_info(add, other, [other, other], [clgrad.float32] * 2) is not None


# ---- autograd ---------------------------------------------------------------------------


def test_autograd_mlp(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    w1, b1 = rng.standard_normal((16, 6)).astype(np.float32) / 3, np.zeros(16, np.float32)
    w2, b2 = rng.standard_normal((3, 16)).astype(np.float32) / 4, np.full(3, 0.1, np.float32)
    target = [0, 2, 1, 1, 0, 2, 2, 1]

    def run(lib, make):
        params = [make(a).bfloat16().requires_grad_() for a in (w1, b1, w2, b2)]
        xs = make(x).bfloat16()
        h = lib.nn.functional.relu(lib.nn.functional.linear(xs, params[0], params[1]))
        out = lib.nn.functional.linear(h, params[2], params[3])
        loss = lib.nn.functional.cross_entropy(out, make(np.array(target)))
        loss.backward()
        return loss, params

    t_loss, t_params = run(torch, torch.from_numpy)
    c_loss, c_params = run(clgrad, lambda a: clgrad.tensor(a, device=device))
    assert c_loss.dtype is clgrad.bfloat16
    assert_matches(c_loss, t_loss, ulps=2)
    for c, t in zip(c_params, t_params):
        assert c.grad.dtype is clgrad.bfloat16
        # gradients go through two matmuls and a softmax: a few ulps of their largest values
        g, w = _values(c.grad), _values(t.grad)
        assert np.allclose(g, w, rtol=3e-2, atol=3e-2 * np.abs(w).max()), (g, w)


def test_module_training_step(device):
    clgrad.manual_seed(0)
    model = clgrad.nn.Sequential(
        clgrad.nn.Linear(4, 8), clgrad.nn.Tanh(), clgrad.nn.Linear(8, 1)
    ).to(device)
    model.to(clgrad.bfloat16)
    opt = clgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = clgrad.randn(16, 4, device=device).bfloat16()
    y = x.sum(1, keepdim=True)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype is clgrad.bfloat16 for p in model.parameters())
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_steps_on_bfloat16_parameters(device, name):
    w0 = np.random.default_rng(4).standard_normal((8, 4)).astype(np.float32)
    ours = clgrad.tensor(w0, device=device).bfloat16().requires_grad_()
    theirs = torch.from_numpy(w0).bfloat16().requires_grad_()
    kwargs = {"lr": 0.01, "weight_decay": 0.1}
    if name in ("SGD", "RMSprop"):
        kwargs["momentum"] = 0.9
    opt = getattr(clgrad.optim, name)([ours], **kwargs)
    t_opt = getattr(torch.optim, name)([theirs], **kwargs)
    for _ in range(3):
        for w, o in ((ours, opt), (theirs, t_opt)):
            o.zero_grad()
            (w * w * w).sum().backward()
            o.step()
    # torch's steps round each op of the update to bfloat16, the fused kernels only the result:
    # the two part by an ulp or so of the update, which is small next to the largest weight
    assert_matches(ours.detach(), theirs.detach(), ulps=2, of_largest=True)
    state = opt.state[ours]
    assert all(v.dtype is clgrad.bfloat16 for v in state.values() if v.ndim)


# ---- autocast, save and load --------------------------------------------------------------


def test_autocast_cpu_default_is_bfloat16():
    assert clgrad.get_autocast_dtype("cpu") is clgrad.bfloat16
    a, b = clgrad.randn(4, 5), clgrad.randn(5, 3)
    with clgrad.autocast("cpu"):
        product = a @ b
        assert clgrad.nn.functional.linear(a, b.T).dtype is clgrad.bfloat16
        assert product.float().softmax(-1).dtype is clgrad.float32
    with torch.autocast("cpu"):
        want = torch.from_numpy(a.numpy()) @ torch.from_numpy(b.numpy())
    assert_matches(product, want, ulps=1)


def test_autocast_to_bfloat16_on_every_device(device):
    device_type = "cpu" if device == "cpu" else "cuda"  # (every OpenCL device is "cuda")
    model = clgrad.nn.Linear(5, 3).to(device)
    x = clgrad.randn(4, 5, device=device)
    with clgrad.autocast(device_type, dtype=clgrad.bfloat16):
        out = model(x)
        loss = clgrad.nn.functional.mse_loss(out, clgrad.zeros(4, 3, device=device))
    assert out.dtype is clgrad.bfloat16 and loss.dtype is clgrad.float32
    loss.backward()
    assert model.weight.grad.dtype is clgrad.float32  # (the cast's gradient: back in float32)
    # the bfloat16 operands' float32 products and bias, rounded once (addmm's epilogue)
    w, b = model.weight.detach().bfloat16().float(), model.bias.detach().bfloat16().float()
    want = x.bfloat16().float() @ w.T + b
    assert_matches(out, torch.from_numpy(want.cpu().numpy()).bfloat16(), ulps=1)


def test_state_dict_save_load_roundtrip(device, tmp_path):
    layer = clgrad.nn.Linear(3, 4).to(device).bfloat16()
    path = tmp_path / "bf16.pt"
    clgrad.save(layer.state_dict(), path)
    loaded = clgrad.load(path)
    for name, value in layer.state_dict().items():
        assert loaded[name].dtype is clgrad.bfloat16
        assert loaded[name].tolist() == value.tolist()
    # the bit patterns themselves, NaN and inf included, through a file object too
    x = clgrad.tensor([1.5, -2.0, math.pi, math.inf, math.nan], device=device).bfloat16()
    buf = io.BytesIO()
    clgrad.save({"x": x, "view": x[1:3]}, buf)
    buf.seek(0)
    back = clgrad.load(buf)
    assert back["x"].dtype is clgrad.bfloat16 and back["x"].device == x.device
    same = back["x"].view(clgrad.int16).cpu().tolist() == x.view(clgrad.int16).cpu().tolist()
    assert same and back["view"].tolist() == [-2.0, 3.140625]
    # a pickled whole module holds its tensors the same way
    buf = io.BytesIO()
    clgrad.save(layer, buf)
    buf.seek(0)
    module = clgrad.load(buf, weights_only=False)
    assert module.weight.dtype is clgrad.bfloat16
    assert module.weight.tolist() == layer.weight.tolist()


def test_pickle_and_deepcopy(device):
    import copy
    import pickle

    layer = clgrad.nn.Linear(3, 2).to(device).bfloat16()
    for clone in (pickle.loads(pickle.dumps(layer)), copy.deepcopy(layer)):
        assert clone.weight.dtype is clgrad.bfloat16 and type(clone.weight) is type(layer.weight)
        assert clone.weight.tolist() == layer.weight.tolist()
    x = clgrad.tensor([1.5, -0.1], device=device).bfloat16()
    back = pickle.loads(pickle.dumps(x))
    assert back.dtype is clgrad.bfloat16 and back.tolist() == x.tolist()
