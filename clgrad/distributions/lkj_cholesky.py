"""``LKJCholesky``, as ``torch.distributions.lkj_cholesky``: the LKJ distribution of
correlation matrices (Lewandowski, Kurowicka and Joe, 2009), over their lower Cholesky
factors. Draws use the onion method, vectorized over the rows as torch's: row i's squared
norm below the diagonal is a Beta draw, its direction uniform on the sphere (with the paper's
Beta parameters, which differ from torch's: see ``LKJCholesky.__init__``)."""

from __future__ import annotations

import math

from .. import dtypes as D
from ..functional import randn
from ..ops.creation import arange
from ..ops.elementwise import where
from ..ops.movement import cat
from ..tensor import Size, Tensor
from . import constraints
from .distribution import _NO_SHAPE, Distribution, _broadcast_all
from .gamma import Beta

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors of ``dim`` x ``dim`` correlation
    matrices, density proportional to ``det(L L^T) ** (concentration - 1)``, as
    ``torch.distributions.LKJCholesky`` (1: uniform over correlation matrices).

    >>> d = clgrad.distributions.LKJCholesky(2, clgrad.tensor(2.0))
    >>> L = clgrad.tensor([[1.0, 0.0], [0.6, 0.8]])
    >>> d.log_prob(L), d.sample().shape
    (tensor(-0.7340), clgrad.Size([2, 2]))
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = _broadcast_all(concentration)
        # the Beta parameters of the rows' squared norms (section 3.2 of the paper), all rows
        # at once: row k >= 1 has Beta(k / 2, eta + (D - 2) / 2 - (k - 1) / 2). torch's
        # first parameter is k - 1/2, which from row 2 on draws correlations wider than the
        # LKJ's (its variance is 1 / (2 eta + D - 1) for every pair; torch's row 2 of D = 3
        # gives 0.375 for 1/3 at eta = 1/2), though its log_prob is the LKJ's; this follows the
        # paper, so draws and log_prob agree
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset]).to(self.concentration.device)
        beta_conc1 = 0.5 * offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0, validate_args=False)
        super().__init__(self.concentration.shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=_NO_SHAPE) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = self._extended_shape(sample_shape)
        u_normal = randn(shape, dtype=y.dtype, device=y.device).tril(-1)
        # the first row has nothing below the diagonal: its 0 / 0 direction is 0
        row = arange(self.dim, device=y.device).unsqueeze(-1)
        u_hypersphere = where(row > 0, u_normal / u_normal.norm(dim=-1, keepdim=True), 0.0)
        w = y.sqrt() * u_hypersphere
        # the diagonal completes each row to unit norm; clamped, as rounding can overshoot
        tiny = D.finfo(w.dtype).tiny
        diag_elems = (1 - (w**2).sum(-1)).clamp(min=tiny).sqrt()
        return w + diag_elems.diag_embed()

    def log_prob(self, value) -> Tensor:
        # the density of the correlation matrix, det ** (concentration - 1) =
        # prod(L_ii ** (2 (concentration - 1))), times the Jacobian of L -> L L^T,
        # prod(L_ii ** (D - i)) (Stan's functions reference)
        self._validate_sample(value)
        diag_elems = value.diagonal(0, -1, -2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        # the normalizing constant (page 1999 of the paper), through the multivariate lgamma,
        # whose pi term is (D - 1) (D - 2) / 4 log(pi) where the paper's is D (D - 1) / 4
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
