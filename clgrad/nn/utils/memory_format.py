"""``torch.nn.utils.memory_format``: converting convolution weights to a memory format. clgrad
keeps every tensor row-major (``Tensor.contiguous``'s memory_format is accepted and has no
effect), so the conversion leaves the weights as they are and returns the module, as torch
returns it."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """``module``, whose convolution weights need no conversion here (see the module).

    >>> conv = clgrad.nn.Conv2d(1, 1, 1)
    >>> clgrad.nn.utils.convert_conv2d_weight_memory_format(conv, clgrad.channels_last) is conv
    True
    """
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """As ``convert_conv2d_weight_memory_format``, for 3-d convolutions.

    >>> conv = clgrad.nn.Conv3d(1, 1, 1)
    >>> clgrad.nn.utils.convert_conv3d_weight_memory_format(conv, clgrad.channels_last_3d) is conv
    True
    """
    return module
