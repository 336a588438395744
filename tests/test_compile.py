"""clgrad.compile: a captured step replays what eager execution computes, recaptures when a
guard changes, and falls back to eager (or raises) where a replay would diverge."""

import gc
import math
import warnings

import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F
from clgrad.compile import CompiledFunction


def digits(steps, batch, seed=0):
    """``steps`` batches of scikit-learn's digits as (N, 1, 8, 8) float32 images and labels."""
    load_digits = pytest.importorskip("sklearn.datasets").load_digits
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    picks = [rng.choice(len(y), batch, replace=False) for _ in range(steps)]
    return [(x[i], y[i]) for i in picks]


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(64, 10),
    )


OPTIMIZERS = {
    "sgd-momentum": lambda p: clgrad.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: clgrad.optim.Adam(p, lr=1e-2),
    "rmsprop": lambda p: clgrad.optim.RMSprop(p, lr=1e-2, momentum=0.5),
}


def train(device, make, optimizer, batches, compiled, check=False):
    """Losses and final parameters of one step per batch (same seed: same init, same dropout)."""
    clgrad.manual_seed(0)
    model = make().to(device)
    opt = OPTIMIZERS[optimizer](model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = clgrad.compile(step, check=check) if compiled else step
    t = lambda a: clgrad.tensor(a, device=device)  # noqa: E731
    losses = [fn(t(x), t(y)) for x, y in batches]
    params = [p.detach().cpu().numpy() for p in model.parameters()]
    params.append(np.array([float(s.get("step", 0)) for s in opt.state.values()]))  # counted
    grads = [p.grad.cpu().numpy() for p in model.parameters()]
    return [float(loss.item()) for loss in losses], params, grads, fn


@pytest.mark.parametrize("make", [mlp, cnn])
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_training_step_replays_eager(device, make, optimizer):
    batches = digits(6, 16)
    losses, params, grads, fn = train(device, make, optimizer, batches, True)
    want_losses, want_params, want_grads, _ = train(device, make, optimizer, batches, False)
    # the same kernels in the same order with the same arguments: the same bits
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6, atol=1e-7)
    for got, want in zip(params + grads, want_params + want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert len(set(losses)) == len(losses)  # the model learns: every step's loss is new
    if device == "cpu":  # NumPy on the host: eager throughout
        assert fn.counts == {"eager": 6, "capture": 0, "replay": 0}
    else:
        assert fn.counts == {"eager": 1, "capture": 1, "replay": 4}


def test_check_mode_passes_a_faithful_step(cl_device):
    batches = digits(5, 8)
    losses, *_ = train(cl_device, cnn, "adam", batches, True, check=True)
    want, *_ = train(cl_device, cnn, "adam", batches, False)
    np.testing.assert_allclose(losses, want, rtol=1e-6)


def polynomial_step(device, compiled):
    """The polynomial fit of "Learning PyTorch with Examples": the step and its 4 weights."""
    x = clgrad.linspace(-math.pi, math.pi, 2000, device=device)
    y = clgrad.sin(x)
    a, b, c, d = (
        clgrad.tensor(v, device=device, requires_grad=True) for v in (0.1, -0.2, 0.3, 0.05)
    )

    def step():
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with clgrad.no_grad():
            for w in (a, b, c, d):
                w -= 1e-6 * w.grad
                w.grad = None
        return loss

    return (clgrad.compile(step) if compiled else step), (a, b, c, d)


def test_polynomial_fit_replays_eager(device):
    fn, weights = polynomial_step(device, True)
    ref, want = polynomial_step(device, False)
    losses = [fn() for _ in range(8)]  # each kept: a replay returns a fresh tensor
    want_losses = [ref().item() for _ in range(8)]
    np.testing.assert_allclose([v.item() for v in losses], want_losses, rtol=1e-6)
    assert losses[-1].item() < losses[0].item()
    for w, v in zip(weights, want):
        assert w.grad is None
        np.testing.assert_allclose(w.item(), v.item(), rtol=1e-6)


def test_guards_recapture(cl_device):
    clgrad.manual_seed(0)
    model = mlp().to(cl_device)
    opt = clgrad.optim.SGD(model.parameters(), lr=0.1)

    @clgrad.compile
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def run(batch):
        x, y = digits(1, batch)[0]
        return step(clgrad.tensor(x, device=cl_device), clgrad.tensor(y, device=cl_device))

    for _ in range(3):
        run(8)
    assert step.counts == {"eager": 1, "capture": 1, "replay": 1}
    run(4)  # a new batch size: a new signature (warm-up, then capture)
    run(4)
    assert step.counts["capture"] == 2
    run(8)  # the first signature's graph is kept
    assert step.counts["replay"] == 2
    opt.param_groups[0]["lr"] = 0.05  # as a scheduler sets it
    run(8)
    assert step.counts["capture"] == 3
    before = [p.detach().cpu().numpy() for p in model.parameters()]
    run(8)
    assert step.counts["replay"] == 3
    model.eval()
    run(8)
    assert step.counts["capture"] == 4
    model.train()
    model[1].weight.requires_grad_(False)
    run(8)
    assert step.counts["capture"] == 5
    assert [np.array_equal(b, p.detach().cpu().numpy()) for b, p in zip(before, model.parameters())]


def test_grad_mode_and_module(cl_device):
    clgrad.manual_seed(0)
    model = mlp().to(cl_device)
    compiled = clgrad.compile(model)  # torch's spelling: the model runs unchanged
    assert [n for n, _ in compiled.named_parameters()][0] == "_orig_mod.1.weight"
    assert getattr(compiled, "1") is model[1]  # the module's attributes go through
    x = clgrad.tensor(digits(1, 4)[0][0], device=cl_device)
    with clgrad.no_grad():
        outs = [compiled(x) for _ in range(4)]
    assert compiled._compiled.counts == {"eager": 1, "capture": 1, "replay": 2}
    with clgrad.no_grad():
        want = model(x).cpu().numpy()
    for out in outs:
        np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-6)
    # with grad on, the output needs its backward outside: eager, and backward works
    for _ in range(3):
        out = compiled(x)
        out.sum().backward()
    assert out.requires_grad and model[1].weight.grad is not None
    assert compiled._compiled.counts["replay"] == 2


