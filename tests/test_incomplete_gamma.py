"""igamma / igammac over inputs where most elements are outside the functions' domain or on
the series side: the continued fraction must stop once the elements it answers for have
converged. It tested every element against one ulp of 1, which some steps never reach (they
settle 1.5 to 2 ulps away), so every call ran all 20,000 steps: 10^5 elements took over a
minute, and 10^6 (a PyTorch OpInfo reference sample) 80 s."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad

RNG = np.random.default_rng(0)


def _computes_float64(device):
    """Whether the series run in float64 there (else in float32: a few more ulps off)."""
    return device == "cpu" or clgrad.device(device).supports(clgrad.float64)


A = (RNG.random(2000) * 20 - 10).astype(np.float32)
X = (RNG.random(2000) * 20 - 10).astype(np.float32)
A[:8] = [4.964970111846924, 1e-3, 0.5, 1e3, 50, 3, 0, 2]  # (the first settles 2 ulps off)
X[:8] = [7.497681617736816, 1e-3, 0.5, 1e3, 51, 0, 3, np.inf]


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_values_and_few_convergence_checks(name, device, monkeypatch):
    checks = []
    any_of = clgrad.Tensor.any

    def counted_any(self, *args, **kwargs):
        checks.append(1)
        return any_of(self, *args, **kwargs)

    monkeypatch.setattr(clgrad.Tensor, "any", counted_any)
    got = getattr(clgrad, name)(clgrad.tensor(A, device=device), clgrad.tensor(X, device=device))
    expected = getattr(torch, name)(torch.tensor(A), torch.tensor(X)).numpy()
    rtol = 2e-5 if _computes_float64(device) else 1e-3  # (igamma(1000, 1000): 3e-4 in float32)
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=rtol, atol=2e-6)
    # a handful of checks per loop (every 16 steps), not the 1,250 of a loop run to its limit
    assert len(checks) < 60, len(checks)


def test_zeta_far_negative_q_ends_and_matches(device):
    """zeta summed its terms from the smallest q on, in one loop of tensor ops for every
    element: q = -1e20 (a pole) meant 1e20 steps. Poles and undefined terms are answered
    directly, and a negative fractional q far from 0 has its terms summed on the host."""
    s = [2.0, 3.0, 2.0, 2.5, 4.0, 2.0, float("nan"), 2.0, 3.0]
    q = [-2.5, -5000.5, -3.0, -2.5, -1234.25, float("nan"), 1.0, -1e20, 7.0]
    expected = torch.special.zeta(
        torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64)
    )
    got = clgrad.special.zeta(
        clgrad.tensor(s, dtype=clgrad.float32, device=device),
        clgrad.tensor(q, dtype=clgrad.float32, device=device),
    )
    rtol = 1e-5 if _computes_float64(device) else 5e-3
    np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=rtol)
