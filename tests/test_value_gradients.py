"""Gradients of an op's value arguments, compared with PyTorch: a 0-d tensor filled into many
places (index_fill with a repeated index gets each place once)."""

from __future__ import annotations

import numpy as np
import pytest

import clgrad

torch = pytest.importorskip("torch")


def _index_fill_grads(lib, device, x, index, dim):
    kw = {} if lib is torch else {"device": device}
    a = lib.tensor(x, requires_grad=True, **kw)
    value = lib.tensor(1.5, requires_grad=True, **kw)
    weights = lib.arange(float(x.size), **kw).reshape(x.shape)
    out = a.index_fill(dim, lib.tensor(index, dtype=lib.int64, **kw), value)
    (out * weights).sum().backward()
    return [t.detach().cpu().numpy() for t in (out, a.grad, value.grad)]


@pytest.mark.parametrize(
    "index, dim", [([0, 2, 2, 4, 1], -1), ([3, 3], 0), ([1], 0), ([], 1)], ids=str
)
def test_index_fill_value_gradient_counts_each_filled_place_once(device, index, dim):
    # PyTorch's formula sums the gradient over the unique index: a slice named twice is
    # filled once, and the value's gradient must not count it twice
    x = np.random.default_rng(0).standard_normal((5, 5)).astype(np.float32)
    got = _index_fill_grads(clgrad, device, x, index, dim)
    want = _index_fill_grads(torch, device, x, index, dim)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
