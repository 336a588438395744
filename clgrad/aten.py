"""``torch.conv2d``, ``torch.dropout``, ``torch.layer_norm``, ``torch.detach``, ...: the
top-level functions PyTorch exposes from its native (ATen) ops: Tensor methods as functions,
and ``torch.nn.functional``'s ops with ATen's signatures, which differ from the functional's
here and there: ``dropout(input, p, train)`` with every argument
required, ``embedding(weight, indices)`` with its operands swapped, ``batch_norm`` with
``weight`` and ``bias`` first, losses whose ``reduction`` is an int (0 none, 1 mean, 2 sum).
Each calls the functional op, so it is that op on every device, with its gradient.

>>> x = clgrad.ones(1, 2, 4, 4)
>>> clgrad.conv2d(x, clgrad.ones(3, 2, 3, 3), padding=1).shape
clgrad.Size([1, 3, 4, 4])
>>> clgrad.max_pool2d(x, 2).shape
clgrad.Size([1, 2, 2, 2])
>>> clgrad.embedding(clgrad.eye(3), clgrad.tensor([2, 0]))
tensor([[0., 0., 1.],
        [1., 0., 0.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .distributions import Binomial
from .dtypes import bool_, contiguous_format
from .nn import functional as F
from .ops.core import SCALAR_TYPE_NAMES, check_out, write_out
from .ops.creation import empty as _empty_factory
from .ops.creation import randn as _randn_factory
from .ops.creation import tensor as _tensor_factory
from .ops.decomp import qr, svd, svdvals
from .ops.results import return_type
from .ops.sorting import no_formula
from .storage import UntypedStorage
from .tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "adjoint",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "celu_",
    "channel_shuffle",
    "constant_pad_nd",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "detach",
    "dropout",
    "dropout_",
    "e",
    "embedding",
    "fill",
    "get_device",
    "group_norm",
    "hinge_embedding_loss",
    "imag",
    "inf",
    "instance_norm",
    "is_inference",
    "is_storage",
    "kl_div",
    "layer_norm",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool3d",
    "nan",
    "newaxis",
    "pairwise_distance",
    "pi",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "real",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "selu_",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "typename",
]

# torch's constants: torch.pi, torch.e, torch.inf, torch.nan, torch.newaxis (None, as NumPy's)
pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None

# the same signature as the functional's
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d = F.conv_transpose1d, F.conv_transpose2d
conv_transpose3d = F.conv_transpose3d
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d
cosine_similarity, pairwise_distance, bilinear = (
    F.cosine_similarity,
    F.pairwise_distance,
    F.bilinear,
)
pixel_shuffle, pixel_unshuffle, channel_shuffle = (
    F.pixel_shuffle,
    F.pixel_unshuffle,
    F.channel_shuffle,
)
threshold_, rrelu_ = F.threshold_, F.rrelu_


# Tensor methods as functions
def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same data, outside autograd."""
    return input.detach()


def adjoint(input: Tensor) -> Tensor:
    """``input.adjoint()``: the conjugate transpose of the last two dims (a transpose here)."""
    return input.adjoint()


def real(input: Tensor) -> Tensor:
    """``input.real``: the tensor itself (clgrad has no complex dtypes)."""
    return input.real


def imag(input: Tensor) -> Tensor:
    """``input.imag``: refused for real tensors, as in PyTorch."""
    return input.imag


def is_inference(input: Tensor) -> bool:
    """``input.is_inference()``: False (inference mode is no_grad here, with no separate
    inference tensors)."""
    return input.is_inference()


def get_device(input: Tensor) -> int:
    """``input.get_device()``: the device index (-1 on the cpu)."""
    return input.get_device()


