"""clgrad.nn.utils.parametrizations: weight and spectral normalization and orthogonal matrices
as parametrizations, as torch.nn.utils.parametrizations (state dict keys as PyTorch's:
``parametrizations.weight.original0`` (g) and ``original1`` (v); ``parametrizations.weight.
original`` and the power method's ``parametrizations.weight.0._u`` / ``_v``, or the orthogonal
trivialization's ``parametrizations.weight.0.base``)."""

from __future__ import annotations

from enum import Enum, auto

from ... import dtypes as D
from ...autograd.grad_mode import no_grad
from ...ops import decomp as DC
from ...ops.creation import eye, randn
from ...ops.movement import cat
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v: Tensor, dim: int | None) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim`` (kept with size 1; None or -1: all dims),
    as PyTorch's ``norm_except_dim``: the vector norm, whose gradient is 0 at a zero ``v`` (a
    sqrt of the sum of squares: NaN). A vector's norm along its one dim is its modulus."""
    if dim is None or dim == -1:
        return v.norm(2)
    if not -v.ndim <= dim < v.ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-v.ndim}, {v.ndim - 1}], "
            f"but got {dim})"
        )
    dims = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return v.norm(2, dims, keepdim=True) if dims else v.abs()


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

    A state dict of the older ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) loads
    into it, as into PyTorch's.
    """
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, *_):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


def _weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix with dim ``dim`` as its rows (the rest flattened; a vector is one
    column)."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.reshape(weight.shape[0], -1)


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
    # a transposed convolution's output channels are its weight's dim 1 (subclasses and the
    # lazy ones too)
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


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


def _is_orthogonal(Q: Tensor) -> bool:
    """Whether ``Q^T Q = I`` for every matrix in ``Q``, to PyTorch's tolerance."""
    n, k = Q.shape[-2], Q.shape[-1]
    identity = eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * D.finfo(Q.dtype).eps
    return bool((Q.mT @ Q).allclose(identity, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The ``Q`` of ``A = QR`` (``A`` tall) with ``R``'s diagonal made non-negative: unique,
    so the same ``A`` always gives the same ``Q`` (PyTorch's, through geqrf as its)."""
    X, tau = DC.geqrf(A)
    Q = DC.householder_product(X, tau)
    # X's diagonal is R's
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """An orthogonal parametrization's map (``orthogonal``), as torch's: ``right_inverse``
    raises NotImplementedError for the matrix_exp and cayley maps without the trivialization
    (which have no inverse), which registration takes as the identity."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            # set by right_inverse, which registration calls: a buffer, so in the state dict
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:  # a wide matrix: its transpose's columns are made orthonormal
            X = X.mT
            n, k = k, n
        if self.orthogonal_map is _OrthMaps.householder:
            A = X.tril(-1)
            # the tau that makes each reflector orthogonal (2 / |v|^2, v's leading 1 implicit)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = DC.householder_product(A, tau)
            # X's diagonal (+-1) picks each column's sign; not trained, hence detached
            Q = Q * X.detach().diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            # a skew-symmetric A from the lower triangle (n k - k(k-1)/2 parameters),
            # padded to a square with zero columns when X is tall
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map is _OrthMaps.matrix_exp:
                Q = DC.matrix_exp(A)
            else:  # the Cayley map (I + A/2)(I - A/2)^-1, as PyTorch computes it
                identity = eye(n, dtype=A.dtype, device=A.device)
                Q = DC.solve(identity - 0.5 * A, identity + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """The original that gives ``Q`` (orthogonalized first if it is not): with the
        trivialization, ``Q`` itself becomes ``base`` and the original is ``-I`` (where every
        map gives the identity); without it, the reflectors of ``Q``'s QR (householder
        only)."""
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        if "base" not in self._buffers and self.orthogonal_map is not _OrthMaps.householder:
            raise NotImplementedError(
                "It is not possible to assign to the matrix exponential or the Cayley "
                "parametrizations when use_trivialization=False."
            )
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        shape = tuple(Q.shape)
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if "base" not in self._buffers:  # (householder: right_inverse refused the others)
            A, tau = DC.geqrf(Q)
            # forward multiplies column i by the diagonal's sign: R's sign there, so that
            # forward gives back Q; where LAPACK skipped a reflection (tau exactly 0) the
            # implicit one is absent, so the sign flips
            sign = A.diagonal(dim1=-2, dim2=-1).sign()
            sign = sign.where(tau != 0, -sign)
            E = eye(n, k, dtype=A.dtype, device=A.device)
            A = A * (1 - E) + E * sign.unsqueeze(-2)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            # completed to a square orthogonal matrix by random columns
            N = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -I: the householder map's identity too (its diagonal signs, X = 0 below)
        return -eye(shape[-2], shape[-1], dtype=Q.dtype, device=Q.device).expand(shape).clone()


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Reparametrizes ``module.<name>`` (a matrix or a batch of them) as an orthogonal matrix:
    orthonormal columns (rows when it is wide), as
    ``torch.nn.utils.parametrizations.orthogonal``. ``orthogonal_map``: "matrix_exp" or
    "cayley" (of a skew-symmetric matrix made from the original's lower triangle), or
    "householder" (a product of reflectors); by default "matrix_exp" for a square matrix,
    "householder" otherwise. With ``use_trivialization`` the map is composed with a fixed
    orthogonal ``base`` (a buffer, ``parametrizations.<name>.0.base``), set to the current
    weight (orthogonalized by QR where it is not orthogonal, completed with random columns
    where it is not square), and the original starts at ``-I``.

    >>> layer = clgrad.nn.utils.parametrizations.orthogonal(clgrad.nn.Linear(3, 5))
    >>> sorted(layer.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.0.base', 'parametrizations.weight.original']
    >>> W = layer.weight
    >>> bool((W.T @ W).allclose(clgrad.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    return register_parametrization(module, name, orth, unsafe=True)
