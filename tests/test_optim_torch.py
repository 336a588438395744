"""clgrad.optim against torch.optim itself: the same model, data and initial weights, stepped by
each optimizer in both libraries, must follow the same trajectory (within float32 rounding);
param-group keys, state names and LR schedules must match PyTorch's."""

import numpy as np
import pytest

import clgrad
import clgrad.optim as optim
from clgrad.optim import lr_scheduler

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
X = RNG.normal(size=(16, 5)).astype(np.float32)
Y = RNG.normal(size=(16, 2)).astype(np.float32)
W1, B1 = RNG.normal(size=(8, 5)).astype(np.float32) * 0.5, RNG.normal(size=8).astype(np.float32)
W2, B2 = RNG.normal(size=(2, 8)).astype(np.float32) * 0.5, RNG.normal(size=2).astype(np.float32)


def _model(lib, device=None):
    """A 5-8-2 tanh MLP with the shared weights, and its loss on the shared data."""
    kw = {"device": device} if device else {}
    params = [lib.nn.Parameter(lib.tensor(a, **kw)) for a in (W1, B1, W2, B2)]
    x, y = lib.tensor(X, **kw), lib.tensor(Y, **kw)

    def loss_fn():
        h = lib.tanh(x @ params[0].T + params[1])
        return ((h @ params[2].T + params[3] - y) ** 2).mean()

    return params, loss_fn


def _run(lib, name, kw, device=None, steps=12):
    params, loss_fn = _model(lib, device)
    opt = getattr(lib.optim, name)(params, **kw)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in params], opt


CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.2},
    ),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "maximize": True, "foreach": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.1, "lambd": 0.01, "t0": 3, "weight_decay": 0.05}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.1), "maximize": True}),
    ("Adafactor", {}),
    (
        "Adafactor",
        {
            "lr": 0.05,
            "beta2_decay": -0.5,
            "eps": (1e-20, 1e-2),
            "d": 2.0,
            "weight_decay": 0.1,
            "maximize": True,
        },
    ),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "foreach": False}),
    ("Adam", {"lr": 0.01, "fused": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01, "foreach": True, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01, "foreach": True, "centered": True}),
]


@pytest.mark.parametrize(
    "name,kw", CASES, ids=[f"{n}-{','.join(kw) or 'defaults'}" for n, kw in CASES]
)
def test_trajectory_matches_torch(device, name, kw):
    # fused=True is torch's CUDA/CPU kernel path: same numbers, so torch runs it as is
    got_losses, got, opt = _run(clgrad, name, kw, device)
    want_losses, want, ref = _run(torch, name, kw)
    np.testing.assert_allclose(got_losses, want_losses, rtol=2e-5, atol=1e-6)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    mine, theirs = opt.state_dict(), ref.state_dict()
    assert mine["param_groups"] == theirs["param_groups"]
    assert sorted(mine["state"]) == sorted(theirs["state"])
    for i in theirs["state"]:
        assert sorted(mine["state"][i]) == sorted(theirs["state"][i])


@pytest.mark.parametrize(
    "name", ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "Adafactor"]
)
def test_defaults_and_state_dict_resume(name):
    import inspect

    mine = inspect.signature(getattr(optim, name)).parameters
    theirs = inspect.signature(getattr(torch.optim, name)).parameters
    assert list(mine) == list(theirs)
    assert [p.default for p in mine.values()] == [p.default for p in theirs.values()]
    assert [p.kind for p in mine.values()] == [p.kind for p in theirs.values()]
    # 6 steps straight == 3 steps, a state_dict round trip into a fresh optimizer, 3 steps
    straight = _run(clgrad, name, {}, steps=6)[1]
    params, loss_fn = _model(clgrad)
    opt = getattr(optim, name)(params)
    for _ in range(3):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    fresh = getattr(optim, name)(params)
    fresh.load_state_dict(opt.state_dict())
    for _ in range(3):
        fresh.zero_grad()
        loss_fn().backward()
        fresh.step()
    for g, w in zip(params, straight):
        np.testing.assert_allclose(g.detach().numpy(), w, rtol=1e-6, atol=1e-7)


def test_adafactor_shapes_match_torch(device):
    """Adafactor's factored second moment over a batch of matrices (row and column averages per
    matrix), and the plain one of a 0-d parameter, against torch."""
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=s).astype(np.float32) for s in ((3, 4, 5), (), (6,))]
    results = []
    for lib, dev in ((clgrad, device), (torch, None)):
        kw = {"device": dev} if dev else {}
        params = [lib.nn.Parameter(lib.tensor(a, **kw)) for a in arrays]
        opt = lib.optim.Adafactor(params, lr=0.1)
        for step in range(4):
            opt.zero_grad()
            sum(((p - 0.5 * step) ** 2).sum() for p in params).backward()
            opt.step()
        results.append(
            ([p.detach().cpu().numpy() for p in params], [sorted(opt.state[p]) for p in params])
        )
    (got, got_state), (want, want_state) = results
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    assert got_state == want_state


