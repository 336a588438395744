"""clgrad.nn.utils: gradient clipping and parameter <-> vector conversion, on the device (no
host reads unless asked for)."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.movement import cat, stack
from ..tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _norm(x, p):
    if p == math.inf:
        return x.abs().amax()
    if p == 2:
        return (x * x).sum().sqrt()
    if p == 1:
        return x.abs().sum()
    return (x.abs() ** p).sum() ** (1.0 / p)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients so that their joint ``norm_type`` norm is at most ``max_norm``;
    returns that norm (before clipping) as a tensor."""
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        from ..ops.creation import tensor

        return tensor(0.0)
    with no_grad():
        total = _norm(stack([_norm(g, norm_type).to(grads[0].dtype) for g in grads]), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient element into [-clip_value, clip_value] in place."""
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of ``vec`` into the parameters (in place)."""
    start = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[start : start + n].reshape(p.shape))
            start += n
