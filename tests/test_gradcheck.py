"""gradcheck (finite differences in float64) on every differentiable op, on every device."""

import numpy as np
import pytest
import torch

import clgrad
from clgrad.autograd import gradcheck, gradgradcheck

I = lambda *v: clgrad.tensor(v, dtype=clgrad.int64)  # noqa: E731


def positive(shape):
    return ("pos", shape)


# name: (function, input shapes ("pos", shape) for inputs that must be > 0)
OPS = {
    "add": (lambda a, b: a + b, [(2, 3), (3,)]),
    "sub": (lambda a, b: a - b, [(2, 3), (2, 1)]),
    "mul": (lambda a, b: a * b, [(2, 3), (2, 3)]),
    "div": (lambda a, b: a / b, [(2, 3), positive((3,))]),
    "pow": (lambda a, b: a**b, [positive((2, 3)), (2, 3)]),
    "pow_scalar": (lambda a: a**3 + 2**a, [(4,)]),
    "rsub_scalar": (lambda a: 1 - a / 2, [(3,)]),
    "neg_abs": (lambda a: (-a).abs(), [(5,)]),
    "exp_log": (lambda a: a.exp() + a.log(), [positive((4,))]),
    "log1p_expm1": (lambda a: a.log1p() + a.expm1(), [positive((4,))]),
    "sqrt_rsqrt": (lambda a: a.sqrt() + a.rsqrt(), [positive((4,))]),
    "trig": (lambda a: a.sin() * a.cos() + a.tanh(), [(4,)]),
    "sigmoid_relu": (lambda a: a.sigmoid() + a.relu(), [(5,)]),
    "gelu_silu_softplus": (
        lambda a: (
            clgrad.nn.functional.gelu(a)
            + clgrad.nn.functional.silu(a)
            + clgrad.nn.functional.softplus(a)
        ),
        [(5,)],
    ),
    "erf": (lambda a: a.erf(), [(5,)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5) + a.clamp(min=0.1), [(6,)]),
    "maximum_minimum": (lambda a, b: clgrad.maximum(a, b) + clgrad.minimum(a, b) * 2, [(4,), (4,)]),
    "where": (lambda a, b: clgrad.where(a > 0, a, b), [(4,), (4,)]),
    "sum": (lambda a: a.sum() + a.sum(0).sum() + a.sum((0, 2), keepdim=True).sum(), [(2, 3, 2)]),
    "mean": (lambda a: a.mean(1), [(2, 3)]),
    "prod": (lambda a: a.prod(1), [(3, 4)]),
    "var_std": (lambda a: a.var(1) + a.std(0, correction=0).sum(), [(3, 4)]),
    "max_dim": (lambda a: a.max(1).values + a.min(0).values.sum(), [(3, 4)]),
    "amax_amin": (lambda a: a.amax((0, 1)) + a.amin(1).sum() + a.max(), [(3, 4)]),
    "logsumexp": (lambda a: a.logsumexp(1), [(3, 4)]),
    "softmax": (lambda a: a.softmax(1) * a, [(3, 4)]),
    "log_softmax": (lambda a: a.log_softmax(0), [(3, 4)]),
    "cumsum": (lambda a: a.cumsum(1) * a, [(3, 4)]),
    "views": (
        lambda a: (
            a.view(6, 2)
            .T.reshape(3, 4)
            .permute(1, 0)
            .unsqueeze(0)
            .squeeze(0)
            .flatten()
            .narrow(0, 2, 6)
            .expand(2, 6)
        ),
        [(3, 4)],
    ),
    "transpose_slice": (lambda a: a.transpose(0, 1)[::2, 1:] * a.mT[1, 1:], [(3, 4)]),
    "cat_stack_split": (
        lambda a, b: (
            clgrad.stack([clgrad.cat([a, b], 0)[1:3], a * 2]).split(1, 2)[1]
            + b.chunk(2, 0)[0].sum()
        ),
        [(2, 3), (2, 3)],
    ),
    "repeat_flip": (lambda a: a.repeat(2, 3).flip(0), [(2, 2)]),
    "getitem_advanced": (lambda a: a[I(0, 2, 0)][:, :3] + a[:, I(1, 1, 3)].T, [(3, 4)]),
    "getitem_mask": (lambda a: a[a > 0.1], [(3, 4)]),
    "setitem": (lambda a, b: _setitem(a, b), [(3, 4), (4,)]),
    "gather": (lambda a: a.gather(1, I([0, 0], [2, 1], [3, 3])), [(3, 4)]),
    "scatter_add": (
        lambda a, s: a.scatter_add(0, I([0, 2, 0, 0], [1, 1, 1, 2]), s),
        [(3, 4), (2, 4)],
    ),
    "index_select": (lambda a: a.index_select(1, I(3, 0, 3)), [(3, 4)]),
    "masked_fill": (lambda a: a.masked_fill(a > 0, 0.5), [(3, 4)]),
    "matmul_2d": (lambda a, b: a @ b, [(3, 4), (4, 2)]),
    "matmul_1d": (lambda a, b: a @ b + (b.T @ a).sum(), [(4,), (4, 3)]),
    "matmul_batched": (lambda a, b: a @ b, [(2, 3, 4), (4, 2)]),
    "matmul_broadcast": (lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)]),
    "dot": (lambda a, b: a @ b, [(5,), (5,)]),
    # a round trip through float32 (from float64 where the device runs it)
    "cast": (lambda a: a.float().to(a.dtype) * 2, [(3,)]),
}
# float32 in the middle rounds: finite differences need a larger step there
LOOSE = {"cast": dict(eps=1e-3, atol=1e-3, rtol=1e-2)}


