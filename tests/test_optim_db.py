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