def fill(input: Tensor, value) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-d tensor), as
    ``torch.fill``; its gradient with respect to ``input`` is zero.

    >>> clgrad.fill(clgrad.zeros(2), 3)
    tensor([3., 3.])
    """
    return input.clone().fill_(value)


def typename(obj) -> str:
    """The type of ``obj`` as PyTorch writes it: a tensor's legacy type name
    (``clgrad.FloatTensor``, as ``Tensor.type()``), else the class's module and name.

    >>> clgrad.typename(clgrad.zeros(1)), clgrad.typename(1.0)
    ('clgrad.FloatTensor', 'float')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not hasattr(obj, "__qualname__"):
        module = type(obj).__module__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage object (``Tensor.untyped_storage()``)."""
    return isinstance(obj, UntypedStorage)


def _reduction(code: int) -> str:
    """ATen's reduction enum as the functional's name: 1 mean, 2 sum, any other none (ATen's
    apply_loss_reduction)."""
    return {1: "mean", 2: "sum"}.get(code, "none")


def _stride(stride):
    """ATen's empty stride (its default) is the kernel size: the functional's None."""
    return None if isinstance(stride, Sequence) and len(stride) == 0 else stride


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int]) -> tuple[Tensor, Tensor]:
    """The maxima and their indices, as ``torch.adaptive_max_pool1d``."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> Tensor:
    """``torch.max_pool1d``: ``F.max_pool1d`` (an empty ``stride`` is the kernel's)."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(
    input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False
) -> tuple[Tensor, Tensor]:
    """``torch.max_pool1d_with_indices``: the maxima and their indices."""
    return F.max_pool1d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True
    )


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> Tensor:
    """``torch.max_pool2d``: ``F.max_pool2d`` (an empty ``stride`` is the kernel's)."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> Tensor:
    """``torch.max_pool3d``: ``F.max_pool3d`` (an empty ``stride`` is the kernel's)."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout``: ``F.dropout(input, p, train)``."""
    _dropout_p(p)  # ATen's RuntimeError (the functional's is a ValueError)
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout_``: dropout in place."""
    _dropout_p(p)  # ATen's RuntimeError (the functional's is a ValueError)
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout``: ``F.alpha_dropout(input, p, train)``."""
    _dropout_p(p)  # ATen's RuntimeError (the functional's is a ValueError)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout_``: alpha dropout in place."""
    _dropout_p(p)  # ATen's RuntimeError (the functional's is a ValueError)
    return F.alpha_dropout(input, p, train, inplace=True)


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``torch.embedding``: the rows of ``weight`` at ``indices`` (weight first; a
    ``padding_idx`` of -1 is none, as ATen's)."""
    padding = None if padding_idx == -1 else padding_idx
    return F.embedding(
        indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse
    )


def layer_norm(
    input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True
) -> Tensor:
    """``torch.layer_norm``: ``F.layer_norm`` (``cudnn_enable`` has no meaning here)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True) -> Tensor:
    """``torch.group_norm``: ``F.group_norm``."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor:
    """``torch.rms_norm``: ``F.rms_norm``."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled
) -> Tensor:
    """``torch.batch_norm``: ``F.batch_norm`` with ATen's argument order (weight and bias
    first)."""
    return F._batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled
) -> Tensor:
    """``torch.instance_norm``: ``F.instance_norm`` with ATen's argument order."""
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``torch.threshold``: ``F.threshold``."""
    return F.threshold(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None) -> Tensor:
    """``torch.rrelu``: ``F.rrelu`` (a ``generator`` is refused: the draw uses the global
    one)."""
    if generator is not None:
        raise NotImplementedError("torch.rrelu: a generator of its own is not supported")
    return F.rrelu(input, lower, upper, training)


def selu_(input: Tensor) -> Tensor:
    """``torch.selu_``: SELU in place."""
    return F.selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``torch.celu_``: CELU in place."""
    return F.celu(input, alpha, inplace=True)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """``torch.constant_pad_nd``: ``F.pad`` in constant mode."""
    return F.pad(input, pad, "constant", value)


def binary_cross_entropy_with_logits(
    input, target, weight=None, pos_weight=None, reduction: int = 1
) -> Tensor:
    """``torch.binary_cross_entropy_with_logits`` (``reduction``: 0 none, 1 mean, 2 sum)."""
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight
    )


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction: int = 1) -> Tensor:
    """``torch.cosine_embedding_loss`` (an int ``reduction``)."""
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction: int = 1,
    zero_infinity=False,
) -> Tensor:  # fmt: skip
    """``torch.ctc_loss`` (an int ``reduction``)."""
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
        zero_infinity,
    )  # fmt: skip


def hinge_embedding_loss(input, target, margin=1.0, reduction: int = 1) -> Tensor:
    """``torch.hinge_embedding_loss`` (an int ``reduction``)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction: int = 1) -> Tensor:
    """``torch.margin_ranking_loss`` (an int ``reduction``)."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction: int = 1, *, log_target: bool = False) -> Tensor:
    """``torch.kl_div`` (an int ``reduction``; its mean is over every element, without the
    functional's warning that suggests ``batchmean``)."""
    if reduction == 1:
        return F.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def poisson_nll_loss(input, target, log_input, full, eps, reduction: int) -> Tensor:
    """``torch.poisson_nll_loss`` (every argument required, an int ``reduction``)."""
    return F.poisson_nll_loss(
        input, target, log_input, full, eps=eps, reduction=_reduction(reduction)
    )


def triplet_margin_loss(
    anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction: int = 1
) -> Tensor:
    """``torch.triplet_margin_loss`` (an int ``reduction``)."""
    return F.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction)
    )


# ---- the view ops' copying forms: torch.t_copy, torch.unbind_copy, ... ------------------------
def _slice(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = dim + input.dim() if dim < 0 else dim
    if not 0 <= dim < max(input.dim(), 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-input.dim()}, "
            f"{input.dim() - 1}], but got {dim})"
        )
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _expand(input: Tensor, size, *, implicit: bool = False) -> Tensor:
    return input.expand(*size)


