"""Every elementwise operation, declared once: its OpenCL C expression and its NumPy function.

In an expression ``in0``, ``in1``, ... are the operands already converted to the compute
type ``{T}`` and ``_i`` is the output's linear index. The NumPy function gets arrays (or
scalars) in the compute dtype.
"""

from __future__ import annotations

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _np_erf(x):
    return _erf(x).astype(np.result_type(x, np.float32))


def _floordiv(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.floor_divide(a, safe))
    return np.floor(np.true_divide(a, b))


def _mod(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.mod(a, safe))
    return np.mod(a, b)


def _pow(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        neg = b < 0
        r = np.power(a, np.where(neg, 0, b))
        # a ** -k for integers: 1 for a == 1, +-1 for a == -1, else 0 (as C and PyTorch do)
        return np.where(neg, np.where(a == 1, 1, np.where(a == -1, np.where(b % 2, -1, 1), 0)), r)
    return np.power(a, b)


def _sigmoid(x):
    return np.where(
        x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x)))
    )


# name: (C expression, NumPy function)
OPS: dict[str, tuple[str, object]] = {
    "copy": ("in0", lambda a: a),
    "add": ("in0 + in1", np.add),
    "sub": ("in0 - in1", np.subtract),
    "mul": ("in0 * in1", np.multiply),
    "div": ("in0 / in1", np.true_divide),
    "floordiv": ("cg_floordiv_{T}(in0, in1)", _floordiv),
    "mod": ("cg_mod_{T}(in0, in1)", _mod),
    "pow": ("cg_pow_{T}(in0, in1)", _pow),
    "neg": ("-in0", np.negative),
    "abs": ("(in0 < 0 ? -in0 : in0)", np.abs),
    "exp": ("exp(in0)", np.exp),
    "log": ("log(in0)", np.log),
    "log1p": ("log1p(in0)", np.log1p),
    "expm1": ("expm1(in0)", np.expm1),
    "sqrt": ("sqrt(in0)", np.sqrt),
    "rsqrt": ("rsqrt(in0)", lambda a: 1 / np.sqrt(a)),
    "sin": ("sin(in0)", np.sin),
    "cos": ("cos(in0)", np.cos),
    "tanh": ("tanh(in0)", np.tanh),
    "erf": ("erf(in0)", _np_erf),
    "sigmoid": ("cg_sigmoid_{T}(in0)", _sigmoid),
    "relu": (
        "((in0 > 0 || in0 != in0) ? in0 : ({T})0)",
        lambda a: np.where((a > 0) | (a != a), a, np.zeros_like(a)),
    ),
    "gelu": ("cg_gelu_{T}(in0)", lambda a: 0.5 * a * (1 + _np_erf(a * np.sqrt(0.5)))),
    "silu": ("in0 * cg_sigmoid_{T}(in0)", lambda a: a * _sigmoid(a)),
    "softplus": (
        "cg_softplus_{T}(in0)",
        lambda a: np.where(a > 20, a, np.log1p(np.exp(np.minimum(a, 20)))),
    ),
    "sign_float": ("cg_sign_{T}(in0)", np.sign),
    "sign_int": ("(({T})(in0 > 0) - ({T})(in0 < 0))", np.sign),
    "floor": ("floor(in0)", np.floor),
    "ceil": ("ceil(in0)", np.ceil),
    "round": ("rint(in0)", np.round),
    "trunc": ("trunc(in0)", np.trunc),
    "clamp": (
        "((in0 < in1 ? in1 : in0) > in2 ? in2 : (in0 < in1 ? in1 : in0))",
        lambda a, lo, hi: (
            np.where(np.isnan(a), a, np.minimum(np.maximum(a, lo), hi))
            if np.issubdtype(np.asarray(a).dtype, np.floating)
            else np.minimum(np.maximum(a, lo), hi)
        ),
    ),
    "clamp_min": ("(in0 < in1 ? in1 : in0)", lambda a, lo: np.where(a < lo, lo, a)),
    "clamp_max": ("(in0 > in1 ? in1 : in0)", lambda a, hi: np.where(a > hi, hi, a)),
    "maximum": ("((in0 != in0 || in0 > in1) ? in0 : in1)", np.maximum),
    "minimum": ("((in0 != in0 || in0 < in1) ? in0 : in1)", np.minimum),
    "where": ("(in0 ? in1 : in2)", np.where),
    "isnan": ("(in0 != in0)", np.isnan),
    "isinf": ("isinf(in0)", np.isinf),
    "false": ("0", lambda a: np.zeros(np.shape(a), bool)),
    "eq": ("(in0 == in1)", np.equal),
    "ne": ("(in0 != in1)", np.not_equal),
    "lt": ("(in0 < in1)", np.less),
    "le": ("(in0 <= in1)", np.less_equal),
    "gt": ("(in0 > in1)", np.greater),
    "ge": ("(in0 >= in1)", np.greater_equal),
    "bitand": ("(in0 & in1)", np.bitwise_and),
    "bitor": ("(in0 | in1)", np.bitwise_or),
    "bitxor": ("(in0 ^ in1)", np.bitwise_xor),
    "bitnot": ("(~in0)", np.invert),
    "lognot": ("(!in0)", np.logical_not),
    "fill": ("in0", lambda v: v),
    "arange": ("(in0 + ({T})_i * in1)", None),  # needs the index: host code builds it
}
