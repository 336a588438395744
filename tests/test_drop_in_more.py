"""More PyTorch names clgrad added for ``import clgrad as torch``: each against torch on every
test device (values, dtype, warnings and error classes)."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest
import torch
from torch_helper import Input, compare

import clgrad

F32 = Input((3, 4), "float32")
IDX = Input((5,), "int64", -12, 11)

CASES = [
    ("unravel_index", lambda t, i: t.unravel_index(i, (3, 4)), [IDX], False),
    ("unravel_index-int", lambda t, i: t.unravel_index(i, 12), [IDX], False),
    ("unravel_index-float", lambda t, x: t.unravel_index(x, (3, 4)), [F32], False),
    ("concatenate", lambda t, x, y: t.concatenate([x, y], axis=1), [F32, F32], True),
    ("concat", lambda t, x, y: t.concat([x, y]), [F32, F32], True),
    ("is_signed", lambda t, x: t.tensor(t.is_signed(x)), [F32], False),
]


@pytest.mark.parametrize("fn, inputs, grad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_against_torch(fn, inputs, grad):
    compare(fn, *inputs, grad=grad)


def _same(got, want, atol=1e-6):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    rtol = 1e-5
    if got.dtype == clgrad.float16:  # torch computes in float16 (errors of several ulps)
        atol, rtol = max(atol, 2e-3), 1e-2
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), atol=atol, rtol=rtol)


def _other_float(device):
    """A second float dtype the device runs: float64, or float16 where it has no fp64."""
    name = "float64" if clgrad.device(device).supports(clgrad.float64) else "float16"
    return getattr(clgrad, name), getattr(torch, name)


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(device, name, n, periodic):
    got = getattr(clgrad, f"{name}_window")(n, periodic, device=device)
    _same(got, getattr(torch, f"{name}_window")(n, periodic))
    assert got.device == clgrad.device(device)
    other, t_other = _other_float(device)
    got = getattr(clgrad, f"{name}_window")(n, dtype=other, device=device)
    _same(got, getattr(torch, f"{name}_window")(n, dtype=t_other))


def test_window_errors():
    with pytest.raises(RuntimeError):
        torch.hann_window(4, dtype=torch.int64)
    with pytest.raises(RuntimeError):
        clgrad.hann_window(4, dtype=clgrad.int64)
    _same(clgrad.hamming_window(6, True, 0.5, 0.5), torch.hamming_window(6, True, 0.5, 0.5))
    _same(clgrad.kaiser_window(6, True, 3.0), torch.kaiser_window(6, True, 3.0))


@pytest.mark.parametrize(
    "args, kw",
    [((1, 4), {}), ((0, 1, 0.3), {}), ((1, 4), {"dtype": "int64"}), ((5, 1, -2), {})],
)
def test_range(device, args, kw):
    tkw = {k: getattr(torch, v) for k, v in kw.items()}
    ckw = {k: getattr(clgrad, v) for k, v in kw.items()}
    with pytest.warns(UserWarning, match="torch.range is deprecated") as want:
        w = torch.range(*args, **tkw)
    with pytest.warns(UserWarning, match="torch.range is deprecated") as got:
        g = clgrad.range(*args, **ckw, device=device)
    assert str(want[0].message) == str(got[0].message)
    _same(g, w)
    with pytest.raises(RuntimeError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clgrad.range(3, 1)


def test_float32_matmul_precision():
    assert clgrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    try:
        for p in ("high", "medium", "highest"):
            clgrad.set_float32_matmul_precision(p)
            torch.set_float32_matmul_precision(p)
            assert clgrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        with pytest.warns(UserWarning, match="is not one of"):
            clgrad.set_float32_matmul_precision("low")
        assert clgrad.get_float32_matmul_precision() == "highest"
    finally:
        clgrad.set_float32_matmul_precision("highest")
        torch.set_float32_matmul_precision("highest")


def test_asarray(device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = clgrad.asarray(a)
    a[0, 0] = 9.0  # shared with the array
    assert t[0, 0].item() == 9.0
    c = clgrad.asarray(a, copy=True)
    a[0, 0] = 1.0
    assert c[0, 0].item() == 9.0
    x = clgrad.ones(2, device=device)
    assert clgrad.asarray(x) is x
    other, t_other = _other_float(device)
    y = clgrad.asarray(x, dtype=other)
    _same(y, torch.asarray(torch.ones(2), dtype=t_other))
    with pytest.raises(ValueError):
        torch.asarray(torch.ones(2), dtype=t_other, copy=False)
    with pytest.raises(ValueError):
        clgrad.asarray(x, dtype=other, copy=False)
    z = clgrad.asarray([[1, 2], [3, 4]], dtype=clgrad.float32, device=device, requires_grad=True)
    _same(z.detach(), torch.asarray([[1, 2], [3, 4]], dtype=torch.float32))
    assert z.requires_grad and z.device == clgrad.device(device)
    _same(clgrad.asarray(3.5), torch.asarray(3.5))


def test_frombuffer():
    b = bytearray(np.arange(4, dtype=np.int32).tobytes())
    for kw in ({}, {"count": 2, "offset": 4}):
        _same(
            clgrad.frombuffer(b, dtype=clgrad.int32, **kw),
            torch.frombuffer(b, dtype=torch.int32, **kw),
        )
    t = clgrad.frombuffer(b, dtype=clgrad.int8)
    b[0] = 7  # shares the buffer
    assert t[0].item() == 7
    for mod in (torch, clgrad):
        with pytest.raises(ValueError):
            mod.frombuffer(bytearray(b"abc"), dtype=mod.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(
            clgrad.frombuffer(b"abcd", dtype=clgrad.uint8),
            torch.frombuffer(b"abcd", dtype=torch.uint8),
        )


def _anomaly(mod, device, fn):
    """The error (class, message) ``fn``'s backward raises under detect_anomaly, or None."""
    x = mod.tensor([0.0, 1.0, 4.0], device=device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mod.autograd.detect_anomaly():
            assert mod.is_anomaly_enabled()
            try:
                fn(mod, x).sum().backward()
            except RuntimeError as e:
                return str(e).split("\n")[0]
    return None


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x: x.sqrt() * (x > 0),  # SqrtBackward0 gives nan at 0 (0 * inf)
        lambda t, x: (x * 2).sqrt().sum() * t.zeros_like(x),  # no nan: 0 * finite
        lambda t, x: t.log(x - 1) * 0,  # nan forward, finite gradient: no error
    ],
    ids=["sqrt-nan", "finite", "nan-forward"],
)
def test_detect_anomaly(device, fn):
    dev = "cpu"
    want = _anomaly(torch, dev, fn)
    got = _anomaly(clgrad, device, fn)
    assert got == want
    assert not clgrad.is_anomaly_enabled()


