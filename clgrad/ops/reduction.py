"""Reductions, each declared once (see ``registry``: neutral element, combine expression, NumPy
reference, dtype rule, gradient), and the ops built on them: mean, var, std, max/min with
indices, all/any, logsumexp, the softmax family and cumsum.
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function, apply_new_output, needs_recording
from ..autograd.grad_mode import is_grad_enabled
from ..backend.base import COPY, SUM
from ..tensor import Tensor, int_list_arg, wrap_dim
from .autocast import autocast_op
from .core import COMPLEX_HOOKS, EVERY_DIM, int_dim, launch, normalize_dims
from .decomp import matrix_norm_spectral
from .elementwise import maximum, minimum, where
from .indexing import ScatterAdd
from .registry import (
    ELEMENTWISE,
    REDUCTIONS,
    SCALAR_TYPE_NAMES,
    extreme_dtype,
    reduced_shape,
    reduction,
    refuse_integral_output,
    run_reduce,
)
from .results import return_type
from .scans import product_of_others

# torch.return_types.max / .min: ``values, indices = x.max(0)`` and ``.values`` / ``.indices``
max_result = return_type("max", ["values", "indices"])
min_result = return_type("min", ["values", "indices"])


def _prod_grad(grad, input, result, dim):
    # PyTorch's prod_backward: the quotient result / input where the input holds no zero at
    # all, else each element's product of the others, in every slice (one without a zero too:
    # an infinite element's quotient inf / inf would be NaN); chosen on the device, so that
    # backward never waits for it. The result is read (and saved), as PyTorch's: written in
    # place before backward, it raises
    if input.ndim == 0:
        return grad
    zeros = (input == 0).sum()
    # (the quotient's divisor 1 where unused: its 0 / 0 would reach a second order's gradient)
    quotient = result / where(zeros > 0, 1.0, input)
    out = grad * where(zeros > 0, product_of_others(input, dim), quotient)
    if not is_grad_enabled() and len(dim) == input.ndim:  # prod() of two zeros or more:
        out = where(zeros > 1, 0.0, out)  # ATen's shortcut, zeros whatever the gradient
    return out


def _extreme_grad(grad, input, result, dim):
    # ties share the gradient evenly, as in PyTorch
    mask = input == result
    return grad * mask / mask.sum(dim=dim, keepdim=True)


# (the gradient is expanded to the input's shape, which the node keeps: the input itself is not
# saved, so writing into it after the sum is fine, as in PyTorch; mean is a sum too)
@reduction("0", "a + b", np.sum, grad=lambda grad: grad, dims_node="SumBackward1")
def sum(
    apply,
    input: Tensor,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    dtype: D.dtype | None = None,
) -> Tensor:
    """The sum over ``dim`` (an int, a tuple, or every dim); integers sum to int64.

    >>> x = clgrad.tensor([[1, 2], [3, 4]])
    >>> clgrad.sum(x), x.sum(dim=0), x.sum(1, keepdim=True).shape
    (tensor(10), tensor([4, 6]), clgrad.Size([2, 1]))
    """
    return apply(input, dim, keepdim, dtype)


@reduction(
    "0",
    "a + b",
    np.nansum,
    map_expr="(x != x ? ({T})0 : x)",
    grad=lambda grad, input: where(input.isnan(), 0.0, grad.expand(input.shape)),
)
def nansum(
    apply,
    input: Tensor,
    dim: int | tuple[int, ...] | None = None,
    keepdim: bool = False,
    *,
    dtype: D.dtype | None = None,
) -> Tensor:
    """The sum over ``dim`` counting NaN as zero.

    >>> clgrad.nansum(clgrad.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    return apply(input, dim, keepdim, dtype)


@reduction("1", "a * b", np.prod, grad=_prod_grad, dims_node="ProdBackward1")
def prod(
    apply,
    input: Tensor,
    dim: int = EVERY_DIM,
    keepdim: bool = False,
    *,
    dtype: D.dtype | None = None,
) -> Tensor:
    """The product over one ``dim`` (or, left out, every dim); integers multiply to int64.

    >>> clgrad.prod(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=1)
    tensor([ 2., 12.])
    """
    return apply(input, None if dim is EVERY_DIM else int_dim("prod", dim), keepdim, dtype)


# NaN propagates: once a is NaN nothing compares past it (b != b: b is NaN)
@reduction(
    "LOWEST", "((b > a || b != b) ? b : a)", np.max, result=extreme_dtype, grad=_extreme_grad
)
def amax(
    apply, input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False
) -> Tensor:
    """The largest element over ``dim`` (or every dim); NaN propagates.

    >>> clgrad.amax(clgrad.tensor([[1, 5], [7, 2]]), dim=1)
    tensor([5, 7])
    """
    return apply(input, None if dim == () else dim, keepdim)


@reduction(
    "HIGHEST", "((b < a || b != b) ? b : a)", np.min, result=extreme_dtype, grad=_extreme_grad
)
def amin(
    apply, input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False
) -> Tensor:
    """The smallest element over ``dim`` (or every dim); NaN propagates.

    >>> clgrad.amin(clgrad.tensor([[1, 5], [7, 2]]), dim=1)
    tensor([1, 2])
    """
    return apply(input, None if dim == () else dim, keepdim)


@reduction("LOWEST", numpy=np.argmax, arg=True, better="v > s")
def argmax(apply, input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the first largest element over ``dim`` (of the flattened tensor when
    ``dim`` is None); a NaN counts as the largest.

    >>> clgrad.argmax(clgrad.tensor([[1, 5], [7, 2]]), dim=1)
    tensor([1, 0])
    """
    return apply(input, dim, keepdim)


@reduction("HIGHEST", numpy=np.argmin, arg=True, better="v < s")
def argmin(apply, input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the first smallest element over ``dim`` (flattened when ``dim`` is None).

    >>> clgrad.argmin(clgrad.tensor([3, 1, 2]))
    tensor(1)
    """
    return apply(input, dim, keepdim)


REDUCE_KERNELS = {name: op.kernel for name, op in REDUCTIONS.items()}


def _count(x, dims) -> int:
    if x.ndim == 0:  # dim 0 (or -1) of a 0-d tensor holds its one element
        return 1
    n = 1
    for d in dims:
        n *= x._shape[d]
    return n


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean over ``dim`` (or every dim) of a floating tensor.

    >>> clgrad.mean(clgrad.tensor([[1.0, 2.0], [3.0, 5.0]]), dim=0)
    tensor([2.0000, 3.5000])
    """
    dt = D.as_dtype(dtype) if dtype is not None else input.dtype
    if not dt.is_floating_point:
        if dt.category == 3 or input.dtype.category == 3:
            return COMPLEX_HOOKS["mean"](input, dim, keepdim, dt)
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {SCALAR_TYPE_NAMES[input.dtype.name]}"
        )
    dims = normalize_dims(dim, input.ndim)
    node = MeanAll if dim is None else Mean
    if needs_recording((input,)):
        return apply_new_output(node, (input, dims, keepdim, dt), (0,))
    return node.forward(None, input, dims, keepdim, dt)


class Mean(Function):
    """``mean`` over some dims as one node (PyTorch's ``MeanBackward1``): the sum's kernel
    divided by the count, the gradient spread evenly back over the reduced dims."""

    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, input, dims, keepdim, dt):
        # unrecorded ops: the node made for this call is the only one
        n = _count(input, dims)
        # a 16-bit float sums and divides in float32, rounded once at the end, as PyTorch's (its
        # sum alone would overflow: 100,000 halves of 1 are inf, their mean 1)
        acc = D.accumulation(dt)
        total = run_reduce(REDUCTIONS["sum"].kernel, input, dims, keepdim, acc, acc)
        if ctx is not None:
            ctx.shape, ctx.dims, ctx.keepdim, ctx.count = input._shape, dims, keepdim, n
        out = ELEMENTWISE["div"].run(total, n) if n else ELEMENTWISE["mul"].run(total, math.nan)
        return out if acc is dt else out.to(dt)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.keepdim:
            grad = grad.reshape(reduced_shape(ctx.shape, ctx.dims, True))
        return (grad / ctx.count).expand(ctx.shape), None, None, None


class MeanAll(Mean):
    """``mean`` over every dim (``MeanBackward0``)."""

    node_name = "MeanBackward0"


def _var_args(name, input, dim, unbiased, correction):
    """PyTorch's var/std overloads: ``(input, unbiased)`` (a bool second argument),
    ``(input, dim, unbiased, keepdim)`` and ``correction=`` (None is 1); floating only."""
    if isinstance(dim, bool):  # var(x, False): the unbiased overload
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise RuntimeError(f"{name}: cannot specify both unbiased and correction")
        correction = int(unbiased)
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return dim, 1 if correction is None else correction


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The variance over ``dim``, dividing by ``N - correction`` (Bessel's by default).

    >>> clgrad.var(clgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.6667)
    >>> clgrad.var(clgrad.tensor([1.0, 2.0, 3.0, 4.0]), correction=0)
    tensor(1.2500)
    """
    if input.dtype.category == 3:  # the variances of the parts, summed: E|z - mean|^2
        return COMPLEX_HOOKS["per_part_sum"](
            lambda t: var(t, dim, unbiased, keepdim, correction=correction), input
        )
    return Var.apply(input, *_variance("var", input, dim, unbiased, correction), keepdim)


def _variance(name, input, dim, unbiased, correction):
    """The reduced dims and the correction of a ``var``, with PyTorch's warning (naming
    ``name``: var, std, var_mean or std_mean) where the correction leaves no degree of
    freedom."""
    dim, correction = _var_args(name, input, dim, unbiased, correction)
    dims = normalize_dims(dim, input.ndim)
    kept = math.prod(s for d, s in enumerate(input.shape) if d not in dims)
    if input.numel() // builtins.max(kept, 1) - correction <= 0:  # (ATen's reduction factor)
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    return dims, correction


def _var_of(input, dims, correction, keepdim, root=False):
    """The variance's value (its square root with ``root``: std's): the squared deviations
    from the mean, summed and divided (a 16-bit float's in float32, as PyTorch's: its squares
    overflow, and std's root is taken before the result is rounded to 16 bits, where a
    variance past 65504 would be inf)."""
    acc = D.accumulation(input.dtype)
    x = input if acc is input.dtype else input.to(acc)
    centered = x - mean(x, dims, keepdim=True)
    n = _count(input, dims)
    out = sum(centered * centered, dims, keepdim) / builtins.max(n - correction, 0)
    out = out.sqrt() if root else out
    return out if acc is input.dtype else out.to(input.dtype)


def _var_grad(grad, input, dims, correction, keepdim):
    """PyTorch's var_backward, in Tensor ops (so differentiable again): ``grad * 2 / (N -
    correction) * (input - mean)``."""
    if not keepdim:
        grad = grad.reshape(reduced_shape(input._shape, dims, True))
    n = builtins.max(_count(input, dims) - correction, 0)
    return (2.0 / n if n else math.inf) * grad * (input - mean(input, dims, keepdim=True))


class Var(Function):
    """``var``'s one node (PyTorch's VarBackward0), the ops it runs recording none."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        ctx.save_for_backward(x)
        ctx.args = dims, correction, keepdim
        return _var_of(x, dims, correction, keepdim)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _var_grad(grad, x, *ctx.args), None, None, None


def _std_grad(grad, result):
    # sqrt's gradient, 0 where the deviation is 0 (a constant slice), where sqrt's own would
    # be 0 * inf = NaN (PyTorch's std_backward)
    zero = result == 0  # (safe inside too: the derivatives of grad / 0 are NaN)
    return (grad / (2 * where(zero, 1.0, result))).masked_fill(zero, 0)


class Std(Function):
    """``std``'s one node (PyTorch's StdBackward0): ``sqrt(var)``."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        result = _var_of(x, dims, correction, keepdim, root=True)
        ctx.save_for_backward(x, result)
        ctx.args = dims, correction, keepdim
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return _var_grad(_std_grad(grad, result), x, *ctx.args), None, None, None


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The standard deviation over ``dim`` (the square root of ``var``).

    >>> clgrad.std(clgrad.tensor([1.0, 3.0]))
    tensor(1.4142)
    """
    if input.dtype.category == 3:
        return var(input, dim, unbiased, keepdim, correction=correction).sqrt()
    return Std.apply(input, *_variance("std", input, dim, unbiased, correction), keepdim)


class VarMean(Function):
    """``var_mean``'s node (PyTorch's VarMeanBackward0), whose outputs are both its own; an
    output the backward leaves out adds nothing, as in PyTorch (a zero gradient would read the
    input: the gradient of the mean alone would need a second order)."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        ctx.args = dims, correction, keepdim
        return _var_of(x, dims, correction, keepdim), mean(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        (x,) = ctx.saved_tensors
        grad = None if grad_var is None else _var_grad(grad_var, x, *ctx.args)
        return _plus_mean_grad(grad, grad_mean, x, ctx.args), None, None, None


class StdMean(Function):
    """``std_mean``'s node (PyTorch's StdMeanBackward0)."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        ctx.set_materialize_grads(False)
        result = _var_of(x, dims, correction, keepdim, root=True)
        ctx.save_for_backward(x, result)
        ctx.args = dims, correction, keepdim
        return result, mean(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad_std, grad_mean):
        x, result = ctx.saved_tensors
        grad = None
        if grad_std is not None:
            grad = _var_grad(_std_grad(grad_std, result), x, *ctx.args)
        return _plus_mean_grad(grad, grad_mean, x, ctx.args), None, None, None


def _plus_mean_grad(grad, grad_mean, input, args):
    """``grad`` (None: none) plus mean's gradient (``Mean.backward``'s, in Tensor ops) of
    ``grad_mean`` over the dims of ``args`` (var's dims, correction, keepdim)."""
    if grad_mean is None:
        return grad
    dims, _, keepdim = args
    if not keepdim:
        grad_mean = grad_mean.reshape(reduced_shape(input._shape, dims, True))
    g = (grad_mean / _count(input, dims)).expand(input._shape)
    return g if grad is None else grad + g


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``.

    >>> clgrad.var_mean(clgrad.tensor([1.0, 3.0]))
    (tensor(2.), tensor(2.))
    """
    return _variance_mean(VarMean, "var_mean", input, dim, unbiased, keepdim, correction)


def _variance_mean(function, name, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if input.dtype.category == 3:  # var's (std's) of the parts, and the complex mean
        spread = var if function is VarMean else std
        deviation = spread(input, dim, unbiased, keepdim, correction=correction)
        return deviation, mean(input, dim, keepdim)
    return function.apply(input, *_variance(name, input, dim, unbiased, correction), keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``.

    >>> clgrad.std_mean(clgrad.tensor([1.0, 3.0]))
    (tensor(1.4142), tensor(2.))
    """
    return _variance_mean(StdMean, "std_mean", input, dim, unbiased, keepdim, correction)


aminmax_result = return_type("aminmax", ["min", "max"])


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over one ``dim`` (or every dim).

    >>> clgrad.aminmax(clgrad.tensor([[1, 5], [7, 2]]), dim=1)
    clgrad.return_types.aminmax(
    min=tensor([1, 2]),
    max=tensor([5, 7]))
    """
    if dim is not None:
        dim = int_dim("aminmax", dim)
    elif keepdim:  # every dim kept as size 1
        return aminmax_result(*(t.reshape((1,) * input.ndim) for t in aminmax(input)))
    return aminmax_result(amin(input, dim, keepdim), amax(input, dim, keepdim))


def count_nonzero(input, dim=None):
    """How many elements (over ``dim``) are nonzero, as int64.

    >>> clgrad.count_nonzero(clgrad.tensor([[0, 1], [2, 3]]), dim=0)
    tensor([1, 2])
    """
    return sum(input != 0, dim)


@autocast_op
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over ``dim`` (``"fro"`` and 2: Euclidean; ``inf``/``-inf``: the
    largest/smallest magnitude; 0: the count of nonzeros), or with ``"nuc"`` the nuclear norm of
    the matrices over two dims, like ``torch.norm``; floating tensors only.

    >>> clgrad.norm(clgrad.tensor([3.0, 4.0]))
    tensor(5.)
    >>> clgrad.norm(clgrad.tensor([[3.0, -4.0]]), p=1, dim=1)
    tensor([7.])
    """
    x = input if dtype is None else input.to(dtype)
    if not x.dtype.is_floating_point:
        if x.dtype.category == 3:  # the norm of the magnitudes
            return norm(x.abs(), p, dim, keepdim)
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{SCALAR_TYPE_NAMES[x.dtype.name]}"
        )
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":  # the sum of the singular values of the matrices over two dims
        dims = tuple(range(x.ndim)) if dim is None else int_list_arg(dim)
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dims)}")
        dims = tuple(wrap_dim(d, x.ndim) for d in dims)
        return matrix_norm_spectral(x, "nuc", dims, keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a number for ord, but got {p!r}")
    a = x.abs()
    if p in (math.inf, -math.inf):
        _check_extreme_norm(x, p, dim)
        return (amax if p > 0 else amin)(a, dim, keepdim)
    if p == 0:
        return CountNonzero.apply(x, dim, keepdim)
    if p == 1:
        return sum(a, dim, keepdim)
    return VectorNorm.apply(x, p, normalize_dims(dim, x.ndim), keepdim)


class CountNonzero(Function):
    """The 0-"norm": the count of nonzero elements, in the input's dtype. Recorded, as
    PyTorch's, but a step function: backward gives the input no gradient."""

    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        return sum(x != 0, dim, keepdim, dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


def _check_extreme_norm(x, p, dim):
    """PyTorch's refusal of an inf-norm over nothing (the max has no identity)."""
    name = "inf" if p > 0 else "-inf"
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        if not x.numel():
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because "
                "the operation does not have an identity"
            )
        return
    for d in normalize_dims(dim, x.ndim):
        if x.ndim and not x._shape[d]:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on the dimension {d}because "
                "this dimension is empty and the operation does not have an identity"
            )