def test_host_read_falls_back(cl_device):
    w = clgrad.ones(3, device=cl_device)

    def step(x):
        w.add_(x)
        return clgrad.tensor(w.sum().item() * 2.0, device=cl_device)  # reads the device

    fn = clgrad.compile(step)
    with pytest.warns(UserWarning, match="runs eagerly: a read of device memory"):
        outs = [fn(clgrad.ones(3, device=cl_device)).item() for _ in range(4)]
    assert outs == [12.0, 18.0, 24.0, 30.0]
    assert fn.counts == {"eager": 3, "capture": 1, "replay": 0}
    strict = clgrad.compile(step, fullgraph=True)
    strict(clgrad.ones(3, device=cl_device))
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        strict(clgrad.ones(3, device=cl_device))


def test_data_dependent_branch_falls_back(cl_device):
    """A branch on a tensor's value reads it: eager, and both branches are taken right."""

    def step(x):
        return x * 2 if x.sum() > 0 else x - 1

    fn = clgrad.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in (1.0, 1.0, -1.0, 1.0, -1.0):
            got = fn(clgrad.full((2,), v, device=cl_device))
            np.testing.assert_array_equal(got.cpu().numpy(), step(clgrad.full((2,), v)).numpy())


def test_check_mode_from_the_environment(monkeypatch):
    monkeypatch.setenv("CLGRAD_COMPILE_CHECK", "1")
    assert clgrad.compile(lambda x: x).check
    monkeypatch.setenv("CLGRAD_COMPILE_CHECK", "0")
    assert not clgrad.compile(lambda x: x).check


def test_check_mode_catches_divergence(cl_device):
    """A Python counter baked into a kernel argument: invisible to the guards (documented),
    caught by check mode."""
    calls = [0]

    def step(x):
        calls[0] += 1
        return x * calls[0]

    x = clgrad.ones(2, device=cl_device)
    fn = clgrad.compile(step, check=True)
    fn(x), fn(x)
    with pytest.raises(RuntimeError, match="differs from eager execution: output 0"):
        fn(x)


