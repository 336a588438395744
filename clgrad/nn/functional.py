"""clgrad.nn.functional: activations, layers and losses as functions, as in torch.nn.functional.

Every function is differentiable: most compose Tensor ops; convolution and pooling go through
the sliding-window view of ``clgrad.ops.nn_ops`` (im2col: one strided copy and one matmul).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from .. import dtypes as _D
from ..autograd.grad_mode import no_grad
from ..ops import elementwise as _E
from ..ops import nn_ops as _N
from ..ops import reduction as _R
from ..ops.creation import arange as _arange
from ..ops.creation import rand as _rand
from ..ops.creation import tensor as _tensor
from ..tensor import Tensor

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
    "softmax",
    "softmin",
    "log_softmax",
    "dropout",
    "dropout2d",
    "linear",
    "bilinear",
    "conv1d",
    "conv2d",
    "unfold",
    "fold",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "layer_norm",
    "batch_norm",
    "group_norm",
    "embedding",
    "one_hot",
    "pad",
    "normalize",
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
]


# ---- activations -----------------------------------------------------------------------------
def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """Applies the rectified linear unit ``max(0, x)`` element-wise (in place with ``inplace``),
    as ``torch.nn.functional.relu``.

    >>> import clgrad.nn.functional as F
    >>> F.relu(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0., 0., 3.])
    """
    return x.relu_() if inplace else _E.relu(x)


def relu_(x: Tensor) -> Tensor:
    """In-place ``relu``: replaces ``x`` by ``max(0, x)`` and returns it, as
    ``torch.nn.functional.relu_``.

    >>> x = clgrad.tensor([-2.0, 3.0])
    >>> _ = clgrad.nn.functional.relu_(x)
    >>> x
    tensor([0., 3.])
    """
    return x.relu_()


def relu6(x: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``min(max(0, x), 6)`` element-wise, as ``torch.nn.functional.relu6``.

    >>> clgrad.nn.functional.relu6(clgrad.tensor([-2.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(x, 0.0, 6.0, inplace)


def hardtanh(
    x: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """Clamps ``x`` element-wise into ``[min_val, max_val]``, as ``torch.nn.functional.hardtanh``.

    >>> clgrad.nn.functional.hardtanh(clgrad.tensor([-2.0, 0.5, 3.0]))
    tensor([-1.0000, 0.5000, 1.0000])
    """
    return x.clamp_(min_val, max_val) if inplace else x.clamp(min_val, max_val)


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """Applies ``x`` where ``x > 0`` and ``negative_slope * x`` elsewhere, element-wise, as
    ``torch.nn.functional.leaky_relu``.

    >>> clgrad.nn.functional.leaky_relu(clgrad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000, 3.0000])
    """
    out = _E.where(x > 0, x, x * negative_slope)
    return x.copy_(out) if inplace else out


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Applies the exponential linear unit, ``x`` where ``x > 0`` and ``alpha * (exp(x) - 1)``
    elsewhere, element-wise, as ``torch.nn.functional.elu``.

    >>> clgrad.nn.functional.elu(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.8647, 3.0000])
    """
    out = _E.where(x > 0, x, (x.clamp(max=0.0).expm1()) * alpha)
    return x.copy_(out) if inplace else out


def gelu(x: Tensor, approximate: Literal["none", "tanh"] = "none") -> Tensor:
    """Applies the Gaussian error linear unit ``x * Phi(x)`` element-wise (``Phi`` the standard
    normal CDF; ``approximate="tanh"`` uses the tanh approximation), as
    ``torch.nn.functional.gelu``.

    >>> clgrad.nn.functional.gelu(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.0455, 0.0000, 2.9960])
    """
    return _E.gelu(x, approximate=approximate)


def silu(x: Tensor, inplace: bool = False) -> Tensor:
    """Applies the sigmoid linear unit (swish) ``x * sigmoid(x)`` element-wise, as
    ``torch.nn.functional.silu`` (``inplace`` is accepted but the result is a new tensor).

    >>> clgrad.nn.functional.silu(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.2384, 0.0000, 2.8577])
    """
    return _E.silu(x)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """Applies ``log(1 + exp(beta * x)) / beta`` element-wise, and ``x`` itself where
    ``beta * x > threshold``, as ``torch.nn.functional.softplus``.

    >>> clgrad.nn.functional.softplus(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1269, 0.6931, 3.0486])
    """
    return _E.softplus(x, beta=beta, threshold=threshold)


