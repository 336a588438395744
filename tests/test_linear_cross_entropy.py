"""``nn.functional.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` (PyTorch 2.13) against torch on every device: values,
gradients and exception classes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_helper import Input, compare

import clgrad

RNG = np.random.default_rng(0)
TARGETS = Input(values=RNG.integers(0, 5, 6), dtype="int64")
TARGETS_K = Input(values=RNG.integers(0, 5, (6, 2)), dtype="int64")
PROBS = Input(values=RNG.random((6, 5)).astype("float32"))
CLASS_WEIGHTS = Input(values=RNG.random(5).astype("float32") + 0.5)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x, w, y),
            [(6, 4), (5, 4), TARGETS],
        ),
        (
            lambda t, x, w, y, b: t.nn.functional.linear_cross_entropy(
                x, w, y, linear_bias=b, reduction="sum"
            ),
            [(6, 4), (5, 4), TARGETS, (5,)],
        ),
        (
            lambda t, x, w, y, cw: t.nn.functional.linear_cross_entropy(
                x, w, y, weight=cw, reduction="none", ignore_index=2
            ),
            [(6, 4), (5, 4), TARGETS, CLASS_WEIGHTS],
        ),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x, w, y, label_smoothing=0.2),
            [(6, 4), (5, 4), TARGETS],
        ),
        (lambda t, x, w, p: t.nn.functional.linear_cross_entropy(x, w, p), [(6, 4), (5, 4), PROBS]),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x, w, y),
            [(6, 4), (5, 2, 4), TARGETS_K],
        ),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x[0], w, y[0]),
            [(6, 4), (5, 4), TARGETS],
        ),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(
                x, w, y, options=t.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
            ),
            [(6, 4), (5, 4), TARGETS],
        ),
        # PyTorch's refusals
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x, w, y),
            [(6, 4), (5, 3), TARGETS],
        ),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x, w, y),
            [(1, 6, 4), (5, 4), TARGETS],
        ),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(x[0], w, y[0]),
            [(6, 4), (5, 2, 4), TARGETS_K],
        ),
        (
            lambda t, x, w, p: t.nn.functional.linear_cross_entropy(x, w, p, ignore_index=1),
            [(6, 4), (5, 4), PROBS],
        ),
        (
            lambda t, x, w, y: t.nn.functional.linear_cross_entropy(
                x, w, y, options=t.nn.LinearCrossEntropyOptions(acc_policy="fastest")
            ),
            [(6, 4), (5, 4), TARGETS],
        ),
    ],
)
def test_linear_cross_entropy(fn, inputs):
    compare(fn, *inputs)


@pytest.mark.parametrize(
    "options",
    [dict(), dict(out_features=(2,), bias=True), dict(bias=True, reduction="sum", ignore_index=1)],
)
def test_module(device, options):
    torch.manual_seed(0)
    ref = torch.nn.LinearCrossEntropyLoss(4, 5, **options)
    ours = clgrad.nn.LinearCrossEntropyLoss(4, 5, **options)
    ours.load_state_dict(
        {k: clgrad.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    )
    ours.to(device)
    assert list(ours.state_dict()) == list(ref.state_dict())
    assert repr(ours) == repr(ref)
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    target = RNG.integers(0, 5, (6, *options.get("out_features", ())))
    got = ours(clgrad.tensor(x, device=device), clgrad.tensor(target, device=device))
    expected = ref(torch.tensor(x), torch.tensor(target))
    got.backward()
    expected.backward()
    np.testing.assert_allclose(got.item(), expected.item(), rtol=1e-5)
    np.testing.assert_allclose(
        ours.linear.weight.grad.cpu().numpy(), ref.linear.weight.grad.numpy(), rtol=1e-4, atol=1e-6
    )


@pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])
def test_module_refusals(lib):
    with pytest.raises(RuntimeError):
        lib.nn.LinearCrossEntropyLoss(4, 5, weight=lib.ones(3))
    with pytest.raises(RuntimeError):
        lib.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5)
