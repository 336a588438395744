"""``optim.Muon`` against ``torch.optim.Muon`` on every device: the parameters after several
steps (equal: the Newton-Schulz iteration rounds where PyTorch's bfloat16 ops do), its
argument checks, state dicts; and ``round_to_bfloat16`` against PyTorch's bfloat16."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad
from clgrad.optim.muon import round_to_bfloat16

RNG = np.random.default_rng(0)
WEIGHTS = [
    RNG.standard_normal((5, 3)).astype(np.float32),
    RNG.standard_normal((3, 6)).astype(np.float32),
]
X = RNG.standard_normal((8, 5)).astype(np.float32)


def _train(lib, device, steps=4, **options):
    params = [lib.nn.Parameter(lib.tensor(w, device=device)) for w in WEIGHTS]
    opt = lib.optim.Muon(params, **options)
    x = lib.tensor(X, device=device)
    for _ in range(steps):
        opt.zero_grad()
        ((x @ params[0]).tanh() @ params[1]).pow(2).mean().backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in params], opt


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"lr": 0.02, "nesterov": False},
        {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0},
        {"lr": 0.01, "adjust_lr_fn": "original", "momentum": 0.5},
        {"lr": 0.05, "momentum": 0.0, "ns_steps": 3, "ns_coefficients": (3.0, -3.2, 1.2)},
    ],
)
def test_steps_match_torch(device, options):
    expected, _ = _train(torch, "cpu", **options)
    got, opt = _train(clgrad, device, **options)
    for g, e, w in zip(got, expected, WEIGHTS):
        assert np.abs(e - w).max() > 1e-3  # the steps moved the weights
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert sorted(opt.state_dict()["param_groups"][0]) == sorted(
        _train(torch, "cpu", steps=1, **options)[1].state_dict()["param_groups"][0]
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.optim.Muon([m.nn.Parameter(m.ones(3))]),  # not 2-D
        lambda m: m.optim.Muon([m.nn.Parameter(m.ones(2, 2))], lr=-1.0),
        lambda m: m.optim.Muon([m.nn.Parameter(m.ones(2, 2))], momentum=-0.1),
        lambda m: m.optim.Muon([m.nn.Parameter(m.ones(2, 2))], weight_decay=-0.1),
        lambda m: m.optim.Muon([m.nn.Parameter(m.ones(2, 2))], adjust_lr_fn="sqrt"),
    ],
)
def test_refused_options(make):
    with pytest.raises(ValueError):
        make(torch)
    with pytest.raises(ValueError):
        make(clgrad)


@pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])
def test_too_many_steps_refused_at_step(lib):
    w = lib.nn.Parameter(lib.ones(2, 2))
    opt = lib.optim.Muon([w], ns_steps=100)
    (w * w).sum().backward()
    with pytest.raises(ValueError):
        opt.step()


def test_state_dict_round_trip(device):
    _, opt = _train(clgrad, device, steps=2)
    params = [p for g in opt.param_groups for p in g["params"]]
    fresh = clgrad.optim.Muon(params)
    fresh.load_state_dict(opt.state_dict())
    for p in params:
        np.testing.assert_array_equal(
            fresh.state[p]["momentum_buffer"].cpu().numpy(),
            opt.state[p]["momentum_buffer"].cpu().numpy(),
        )


def test_round_to_bfloat16(device):
    values = np.concatenate(
        [
            RNG.standard_normal(1000).astype(np.float32) * 10.0 ** RNG.integers(-30, 30, 1000),
            np.array([0.0, -0.0, 1.0, 1.00390625, 1.01171875, np.inf, -np.inf, 3.4e38], "float32"),
        ]
    ).astype(np.float32)
    got = round_to_bfloat16(clgrad.tensor(values, device=device)).cpu().numpy()
    expected = torch.tensor(values).bfloat16().float().numpy()
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(round_to_bfloat16(clgrad.tensor([np.nan], device=device)).item())