def sigmoid(x: Tensor) -> Tensor:
    """Applies the logistic sigmoid ``1 / (1 + exp(-x))`` element-wise, as
    ``torch.nn.functional.sigmoid``.

    >>> clgrad.nn.functional.sigmoid(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1192, 0.5000, 0.9526])
    """
    return _E.sigmoid(x)


def tanh(x: Tensor) -> Tensor:
    """Applies the hyperbolic tangent element-wise, as ``torch.nn.functional.tanh``.

    >>> clgrad.nn.functional.tanh(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.9640, 0.0000, 0.9951])
    """
    return _E.tanh(x)


def logsigmoid(x: Tensor) -> Tensor:
    """Applies ``log(sigmoid(x))`` element-wise, computed stably as ``-softplus(-x)``, as
    ``torch.nn.functional.logsigmoid``.

    >>> clgrad.nn.functional.logsigmoid(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-2.1269, -0.6931, -0.0486])
    """
    return -_E.softplus(-x)


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


def softmax(x: Tensor, dim: int | None = None, dtype: DType | None = None) -> Tensor:
    """Applies ``exp(x) / sum(exp(x))`` along ``dim``, so that the values along it are in [0, 1]
    and sum to 1, as ``torch.nn.functional.softmax``; ``dtype`` casts the input first, and
    ``dim=None`` picks PyTorch's legacy implicit dim with its deprecation warning.

    >>> clgrad.nn.functional.softmax(clgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.0900, 0.2447, 0.6652])
    """
    return _R.softmax(x, _softmax_dim("softmax", x.ndim, dim), dtype)


def softmin(x: Tensor, dim: int | None = None, dtype: DType | None = None) -> Tensor:
    """Applies ``softmax(-x)`` along ``dim``, as ``torch.nn.functional.softmin``.

    >>> clgrad.nn.functional.softmin(clgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.6652, 0.2447, 0.0900])
    """
    return _R.softmax(-x, _softmax_dim("softmin", x.ndim, dim), dtype)


def log_softmax(x: Tensor, dim: int | None = None, dtype: DType | None = None) -> Tensor:
    """Applies ``log(softmax(x))`` along ``dim``, computed stably, as
    ``torch.nn.functional.log_softmax``.

    >>> clgrad.nn.functional.log_softmax(clgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    return _R.log_softmax(x, _softmax_dim("log_softmax", x.ndim, dim), dtype)


# ---- dropout ---------------------------------------------------------------------------------
def _check_p(p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(x, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0.0:
        return x
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
    """When ``training``, zeroes whole channels of a ``(N, C, H, W)`` or ``(C, H, W)`` input, each
    with probability ``p``, and scales the others by ``1 / (1 - p)``, as
    ``torch.nn.functional.dropout2d``.

    >>> _ = clgrad.manual_seed(0)
    >>> y = clgrad.nn.functional.dropout2d(clgrad.ones(1, 4, 2, 2))
    >>> y.shape, bool((y.amax((2, 3)) == y.amin((2, 3))).all())
    (clgrad.Size([1, 4, 2, 2]), True)
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"dropout2d: expected a 3-D or 4-D input, got {input.ndim}-D")
    shape = tuple(input.shape[: input.ndim - 2]) + (1, 1)
    return _dropout(input, p, training, inplace, shape)


