"""A convolution's weight gradient as one product summed over the batch (``product_sum``):
the device kernel alone against NumPy (tails of K, chunks of batches, rows with room after
them, no stray writes), and the weight gradients of small-channel convolutions against torch,
through every device, to second order."""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest
from test_matmul_kernel import GUARD, DeviceUnderTest, upload

import clgrad
from clgrad import dtypes
from clgrad.backend.base import View
from clgrad.backend.opencl.matmul import product_sum as product_sum_kernel
from clgrad.backend.opencl.matmul import product_sum_chunks
from clgrad.ops.linalg import product_sum

torch = pytest.importorskip("torch")


@pytest.fixture
def cldev(cl_device):
    d = DeviceUnderTest(cl_device)
    yield d
    d.give_back()


def run_kernel(device, Z, G, M, N, K, dt, chunks, room=0, seed=0):
    """out (chunks, G, M, N) of the kernel, summed over the chunks, over a (Z, G, M, K) and b
    (Z, G, N, K) whose rows have ``room`` elements after them; checked for stray writes."""
    rng = np.random.default_rng(seed)
    width = K + room

    def operand(rows):
        flat = rng.uniform(-1, 1, Z * G * rows * width).astype(dt.np)
        return flat, flat.reshape(Z, G, rows, width)[..., :K]

    (fa, va), (fb, vb) = operand(M), operand(N)
    a, b = upload(device, va, fa, dt), upload(device, vb, fb, dt)
    size = chunks * G * M * N
    sentinel = np.full(size + 2 * GUARD, 77, dt.np)
    buf = device.buffer(sentinel)
    out = View(buf, GUARD, (chunks, G, M, N), (G * M * N, M * N, N, 1), dt, sentinel.nbytes)
    product_sum_kernel(device.rt, out, a, b, dt)
    host = np.empty_like(sentinel)
    cl.enqueue_copy(device.rt.queue, host, buf, is_blocking=True)
    assert (host[:GUARD] == 77).all() and (host[GUARD + size :] == 77).all(), "stray write"
    want = np.einsum("zgmk,zgnk->gmn", va.astype(np.float64), vb.astype(np.float64))
    got = host[GUARD : GUARD + size].reshape(chunks, G, M, N).astype(np.float64).sum(0)
    return got, want


@pytest.mark.parametrize(
    "Z, G, M, N, K, chunks, room",
    [
        (1, 1, 1, 1, 8, 1, 0),
        (3, 1, 4, 5, 33, 3, 0),  # a tail of K past the vectors, a chunk per batch
        (7, 1, 5, 3, 50, 3, 0),  # chunks of 3, 3, 1 batches
        (5, 1, 7, 2, 40, 8, 0),  # more chunks than batches: the last ones sum nothing
        (16, 1, 16, 9, 196, 4, 12),  # a padded column matrix's rows
        (2, 1, 10, 11, 64, 1, 5),  # blocks past M and N
        (4, 6, 1, 9, 70, 2, 3),  # groups: a depthwise convolution's
        (3, 3, 4, 5, 41, 2, 0),
    ],
)
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_kernel_against_numpy(cldev, Z, G, M, N, K, chunks, room, name):
    dt = getattr(dtypes, name)
    if not cldev.rt.device.supports(dt):
        pytest.skip(f"{cldev.rt.device} has no {name}")
    got, want = run_kernel(cldev, Z, G, M, N, K, dt, chunks, room)
    tol = (1e-5 if name == "float32" else 1e-12) * (Z * K) ** 0.5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_chunks_where_the_kernel_pays(cl_device):
    """The first convolution's shape takes the kernel on a CPU device, in chunks enough for
    its cores; a product with blocks enough for the micro-kernel, or K too short, does not."""
    rt = clgrad.device(cl_device).runtime
    chunks = product_sum_chunks(rt, 128, 1, 16, 9, 784, dtypes.float32)
    if rt.is_gpu:
        assert chunks == 0
        return
    assert 1 < chunks <= 128
    assert product_sum_chunks(rt, 128, 1, 32, 144, 196, dtypes.float32) == 0
    assert product_sum_chunks(rt, 128, 1, 16, 9, 7, dtypes.float32) == 0
    assert product_sum_chunks(rt, 128, 1, 16, 9, 784, dtypes.float16) == 0
    assert product_sum_chunks(rt, 16, 32, 1, 9, 1024, dtypes.float32) > 0  # depthwise


