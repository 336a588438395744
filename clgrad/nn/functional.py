"""clgrad.nn.functional: activations, layers and losses as functions, as in torch.nn.functional.

Every function is differentiable: most compose Tensor ops; convolution and pooling go through
the sliding-window view of ``clgrad.ops.nn_ops`` (im2col: one strided copy and one matmul).
"""

from __future__ import annotations

import itertools
import math
import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from .. import capture
from .. import dtypes as _D
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..ops import activation as _A
from ..ops import elementwise as _E
from ..ops import linalg as _L
from ..ops import nn_ops as _N
from ..ops import reduction as _R
from ..ops import sparse as _SP
from ..ops.autocast import autocast_op
from ..ops.core import SCALAR_TYPE_NAMES as _SCALAR_TYPE_NAMES
from ..ops.core import TYPE_META_NAMES as _TYPE_META_NAMES
from ..ops.core import broadcast_shapes as _broadcast_shapes
from ..ops.core import check_out as _check_out
from ..ops.core import same_device as _same_device
from ..ops.core import write_out as _write_out
from ..ops.creation import arange as _arange
from ..ops.creation import linspace as _linspace
from ..ops.creation import rand as _rand
from ..ops.creation import tensor as _tensor
from ..ops.indexing import Gather as _Gather
from ..ops.indexing import select_positions as _select_positions
from ..ops.inplace import inplace as _inplace
from ..ops.linalg import pdist
from ..ops.movement import broadcast_tensors as _broadcast_tensors
from ..ops.movement import cat as _cat
from ..ops.movement import stack as _stack
from ..tensor import Tensor
from . import attention as _attention

if TYPE_CHECKING:
    from ..dtypes import dtype as DType

_Int2 = int | tuple[int, int]
_Reduction = Literal["mean", "sum", "none"]

__all__ = [
    "relu",
    "relu_",
    "relu6",
    "leaky_relu",
    "elu",
    "hardtanh",
    "gelu",
    "silu",
    "softplus",
    "sigmoid",
    "tanh",
    "logsigmoid",
    "glu",
    "softsign",
    "hardsigmoid",
    "hardswish",
    "celu",
    "selu",
    "mish",
    "hardshrink",
    "softshrink",
    "tanhshrink",
    "hardtanh_",
    "leaky_relu_",
    "elu_",
    "selu_",
    "celu_",
    "threshold_",
    "rrelu_",
    "threshold",
    "prelu",
    "rrelu",
    "softmax",
    "softmin",
    "log_softmax",
    "dropout",
    "dropout2d",
    "linear",
    "bilinear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "unfold",
    "fold",
    "max_pool2d",
    "avg_pool2d",
    "max_pool1d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "layer_norm",
    "batch_norm",
    "group_norm",
    "instance_norm",
    "local_response_norm",
    "embedding",
    "one_hot",
    "pad",
    "normalize",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "cosine_similarity",
    "pairwise_distance",
    "scaled_dot_product_attention",
    "cross_entropy",
    "ctc_loss",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multilabel_margin_loss",
    "multi_margin_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "rms_norm",
    "dropout1d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "gumbel_softmax",
    "affine_grid",
    "grid_sample",
    "embedding_bag",
]


# ---- activations -----------------------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies the rectified linear unit ``max(0, x)`` element-wise (in place with ``inplace``),
    as ``torch.nn.functional.relu``.

    >>> import clgrad.nn.functional as F
    >>> F.relu(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0., 0., 3.])
    """
    return input.relu_() if inplace else _E.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``: replaces ``x`` by ``max(0, x)`` and returns it, as
    ``torch.nn.functional.relu_``.

    >>> x = clgrad.tensor([-2.0, 3.0])
    >>> _ = clgrad.nn.functional.relu_(x)
    >>> x
    tensor([0., 3.])
    """
    return input.relu_()


def _in_place(op, input, *args):
    """``op(input, *args)`` written into ``input``, as PyTorch's ``op_`` (torch has no Tensor
    method for most of these): recorded through ``ops.inplace``, which computes from a copy of
    the old value, so the gradient still has it (``copy_`` of the result would not)."""

    def direct():
        input.copy_(op(input, *args))

    return _inplace(input, lambda old: op(old, *args), direct)


