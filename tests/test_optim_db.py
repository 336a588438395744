"""clgrad.optim against torch.optim on cases from torch's OptimizerInfo database (written out
here: the repository's tests don't import torch.testing._internal): Tensor hyperparameters,
parameter-group rules, global step hooks, float64 state, and the lr schedulers' Tensor lrs,
warnings and messages. Each case runs both libraries and compares what they do."""

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
