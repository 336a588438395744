"""clgrad.optim: every optimizer against a NumPy transcription of PyTorch's update rules,
param groups, state dicts, no host reads in step(), and the lr schedulers."""

import math

import numpy as np
import pytest
from conftest import assert_close

import clgrad
import clgrad.nn as nn
import clgrad.optim as optim
from clgrad.optim import lr_scheduler

RNG = np.random.default_rng(7)
W0 = RNG.normal(size=(3, 4))
GRADS = [RNG.normal(size=(3, 4)) for _ in range(4)]


# ---- NumPy references (PyTorch's single-tensor formulas) -------------------------------------
def sgd_ref(
    w, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False
):
    w, buf = w.copy(), None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def adam_ref(
    w,
    grads,
    lr,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    decoupled=False,
    maximize=False,
):
    w = w.copy()
    m, v, vmax = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay and decoupled:
            w = w * (1 - lr * weight_decay)
        elif weight_decay:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        bc1, bc2 = 1 - betas[0] ** step, 1 - betas[1] ** step
        if amsgrad:
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax) / math.sqrt(bc2) + eps
        else:
            denom = np.sqrt(v) / math.sqrt(bc2) + eps
        w = w - lr / bc1 * m / denom
    return w


def rmsprop_ref(w, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
    w = w.copy()
    sq, ga, buf = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        g = g + weight_decay * w
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            w = w - lr * buf
        else:
            w = w - lr * g / avg
    return w


def run(make_opt, device, grads=GRADS):
    p = nn.Parameter(clgrad.tensor(W0, dtype=clgrad.float32, device=device))
    opt = make_opt([p])
    for g in grads:
        p.grad = clgrad.tensor(g, dtype=clgrad.float32, device=device)
        opt.step()
    assert p.device == clgrad.device(device) and p.is_leaf and p.grad_fn is None
    return p, opt


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
    dict(lr=0.1, momentum=0.5, maximize=True),
]


@pytest.mark.parametrize("kw", SGD_CASES, ids=lambda kw: ",".join(kw))
def test_sgd(device, kw):
    p, _ = run(lambda ps: optim.SGD(ps, **kw), device)
    assert_close(p, sgd_ref(W0, GRADS, **kw), rtol=1e-5, atol=1e-6)


ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1),
    dict(lr=0.02, amsgrad=True),
    dict(lr=0.01, maximize=True),
]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=lambda kw: ",".join(kw))
def test_adam(device, kw):
    p, opt = run(lambda ps: optim.Adam(ps, **kw), device)
    assert_close(p, adam_ref(W0, GRADS, **kw), rtol=1e-5, atol=1e-6)
    step = opt.state[p]["step"]  # a 0-d float32 tensor on the host, as PyTorch's
    assert isinstance(step, clgrad.Tensor) and step.shape == () and step.dtype == clgrad.float32
    assert str(step.device) == "cpu" and step.item() == len(GRADS)


@pytest.mark.parametrize(
    "kw",
    [dict(lr=0.01), dict(lr=0.01, weight_decay=0.5, amsgrad=True)],
    ids=["default", "wd_amsgrad"],
)
def test_adamw(device, kw):
    p, _ = run(lambda ps: optim.AdamW(ps, **kw), device)
    ref = adam_ref(W0, GRADS, decoupled=True, **{"weight_decay": 1e-2, **kw})
    assert_close(p, ref, rtol=1e-5, atol=1e-6)


RMS_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1),
    dict(lr=0.01, centered=True, momentum=0.9),
]


@pytest.mark.parametrize("kw", RMS_CASES, ids=lambda kw: ",".join(kw))
def test_rmsprop(device, kw):
    p, _ = run(lambda ps: optim.RMSprop(ps, **kw), device)
    assert_close(p, rmsprop_ref(W0, GRADS, **kw), rtol=1e-4, atol=1e-5)


def test_step_reads_nothing_back(device, monkeypatch):
    """step() stays on the device: no .item(), .numpy(), .tolist() or bool() of a tensor but
    the step counts, which live on the host (as PyTorch's), where reading costs no transfer."""
    params = [nn.Parameter(clgrad.randn(3, 2, device=device)) for _ in range(2)]
    opts = [
        optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
        optim.Adam(params, amsgrad=True, weight_decay=0.1),
        optim.AdamW(params),
        optim.RMSprop(params, momentum=0.5, centered=True, weight_decay=0.1),
    ]
    for p in params:
        p.grad = clgrad.randn(3, 2, device=device)

    def guard(name):
        allowed = getattr(clgrad.Tensor, name)

        def read(t, *args, **kwargs):
            counts = [st.get("step") for opt in opts for st in opt.state.values()]
            if not any(t is c for c in counts) or str(t.device) != "cpu":
                raise AssertionError("the optimizer read a tensor back to the host")
            return allowed(t, *args, **kwargs)

        return read

    for name in ("item", "numpy", "tolist", "__bool__", "__float__", "__array__"):
        monkeypatch.setattr(clgrad.Tensor, name, guard(name))
    for opt in opts:
        for _ in range(2):
            opt.step()
    monkeypatch.undo()
    assert all(np.isfinite(p.detach().cpu().numpy()).all() for p in params)


