"""Normalization: BatchNorm1d/2d/3d, LayerNorm, RMSNorm, GroupNorm, InstanceNorm1d/2d/3d,
LocalResponseNorm, SyncBatchNorm, and the lazy batch and instance norms."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ... import distributed as dist
from ... import dtypes as D
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ...ops.creation import ones, tensor, zeros
from ...ops.movement import cat
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

if TYPE_CHECKING:
    from ...device import Device
    from ...tensor import Tensor


class _NormBase(Module):
    """The base of the batch and instance norms (``torch.nn.modules.batchnorm._NormBase``),
    for programs that tell normalization layers apart by it (``isinstance(m, _NormBase)``,
    as when leaving them out of weight decay)."""


class _BatchNorm(_NormBase):
    _version = 2  # (num_batches_tracked was added in version 2)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, **kw))
            if bias:
                self.bias = Parameter(zeros(num_features, **kw))
            else:  # (PyTorch 2.13's bias=False: a scale alone)
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **kw))
            self.register_buffer("running_var", ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=D.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, *rest):
        # PyTorch's rule for checkpoints from before the count existed (version < 2, and a
        # plain dict, which has no version): a missing count loads as the module's own
        key = prefix + "num_batches_tracked"
        version = local_metadata.get("version")
        if self.track_running_stats and key not in state_dict and (version or 0) < 2:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *rest)

    def reset_running_stats(self) -> None:
        """Resets ``running_mean`` to 0, ``running_var`` to 1 and ``num_batches_tracked``
        to 0 (when the statistics are tracked)."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Resets the running statistics, ``weight`` to 1 and ``bias`` to 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        """Normalizes ``input`` with the batch's statistics (training, updating the running
        ones) or the running statistics (eval), then applies ``weight`` and ``bias``."""
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise RuntimeError(
                f"running_mean should contain {input.shape[1]} elements not {self.num_features}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average: reads the count (one host read)
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` inputs, per channel over N (and L),
    as ``torch.nn.BatchNorm1d``: ``(x - mean) / sqrt(var + eps) * weight + bias``. In training
    it uses the batch's statistics (biased variance) and updates ``running_mean`` and
    ``running_var`` (unbiased) with ``momentum`` (None: a cumulative average); in eval mode it
    uses the running statistics.

    >>> bn = clgrad.nn.BatchNorm1d(3)
    >>> x = clgrad.tensor([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]])
    >>> bn(x).shape
    clgrad.Size([2, 3])
    >>> bn.running_mean, bn.num_batches_tracked
    (tensor([0.2000, 0.4000, 0.6000]), tensor(1))
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` inputs, per channel over N, H and W, as
    ``torch.nn.BatchNorm2d``; otherwise as BatchNorm1d.

    >>> bn = clgrad.nn.BatchNorm2d(4)
    >>> bn
    BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> _ = clgrad.manual_seed(0)
    >>> y = bn(clgrad.randn(8, 4, 5, 5) * 3 + 1)
    >>> y.shape, abs(y.mean().item()) < 1e-4, round(y.std().item(), 2)
    (clgrad.Size([8, 4, 5, 5]), True, 1.0)
    """

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)`` inputs, per channel over N, D, H and W, as
    ``torch.nn.BatchNorm3d``; otherwise as BatchNorm1d.

    >>> clgrad.nn.BatchNorm3d(2)(clgrad.randn(2, 2, 3, 3, 3)).shape
    clgrad.Size([2, 2, 3, 3, 3])
    """

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _ShapeNorm(Module):
    """What RMSNorm and LayerNorm share: normalization over the trailing
    ``normalized_shape`` dims, with an optional element-wise ``weight`` of that shape, and
    the same repr. LayerNorm adds its ``bias`` after ``weight`` (torch's parameter order)."""

    def __init__(self, normalized_shape, eps, elementwise_affine, device, dtype) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Resets ``weight`` to 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSNorm(_ShapeNorm):
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims, then the
    element-wise ``weight`` (with ``elementwise_affine``), as ``torch.nn.RMSNorm``; ``eps``
    None means the input dtype's machine epsilon.

    >>> norm = clgrad.nn.RMSNorm(2)
    >>> norm
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> norm(clgrad.tensor([[3.0, 4.0]]))
    tensor([[0.8485, 1.1314]], grad_fn=<MulBackward0>)
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
    ) -> None:
        super().__init__(normalized_shape, eps, elementwise_affine, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        """``rms_norm(x, normalized_shape, weight, eps)``."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)


class LayerNorm(_ShapeNorm):
    """Layer normalization, as ``torch.nn.LayerNorm``: normalizes each sample over its last
    ``len(normalized_shape)`` dims (which must equal ``normalized_shape``) to zero mean and
    unit (biased) variance, then applies the element-wise ``weight`` and ``bias`` of shape
    ``normalized_shape`` (with ``elementwise_affine``).

    >>> ln = clgrad.nn.LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> [round(v, 4) for v in ln(clgrad.tensor([[0.0, 1.0, 2.0, 3.0]]))[0].tolist()]
    [-1.3416, -0.4472, 0.4472, 1.3416]
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
    ) -> None:
        super().__init__(normalized_shape, eps, elementwise_affine, device, dtype)
        if elementwise_affine and bias:
            self.bias = Parameter(zeros(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Resets ``weight`` to 1 and ``bias`` to 0."""
        super().reset_parameters()
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """``layer_norm(input, normalized_shape, weight, bias, eps)``."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, bias={self.bias is not None}"


class GroupNorm(Module):
    """Group normalization, as ``torch.nn.GroupNorm``: splits the C channels of ``(N, C, *)``
    inputs into ``num_groups`` groups, normalizes each sample's group (with the other dims) to
    zero mean and unit variance, then applies the per-channel ``weight`` and ``bias``.

    >>> gn = clgrad.nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> gn(clgrad.arange(16.0).reshape(2, 4, 2)).shape
    clgrad.Size([2, 4, 2])
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        kw = {"device": device, "dtype": dtype}
        if affine:
            self.weight = Parameter(ones(num_channels, **kw))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(zeros(num_channels, **kw))
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        """``group_norm(input, num_groups, weight, bias, eps)``."""
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(_NormBase):
    _n = 1
    _version = 2  # as PyTorch's _NormBase

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, **kw))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(zeros(num_features, **kw))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **kw))
            self.register_buffer("running_var", ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=D.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    # as the batch norms (PyTorch's _NormBase, which both derive from)
    reset_running_stats = _BatchNorm.reset_running_stats
    reset_parameters = _BatchNorm.reset_parameters

    def forward(self, input: Tensor) -> Tensor:
        """``instance_norm`` of the input (an unbatched one gets a batch of 1): its own
        statistics when training or not tracking, the running ones otherwise."""
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        fdim = input.ndim - n - 1
        if input.shape[fdim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={fdim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[fdim]}."
                )
            warnings.warn(
                f"input's size at dim={fdim} does not match num_features. You can silence this "
                "warning by not passing in num_features, which is not used because affine=False",
                UserWarning,
                stacklevel=2,
            )
        unbatched = input.ndim == n + 1
        x = input.unsqueeze(0) if unbatched else input
        y = F.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return y.squeeze(0) if unbatched else y

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``(N, C, L)`` or ``(C, L)`` inputs, as
    ``torch.nn.InstanceNorm1d``: each channel of each sample normalized over its length
    (``affine`` and ``track_running_stats`` off by default, as in PyTorch).

    >>> clgrad.nn.InstanceNorm1d(2)(clgrad.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """

    _n = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` or ``(C, H, W)`` inputs, as
    ``torch.nn.InstanceNorm2d``.

    >>> clgrad.nn.InstanceNorm2d(3, affine=True)(clgrad.rand(2, 3, 4, 4)).shape
    clgrad.Size([2, 3, 4, 4])
    """

    _n = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs, as
    ``torch.nn.InstanceNorm3d``.

    >>> clgrad.nn.InstanceNorm3d(3)(clgrad.rand(3, 2, 2, 2)).shape
    clgrad.Size([3, 2, 2, 2])
    """

    _n = 3


class LocalResponseNorm(Module):
    """Local response normalization across channels, as ``torch.nn.LocalResponseNorm`` (see
    ``clgrad.nn.functional.local_response_norm``).

    >>> clgrad.nn.LocalResponseNorm(2)(clgrad.ones(1, 4, 3)).shape
    clgrad.Size([1, 4, 3])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        """``local_response_norm(input, size, alpha, beta, k)``."""
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_windows(channels: int, size: int):
    """``(forward, backward)``: 0/1 matrices over the channels, row ``c`` picking the squares
    torch's legacy CrossMapLRN2d sums into channel ``c``'s scale (its running sum, which keeps
    channel 0 in every window past the first ``size // 2 + 1``) and the ratios its backward sums
    for channel ``c`` (the centred window)."""
    pre_pad = int((size - 1) / 2 + 1)
    fwd = np.zeros((channels, channels))
    fwd[0, : min(pre_pad, channels)] = 1
    for c in range(1, channels):
        fwd[c] = fwd[c - 1]
        if c < channels - pre_pad + 1:
            fwd[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            fwd[c, c - pre_pad] -= 1
    inverse_pre_pad = int(size - (size - 1) / 2)
    bwd = np.zeros((channels, channels))
    for c in range(channels):
        lo, hi = c - inverse_pre_pad, c - inverse_pre_pad + size - 1
        bwd[c, max(lo, 0) : max(min(hi, channels - 1) + 1, 0)] = 1
    return fwd, bwd


def _mix_channels(m, x):
    """``sum_j m[c, j] * x[:, j]`` for each channel ``c`` of the ``(N, C, H, W)`` tensor ``x``."""
    n, c, h, w = x.shape
    return (m @ x.reshape(n, c, h * w)).reshape(n, c, h, w)


class _CrossMapLRN2dFunction(Function):
    """torch's legacy ``_functions.CrossMapLRN2d``: ``input * scale ** -beta``, ``scale`` being
    ``k + alpha / size`` times a running sum of squares over the channels, and its backward
    formula (which assumes centred windows), both in Tensor ops."""

    node_name = "CrossMapLRN2dBackward"

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        fwd, bwd = _cross_map_windows(input.shape[1], size)
        fwd = tensor(fwd, dtype=input.dtype, device=input.device)
        scale = _mix_channels(fwd, input * input) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.bwd = tensor(bwd, dtype=input.dtype, device=input.device)
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        accum = _mix_channels(ctx.bwd, grad_output * output / scale)
        ratio = 2 * ctx.alpha * ctx.beta / ctx.size
        grad_input = scale.pow(-ctx.beta) * grad_output - input * accum * ratio
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel local response normalization of ``(N, C, H, W)`` inputs,
    as ``torch.nn.CrossMapLRN2d``: its windows (a running sum that differs from
    ``LocalResponseNorm``'s past the first channels) and its backward formula.

    >>> clgrad.nn.CrossMapLRN2d(3, alpha=1.0, beta=1.0, k=1.0)(clgrad.ones(1, 2, 1, 1)).flatten()
    tensor([0.6000, 0.6000])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        """The normalized input (see the class)."""
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _LazyNorm(LazyModuleMixin):
    """The lazy batch and instance norms: ``num_features`` from the first input's channel dim,
    then ``weight``/``bias`` (``affine``) and the running statistics (``track_running_stats``)
    materialized and reset."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        # no affine, no statistics: nothing to make that the placeholders below replace
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = {"device": device, "dtype": dtype}
        if affine:
            self.weight = UninitializedParameter(**kw)
            if bias:
                self.bias = UninitializedParameter(**kw)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**kw)
            self.running_var = UninitializedBuffer(**kw)
            self.num_batches_tracked = tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self) -> None:
        """Resets as the norm does, once the parameters and statistics have a shape."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """``num_features`` from the input's channel dim (dim 1, or dim 0 of an unbatched
        instance norm's input); set too where a state dict gave the shapes."""
        n = getattr(self, "_n", None)  # an instance norm's spatial dims
        self.num_features = input.shape[0 if n is not None and input.ndim == n + 1 else 1]
        if not self.has_uninitialized_params():
            return
        with no_grad():
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None:
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, _BatchNorm):
    """A ``BatchNorm1d`` whose ``num_features`` is read off its first input, as
    ``torch.nn.LazyBatchNorm1d``: it becomes a ``BatchNorm1d`` then (``LazyModuleMixin``).

    >>> bn = clgrad.nn.LazyBatchNorm1d()
    >>> bn.running_mean
    <UninitializedBuffer>
    >>> bn(clgrad.tensor([[1.0, 2.0], [3.0, 6.0]])).shape, bn.running_mean
    (clgrad.Size([2, 2]), tensor([0.2000, 0.4000]))
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNorm, _BatchNorm):
    """A ``BatchNorm2d`` whose ``num_features`` is read off its first input, as
    ``torch.nn.LazyBatchNorm2d``: it becomes a ``BatchNorm2d`` then.

    >>> bn = clgrad.nn.LazyBatchNorm2d()
    >>> bn(clgrad.ones(2, 3, 4, 4)).shape, bn
    (clgrad.Size([2, 3, 4, 4]), BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True))
    """  # noqa: E501  (a doctest's output line)

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNorm, _BatchNorm):
    """A ``BatchNorm3d`` whose ``num_features`` is read off its first input, as
    ``torch.nn.LazyBatchNorm3d``: it becomes a ``BatchNorm3d`` then.

    >>> clgrad.nn.LazyBatchNorm3d()(clgrad.ones(2, 3, 2, 2, 2)).shape
    clgrad.Size([2, 3, 2, 2, 2])
    """

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNorm, _InstanceNorm):
    """An ``InstanceNorm1d`` whose ``num_features`` is read off its first input, as
    ``torch.nn.LazyInstanceNorm1d`` (``affine`` and ``track_running_stats`` on by default, as
    there): it becomes an ``InstanceNorm1d`` then.

    >>> norm = clgrad.nn.LazyInstanceNorm1d()
    >>> norm(clgrad.tensor([[[1.0, 3.0], [0.0, 4.0]]])).shape, norm.weight.shape
    (clgrad.Size([1, 2, 2]), clgrad.Size([2]))
    """

    cls_to_become = InstanceNorm1d
    _n = 1


class LazyInstanceNorm2d(_LazyNorm, _InstanceNorm):
    """An ``InstanceNorm2d`` whose ``num_features`` is read off its first input, as
    ``torch.nn.LazyInstanceNorm2d``: it becomes an ``InstanceNorm2d`` then.

    >>> clgrad.nn.LazyInstanceNorm2d()(clgrad.rand(2, 3, 4, 4)).shape
    clgrad.Size([2, 3, 4, 4])
    """

    cls_to_become = InstanceNorm2d
    _n = 2


class LazyInstanceNorm3d(_LazyNorm, _InstanceNorm):
    """An ``InstanceNorm3d`` whose ``num_features`` is read off its first input, as
    ``torch.nn.LazyInstanceNorm3d``: it becomes an ``InstanceNorm3d`` then.

    >>> clgrad.nn.LazyInstanceNorm3d()(clgrad.rand(2, 3, 2, 2, 2)).shape
    clgrad.Size([2, 3, 2, 2, 2])
    """

    cls_to_become = InstanceNorm3d
    _n = 3


class _SyncBatchNormFunction(Function):
    """Batch normalization over the batch of every rank of ``group``: each rank's per-channel
    count, mean and sum of squared deviations are gathered and combined exactly (Chan et al.'s
    parallel variance: no cancellation), and backward all-reduces the two per-channel sums the
    input's gradient needs. ``weight`` and ``bias`` get this rank's gradients, as PyTorch's:
    DistributedDataParallel averages them."""

    node_name = "SyncBatchNormBackward"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        c = x.shape[1]
        dims = (0, *range(2, x.ndim))
        count = x.numel() // c
        mean = x.mean(dims)
        m2 = (x - _per_channel(mean, x.ndim)).square().sum(dims)
        local = cat([x.new_full((1,), float(count)), mean, m2])
        stats = local.new_empty((dist.get_world_size(group), 2 * c + 1))
        dist.all_gather_into_tensor(stats, local, group)
        counts, means, m2s = stats[:, :1], stats[:, 1 : c + 1], stats[:, c + 1 :]
        total = counts.sum()
        global_mean = (counts * means).sum(0) / total
        global_m2 = (m2s + counts * (means - global_mean).square()).sum(0)
        var = global_m2 / total
        invstd = (var + eps).rsqrt()
        n = int(total.item())
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(global_mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (momentum * n / max(n - 1, 1)))
        ctx.save_for_backward(x, weight, global_mean, invstd)
        ctx.count, ctx.group, ctx.has_bias = n, group, bias is not None
        y = (x - _per_channel(global_mean, x.ndim)) * _per_channel(invstd, x.ndim)
        if weight is not None:
            y = y * _per_channel(weight, x.ndim)
        if bias is not None:
            y = y + _per_channel(bias, x.ndim)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        dims = (0, *range(2, x.ndim))
        xhat = (x - _per_channel(mean, x.ndim)) * _per_channel(invstd, x.ndim)
        sum_dy = grad.sum(dims)
        sum_dy_xhat = (grad * xhat).sum(dims)
        sums = cat([sum_dy, sum_dy_xhat])
        dist.all_reduce(sums, group=ctx.group)
        c = x.shape[1]
        mean_dy = _per_channel(sums[:c] / ctx.count, x.ndim)
        mean_dy_xhat = _per_channel(sums[c:] / ctx.count, x.ndim)
        scale = invstd if weight is None else invstd * weight
        grad_input = (grad - mean_dy - xhat * mean_dy_xhat) * _per_channel(scale, x.ndim)
        grad_weight = sum_dy_xhat if weight is not None else None
        grad_bias = sum_dy if ctx.has_bias else None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


def _per_channel(v, ndim):
    """A per-channel vector shaped to broadcast over dim 1 of an ``ndim``-dim input."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics cover the batch of every process of a
    ``clgrad.distributed`` group, as ``torch.nn.SyncBatchNorm``: in training with an initialized
    group of more than one rank, each channel's mean and variance are those of the union of
    the ranks' batches (gathered exactly), and so are the input's gradients; otherwise it is
    a batch norm of the local batch. Inputs are ``(N, C, *)`` on any device (PyTorch takes
    GPU inputs only). ``convert_sync_batchnorm`` swaps a model's batch norms for these.

    >>> bn = clgrad.nn.SyncBatchNorm(3)
    >>> bn(clgrad.ones(4, 3, 2)).shape
    clgrad.Size([4, 3, 2])
    >>> model = clgrad.nn.Sequential(clgrad.nn.Conv2d(1, 2, 3), clgrad.nn.BatchNorm2d(2))
    >>> clgrad.nn.SyncBatchNorm.convert_sync_batchnorm(model)[1]
    SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group=None,
        device: Device | str | None = None,
        dtype: D.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        """The batch norm of the group's whole batch when training with several ranks; else
        ``BatchNorm``'s."""
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        sync = (
            self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1
        )
        if not sync:
            return super().forward(input)
        if input.shape[1] != self.num_features:
            raise RuntimeError(
                f"running_mean should contain {input.shape[1]} elements not {self.num_features}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average
                factor = 1.0 / float(self.num_batches_tracked.item())
        return _SyncBatchNormFunction.apply(
            input,
            self.weight,
            self.bias,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.eps,
            factor,
            self.process_group,
        )

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every batch norm in it (itself included) replaced by a
        ``SyncBatchNorm`` that shares its parameters and running statistics, as PyTorch's."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
