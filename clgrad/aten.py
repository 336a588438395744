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

from .dtypes import bool_, contiguous_format
from .nn import functional as F
from .ops.core import check_out, write_out
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
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout_``: dropout in place."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout``: ``F.alpha_dropout(input, p, train)``."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout_``: alpha dropout in place."""
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
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


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
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
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
