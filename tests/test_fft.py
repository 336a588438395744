"""clgrad.fft against torch.fft on every device: values, dtypes and shapes for n/s, dim and
norm, gradients of real losses, accuracy at large sizes, and torch's errors."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

RNG = np.random.default_rng(1)


def c(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _name(dt):
    return str(dt).split(".")[-1]


def _compare(device, fn, x, grad=True, rtol=2e-5):
    """fn(lib, tensor) in torch and clgrad: dtype, shape, values (relative to the largest)
    and the input's gradient for a real loss of the result."""
    out = []
    for lib in (torch, clgrad):
        kw = {} if lib is torch else {"device": device}
        t = lib.tensor(x, requires_grad=grad, **kw)
        y = fn(lib, t)
        if grad:
            yy = y.resolve_conj() if lib is torch else y
            w = np.linspace(-1, 1, yy.numel()).reshape(tuple(yy.shape)).astype(np.float32)
            w = lib.tensor(w, **kw)
            if yy.is_complex():
                loss = (lib.view_as_real(yy)[..., 0] * w).sum() + yy.abs().sum()
            else:
                loss = (yy * w).sum()
            loss.backward()
        out.append((y, t.grad if grad else None))
    (ty, tg), (cy, cg_) = out
    assert _name(ty.dtype) == _name(cy.dtype)
    expected = ty.detach().resolve_conj().numpy()
    got = cy.detach().cpu().numpy()
    assert got.shape == expected.shape
    scale = np.abs(expected).max() + 1e-30
    assert np.abs(got - expected).max() / scale < rtol
    if grad:
        ge = tg.resolve_conj().numpy()
        assert np.abs(cg_.cpu().numpy() - ge).max() / (np.abs(ge).max() + 1e-30) < 10 * rtol


@pytest.mark.parametrize("n", [1, 2, 3, 8, 12, 17, 30, 97, 100, 257])
def test_fft_sizes(device, n):
    _compare(device, lambda L, x: L.fft.fft(x), c(2, n))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_dim_norms(device, name, norm):
    real_in = name in ("rfft", "ihfft")
    x = r(3, 10) if real_in else c(3, 6)
    _compare(device, lambda L, t: getattr(L.fft, name)(t, norm=norm), x)


@pytest.mark.parametrize("m,n", [(5, None), (5, 8), (5, 9), (3, 4), (2, 2), (6, 3)])
def test_c2r_lengths(device, m, n):
    _compare(device, lambda L, x: L.fft.irfft(x, n=n), c(2, m))
    _compare(device, lambda L, x: L.fft.hfft(x, n=n, dim=0), c(m, 2))


