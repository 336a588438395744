"""Gradients of an op's value arguments, compared with PyTorch: a 0-d tensor filled into many
places (index_fill with a repeated index gets each place once), and a 0-d cpu tensor that joins
an op on an OpenCL device (its gradient comes back to the cpu); forward AD's refusal of complex
primals."""

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


CPU_SCALAR_USES = {
    "mul": lambda lib, x, v: x * v,
    "add": lambda lib, x, v: x + v,
    "where": lambda lib, x, v: lib.where(x > 0, v, x),
    "lerp": lambda lib, x, v: lib.lerp(x, x * 2, v),
    "clamp": lambda lib, x, v: lib.clamp(x, v, None),
    "addcmul": lambda lib, x, v: lib.addcmul(x, x, v),
    "through a cpu op": lambda lib, x, v: x * (v * 3).exp(),
    "index_fill": lambda lib, x, v: x.index_fill(0, lib.tensor([1, 1], device=x.device), v),
}


@pytest.mark.parametrize("use", CPU_SCALAR_USES)
def test_cpu_scalar_gradient_comes_back_to_the_cpu(cl_device, use):
    # a 0-d cpu tensor joins an op on the device; its gradient (and what its hooks see) is on
    # the cpu, as PyTorch's engine moves it: it arrived on the device and assigning it raised
    fn = CPU_SCALAR_USES[use]
    x0 = np.array([0.5, -1.0, 2.0], np.float32)
    got = []
    v = clgrad.tensor(0.25, requires_grad=True)
    v.register_hook(lambda g: got.append(str(g.device)))
    fn(clgrad, clgrad.tensor(x0, device=cl_device), v).sum().backward()
    t = torch.tensor(0.25, requires_grad=True)
    fn(torch, torch.tensor(x0), t).sum().backward()
    assert v.grad.device == "cpu" and got == ["cpu"]
    np.testing.assert_allclose(v.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    (g,) = clgrad.autograd.grad(fn(clgrad, clgrad.tensor(x0, device=cl_device), v).sum(), v)
    assert g.device == "cpu"


def test_cpu_scalar_second_derivative(cl_device):
    x = clgrad.tensor([1.0, 2.0], device=cl_device)
    v = clgrad.tensor(0.5, requires_grad=True)
    (g,) = clgrad.autograd.grad((x * v * v).sum(), v, create_graph=True)
    assert g.device == "cpu" and g.item() == 3.0  # 2 v sum(x)
    g.backward()
    assert v.grad.device == "cpu" and v.grad.item() == 6.0


def test_forward_ad_of_a_complex_primal_says_it_is_not_supported():
    # it said "Expected primal to be floating point or complex, but got: complex64"
    import clgrad.autograd.forward_ad as fw

    with fw.dual_level(), pytest.raises(NotImplementedError, match="complex primal"):
        fw.make_dual(clgrad.tensor([1j]), clgrad.tensor([1j]))
