"""clgrad.optim against torch.optim on cases from torch's OptimizerInfo database and the ideas
of torch's test_optim.py / test_lrscheduler.py (written out here: the repository's tests don't
import torch.testing._internal): Tensor hyperparameters, parameter groups, global step hooks,
load_state_dict and zero_grad semantics, float64 and complex parameters, and the lr
schedulers' Tensor lrs, warnings, messages and resumption. Each case runs both libraries and
compares what they do. (The differential harness these came from sweeps every OptimizerInfo
config; it lives outside the repository.)"""

import warnings

import numpy as np
import pytest
from conftest import supports

import clgrad

torch = pytest.importorskip("torch")

OPTIMIZERS = [
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "ASGD",
    "LBFGS",
    "Muon",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
]


def _outcome(fn):
    """(exception class name, message) of ``fn()``, or ("ok", result)."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, str(e)


def _both(make):
    """``make(lib)`` for torch and clgrad: what each raised (or returned)."""
    return _outcome(lambda: make(torch)), _outcome(lambda: make(clgrad))


def _params(lib, device=None, dtype="float32", shapes=((3, 4), (5,), ())):
    rng = np.random.default_rng(0)
    kw = {"device": device} if device and lib is clgrad else {}
    return [
        lib.nn.Parameter(lib.tensor(np.asarray(rng.standard_normal(s), dtype), **kw))
        for s in shapes
    ]


def _grads(lib, params, step, device=None):
    rng = np.random.default_rng(100 + step)
    kw = {"device": device} if device and lib is clgrad else {}
    for p in params:
        a = np.asarray(rng.standard_normal(tuple(p.shape)), np.dtype(str(p.dtype).split(".")[-1]))
        p.grad = lib.tensor(a, **kw)


def _trajectory(lib, name, kwargs, device=None, dtype="float32", steps=4):
    shapes = ((3, 4), (4, 6)) if name == "Muon" else ((3, 4), (5,), ())
    params = _params(lib, device, dtype, shapes)
    opt = getattr(lib.optim, name)(params, **kwargs(lib))
    for k in range(steps):
        _grads(lib, params, k, device)
        opt.step()
    return [p.detach().cpu().numpy() for p in params], opt


# ---- Tensor hyperparameters ---------------------------------------------------------------


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_tensor_lr_of_more_than_one_element_is_refused_as_torch(name):
    # ValueError('Tensor lr must be 1-element'); clgrad's comparison raised RuntimeError
    # ('Boolean value of Tensor with more than one value is ambiguous')
    def make(lib):
        getattr(lib.optim, name)(_params(lib, shapes=((3, 4),)), lr=lib.tensor([1e-3, 1e-3]))

    t, c = _both(make)
    assert t == ("ValueError", "Tensor lr must be 1-element")
    assert c == t


@pytest.mark.parametrize(
    "kwargs",
    [
        {"betas": (0.9, "tensor")},
        {"betas": ("tensor", 0.99)},
        {"betas": ("tensor", "tensor"), "foreach": True},
        {"lr": "tensor", "foreach": True},
        {"betas": (0, 0.99)},  # an int is neither a float nor a Tensor, for torch
    ],
)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_tensor_hyperparameter_errors_match_torch(name, kwargs):
    # torch's checks come before the parameters are looked at (params=None, as its
    # OptimizerInfo error inputs pass); clgrad went on to iterate None
    def make(lib):
        def value(v):
            return lib.tensor(0.5) if v == "tensor" else v

        kw = {
            k: tuple(map(value, v)) if isinstance(v, tuple) else value(v) for k, v in kwargs.items()
        }
        getattr(lib.optim, name)(None, **kw)

    t, c = _both(make)
    assert t[0] == "ValueError"
    assert c == t


def test_adam_takes_tensor_betas_of_any_one_element_shape(device):
    # torch squeezes each beta to a 0-d tensor (torch's OptimizerInfo: 'Tensor lr, Tensor
    # betas, with capturable and amsgrad'); clgrad broadcast the (1, 1, 1) beta into the
    # (3, 4) state ('output with shape [3, 4] doesn't match the broadcast shape [1, 3, 4]')
    def kwargs(lib):
        return {
            "lr": lib.tensor(0.01),
            "betas": (lib.tensor([[[0.9]]]), lib.tensor([[0.99]])),
            "amsgrad": True,
        }

    expected, topt = _trajectory(torch, "Adam", kwargs)
    got, copt = _trajectory(clgrad, "Adam", kwargs, device)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert [tuple(b.shape) for b in copt.param_groups[0]["betas"]] == [(), ()]


@pytest.mark.parametrize(
    "name, extra",
    [
        ("SGD", {"momentum": 0.9}),
        ("Adam", {}),
        ("AdamW", {"amsgrad": True}),
        ("RMSprop", {"centered": True}),
        ("Adagrad", {}),
        ("Rprop", {}),
        ("ASGD", {}),
        ("Muon", {}),
    ],
)
def test_tensor_lr_on_the_host_drives_parameters_on_any_device(device, name, extra):
    # a Tensor lr (torch's OptimizerInfo 'Tensor lr') on the host, read at each step, drives
    # parameters on any device, the fused and the per-op paths alike
    def kwargs(lib):
        return {"lr": lib.tensor(0.01), **extra}

    expected, _ = _trajectory(torch, name, kwargs)
    got, _ = _trajectory(clgrad, name, kwargs, device)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# ---- parameter groups ---------------------------------------------------------------------


def test_param_groups_with_and_without_names_are_refused_as_torch():
    def make(lib):
        a, b = _params(lib, shapes=((2,), (3,)))
        opt = lib.optim.SGD([("a", a)], lr=0.1)
        opt.add_param_group({"params": [b]})

    t, c = _both(make)
    assert t[0] == "ValueError" and "with/without names" in t[1]
    assert c == t


def test_lbfgs_refuses_mixed_named_groups_first_as_torch():
    # torch's Optimizer checks the groups' names before LBFGS checks their number
    def make(lib):
        a, b = _params(lib, shapes=((2,), (3,)))
        lib.optim.LBFGS([{"params": [("a", a)]}, {"params": [b]}])

    t, c = _both(make)
    assert c == t


def test_param_group_dicts_become_the_groups_as_torch():
    # torch fills the dicts given in place and keeps them: a program that changes one later
    # changes the optimizer's group (clgrad kept copies)
    found = {}
    for lib in (torch, clgrad):
        a, b = _params(lib, shapes=((2,), (3,)))
        first = {"params": [a], "lr": 0.5}
        opt = lib.optim.SGD([first], lr=0.1)
        second = {"params": b}
        opt.add_param_group(second)
        first["lr"] = 0.25
        found[lib.__name__] = (
            opt.param_groups[0] is first,
            opt.param_groups[1] is second,
            opt.param_groups[0]["lr"],
            second["momentum"],
            type(second["params"]).__name__,
        )
    assert found["clgrad"] == found["torch"] == (True, True, 0.25, 0, "list")


def test_a_non_leaf_that_retains_its_grad_can_be_optimized_as_torch():
    def make(lib):
        w = lib.ones(2, requires_grad=True) * 2
        w.retain_grad()
        (w * w).sum().backward()
        lib.optim.SGD([w], lr=0.1).step()
        return w.detach().tolist()

    t, c = _both(make)
    assert t[0] == "ok"
    assert c == t


def _step_hook_log(lib):
    import importlib

    module = importlib.import_module(lib.__name__ + ".optim.optimizer")
    log = []
    (p,) = _params(lib, shapes=((2,),))
    opt = lib.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    handles = [
        module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre")),
        module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
    ]
    try:
        opt.step()
    finally:
        for h in handles:
            h.remove()
    opt.step()
    return log


def test_global_step_hooks_run_around_every_optimizer_as_torch():
    # torch.optim.optimizer.register_optimizer_step_pre_hook / _post_hook: global pre-hooks
    # before the optimizer's own, global post-hooks after; clgrad had none
    expected = ["global pre", "pre", "post", "global post", "pre", "post"]
    assert _step_hook_log(torch) == expected
    assert _step_hook_log(clgrad) == expected


def test_load_state_dict_makes_the_saved_groups_the_groups_as_torch():
    # torch's load_state_dict puts the saved groups (with this optimizer's parameters) in
    # place of its own: an option set on a group after the save is gone, and a state dict of
    # an older release gets the options it lacks; clgrad wrote the saved options into the
    # groups it had, so the later key stayed
    found = {}
    for lib in (torch, clgrad):
        params = _params(lib, shapes=((2,), (3,)))
        opt = lib.optim.Adam(params, lr=0.1)
        _grads(lib, params, 0)
        opt.step()
        saved = opt.state_dict()
        del saved["param_groups"][0]["amsgrad"]  # (as a state dict saved before amsgrad existed)
        before = opt.param_groups[0]
        before["extra"] = 1
        opt.load_state_dict(saved)
        group = opt.param_groups[0]
        _grads(lib, params, 1)
        opt.step()
        found[lib.__name__] = (
            "extra" in group,
            group is before,
            group["amsgrad"],
            group["params"][0] is params[0],
        )
    assert found["clgrad"] == found["torch"] == (False, False, False, True)


def test_zero_grad_without_set_to_none_zeroes_the_same_tensor_as_torch():
    # torch detaches and zeroes p.grad in place; clgrad gave p a new (detached) grad tensor,
    # so a reference to the old one no longer was p.grad
    found = {}
    for lib in (torch, clgrad):
        (p,) = _params(lib, shapes=((3,),))
        (p * p).sum().backward()
        grad = p.grad
        q = lib.nn.Parameter(lib.ones(2))
        q.grad = lib.ones(2, requires_grad=True) * 3
        grad_with_history = q.grad
        lib.optim.SGD([p, q], lr=0.1).zero_grad(set_to_none=False)
        found[lib.__name__] = (
            p.grad is grad,
            q.grad is grad_with_history,
            grad_with_history.grad_fn is None,
            grad_with_history.requires_grad,
            grad.tolist() + grad_with_history.tolist(),
        )
    assert found["clgrad"] == found["torch"]
    assert found["torch"][:2] == (True, True)


# ---- float64 state ------------------------------------------------------------------------


@pytest.mark.parametrize("etas", [(0.5, 1.2), (0.3, 1.7)])
def test_rprop_keeps_float64_step_sizes_exact(device, etas):
    # the sign factors were a float32 where() of the etas: a float64 step size grew by
    # float32(1.2) = 1.2000000477 (4e-10 off torch's after one step at lr 0.01)
    if not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def kwargs(lib):
        return {"etas": etas}

    expected, topt = _trajectory(torch, "Rprop", kwargs, dtype="float64", steps=6)
    got, copt = _trajectory(clgrad, "Rprop", kwargs, device, dtype="float64", steps=6)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-15)
    for i, state in topt.state_dict()["state"].items():
        np.testing.assert_allclose(
            copt.state_dict()["state"][i]["step_size"].cpu().numpy(),
            state["step_size"].numpy(),
            rtol=1e-13,
        )


# ---- lr schedulers ------------------------------------------------------------------------


def _sched_opt(lib, tensor_lr=False, optimizer="SGD"):
    a, b = _params(lib, shapes=((2, 2), (3,)))
    lrs = (lib.tensor(0.1), lib.tensor(0.01)) if tensor_lr else (0.1, 0.01)
    kw = {"momentum": 0.9} if optimizer == "SGD" else {}
    groups = [{"params": [a], "lr": lrs[0]}, {"params": [b], "lr": lrs[1]}]
    return getattr(lib.optim, optimizer)(groups, **kw)


TENSOR_LR_SCHEDULES = {
    "StepLR": lambda L, o: L.StepLR(o, step_size=3, gamma=0.5),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=12),
    "CyclicLR": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3),
    "ReduceLROnPlateau": lambda L, o: L.ReduceLROnPlateau(o, patience=0, factor=0.5),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=3), L.ExponentialLR(o, 0.9)], milestones=[3]
    ),
}


@pytest.mark.parametrize("name", sorted(TENSOR_LR_SCHEDULES))
def test_schedulers_fill_a_tensor_lr_in_place_as_torch(name):
    # torch fills a group's Tensor lr (the optimizer keeps the same tensor) and get_last_lr()
    # gives copies of the Tensor type; clgrad replaced OneCycleLR's and CyclicLR's lrs with
    # floats and kept get_last_lr() as floats
    found = {}
    for lib in (torch, clgrad):
        opt = _sched_opt(lib, tensor_lr=True)
        lr_objects = [g["lr"] for g in opt.param_groups]
        sched = TENSOR_LR_SCHEDULES[name](lib.optim.lr_scheduler, opt)
        lrs = []
        for _ in range(10):
            opt.step()
            sched.step(1.0) if name == "ReduceLROnPlateau" else sched.step()
            last = sched.get_last_lr()
            lrs.append([float(v) for v in last])
        found[lib.__name__] = (
            lrs,
            [type(v).__name__ for v in last],
            [g["lr"] is t for g, t in zip(opt.param_groups, lr_objects)],
            [v is g["lr"] for v, g in zip(last, opt.param_groups)],
        )
    t, c = found["torch"], found["clgrad"]
    np.testing.assert_allclose(c[0], t[0], rtol=1e-6)
    assert c[1:] == t[1:]


def _warnings_of(lib, run):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _outcome(lambda: run(lib.optim.lr_scheduler, _sched_opt(lib)))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def _step_before_optimizer(L, opt):
    sched = L.StepLR(opt, 2)
    sched.step()


def _get_lr_outside_step(L, opt):
    sched = L.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    return sched.get_lr()


def _step_with_epoch(L, opt):
    sched = L.StepLR(opt, 2)
    opt.step()
    sched.step(5)
    return sched.get_last_lr()


def _optimizer_step_replaced(L, opt):
    sched = L.StepLR(opt, 2)
    opt.step = lambda closure=None: None
    opt.step()
    sched.step()


def _swalr_get_lr_outside_step(L, opt):
    sched = (torch if L is torch.optim.lr_scheduler else clgrad).optim.swa_utils.SWALR(opt, 0.05)
    return sched.get_lr()


@pytest.mark.parametrize(
    "run",
    [
        _step_before_optimizer,
        _get_lr_outside_step,
        _step_with_epoch,
        _optimizer_step_replaced,
        _swalr_get_lr_outside_step,
    ],
)
def test_scheduler_warnings_match_torch(run):
    # torch warns when the scheduler steps before the optimizer (it wraps optimizer.step to
    # know), when get_lr() is called outside step(), and with its deprecation text for
    # step(epoch); clgrad gave no warning for the first two and its own text for the third
    assert _warnings_of(clgrad, run) == _warnings_of(torch, run)


def _lengths(L, opt, what):
    lib = torch if L is torch.optim.lr_scheduler else clgrad
    make = {
        "CyclicLR": lambda: L.CyclicLR(opt, [0.01], 0.1),
        "OneCycleLR": lambda: L.OneCycleLR(opt, max_lr=[1.0], total_steps=10),
        "ReduceLROnPlateau": lambda: L.ReduceLROnPlateau(opt, min_lr=[0.1]),
        "SWALR": lambda: lib.optim.swa_utils.SWALR(opt, swa_lr=[0.1]),
        "SWALR strategy": lambda: lib.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="x"),
        "resume": lambda: L.StepLR(opt, 2, last_epoch=3),
        "Sequential other": lambda: L.SequentialLR(
            opt, [L.StepLR(opt, 2), L.StepLR(_sched_opt(lib), 2)], milestones=[1]
        ),
        "Sequential non-scheduler": lambda: L.SequentialLR(opt, [L.StepLR(opt, 2), 5], [1]),
        "Chained other": lambda: L.ChainedScheduler(
            [L.StepLR(opt, 2), L.StepLR(_sched_opt(lib), 3)]
        ),
        "Chained non-scheduler": lambda: L.ChainedScheduler([L.StepLR(opt, 2), "x"]),
    }
    make[what]()


@pytest.mark.parametrize(
    "what",
    [
        "CyclicLR",
        "OneCycleLR",
        "ReduceLROnPlateau",
        "SWALR",
        "SWALR strategy",
        "resume",
        "Sequential other",
        "Sequential non-scheduler",
        "Chained other",
        "Chained non-scheduler",
    ],
)
def test_scheduler_argument_errors_match_torch(what):
    # torch's classes and messages ("max_lr must have the same length as
    # optimizer.param_groups. ...", the KeyError of a resume without initial_lr, a
    # SequentialLR of a non-scheduler is TypeError, ...)
    t = _warnings_of(torch, lambda L, o: _lengths(L, o, what))[0]
    c = _warnings_of(clgrad, lambda L, o: _lengths(L, o, what))[0]
    assert t[0] != "ok"
    if what.endswith(" other"):  # the message shows each library's optimizer repr
        assert c[0] == t[0] and c[1].split(" has ")[0] == t[1].split(" has ")[0]
        return
    assert c == t


def test_nested_sequential_lr_undoes_its_inner_schedulers_as_torch():
    # torch takes back the construction step of each scheduler inside a nested SequentialLR;
    # clgrad stepped the inner SequentialLR's own count back and started at 2x the lr
    found = {}
    for lib in (torch, clgrad):
        L = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inner = L.SequentialLR(
                opt, [L.ConstantLR(opt, 0.5, 2), L.ExponentialLR(opt, 0.9)], milestones=[2]
            )
            sched = L.SequentialLR(opt, [inner, L.StepLR(opt, 2, 0.5)], milestones=[4])
            lrs = []
            for _ in range(8):
                opt.step()
                sched.step()
                lrs.append(opt.param_groups[0]["lr"])
        found[lib.__name__] = lrs, [s.last_epoch for s in inner._schedulers]
    np.testing.assert_allclose(found["clgrad"][0], found["torch"][0], rtol=1e-12)
    assert found["clgrad"][1] == found["torch"][1]


RESUMED_SCHEDULES = {
    "ExponentialLR": lambda L, o, k: L.ExponentialLR(o, 0.9, last_epoch=k),
    "CosineAnnealingLR": lambda L, o, k: L.CosineAnnealingLR(o, 10, 0.001, last_epoch=k),
    "PolynomialLR": lambda L, o, k: L.PolynomialLR(o, 10, 2.0, last_epoch=k),
    "StepLR": lambda L, o, k: L.StepLR(o, 3, 0.5, last_epoch=k),
    "LinearLR": lambda L, o, k: L.LinearLR(o, 0.2, 1.0, 6, last_epoch=k),
    "SequentialLR": lambda L, o, k: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)], [3], last_epoch=k
    ),
}


@pytest.mark.parametrize("last_epoch", [0, 4])
@pytest.mark.parametrize("name", sorted(RESUMED_SCHEDULES))
def test_resumed_schedulers_keep_the_lrs_they_find_as_torch(name, last_epoch):
    # a scheduler built with last_epoch (resuming from a checkpoint, the groups holding
    # initial_lr) leaves the lrs as they are at its constructor's step, as torch 2.13's
    # (_is_initial); clgrad's ExponentialLR, CosineAnnealingLR and PolynomialLR stepped them
    # once more (CosineAnnealingLR from its base lrs: 0.195 for torch's 0.1), and a SequentialLR
    # then held its first lr for two epochs
    found = {}
    for lib in (torch, clgrad):
        opt = _sched_opt(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"] * 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = RESUMED_SCHEDULES[name](lib.optim.lr_scheduler, opt, last_epoch)
            lrs = [[g["lr"] for g in opt.param_groups]]
            for _ in range(6):
                opt.step()
                sched.step()
                lrs.append([g["lr"] for g in opt.param_groups])
        found[lib.__name__] = lrs, sched.last_epoch
    np.testing.assert_allclose(found["clgrad"][0], found["torch"][0], rtol=1e-12)
    assert found["clgrad"][1] == found["torch"][1]


# ---- complex parameters -------------------------------------------------------------------

COMPLEX_CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True, "foreach": False}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "foreach": False}),
    ("AdamW", {"lr": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1, "foreach": False}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.1}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {"weight_decay": 0.1}),
    ("ASGD", {"t0": 1}),
    ("Rprop", {}),
    ("LBFGS", {}),
]


def _complex_run(lib, name, kwargs, device=None):
    z = np.array([[1 + 2j, -0.5 + 1j], [3 - 1j, 0.2 - 0.3j]], np.complex64)
    g = np.array([[0.1 - 0.2j, 0.3 + 0.1j], [-0.2 + 0.5j, 0.05 + 0.02j]], np.complex64)
    kw = {"device": device} if lib is clgrad else {}
    p = lib.nn.Parameter(lib.tensor(z, **kw))
    opt = getattr(lib.optim, name)([p], **kwargs)
    for k in range(3):
        if name == "LBFGS":

            def closure():
                opt.zero_grad()
                loss = (p * p.conj()).real.sum() + (p.real * 0.3).sum()
                loss.backward()
                return loss

            opt.step(closure)
        else:
            p.grad = lib.tensor(g * (k + 1), **kw)
            opt.step()
    state = opt.state_dict()["state"].get(0, {})
    kinds = sorted((k, str(v.dtype).split(".")[-1], tuple(v.shape)) for k, v in state.items()
                   if hasattr(v, "dtype") and k != "step")  # fmt: skip
    return p.detach().cpu().numpy(), kinds


@pytest.mark.parametrize("name, kwargs", COMPLEX_CASES)
def test_complex_parameters_step_as_their_real_views_as_torch(device, name, kwargs):
    # torch updates a complex parameter as view_as_real (real and imaginary parts two
    # coordinates) and keeps its state complex; clgrad ran the real formulas on complex tensors
    # (Adam's and Adagrad's sqrt of a complex square left the imaginary parts unchanged,
    # Adamax and NAdam raised on lerp_, Rprop on sign, SGD and RMSprop on add_'s alpha)
    expected, expected_state = _complex_run(torch, name, kwargs)
    got, got_state = _complex_run(clgrad, name, kwargs, device)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert got_state == expected_state


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_optimizers_without_a_complex_form_refuse_complex_parameters_as_torch(name):
    def make(lib):
        p = lib.nn.Parameter(lib.tensor(np.ones((2, 2), np.complex64)))
        p.grad = lib.tensor(np.ones((2, 2), np.complex64))
        getattr(lib.optim, name)([p]).step()

    t, c = _both(make)
    assert t == ("RuntimeError", f"{name} does not support complex parameters")
    assert c == t


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_true_refuses_a_complex_parameter_as_torch(name):
    # torch's fused kernels take floating-point parameters only: fused=True with a complex one
    # is its RuntimeError at step(); clgrad ran the per-op path
    def make(lib):
        p = lib.nn.Parameter(lib.tensor(np.ones((2, 2), np.complex64)))
        p.grad = lib.tensor(np.ones((2, 2), np.complex64))
        getattr(lib.optim, name)([p], lr=0.1, fused=True).step()

    t, c = _both(make)
    assert t[0] == c[0] == "RuntimeError"
    prefix = "`fused=True` requires all the params to be floating point Tensors of supported"
    assert t[1].startswith(prefix) and c[1].startswith(prefix)
    assert c[1].endswith("but clgrad.complex64 and cpu")