# ---- linear ----------------------------------------------------------------------------------
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
        out = input.reshape(-1, input.shape[-1]) @ weight.mT
        out = out.reshape(lead + (weight.shape[0],))
    else:
        out = input @ weight.mT if weight.ndim == 2 else input @ weight
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
    y = ((input1.unsqueeze(-2).unsqueeze(-2) @ weight).squeeze(-2) * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


# ---- convolution -----------------------------------------------------------------------------
def _pair(v, name="value"):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]), int(v[0]))
        if len(v) != 2:
            raise ValueError(f"{name} must be an int or a pair of ints, got {v}")
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _conv_pads(padding, kernel, stride, dilation):
    """((top, bottom), (left, right)) from an int, a pair, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise ValueError(f"Invalid padding string {padding!r}, should be one of 'valid', 'same'")
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return ((ph, ph), (pw, pw))


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
    the windows of the padded input are copied once into a ``(C*kh*kw, N*OH*OW)`` matrix that
    is multiplied by the ``(C_out, C*kh*kw)`` weight.

    >>> x = clgrad.arange(16.0).reshape(1, 1, 4, 4)
    >>> clgrad.nn.functional.conv2d(x, clgrad.ones(1, 1, 2, 2), stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]])
    >>> clgrad.nn.functional.conv2d(x, clgrad.ones(1, 1, 3, 3), padding=1).shape
    clgrad.Size([1, 1, 4, 4])
    """
    unbatched = input.ndim == 3
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(input.shape)}"
        )
    x = input.unsqueeze(0) if unbatched else input
    if weight.ndim != 4:
        raise RuntimeError(
            f"conv2d: expected a 4-D weight (out, in/groups, kh, kw), got {list(weight.shape)}"
        )
    if x.dtype is not weight.dtype:
        raise RuntimeError(
            f"Input type ({x.dtype.name}) and weight type ({weight.dtype.name}) should be the same"
        )
    out_c, cg, kh, kw = weight.shape
    n, c = x.shape[0], x.shape[1]
    if groups < 1 or out_c % groups:
        raise RuntimeError(f"conv2d: out_channels ({out_c}) must be divisible by groups ({groups})")
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise RuntimeError("conv2d: stride and dilation must be positive")
    pads = _conv_pads(padding, (kh, kw), stride, dilation)
    x = _N.pad_constant(x, ((0, 0), (0, 0)) + pads)
    h, w = x.shape[2], x.shape[3]
    if h < dilation[0] * (kh - 1) + 1 or w < dilation[1] * (kw - 1) + 1:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h} x {w}). Kernel size: "
            f"({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}). Kernel size can't be "
            "greater than actual input size"
        )
    win = _N.Patches.apply(x, (kh, kw), stride, dilation)  # (N, C, OH, OW, kh, kw), a view
    oh, ow = win.shape[2], win.shape[3]
    k = cg * kh * kw
    if groups == 1:
        cols = win.permute(1, 4, 5, 0, 2, 3).reshape(k, n * oh * ow)
        out = weight.reshape(out_c, k) @ cols  # (O, N*OH*OW)
    else:
        cols = win.permute(1, 4, 5, 0, 2, 3).reshape(groups, k, n * oh * ow)
        out = weight.reshape(groups, out_c // groups, k) @ cols
    out = out.reshape(out_c, n, oh, ow).permute(1, 0, 2, 3)
    out = out + bias.reshape(1, out_c, 1, 1) if bias is not None else out.contiguous()
    return out.squeeze(0) if unbatched else out


def _as_2d_with_unit_height(v) -> tuple[int, int]:
    """A 1-d stride or dilation as the 2-d one conv2d takes over an (N, C, 1, L) input."""
    return (1, int(v[0] if isinstance(v, (tuple, list)) else v))


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
    with a ``(C_out, C_in / groups, k)`` weight, as ``torch.nn.functional.conv1d`` (computed as
    a conv2d over a height of 1).

    >>> x = clgrad.arange(5.0).reshape(1, 1, 5)
    >>> clgrad.nn.functional.conv1d(x, clgrad.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1., -1.]]])
    """
    if isinstance(padding, str):
        pad2 = padding
    else:
        pad2 = (0, int(padding[0] if isinstance(padding, (tuple, list)) else padding))
    out = conv2d(
        input.unsqueeze(-2),
        weight.unsqueeze(-2),
        bias,
        _as_2d_with_unit_height(stride),
        pad2,
        _as_2d_with_unit_height(dilation),
        groups,
    )
    return out.squeeze(-2)


def unfold(
    input: Tensor,
    kernel_size: _Int2,
    dilation: _Int2 = 1,
    padding: _Int2 = 0,
    stride: _Int2 = 1,
) -> Tensor:
    """Extracts the sliding ``kernel_size`` blocks of a ``(N, C, H, W)`` input into a
    ``(N, C * kh * kw, L)`` tensor (one column per block position), as
    ``torch.nn.functional.unfold``.

    >>> clgrad.nn.functional.unfold(clgrad.ones(1, 2, 4, 4), kernel_size=2).shape
    clgrad.Size([1, 8, 9])
    """
    if input.ndim != 4:
        raise NotImplementedError(
            f"Input Error: Only 4D input Tensors are supported (got {input.ndim}D)"
        )
    kh, kw = _pair(kernel_size)
    ph, pw = _pair(padding)
    x = _N.pad_constant(input, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = _N.Patches.apply(x, (kh, kw), _pair(stride), _pair(dilation))
    n, c, oh, ow = win.shape[:4]
    return win.permute(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)


def fold(
    input: Tensor,
    output_size: _Int2,
    kernel_size: _Int2,
    dilation: _Int2 = 1,
    padding: _Int2 = 0,
    stride: _Int2 = 1,
) -> Tensor:
    """Sums ``(N, C * kh * kw, L)`` sliding blocks back into a ``(N, C, H, W)`` tensor of spatial
    size ``output_size`` (overlapping values add up): the adjoint of ``unfold``, as
    ``torch.nn.functional.fold``.

    >>> import clgrad.nn.functional as F
    >>> F.fold(F.unfold(clgrad.ones(1, 1, 3, 3), 2), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    (h, w), (kh, kw), (ph, pw) = _pair(output_size), _pair(kernel_size), _pair(padding)
    stride, dilation = _pair(stride), _pair(dilation)
    n, ck, length = input.shape
    c = ck // (kh * kw)
    oh = _N.out_size(h + 2 * ph, kh, stride[0], dilation[0])
    ow = _N.out_size(w + 2 * pw, kw, stride[1], dilation[1])
    if c * kh * kw != ck or oh * ow != length:
        raise RuntimeError(
            f"fold: expected an input of shape (N, C*{kh * kw}, {oh * ow}), got {list(input.shape)}"
        )
    g = input.reshape(n, c, kh, kw, oh, ow).permute(0, 1, 4, 5, 2, 3)
    out = _N.Fold.apply(g, (n, c, h + 2 * ph, w + 2 * pw), (kh, kw), stride, dilation)
    return _N.pad_constant(out, ((0, 0), (0, 0), (-ph, -ph), (-pw, -pw)))


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


def _pool_args(name, input, kernel_size, stride, padding, dilation):
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"{name}: Expected 3D or 4D (batch mode) tensor for input, got {list(input.shape)}"
        )
    k = _pair(kernel_size, "kernel_size")
    s = (
        k
        if stride is None or (isinstance(stride, (tuple, list)) and not stride)
        else _pair(stride, "stride")
    )
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
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
    k, s, p, d = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    h, w = x.shape[2], x.shape[3]
    oh, eh = _pool_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow, ew = _pool_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    xp = _N.pad_constant(
        x, ((0, 0), (0, 0), (p[0], p[0] + eh), (p[1], p[1] + ew)), _lowest(x.dtype)
    )
    win = _N.Patches.apply(xp, k, s, d)
    n, c = win.shape[:2]
    values, idx = _N.MaxLast.apply(win.reshape(n, c, oh, ow, k[0] * k[1]))
    if input.ndim == 3:
        values, idx = values.squeeze(0), idx.squeeze(0)
    if not return_indices:
        return values
    # the flat index into the (unpadded) H*W plane of each chosen element
    rows = _arange(oh, device=x.device).reshape(oh, 1) * s[0] + (idx // k[1]) * d[0] - p[0]
    cols = _arange(ow, device=x.device) * s[1] + (idx % k[1]) * d[1] - p[1]
    return values, rows * w + cols


def _avg_divisor(n, k, s, p, out, count_include_pad):
    """How many elements each window of one dim averages (PyTorch's rule)."""
    lo, hi = (-p, n + p) if count_include_pad else (0, n)
    starts = np.arange(out) * s - p
    return np.minimum(starts + k, hi) - np.maximum(starts, lo)


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
    k, s, p, _ = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    h, w = x.shape[2], x.shape[3]
    oh, eh = _pool_size(h, k[0], s[0], p[0], 1, ceil_mode)
    ow, ew = _pool_size(w, k[1], s[1], p[1], 1, ceil_mode)
    xp = _N.pad_constant(x, ((0, 0), (0, 0), (p[0], p[0] + eh), (p[1], p[1] + ew)))
    total = _N.Patches.apply(xp, k, s, (1, 1)).sum((-2, -1))
    if divisor_override:
        out = total / divisor_override
    else:
        dh = _avg_divisor(h, k[0], s[0], p[0], oh, count_include_pad)
        dw = _avg_divisor(w, k[1], s[1], p[1], ow, count_include_pad)
        if (dh == k[0]).all() and (dw == k[1]).all():
            out = total / (k[0] * k[1])
        else:
            div = _tensor(np.outer(dh, dw), dtype=x.dtype, device=x.device)
            out = total / div
    return out.squeeze(0) if input.ndim == 3 else out


def _adaptive_matrix(n, m, dt, device):
    """(m, n) matrix of adaptive pooling: row i averages [floor(i n / m), ceil((i + 1) n / m))."""
    a = np.zeros((m, n))
    for i in range(m):
        lo, hi = (i * n) // m, -(-((i + 1) * n) // m)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return _tensor(a, dtype=dt, device=device)


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
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d: Expected 3D or 4D tensor, but got {list(input.shape)}"
        )
    h, w = input.shape[-2], input.shape[-1]
    if isinstance(output_size, (tuple, list)):
        oh, ow = (
            h if output_size[0] is None else output_size[0],
            w if output_size[1] is None else output_size[1],
        )
    else:
        oh = ow = int(output_size)
    if (oh, ow) == (1, 1):
        return input.mean((-2, -1), keepdim=True)
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    ph = _adaptive_matrix(h, oh, input.dtype, input.device)
    pw = _adaptive_matrix(w, ow, input.dtype, input.device)
    return ph @ input @ pw.mT


