"""clgrad.nn.utils.parametrizations: weight normalization as a parametrization, as
torch.nn.utils.parametrizations (state dict keys ``parametrizations.weight.original0`` (g)
and ``original1`` (v), as PyTorch's)."""

from __future__ import annotations

from ...tensor import Tensor
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["weight_norm"]


def _norm_except_dim(v: Tensor, dim: int | None) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim`` (kept with size 1; None: all dims): the
    vector norm, whose gradient is 0 at a zero ``v`` (a sqrt of the sum of squares: NaN)."""
    if dim is None or dim == -1:
        return v.norm(2)
    dims = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return v.norm(2, dims, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int | None) -> Tensor:
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrizes ``module.<name>`` as ``g * v / ||v||`` (the norm over every dim but
    ``dim``; None: the whole tensor), with ``g`` and ``v`` the new parameters
    ``parametrizations.<name>.original0`` and ``original1``, as
    ``torch.nn.utils.parametrizations.weight_norm``.

    >>> layer = clgrad.nn.utils.parametrizations.weight_norm(clgrad.nn.Linear(3, 2))
    >>> sorted(layer.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    >>> layer.parametrizations.weight.original0.shape
    clgrad.Size([2, 1])
    """
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
