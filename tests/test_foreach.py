"""torch._foreach_* overloads that torch refuses or promotes, compared with torch on every test
device (the programs of tests/test_tutorial_programs2.py cover the common forms): a 1-d tensor
where a scalar is meant, a float result in place into an int tensor, a number base for pow, a
list mixing tensors and numbers."""

from __future__ import annotations

import pytest
import torch

import clgrad

CASES = {
    "add 1-d tensor": lambda L, x, d: L._foreach_add(x, L.tensor([2.0], **d)),
    "sub 1-d tensor": lambda L, x, d: L._foreach_sub(x, L.tensor([2.0], **d)),
    "div 1-d tensor": lambda L, x, d: L._foreach_div(x, L.tensor([2.0], **d)),
    "div 0-d tensor": lambda L, x, d: L._foreach_div(x, L.tensor(2.0, **d)),
    "maximum 1-d tensor": lambda L, x, d: L._foreach_maximum(x, L.tensor([2.0], **d)),
    "maximum 0-d tensor": lambda L, x, d: L._foreach_maximum(x, L.tensor(2.0, **d)),
    "pow 1-d tensor": lambda L, x, d: L._foreach_pow(x, L.tensor([2.0], **d)),
    "lerp 0-d weight": lambda L, x, d: L._foreach_lerp(x, x, L.tensor(0.5, **d)),
    "lerp 1-d weight": lambda L, x, d: L._foreach_lerp(x, x, L.tensor([0.5], **d)),
    "maximum_ float into int": lambda L, x, d: L._foreach_maximum_([L.tensor([3, 5], **d)], 4.5),
    "pow of a number": lambda L, x, d: L._foreach_pow(2.0, [L.tensor([3, 4], **d)]),
    "mixed list": lambda L, x, d: L._foreach_mul(x, [x[0], 1.0]),
}


def _outcome(lib, device, case):
    kw = {} if lib is torch else {"device": device}
    x = [lib.ones(2, **kw)]
    try:
        result = CASES[case](lib, x, kw)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__
    return [(t.tolist(), str(t.dtype).rpartition(".")[2]) for t in result]


@pytest.mark.parametrize("case", CASES)
def test_foreach_forms_as_torch(device, case):
    assert _outcome(clgrad, device, case) == _outcome(torch, "cpu", case)
