"""Activation functions as declared ops (see ``registry``): one kernel each on every device,
with PyTorch's dtype rules and gradients (``torch.nn.functional``'s formulas, its
``*_backward`` kernels' masks). Their options (slopes, bounds, ``alpha``) reach the kernel as
``scalars``. ``clgrad.nn.functional`` and the nn modules call these.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .autocast import autocast_op
from .elementwise import where
from .registry import FLOAT_DTYPES, NUMERIC_DTYPES, elementwise, floating

# PyTorch's SELU constants (Klambauer et al.)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_SIGNED = tuple(d for d in NUMERIC_DTYPES if d.name != "uint8")


def _np_softplus(a):
    return np.where(a > 20, a, np.log1p(np.exp(np.minimum(a, 20))))


@elementwise(
    # clamp's shape (a nested select on char crashes Mesa's llvmpipe compiler)
    "(in0 != in0 ? in0 : ((in0 < ({T})0 ? ({T})0 : in0) > ({T})6 ? ({T})6 "
    ": (in0 < ({T})0 ? ({T})0 : in0)))",
    lambda a: np.where(a != a, a, np.clip(a, 0, 6)),
    grad=lambda grad, input: where((input <= 0) | (input >= 6), 0.0, grad),
    dtypes=NUMERIC_DTYPES,
    refuse="Bool inputs not supported for hardtanh",
)
def relu6(apply, input: Tensor) -> Tensor:
    """``min(max(input, 0), 6)``.

    >>> clgrad.relu6(clgrad.tensor([-2.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return apply(input)


@elementwise(
    "(in0 < in1 ? in1 : (in0 > in2 ? in2 : in0))",
    lambda a, lo, hi: np.where(a < lo, lo, np.where(a > hi, hi, a)),
    # PyTorch's hardtanh_backward: none at or past the bounds (a NaN input takes it)
    grad=lambda grad, input, min_val, max_val: where(
        (input <= min_val) | (input >= max_val), 0.0, grad
    ),
    dtypes=_SIGNED,
    scalars=("min_val", "max_val"),
    refuse="hardtanh is not supported for unsigned and Bool inputs",
)
def hardtanh(apply, input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``.

    >>> clgrad.hardtanh(clgrad.tensor([-2.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    return apply(input, min_val, max_val)


@elementwise(
    "(in0 > 0 ? in0 : in0 * in1)",
    lambda a, s: np.where(a > 0, a, a * s),
    grad=lambda grad, input, negative_slope: where(input > 0, grad, grad * negative_slope),
    dtypes=FLOAT_DTYPES,
    scalars=("negative_slope",),
)
def leaky_relu(apply, input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere.

    >>> clgrad.leaky_relu(clgrad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    return apply(input, negative_slope)


@elementwise(
    "(in0 > 0 ? in0 : in1 * cg_expm1_{T}(in0))",
    lambda a, alpha: np.where(a > 0, a, alpha * np.expm1(a)),
    grad=lambda grad, input, alpha: where(input > 0, grad, grad * alpha * input.exp()),
    dtypes=FLOAT_DTYPES,
    scalars=("alpha",),
)
def elu(apply, input: Tensor, alpha: float = 1.0) -> Tensor:
    """The exponential linear unit: ``input`` where positive, ``alpha * (exp(input) - 1)``
    elsewhere.

    >>> clgrad.elu(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.8647,  3.0000])
    """
    return apply(input, alpha)


@elementwise(
    f"(({{T}}){SELU_SCALE!r} * (in0 > 0 ? in0 : ({{T}}){SELU_ALPHA!r} * cg_expm1_{{T}}(in0)))",
    lambda a: SELU_SCALE * np.where(a > 0, a, SELU_ALPHA * np.expm1(a)),
    grad=lambda grad, input: where(
        input > 0, grad * SELU_SCALE, grad * (SELU_SCALE * SELU_ALPHA) * input.exp()
    ),
    dtypes=FLOAT_DTYPES,
    out=False,
)
def selu(apply, input: Tensor) -> Tensor:
    """``scale * elu(input, alpha)`` with the self-normalizing constants.

    >>> clgrad.selu(clgrad.tensor([-1.0, 2.0]))
    tensor([-1.1113,  2.1014])
    """
    return apply(input)


@elementwise(
    "(in0 > 0 ? in0 : in1 * cg_expm1_{T}(in0 / in1))",
    lambda a, alpha: np.where(a > 0, a, alpha * np.expm1(a / alpha)),
    grad=lambda grad, input, alpha: where(input > 0, grad, grad * (input / alpha).exp()),
    dtypes=FLOAT_DTYPES,
    scalars=("alpha",),
    out=False,
)
def celu(apply, input: Tensor, alpha: float = 1.0) -> Tensor:
    """``max(0, input) + min(0, alpha * (exp(input / alpha) - 1))``.

    >>> clgrad.celu(clgrad.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return apply(input, alpha)


def _mish_grad(grad, input):
    t = input.softplus().tanh()
    return grad * (t + input * input.sigmoid() * (1 - t * t))


@elementwise(
    "(in0 * cg_tanh_{T}(cg_softplus_{T}(in0)))",
    lambda a: a * np.tanh(_np_softplus(a)),
    grad=_mish_grad,
    dtypes=FLOAT_DTYPES,
)
def mish(apply, input: Tensor) -> Tensor:
    """``input * tanh(softplus(input))``.

    >>> clgrad.mish(clgrad.tensor([-1.0, 2.0]))
    tensor([-0.3034,  1.9440])
    """
    return apply(input)


@elementwise(
    # PyTorch's test: NaN is outside the band and kept
    "((in0 >= -in1 && in0 <= in1) ? ({T})0 : in0)",
    lambda a, lambd: np.where((a >= -lambd) & (a <= lambd), 0, a),
    grad=lambda grad, input, lambd: where((input >= -lambd) & (input <= lambd), 0.0, grad),
    dtypes=FLOAT_DTYPES,
    scalars=("lambd",),
)
def hardshrink(apply, input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` where ``|input| > lambd``, else 0.

    >>> clgrad.hardshrink(clgrad.tensor([-1.0, 0.2, 0.7]))
    tensor([-1.0000,  0.0000,  0.7000])
    """
    return apply(input, lambd)


@elementwise(
    # NaN falls to the last branch and is kept, as PyTorch (tested with in0 != in0: Mesa's
    # compiler folds a * 0 to 0)
    "(in0 > in1 ? in0 - in1 : (in0 < -in1 ? in0 + in1 : (in0 != in0 ? in0 : ({T})0)))",
    lambda a, lambd: np.where(a > lambd, a - lambd, np.where(a < -lambd, a + lambd, a * 0)),
    grad=lambda grad, input, lambd: where((input >= -lambd) & (input <= lambd), 0.0, grad),
    dtypes=FLOAT_DTYPES,
    scalars=("lambd",),
)
def softshrink(apply, input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` moved toward 0 by ``lambd`` (0 within ``lambd`` of it).

    >>> clgrad.softshrink(clgrad.tensor([-1.0, 0.2, 0.7]))
    tensor([-0.5000,  0.0000,  0.2000])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {float(lambd)}.")
    return apply(input, lambd)


@elementwise(
    "(in0 - cg_tanh_{T}(in0))",
    lambda a: a - np.tanh(a),
    result=floating,
    grad=lambda grad, input: grad * input.tanh() * input.tanh(),
    dtypes=NUMERIC_DTYPES,
    refuse="Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
    "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
)
def tanhshrink(apply, input: Tensor) -> Tensor:
    """``input - tanh(input)``.

    >>> clgrad.tanhshrink(clgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2384])
    """
    return apply(input)


@elementwise(
    "(-cg_softplus_{T}(-in0))",
    lambda a: -_np_softplus(-a),
    grad=lambda grad, input: grad * (1 - input.sigmoid()),
    dtypes=FLOAT_DTYPES,
)
def logsigmoid(apply, input: Tensor) -> Tensor:
    """``log(sigmoid(input))``, computed without overflow.

    >>> clgrad.logsigmoid(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-2.1269, -0.6931, -0.0486])
    """
    return apply(input)


@elementwise(
    "(in0 / (({T})1 + (in0 < 0 ? -in0 : in0)))",
    lambda a: a / (1 + np.abs(a)),
    result=floating,
    grad=lambda grad, input: grad / ((1 + input.abs()) * (1 + input.abs())),
    dtypes=NUMERIC_DTYPES,
)
def softsign(apply, input: Tensor) -> Tensor:
    """``input / (1 + |input|)``.

    >>> clgrad.softsign(clgrad.tensor([-3.0, 1.0]))
    tensor([-0.7500,  0.5000])
    """
    return apply(input)


@elementwise(
    "(in0 <= ({T})-3 ? ({T})0 : (in0 >= ({T})3 ? ({T})1 : in0 / ({T})6 + ({T})0.5))",
    lambda a: np.clip(a / 6 + 0.5, 0, 1),
    grad=lambda grad, input: where((input > -3) & (input < 3), grad / 6, 0.0),
    dtypes=FLOAT_DTYPES,
)
def hardsigmoid(apply, input: Tensor) -> Tensor:
    """``relu6(input + 3) / 6``.

    >>> clgrad.hardsigmoid(clgrad.tensor([-4.0, 0.0, 1.5]))
    tensor([0.0000, 0.5000, 0.7500])
    """
    return apply(input)


@elementwise(
    # PyTorch's formula: -inf * 0 is NaN there, and 3e38 doesn't overflow (selects for the
    # clamp: fmin and fmax are library calls on PoCL)
    "(in0 * (in0 + ({T})3 > ({T})6 ? ({T})6 : (in0 + ({T})3 < ({T})0 ? ({T})0 : in0 + ({T})3))"
    " / ({T})6)",
    lambda a: a * np.clip(a + 3, 0, 6) / 6,
    # PyTorch's hardswish_backward: 0 up to -3 (inclusive), x / 3 + 0.5 below 3, 1 from 3 on
    grad=lambda grad, input: where(
        input <= -3, 0.0, where(input < 3, grad * (input / 3 + 0.5), grad)
    ),
    dtypes=FLOAT_DTYPES,
)
def hardswish(apply, input: Tensor) -> Tensor:
    """``input * relu6(input + 3) / 6``.

    >>> clgrad.hardswish(clgrad.tensor([-4.0, 0.0, 1.5]))
    tensor([-0.0000,  0.0000,  1.1250])
    """
    return apply(input)


@autocast_op
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x >= 0``, else ``weight * x``, element-wise, as
    ``torch.nn.functional.prelu`` (also ``torch.prelu`` and ``Tensor.prelu``): ``weight`` has
    1 element or one per channel (dim 1). A composition of declared ops, not one of its own.

    >>> clgrad.nn.functional.prelu(clgrad.tensor([[-2.0, 3.0]]), clgrad.tensor([0.25]))
    tensor([[-0.5000,  3.0000]])
    """
    if weight.numel() != 1:
        if input.ndim == 0 or weight.numel() != input.shape[min(1, input.ndim - 1)]:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {weight.numel()} and channel size = "
                f"{input.shape[min(1, input.ndim - 1)] if input.ndim else 1}."
            )
        if input.ndim >= 2:
            weight = weight.reshape((weight.numel(),) + (1,) * (input.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return where(input > 0, input, weight * input)  # (at 0: the weight's slope, as torch)
