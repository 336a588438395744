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


# ---- torch.quasirandom.SobolEngine ----

from clgrad.quasirandom import SobolEngine  # noqa: E402


def test_sobol_state_equals_torch_all_dimensions():
    got = SobolEngine(SobolEngine.MAXDIM).sobolstate
    want = torch.quasirandom.SobolEngine(21201).sobolstate
    assert got.dtype == clgrad.int64 and tuple(got.shape) == (21201, 30)
    assert np.array_equal(got.numpy(), want.numpy())
    assert (SobolEngine.MAXBIT, SobolEngine.MAXDIM) == (30, 21201)


@pytest.mark.parametrize("dim", [1, 2, 7, 64, 1000, 21201])
def test_sobol_draws_equal_torch(dim):
    ours, theirs = SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
    steps = [("draw", 1), ("draw", 6), ("ff", 5), ("draw", 33), ("ff", 1), ("draw", 1)]
    if dim < 1000:
        steps += [("draw", 700), ("ff", 3000), ("draw", 50)]
    for kind, n in steps:
        if kind == "ff":
            assert ours.fast_forward(n) is ours
            theirs.fast_forward(n)
            continue
        for dt in ("float32", "float64"):
            a = ours.draw(n, dtype=getattr(clgrad, dt) if dt == "float64" else None)
            b = theirs.draw(n, dtype=getattr(torch, dt) if dt == "float64" else None)
            assert a.dtype == getattr(clgrad, dt) and tuple(a.shape) == (n, dim)
            assert np.array_equal(a.numpy(), b.numpy())
        assert ours.num_generated == theirs.num_generated
        assert np.array_equal(ours.quasi.numpy(), theirs.quasi.numpy())


def test_sobol_base2_reset_out_repr():
    ours, theirs = SobolEngine(5), torch.quasirandom.SobolEngine(5)
    assert np.array_equal(ours.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())
    assert np.array_equal(ours.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())
    with pytest.raises(ValueError, match="power of 2"):
        ours.draw_base2(2)
    ours.reset()
    theirs.reset()
    assert ours.num_generated == 0 and np.array_equal(ours.quasi.numpy(), np.zeros(5))
    out = clgrad.empty(1)
    assert ours.draw(4, out=out) is out
    assert np.array_equal(out.numpy(), theirs.draw(4).numpy())
    assert repr(SobolEngine(3, scramble=True, seed=1)) == repr(
        torch.quasirandom.SobolEngine(3, scramble=True, seed=1)
    )
    for bad in (0, 21202):
        with pytest.raises(ValueError) as want:
            torch.quasirandom.SobolEngine(bad)
        with pytest.raises(ValueError) as got:
            SobolEngine(bad)
        assert str(got.value) == str(want.value)


def test_sobol_scramble_matrix_as_atens():
    # the same random bits given to both: clgrad's scramble of the direction numbers is ATen's
    from clgrad.quasirandom import _scramble_state

    state = torch.quasirandom.SobolEngine(9).sobolstate
    ltm = torch.randint(2, (9, 30, 30), generator=torch.Generator().manual_seed(0)).tril()
    want = state.clone()
    torch._sobol_engine_scramble_(want, ltm, 9)
    assert np.array_equal(_scramble_state(state.numpy(), ltm.numpy(), 30), want.numpy())


def test_sobol_scrambled_statistics():
    e = SobolEngine(6, scramble=True, seed=123)
    x = e.draw_base2(12).numpy().astype(np.float64)
    assert x.shape == (4096, 6) and (x >= 0).all() and (x < 1).all()
    # a scrambled Sobol' net: in 30-bit integers (the engine's states), every dimension has
    # exactly one point in each of 4096 bins and each pair is balanced on a 16 x 16 grid; the
    # float32 points (rounded to 24 bits, as torch's are) may move one across a bin's edge
    from clgrad.quasirandom import _walk

    shift, state = e.shift.numpy(), e.sobolstate.numpy()
    q = np.concatenate([shift[None], _walk(shift, state, 4095, 0)])
    assert np.array_equal(q[-1], e.quasi.numpy())
    np.testing.assert_array_equal(q.astype(np.float32) / np.float32(2**30), x.astype(np.float32))
    for d in range(6):
        assert (np.bincount(q[:, d] >> 18, minlength=4096) == 1).all()
        assert (np.bincount((x[:, d] * 4096).astype(int), minlength=4096) != 1).sum() <= 4
    for d in range(5):
        grid = np.zeros((16, 16), dtype=int)
        np.add.at(grid, (q[:, d] >> 26, q[:, d + 1] >> 26), 1)
        assert (grid == 16).all()
    assert np.abs(x.mean(0) - 0.5).max() < 1e-3
    # the same seed gives the same points, another seed others; the first point is not 0
    again = SobolEngine(6, scramble=True, seed=123).draw_base2(12).numpy()
    assert np.array_equal(again, x.astype(np.float32))
    other = SobolEngine(6, scramble=True, seed=124).draw(8).numpy()
    assert not np.array_equal(other, x[:8].astype(np.float32)) and (x[0] > 0).all()
    assert SobolEngine(2, scramble=True).draw(3).shape == (3, 2)