def test_param_groups_and_zero_grad(device):
    a = nn.Parameter(clgrad.ones(2, device=device))
    b = nn.Parameter(clgrad.ones(2, device=device))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["momentum"] == 0.0
    (a.sum() + b.sum()).backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == [0.0, 0.0]
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0, 0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    c = nn.Parameter(clgrad.ones(1, device=device))
    opt.add_param_group({"params": [c], "lr": 0.5})
    assert opt.param_groups[2]["lr"] == 0.5 and opt.param_groups[2]["momentum"] == 0.0
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([a], lr=0.1, nesterov=True)
    # parameters without a gradient are skipped
    opt2 = optim.Adam([a, c])
    a.grad = clgrad.ones(2, device=device)
    opt2.step()
    assert c not in opt2.state and opt2.state[a]["step"] == 1


def test_state_dict_resume(device):
    """Training resumed from a state dict matches uninterrupted training exactly."""
    full, _ = run(lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True), device)
    p, opt = run(lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True), device, GRADS[:2])
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sd["param_groups"][0]["params"] == [0] and sd["state"][0]["step"] == 2
    assert sd["param_groups"][0]["lr"] == 0.01
    q = nn.Parameter(p.detach().cpu().clone())  # the copy lives on the host
    opt2 = optim.Adam([q], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.01
    assert opt2.state[q]["exp_avg"].device == q.device
    q.data = q.detach().to(device)
    for name, v in opt2.state[q].items():
        if isinstance(v, clgrad.Tensor):
            opt2.state[q][name] = v.to(device)
    for g in GRADS[2:]:
        q.grad = clgrad.tensor(g, dtype=clgrad.float32, device=device)
        opt2.step()
    np.testing.assert_allclose(
        q.detach().cpu().numpy(), full.detach().cpu().numpy(), rtol=1e-6, atol=1e-7
    )
    # the loaded optimizer owns its state: stepping it leaves the state dict alone
    assert (
        np.abs(
            sd["state"][0]["exp_avg"].cpu().numpy() - opt2.state[q]["exp_avg"].cpu().numpy()
        ).max()
        > 0
    )
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt2.load_state_dict({"state": {}, "param_groups": []})
    sgd = optim.SGD([q], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="doesn't match the size"):
        sgd.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]})


def test_state_dict_loads_onto_the_parameters_device(cl_device):
    p = nn.Parameter(clgrad.randn(4))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = clgrad.ones(4)
    opt.step()
    q = nn.Parameter(p.detach().to(cl_device))
    opt2 = optim.SGD([q], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["momentum_buffer"].device == clgrad.device(cl_device)
    q.grad = clgrad.ones(4, device=cl_device)
    opt2.step()
    opt.step()
    np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-6)


def test_closure(device):
    p = nn.Parameter(clgrad.tensor([2.0], device=device))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with clgrad.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0 and p.item() == 1.0


# ---- schedulers ------------------------------------------------------------------------------
def make_opt(lr=0.1):
    return optim.SGD([nn.Parameter(clgrad.zeros(1))], lr=lr)


def lrs(opt, sched, epochs):
    out = []
    for _ in range(epochs):
        out.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    return out


def test_step_lr():
    opt = make_opt(0.1)
    sched = lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    got = lrs(opt, sched, 10)
    assert got == pytest.approx([0.1 * 0.5 ** (e // 3) for e in range(10)])
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**3)
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 10
    opt2 = make_opt(0.1)
    sched2 = lr_scheduler.StepLR(opt2, step_size=100)
    sched2.load_state_dict(state)
    assert sched2.step_size == 3 and sched2.last_epoch == 10
    assert sched2.get_last_lr() == sched.get_last_lr()


def test_cosine_annealing_lr():
    opt = make_opt(0.2)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=0.01)
    got = lrs(opt, sched, 13)
    ref = [0.01 + (0.2 - 0.01) * (1 + math.cos(math.pi * e / 5)) / 2 for e in range(13)]
    assert got == pytest.approx(ref, abs=1e-9)
    two = optim.SGD(
        [
            {"params": [nn.Parameter(clgrad.zeros(1))], "lr": 1.0},
            {"params": [nn.Parameter(clgrad.zeros(1))], "lr": 0.5},
        ]
    )
    s = lr_scheduler.CosineAnnealingLR(two, T_max=4)
    two.step()
    s.step()
    assert s.get_last_lr() == pytest.approx(
        [(1 + math.cos(math.pi / 4)) / 2, 0.5 * (1 + math.cos(math.pi / 4)) / 2]
    )


def test_other_schedulers():
    opt = make_opt(1.0)
    got = lrs(opt, lr_scheduler.MultiStepLR(opt, [2, 4], gamma=0.1), 6)
    assert got == pytest.approx([1, 1, 0.1, 0.1, 0.01, 0.01])
    opt = make_opt(1.0)
    assert lrs(opt, lr_scheduler.ExponentialLR(opt, 0.5), 4) == pytest.approx([1, 0.5, 0.25, 0.125])
    opt = make_opt(2.0)
    assert lrs(opt, lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1)), 3) == pytest.approx(
        [2, 1, 2 / 3]
    )
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(make_opt(), 2, last_epoch=3)
