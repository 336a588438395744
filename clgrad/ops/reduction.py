"""Reductions over one, several or all dims, and the softmax family built on them."""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from .. import dtypes as D
from ..backend.base import ReduceKernel
from ..autograd.function import Function
from ..tensor import Tensor, _backend, _wrap
from .core import check_device_dtype, normalize_dims

values_indices = namedtuple("values_indices", ["values", "indices"])

# NaN propagates through max/min: once a is NaN nothing compares past it (b != b: b is NaN)
REDUCE_KERNELS = {
    k.name: k
    for k in (
        ReduceKernel("sum", "0", "a + b", np.sum),
        ReduceKernel("prod", "1", "a * b", np.prod),
        ReduceKernel("max", "LOWEST", "((b > a || b != b) ? b : a)", np.max),
        ReduceKernel("min", "HIGHEST", "((b < a || b != b) ? b : a)", np.min),
        ReduceKernel("nansum", "0", "a + b", np.nansum, map_expr="(x != x ? ({T})0 : x)"),
        ReduceKernel("argmax", "LOWEST", numpy=np.argmax, arg=True, better="v > s"),
        ReduceKernel("argmin", "HIGHEST", numpy=np.argmin, arg=True, better="v < s"),
    )
}


def _reduced_shape(x, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(x._shape))
    return tuple(n for i, n in enumerate(x._shape) if i not in dims)


def _reduce(op, x, dims, keepdim, out_dt, acc=None):
    """Runs the backend reduction and views the result with or without the reduced dims."""
    check_device_dtype(x.device, out_dt)
    out = Tensor._empty(_reduced_shape(x, dims, False), out_dt, x.device)
    if x.ndim == 0 or not dims:
        from .core import launch

        launch("copy", [x], out_dt, acc or x.dtype, out=out.reshape(x.shape) if x.ndim else out)
    elif out.numel():
        _backend(x.device).reduce(op, out, x, dims, acc)
    return out.reshape(_reduced_shape(x, dims, True)) if keepdim else out


def _keep(g, shape, dims, keepdim):
    """A gradient of the reduced result, with the reduced dims back as size 1."""
    if not keepdim and dims:
        g = g.reshape(tuple(1 if i in dims else n for i, n in enumerate(shape)))
    return g


def _sum_dtype(dt):
    return D.int64 if dt.category < 2 else dt


class Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, dt):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        acc = D.float32 if dt is D.float16 else dt
        return _reduce("sum", x, dims, keepdim, dt, acc)

    @staticmethod
    def backward(ctx, g):
        return _keep(g, ctx.shape, ctx.dims, ctx.keepdim).expand(ctx.shape), None, None, None


def sum(x, dim=None, keepdim=False, dtype=None):
    dt = D.as_dtype(dtype) if dtype is not None else _sum_dtype(x.dtype)
    return Sum.apply(x, normalize_dims(dim, x.ndim), keepdim, dt)


def mean(x, dim=None, keepdim=False, dtype=None):
    dt = D.as_dtype(dtype) if dtype is not None else x.dtype
    if not dt.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {x.dtype.name.capitalize()}"
        )
    dims = normalize_dims(dim, x.ndim)
    n = 1
    for d in dims:
        n *= x._shape[d]
    return sum(x, dims, keepdim, dt) / n if n else sum(x, dims, keepdim, dt) * float("nan")


def var(x, dim=None, correction=1, keepdim=False, unbiased=None):
    if unbiased is not None:
        correction = int(unbiased)
    dims = normalize_dims(dim, x.ndim)
    n = 1
    for d in dims:
        n *= x._shape[d]
    centered = x - mean(x, dims, keepdim=True)
    return sum(centered * centered, dims, keepdim) / builtins.max(n - correction, 0)


def std(x, dim=None, correction=1, keepdim=False, unbiased=None):
    return var(x, dim, correction, keepdim, unbiased).sqrt()


class Prod(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, dt):
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim = dims, keepdim
        return _reduce("prod", x, dims, keepdim, dt, D.float32 if dt is D.float16 else dt)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        dims = ctx.dims
        g = _keep(g, x.shape, dims, ctx.keepdim)
        # Exact with zeros: one zero gets the product of the others, two or more give 0.
        is_zero = x == 0
        zeros = is_zero.sum(dim=dims, keepdim=True)
        nonzero = x.masked_fill(is_zero, 1)
        p = nonzero.prod(dim=dims, keepdim=True)
        from .elementwise import where

        grad = where(zeros == 0, p / nonzero, where(is_zero & (zeros == 1), p, 0.0))
        return g * grad, None, None, None


def prod(x, dim=None, keepdim=False, dtype=None):
    dt = D.as_dtype(dtype) if dtype is not None else _sum_dtype(x.dtype)
    dims = normalize_dims(dim, x.ndim)
    return Prod.apply(x, dims, keepdim, dt)


def _require_elements(x, dims, name):
    if any(x._shape[d] == 0 for d in dims) or (not dims and x.numel() == 0):
        raise IndexError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument."
            if len(dims) == x.ndim
            else f"{name}(): cannot compute {name} over a zero-size dimension"
        )


class Extreme(Function):
    """amax/amin: ties share the gradient evenly, as in PyTorch."""

    node_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, op):
        y = _reduce(op, x, dims, True, x.dtype)
        ctx.save_for_backward(x, y)
        ctx.dims, ctx.keepdim = dims, keepdim
        return y if keepdim else y.reshape(_reduced_shape(x, dims, False))

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        g = _keep(g, x.shape, ctx.dims, ctx.keepdim)
        mask = x == y
        return g * mask / mask.sum(dim=ctx.dims, keepdim=True), None, None, None


