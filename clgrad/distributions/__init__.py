"""Probability distributions, as ``torch.distributions``: parameters broadcast, ``sample``
draws without a graph and ``rsample`` with one (reparameterized) where torch has it,
``log_prob`` / ``entropy`` / moments / ``cdf`` / ``icdf`` as torch computes them, arguments
and values validated as PyTorch validates them (``validate_args``, ValueError), and
``kl_divergence`` between the pairs torch has closed forms for (``register_kl`` adds more).

Modules: ``distribution`` (the base class), ``constraints``, ``transforms``,
``continuous``, ``discrete``, ``gamma`` (gamma, beta, Dirichlet, Student's t),
``multivariate_normal``, ``independent`` (``Independent``, ``MixtureSameFamily``),
``transformed`` (``TransformedDistribution`` and those built on it) and ``kl``."""

from __future__ import annotations

from . import constraints, transforms
from .continuous import Cauchy, Exponential, HalfNormal, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .independent import Independent, MixtureSameFamily
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .transformed import (
    Gumbel,
    LogNormal,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "MixtureSameFamily",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "SigmoidTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "kl_divergence",
    "register_kl",
    "transforms",
]
