"""Kernels under a limit on a work-item's loops (``Runtime.loop_limit``): Mesa's llvmpipe stops
any work-item's loops after 65535 iterations in all, silently, so a product over a longer K or
a norm over a bigger group gave zeros and wrong numbers there. Products then add up slices of
K (``Backend.matmul_max_k``), norms take a work-group per group or Tensor ops
(``Backend.norm_fits``), softmax over rows too long for its kernels' walks takes Tensor ops
(``Backend.softmax_fits``), and a convolution's column matrix (unfold) splits its rows among
work-items.

Every OpenCL device runs these paths with a small limit set on its runtime; a device that has
the limit (llvmpipe) also runs sizes past its own, compared with PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import assert_close, supports

import clgrad
import clgrad.nn.functional as F


@pytest.fixture
def limited(cl_device, monkeypatch):
    """``cl_device`` with a loop limit of 64 iterations per work-item."""
    monkeypatch.setattr(clgrad.device(cl_device).runtime, "loop_limit", 64)
    return cl_device


def test_limit_only_on_llvmpipe(cl_device):
    d = clgrad.device(cl_device)
    expected = 65535 if "llvmpipe" in d.name.lower() else None
    assert d.runtime.loop_limit == expected


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((3, 300), (300, 5)), ((2, 3, 200), (200, 4)), ((4, 129), (129,)), ((129,), (129, 3))],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_split_k(limited, a_shape, b_shape, dtype):
    if not supports(limited, getattr(clgrad, dtype)):
        pytest.skip(f"{limited} has no {dtype}")
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, a_shape).astype(dtype)
    b = rng.integers(-3, 4, b_shape).astype(dtype)
    got = clgrad.tensor(a, device=limited) @ clgrad.tensor(b, device=limited)
    expected = torch.from_numpy(a) @ torch.from_numpy(b)
    assert_close(got, expected.numpy(), getattr(clgrad, dtype))


def test_matmul_split_k_gradients(limited):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 300), np.float32), rng.standard_normal((300, 4), np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    ca, cb, cbias = (clgrad.tensor(v, device=limited, requires_grad=True) for v in (a, b, bias))
    ta, tb, tbias = (torch.tensor(v, requires_grad=True) for v in (a, b, bias))
    clgrad.addmm(cbias, ca, cb).square().sum().backward()
    torch.addmm(tbias, ta, tb).square().sum().backward()
    for c, t in ((ca, ta), (cb, tb), (cbias, tbias)):
        assert_close(c.grad, t.grad.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape", [(2, 40), (3, 6000)])  # a work-group's walks; Tensor ops
def test_layer_norm_over_limit(limited, shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(shape[-1]).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    cx, cw = (clgrad.tensor(v, device=limited, requires_grad=True) for v in (x, w))
    tx, tw = (torch.tensor(v, requires_grad=True) for v in (x, w))
    cy = F.layer_norm(cx, shape[-1:], cw)
    ty = torch.nn.functional.layer_norm(tx, shape[-1:], tw)
    (cy * clgrad.tensor(g, device=limited)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    assert_close(cy, ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    assert_close(cx.grad, tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    assert_close(cw.grad, tw.grad.numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape", [(30, 2), (7000, 3), (4, 3, 50, 40)])
def test_batch_norm_over_limit(limited, shape):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    cx = clgrad.tensor(x, device=limited, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    c_run = clgrad.zeros(shape[1], device=limited), clgrad.ones(shape[1], device=limited)
    t_run = torch.zeros(shape[1]), torch.ones(shape[1])
    cy = F.batch_norm(cx, *c_run, training=True)
    ty = torch.nn.functional.batch_norm(tx, *t_run, training=True)
    (cy * clgrad.tensor(g, device=limited)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    assert_close(cy, ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    assert_close(cx.grad, tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    for c, t in zip(c_run, t_run):
        assert_close(c, t.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 150), dict(kernel_size=3)),  # rows of 148 > 64: split among work-items
        ((1, 2, 140), dict(kernel_size=5, stride=2, padding=3, dilation=2)),
        ((2, 2, 12, 70), dict(kernel_size=3, padding=1)),  # planes of 12 rows of 70
        ((1, 3, 9, 9), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0))),
        ((1, 1, 3, 4, 40), dict(kernel_size=2, padding=1)),
    ],
)
def test_conv_over_limit(limited, shape, kwargs):
    rng = np.random.default_rng(5)
    conv = {3: torch.nn.Conv1d, 4: torch.nn.Conv2d, 5: torch.nn.Conv3d}[len(shape)]
    torch.manual_seed(0)
    ref = conv(shape[1], 2, **kwargs)
    ours = getattr(clgrad.nn, conv.__name__)(shape[1], 2, **kwargs)
    ours.load_state_dict(
        {k: clgrad.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    )
    ours = ours.to(limited)
    x = rng.standard_normal(shape).astype(np.float32)
    cx = clgrad.tensor(x, device=limited, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    cy, ty = ours(cx), ref(tx)
    g = rng.standard_normal(ty.shape).astype(np.float32)
    (cy * clgrad.tensor(g, device=limited)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    assert_close(cy, ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    assert_close(cx.grad, tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert_close(ours.weight.grad, ref.weight.grad.numpy(), rtol=1e-4, atol=1e-3)


INF, NAN = float("inf"), float("nan")
SPECIAL_ROWS = [
    [1, 2, 3],
    [INF, 1, 2],
    [-INF, -INF, -INF],
    [INF, INF, 1],
    [NAN, 1, 2],
    [-INF, 0, 1],
]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(
    "values, dim",
    [
        (np.random.default_rng(6).standard_normal((30, 4)), 0),  # a work-item per row
        (np.random.default_rng(7).standard_normal((3, 3000)), 1),  # a work-group per row
        (np.random.default_rng(8).standard_normal((2, 25, 3)), 1),
        (np.array(SPECIAL_ROWS), 1),
        (np.array(SPECIAL_ROWS), 0),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax_over_limit(limited, name, values, dim, dtype):
    x = values.astype(dtype)
    g = np.random.default_rng(9).standard_normal(x.shape).astype(dtype)
    cx = clgrad.tensor(x, device=limited, requires_grad=True)
    tx = torch.tensor(x.astype(np.float32), requires_grad=True)
    cy = getattr(clgrad, name)(cx, dim)
    ty = getattr(torch, name)(tx, dim)
    (cy * clgrad.tensor(g, device=limited)).sum().backward()
    (ty * torch.tensor(g.astype(np.float32))).sum().backward()
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=2e-2, atol=2e-2)
    assert cy.dtype == getattr(clgrad, dtype)
    np.testing.assert_allclose(cy.detach().cpu().numpy().astype(np.float32), ty.detach(), **tol)
    np.testing.assert_allclose(cx.grad.cpu().numpy().astype(np.float32), tx.grad, **tol)


def test_past_the_devices_own_limit(cl_device):
    """Sizes past llvmpipe's real limit, where a device has one."""
    d = clgrad.device(cl_device)
    if d.runtime.loop_limit is None:
        pytest.skip(f"{cl_device} does not limit its loops")
    rng = np.random.default_rng(4)
    a, b = rng.random((2, 140_000), np.float32), rng.random((140_000, 2), np.float32)
    got = clgrad.tensor(a, device=d) @ clgrad.tensor(b, device=d)
    assert_close(got, a.astype(np.float64) @ b, rtol=1e-4, atol=0)
    x = rng.random((22_000, 2), np.float32)
    got = F.batch_norm(clgrad.tensor(x, device=d), None, None, training=True)
    ref = torch.nn.functional.batch_norm(torch.from_numpy(x), None, None, training=True)
    assert_close(got, ref.numpy(), rtol=1e-4, atol=1e-4)
    # a column matrix of 300 x 300 positions (a plane per work-item on CPU devices) and of a
    # row of 70,000
    for shape in ((1, 1, 300, 300), (1, 1, 70_000)):
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal((2, 1) + (3,) * (len(shape) - 2)).astype(np.float32)
        conv = F.conv2d if len(shape) == 4 else F.conv1d
        tconv = getattr(torch.nn.functional, conv.__name__)
        got = conv(clgrad.tensor(x, device=d), clgrad.tensor(w, device=d))
        assert_close(
            got, tconv(torch.from_numpy(x), torch.from_numpy(w)).numpy(), rtol=1e-4, atol=1e-4
        )
    # softmax along a dim of 70,000 rows: a work-item per row walks it three times
    x = rng.standard_normal((70_000, 2)).astype(np.float32)
    for name in ("softmax", "log_softmax"):
        got = getattr(clgrad, name)(clgrad.tensor(x, device=d), 0)
        ref = getattr(torch, name)(torch.from_numpy(x), 0)
        assert_close(got, ref.numpy(), rtol=1e-4, atol=1e-6)