def test_set_detect_anomaly():
    prev = clgrad.autograd.set_detect_anomaly(True)
    assert clgrad.is_anomaly_enabled() and clgrad.autograd.is_anomaly_check_nan_enabled()
    clgrad.autograd.set_detect_anomaly(False)
    assert not clgrad.is_anomaly_enabled()
    with clgrad.autograd.set_detect_anomaly(True):
        assert clgrad.is_anomaly_enabled()
    assert not clgrad.is_anomaly_enabled()
    assert type(prev).__name__ == type(torch.autograd.set_detect_anomaly(False)).__name__
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        clgrad.autograd.detect_anomaly()
    # off: nan gradients flow through silently, as torch's
    x = clgrad.tensor([0.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert x.grad.isnan().all()


POOL = Input((2, 3, 6, 6), "float32")
# windows with one NaN, two NaNs (PyTorch's index is the last one's) and none
NAN_POOL = np.array(
    [[[[np.nan, 1, 2, 3], [np.nan, 0, 5, 1], [1, 2, np.nan, 7], [3, 4, 8, 1]]]], np.float32
)
MAT = Input((5, 3), "float32")
CASES_4 = [
    (
        "max_pool2d_wi-nan",
        lambda t, x: t.nn.functional.max_pool2d_with_indices(x, 2),
        [NAN_POOL],
        True,
    ),
    (
        "max_pool1d-nan",
        lambda t, x: t.nn.functional.max_pool1d(x[0], 4, return_indices=True),
        [NAN_POOL],
        True,
    ),
    ("max_pool1d_wi", lambda t, x: t.nn.functional.max_pool1d_with_indices(x[0], 2), [POOL], True),
    ("max_pool2d_wi", lambda t, x: t.nn.functional.max_pool2d_with_indices(x, 3, 2), [POOL], True),
    (
        "max_pool3d_wi",
        lambda t, x: t.nn.functional.max_pool3d_with_indices(x.unsqueeze(0), 2),
        [POOL],
        True,
    ),
    (
        "adaptive_max_pool1d_wi",
        lambda t, x: t.nn.functional.adaptive_max_pool1d_with_indices(x[0], 4),
        [POOL],
        True,
    ),
    (
        "adaptive_max_pool2d_wi",
        lambda t, x: t.nn.functional.adaptive_max_pool2d_with_indices(x, (4, 3)),
        [POOL],
        True,
    ),
    (
        "adaptive_max_pool3d_wi",
        lambda t, x: t.nn.functional.adaptive_max_pool3d_with_indices(x, 2),
        [POOL],
        True,
    ),
    ("pdist", lambda t, x: t.pdist(x), [MAT], True),
    ("pdist-p1", lambda t, x: t.nn.functional.pdist(x, p=1), [MAT], True),
    ("pdist-inf", lambda t, x: t.pdist(x, float("inf")), [MAT], False),
    ("pdist-1row", lambda t, x: t.pdist(x[:1]), [MAT], False),
    ("pdist-1d", lambda t, x: t.pdist(x[0]), [MAT], False),
    ("pdist-neg", lambda t, x: t.pdist(x, -1.0), [MAT], False),
    ("addr", lambda t, x, u, v: t.addr(x, u, v, beta=0.5, alpha=2), [F32, (3,), (4,)], True),
    ("addr-method", lambda x, u, v: x.addr(u, v), [F32, (3,), (4,)], True),
    ("addr_", lambda x, u, v: x.clone().addr_(u, v, alpha=3), [F32, (3,), (4,)], True),
    ("addr-2d", lambda t, x, u: t.addr(x, u, u), [F32, F32], False),
    ("addmm_", lambda x, a, b: x.clone().addmm_(a, b, beta=2), [(3, 4), (3, 5), (5, 4)], True),
    ("addmv_", lambda x, a, b: x.clone().addmv_(a, b, alpha=0.5), [(3,), (3, 4), (4,)], True),
    ("addbmm_", lambda x, a, b: x.clone().addbmm_(a, b), [(3, 4), (2, 3, 5), (2, 5, 4)], True),
    (
        "baddbmm_",
        lambda x, a, b: x.clone().baddbmm_(a, b, beta=0.5),
        [(2, 3, 4), (2, 3, 5), (2, 5, 4)],
        True,
    ),
    # pow's exponents 2 and 3 run product kernels (elementwise variants): the same values,
    # dtypes, gradients and specials as the general kernel
    ("pow-2", lambda x: x**2, [F32], True),
    ("pow-3.0", lambda t, x: t.pow(x, 3.0), [F32], True),
    ("pow-2-f64", lambda x: x**2, [Input((3, 4), "float64")], True),
    ("pow-3-f16", lambda x: x**3, [Input((3, 4), "float16")], False),
    ("pow-2-int", lambda x: x**2, [Input((3, 4), "int32")], False),
    ("pow-3-uint8", lambda x: x**3, [Input((3, 4), "uint8")], False),
    ("pow_-2", lambda x: x.clone().pow_(2), [F32], True),
    (
        "pow-2-specials",
        lambda x: x**2,
        [np.array([np.inf, -np.inf, np.nan, -0.0], np.float32)],
        False,
    ),
    ("pow-2.5", lambda x: x.abs() ** 2.5, [F32], True),
]


@pytest.mark.parametrize("fn, inputs, grad", [c[1:] for c in CASES_4], ids=[c[0] for c in CASES_4])
def test_against_torch_more(fn, inputs, grad):
    compare(fn, *inputs, grad=grad)


@pytest.mark.parametrize(
    "name, args, mean, var",
    [
        ("log_normal_", (0.0, 0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
        ("geometric_", (0.25,), 4.0, 0.75 / 0.0625),
    ],
)
def test_random_fills_moments(device, name, args, mean, var):
    x = getattr(clgrad.empty(200_000, device=device), name)(*args)
    want = getattr(torch.empty(3), name)(*args)
    assert str(x.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert abs(x.mean().item() - mean) < 0.02 * mean
    assert abs(x.var().item() - var) < 0.05 * var
    if name == "geometric_":
        assert x.min().item() >= 1 and bool((x == x.round()).all())


def test_cauchy_quantiles(device):
    # no moments: the median and the quartiles (median -/+ sigma) instead
    x = clgrad.empty(200_000, device=device).cauchy_(1.0, 2.0)
    q = np.quantile(x.cpu().numpy(), [0.25, 0.5, 0.75])
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=0.05)


def _message(mod, a, b, **kw):
    try:
        mod.testing.assert_close(a, b, **kw)
    except (AssertionError, ValueError, TypeError) as e:
        return type(e).__name__, str(e).replace("torch.", "").replace("clgrad.", "")
    return None


@pytest.mark.parametrize(
    "a, b, kw",
    [
        ([1.0, 2.0], [1.0, 2.0], {}),
        ([1.0, 2.0, 3.0], [1.0, 2.5, 3.1], {}),
        ([1.0, 2.0], [1.0, 2.00001], {}),
        ([1.0, 2.0], [1.0, 2.1], {"rtol": 0.1, "atol": 0.0}),
        ([1.0, 2.0], [1.0, 2.1], {"rtol": 0.1}),
        ([1, 2, 3], [1, 4, 3], {}),
        ([float("nan")], [float("nan")], {}),
        ([float("nan")], [float("nan")], {"equal_nan": True}),
        ([[1.0, 2.0]], [[1.0, 9.0]], {"msg": "boom"}),
        ([1.0, 2.0], [1.0, 2.0, 3.0], {}),
        (3.5, 3.6, {}),
    ],
)
def test_assert_close(device, a, b, kw):
    if isinstance(a, list):
        want = _message(torch, torch.tensor(a), torch.tensor(b), **kw)
        ca, cb = clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
        got = _message(clgrad, ca, cb, **kw)
    else:
        want, got = _message(torch, a, b, **kw), _message(clgrad, a, b, **kw)
    assert got == want


def test_assert_close_checks(device):
    x = clgrad.ones(2, device=device)
    other, t_other = _other_float(device)
    want = _message(torch, torch.ones(2), torch.ones(2, dtype=t_other))
    assert _message(clgrad, x, x.to(other)) == want
    assert _message(clgrad, x, x.to(other), check_dtype=False) is None
    assert _message(clgrad, [x, x], [x, x]) is None
    if device != "cpu":
        got = _message(clgrad, x, x.cpu())
        assert got == (
            "AssertionError",
            f"The values for attribute 'device' do not match: {device} != cpu.",
        )
        assert _message(clgrad, x, x.cpu(), check_device=False) is None


def test_make_tensor(device):
    t = clgrad.testing.make_tensor(3, 4, dtype=clgrad.float32, device=device, low=-1, high=2)
    assert t.shape == (3, 4) and t.device == clgrad.device(device)
    assert bool(((t >= -1) & (t < 2)).all())
    i = clgrad.testing.make_tensor((50,), dtype=clgrad.int64, device=device, exclude_zero=True)
    assert i.dtype == clgrad.int64 and bool(((i >= -9) & (i < 10) & (i != 0)).all())


def test_random_module():
    import clgrad.random as r

    assert r.manual_seed is clgrad.manual_seed
    r.manual_seed(5)
    assert r.initial_seed() == 5
    state = r.get_rng_state()
    with r.fork_rng():
        a = clgrad.rand(3)
    assert r.get_rng_state().equal(state)
    assert clgrad.rand(3).equal(a)  # the same numbers: the state was restored
    with r.fork_rng(enabled=False):
        clgrad.rand(3)
    assert not r.get_rng_state().equal(state)
    r.set_rng_state(state)
    assert isinstance(r.seed(), int)


@pytest.mark.parametrize("bias", [True, False])
def test_lazy_linear(device, bias):
    tl = torch.nn.LazyLinear(3, bias=bias)
    cl = clgrad.nn.LazyLinear(3, bias=bias, device=device)
    assert repr(cl) == repr(tl)
    assert repr(cl.weight) == repr(tl.weight) == "<UninitializedParameter>"
    assert isinstance(cl.weight, clgrad.nn.UninitializedParameter)
    w = cl.weight
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    cl(clgrad.tensor(x, device=device))
    tl(torch.tensor(x))
    assert repr(cl) == repr(tl) and type(cl) is clgrad.nn.Linear
    assert cl.weight is w and type(w) is clgrad.nn.Parameter  # the same object, materialized
    assert cl.weight.shape == tl.weight.shape and cl.weight.device == clgrad.device(device)
    assert [n for n, _ in cl.named_parameters()] == [n for n, _ in tl.named_parameters()]
    bound = 1 / math.sqrt(5)
    assert float(cl.weight.abs().max()) <= bound
    # same values in both: the outputs match torch's
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(cl.weight.detach().cpu().numpy()))
        if bias:
            tl.bias.copy_(torch.tensor(cl.bias.detach().cpu().numpy()))
    # an optimizer made after the first forward trains the materialized parameters
    opt = clgrad.optim.SGD(cl.parameters(), lr=0.1)
    topt = torch.optim.SGD(tl.parameters(), lr=0.1)
    for mod, layer, o in ((clgrad, cl, opt), (torch, tl, topt)):
        xin = mod.tensor(x) if mod is torch else clgrad.tensor(x, device=device)
        layer(xin).pow(2).sum().backward()
        o.step()
    np.testing.assert_allclose(
        cl.weight.detach().cpu().numpy(), tl.weight.detach().numpy(), rtol=1e-5, atol=1e-5
    )


# ---- behaviours a PyTorch program meets, each against torch (a probe of common idioms) ------
def _both(device):
    return ((torch, "cpu"), (clgrad, device))


def test_a_0d_tensor_formats_as_its_number(device):
    for lib, dev in _both(device):
        x, v = lib.tensor(0.123456, device=dev), lib.tensor([1.0, 2.0], device=dev)
        assert f"{x:.3f}" == "0.123" and f"{lib.tensor(3, device=dev)}" == "3"
        assert f"{v}" == str(v)
        with pytest.raises(TypeError):
            f"{v:.3f}"


def test_flip_dims_as_varargs_and_transpose_dims_by_name(device):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)  # float64 is not on every device
    seen = []
    for lib, dev in _both(device):
        t = lib.tensor(x, device=dev)
        seen.append(
            [
                t.flip(0, 1).tolist(),
                t.flip([1]).tolist(),
                t.flip(dims=(0,)).tolist(),
                lib.flip(t, [0, 1]).tolist(),
                lib.transpose(t, dim0=0, dim1=1).tolist(),
                t.transpose(dim0=1, dim1=0).tolist(),
            ]
        )
    assert seen[0] == seen[1]


def test_slogdet_is_a_named_tuple(device):
    for lib, dev in _both(device):
        r = lib.linalg.slogdet(lib.tensor([[-2.0, 0.0], [0.0, 1.0]], device=dev))
        assert r.sign.item() == -1.0 and math.isclose(r.logabsdet.item(), math.log(2), rel_tol=1e-6)
        sign, logabsdet = r
        assert sign.item() == -1.0


@pytest.mark.parametrize("p", [2, 3, 1.5, 0.5])
def test_norm_gradient_is_zero_where_the_norm_is(device, p):
    """PyTorch masks the norm's gradient where the norm (and, for p < 1, x) is 0: the chain
    rule through sqrt and pow gave NaN, and a zero vector in a loss poisoned training."""
    grads = []
    for lib, dev in _both(device):
        x = lib.tensor([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0]], device=dev, requires_grad=True)
        n = lib.linalg.vector_norm(x, p, dim=1)
        (n * lib.tensor([1.0, 2.0], device=dev)).sum().backward()
        z = lib.zeros(3, device=dev, requires_grad=True)
        z.norm().backward()
        grads.append((x.grad.tolist(), z.grad.tolist()))
    np.testing.assert_allclose(np.array(grads[1][0]), np.array(grads[0][0]), rtol=1e-5)
    assert grads[1][1] == grads[0][1] == [0.0, 0.0, 0.0]


def test_binary_cross_entropy_gradient_at_saturated_probabilities(device):
    """PyTorch divides by max(x (1 - x), 1e-12): finite gradients where a sigmoid saturated to
    exactly 0 or 1 (they were NaN)."""
    seen = []
    for lib, dev in _both(device):
        F = lib.nn.functional
        x = lib.tensor([0.0, 1.0, 0.5, 0.3], device=dev, requires_grad=True)
        t = lib.tensor([1.0, 0.0, 1.0, 0.2], device=dev)
        w = lib.tensor([1.0, 2.0, 3.0, 4.0], device=dev)
        loss = F.binary_cross_entropy(x, t, weight=w, reduction="sum")
        loss.backward()
        seen.append((loss.item(), x.grad.tolist()))
    assert math.isclose(seen[1][0], seen[0][0], rel_tol=1e-6)
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-6)


