"""Patterns of tutorial and course programs that clgrad ran differently from PyTorch, each run
with both libraries on every device: the same shapes, dtypes, values and exceptions."""

import numpy as np
import pytest

import clgrad

torch = pytest.importorskip("torch")


def _outcome(fn):
    """What ``fn()`` gives: its result as NumPy values, or the class of what it raised."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the class is compared with torch's
        return type(e).__name__
    return r


@pytest.mark.parametrize(
    "in_shape, grad_shape",
    [((), (5, 1)), ((3,), (2, 3)), ((3, 1), (3, 4)), ((1,), (3,)), ((1,), (1, 1))]
    + [((3,), ()), ((3,), (1,)), ((2, 3), (3,)), ((3,), (4,))],
)
def test_function_gradient_of_a_broadcast_shape(device, in_shape, grad_shape):
    # a backward that leaves a broadcast undone (an input scale times a batch) hands back the
    # batch's shape: PyTorch's engine sums it to the input's shape, any other shape is refused
    def run(lib, dev):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, s):
                ctx.save_for_backward(x, s)
                return x * s

            @staticmethod
            def backward(ctx, g):
                x, s = ctx.saved_tensors
                return (g * s).expand(grad_shape) * 2, None

        x = lib.ones(in_shape, device=dev, requires_grad=True)
        s = lib.full((), 1.5, device=dev)

        def go():
            Scale.apply(x, s).sum().backward()
            return x.grad.cpu().numpy()

        return _outcome(go)

    got, want = run(clgrad, device), run(torch, "cpu")
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want)
        assert got.shape == want.shape


def test_deepcopy_of_a_trained_model(device):
    # keeping the best model with copy.deepcopy: PyTorch's Parameter copies its data and
    # requires_grad, in its own class, and leaves .grad behind (a plain tensor keeps it)
    import copy

    def run(lib, dev):
        class Scaled(lib.nn.Parameter):
            pass

        m = lib.nn.Linear(3, 2).to(dev)
        m.scale = Scaled(lib.ones(2, device=dev))
        t = lib.ones(2, device=dev, requires_grad=True)
        (m(lib.ones(1, 3, device=dev)) * m.scale * t).sum().backward()
        twin, t2 = copy.deepcopy((m, t))
        return (
            [p.grad is None for p in twin.parameters()],
            type(twin.scale).__name__,
            twin.weight.requires_grad,
            t2.grad is not None,
            m.weight.grad is not None,
        )

    assert run(clgrad, device) == run(torch, "cpu")


_KEYS = [
    "0", "-1", "(slice(None), 1)", "slice(0, 2)", "slice(None)", "(0, slice(1, 3))",
    "(slice(1, 3), 0)", "None", "(0, None)", "(None, 0)", "Ellipsis", "()", "(Ellipsis, 0)",
    "(slice(None), slice(None))", "(slice(0, 2), slice(None, 10))",
    "(slice(None), slice(-3, None))",
    "(slice(None), slice(0, 3, 1))", "(slice(None), slice(None, -1))", "(Ellipsis, None)",
    "(slice(0, 2), None, slice(None))", "(1, 1)", "lib.tensor(1)", "(0, lib.tensor([0, 1]))",
    "(lib.tensor([True, False]),)",
]  # fmt: skip

_REDUCTIONS = [
    "x.sum()", "x.sum(1)", "x.sum((0, 1))", "lib.sum(x, -1, keepdim=True)", "x.nansum(1)",
    "x.prod()", "x.prod(1)", "x.max()", "x.max(1)[0]", "x.min()", "x.min(1).values", "x.amax()",
    "x.amin(1)", "lib.max(x)", "x.mean()", "x.mean(0)",
]  # fmt: skip


@pytest.mark.parametrize("expr", [f"x[{k}]" for k in _KEYS] + _REDUCTIONS)
def test_printed_grad_fn(device, expr):
    # a notebook prints its tensors with their grad_fn (tensor(..., grad_fn=<SumBackward1>)):
    # the node PyTorch's op ends on, an indexing's last op in the key's order, one overload of
    # a reduction (with dims or not, max() or amax()) or another; the gradients stay the same
    def run(lib, dev):
        x = lib.tensor([[1.0, 3.0, 3.0], [0.0, 2.0, 5.0]], device=dev).requires_grad_()
        y = eval(expr, {"x": x, "lib": lib})
        y.backward(lib.ones_like(y))
        return y.grad_fn.name(), repr(y.detach().cpu()), x.grad.cpu().tolist()

    assert run(clgrad, device) == run(torch, "cpu")


def _names(fn):
    """A node's name and its next functions' names (None for an edge without one)."""
    return fn.name(), [None if f is None else f.name() for f, _ in fn.next_functions]


_OVERLOADS = [
    "x ** 2", "x.pow(2.5)", "x ** x", "2 ** x", "x ** lib.tensor(2.0)", "x.square()",
    "x.clamp(0, 1)", "x.clamp(min=0.5)", "lib.clip(x, max=0.5)", "x.clamp(lo)",
    "x.clamp(lo, hi)", "x.clamp(None, hi)", "x.clamp_min(0.5)", "x.clamp_max(0.5)",
    "x.clamp_min(lo)", "lib.clamp_max(x, hi)",
    "x[None].squeeze()", "x[None].squeeze(0)", "x[None].squeeze((0, 1))",
    "x.unsqueeze(1).squeeze([1])",
]  # fmt: skip

# ops that return several views, and stack: each its node in PyTorch, not their slices' and cat's
_MULTI_VIEWS = [
    "x.split(1)[0]", "x.split(2, 1)[1]", "x.split([1, 2], 1)[1]",
    "x.split_with_sizes([2, 1], 1)[0]", "x.chunk(2)[1]", "x.chunk(3, 1)[2]", "lib.chunk(x, 2)[0]",
    "x.tensor_split(2, 1)[0]",
    "x.unbind()[1]", "x.unbind(1)[0]", "lib.unbind(x)[0]", "lib.stack([x, lo])",
    "lib.stack([x, hi * 2], 1)", "lib.stack([x, x.detach()], -1)", "lib.hstack([x, x])",
]  # fmt: skip

# composed ops recorded in one node of their own, as PyTorch's
_COMPOSED = [
    "x.var()", "x.var(1)", "x.var(0, keepdim=True, correction=0)", "x.std()", "x.std(1)",
    "lib.std(x, (0, 1), unbiased=False)", "lib.var_mean(x, 1)[0]", "lib.var_mean(x)[1]",
    "lib.std_mean(x, 0)[0]", "sum(lib.std_mean(x, 1, keepdim=True))",
    "x.index_select(1, lib.tensor([2, 0, 2], device=x.device))",
    "lib.index_select(x, 0, lib.tensor([1], device=x.device))", "x.masked_fill(x > 0.4, 0.0)",
    "x.masked_fill(x > 0.4, lo[0, 1])", "x.masked_fill(x > 0.4, lib.tensor(1.0, device=x.device))",
    "x[0].masked_fill(x > 0.4, -1.0)", "x.topk(2)[0]", "x.topk(1, 0).values",
    "lib.topk(x, 2, largest=False)[0]",
]  # fmt: skip


@pytest.mark.parametrize("expr", _OVERLOADS + _MULTI_VIEWS + _COMPOSED)
def test_printed_grad_fn_of_an_op(device, expr):
    # the node PyTorch's op records, as a tutorial prints it (y.grad_fn, its next_functions):
    # one op's overloads, each its node (x ** 2 PowBackward0, whose number exponent has no
    # edge, x ** x PowBackward1; clamp with numbers ClampBackward1, with tensors
    # ClampBackward0), an op's own node where clgrad composes it of others; the gradients,
    # of each operand, stay the same
    def run(lib, dev):
        x = lib.tensor([[0.1, 0.5, 0.9], [0.3, 2.0, 1.5]], device=dev).requires_grad_()
        lo = lib.full((2, 3), 0.2, device=dev).requires_grad_()
        hi = lib.full((2, 3), 0.8, device=dev).requires_grad_()
        y = eval(expr, {"x": x, "lo": lo, "hi": hi, "lib": lib})
        y.backward(lib.ones_like(y))
        values = [y] + [t.grad for t in (x, lo, hi)]
        return _names(y.grad_fn), [None if t is None else t.detach().cpu().numpy() for t in values]

    (names, values), (want_names, want) = run(clgrad, device), run(torch, "cpu")
    assert names == want_names
    for got, expected in zip(values, want):
        assert (got is None) == (expected is None)
        if got is not None:
            np.testing.assert_allclose(got, expected, rtol=1e-5)