def _alias(input: Tensor) -> Tensor:
    return input


def _detach(input: Tensor) -> Tensor:
    return input.detach()


def _method(name):
    return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)


# name -> (the view it copies, whether it makes a list, a doctest example's call and output)
_COPY_FORMS = {
    "alias_copy": (_alias, False, "alias_copy(x)", "tensor([[0., 1., 2.],\n  [3., 4., 5.]])"),
    "as_strided_copy": (
        _method("as_strided"),
        False,
        "as_strided_copy(x, (2,), (2,), 1)",
        "tensor([1., 3.])",
    ),
    "detach_copy": (_detach, False, "detach_copy(x)", "tensor([[0., 1., 2.],\n  [3., 4., 5.]])"),
    "diagonal_copy": (_method("diagonal"), False, "diagonal_copy(x, 1)", "tensor([1., 5.])"),
    "expand_copy": (
        _expand,
        False,
        "expand_copy(x[:, :1], (2, 2))",
        "tensor([[0., 0.],\n  [3., 3.]])",
    ),
    "permute_copy": (
        _method("permute"),
        False,
        "permute_copy(x, (1, 0)).shape",
        "clgrad.Size([3, 2])",
    ),
    "select_copy": (_method("select"), False, "select_copy(x, 1, 2)", "tensor([2., 5.])"),
    "slice_copy": (
        _slice,
        False,
        "slice_copy(x, 1, 0, None, 2)",
        "tensor([[0., 2.],\n  [3., 5.]])",
    ),
    "split_copy": (_method("split"), True, "split_copy(x, 2, 1)[1]", "tensor([[2.],\n  [5.]])"),
    "split_with_sizes_copy": (
        _method("split"),
        True,
        "split_with_sizes_copy(x, [1, 2], 1)[0]",
        "tensor([[0.],\n  [3.]])",
    ),
    "squeeze_copy": (_method("squeeze"), False, "squeeze_copy(x[:1])", "tensor([0., 1., 2.])"),
    "t_copy": (_method("t"), False, "t_copy(x).shape", "clgrad.Size([3, 2])"),
    "transpose_copy": (
        _method("transpose"),
        False,
        "transpose_copy(x, 0, 1)[0]",
        "tensor([0., 3.])",
    ),
    "unbind_copy": (_method("unbind"), True, "unbind_copy(x, 1)[2]", "tensor([2., 5.])"),
    "unfold_copy": (
        _method("unfold"),
        False,
        "unfold_copy(x, 1, 2, 1)[0]",
        "tensor([[0., 1.],\n  [1., 2.]])",
    ),
    "unsqueeze_copy": (
        _method("unsqueeze"),
        False,
        "unsqueeze_copy(x, 0).shape",
        "clgrad.Size([1, 2, 3])",
    ),
    "view_copy": (_method("view"), False, "view_copy(x, (3, 2))[2]", "tensor([4., 5.])"),
}


def _copy_form(name: str, view, listed: bool, call: str, shown: str):
    base = name[: -len("_copy")]

    def function(input: Tensor, *args, out=None, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        if out is not None:
            check_out(name, out, (input, *args), kwargs)
        result = view(input, *args, **kwargs)
        if listed:
            result = [r.clone(memory_format=contiguous_format) for r in result]
        else:
            result = result.clone(memory_format=contiguous_format)
        if out is None:
            return result
        if listed:  # torch's list out= forms return None
            if not isinstance(out, (list, tuple)) or len(out) != len(result):
                raise RuntimeError(
                    f"{name}(): expected {len(result)} output tensors, got "
                    f"{len(out) if isinstance(out, (list, tuple)) else 1}"
                )
            for o, r in zip(out, result):
                write_out(o, r)
            return None
        return write_out(out, result)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"``torch.{name}``: ``input.{base}(...)`` as {'new tensors' if listed else 'a new tensor'}"
        f" (contiguous, not a view), differentiable, with ``out=``.\n\n"
        f"    >>> x = clgrad.arange(6.0).reshape(2, 3)\n"
        f"    >>> clgrad.{call}\n"
        + "".join(f"    {line}\n" for line in shown.replace("\n  ", "\n         ").split("\n"))
    )
    return function


for _name, _spec in _COPY_FORMS.items():
    globals()[_name] = _copy_form(_name, *_spec)
__all__ += list(_COPY_FORMS)


# ---- the native_* forms: the op's output with the statistics its backward saves --------------
def _dropout_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _empty(input: Tensor) -> Tensor:
    return input.new_empty(0)


