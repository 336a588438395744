"""clgrad.nn.utils: gradient clipping and parameter <-> vector conversion, on the device (no
host reads unless asked for); ``rnn`` (padding and packing sequences), ``parametrizations``
and ``weight_norm`` (weight normalization)."""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...dtypes import promote_types
from ...ops.movement import cat, stack
from ...ops.reduction import norm as vector_norm
from ...tensor import Tensor
from ..modules.module import Module
from . import fusion, memory_format, parametrizations, parametrize, prune, rnn, stateless
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)

# (the modules' names are rebound to their functions here, as in torch.nn.utils: a later
# ``import clgrad.nn.utils.spectral_norm`` finds the module loaded and leaves the name alone)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "weight_norm",
    "remove_weight_norm",
    "spectral_norm",
    "remove_spectral_norm",
    "parametrizations",
    "parametrize",
    "prune",
    "rnn",
    "skip_init",
    "fusion",
    "memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "stateless",
]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _norm(x, p):
    """The vector ``p``-norm of every element of ``x`` (linalg.vector_norm's: inf, -inf, 0 and
    the rest)."""
    # the common case as two ops (16-bit squares overflow past 256, and a complex x * x is no
    # square of its modulus: vector_norm takes those)
    if p == 2 and x.dtype.category == 2 and x.dtype.itemsize >= 4:
        return (x * x).sum().sqrt()
    return vector_norm(x, p)


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of ``tensors`` taken together (the norm of all their elements in
    one vector; ``inf`` for the max norm), as ``torch.nn.utils.get_total_norm``; with
    ``error_if_nonfinite`` a NaN or infinite norm raises RuntimeError. ``foreach`` is accepted
    (the per-tensor norms are separate ops either way).

    >>> clgrad.nn.utils.get_total_norm([clgrad.tensor([3.0]), clgrad.tensor([4.0])])
    tensor(5.)
    """
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        from ...ops.creation import tensor

        return tensor(0.0)
    with no_grad():
        # the per-tensor norms in their promoted dtype, as torch.stack promotes them
        norms = [_norm(g, norm_type) for g in tensors]
        dtype = norms[0].dtype
        for n in norms[1:]:
            dtype = promote_types(dtype, n.dtype)
        total = _norm(stack([n.to(dtype) for n in norms]), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
    return total


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scales the gradients of ``parameters`` in place by ``max_norm / (total_norm + 1e-6)``
    when that is below 1, as ``torch.nn.utils.clip_grads_with_norm_`` (``total_norm`` from
    ``get_total_norm``).

    >>> w = clgrad.nn.Parameter(clgrad.zeros(2))
    >>> w.grad = clgrad.tensor([3.0, 4.0])
    >>> clgrad.nn.utils.clip_grads_with_norm_([w], 1.0, clgrad.tensor(5.0))
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scales the gradients of ``parameters`` in place so that their joint ``norm_type`` norm
    (the norm of all gradients concatenated into one vector; ``inf`` for the max norm) is at
    most ``max_norm``, as ``torch.nn.utils.clip_grad_norm_``. Returns the total norm before
    clipping, as a 0-d tensor. Parameters without a gradient are skipped; with
    ``error_if_nonfinite`` a NaN or infinite norm raises RuntimeError; ``foreach`` is accepted.

    >>> w = clgrad.nn.Parameter(clgrad.zeros(2))
    >>> (w * clgrad.tensor([3.0, 4.0])).sum().backward()
    >>> clgrad.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """PyTorch's deprecated name of ``clip_grad_norm_``: a FutureWarning, then the same.

    >>> import warnings
    >>> w = clgrad.nn.Parameter(clgrad.zeros(1))
    >>> w.grad = clgrad.tensor([4.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.nn.utils.clip_grad_norm([w], 1.0)
    tensor(4.)
    """
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` whose parameters and buffers are left to be filled by
    the caller, as ``torch.nn.utils.skip_init``: their values are unspecified (here the
    layer's own initialization, which PyTorch skips by building on its meta device).

    >>> clgrad.nn.utils.skip_init(clgrad.nn.Linear, 6, 1).weight.shape
    clgrad.Size([1, 6])
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamps every gradient element of ``parameters`` into ``[-clip_value, clip_value]`` in
    place, as ``torch.nn.utils.clip_grad_value_``; parameters without a gradient are skipped
    (``foreach`` is accepted).

    >>> w = clgrad.nn.Parameter(clgrad.zeros(3))
    >>> w.grad = clgrad.tensor([0.5, 3.0, -4.0])
    >>> clgrad.nn.utils.clip_grad_value_(w, 1.0)
    >>> w.grad.tolist()
    [0.5, 1.0, -1.0]
    """
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Flattens and concatenates ``parameters`` into one 1-d tensor, as
    ``torch.nn.utils.parameters_to_vector`` (differentiable: it is a ``cat``).

    >>> layer = clgrad.nn.Linear(3, 2)
    >>> clgrad.nn.utils.parameters_to_vector(layer.parameters()).shape
    clgrad.Size([8])
    """
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Makes each of ``parameters`` a view of its consecutive slice of the 1-d ``vec`` (shaped as
    the parameter; later writes to ``vec`` show in them), the inverse of
    ``parameters_to_vector``, as ``torch.nn.utils.vector_to_parameters``.

    >>> layer = clgrad.nn.Linear(3, 2)
    >>> clgrad.nn.utils.vector_to_parameters(clgrad.arange(8.0), layer.parameters())
    >>> layer.bias
    Parameter containing:
    tensor([6., 7.], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    for p in parameters:  # each parameter's data becomes a view of vec, as PyTorch's
        n = p.numel()
        p.data = vec[start : start + n].view_as(p).data
        start += n
