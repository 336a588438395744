"""More of torch's native top-level functions, star-imported into ``clgrad`` beside
``clgrad.aten``: the batch-norm pieces ``torch.nn.SyncBatchNorm`` is built from
(``batch_norm_stats``, ``batch_norm_elemt``, ``batch_norm_gather_stats(_with_counts)``,
``batch_norm_backward_reduce``, ``batch_norm_backward_elemt``, ``batch_norm_update_stats``),
``segment_reduce``, ``conv_tbc``, DLPack's ``to_dlpack``/``from_dlpack`` (host memory),
``matrix_rank`` (refused, as torch's), and the autocast and anomaly-mode setters PyTorch keeps
at the top level (``set_autocast_cpu_enabled``, ``set_autocast_cache_enabled``,
``set_anomaly_enabled``, ...). The ops are composed of differentiable clgrad ops, so they run
on every device and autograd reaches their inputs.

torch implements the SyncBatchNorm pieces (``batch_norm_update_stats`` aside) for CUDA only;
here they are the CUDA kernels' arithmetic on any device, their statistics in the input's
dtype (float32 for float16 input, as CUDA's accumulate type).

>>> x = clgrad.arange(6.0).reshape(2, 3)
>>> mean, invstd = clgrad.batch_norm_stats(x, 0.0)
>>> mean
tensor([1.5000, 2.5000, 3.5000])
>>> clgrad.segment_reduce(clgrad.arange(5.0), "sum", lengths=clgrad.tensor([2, 3]))
tensor([1., 9.])
"""

from __future__ import annotations

import ctypes
import math
import warnings

import numpy as np

from . import dtypes as D
from .amp import set_autocast_dtype, set_autocast_enabled
from .autograd import grad_mode
from .nn import functional as F
from .ops import autocast as _ac
from .ops.core import check_out, write_out
from .ops.creation import full, tensor
from .tensor import Tensor

__all__ = [
    "batch_norm_backward_elemt",
    "batch_norm_backward_reduce",
    "batch_norm_elemt",
    "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts",
    "batch_norm_stats",
    "batch_norm_update_stats",
    "conv_tbc",
    "from_dlpack",
    "is_autocast_cache_enabled",
    "matrix_rank",
    "segment_reduce",
    "set_anomaly_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_gpu_dtype",
    "to_dlpack",
]


# ---- the SyncBatchNorm pieces ----------------------------------------------------------------
def _channels(input: Tensor, name: str) -> tuple[int, ...]:
    """The dims batch norm reduces over: all but dim 1."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if input.dim() < 2:
        input.size(1)  # torch's IndexError for the missing channel dim
    return (0, *range(2, input.dim()))


def _per_channel(v: Tensor, input: Tensor) -> Tensor:
    """A per-channel vector shaped to broadcast against ``input``'s dim 1."""
    return v.reshape((1, -1) + (1,) * (input.dim() - 2))


def _acc(input: Tensor) -> Tensor:
    return input.float() if input.dtype is D.float16 else input