class VectorNorm(Function):
    """The p-norm (p not 0, 1 or infinite) over ``dims``, with PyTorch's gradient
    ``sign(x) * |x|^(p-1) * g / norm^(p-1)``, which is 0 where the norm is 0, and for p < 1
    where x is 0 (``sqrt``'s and ``pow``'s chain rule gave NaN there: a zero vector in a norm
    poisoned training)."""

    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        half = x.dtype.itemsize == 2  # 16-bit floats: powers summed in float32, as ATen's
        wide = x.float() if half else x  # (a sum of squares past 65504 was inf)
        if p == 2:
            out = sum(wide * wide, dims, keepdim).sqrt()
        else:
            out = sum(wide.abs() ** p, dims, keepdim) ** (1.0 / p)
        out = out.to(x.dtype) if half else out
        ctx.save_for_backward(x, out)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        if x.dtype.itemsize == 2:  # in float32, as the forward
            return (
                VectorNorm.backward_wide(ctx, g.float(), x.float(), out.float())[0].to(x.dtype),
                None,
                None,
                None,
            )
        return VectorNorm.backward_wide(ctx, g, x, out)

    @staticmethod
    def backward_wide(ctx, g, x, out):
        p = ctx.p
        if not ctx.keepdim:
            kept = reduced_shape(x._shape, ctx.dims, True)
            g, out = g.reshape(kept), out.reshape(kept)
        if p < 1:  # |x|^(p-1) is infinite at 0, where PyTorch's gradient is 0
            zero = x == 0
            scaled = x.sign() * where(zero, 0.0, where(zero, 1.0, x.abs()) ** (p - 1))
            return scaled * g * out ** (1 - p), None, None, None
        # the norm made safe inside as well as outside (a 0 divided in the unselected branch
        # would still give the derivatives of this gradient NaN: 0 * inf)
        zero = out == 0
        safe = where(zero, 1.0, out)
        scale = where(zero, 0.0, g / safe if p == 2 else g / safe ** (p - 1))
        if p == 2:
            return x * scale, None, None, None
        scaled = x.sign() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
        return scaled * scale, None, None, None