# ---- normalization ---------------------------------------------------------------------------
def _normalize(x, dims, eps):
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * (var + eps).rsqrt(), mean, var


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
    y, _, _ = _normalize(input, tuple(range(input.ndim - k, input.ndim)), eps)
    if weight is not None:
        y = y * weight
    return y + bias if bias is not None else y


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
    if training:
        n = input.numel() // c
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{input.shape}"
            )
        dims = (0,) + tuple(range(2, input.ndim))
        y, mean, var = _normalize(input, dims, eps)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.reshape(c) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(var.reshape(c) * (momentum * n / (n - 1)))
        if weight is not None:
            y = y * weight.reshape(bshape)
        return y + bias.reshape(bshape) if bias is not None else y
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
    return input * scale.reshape(bshape) + shift.reshape(bshape)


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
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {input.shape} and num_groups={num_groups}"
        )
    y, _, _ = _normalize(input.reshape(n, num_groups, -1), (2,), eps)
    y = y.reshape(input.shape)
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(bshape)
    return y + bias.reshape(bshape) if bias is not None else y


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """Divides ``input`` by its ``p``-norm along ``dim`` (at least ``eps``), so that the slices
    along ``dim`` have unit norm, as ``torch.nn.functional.normalize``.

    >>> clgrad.nn.functional.normalize(clgrad.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if p == 2:
        norm = (input * input).sum(dim, keepdim=True).sqrt()
    elif p == 1:
        norm = input.abs().sum(dim, keepdim=True)
    elif p == 0:  # the count of nonzero elements, as torch.linalg.vector_norm
        norm = (input != 0).sum(dim, keepdim=True).to(input.dtype)
    elif p == float("inf"):
        norm = input.abs().amax(dim, keepdim=True)
    elif p == float("-inf"):
        norm = input.abs().amin(dim, keepdim=True)
    else:
        norm = (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p)
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
    ``weight`` in place. ``sparse`` and ``scale_grad_by_freq`` are not supported.

    >>> table = clgrad.arange(6.0).reshape(3, 2)
    >>> clgrad.nn.functional.embedding(clgrad.tensor([2, 0]), table)
    tensor([[4., 5.],
            [0., 1.]])
    """
    if sparse or scale_grad_by_freq:
        raise NotImplementedError(
            "embedding: sparse gradients and scale_grad_by_freq are not supported"
        )
    if not isinstance(input, Tensor):
        input = _tensor(input, dtype=_D.int64, device=weight.device)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= num
    _N.check_index_range(input, num)
    if input.dtype is not _D.int64:
        input = input.to(_D.int64)
    if max_norm is not None:
        with no_grad():
            hit = (_arange(num, device=weight.device) == input.reshape(-1, 1)).any(0)
            norm = (weight.abs() ** norm_type).sum(1) ** (1.0 / norm_type)
            scale = _E.where(hit & (norm > max_norm), max_norm / (norm + 1e-7), 1.0)
            weight.mul_(scale.unsqueeze(1).to(weight.dtype))
    return _N.EmbeddingFn.apply(weight, input, padding_idx)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """One-hot encodes an int64 tensor of class indices into an int64 tensor with a new last dim
    of size ``num_classes`` (by default, the largest index plus one), as
    ``torch.nn.functional.one_hot``.

    >>> clgrad.nn.functional.one_hot(clgrad.tensor([0, 2, 1]))
    tensor([[1, 0, 0],
            [0, 0, 1],
            [0, 1, 0]])
    """
    if tensor.dtype is not _D.int64:
        raise RuntimeError(
            f"one_hot is only applicable to index tensor of type LongTensor (int64), got "
            f"{tensor.dtype.name}"
        )
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
    return x.index_select(dim, _tensor(pos, dtype=_D.int64, device=x.device))


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
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise NotImplementedError("negative padding is only supported in constant mode")
    out = input
    for dim, (lo, hi) in enumerate(pairs):
        if lo or hi:
            out = _index_pad(out, dim, lo, hi, mode)
    return out