@pytest.mark.parametrize(
    "name,fn,x",
    [
        ("pad", lambda L, x: L.fft.fft(x, n=8, dim=0), c(5, 3)),
        ("trim", lambda L, x: L.fft.fft(x, n=3, dim=0), c(5, 3)),
        ("real_input", lambda L, x: L.fft.fft(x), r(3, 10)),
        ("rfft_n", lambda L, x: L.fft.rfft(x, n=7), r(3, 10)),
        ("ihfft_n", lambda L, x: L.fft.ihfft(x, n=12), r(3, 10)),
        ("fft2", lambda L, x: L.fft.fft2(x), c(2, 6, 10)),
        ("ifft2_s", lambda L, x: L.fft.ifft2(x, s=(4, 12)), c(2, 6, 10)),
        ("fftn", lambda L, x: L.fft.fftn(x), c(3, 4, 5)),
        ("fftn_dim", lambda L, x: L.fft.fftn(x, dim=(0, 2)), c(3, 4, 5)),
        ("fftn_s", lambda L, x: L.fft.fftn(x, s=(3, -1)), c(3, 4, 5)),
        ("ifftn_ortho", lambda L, x: L.fft.ifftn(x, norm="ortho"), c(3, 4, 5)),
        ("rfft2", lambda L, x: L.fft.rfft2(x), r(2, 6, 10)),
        ("irfft2", lambda L, x: L.fft.irfft2(x), c(2, 6, 6)),
        ("irfftn_s", lambda L, x: L.fft.irfftn(x, s=(5, 7)), c(2, 6, 6)),
        ("rfftn", lambda L, x: L.fft.rfftn(x, norm="forward"), r(3, 4, 6)),
        ("irfftn_dim", lambda L, x: L.fft.irfftn(x, dim=(0, 2)), c(3, 4, 6)),
        ("hfft2", lambda L, x: L.fft.hfft2(x), c(2, 6, 6)),
        ("hfftn_s", lambda L, x: L.fft.hfftn(x, s=(5, 7), norm="ortho"), c(2, 6, 6)),
        ("hfftn_dim", lambda L, x: L.fft.hfftn(x, dim=(0, 2), norm="forward"), c(3, 4, 6)),
        ("ihfft2", lambda L, x: L.fft.ihfft2(x), r(2, 6, 10)),
        ("ihfftn", lambda L, x: L.fft.ihfftn(x, s=(3, 8), dim=(0, 2)), r(3, 4, 6)),
        ("rfft_abs", lambda L, x: L.fft.rfft(x).abs(), r(4, 32)),
        ("filter", lambda L, x: L.fft.irfft(L.fft.rfft(x) * L.fft.rfft(x.flip(-1)), 32), r(4, 32)),
        ("fftshift", lambda L, x: L.fft.fftshift(x), c(4, 5)),
        ("ifftshift", lambda L, x: L.fft.ifftshift(x, dim=0), r(4, 5)),
    ],
)
def test_arguments_and_gradients(device, name, fn, x):
    _compare(device, fn, x)


def test_float64(device):
    if not supports(device, clgrad.float64):
        pytest.skip("no float64 on this device")
    x = r(2, 24).astype(np.float64)
    _compare(device, lambda L, t: L.fft.fft(t), x, rtol=1e-12)
    _compare(device, lambda L, t: L.fft.irfft(L.fft.rfft(t)), x, rtol=1e-12)


@pytest.mark.parametrize("n", [4096, 4095, 4099])
def test_large_sizes_accurate(device, n):
    # smooth and prime lengths: float32 within ~1e-5 of torch relative to the largest value
    _compare(device, lambda L, x: L.fft.fft(x), c(1, n), grad=False, rtol=1e-5)


def test_frequencies(device):
    for lib in (torch, clgrad):
        kw = {} if lib is torch else {"device": device}
        got = [
            lib.fft.fftfreq(5, **kw),
            lib.fft.rfftfreq(6, 0.5, **kw),
            lib.fft.fftfreq(4, dtype=lib.float64 if lib is torch else clgrad.float32, **kw),
        ]
        if lib is torch:
            expected = [g.numpy() for g in got]
        else:
            for e, g in zip(expected, got):
                np.testing.assert_allclose(g.cpu().numpy(), e, rtol=1e-6)
    assert clgrad.fft.fftshift(clgrad.arange(6)).tolist() == [3, 4, 5, 0, 1, 2]


