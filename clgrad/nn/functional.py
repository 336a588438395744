"""clgrad.nn.functional: activations and (with the nn issue) layers and losses as functions."""

from __future__ import annotations

from ..ops import elementwise as _E
from ..ops import reduction as _R


def relu(x, inplace=False):
    return x.relu_() if inplace else _E.Relu.apply(x)


def gelu(x, approximate="none"):
    if approximate == "tanh":
        c = (2 / 3.141592653589793) ** 0.5
        return 0.5 * x * (1 + (c * (x + 0.044715 * x * x * x)).tanh())
    return _E.Gelu.apply(x)


def silu(x, inplace=False):
    return _E.Silu.apply(x)


def softplus(x, beta=1.0, threshold=20.0):
    if beta == 1.0 and threshold == 20.0:
        return _E.Softplus.apply(x)
    return _E.where(x * beta > threshold, x, _E.Softplus.apply(x * beta) / beta)


def sigmoid(x):
    return _E.Sigmoid.apply(x)


def tanh(x):
    return _E.Tanh.apply(x)


def softmax(x, dim=None, dtype=None):
    return _R.softmax(x, -1 if dim is None else dim, dtype)


def log_softmax(x, dim=None, dtype=None):
    return _R.log_softmax(x, -1 if dim is None else dim, dtype)