def test_batch_norm_loads_a_checkpoint_without_its_batch_count(device):
    """A state dict from before num_batches_tracked existed (a plain dict has no version)
    loads, as in PyTorch, keeping the module's own count."""
    for lib, dev in _both(device):
        src, dst = lib.nn.BatchNorm2d(3).to(dev), lib.nn.BatchNorm2d(3).to(dev)
        state = {k: v for k, v in src.state_dict().items() if "num_batches" not in k}
        assert str(dst.load_state_dict(state)) == "<All keys matched successfully>"
        assert dst.num_batches_tracked.item() == 0
        seq = lib.nn.Sequential(lib.nn.BatchNorm1d(2)).to(dev)
        result = seq.load_state_dict({"0.weight": lib.ones(2, device=dev)}, strict=False)
        assert sorted(result.missing_keys) == ["0.bias", "0.running_mean", "0.running_var"]


def test_numpy_scalars_and_arrays_keep_their_dtypes(device):
    cases = [
        lambda m: m.tensor(np.float64(0.1)),
        lambda m: m.tensor([np.float64(1.0), np.float64(2.0)]),
        lambda m: m.tensor([np.ones(2), np.zeros(2)]),
        lambda m: m.tensor([1.0, np.float64(2)]),
        lambda m: m.tensor([np.float32(1), 2.0]),
        lambda m: m.tensor([np.int32(1), 2]),
        lambda m: m.tensor([np.int32(1), 2.5]),
        lambda m: m.tensor([True, np.int8(2)]),
        lambda m: m.tensor(np.int8(3)),
        lambda m: m.tensor([m.tensor(1.0, dtype=m.float64)]),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: a list of arrays is slow
        for case in cases:
            ref, mine = case(torch), case(clgrad)
            assert str(mine.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
            assert mine.tolist() == ref.tolist()


@pytest.mark.parametrize("exponent", [0.5, -0.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_of_a_half_is_sqrt(device, exponent, dtype):
    """PyTorch computes x ** 0.5 as sqrt and x ** -0.5 as rsqrt: -inf gives NaN and -0 gives
    -0 (-inf for rsqrt), where pow gives inf and 0."""
    if device != "cpu" and dtype == "float64" and not clgrad.device(device).supports_float64:
        pytest.skip("no float64")
    vals = [-math.inf, math.inf, -4.0, 0.0, -0.0, 2.0, math.nan]
    ref = (torch.tensor(vals, dtype=getattr(torch, dtype)) ** exponent).tolist()
    mine = (clgrad.tensor(vals, dtype=getattr(clgrad, dtype), device=device) ** exponent).tolist()
    for a, b in zip(mine, ref):
        assert (math.isnan(a) and math.isnan(b)) or (
            math.isclose(a, b, rel_tol=1e-6) and math.copysign(1, a) == math.copysign(1, b)
        )


def test_where_and_masked_fill_numbers_past_the_dtype(device):
    """float16's where takes a number past its range as inf (masking scores with float32's
    minimum), and a bool masked_fill stores any number as a bool, as in PyTorch."""
    seen = []
    for lib, dev in _both(device):
        c = lib.tensor([True, False], device=dev)
        h = lib.tensor([1.0, 2.0], dtype=lib.float16, device=dev)
        b = lib.tensor([False, False], device=dev)
        seen.append(
            [
                lib.where(c, h, 70000.0).tolist(),
                lib.where(c, h, -3.4e38).tolist(),
                b.masked_fill(c, 2**63).tolist(),
            ]
        )
    assert seen[1] == seen[0]


def test_binary_cross_entropy_second_gradient_and_weight(device):
    seen = []
    for lib, dev in _both(device):
        F = lib.nn.functional
        x = lib.tensor([1e-6, 0.3, 0.8], device=dev, requires_grad=True)
        t = lib.tensor([0.0, 0.5, 1.0], device=dev)
        loss = F.binary_cross_entropy(x, t, reduction="sum")
        (gx,) = lib.autograd.grad(loss, x, create_graph=True)
        (h,) = lib.autograd.grad(gx.sum(), x)
        seen.append((gx.tolist(), h.tolist()))
        w = lib.ones(3, device=dev, requires_grad=True)
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
            F.binary_cross_entropy(x, t, weight=w)
    np.testing.assert_allclose(seen[1][0], seen[0][0], rtol=1e-5)
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-4)


def test_instance_norm_of_mixed_dtypes(device):
    if not clgrad.device(device).supports(clgrad.float16):
        pytest.skip("no float16")
    xn = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float16)
    seen = []
    for lib, dev in _both(device):
        F = lib.nn.functional
        x = lib.tensor(xn, device=dev)
        w, b = lib.ones(3, device=dev), lib.zeros(3, device=dev)
        y = F.instance_norm(x, None, None, w, b)
        with pytest.raises(RuntimeError, match="mixed dtype"):
            F.instance_norm(x.float(), None, None, w.half(), None)
        seen.append((str(y.dtype).split(".")[-1], y.float().tolist()))
    assert seen[1][0] == seen[0][0] == "float16"
    np.testing.assert_allclose(seen[1][1], seen[0][1], atol=2e-3)


def test_a_failed_cpu_naming_leaves_the_devices_listed(monkeypatch):
    from clgrad.backend.opencl import device as cl_device_module
    from clgrad.device import errors

    def refuse(d):
        raise OSError("a write to /proc/self/mem refused")

    monkeypatch.setattr(cl_device_module, "name_cpu", refuse)
    before = len(errors)
    listed = cl_device_module.opencl_devices(0)
    assert len(listed) == clgrad.cl.device_count()
    assert len(errors) - before == len(listed)
    del errors[before:]


def _hook_story(lib, device):
    """Forward hooks with kwargs, prepended, always called, and a bad pre-hook result."""
    seen = []
    lin = lib.nn.Linear(2, 2).to(device)
    with lib.no_grad():
        lin.weight.copy_(lib.eye(2, device=device))
        lin.bias.zero_()

    class Scaled(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale

    m = Scaled()
    handles = [
        m.register_forward_pre_hook(lambda mod, a, k: (a, {**k, "scale": 3.0}), with_kwargs=True),
        m.register_forward_hook(lambda mod, a, k, o: o + k["scale"], with_kwargs=True),
        m.register_forward_hook(lambda mod, a, o: o * 10, prepend=True),
    ]
    x = lib.ones(1, 2, device=device)
    seen.append(m(x, scale=2.0).tolist())

    class Failing(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    calls = []
    f = Failing()
    f.register_forward_hook(lambda mod, a, o: calls.append(o), always_call=True)
    f.register_forward_hook(lambda mod, a, o: calls.append("never"))
    with pytest.raises(ValueError, match="boom"):
        f(x)
    seen.append(calls)
    for h in handles:
        h.remove()
    seen.append(m(x, scale=2.0).tolist())
    m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(x)
    return seen


def test_forward_hooks_with_kwargs_prepend_and_always_call(device):
    assert _hook_story(clgrad, device) == _hook_story(torch, "cpu")


def _container_story(nn):
    s = nn.Sequential(nn.ReLU(), nn.Tanh())
    seen = [len(s + s), len(s * 2), len(2 * s), type(s + s).__name__]
    for bad, error in (
        (lambda: s * 0, ValueError),
        (lambda: s * 1.5, TypeError),
        (lambda: s + nn.ModuleList([nn.ReLU()]), ValueError),
    ):
        with pytest.raises(error):
            bad()
    s2 = nn.Sequential(nn.ReLU())
    s2 += nn.Sequential(nn.Tanh())
    s2 *= 2
    seen.append([type(m).__name__ for m in s2])
    seen.append((type(s2.pop(1)).__name__, len(s2), list(dict(s2.named_children()))))
    ml = nn.ModuleList([nn.ReLU()]) + [nn.Tanh()]
    seen.append((type(ml).__name__, [type(m).__name__ for m in ml], type(ml.pop(0)).__name__))
    return seen


def test_sequential_and_module_list_operators():
    assert _container_story(clgrad.nn) == _container_story(torch.nn)


def test_device_type_prints_as_its_kind(device):
    assert f"{clgrad.ones(1, device=device).device.type}" == device.split(":")[0]
    assert f"{torch.ones(1).device.type}" == "cpu" == f"{clgrad.ones(1).device.type}"


def test_unique_keeps_each_nan(device):
    seen = []
    for lib, dev in _both(device):
        x = lib.tensor([1.0, math.nan, math.nan, 0.0, 1.0], device=dev)
        values, inverse, counts = lib.unique(x, return_inverse=True, return_counts=True)
        seen.append((str(values.tolist()), inverse.tolist(), counts.tolist()))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("target_dtype", ["int64", "bool", "float64", "float32"])
def test_binary_cross_entropy_target_dtypes(device, target_dtype):
    """PyTorch's errors for a target of another dtype: binary_cross_entropy takes one dtype,
    the logits form any floating target."""
    if target_dtype == "float64" and not clgrad.device(device).supports(clgrad.float64):
        pytest.skip("no float64")
    seen = []
    for lib, dev in _both(device):
        F = lib.nn.functional
        t = lib.tensor([1, 0], device=dev).to(getattr(lib, target_dtype))
        for fn, x in (
            (F.binary_cross_entropy, lib.tensor([0.5, 0.2], device=dev)),
            (F.binary_cross_entropy_with_logits, lib.tensor([0.5, -1.0], device=dev)),
        ):
            try:
                r = fn(x, t)
                seen.append((str(r.dtype).split(".")[-1], round(r.item(), 5)))
            except RuntimeError as e:
                seen.append(("RuntimeError", str(e)[:30]))
    assert seen[len(seen) // 2 :] == seen[: len(seen) // 2]


_ZERO_ROW = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]], dtype=np.float32)
_CONSTANT_ROW = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]], dtype=np.float32)


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda t, x: t.nn.functional.normalize(x), _ZERO_ROW),
        (lambda t, x: t.nn.functional.normalize(x, 1.0), _ZERO_ROW),
        (lambda t, x: t.nn.functional.normalize(x, float("inf")), _ZERO_ROW),
        (lambda t, x: t.nn.functional.normalize(x, 0.5), _ZERO_ROW),
        (lambda t, x: t.nn.functional.cosine_similarity(x, x.flip(0)), _ZERO_ROW),
        (lambda t, x: t.nn.functional.cosine_similarity(x, x), _ZERO_ROW),
        (lambda t, x: x.std(1), _CONSTANT_ROW),
        (lambda t, x: t.std_mean(x, 1)[0], _CONSTANT_ROW),
        (lambda t, x: x.std(), np.ones((2, 3), dtype=np.float32)),
        (lambda t, x: t.linalg.matrix_norm(x * 0), _ZERO_ROW),
        (lambda t, x: t.nn.functional.pairwise_distance(x, x - 1e-6), _ZERO_ROW),
    ],
)
def test_gradients_where_a_slice_is_zero_or_constant(fn, x):
    """A zero vector's norm and a constant slice's deviation have PyTorch's finite gradients
    (0 through the norm, 1/eps through the clamp), not sqrt's 0 * inf = NaN."""
    compare(fn, x, rtol=1e-5, grad_rtol=1e-5)