@pytest.mark.parametrize(
    "name, kw",
    [
        ("Rprop", {"lr": -1.0}),
        ("Rprop", {"etas": (1.2, 0.5)}),
        ("Adafactor", {"lr": -1.0}),
        ("Adafactor", {"beta2_decay": 0.5}),
        ("Adafactor", {"eps": (-1.0, 1e-3)}),
        ("Adafactor", {"eps": (None, -1.0)}),
        ("Adafactor", {"d": 0.5}),
        ("Adafactor", {"weight_decay": -0.1}),
    ],
)
def test_bad_hyperparameters_raise_as_torch(name, kw):
    for lib in (torch, clgrad):
        with pytest.raises(ValueError):
            getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(1))], **kw)


def test_differentiable_is_refused():
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.NAdam([clgrad.nn.Parameter(clgrad.ones(1))], differentiable=True)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(device, line_search_fn):
    results = []
    for lib, dev in ((clgrad, device), (torch, None)):
        params, loss_fn = _model(lib, dev)
        opt = lib.optim.LBFGS(
            params, lr=0.5, max_iter=8, history_size=5, line_search_fn=line_search_fn
        )

        def closure(opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        losses = [opt.step(closure).item() for _ in range(4)]
        state = opt.state[params[0]]
        results.append((losses, state["func_evals"], state["n_iter"], opt.state_dict()))
    (got, evals, iters, mine), (want, want_evals, want_iters, theirs) = results
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert (evals, iters) == (want_evals, want_iters)
    assert mine["param_groups"] == theirs["param_groups"]
    assert sorted(mine["state"][0]) == sorted(theirs["state"][0])


def _lrs(lib, make, steps=12, metrics=None, momentum=False):
    p = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([p, lib.nn.Parameter(lib.zeros(1))], lr=0.5, momentum=0.9)
    opt.add_param_group({"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.1})
    sched = make(lib, opt)
    out = []
    for i in range(steps):
        opt.step()
        sched.step(metrics[i]) if metrics else sched.step()
        out.append([*sched.get_last_lr(), *(g["momentum"] for g in opt.param_groups if momentum)])
    return out, sched


SCHEDULES = {
    "StepLR": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, 3, gamma=0.5),
    "MultiStepLR": lambda lib, opt: lib.optim.lr_scheduler.MultiStepLR(opt, [2, 5, 5], 0.3),
    "ExponentialLR": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, 0.8),
    "CosineAnnealingLR": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, 5, 0.01),
    "LambdaLR": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.9**e),
    "ConstantLR": lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, 0.25, 4),
    "LinearLR": lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, 0.1, 0.9, 6),
    "CosineAnnealingWarmRestarts": lambda lib, opt: (
        lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
    ),
    "OneCycleLR": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=13),
    "OneCycleLR-3phase-linear": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        opt,
        [1.0, 2.0],
        epochs=13,
        steps_per_epoch=1,
        anneal_strategy="linear",
        three_phase=True,
        pct_start=0.25,
    ),
    "SequentialLR": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt,
        [
            lib.optim.lr_scheduler.LinearLR(opt, 0.2, total_iters=3),
            lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6),
        ],
        milestones=[4],
    ),
    "MultiplicativeLR": lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(
        opt, [lambda e: 0.9, lambda e: 1 / (e + 1)]
    ),
    "PolynomialLR": lambda lib, opt: lib.optim.lr_scheduler.PolynomialLR(opt, 7, power=1.5),
    "ChainedScheduler": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler(
        [
            lib.optim.lr_scheduler.ConstantLR(opt, 0.5, total_iters=3),
            lib.optim.lr_scheduler.ExponentialLR(opt, 0.9),
        ]
    ),
    "CyclicLR": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, 3, 2),
    "CyclicLR-triangular2": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        opt, [0.1, 0.2], 1.0, 2, mode="triangular2", base_momentum=[0.7, 0.8]
    ),
    "CyclicLR-exp_range": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        opt, 0.1, [1.0, 2.0], 2, mode="exp_range", gamma=0.9
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_lr_schedule_matches_torch(name):
    momentum = name.startswith(("OneCycle", "CyclicLR"))
    got, sched = _lrs(clgrad, SCHEDULES[name], momentum=momentum)
    want, ref = _lrs(torch, SCHEDULES[name], momentum=momentum)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert getattr(sched, "last_epoch", None) == getattr(ref, "last_epoch", None)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"mode": "max", "threshold_mode": "abs", "threshold": 0.05},
        {"cooldown": 2, "min_lr": 0.02},
    ],
)
def test_reduce_lr_on_plateau_matches_torch(kw):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.97, 0.96, 0.8, 0.85, 0.9, 0.9, 0.9, 0.9, 0.9]

    def make(lib, opt):
        return lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, **kw)

    got, sched = _lrs(clgrad, make, metrics=metrics)
    want, ref = _lrs(torch, make, metrics=metrics)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert (sched.best, sched.num_bad_epochs) == (ref.best, ref.num_bad_epochs)