def _setitem(a, b):
    c = a * 1
    c[1] = b
    c[:, 0] = b[:3] * 2
    return c


def make_inputs(shapes, device, dt, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if isinstance(s, tuple) and s and s[0] == "pos":
            v = rng.uniform(0.5, 2.0, size=s[1])
        else:
            v = rng.uniform(-1.5, 1.5, size=s)
        out.append(clgrad.tensor(v, dtype=dt, device=device, requires_grad=True))
    return out


def _move(fn, device):
    """Index tensors built on cpu inside a lambda move to the inputs' device."""

    def wrapped(*xs):
        global I
        saved = I
        I = lambda *v: clgrad.tensor(v, dtype=clgrad.int64, device=device)  # noqa: E731
        try:
            return fn(*xs)
        finally:
            I = saved

    return wrapped


def precision(device):
    if clgrad.device(device).supports_float64:
        return clgrad.float64, dict(eps=1e-6, atol=1e-5, rtol=1e-3)
    return clgrad.float32, dict(eps=1e-2, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("name", list(OPS))
def test_gradcheck(device, name):
    fn, shapes = OPS[name]
    dt, tol = precision(device)
    if dt == clgrad.float64:
        tol = LOOSE.get(name, tol)
    assert gradcheck(_move(fn, device), make_inputs(shapes, device, dt), **tol)


@pytest.mark.parametrize(
    "name",
    [
        "mul",
        "div",
        "exp_log",
        "trig",
        "softmax",
        "matmul_2d",
        "logsumexp",
        "sigmoid_relu",
        "pow",
        "var_std",
    ],
)
def test_gradgradcheck(device, name):
    fn, shapes = OPS[name]
    dt, tol = precision(device)
    assert gradgradcheck(_move(fn, device), make_inputs(shapes, device, dt), **tol)


UNARY = [
    lambda x: x.exp(),
    lambda x: x.tanh(),
    lambda x: x.sigmoid(),
    lambda x: x * x,
    lambda x: x.sin(),
    lambda x: (x * x + 1).sqrt(),
    lambda x: x.relu() + 0.1 * x,
]
BINARY = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a - b,
    lambda a, b: a / (b * b + 1),
    lambda a, b: clgrad.maximum(a, b),
]
REDUCE = [
    lambda x: x.sum(0, keepdim=True),
    lambda x: x.mean(1, keepdim=True),
    lambda x: x.softmax(1),
    lambda x: x.T.contiguous().T,
    lambda x: x.logsumexp(0, keepdim=True),
]


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs(device, seed):
    """Random expression graphs over the op set, checked against finite differences."""
    rng = np.random.default_rng(seed)
    dt, tol = precision(device)

    def build(a, b):
        pool = [a, b]
        for _ in range(6):
            kind = rng.integers(3)
            if kind == 0:
                pool.append(UNARY[rng.integers(len(UNARY))](pool[rng.integers(len(pool))]))
            elif kind == 1:
                x, y = pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]
                pool.append(BINARY[rng.integers(len(BINARY))](x, y))
            else:
                pool.append(REDUCE[rng.integers(len(REDUCE))](pool[rng.integers(len(pool))]))
        return sum(p.sum() for p in pool[2:])

    state = rng.bit_generator.state
    inputs = make_inputs([(3, 4), (3, 4)], device, dt, seed)

    def fn(a, b):
        rng.bit_generator.state = state  # the same graph every call
        return build(a, b)

    assert gradcheck(fn, inputs, **tol)


