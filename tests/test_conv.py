"""Convolutions through the unfold (im2col) and fold (col2im) kernels against PyTorch on every
test device: the geometries each kernel treats apart (padding runs at both ends of a row,
strides and dilations, rows wider than one fold work-item's chunk, 1-d to 3-d, groups,
transposed), every float dtype, strided inputs, empty batches, and gradients of gradients."""

import numpy as np
import pytest
import torch
from conftest import DEVICES, supports
from torch_helper import Input, compare

import clgrad
from clgrad.autograd import gradcheck, gradgradcheck


def fn(name):
    """``lambda t, *xs, **kw: t.nn.functional.<name>(*xs, **kw)`` with the options bound."""

    def make(**kw):
        return lambda t, *xs: getattr(t.nn.functional, name)(*xs, **kw)

    return make


conv1d, conv2d, conv3d = fn("conv1d"), fn("conv2d"), fn("conv3d")
conv_t1d, conv_t2d = fn("conv_transpose1d"), fn("conv_transpose2d")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_conv2d_dtypes_and_layouts(dtype):
    # the bench's 3x3 "same" convolution: both padding runs of every row, every layout
    shapes = [(2, 3, 6, 7), (4, 3, 3, 3), (4,)]
    tol = dict(atol=1e-2, rtol=1e-2, grad_atol=5e-2, grad_rtol=5e-2) if dtype == "float16" else {}
    compare(conv2d(padding=1), *[Input(s, dtype) for s in shapes], **tol)


@pytest.mark.parametrize(
    "f, shapes",
    [
        # rows wider than a fold chunk (32), with a stride and a dilation along them
        (conv2d(stride=(1, 2), padding=(2, 3), dilation=(1, 2)), [(1, 2, 5, 75), (3, 2, 3, 4)]),
        # an even kernel's "same" padding: one more zero after than before
        (conv2d(padding="same"), [(2, 2, 5, 40), (3, 2, 2, 4)]),
        # windows that never reach the last columns (stride larger than the kernel)
        (conv2d(stride=3), [(1, 2, 8, 8), (2, 2, 2, 2)]),
        (conv1d(stride=2, padding=3, dilation=3), [(2, 3, 70), (4, 3, 4)]),
        (
            conv3d(stride=(2, 1, 2), padding=(1, 0, 2), dilation=(1, 2, 1)),
            [(2, 2, 5, 6, 7), (3, 2, 2, 2, 3)],
        ),
        (conv2d(groups=4, padding=1), [(2, 4, 5, 6), (8, 1, 3, 3)]),  # depthwise
        (conv2d(groups=2, stride=2), [(2, 4, 6, 5), (6, 2, 1, 1)]),  # 1x1, strided
        # the fold is the forward here: every output element gathers from several inputs
        (
            conv_t2d(stride=(2, 3), padding=(1, 2), output_padding=(1, 2), dilation=(2, 1)),
            [(2, 3, 4, 13), (3, 2, 3, 4)],
        ),
        (conv_t1d(stride=3, padding=2, groups=2, dilation=2), [(2, 4, 30), (4, 3, 5)]),
        (conv_t2d(stride=1, padding=1), [(1, 2, 4, 40), (2, 3, 3, 3)]),
    ],
)
@pytest.mark.filterwarnings("ignore:Using padding=.same.")
def test_geometries(f, shapes):
    compare(f, *shapes)


def test_empty_batch():
    compare(conv2d(padding=1), (0, 3, 5, 5), (2, 3, 3, 3), (2,))
    compare(conv_t2d(stride=2), (0, 3, 4, 4), (3, 2, 3, 3))


def test_unfold_fold():
    compare(
        fn("unfold")(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(1, 2)),
        (2, 3, 6, 40),
    )
    compare(
        fn("fold")(
            output_size=(6, 40), kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(1, 2)
        ),
        (2, 18, 140),
    )
    compare(fn("fold")(output_size=(3, 4), kernel_size=2), (6, 6))  # unbatched


def test_gradgradcheck(device):
    dt = clgrad.float64 if supports(device, clgrad.float64) else clgrad.float32
    tol = {} if dt is clgrad.float64 else dict(eps=1e-2, atol=5e-2, rtol=5e-2)
    rng = np.random.default_rng(0)

    def t(*shape):
        return clgrad.tensor(rng.standard_normal(shape), dtype=dt, device=device).requires_grad_()

    x, w = t(1, 2, 4, 5), t(4, 1, 2, 3)
    f = lambda x, w: clgrad.nn.functional.conv2d(x, w, stride=(1, 2), padding=1, groups=2)  # noqa: E731
    assert gradcheck(f, (x, w), **tol)
    assert gradgradcheck(f, (x, w), **tol)
    g = lambda x, w: clgrad.nn.functional.conv_transpose1d(x, w, stride=2, padding=1)  # noqa: E731
    assert gradgradcheck(g, (t(1, 2, 4), t(2, 2, 3)), **tol)


def test_matches_torch_at_bench_size():
    # a size whose unfold and matmul take the device's fast paths (the direct micro-kernel)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 16, 18, 18), dtype=np.float32)
    w = rng.standard_normal((32, 16, 3, 3), dtype=np.float32)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    for device in DEVICES:
        got = clgrad.nn.functional.conv2d(
            clgrad.tensor(x, device=device), clgrad.tensor(w, device=device), padding=1
        )
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "pool",
    [
        dict(kernel_size=2),  # windows that tile the image: window_put's gradient
        dict(kernel_size=3, stride=2, padding=1),  # overlapping windows
        dict(kernel_size=(9, 8)),  # a window too big to unroll: loops over its sizes
    ],
)
def test_max_pool_long_index(pool, monkeypatch):
    """The pooling kernels split a window's index with 64-bit arithmetic where an offset may
    pass 2^31 (as % and /, not a multiply and a shift): forced on small images, on contiguous,
    transposed and stepped inputs."""
    from clgrad.backend.opencl import conv

    monkeypatch.setattr(conv, "index_type", lambda *extents: "long")
    compare(fn("max_pool2d")(**pool), (2, 3, 19, 20))