def test_scheduler_state_dict_round_trip():
    opt = optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    warm = lr_scheduler.LinearLR(opt, 0.1, total_iters=2)
    sched = lr_scheduler.SequentialLR(opt, [warm, lr_scheduler.StepLR(opt, 2)], milestones=[2])
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert isinstance(state["_schedulers"], list) and state["last_epoch"] == 3
    opt2 = optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    again = lr_scheduler.SequentialLR(
        opt2,
        [lr_scheduler.LinearLR(opt2, 0.1, total_iters=2), lr_scheduler.StepLR(opt2, 2)],
        milestones=[2],
    )
    again.load_state_dict(state)
    assert (
        again.last_epoch == 3 and again._schedulers[1].last_epoch == sched._schedulers[1].last_epoch
    )


def test_named_parameters_and_step_hooks():
    """An optimizer over named_parameters() keeps the names in its groups ("param_names",
    in its state dict too); step pre- and post-hooks run around every step until removed."""

    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 2)
        before = m.weight.detach().clone()
        opt = lib.optim.Adam(m.named_parameters(), lr=0.1)
        log = []
        pre = opt.register_step_pre_hook(
            lambda o, args, kwargs: log.append(("pre", args[0] is o, len(args), kwargs))
        )
        opt.register_step_post_hook(lambda o, args, kwargs: log.append("post"))
        for _ in range(2):
            m(lib.ones(1, 2)).sum().backward()
            opt.step()
            pre.remove()
        state = opt.state_dict()
        opt.load_state_dict(state)
        try:
            lib.optim.SGD([("w", m.weight), m.bias], lr=0.1)
            mixed = None
        except ValueError:
            mixed = ValueError
        names = [g["param_names"] for g in state["param_groups"]]
        moved = (m.weight.detach() - before).numpy().round(5).tolist()  # Adam's steps of lr
        return names, log, mixed, moved

    assert run(clgrad) == run(torch)


def _averaged(lib, avg, use_buffers):
    """AveragedModel over four updates of a Linear + BatchNorm1d, then update_bn and a call:
    what the average holds at each point."""
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        model[0].bias.fill_(0.5)
    swa_utils = lib.optim.swa_utils
    kw = {
        "swa": {},
        "ema": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)},
        "ema_one": {"avg_fn": swa_utils.get_ema_avg_fn(0.9)},
        "swa_one": {"avg_fn": swa_utils.get_swa_avg_fn()},
    }[avg]
    swa = swa_utils.AveragedModel(model, use_buffers=use_buffers, **kw)
    batch = lib.tensor([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
    out = []
    for _ in range(4):
        with lib.no_grad():
            model[0].weight.mul_(1.5)
            model[0].bias.add_(1)
        model(batch)  # moves the batch norm's statistics
        swa.update_parameters(model)
        held = [*swa.module[0].weight.flatten().tolist(), *swa.module[1].running_mean.tolist()]
        out.append(([round(v, 4) for v in held], int(swa.n_averaged)))
    loader = [batch[:2], (batch[1:], 0)]
    swa_utils.update_bn(loader, swa)
    bn = swa.module[1]
    stats = [*bn.running_mean.tolist(), *bn.running_var.tolist()]
    out.append(([round(v, 4) for v in stats], int(bn.num_batches_tracked), bn.momentum))
    swa.eval()
    out.append([round(v, 4) for v in swa(lib.ones(1, 2)).flatten().tolist()])
    return out


@pytest.mark.parametrize("avg", ["swa", "ema", "ema_one", "swa_one"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model_and_update_bn_match_torch(avg, use_buffers):
    assert _averaged(clgrad, avg, use_buffers) == _averaged(torch, avg, use_buffers)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
def test_swalr_matches_torch(strategy, anneal_epochs):
    def run(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=1.0)
        opt.add_param_group({"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.5})
        sched = lib.optim.swa_utils.SWALR(opt, [0.1, 0.05], anneal_epochs, strategy)
        lrs = []
        for _ in range(6):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs

    np.testing.assert_allclose(run(clgrad), run(torch), rtol=1e-12)


def test_averaged_model_resumes_from_its_state_dict():
    """A loaded AveragedModel goes on averaging with the count it was saved with."""

    def run(lib):
        model = lib.nn.Linear(1, 1, bias=False)
        swa = lib.optim.swa_utils.AveragedModel(model)
        for w in (1.0, 3.0):
            model.weight.data.fill_(w)
            swa.update_parameters(model)
        resumed = lib.optim.swa_utils.AveragedModel(model)
        resumed.load_state_dict(swa.state_dict())
        model.weight.data.fill_(8.0)
        resumed.update_parameters(model)
        return resumed.module.weight.item(), int(resumed.n_averaged)

    assert run(clgrad) == run(torch) == (4.0, 3)