def batch_norm_stats(input: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """``torch.batch_norm_stats``: each channel's mean and ``1 / sqrt(var + eps)`` (the
    biased variance) over every dim but 1.

    >>> clgrad.batch_norm_stats(clgrad.tensor([[1.0], [3.0]]), 0.0)
    (tensor([2.]), tensor([1.]))
    """
    dims = _channels(input, "batch_norm_stats")
    x = _acc(input)
    var, mean = x.var_mean(dims, correction=0)
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(
    input: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor,
    eps: float, *, out: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """``torch.batch_norm_elemt``: ``(input - mean) * invstd * weight + bias`` per channel, in
    ``input``'s dtype (``eps`` unused, as torch's), into ``out`` where given.

    >>> x = clgrad.tensor([[1.0], [3.0]])
    >>> clgrad.batch_norm_elemt(x, None, None, *clgrad.batch_norm_stats(x, 0.0), 0.0)
    tensor([[-1.],
            [ 1.]])
    """
    _channels(input, "batch_norm_elemt")
    y = (_acc(input) - _per_channel(mean, input)) * _per_channel(invstd, input)
    if weight is not None:
        y = y * _per_channel(weight, input)
    if bias is not None:
        y = y + _per_channel(bias, input)
    if out is not None:
        args = (input, weight, bias, mean, invstd)
        check_out("batch_norm_elemt", out, args, {})
        return write_out(out, y.to(input.dtype))
    return y.to(input.dtype)


def batch_norm_gather_stats_with_counts(
    input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Tensor | None,
    running_var: Tensor | None, momentum: float, eps: float, counts: Tensor,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``torch.batch_norm_gather_stats_with_counts``: the global mean and invstd of the
    ``(world, C)`` per-process ``mean``/``invstd`` over ``counts`` elements each; updates
    ``running_mean`` and ``running_var`` (the unbiased variance) in place by ``momentum``.

    >>> mean, invstd = clgrad.tensor([[0.0], [2.0]]), clgrad.tensor([[1.0], [1.0]])
    >>> clgrad.batch_norm_gather_stats_with_counts(
    ...     clgrad.zeros(2, 1), mean, invstd, None, None, 0.1, 0.0, clgrad.tensor([2.0, 2.0]))
    (tensor([1.]), tensor([0.7071]))
    """
    if mean.dim() != 2 or invstd.shape != mean.shape:
        raise RuntimeError(
            f"batch_norm_gather_stats: expected mean and invstd of shape (world_size, C), got "
            f"{list(mean.shape)} and {list(invstd.shape)}"
        )
    n = counts.to(mean.dtype).reshape(-1, 1)
    total = n.sum(0)
    gmean = (n * mean).sum(0) / total
    var_n = (n * ((invstd * invstd).reciprocal() - eps + (mean - gmean) ** 2)).sum(0)
    out_invstd = (var_n / total + eps).rsqrt()
    if running_mean is not None or running_var is not None:
        from .autograd import no_grad

        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_((gmean * momentum).to(running_mean.dtype))
            if running_var is not None:
                unbiased = var_n / (total - 1)
                running_var.mul_(1 - momentum).add_((unbiased * momentum).to(running_var.dtype))
    return gmean, out_invstd


def batch_norm_gather_stats(
    input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Tensor | None,
    running_var: Tensor | None, momentum: float, eps: float, count: int,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``torch.batch_norm_gather_stats``: ``batch_norm_gather_stats_with_counts`` with the same
    ``count`` for every process.

    >>> clgrad.batch_norm_gather_stats(clgrad.zeros(2, 1), clgrad.tensor([[0.0], [2.0]]),
    ...     clgrad.ones(2, 1), None, None, 0.1, 0.0, 2)[0]
    tensor([1.])
    """
    counts = full((mean.shape[0],), float(count), dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(
        input, mean, invstd, running_mean, running_var, momentum, eps, counts
    )


def batch_norm_backward_reduce(
    grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor, weight: Tensor | None,
    input_g: bool, weight_g: bool, bias_g: bool,
) -> tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None]:  # fmt: skip
    """``torch.batch_norm_backward_reduce``: per channel ``sum(grad_out)``,
    ``sum(grad_out * (input - mean))``, the weight's gradient (the latter times ``invstd``)
    and the bias's (the former); each of the pairs None where its flag is False.

    >>> g, x = clgrad.ones(2, 1), clgrad.tensor([[1.0], [3.0]])
    >>> clgrad.batch_norm_backward_reduce(g, x, clgrad.tensor([2.0]), clgrad.tensor([1.0]),
    ...     None, True, True, True)
    (tensor([2.]), tensor([0.]), tensor([0.]), tensor([2.]))
    """
    dims = _channels(input, "batch_norm_backward_reduce")
    dy, x = _acc(grad_out), _acc(input)
    sum_dy = dy.sum(dims)
    sum_dy_xmu = (dy * (x - _per_channel(mean, input))).sum(dims)
    wdtype = weight.dtype if weight is not None else D.float32
    return (
        sum_dy if input_g else None,
        sum_dy_xmu if input_g else None,
        (sum_dy_xmu * invstd).to(wdtype) if weight_g else None,
        sum_dy.to(wdtype) if bias_g else None,
    )


def batch_norm_backward_elemt(
    grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor, weight: Tensor | None,
    sum_dy: Tensor, sum_dy_xmu: Tensor, count: Tensor,
) -> Tensor:  # fmt: skip
    """``torch.batch_norm_backward_elemt``: the input's gradient from the reduced
    ``sum_dy``/``sum_dy_xmu`` over ``count.sum()`` elements (``count`` per process):
    ``(grad_out - sum_dy / N - (input - mean) * invstd**2 * sum_dy_xmu / N) * invstd * weight``.

    >>> g, x = clgrad.tensor([[1.0], [0.0]]), clgrad.tensor([[1.0], [3.0]])
    >>> clgrad.batch_norm_backward_elemt(g, x, clgrad.tensor([2.0]), clgrad.tensor([1.0]),
    ...     None, clgrad.tensor([1.0]), clgrad.tensor([-1.0]), clgrad.tensor([2]))
    tensor([[0.],
            [0.]])
    """
    _channels(input, "batch_norm_backward_elemt")
    n = count.sum().to(mean.dtype)
    mu, inv = _per_channel(mean, input), _per_channel(invstd, input)
    dy, x = _acc(grad_out), _acc(input)
    g = (
        dy
        - _per_channel(sum_dy / n, input)
        - (x - mu) * inv * inv * _per_channel(sum_dy_xmu / n, input)
    )
    g = g * inv
    if weight is not None:
        g = g * _per_channel(weight, input)
    return g.to(input.dtype)


def batch_norm_update_stats(
    input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, momentum: float
) -> tuple[Tensor, Tensor]:
    """``torch.batch_norm_update_stats``: each channel's mean and biased variance; updates
    ``running_mean`` and ``running_var`` (with the unbiased variance) in place by ``momentum``.

    >>> clgrad.batch_norm_update_stats(clgrad.tensor([[1.0], [3.0]]), None, None, 0.1)
    (tensor([2.]), tensor([1.]))
    """
    dims = _channels(input, "batch_norm_update_stats")
    var, mean = input.var_mean(dims, correction=0)
    n = input.numel() // max(input.shape[1], 1)
    if running_mean is not None or running_var is not None:
        from .autograd import no_grad

        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_((mean * momentum).to(running_mean.dtype))
            if running_var is not None:
                unbiased = var * (n / (n - 1)) if n > 1 else var * math.inf
                running_var.mul_(1 - momentum).add_((unbiased * momentum).to(running_var.dtype))
    return mean, var


# ---- segment_reduce --------------------------------------------------------------------------
_SEGMENT_REDUCES = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "max", "amax": "max",
                    "min": "min", "amin": "min"}  # fmt: skip


def _segment_lengths(lengths, offsets, data: Tensor, axis: int, unsafe: bool) -> np.ndarray:
    given = lengths if lengths is not None else offsets
    if given is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if given.dtype not in (D.int32, D.int64):
        raise NotImplementedError(
            f'"_segment_reduce_lengths_cpu_kernel1" not implemented for '
            f"'{str(given.dtype).split('.')[-1].capitalize()}'"
        )
    values = given.cpu().numpy().astype(np.int64)
    if offsets is not None and lengths is None:
        values = np.diff(values, axis=-1)
    if values.ndim == 0 or data.dim() < values.ndim:
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got false.")
    if axis != values.ndim - 1:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}."
        )
    if tuple(values.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(
            f"segment_reduce(): Expected lengths' leading dims {list(values.shape[:-1])} to "
            f"match data's {list(data.shape[:axis])}"
        )
    if values.size and values.min() < 0:
        raise RuntimeError("lengths contains negative value!")
    if not unsafe and (values.sum(-1) != data.shape[axis]).any():
        raise RuntimeError(
            "segment_reduce(): Expected all rows of lengths along axis to sum to "
            "data.size(lengths.dim()-1) when !unsafe."
        )
    return values


def _segment_row(row: Tensor, lengths: np.ndarray, op: str, initial) -> Tensor:
    """``row`` (N, *rest) reduced over the consecutive segments of ``lengths`` (K,): one
    ``scatter_reduce`` of the elements the segments cover (with ``unsafe``, lengths may cover
    fewer than N, the rest left out, or run past N, cut short)."""
    k, rest = len(lengths), tuple(row.shape[1:])
    ids = np.repeat(np.arange(k), lengths)[: row.shape[0]]
    used = len(ids)
    counts_np = np.bincount(ids, minlength=k).reshape((k,) + (1,) * len(rest))
    fill = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}[op]
    out = full((k, *rest), fill, dtype=row.dtype, device=row.device)
    if not used:  # nothing covered: the identities, still in data's graph
        out = out + row[:0].sum() * 0
    else:
        index = tensor(ids, device=row.device).reshape((used,) + (1,) * len(rest))
        reduce = {"max": "amax", "min": "amin", "mean": "sum"}.get(op, op)
        out = out.scatter_reduce(
            0, index.expand(used, *rest), row[:used], reduce, include_self=False
        )
    if op == "mean":
        counts = tensor(counts_np, dtype=row.dtype, device=row.device)
        if initial is None:
            return out / counts
        return ((out + initial) / counts).where(counts != 0, float(initial))
    if initial is None:
        return out
    if op == "sum":
        return out + initial
    if op == "prod":
        return out * initial
    return out.clamp(min=initial) if op == "max" else out.clamp(max=initial)


