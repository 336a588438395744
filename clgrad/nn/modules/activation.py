"""Activation modules."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Literal

from ...autograd.grad_mode import no_grad
from ...ops.creation import full
from .. import functional as F
from ..parameter import Parameter
from .module import Module

if TYPE_CHECKING:
    from ...device import Device
    from ...dtypes import dtype as DType
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

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        # min_value / max_value: the names before PyTorch 0.4, still taken with a warning
        for old_name, value, new_name in (("min_value", min_value, "min_val"),
                                          ("max_value", max_value, "max_val")):  # fmt: skip
            if value is not None:
                warnings.warn(
                    f"keyword argument `{old_name}` is deprecated and renamed to `{new_name}`",
                    FutureWarning,
                    stacklevel=2,
                )
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``hardtanh(input, min_val, max_val)``."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else ""
        )


class ReLU6(Hardtanh):
    """Applies ``min(max(0, x), 6)`` element-wise, as ``torch.nn.ReLU6``: a Hardtanh from 0 to
    6, as in PyTorch (``isinstance(m, nn.Hardtanh)``, ``min_val`` and ``max_val``).

    >>> clgrad.nn.ReLU6()(clgrad.tensor([-2.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input: Tensor) -> Tensor:
        """``relu6(input)``."""
        return F.relu6(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


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
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


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


class _InplaceModule(Module):
    """An activation whose only option is ``inplace`` (shown in the repr when set)."""

    _fn = "relu"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """The activation of ``input`` (in place on it with ``inplace``)."""
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(_InplaceModule):
    """Applies ``relu6(x + 3) / 6`` element-wise, as ``torch.nn.Hardsigmoid``.

    >>> clgrad.nn.Hardsigmoid()(clgrad.tensor([-4.0, 0.0, 1.5]))
    tensor([0.0000, 0.5000, 0.7500])
    """

    _fn = "hardsigmoid"

    def extra_repr(self) -> str:
        return ""  # torch's repr does not show inplace here


class Hardswish(_InplaceModule):
    """Applies ``x * relu6(x + 3) / 6`` element-wise, as ``torch.nn.Hardswish``.

    >>> clgrad.nn.Hardswish()(clgrad.tensor([1.0, 4.0]))
    tensor([0.6667, 4.0000])
    """

    _fn = "hardswish"

    def extra_repr(self) -> str:
        return ""  # torch's repr does not show inplace here


class SELU(_InplaceModule):
    """Applies the scaled exponential linear unit element-wise, as ``torch.nn.SELU``.

    >>> clgrad.nn.SELU()(clgrad.tensor([-1.0, 2.0]))
    tensor([-1.1113,  2.1014])
    """

    _fn = "selu"


class Mish(_InplaceModule):
    """Applies ``x * tanh(softplus(x))`` element-wise, as ``torch.nn.Mish``.

    >>> clgrad.nn.Mish()(clgrad.tensor([-1.0, 2.0]))
    tensor([-0.3034,  1.9440])
    """

    _fn = "mish"


class CELU(Module):
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise, as
    ``torch.nn.CELU``.

    >>> clgrad.nn.CELU(2.0)(clgrad.tensor([-1.0, 2.0]))
    tensor([-0.7869,  2.0000])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``celu(input, alpha)``."""
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softsign(Module):
    """Applies ``x / (1 + |x|)`` element-wise, as ``torch.nn.Softsign``.

    >>> clgrad.nn.Softsign()(clgrad.tensor([-3.0, 1.0]))
    tensor([-0.7500,  0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``softsign(input)``."""
        return F.softsign(input)


class Tanhshrink(Module):
    """Applies ``x - tanh(x)`` element-wise, as ``torch.nn.Tanhshrink``.

    >>> clgrad.nn.Tanhshrink()(clgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2384])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``tanhshrink(input)``."""
        return F.tanhshrink(input)


class Hardshrink(Module):
    """Applies ``x`` where ``|x| > lambd``, else 0, element-wise, as ``torch.nn.Hardshrink``.

    >>> clgrad.nn.Hardshrink()(clgrad.tensor([-1.0, 0.3, 0.6]))
    tensor([-1.0000,  0.0000,  0.6000])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        """``hardshrink(input, lambd)``."""
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Module):
    """Shrinks ``x`` towards 0 by ``lambd`` element-wise, as ``torch.nn.Softshrink`` (not a
    Hardshrink, as in PyTorch: ``isinstance`` tells them apart).

    >>> clgrad.nn.Softshrink()(clgrad.tensor([-1.0, 0.3, 0.75]))
    tensor([-0.5000,  0.0000,  0.2500])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        """``softshrink(input, lambd)``."""
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Threshold(Module):
    """Applies ``x`` where ``x > threshold``, else ``value``, element-wise, as
    ``torch.nn.Threshold``.

    >>> clgrad.nn.Threshold(1.0, 9.0)(clgrad.tensor([-1.0, 2.0]))
    tensor([9., 2.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``threshold(input, threshold, value)``."""
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else ""
        )


class GLU(Module):
    """The gated linear unit ``a * sigmoid(b)`` of the two halves of the input along ``dim``,
    as ``torch.nn.GLU``.

    >>> clgrad.nn.GLU()(clgrad.ones(2, 6)).shape
    clgrad.Size([2, 3])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """``glu(input, dim)``."""
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """Applies ``x`` where ``x >= 0``, else ``weight * x``, with a learnt ``weight`` of
    ``num_parameters`` elements (1, or one per channel) initialized to ``init``, as
    ``torch.nn.PReLU``.

    >>> act = clgrad.nn.PReLU()
    >>> act
    PReLU(num_parameters=1)
    >>> act(clgrad.tensor([-2.0, 3.0]))
    tensor([-0.5000,  3.0000], grad_fn=<WhereBackward0>)
    """

    def __init__(
        self,
        num_parameters: int = 1,
        init: float = 0.25,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def reset_parameters(self) -> None:
        """Refills ``weight`` with ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        """``prelu(input, weight)``."""
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """The randomized leaky ReLU, as ``torch.nn.RReLU``: negative inputs scaled by a slope
    drawn from U(lower, upper) per element in training, by ``(lower + upper) / 2`` in eval.

    >>> clgrad.nn.RReLU(0.1, 0.3).eval()(clgrad.tensor([-3.0, 2.0]))
    tensor([-0.6000,  2.0000])
    """

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        """``rrelu(input, lower, upper, training)``."""
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else ""
        )


class Softmax2d(Module):
    """Applies softmax over the channels (dim -3) of ``(N, C, H, W)`` or ``(C, H, W)``
    inputs, as ``torch.nn.Softmax2d``.

    >>> clgrad.nn.Softmax2d()(clgrad.zeros(1, 2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``softmax(input, dim=-3)``."""
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
