"""torch.signal.windows, torch.quasirandom.SobolEngine and torch.hub's clgrad counterparts,
against torch: windows on every test device, unscrambled Sobol' draws equal, hub on file://
URLs and local directories under a temporary TORCH_HOME."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad
import clgrad.signal.windows as W

WINDOWS = [
    ("bartlett", {}),
    ("blackman", {}),
    ("cosine", {}),
    ("exponential", {}),
    ("exponential", {"tau": 0.5}),
    ("gaussian", {}),
    ("gaussian", {"std": 2.5}),
    ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_hamming", {}),
    ("general_hamming", {"alpha": 0.6}),
    ("hamming", {}),
    ("hann", {}),
    ("kaiser", {}),
    ("kaiser", {"beta": 3.5}),
    ("nuttall", {}),
]


@pytest.mark.parametrize("name, kw", WINDOWS, ids=[f"{n}-{k}" for n, k in WINDOWS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(device, name, kw, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    tol = 1e-5 if dtype == "float32" else 1e-12
    for M in (0, 1, 2, 5, 10, 17):
        for sym in (True, False):
            got = getattr(W, name)(M, sym=sym, dtype=getattr(clgrad, dtype), device=device, **kw)
            want = getattr(torch.signal.windows, name)(
                M, sym=sym, dtype=getattr(torch, dtype), **kw
            )
            assert got.dtype == getattr(clgrad, dtype) and got.device == clgrad.device(device)
            assert tuple(got.shape) == tuple(want.shape)
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def test_windows_defaults_and_grad(device):
    w = W.hann(6, device=device)
    assert w.dtype == clgrad.get_default_dtype()
    np.testing.assert_allclose(w.cpu().numpy(), torch.signal.windows.hann(6).numpy(), atol=1e-6)
    exp = W.exponential(6, sym=False, center=1.0, device=device)
    want = torch.signal.windows.exponential(6, sym=False, center=1.0)
    np.testing.assert_allclose(exp.cpu().numpy(), want.numpy(), atol=1e-6)
    g = W.gaussian(5, requires_grad=True, device=device)
    tg = torch.signal.windows.gaussian(5, requires_grad=True)
    assert g.requires_grad and tg.requires_grad
    assert (g.grad_fn is None) == (tg.grad_fn is None)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.hann(-1),
        lambda m: m.hann(4, dtype=m.__dtypes__.int64),
        lambda m: m.hann(4, dtype=m.__dtypes__.float16),
        lambda m: m.exponential(4, tau=0.0),
        lambda m: m.exponential(4, center=1.0),
        lambda m: m.gaussian(4, std=-1.0),
        lambda m: m.kaiser(4, beta=-1.0),
        lambda m: m.general_cosine(4, a=[]),
        lambda m: m.general_cosine(4, a=3),
    ],
)
def test_window_errors_as_torch(call):
    class Mod:
        def __init__(self, mod, dtypes):
            self.mod, self.__dtypes__ = mod, dtypes

        def __getattr__(self, name):
            return getattr(self.mod, name)

    with pytest.raises(Exception) as want:
        call(Mod(torch.signal.windows, torch))
    with pytest.raises(want.type) as got:
        call(Mod(W, clgrad))
    assert str(got.value).replace("clgrad.", "torch.") == str(want.value)


def test_window_layout_error():
    with pytest.raises(ValueError, match="strided tensors only"):
        W.hann(4, layout=object())
