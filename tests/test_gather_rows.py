"""One tensor index gathers and adds whole rows (``gather_rows`` / ``add_rows``): ``x[idx]``,
``index_select``, ``embedding`` and their gradients, ``index_put_(accumulate=True)``, on every
dtype, with repeated and negative indices, index tensors of any shape, non-contiguous and
expanded operands, both kernel orientations (long rows and short ones), and the GPU path's
atomic runs forced on a CPU device; all against PyTorch."""

import numpy as np
import pytest
import torch
from conftest import assert_close, supports

import clgrad
from clgrad.backend.opencl import backend as opencl_backend

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"]


def _pair(shape, dtype, device, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 4
    t = torch.tensor(a).to(getattr(torch, dtype))
    return clgrad.tensor(t.numpy() if dtype != "bfloat16" else t.float().numpy(), device=device).to(
        getattr(clgrad, dtype)
    ), t


def _close(actual, expected, summed=False):
    """assert_close through float64 on both sides (NumPy has no bfloat16). ``summed``: values
    that added repeated indices' rows, which a GPU adds in any order; in bfloat16 that order
    moves a sum of these magnitudes (below 16) by up to one unit in the last place, 1/16."""
    if expected.dtype == torch.bfloat16:
        assert actual.dtype == clgrad.bfloat16
        atol = 1 / 16 if summed else 1e-2
        assert_close(actual.float(), expected.detach().float(), rtol=1e-2, atol=atol)
    else:
        assert_close(actual, expected.detach())


def _skip_float64(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip("no float64 on this device")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, d",
    [
        ((7, 5), 0),  # short rows: the kernel walks the indices
        ((7, 300), 0),  # long rows: it walks each row
        ((3, 7, 4), 1),  # a middle dim
        ((3, 4, 7), 2),  # the last dim
    ],
)
def test_getitem_and_accumulating_put(device, dtype, shape, d):
    _skip_float64(device, dtype)
    x, tx = _pair(shape, dtype, device)
    n = shape[d]
    idx_np = np.array([[0, n - 1, 2], [2, -1, 0]])  # repeats, a negative, a 2-d index
    key = (slice(None),) * d + (clgrad.tensor(idx_np, device=device),)
    tkey = (slice(None),) * d + (torch.tensor(idx_np),)
    _close(x[key], tx[tkey])
    vals, tvals = _pair(tuple(tx[tkey].shape), dtype, device, seed=1)
    if d == 0:  # (PyTorch's index_put_ takes tensors only: past dim 0, through a gradient)
        x.index_put_(key, vals, accumulate=True)
        tx.index_put_(tkey, tvals, accumulate=True)
        _close(x, tx, summed=True)
    if x.dtype.is_floating_point:
        x.requires_grad_(), tx.requires_grad_()
        x[key].backward(vals)
        tx[tkey].backward(tvals)
        _close(x.grad, tx.grad, summed=True)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gradients_of_gathers(device, dtype):
    x, tx = _pair((6, 5, 70), dtype, device)
    x.requires_grad_(), tx.requires_grad_()
    idx, tidx = clgrad.tensor([4, 0, 4, 1], device=device), torch.tensor([4, 0, 4, 1])
    g, tg = _pair((6, 4, 70), dtype, device, seed=2)
    clgrad.index_select(x, 1, idx).backward(g)
    torch.index_select(tx, 1, tidx).backward(tg)
    _close(x.grad, tx.grad)
    x.grad = tx.grad = None
    (x[:, idx] * 2).sum().backward()  # an expanded gradient, read in place
    (tx[:, tidx] * 2).sum().backward()
    _close(x.grad, tx.grad)


@pytest.mark.parametrize("padding_idx", [None, 3])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_forward_and_backward(device, padding_idx, scale):
    clgrad.manual_seed(0)
    w = np.random.default_rng(0).standard_normal((11, 40)).astype(np.float32)
    idx_np = np.random.default_rng(1).integers(0, 11, (5, 9))
    cw = clgrad.tensor(w, device=device, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ci, ti = clgrad.tensor(idx_np, device=device), torch.tensor(idx_np)
    out = clgrad.nn.functional.embedding(ci, cw, padding_idx, scale_grad_by_freq=scale)
    tout = torch.nn.functional.embedding(ti, tw, padding_idx, scale_grad_by_freq=scale)
    g = np.random.default_rng(2).standard_normal(tuple(tout.shape)).astype(np.float32)
    out.backward(clgrad.tensor(g, device=device))
    tout.backward(torch.tensor(g))
    _close(out, tout)
    _close(cw.grad, tw.grad)


def test_embedding_of_a_transposed_weight(device):
    w = np.random.default_rng(0).standard_normal((30, 8)).astype(np.float32)
    cw = clgrad.tensor(w.T.copy(), device=device).t().requires_grad_()
    tw = torch.tensor(w, requires_grad=True)
    idx = [[3, 29, 3], [0, 0, 7]]
    out = clgrad.nn.functional.embedding(clgrad.tensor(idx, device=device), cw)
    tout = torch.nn.functional.embedding(torch.tensor(idx), tw)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    _close(out, tout)
    _close(cw.grad, tw.grad)


def _accumulating_put_matches_torch(device, rows, width, n, seed):
    x, tx = _pair((rows, width), "float32", device)
    idx_np = np.random.default_rng(seed).integers(0, rows, n)
    vals, tvals = _pair((n, width), "float32", device, seed=seed + 1)
    x.index_put_((clgrad.tensor(idx_np, device=device),), vals, accumulate=True)
    tx.index_put_((torch.tensor(idx_np),), tvals, accumulate=True)
    assert_close(x, tx, rtol=1e-5, atol=1e-4)


def test_gpu_path_atomic_runs(cl_device, monkeypatch):
    """The GPU's add_rows (one item per column, J cut into runs added atomically) on a CPU
    device: the same sums."""
    monkeypatch.setattr(opencl_backend, "ADD_ROWS_ITEMS", 1 << 20)
    monkeypatch.setattr(clgrad.device(cl_device).backend.rt, "is_gpu", True)
    _accumulating_put_matches_torch(cl_device, 9, 33, 500, seed=3)


def test_loop_limited_launches(cl_device, monkeypatch):
    """Rows split across launches where a work-item's loops are bounded (llvmpipe)."""
    monkeypatch.setattr(clgrad.device(cl_device).backend.rt, "loop_limit", 300)
    _accumulating_put_matches_torch(cl_device, 5, 130, 40, seed=5)


def test_a_0d_index(device):
    """A 0-d index gathers one row with no index dim (and adds its gradient there)."""
    w = np.random.default_rng(0).standard_normal((6, 50)).astype(np.float32)
    cw, tw = (
        clgrad.tensor(w, device=device, requires_grad=True),
        torch.tensor(w, requires_grad=True),
    )
    for lookup in (
        lambda lib, w, i: w[i],
        lambda lib, w, i: w[:, i],
        lambda lib, w, i: lib.nn.functional.embedding(i, w),
    ):
        out = lookup(clgrad, cw, clgrad.tensor(4, device=device))
        tout = lookup(torch, tw, torch.tensor(4))
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        _close(out, tout)
        _close(cw.grad, tw.grad)


def test_a_strided_index_and_values(device):
    """An index that is a strided view (a batch without its last column) and values of any
    layout: the flattened index is a temporary the launch must still see."""
    rng = np.random.default_rng(7)
    batch = rng.integers(0, 12, (3, 8))
    w = rng.standard_normal((12, 6)).astype(np.float32)
    cw, tw = (
        clgrad.tensor(w, device=device, requires_grad=True),
        torch.tensor(w, requires_grad=True),
    )
    out = clgrad.nn.functional.embedding(clgrad.tensor(batch, device=device)[:, :-1], cw, 0)
    tout = torch.nn.functional.embedding(torch.tensor(batch)[:, :-1], tw, 0)
    g = rng.standard_normal((6, 7, 3)).astype(np.float32)
    out.backward(clgrad.tensor(g, device=device).permute(2, 1, 0))
    tout.backward(torch.tensor(g).permute(2, 1, 0))
    _close(out, tout)
    _close(cw.grad, tw.grad)
    vals = rng.standard_normal((3, 7, 6)).astype(np.float32)
    x = clgrad.zeros(12, 6, device=device)
    x.index_put_((clgrad.tensor(batch, device=device)[:, :-1],), clgrad.tensor(vals, device=device),
                 accumulate=True)  # fmt: skip
    tx = torch.zeros(12, 6).index_put_((torch.tensor(batch)[:, :-1],), torch.tensor(vals), True)
    _close(x, tx)
