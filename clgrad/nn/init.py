"""Weight initialization, as torch.nn.init: every function fills its tensor in place, under
no_grad, on the tensor's own device (random numbers from clgrad's seeded generator)."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.creation import rand, randn

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    )
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _float_dt(tensor):
    from .. import dtypes as D

    return D.float32 if tensor.dtype is D.float16 else tensor.dtype


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        u = rand(tensor.shape, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        return tensor.copy_(u * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        z = randn(tensor.shape, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        return tensor.copy_(z * std + mean)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) truncated to [a, b], by inverting the normal CDF of a uniform."""
    with no_grad():

        def cdf(x):
            return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

        lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
        u = rand(tensor.shape, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        u = (u * (hi - lo) + lo) * 2 - 1
        u = u.clamp(-1 + 1e-7, 1 - 1e-7)
        # erfinv by Newton's method on erf (a few steps from a good start)
        x = u * (math.sqrt(math.pi) / 2)
        for _ in range(8):
            x = x - (x.erf() - u) / ((-(x * x)).exp() * (2 / math.sqrt(math.pi)))
        return tensor.copy_((x * (std * math.sqrt(2.0)) + mean).clamp(a, b))


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..ops.creation import eye

    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)
