"""``kl_divergence(p, q)`` and ``register_kl``, as torch's: a table of closed forms keyed by
the two distributions' types, looked up through both classes' MROs (the most specific pair
wins), so a subclass uses its parent's formula until it registers its own."""

from __future__ import annotations

from ..functional import broadcast_shapes
from ..nn import functional as F
from ..ops.decomp import solve_triangular
from ..tensor import Tensor
from .continuous import Cauchy, Exponential, HalfNormal, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution, _sum_rightmost
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .transformed import Gumbel, TransformedDistribution

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_EULER_GAMMA = 0.57721566490153286060


def register_kl(type_p, type_q):
    """A decorator registering ``fn(p, q)`` as KL(p || q) for ``p`` of ``type_p`` and ``q`` of
    ``type_q`` (or subclasses), as ``torch.distributions.kl.register_kl``.

    >>> D = clgrad.distributions
    >>> class MyNormal(D.Normal):
    ...     pass
    >>> @D.register_kl(MyNormal, MyNormal)
    ... def _kl_mine(p, q):
    ...     return p.loc.new_zeros(())
    >>> D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0))
    tensor(0.)
    """
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(
                f"Expected type_p and type_q to be subclasses of Distribution but got {t}"
            )

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _dispatch_kl(type_p, type_q):
    best, best_rank = None, None
    for i, super_p in enumerate(type_p.__mro__):
        for j, super_q in enumerate(type_q.__mro__):
            fn = _KL_REGISTRY.get((super_p, super_q))
            if fn is not None and (best_rank is None or (i + j, i) < best_rank):
                best, best_rank = fn, (i + j, i)
    return best


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the two distributions' batch shapes, as
    ``torch.distributions.kl_divergence``; NotImplementedError for a pair without a closed
    form registered.

    >>> N = clgrad.distributions.Normal
    >>> clgrad.distributions.kl_divergence(N(0.0, 1.0), N(1.0, 1.0))
    tensor(0.5000)
    """
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}"
        )
    return fn(p, q)


def _infinite_where(result: Tensor, mask: Tensor) -> Tensor:
    return result.masked_fill(mask, float("inf"))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where(result, (q.low > p.low) | (q.high < p.high))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, float("inf")).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # as torch: only for p.total_count >= q.total_count (larger p counts give inf)
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _infinite_where(kl, p.total_count > q.total_count)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen (2019)
    return (((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2) / (4 * p.scale * q.scale)).log()


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER_GAMMA
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + _EULER_GAMMA)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes "
            "cannot be computed"
        )
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q_tril.diagonal(0, -2, -1).log().sum(-1) - p_tril.diagonal(0, -2, -1).log().sum(-1)
    n = p.event_shape[0]
    batch = tuple(_broadcast_batch(q_tril, p_tril))
    # tr(Sigma_q^-1 Sigma_p) = ||L_q^-1 L_p||_F^2
    ratio = solve_triangular(
        q_tril.expand(batch + (n, n)), p_tril.expand(batch + (n, n)), upper=False
    )
    term2 = ratio.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _broadcast_batch(a, b):
    return broadcast_shapes(a.shape[:-2], b.shape[:-2])


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)
