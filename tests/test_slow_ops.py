"""Ops whose implementation was changed for speed, checked against PyTorch at the sizes and on
the paths the change touched: cdist's matrix-product path (PyTorch's past 25 rows), pdist's
full-matrix differences, the one-launch local-memory sort (rows up to 2048) under topk /
median / kthvalue / sort, and the host decompositions run on one BLAS thread."""

import numpy as np
import pytest
import torch

import clgrad


def _f64(device):
    return clgrad.device(device).supports(clgrad.float64)


def _close(ours, theirs, rtol=1e-4, atol=1e-4):
    a = ours.detach().cpu().numpy() if isinstance(ours, clgrad.Tensor) else np.asarray(ours)
    np.testing.assert_allclose(a, theirs.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("mode", [None, "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
@pytest.mark.parametrize(
    "shapes", [((40, 7), (30, 7)), ((3, 1, 30, 5), (2, 20, 5)), ((4, 3), (5, 3))]
)
def test_cdist_matches_torch(device, shapes, mode):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    if a.ndim == b.ndim == 2:
        a[1] = b[0]  # an equal pair: a zero distance, no gradient through it
    kw = {} if mode is None else {"compute_mode": mode}
    outs = []
    for lib, dev in ((clgrad, device), (torch, "cpu")):
        x = lib.tensor(a, device=dev, requires_grad=True)
        y = lib.tensor(b, device=dev, requires_grad=True)
        d = lib.cdist(x, y, **kw)
        w = lib.arange(1.0, d.numel() + 1, device=dev).reshape(d.shape) / d.numel()
        (d * w).sum().backward()
        outs.append((d, x.grad, y.grad))
    for ours, theirs in zip(*outs):
        _close(ours, theirs, atol=2e-3)  # (the product's rounding near a zero distance)


def test_cdist_refuses_an_unknown_compute_mode(device):
    x = clgrad.ones(2, 2, device=device)
    with pytest.raises(ValueError, match="is not a valid value for compute_mode"):
        clgrad.cdist(x, x, compute_mode="fast")


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_pdist_matches_torch(device, p):
    a = np.random.default_rng(1).standard_normal((37, 6)).astype(np.float32)
    a[5] = a[2]  # an equal pair: exactly 0, as PyTorch's direct differences give
    outs = []
    for lib, dev in ((clgrad, device), (torch, "cpu")):
        x = lib.tensor(a, device=dev, requires_grad=True)
        d = lib.nn.functional.pdist(x, p)
        w = lib.arange(1.0, d.numel() + 1, device=dev) / d.numel()
        (d * w).sum().backward()
        outs.append((d, x.grad))
    (d, g), (td, tg) = outs
    _close(d, td)
    _close(g, tg, atol=1e-3)
    assert float(d.detach().cpu().numpy()[(2 * 37 - 3) * 2 // 2 + 2]) == 0.0  # pair (2, 5)


@pytest.mark.parametrize("n", [2, 5, 64, 1000, 2048, 2049])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "int32"])
def test_sort_rows_match_torch(device, n, dtype):
    """Stable ascending and descending sorts, ties, NaN and -0.0 among the keys."""
    rng = np.random.default_rng(n)
    a = rng.integers(-4, 4, (3, n)).astype(dtype)
    if dtype.startswith("float"):
        a[0, : n // 2] = np.nan
        a[1, ::3] = -0.0
    for desc in (False, True):
        v, i = clgrad.sort(clgrad.tensor(a, device=device), descending=desc, stable=True)
        tv, ti = torch.sort(torch.tensor(a), descending=desc, stable=True)
        np.testing.assert_array_equal(v.cpu().numpy(), tv.numpy())
        np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())


def test_sort_float64_rows_match_torch(device):
    if not _f64(device):
        pytest.skip("no float64 on this device")
    a = np.random.default_rng(3).standard_normal((4, 300))
    a[0, 7] = np.nan
    v, i = clgrad.sort(clgrad.tensor(a, device=device), dim=1, descending=True, stable=True)
    tv, ti = torch.sort(torch.tensor(a), dim=1, descending=True, stable=True)
    np.testing.assert_array_equal(v.cpu().numpy(), tv.numpy())
    np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())


@pytest.mark.parametrize("dim", [0, 1])
def test_selection_values_and_gradients(device, dim):
    """topk, median, kthvalue (distinct values: the indices are unique) and their gradients."""
    a = np.random.default_rng(4).permutation(64 * 300).reshape(64, 300).astype(np.float32)
    fns = [
        lambda L, x: L.topk(x, 10, dim=dim),
        lambda L, x: L.topk(x, 7, dim=dim, largest=False),
        lambda L, x: L.median(x, dim),
        lambda L, x: L.kthvalue(x, 5, dim),
    ]
    for fn in fns:
        outs = []
        for lib, dev in ((clgrad, device), (torch, "cpu")):
            x = lib.tensor(a, device=dev, requires_grad=True)
            v, i = fn(lib, x)
            (v * lib.arange(1.0, v.numel() + 1, device=dev).reshape(v.shape)).sum().backward()
            outs.append((v, i, x.grad))
        for ours, theirs in zip(*outs):
            _close(ours, theirs, rtol=0, atol=0)


@pytest.mark.parametrize(
    "op",
    ["solve", "inv", "cholesky", "eigh", "det", "slogdet", "qr", "svd", "pinv", "matrix_rank"],
)
def test_host_decompositions_match_torch(device, op):
    """Batched and single matrices of orders up to 96, values and gradients."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 96, 96)).astype(np.float32) / 10 + np.eye(96, dtype=np.float32)
    b = rng.standard_normal((2, 96, 3)).astype(np.float32)

    def run(L, dev):
        x = L.tensor(a, device=dev, requires_grad=True)
        r = L.tensor(b, device=dev, requires_grad=True)
        spd = x @ x.mT + L.eye(96, device=dev)
        out = {
            "solve": lambda: L.linalg.solve(x, r),
            "inv": lambda: L.linalg.inv(x),
            "cholesky": lambda: L.linalg.cholesky(spd),
            "eigh": lambda: L.linalg.eigh(spd).eigenvalues,
            "det": lambda: L.linalg.det(x),
            "slogdet": lambda: L.linalg.slogdet(x).logabsdet,
            "qr": lambda: L.linalg.qr(x).R.abs(),
            "svd": lambda: L.linalg.svdvals(x),
            "pinv": lambda: L.linalg.pinv(x),
            "matrix_rank": lambda: L.linalg.matrix_rank(x.detach()),
        }[op]()
        if not out.dtype.is_floating_point:
            return [out]
        out.sum().backward()
        return [out, x.grad] + ([r.grad] if op == "solve" else [])

    for ours, theirs in zip(run(clgrad, device), run(torch, "cpu")):
        scale = float(theirs.detach().abs().max())  # (float32 against a float64 host computation)
        _close(ours, theirs, rtol=2e-3, atol=2e-3 * max(scale, 1.0))


@pytest.mark.parametrize("name", ["i0", "special.i0e", "special.i1", "special.i1e"])
def test_bessel_i_matches_torch(device, name):
    """Values (both branches of the fits, signs, 0, inf, NaN) and gradients, float32 and
    float64 where the device has it."""
    a = np.random.default_rng(6).standard_normal(500) * 10
    a = np.concatenate(
        [a, [0.0, -0.0, 8.0, -8.0, 8.5, 1e-30, 60.0, -60.0, np.inf, -np.inf, np.nan]]
    )
    dtypes = ["float32"] + (["float64"] if _f64(device) else [])
    for dt in dtypes:
        outs = []
        for lib, dev in ((clgrad, device), (torch, "cpu")):
            fn = lib
            for part in name.split("."):
                fn = getattr(fn, part)
            x = lib.tensor(a.astype(dt), device=dev, requires_grad=True)
            y = fn(x)
            y.backward(lib.tensor(np.linspace(0.5, 1.5, a.size).astype(dt), device=dev))
            outs.append((y, x.grad))
        (y, g), (ty, tg) = outs
        assert y.dtype.name == dt
        tol = 2e-6 if dt == "float32" else 1e-13
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=tol)
        fin = np.isfinite(tg.numpy())
        np.testing.assert_allclose(
            g.cpu().numpy()[fin],
            tg.numpy()[fin],
            rtol=1e-5,
            atol=1e-6 * np.abs(tg.numpy()[fin]).max(),
        )


def test_erfinv_matches_torch(device):
    """Both branches of the first guess, +-1, outside [-1, 1], NaN; values and gradients."""
    a = np.random.default_rng(7).uniform(-1, 1, 2000)
    a = np.concatenate([a, [0.0, -0.0, 0.7, -0.7, 0.70001, 1.0, -1.0, 1.5, -2.0, np.nan, 0.99999]])
    for dt in ["float32"] + (["float64"] if _f64(device) else []):
        outs = []
        for lib, dev in ((clgrad, device), (torch, "cpu")):
            x = lib.tensor(a.astype(dt), device=dev, requires_grad=True)
            y = lib.erfinv(x)
            y.backward(lib.ones_like(y))
            outs.append((y, x.grad))
        (y, g), (ty, tg) = outs
        assert y.dtype.name == dt
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(g.cpu().numpy(), tg.numpy(), rtol=1e-4)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_matches_torch(device, name):
    """Both the series (x < a + 1) and the continued fraction, the edges (0, inf, negative,
    NaN), and the gradient in x."""
    rng = np.random.default_rng(8)
    a = np.concatenate([rng.random(400) * 5 + 0.01, rng.random(100) * 200, [0, 0, 1, -1, np.nan]])
    x = np.concatenate([rng.random(400) * 8, rng.random(100) * 250, [0, 1, np.inf, 1, 1]])
    for dt in ["float32"] + (["float64"] if _f64(device) else []):
        outs = []
        for lib, dev in ((clgrad, device), (torch, "cpu")):
            xa = lib.tensor(x.astype(dt), device=dev, requires_grad=True)
            y = getattr(lib, name)(lib.tensor(a.astype(dt), device=dev), xa)
            y.backward(lib.ones_like(y))
            outs.append((y, xa.grad))
        (y, g), (ty, tg) = outs
        assert y.dtype.name == dt
        # (without float64 the series' front factor, exp(a log x - x - lgamma(a)), loses
        # float32's digits to cancellation for a in the hundreds)
        atol = 1e-6 if _f64(device) else 2e-4
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), atol=atol)
        fin = np.isfinite(tg.numpy())
        np.testing.assert_allclose(g.cpu().numpy()[fin], tg.numpy()[fin], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8", "uint8", "bool", "int64"])
def test_cum_extremes_match_torch(device, fn, dtype):
    """Ties (the later index), NaN (it wins, a later NaN takes the index), -0.0 against 0.0,
    along a middle and the last dim; the gradient goes to the index."""
    a = np.random.default_rng(9).integers(-3, 4, (3, 40, 5)).astype(np.float32)
    if dtype.startswith("float"):
        a.flat[::7] = np.nan
        a.flat[3::11] = -0.0
    for dim in (1, -1):
        outs = []
        for lib, dev in ((clgrad, device), (torch, "cpu")):
            x = lib.tensor(a, device=dev).to(getattr(lib, dtype))
            if dtype.startswith("float"):
                x.requires_grad_()
            v, i = getattr(lib, fn)(x, dim)
            if dtype.startswith("float"):
                # (ones: each gradient a count, exact in float16 whatever the summing order)
                v.float().sum().backward()
            outs.append((v, i, x.grad))
        (v, i, g), (tv, ti, tg) = outs
        assert v.dtype.name == str(tv.dtype).split(".")[1]
        got, want = v.detach().float().cpu().numpy(), tv.detach().float().numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())
        if g is not None:
            np.testing.assert_array_equal(g.float().cpu().numpy(), tg.float().numpy())
