"""Values at the edges of a dtype's range, as PyTorch gives them: vector norms of 16-bit floats
sum their powers in float32 (a float16 vector whose squares sum past 65504 has a finite norm,
it was inf, and a finite gradient), and the special functions at infinite and far-tail
arguments."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad

VALUES = (np.random.default_rng(0).random(300) * 100).astype(np.float16)


@pytest.mark.parametrize("p", [2, 3, 1.5])
def test_float16_norm_does_not_overflow(p, device):
    expected = torch.linalg.vector_norm(torch.tensor(VALUES, dtype=torch.float64), p)
    x = clgrad.tensor(VALUES, device=device, requires_grad=True)
    got = clgrad.linalg.vector_norm(x, p)
    assert got.dtype is clgrad.float16
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-3)
    got.backward()
    wide = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    torch.linalg.vector_norm(wide, p).backward()
    assert x.grad.dtype is clgrad.float16
    np.testing.assert_allclose(
        x.grad.cpu().numpy().astype(np.float64), wide.grad.numpy(), rtol=2e-3, atol=1e-4
    )


def test_float16_dist_and_method_norm(device):
    x = clgrad.tensor(VALUES, device=device)
    expected = float(np.linalg.norm(VALUES.astype(np.float64)))
    for got in (x.norm(), clgrad.dist(x, x * 0), x.norm(2, dim=0)):
        np.testing.assert_allclose(float(got), expected, rtol=1e-3)


SPECIAL_EDGES = [float("-inf"), float("inf"), float("nan"), -1e30, -100.0, -50.0, -2.5, -1.0]
SPECIAL_EDGES += [-0.99, -0.0, 0.0, 1e-30, 3.0, 10.0, 50.0, 1e30]


@pytest.mark.parametrize(
    "name", ["lgamma", "special.i0e", "special.i1e", "special.log_ndtr", "special.gammaln"]
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_functions_at_the_edges(name, dtype, device):
    """Infinite and far-tail arguments, as PyTorch's: lgamma(+-inf) = inf (the reflection
    gave NaN), i0e/i1e(+-inf) = 0 (the asymptotic series' ``far * 0 + 1`` was NaN),
    log_ndtr(-50) finite (erfc underflowed to 0), and its gradient finite there."""
    if (
        device != "cpu"
        and dtype == "float64"
        and not clgrad.device(device).supports(clgrad.float64)
    ):
        pytest.skip("no float64 on this device")

    def fn(lib):
        f = lib
        for part in name.split("."):
            f = getattr(f, part)
        return f

    x = torch.tensor(SPECIAL_EDGES, dtype=getattr(torch, dtype), requires_grad=True)
    expected = fn(torch)(x)
    y = clgrad.tensor(SPECIAL_EDGES, dtype=getattr(clgrad, dtype), device=device)
    got = fn(clgrad)(y.requires_grad_())
    wide = device == "cpu" or clgrad.device(device).supports(clgrad.float64)
    rtol = 2e-6 if wide else 1e-4  # (computed in float32 without float64: lgamma(-2.5) 3e-5)
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), expected.detach().numpy(), rtol=rtol, atol=1e-30
    )
    if name == "special.log_ndtr":
        finite = [i for i, v in enumerate(SPECIAL_EDGES) if abs(v) < 1e3]
        expected.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(
            y.grad.cpu().numpy()[finite], x.grad.numpy()[finite], rtol=1e-3, atol=1e-30
        )
