"""clgrad.nn.utils.parametrizations: weight and spectral normalization as parametrizations, as
torch.nn.utils.parametrizations (state dict keys as PyTorch's: ``parametrizations.weight.
original0`` (g) and ``original1`` (v); ``parametrizations.weight.original`` and the power
method's ``parametrizations.weight.0._u`` / ``_v``)."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["spectral_norm", "weight_norm"]


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


def _weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix with dim ``dim`` as its rows (the rest flattened)."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.flatten(1)


def _power_iteration(
    weight_mat: Tensor, u: Tensor, v: Tensor, steps: int, eps: float, u_first: bool
) -> None:
    """``steps`` rounds of the power method on ``weight_mat``, updating ``u`` and ``v`` in place
    (so a module's buffers keep their estimate from one forward to the next). PyTorch's two
    APIs order a round differently: the parametrization updates u from v first, the older
    hook v from u."""
    with no_grad():
        for _ in range(steps):
            if u_first:
                u.copy_(F.normalize(weight_mat @ v, dim=0, eps=eps))
            v.copy_(F.normalize(weight_mat.mT @ u, dim=0, eps=eps))
            if not u_first:
                u.copy_(F.normalize(weight_mat @ v, dim=0, eps=eps))


def _spectral_normalized(weight_mat_of, weight: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """``weight / sigma``, with ``sigma = u^T W v`` the largest singular value's estimate; u and
    v are copied first, so that a second forward's power iteration does not change what the
    first one's graph saved (GAN training backpropagates through both)."""
    u, v = u.clone(), v.clone()
    sigma = u.dot(weight_mat_of(weight) @ v)
    return weight / sigma


def _check_spectral_args(weight: Tensor, n_power_iterations: int, dim: int) -> int:
    ndim = weight.ndim
    if dim >= ndim or dim < -ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
            f"{dim})"
        )
    if n_power_iterations <= 0:
        raise ValueError(
            "Expected n_power_iterations to be positive, but got "
            f"n_power_iterations={n_power_iterations}"
        )
    return dim % ndim


def _start_vectors(weight_mat: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    h, w = weight_mat.shape
    u = F.normalize(weight_mat.new_empty(h).normal_(0, 1), dim=0, eps=eps)
    v = F.normalize(weight_mat.new_empty(w).normal_(0, 1), dim=0, eps=eps)
    return u, v


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        self.dim = _check_spectral_args(weight, n_power_iterations, dim)
        self.eps = eps
        if weight.ndim > 1:  # (a vector is normalized exactly: nothing to estimate)
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            u, v = _start_vectors(weight_mat, eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            _power_iteration(weight_mat, self._u, self._v, 15, eps, u_first=True)  # a start

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        return _weight_matrix(weight, self.dim)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        if self.training:
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            steps = self.n_power_iterations
            _power_iteration(weight_mat, self._u, self._v, steps, self.eps, u_first=True)
        return _spectral_normalized(self._reshape_weight_to_matrix, weight, self._u, self._v)

    def right_inverse(self, value: Tensor) -> Tensor:
        # any value is its own preimage up to the scale that forward divides out
        return value


def _default_spectral_dim(module: Module) -> int:
    # a transposed convolution's output channels are its weight's dim 1
    return 1 if type(module).__name__.startswith("ConvTranspose") else 0


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Reparametrizes ``module.<name>`` as itself divided by its spectral norm (largest
    singular value), estimated by ``n_power_iterations`` steps of the power method per forward
    in training (the estimate ``_u``, ``_v`` kept as buffers, used as it is in eval), as
    ``torch.nn.utils.parametrizations.spectral_norm``; ``dim``: the weight's output dim (1 for
    transposed convolutions, else 0).

    >>> layer = clgrad.nn.utils.parametrizations.spectral_norm(clgrad.nn.Linear(4, 3))
    >>> sorted(layer.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v',
     'parametrizations.weight.original']
    >>> round(float(clgrad.linalg.matrix_norm(layer.weight, 2)), 2) <= 1.01
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_spectral_dim(module)
    parametrization = _SpectralNorm(weight, n_power_iterations, dim, eps)
    return register_parametrization(module, name, parametrization)