def test_input_check_raises_at_replay(cl_device):
    logits = clgrad.zeros(2, 3, device=cl_device)
    fn = clgrad.compile(lambda t: F.cross_entropy(logits, t))
    for _ in range(3):
        fn(clgrad.tensor([0, 2], device=cl_device))
    assert fn.counts["replay"] == 1
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        fn(clgrad.tensor([0, 5], device=cl_device))


def test_input_check_reads_the_device_only_when_its_inputs_change(cl_device, monkeypatch):
    """A training step's targets held by the step (not an argument): the check's flag is read
    once, and again only after the targets are written."""
    logits = clgrad.zeros(2, 3, device=cl_device)
    target = clgrad.tensor([0, 2], device=cl_device)
    fn = clgrad.compile(lambda: F.cross_entropy(logits, target))
    fn(), fn()  # warm-up, capture (its check read)
    reads = []
    item = clgrad.Tensor.item
    monkeypatch.setattr(clgrad.Tensor, "item", lambda t: reads.append(1) or item(t))
    for _ in range(3):
        fn()
    assert fn.counts["replay"] == 3 and not reads
    target[1] = 5
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        fn()
    target[1] = 1
    fn()
    assert len(reads) >= 2


def test_input_check_sees_what_the_step_writes(cl_device):
    """A target the step itself writes (no version counted by a replay's kernels) is checked
    at every replay, and eager checks afterwards see the replay's write too."""
    logits = clgrad.zeros(2, 10, device=cl_device)
    held = clgrad.zeros(2, dtype=clgrad.int64, device=cl_device)

    def step(y):
        held.copy_(y)
        return F.cross_entropy(logits, held)

    fn = clgrad.compile(step)
    for idx in ([0, 1], [2, 3], [0, 1]):
        fn(clgrad.tensor(idx, device=cl_device))
    assert fn.counts["replay"] == 1
    with pytest.raises(IndexError, match="Target 12 is out of bounds"):
        fn(clgrad.tensor([4, 12], device=cl_device))
    with pytest.raises(IndexError, match="Target 12 is out of bounds"):
        F.cross_entropy(logits, held)


def test_replay_of_slices_of_one_tensor(cl_device):
    """Mini-batches as slices of one tensor: each replay copies its own slice."""
    data = clgrad.arange(8.0, device=cl_device)
    fn = clgrad.compile(lambda x: x * 2)
    got = [fn(data[i : i + 2]).tolist() for i in range(0, 8, 2)]
    assert got == [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0], [12.0, 14.0]]
    assert fn.counts["replay"] == 2


def test_input_check_raises_at_capture(cl_device):
    logits = clgrad.zeros(2, 3, device=cl_device)
    fn = clgrad.compile(lambda t: F.cross_entropy(logits, t))
    fn(clgrad.tensor([0, 2], device=cl_device))  # warm-up (eager)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        fn(clgrad.tensor([7, 2], device=cl_device))  # the capture


def test_dropout_replays_draw_fresh_numbers(cl_device):
    fn = clgrad.compile(lambda x: F.dropout(x, 0.5))
    x = clgrad.ones(64, device=cl_device)
    clgrad.manual_seed(3)
    got = [fn(x).cpu().numpy() for _ in range(5)]
    assert fn.counts["replay"] == 3
    clgrad.manual_seed(3)
    want = [F.dropout(x, 0.5).cpu().numpy() for _ in range(5)]
    np.testing.assert_array_equal(np.stack(got), np.stack(want))
    assert len({g.tobytes() for g in got}) == 5


def test_graph_memory_stays_out_of_the_cache(cl_device):
    w = clgrad.ones(1000, device=cl_device)
    fn = clgrad.compile(lambda x: (w * x + 1) * 2)
    x = clgrad.ones(1000, device=cl_device)
    for _ in range(2):
        out = fn(x)
    graph = next(iter(fn.entries.values())).graph
    # the temporary (w * x) died during the capture (fused, it may live in a register only);
    # its block is the graph's, not the cache's
    allocator = clgrad.device(cl_device).allocator
    fresh = [clgrad.empty(1000, device=cl_device) for _ in range(8)]
    assert not {t._storage.data.int_ptr for t in fresh} & (
        set(graph.buffers) | set(allocator.pinned)
    )
    np.testing.assert_array_equal(fn(x).cpu().numpy(), out.cpu().numpy())
    ptrs = set(graph.buffers)
    assert ptrs <= set(allocator.pinned) and set(allocator.pinned) & set(allocator.held)
    # a second graph over the same parameter: w's block stays pinned while either lives
    other = clgrad.compile(lambda x: w * x)
    for _ in range(3):
        other(x)
    w_ptr = w._storage.data.int_ptr
    assert allocator.pinned[w_ptr] == 2
    fn.entries.clear()
    del graph
    gc.collect()
    assert not (ptrs - {w_ptr}) & set(allocator.pinned)  # the graph's memory is the cache's
    assert allocator.pinned[w_ptr] == 1
    other.entries.clear()
    gc.collect()
    assert w_ptr not in allocator.pinned


