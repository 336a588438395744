"""Linear layers: Identity, Linear, LazyLinear, Bilinear, Flatten, Unflatten."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

if TYPE_CHECKING:
    from ...device import Device
    from ...dtypes import dtype as DType
    from ...tensor import Tensor


def _factory(device, dtype):
    return {"device": device, "dtype": dtype}


class Identity(Module):
    """Returns its input unchanged (any arguments to the constructor are ignored), as
    ``torch.nn.Identity``: a placeholder where a layer is optional.

    >>> x = clgrad.ones(2, 3)
    >>> clgrad.nn.Identity(54, unused="ignored")(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        """Returns ``input`` itself."""
        return input


class Linear(Module):
    """Applies the affine map ``y = x @ weight.T + bias`` to the last dim of the input, as
    ``torch.nn.Linear``: input ``(*, in_features)``, output ``(*, out_features)``. ``weight``
    is ``(out_features, in_features)`` and ``bias`` ``(out_features,)`` (absent with
    ``bias=False``), both initialized from U(-1/sqrt(in_features), 1/sqrt(in_features)) as in
    PyTorch.

    >>> layer = clgrad.nn.Linear(4, 2)
    >>> layer
    Linear(in_features=4, out_features=2, bias=True)
    >>> layer(clgrad.ones(3, 4)).shape
    clgrad.Size([3, 2])
    >>> layer.weight.shape
    clgrad.Size([2, 4])
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        kw = _factory(device, dtype)
        self.weight = Parameter(empty(out_features, in_features, **kw))
        if bias:
            self.bias = Parameter(empty(out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` and ``bias`` with the default initialization."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """``linear(input, weight, bias)``."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is taken from its first input, like
    ``torch.nn.LazyLinear``: until then ``weight`` and ``bias`` are ``UninitializedParameter``
    placeholders; the first forward materializes them as ``(out_features, in_features)`` and
    ``(out_features,)`` Parameters (the same objects), initializes them as ``Linear`` does, and
    the module becomes a ``Linear`` (``LazyModuleMixin``).

    >>> layer = clgrad.nn.LazyLinear(2)
    >>> layer
    LazyLinear(in_features=0, out_features=2, bias=True)
    >>> layer(clgrad.ones(3, 5)).shape
    clgrad.Size([3, 2])
    >>> layer
    Linear(in_features=5, out_features=2, bias=True)
    """

    cls_to_become = Linear

    def __init__(
        self,
        out_features: int,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Initializes the parameters as ``Linear`` does, once they have a shape."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """``in_features`` from the input's last dim; set too where a state dict gave the
        shapes."""
        self.in_features = input.shape[-1]
        if self.has_uninitialized_params():
            with no_grad():
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class Bilinear(Module):
    """Applies the bilinear map ``y_k = x1 @ weight[k] @ x2 + bias[k]``, as
    ``torch.nn.Bilinear``: inputs ``(*, in1_features)`` and ``(*, in2_features)``, output
    ``(*, out_features)``; ``weight`` is ``(out_features, in1_features, in2_features)``, both
    parameters initialized from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    >>> layer = clgrad.nn.Bilinear(3, 4, 5)
    >>> layer(clgrad.ones(2, 3), clgrad.ones(2, 4)).shape
    clgrad.Size([2, 5])
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        kw = _factory(device, dtype)
        self.weight = Parameter(empty(out_features, in1_features, in2_features, **kw))
        if bias:
            self.bias = Parameter(empty(out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` and ``bias`` with the default initialization."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """``bilinear(input1, input2, weight, bias)``."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Flatten(Module):
    """Flattens the dims ``start_dim`` to ``end_dim`` (all but the batch dim, by default) into
    one, as ``torch.nn.Flatten``.

    >>> clgrad.nn.Flatten()(clgrad.ones(2, 3, 4)).shape
    clgrad.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        """``input.flatten(start_dim, end_dim)``."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into the shape ``unflattened_size`` (the inverse of Flatten), as
    ``torch.nn.Unflatten``.

    >>> clgrad.nn.Unflatten(1, (2, 3))(clgrad.ones(4, 6)).shape
    clgrad.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        # torch keeps the sequence as given (a list stays a list, a Size a Size: the repr shows
        # it) after checking that it holds ints
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                "unflattened_size must be a tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found element of type "
                    f"{type(elem).__name__} at pos {idx}"
                )
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        """``input.unflatten(dim, unflattened_size)``."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