def native_batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps
) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_batch_norm``: batch norm's output, the batch mean and ``1 / sqrt(var +
    eps)`` per channel (empty when not ``training``); the running statistics are updated in
    place as ``F.batch_norm`` does. The statistics are outside autograd, as torch's.

    >>> out, mean, invstd = clgrad.native_batch_norm(
    ...     clgrad.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 0.0)
    >>> out, mean, invstd
    (tensor([[-1.], [ 1.]]), tensor([2.]), tensor([1.]))
    """
    out = F._batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, _empty(input), _empty(input)
    x = input.detach()
    dims = [0, *range(2, x.dim())]
    var, mean = _var_mean(x, dims)
    return out, mean, (var + eps).rsqrt()


def _var_mean(x: Tensor, dims) -> tuple[Tensor, Tensor]:
    mean = x.mean(dim=dims)
    var = x.var(dim=dims, unbiased=False)
    return var, mean


def native_layer_norm(input, normalized_shape, weight, bias, eps) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_layer_norm``: layer norm's output, the mean and ``1 / sqrt(var + eps)``
    over the normalized dims (kept as size-1 dims; outside autograd, as torch's).

    >>> x = clgrad.tensor([[1.0, 3.0]])
    >>> clgrad.native_layer_norm(x, [2], None, None, 0.0)
    (tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    x = input.detach()
    dims = list(range(x.dim() - len(tuple(normalized_shape)), x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, unbiased=False, keepdim=True)
    return out, mean, (var + eps).rsqrt()


def native_group_norm(
    input, weight, bias, N: int, C: int, HxW: int, group: int, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_group_norm``: group norm's output, the ``(N, group)`` means and
    ``1 / sqrt(var + eps)`` (differentiable, as torch's).

    >>> out, mean, rstd = clgrad.native_group_norm(
    ...     clgrad.tensor([[[1.0], [3.0]]]), None, None, 1, 2, 1, 1, 0.0)
    >>> out.flatten(), mean, rstd
    (tensor([-1.,  1.]), tensor([[2.]]), tensor([[1.]]))
    """
    if input.numel() != N * C * HxW:
        raise RuntimeError(
            f"Expected input to have {N * C * HxW} elements (N={N}, C={C}, HxW={HxW}), but got "
            f"{input.numel()}"
        )
    out = F.group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, -1)
    var, mean = _var_mean(x, [2])
    return out, mean, (var + eps).rsqrt()


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """``torch.native_dropout``: dropout's output and its boolean keep mask (all True and the
    input's values when not ``train``).

    >>> clgrad.native_dropout(clgrad.ones(2), 0.5, False)
    (tensor([1., 1.]), tensor([True, True]))
    """
    if train is False:
        return input.clone(), input.new_ones(tuple(input.shape), dtype=bool_)
    _dropout_p(p)
    keep = F._rand(tuple(input.shape), device=input.device) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return input * keep.to(input.dtype) * scale, keep


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.native_channel_shuffle``: ``F.channel_shuffle``.

    >>> clgrad.native_channel_shuffle(clgrad.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    return F.channel_shuffle(input, groups)


def _feature_shape(input: Tensor) -> tuple[int, ...]:
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.dim() - 2)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout``: dropout of whole ``(N, C)`` feature maps, the others scaled
    by ``1 / (1 - p)``.

    >>> y = clgrad.feature_dropout(clgrad.ones(2, 3, 4), 0.5, True)
    >>> bool((y.amax(2) == y.amin(2)).all())
    True
    """
    _dropout_p(p)
    return F._dropout(input, p, train, False, _feature_shape(input))


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout_``: feature dropout in place.

    >>> x = clgrad.ones(2, 3, 4)
    >>> clgrad.feature_dropout_(x, 0.0, True) is x
    True
    """
    _dropout_p(p)
    F._dropout(input, p, train, True, _feature_shape(input))
    return input


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout``: alpha dropout of whole ``(N, C)`` feature maps.

    >>> clgrad.feature_alpha_dropout(clgrad.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    _dropout_p(p)
    return F._alpha_dropout(input, p, train, False, _feature_shape(input))


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout_``: feature alpha dropout in place.

    >>> x = clgrad.ones(2, 3, 4)
    >>> clgrad.feature_alpha_dropout_(x, 0.0, True) is x
    True
    """
    _dropout_p(p)
    F._alpha_dropout(input, p, train, True, _feature_shape(input))
    return input


__all__ += [
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "native_batch_norm",
    "native_channel_shuffle",
    "native_dropout",
    "native_group_norm",
    "native_layer_norm",
]


# ---- norms, cells, convolution, sampling grids, factories ------------------------------------
def frobenius_norm(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """``torch.frobenius_norm``: the 2-norm over at most two ``dim`` (all dims when empty), as
    ``linalg.vector_norm(input, 2, dim, keepdim)``.

    >>> clgrad.frobenius_norm(clgrad.tensor([[3.0, 4.0]]), [0, 1])
    tensor(5.)
    """
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(
            f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead."
        )
    return input.norm(2, dim=dims or None, keepdim=keepdim)


def nuclear_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False) -> Tensor:
    """``torch.nuclear_norm``: the sum of the singular values of the matrices over ``dim``
    (the last two by default; ``nuclear_norm(input, keepdim)`` as torch's overload).

    >>> clgrad.nuclear_norm(clgrad.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor(7.)
    """
    if isinstance(dim, bool):  # torch.nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dims}")
    if input.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    n = input.dim()
    d0, d1 = (d % n for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    rest = [d for d in range(n) if d not in (d0, d1)]
    out = svdvals(input.permute(*rest, d0, d1)).sum(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim`` (weight norm's): the ``pow``-norm over every dim but ``dim``,
    kept as size-1 dims (``dim=-1``: the norm of the whole tensor).

    >>> clgrad.norm_except_dim(clgrad.tensor([[3.0, 1.0], [4.0, 1.0]]), 2, 1)
    tensor([[5.0000, 1.4142]])
    """
    if dim == -1:
        return v.norm(pow)
    n = v.dim()
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    dim %= n
    rest = [d for d in range(n) if d != dim]
    if not rest:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return v.norm(pow, dim=rest, keepdim=True)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """``torch.binomial``: a draw of Binomial(``count``, ``prob``) per element (broadcast), in
    ``count``'s dtype, outside autograd (a ``generator`` is refused: the global one draws).

    >>> clgrad.binomial(clgrad.tensor([0.0, 4.0]), clgrad.tensor([0.3, 1.0]))
    tensor([0., 4.])
    """
    if generator is not None:
        raise NotImplementedError("torch.binomial: a generator of its own is not supported")
    if not count.dtype.is_floating_point:
        raise ValueError(
            f"binomial only supports floating-point dtypes for count, got: "
            f"{SCALAR_TYPE_NAMES[count.dtype.name]}"
        )
    count, prob = count.detach(), prob.detach().to(count.dtype)
    return Binomial(count, probs=prob).sample().to(count.dtype)


def empty_permuted(
    size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
    pin_memory=False,
) -> Tensor:  # fmt: skip
    """``torch.empty_permuted``: an uninitialized tensor of ``size`` whose dims lie in memory
    in the order ``physical_layout`` (outermost first).

    >>> clgrad.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}"
        )
    if sorted(order) != list(range(len(order))):
        raise RuntimeError("Duplicate dim not allowed")
    inverse = [order.index(d) for d in range(len(order))]
    out = _empty_factory([size[d] for d in order], dtype=dtype, device=device).permute(*inverse)
    return out.requires_grad_() if requires_grad else out


def index_put_(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``torch.index_put_``: ``input.index_put_(indices, values, accumulate)``.

    >>> clgrad.index_put_(clgrad.zeros(3), (clgrad.tensor([0, 0]),), clgrad.tensor(1.0), True)
    tensor([2., 0., 0.])
    """
    return input.index_put_(indices, values, accumulate)


def _cell_check(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor) -> None:
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}"
        )
    if hx.size(1) != w_hh.size(1):
        raise RuntimeError(
            f"hx has inconsistent hidden_size: got {hx.size(1)} expected {w_hh.size(1)}"
        )


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh) -> tuple[Tensor, Tensor]:
    return F.linear(input, w_ih, b_ih), F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """``torch.rnn_tanh_cell``: ``tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)``.

    >>> clgrad.rnn_tanh_cell(clgrad.zeros(1, 2), clgrad.zeros(1, 3), clgrad.ones(3, 2),
    ...                      clgrad.ones(3, 3))
    tensor([[0., 0., 0.]])
    """
    _cell_check(input, hx, w_ih, w_hh)
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """``torch.rnn_relu_cell``: ``relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)``.

    >>> clgrad.rnn_relu_cell(clgrad.ones(1, 2), clgrad.zeros(1, 1), clgrad.ones(1, 2),
    ...                      clgrad.ones(1, 1))
    tensor([[2.]])
    """
    _cell_check(input, hx, w_ih, w_hh)
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """``torch.gru_cell``: one GRU step (gates r, z, n in ``w_ih``'s rows, as torch's).

    >>> clgrad.gru_cell(clgrad.zeros(1, 2), clgrad.ones(1, 1), clgrad.zeros(3, 2),
    ...                 clgrad.zeros(3, 1))
    tensor([[0.5000]])
    """
    _cell_check(input, hx, w_ih, w_hh)
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (hx - n)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> tuple[Tensor, Tensor]:
    """``torch.lstm_cell``: one LSTM step from ``hx = (h, c)`` (gates i, f, g, o), the new
    ``(h, c)``.

    >>> h, c = clgrad.lstm_cell(clgrad.zeros(1, 2), (clgrad.zeros(1, 1), clgrad.ones(1, 1)),
    ...                         clgrad.zeros(4, 2), clgrad.zeros(4, 1))
    >>> c
    tensor([[0.5000]])
    """
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm_cell: Expected hx to be a sequence of two tensors (h, c)")
    h, c = hx
    _cell_check(input, h, w_ih, w_hh)
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


