"""``torch.nn.grad`` (also ``nn.functional.grad``): the gradients of a convolution with respect to
its input and to its weight, given the output's gradient, as functions.

Each is autograd's own gradient of ``conv{1,2,3}d``: a convolution of a zero tensor of the asked
shape (it is linear in that operand, so the value does not matter) differentiated against
``grad_output``. The result has a history where ``weight`` / ``input`` or ``grad_output``
requires grad (torch's convolution_backward is differentiable too).
"""

from __future__ import annotations

from ..autograd.engine import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros
from . import functional as F

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    x = zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
    x.requires_grad_()
    with enable_grad():
        out = conv(x, weight, None, stride, padding, dilation, groups)
        history = weight.requires_grad or grad_output.requires_grad
        return _grad(out, x, grad_output, create_graph=history)[0]


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    w = zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device)
    w.requires_grad_()
    with enable_grad():
        out = conv(input, w, None, stride, padding, dilation, groups)
        history = input.requires_grad or grad_output.requires_grad
        return _grad(out, w, grad_output, create_graph=history)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to its input (of shape ``input_size``), as
    ``torch.nn.grad.conv1d_input``.

    >>> w, go = clgrad.ones(1, 1, 2), clgrad.ones(1, 1, 3)
    >>> clgrad.nn.grad.conv1d_input((1, 1, 4), w, go)
    tensor([[[1., 2., 2., 1.]]])
    """
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to its weight (of shape ``weight_size``), as
    ``torch.nn.grad.conv1d_weight``.

    >>> x, go = clgrad.arange(4.0).view(1, 1, 4), clgrad.ones(1, 1, 3)
    >>> clgrad.nn.grad.conv1d_weight(x, (1, 1, 2), go)
    tensor([[[3., 6.]]])
    """
    return _weight_grad(
        F.conv1d, input, weight_size, grad_output, stride, padding, dilation, groups
    )


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to its input, as ``torch.nn.grad.conv2d_input``.

    >>> clgrad.nn.grad.conv2d_input((1, 1, 2, 2), clgrad.ones(1, 1, 1, 1), clgrad.ones(1, 1, 2, 2))
    tensor([[[[1., 1.],
              [1., 1.]]]])
    """
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to its weight, as ``torch.nn.grad.conv2d_weight``.

    >>> clgrad.nn.grad.conv2d_weight(clgrad.ones(1, 1, 2, 2), (1, 1, 1, 1), clgrad.ones(1, 1, 2, 2))
    tensor([[[[4.]]]])
    """
    return _weight_grad(
        F.conv2d, input, weight_size, grad_output, stride, padding, dilation, groups
    )


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to its input, as ``torch.nn.grad.conv3d_input``.

    >>> w, go = clgrad.ones(1, 1, 1, 1, 1), clgrad.ones(1, 1, 1, 1, 2)
    >>> clgrad.nn.grad.conv3d_input((1, 1, 1, 1, 2), w, go)
    tensor([[[[[1., 1.]]]]])
    """
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to its weight, as ``torch.nn.grad.conv3d_weight``.

    >>> x, go = clgrad.ones(1, 1, 1, 1, 2), clgrad.ones(1, 1, 1, 1, 2)
    >>> clgrad.nn.grad.conv3d_weight(x, (1, 1, 1, 1, 1), go)
    tensor([[[[[2.]]]]])
    """
    return _weight_grad(
        F.conv3d, input, weight_size, grad_output, stride, padding, dilation, groups
    )
