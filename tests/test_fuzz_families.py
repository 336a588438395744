"""Families of differences from torch that a differential fuzzer found (random programs run in
torch and clgrad), each checked against torch on every device: the in-place operators, ops
that returned their input object, gradients at special points, decompositions' gradients and
error reporting, and edge shapes."""

import numpy as np
import pytest
import torch

import clgrad


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if isinstance(x, (torch.Tensor, clgrad.Tensor)):
        return (tuple(x.shape), str(x.dtype).split(".")[-1], x.detach().cpu().numpy())
    return x


def _same(got, want):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, tuple):
        assert got[:2] == want[:2]
        np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-5)
    else:
        assert got == want


def both(device, case):
    """``case(lib, dev)`` in torch and clgrad: the same values (or the same exception class)."""
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        try:
            results.append(("ok", _np(case(lib, dev))))
        except Exception as e:  # the class is compared below
            results.append(("raised", type(e)))
    (kind_t, want), (kind_c, got) = results
    assert kind_c == kind_t, (results[0], results[1])
    if kind_t == "raised":
        assert issubclass(got, want) or want.__name__ == got.__name__, (want, got)
    else:
        _same(got, want)


@pytest.mark.parametrize("op", ["&=", "|=", "^=", "//=", "%=", "**="])
def test_inplace_operators_write_in_place(device, op):
    """``x &= m``, ``x //= 3``, ``x **= 2``, ... write into x (its views and aliases see it)."""

    def case(lib, dev):
        x = lib.tensor([6, 5, 7], device=dev)
        alias, view = x, x[:2]
        ns = {"view": view, "x": x}
        exec(f"view {op} 3", ns)
        exec(f"x {op} 2", ns)
        return [x, alias, ns["x"] is x]

    both(device, case)


def test_inplace_ops_refuse_a_float_result_in_an_int_tensor(device):
    def floordiv(lib, dev):
        x = lib.tensor([3, 5, 7], device=dev)
        x //= 2.5
        return x

    def div_floor(lib, dev):
        return lib.tensor([3, 5, 7], device=dev).div_(2.5, rounding_mode="floor")

    def mask_and(lib, dev):
        m = lib.tensor([True, False, True], device=dev)
        alias = m
        m &= lib.tensor([True, True, False], device=dev)
        return alias

    for case in (floordiv, div_floor, mask_and):
        both(device, case)


NEW_TENSOR_OPS = {
    "pad nothing": lambda lib, x: lib.nn.functional.pad(x, (0, 0)),
    "cumprod of one": lambda lib, x: x[:, :1].cumprod(1),
    "logcumsumexp of one": lambda lib, x: x[:, :1].logcumsumexp(1),
    "cummax of one": lambda lib, x: x[:, :1].cummax(1)[0],
    "diff n=0": lambda lib, x: lib.diff(x, n=0),
    "diff of an empty dim": lambda lib, x: lib.diff(x[:, :0], dim=1),
    "x[...]": lambda lib, x: x[...],
    "x[:]": lambda lib, x: x[:],
    "expand to its shape": lambda lib, x: x.expand(2, 3),
    "broadcast_to its shape": lambda lib, x: lib.broadcast_to(x, (2, 3)),
}


@pytest.mark.parametrize("name", list(NEW_TENSOR_OPS))
def test_ops_return_a_new_tensor_not_their_input(device, name):
    """An op with nothing to do still returns a new tensor (a copy or a view, as torch's):
    writing into the result in place, or a hook on it, must not reach the leaf itself."""

    def case(lib, dev):
        w = lib.ones(2, 3, device=dev, requires_grad=True)
        x = w * 1
        y = NEW_TENSOR_OPS[name](lib, x)
        is_new = y is not x and y is not w
        y.register_hook(lambda g: g * 100)
        y.sum().backward()
        return [is_new, w.grad, y.is_leaf]

    both(device, case)
