"""The backward engine against torch: a node's own hooks (grad_fn.register_hook and
register_prehook, on op nodes and on a leaf's AccumulateGrad), and the gradients of many views
of one tensor, which the engine adds into one buffer of its own in place."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad


def _both(fn, device):
    """fn(lib, device) under torch (cpu) and clgrad (``device``), as nested lists."""

    def plain(x):
        if isinstance(x, (torch.Tensor, clgrad.Tensor)):
            return np.asarray(x.detach().cpu().tolist(), dtype=np.float64)
        if isinstance(x, (tuple, list)):
            return [plain(v) for v in x]
        return x

    return plain(fn(torch, "cpu")), plain(fn(clgrad, device))


def _agree(fn, device, rtol=1e-5, atol=1e-6):
    want, got = _both(fn, device)

    def check(w, g):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        elif isinstance(w, list):
            assert len(w) == len(g)
            for a, b in zip(w, g):
                check(a, b)
        else:
            assert g == w

    check(want, got)


def test_node_post_and_pre_hooks(device):
    def run(lib, dev):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        w = lib.tensor([1.0, 3.0], requires_grad=True, device=dev)
        y = x * w
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0])))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0], gi[1], go[0])))
        y.sum().backward()
        # replacing: a post hook's input gradients, a pre hook's output gradients
        a = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        b = a * w
        b.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, gi[1]))
        b.sum().backward()
        c = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        d = c * 3
        d.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        d.sum().backward()
        # a removed hook is gone
        e = lib.tensor([1.0], requires_grad=True, device=dev)
        f = e * 2
        f.grad_fn.register_hook(lambda gi, go: log.append("removed")).remove()
        f.sum().backward()
        return [[*entry] for entry in log], x.grad, a.grad, c.grad

    _agree(run, device)


def test_leaf_node_hooks_run_after_the_tensor_hooks(device):
    def run(lib, dev):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append(("post", len(gi), go[0])))
        acc.register_prehook(lambda go: log.append(("pre", go[0])))
        x.register_hook(lambda g: log.append(("tensor", g)))
        y.sum().backward()
        return [[*entry] for entry in log], x.grad

    _agree(run, device)


def test_a_hook_returning_the_wrong_count_raises(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        y = x * 3
        y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
        with pytest.raises(RuntimeError, match="incorrect number of values"):
            y.sum().backward()


def _views(lib, dev):
    """Many views of one tensor feeding one loss, with other uses of it too."""
    base = lib.arange(24.0, device=dev).reshape(4, 6).requires_grad_(True)
    x = base * 1.5  # a non-leaf whose gradient the views fill
    x.retain_grad()
    i, f, g, o = x.chunk(4, -1)[:3] + (x[:, 4:],)
    parts = [a.sigmoid() * b.tanh() + c for a, b, c in ((i, f, g), (f, g, i))]
    steps = sum((x[t] * (t + 1)).square().sum() for t in range(4))
    rows = sum(r.sum() for r in x.unbind(0)) + x.narrow(1, 2, 3).exp().sum() * 1e-6
    loss = sum(p.sum() for p in parts) + steps + rows + (o * o).sum() + x.sum()
    loss.backward()
    return base.grad, x.grad


def test_views_of_one_tensor(device):
    _agree(_views, device, rtol=1e-4)


def test_views_with_hooks_and_captured_gradients(device):
    def run(lib, dev):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, device=dev)
        y = x * 2
        rows = y.unbind(0)
        rows[0].register_hook(lambda g: g * 100)  # a view's own hook still runs
        loss = (rows[0] * rows[1]).sum() + y[:, 0].sum()
        (gy,) = lib.autograd.grad(loss, [y], retain_graph=True)  # a non-leaf input
        loss.backward()
        return gy, x.grad

    _agree(run, device)


def test_views_under_create_graph(device):
    def run(lib, dev):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True, device=dev)
        y = x**3
        (g,) = lib.autograd.grad(y[0] + y[1:].sum() * 2, [x], create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), [x])
        return g, gg

    _agree(run, device)


def test_lstm_gradients(device):
    def run(lib, dev):
        lib.manual_seed(0)
        rng = np.random.default_rng(0)
        lstm = lib.nn.LSTM(3, 5, num_layers=2, batch_first=True)
        with lib.no_grad():
            for p in lstm.parameters():
                p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
        lstm.to(dev)
        x = lib.tensor(rng.standard_normal((2, 7, 3)).astype(np.float32), device=dev)
        x.requires_grad_(True)
        out, (h, c) = lstm(x)
        (out.square().sum() + h.sum() + c.sum()).backward()
        return x.grad, [p.grad for p in lstm.parameters()]

    _agree(run, device, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "kind, options",
    [
        ("GRU", {}),
        ("GRU", {"bidirectional": True, "num_layers": 2}),
        ("LSTM", {"bidirectional": True}),
        ("LSTM", {"proj_size": 2}),
    ],
)
def test_recurrent_layers_fused_steps(device, kind, options):
    # LSTM and GRU steps are one node each (LSTMCellStep, GRUCellStep): values and gradients
    # of the inputs, the initial state and every weight as torch's, a loss of h alone too
    def run(lib, dev):
        rng = np.random.default_rng(1)
        layer = getattr(lib.nn, kind)(3, 4, batch_first=True, **options)
        with lib.no_grad():
            for p in layer.parameters():
                p.copy_(lib.tensor(rng.uniform(-0.6, 0.6, tuple(p.shape)).astype(np.float32)))
        layer.to(dev)
        x = lib.tensor(rng.standard_normal((2, 5, 3)).astype(np.float32), device=dev)
        x.requires_grad_(True)
        out, state = layer(x)
        h = state[0] if kind == "LSTM" else state
        (out.square().sum() + h.sum()).backward()
        return out, h, x.grad, [p.grad for p in layer.parameters()]

    _agree(run, device, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_cells_twice_differentiable(kind):
    # create_graph: the fused step's backward recomputes its gates with their graph
    def run(lib, dev):
        rng = np.random.default_rng(2)
        cell = getattr(lib.nn, kind)(2, 3).double()
        with lib.no_grad():
            for p in cell.parameters():
                p.copy_(lib.tensor(rng.uniform(-0.7, 0.7, tuple(p.shape))))
        x = lib.tensor(rng.standard_normal((2, 2)), requires_grad=True)
        state = cell(x)
        h = state[0] + state[1] if kind == "LSTMCell" else state
        (g,) = lib.autograd.grad(h.square().sum(), [x], create_graph=True)
        (gg,) = lib.autograd.grad(g.square().sum(), [x])
        return g, gg

    _agree(run, "cpu", rtol=1e-9, atol=1e-12)


def test_mark_dirty_keeps_the_tensor_and_rebases_its_history(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):

        class Inc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        a = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        x = a.clone()
        y = Inc.apply(x)
        assert y is x and x.grad_fn is not None and x._version == 2
        (y * 3).sum().backward()
        results.append(a.grad.tolist())
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            Inc.apply(lib.tensor([1.0], requires_grad=True, device=dev))
    assert results[0] == results[1]


def test_a_saved_tensor_changed_in_place_is_named_as_torch_names_it(device):
    messages = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor([1.0, 2.0], requires_grad=True, device=dev)
        y = x.sigmoid()
        y.mul_(2)  # sigmoid's saved output
        w = lib.ones(2, device=dev)
        z = x * w
        w.add_(1)  # a saved input without history
        for loss in (y.sum(), z.sum()):
            with pytest.raises(RuntimeError) as caught:
                loss.backward()
            # (on an OpenCL device the type is torch.cuda.FloatTensor, as on a CUDA one)
            messages.append(str(caught.value).replace("clgrad.", "torch.").replace(".cuda.", "."))
    assert messages[:2] == messages[2:]
    assert "which is output 0 of Sigmoid, is at version 1" in messages[0]
