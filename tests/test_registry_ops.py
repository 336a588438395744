"""Every op declared in ``clgrad.ops.registry``, against PyTorch, for free.

For each elementwise op and reduction, on every test device and in every dtype the entry
accepts: ``torch.<name>`` against ``clgrad.<name>`` (values, dtype, shape, errors), the method
``Tensor.<name>``, gradients of floating inputs where the op is differentiable, the in-place
``Tensor.<name>_`` where declared, and for float64 ``clgrad.autograd.gradcheck`` where the
device runs float64. Inputs are drawn from the entry's ``domain`` ((-3, 3) when None).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_helper import DIFFERENTIABLE, FLOATS, Input, case, compare, mask, per_device

import clgrad

registry = pytest.importorskip("clgrad.ops.registry")

# operand shapes by arity: they broadcast to (3, 4)
SHAPES = {1: [(3, 4)], 2: [(3, 4), (4,)], 3: [(3, 4), (4,), (3, 1)]}

# (name, dtype name, form) -> reason; form is "forward", "method", "inplace" or "gradcheck",
# or (name, dtype) for every form
_NO_INPLACE_DERIVATIVE = (
    "torch has no derivative for the in-place form (asinh_, acosh_, atanh_: 'not implemented'); "
    "clgrad's in-place forms differentiate as the others do"
)
XFAIL: dict[tuple, object] = {
    **{
        (name, d, "inplace"): _NO_INPLACE_DERIVATIVE
        for name in ("asinh", "acosh", "atanh")
        for d in DIFFERENTIABLE
    },
}


def _torch_function(name):
    """``torch.<name>``, or ``torch.nn.functional.<name>`` where torch has it only there
    (gelu, silu, softplus)."""
    fn = getattr(torch, name, None)
    return fn if fn is not None else getattr(torch.nn.functional, name)


def _domain(op):
    return op.domain if op.domain is not None else (-3, 3)


def _inputs(op, dtype, shapes=None):
    lo, hi = _domain(op)
    shapes = shapes or SHAPES[op.arity]
    out = []
    for i, shape in enumerate(shapes):
        if i == 0 and getattr(op, "mask_first", False):
            out.append(mask(shape))
        else:
            out.append(Input(shape, dtype.name, lo, hi, nonzero=op.name in DIVIDING and i == 1))
    return out


DIVIDING = {"div", "floor_divide", "remainder", "true_divide"}


def _reason(name, dtype, form):
    return XFAIL.get((name, dtype, form), XFAIL.get((name, dtype)))


def _cases(table, forms):
    return per_device(
        [
            case(
                op.name,
                dt.name,
                form,
                id=f"{op.name}-{dt.name}-{form}",
                xfail=_reason(op.name, dt.name, form),
            )
            for op in table.values()
            for dt in op.dtypes
            for form in forms
            if form != "inplace" or op.inplace
        ]
    )


@pytest.mark.parametrize(
    "dev, name, dtype, form", _cases(registry.ELEMENTWISE, ("forward", "method", "inplace"))
)
def test_elementwise_op(dev, name, dtype, form):
    op = registry.ELEMENTWISE[name]
    dt = getattr(clgrad, dtype)
    inputs = _inputs(op, dt)
    if form == "forward":  # torch.<name>(...) and clgrad.<name>(...), gradients included
        compare(
            lambda *xs: getattr(clgrad, name)(*xs),
            *inputs,
            torch_fn=lambda *xs: _torch_function(name)(*xs),
            grad=op.differentiable,
            devices=[dev],
        )
    elif form == "method":  # Tensor.<name>; the mask of ``where`` is its first argument

        def fn(*xs):
            if getattr(op, "mask_first", False):  # where(cond, x, y) is x.where(cond, y)
                cond, x, *rest = xs
                return getattr(x, name)(cond, *rest)
            return getattr(xs[0], name)(*xs[1:])

        def torch_fn(*xs):
            return fn(*xs) if hasattr(torch.Tensor, name) else _torch_function(name)(*xs)

        compare(
            fn,
            *inputs,
            torch_fn=torch_fn,
            grad=op.differentiable,
            devices=[dev],
            layouts=["contiguous"],
        )
    else:  # Tensor.<name>_: into a (strided) tensor, and into a clone that carries gradients
        compare(lambda x, *r: getattr(x, name + "_")(*r), *inputs, grad=False, devices=[dev])
        compare(
            lambda x, *r: getattr(x.clone(), name + "_")(*r),
            *inputs,
            grad=op.differentiable,
            devices=[dev],
            layouts=["contiguous"],
        )


@pytest.mark.parametrize(
    "dev, name, dtype, form", _cases(registry.REDUCTIONS, ("all", "dim", "keepdim", "method"))
)
def test_reduction_op(dev, name, dtype, form):
    op = registry.REDUCTIONS[name]
    dt = getattr(clgrad, dtype)
    (x,) = _inputs(op, dt, [(3, 4, 2)])
    fn = {
        "all": lambda t, x: getattr(t, name)(x),
        "dim": lambda t, x: getattr(t, name)(x, 1),
        "keepdim": lambda t, x: getattr(t, name)(x, -1, keepdim=True),
        "method": lambda x: getattr(x, name)(0),
    }[form]
    compare(fn, x, grad=op.differentiable, devices=[dev])


# ops that record a node whose backward raises, as PyTorch's (no finite differences to match)
NO_DERIVATIVE = {"floor_divide"}


def _gradcheck_cases(table):
    return per_device(
        [
            case(op.name, id=op.name, xfail=_reason(op.name, "float64", "gradcheck"))
            for op in table.values()
            if op.differentiable and clgrad.float64 in op.dtypes and op.name not in NO_DERIVATIVE
        ]
    )


def test_floor_division_gradients_match_torch(device):
    """``x // y`` records a node whose backward raises (PyTorch has no formula for it), while
    ``div(..., rounding_mode="floor")`` gives both operands a zero gradient, as in torch."""
    x, y = np.array([-3.5, 2.5, 7.0], np.float32), np.array([2.0, -1.5, 2.0], np.float32)
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        a = lib.tensor(x, device=dev, requires_grad=True)
        b = lib.tensor(y, device=dev, requires_grad=True)
        q = a // b
        assert q.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide"):
            q.sum().backward()
        q = lib.div(a, b, rounding_mode="floor")
        assert type(q.grad_fn).__name__ == "DivBackward2"
        (q * 3).sum().backward()
        assert a.grad.tolist() == b.grad.tolist() == [0.0, 0.0, 0.0]
        assert q.tolist() == [-2.0, -2.0, 3.0]
        a.grad = None
        lib.div(a, 2, rounding_mode="floor").sum().backward()
        assert a.grad.tolist() == [0.0, 0.0, 0.0]
        assert not (lib.tensor([-7, 7], device=dev) // 2).requires_grad


def _float64_device(dev):
    if not clgrad.device(dev).supports(clgrad.float64):
        pytest.skip(f"{dev} has no float64")


def _gradcheck_inputs(op, dev, shapes):
    rng = np.random.default_rng(0)
    out = []
    for spec in _inputs(op, clgrad.float64, shapes):
        a = spec.sample(rng)
        needs = spec.dtype in FLOATS
        out.append(clgrad.tensor(a, device=dev, requires_grad=needs))
    return out


@pytest.mark.parametrize("dev, name", _gradcheck_cases(registry.ELEMENTWISE))
def test_elementwise_gradcheck(dev, name):
    _float64_device(dev)
    op = registry.ELEMENTWISE[name]
    shapes = {1: [(2, 3)], 2: [(2, 3), (3,)], 3: [(2, 3), (3,), (2, 1)]}[op.arity]
    inputs = _gradcheck_inputs(op, dev, shapes)
    if name in NO_DERIVATIVE:  # recorded, and backward refuses, as torch's
        with pytest.raises(RuntimeError, match="not implemented"):
            getattr(clgrad, name)(*inputs).sum().backward()
        return
    assert clgrad.autograd.gradcheck(lambda *xs: getattr(clgrad, name)(*xs), inputs)


# ops torch records without a derivative formula: their backward raises
NO_DERIVATIVE = {"heaviside"}


@pytest.mark.parametrize("dev, name", _gradcheck_cases(registry.REDUCTIONS))
def test_reduction_gradcheck(dev, name):
    _float64_device(dev)
    op = registry.REDUCTIONS[name]
    (x,) = _gradcheck_inputs(op, dev, [(2, 3)])
    assert clgrad.autograd.gradcheck(lambda x: getattr(clgrad, name)(x, 1), [x])
    assert clgrad.autograd.gradcheck(lambda x: getattr(clgrad, name)(x), [x])


def test_registry_is_populated():
    assert registry.ELEMENTWISE and registry.REDUCTIONS
    for op in [*registry.ELEMENTWISE.values(), *registry.REDUCTIONS.values()]:
        assert op.arity in (1, 2, 3), op.name
        assert op.dtypes and all(isinstance(d, clgrad.dtype) for d in op.dtypes), op.name
        assert op.domain is None or len(op.domain) == 2, op.name
        assert hasattr(clgrad, op.name) and hasattr(clgrad.Tensor, op.name), op.name
        if op.inplace:
            assert hasattr(clgrad.Tensor, op.name + "_"), op.name


def test_checks_kept_by_type_still_read_each_number():
    """An op's checks pass once per kind of operands (dtypes, shapes, number types) and are
    kept; the Python numbers' range is still checked on every call, and a failing call still
    raises after passing ones, as torch."""
    for m in (torch, clgrad):
        x = m.tensor([1, 2], dtype=m.int8)
        x.pow_(2)
        with pytest.raises(RuntimeError, match="without overflow"):
            x.pow_(2**40)
        x.clamp_(0, 100)
        with pytest.raises(RuntimeError, match="without overflow"):
            x.clamp_(0, 1000)
        assert x.tolist() == [1, 4]
        u, mask = m.tensor([1, 2], dtype=m.uint8), m.tensor([True, False])
        assert m.where(mask, 5, u).tolist() == [5, 2]
        with pytest.raises(RuntimeError, match="without overflow"):
            m.where(mask, 300, u)
        assert m.where(mask, -1, u).tolist() == [255, 2]  # -max..-1 wrap, as c10::overflows
        b = m.tensor([True, False])
        with pytest.raises(RuntimeError):
            x.sub_(b)
        with pytest.raises(RuntimeError):
            x.sub_(b)
