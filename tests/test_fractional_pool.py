"""Fractional max pooling (F.fractional_max_pool2d/3d, their _with_indices forms and
nn.FractionalMaxPool2d/3d) against PyTorch on every test device.

Both libraries get the same ``_random_samples`` (drawn samples differ between them, as every
random op's): values and indices must be equal, gradients w.r.t. the input close (overlapping
windows add several outputs' gradients into one element), errors of the same class and message.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

DTYPES = {"float32": (np.float32, torch.float32), "float64": (np.float64, torch.float64)}


def _need(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")


def _fns(nd, lib):
    return getattr(lib.nn.functional, f"fractional_max_pool{nd}d")


def _run(nd, values, samples, device, *args, **kwargs):
    """Both libraries' (values, indices, input gradient) for ``values`` pooled with
    ``samples``; the gradient of a fixed random cotangent."""
    kwargs["return_indices"] = True
    tx = torch.tensor(values, requires_grad=True)
    tv, ti = _fns(nd, torch)(tx, *args, _random_samples=torch.tensor(samples), **kwargs)
    cx = clgrad.tensor(values, device=device, requires_grad=True)
    cs = clgrad.tensor(samples, device=device)
    cv, ci = _fns(nd, clgrad)(cx, *args, _random_samples=cs, **kwargs)
    cot = np.random.default_rng(7).standard_normal(tuple(tv.shape)).astype(values.dtype)
    tv.backward(torch.tensor(cot))
    cv.backward(clgrad.tensor(cot, device=device))
    return (tv, ti, tx.grad), (cv, ci, cx.grad)


def _check(want, got, device):
    (tv, ti, tg), (cv, ci, cg) = want, got
    assert cv.device == clgrad.device(device)
    assert cv.dtype.name == str(tv.dtype).removeprefix("torch.")
    assert ci.dtype == clgrad.int64
    assert tuple(cv.shape) == tuple(tv.shape) and tuple(ci.shape) == tuple(ti.shape)
    # the values are input elements: equal, not close
    np.testing.assert_array_equal(cv.detach().cpu().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(ci.cpu().numpy(), ti.numpy())
    np.testing.assert_allclose(cg.cpu().numpy(), tg.numpy(), rtol=1e-6, atol=1e-6)


def _samples(rng, batch, channels, nd, dtype):
    return rng.random((batch, channels, nd)).astype(dtype)


# (input shape, kernel_size, output_size, output_ratio): overlapping windows where the output
# is larger than input // kernel, disjoint or gapped windows where it is smaller
CASES_2D = [
    ((2, 3, 9, 11), 3, (6, 7), None),  # overlapping
    ((2, 3, 9, 11), 2, (3, 4), None),  # gaps between the windows
    ((3, 10, 8), (2, 3), 4, None),  # unbatched, a non-square kernel
    ((2, 2, 10, 12), 2, None, (0.5, 0.7)),  # from the ratio: (5, 8)
    ((2, 13, 9), (3, 1), None, (0.6, 0.5)),  # unbatched ratio
    ((1, 2, 7, 6), 1, (7, 6), None),  # every element its own window
    ((2, 1, 5, 8), (5, 2), (1, 3), None),  # one window over the whole height
]

CASES_3D = [
    ((2, 2, 6, 7, 8), 2, (4, 5, 3), None),  # overlapping in D and H
    ((1, 3, 7, 6, 5), (3, 2, 1), (2, 2, 4), None),
    ((2, 6, 7, 9), 2, 3, None),  # unbatched
    ((2, 2, 8, 10, 6), 2, None, (0.5, 0.6, 0.5)),  # from the ratio: (4, 6, 3)
    ((3, 9, 8, 7), (2, 3, 2), None, (0.5, 0.5, 0.6)),  # unbatched ratio
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kernel, out, ratio", CASES_2D)
def test_fractional_max_pool2d(device, dtype, shape, kernel, out, ratio):
    _need(device, dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(DTYPES[dtype][0])
    batch = shape[0] if len(shape) == 4 else 1
    s = _samples(rng, batch, shape[-3], 2, DTYPES[dtype][0])
    want, got = _run(2, x, s, device, kernel, out, ratio)
    _check(want, got, device)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kernel, out, ratio", CASES_3D)
def test_fractional_max_pool3d(device, dtype, shape, kernel, out, ratio):
    _need(device, dtype)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(DTYPES[dtype][0])
    batch = shape[0] if len(shape) == 5 else 1
    s = _samples(rng, batch, shape[-4], 3, DTYPES[dtype][0])
    want, got = _run(3, x, s, device, kernel, out, ratio)
    _check(want, got, device)


@pytest.mark.parametrize("nd", [2, 3])
def test_overlapping_windows_accumulate(device, nd):
    # the largest element sits where windows overlap: the windows start at 0, 2 and 3 (kernel
    # 3), so those at 0 and 2 both hold index 2 of each dim, and 2 ** nd outputs pick the
    # element at (2, 2, ...): its gradient is the sum of theirs
    shape = (1, 1) + (6,) * nd
    x = np.zeros(shape, np.float32)
    x[(0, 0) + (2,) * nd] = 10.0
    s = np.full((1, 1, nd), 0.5, np.float32)
    want, got = _run(nd, x, s, device, 3, 3)
    _check(want, got, device)
    picked = got[1].cpu().numpy().ravel()
    assert np.count_nonzero(picked == 2 * sum(6**i for i in range(nd))) == 2**nd
    cx = clgrad.tensor(x, device=device, requires_grad=True)
    _fns(nd, clgrad)(cx, 3, 3, _random_samples=clgrad.tensor(s, device=device)).sum().backward()
    assert cx.grad.cpu().numpy()[(0, 0) + (2,) * nd] == 2**nd


@pytest.mark.parametrize("nd", [2, 3])
def test_ties_and_nan(device, nd):
    # ties keep the first element of the window, a NaN wins, and of several NaNs the last
    rng = np.random.default_rng(3)
    shape = (2, 2) + (7,) * nd
    x = rng.integers(0, 3, shape).astype(np.float32)
    x[x == 2] = np.nan
    x[0, 0] = 1.0  # a plane of ties only
    s = _samples(rng, 2, 2, nd, np.float32)
    want, got = _run(nd, x, s, device, 3, 4)
    _check(want, got, device)
    idx = got[1].cpu().numpy()
    assert np.isnan(got[0].detach().cpu().numpy()).any()
    assert (idx[0, 0] != 0).any()  # windows not at the origin: their first elements differ


def test_all_negative_infinity(device):
    x = np.full((1, 1, 6, 6), -np.inf, np.float32)
    s = np.full((1, 1, 2), 0.3, np.float32)
    want, got = _run(2, x, s, device, 2, 4)
    _check(want, got, device)


def test_sample_columns(device):
    # 2d: sample 0 drives the width, 1 the height; a swap changes the result on this input
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 1, 12, 12)).astype(np.float32)
    results = []
    for s in ([0.1, 0.7], [0.7, 0.1]):  # starts 0 2 5 7 10 and 0 3 5 8 10
        samples = np.array([[s]], np.float32)
        want, got = _run(2, x, samples, device, 2, 5)
        _check(want, got, device)
        results.append(got[1].cpu().numpy())
    assert not np.array_equal(*results)


def test_intervals_in_input_dtype(device):
    # with this sample ATen's float32 arithmetic puts the second window at 3 where float64's
    # puts it at 2: the starts are computed in the input's dtype
    x = np.arange(10.0, dtype=np.float32).reshape(1, 1, 1, 10)
    s = np.array([[[0.8749999403953552, 0.0]]], np.float32)
    want, got = _run(2, x, s, device, (1, 2), (1, 4))
    _check(want, got, device)
    in64 = torch.nn.functional.fractional_max_pool2d(
        torch.tensor(x).double(),
        (1, 2),
        (1, 4),
        return_indices=True,
        _random_samples=torch.tensor(s).double(),
    )[1]
    assert not np.array_equal(in64.numpy(), want[1].numpy())  # the case tells the two apart


def test_more_samples_than_batch(device):
    # ATen reads the first N rows of a larger _random_samples
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    s = _samples(rng, 4, 3, 2, np.float32)
    want, got = _run(2, x, s, device, 2, 5)
    _check(want, got, device)


def test_empty_outputs(device):
    x = np.ones((2, 3, 7, 8), np.float32)
    s = np.full((2, 3, 2), 0.5, np.float32)
    for args in [((2, (0, 3)), x), ((2, 3), x[:0])]:
        (kernel, out), values = args
        tv, ti = torch.nn.functional.fractional_max_pool2d_with_indices(
            torch.tensor(values), kernel, out, _random_samples=torch.tensor(s)
        )
        cv, ci = clgrad.nn.functional.fractional_max_pool2d_with_indices(
            clgrad.tensor(values, device=device),
            kernel,
            out,
            _random_samples=clgrad.tensor(s, device=device),
        )
        assert tuple(cv.shape) == tuple(tv.shape) and tuple(ci.shape) == tuple(ti.shape)
        assert cv.dtype == clgrad.float32 and ci.dtype == clgrad.int64


@pytest.mark.parametrize("nd", [2, 3])
def test_drawn_samples(device, nd):
    # without _random_samples the samples are drawn (other numbers than torch's): the result
    # has torch's shape, and each value is the input element its index names, the largest of a
    # kernel-sized window holding it
    rng = np.random.default_rng(6)
    shape = (2, 3) + (9,) * nd
    x = rng.standard_normal(shape).astype(np.float32)
    t = torch.nn.functional
    # (torch's 2d form takes no single ratio: it calls len() on it)
    tv = getattr(t, f"fractional_max_pool{nd}d")(torch.tensor(x), 2, output_ratio=(0.5,) * nd)
    cx = clgrad.tensor(x, device=device)
    cv, ci = _fns(nd, clgrad)(cx, 2, output_ratio=(0.5,) * nd, return_indices=True)
    if nd == 2:  # a single ratio: torch's 2d function refuses it (len() of a float)
        for fn, arg in ((_fns(nd, clgrad), cx), (t.fractional_max_pool2d, torch.tensor(x))):
            with pytest.raises(TypeError, match="has no len"):
                fn(arg, 2, output_ratio=0.5)
    assert tuple(cv.shape) == tuple(tv.shape) == (2, 3) + (4,) * nd
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, ci.cpu().numpy().reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(picked.reshape(cv.shape), cv.cpu().numpy())
    assert cv.cpu().numpy().mean() > x.mean()  # maxima of windows, not arbitrary elements


def test_float64_drawn_samples(device):
    _need(device, "float64")
    x = clgrad.randn(1, 2, 8, 8, dtype=clgrad.float64, device=device)
    assert clgrad.nn.functional.fractional_max_pool2d(x, 2, 4).dtype == clgrad.float64


def test_with_indices_forms(device):
    rng = np.random.default_rng(8)
    for nd in (2, 3):
        x = rng.standard_normal((2, 2) + (6,) * nd).astype(np.float32)
        s = _samples(rng, 2, 2, nd, np.float32)
        cx, cs = clgrad.tensor(x, device=device), clgrad.tensor(s, device=device)
        tx, ts = torch.tensor(x), torch.tensor(s)
        cf = getattr(clgrad.nn.functional, f"fractional_max_pool{nd}d_with_indices")
        tf = getattr(torch.nn.functional, f"fractional_max_pool{nd}d_with_indices")
        cv, ci = cf(cx, 2, 3, _random_samples=cs)  # a pair, return_indices False even so
        tv, ti = tf(tx, 2, 3, _random_samples=ts)
        np.testing.assert_array_equal(ci.cpu().numpy(), ti.numpy())
        np.testing.assert_array_equal(cv.cpu().numpy(), tv.numpy())
        v = _fns(nd, clgrad)(cx, 2, 3, _random_samples=cs)  # return_indices=False: values alone
        assert isinstance(v, clgrad.Tensor)
        np.testing.assert_array_equal(v.cpu().numpy(), tv.numpy())


# ---- modules ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "nd, kwargs",
    [
        (2, {"kernel_size": 3, "output_size": (5, 4)}),
        (2, {"kernel_size": (2, 3), "output_ratio": 0.5, "return_indices": True}),
        (3, {"kernel_size": 2, "output_size": 3, "return_indices": True}),
        (3, {"kernel_size": (2, 1, 2), "output_ratio": (0.5, 0.6, 0.5)}),
    ],
)
def test_module(device, nd, kwargs):
    rng = np.random.default_rng(9)
    shape = (2, 3) + (8,) * nd
    x = rng.standard_normal(shape).astype(np.float32)
    s = _samples(rng, 2, 3, nd, np.float32)
    name = f"FractionalMaxPool{nd}d"
    tm = getattr(torch.nn, name)(**kwargs, _random_samples=torch.tensor(s))
    cm = getattr(clgrad.nn, name)(**kwargs, _random_samples=clgrad.tensor(s)).to(device)
    assert repr(cm) == repr(tm) == f"{name}()"
    assert cm.extra_repr() == tm.extra_repr() == ""
    for attr in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(cm, attr) == getattr(tm, attr), attr
    # the samples are state: a buffer, in the state dict, moved by .to()
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["_random_samples"]
    assert cm._random_samples.device == clgrad.device(device)
    tx = torch.tensor(x, requires_grad=True)
    cx = clgrad.tensor(x, device=device, requires_grad=True)
    tout, cout = tm(tx), cm(cx)
    if kwargs.get("return_indices"):
        np.testing.assert_array_equal(cout[1].cpu().numpy(), tout[1].numpy())
        tout, cout = tout[0], cout[0]
    np.testing.assert_array_equal(cout.detach().cpu().numpy(), tout.detach().numpy())
    tout.sum().backward()
    cout.sum().backward()
    np.testing.assert_allclose(cx.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_module_state_dict_round_trip(device):
    s = np.random.default_rng(10).random((1, 2, 2)).astype(np.float32)
    tm = torch.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=torch.tensor(s))
    cm = clgrad.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=clgrad.zeros(1, 2, 2)).to(
        device
    )
    cm.load_state_dict({k: clgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_array_equal(cm._random_samples.cpu().numpy(), s)
    x = np.random.default_rng(11).standard_normal((1, 2, 7, 7)).astype(np.float32)
    np.testing.assert_array_equal(
        cm(clgrad.tensor(x, device=device)).cpu().numpy(), tm(torch.tensor(x)).numpy()
    )


def test_module_without_samples(device):
    for lib in (torch, clgrad):
        m = lib.nn.FractionalMaxPool2d(2, output_size=3)
        assert m._random_samples is None and list(m.state_dict()) == []
    m = clgrad.nn.FractionalMaxPool3d(2, output_ratio=0.5)
    out = m(clgrad.randn(2, 7, 6, 8, device=device))
    assert tuple(out.shape) == (2, 3, 3, 4) and out.device == clgrad.device(device)


# ---- errors ----------------------------------------------------------------------------------
X2 = np.random.default_rng(12).standard_normal((2, 3, 7, 8)).astype(np.float32)
X3 = np.random.default_rng(13).standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
S2 = np.random.default_rng(14).random((2, 3, 2)).astype(np.float32)
S3 = np.random.default_rng(15).random((2, 3, 3)).astype(np.float32)


def _f2(t, x=X2, *args, **kwargs):
    return t.nn.functional.fractional_max_pool2d(t.tensor(x), *args, **kwargs)


def _f3(t, x=X3, *args, **kwargs):
    return t.nn.functional.fractional_max_pool3d(t.tensor(x), *args, **kwargs)


ERRORS = [
    ("no-size", lambda t: _f2(t, X2, 2)),
    ("ratio-3", lambda t: _f2(t, X2, 2, output_ratio=(0.5, 0.5, 0.5))),
    ("ratio-1", lambda t: _f2(t, X2, 2, output_ratio=(0.5,))),
    ("ratio-one", lambda t: _f2(t, X2, 2, output_ratio=(1.0, 1.0))),
    ("ratio-negative", lambda t: _f2(t, X2, 2, output_ratio=(-0.5, 0.5))),
    ("too-tall", lambda t: _f2(t, X2, 2, output_size=7)),
    ("too-wide", lambda t: _f2(t, X2, 2, output_size=(6, 8))),
    ("big-kernel", lambda t: _f2(t, X2, 8, output_size=1)),
    ("negative-size", lambda t: _f2(t, X2, 2, output_size=(-1, 3))),
    ("size-3", lambda t: _f2(t, X2, 2, output_size=(1, 3, 3))),
    ("size-1", lambda t: _f2(t, X2, 2, output_size=[3])),
    ("kernel-3", lambda t: _f2(t, X2, (2, 2, 2), output_size=3)),
    ("kernel-float", lambda t: _f2(t, X2, 2.0, output_size=3)),
    ("kernel-float-item", lambda t: _f2(t, X2, (2.0, 2), output_size=3)),
    ("input-2d", lambda t: _f2(t, X2[0, 0], 2, output_size=3)),
    ("input-5d", lambda t: _f2(t, X2[None], 2, output_size=3)),
    ("empty-channels", lambda t: _f2(t, X2[:, :0], 2, output_size=3)),
    ("empty-height", lambda t: _f2(t, X2[:, :, :0], 2, output_size=3)),
    # (half, not float64: a device may have no float64)
    ("samples-dtype", lambda t: _f2(t, X2, 2, 3, _random_samples=t.tensor(S2).half())),
    ("samples-2d", lambda t: _f2(t, X2, 2, 3, _random_samples=t.tensor(S2[0]))),
    ("samples-batch", lambda t: _f2(t, X2, 2, 3, _random_samples=t.tensor(S2[:1]))),
    ("samples-channels", lambda t: _f2(t, X2, 2, 3, _random_samples=t.tensor(S2[:, :2]))),
    ("samples-last", lambda t: _f2(t, X2, 2, 3, _random_samples=t.tensor(S3))),
    ("samples-list", lambda t: _f2(t, X2, 2, 3, _random_samples=[0.5])),
    ("int-input", lambda t: _f2(t, X2.astype(np.int64), 2, 3)),
    (
        "int-samples",
        lambda t: _f2(t, X2.astype(np.int64), 2, 3, _random_samples=t.tensor(S2).long()),
    ),
    (
        "int-float-samples",
        lambda t: _f2(t, X2.astype(np.int32), 2, 3, _random_samples=t.tensor(S2)),
    ),
    ("3d-no-size", lambda t: _f3(t, X3, 2)),
    ("3d-ratio-2", lambda t: _f3(t, X3, 2, output_ratio=(0.5, 0.5))),
    ("3d-too-long", lambda t: _f3(t, X3, 2, output_size=4)),  # 4 + 2 - 1 == 5: 3d refuses
    ("3d-too-tall", lambda t: _f3(t, X3, 2, output_size=(3, 5, 3))),
    ("3d-too-wide", lambda t: _f3(t, X3, 2, output_size=(4, 5, 6))),  # width checked first
    ("3d-big-kernel", lambda t: _f3(t, X3, 5, output_size=1)),
    ("3d-kernel-2", lambda t: _f3(t, X3, (2, 2), output_size=1)),
    ("3d-size-2", lambda t: _f3(t, X3, 2, output_size=(1, 1))),
    ("3d-input-3d", lambda t: _f3(t, X3[0, 0], 2, output_size=1)),
    ("3d-empty", lambda t: _f3(t, X3[:, :, :0], 2, output_size=2)),
    ("3d-samples-last", lambda t: _f3(t, X3, 2, 2, _random_samples=t.tensor(S2))),
    ("3d-samples-batch", lambda t: _f3(t, X3, 2, 2, _random_samples=t.tensor(S3[:1]))),
    ("3d-int-input", lambda t: _f3(t, X3.astype(np.int64), 2, 2)),
    ("module-3d-kernel", lambda t: t.nn.FractionalMaxPool3d(0, output_size=(3, 2, 1))),
    ("module-3d-kernel-item", lambda t: t.nn.FractionalMaxPool3d((1, 0, 1), output_size=1)),
    ("module-ratio-one", lambda t: t.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.0))),
    ("module-ratio-zero", lambda t: t.nn.FractionalMaxPool3d(2, output_ratio=0.0)),
    ("module-ratio-1", lambda t: t.nn.FractionalMaxPool2d(2, output_ratio=(0.5,))),
    ("module-both", lambda t: t.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)),
    ("module-neither-2d", lambda t: t.nn.FractionalMaxPool2d(2)),
    ("module-neither-3d", lambda t: t.nn.FractionalMaxPool3d(2)),
]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("fn", [f for _, f in ERRORS], ids=[n for n, _ in ERRORS])
def test_errors(device, fn):
    want = _error(lambda: fn(torch))
    default = clgrad.default_device()
    clgrad.set_default_device(device)  # the inputs the case builds, on the device
    try:
        got = _error(lambda: fn(clgrad))
    finally:
        clgrad.set_default_device(default)
    assert got == want


def test_kernel_not_positive():
    # torch 2.13 reads outside the window for a kernel of 0 (its backward asserts); newer
    # releases refuse with this message, as clgrad does
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero, but got 0x2"):
        clgrad.nn.functional.fractional_max_pool2d(clgrad.ones(1, 5, 5), (0, 2), 2)


def test_functional_takes_both_sizes(device):
    # the functional form takes both (output_size wins); only the modules refuse
    x = np.random.default_rng(16).standard_normal((1, 2, 8, 8)).astype(np.float32)
    s = np.full((1, 2, 2), 0.4, np.float32)
    want, got = _run(2, x, s, device, 2, 3, 0.5)
    _check(want, got, device)
    assert tuple(got[0].shape) == (1, 2, 3, 3)