def test_scheduler_inside_the_step_falls_back(cl_device):
    """A scheduler stepped inside the step changes lr at every call: no capture is steady."""

    def run(compiled):
        w = clgrad.ones(4, device=cl_device, requires_grad=True)
        opt = clgrad.optim.SGD([w], lr=0.1)
        sched = clgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            opt.step()
            sched.step()
            return w.detach() * 1

        fn = clgrad.compile(step) if compiled else step
        out = [fn(clgrad.ones(4, device=cl_device)).cpu().numpy() for _ in range(6)]
        return out, fn

    with pytest.warns(UserWarning, match="Python state it reads changed during the capture"):
        got, fn = run(True)
    want, _ = run(False)
    np.testing.assert_array_equal(np.stack(got), np.stack(want))
    assert fn.counts["replay"] == 0


def test_arguments_written_in_place_and_nested(cl_device):
    inner = clgrad.compile(lambda x: x * 2)

    @clgrad.compile
    def step(x, total):
        total.add_(x)  # the caller's tensor is written, as eagerly
        return inner(total)  # a compiled function inside a capture runs as part of it

    for check in (False, True):
        step.check = check  # check mode restores what the replay wrote before running eagerly
        total = clgrad.zeros(3, device=cl_device)
        outs = [step(clgrad.full((3,), float(i), device=cl_device), total) for i in range(1, 6)]
        assert step.counts["replay"] == 3 + 5 * check  # same signature: the graph is kept
        np.testing.assert_array_equal(total.cpu().numpy(), [15.0] * 3)
        assert [o[0].item() for o in outs] == [2.0, 6.0, 12.0, 20.0, 30.0]
    x = clgrad.ones(3, device=cl_device)
    step(x, total), step(x, total)  # the same input twice: its copy is skipped, not stale
    np.testing.assert_array_equal(total.cpu().numpy(), [17.0] * 3)


def test_options_and_decorator():
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        clgrad.compile(lambda: None, mode="fastest")
    fn = clgrad.compile(mode="reduce-overhead", fullgraph=False, dynamic=False, backend="inductor")(
        lambda x: x + 1
    )
    assert isinstance(fn, CompiledFunction)
    assert fn(clgrad.ones(1)).item() == 2.0
    f = lambda x: x  # noqa: E731
    assert clgrad.compile(f, disable=True) is f


def test_embedding_step_replays_and_checks_its_indices(cl_device):
    """An embedding's index range check is a device check: a captured step replays (its
    kernels clamp offsets into the weight) and a replay with an index out of range raises
    IndexError after its launches, as a device-side assert would."""
    clgrad.manual_seed(0)
    emb = clgrad.nn.Embedding(10, 4).to(cl_device)
    head = clgrad.nn.Linear(4, 10).to(cl_device)
    params = [*emb.parameters(), *head.parameters()]
    opt = clgrad.optim.SGD(params, lr=0.1)

    def step(idx):
        opt.zero_grad()
        logits = head(emb(idx))
        loss = clgrad.nn.functional.cross_entropy(logits.reshape(-1, 10), idx.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    fn = clgrad.compile(step)
    good = clgrad.tensor([[1, 2, 3], [4, 5, 6]], device=cl_device)
    losses = [fn(good).item() for _ in range(4)]
    assert fn.counts == {"eager": 1, "capture": 1, "replay": 2}
    assert losses == sorted(losses, reverse=True)  # it learns
    with pytest.raises(IndexError, match="index out of range"):
        fn(clgrad.tensor([[1, 2, 3], [4, 5, 12]], device=cl_device))