class ExtremeDim(Function):
    """max/min along one dim: values and indices; the gradient goes to the chosen index."""

    node_name = "MaxBackward0"

    @classmethod
    def of(cls, name):
        """The node of max(x, dim) or of min(x, dim) (``name``), as PyTorch names them."""
        return cls if name == "max" else MinDim

    @staticmethod
    def forward(ctx, x, dim, keepdim, name):
        values = run_reduce(REDUCE_KERNELS["a" + name], x, (dim,), keepdim, x.dtype)
        indices = run_reduce(REDUCE_KERNELS["arg" + name], x, (dim,), keepdim, D.int64)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim, ctx.keepdim = x._shape, dim, keepdim
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, _):
        (indices,) = ctx.saved_tensors
        if not ctx.shape:  # a 0-d input: its one element was chosen
            return g, None, None, None
        if not ctx.keepdim:
            g, indices = g.unsqueeze(ctx.dim), indices.unsqueeze(ctx.dim)
        z = Tensor._full(ctx.shape, 0, g.dtype, g.device)
        return ScatterAdd.apply(z, ctx.dim, indices, g), None, None, None


class MinDim(ExtremeDim):
    node_name = "MinBackward0"


class ExtremeAll(Function):
    """max() / min() over every element (PyTorch's MaxBackward1 / MinBackward1): the gradient
    shared evenly by the elements equal to the result, by the NaNs where it is NaN (ATen's
    ``evenly_distribute_backward``; amax's formula gives every element NaN there)."""

    node_name = "MaxBackward1"

    @classmethod
    def of(cls, name):
        return cls if name == "max" else MinAll

    @staticmethod
    def forward(ctx, x, name):
        result = REDUCTIONS["a" + name].apply(x)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        mask = where(result.isnan(), x.isnan(), x == result)  # (chosen on the device)
        # (zero elsewhere, an infinite or NaN gradient too: ATen's masked_fill)
        return where(mask, grad / mask.sum(), 0.0), None


