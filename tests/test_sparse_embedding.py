"""Sparse embedding gradients against torch: ``F.embedding``/``nn.Embedding(sparse=True)`` and
``embedding_bag`` give the weight a sparse COO gradient (one uncoalesced entry per lookup,
padding lookups left out), autograd accumulates it (sparse + sparse sparse, with a dense one
dense), and ``SparseAdam``, ``SGD`` (with momentum too) and ``Adagrad`` train on it as torch's
do, the other optimizers refusing it with torch's errors. float32 only: every device has it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad

WEIGHT = np.random.RandomState(0).randn(7, 3).astype(np.float32)
HEAD = np.random.RandomState(1).randn(3).astype(np.float32)
BATCHES = [[1, 2, 1, 5], [0, 2, 6, 6], [3, 3, 1, 0]]


def _np(x):
    return np.asarray(x.detach().cpu().tolist(), dtype=np.float64)


def _leaf(lib, device):
    dev = {"device": device} if lib is clgrad else {}
    return lib.tensor(WEIGHT, requires_grad=True, **dev)


def _sparse_parts(grad):
    return _np(grad._indices()), _np(grad._values())


@pytest.mark.parametrize("padding_idx", [None, 0, -3])
def test_embedding_sparse_grad_structure(device, padding_idx):
    grads = []
    for lib in (torch, clgrad):
        w = _leaf(lib, device)
        idx = lib.tensor([[1, 0, 1], [4, 0, 2]])
        if lib is clgrad:
            idx = idx.to(device)
        out = lib.nn.functional.embedding(idx, w, padding_idx=padding_idx, sparse=True)
        out.pow(2).sum().backward()
        grads.append(w.grad)
    want, got = grads
    assert got.is_sparse and got.layout is clgrad.sparse_coo
    assert not got.is_coalesced() and got._nnz() == want._nnz()
    assert str(got.device) == str(clgrad.device(device))
    for a, b in zip(_sparse_parts(got), _sparse_parts(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(got.to_dense()), _np(want.to_dense()), rtol=1e-5, atol=1e-6)
    coalesced = got.coalesce()
    np.testing.assert_array_equal(_np(coalesced.indices()), _np(want.coalesce().indices()))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_grad(device, mode):
    grads = []
    for lib in (torch, clgrad):
        w = _leaf(lib, device)
        dev = {"device": device} if lib is clgrad else {}
        inp = lib.tensor([1, 2, 4, 5, 4, 3, 2, 0], **dev)
        offsets = lib.tensor([0, 3, 5], **dev)
        out = lib.nn.functional.embedding_bag(
            inp, w, offsets, mode=mode, sparse=True, padding_idx=2
        )
        out.pow(2).sum().backward()
        grads.append(w.grad)
    want, got = grads
    assert got.is_sparse and got._nnz() == want._nnz() == 6  # the two padding lookups left out
    for a, b in zip(_sparse_parts(got), _sparse_parts(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_scale_grad_by_freq_refuses_sparse():
    for lib in (torch, clgrad):
        w = _leaf(lib, "cpu")
        emb = lib.nn.functional.embedding
        out = emb(lib.tensor([1, 1]), w, scale_grad_by_freq=True, sparse=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            out.sum().backward()


def test_embedding_bag_max_refuses_sparse(device):
    w = _leaf(clgrad, device)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        clgrad.nn.functional.embedding_bag(
            clgrad.tensor([[1, 2]], device=device), w, mode="max", sparse=True
        )


def test_module_flag_repr_and_retain_graph(device):
    e = clgrad.nn.Embedding(5, 3, sparse=True, device=device)
    assert repr(e) == repr(torch.nn.Embedding(5, 3, sparse=True)) == "Embedding(5, 3, sparse=True)"
    out = e(clgrad.tensor([[1, 0, 1], [4, 0, 2]], device=device)).sum()
    out.backward(retain_graph=True)
    out.backward()
    assert e.weight.grad.is_sparse and e.weight.grad._nnz() == 12  # both passes' entries
    np.testing.assert_allclose(_np(e.weight.grad.to_dense())[:, 0], [4, 4, 2, 0, 2])
    bag = clgrad.nn.EmbeddingBag(5, 3, mode="sum", sparse=True, device=device)
    bag(clgrad.tensor([[1, 2], [2, 3]], device=device)).sum().backward()
    assert bag.weight.grad.is_sparse and bag.weight.grad._nnz() == 4


def test_sparse_and_dense_gradients_add_up(device):
    idx = [[1, 0, 1], [4, 0, 2]]
    layouts = {}
    for lib in (torch, clgrad):
        dev = {"device": device} if lib is clgrad else {}
        emb = lib.nn.functional.embedding
        w = _leaf(lib, device)
        ix = lib.tensor(idx, **dev)
        seen = []
        # in one backward: the engine's buffer adds them, in either order
        (emb(ix, w, sparse=True).sum() + (w * w).sum()).backward()
        seen.append((w.grad.is_sparse, _np(w.grad)))
        w.grad = None
        ((w * w).sum() + emb(ix, w, sparse=True).sum()).backward()
        seen.append((w.grad.is_sparse, _np(w.grad)))
        # across backwards: into the leaf's .grad, sparse first and dense first
        w.grad = None
        emb(ix, w, sparse=True).sum().backward()
        emb(ix, w, sparse=True).sum().backward()
        seen.append((w.grad.is_sparse, _np(w.grad.to_dense())))
        (w * 2).sum().backward()
        seen.append((w.grad.is_sparse, _np(w.grad)))
        w.grad = None
        (w * 2).sum().backward()
        emb(ix, w, sparse=True).sum().backward()
        seen.append((w.grad.is_sparse, _np(w.grad)))
        grad = lib.autograd.grad(emb(ix, w, sparse=True).sum(), w)[0]
        seen.append((grad.is_sparse, _np(grad.to_dense())))
        layouts[lib] = seen
    for (sparse_got, got), (sparse_want, want) in zip(layouts[clgrad], layouts[torch]):
        assert sparse_got == sparse_want
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_zero_grad_keeps_or_drops_sparse_grad(device):
    e = clgrad.nn.Embedding(6, 2, sparse=True, device=device)
    opt = clgrad.optim.SGD(e.parameters(), lr=0.1)
    e(clgrad.tensor([1, 2], device=device)).sum().backward()
    e.zero_grad(set_to_none=False)
    assert e.weight.grad.is_sparse and e.weight.grad._nnz() == 0
    e(clgrad.tensor([3], device=device)).sum().backward()
    assert e.weight.grad._nnz() == 1
    opt.zero_grad()
    assert e.weight.grad is None


def _train(lib, device, name, bag=False, steps=BATCHES, **kw):
    dev = {"device": device} if lib is clgrad else {}
    if bag:
        e = lib.nn.EmbeddingBag(7, 3, mode="mean", sparse=True, **dev)
    else:
        e = lib.nn.Embedding(7, 3, sparse=True, padding_idx=2, **dev)
    with lib.no_grad():
        e.weight.copy_(lib.tensor(WEIGHT, **dev))
    head = lib.tensor(HEAD, **dev)
    opt = getattr(lib.optim, name)(e.parameters(), lr=0.1, **kw)
    for batch in steps:
        opt.zero_grad()
        x = lib.tensor(batch, **dev)
        out = e(x.view(2, 2)) if bag else e(x)
        loss = ((out * head).sum(-1) - 1).pow(2).mean()
        loss.backward()
        opt.step()
    return e.weight


OPTIMIZERS = [
    ("SparseAdam", {}),
    ("SparseAdam", {"betas": (0.8, 0.9), "maximize": True}),
    ("SGD", {}),
    ("SGD", {"momentum": 0.9}),
    ("SGD", {"momentum": 0.5, "dampening": 0.3, "nesterov": False, "maximize": True}),
    ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.1, "initial_accumulator_value": 0.2, "maximize": True}),
]


@pytest.mark.parametrize("name, kw", OPTIMIZERS, ids=[f"{n}-{k}" for n, k in OPTIMIZERS])
@pytest.mark.parametrize("bag", [False, True])
def test_training_matches_torch(device, name, kw, bag):
    got = _train(clgrad, device, name, bag, **kw)
    want = _train(torch, device, name, bag, **kw)
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-5)
    # the rows no batch looked up are untouched
    if not bag:
        np.testing.assert_array_equal(_np(got)[2], WEIGHT[2])


@pytest.mark.parametrize(
    "name, kw, message",
    [
        ("Adam", {}, "Adam does not support sparse gradients, please consider SparseAdam"),
        ("AdamW", {}, "Adam does not support sparse gradients, please consider SparseAdam"),
        ("RMSprop", {}, "RMSprop does not support sparse gradients"),
        ("Adadelta", {}, "Adadelta does not support sparse gradients"),
        ("Adamax", {}, "Adamax does not support sparse gradients"),
        ("NAdam", {}, "NAdam does not support sparse gradients"),
        ("RAdam", {}, "RAdam does not support sparse gradients"),
        ("ASGD", {}, "ASGD does not support sparse gradients"),
        ("Rprop", {}, "Rprop does not support sparse gradients"),
        ("Adafactor", {}, "Adafactor does not support sparse gradients"),
        ("Muon", {}, "Muon does not support sparse gradients"),
        ("Adagrad", {"weight_decay": 0.1}, "weight_decay option is not compatible with sparse"),
        ("SGD", {"weight_decay": 0.1}, r"add\(sparse, dense\) is not supported"),
    ],
)
def test_optimizers_refusing_sparse_grads(name, kw, message):
    for lib in (torch, clgrad):
        with pytest.raises(RuntimeError, match=message):
            _train(lib, "cpu", name, steps=BATCHES[:1], **kw)


def test_sparse_adam_errors():
    for lib in (torch, clgrad):
        w = lib.nn.Parameter(lib.ones(3))
        w.sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            lib.optim.SparseAdam([w]).step()
        for kw, message in [
            ({"lr": -1.0}, "Invalid learning rate: -1.0"),
            ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
            ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
            ({"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
        ]:
            with pytest.raises(ValueError, match=message):
                lib.optim.SparseAdam([w], **kw)
        with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 1\]\]"):
            lib.optim.SparseAdam([w, lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))])
        sparse = lib.sparse_coo_tensor([[0]], [1.0], (2,))
        with pytest.raises(ValueError, match=r"Sparse params at indices \[\[0, 0\]\]"):
            lib.optim.SparseAdam([sparse])
    opt = clgrad.optim.SparseAdam(clgrad.nn.Embedding(2, 2).parameters())
    assert opt.defaults == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "maximize": False}


def test_sparse_adam_state_and_lbfgs():
    got = _train(clgrad, "cpu", "SparseAdam", steps=BATCHES[:2])
    want = _train(torch, "cpu", "SparseAdam", steps=BATCHES[:2])
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-6)
    e = clgrad.nn.Embedding(4, 2, sparse=True)
    opt = clgrad.optim.SparseAdam(e.parameters())
    e(clgrad.tensor([1])).sum().backward()
    opt.step()
    state = opt.state[e.weight]
    assert state["step"] == 1 and sorted(state) == ["exp_avg", "exp_avg_sq", "step"]
    # LBFGS flattens a sparse gradient dense, as torch's
    for lib in (torch, clgrad):
        e = lib.nn.Embedding(4, 2, sparse=True)
        lbfgs = lib.optim.LBFGS(e.parameters(), max_iter=2)

        def closure(e=e, lbfgs=lbfgs, lib=lib):
            lbfgs.zero_grad()
            loss = e(lib.tensor([1, 3])).pow(2).sum()
            loss.backward()
            return loss

        lbfgs.step(closure)


def test_clip_grad_norm_refuses_sparse_grad():
    for lib in (torch, clgrad):
        e = lib.nn.Embedding(4, 2, sparse=True)
        e(lib.tensor([1, 3])).sum().backward()
        with pytest.raises(NotImplementedError):
            lib.nn.utils.clip_grad_norm_(e.parameters(), 1.0)


def test_sgd_sparse_momentum_buffer_stays_bounded(device):
    # the buffer appended every step's entries (60 after 20 steps of 3 lookups); it holds one
    # per row now, and the parameter follows torch's
    for lib, kw in ((torch, {}), (clgrad, {"device": device})):
        w = lib.nn.Parameter(lib.ones(4, 3, **kw))
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        for _ in range(20):
            opt.zero_grad()
            rows = lib.tensor([1, 1, 2], **kw)
            lib.nn.functional.embedding(rows, w, sparse=True).sum().backward()
            opt.step()
        if lib is torch:
            want = w.detach().numpy()
        else:
            assert opt.state[w]["momentum_buffer"]._nnz() <= 3
            np.testing.assert_allclose(w.detach().cpu().numpy(), want, rtol=1e-5)


def test_fused_optimizers_refuse_and_grad_setter_takes_sparse_gradients(device):
    # fused=True has no sparse kernel: torch's RuntimeErrors; and `.grad = ` takes a sparse
    # gradient (its own, or a new sparse tensor), refusing one of another shape
    for lib, kw in ((torch, {}), (clgrad, {"device": device})):
        for kind, message in (("SGD", "_fused_sgd"), ("Adagrad", "does not support sparse")):
            w = lib.nn.Parameter(lib.ones(4, 3, **kw))
            opt = getattr(lib.optim, kind)([w], lr=0.1, fused=True)
            lib.nn.functional.embedding(lib.tensor([1], **kw), w, sparse=True).sum().backward()
            with pytest.raises(RuntimeError, match=message):
                opt.step()
            w.grad = w.grad
            assert w.grad.is_sparse
            with pytest.raises(RuntimeError, match="the same size"):
                w.grad = lib.sparse_coo_tensor(
                    lib.tensor([[0]], **kw), lib.ones(1, 3, **kw), (5, 3)
                )