def _hook_log(lib, inputs, replace=None):
    """What a module's backward hooks see, the inputs' gradients and the warnings, for torch
    or clgrad: a module of two inputs and two outputs, a loss through a leaf outside it (so
    that it is differentiable even where no input requires grad)."""

    class Two(lib.nn.Module):
        def forward(self, a, b):
            return a * b, a + b

    module, log = Two(), []

    def values(gs):
        return [None if g is None else g.tolist() for g in gs]

    def hook(m, grad_input, grad_output):
        log.append(("full", values(grad_input), values(grad_output)))
        if replace is not None:
            return tuple(None if g is None else g * replace for g in grad_input)

    module.register_full_backward_pre_hook(lambda m, go: log.append(("pre", values(go))))
    module.register_full_backward_hook(hook)
    inputs = inputs(lib)
    w = lib.full((2,), 2.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p, q = module(*inputs)
        ((p * 2 + q) * w).sum().backward()
    grads = [None if x.grad is None else x.grad.tolist() for x in inputs]
    return log, grads, w.grad.tolist(), [c.category for c in caught]


@pytest.mark.parametrize(
    "inputs",
    [
        lambda t: (t.ones(2, requires_grad=True), t.full((2,), 3.0, requires_grad=True)),
        lambda t: (t.ones(2, requires_grad=True), t.full((2,), 3.0)),  # zeros for b
        lambda t: (t.ones(2), t.full((2,), 3.0)),  # no input requires grad: a warning
    ],
)
@pytest.mark.parametrize("replace", [None, 10.0])
def test_full_backward_hooks(inputs, replace):
    """register_full_backward_hook and _pre_hook against torch: what they see, when they run,
    and what a grad_input they replace does."""
    assert _hook_log(clgrad, inputs, replace) == _hook_log(torch, inputs, replace)


def test_extra_state_and_get_buffer():
    """get_extra_state / set_extra_state travel in the state dict under "_extra_state"."""

    def run(lib):
        class Counter(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.count = 0
                self.register_buffer("seen", lib.zeros(1))

            def get_extra_state(self):
                return {"count": self.count}

            def set_extra_state(self, state):
                self.count = state["count"]

        a, b = lib.nn.Sequential(Counter()), lib.nn.Sequential(Counter())
        a[0].count = 5
        state = a.state_dict()
        keys = b.load_state_dict(state)
        missing = b.load_state_dict({"0.seen": lib.zeros(1)}, strict=False)
        return (
            list(state),
            b[0].count,
            str(keys),
            list(missing.missing_keys),
            (b.get_buffer("0.seen").tolist()),
        )

    assert run(clgrad) == run(torch)


@pytest.mark.parametrize(
    "call",
    [
        # PyTorch's positional order: size_average and reduce before ignore_index / reduction
        lambda F, x, y: F.cross_entropy(x, y, None, None, 2),
        lambda F, x, y: F.nll_loss(x.log_softmax(1), y, None, None, 1, None, "sum"),
        lambda F, x, y: F.cross_entropy(x, y, reduce=False),
        lambda F, x, y: F.mse_loss(x, x * 2, False),
        lambda F, x, y: F.l1_loss(x, x * 2, None, False),
        lambda F, x, y: F.smooth_l1_loss(x, x * 2, size_average=False),
        lambda F, x, y: F.binary_cross_entropy(x.sigmoid(), x.sigmoid().round(), None, None, False),
        lambda F, x, y: F.binary_cross_entropy_with_logits(x, x.sigmoid(), None, False),
        # the weighted regression losses of PyTorch 2.6+
        lambda F, x, y: F.mse_loss(x, x * 2, weight=x.abs()),
        lambda F, x, y: F.l1_loss(x, x * 2, weight=x.abs(), reduction="sum"),
        lambda F, x, y: F.huber_loss(x, x * 2, weight=x.abs()),
        lambda F, x, y: F.mse_loss(x, x, weight=x[0]),  # not input's shape: ValueError
    ],
)
def test_loss_signatures(call):
    """The functional losses take PyTorch's arguments in PyTorch's order, with the legacy
    size_average/reduce (and its warning) and the regression losses' weight."""

    def run(lib):
        x = lib.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0], [1.0, 1.0, 1.0]])
        y = lib.tensor([0, 2, 1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = np.round(np.asarray(call(lib.nn.functional, x, y).tolist()), 5).tolist()
            except ValueError:
                value = ValueError
        return value, [str(w.message) for w in caught]

    assert run(clgrad) == run(torch)


def test_functional_call():
    """torch.func.functional_call: the module runs on the given tensors (gradients reach
    them), its own come back; several dicts, tied weights, strict."""

    def run(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            model[0].bias.copy_(lib.tensor([0.5, -0.5]))
        params = {k: v.detach().clone().requires_grad_() for k, v in model.named_parameters()}
        w = params["0.weight"]
        params["0.weight"] = w * 2
        x = lib.tensor([[1.0, 2.0], [0.0, 1.0], [2.0, 2.0]])
        out = lib.func.functional_call(model, params, (x,))
        (out * lib.arange(6.0).reshape(3, 2)).sum().backward()
        stats = {"1.running_mean": lib.zeros(2), "1.running_var": lib.ones(2)}
        model.eval()
        evaluated = lib.func.functional_call(model, (params, stats), x)
        errors = []
        for bad in (
            lambda: lib.func.functional_call(model, params, x, strict=True),
            lambda: lib.func.functional_call(model, (params, {"0.bias": lib.zeros(2)}), x),
        ):
            try:
                bad()
            except (RuntimeError, ValueError) as e:
                errors.append(type(e))
        tied = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
        tied[1].weight = tied[0].weight
        doubled = lib.func.functional_call(tied, {"0.weight": lib.eye(2) * 2}, lib.ones(1, 2))
        return [
            np.round(np.asarray(v.tolist()), 4).tolist()
            for v in (out, w.grad, model[0].weight, model[1].running_mean, evaluated, doubled)
        ] + [errors]

    assert run(clgrad) == run(torch)


def test_state_dict_hooks():
    """Module state-dict hooks: pre- and post-hooks of state_dict (the legacy one replacing
    the dict), load pre-hooks renaming a checkpoint's keys (in a copy), load post-hooks
    clearing incompatible keys before a strict load raises."""

    def run(lib):
        out, log = [], []
        m = lib.nn.Sequential(lib.nn.Linear(2, 1), lib.nn.ReLU())
        m[0].register_state_dict_pre_hook(lambda mod, prefix, kv: log.append(("pre", prefix)))
        post = m.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", prefix, sorted(sd)))
        )
        out.append(sorted(m.state_dict()))
        post.remove()
        m._register_state_dict_hook(
            lambda mod, sd, prefix, meta: {k.replace("0.", "layer."): v for k, v in sd.items()}
        )
        out.append(sorted(m.state_dict()))

        def rename(module, sd, prefix, meta, strict, missing, unexpected, errors):
            for k in list(sd):
                if k.startswith("layer."):
                    sd["0." + k[6:]] = sd.pop(k)

        loaded = lib.nn.Sequential(lib.nn.Linear(2, 1))
        loaded.register_load_state_dict_pre_hook(rename)
        src = {"layer.weight": lib.ones(1, 2), "layer.bias": lib.zeros(1), "extra": lib.zeros(1)}
        try:
            loaded.load_state_dict(src)
        except RuntimeError:
            out.append(RuntimeError)
        loaded.register_load_state_dict_post_hook(
            lambda mod, keys: keys.unexpected_keys.remove("extra")
        )
        keys = loaded.load_state_dict(src)
        out.append((keys.missing_keys, keys.unexpected_keys, sorted(src)))
        out.append(loaded[0].weight.tolist())
        legacy = lib.nn.Linear(2, 1)
        legacy._register_load_state_dict_pre_hook(
            lambda sd, prefix, *rest: sd.update({prefix + "bias": lib.full((1,), 7.0)})
        )
        legacy.load_state_dict({"weight": lib.ones(1, 2), "bias": lib.zeros(1)})
        return [*out, legacy.bias.tolist(), log]

    assert run(clgrad) == run(torch)


def test_tensor_kind_queries_and_real_complex_api():
    """What library code asks of a tensor (is_complex, is_sparse, layout, output_nr, ...) and
    the complex-number API on real tensors (conj is the tensor itself, imag raises)."""

    def run(lib):
        x = lib.ones(2, 3)
        kinds = (x.is_complex(), lib.is_complex(x), x.is_sparse, x.is_quantized, x.is_meta)
        out = [kinds, x.is_nested, str(x.layout).rpartition(".")[2], x.output_nr]
        out.append([x.is_mps, x.is_xpu, x.is_xla, x.is_ipu, x.is_mtia, x.is_maia, x.is_vulkan])
        try:
            x.record_stream(lib.Stream(device="cpu"))
        except NotImplementedError:  # not on cpu tensors
            out.append(NotImplementedError)
        out.append([f(x) is x for f in (lambda t: t.conj(), lambda t: t.resolve_conj())])
        out.append([x.resolve_neg() is x, x.real is x, x.is_conj(), x.is_neg()])
        for bad in (
            lambda: x.imag,
            lambda: lib.ones(2).is_nonzero(),
            lambda: lib.ones(0).is_nonzero(),
            lambda: lib.ones(3).adjoint(),
            lambda: x.split_with_sizes([1, 1], 1),
        ):
            try:
                bad()
            except RuntimeError:
                out.append(RuntimeError)
        out.append([lib.tensor([0.0]).is_nonzero(), lib.is_nonzero(lib.tensor([2]))])
        out.append([tuple(t.shape) for t in (x.adjoint(), *x.split_with_sizes([1, 2], 1))])
        strided = x.new_empty_strided((2, 2), (1, 2))
        out.append([strided.stride(), str(strided.dtype).rpartition(".")[2]])
        return out

    assert run(clgrad) == run(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.zeros(2, dtype=float),  # Python's float is float64, as in PyTorch
        lambda t: t.tensor([1], dtype=float),
        lambda t: t.ones(2).to(float),
        lambda t: t.arange(3, dtype=float),
        lambda t: t.ones(2, dtype=int),
        lambda t: float(t.tensor([1.0, 2.0])),  # ValueError, not RuntimeError
        lambda t: int(t.tensor([1, 2])),
        lambda t: float(t.zeros(0)),
        lambda t: int(t.tensor(3.7)),
        lambda t: t.Generator().manual_seed(5).initial_seed(),
        lambda t: t.Generator().seed() >= 0,  # a method, not shadowed by the seed it set
        lambda t: t.zeros(size=(2, 3)),  # the factories' size= keyword
        lambda t: t.rand(size=[2]),
        lambda t: t.zeros(2, size=(2,)),
        lambda t: t.arange(end=3).tolist(),
        lambda t: t.arange(),
        lambda t: {"cpu": 1}[t.ones(1).device.type],  # device.type hashes as its string
        lambda t: t.full((2,), t.tensor(3)),  # a 0-d tensor as the fill value
        lambda t: t.full((2,), t.tensor([3.0])),
        lambda t: [t.tensor([1, 2]) in t.tensor([[1, 2], [3, 4]]), 3 in t.ones(2), 1 in t.ones(2)],
        lambda t: "a" in t.ones(2),
        lambda t: reversed(t.tensor([[1, 2], [3, 4]])).tolist(),
        lambda t: reversed(t.tensor(3)).tolist(),
        # == with a NumPy array compares elementwise (Python's identity said False); != is
        # Python's in PyTorch too
        lambda t: (t.tensor([1.0, 2.0]) == np.array([1.0, 3.0])).tolist(),
        lambda t: (t.tensor([1.0, 2.0]) == np.array([1, 3])).tolist(),
        lambda t: t.tensor([1.0, 2.0]) != np.array([1, 2]),
        lambda t: t.tensor([1.0, 2.0]) < np.array([1.0, 3.0]),  # a TypeError in both
    ],
)
def test_python_types_and_conversions(call):
    def run(lib):
        try:
            r = call(lib)
        except (ValueError, RuntimeError, TypeError) as e:
            return type(e)
        if hasattr(r, "dtype"):
            return str(r.dtype).rpartition(".")[2], tuple(r.shape)
        return r

    assert run(clgrad) == run(torch)


@pytest.mark.parametrize(
    "case",
    [
        "retained, then written in place",
        "base retained, a view of it written",
        "view retained, its base written",
    ],
)
def test_retain_grad_follows_in_place_writes(case):
    """A retained gradient is the gradient of the tensor's current value: it moves to the
    history an in-place write gives the tensor (PyTorch's retain_grad hook moves too)."""

    def run(lib):
        x = lib.ones(4, requires_grad=True)
        if case == "retained, then written in place":
            y = x * 1
            y.retain_grad()
            y.mul_(2)
            y.sum().backward()
            return y.grad.tolist(), x.grad.tolist()
        b = x * 1
        if case == "base retained, a view of it written":
            b.retain_grad()
            b[:2].mul_(3)
            (b * lib.arange(4.0)).sum().backward()
            return b.grad.tolist(), x.grad.tolist()
        v = b[:2]
        v.retain_grad()
        b.mul_(3)
        (v * 2).sum().backward()
        return v.grad.tolist(), x.grad.tolist()

    assert run(clgrad) == run(torch)


def test_custom_function_forms():
    """PyTorch 2's Function form (forward without ctx, setup_context), keyword arguments bound
    as inputs, a user Function's node name, and the error for a backward that returns fewer
    gradients than there are inputs."""

    def run(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        class Power(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, power=2):
                ctx.save_for_backward(x)
                ctx.power = power
                return x**power

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.power * x ** (ctx.power - 1), None

        class Short(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        grads = [x.grad.tolist()]
        x.grad = None
        z = Power.apply(x, power=3)
        z.sum().backward()
        grads.append(x.grad.tolist())
        try:
            Short.apply(x, lib.ones(2)).sum().backward()
        except RuntimeError as e:
            grads.append(str(e))
        return grads, type(y.grad_fn).__name__, type(z.grad_fn).__name__

    assert run(clgrad) == run(torch)


def _checkpointed(lib, reentrant, x_grad=True, sequential=False):
    """A small net run through torch.utils.checkpoint: whether the output requires grad, its
    values, the gradients of the input and of the first layer's weight, the warnings."""
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) * 0.1 - 0.2 * i)
    x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=x_grad)

    def rounded(t):
        return None if t is None else np.round(np.asarray(t.tolist()), 5).tolist()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ckpt = lib.utils.checkpoint
        if sequential:
            y = ckpt.checkpoint_sequential(net, 2, x, use_reentrant=reentrant)
        else:
            y = ckpt.checkpoint(net, x, use_reentrant=reentrant)
        out = [y.requires_grad, rounded(y)]
        if y.requires_grad:
            (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
            out += [rounded(x.grad), rounded(net[0].weight.grad)]
    return [*out, sorted({str(w.message)[:40] for w in caught})]


@pytest.mark.parametrize(
    "kw",
    [
        {"reentrant": True},
        {"reentrant": False},
        {"reentrant": None},  # PyTorch's warning, then the reentrant form
        {"reentrant": True, "x_grad": False},  # no gradient reaches anything (a warning)
        {"reentrant": False, "x_grad": False},  # the parameters' gradients still do
        {"reentrant": True, "sequential": True},
    ],
)
def test_checkpoint(kw):
    assert _checkpointed(clgrad, **kw) == _checkpointed(torch, **kw)


def test_checkpoint_recomputes_with_the_same_random_numbers():
    clgrad.manual_seed(1)
    x = clgrad.ones(1000, requires_grad=True)
    y = clgrad.utils.checkpoint.checkpoint(
        lambda t: clgrad.nn.functional.dropout(t, 0.5, training=True) * 3, x, use_reentrant=True
    )
    y.sum().backward()
    assert ((y.detach() != 0) == (x.grad != 0)).all()  # the mask of forward, again


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"]
)
def test_type_names_conversions_and_legacy_new(dtype):
    """``x.type()`` names as torch's (its module's prefix), ``x.type(...)`` converts from a
    name, a dtype or a legacy type, and ``x.new(...)`` makes a tensor of x's dtype."""
    x, xt = clgrad.ones(2, dtype=getattr(clgrad, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    assert x.type().replace("clgrad.", "torch.") == xt.type()
    for arg in ("torch.DoubleTensor", "torch.ByteTensor", "float16", "DoubleTensor"):
        ours = getattr(clgrad, arg) if "." not in arg else arg
        theirs = getattr(torch, arg) if "." not in arg else arg
        got, want = x.type(ours), xt.type(theirs)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.float64")
    for args in [(), (2, 3), ([1, 0],), ((2, 3),), (clgrad.Size([2]),)]:
        targs = tuple(torch.Size(a) if isinstance(a, clgrad.Size) else a for a in args)
        got, want = x.new(*args), xt.new(*targs)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == x.dtype
        if args and not isinstance(args[0], (int, clgrad.Size)):
            assert got.tolist() == want.tolist()
    other = "int64" if dtype != "int64" else "float32"
    with pytest.raises(TypeError):
        xt.new(torch.ones(2, dtype=getattr(torch, other)))
    with pytest.raises(TypeError):
        x.new(clgrad.ones(2, dtype=getattr(clgrad, other)))


_NDARRAY_OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "<<": lambda a, b: a << b,
}


@pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")  # torch's own wrap
@pytest.mark.parametrize("op", list(_NDARRAY_OPERATORS))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("array_dtype", ["float64", "float32", "int32", "bool"])
def test_tensor_operator_ndarray_as_torch(op, dtype, array_dtype):
    """``tensor <op> ndarray``: PyTorch hands it to NumPy (its promotion, a cpu tensor back,
    bool as uint8); a tensor that requires grad is refused."""
    fn = _NDARRAY_OPERATORS[op]
    values = np.array([3, 1, 2]).astype(dtype)
    array = np.array([2, 1, 3]).astype(array_dtype)

    def outcome(lib):
        t = lib.tensor(values)
        try:
            r = fn(t, array)
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e).__name__
        return type(r).__name__, str(r.dtype).split(".")[1], r.tolist()

    assert outcome(clgrad) == outcome(torch)
    if dtype == "float32" and op == "*":
        with pytest.raises(RuntimeError, match="requires grad"):
            fn(clgrad.tensor(values, requires_grad=True), array)
        with pytest.raises(RuntimeError, match="requires grad"):
            fn(torch.tensor(values, requires_grad=True), array)