# ---- losses ----------------------------------------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_broadcast(input, target):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def mse_loss(input: Tensor, target: Tensor, reduction: _Reduction = "mean") -> Tensor:
    """The squared error ``(input - target) ** 2`` element-wise, reduced by ``reduction`` ("mean",
    "sum" or "none"), as ``torch.nn.functional.mse_loss`` (differing shapes broadcast, with
    PyTorch's warning).

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.mse_loss(a, b)
    tensor(1.4167)
    """
    _warn_broadcast(input, target)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: _Reduction = "mean") -> Tensor:
    """The absolute error ``|input - target|`` element-wise, reduced by ``reduction``, as
    ``torch.nn.functional.l1_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.l1_loss(a, b, reduction="sum")
    tensor(2.5000)
    """
    _warn_broadcast(input, target)
    return _reduce((input - target).abs(), reduction)


def huber_loss(
    input: Tensor, target: Tensor, reduction: _Reduction = "mean", delta: float = 1.0
) -> Tensor:
    """``0.5 * d ** 2`` where ``d = |input - target| < delta``, else ``delta * (d - 0.5 * delta)``,
    element-wise, reduced by ``reduction``, as ``torch.nn.functional.huber_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.huber_loss(a, b, delta=0.5)
    tensor(0.3333)
    """
    _warn_broadcast(input, target)
    d = (input - target).abs()
    return _reduce(_E.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def smooth_l1_loss(
    input: Tensor, target: Tensor, reduction: _Reduction = "mean", beta: float = 1.0
) -> Tensor:
    """``0.5 * d ** 2 / beta`` where ``d = |input - target| < beta``, else ``d - 0.5 * beta``,
    element-wise (``beta=0``: the L1 loss), reduced by ``reduction``, as
    ``torch.nn.functional.smooth_l1_loss``.

    >>> a, b = clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([1.5, 2.0, 5.0])
    >>> clgrad.nn.functional.smooth_l1_loss(a, b, beta=0.5)
    tensor(0.6667)
    """
    _warn_broadcast(input, target)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(_E.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: _Reduction = "mean"
) -> Tensor:
    """The binary cross entropy ``-weight * (t * log(x) + (1 - t) * log(1 - x))`` between
    probabilities ``input`` and ``target`` of the same shape, each log clamped at -100, reduced
    by ``reduction``, as ``torch.nn.functional.binary_cross_entropy``.

    >>> p, t = clgrad.tensor([0.9, 0.2, 0.6]), clgrad.tensor([1.0, 0.0, 1.0])
    >>> clgrad.nn.functional.binary_cross_entropy(p, t)
    tensor(0.2798)
    """
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    loss = -(
        target * input.log().clamp(min=-100.0) + (1 - target) * (1 - input).log().clamp(min=-100.0)
    )
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
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
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    sp = _E.softplus(-input)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _class_targets(name, input, target):
    """Checks class-index targets against (N, C, d1, ...) / (C,) input; returns the class dim."""
    if target.dtype is not _D.int64:
        raise RuntimeError(
            f"{name}: expected target of dtype int64 (class indices), got {target.dtype.name}"
            + (
                " (floating-point targets are class probabilities and need the input's shape "
                f"{list(input.shape)}, got {list(target.shape)})"
                if target.dtype.is_floating_point and name == "cross_entropy"
                else ""
            )
        )
    if input.ndim == 0:
        raise ValueError(f"{name}: expected an input of at least 1 dim (classes), got a 0-d tensor")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(
                f"{name}: for an unbatched input of shape {list(input.shape)} expected a 0-d "
                f"target, got target of shape {list(target.shape)}"
            )
        return 0
    if target.ndim == 0 or target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 'none: a 0-d target'})."
        )
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise RuntimeError(
            f"{name}: expected target size {list(expected)}, got {list(target.shape)}"
        )
    return 1


