"""interpolate with ``antialias=True`` (bilinear, bicubic and torch 2.13's Lanczos-3), as
PyTorch's ``_upsample_*_aa`` kernels (PIL's resize): down- and upscaling, align_corners, both
float types, values and gradients against torch on every test device; and torch's refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad

SIZES = [((32, 32), (8, 8)), ((30, 20), (7, 13)), ((8, 8), (20, 20)), ((16, 9), (16, 3))]


@pytest.mark.parametrize("sizes", SIZES, ids=str)
@pytest.mark.parametrize(
    "mode, align_corners",
    [
        ("bilinear", False),
        ("bilinear", True),
        ("bicubic", False),
        ("bicubic", True),
        ("lanczos", False),
    ],
)
def test_antialiased_resize_matches_torch(sizes, mode, align_corners, device):
    (h, w), size = sizes
    a = np.random.default_rng(0).standard_normal((2, 3, h, w)).astype(np.float32)
    x = torch.tensor(a, requires_grad=True)
    expected = torch.nn.functional.interpolate(
        x, size=size, mode=mode, align_corners=align_corners, antialias=True
    )
    cotangent = np.random.default_rng(1).standard_normal(expected.shape).astype(np.float32)
    expected.backward(torch.tensor(cotangent))
    y = clgrad.tensor(a, device=device, requires_grad=True)
    got = clgrad.nn.functional.interpolate(
        y, size=size, mode=mode, align_corners=align_corners, antialias=True
    )
    got.backward(clgrad.tensor(cotangent, device=device))
    np.testing.assert_allclose(got.detach().cpu().numpy(), expected.detach().numpy(), atol=2e-5)
    np.testing.assert_allclose(y.grad.cpu().numpy(), x.grad.numpy(), atol=2e-5)


def test_antialiased_scale_factor_float64():
    a = np.random.default_rng(2).standard_normal((1, 2, 10, 10))
    expected = torch.nn.functional.interpolate(
        torch.tensor(a), scale_factor=0.37, mode="bicubic", antialias=True
    )
    got = clgrad.nn.functional.interpolate(
        clgrad.tensor(a), scale_factor=0.37, mode="bicubic", antialias=True
    )
    assert got.dtype is clgrad.float64 and tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


REFUSALS = [
    ((1, 1, 4, 4), dict(mode="nearest", antialias=True)),
    ((1, 1, 4), dict(mode="linear", antialias=True)),
    ((1, 1, 4), dict(mode="lanczos", antialias=True)),
    ((1, 1, 4, 4), dict(mode="lanczos")),
    ((1, 1, 4, 4), dict(mode="lanczos", antialias=True, align_corners=True)),
]


@pytest.mark.parametrize("shape, options", REFUSALS, ids=str)
def test_refusals_as_torch(shape, options):
    size = (2,) * (len(shape) - 2)
    with pytest.raises(Exception) as expected:
        torch.nn.functional.interpolate(torch.ones(shape), size=size, **options)
    with pytest.raises(expected.type):
        clgrad.nn.functional.interpolate(clgrad.ones(shape), size=size, **options)