def _cond_and_while_loop(lib, dev):
    x = lib.tensor([0.5, 1.5], device=dev, requires_grad=True)
    a = lib.cond(x.sum() > 1, lambda v: v.sin(), lambda v: v.cos(), (x,))
    b = lib.cond(False, lambda v: v.sin(), lambda v: v.cos(), [x])
    (a.sum() + b.sum()).backward()
    i, y = lib.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), (lib.tensor(0, device=dev), x)
    )
    seen = [a.tolist(), b.tolist(), x.grad.tolist(), int(i), y.tolist()]
    with pytest.raises(RuntimeError) as e:
        lib.cond(lib.ones(2, device=dev) > 0, lambda v: v, lambda v: v, (x,))
    seen.append(str(e.value).split(", but")[0])
    return seen


@functools.cache
def _torch_cond_and_while_loop():  # torch compiles each branch (dynamo): once per process
    return _cond_and_while_loop(torch, "cpu")


def test_cond_and_while_loop_as_torch(device):
    ours, theirs = _cond_and_while_loop(clgrad, device), _torch_cond_and_while_loop()
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[3:] == theirs[3:] and ours[1] == pytest.approx(theirs[1])


def test_record_stream_is_accepted_on_an_opencl_device(cl_device):
    # one in-order queue per device: nothing to record (cpu tensors refuse it, as torch's)
    x = clgrad.ones(2, device=cl_device)
    assert (
        x.record_stream(clgrad.cuda.current_stream() if clgrad.cuda.is_available() else None)
        is None
    )