class MinAll(ExtremeAll):
    node_name = "MinBackward1"


def _max_min(name, x, dim, keepdim, other):
    if isinstance(dim, Tensor):  # max(x, other), as PyTorch's overloads take it
        dim, other = EVERY_DIM, dim
    if other is not None:
        return (maximum if name == "max" else minimum)(x, other)
    if dim is EVERY_DIM:  # amax's / amin's reduction in PyTorch's node of max() / min()
        if not needs_recording((x,)):
            return REDUCTIONS["a" + name].apply(x)
        return ExtremeAll.of(name).apply(x, name)
    d = wrap_dim(int_dim(name, dim), x.ndim)
    if x.ndim and x._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    result = max_result if name == "max" else min_result
    return result(*ExtremeDim.of(name).apply(x, d, keepdim, name))


def max(input, dim=EVERY_DIM, keepdim=False, other=None):
    """The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor,
    ``maximum``.

    >>> clgrad.max(clgrad.tensor([[1, 5], [7, 2]]), dim=1)
    clgrad.return_types.max(
    values=tensor([5, 7]),
    indices=tensor([1, 0]))
    """
    return _max_min("max", input, dim, keepdim, other)


def min(input, dim=EVERY_DIM, keepdim=False, other=None):
    """The smallest element; with ``dim``, ``(values, indices)`` along it.

    >>> clgrad.min(clgrad.tensor([3, 1, 2]))
    tensor(1)
    """
    return _max_min("min", input, dim, keepdim, other)


