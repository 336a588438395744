"""``MultivariateNormal``, as ``torch.distributions.MultivariateNormal``: parameterized by
``loc`` and one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (its lower
Cholesky factor L, which every computation goes through: draws ``loc + L eps``, densities by a
triangular solve). Cholesky factors and solves are ``clgrad.ops.decomp``'s, so gradients reach
all three parameterizations."""

from __future__ import annotations

import math

from ..functional import broadcast_shapes
from ..ops.creation import eye
from ..ops.decomp import cholesky, inv, solve_triangular
from ..tensor import Size, Tensor
from . import constraints
from .continuous import _standard_normal
from .distribution import _NO_SHAPE, Distribution

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """``diff^T (L L^T)^-1 diff`` for each vector in ``diff`` (its batch dims broadcast)."""
    batch = broadcast_shapes(scale_tril.shape[:-2], diff.shape[:-1])
    n = diff.shape[-1]
    L = scale_tril.expand(tuple(batch) + (n, n))
    rhs = diff.expand(tuple(batch) + (n,)).unsqueeze(-1)
    return solve_triangular(L, rhs, upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    return cholesky(inv(precision))


class MultivariateNormal(Distribution):
    """The multivariate normal distribution N(``loc``, Sigma), Sigma given as
    ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its lower
    Cholesky factor), as ``torch.distributions.MultivariateNormal``.

    >>> cov = clgrad.tensor([[2.0, 0.5], [0.5, 1.0]])
    >>> d = clgrad.distributions.MultivariateNormal(clgrad.zeros(2), covariance_matrix=cov)
    >>> d.log_prob(clgrad.tensor([1.0, -1.0])), d.entropy()
    (tensor(-3.2605), tensor(3.1177))
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        (matrix,) = given
        if matrix.ndim < 2:
            name = (
                "scale_tril"
                if scale_tril is not None
                else "covariance_matrix"
                if covariance_matrix is not None
                else "precision_matrix"
            )
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        batch_shape = Size(broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        expanded = matrix.expand(tuple(batch_shape) + tuple(matrix.shape[-2:]))
        if scale_tril is not None:
            self.scale_tril = expanded
        elif covariance_matrix is not None:
            self.covariance_matrix = expanded
        else:
            self.precision_matrix = expanded
        self.loc = loc.expand(tuple(batch_shape) + (loc.shape[-1],))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = type(self).__new__(type(self))
        n = self.event_shape[0]
        new.loc = self.loc.expand(batch_shape + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in vars(self):
                setattr(new, name, vars(self)[name].expand(batch_shape + (n, n)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        n = self.event_shape[0]
        return tuple(self.batch_shape) + (n, n)

    def __getattr__(self, name):
        # the two parameterizations not given are derived on first use, as torch's lazy ones
        if name == "scale_tril":
            return self._unbroadcasted_scale_tril.expand(self._matrix_shape())
        if name == "covariance_matrix":
            L = self._unbroadcasted_scale_tril
            return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())
        if name == "precision_matrix":
            L = self._unbroadcasted_scale_tril
            identity = eye(L.shape[-1], dtype=L.dtype, device=L.device)
            L_inv = solve_triangular(L, identity.expand(L.shape), upper=False)
            return (L_inv.transpose(-2, -1) @ L_inv).expand(self._matrix_shape())
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        variance = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return variance.expand(tuple(self.batch_shape) + tuple(self.event_shape))

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        n = self.event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + mahalanobis) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        n = self.event_shape[0]
        entropy = 0.5 * n * (1.0 + math.log(2 * math.pi)) + half_log_det
        return entropy.expand(self.batch_shape) if len(self.batch_shape) else entropy
