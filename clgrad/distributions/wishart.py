"""``Wishart``, as ``torch.distributions.wishart``: the distribution of ``X^T X`` for ``df``
rows X of N(0, Sigma), parameterized, as ``MultivariateNormal``, by one of
``covariance_matrix``, ``precision_matrix`` or ``scale_tril``. Draws use the Bartlett
decomposition (chi-squared diagonal, normal lower triangle), so ``rsample`` is reparameterized
through the chi-squared (gamma) draws."""

from __future__ import annotations

import math
import warnings
from numbers import Number

from .. import dtypes as D
from ..functional import broadcast_shapes, randn
from ..ops.creation import arange, eye, tensor
from ..ops.decomp import cholesky
from ..ops.elementwise import where
from ..tensor import Size, Tensor
from . import constraints
from .distribution import _NO_SHAPE, Distribution
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma, ``sum_i psi(x - i / 2)`` for i < p."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    halves = arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - halves).digamma().sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    return x.clamp(min=D.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """The Wishart distribution over p x p positive definite matrices with ``df`` (> p - 1)
    degrees of freedom and scale matrix Sigma (given as ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``), as ``torch.distributions.Wishart``.

    >>> d = clgrad.distributions.Wishart(clgrad.tensor(4.0), clgrad.eye(2))
    >>> d.log_prob(clgrad.eye(2)), d.entropy(), d.mean
    (tensor(-4.2242), tensor(6.3014), tensor([[4., 0.],
            [0., 4.]]))
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        (param,) = given
        if param.ndim < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        matrix_shape = tuple(batch_shape) + (p, p)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if bool(self.df.lt(p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape) -> Chi2:
        """The diagonal of the Bartlett factor: chi-squared with df, df - 1, ... df - p + 1."""
        L = self._unbroadcasted_scale_tril
        steps = arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in vars(self):
                setattr(new, name, vars(self)[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return identity.cholesky_solve(L).expand(self._matrix_shape())

    def _df_matrix(self, value: Tensor) -> Tensor:
        return value.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix
        diag_V = V.diagonal(0, -2, -1)
        return self._df_matrix(self.df) * (V**2 + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape) -> Tensor:
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed()
        L = self._unbroadcasted_scale_tril
        shape = tuple(sample_shape) + tuple(self._batch_shape) + (p, p)
        lower = randn(shape, dtype=L.dtype, device=L.device).tril(-1)
        chol = L @ (diagonal + lower)
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=_NO_SHAPE, max_try_correction=None) -> Tensor:
        """Draws by the Bartlett decomposition; a draw that rounds to singular is redrawn (up
        to ``max_try_correction`` times, 10 by default).

        >>> clgrad.distributions.Wishart(clgrad.tensor(3.0), clgrad.eye(2)).rsample((4,)).shape
        clgrad.Size([4, 2, 2])
        """
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # torch's test here reads the support check as "singular" (so it always warns and
        # redraws the good draws); this redraws the draws that are singular
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                sample = where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (
            -nu * (p * _LOG_2 / 2 + L.diagonal(0, -2, -1).log().sum(-1))
            - (nu / 2).mvlgamma(p)
            + (nu - p - 1) / 2 * value.slogdet()[1]
            - value.cholesky_solve(L).diagonal(0, -2, -1).sum(-1) / 2
        )

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (
            (p + 1) * (p * _LOG_2 / 2 + L.diagonal(0, -2, -1).log().sum(-1))
            + (nu / 2).mvlgamma(p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-(-2 * x).slogdet()[1] + _LOG_2 * p) + (
            y + (p + 1) / 2
        ).mvlgamma(p)
