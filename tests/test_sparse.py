"""Sparse COO tensors against torch.sparse: construction (size inferred or given, dense
dims, the legacy torch.sparse.FloatTensor), to_dense, coalesce, transpose, sums, scalar
arithmetic, and the sparse-dense product of graph networks with its gradients; indices outside
the size raise instead of reaching a kernel."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad

INDICES = [[0, 1, 1, 3, 1], [2, 0, 2, 1, 2]]  # (1, 2) twice: uncoalesced
VALUES = [3.0, 4.0, 5.0, -1.0, 0.5]


def _np(x):
    if isinstance(x, (torch.Tensor, clgrad.Tensor)):
        return np.asarray(x.detach().cpu().tolist(), dtype=np.float64)
    return x


def _make(lib, device, requires_grad=False):
    dev = {"device": device} if lib is clgrad else {}
    values = lib.tensor(VALUES, requires_grad=requires_grad, **dev)
    return lib.sparse_coo_tensor(lib.tensor(INDICES, **dev), values, (4, 3)), values


def test_construction_and_dense(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        s, _ = _make(lib, dev)
        assert s.is_sparse and str(s.layout).endswith("sparse_coo")
        assert tuple(s.shape) == (4, 3) and s._nnz() == 5 and s.sparse_dim() == 2
        assert s.dense_dim() == 0 and not s.is_coalesced()
    want = _make(torch, "cpu")[0].to_dense()
    got = _make(clgrad, device)[0].to_dense()
    np.testing.assert_allclose(_np(got), _np(want))
    assert str(got.device) == device
    # the size inferred from the indices, and dense dims
    i = [[0, 2]]
    assert tuple(clgrad.sparse_coo_tensor(i, [1.0, 2.0], device=device).shape) == (3,)
    values = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = clgrad.sparse_coo_tensor(i, clgrad.tensor(values, device=device)).to_dense()
    want = torch.sparse_coo_tensor(i, torch.tensor(values)).to_dense()
    np.testing.assert_allclose(_np(got), _np(want))
    legacy = clgrad.sparse.FloatTensor(clgrad.tensor(i), clgrad.tensor([1.0, 2.0]), (3,))
    assert legacy.to_dense().tolist() == [1.0, 0.0, 2.0]


def test_coalesce_transpose_sum(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        s, _ = _make(lib, dev)
        c = s.coalesce()
        results.append(
            [
                _np(c.indices()),
                _np(c.values()),
                _np(s.t().to_dense()),
                _np(lib.sparse.sum(s)),
                _np(lib.sparse.sum(s, 0).to_dense()),
                _np(lib.sparse.sum(s, 1).to_dense()),
                _np((s * 2).to_dense()),
                _np((s + s).to_dense()),
                _np((-s / 4).to_dense()),
            ]
        )
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want)


def test_uncoalesced_accessors_refuse(device):
    s, _ = _make(clgrad, device)
    with pytest.raises(RuntimeError, match="coalesce"):
        s.indices()
    with pytest.raises(RuntimeError, match="coalesce"):
        s.values()


@pytest.mark.parametrize("product", ["sparse.mm", "spmm", "matmul_operator", "method"])
def test_sparse_dense_product_and_gradients(device, product):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 2)).astype(np.float32)
    weight = rng.standard_normal((4, 2)).astype(np.float32)
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        s, values = _make(lib, dev, requires_grad=True)
        kw = {"device": dev} if lib is clgrad else {}
        d = lib.tensor(dense, requires_grad=True, **kw)
        if product == "sparse.mm":
            y = lib.sparse.mm(s, d)
        elif product == "spmm":
            y = lib.spmm(s, d)
        elif product == "matmul_operator":
            y = s @ d
        else:
            y = s.mm(d)
        (y * lib.tensor(weight, **kw)).sum().backward()
        results.append([_np(y), _np(values.grad), _np(d.grad)])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_graph_convolution_trains_as_torch(device):
    # Kipf & Welling's GCN layer as pygcn writes it: support = x @ W, out = spmm(adj, support)
    rng = np.random.default_rng(1)
    n, f, h = 6, 4, 3
    edges = np.array([[0, 1, 2, 3, 4, 5, 0, 2], [1, 2, 3, 4, 5, 0, 0, 2]])
    weights = rng.uniform(0.1, 1.0, edges.shape[1]).astype(np.float32)
    x = rng.standard_normal((n, f)).astype(np.float32)
    w0 = rng.standard_normal((f, h)).astype(np.float32)
    out = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        kw = {"device": dev} if lib is clgrad else {}
        adj = lib.sparse_coo_tensor(lib.tensor(edges, **kw), lib.tensor(weights, **kw), (n, n))
        w = lib.nn.Parameter(lib.tensor(w0, **kw))
        opt = lib.optim.SGD([w], lr=0.1)
        feats = lib.tensor(x, **kw)
        for _ in range(3):
            opt.zero_grad()
            hidden = lib.relu(lib.spmm(adj, feats @ w))
            loss = lib.nn.functional.log_softmax(hidden, 1)[:, 0].mean().neg()
            loss.backward()
            opt.step()
        out.append(_np(w))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_bad_input_raises(device):
    i = clgrad.tensor([[0, 5]], device=device)
    with pytest.raises(RuntimeError, match="size is inconsistent"):
        clgrad.sparse_coo_tensor(i, clgrad.ones(2, device=device), (3,))
    with pytest.raises(RuntimeError, match="negative index"):
        clgrad.sparse_coo_tensor([[-1, 0]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="same nnz"):
        clgrad.sparse_coo_tensor([[0, 1]], [1.0], (3,))
    s, _ = _make(clgrad, device)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        clgrad.sparse.mm(s, clgrad.ones(4, 2, device=device))


def test_torch_mm_matmul_and_to_sparse(device):
    # torch.mm / torch.matmul take a sparse operand on either side; Tensor.to_sparse coalesces
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((3, 2)).astype(np.float32)
    left = rng.standard_normal((2, 4)).astype(np.float32)
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        kw = {"device": dev} if lib is clgrad else {}
        s, _ = _make(lib, dev)
        d = lib.tensor(dense, **kw)
        matrix = lib.tensor([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [-2.0, 0.0, 3.0]], **kw)
        sp = matrix.to_sparse()
        results.append(
            [
                _np(lib.mm(s, d)),
                _np(lib.matmul(s, d)),
                _np(lib.tensor(left, **kw) @ s),
                _np(sp.indices()),
                _np(sp.values()),
                sp.is_coalesced(),
            ]
        )
    for want, got in zip(*results):
        if isinstance(want, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            assert got == want