# ops whose gradient selects: where an element is cut off (clamped, shrunk, the losing side of
# a maximum) or the op is flat (sign, floor), PyTorch's gradient is 0 whatever arrives there
SELECTING = {
    "clamp": lambda m, x, o: m.clamp(x, -1, 1),
    "clamp tensors": lambda m, x, o: m.clamp(x, o - 1, o + 1),
    "clamp_min": lambda m, x, o: m.clamp(x, min=0.5),
    "relu6": lambda m, x, o: m.nn.functional.relu6(x),
    "hardtanh": lambda m, x, o: m.nn.functional.hardtanh(x, -2, 2),
    "hardshrink": lambda m, x, o: m.nn.functional.hardshrink(x, 0.5),
    "softshrink": lambda m, x, o: m.nn.functional.softshrink(x, 0.5),
    "hardsigmoid": lambda m, x, o: m.nn.functional.hardsigmoid(x),
    "maximum": lambda m, x, o: m.maximum(x, o),
    "minimum": lambda m, x, o: m.minimum(x, o),
    "fmax": lambda m, x, o: m.fmax(x, o),
    "fmin": lambda m, x, o: m.fmin(x, o),
    "sign": lambda m, x, o: m.sign(x),
    "floor": lambda m, x, o: m.floor(x),
    "round": lambda m, x, o: m.round(x),
    "pow 0": lambda m, x, o: x**0,
    "embedding padding_idx": lambda m, x, o: m.nn.functional.embedding(
        m.tensor([0, 1, 1, 2, 0, 1, 2], device=x.device), x.reshape(7, 1), padding_idx=1
    ).reshape(7),
}


@pytest.mark.parametrize("name", SELECTING)
def test_selecting_gradients_keep_infinities_out(device, name):
    """An infinite or NaN gradient arriving where the op's gradient is 0 stays out, as in
    PyTorch (clamp then log: the clamped elements' gradient was NaN, from inf * 0), and a NaN
    operand of maximum or minimum gets the gradient, as there."""
    x = np.array([-5.0, -0.3, 0.0, 0.3, 5.0, 7.0, np.nan], np.float32)
    other = np.array([-5.0, 1.0, 0.0, -1.0, 6.0, 7.0, 2.0], np.float32)
    upstream = np.array([np.inf, -np.inf, np.inf, 1.0, np.inf, np.nan, 1.0], np.float32)
    grads = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        xt = m.tensor(x, device=dev).requires_grad_()
        ot = m.tensor(other, device=dev).requires_grad_()
        (SELECTING[name](m, xt, ot) * m.tensor(upstream, device=dev)).sum().backward()
        grads.append([None if t.grad is None else t.grad.cpu().numpy() for t in (xt, ot)])
    for theirs, ours in zip(*grads):
        assert (theirs is None) == (ours is None)
        if theirs is not None:
            np.testing.assert_array_equal(ours, theirs)