_CONVS = {1: (F.conv1d, F.conv_transpose1d), 2: (F.conv2d, F.conv_transpose2d)}
_CONVS[3] = (F.conv3d, F.conv_transpose3d)


def convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
) -> Tensor:
    """``torch.convolution``: ``F.conv{1,2,3}d`` or, ``transposed``, ``F.conv_transpose{1,2,3}d``
    by ``weight``'s dims.

    >>> clgrad.convolution(clgrad.ones(1, 1, 4), clgrad.ones(1, 1, 2), None, [1], [0], [1],
    ...                    False, [0], 1)
    tensor([[[2., 2., 2.]]])
    """
    k = weight.dim() - 2
    if k not in _CONVS or input.dim() not in (k + 1, k + 2):
        raise RuntimeError(
            f"Expected {k + 2}-dimensional input for {k + 2}-dimensional weight "
            f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
            f"{list(input.shape)} instead"
        )
    conv, conv_t = _CONVS[k]
    if transposed:
        return conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return conv(input, weight, bias, stride, padding, dilation, groups)


_SAMPLE_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")


def grid_sampler(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler``: ``F.grid_sample`` with ATen's codes (interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection).

    >>> clgrad.grid_sampler(clgrad.ones(1, 1, 2, 2), clgrad.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.]]]])
    """
    if not 0 <= interpolation_mode < 3 or not 0 <= padding_mode < 3:
        raise RuntimeError(
            f"grid_sampler(): unknown interpolation mode {interpolation_mode} or padding mode "
            f"{padding_mode}"
        )
    return F.grid_sample(
        input, grid, _SAMPLE_MODES[interpolation_mode], _PADDING_MODES[padding_mode],
        align_corners,
    )  # fmt: skip


def _grid_sampler_nd(rank, input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != rank or grid.dim() != rank:
        raise RuntimeError(
            f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, "
            f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler_2d``: ``grid_sampler`` of a 4-D ``input`` and ``grid``, with
    ATen's RuntimeError for any other rank.

    >>> clgrad.grid_sampler_2d(clgrad.ones(1, 1, 2, 2), clgrad.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.]]]])
    """
    return _grid_sampler_nd(4, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler_3d``: ``grid_sampler`` of a 5-D ``input`` and ``grid`` (trilinear or
    nearest), with ATen's RuntimeError for any other rank.

    >>> x = clgrad.ones(1, 1, 2, 2, 2)
    >>> clgrad.grid_sampler_3d(x, clgrad.zeros(1, 1, 1, 1, 3), 0, 0, False)
    tensor([[[[[1.]]]]])
    """
    return _grid_sampler_nd(5, input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: ``F.affine_grid(theta, size, align_corners)``.

    >>> clgrad.affine_grid_generator(clgrad.eye(2, 3)[None], [1, 1, 1, 2], False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    return F.affine_grid(theta, list(size), align_corners)


__all__ += [
    "affine_grid_generator",
    "binomial",
    "convolution",
    "empty_permuted",
    "frobenius_norm",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "gru_cell",
    "index_put_",
    "lstm_cell",
    "norm_except_dim",
    "nuclear_norm",
    "rnn_relu_cell",
    "rnn_tanh_cell",
]


# ---- torch's SymInt-aware helpers, on plain Python numbers (clgrad traces no symbolic shapes) --
def _sym_types():
    import numpy as np

    return (np.integer, np.floating, int, float), (np.floating, float)


def sym_int(a):
    """``torch.sym_int``: ``int(a)``.

    >>> clgrad.sym_int(2.7)
    2
    """
    return int(a)


def sym_float(a):
    """``torch.sym_float``: ``float(a)``.

    >>> clgrad.sym_float(2)
    2.0
    """
    return a.__sym_float__() if hasattr(a, "__sym_float__") else float(a)


def _sym_extreme(name, pick, a, b):
    every, floats = _sym_types()
    for x in (a, b):
        if not isinstance(x, every):
            raise AssertionError(f"expected {every}, got {type(x)}")
    if isinstance(a, floats) or isinstance(b, floats):
        return float(pick(a, b))
    return pick(a, b)


def sym_max(a, b):
    """``torch.sym_max``: ``max(a, b)`` of ints and floats, a float where either is one.

    >>> clgrad.sym_max(1, 2), clgrad.sym_max(3, 2.0)
    (2, 3.0)
    """
    return _sym_extreme("sym_max", max, a, b)


def sym_min(a, b):
    """``torch.sym_min``: ``min(a, b)`` of ints and floats, a float where either is one.

    >>> clgrad.sym_min(1, 2), clgrad.sym_min(1, 2.0)
    (1, 1.0)
    """
    return _sym_extreme("sym_min", min, a, b)


def sym_not(a):
    """``torch.sym_not``: ``not a``.

    >>> clgrad.sym_not(True)
    False
    """
    return a.__sym_not__() if hasattr(a, "__sym_not__") else not a


def sym_sqrt(a):
    """``torch.sym_sqrt``: ``math.sqrt(a)``.

    >>> clgrad.sym_sqrt(4)
    2.0
    """
    return a.__sym_sqrt__() if hasattr(a, "__sym_sqrt__") else math.sqrt(a)


def sym_sum(*args):
    """``torch.sym_sum``: the sum of ``args`` (or of one list or tuple of them).

    >>> clgrad.sym_sum([1, 2, 3]), clgrad.sym_sum(1, 2.5)
    (6, 3.5)
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return sum(args)


def sym_ite(b, t, f):
    """``torch.sym_ite``: ``t if b else f`` (``b`` a bool, ``t`` and ``f`` of one type).

    >>> clgrad.sym_ite(False, 1, 2)
    2
    """
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


__all__ += ["sym_float", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt"]
__all__ += ["sym_sum"]


def _bag_bounds(indices: Tensor, offsets: Tensor | None, include_last_offset: bool):
    """The flat indices (host) and each bag's [start, end) as ATen's CPU kernel reads them."""
    import numpy as np

    idx = indices.detach().reshape(-1).cpu().numpy()
    if indices.dim() == 2:
        off = np.arange(0, idx.size, max(indices.shape[1], 1), dtype=np.int64)[: indices.shape[0]]
    else:
        off = offsets.detach().cpu().numpy().astype(np.int64)
    ends = off[1:] if include_last_offset else np.append(off[1:], idx.size)
    starts = off[:-1] if include_last_offset else off
    return np, idx, off, starts, ends


def embedding_bag(
    weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
    per_sample_weights=None, include_last_offset=False, padding_idx=None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:  # fmt: skip
    """``torch.embedding_bag``: ``F.embedding_bag``'s output (``mode`` 0 sum, 1 mean, 2 max;
    weight first) with ATen's CPU auxiliaries: ``offset2bag`` (each index's bag; empty for a
    sum over floats without a padding index, as its fast path), ``bag_size`` (the bags'
    non-padding counts; zeros per offset for sum) and ``max_indices`` (the winning rows per
    bag and column for max, ``bag_size`` for mean, zeros for sum).

    >>> out, offset2bag, bag_size, max_indices = clgrad.embedding_bag(
    ...     clgrad.eye(3), clgrad.tensor([0, 2, 1]), clgrad.tensor([0, 2]), mode=1)
    >>> out
    tensor([[0.5000, 0.0000, 0.5000],
            [0.0000, 1.0000, 0.0000]])
    >>> offset2bag, bag_size
    (tensor([0, 0, 1]), tensor([2, 1]))
    """
    if mode not in (0, 1, 2):
        raise RuntimeError(f"embedding_bag: unknown mode {mode} (0 sum, 1 mean, 2 max)")
    np, idx, off, starts, ends = _bag_bounds(indices, offsets, include_last_offset)
    if off.size and off[-1] > idx.size:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {idx.size} but got "
            f"offsets[-1] of {off[-1]}"
        )
    if idx.size and not (0 <= idx.min() and idx.max() < weight.shape[0]):
        raise RuntimeError(
            f"embedding_bag: an index is out of range for a weight of {weight.shape[0]} rows"
        )
    out = F.embedding_bag(
        indices, weight, None if indices.dim() == 2 else offsets, None, 2, scale_grad_by_freq,
        ("sum", "mean", "max")[mode], sparse, per_sample_weights, include_last_offset,
        padding_idx,
    )  # fmt: skip
    keep = idx != (-1 if padding_idx is None else padding_idx)
    fast = weight.dtype.name in ("float16", "float32", "bfloat16") and padding_idx is None
    if mode == 0 and fast:
        offset2bag = np.zeros(0, np.int64)
    else:
        offset2bag = np.searchsorted(off, np.arange(idx.size), side="right") - 1
    counts = np.array([int(keep[s:e].sum()) for s, e in zip(starts, ends)], np.int64)
    if mode == 0:
        bag_size = max_indices = np.zeros(off.size, np.int64)
    elif mode == 1:
        bag_size = max_indices = counts
    else:
        bag_size = counts
        w = weight.detach().cpu().numpy()
        max_indices = np.zeros((len(starts), w.shape[1]), np.int64)
        for b, (s, e) in enumerate(zip(starts, ends)):
            rows = idx[s:e][keep[s:e]]
            if rows.size:
                max_indices[b] = rows[np.argmax(w[rows], axis=0)]
    aux = (
        _tensor_factory(np.ascontiguousarray(a, np.int64), device=weight.device)
        for a in (offset2bag, bag_size, max_indices)
    )
    return (out, *aux)


__all__ += ["embedding_bag"]


# ---- randomized low-rank SVD and PCA (Halko et al., 2009; torch._lowrank's algorithm) --------
def _mT(a: Tensor) -> Tensor:
    return a.transpose(-2, -1)


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    R = _randn_factory(A.shape[-1], q, dtype=A.dtype, device=A.device)
    X = A @ R - (M @ R if M is not None else 0)
    Q = qr(X)[0]
    for _ in range(niter):
        X = _mT(A) @ Q - (_mT(M) @ Q if M is not None else 0)
        Q = qr(X)[0]
        X = A @ Q - (M @ Q if M is not None else 0)
        Q = qr(X)[0]
    return Q


def _svd_lowrank(A: Tensor, q: int | None, niter: int | None, M: Tensor | None):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if not A.dtype.is_floating_point:
        A = A.float()
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:  # the algorithm assumes a tall A
        A = _mT(A)
        M = None if M is None else _mT(M)
    Q = _approximate_basis(A, q, niter, M)
    B = _mT(Q) @ A - (_mT(Q) @ M if M is not None else 0)
    U, S, Vh = svd(B, full_matrices=False)
    V, U = _mT(Vh), Q @ U
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """``torch.svd_lowrank``: ``(U, S, V)`` of a rank-``q`` approximation of ``A - M`` by the
    randomized range finder (``niter`` subspace iterations), differentiable. The random
    matrix comes from clgrad's generator, so the factors match torch's up to its draw.

    >>> A = clgrad.tensor([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> U, S, V = clgrad.svd_lowrank(A, q=2)
    >>> [round(s, 4) for s in S.tolist()]
    [3.0, 2.0]
    """
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """``torch.pca_lowrank``: ``svd_lowrank`` of ``A`` with its column means removed
    (``center``); ``q`` defaults to ``min(6, m, n)``.

    >>> A = clgrad.tensor([[1.0, 0.0], [3.0, 0.0]])
    >>> U, S, V = clgrad.pca_lowrank(A, q=1)
    >>> [round(s, 4) for s in S.tolist()]
    [1.4142]
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if not A.dtype.is_floating_point:
        A = A.float()
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)


__all__ += ["pca_lowrank", "svd_lowrank"]


_histogramdd_result = return_type("histogramdd", ["hist", "bin_edges"])


def histogramdd(input: Tensor, bins=10, *, range=None, weight=None, density=False):
    """``torch.histogramdd``: ``(hist, bin_edges)`` of the points in ``input``'s last dim:
    ``bins`` an int, one int per dim or one tensor of edges per dim; ``range`` the flat
    ``[min0, max0, min1, max1, ...]`` (the data's extent by default, a zero width widened by
    1/2 on each side); the last bin of each dim holds its upper edge. Counted on the host, as
    ``clgrad.histogram``.

    >>> h = clgrad.histogramdd(clgrad.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> h.hist
    tensor([[1., 0.],
            [1., 1.]])
    """
    import numpy as np

    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{SCALAR_TYPE_NAMES[input.dtype.name]}'"
        )
    dims = input.shape[-1] if input.dim() else 1
    points = input.detach().cpu().numpy().reshape(-1, dims)
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(
            "histogramdd: for a 1D histogram range should have 2 elements per dimension"
        )
    np_dtype = points.dtype
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(b.detach().cpu().numpy().astype(np_dtype))
            continue
        if b <= 0:
            raise RuntimeError(
                f"torch.histogramdd(): bins must be > 0, but got {b} for dimension {d}"
            )
        if range is not None:
            lo, hi = float(range[2 * d]), float(range[2 * d + 1])
        elif points.shape[0]:
            lo, hi = float(points[:, d].min()), float(points[:, d].max())
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min {lo} max {hi} for "
                f"dimension {d}"
            )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(np.linspace(lo, hi, b + 1).astype(np_dtype))
    w = None if weight is None else weight.detach().cpu().numpy().reshape(-1)
    hist, _ = np.histogramdd(
        points.astype(np.float64), [e.astype(np.float64) for e in edges], weights=w,
        density=density,
    )  # fmt: skip
    # torch's two nodes for its results (grad_fn NotImplemented) where an input requires grad
    edge_tensors = no_formula(
        "_histogramdd_bin_edges",
        tuple(_tensor_factory(e, device=input.device) for e in edges),
        input,
        weight,
    )
    (counts,) = no_formula(
        "_histogramdd_from_bin_cts",
        (_tensor_factory(hist.astype(np_dtype), device=input.device),),
        input,
        weight,
        *bins,
    )
    return _histogramdd_result(counts, tuple(edge_tensors))


__all__ += ["histogramdd"]