def segment_reduce(
    data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor | None = None,
    offsets: Tensor | None = None, axis: int = 0, unsafe: bool = False, initial=None,
) -> Tensor:  # fmt: skip
    """``torch.segment_reduce``: ``data`` reduced along ``axis`` over consecutive segments
    of ``lengths`` (or between consecutive ``offsets``): ``reduce`` "sum", "mean", "max",
    "min" or "prod", an empty segment giving ``initial`` (or the reduction's identity; NaN for
    "mean"). Differentiable in ``data`` (ties of max/min share the gradient).

    >>> clgrad.segment_reduce(clgrad.tensor([1.0, 5.0, 2.0]), "max",
    ...     lengths=clgrad.tensor([2, 0, 1]))
    tensor([5., -inf, 2.])
    """
    if not isinstance(data, Tensor):
        raise TypeError(
            f"segment_reduce(): argument 'data' (position 1) must be Tensor, not "
            f"{type(data).__name__}"
        )
    op = _SEGMENT_REDUCES.get(reduce)
    if op is None:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if not data.is_floating_point():
        raise NotImplementedError(
            f"\"_segment_reduce_cpu\" not implemented for '{str(data.dtype).split('.')[-1]}'"
        )
    if data.dim() == 0:
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got false.")
    axis = axis + data.dim() if axis < 0 else axis
    values = _segment_lengths(lengths, offsets, data, axis, unsafe)
    lead = values.shape[:-1]
    if not lead:
        return _segment_row(data, values, op, initial)
    rows = data.reshape(-1, *data.shape[axis:])
    flat = values.reshape(-1, values.shape[-1])
    out = [_segment_row(rows[i], flat[i], op, initial) for i in range(len(flat))]
    from .functional import stack

    return (
        stack(out).reshape(*lead, *out[0].shape)
        if out
        else data.new_empty((*lead, values.shape[-1], *data.shape[axis + 1 :]))
    )


