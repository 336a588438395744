"""nn modules against torch on the cases torch's own ModuleInfo database
(torch.testing._internal.common_modules.module_db) found differing: each module is built with
the same arguments in both libraries, torch's state dict loaded into clgrad's, and the forward
results, gradients, state after the forward, or the exception class compared. The cases are
written out here (torch's testing internals need expecttest)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import supports

import clgrad

torch = pytest.importorskip("torch")


# ---- helpers ---------------------------------------------------------------------------------
def to_clgrad(value, device, requires_grad=False):
    """A torch tensor (or a tuple of them) as a clgrad one on ``device``."""
    if isinstance(value, tuple):
        return tuple(to_clgrad(v, device, requires_grad) for v in value)
    t = clgrad.tensor(value.detach().numpy(), device=device)
    return t.requires_grad_(True) if requires_grad else t


def load_torch_state(module, reference, device):
    module.load_state_dict({k: to_clgrad(v, device) for k, v in reference.state_dict().items()})
    return module.to(device)


def assert_matches(got, want, rtol=1e-4, atol=1e-5, what="result"):
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape}, torch {want.shape}"
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=rtol, atol=atol, err_msg=what
    )


def raises_like(build_torch, build_clgrad):
    """Both raise, the same class (clgrad's may be a subclass) and message."""
    with pytest.raises(Exception) as want:
        build_torch()
    with pytest.raises(want.type) as got:
        build_clgrad()
    return got.value, want.value


# ---- batch norm: eps checks ------------------------------------------------------------------
@pytest.mark.parametrize("eps", [-1.0, 0.0])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_batch_norm_refuses_eps_not_positive_in_training(device, dims, eps):
    # module_error_inputs_torch_nn_BatchNorm1d_2d_3d: the forward raises ValueError
    shape = (2, 10) + (3,) * (dims - 1 if dims > 1 else 0)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    name = f"BatchNorm{dims}d"
    got, want = raises_like(
        lambda: getattr(torch.nn, name)(10, eps=eps)(torch.tensor(x)),
        lambda: getattr(clgrad.nn, name)(10, eps=eps).to(device)(clgrad.tensor(x, device=device)),
    )
    assert str(got) == str(want)


def test_batch_norm_eps_in_evaluation(device):
    # eval: eps = 0 is allowed (the running variance is used), a negative eps is not
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    got, want = raises_like(
        lambda: torch.nn.BatchNorm1d(3, eps=-1e-3).eval()(torch.tensor(x)),
        lambda: (
            clgrad.nn.BatchNorm1d(3, eps=-1e-3).to(device).eval()(clgrad.tensor(x, device=device))
        ),
    )
    assert str(got) == str(want)
    out = clgrad.nn.functional.batch_norm(
        clgrad.tensor(x, device=device),
        clgrad.zeros(3, device=device),
        clgrad.ones(3, device=device),
        eps=0.0,
    )
    np.testing.assert_allclose(out.cpu().numpy(), x)


# ---- recurrent layers: constructor and dtype checks ------------------------------------------
RNN_BAD_ARGUMENTS = [
    ({"bias": 1}, TypeError),
    ({"bias": "True"}, TypeError),
    ({"batch_first": 0}, TypeError),
    ({"batch_first": "False"}, TypeError),
    ({"input_size": 0}, ValueError),
    ({"input_size": -1}, ValueError),
    ({"input_size": 3.0}, TypeError),
    ({"hidden_size": 0}, ValueError),
    ({"hidden_size": 4.0}, TypeError),
    ({"num_layers": 0}, ValueError),
    ({"dropout": "0.5"}, ValueError),
]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "bad", RNN_BAD_ARGUMENTS, ids=lambda b: str(b[0]) if isinstance(b, tuple) else None
)
def test_rnn_constructor_checks(name, bad):
    kwargs = {"input_size": 3, "hidden_size": 4, **bad[0]}
    got, want = raises_like(
        lambda: getattr(torch.nn, name)(**kwargs), lambda: getattr(clgrad.nn, name)(**kwargs)
    )
    assert type(want) is bad[1]
    assert str(got) == str(want)


def test_rnn_dropout_on_one_layer_warns():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        clgrad.nn.LSTM(3, 4, dropout=0.5)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_rnn_input_dtype_must_match_the_weights(device, name):
    # module_error_inputs_torch_nn_RNN_GRU: a float64 input into a float32 module
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    if not supports(device, clgrad.float64):
        pytest.skip("no float64 on this device")
    got, want = raises_like(
        lambda: getattr(torch.nn, name)(3, 4)(torch.tensor(x)),
        lambda: getattr(clgrad.nn, name)(3, 4).to(device)(clgrad.tensor(x, device=device)),
    )
    assert type(got) is ValueError
    assert str(got) == str(want).replace("torch.", "clgrad.")
