"""nn.utils.parametrize against torch's on every device: the original keeps its identity (an
optimizer made before the registration trains it), assignment through right_inverse, cached(),
a right_inverse that raises NotImplementedError, buffers, chained parametrizations, the
errors, remove_parametrizations, type_before_parametrizations and transfer."""

import numpy as np
import pytest
import torch

import clgrad


def _classes(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()

    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * 3

        def right_inverse(self, y):
            return y / 3

    class NoInverse(lib.nn.Module):
        def forward(self, x):
            return x + 1

        def right_inverse(self, y):
            raise NotImplementedError

    class Reshape(lib.nn.Module):
        def forward(self, x):
            return x.flatten()

    return Symmetric, Scale, NoInverse, Reshape


W = np.arange(9, dtype=np.float32).reshape(3, 3) / 10


def _run(lib, device):
    P = lib.nn.utils.parametrize
    Symmetric, Scale, NoInverse, Reshape = _classes(lib)
    seen = []
    layer = lib.nn.Linear(3, 3).to(device)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(W, device=device))
        layer.bias.zero_()
    opt = lib.optim.SGD(layer.parameters(), lr=0.1)
    weight = layer.weight
    P.register_parametrization(layer, "weight", Symmetric())
    P.register_parametrization(layer, "weight", Scale())
    seen.append(layer.parametrizations.weight.original is weight)
    seen.append(layer.weight.tolist())
    layer(lib.ones(2, 3, device=device)).sum().backward()
    opt.step()
    seen.append(layer.weight.tolist())
    layer.weight = lib.eye(3, device=device) * 6
    seen.append(layer.parametrizations.weight.original.tolist())
    with P.cached():
        seen.append(layer.weight is layer.weight)
    seen.append(layer.weight is layer.weight)
    seen.append(type(layer).__name__)
    seen.append(P.type_before_parametrizations(layer).__name__)
    seen.append(sorted(layer.state_dict()))
    # a buffer, and a right_inverse that raises NotImplementedError (the identity)
    bn = lib.nn.BatchNorm1d(3).to(device)
    P.register_parametrization(bn, "running_var", NoInverse())
    seen.append(bn.running_var.tolist())
    seen.append(sorted(bn.state_dict()))
    for call in (
        lambda: P.register_parametrization(lib.nn.Linear(3, 3), "weight", Reshape()),
        lambda: P.register_parametrization(lib.nn.Linear(3, 3), "nothing", Scale()),
        lambda: P.remove_parametrizations(lib.nn.Linear(3, 3), "weight"),
    ):
        with pytest.raises(ValueError) as e:
            call()
        seen.append(str(e.value).split("\n")[0])
    unsafe = lib.nn.Linear(3, 3)
    P.register_parametrization(unsafe, "weight", Reshape(), unsafe=True)
    seen.append(list(unsafe.weight.shape))
    other = P.transfer_parametrizations_and_params(layer, lib.nn.Linear(3, 3).to(device))
    seen.append(other.weight.tolist())
    P.remove_parametrizations(layer, "weight")
    seen.append([layer.weight is weight, type(layer).__name__])
    seen.append(layer.weight.tolist())
    return seen


def test_parametrize_as_torch(device):
    ours, theirs = _run(clgrad, device), _run(torch, "cpu")
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, list) and b and isinstance(b[0], (list, float)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b