def _logical_reduce(name, input, dim, keepdim):
    """all / any over ``dim``: PyTorch's ``all.dims`` convention (None reduces every dim, an
    empty tuple none; a 0-d tensor's dim 0 is checked, then nothing is reduced) and its
    dtypes (bool, uint8 for uint8: a legacy PyTorch keeps)."""
    b = input if input.dtype is D.bool_ else input != 0
    dims = normalize_dims(dim, input.ndim, empty_is_all=False, name=name)
    dims = dims if input.ndim else ()
    if builtins.any(b._shape[d] == 0 for d in dims):
        if name == "all":
            out = b.logical_not().sum(dim=dims, keepdim=keepdim) == 0
        else:
            out = b.sum(dim=dims, keepdim=keepdim) != 0
    else:
        kernel = REDUCE_KERNELS["amin" if name == "all" else "amax"]
        out = run_reduce(kernel, b, dims, keepdim, D.bool_)
    return out.to(D.uint8) if input.dtype is D.uint8 else out


def all(input, dim=None, keepdim=False):
    """Whether every element (over ``dim``) is nonzero.

    >>> clgrad.all(clgrad.tensor([[True, False], [True, True]]), dim=1)
    tensor([False,  True])
    >>> clgrad.all(clgrad.tensor([1, 0], dtype=clgrad.uint8))
    tensor(0, dtype=clgrad.uint8)
    """
    return _logical_reduce("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    """Whether some element (over ``dim``) is nonzero.

    >>> clgrad.any(clgrad.tensor([0, 0, 3]))
    tensor(True)
    """
    return _logical_reduce("any", input, dim, keepdim)


@autocast_op
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow.

    >>> clgrad.logsumexp(clgrad.tensor([0.0, 0.0]), dim=0)
    tensor(0.6931)
    """
    if dim is None:  # PyTorch's signature takes an int or ints only
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    floating = input.dtype.is_floating_point or input.dtype.is_complex
    x = input if floating else input.to(D.get_default_dtype())
    dims = normalize_dims(dim, x.ndim, name="logsumexp")
    return Logsumexp.apply(x, dims, keepdim)


class Logsumexp(Function):
    """logsumexp over ``dims``; its gradient ``grad * conj(exp(input - result))`` reads the
    result, as PyTorch's (which refuses it written in place before backward)."""

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        # shifted by the largest (real part, for a complex input: PyTorch's): no overflow
        real = x.real if x.dtype.is_complex else x
        m = amax(real, dims, keepdim=True) if x.numel() else real.sum(dims, keepdim=True)
        m = m.masked_fill(m.isinf(), 0.0)
        out = (x - m).exp().sum(dims, keepdim=True).log() + m
        ctx.kept = out.shape
        out = out if keepdim or not dims else out.squeeze(dims)
        ctx.save_for_backward(x, out)  # (the output itself: its own gradient flows back)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        scale = (x - out.reshape(ctx.kept)).exp()
        return grad.reshape(ctx.kept) * (scale.conj() if x.dtype.is_complex else scale), None, None


def _softmax_kernel(x, dim, log, g=None):
    """(log_)softmax of x along ``dim`` by the backend's one-kernel primitive, into a new
    contiguous tensor (x has at least one dim and one element); with ``g``, its gradient from
    its output x (each row read twice: no sum kernel, no elementwise kernel after it)."""
    x = x.contiguous()
    acc = D.accumulation(x.dtype)
    n = x._shape[dim]
    if not x.device.backend.softmax_fits(n, math.prod(x._shape[dim + 1 :])):
        return _softmax_ops(x, dim, log, g, acc)
    out = Tensor._empty(x._shape, x.dtype, x.device)
    if g is None:
        x.device.backend.softmax(out._record(), x._record(), dim, log, acc)
    else:
        g = g.contiguous()  # held until the launch
        x.device.backend.softmax_backward(out._record(), x._record(), g._record(), dim, log, acc)
    return out


def _softmax_ops(x, dim, log, g, acc):
    """``_softmax_kernel`` by Tensor ops, in ``acc``: for rows the device's kernels cannot walk
    (a driver's loop limit: ``Backend.softmax_fits``)."""
    y = x.to(acc)
    if g is not None:
        g = g.to(acc)
        out = g - y.exp() * g.sum(dim, keepdim=True) if log else y * (g - (g * y).sum(dim, True))
        return out.to(x.dtype)
    shifted = y - y.amax(dim, keepdim=True)  # (an infinite maximum: NaN, as torch's kernel)
    total = shifted.exp().sum(dim, keepdim=True)
    return (shifted - total.log() if log else shifted.exp() / total).to(x.dtype)


class Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        y = _softmax_kernel(x, dim, log=False)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not is_grad_enabled() and g.dtype is y.dtype:  # one kernel (no graph to record)
            return _softmax_kernel(y, ctx.dim, False, g), None
        return y * (g - (g * y).sum(ctx.dim, keepdim=True)), None


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        y = _softmax_kernel(x, dim, log=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not is_grad_enabled() and g.dtype is y.dtype:
            return _softmax_kernel(y, ctx.dim, True, g), None
        return g - y.exp() * g.sum(ctx.dim, keepdim=True), None


def _softmax_input(x, dim, dtype):
    d = wrap_dim(dim, x.ndim)  # the dim first, as PyTorch checks it
    if dtype is not None:
        x = x.to(dtype)
    # an empty tensor of any dtype passes: ATen's kernel, which refuses the others, never runs
    if not x.dtype.is_floating_point and x.numel():
        raise NotImplementedError(f"softmax is only defined for floating types, got {x.dtype}")
    return x, d


@autocast_op
def softmax(input, dim, dtype=None):
    """``exp(input) / sum(exp(input))`` along ``dim``.

    >>> clgrad.softmax(clgrad.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    x, d = _softmax_input(input, dim, dtype)
    if not x.dtype.is_floating_point:  # (empty)
        return x.clone()
    if x.ndim == 0 or x.numel() == 0:
        return x.exp() / x.exp()
    return Softmax.apply(x, d)


@autocast_op
def log_softmax(input, dim, dtype=None):
    """``log(softmax(input, dim))``, computed stably.

    >>> clgrad.log_softmax(clgrad.tensor([0.0, 0.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    x, d = _softmax_input(input, dim, dtype)
    if not x.dtype.is_floating_point:  # (empty)
        return x.clone()
    if x.ndim == 0 or x.numel() == 0:
        return x - x
    return LogSoftmax.apply(x, d)


class Cumsum(Function):
    @staticmethod
    def forward(ctx, x, dim, dt):
        ctx.dim = dim
        out = Tensor._empty(x._shape, dt, x.device)
        if out.numel():
            if x.ndim == 0:
                launch(COPY, [x], dt, x.dtype, out=out)
            else:
                x.device.backend.scan(out._record(), x._record(), dim, D.accumulation(dt), SUM)
        return out

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g, None, None
        return g.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim), None, None


@autocast_op
def cumsum(input, dim, *, dtype=None):
    """The running sum along ``dim``.

    >>> clgrad.cumsum(clgrad.tensor([1, 2, 3]), dim=0)
    tensor([1, 3, 6])
    """
    dt = (
        D.as_dtype(dtype)
        if dtype is not None
        else (D.int64 if input.dtype.category < 2 else input.dtype)
    )
    d = wrap_dim(dim, input.ndim)  # (a bad dim is PyTorch's first error)
    if dt.category == 3:
        x = input if input.dtype is dt else input.to(dt)
        return COMPLEX_HOOKS["per_part"](lambda t: cumsum(t, d), x)
    if dtype is not None and needs_recording((input,)):
        refuse_integral_output(dt)
    return Cumsum.apply(input, d, dt)


cumsum.out_dtype = "compute"  # out= computes in out's dtype, as PyTorch's (core.with_out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean over ``dim`` of the elements that are not NaN, like ``torch.nanmean``.

    >>> clgrad.nanmean(clgrad.tensor([1.0, float("nan"), 3.0]))
    tensor(2.)
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{SCALAR_TYPE_NAMES[input.dtype.name]}"
        )
    count = input.isnan().logical_not().sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count
