"""Activation modules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ...tensor import Tensor


class ReLU(Module):
    """Applies the rectified linear unit ``max(0, x)`` element-wise, as ``torch.nn.ReLU``
    (in place on the input with ``inplace=True``). Any input shape; the output has the same.

    >>> clgrad.nn.ReLU()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0., 0., 3.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``relu(input)``."""
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU6(ReLU):
    """Applies ``min(max(0, x), 6)`` element-wise, as ``torch.nn.ReLU6``.

    >>> clgrad.nn.ReLU6()(clgrad.tensor([-2.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``relu6(input)``."""
        return F.relu6(input, self.inplace)


class LeakyReLU(Module):
    """Applies ``x`` for ``x > 0`` and ``negative_slope * x`` otherwise, element-wise, as
    ``torch.nn.LeakyReLU``.

    >>> clgrad.nn.LeakyReLU(0.1)(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.2000, 3.0000])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``leaky_relu(input, negative_slope)``."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """Applies the exponential linear unit, ``x`` for ``x > 0`` and ``alpha * (exp(x) - 1)``
    otherwise, element-wise, as ``torch.nn.ELU``.

    >>> clgrad.nn.ELU()(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.8647, 3.0000])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``elu(input, alpha)``."""
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """Clamps the input element-wise into ``[min_val, max_val]``, as ``torch.nn.Hardtanh``.

    >>> clgrad.nn.Hardtanh()(clgrad.tensor([-2.0, 0.5, 3.0]))
    tensor([-1.0000, 0.5000, 1.0000])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``hardtanh(input, min_val, max_val)``."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class GELU(Module):
    """Applies the Gaussian error linear unit ``x * Phi(x)`` element-wise (``Phi`` the standard
    normal CDF; ``approximate="tanh"`` uses the tanh approximation), as ``torch.nn.GELU``.

    >>> clgrad.nn.GELU()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.0455, 0.0000, 2.9960])
    """

    def __init__(self, approximate: Literal["none", "tanh"] = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        """``gelu(input, approximate)``."""
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """Applies the sigmoid linear unit (swish) ``x * sigmoid(x)`` element-wise, as
    ``torch.nn.SiLU``.

    >>> clgrad.nn.SiLU()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.2384, 0.0000, 2.8577])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``silu(input)``."""
        return F.silu(input)


class Tanh(Module):
    """Applies the hyperbolic tangent element-wise, as ``torch.nn.Tanh``.

    >>> clgrad.nn.Tanh()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.9640, 0.0000, 0.9951])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``tanh(input)``."""
        return F.tanh(input)


class Sigmoid(Module):
    """Applies the logistic sigmoid ``1 / (1 + exp(-x))`` element-wise, as
    ``torch.nn.Sigmoid``.

    >>> clgrad.nn.Sigmoid()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1192, 0.5000, 0.9526])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``sigmoid(input)``."""
        return F.sigmoid(input)


class LogSigmoid(Module):
    """Applies ``log(sigmoid(x))`` element-wise (computed stably), as ``torch.nn.LogSigmoid``.

    >>> clgrad.nn.LogSigmoid()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-2.1269, -0.6931, -0.0486])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``logsigmoid(input)``."""
        return F.logsigmoid(input)


class Softplus(Module):
    """Applies ``log(1 + exp(beta * x)) / beta`` element-wise, and ``x`` itself where
    ``beta * x > threshold``, as ``torch.nn.Softplus``.

    >>> clgrad.nn.Softplus()(clgrad.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1269, 0.6931, 3.0486])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        """``softplus(input, beta, threshold)``."""
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _DimModule(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """Applies ``exp(x) / sum(exp(x))`` along ``dim``, so that the values along it are in
    [0, 1] and sum to 1, as ``torch.nn.Softmax`` (``dim=None`` picks PyTorch's legacy implicit
    dim, with its deprecation warning).

    >>> probs = clgrad.nn.Softmax(dim=1)(clgrad.tensor([[1.0, 2.0, 3.0]]))
    >>> probs
    tensor([[0.0900, 0.2447, 0.6652]])
    >>> probs.sum().item()
    1.0
    """

    def forward(self, input: Tensor) -> Tensor:
        """``softmax(input, dim)``."""
        return F.softmax(input, self.dim)


class Softmin(_DimModule):
    """Applies ``softmax(-x)`` along ``dim``, as ``torch.nn.Softmin``.

    >>> clgrad.nn.Softmin(dim=0)(clgrad.tensor([1.0, 2.0, 3.0]))
    tensor([0.6652, 0.2447, 0.0900])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``softmin(input, dim)``."""
        return F.softmin(input, self.dim)


class LogSoftmax(_DimModule):
    """Applies ``log(softmax(x))`` along ``dim`` (computed stably), as ``torch.nn.LogSoftmax``.

    >>> clgrad.nn.LogSoftmax(dim=0)(clgrad.tensor([1.0, 2.0, 3.0]))
    tensor([-2.4076, -1.4076, -0.4076])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``log_softmax(input, dim)``."""
        return F.log_softmax(input, self.dim)
