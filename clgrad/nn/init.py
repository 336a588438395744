"""Weight initialization, as torch.nn.init: every function fills its tensor in place, under
no_grad, on the tensor's own device (random numbers from clgrad's seeded generator)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..autograd.grad_mode import no_grad
from ..ops.creation import rand, randn

if TYPE_CHECKING:
    from ..ops.creation import Generator
    from ..tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
    "orthogonal_",
    "dirac_",
    "sparse_",
]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scaling gain for weights feeding ``nonlinearity``, from PyTorch's table:
    1 for linear, convolution and sigmoid, 5/3 for tanh, sqrt(2) for relu,
    sqrt(2 / (1 + slope ** 2)) for leaky_relu (``param`` is the slope, 0.01 by default) and 3/4
    for selu, as ``torch.nn.init.calculate_gain``.

    >>> clgrad.nn.init.calculate_gain("relu")
    1.4142135623730951
    >>> clgrad.nn.init.calculate_gain("tanh")
    1.6666666666666667
    """
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    )
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _float_dt(tensor):
    from .. import dtypes as D

    return D.accumulation(tensor.dtype)


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fills ``tensor`` in place with values drawn from the uniform distribution U(a, b) and
    returns it, as ``torch.nn.init.uniform_``.

    >>> w = clgrad.nn.init.uniform_(clgrad.empty(2, 3), -1.0, 1.0)
    >>> w.shape, bool(((w >= -1) & (w < 1)).all())
    (clgrad.Size([2, 3]), True)
    """
    with no_grad():
        u = rand(tensor.shape, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        return tensor.copy_(u * (b - a) + a)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fills ``tensor`` in place with values drawn from the normal distribution N(mean, std**2)
    and returns it, as ``torch.nn.init.normal_``.

    >>> _ = clgrad.manual_seed(0)
    >>> w = clgrad.nn.init.normal_(clgrad.empty(1000), mean=3.0, std=0.1)
    >>> round(w.mean().item(), 1)
    3.0
    """
    with no_grad():
        z = randn(tensor.shape, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        return tensor.copy_(z * std + mean)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fills ``tensor`` in place with values drawn from the normal distribution N(mean, std**2)
    truncated to ``[a, b]`` (by inverting the normal CDF of a uniform draw), and returns it, as
    ``torch.nn.init.trunc_normal_``.

    >>> w = clgrad.nn.init.trunc_normal_(clgrad.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> w.min().item() >= -0.5, w.max().item() <= 0.5
    (True, True)
    """
    with no_grad():

        def cdf(x):
            return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

        lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
        u = rand(tensor.shape, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        u = (u * (hi - lo) + lo) * 2 - 1
        u = u.clamp(-1 + 1e-7, 1 - 1e-7)
        # erfinv by Newton's method on erf (a few steps from a good start)
        x = u * (math.sqrt(math.pi) / 2)
        for _ in range(8):
            x = x - (x.erf() - u) / ((-(x * x)).exp() * (2 / math.sqrt(math.pi)))
        return tensor.copy_((x * (std * math.sqrt(2.0)) + mean).clamp(a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills ``tensor`` in place with the value ``val`` and returns it, as
    ``torch.nn.init.constant_``.

    >>> clgrad.nn.init.constant_(clgrad.empty(3), 0.5)
    tensor([0.5000, 0.5000, 0.5000])
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` in place with ones and returns it, as ``torch.nn.init.ones_``.

    >>> clgrad.nn.init.ones_(clgrad.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` in place with zeros and returns it, as ``torch.nn.init.zeros_``.

    >>> clgrad.nn.init.zeros_(clgrad.empty(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fills the 2-d ``tensor`` in place with the identity matrix (ones on the main diagonal,
    zeros elsewhere; it need not be square) and returns it, as ``torch.nn.init.eye_``.

    >>> clgrad.nn.init.eye_(clgrad.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..ops.creation import eye

    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fills ``tensor`` in place with Glorot uniform values, U(-b, b) with
    ``b = gain * sqrt(6 / (fan_in + fan_out))``, and returns it, as
    ``torch.nn.init.xavier_uniform_``.

    >>> w = clgrad.nn.init.xavier_uniform_(clgrad.empty(3, 5))
    >>> w.abs().max().item() <= (6 / 8) ** 0.5
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fills ``tensor`` in place with Glorot normal values, N(0, std**2) with
    ``std = gain * sqrt(2 / (fan_in + fan_out))``, and returns it, as
    ``torch.nn.init.xavier_normal_``.

    >>> clgrad.nn.init.xavier_normal_(clgrad.empty(3, 5)).shape
    clgrad.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: Literal["fan_in", "fan_out"] = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """Fills ``tensor`` in place with He uniform values, U(-b, b) with
    ``b = gain * sqrt(3 / fan)`` (``gain = calculate_gain(nonlinearity, a)``, ``fan`` the
    fan-in or fan-out per ``mode``), and returns it, as ``torch.nn.init.kaiming_uniform_``.
    Tensors with a zero-size dim are left as they are.

    >>> w = clgrad.nn.init.kaiming_uniform_(clgrad.empty(4, 6), nonlinearity="relu")
    >>> w.abs().max().item() <= 2 ** 0.5 * (3 / 6) ** 0.5
    True
    """
    if 0 in tuple(tensor.shape):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: Literal["fan_in", "fan_out"] = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """Fills ``tensor`` in place with He normal values, N(0, std**2) with
    ``std = gain / sqrt(fan)`` (``gain = calculate_gain(nonlinearity, a)``, ``fan`` the fan-in or
    fan-out per ``mode``), and returns it, as ``torch.nn.init.kaiming_normal_``. Tensors with a
    zero-size dim are left as they are.

    >>> _ = clgrad.manual_seed(0)
    >>> w = clgrad.nn.init.kaiming_normal_(clgrad.empty(200, 50), nonlinearity="relu")
    >>> round(w.std().item(), 1)
    0.2
    """
    if 0 in tuple(tensor.shape):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fills ``tensor`` (2 or more dims: the trailing ones are flattened) in place with a
    (semi-)orthogonal matrix times ``gain`` and returns it, as ``torch.nn.init.orthogonal_``:
    the Q of a normal matrix's QR decomposition, its columns' signs fixed by R's diagonal.

    >>> _ = clgrad.manual_seed(0)
    >>> w = clgrad.nn.init.orthogonal_(clgrad.empty(3, 5))
    >>> bool(((w @ w.T) - clgrad.eye(3)).abs().max() < 1e-5)
    True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from ..ops.decomp import qr

    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flat = randn(rows, cols, dtype=_float_dt(tensor), device=tensor.device, generator=generator)
        if rows < cols:
            flat = flat.T
        q, r = qr(flat)
        q = q * r.diagonal().sign()  # unique: R's diagonal made positive
        if rows < cols:
            q = q.T
        return tensor.copy_(q.reshape(tensor.shape) * gain)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills the 3-, 4- or 5-dim ``tensor`` (a convolution's weight) in place with the Dirac
    delta, so that the convolution keeps its input's channels (in each of ``groups``), and
    returns it, as ``torch.nn.init.dirac_``.

    >>> clgrad.nn.init.dirac_(clgrad.empty(2, 2, 3))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]],
    <BLANKLINE>
            [[0., 0., 0.],
             [0., 1., 0.]]])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    with no_grad():
        tensor.zero_()
        centre = tuple(n // 2 for n in sizes[2:])
        for g in range(groups):
            for d in range(min(out_per_group, sizes[1])):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fills the 2-dim ``tensor`` in place with N(0, std**2) values, a ``sparsity`` fraction of
    each column's rows set to 0, and returns it, as ``torch.nn.init.sparse_``.

    >>> w = clgrad.nn.init.sparse_(clgrad.empty(10, 3), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        normal_(tensor, 0.0, std, generator)
        for c in range(cols):
            picked = rand(rows, generator=generator).argsort()[:zeros]
            tensor[picked.to(tensor.device), c] = 0
    return tensor


def _deprecated(fill: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``nn.init.<name>``: PyTorch's deprecated name of ``<name>_``, which it calls after a
    FutureWarning, as torch does (older programs still call ``init.xavier_uniform(w)``)."""
    new = fill.__name__
    old = new[:-1]

    def deprecated(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
            FutureWarning,
            stacklevel=2,
        )
        return fill(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = f"Deprecated: ``{new}`` after a FutureWarning, as in PyTorch."
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