def _extreme(op, x, dim, keepdim):
    dims = normalize_dims(dim, x.ndim)
    if x.numel() == 0:
        _require_elements(x, dims, op)
    return Extreme.apply(x, dims, keepdim, op)


def amax(x, dim=None, keepdim=False):
    return _extreme("max", x, dim if dim is not None and dim != () else None, keepdim)


def amin(x, dim=None, keepdim=False):
    return _extreme("min", x, dim if dim is not None and dim != () else None, keepdim)


class ExtremeDim(Function):
    """max/min along one dim: values and indices; the gradient goes to the chosen index."""

    node_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim, op):
        values = _reduce(op, x, (dim,), keepdim, x.dtype)
        indices = _reduce("arg" + op, x, (dim,), keepdim, D.int64)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, _):
        (indices,) = ctx.saved_tensors
        from .creation import zeros

        if not ctx.keepdim:
            g, indices = g.unsqueeze(ctx.dim), indices.unsqueeze(ctx.dim)
        from .indexing import ScatterAdd

        z = zeros(ctx.shape, dtype=g.dtype, device=g.device)
        return ScatterAdd.apply(z, ctx.dim, indices, g), None, None, None


def _max_min(op, x, dim, keepdim, other):
    if other is not None:
        from .elementwise import Maximum, Minimum

        return (Maximum if op == "max" else Minimum).apply(x, other)
    if dim is None:
        return _extreme(op, x, None, False)
    d = _wrap(dim, x.ndim) if x.ndim else 0
    if x.ndim and x._shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return values_indices(*ExtremeDim.apply(x, d, keepdim, op))


def max(x, dim=None, keepdim=False, other=None):
    if isinstance(dim, Tensor):
        dim, other = None, dim
    return _max_min("max", x, dim, keepdim, other)


def min(x, dim=None, keepdim=False, other=None):
    if isinstance(dim, Tensor):
        dim, other = None, dim
    return _max_min("min", x, dim, keepdim, other)


def _arg(op, x, dim, keepdim):
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError(
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        out = _reduce(op, x, tuple(range(x.ndim)), False, D.int64)
        return out.reshape((1,) * x.ndim) if keepdim else out
    d = _wrap(dim, x.ndim) if x.ndim else 0
    if x.ndim and x._shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    if x.ndim == 0:
        from .creation import zeros

        return zeros((), dtype=D.int64, device=x.device)
    return _reduce(op, x, (d,), keepdim, D.int64)


def argmax(x, dim=None, keepdim=False):
    return _arg("argmax", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg("argmin", x, dim, keepdim)


def all(x, dim=None, keepdim=False):
    b = x if x.dtype is D.bool_ else x != 0
    dims = normalize_dims(dim, x.ndim)
    if builtins.any(b._shape[d] == 0 for d in dims):
        return b.logical_not().sum(dim=dims, keepdim=keepdim) == 0
    return _reduce("min", b, dims, keepdim, D.bool_)


def any(x, dim=None, keepdim=False):
    b = x if x.dtype is D.bool_ else x != 0
    dims = normalize_dims(dim, x.ndim)
    if builtins.any(b._shape[d] == 0 for d in dims):
        return b.sum(dim=dims, keepdim=keepdim) != 0
    return _reduce("max", b, dims, keepdim, D.bool_)


def logsumexp(x, dim, keepdim=False):
    dims = normalize_dims(dim, x.ndim)
    m = amax(x.detach(), dims, keepdim=True) if x.numel() else x.sum(dims, keepdim=True).detach()
    m = m.masked_fill(m.isinf(), 0.0)
    out = (x - m).exp().sum(dims, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dims) if dims else out


class Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        z = x - amax(x, dim, keepdim=True)
        e = z.exp()
        y = e / e.sum(dim, keepdim=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(ctx.dim, keepdim=True)), None


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        z = x - amax(x, dim, keepdim=True)
        y = z - z.exp().sum(dim, keepdim=True).log()
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g - y.exp() * g.sum(ctx.dim, keepdim=True), None


def _softmax_input(x, dim, dtype):
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"softmax is only defined for floating types, got {x.dtype}")
    if x.ndim == 0:
        return x, 0
    return x, _wrap(dim, x.ndim)


def softmax(x, dim, dtype=None):
    x, d = _softmax_input(x, dim, dtype)
    if x.ndim == 0 or x.numel() == 0:
        return x.exp() / x.exp()
    return Softmax.apply(x, d)


def log_softmax(x, dim, dtype=None):
    x, d = _softmax_input(x, dim, dtype)
    if x.ndim == 0 or x.numel() == 0:
        return x - x
    return LogSoftmax.apply(x, d)


class Cumsum(Function):
    @staticmethod
    def forward(ctx, x, dim, dt):
        ctx.dim = dim
        out = Tensor._empty(x._shape, dt, x.device)
        if out.numel():
            acc = D.float32 if dt is D.float16 else dt
            if x.ndim == 0:
                from .core import launch

                launch("copy", [x], dt, x.dtype, out=out)
            else:
                _backend(x.device).cumsum(out, x, dim, acc)
        return out

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g, None, None
        return g.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim), None, None


def cumsum(x, dim, dtype=None):
    dt = D.as_dtype(dtype) if dtype is not None else _sum_dtype(x.dtype)
    return Cumsum.apply(x, _wrap(dim, x.ndim) if x.ndim else 0, dt)
