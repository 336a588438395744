"""Vector norms of 16-bit floats sum their powers in float32, as ATen's do: a float16 vector
whose squares sum past 65504 has a finite norm (it was inf), and its gradient is finite too."""

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