def _act(op, input, *args, inplace=False):
    return _in_place(op, input, *args) if inplace else op(input, *args)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, input), 6)`` element-wise, as ``torch.nn.functional.relu6``.

    >>> clgrad.nn.functional.relu6(clgrad.tensor([-2.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return _act(_A.relu6, input, inplace=inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``input`` clamped element-wise into ``[min_val, max_val]``, as
    ``torch.nn.functional.hardtanh``.

    >>> clgrad.nn.functional.hardtanh(clgrad.tensor([-2.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act(_A.hardtanh, input, min_val, max_val, inplace=inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``, as ``torch.nn.functional.hardtanh_``.

    >>> clgrad.nn.functional.hardtanh_(clgrad.tensor([-2.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere, as
    ``torch.nn.functional.leaky_relu``.

    >>> clgrad.nn.functional.leaky_relu(clgrad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    return _act(_A.leaky_relu, input, negative_slope, inplace=inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``, as ``torch.nn.functional.leaky_relu_``.

    >>> clgrad.nn.functional.leaky_relu_(clgrad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """The exponential linear unit: ``input`` where positive, ``alpha * (exp(input) - 1)``
    elsewhere, as ``torch.nn.functional.elu``.

    >>> clgrad.nn.functional.elu(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.8647,  3.0000])
    """
    return _act(_A.elu, input, alpha, inplace=inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``, as ``torch.nn.functional.elu_``.

    >>> clgrad.nn.functional.elu_(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.8647,  3.0000])
    """
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(input, alpha)`` with the self-normalizing constants, as
    ``torch.nn.functional.selu``.

    >>> clgrad.nn.functional.selu(clgrad.tensor([-1.0, 2.0]))
    tensor([-1.1113,  2.1014])
    """
    return _act(_A.selu, input, inplace=inplace)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``, as ``torch.nn.functional.selu_``.

    >>> clgrad.nn.functional.selu_(clgrad.tensor([-1.0, 2.0]))
    tensor([-1.1113,  2.1014])
    """
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, input) + min(0, alpha * (exp(input / alpha) - 1))``, as
    ``torch.nn.functional.celu``.

    >>> clgrad.nn.functional.celu(clgrad.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    return _act(_A.celu, input, alpha, inplace=inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``, as ``torch.nn.functional.celu_``.

    >>> clgrad.nn.functional.celu_(clgrad.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    return celu(input, alpha, inplace=True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(input + 3) / 6``, as ``torch.nn.functional.hardsigmoid``.

    >>> clgrad.nn.functional.hardsigmoid(clgrad.tensor([-4.0, 0.0, 1.5]))
    tensor([0.0000, 0.5000, 0.7500])
    """
    return _act(_A.hardsigmoid, input, inplace=inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * relu6(input + 3) / 6``, as ``torch.nn.functional.hardswish``.

    >>> clgrad.nn.functional.hardswish(clgrad.tensor([-4.0, 1.0, 4.0]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    return _act(_A.hardswish, input, inplace=inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))``, as ``torch.nn.functional.mish``.

    >>> clgrad.nn.functional.mish(clgrad.tensor([-1.0, 2.0]))
    tensor([-0.3034,  1.9440])
    """
    return _act(_A.mish, input, inplace=inplace)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` where ``|input| > lambd``, else 0, as ``torch.nn.functional.hardshrink``.

    >>> clgrad.nn.functional.hardshrink(clgrad.tensor([-1.0, 0.3, 0.6]))
    tensor([-1.0000,  0.0000,  0.6000])
    """
    return _A.hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` moved toward 0 by ``lambd`` (0 within ``lambd`` of it), as
    ``torch.nn.functional.softshrink``.

    >>> clgrad.nn.functional.softshrink(clgrad.tensor([-1.0, 0.3, 0.75]))
    tensor([-0.5000,  0.0000,  0.2500])
    """
    return _A.softshrink(input, lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``input - tanh(input)``, as ``torch.nn.functional.tanhshrink``.

    >>> clgrad.nn.functional.tanhshrink(clgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2384])
    """
    return _A.tanhshrink(input)


def softsign(input: Tensor) -> Tensor:
    """``input / (1 + |input|)``, as ``torch.nn.functional.softsign``.

    >>> clgrad.nn.functional.softsign(clgrad.tensor([-3.0, 1.0]))
    tensor([-0.7500,  0.5000])
    """
    return _A.softsign(input)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(input))``, computed without overflow, as
    ``torch.nn.functional.logsigmoid``.

    >>> clgrad.nn.functional.logsigmoid(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-2.1269, -0.6931, -0.0486])
    """
    return _A.logsigmoid(input)


def gelu(input: Tensor, approximate: Literal["none", "tanh"] = "none") -> Tensor:
    """Applies the Gaussian error linear unit ``x * Phi(x)`` element-wise (``Phi`` the standard
    normal CDF; ``approximate="tanh"`` uses the tanh approximation), as
    ``torch.nn.functional.gelu``.

    >>> clgrad.nn.functional.gelu(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.0455, 0.0000, 2.9960])
    """
    return _E.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies the sigmoid linear unit (swish) ``x * sigmoid(x)`` element-wise, as
    ``torch.nn.functional.silu`` (on ``input`` itself with ``inplace``).

    >>> clgrad.nn.functional.silu(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.2384, 0.0000, 2.8577])
    """
    return _act(_E.silu, input, inplace=inplace)


@autocast_op
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """Applies ``log(1 + exp(beta * x)) / beta`` element-wise, and ``x`` itself where
    ``beta * x > threshold``, as ``torch.nn.functional.softplus``.

    >>> clgrad.nn.functional.softplus(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1269, 0.6931, 3.0486])
    """
    return _E.softplus(input, beta=beta, threshold=threshold)


def sigmoid(input: Tensor) -> Tensor:
    """Applies the logistic sigmoid ``1 / (1 + exp(-x))`` element-wise, as
    ``torch.nn.functional.sigmoid``.

    >>> clgrad.nn.functional.sigmoid(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1192, 0.5000, 0.9526])
    """
    return _E.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Applies the hyperbolic tangent element-wise, as ``torch.nn.functional.tanh``.

    >>> clgrad.nn.functional.tanh(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.9640, 0.0000, 0.9951])
    """
    return _E.tanh(input)


def _softmax_dim(name, ndim, dim):
    """PyTorch's legacy implicit dim (0 for 0-, 1- and 3-d inputs, else 1), with its warning."""
    if dim is not None:
        return dim
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


@autocast_op
def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: DType | None = None
) -> Tensor:
    """Applies ``exp(x) / sum(exp(x))`` along ``dim``, so that the values along it are in [0, 1]
    and sum to 1, as ``torch.nn.functional.softmax``; ``dtype`` casts the input first, and
    ``dim=None`` picks PyTorch's legacy implicit dim with its deprecation warning.

    >>> clgrad.nn.functional.softmax(clgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.0900, 0.2447, 0.6652])
    """
    return _R.softmax(input, _softmax_dim("softmax", input.ndim, dim), dtype)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: DType | None = None
) -> Tensor:
    """Applies ``softmax(-x)`` along ``dim``, as ``torch.nn.functional.softmin``.

    >>> clgrad.nn.functional.softmin(clgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.6652, 0.2447, 0.0900])
    """
    return _R.softmax(-input, _softmax_dim("softmin", input.ndim, dim), dtype)


@autocast_op
def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: DType | None = None
) -> Tensor:
    """Applies ``log(softmax(x))`` along ``dim``, computed stably, as
    ``torch.nn.functional.log_softmax``.

    >>> clgrad.nn.functional.log_softmax(clgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    return _R.log_softmax(input, _softmax_dim("log_softmax", input.ndim, dim), dtype)


# ---- dropout ---------------------------------------------------------------------------------
def _check_p(p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _kernel_takes(kernel, x, ok) -> None:
    """ATen's NotImplementedError where its CPU kernel ``kernel`` has no instance for x's dtype
    (``ok(dtype)`` False): PyTorch refuses the dtype before any other check of the values."""
    if not ok(x.dtype):
        kind = _SCALAR_TYPE_NAMES[x.dtype.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{kind}'")


def _floating(dt) -> bool:
    return dt.is_floating_point


def _dropout(x, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0.0:
        return x
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        kind = _SCALAR_TYPE_NAMES[x.dtype.name]
        raise RuntimeError(f"result type Float can't be cast to the desired output type {kind}")
    if p == 1.0:
        out = x * 0.0
    else:
        dt = x.dtype if x.dtype in (_D.float32, _D.float64) else _D.float32
        keep = _rand(mask_shape, dtype=dt, device=x.device) >= p
        out = x * (keep * (1.0 / (1.0 - p))).to(x.dtype)
    return x.copy_(out) if inplace else out


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """When ``training``, zeroes each element independently with probability ``p`` and scales the
    others by ``1 / (1 - p)``; otherwise returns ``input`` unchanged, as
    ``torch.nn.functional.dropout`` (note that ``training`` defaults to True).

    >>> _ = clgrad.manual_seed(0)
    >>> sorted(set(clgrad.nn.functional.dropout(clgrad.ones(8), 0.5).tolist()))
    [0.0, 2.0]
    >>> clgrad.nn.functional.dropout(clgrad.ones(3), 0.5, training=False)
    tensor([1., 1., 1.])
    """
    return _dropout(input, p, training, inplace, input.shape)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """When ``training``, zeroes whole channels of a ``(N, C, H, W)`` input, each with probability
    ``p``, and scales the others by ``1 / (1 - p)``, as ``torch.nn.functional.dropout2d``: as
    PyTorch still does, one draw per (dim 0, dim 1) pair for any input of 2 dims or more, so a
    3-D input is taken as ``(N, C, L)``; with its warnings for inputs that are not 4-D.

    >>> _ = clgrad.manual_seed(0)
    >>> y = clgrad.nn.functional.dropout2d(clgrad.ones(1, 4, 2, 2))
    >>> y.shape, bool((y.amax((2, 3)) == y.amin((2, 3))).all())
    (clgrad.Size([1, 4, 2, 2]), True)
    """
    n = input.ndim
    if n not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {n}-D input to dropout2d, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, "
            "please use dropout instead. Note that dropout2d exists to provide channel-wise "
            "dropout on inputs with 2 spatial dimensions, a channel dimension, and an optional "
            "batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if n == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    if n < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _dropout(input, p, training, inplace, tuple(input.shape[:2]) + (1,) * (n - 2))


# ---- linear ----------------------------------------------------------------------------------
@autocast_op
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Applies the affine map ``input @ weight.T + bias`` to the last dim of ``input``, as
    ``torch.nn.functional.linear``: input ``(*, in)``, weight ``(out, in)``, bias ``(out,)``,
    output ``(*, out)`` (more than two dims are one ``(prod, in)`` matmul).

    >>> w = clgrad.tensor([[1.0, 2.0], [0.0, 1.0], [1.0, 1.0]])
    >>> clgrad.nn.functional.linear(clgrad.tensor([[1.0, 1.0]]), w, clgrad.tensor([0.0, 0.0, 1.0]))
    tensor([[3., 1., 3.]])
    """
    if input.ndim == 0:
        raise RuntimeError("linear(): input must have at least one dimension")
    if input.shape[-1] != weight.shape[-1]:
        lead = "x".join(str(n) for n in input.shape[:-1]) or "1"
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({lead}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
    if input.ndim > 2:
        lead = tuple(input.shape[:-1])
        rows = math.prod(lead)  # (not -1: ambiguous where in_features is 0)
        flat = input.reshape(rows, input.shape[-1])
        if weight.ndim == 2 and bias is not None:  # one addmm, as PyTorch's for 3-d input
            return _L.addmm(bias, flat, weight.t()).reshape(lead + (weight.shape[0],))
        out = (flat @ weight.t()).reshape(lead + (weight.shape[0],))
    elif input.ndim == 2 and weight.ndim == 2 and bias is not None:
        return _L.addmm(bias, input, weight.t())  # one node, as PyTorch's (AddmmBackward0)
    else:
        out = input @ weight.t() if weight.ndim == 2 else input @ weight
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Applies the bilinear map ``y_k = input1 @ weight[k] @ input2 + bias[k]`` for a
    ``(out, in1, in2)`` weight, as ``torch.nn.functional.bilinear``: inputs ``(*, in1)`` and
    ``(*, in2)``, output ``(*, out)``.

    >>> x1, x2, w = clgrad.ones(2, 3), clgrad.ones(2, 4), clgrad.ones(5, 3, 4)
    >>> y = clgrad.nn.functional.bilinear(x1, x2, w)
    >>> y.shape, y[0, 0].item()
    (clgrad.Size([2, 5]), 12.0)
    """
    terms = (input1.unsqueeze(-2).unsqueeze(-2) @ weight).squeeze(-2) * input2.unsqueeze(-2)
    y = terms.sum(-1, dtype=terms.dtype)  # (an integer sum stays in its type, as torch's)
    return y if bias is None else y + bias


# ---- convolution -----------------------------------------------------------------------------
def _ntuple(v, n, name="value"):
    """``v`` (an int or a sequence of 1 or ``n`` ints) as an ``n``-tuple of ints."""
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * n
        if len(v) != n:
            raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {v}")
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _pair(v, name="value"):
    return _ntuple(v, 2, name)


def _conv_pads(padding, kernel, stride, dilation):
    """(lo, hi) per spatial dim from an int, a tuple, 'valid' or 'same'."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # PyTorch puts the odd element of an even total on the high side
            totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
            return tuple((t // 2, t - t // 2) for t in totals)
        raise RuntimeError(f"Invalid padding string: {padding!r}")  # (ATen's; modules check first)
    pads = _ntuple(padding, n, "padding")
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pads)


def _conv_input(name, input, weight, nd):
    """The batched input (an unbatched one gets a batch of 1) and whether it was unbatched,
    after PyTorch's checks of the ranks and dtypes."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    if weight.ndim != nd + 2:
        raise RuntimeError(
            f"{name}: expected a {nd + 2}-D weight, got weight of size {list(weight.shape)}"
        )
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"Input type ({input.dtype.name}) and weight type ({weight.dtype.name}) should be "
            "the same"
        )
    unbatched = input.ndim == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _check_groups(weight, groups):
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )


def _convnd(name, nd, input, weight, bias, stride, padding, dilation, groups):
    """N-d convolution as im2col: ``Im2Col`` copies the windows into a (N, C * prod(kernel),
    L) column matrix (the padding never materialized), then one matmul batched over N (and
    the groups) writes the (N, C_out, L) output in place: no transpose after it."""
    x, unbatched = _conv_input(name, input, weight, nd)
    _check_groups(weight, groups)
    out_c, cg = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    c = x.shape[1]
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )
    stride, dilation = _ntuple(stride, nd, "stride"), _ntuple(dilation, nd, "dilation")
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    pads = _conv_pads(padding, kernel, stride, dilation)
    spatial = tuple(i + lo + hi for i, (lo, hi) in zip(x.shape[2:], pads))
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(s < k for s, k in zip(spatial, spans)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, spatial))}). "
            f"Kernel size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than "
            "actual input size"
        )
    outs = tuple(map(_N.out_size, spatial, kernel, stride, dilation))
    lo = tuple(p for p, _ in pads)
    if bias is not None:
        if bias.dtype is not input.dtype:
            raise RuntimeError(
                f"Input type ({_TYPE_META_NAMES[input.dtype.name]}) and bias type "
                f"({_TYPE_META_NAMES[bias.dtype.name]}) should be the same"
            )
        if tuple(bias.shape) != (out_c,):
            raise RuntimeError(
                f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
                f"with {out_c} elements, but got bias of size {list(bias.shape)} instead"
            )
    out = _N.Convolution.apply(x, weight, bias, outs, stride, dilation, lo, groups)
    return out.squeeze(0) if unbatched else out


@autocast_op
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] | Literal["valid", "same"] = 0,
    dilation: int | tuple[int] = 1,
    groups: int = 1,
) -> Tensor:
    """Applies a 1-D convolution (cross-correlation) of a ``(N, C_in, L)`` or ``(C_in, L)`` input
    with a ``(C_out, C_in / groups, k)`` weight, as ``torch.nn.functional.conv1d``; the options
    as in ``conv2d``.

    >>> x = clgrad.arange(5.0).reshape(1, 1, 5)
    >>> clgrad.nn.functional.conv1d(x, clgrad.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1., -1.]]])
    """
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: _Int2 = 1,
    padding: _Int2 | Literal["valid", "same"] = 0,
    dilation: _Int2 = 1,
    groups: int = 1,
) -> Tensor:
    """Applies a 2-D convolution (cross-correlation, as ``torch.nn.functional.conv2d``) of a
    ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)`` input with a ``(C_out, C_in / groups, kh,
    kw)`` weight, with zero ``padding`` (an int, a pair, "valid" or "same"). It runs as im2col:
    the windows of the input (zero where they reach into the padding) are copied once into a
    ``(N, C*kh*kw, OH*OW)`` matrix that one matmul, batched over N, multiplies by the
    ``(C_out, C*kh*kw)`` weight.

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> clgrad.nn.functional.conv2d(x, clgrad.ones(1, 1, 2, 2), stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]])
    >>> clgrad.nn.functional.conv2d(x, clgrad.ones(1, 1, 3, 3), padding=1).shape
    clgrad.Size([1, 1, 4, 4])
    """
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] | Literal["valid", "same"] = 0,
    dilation: int | tuple[int, int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """Applies a 3-D convolution (cross-correlation) of a ``(N, C_in, D, H, W)`` or
    ``(C_in, D, H, W)`` input with a ``(C_out, C_in / groups, kd, kh, kw)`` weight, as
    ``torch.nn.functional.conv3d``; the options as in ``conv2d``.

    >>> x = clgrad.ones(1, 2, 4, 4, 4)
    >>> clgrad.nn.functional.conv3d(x, clgrad.ones(3, 2, 2, 2, 2), padding=1).shape
    clgrad.Size([1, 3, 5, 5, 5])
    """
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(
    name, nd, input, weight, bias, stride, padding, output_padding, groups, dilation
):
    """N-d transposed convolution, the adjoint of ``_convnd``: one (grouped) matmul gives
    every input position's contribution to its window, then ``Col2Im`` adds the windows up."""
    x, unbatched = _conv_input(name, input, weight, nd)
    _check_groups(weight, groups)
    in_c, og = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    n, c = x.shape[0], x.shape[1]
    if c != in_c:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {in_c} channels, but got {c} channels instead"
        )
    stride, dilation = _ntuple(stride, nd, "stride"), _ntuple(dilation, nd, "dilation")
    pads = _ntuple(padding, nd, "padding")
    extra = _ntuple(output_padding, nd, "output_padding")
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)) or min(extra) < 0:
        raise RuntimeError(
            f"output padding must be smaller than either stride or dilation, but got "
            f"output_padding={list(extra)}, stride={list(stride)}, dilation={list(dilation)}"
        )
    ins = tuple(x.shape[2:])
    full = tuple((i - 1) * s + d * (k - 1) + 1 for i, s, d, k in zip(ins, stride, dilation, kernel))
    if any(f + e - 2 * p < 1 for f, e, p in zip(full, extra, pads)):
        sizes = [f + e - 2 * p for f, e, p in zip(full, extra, pads)]
        raise RuntimeError(f"{name}: the output size {sizes} is too small (non-positive)")
    cin_g, kk, length = in_c // groups, math.prod(kernel), math.prod(ins)
    # every input position's contribution to its window: (N, O * prod(kernel), L) in one
    # matmul batched over N (and the groups), then Col2Im adds the windows up
    if groups == 1:
        cols = weight.reshape(in_c, og * kk).mT @ x.reshape(n, in_c, length)
    else:
        w = weight.reshape(groups, cin_g, og * kk).mT  # (G, O/G * K, C/G)
        cols = w @ x.reshape(n, groups, cin_g, length)
    cols = cols.reshape((n, groups * og) + kernel + ins)
    sizes = tuple(f + e - 2 * p for f, e, p in zip(full, extra, pads))
    out = _N.Col2Im.apply(cols, sizes, stride, dilation, pads)
    if bias is not None:
        out = out + bias.reshape((1, groups * og) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


@autocast_op
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] = 0,
    output_padding: int | tuple[int] = 0,
    groups: int = 1,
    dilation: int | tuple[int] = 1,
) -> Tensor:
    """Applies a 1-D transposed convolution (the gradient of ``conv1d`` with respect to its
    input) of a ``(N, C_in, L)`` or ``(C_in, L)`` input with a ``(C_in, C_out / groups, k)``
    weight, as ``torch.nn.functional.conv_transpose1d``: the output length is
    ``(L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.

    >>> x = clgrad.tensor([[[1.0, 2.0]]])
    >>> clgrad.nn.functional.conv_transpose1d(x, clgrad.ones(1, 1, 3), stride=2)
    tensor([[[1., 1., 3., 2., 2.]]])
    """
    return _conv_transposend(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


@autocast_op
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: _Int2 = 1,
    padding: _Int2 = 0,
    output_padding: _Int2 = 0,
    groups: int = 1,
    dilation: _Int2 = 1,
) -> Tensor:
    """Applies a 2-D transposed convolution of a ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input
    with a ``(C_in, C_out / groups, kh, kw)`` weight, as
    ``torch.nn.functional.conv_transpose2d`` (see ``conv_transpose1d``).

    >>> y = clgrad.nn.functional.conv_transpose2d(clgrad.ones(1, 2, 3, 3), clgrad.ones(2, 4, 3, 3),
    ...     stride=2, padding=1, output_padding=1)
    >>> y.shape
    clgrad.Size([1, 4, 6, 6])
    """
    return _conv_transposend(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


@autocast_op
def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] = 0,
    output_padding: int | tuple[int, int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int, int] = 1,
) -> Tensor:
    """Applies a 3-D transposed convolution of a ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``
    input with a ``(C_in, C_out / groups, kd, kh, kw)`` weight, as
    ``torch.nn.functional.conv_transpose3d`` (see ``conv_transpose1d``).

    >>> x = clgrad.ones(1, 2, 2, 2, 2)
    >>> clgrad.nn.functional.conv_transpose3d(x, clgrad.ones(2, 3, 2, 2, 2), stride=2).shape
    clgrad.Size([1, 3, 4, 4, 4])
    """
    return _conv_transposend(
        "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


def unfold(
    input: Tensor,
    kernel_size: _Int2,
    dilation: _Int2 = 1,
    padding: _Int2 = 0,
    stride: _Int2 = 1,
) -> Tensor:
    """Extracts the sliding ``kernel_size`` blocks of a ``(N, C, H, W)`` (or unbatched
    ``(C, H, W)``) input into a ``(N, C * kh * kw, L)`` tensor (one column per block position),
    as ``torch.nn.functional.unfold``.

    >>> clgrad.nn.functional.unfold(clgrad.ones(1, 2, 4, 4), kernel_size=2).shape
    clgrad.Size([1, 8, 9])
    """
    if input.ndim < 3:  # ATen's im2col reads dims -3 and -1 first
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{input.ndim}, "
            f"{input.ndim - 1}], but got {2 if input.ndim == 2 else -3})"
        )
    if input.ndim > 4:
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor for input with possible 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    _kernel_takes("im2col_out_cpu", input, lambda dt: dt.category != 1)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    kh, kw = _pair(kernel_size)
    (ph, pw), stride, dilation = _pair(padding), _pair(stride), _pair(dilation)
    n, c, h, w = x.shape
    oh = _N.out_size(h + 2 * ph, kh, stride[0], dilation[0])
    ow = _N.out_size(w + 2 * pw, kw, stride[1], dilation[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}), "
            f"dilation={dilation}, padding=({ph}, {pw}), calculated shape of the array of sliding "
            f"blocks as ({oh}, {ow}), but its components must be at least one."
        )
    cols = _N.Im2Col.apply(x, (kh, kw), (oh, ow), stride, dilation, (ph, pw))
    out = cols.reshape(n, c * kh * kw, oh * ow)
    return out.squeeze(0) if input.ndim == 3 else out


def fold(
    input: Tensor,
    output_size: _Int2,
    kernel_size: _Int2,
    dilation: _Int2 = 1,
    padding: _Int2 = 0,
    stride: _Int2 = 1,
) -> Tensor:
    """Sums ``(N, C * kh * kw, L)`` (or unbatched ``(C * kh * kw, L)``) sliding blocks back into
    a ``(N, C, H, W)`` tensor of spatial size ``output_size`` (overlapping values add up): the
    adjoint of ``unfold``, as ``torch.nn.functional.fold``.

    >>> import clgrad.nn.functional as F
    >>> F.fold(F.unfold(clgrad.ones(1, 1, 3, 3), 2), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor for input with possible 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    _kernel_takes("col2im_out_cpu", input, lambda dt: dt.category != 1)
    x = input.unsqueeze(0) if input.ndim == 2 else input
    (h, w), (kh, kw), (ph, pw) = _pair(output_size), _pair(kernel_size), _pair(padding)
    stride, dilation = _pair(stride), _pair(dilation)
    n, ck, length = x.shape
    c = ck // (kh * kw)
    oh = _N.out_size(h + 2 * ph, kh, stride[0], dilation[0])
    ow = _N.out_size(w + 2 * pw, kw, stride[1], dilation[1])
    if c * kh * kw != ck or oh * ow != length:
        raise RuntimeError(
            f"fold: expected an input of shape (N, C*{kh * kw}, {oh * ow}), got {list(input.shape)}"
        )
    out = _N.Col2Im.apply(x.reshape(n, c, kh, kw, oh, ow), (h, w), stride, dilation, (ph, pw))
    return out.squeeze(0) if input.ndim == 2 else out


# ---- pooling ---------------------------------------------------------------------------------
def _pool_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output size, and the extra right padding ceil_mode needs."""
    span = d * (k - 1) + 1
    num = n + 2 * p - span + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    if out < 1:
        raise RuntimeError(
            f"Given input size: {n}. Calculated output size: {out}. Output size is too small"
        )
    extra = max(0, (out - 1) * s + span - (n + 2 * p))
    return out, extra


def _check_dim_range(name, input, lo, hi):
    """ATen's checkDimRange: the first check of the 1-d pooling functions."""
    if not lo <= input.ndim < hi:
        raise RuntimeError(
            f"Expected {lo} to {hi - 1} dimensions, but got {input.ndim}-dimensional tensor for "
            f"argument #1 'self' (while checking arguments for {name})"
        )


def _pool_input_check(name, nd, input, with_indices):
    """torch's checks of a pooling input's dims and empty dims, with the message of the ATen
    check each function reaches first (CPU's): max_pool1d without indices has its own; the
    other 1-d pools check the dims, then run their 2-d kernel on the input unsqueezed at -2;
    max_pool2d and the 3-d pools refuse a wrong dim count as 'non-empty ... expected';
    avg_pool2d reads size(-3) before it checks (IndexError below 3 dims)."""
    shape = list(input.shape)
    empty = 0 in shape[input.ndim - nd - 1 :]  # only a batch may be empty
    if name == "max_pool1d" and not with_indices:
        if input.ndim not in (2, 3) or empty:
            raise RuntimeError(
                "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
                f"size for input, but got:{shape}"
            )
        return
    if nd == 1 and name in ("max_pool1d", "avg_pool1d", "lp_pool1d"):
        _check_dim_range("avg_pool1d" if name == "lp_pool1d" else name, input, 2, 4)
        nd, shape = 2, shape[:-1] + [1] + shape[-1:]
    elif name == "max_pool2d" or name in ("max_pool3d", "avg_pool3d", "lp_pool3d"):
        if input.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
            )
        if nd == 3 and empty:
            where = (
                "max_pool3d_with_indices_out_cpu_template" if name == "max_pool3d" else "avg_pool3d"
            )
            # (ATen prints the empty dim's size where it means its index: always 0)
            raise RuntimeError(
                f"{where}(): Expected input's non-batch dimensions to have positive length, but "
                f"input has a shape of {shape} and non-batch dimension 0 has length zero!"
            )
    elif name in ("avg_pool2d", "lp_pool2d") and input.ndim < 3:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, "
            f"{max(input.ndim, 1) - 1}], but got -3)"
        )
    if len(shape) not in (nd + 1, nd + 2) or empty:
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{shape}"
        )


def _pool_args(name, nd, input, kernel_size, stride, padding, dilation, with_indices=False):
    _pool_input_check(name, nd, input, with_indices)
    k = _ntuple(kernel_size, nd, "kernel_size")
    s = (
        k
        if stride is None or (isinstance(stride, (tuple, list)) and not stride)
        else _ntuple(stride, nd, "stride")
    )
    p, d = _ntuple(padding, nd, "padding"), _ntuple(dilation, nd, "dilation")
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise RuntimeError(f"{name}: kernel_size, stride and dilation must be greater than zero")
    for pi, ki, di in zip(p, k, d):
        if pi < 0 or pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pi}, "
                f"kernel_size={ki} and dilation={di}"
            )
    return k, s, p, d


def _lowest(dt):
    return -math.inf if dt.is_floating_point else int(np.iinfo(dt.np).min)


def _window_origin(idx, outs, kernel, stride, dilation, padding, spatial, device):
    """The flat index into the (unpadded) spatial volume of the element ``idx`` (a flat index
    into each window, shape (..., *outs)) picks, as max pooling's indices."""
    nd = len(kernel)
    flat = None
    for i in range(nd):
        inner_k = math.prod(kernel[i + 1 :])
        j = (idx // inner_k) % kernel[i] if inner_k > 1 else idx % kernel[i]
        o = _arange(outs[i], device=device).reshape((outs[i],) + (1,) * (nd - 1 - i))
        pos = (o * stride[i] + j * dilation[i] - padding[i]) * math.prod(spatial[i + 1 :])
        flat = pos if flat is None else flat + pos
    return flat


def _max_poolnd(name, nd, input, kernel_size, stride, padding, dilation, ceil_mode, indices):
    if nd == 1 and not indices:
        _kernel_takes("max_pool1d_impl", input, _floating)
    k, s, p, d = _pool_args(name, nd, input, kernel_size, stride, padding, dilation, indices)
    _kernel_takes(name if nd > 1 else "max_pool1d_impl", input, lambda dt: dt is not _D.bool_)
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    spatial = tuple(x.shape[2:])
    sizes = [_pool_size(*a, ceil_mode) for a in zip(spatial, k, s, p, d)]
    outs = tuple(o for o, _ in sizes)
    pads = tuple((pi, pi + e) for pi, (_, e) in zip(p, sizes))
    xp = _N.pad_constant(x, ((0, 0), (0, 0)) + pads, _lowest(x.dtype))
    values, idx = _N.WindowMax.apply(xp, k, s, d)
    if unbatched:
        values, idx = values.squeeze(0), idx.squeeze(0)
    if not indices:
        return values
    return values, _window_origin(idx, outs, k, s, d, p, spatial, x.device)


def max_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Takes the maximum over sliding windows of a ``(N, C, L)`` or ``(C, L)`` input, as
    ``torch.nn.functional.max_pool1d`` (the options as in ``max_pool2d``).

    >>> clgrad.nn.functional.max_pool1d(clgrad.tensor([[1.0, 3.0, 2.0, 0.0, 5.0]]), 2)
    tensor([[3., 2.]])
    """
    return _max_poolnd(
        "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool2d(
    input: Tensor,
    kernel_size: _Int2,
    stride: _Int2 | None = None,
    padding: _Int2 = 0,
    dilation: _Int2 = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Takes the maximum over sliding ``kernel_size`` windows of a ``(N, C, H, W)`` or
    ``(C, H, W)`` input (``stride`` defaults to ``kernel_size``; padding counts as -inf), as
    ``torch.nn.functional.max_pool2d``. With ``return_indices`` it also returns the flat index
    into the input's H * W plane of each chosen element (int64).

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> values, indices = clgrad.nn.functional.max_pool2d(x, 2, return_indices=True)
    >>> values.flatten().tolist(), indices.flatten().tolist()
    ([5.0, 7.0, 13.0, 15.0], [5, 7, 13, 15])
    """
    return _max_poolnd(
        "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Takes the maximum over sliding windows of a ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    input, as ``torch.nn.functional.max_pool3d`` (indices into the D * H * W volume).

    >>> clgrad.nn.functional.max_pool3d(clgrad.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    return _max_poolnd(
        "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def _avg_divisor(n, k, s, p, out, count_include_pad):
    """How many elements each window of one dim averages (PyTorch's rule)."""
    lo, hi = (-p, n + p) if count_include_pad else (0, n)
    starts = np.arange(out) * s - p
    return np.minimum(starts + k, hi) - np.maximum(starts, lo)


def _avg_poolnd(name, nd, input, kernel_size, stride, padding, ceil_mode, include_pad, override):
    k, s, p, _ = _pool_args(name, nd, input, kernel_size, stride, padding, 1)
    if override is not None and override == 0:
        raise RuntimeError("divisor must be not zero")
    if not input.dtype.is_floating_point and input.dtype is not _D.int64:
        # ATen's CPU kernels take int64 (dividing toward zero) and no other integer type
        kernel = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_SCALAR_TYPE_NAMES[input.dtype.name]}'"
        )

    def average(total, divisor):
        if total.dtype is _D.int64:
            return total.div(divisor, rounding_mode="trunc")
        return total / divisor

    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    spatial = tuple(x.shape[2:])
    sizes = [_pool_size(n, ki, si, pi, 1, ceil_mode) for n, ki, si, pi in zip(spatial, k, s, p)]
    pads = tuple((pi, pi + e) for pi, (_, e) in zip(p, sizes))
    xp = _N.pad_constant(x, ((0, 0), (0, 0)) + pads)
    total = _N.Patches.apply(xp, k, s, (1,) * nd).sum(tuple(range(-nd, 0)))
    if override:
        out = average(total, override)
    else:
        divs = [
            _avg_divisor(n, ki, si, pi, o, include_pad)
            for n, ki, si, pi, (o, _) in zip(spatial, k, s, p, sizes)
        ]
        if all((dv == ki).all() for dv, ki in zip(divs, k)):
            out = average(total, math.prod(k))
        else:
            div = divs[0]
            for dv in divs[1:]:
                div = np.multiply.outer(div, dv)
            out = average(total, _tensor(div, dtype=x.dtype, device=x.device))
    return out.squeeze(0) if unbatched else out


@autocast_op
def avg_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Averages over sliding windows of a ``(N, C, L)`` or ``(C, L)`` input, as
    ``torch.nn.functional.avg_pool1d`` (the options as in ``avg_pool2d``).

    >>> clgrad.nn.functional.avg_pool1d(clgrad.tensor([[1.0, 3.0, 2.0, 0.0, 5.0]]), 2)
    tensor([[2., 1.]])
    """
    return _avg_poolnd(
        "avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None
    )


@autocast_op
def avg_pool2d(
    input: Tensor,
    kernel_size: _Int2,
    stride: _Int2 | None = None,
    padding: _Int2 = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Averages over sliding ``kernel_size`` windows of a ``(N, C, H, W)`` or ``(C, H, W)`` input
    (``stride`` defaults to ``kernel_size``), as ``torch.nn.functional.avg_pool2d``: the
    divisor counts the zero padding unless ``count_include_pad=False``, and
    ``divisor_override`` replaces it.

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> clgrad.nn.functional.avg_pool2d(x, 2).flatten().tolist()
    [2.5, 4.5, 10.5, 12.5]
    """
    return _avg_poolnd(
        "avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override,
    )  # fmt: skip


@autocast_op
def avg_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Averages over sliding windows of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input, as
    ``torch.nn.functional.avg_pool3d`` (the options as in ``avg_pool2d``).

    >>> clgrad.nn.functional.avg_pool3d(clgrad.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[3.5000]]]])
    """
    return _avg_poolnd(
        "avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override,
    )  # fmt: skip


def _lp_poolnd(nd, input, norm_type, kernel_size, stride, ceil_mode):
    """PyTorch's formula: (sum of x ** p over the window) ** (1 / p), through avg pooling; for
    p = inf the largest |x| (max pooling), for p = -inf the smallest, as PyTorch's."""
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        pool = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        if norm_type > 0:
            return pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    k = _ntuple(kernel_size, nd, "kernel_size")
    out = _avg_poolnd(f"lp_pool{nd}d", nd, input**norm_type, k, stride, 0, ceil_mode, True, None)
    return (out.sign() * out.abs().relu() * math.prod(k)) ** (1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: int,
    stride: int | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The power-average pooling ``(sum x ** p) ** (1 / p)`` over sliding windows of a
    ``(N, C, L)`` or ``(C, L)`` input, as ``torch.nn.functional.lp_pool1d``.

    >>> clgrad.nn.functional.lp_pool1d(clgrad.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    return _lp_poolnd(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: _Int2,
    stride: _Int2 | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The power-average pooling over sliding windows of a ``(N, C, H, W)`` or ``(C, H, W)``
    input, as ``torch.nn.functional.lp_pool2d``.

    >>> clgrad.nn.functional.lp_pool2d(clgrad.full((1, 2, 2), 2.0), 1, 2)
    tensor([[[8.]]])
    """
    return _lp_poolnd(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The power-average pooling over sliding windows of a ``(N, C, D, H, W)`` or
    ``(C, D, H, W)`` input, as ``torch.nn.functional.lp_pool3d``.

    >>> clgrad.nn.functional.lp_pool3d(clgrad.full((1, 2, 2, 2), 2.0), 1, 2)
    tensor([[[[16.]]]])
    """
    return _lp_poolnd(3, input, norm_type, kernel_size, stride, ceil_mode)


def _adaptive_bounds(n, m):
    """Window ``i`` of adaptive pooling covers [floor(i n / m), ceil((i + 1) n / m))."""
    lo = (np.arange(m) * n) // m
    hi = -((-(np.arange(1, m + 1) * n)) // m)
    return lo, hi


def _taps_total(x, dim, taps):
    """The sum over ``taps`` of x's elements at ``index`` along ``dim`` (one per output
    position), each times its ``weight`` and 0 where not ``inside`` (either None: 1, everywhere
    inside), in order: the separable linear, cubic and averaging kernels' sums, a product per
    tap as PyTorch's (a dense matrix's zero weights made NaN of an infinite element)."""
    along = [1] * x.ndim
    along[dim] = len(taps[0][0])
    total = None
    for index, weight, inside in taps:
        term = _select_positions(x, dim, index)
        if weight is not None:
            term = term * _tensor(weight, dtype=x.dtype, device=x.device).reshape(along)
        if inside is not None:
            term = _E.where(_tensor(inside, device=x.device).reshape(along), term, 0.0)
        total = term if total is None else total + term
    return total


def _adaptive_average(x, dim, n, m):
    """Adaptive average pooling of ``x`` along ``dim`` (>= 0) from ``n`` to ``m`` positions:
    every window gathered at once, padded to the widest with a slice of zeros appended to
    ``x`` (added, never multiplied: an infinite element stays in its own windows), summed and
    divided by the window's width: a fixed handful of kernels for any window count."""
    lo, hi = _adaptive_bounds(n, m)
    width = hi - lo
    k = int(width.max())
    pos = lo[:, None] + np.arange(k)
    if (width < k).any():
        pad = list(x.shape)
        pad[dim] = 1
        x = _cat([x, x.new_zeros(pad)], dim)
        pos = np.where(pos < hi[:, None], pos, n)  # past a window's end: the zeros
    total = _select_positions(x, dim, pos).unflatten(dim, (m, k)).sum(dim + 1)
    along = [1] * total.ndim
    along[dim] = m
    return total / _tensor(width, dtype=x.dtype, device=x.device).reshape(along)


def _adaptive_sizes(name, nd, input, output_size):
    """The spatial size and the output size, after torch's checks of the input (CPU's, with
    their messages): the 1-d functions check the dim range, then run the 2-d kernel on the
    input unsqueezed at -2; adaptive_avg_pool2d refuses an empty spatial dim, the others any
    empty dim past the first (an unbatched input's channels are not checked)."""
    shape = list(input.shape)
    if nd == 1:
        _check_dim_range(name, input, 2, 4)
        if name == "adaptive_avg_pool1d":
            name, shape = "adaptive_avg_pool2d", shape[:-1] + [1] + shape[-1:]
    elif input.ndim not in (nd + 1, nd + 2):
        got = "got: " if name.startswith("adaptive_max") else "got "
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but {got}{shape}")
    checked = (
        range(len(shape) - 2, len(shape)) if name == "adaptive_avg_pool2d" else range(1, len(shape))
    )
    for d in checked:
        if shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {shape} with dimension {d} being empty"
            )
    spatial = tuple(input.shape[-nd:])
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise ValueError(f"{name}: output_size must have {nd} elements, got {len(output_size)}")
        return spatial, tuple(n if o is None else int(o) for n, o in zip(spatial, output_size))
    return spatial, (int(output_size),) * nd


class _EmptyPool(Function):
    """An adaptive pooling's result of no element (an output size of 0): PyTorch's forward
    gives it, its backward refuses the gradient of no element."""

    @staticmethod
    def forward(ctx, x, shape, name, nd):
        ctx.name, ctx.nd = name, nd
        return x.new_zeros(shape)

    @staticmethod
    def backward(ctx, grad):
        # the first empty dim past the batch dim (an unbatched input has none)
        first = 1 if grad.ndim > ctx.nd + 1 else 0
        empty = next(d for d in range(first, grad.ndim) if grad.shape[d] == 0)
        raise RuntimeError(
            f"{ctx.name}_backward(): Expected grad_output to have non-zero size for non-batch "
            f"dimensions, but grad_output has sizes {list(grad.shape)} with dimension {empty} "
            "being empty"
        )


def _empty_pool(name, input, outs):
    nd = len(outs)
    return _EmptyPool.apply(input, tuple(input.shape[: input.ndim - nd]) + outs, name, nd)


def _adaptive_avg_poolnd(name, nd, input, output_size):
    dims = tuple(range(-nd, 0))
    if nd == 1:
        _check_dim_range(name, input, 2, 4)  # then ATen runs adaptive_avg_pool2d
    if input.ndim >= nd:
        # ATen's adaptive_avg_pool2d/3d answer an output size of ones with a mean over the last
        # dims before any check of the input (any dim count, empty dims give NaN)
        wanted = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
        if len(wanted) == nd and all(
            (input.shape[d] if o is None else o) == 1 for d, o in zip(dims, wanted)
        ):
            return input.mean(dims, keepdim=True)
    kernel = "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
    _kernel_takes(kernel, input, _floating)
    spatial, outs = _adaptive_sizes(name, nd, input, output_size)
    if 0 in outs:
        return _empty_pool(name, input, outs)
    if all(o == 1 for o in outs):
        return input.mean(dims, keepdim=True)
    if all(o > 0 and n % o == 0 for n, o in zip(spatial, outs)):
        k = tuple(n // o for n, o in zip(spatial, outs))
        return _avg_poolnd(name, nd, input, k, k, 0, False, True, None)
    out = input
    for i, (n, m) in enumerate(zip(spatial, outs)):
        if n != m:
            out = _adaptive_average(out, out.ndim - nd + i, n, m)
    return out


def adaptive_avg_pool1d(input: Tensor, output_size: int | tuple[int]) -> Tensor:
    """Averages a ``(N, C, L)`` or ``(C, L)`` input down to the length ``output_size``, as
    ``torch.nn.functional.adaptive_avg_pool1d`` (windows as in ``adaptive_avg_pool2d``).

    >>> clgrad.nn.functional.adaptive_avg_pool1d(clgrad.tensor([[1.0, 2.0, 3.0, 6.0]]), 2)
    tensor([[1.5000, 4.5000]])
    """
    return _adaptive_avg_poolnd("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, int | None]) -> Tensor:
    """Averages a ``(N, C, H, W)`` or ``(C, H, W)`` input down to the spatial size
    ``output_size`` (an int or a pair; None keeps that dim), window ``i`` covering
    ``[floor(i * H / oh), ceil((i + 1) * H / oh))``, as
    ``torch.nn.functional.adaptive_avg_pool2d``.

    >>> import clgrad.nn.functional as F
    >>> F.adaptive_avg_pool2d(clgrad.arange(16.0).reshape(1, 1, 4, 4), 1)
    tensor([[[[7.5000]]]])
    >>> F.adaptive_avg_pool2d(clgrad.ones(1, 2, 5, 7), (2, None)).shape
    clgrad.Size([1, 2, 2, 7])
    """
    return _adaptive_avg_poolnd("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(
    input: Tensor, output_size: int | tuple[int | None, int | None, int | None]
) -> Tensor:
    """Averages a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input down to the spatial size
    ``output_size``, as ``torch.nn.functional.adaptive_avg_pool3d``.

    >>> clgrad.nn.functional.adaptive_avg_pool3d(clgrad.ones(2, 3, 5, 6, 7), (2, 3, None)).shape
    clgrad.Size([2, 3, 2, 3, 7])
    """
    return _adaptive_avg_poolnd("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max_poolnd(name, nd, input, output_size, return_indices):
    """Gathers every (possibly shorter) window, padded to the longest by repeating its last
    element (a repeat changes neither the max nor which element is first), then ``MaxLast``."""
    kernel = "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d"
    _kernel_takes(kernel, input, _floating)
    spatial, outs = _adaptive_sizes(name, nd, input, output_size)
    if 0 in outs:
        values = _empty_pool(name, input, outs)
        return (values, values.detach().long()) if return_indices else values
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    widths, bounds = [], []
    for i, (n, m) in enumerate(zip(spatial, outs)):
        lo, hi = _adaptive_bounds(n, m)
        k = int((hi - lo).max())
        pos = np.minimum(lo[:, None] + np.arange(k), hi[:, None] - 1)
        x = _select_positions(x, 2 + 2 * i, pos).unflatten(2 + 2 * i, (m, k))
        widths.append(k)
        bounds.append((lo, hi))
    # (N, C, o1, k1, o2, k2, ...) -> (N, C, o1, o2, ..., k1 * k2 * ...)
    order = (0, 1) + tuple(range(2, 2 + 2 * nd, 2)) + tuple(range(3, 3 + 2 * nd, 2))
    win = x.permute(order).reshape(tuple(x.shape[:2]) + outs + (math.prod(widths),))
    values, idx = _N.MaxLast.apply(win)
    if unbatched:
        values, idx = values.squeeze(0), idx.squeeze(0)
    if not return_indices:
        return values
    flat = None
    for i, ((lo, hi), k) in enumerate(zip(bounds, widths)):
        inner = math.prod(widths[i + 1 :])
        j = (idx // inner) % k if inner > 1 else idx % k
        shape = (outs[i],) + (1,) * (nd - 1 - i)
        lo_t = _tensor(lo, dtype=_D.int64, device=x.device).reshape(shape)
        hi_t = _tensor(hi - 1, dtype=_D.int64, device=x.device).reshape(shape)
        pos = _E.where(lo_t + j < hi_t, lo_t + j, hi_t) * math.prod(spatial[i + 1 :])
        flat = pos if flat is None else flat + pos
    return values, flat


def adaptive_max_pool1d(
    input: Tensor, output_size: int | tuple[int], return_indices: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """Takes the maximum of a ``(N, C, L)`` or ``(C, L)`` input over ``output_size`` adaptive
    windows (as ``adaptive_avg_pool1d``'s), as ``torch.nn.functional.adaptive_max_pool1d``;
    ``return_indices`` also returns the position of each maximum.

    >>> clgrad.nn.functional.adaptive_max_pool1d(clgrad.tensor([[1.0, 3.0, 2.0, 0.0, 5.0]]), 2)
    tensor([[3., 5.]])
    """
    return _adaptive_max_poolnd("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(
    input: Tensor, output_size: int | tuple[int | None, int | None], return_indices: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """Takes the maximum of a ``(N, C, H, W)`` or ``(C, H, W)`` input over adaptive windows, as
    ``torch.nn.functional.adaptive_max_pool2d`` (indices into the H * W plane).

    >>> clgrad.nn.functional.adaptive_max_pool2d(clgrad.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    return _adaptive_max_poolnd("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(
    input: Tensor,
    output_size: int | tuple[int | None, int | None, int | None],
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Takes the maximum of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input over adaptive
    windows, as ``torch.nn.functional.adaptive_max_pool3d``.

    >>> clgrad.nn.functional.adaptive_max_pool3d(clgrad.ones(1, 2, 5, 5, 5), 2).shape
    clgrad.Size([1, 2, 2, 2, 2])
    """
    return _adaptive_max_poolnd("adaptive_max_pool3d", 3, input, output_size, return_indices)


def _max_unpoolnd(nd, input, indices, kernel_size, stride, padding, output_size):
    """Scatters ``input`` into zeros at ``indices`` (flat positions in each output plane)."""
    k = _ntuple(kernel_size, nd, "kernel_size")
    s = k if stride is None else _ntuple(stride, nd, "stride")
    p = _ntuple(padding, nd, "padding")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    idx = indices.unsqueeze(0) if unbatched else indices
    if output_size is None:
        outs = tuple((n - 1) * si - 2 * pi + ki for n, si, pi, ki in zip(x.shape[2:], s, p, k))
    else:
        outs = tuple(int(o) for o in tuple(output_size)[-nd:])
    n, c = x.shape[0], x.shape[1]
    size = math.prod(outs)
    if idx.numel() and bool(((idx < 0) | (idx >= size)).any().item()):
        raise RuntimeError(f"Found an invalid max index (the output size is {size})")
    flat_x, flat_i = x.reshape(n, c, -1), idx.reshape(n, c, -1)
    out = _N.Unpool.apply(flat_x, flat_i, size).reshape((n, c) + outs)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of ``max_pool1d``: puts each value at its index, zeros elsewhere,
    as ``torch.nn.functional.max_unpool1d``.

    >>> import clgrad.nn.functional as F
    >>> v, i = F.max_pool1d(clgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2, return_indices=True)
    >>> F.max_unpool1d(v, i, 2)
    tensor([[0., 3., 2., 0.]])
    """
    return _max_unpoolnd(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: _Int2,
    stride: _Int2 | None = None,
    padding: _Int2 = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of ``max_pool2d``, as ``torch.nn.functional.max_unpool2d``.

    >>> import clgrad.nn.functional as F
    >>> v, i = F.max_pool2d(clgrad.arange(16.0).reshape(1, 4, 4), 2, return_indices=True)
    >>> F.max_unpool2d(v, i, 2).shape
    clgrad.Size([1, 4, 4])
    """
    return _max_unpoolnd(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of ``max_pool3d``, as ``torch.nn.functional.max_unpool3d``.

    >>> import clgrad.nn.functional as F
    >>> v, i = F.max_pool3d(clgrad.ones(1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(v, i, 2).shape
    clgrad.Size([1, 2, 2, 2])
    """
    return _max_unpoolnd(3, input, indices, kernel_size, stride, padding, output_size)


# ---- fractional max pooling ------------------------------------------------------------------
def _fractional_ints(name, arg, pos, value, nd):
    """An int-list argument of torch's op parser: an int stands for all ``nd`` dims."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * nd
    for i, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            found = (
                f"but found element of type {type(v).__name__} at pos {i}"
                if isinstance(value, (tuple, list))
                else f"not {type(value).__name__}"
            )
            raise TypeError(
                f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, {found}"
            )
    if len(items) != nd:
        many = "three Ints" if nd == 3 else "Ints"
        raise RuntimeError(f"{name}: {arg} must either be a single Int or tuple of {many}")
    return tuple(int(v) for v in items)


def _fractional_starts(samples, n, out, k, ft):
    """ATen's ``generate_intervals`` for every plane at once: ``samples`` (planes) in the input's
    float type ``ft``, the start of each of the ``out`` windows (planes, out). The arithmetic is
    ``ft``'s, as ATen's: in float32 the rounding of ``(i + sample) * alpha`` moves a start by one
    against a float64 computation."""
    starts = np.empty(samples.shape + (out,), dtype=np.int64)
    if out > 1:
        alpha = ft.type(n - k) / ft.type(out - 1)
        s = samples[..., None]
        i = np.arange(out - 1).astype(ft)
        with np.errstate(invalid="ignore"):  # a NaN sample truncates as ATen's cast does
            starts[..., :-1] = ((i + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    if out > 0:
        starts[..., -1] = n - k
    return starts


def _fractional_check(name, nd, x, k, outs):
    """torch's shape checks of fractional_max_pool{2,3}d (its messages, in its order)."""
    where = f"{name}_out" if nd == 3 else name  # (3d's messages name the _out function)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{where}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(x.shape)}"
        )
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{where}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"got{list(x.shape)} with dimension {i} being empty."
            )
    spatial = tuple(x.shape[-nd:])
    if nd == 2:
        for dim, n, ki, o in zip(("height", "width"), spatial, k, outs):
            if o + ki - 1 > n:
                raise RuntimeError(
                    f"{where}(): pool {dim} {ki} too large relative to input {dim} {n}"
                )
    else:  # 3d checks time, width, height, and leaves no room for o + k - 1 == n
        for j, dim in ((0, "time"), (2, "width"), (1, "height")):
            n, ki, o = spatial[j], k[j], outs[j]
            if not (ki <= n and o + ki - 1 < n):
                raise RuntimeError(
                    f"{where}(): pool {dim} {ki} too large relative to input {dim} {n}"
                )
    shape = list(x.shape[:-nd]) + list(outs)
    if min(shape) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {shape}")
    return spatial, tuple(shape)


def _fractional_samples_check(nd, x, samples):
    """ATen's fractional_max_pool_check_shape."""
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch, channels = (1, x.shape[0]) if x.ndim == nd + 1 else tuple(x.shape[:2])
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}."
        )


def _fractional_max_poolnd(nd, input, kernel_size, output_size, output_ratio, samples):
    """torch's fractional_max_pool{2,3}d_with_indices: its Python checks, then its op's.

    The windows start where ATen's intervals put them, computed on the host from the samples;
    the flat input index of every window element is gathered, the window's pick found without
    grad, and the picked elements gathered again from the input: the gradient of that gather
    adds each output's gradient at its pick, overlapping windows accumulating, as ATen's
    backward."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # a number: the 3d function's (and the modules') pair; torch's 2d function calls len()
        # on it, and so refuses it with that TypeError
        if nd == 2 and not isinstance(output_ratio, (tuple, list)):
            raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
        ratio = (
            tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        )
        if nd == 2 and len(ratio) > 2:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        if len(ratio) < nd:
            raise IndexError("tuple index out of range")
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    if samples is None:
        if not input.dtype.is_floating_point:
            kind = _SCALAR_TYPE_NAMES[input.dtype.name]
            raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{kind}'")
        n_batch = 1 if input.ndim == nd + 1 else input.size(0)
        samples = _rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    elif not isinstance(samples, Tensor):
        raise TypeError(
            f"{name}(): argument 'random_samples' (position 4) must be Tensor, not "
            f"{type(samples).__name__}"
        )
    k = _fractional_ints(name, "kernel_size", 2, kernel_size, nd)
    outs = _fractional_ints(name, "output_size", 3, output_size, nd)
    if min(k) <= 0:  # (torch 2.13 reads outside the window then; newer releases refuse, so)
        raise RuntimeError(
            f"{name}(): kernel size should be greater than zero, but got {'x'.join(map(str, k))}"
        )
    spatial, shape = _fractional_check(name, nd, input, k, outs)
    _same_device(input, samples)
    _fractional_samples_check(nd, input, samples)
    if not input.dtype.is_floating_point:
        kind = _SCALAR_TYPE_NAMES[input.dtype.name]
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{kind}'")
    if math.prod(shape) == 0:
        # no element to pick: an empty view keeps the values in the graph
        return input.reshape(-1)[:0].reshape(shape), _arange(0, device=input.device).reshape(shape)
    x = input.unsqueeze(0) if input.ndim == nd + 1 else input
    n, c = x.shape[0], x.shape[1]
    host = samples.detach()[:n].cpu().numpy()
    # ATen's sample 0 drives the width in 2d (1 the height), but the time in 3d (1 H, 2 W)
    columns = (1, 0) if nd == 2 else (0, 1, 2)
    flat = None
    for d in range(nd):
        starts = _fractional_starts(host[..., columns[d]], spatial[d], outs[d], k[d], host.dtype)
        if starts.min() < 0 or starts.max() > spatial[d] - k[d]:  # a sample far out of [0, 1)
            raise RuntimeError(f"{name}(): the window starts fall outside the input")
        pos = (starts[..., None] + np.arange(k[d])) * math.prod(spatial[d + 1 :])
        # (n, c, o_d, k_d) placed in (n, c, o_1, .., o_nd, k_1, .., k_nd): summed, the flat index
        place = [1] * (2 * nd)
        place[d], place[nd + d] = outs[d], k[d]
        t = _tensor(pos.reshape((n, c) + tuple(place)), dtype=_D.int64, device=x.device)
        flat = t if flat is None else flat + t
    m, size = math.prod(outs), math.prod(k)
    flat = flat.reshape(n, c, m, size)
    xf = x.reshape(n, c, -1)
    with no_grad():  # (the range of every index is known: no device read to check them)
        win = _Gather.apply(xf, 2, flat.reshape(n, c, m * size)).reshape(n, c, m, size)
        pick = win.argmax(-1)  # the first largest: ties keep the first, as ATen's ``>``
        # ATen's ``val > max || isnan(val)`` keeps a window's last NaN; argmax takes the first
        rank = _arange(1, size + 1, device=x.device)
        last_nan = _E.where(win.isnan(), rank, 0).amax(-1) - 1
        pick = _E.where(last_nan >= 0, last_nan, pick)
        indices = _Gather.apply(flat, 3, pick.unsqueeze(-1)).reshape(n, c, m)
    values = _Gather.apply(xf, 2, indices)
    values, indices = values.reshape(x.shape[:2] + outs), indices.reshape(x.shape[:2] + outs)
    if input.ndim == nd + 1:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: _Int2,
    output_size: _Int2 | None = None,
    output_ratio: float | tuple[float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool2d`` with ``return_indices=True`` whatever ``return_indices`` says:
    the values and the int64 flat indices into each input H * W plane, as
    ``torch.nn.functional.fractional_max_pool2d_with_indices``.

    >>> x = clgrad.arange(25.0).reshape(1, 5, 5)
    >>> samples = clgrad.full((1, 1, 2), 0.5)
    >>> values, indices = clgrad.nn.functional.fractional_max_pool2d_with_indices(
    ...     x, 2, output_size=3, _random_samples=samples)
    >>> indices
    tensor([[[ 6,  8,  9],
             [16, 18, 19],
             [21, 23, 24]]])
    """
    return _fractional_max_poolnd(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: _Int2,
    output_size: _Int2 | None = None,
    output_ratio: float | tuple[float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    """Fractional max pooling (Graham, 2014) of a ``(N, C, H, W)`` or ``(C, H, W)`` input, as
    ``torch.nn.functional.fractional_max_pool2d``: the maximum over ``kernel_size`` windows
    whose starts advance by a pseudo-random step, so that the output has the spatial size
    ``output_size``, or ``int(size * output_ratio)`` per dim. The steps come from one sample in
    [0, 1) per plane and dim, ``_random_samples`` of shape (N, C, 2) (W's sample first; drawn
    with ``clgrad.rand`` when None). With ``return_indices`` it also returns the flat index
    into the input's H * W plane of each maximum (int64); the gradient goes to that element.

    >>> import clgrad.nn.functional as F
    >>> x = clgrad.arange(25.0).reshape(1, 1, 5, 5)
    >>> F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=clgrad.full((1, 1, 2), 0.5))
    tensor([[[[ 6.,  8.,  9.],
              [16., 18., 19.],
              [21., 23., 24.]]]])
    >>> F.fractional_max_pool2d(clgrad.randn(2, 3, 10, 9), 3, output_ratio=(0.5, 0.5)).shape
    clgrad.Size([2, 3, 5, 4])
    """
    out = _fractional_max_poolnd(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    output_size: int | tuple[int, int, int] | None = None,
    output_ratio: float | tuple[float, float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool3d`` with ``return_indices=True`` whatever ``return_indices`` says,
    as ``torch.nn.functional.fractional_max_pool3d_with_indices`` (indices into each
    D * H * W volume).

    >>> x = clgrad.arange(27.0).reshape(1, 3, 3, 3)
    >>> values, indices = clgrad.nn.functional.fractional_max_pool3d_with_indices(x, 2, 1)
    >>> values, indices
    (tensor([[[[26.]]]]), tensor([[[[26]]]]))
    """
    return _fractional_max_poolnd(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    output_size: int | tuple[int, int, int] | None = None,
    output_ratio: float | tuple[float, float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    """Fractional max pooling of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input, as
    ``torch.nn.functional.fractional_max_pool3d``: as ``fractional_max_pool2d``, with
    ``_random_samples`` of shape (N, C, 3) (D's sample first, then H's and W's).

    >>> x = clgrad.arange(64.0).reshape(1, 1, 4, 4, 4)
    >>> samples = clgrad.full((1, 1, 3), 0.5)
    >>> clgrad.nn.functional.fractional_max_pool3d(
    ...     x, 2, output_size=2, _random_samples=samples).flatten().tolist()
    [21.0, 23.0, 29.0, 31.0, 53.0, 55.0, 61.0, 63.0]
    """
    out = _fractional_max_poolnd(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


# ---- upsampling ------------------------------------------------------------------------------
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "lanczos": 2, "trilinear": 3}


def _interp_scale(n_in, n_out, align_corners, scale, ft):
    """PyTorch's area_pixel_compute_scale, in the kernel's float type ``ft``."""
    if align_corners:
        return ft((n_in - 1) / (n_out - 1)) if n_out > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in / n_out)


def _source_coords(n_in, n_out, align_corners, scale, ft, cubic=False):
    """The real-valued source position of every output position (area_pixel_compute_source
    _index), computed in ``ft`` as PyTorch's kernels do, so that floors land alike."""
    s = _interp_scale(n_in, n_out, align_corners, scale, ft)
    dst = np.arange(n_out, dtype=ft)
    if align_corners:
        return s * dst
    src = s * (dst + ft(0.5)) - ft(0.5)
    return src if cubic else np.maximum(src, ft(0))


def _nearest_index(n_in, n_out, scale, exact, ft):
    if n_out == 2 * n_in and not exact and scale in (None, 2.0):
        return np.arange(n_out) >> 1
    s = _interp_scale(n_in, n_out, False, scale, ft)
    dst = np.arange(n_out, dtype=ft) + (ft(0.5) if exact else ft(0))
    return np.minimum(np.floor(dst * s).astype(np.int64), n_in - 1)


def _interp_taps(mode, n_in, n_out, align_corners, scale, ft):
    """The taps of one dim of a separable linear or cubic interpolation: (index, weight) pairs
    of length ``n_out``, output position i being the sum of ``x[index[i]] * weight[i]`` over
    them in order, as PyTorch's kernels add their neighbours (``_taps_total``). A linear
    dim of unchanged size is ATen's copy: the element itself twice, weighed 1 and 0, whatever
    the scale (so an infinite element gives NaN there, as in PyTorch)."""
    if mode == "cubic":
        src = _source_coords(n_in, n_out, align_corners, scale, ft, cubic=True)
        base = np.floor(src)
        coeffs = _cubic_weights((src - base).astype(ft))
        first = base.astype(np.int64) - 1
        return [(np.clip(first + j, 0, n_in - 1), w) for j, w in enumerate(coeffs)]
    if n_in == n_out:
        same = np.arange(n_out)
        return [(same, np.ones(n_out, ft)), (same, np.zeros(n_out, ft))]
    src = _source_coords(n_in, n_out, align_corners, scale, ft)
    i0 = src.astype(np.int64)
    lam = np.clip(src - i0.astype(ft), 0, 1).astype(ft)
    return [(i0, ft(1) - lam), (i0 + (i0 < n_in - 1), lam)]


def _antialias_taps(mode, n_in, n_out, align_corners, scale, ft):
    """The taps of one dim of PyTorch's antialiased bilinear, bicubic or Lanczos resize (PIL's):
    the triangle, Keys (a = -0.5) or Lanczos-3 filter, stretched by the downscaling factor so
    that every input element under an output element's footprint contributes, weights
    normalized per output; computed as ATen's ``_compute_weights_aa``, in the input's float
    type."""
    step = _interp_scale(n_in, n_out, align_corners, scale, ft)
    half_width = {"linear": 1.0, "cubic": 2.0, "lanczos": 3.0}[mode]  # support at unit scale
    support = ft(half_width * step if step >= 1 else half_width)
    invscale = ft(1 / step if step >= 1 else 1.0)
    center = step * (np.arange(n_out, dtype=ft) + ft(0.5))
    low = np.maximum((center - support + ft(0.5)).astype(np.int64), 0)
    count = np.minimum((center + support + ft(0.5)).astype(np.int64), n_in) - low
    k = np.arange(int(count.max()))[:, None]
    x = np.abs((k + low - center + ft(0.5)) * invscale).astype(ft)
    if mode == "linear":
        w = np.where(x < 1, 1 - x, 0)
    elif mode == "lanczos":  # sinc(x) sinc(x / 3) within 3
        with np.errstate(all="ignore"):
            w = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0)
    else:
        a = ft(-0.5)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        w = np.where(x < 1, near, np.where(x < 2, far, 0))
    w = np.where(k < count, w, 0).astype(ft)
    total = w.sum(0, dtype=ft)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(ft)
    return [(np.minimum(low + j, n_in - 1), w[j]) for j in range(len(w))]


def _interp_per_dim(value, nd, convert, mismatch_message):
    """interpolate's ``size`` or ``scale_factor`` as an ``nd``-tuple: a sequence (which must
    have ``nd`` items, else ValueError(``mismatch_message``)) converted item by item, or one
    number repeated."""
    if isinstance(value, (tuple, list)):
        if len(value) != nd:
            raise ValueError(mismatch_message)
        return tuple(convert(v) for v in value)
    return (convert(value),) * nd


@autocast_op
def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resizes a ``(N, C, *spatial)`` input (1 to 3 spatial dims) to ``size`` or by
    ``scale_factor``, as ``torch.nn.functional.interpolate``. Modes: "nearest",
    "nearest-exact", "linear" (3-D input), "bilinear" and "bicubic" (4-D), "trilinear" (5-D),
    "lanczos" (4-D, with ``antialias``) and "area" (adaptive average pooling); ``align_corners``
    as in PyTorch. ``antialias`` (bilinear, bicubic, lanczos) widens the filter by the
    downscaling factor, as PIL's resize. Linear and cubic modes are separable: a few weighted
    taps per output element and dim.

    >>> import clgrad.nn.functional as F
    >>> F.interpolate(clgrad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> F.interpolate(clgrad.tensor([[[1.0, 2.0]]]), size=3, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000]]])
    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.interpolate(x, size=(2, 2), mode="bilinear", antialias=True)
    tensor([[[[ 3.5714,  5.1429],
              [ 9.8571, 11.4286]]]])
    """
    nd = input.ndim - 2
    modes = ("nearest", "nearest-exact", "area") + tuple(_INTERP_DIMS)
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif mode in _INTERP_DIMS:
        align_corners = bool(align_corners)
    if antialias and (mode not in ("bilinear", "bicubic", "lanczos") or input.ndim != 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if mode not in modes or not 1 <= nd <= 3:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != nd:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D input"
        )
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    spatial = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        outs = _interp_per_dim(
            size, nd, int,
            f"Input and output must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(spatial)} and output size of "
            f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "output size in (o1, o2, ...,oK) format.",
        )  # fmt: skip
        scales = (None,) * nd
    elif scale_factor is not None:
        factors = _interp_per_dim(
            scale_factor, nd, float,
            f"Input and scale_factor must have the same number of spatial dimensions, "
            f"but got input with spatial dimensions of {list(spatial)} and scale_factor "
            f"of shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
            "...,dK) format and scale_factor in (s1, s2, ...,sK) format.",
        )  # fmt: skip
        outs = tuple(math.floor(n * f) for n, f in zip(spatial, factors))
        scales = (None,) * nd if recompute_scale_factor else factors
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area":
        return _adaptive_avg_poolnd(f"adaptive_avg_pool{nd}d", nd, input, outs)
    if any(n <= 0 for n in (*spatial, *outs)):
        names = "DHW"[3 - nd :]
        given = ", ".join(f"{k}: {n}" for k, n in zip(names, spatial))
        wanted = ", ".join(f"{k}: {n}" for k, n in zip(names, outs))
        joint = " and " if nd == 1 else " "  # (ATen's 2-d and 3-d messages have no "and")
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({given}){joint}"
            f"output ({wanted})"
        )
    if input.numel() == 0 and math.prod(input.shape[1:]) == 0:  # an empty batch passes
        raise RuntimeError(
            f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
            f"{list(input.shape)}"
        )
    if input.dtype in (_D.float16, _D.bfloat16):
        # ATen's upsampling kernels compute a float16 or bfloat16 input in float32 (their
        # opmath type) and round once, forward and backward; dim by dim in the input's dtype,
        # each dim's taps and the gradient's index_add rounded on their own (bfloat16 trilinear
        # gradients were twice torch's error against float64)
        return interpolate(
            input.float(), size, scale_factor, mode, align_corners, recompute_scale_factor,
            antialias,
        ).to(input.dtype)  # fmt: skip
    if mode.startswith("nearest"):
        kernel = (
            "upsample_nearest2d_channels_last" if nd == 2 else "compute_indices_weights_nearest"
        )
        _kernel_takes(kernel, input, lambda dt: dt.is_floating_point or dt is _D.uint8)
        ft = np.float64 if input.dtype is _D.float64 else np.float32
        out = input
        # a dim of unchanged size is copied where no scale is given, and by ATen's 2-d nearest
        # kernel whatever the scale; the others map it by the scale (5 -> 5 at 1.1: 0 0 1 2 3)
        keep = mode == "nearest" and nd == 2
        for i, (n, m, s) in enumerate(zip(spatial, outs, scales)):
            if n != m or (s is not None and not keep):
                idx = _nearest_index(n, m, s, mode == "nearest-exact", ft)
                out = _select_positions(out, 2 + i, idx)
        return out if out is not input else input.clone()
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"compute_indices_weights_{mode}\" not implemented for '{input.dtype.name}'"
        )
    ft = np.float64 if input.dtype is _D.float64 else np.float32
    kind = {"bicubic": "cubic", "lanczos": "lanczos"}.get(mode, "linear")
    out = input
    # the last dim first: PyTorch's kernels interpolate along W inside H inside D
    for i in reversed(range(nd)):
        if antialias and spatial[i] == outs[i]:  # ATen's separable kernel skips such a dim
            continue
        if antialias:
            taps = _antialias_taps(kind, spatial[i], outs[i], align_corners, scales[i], ft)
        else:
            taps = _interp_taps(kind, spatial[i], outs[i], align_corners, scales[i], ft)
        out = _taps_total(out, 2 + i, [(index, weight, None) for index, weight in taps])
    return out if out is not input else input.clone()


def upsample(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """``interpolate`` under its old name, as ``torch.nn.functional.upsample``.

    >>> clgrad.nn.functional.upsample(clgrad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """``interpolate(..., mode="nearest")``, as ``torch.nn.functional.upsample_nearest``.

    >>> clgrad.nn.functional.upsample_nearest(clgrad.ones(1, 1, 2, 2), scale_factor=2).shape
    clgrad.Size([1, 1, 4, 4])
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """``interpolate(..., mode="bilinear", align_corners=True)``, as
    ``torch.nn.functional.upsample_bilinear``.

    >>> clgrad.nn.functional.upsample_bilinear(clgrad.ones(1, 1, 2, 2), size=3).shape
    clgrad.Size([1, 1, 3, 3])
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- normalization ---------------------------------------------------------------------------
@autocast_op
def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes ``input`` over its last ``len(normalized_shape)`` dims to zero mean and unit
    (biased) variance, then applies the element-wise ``weight`` and ``bias``, as
    ``torch.nn.functional.layer_norm``.

    >>> clgrad.nn.functional.layer_norm(clgrad.tensor([[0.0, 1.0, 2.0, 3.0]]), (4,))
    tensor([[-1.3416, -0.4472, 0.4472, 1.3416]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {list(shape)}"
            )
    _same_device(input, weight, bias)
    _floating_input("LayerNormKernelImpl", input, weight, bias)
    dims = tuple(range(input.ndim - k, input.ndim))
    return _N.NativeLayerNorm.apply(input, weight, bias, dims, shape, eps, None)


def _floating_input(kernel, x, *params):
    """PyTorch's errors for a normalization's dtypes: NotImplementedError for an integer or
    bool ``x`` (its kernel ``kernel`` takes floating dtypes only), and RuntimeError for
    ``params`` (weight, bias, running statistics; None where not given) of another dtype than
    x, except float32 ones for a float16 or bfloat16 x (PyTorch's mixed type: statistics in
    float32, the output in x's dtype)."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_SCALAR_TYPE_NAMES[x.dtype.name]}'"
        )
    if all(t is None or t.dtype is x.dtype for t in params):
        return
    if any(t is not None and t.dtype is not _D.float32 for t in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if x.dtype not in (_D.float16, _D.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalization of a ``(N, C, *)`` input over every dim but the channels (dim 1), as
    ``torch.nn.functional.batch_norm``: with ``training``, uses the batch's statistics and
    updates ``running_mean`` / ``running_var`` in place (the variance unbiased) with
    ``momentum``; otherwise uses the running statistics. ``weight`` and ``bias`` are
    per channel.

    >>> import clgrad.nn.functional as F
    >>> x = clgrad.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> F.batch_norm(x, clgrad.zeros(2), clgrad.full((2,), 4.0))
    tensor([[0.5000, 1.0000],
            [1.5000, 3.0000]])
    >>> mean = clgrad.zeros(2)
    >>> F.batch_norm(x, mean, clgrad.ones(2), training=True).shape
    clgrad.Size([2, 2])
    >>> mean
    tensor([0.2000, 0.4000])
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input (N, C, ...), got {input.ndim}-D")
    if training and input.shape[0] * math.prod(input.shape[2:]) == 1:  # torch's _verify_batch_size
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {input.shape}"
        )
    # before the shapes are checked, as torch.nn.functional.batch_norm
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """``batch_norm`` past torch.nn.functional's own checks: ATen's (``torch.batch_norm`` and
    ``torch.native_batch_norm`` take an eps of 0 and one value per channel)."""
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input (N, C, ...), got {input.ndim}-D")
    c = input.shape[1]
    bshape = (1, c) + (1,) * (input.ndim - 2)
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"batch_norm: {name} should contain {c} elements not {t.numel()}")
    _floating_input("batch_norm", input, weight, bias, running_mean, running_var)
    if training:
        if input.numel() == 0:  # an empty batch: an empty result, the statistics untouched
            out = input if weight is None else input * weight.reshape(bshape)
            out = out if bias is None else out + bias.reshape(bshape)
            return out.clone() if out is input else out
        _same_device(input, weight, bias, running_mean, running_var)
        dims = (0,) + tuple(range(2, input.ndim))
        running = None
        if running_mean is not None or running_var is not None:
            running = (running_mean, running_var, momentum)
        return _N.NativeBatchNorm.apply(input, weight, bias, dims, bshape, eps, running)
    if running_mean is None or running_var is None:
        raise RuntimeError(
            "batch_norm: running_mean and running_var must be defined in "
            "evaluation mode (training=False)"
        )
    scale = (running_var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    out = input * scale.reshape(bshape) + shift.reshape(bshape)
    return out if out.dtype is input.dtype else out.to(input.dtype)  # mixed: x's dtype


@autocast_op
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Group normalization, as ``torch.nn.functional.group_norm``: normalizes each sample of a
    ``(N, C, *)`` input over groups of ``C // num_groups`` channels (and the other dims), then
    applies the per-channel ``weight`` and ``bias``.

    >>> clgrad.nn.functional.group_norm(clgrad.arange(8.0).reshape(1, 4, 2), 2)
    tensor([[[-1.3416, -0.4472],
             [ 0.4472,  1.3416],
             [-1.3416, -0.4472],
             [ 0.4472,  1.3416]]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected at least 2-D input, got {input.ndim}-D")
    c = input.shape[1]
    size = [input.shape[0] * c // num_groups, num_groups, *input.shape[2:]]
    if size[0] * math.prod(size[2:]) == 1:  # torch's _verify_batch_size: one value a group
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {input.shape} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}"
            )
    _floating_input("GroupNormKernelImpl", input, weight, bias)
    affine = (1, c) + (1,) * (input.ndim - 2)
    return _N.NativeGroupNorm.apply(input, weight, bias, num_groups, affine, eps)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """Divides ``input`` by its ``p``-norm along ``dim`` (at least ``eps``), so that the slices
    along ``dim`` have unit norm, as ``torch.nn.functional.normalize``.

    >>> clgrad.nn.functional.normalize(clgrad.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    # the vector norm's gradient is 0 at a zero slice (a sqrt of the sum of squares: NaN)
    norm = _R.norm(input, p, dim, True)
    if out is not None:  # (PyTorch's out=: written, no graph)
        _check_out("normalize", out, (input,), {})
        return _write_out(out, input / norm.clamp(min=eps))
    return input / norm.clamp(min=eps)


# ---- embedding, one_hot, pad -----------------------------------------------------------------
def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Looks up the rows ``weight[input]`` for an integer index tensor of any shape, as
    ``torch.nn.functional.embedding``: the result is ``(*input.shape, embedding_dim)``. The
    ``padding_idx`` row gets no gradient; ``max_norm`` renormalizes the looked-up rows of
    ``weight`` in place; ``scale_grad_by_freq`` divides each lookup's gradient by how often its
    index occurs in ``input``. With ``sparse`` the weight's gradient is a sparse COO tensor of
    the looked-up rows (see ``clgrad.ops.sparse.EmbeddingSparseFn``).

    >>> table = clgrad.arange(6.0).reshape(3, 2)
    >>> clgrad.nn.functional.embedding(clgrad.tensor([2, 0]), table)
    tensor([[4., 5.],
            [0., 1.]])
    >>> _ = table.requires_grad_()
    >>> clgrad.nn.functional.embedding(clgrad.tensor([2, 0]), table, sparse=True).sum().backward()
    >>> table.grad.is_sparse, table.grad._indices()
    (True, tensor([[2, 0]]))
    """
    if not isinstance(input, Tensor):
        input = _tensor(input, dtype=_D.int64, device=weight.device)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.device != weight.device:  # (a 0-d cpu index too: its buffer is the host's)
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{weight.device} and {input.device}!"
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= num
    _N.check_index_dtype(input)
    if input.numel() and not input.is_meta:
        # (a device_check: a captured step reads it after its replay, whose kernels clamp
        # every offset into the weight, so that an embedding does not make it run eagerly)
        indices = input
        device_check(
            lambda: ((indices < 0) | (indices >= num)).any(),
            _embedding_index_error,
            (indices,),
            ("embedding index", num),
        )
    if input.dtype is not _D.int64:
        input = input.to(_D.int64)
    if max_norm is not None:
        with no_grad():
            hit = (_arange(num, device=weight.device) == input.reshape(-1, 1)).any(0)
            norm = (weight.abs() ** norm_type).sum(1) ** (1.0 / norm_type)
            scale = _E.where(hit & (norm > max_norm), max_norm / (norm + 1e-7), 1.0)
            weight.mul_(scale.unsqueeze(1).to(weight.dtype))
    fn = _SP.EmbeddingSparseFn if sparse else _N.EmbeddingFn
    return fn.apply(weight, input, padding_idx, scale_grad_by_freq)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """One-hot encodes an int64 tensor of class indices into an int64 tensor with a new last dim
    of size ``num_classes`` (by default, the largest index plus one), as
    ``torch.nn.functional.one_hot``.

    >>> clgrad.nn.functional.one_hot(clgrad.tensor([0, 2, 1]))
    tensor([[1, 0, 0],
            [0, 0, 1],
            [0, 1, 0]])
    """
    if not isinstance(num_classes, int) or isinstance(num_classes, bool):  # (its parser's)
        raise TypeError(
            "one_hot(): argument 'num_classes' (position 2) must be int, not "
            f"{type(num_classes).__name__}"
        )
    if tensor.dtype is not _D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel():
        lo, hi = int(tensor.min().item()), int(tensor.max().item())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    classes = _arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(_D.int64)


def _index_pad(x, dim, lo, hi, mode):
    n = x.shape[dim]
    pos = np.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(
                f"Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({lo}, {hi}) at dimension {dim} of input {list(x.shape)}"
            )
        pos = np.abs(pos)
        pos = np.where(pos >= n, 2 * (n - 1) - pos, pos)
    elif mode == "replicate":
        pos = np.clip(pos, 0, n - 1)
    else:  # circular
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        pos = pos % n
    return _select_positions(x, dim, pos)


def pad(
    input: Tensor,
    pad: Sequence[int],
    mode: Literal["constant", "reflect", "replicate", "circular"] = "constant",
    value: float | None = None,
) -> Tensor:
    """Pads the last ``len(pad) // 2`` dims of ``input``, as ``torch.nn.functional.pad``: ``pad``
    lists (before, after) widths from the last dim backwards, ``(last_lo, last_hi,
    second_last_lo, ...)``. Modes: "constant" (with ``value``, 0 by default; negative widths
    crop), "reflect", "replicate" and "circular".

    >>> import clgrad.nn.functional as F
    >>> F.pad(clgrad.ones(1, 2), (1, 2))
    tensor([[0., 1., 1., 0., 0.]])
    >>> F.pad(clgrad.arange(3.0).reshape(1, 3), (2, 2), mode="reflect")
    tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    if k > input.ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    pairs = [(0, 0)] * (input.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    if mode == "constant":
        return _N.pad_constant(input, pairs, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if input.ndim not in (k + 1, k + 2) or not 1 <= k <= 3:  # ATen's _pad_enum: 1-3 dims
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode != "circular":  # ATen's check_valid_input for reflection and replication: an
        # empty batch passes, an empty channel or spatial dim does not
        rest = input.shape[1:] if input.ndim == k + 2 else input.shape
        if 0 in rest:
            raise RuntimeError(
                f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size "
                f"and other non-zero dimensions for input, but got: {list(input.shape)}"
            )
    out = input
    for dim, (lo, hi) in enumerate(pairs):
        if mode == "circular" and (lo < 0 or hi < 0):  # ATen's crops first, then wraps
            out = out.narrow(dim, max(-lo, 0), out.shape[dim] - max(-lo, 0) - max(-hi, 0))
            lo, hi = max(lo, 0), max(hi, 0)
        if lo or hi:  # (negative widths crop: the positions start or end inside)
            out = _index_pad(out, dim, lo, hi, mode)
    return out.clone() if out is input else out  # a new tensor, as PyTorch's: never the input


# ---- other layers ----------------------------------------------------------------------------
def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Instance normalization, as ``torch.nn.functional.instance_norm``: normalizes every
    channel of every sample of a ``(N, C, *)`` input over its spatial dims, then applies the
    per-channel ``weight`` and ``bias``. With ``use_input_stats`` and running statistics, these
    move towards the batch's average instance mean and (unbiased) variance; without
    ``use_input_stats`` the running statistics normalize, as in ``batch_norm``'s eval mode.

    >>> clgrad.nn.functional.instance_norm(clgrad.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected a (N, C, *) input, got {list(input.shape)}")
    _floating_input("instance_norm", input, weight, bias, running_mean, running_var)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    n, c = input.shape[0], input.shape[1]
    m = math.prod(input.shape[2:])
    if m == 1:  # (none at all passes, as PyTorch's: an empty result)
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {input.shape}"
        )
    y, _, mean, var = _N.normalized(input, tuple(range(2, input.ndim)), eps)
    # (no spatial element leaves the running statistics as they are, as PyTorch's; no sample
    # makes them NaN, as its)
    if (running_mean is not None or running_var is not None) and m:
        with no_grad():
            if running_mean is not None:
                batch_mean = mean.reshape(n, c).mean(0).to(running_mean.dtype)
                running_mean.mul_(1 - momentum).add_(batch_mean * momentum)
            if running_var is not None:
                batch_var = (var.reshape(n, c).mean(0) * (m / (m - 1))).to(running_var.dtype)
                running_var.mul_(1 - momentum).add_(batch_var * momentum)
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(bshape)
    y = y + bias.reshape(bshape) if bias is not None else y
    return y if y.dtype is input.dtype else y.to(input.dtype)  # mixed type: x's dtype


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Local response normalization across channels, as
    ``torch.nn.functional.local_response_norm``: ``x / (k + alpha * mean of x ** 2 over
    size neighbouring channels) ** beta`` (the window zero-padded at the ends).

    >>> y = clgrad.nn.functional.local_response_norm(clgrad.ones(1, 3, 2), 2, alpha=1.0)
    >>> y[0, :, 0]
    tensor([0.7378, 0.5946, 0.5946])
    """
    if input.ndim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)"
        )
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = _N.pad_constant(
        input * input, ((0, 0), (size // 2, (size - 1) // 2)) + ((0, 0),) * (input.ndim - 2)
    )
    div = sq.narrow(1, 0, c)
    for j in range(1, size):  # ``size`` shifted views: the window sum along the channels
        div = div + sq.narrow(1, j, c)
    return input / (div * (alpha / size) + k) ** beta


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearranges ``(*, C * r ** 2, H, W)`` into ``(*, C, H * r, W * r)`` (``r`` the
    ``upscale_factor``), as ``torch.nn.functional.pixel_shuffle``.

    >>> clgrad.nn.functional.pixel_shuffle(clgrad.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    lead = tuple(input.shape[:-3])
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    b = len(lead)
    x = x.permute(tuple(range(b)) + (b, b + 3, b + 1, b + 4, b + 2))
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r ** 2, H, W)``, the inverse of
    ``pixel_shuffle``, as ``torch.nn.functional.pixel_unshuffle``.

    >>> clgrad.nn.functional.pixel_unshuffle(clgrad.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r or w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height and width to be divisible by downscale_factor, "
            f"but input.size(-2)={h} and input.size(-1)={w} with downscale_factor={r}"
        )
    lead = tuple(input.shape[:-3])
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    b = len(lead)
    x = x.permute(tuple(range(b)) + (b, b + 2, b + 4, b + 1, b + 3))
    return x.reshape(lead + (c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleaves the channels of a ``(N, C, *)`` input from ``groups`` groups (channel
    ``g * (C / groups) + i`` moves to ``i * groups + g``), as
    ``torch.nn.functional.channel_shuffle``.

    >>> clgrad.nn.functional.channel_shuffle(clgrad.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    if input.ndim < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    n = input.shape[0]
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return x.reshape(tuple(input.shape))


@autocast_op
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast together),
    each norm clamped to at least ``eps``, as ``torch.nn.functional.cosine_similarity``.

    >>> import clgrad.nn.functional as F
    >>> F.cosine_similarity(clgrad.tensor([[1.0, 0.0], [1.0, 1.0]]), clgrad.tensor([[1.0, 1.0]]))
    tensor([0.7071, 1.0000])
    """
    # broadcast first: an input of size 1 along dim is the same vector in every position
    x1, x2 = _broadcast_tensors(x1, x2)
    # vector norms, whose gradient is 0 at a zero slice, as PyTorch's (no NaN there); PyTorch
    # clamps them in place under no_grad, so the gradient is the unclamped norm's
    n1 = _R.norm(x1, 2, dim, True)
    n2 = _R.norm(x2, 2, dim, True)
    n1 = n1 + (n1.detach().clamp(min=eps) - n1.detach())
    n2 = n2 + (n2.detach().clamp(min=eps) - n2.detach())
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim, as
    ``torch.nn.functional.pairwise_distance``.

    >>> a, b = clgrad.tensor([[0.0, 0.0]]), clgrad.tensor([[3.0, 4.0]])
    >>> clgrad.nn.functional.pairwise_distance(a, b)
    tensor([5.0000])
    """
    d = x1 - x2 + eps
    dim = max(x1.ndim, x2.ndim) - 1
    if dim < 0:
        return d.abs() if p != 0 else (d != 0).to(d.dtype)
    if p == 2:  # the vector norm: gradient 0 where x1 - x2 = -eps (a sqrt's would be NaN)
        return _R.norm(d, 2, dim, keepdim)
    if p == 1:
        return d.abs().sum(dim, keepdim=keepdim)
    if p == math.inf:
        return d.abs().amax(dim, keepdim=keepdim)
    if p == 0:
        return (d != 0).sum(dim, keepdim=keepdim).to(d.dtype)
    return (d.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


def _causal_mask(n_q, n_k, device):
    """True where query i may attend key j (j <= i), as ``ones(L, S).tril()``."""
    return _arange(n_q, device=device).reshape(n_q, 1) >= _arange(n_k, device=device)


@autocast_op
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key.mT * scale + mask) @ value`` over ``(..., L, E)`` queries and
    ``(..., S, E)`` keys, as ``torch.nn.functional.scaled_dot_product_attention``: ``scale``
    defaults to ``1 / sqrt(E)``; a bool ``attn_mask`` is True where attention is allowed, a
    float one is added; ``is_causal`` allows key ``j <= i`` only; ``dropout_p`` drops attention
    weights; ``enable_gqa`` lets the heads (dim -3) of the keys and values divide those of the
    queries. A query that may attend nothing gets zeros (PyTorch's safe softmax).

    >>> q = clgrad.ones(1, 2, 3, 4)
    >>> clgrad.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    clgrad.Size([1, 2, 3, 4])
    """
    _attention.check_backend_enabled()
    n_q, n_k = query.shape[-2], key.shape[-2]
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or value.shape[-3] != hk:
            raise RuntimeError(
                f"number of heads in key/value must divide number of heads in query, got "
                f"{hk} and {hq}"
            )

        def repeat_heads(t):  # PyTorch's repeat_interleave over the heads
            lead = tuple(t.shape[:-3])
            x = t.unsqueeze(-3).expand(lead + (hk, hq // hk) + tuple(t.shape[-2:]))
            return x.reshape(lead + (hq,) + tuple(t.shape[-2:]))

        key, value = repeat_heads(key), repeat_heads(value)
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.mT) * factor
    allowed = None
    if is_causal:
        allowed = _causal_mask(n_q, n_k, query.device)
    if attn_mask is not None and hasattr(attn_mask, "_materialize"):  # attention.bias's masks
        attn_mask = attn_mask._materialize(query.device)
    if attn_mask is not None:
        if attn_mask.dtype is _D.bool_:
            allowed = attn_mask if allowed is None else allowed & attn_mask
        else:
            scores = scores + attn_mask
    if allowed is not None:
        scores = scores.masked_fill(~allowed, -math.inf)
    # rows with every key masked: softmax over zeros instead (no NaN), then zeroed
    dead = (scores == -math.inf).all(-1, keepdim=True)
    probs = _R.softmax(_E.where(dead, 0.0, scores), -1).masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        probs = dropout(probs, dropout_p)
    out = probs @ value
    if query.ndim == 4 and query.stride(1) < query.stride(2):
        # queries viewed from (B, L, heads, E) memory (x.view(B, L, H, E).transpose(1, 2)):
        # the output is laid out the same way, as PyTorch's, so that the usual
        # out.transpose(1, 2).view(B, L, H * E) is a view here too
        out = out.transpose(1, 2).contiguous().transpose(1, 2)
    return out


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit ``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input``
    along ``dim``, as ``torch.nn.functional.glu``.

    >>> clgrad.nn.functional.glu(clgrad.tensor([2.0, 0.0]))
    tensor([1.])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.ndim} is size {n}"
        )
    a, b = input.split([n // 2, n // 2], dim)  # (two halves of a size-0 dim too)
    return a * _E.sigmoid(b)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where ``input > threshold``, else ``value``, element-wise, as
    ``torch.nn.functional.threshold``.

    >>> clgrad.nn.functional.threshold(clgrad.tensor([-1.0, 0.5, 2.0]), 1.0, 9.0)
    tensor([9., 9., 2.])
    """
    return _act(_threshold, input, threshold, value, inplace=inplace)


def _threshold(input, threshold, value):
    # value where input <= threshold, as ATen's: a NaN input stays NaN
    return _E.where(input <= threshold, value, input).to(input.dtype)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``, as ``torch.nn.functional.threshold_``.

    >>> clgrad.nn.functional.threshold_(clgrad.tensor([-1.0, 2.0]), 1.0, 9.0)
    tensor([9., 2.])
    """
    return _act(_threshold, input, threshold, value, inplace=True)


prelu = _A.prelu


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """The randomized leaky ReLU, as ``torch.nn.functional.rrelu``: negative inputs are scaled
    by a slope drawn uniformly from [lower, upper] per element when ``training``, and by
    ``(lower + upper) / 2`` otherwise.

    >>> clgrad.nn.functional.rrelu(clgrad.tensor([-3.0, 2.0]), 0.1, 0.3)
    tensor([-0.6000,  2.0000])
    """
    if training:
        slope = _rand(tuple(input.shape), dtype=input.dtype, device=input.device)
        slope = slope * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    # (0 takes the slope, as PyTorch's: its gradient there is the slope, not 1)
    return _act(lambda x: _E.where(x > 0, x, x * slope), input, inplace=inplace)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place ``rrelu``, as ``torch.nn.functional.rrelu_``.

    >>> clgrad.nn.functional.rrelu_(clgrad.tensor([-3.0, 2.0]), 0.1, 0.3)
    tensor([-0.6000,  2.0000])
    """
    return rrelu(input, lower, upper, training, inplace=True)


# ---- losses ----------------------------------------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _lengths(values, n, name) -> list[int]:
    """CTC's input or target lengths (a tensor, list or tuple, one per batch entry) as ints."""
    if isinstance(values, Tensor):
        values = values.reshape(-1).tolist()
    values = [int(v) for v in values]
    if len(values) != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return values


def _safe_logsumexp(terms):
    """``log(sum(exp(t)))`` of same-shape tensors, -inf where every term is -inf, with no NaN in
    its gradient there (the CTC recursion meets such unreachable states at every step)."""
    top = terms[0]
    for t in terms[1:]:
        top = _E.maximum(top, t)
    shift = _E.where(top == -math.inf, 0.0, top).detach()  # (the shift has no gradient)
    total = sum((t - shift).exp() for t in terms)
    reachable = total > 0
    return _E.where(reachable, shift + _E.where(reachable, total, 1.0).log(), -math.inf)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss, as ``torch.nn.functional.ctc_loss``:
    ``-log p(target | log_probs)`` summed over every alignment of each target to its input
    (``(T, N, C)`` log-probabilities, or ``(T, C)`` unbatched; ``targets`` padded ``(N, S)`` or
    concatenated), by the forward recursion over the target interleaved with blanks, in log
    space. ``"mean"`` divides each loss by its target length before averaging; ``zero_infinity``
    zeroes impossible alignments' losses and gradients. The gradient is PyTorch's:
    ``exp(log_probs)`` minus the alignments' posterior (the same gradient at the logits of a
    ``log_softmax``).

    >>> logp = clgrad.tensor([[[0.5, 0.5]], [[0.5, 0.5]]]).log()  # T=2, N=1, C=2
    >>> clgrad.nn.functional.ctc_loss(logp, clgrad.tensor([[1]]), [2], [1], reduction="sum")
    tensor(0.2877)
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if not batched:
        targets = targets.unsqueeze(0)
    steps, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    t_lens = _lengths(input_lengths, n, "input_lengths")
    s_lens = _lengths(target_lengths, n, "target_lengths")
    for t in t_lens:
        if t > steps:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got value {t}"
            )
    targets = targets.to(_D.int64)
    if targets.ndim == 1:  # concatenated: cut and pad to (N, S)
        starts = [0]
        for length in s_lens:
            starts.append(starts[-1] + length)
        width = max(s_lens + [0])
        rows = [
            targets[a:b].tolist() + [blank] * (width - (b - a)) for a, b in zip(starts, starts[1:])
        ]
        targets = _tensor(rows, dtype=_D.int64, device=lp.device).reshape(n, width)
    elif targets.shape[1] < max(s_lens + [0]):
        raise RuntimeError(
            f"Expected tensor to have size at least {max(s_lens)} at dimension 1, but got size "
            f"{targets.shape[1]} for argument #2 'targets'"
        )
    width = max(s_lens + [0])
    targets = targets[:, :width]
    # the target interleaved with blanks: blank, l1, blank, l2, ..., blank
    ext_len = 2 * width + 1
    ext = targets.new_full((n, ext_len), blank)
    if width:
        ext[:, 1::2] = targets
    # a label may follow the one two back (skipping the blank between) when it differs from it
    skip = (ext != blank) & _cat_pad2(ext)
    t_len = _tensor(t_lens, dtype=_D.int64, device=lp.device).unsqueeze(1)
    gather_at = ext.unsqueeze(0).expand(steps, n, ext_len)
    emit = lp.gather(2, gather_at)  # (T, N, L): each step's log-probability of each symbol
    neg_inf = lp.new_full((n, 1), -math.inf)
    positions = _arange(ext_len, device=lp.device).unsqueeze(0)
    alpha = _E.where(positions < 2, emit[0], -math.inf)
    for step in range(1, steps):
        shifted1 = _cat([neg_inf, alpha[:, :-1]], 1)
        shifted2 = _E.where(skip, _cat([neg_inf, neg_inf, alpha[:, :-2]], 1), -math.inf)
        new = _safe_logsumexp([alpha, shifted1, shifted2]) + emit[step]
        alpha = _E.where(step < t_len, new, alpha)
    s_len = _tensor(s_lens, dtype=_D.int64, device=lp.device).unsqueeze(1)
    last_blank = alpha.gather(1, 2 * s_len)
    last_label = _E.where(s_len > 0, alpha.gather(1, (2 * s_len - 1).clamp(min=0)), -math.inf)
    nll = -_safe_logsumexp([last_blank, last_label]).squeeze(1)
    # PyTorch's gradient: exp(log_probs) is added over each input's steps (a term worth 0)
    valid = (_arange(steps, device=lp.device).unsqueeze(1) < t_len.reshape(1, n)).unsqueeze(2)
    prob = _E.where(valid, lp.exp(), 0.0)
    nll = nll + (prob - prob.detach()).sum((0, 2))
    if zero_infinity:
        nll = _E.where(nll == math.inf, 0.0, nll)
    if not batched:
        nll = nll.squeeze(0)
    if reduction == "mean":
        return (nll / s_len.reshape(nll.shape).clamp(min=1).to(nll.dtype)).mean()
    return _reduce(nll, reduction)


def _cat_pad2(ext):
    """``ext[s] != ext[s - 2]``, False for s < 2."""
    n = ext.shape[0]
    earlier = _cat([ext.new_full((n, 2), -1), ext[:, :-2]], 1)
    return ext != earlier


def _warn_broadcast(input, target):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


@autocast_op
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The squared error ``(input - target) ** 2`` element-wise, reduced by ``reduction`` ("mean",
    "sum" or "none"), as ``torch.nn.functional.mse_loss`` (differing shapes broadcast, with
    PyTorch's warning); a ``weight`` of input's shape weighs each element (its "mean" divided
    by the weights' sum).

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.mse_loss(a, b)
    tensor(1.4167)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted(((input - target) ** 2), weight, input, reduction, by_weight=True)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _warn_broadcast(input, target)
    dt = _D.result_type(input, target)
    if not dt.is_floating_point:
        raise NotImplementedError(
            f"\"mse_cpu\" not implemented for '{_SCALAR_TYPE_NAMES[dt.name]}'"
        )
    return _N.MseLoss.apply(input, target, reduction)


@autocast_op
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The absolute error ``|input - target|`` element-wise (times ``weight``, as in
    ``mse_loss``), reduced by ``reduction``, as ``torch.nn.functional.l1_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.l1_loss(a, b, reduction="sum")
    tensor(2.5000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction, by_weight=True)
    return _reduce((input - target).abs(), reduction)


def _weighted(loss, weight, input, reduction, by_weight):
    """PyTorch's weighted regression losses: ``loss * weight`` (a weight of input's shape),
    "mean" divided by the weights' sum (``by_weight``) or by their count."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@autocast_op
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: _Reduction = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 * d ** 2`` where ``d = |input - target| < delta``, else ``delta * (d - 0.5 * delta)``,
    element-wise, reduced by ``reduction``, as ``torch.nn.functional.huber_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.huber_loss(a, b, delta=0.5)
    tensor(0.3333)
    """
    _warn_broadcast(input, target)
    r = input - target
    d = r.abs()
    # the square of r itself, not of |r|: its second derivative is 1 at r = 0 too
    loss = _E.where(d < delta, 0.5 * r * r, delta * (d - 0.5 * delta))
    if weight is not None:  # (its "mean" is the weighted elements' mean, as PyTorch's)
        return _weighted(loss, weight, input, reduction, by_weight=False)
    return _reduce(loss, reduction)


@autocast_op
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 * d ** 2 / beta`` where ``d = |input - target| < beta``, else ``d - 0.5 * beta``,
    element-wise (``beta=0``: the L1 loss), reduced by ``reduction``, as
    ``torch.nn.functional.smooth_l1_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.smooth_l1_loss(a, b, beta=0.5)
    tensor(0.6667)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    r = input - target
    d = r.abs()
    if beta == 0:
        return _reduce(d, reduction)
    # the square of r itself, not of |r|: its second derivative is 1 / beta at r = 0 too
    return _reduce(_E.where(d < beta, 0.5 * r * r / beta, d - 0.5 * beta), reduction)


def _refuse_grad(function: str, argument: str, t: Tensor | None) -> None:
    """PyTorch's RuntimeError for an argument its function has no derivative for (a loss's
    weights, a target) that requires grad while grad mode records."""
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"The function '{function}' is not differentiable with respect to argument "
            f"'{argument}'. This input cannot have requires_grad True."
        )


@autocast_op
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
) -> Tensor:
    """The binary cross entropy ``-weight * (t * log(x) + (1 - t) * log(1 - x))`` between
    probabilities ``input`` and ``target`` of the same shape, each log clamped at -100, reduced
    by ``reduction``, as ``torch.nn.functional.binary_cross_entropy``.

    >>> p, t = clgrad.tensor([0.9, 0.2, 0.6]), clgrad.tensor([1.0, 0.0, 1.0])
    >>> clgrad.nn.functional.binary_cross_entropy(p, t)
    tensor(0.2798)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if target.dtype is not input.dtype:  # PyTorch's kernel takes one dtype
        raise RuntimeError(
            f"Found dtype {_SCALAR_TYPE_NAMES[target.dtype.name]} but expected "
            f"{_SCALAR_TYPE_NAMES[input.dtype.name]}"
        )
    _refuse_grad("binary_cross_entropy", "weight", weight)
    if input.device.is_cpu and input.numel():
        # PyTorch's CPU kernel checks each element (a probability passed as a logit raises);
        # on an OpenCL device, as on CUDA (an asynchronous device assert), no read-back is
        # spent on it
        values = input.detach()._numpy()
        if not ((values >= 0) & (values <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
    return _reduce(_N.BinaryCrossEntropy.apply(input, target, weight), reduction)


@autocast_op
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """The binary cross entropy of ``sigmoid(input)`` and ``target``, computed stably from the
    logits as ``(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``, as
    ``torch.nn.functional.binary_cross_entropy_with_logits``; ``pos_weight`` weights the
    positive term, ``weight`` each element.

    >>> x, t = clgrad.tensor([2.0, -1.0, 0.5]), clgrad.tensor([1.0, 0.0, 1.0])
    >>> clgrad.nn.functional.binary_cross_entropy_with_logits(x, t)
    tensor(0.3048)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    if target.dtype.category == 1:  # PyTorch's result, of input's dtype, goes into target's
        raise RuntimeError(
            f"result type {_SCALAR_TYPE_NAMES[input.dtype.name]} can't be cast to the desired "
            f"output type {_SCALAR_TYPE_NAMES[target.dtype.name]}"
        )
    _refuse_grad("binary_cross_entropy_with_logits", "weight", weight)
    _refuse_grad("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    for extra in (pos_weight, weight):  # PyTorch writes them into a loss of input's shape
        if extra is not None:
            full = _broadcast_shapes(tuple(input.shape), tuple(extra.shape))
            if full != tuple(input.shape):
                raise RuntimeError(
                    f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                    f"{list(full)}"
                )
    sp = _E.softplus(-input)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _class_targets(name, input, target, weight):
    """Checks class-index targets (and ``weight``'s shape) against a (N, C, d1, ...) / (C,)
    input in ATen's order (nll_loss_nd, then nll_loss's or nll_loss2d's checks), with its
    classes; returns (target, class dim). A (1,) target of a (C,) input is one class index,
    and uint8 targets are taken below 3 dims (ATen's CPU kernels: Long or Byte)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim == 1 and target.ndim == 1:
        if target.shape[0] != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}"
            )
        target = target.reshape(())
    if input.ndim != 1 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0})."
        )
    c = input.shape[0 if input.ndim == 1 else 1]
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if weight is not None and tuple(weight.shape) != (c,):
            raise RuntimeError(
                f"weight tensor should be defined either for all {c} classes or no classes but "
                f"got weight tensor of shape: {list(weight.shape)}"
            )
    else:
        expected = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expected:
            # (ATen words it "Expected target size ...", and for a 4-d input "only batches of
            # spatial targets supported ..." / "size mismatch ..."; tests/test_nn.py pins
            # this wording)
            raise RuntimeError(
                f"{name}: expected target size {list(expected)}, got {list(target.shape)}"
            )
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    if target.dtype is not _D.int64 and target.dtype is not _D.uint8:
        raise RuntimeError(
            f"{name}: expected target of dtype int64 (class indices), got {target.dtype.name}"
            + (
                " (floating-point targets are class probabilities and need the input's shape "
                f"{list(input.shape)}, got {list(target.shape)})"
                if target.dtype.is_floating_point and name == "cross_entropy"
                else ""
            )
        )
    if target.dtype is _D.uint8:
        if input.ndim > 2:  # nll_loss2d's kernel takes Long only
            raise RuntimeError("expected scalar type Long but found Byte")
        target = target.long()
    return target, 0 if input.ndim == 1 else 1


def _target_error(target, bad, c):
    first = target.masked_select(bad)[0].item()
    raise IndexError(f"Target {first} is out of bounds.")


def _embedding_index_error():
    raise IndexError("index out of range in self")


def device_check(flag_of, fail, inputs=(), key=None) -> None:
    """Calls ``fail()`` (which raises) when the one-element tensor ``flag_of()`` is true: a
    read of the device now, or, while ``clgrad.compile`` captures a step, after each replay's
    launches (the replay raises the same error, after the step has run, as a device-side assert
    would). A flag computed from the tensors ``inputs`` alone is computed and read again only
    once one of them has changed: in replays, and, given a ``key`` naming the check, in eager
    calls on OpenCL devices (a training step's fixed targets cost no wait per step).

    >>> from clgrad.nn.functional import device_check
    >>> device_check(lambda: clgrad.tensor(False), lambda: 1 / 0)
    """
    if capture.active is not None:
        capture.defer_check(flag_of(), fail, inputs)
        return
    # OpenCL memory has no host alias: every write goes through an op that counts a version
    cached = key is not None and inputs and all(t.device.is_cl for t in inputs)
    if cached:
        key = (key, tuple((id(t._storage), t._offset, t._shape, t._stride) for t in inputs))
        versions = tuple(t._storage.version for t in inputs)
        passed = _PASSED.setdefault(inputs[0]._storage, {})
        if passed.get(key) == versions:
            return
    flag = flag_of()
    if flag.is_meta:  # no values to check: PyTorch's meta kernels check shapes only
        return
    if bool(flag.item()):
        fail()
    if cached:
        passed[key] = versions


# first input's storage -> {(check, inputs' geometry): the inputs' versions when it passed}. A
# check's read of the device waits for all queued work, which on a training loop over fixed
# targets (a full batch, the benchmarks' steps) stalled every step (5.2 -> 3.8 ms for an MLP
# step on PoCL).
_PASSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _nll(logp, target, weight, ignore_index, reduction, cdim):
    """nll_loss of checked class-index targets: the weight's checks, the targets' range check
    (a read of the device, skipped while the targets are unchanged), then one kernel."""
    c = logp.shape[cdim]
    if not logp.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"nll_loss_out_frame\" not implemented for '{_SCALAR_TYPE_NAMES[logp.dtype.name]}'"
        )
    _same_device(logp, target, weight)
    if target.device != logp.device:  # a 0-d cpu target of an unbatched input
        target = target.to(logp.device)
    if weight is not None:
        if weight.dtype is not logp.dtype:
            raise RuntimeError(
                f"expected scalar type {_SCALAR_TYPE_NAMES[logp.dtype.name]} but found "
                f"{_SCALAR_TYPE_NAMES[weight.dtype.name]}"
            )
        _refuse_grad("nll_loss_forward", "weight", weight)
    if target.numel():

        def bad():
            return (target != ignore_index) & ((target < 0) | (target >= c))

        device_check(
            lambda: bad().any(),
            lambda: _target_error(target, bad(), c),
            (target,),
            ("nll target", c, ignore_index),
        )
    return _N.nll_loss(logp, target, weight, ignore_index, reduction)


@autocast_op
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
) -> Tensor:
    """The negative log-likelihood of int64 class-index targets given log-probabilities ``input``
    (``(N, C)``, ``(C,)`` or ``(N, C, d1, ...)``), as ``torch.nn.functional.nll_loss``:
    ``-weight[t] * input[t]`` per element, ``ignore_index`` targets skipped, and the "mean"
    divided by the sum of the weights used.

    >>> logp = clgrad.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]]).log_softmax(1)
    >>> clgrad.nn.functional.nll_loss(logp, clgrad.tensor([0, 2]), reduction="none")
    tensor([0.2413, 0.1096])
    """
    _tensor_args("nll_loss_nd", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    target, cdim = _class_targets("nll_loss", input, target, weight)
    return _nll(input, target, weight, ignore_index, reduction, cdim)


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: _Reduction = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, as
    ``torch.nn.functional.linear_cross_entropy``: ``input`` (N, in) or (in,), ``linear_weight``
    (C, *out_features, in) (a K-dimensional loss with out_features), ``target`` class indices
    (``ignore_index`` None means -100) or probabilities. ``options``
    (``LinearCrossEntropyOptions``) are checked as PyTorch checks them; the loss is computed
    in one piece, which PyTorch's chunked path equals.

    >>> import clgrad.nn.functional as F
    >>> x, w = clgrad.tensor([[1.0, 2.0]]), clgrad.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> F.linear_cross_entropy(x, w, clgrad.tensor([1]))
    tensor(0.3133)
    """
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}"
        )
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{in_features} and {linear_weight.shape[-1]}, respectively"
        )
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(num_classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if options is not None:
        options.check()
    flat_bias = linear_bias.reshape(-1) if linear_bias is not None else None
    logits = linear(input, linear_weight.reshape(-1, in_features), flat_bias)
    return cross_entropy(
        logits.reshape(logits_shape),
        target,
        weight,
        ignore_index=-100 if ignore_index is None else ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )


def _tensor_args(name: str, **args) -> None:
    """PyTorch's TypeError for a loss's argument that is not a Tensor (its C++ signature's),
    named by position; a None passes (an optional argument left out)."""
    for position, (arg, value) in enumerate(args.items(), 1):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )


@autocast_op
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: _Reduction = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross entropy between unnormalized scores ``input`` and ``target``, as
    ``torch.nn.functional.cross_entropy``: ``log_softmax`` over the class dim (1, or 0 for an
    unbatched input) then the negative log-likelihood. Targets are int64 class indices or class
    probabilities of the input's shape; ``weight``, ``ignore_index``, ``label_smoothing`` and
    ``reduction`` as in PyTorch.

    >>> import clgrad.nn.functional as F
    >>> logits = clgrad.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
    >>> F.cross_entropy(logits, clgrad.tensor([0, 2]))
    tensor(0.1755)
    >>> F.cross_entropy(logits, clgrad.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    tensor(0.1755)
    """
    _tensor_args("cross_entropy_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    cdim = 1 if input.ndim >= 2 else 0
    # ATen's cross_entropy_loss: a target of the input's shape is class probabilities; a
    # label_smoothing above 1 is refused where it is used (a negative one is no smoothing)
    if tuple(target.shape) == tuple(input.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_SCALAR_TYPE_NAMES[target.dtype.name]}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        c = input.shape[cdim]
        if weight is not None and tuple(weight.shape) != (c,):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {c} classes or "
                f"no classes but got weight tensor of shape: {list(weight.shape)}"
            )
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        logp = log_softmax(input, cdim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + _per_class(label_smoothing, c)
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
        loss = -prod.sum(cdim)
        if reduction == "mean":
            if not input.numel():
                return loss.sum() * math.nan
            return loss.sum() / (input.numel() // c)
        return _reduce(loss, reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    target, cdim = _class_targets("cross_entropy", input, target, weight)
    logp = log_softmax(input, cdim)
    loss = _nll(logp, target, weight, ignore_index, reduction, cdim)
    if label_smoothing <= 0:
        return loss
    # PyTorch's: (1 - s) * nll_loss + s / C * the loss against uniform targets (its "mean"
    # divided by the weights of the targets that count, as nll_loss's)
    c = input.shape[cdim]
    valid = target != ignore_index
    if weight is not None:
        wb = weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
        smooth = -(logp * wb).sum(cdim)
        counted = _E.where(valid, weight[_E.where(valid, target, 0)], 0.0)
    else:
        smooth = -logp.sum(cdim)
        counted = valid
    smooth = smooth.masked_fill(~valid, 0.0)
    if reduction == "mean":
        smooth = smooth.sum() / counted.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * loss + _per_class(label_smoothing, c) * smooth


def _per_class(label_smoothing, c):
    """``label_smoothing / c``, as PyTorch's double division: inf for no classes (its losses
    are then NaN or empty, not a ZeroDivisionError)."""
    return label_smoothing / c if c else math.inf


# ---- more losses -----------------------------------------------------------------------------
def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated ``size_average`` / ``reduce`` pair, mapped onto ``reduction``, with
    its warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{reduction}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return reduction


@autocast_op
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence ``target * (log(target) - input)`` between
    log-probabilities ``input`` and probabilities ``target`` (log-probabilities with
    ``log_target``), as ``torch.nn.functional.kl_div``; "batchmean" divides the sum by the
    batch size (the mathematically right KL), a zero target contributes 0.

    >>> logp = clgrad.tensor([[0.25, 0.75]]).log()
    >>> clgrad.nn.functional.kl_div(logp, clgrad.tensor([[0.5, 0.5]]), reduction="batchmean")
    tensor(0.1438)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:  # xlogy: 0 * log(0) is 0, a negative target NaN, as torch
        loss = _E.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


@autocast_op
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))`` for targets in {1, -1},
    as ``torch.nn.functional.soft_margin_loss``.

    >>> clgrad.nn.functional.soft_margin_loss(clgrad.tensor([0.0, 2.0]), clgrad.tensor([1.0, -1.0]))
    tensor(1.4100)
    """
    _refuse_grad("soft_margin_loss", "target", target)  # ATen's has no target derivative
    try:
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    except ValueError:  # (the product below raises torch's error)
        shape = tuple(input.shape)
    if shape != tuple(input.shape):  # (written into an input-shaped output)
        raise RuntimeError(
            f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}"
        )
    return _reduce(_E.softplus(-target * input), _legacy_reduction(size_average, reduce, reduction))


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The one-versus-all logistic loss of multi-label 0/1 ``target`` given scores ``input``
    ``(N, C)``, averaged over the classes, as ``torch.nn.functional.multilabel_soft_margin_loss``.

    >>> x, t = clgrad.tensor([[1.0, -1.0]]), clgrad.tensor([[1.0, 0.0]])
    >>> clgrad.nn.functional.multilabel_soft_margin_loss(x, t)
    tensor(0.3133)
    """
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1]
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


def _margin_input(name, input, target):
    """(input as (N, C), target as (N, ...), batched?) for the multi-class margin losses (a
    0-d input is one sample of one class, as ATen's)."""
    if input.ndim not in (0, 1, 2):
        raise RuntimeError(f"{name}: expected a 1-D or 2-D input, got {input.ndim}-D")
    if input.ndim == 0:
        return input.reshape(1, 1), target.reshape(1, -1), False
    return (
        (input.unsqueeze(0), target.reshape(1, -1), False)
        if input.ndim == 1
        else (input, target, True)
    )


@autocast_op
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss, as ``torch.nn.functional.multilabel_margin_loss``: ``target``
    (int64, the input's shape) lists each sample's classes, ended by the first -1; the loss sums
    ``max(0, 1 - (x[j] - x[k]))`` over listed ``j`` and unlisted ``k``, divided by C.

    >>> x = clgrad.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> clgrad.nn.functional.multilabel_margin_loss(x, clgrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    # ATen's multilabel_margin_loss_shape_check, then the range of every target entry (those
    # past the first -1 too)
    if input.ndim > 2 or (input.ndim > 0 and input.shape[-1] == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    if target.dtype is not _D.int64:
        kind = _SCALAR_TYPE_NAMES[target.dtype.name]
        raise RuntimeError(f"expected scalar type Long but found {kind}")
    x, t, batched = _margin_input("multilabel_margin_loss", input, target)
    if tuple(t.shape) != tuple(x.shape) or (not batched and target.ndim > 1):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    # the listed classes are a host-side mask: targets carry no gradient, and the -1 cut-off
    # is a prefix scan
    tn = t.detach().cpu().numpy()
    c = x.shape[1]
    if tn.size and (tn.min() < -1 or tn.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    # a class listed twice counts twice, as ATen's loop over the listed entries
    listed = np.zeros(tn.shape, dtype=np.int64)
    for i, row in enumerate(tn):
        for j in row:
            if j < 0:
                break
            listed[i, j] += 1
    pair = listed[:, :, None] * (listed == 0)[:, None, :]
    pair = _tensor(pair, device=x.device).to(x.dtype)
    # relu, not clamp: a hinge exactly at 0 has no gradient, as torch's kernel (z > 0)
    hinge = (1.0 - x.unsqueeze(2) + x.unsqueeze(1)).relu()
    loss = (hinge * pair).sum((1, 2)) / c
    loss = loss if batched else loss.squeeze(0)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@autocast_op
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss, as ``torch.nn.functional.multi_margin_loss``: per sample,
    ``sum_{j != y} weight[y] * max(0, margin - x[y] + x[j]) ** p / C`` (``p`` 1 or 2).

    >>> x = clgrad.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> clgrad.nn.functional.multi_margin_loss(x, clgrad.tensor([3]))
    tensor(0.3250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    # ATen's multi_margin_loss_shape_check, then its kernel's range check of the targets
    if input.ndim > 2 or (input.ndim > 0 and input.shape[-1] == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    _refuse_grad("multi_margin_loss", "weight", weight)
    x, t, _ = _margin_input("multi_margin_loss", input, target)
    n, c = x.shape
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    t = t.reshape(n)
    if n:

        def fail():
            raise RuntimeError("target out of range")

        device_check(lambda: ((t < 0) | (t >= c)).any(), fail, (t,), ("multi_margin target", c))
    hot = t.unsqueeze(1) == _arange(c, device=x.device)
    xy = _E.where(hot, x, 0.0).sum(1, keepdim=True)
    h = (margin - xy + x).relu()  # no gradient at exactly 0, as torch's kernel (z > 0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[t].unsqueeze(1)
    loss = _E.where(hot, 0.0, h).sum(1) / c
    # ATen sizes the unreduced loss by the target, not the input: one value per frame for a 1-D
    # target (a 1-D input with target [y] gives shape (1,)), a 0-d result for a 0-d target
    loss = loss if target.ndim > 0 else loss.squeeze(0)
    return _reduce(loss, reduction)


@autocast_op
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)`` for targets in {1, -1}, as
    ``torch.nn.functional.margin_ranking_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0]), clgrad.tensor([2.0, 0.0])
    >>> clgrad.nn.functional.margin_ranking_loss(a, b, clgrad.tensor([1.0, 1.0]))
    tensor(0.5000)
    """
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    loss = (-target * (input1 - input2) + margin).clamp(min=0.0)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@autocast_op
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target`` is 1 and ``max(0, margin - input)`` where it is -1, as
    ``torch.nn.functional.hinge_embedding_loss``.

    >>> x = clgrad.tensor([0.3, 0.4])
    >>> clgrad.nn.functional.hinge_embedding_loss(x, clgrad.tensor([1.0, -1.0]))
    tensor(0.4500)
    """
    clamped = (margin - input).clamp(min=0.0)
    loss = _E.where(target != 1, clamped, 0.0) + _E.where(target != -1, input, 0.0)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


@autocast_op
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1 and ``max(0, cos(x1, x2) - margin)`` where it
    is -1, the cosine along the last dim, as ``torch.nn.functional.cosine_embedding_loss``.

    >>> a, b = clgrad.tensor([[1.0, 0.0]]), clgrad.tensor([[1.0, 1.0]])
    >>> clgrad.nn.functional.cosine_embedding_loss(a, b, clgrad.tensor([1.0]))
    tensor(0.2929)
    """
    if input1.ndim != input2.ndim or input1.ndim not in (1, 2):
        raise RuntimeError(
            f"cosine_embedding_loss: expected 1-D or 2-D inputs of the same dim, got "
            f"{input1.ndim}-D and {input2.ndim}-D"
        )
    d = input1.ndim - 1
    eps = 1e-12  # torch's EPSILON: keeps a zero vector's cosine finite
    prod = (input1 * input2).sum(d)
    mag = ((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)
    cos = prod / mag.sqrt()
    loss = _E.where(target == 1, 1 - cos, 0.0) + _E.where(
        target == -1, (cos - margin).clamp(min=0.0), 0.0
    )
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the distance
    ``distance_function`` (default ``pairwise_distance``); ``swap`` uses the smaller of
    ``d(anchor, negative)`` and ``d(positive, negative)``, as
    ``torch.nn.functional.triplet_margin_with_distance_loss``.

    >>> a, p, n = clgrad.zeros(1, 2), clgrad.ones(1, 2), clgrad.full((1, 2), 2.0)
    >>> clgrad.nn.functional.triplet_margin_with_distance_loss(a, p, n)
    tensor(0.)
    """
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin > 0, got {margin}")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = _E.minimum(d_an, dist(positive, negative))
    return _reduce((margin + d_ap - d_an).clamp(min=0.0), reduction)


@autocast_op
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm ``pairwise_distance``,
    as ``torch.nn.functional.triplet_margin_loss``.

    >>> a, p, n = clgrad.zeros(1, 2), clgrad.ones(1, 2), clgrad.ones(1, 2)
    >>> clgrad.nn.functional.triplet_margin_loss(a, p, n)
    tensor(1.0000)
    """
    if not anchor.ndim == positive.ndim == negative.ndim:  # (any rank: distances on the last)
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, "
            f"and negative {negative.ndim}D inputs"
        )
    return triplet_margin_with_distance_loss(
        anchor,
        positive,
        negative,
        distance_function=lambda x, y: pairwise_distance(x, y, p, eps),
        margin=margin,
        swap=swap,
        reduction=_legacy_reduction(size_average, reduce, reduction),
    )


@autocast_op
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The Poisson negative log-likelihood, as ``torch.nn.functional.poisson_nll_loss``:
    ``exp(input) - target * input`` (``log_input``) or ``input - target * log(input + eps)``;
    ``full`` adds Stirling's approximation of ``log(target!)`` where ``target > 1``.

    >>> clgrad.nn.functional.poisson_nll_loss(clgrad.tensor([0.0, 1.0]), clgrad.tensor([1.0, 2.0]))
    tensor(0.8591)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + _E.where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target) ** 2 / var)``
    (plus ``0.5 * log(2 pi)`` with ``full``), ``var`` clamped at ``eps`` (the clamp passes the
    gradient through), as ``torch.nn.functional.gaussian_nll_loss``; ``var`` may lack the last
    dim or have size 1 there (one variance per sample).

    >>> x, t = clgrad.tensor([[1.0, 2.0]]), clgrad.tensor([[1.5, 2.0]])
    >>> clgrad.nn.functional.gaussian_nll_loss(x, t, clgrad.ones(1, 1))
    tensor(0.0625)
    """
    if not isinstance(var, Tensor):
        var = _tensor(float(var), dtype=input.dtype, device=input.device)
        if var.item() < 0:
            raise ValueError("var has negative entry/entries")
        var = var.expand(input.shape)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        # one variance for a whole dim (of size 1 there, any one dim: (4, 1, 32, 32) for
        # (4, 3, 32, 32)), as PyTorch's: the sizes where var differs add up to 1
        elif input.ndim != var.ndim or (
            sum(v for i, v in zip(input.shape, var.shape) if i != v) != 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any().item()):
        raise ValueError("var has negative entry/entries")
    # torch clamps a copy without recording it: the gradient passes the clamp unchanged
    var = var + (var.clamp(min=eps) - var).detach()
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---- more normalization and dropout ----------------------------------------------------------
@autocast_op
def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims,
    ``x / sqrt(mean(x ** 2) + eps) * weight`` (``eps`` by default the dtype's machine
    epsilon), as ``torch.nn.functional.rms_norm``.

    >>> clgrad.nn.functional.rms_norm(clgrad.tensor([[3.0, 4.0]]), (2,))
    tensor([[0.8485, 1.1314]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    # 16-bit floats are normalized in float32 and rounded back, as ATen's (their squares
    # overflow: a float16 row of values near 300 came out 0); the default eps is the
    # computing type's machine epsilon
    wide = input.float() if input.dtype.itemsize == 2 and input.dtype.is_floating_point else input
    if eps is None:
        eps = _D.finfo(wide.dtype).eps if wide.dtype.is_floating_point else 1e-7
    dims = tuple(range(input.ndim - k, input.ndim))
    y = wide * ((wide * wide).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:  # scaled before the rounding, and the result in the input's dtype
        y = y * weight  # (bfloat16 activations, a float32 weight: bfloat16), as ATen's
    return y.to(input.dtype)


def _feature_dropout(input, p, training, inplace):
    """ATen's feature_dropout: one draw per (dim 0, dim 1) pair."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _dropout(input, p, training, inplace, shape)


def _unbatched_feature_dropout(input, p, training, inplace):
    """feature_dropout of ``input`` with a batch dim of 1 (PyTorch unsqueezes and squeezes in
    place: an in-place call returns ``input`` itself)."""
    if not training or p == 0.0:
        return input
    out = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return input.copy_(out) if inplace else out


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of a ``(N, C, L)`` or ``(C, L)`` input, each with probability
    ``p``, scaling the others by ``1 / (1 - p)``, as ``torch.nn.functional.dropout1d``.

    >>> y = clgrad.nn.functional.dropout1d(clgrad.ones(2, 4, 3))
    >>> bool((y.amax(2) == y.amin(2)).all())
    True
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    if input.ndim == 3:
        return _feature_dropout(input, p, training, inplace)
    return _unbatched_feature_dropout(input, p, training, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input, each with
    probability ``p``, as ``torch.nn.functional.dropout3d``.

    >>> clgrad.nn.functional.dropout3d(clgrad.ones(1, 2, 2, 2, 2), training=False).shape
    clgrad.Size([1, 2, 2, 2, 2])
    """
    _check_p(p)
    n = input.ndim
    if n not in (4, 5):
        # as PyTorch still does: a warning, then the input taken as unbatched (dim 0 the
        # channels) unless it has 5 dims
        warnings.warn(
            f"dropout3d: Received a {n}-D input to dropout3d, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, "
            "please use dropout instead. Note that dropout3d exists to provide channel-wise "
            "dropout on inputs with 3 spatial dimensions, a channel dimension, and an optional "
            "batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if n == 5:
        return _feature_dropout(input, p, training, inplace)
    return _unbatched_feature_dropout(input, p, training, inplace)


_SELU_ALPHA = 1.7580993408473766  # SELU's scale * alpha: the value dropped units are set to


def _alpha_dropout(input, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        # keeps the SELU fixed point (mean 0, variance 1): dropped units go to -alpha', then
        # the affine map a * x + b restores the moments, as ATen's _dropout_impl
        dt = input.dtype if input.dtype in (_D.float32, _D.float64) else _D.float32
        keep = (_rand(mask_shape, dtype=dt, device=input.device) >= p).to(input.dtype)
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        b = (keep - 1.0) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        out = input * (keep * a) + b
    return input.copy_(out) if inplace else out


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks, as ``torch.nn.functional.alpha_dropout`` (``training``
    defaults to False): dropped elements take SELU's negative saturation value and an affine
    map keeps the mean and variance.

    >>> clgrad.nn.functional.alpha_dropout(clgrad.ones(3))
    tensor([1., 1., 1.])
    """
    return _alpha_dropout(input, p, training, inplace, input.shape)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels (dim 1) of a ``(N, C, *)`` input, as
    ``torch.nn.functional.feature_alpha_dropout``.

    >>> y = clgrad.nn.functional.feature_alpha_dropout(clgrad.ones(2, 3, 4), training=True)
    >>> bool((y.amax(2) == y.amin(2)).all())
    True
    """
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _alpha_dropout(input, p, training, inplace, shape)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample from the Gumbel-softmax distribution, ``softmax((logits + g) / tau)`` with
    Gumbel(0, 1) noise ``g``, as ``torch.nn.functional.gumbel_softmax``; ``hard`` returns the
    one-hot of the argmax with the soft sample's gradient (straight-through).

    >>> y = clgrad.nn.functional.gumbel_softmax(clgrad.zeros(2, 3), hard=True)
    >>> y.sum(-1).tolist()
    [1.0, 1.0]
    """
    dt = logits.dtype if logits.dtype in (_D.float32, _D.float64) else _D.float32
    u = _rand(tuple(logits.shape), dtype=dt, device=logits.device)
    gumbels = -(-(u.clamp(min=1e-20)).log()).clamp(min=1e-20).log()
    y = softmax((logits + gumbels.to(logits.dtype)) / tau, dim)
    if not hard:
        return y
    d = dim % logits.ndim
    classes = _arange(logits.shape[d], device=logits.device)
    classes = classes.reshape((-1,) + (1,) * (logits.ndim - d - 1))
    hot = (y.argmax(d, keepdim=True) == classes).to(y.dtype)
    return hot - y.detach() + y


# ---- spatial transformers --------------------------------------------------------------------
_ALIGN_CORNERS_DEFAULT = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _grid_coords(n, align_corners, device, dtype):
    """ATen's linspace_from_neg_one: linspace(-1, 1, n) in theta's dtype, scaled by (n - 1) / n
    (a multiply, then a divide) without align_corners. Rounded as ATen rounds it: the pixel
    centres' last bits decide on which side of a pixel an identity grid falls, and so
    grid_sample's gradient there."""
    if n <= 1:
        return _tensor([0.0] * n, dtype=dtype, device=device)
    pos = _linspace(-1, 1, n, dtype=dtype, device=device)
    return pos if align_corners else pos * (n - 1) / n


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (``(N, 2, 3)`` for a 2-d ``size``
    ``(N, C, H, W)``, ``(N, 3, 4)`` for ``(N, C, D, H, W)``), in normalized [-1, 1]
    coordinates (x first), as ``torch.nn.functional.affine_grid``.

    >>> theta = clgrad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> clgrad.nn.functional.affine_grid(theta, (1, 1, 1, 2), align_corners=True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
    align_corners = bool(align_corners)
    size = tuple(size)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {list(theta.shape)}."
            )
        spatial = size[2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[1:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                f"Got {list(theta.shape)}."
            )
        spatial = size[2:]
    else:
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    k = len(spatial)
    axes = [_grid_coords(s, align_corners, theta.device, theta.dtype) for s in spatial]
    # base[..., 0] is x (the last dim), then y (and z), then 1
    parts = []
    for j in range(k):
        ax = k - 1 - j
        shape = [1] * k
        shape[ax] = spatial[ax]
        parts.append(axes[ax].reshape(shape).expand(spatial))
    ones_ = _tensor(1.0, dtype=theta.dtype, device=theta.device).expand(spatial)
    base = _stack(parts + [ones_], -1).reshape(1, -1, k + 1)
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape((size[0],) + tuple(spatial) + (k,))


def _reflect(x, lo2, hi2):
    """ATen's reflect_coordinates: reflects ``x`` into [lo2 / 2, hi2 / 2]."""
    if lo2 == hi2:
        return x * 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = (x - lo).abs()
    flips = (x / span).floor()
    extra = x - flips * span
    return _E.where(flips.remainder(2) == 0, extra + lo, span - extra + lo)


def _pad_coordinate(x, size, padding_mode, align_corners):
    """ATen's compute_coordinates: a pixel coordinate clipped or reflected into the image by
    the padding mode ("zeros" leaves it, its samples outside being 0)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    # ATen's clip_coordinates_set_grad: a coordinate on the border counts as outside, its
    # gradient 0 (clamp's passes it; an identity grid with align_corners puts points there)
    inside = (x > 0) & (x < size - 1)
    return _E.where(inside, x, x.detach().clamp(0, size - 1))


def _source_index(coord, size, padding_mode, align_corners):
    """Normalized grid coordinates to pixel coordinates, with the padding mode's clipping."""
    if align_corners:
        x = (coord + 1) / 2 * (size - 1)
    else:
        x = ((coord + 1) * size - 1) / 2
    return _pad_coordinate(x, size, padding_mode, align_corners)


def _cubic_weights(t):
    """ATen's get_cubic_upsample_coefficients (A = -0.75): the weights of the taps at -1, 0,
    1 and 2 from a fractional position ``t``."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _check_grid_sample(input, grid, mode):
    # ATen's check_grid_sampler_common, then its 2-d / 3-d checks, in their order
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, "
            f"but got grid with sizes {list(grid.shape)}"
        )
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty"
            )
    rank = 4 if input.ndim == 4 else 5
    if input.ndim != rank or grid.ndim != rank:
        raise RuntimeError(
            f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, "
            f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if rank == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.dtype is not input.dtype:  # (the kernel's dispatch: one scalar type for both)
        raise RuntimeError(
            f"expected scalar type {_SCALAR_TYPE_NAMES[input.dtype.name]} but found "
            f"{_SCALAR_TYPE_NAMES[grid.dtype.name]}"
        )


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Samples ``input`` at the normalized locations of ``grid``, as
    ``torch.nn.functional.grid_sample``: a 4-d ``input`` ``(N, C, H, W)`` at the (x, y) of a
    grid ``(N, H_out, W_out, 2)``, a 5-d one ``(N, C, D, H, W)`` at the (x, y, z) of a grid
    ``(N, D_out, H_out, W_out, 3)``. ``mode`` "bilinear" (trilinear in 5-d), "nearest" or
    "bicubic" (4-d), ``padding_mode`` "zeros", "border" or "reflection". Gradients reach both
    ``input`` and ``grid`` (nearest's grid gradient is zeros).

    >>> img = clgrad.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = clgrad.tensor([[[[0.0, 0.0], [-1.0, -1.0]]]])
    >>> clgrad.nn.functional.grid_sample(img, grid, align_corners=True)
    tensor([[[[1.5000, 0.0000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
    align_corners = bool(align_corners)
    _check_grid_sample(input, grid, mode)
    kernel = "grid_sampler_3d_cpu" if input.ndim == 5 else "grid_sampler_2d_cpu_kernel_impl"
    _kernel_takes(kernel, input, _floating)
    n, c, *spatial = input.shape
    k = len(spatial)
    points = grid.shape[1:-1]
    count = math.prod(points)
    flat = input.reshape(n, c, math.prod(spatial))
    # bicubic pads each tap's coordinate (ATen's get_value_bounded), the others the point's
    pad = "zeros" if mode == "bicubic" else padding_mode
    # the pixel coordinate along each spatial dim (D, H, W): grid's last component is x (W)
    pos = [
        _source_index(grid[..., k - 1 - d], spatial[d], pad, align_corners).reshape(n, 1, count)
        for d in range(k)
    ]

    def tap(at):
        # the pixels at integer coordinates ``at`` (one per spatial dim), 0 outside the image
        inside, idx = None, None
        for x, size in zip(at, spatial):
            if mode == "bicubic":
                x = _pad_coordinate(x, size, padding_mode, align_corners)
            ok = (x >= 0) & (x <= size - 1)
            inside = ok if inside is None else inside & ok
            x = x.clamp(0, size - 1)
            idx = x if idx is None else idx * size + x
        vals = flat.gather(2, idx.to(_D.int64).expand(n, c, count))
        return _E.where(inside, vals, 0.0)

    if mode == "nearest":
        near = [x.round() for x in pos]  # round half to even, as ATen's nearbyint
        # ATen's sampler is one op whose grid gradient is zeros in this mode: the grid stays in
        # the graph through round's zero gradient (autograd.grad of it is zeros, not unused)
        everywhere = _tensor(True, device=input.device)
        out = _E.where(everywhere, tap(near), near[0])
    else:
        base = [x.floor() for x in pos]
        frac = [x - b for x, b in zip(pos, base)]
        if mode == "bicubic":
            weights = [_cubic_weights(f) for f in frac]
            offsets = range(-1, 3)
        else:
            weights = [(1 - f, f) for f in frac]
            offsets = range(2)
        out = 0.0
        for corner in itertools.product(range(len(offsets)), repeat=k):
            wt = weights[0][corner[0]]
            for d in range(1, k):
                wt = wt * weights[d][corner[d]]
            at = [b + offsets[j] for b, j in zip(base, corner)]
            out = out + tap(at) * wt
    return out.reshape(n, c, *points)


# ---- embedding_bag ---------------------------------------------------------------------------
def _check_bag_offsets(starts, total: int) -> None:
    """PyTorch's checks of embedding_bag's offsets (read to the host already): the first bag
    starts at 0, none past the input, and they do not go back."""
    if starts.size and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {starts[0]}"
        )
    if starts.size and starts[-1] > total:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {total} but got offsets[-1] "
            f"of {starts[-1]}"
        )
    if starts.size > 1 and (np.diff(starts) < 0).any():
        raise RuntimeError("Expected i < index_size to be true, but got false.")


@autocast_op
def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of embeddings, as
    ``torch.nn.functional.embedding_bag``: a 2-d ``input`` ``(B, L)`` is B bags of L indices;
    a 1-d one is split into bags at ``offsets``. ``per_sample_weights`` scales each looked-up
    row ("sum" only); ``padding_idx`` entries are left out; an empty bag gives zeros; with
    ``sparse`` ("sum" and "mean") the weight's gradient is sparse, as ``embedding``'s.

    >>> table = clgrad.arange(6.0).reshape(3, 2)
    >>> F = clgrad.nn.functional
    >>> F.embedding_bag(clgrad.tensor([0, 2, 1]), table, clgrad.tensor([0, 2]), mode="sum")
    tensor([[4., 6.],
            [2., 3.]])
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                "of fixed length sequences."
            )
        b, length = input.shape
        starts = np.arange(b, dtype=np.int64) * length
        total = b * length
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        # the bag boundaries are host ints: they decide the shapes of the result
        starts = offsets.detach().cpu().numpy().astype(np.int64)
        total = input.shape[0]
        _check_bag_offsets(starts, total)
        if include_last_offset:
            starts = starts[:-1]
        flat = input
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    bags = len(starts)
    ends = np.append(starts[1:], total)
    bag_of = np.full(total, -1, dtype=np.int64)
    for i, (s, e) in enumerate(zip(starts, ends)):
        bag_of[s:e] = i
    # scale_grad_by_freq divides each looked-up row's gradient by its index's count in the whole
    # input, as the lookup of embedding() does (ATen's embedding_bag backward counts the same way)
    # a sparse gradient leaves out the padding_idx lookups, as torch's (a dense one gets zeros
    # there from the bags' sums)
    rows = embedding(
        flat, weight, padding_idx if sparse else None, max_norm, norm_type, scale_grad_by_freq,
        sparse,
    )  # fmt: skip
    member = bag_of[None, :] == np.arange(bags)[:, None]
    if padding_idx is not None:
        pad = padding_idx % weight.shape[0]
        member &= flat.detach().cpu().numpy()[None, :] != pad
    m = _tensor(member, device=weight.device)
    if mode == "max":
        picked = _E.where(m.unsqueeze(2), rows.unsqueeze(0), -math.inf).amax(1)
        return _E.where(m.any(1, keepdim=True), picked, 0.0)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1).to(rows.dtype)
    mf = m.to(weight.dtype)
    out = mf.matmul(rows)
    if mode == "mean":
        out = out / mf.sum(1, keepdim=True).clamp(min=1.0)
    return out


def _with_indices(pool):
    name = f"{pool.__name__}_with_indices"
    dims = ", ".join(["2"] * int(pool.__name__[-2]))

    def fn(*args, **kwargs):
        kwargs["return_indices"] = True
        return pool(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""``{pool.__name__}(..., return_indices=True)``: the values and the indices,
    like ``torch.nn.functional.{name}``.

    >>> values, indices = clgrad.nn.functional.{name}(clgrad.ones(1, 1, {dims}), 2)
    >>> indices.dtype
    clgrad.int64
    """
    return fn


# torch's names for the pooling functions' return_indices=True forms
max_pool1d_with_indices = _with_indices(max_pool1d)
max_pool2d_with_indices = _with_indices(max_pool2d)
max_pool3d_with_indices = _with_indices(max_pool3d)
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d)
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d)
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d)
__all__ += [
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "pdist",
]


def _canonical_mask(mask, name, dtype):
    """torch's canonical attention mask: a bool mask becomes 0 / -inf (True: masked out), a
    float one is added as it is."""
    if mask is None:
        return None
    if mask.dtype is _D.bool_:
        zero = mask.new_zeros(tuple(mask.shape), dtype=dtype)
        return zero.masked_fill(mask, -math.inf)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of ``query`` ``(L, N, E)`` over ``key`` / ``value`` ``(S, N, .)``
    (unbatched ``(L, E)`` too) with the given projections, as
    ``torch.nn.functional.multi_head_attention_forward`` (what ``nn.MultiheadAttention``
    runs): ``(output, weights)``, the weights averaged over the heads unless
    ``average_attn_weights=False``, None without ``need_weights``.

    >>> w, b = clgrad.ones(12, 4) * 0.1, clgrad.zeros(12)
    >>> out, weights = clgrad.nn.functional.multi_head_attention_forward(
    ...     clgrad.ones(3, 2, 4), clgrad.ones(5, 2, 4), clgrad.ones(5, 2, 4), 4, 2, w, b,
    ...     None, None, False, 0.0, clgrad.eye(4), None)
    >>> out.shape, weights.shape
    (clgrad.Size([3, 2, 4]), clgrad.Size([2, 3, 5]))
    """
    if query.ndim not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.ndim}-D query tensor"
        )
    batched = query.ndim == 3
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(
            f"For {'batched' if batched else 'unbatched'} ({query.ndim}-D) `query`, expected "
            f"`key` and `value` to be {query.ndim}-D but found {key.ndim}-D and {value.ndim}-D "
            "tensors respectively"
        )
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    n_q, n, e = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # torch takes the hint instead of the mask here: a causal (top-left) mask
        causal = query.new_ones((n_q, key.shape[0]), dtype=_D.bool_).triu(1)
        attn_mask = _canonical_mask(causal, "attn_mask", query.dtype)
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
    if e != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {e}"
        )
    h = num_heads
    hd = e // h
    if hd * h != e:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {h}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        wq, wk, wv = in_proj_weight.chunk(3)
    bq, bk, bv = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    n_k = key.shape[0]
    mask = attn_mask
    if mask is not None:
        if mask.ndim == 2:
            if tuple(mask.shape) != (n_q, n_k):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {mask.shape}, but should be {(n_q, n_k)}."
                )
            mask = mask.unsqueeze(0)
        elif mask.ndim == 3:
            if tuple(mask.shape) != (n * h, n_q, n_k):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {mask.shape}, but should be "
                    f"{(n * h, n_q, n_k)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {mask.ndim} is not supported")
    pad_mask = key_padding_mask
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _cat([k, bias_k.expand(1, n, e)])
        v = _cat([v, bias_v.expand(1, n, e)])
        mask = pad(mask, (0, 1)) if mask is not None else None
        pad_mask = pad(pad_mask, (0, 1)) if pad_mask is not None else None
    elif bias_k is not None or bias_v is not None:
        given, missing = ("bias_k", "bias_v") if bias_k is not None else ("bias_v", "bias_k")
        raise AssertionError(f"{given} is set but {missing} is None")
    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(n_q, n * h, hd).transpose(0, 1)
    for name, static in (("k", static_k), ("v", static_v)):
        if static is not None and (static.shape[0] != n * h or static.shape[2] != hd):
            dim, want = (0, n * h) if static.shape[0] != n * h else (2, hd)
            raise AssertionError(
                f"expecting static_{name}.size({dim}) of {want}, but got {static.shape[dim]}"
            )
    k = k.reshape(k.shape[0], n * h, hd).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], n * h, hd).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = _cat([k, k.new_zeros((n * h, 1, hd))], 1)
        v = _cat([v, v.new_zeros((n * h, 1, hd))], 1)
        mask = pad(mask, (0, 1)) if mask is not None else None
        pad_mask = pad(pad_mask, (0, 1)) if pad_mask is not None else None
    n_k = k.shape[1]
    if pad_mask is not None:
        if tuple(pad_mask.shape) != (n, n_k):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(n, n_k)}, but got {pad_mask.shape}"
            )
        pad_mask = pad_mask.reshape(n, 1, 1, n_k).expand(n, h, 1, n_k).reshape(n * h, 1, n_k)
        mask = pad_mask if mask is None else mask + pad_mask
    scores = (q * (1.0 / math.sqrt(hd))) @ k.mT
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p)
    out = (weights @ v).transpose(0, 1).reshape(n_q * n, e)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(n_q, n, out_proj_weight.shape[0])
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(n, h, n_q, n_k)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, (weights if batched else weights.squeeze(0))


__all__ += ["multi_head_attention_forward"]
