"""Folding an eval-mode BatchNorm into the convolution or Linear before it, as
``torch.nn.utils.fusion``: one layer computes what the two did, for inference."""

from __future__ import annotations

import copy

from ...ops.creation import ones_like, zeros_like
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` (in eval mode) whose weight and bias also apply ``bn`` (in eval mode,
    with running statistics); ``transpose`` for a ConvTranspose.

    >>> conv, bn = clgrad.nn.Conv2d(2, 3, 1).eval(), clgrad.nn.BatchNorm2d(3).eval()
    >>> bn.running_mean.fill_(0.5)
    tensor([0.5000, 0.5000, 0.5000])
    >>> x = clgrad.randn(1, 2, 4, 4)
    >>> fused = clgrad.nn.utils.fuse_conv_bn_eval(conv, bn)
    >>> bool(clgrad.allclose(fused(x), bn(conv(x)), atol=1e-6))
    True
    """
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_conv_bn_weights(
    conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose: bool = False
) -> tuple[Parameter, Parameter]:
    """(weight, bias) Parameters of a convolution that computes ``conv`` then the batch norm of
    these statistics and affine parameters (None: the identity); each keeps its dtype and its
    ``requires_grad``.

    >>> w, b = clgrad.nn.utils.fuse_conv_bn_weights(
    ...     clgrad.ones(2, 1, 1), None, clgrad.zeros(2), clgrad.full((2,), 3.0), 1.0, None, None)
    >>> w.flatten().tolist(), b.tolist()
    ([0.5, 0.5], [0.0, 0.0])
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = (bn_rv + bn_eps).rsqrt()
    # the output channels: dim 0 of a convolution's weight, dim 1 of a transposed one's
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.ndim - 2)
    w = (conv_w * (bn_w * inv_std).reshape(shape)).to(weight_dtype)
    b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(bias_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (in eval mode) whose weight and bias also apply ``bn`` (in eval mode;
    its features are the Linear's outputs, or a single one).

    >>> lin, bn = clgrad.nn.Linear(3, 2).eval(), clgrad.nn.BatchNorm1d(2).eval()
    >>> bn.running_var.fill_(4.0)
    tensor([4., 4.])
    >>> x, fused = clgrad.randn(5, 3), clgrad.nn.utils.fuse_linear_bn_eval(lin, bn)
    >>> bool(clgrad.allclose(fused(x), bn(lin(x)), atol=1e-6))
    True
    """
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    assert linear.out_features == bn.num_features or bn.num_features == 1, (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
    )
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b
) -> tuple[Parameter, Parameter]:
    """(weight, bias) Parameters of a Linear that computes ``linear`` then the batch norm of
    these statistics and affine parameters.

    >>> w, b = clgrad.nn.utils.fuse_linear_bn_weights(clgrad.ones(2, 2), None, clgrad.ones(2),
    ...     clgrad.ones(2), 0.0, clgrad.full((2,), 2.0), clgrad.zeros(2))
    >>> w.tolist(), b.tolist()
    ([[2.0, 2.0], [2.0, 2.0]], [-2.0, -2.0])
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    w = linear_w * scale.unsqueeze(-1).to(weight_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)