def test_errors_as_torch():
    x = clgrad.zeros(3)
    z = clgrad.zeros(3, dtype=clgrad.complex64)
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        clgrad.fft.fft(x, norm="x")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        clgrad.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor"):
        clgrad.fft.rfft(z)
    with pytest.raises(RuntimeError, match="ihfft expects a real input tensor"):
        clgrad.fft.ihfft(z)
    with pytest.raises(IndexError):
        clgrad.fft.fft(x, dim=2)
    with pytest.raises(IndexError):
        clgrad.fft.fft2(x)
    with pytest.raises(IndexError):
        clgrad.fft.fft(clgrad.tensor(1.0))
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        clgrad.fft.irfft(clgrad.zeros(1, dtype=clgrad.complex64))
    with pytest.raises(RuntimeError, match="must have the same length"):
        clgrad.fft.fftn(clgrad.zeros(2, 3), s=(2,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        clgrad.fft.fftn(clgrad.zeros(2, 3), dim=(0, 0))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        clgrad.fft.fft(clgrad.zeros(3, dtype=clgrad.float16))
    assert clgrad.fft.fft(clgrad.arange(4)).dtype is clgrad.complex64


@pytest.mark.parametrize("kw", [{"hop_length": 0}, {"hop_length": 9}, {"win_length": 9}])
def test_istft_refuses_frame_sizes_as_torch(kw):
    # a hop of 0 or past the window has nothing to overlap-add: torch's RuntimeError
    for lib in (torch, clgrad):
        spec = lib.stft(lib.arange(16.0), 8, window=lib.hann_window(8), return_complex=True)
        with pytest.raises(RuntimeError, match="expected 0 < (hop|win)_length <="):
            lib.istft(spec, 8, window=lib.hann_window(8), **kw)


@pytest.mark.parametrize(
    "name,fn",
    [
        ("stft", lambda L, t, w: L.stft(t, 16, window=w, return_complex=True)),
        ("stft_1d_hop", lambda L, t, w: L.stft(t[0], 16, 5, window=w, return_complex=True)),
        (
            "stft_no_center",
            lambda L, t, w: L.stft(t, 16, center=False, window=w, return_complex=True),
        ),
        (
            "stft_constant",
            lambda L, t, w: L.stft(t, 16, pad_mode="constant", window=w, return_complex=True),
        ),
        (
            "stft_normalized",
            lambda L, t, w: L.stft(t, 16, normalized=True, window=w, return_complex=True),
        ),
        (
            "stft_two_sided",
            lambda L, t, w: L.stft(t, 16, onesided=False, window=w, return_complex=True),
        ),
        (
            "stft_win_length",
            lambda L, t, w: L.stft(t, 16, win_length=12, window=w[:12], return_complex=True),
        ),
        (
            "stft_complex_input",
            lambda L, t, w: L.stft(t * (1 + 1j), 16, window=w, return_complex=True),
        ),
        (
            "istft",
            lambda L, t, w: L.istft(L.stft(t, 16, window=w, return_complex=True), 16, window=w),
        ),
        (
            "istft_length",
            lambda L, t, w: L.istft(
                L.stft(t, 16, 4, window=w, return_complex=True), 16, 4, window=w, length=70
            ),
        ),
        (
            "istft_two_sided_normalized",
            lambda L, t, w: L.istft(
                L.stft(t, 16, window=w, onesided=False, normalized=True, return_complex=True),
                16,
                window=w,
                onesided=False,
                normalized=True,
            ),
        ),
    ],
)
def test_stft_istft(device, name, fn):
    x = r(2, 64)
    _compare(device, lambda L, t: fn(L, t, L.hann_window(16).to(t.device)), x, rtol=1e-5)


def test_stft_return_complex():
    x = clgrad.zeros(64)
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
        clgrad.stft(x, 16, window=clgrad.hann_window(16))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        y = clgrad.stft(x, 16, window=clgrad.hann_window(16), return_complex=False)
    assert tuple(y.shape) == (9, 17, 2) and y.dtype is clgrad.float32
    with pytest.raises(RuntimeError, match="complex-valued input"):
        clgrad.istft(clgrad.zeros(9, 5), 16)
    assert clgrad.ones(64).stft(16, window=clgrad.ones(16), return_complex=True).shape == (9, 17)


def test_out(device):
    out = clgrad.empty(0, dtype=clgrad.complex64, device=device)
    y = clgrad.fft.fft(clgrad.tensor([1.0, 2.0, 3.0, 4.0], device=device), out=out)
    assert y is out and out.tolist() == [10, -2 + 2j, -2, -2 - 2j]
    real = clgrad.empty(4, device=device)
    clgrad.fft.irfft(clgrad.tensor([10 + 0j, -2 + 2j, -2], device=device), out=real)
    np.testing.assert_allclose(real.cpu().numpy(), [1, 2, 3, 4], rtol=1e-6)
