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