def _nll_terms(logp, target, weight, ignore_index, cdim):
    """(-w_t * logp[t], w_t) per element, both 0 where target == ignore_index."""
    c = logp.shape[cdim]
    if weight is not None and tuple(weight.shape) != (c,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    valid = target != ignore_index
    bad = valid & ((target < 0) | (target >= c))
    if target.numel() and bool(bad.any().item()):
        first = target.masked_select(bad)[0].item()
        raise IndexError(f"Target {first} is out of bounds (the input has {c} classes).")
    classes = _arange(c, device=logp.device).reshape((c,) + (1,) * (logp.ndim - cdim - 1))
    hot = target.unsqueeze(cdim) == classes
    if 0 <= ignore_index < c:
        hot = hot & valid.unsqueeze(cdim)
    if weight is None:
        picked = _E.where(hot, logp, 0.0).sum(cdim)
        return -picked, valid.to(logp.dtype)
    wb = weight.reshape((c,) + (1,) * (logp.ndim - cdim - 1)).to(logp.dtype)
    picked = _E.where(hot, logp * wb, 0.0).sum(cdim)
    return -picked, _E.where(hot, wb, 0.0).sum(cdim)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
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
    cdim = _class_targets("nll_loss", input, target)
    loss, w = _nll_terms(input, target, weight, ignore_index, cdim)
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
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
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    cdim = 1 if input.ndim >= 2 else 0
    if target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        logp = log_softmax(input, cdim)
        c = input.shape[cdim]
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
        loss = -prod.sum(cdim)
        if reduction == "mean":
            if not input.numel():
                return loss.sum() * math.nan
            return loss.sum() / (input.numel() // c)
        return _reduce(loss, reduction)
    cdim = _class_targets("cross_entropy", input, target)
    logp = log_softmax(input, cdim)
    loss, w = _nll_terms(logp, target, weight, ignore_index, cdim)
    if label_smoothing > 0:
        c = input.shape[cdim]
        if weight is not None:
            wb = weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
            smooth = -(logp * wb).sum(cdim)
        else:
            smooth = -logp.sum(cdim)
        smooth = smooth.masked_fill(target == ignore_index, 0.0)
        loss = (1 - label_smoothing) * loss + (label_smoothing / c) * smooth
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)