# ---- conv_tbc --------------------------------------------------------------------------------
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """``torch.conv_tbc``: a 1-d convolution of ``input`` (time, batch, in_channels) with
    ``weight`` (kernel width, in_channels, out_channels) and ``bias`` (out_channels), ``pad``
    steps of zeros on each side of time; the output (time', batch, out_channels).

    >>> clgrad.conv_tbc(clgrad.ones(4, 1, 2), clgrad.ones(3, 2, 1), clgrad.zeros(1)).flatten()
    tensor([6., 6.])
    """
    if not isinstance(bias, Tensor):
        raise TypeError(
            f"conv_tbc(): argument 'bias' (position 3) must be Tensor, not {type(bias).__name__}"
        )
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    time = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if time < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {time}: "
            f"[{time}, {input.shape[1]}, {weight.shape[2]}]"
        )
    if time == 0 or input.shape[1] == 0:
        zero = (input.sum() + weight.sum()) * 0
        return bias.expand(time, input.shape[1], weight.shape[2]) + zero
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous()


# ---- autocast's and anomaly mode's top-level setters -----------------------------------------
def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning,
                  stacklevel=3)  # fmt: skip


def _check_bool(name: str, arg: str, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(
            f"{name}(): argument '{arg}' (position 1) must be bool, not {type(value).__name__}"
        )


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)``, PyTorch's deprecated older name (with its
    DeprecationWarning).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.set_autocast_cpu_enabled(False)
    >>> clgrad.is_autocast_enabled("cpu")
    False
    """
    _check_bool("set_autocast_cpu_enabled", "enabled", enabled)
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    """``set_autocast_dtype("cpu", dtype)``, PyTorch's deprecated older name.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.set_autocast_cpu_dtype(clgrad.float16)
    >>> clgrad.get_autocast_dtype("cpu")
    clgrad.float16
    >>> clgrad.set_autocast_dtype("cpu", clgrad.bfloat16)  # back to the default
    """
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype) -> None:
    """``set_autocast_dtype("cuda", dtype)`` (every OpenCL device), PyTorch's deprecated older
    name.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.set_autocast_gpu_dtype(clgrad.float16)
    >>> clgrad.get_autocast_gpu_dtype()
    clgrad.float16
    """
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast's cache of cast weights is on (this thread's flag, True by default, as
    PyTorch's). clgrad keeps no such cache, so the flag changes nothing else.

    >>> clgrad.is_autocast_cache_enabled()
    True
    """
    return getattr(_ac.state, "cache_enabled", True)


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Sets the flag ``is_autocast_cache_enabled`` answers, as
    ``torch.set_autocast_cache_enabled``.

    >>> clgrad.set_autocast_cache_enabled(False)
    >>> clgrad.is_autocast_cache_enabled()
    False
    >>> clgrad.set_autocast_cache_enabled(True)
    """
    _check_bool("set_autocast_cache_enabled", "enabled", enabled)
    _ac.state.cache_enabled = enabled


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turns anomaly detection on or off for good, as ``torch.set_anomaly_enabled`` (what
    ``autograd.set_detect_anomaly`` does on entering). clgrad's anomaly mode is its NaN check,
    so ``check_nan=False`` leaves it off (torch would report it on, without the check).

    >>> clgrad.set_anomaly_enabled(True)
    >>> clgrad.is_anomaly_enabled()
    True
    >>> clgrad.set_anomaly_enabled(False)
    """
    _check_bool("set_anomaly_enabled", "enabled", enabled)
    grad_mode._set_anomaly(enabled and bool(check_nan))


