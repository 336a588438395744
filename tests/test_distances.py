"""cdist and pdist through the backends' one-pass distances (``Backend.distances``: no array of
every pair's differences): values against PyTorch for every p it names a code for (0, 1, 2, inf)
and others, NaN as PyTorch's, broadcast batches, strided and empty inputs, gradients; the
broadcast-differences path a backend declines to (llvmpipe's loop limit) gives the same."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad
from clgrad.ops.linalg import _distances

PS = [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")]
SHAPES = [((5, 7), (4, 7)), ((2, 30, 8), (30, 8)), ((3, 1, 6, 5), (2, 4, 5)), ((0, 3), (2, 3))]
DIRECT = "donot_use_mm_for_euclid_dist"  # (p = 2 from differences, not a matrix product)


def _pair(a, b, dtype, device):
    # (converted on the host: the device may have no float64)
    return tuple(clgrad.tensor(np.asarray(v, dtype=dtype), device=device) for v in (a, b))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", PS)
def test_cdist_against_torch(device, p, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    rng = np.random.default_rng(0)
    for s1, s2 in SHAPES:
        a, b = rng.standard_normal(s1), rng.standard_normal(s2)
        if a.size and b.size:
            a.reshape(-1)[3] = b.reshape(-1)[3]  # an equal coordinate
        want = torch.cdist(torch.tensor(a), torch.tensor(b), p=p, compute_mode=DIRECT)
        x1, x2 = _pair(a, b, dtype, device)
        got = clgrad.cdist(x1, x2, p=p, compute_mode=DIRECT)
        assert got.dtype == x1.dtype and tuple(got.shape) == tuple(want.shape)
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), tol, tol)


@pytest.mark.parametrize("p", PS)
def test_nan_and_strided_inputs(device, p):
    a = np.array([[np.nan, 1.0, 2.0], [2.0, np.nan, 0.0], [1.0, 2.0, 3.0]], np.float32)
    b = np.array([[1.0, 1.0, 1.0], [0.0, 5.0, 2.0]], np.float32)
    want = torch.cdist(torch.tensor(a), torch.tensor(b), p=p, compute_mode=DIRECT)
    x1, x2 = _pair(a, b, "float32", device)
    got = clgrad.cdist(x1, x2, p=p, compute_mode=DIRECT)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), 1e-6, 1e-6)
    # transposed and stepped views
    big = np.arange(60, dtype=np.float32).reshape(6, 10) / 7
    t = torch.tensor(big)
    c = clgrad.tensor(big, device=device)
    want = torch.cdist(t.t()[::2], t[:, ::3].t(), p=p, compute_mode=DIRECT)
    got = clgrad.cdist(c.t()[::2], c[:, ::3].t(), p=p, compute_mode=DIRECT)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), 1e-5, 1e-5)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
def test_gradients(device, p):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 5, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    g = rng.standard_normal((2, 5, 3)).astype(np.float32)
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    torch.cdist(ta, tb, p=p, compute_mode=DIRECT).backward(torch.tensor(g))
    ca, cb = (clgrad.tensor(v, device=device, requires_grad=True) for v in (a, b))
    clgrad.cdist(ca, cb, p=p, compute_mode=DIRECT).backward(clgrad.tensor(g, device=device))
    np.testing.assert_allclose(ca.grad.cpu().numpy(), ta.grad.numpy(), 1e-4, 1e-5)
    np.testing.assert_allclose(cb.grad.cpu().numpy(), tb.grad.numpy(), 1e-4, 1e-5)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, float("inf")])
def test_pdist(device, p):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 6)).astype(np.float32)
    a[7] = a[3]  # a zero distance: no gradient through it
    t = torch.tensor(a, requires_grad=True)
    want = torch.pdist(t, p=p)
    c = clgrad.tensor(a, device=device, requires_grad=True)
    got = clgrad.pdist(c, p=p)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), 1e-5, 1e-5)
    if p:
        want.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(c.grad.cpu().numpy(), t.grad.numpy(), 1e-4, 1e-5)


def test_declined_path_agrees(cl_device, monkeypatch):
    """Where the backend declines (a work-item's loop past llvmpipe's limit), the broadcast
    differences are reduced: the same distances."""
    rng = np.random.default_rng(3)
    x1, x2 = _pair(rng.standard_normal((9, 50)), rng.standard_normal((7, 50)), "float32", cl_device)
    backend = x1.device.backend
    monkeypatch.setattr(x1.device.runtime, "loop_limit", 40)
    assert not backend.computes_distances(63, 50)
    for p in PS:
        got = clgrad.cdist(x1, x2, p=p, compute_mode=DIRECT)
        want = _distances(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)
        np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), 1e-5, 1e-5)
