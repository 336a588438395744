"""``LowRankMultivariateNormal``, as ``torch.distributions.lowrank_multivariate_normal``: a
multivariate normal whose covariance is ``W W^T + diag(D)`` for a tall ``cov_factor`` W
(n x m, m << n). Densities never form the n x n covariance: the Woodbury identity and the
matrix determinant lemma reduce them to the m x m "capacitance" ``C = I + W^T D^-1 W``."""

from __future__ import annotations

import math

from ..functional import broadcast_tensors
from ..ops.creation import eye
from ..ops.decomp import cholesky, solve_triangular
from ..tensor import Size, Tensor
from . import constraints
from .continuous import _standard_normal
from .distribution import _NO_SHAPE, Distribution
from .multivariate_normal import _batch_mahalanobis
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W^T D^-1 W``."""
    m = W.shape[-1]
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    K = Wt_Dinv @ W + eye(m, dtype=W.dtype, device=W.device)
    return cholesky(K)


def _batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``log |W W^T + D| = log |C| + log |D|`` (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(0, -2, -1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor, capacitance_tril) -> Tensor:
    """``x^T (W W^T + D)^-1 x`` through the Woodbury identity
    ``(W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1``."""
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x**2 / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal N(``loc``, ``cov_factor @ cov_factor.T + diag(cov_diag)``), as
    ``torch.distributions.LowRankMultivariateNormal``; ``rsample`` is reparameterized.

    >>> D = clgrad.distributions
    >>> d = D.LowRankMultivariateNormal(clgrad.zeros(2), clgrad.tensor([[1.0], [0.5]]),
    ...                                 clgrad.ones(2))
    >>> d.log_prob(clgrad.tensor([1.0, -1.0])), d.entropy(), d.variance
    (tensor(-3.1878), tensor(3.2433), tensor([2.0000, 1.2500]))
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.ndim < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except (RuntimeError, ValueError) as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + (self.cov_factor.shape[-1],))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        n = self._event_shape[0]
        return tuple(self._batch_shape) + (n, n)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        variance = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return variance.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, and the middle factor's
        # eigenvalues are at least 1: a well-conditioned matrix to factor
        n = self._event_shape[0]
        cov_diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt
        identity = eye(n, dtype=Dinvsqrt_W.dtype, device=Dinvsqrt_W.device)
        K = Dinvsqrt_W @ Dinvsqrt_W.transpose(-2, -1) + identity
        return (cov_diag_sqrt * cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        covariance = W @ W.transpose(-2, -1) + self._unbroadcasted_cov_diag.diag_embed()
        return covariance.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # the Woodbury identity: D^-1 - D^-1 W C^-1 W^T D^-1 = D^-1 - A^T A
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision = D.reciprocal().diag_embed() - A.transpose(-2, -1) @ A
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=_NO_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + (self.cov_factor.shape[-1],)
        eps_W = _standard_normal(W_shape, self.loc)
        eps_D = _standard_normal(shape, self.loc)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
            + self._unbroadcasted_cov_diag.sqrt() * eps_D
        )

    def _log_det(self) -> Tensor:
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Tensor:
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H.expand(self._batch_shape) if len(self._batch_shape) else H