# ---- matrix_rank, removed from torch ----------------------------------------------------------
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Refused, as torch's: ``torch.matrix_rank`` was removed in favour of
    ``linalg.matrix_rank``.

    >>> clgrad.matrix_rank(clgrad.eye(2))
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed.
    Please use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.
    """  # noqa: E501
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `torch.linalg.matrix_rank` function instead. "
        "The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
    )


# ---- DLPack ----------------------------------------------------------------------------------
_KDLCPU = 1
_INVALID_CAPSULE = (
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
    "once, so you might have already constructed a tensor from it once."
)


class _Capsule:
    """A bare DLPack capsule in the protocol NumPy's ``from_dlpack`` reads (host memory)."""

    def __init__(self, capsule) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (_KDLCPU, 0)


def _capsule_name_valid(obj) -> bool:
    if type(obj).__name__ != "PyCapsule":
        return False
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    return any(is_valid(obj, name) for name in (b"dltensor", b"dltensor_versioned"))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor``'s memory, as ``torch.to_dlpack`` (for ``from_dlpack``
    here, in NumPy, PyTorch or any DLPack consumer; it can be consumed once). Only host (cpu)
    tensors can be exported: an OpenCL buffer is no memory a DLPack consumer can address, so
    those raise BufferError (copying to the host would not be DLPack's shared memory; call
    ``.cpu()`` first for that).

    >>> x = clgrad.arange(3.0)
    >>> y = clgrad.from_dlpack(clgrad.to_dlpack(x))
    >>> x[0] = 7.0
    >>> y
    tensor([7., 1., 2.])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    if not tensor.device.type == "cpu":
        raise BufferError(
            f"to_dlpack: a tensor on {tensor.device} lives in an OpenCL buffer, which DLPack "
            "cannot describe; only cpu tensors can be exported (copy with .cpu() first)"
        )
    return tensor.detach().numpy().__dlpack__()


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing the memory of ``ext_tensor``: an object with ``__dlpack__`` (a NumPy
    array, a PyTorch cpu tensor, ...) or a capsule from ``to_dlpack``, as
    ``torch.from_dlpack``; on the cpu device, the memory shared. A clgrad tensor gives a tensor
    sharing its storage on its own device (BufferError if it requires grad, as torch's).
    Memory on another device (a GPU array) raises BufferError: clgrad cannot adopt it.

    >>> import numpy as np
    >>> a = np.zeros(2, np.float32)
    >>> t = clgrad.from_dlpack(a)
    >>> a[1] = 5.0
    >>> t
    tensor([0., 5.])
    """
    from .ops.creation import from_numpy

    if isinstance(ext_tensor, Tensor):
        if ext_tensor.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return ext_tensor.detach()
    if hasattr(ext_tensor, "__dlpack__"):
        device = ext_tensor.__dlpack_device__()
        if int(device[0]) != _KDLCPU:
            raise BufferError(
                f"from_dlpack: memory of DLPack device type {int(device[0])} cannot be adopted; "
                "clgrad imports host (kDLCPU) memory only"
            )
        return from_numpy(np.from_dlpack(ext_tensor))
    if not _capsule_name_valid(ext_tensor):
        raise RuntimeError(_INVALID_CAPSULE)
    return from_numpy(np.from_dlpack(_Capsule(ext_tensor)))