@pytest.mark.parametrize("z, g, m, n, k", [(6, 0, 4, 3, 40), (2, 0, 3, 2, 1), (5, 3, 1, 9, 48)])
def test_product_sum_values_and_gradients(device, z, g, m, n, k):
    """``product_sum`` (the kernel where the device has it, else a product and a sum) equals
    torch's ``(a @ b.mT).sum(0)``, with its gradients, without groups (g 0) and with."""
    rng = np.random.default_rng(1)
    groups = (g,) if g else ()
    a_np = rng.standard_normal((z, *groups, m, k))
    b_np = rng.standard_normal((z, *groups, n, k))
    g_np = rng.standard_normal((*groups, m, n))
    a = clgrad.tensor(a_np, dtype=clgrad.float32, device=device, requires_grad=True)
    b = clgrad.tensor(b_np, dtype=clgrad.float32, device=device, requires_grad=True)
    ta = torch.tensor(a_np, dtype=torch.float32, requires_grad=True)
    tb = torch.tensor(b_np, dtype=torch.float32, requires_grad=True)
    out, want = product_sum(a, b), (ta @ tb.mT).sum(0)
    assert out.shape == tuple(want.shape) and out.dtype is clgrad.float32
    np.testing.assert_allclose(
        out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5
    )
    out.backward(clgrad.tensor(g_np, dtype=clgrad.float32, device=device))
    want.backward(torch.tensor(g_np, dtype=torch.float32))
    np.testing.assert_allclose(a.grad.cpu().numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.cpu().numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "cin, cout, side, stride, padding, groups",
    [(1, 16, 28, 1, 1, 1), (3, 8, 17, 2, 1, 1), (2, 5, 12, 1, 0, 1), (8, 8, 14, 1, 1, 8)]
    + [(6, 4, 11, 2, 1, 2)],
)
def test_small_channel_conv_weight_gradient(device, cin, cout, side, stride, padding, groups):
    """The weight gradient of a first convolution (few input channels, long rows of window
    positions: the kernel's case on a CPU device), of depthwise and grouped ones, and the
    bias's, as torch's."""
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((9, cin, side, side)).astype(np.float32)
    w_np = rng.standard_normal((cout, cin // groups, 3, 3)).astype(np.float32)
    b_np = rng.standard_normal(cout).astype(np.float32)
    w = clgrad.tensor(w_np, device=device, requires_grad=True)
    bias = clgrad.tensor(b_np, device=device, requires_grad=True)
    tw = torch.tensor(w_np, requires_grad=True)
    tbias = torch.tensor(b_np, requires_grad=True)
    x = clgrad.tensor(x_np, device=device)
    out = clgrad.nn.functional.conv2d(x, w, bias, stride, padding, groups=groups)
    want = torch.nn.functional.conv2d(torch.tensor(x_np), tw, tbias, stride, padding, groups=groups)
    g_np = rng.standard_normal(tuple(want.shape)).astype(np.float32)
    out.backward(clgrad.tensor(g_np, device=device))
    want.backward(torch.tensor(g_np))
    tol = 1e-4 * (x_np.shape[0] * side * side) ** 0.5
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(bias.grad.cpu().numpy(), tbias.grad.numpy(), rtol=tol, atol=tol)


def test_conv_weight_gradient_second_order(device):
    """Gradients of the weight gradient (the kernel's Function is differentiable: a
    gradient penalty through a convolution), against finite differences."""
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")
    gen = clgrad.Generator().manual_seed(3)
    x = clgrad.randn(2, 1, 6, 6, dtype=clgrad.float64, generator=gen).to(device)
    w = clgrad.randn(3, 1, 3, 3, dtype=clgrad.float64, generator=gen).to(device)
    x.requires_grad_()
    w.requires_grad_()

    def conv(x, w):
        return clgrad.nn.functional.conv2d(x, w, padding=1)

    assert clgrad.autograd.gradgradcheck(conv, (x, w))
