"""The rest of torch.distributions against torch: the distributions added after the first set
(HalfCauchy, Pareto, Weibull, Kumaraswamy, InverseGamma, FisherSnedecor, VonMises,
GeneralizedPareto, ContinuousBernoulli, LogisticNormal, Multinomial, NegativeBinomial,
OneHotCategoricalStraightThrough, LowRankMultivariateNormal, LKJCholesky, Wishart), the
ExponentialFamily base, the new transforms and constraints, biject_to / transform_to, utils,
the KL pairs torch registers for them, and torch's submodule names.

Most tests run a function once with clgrad on ``device`` and once with torch and compare the
{name: value} dicts they return (``_agree``); draws are checked by their statistics."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import torch

import clgrad

# --- comparing a function's results under clgrad and under torch


def _values(x):
    if isinstance(x, (clgrad.Tensor, torch.Tensor)):
        x = x.detach().cpu()
        return np.asarray(x.tolist(), dtype=float) if x.dtype.is_floating_point else x.tolist()
    if isinstance(x, (tuple, list)):
        return [_values(v) for v in x]
    return x


def _same(got, want, name, rtol, atol):
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{name}: {got!r} is not an array"
        assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    elif isinstance(want, list) and want and isinstance(want[0], (np.ndarray, list)):
        assert len(got) == len(want), name
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{name}[{i}]", rtol, atol)
    else:
        assert got == want, f"{name}: {got!r} != {want!r}"


# whether the device under test runs float64 (``_agree`` sets it): cases in float64 run only
# where it does, for both libraries
_FLOAT64 = [True]


def _agree(fn, device, rtol=1e-4, atol=1e-5):
    """``fn``'s results with clgrad (tensors made without a device land on ``device``) and
    with torch agree: floats to ``rtol``/``atol``, everything else exactly."""
    _FLOAT64[0] = clgrad.device(device).supports(clgrad.float64)
    default = clgrad.default_device()
    clgrad.set_default_device(device)
    try:
        got = fn(clgrad)
    finally:
        clgrad.set_default_device(default)
    want = fn(torch)
    assert got.keys() == want.keys()
    for name in want:
        _same(_values(got[name]), _values(want[name]), name, rtol, atol)


def _grad(y, params):
    lib = clgrad if isinstance(y, clgrad.Tensor) else torch
    return list(lib.autograd.grad(y, params, allow_unused=True))


def _p(lib, values):
    return lib.tensor(values, requires_grad=True)


def _report(out, name, dist, value, params, moments=("mean", "variance", "mode"), extra=()):
    """log_prob at ``value``, its gradient in ``params``, the moments and shapes, and those of
    ``entropy()``, ``cdf(value)`` and ``icdf(cdf(value))`` named in ``extra``, into ``out``."""
    lp = dist.log_prob(value)
    out[f"{name}.log_prob"] = lp
    for i, g in enumerate(_grad(lp.sum(), params)):
        out[f"{name}.grad{i}"] = g
    for moment in moments:
        out[f"{name}.{moment}"] = getattr(dist, moment)
    if "entropy" in extra:
        out[f"{name}.entropy"] = dist.entropy()
    if "cdf" in extra:
        out[f"{name}.cdf"] = dist.cdf(value)
    if "icdf" in extra:
        out[f"{name}.icdf"] = dist.icdf(dist.cdf(value).detach())
    out[f"{name}.shapes"] = (tuple(dist.batch_shape), tuple(dist.event_shape), dist.has_rsample)


# --- the distributions


def _heavy_tails(lib):
    D, out = lib.distributions, {}
    scale = _p(lib, [0.5, 2.0])
    d = D.HalfCauchy(scale)
    _report(out, "halfcauchy", d, lib.tensor([0.3, 3.0]), [scale], extra=("entropy", "cdf"))
    out["halfcauchy.icdf"] = d.icdf(lib.tensor([0.2, 0.9]))
    out["halfcauchy.negative"] = D.HalfCauchy(scale, validate_args=False).log_prob(
        lib.tensor([-1.0, 1.0])
    )
    scale, alpha = _p(lib, [1.0, 0.5]), _p(lib, [3.0, 1.5])
    d = D.Pareto(scale, alpha)
    x = lib.tensor([2.0, 0.75])
    _report(out, "pareto", d, x, [scale, alpha], extra=("entropy", "cdf", "icdf"))
    out["pareto.edges"] = [D.Pareto(1.0, lib.tensor([0.5, 1.5, 2.5])).mean]
    out["pareto.edges_var"] = D.Pareto(1.0, lib.tensor([0.5, 1.5, 2.5])).variance
    out["pareto.support"] = [d.support.lower_bound, d.support.check(lib.tensor([0.9, 0.6]))]
    df1, df2 = _p(lib, [4.0, 1.5, 10.0]), _p(lib, [6.0, 3.0, 2.0])
    d = D.FisherSnedecor(df1, df2)
    _report(out, "fisher", d, lib.tensor([1.0, 0.3, 4.0]), [df1, df2])
    out["fisher.number_shape"] = tuple(D.FisherSnedecor(2.0, 3.0).batch_shape)
    loc, scale, conc = (
        _p(lib, [0.0, 1.0, -1.0]),
        _p(lib, [2.0, 0.5, 1.0]),
        _p(lib, [0.5, 0.0, -0.2]),
    )
    d = D.GeneralizedPareto(loc, scale, conc)
    x = lib.tensor([1.0, 1.5, 2.0])
    _report(out, "genpareto", d, x, [loc, scale, conc], extra=("entropy", "cdf", "icdf"))
    out["genpareto.survival"] = [d.log_survival_function(x), d.log_cdf(x)]
    out["genpareto.support"] = [d.support.lower_bound, d.support.upper_bound]
    out["genpareto.edges"] = [
        D.GeneralizedPareto(0.0, 1.0, lib.tensor([0.2, 0.7, 1.5])).mean,
        D.GeneralizedPareto(0.0, 1.0, lib.tensor([0.2, 0.7, 1.5])).variance,
        tuple(D.GeneralizedPareto(0.0, 1.0, 0.1).batch_shape),
    ]
    return out


def _shaped(lib):
    D, out = lib.distributions, {}
    scale, conc = _p(lib, [2.0, 0.5]), _p(lib, [1.5, 0.7])
    d = D.Weibull(scale, conc)
    x = lib.tensor([1.0, 0.2])
    _report(out, "weibull", d, x, [scale, conc], extra=("entropy", "cdf", "icdf"))
    c1, c0 = _p(lib, [2.0, 0.5, 3.0]), _p(lib, [3.0, 2.0, 0.8])
    d = D.Kumaraswamy(c1, c0)
    x = lib.tensor([0.5, 0.1, 0.9])
    # mode apart: torch's is NaN wherever concentration0 > 1 (test_kumaraswamy_mode)
    moments = ("mean", "variance")
    _report(out, "kumaraswamy", d, x, [c1, c0], moments, ("entropy", "cdf", "icdf"))
    conc, rate = _p(lib, [3.0, 1.5, 0.5]), _p(lib, [2.0, 1.0, 4.0])
    d = D.InverseGamma(conc, rate)
    x = lib.tensor([1.0, 0.3, 5.0])
    _report(out, "invgamma", d, x, [conc, rate], extra=("entropy",))
    out["invgamma.params"] = [d.concentration, d.rate]
    loc, conc = _p(lib, [1.0, -2.0, 0.0]), _p(lib, [2.0, 0.3, 8.0])
    d = D.VonMises(loc, conc)
    _report(out, "vonmises", d, lib.tensor([0.5, 3.0, 7.0]), [loc, conc])
    loc, scale = _p(lib, [[0.0, 1.0], [-0.5, 0.2]]), _p(lib, [1.0, 0.5])
    d = D.LogisticNormal(loc, scale)
    value = lib.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    _report(out, "logisticnormal", d, value, [loc, scale], moments=())
    out["logisticnormal.params"] = [d.loc, d.scale]
    d1 = D.LogisticNormal(lib.tensor(0.5), lib.tensor(1.0))
    out["logisticnormal.scalar"] = [
        tuple(d1.batch_shape),
        tuple(d1.event_shape),
        d1.log_prob(lib.tensor([0.3, 0.7])),
    ]
    return out


def _continuous_bernoulli(lib):
    D, out = lib.distributions, {}
    # 0.4995 lies in the region around 1/2 where the Taylor expansions take over
    probs = _p(lib, [0.2, 0.4995, 0.9])
    d = D.ContinuousBernoulli(probs)
    x = lib.tensor([0.3, 0.5, 0.95])
    _report(out, "probs", d, x, [probs], ("mean", "variance", "stddev"), ("entropy", "cdf"))
    out["probs.icdf"] = d.icdf(lib.tensor([0.1, 0.5, 0.7]))
    out["probs.logits"] = d.logits
    out["probs.natural"] = [d._natural_params[0], d._log_normalizer(d.logits)]
    logits = _p(lib, [-2.0, 0.001, 3.0])
    d = D.ContinuousBernoulli(logits=logits)
    _report(out, "logits", d, x, [logits], ("mean", "variance"), ("entropy", "cdf"))
    out["logits.probs"] = [d.probs, tuple(d.param_shape)]
    out["edges"] = D.ContinuousBernoulli(lib.tensor([0.3, 0.3])).cdf(lib.tensor([0.0, 1.0]))
    out["scalar"] = tuple(D.ContinuousBernoulli(0.3).batch_shape)
    # the Bregman-divergence entropy of the base class agrees with the closed form
    out["bregman"] = [
        D.ExponentialFamily.entropy(D.ContinuousBernoulli(lib.tensor([0.2, 0.8]))),
        D.ContinuousBernoulli(lib.tensor([0.2, 0.8])).entropy(),
    ]
    return out


def _discrete(lib):
    D, out = lib.distributions, {}
    probs = _p(lib, [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    d = D.Multinomial(6, probs)
    value = lib.tensor([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]])
    _report(out, "multinomial", d, value, [probs], ("mean", "variance"), ("entropy",))
    logits = _p(lib, [0.0, 1.0, -1.0])
    d = D.Multinomial(3, logits=logits)
    _report(out, "multinomial_logits", d, lib.tensor([1.0, 1.0, 1.0]), [logits], ("mean",))
    # log_prob of any count total, unvalidated (the support is bounded by total_count)
    free = D.Multinomial(probs=lib.tensor([0.5, 0.5, 0.0]), validate_args=False)
    out["multinomial.total_free"] = free.log_prob(lib.tensor([[4.0, 3.0, 0.0], [0.0, 1.0, 0.0]]))
    out["multinomial.parts"] = [d.probs, d.logits, tuple(d.param_shape), d.support.upper_bound]
    total, probs = _p(lib, [3.0, 0.5, 10.0]), _p(lib, [0.4, 0.8, 0.05])
    d = D.NegativeBinomial(total, probs)
    value = lib.tensor([2.0, 7.0, 0.0])
    _report(out, "negbinomial", d, value, [total, probs])
    out["negbinomial.logits"] = [d.logits, tuple(d.param_shape)]
    logits = _p(lib, [-1.0, 0.5])
    d = D.NegativeBinomial(lib.tensor([2.0, 0.0]), logits=logits)
    _report(out, "negbinomial_logits", d, lib.tensor([3.0, 0.0]), [logits])
    out["negbinomial_logits.probs"] = d.probs
    # straight-through: the draw's value, the gradient of the probabilities
    logits = _p(lib, [[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]])
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    lib.manual_seed(0)
    x = d.rsample((5,))
    weights = lib.tensor([1.0, 2.0, 3.0])
    (g,) = _grad((x * weights).sum(), [logits])
    out["straight_through"] = [
        tuple(x.shape),
        bool(((x == 0) | (x == 1)).all()),
        x.sum(-1),
        g,
        d.has_rsample,
        d.log_prob(lib.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])),
    ]
    out["enumerate"] = [
        D.Bernoulli(lib.tensor([0.3, 0.6])).enumerate_support(),
        D.Categorical(lib.tensor([[0.3, 0.7]] * 3)).enumerate_support(),
        D.Categorical(lib.tensor([[0.3, 0.7]] * 3)).enumerate_support(expand=False),
        D.OneHotCategorical(lib.tensor([[0.3, 0.7]] * 3)).enumerate_support(),
    ]
    return out


def _lowrank(lib):
    D, out = lib.distributions, {}
    loc = _p(lib, [[0.0, 1.0, -1.0], [0.5, 0.0, 2.0]])
    cov_factor = _p(lib, [[1.0, 0.2], [0.5, -0.3], [0.0, 0.7]])
    cov_diag = _p(lib, [1.0, 0.5, 2.0])
    d = D.LowRankMultivariateNormal(loc, cov_factor, cov_diag)
    x = lib.tensor([[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]])
    _report(out, "lowrank", d, x, [loc, cov_factor, cov_diag], ("mean", "variance", "mode"))
    out["lowrank.matrices"] = [
        d.covariance_matrix,
        d.precision_matrix,
        d.scale_tril,
        d.entropy(),
        d.stddev,
    ]
    mvn = D.MultivariateNormal(loc, covariance_matrix=d.covariance_matrix.detach())
    out["lowrank.as_mvn"] = [mvn.log_prob(x), mvn.entropy()]
    q = D.LowRankMultivariateNormal(
        lib.tensor([0.3, -0.2, 0.1]),
        lib.tensor([[0.4], [1.0], [-0.5]]),
        lib.tensor([2.0, 1.0, 0.5]),
    )
    mvn_q = D.MultivariateNormal(
        lib.tensor([1.0, 0.0, 0.0]),
        scale_tril=lib.tensor([[1.0, 0.0, 0.0], [0.3, 1.5, 0.0], [-0.2, 0.4, 0.8]]),
    )
    kl = D.kl_divergence
    # a fresh p: the first one's capacitance graph was freed by the gradient above, as torch's
    d = D.LowRankMultivariateNormal(loc, cov_factor, cov_diag)
    kls = [kl(d, q), kl(mvn, q), kl(d, mvn_q)]
    out["lowrank.kl"] = kls
    out["lowrank.kl_grad"] = _grad(kls[0].sum() + kls[2].sum(), [loc, cov_factor, cov_diag])
    e = d.expand((4, 2))
    out["lowrank.expand"] = [tuple(e.batch_shape), tuple(e.sample((3,)).shape), e.log_prob(x)]
    return out


def _matrices(lib):
    D, T, out = lib.distributions, lib.distributions.transforms, {}
    conc = _p(lib, [0.5, 2.0])
    d = D.LKJCholesky(3, conc)
    L = T.CorrCholeskyTransform()(lib.tensor([[0.3, -0.5, 0.8], [1.0, 0.2, -0.1]]))
    _report(out, "lkj", d, L, [conc], moments=())
    out["lkj.dim2"] = D.LKJCholesky(2, 1.5).log_prob(lib.tensor([[1.0, 0.0], [0.6, 0.8]]))
    e = d.expand((4, 2))
    out["lkj.expand"] = [tuple(e.batch_shape), tuple(e.sample().shape), e.log_prob(L)]
    df = _p(lib, [4.0, 2.5])
    cov = _p(lib, [[2.0, 0.3], [0.3, 1.0]])
    value = lib.tensor([[[3.0, 0.5], [0.5, 2.0]], [[1.0, -0.2], [-0.2, 0.5]]])
    d = D.Wishart(df, covariance_matrix=cov)
    _report(out, "wishart", d, value, [df, cov], extra=("entropy",))
    out["wishart.matrices"] = [d.scale_tril, d.precision_matrix, d.covariance_matrix]
    out["wishart.bregman"] = D.ExponentialFamily.entropy(d)
    tril = lib.tensor([[1.0, 0.0], [0.5, 2.0]])
    d2 = D.Wishart(lib.tensor(3.0), scale_tril=tril)
    out["wishart.tril"] = [d2.log_prob(value), d2.entropy(), d2.covariance_matrix]
    prec = lib.tensor([[1.0, 0.2], [0.2, 0.5]])
    d3 = D.Wishart(5.0, precision_matrix=prec)
    out["wishart.precision"] = [d3.log_prob(value), d3.scale_tril, d3.mean]
    # two Wisharts have no closed form registered: the exponential-family (Bregman) KL
    out["wishart.kl"] = D.kl_divergence(d2, d3)
    e = d.expand((3, 2))
    out["wishart.expand"] = [tuple(e.batch_shape), tuple(e.rsample().shape), e.log_prob(value)]
    return out


def test_heavy_tailed_against_torch(device):
    _agree(_heavy_tails, device)


def test_shaped_against_torch(device):
    _agree(_shaped, device)


def test_kumaraswamy_mode(device):
    """The mode is where the density peaks (its log_prob's derivative vanishes), NaN with a
    concentration below 1; torch's formula gives NaN for any concentration0 > 1."""
    a, b = [2.0, 1.5, 5.0, 0.5, 2.0], [3.0, 1.2, 1.1, 2.0, 0.7]
    d = clgrad.distributions.Kumaraswamy(
        clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
    )
    mode = d.mode.cpu().numpy()
    a, b = np.array(a), np.array(b)
    inside = (a >= 1) & (b >= 1)
    want = np.full(5, np.nan)
    ai, bi = a[inside], b[inside]
    want[inside] = ((ai - 1) / (ai * bi - 1)) ** (1 / ai)
    np.testing.assert_allclose(mode, want, rtol=1e-5, equal_nan=True)
    at = clgrad.tensor(mode[:3], device=device, requires_grad=True)
    inner = clgrad.distributions.Kumaraswamy(
        clgrad.tensor(a[:3].tolist(), device=device), clgrad.tensor(b[:3].tolist(), device=device)
    )
    (slope,) = clgrad.autograd.grad(inner.log_prob(at).sum(), [at])
    np.testing.assert_allclose(slope.cpu().numpy(), 0, atol=1e-4)
    assert torch.distributions.Kumaraswamy(torch.tensor(2.0), torch.tensor(3.0)).mode.isnan()


def test_continuous_bernoulli_against_torch(device):
    _agree(_continuous_bernoulli, device)


def test_discrete_against_torch(device):
    _agree(_discrete, device)


def test_lowrank_multivariate_normal_against_torch(device):
    _agree(_lowrank, device, rtol=2e-4)


def test_matrix_distributions_against_torch(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns on every Wishart rsample
        _agree(_matrices, device, rtol=2e-4)


# --- transforms, constraints, biject_to / transform_to, utils


def _transforms(lib):
    T, out = lib.distributions.transforms, {}
    x = _p(lib, [[0.3, -1.2, 0.5], [1.0, 0.2, -0.4]])
    for name, t in (
        ("power", T.PowerTransform(lib.tensor(1.7))),
        ("power_tensor", T.PowerTransform(lib.tensor([0.5, 2.0, -1.0]))),
        ("softplus", T.SoftplusTransform()),
        ("stick_breaking", T.StickBreakingTransform()),
        ("corr_cholesky", T.CorrCholeskyTransform()),
        ("independent", T.IndependentTransform(T.ExpTransform(), 1)),
        ("reshape", T.ReshapeTransform((3,), (3, 1))),
        ("cat", T.CatTransform([T.ExpTransform(), T.SoftplusTransform()], 1, [1, 2])),
        ("cat_batch", T.CatTransform([T.ExpTransform(), T.TanhTransform()], 0, [1, 1])),
        (
            "stack",
            T.StackTransform(
                [T.ExpTransform(), T.TanhTransform(), T.AffineTransform(1.0, 2.0)], -1
            ),
        ),
        ("cdf", T.CumulativeDistributionTransform(lib.distributions.Normal(0.5, 2.0))),
    ):
        xx = x.abs() if name.startswith("power") else x
        y = t(xx)
        ladj = t.log_abs_det_jacobian(xx, y)
        (grad,) = _grad(y.sum() + ladj.sum(), [x])
        out[name] = [y, t.inv(y), ladj, t.inv.log_abs_det_jacobian(y, xx), grad]
        out[f"{name}.meta"] = [
            t.domain.event_dim,
            t.codomain.event_dim,
            t.bijective,
            tuple(t.forward_shape(tuple(xx.shape))),
            tuple(t.inverse_shape(tuple(y.shape))),
        ]
    out["signs"] = [
        T.PowerTransform(lib.tensor([0.5, -2.0])).sign,
        T.SoftplusTransform().sign,
        T.IndependentTransform(T.ExpTransform(), 1).sign,
    ]
    out["softmax"] = [T.SoftmaxTransform()(x), T.SoftmaxTransform().inv(T.SoftmaxTransform()(x))]
    m = _p(lib, [[0.3, -1.2], [1.0, 0.2]])
    for name, t in (
        ("lower_cholesky", T.LowerCholeskyTransform()),
        ("positive_definite", T.PositiveDefiniteTransform()),
    ):
        y = t(m)
        (grad,) = _grad(y.sum(), [m])
        out[name] = [y, t.inv(y), grad]
    # the Cholesky factor of a 4 x 4 correlation matrix from 6 reals, and back
    v = lib.tensor([[0.1, -0.4, 0.7, 1.5, -2.0, 0.3]])
    L = T.CorrCholeskyTransform()(v)
    out["corr4"] = [L, (L * L).sum(-1), T.CorrCholeskyTransform().inv(L)]
    out["eq"] = [
        T.PowerTransform(lib.tensor(2.0)) == T.PowerTransform(lib.tensor(2.0)),
        T.PowerTransform(lib.tensor(2.0)) == T.PowerTransform(lib.tensor(3.0)),
        T.SoftplusTransform() == T.SoftplusTransform(),
        T.StickBreakingTransform() == T.SoftmaxTransform(),
    ]
    cached = T.IndependentTransform(T.TanhTransform(), 1, cache_size=1)
    y = cached(x)
    out["cache"] = [
        cached.inv(y) is x,
        T.PowerTransform(2.0, cache_size=1).with_cache(0)._cache_size,
    ]
    errors = []
    for bad in (
        lambda: T.ReshapeTransform((4,), (3,)),
        lambda: T.ReshapeTransform((2, 2), (4,)).forward_shape((3, 3)),
        lambda: T.CorrCholeskyTransform().forward_shape((4,)),
        lambda: T.CorrCholeskyTransform().inverse_shape((2, 3)),
        lambda: T.StickBreakingTransform().forward_shape(()),
        lambda: T.CatTransform([T.ExpTransform()], 0, [1, 2]),
        lambda: T.CatTransform([T.ExpTransform()], 0, [2])(lib.zeros(3)),
    ):
        try:
            bad()
            errors.append(None)
        except (ValueError, AssertionError) as e:
            errors.append(type(e).__name__)
    out["errors"] = errors
    return out


def test_transforms_against_torch(device):
    _agree(_transforms, device)


def _transformed_with_new_transforms(lib):
    D, T, out = lib.distributions, lib.distributions.transforms, {}
    loc = _p(lib, [0.5, -0.3])
    d = D.TransformedDistribution(D.Normal(loc, 1.0), [T.SoftplusTransform()])
    _report(out, "softplus", d, lib.tensor([0.4, 2.0]), [loc], moments=())
    d = D.TransformedDistribution(D.Normal(loc, 0.5), [T.StickBreakingTransform()])
    _report(out, "stick", d, lib.tensor([0.2, 0.5, 0.3]), [loc], moments=())
    base = D.Normal(lib.zeros(2, 4), 1.0)
    d = D.TransformedDistribution(base, [T.ReshapeTransform((4,), (2, 2))])
    out["reshape"] = [tuple(d.batch_shape), tuple(d.event_shape), d.log_prob(lib.ones(2, 2, 2))]
    e = d.expand((3, 2))
    out["reshape.expand"] = [tuple(e.batch_shape), tuple(e.sample().shape)]
    d = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.ExpTransform()]).expand((3,))
    out["expand"] = [tuple(d.batch_shape), d.log_prob(lib.tensor([0.5, 1.0, 2.0]))]
    rb = D.RelaxedBernoulli(lib.tensor(0.5), probs=lib.tensor([0.3, 0.6])).expand((4, 2))
    rc = D.RelaxedOneHotCategorical(lib.tensor(0.5), probs=lib.tensor([0.3, 0.7])).expand((4,))
    out["relaxed.expand"] = [tuple(rb.sample().shape), tuple(rc.sample().shape)]
    return out


def test_transformed_distributions_against_torch(device):
    _agree(_transformed_with_new_transforms, device)


def _constraints(lib):
    C, out = lib.distributions.constraints, {}
    x = lib.tensor([[1.0, -2.0, 0.0], [3.0, 0.5, 2.0]])
    out["less_than"] = C.less_than(1.0).check(x)
    out["multinomial"] = C.multinomial(4).check(lib.tensor([[1.0, 2.0, 1.0], [3.0, 2.0, 0.0]]))
    m = lib.tensor([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.1], [0.5, 2.0]], [[1.0, 0.0], [0.6, 0.8]]])
    for name in ("lower_triangular", "lower_cholesky", "corr_cholesky", "square", "symmetric"):
        out[name] = getattr(C, name).check(m)
    spd = lib.tensor([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    out["positive_semidefinite"] = C.positive_semidefinite.check(spd)
    out["positive_definite"] = C.positive_definite.check(spd)
    out["not_square"] = [C.square.check(lib.zeros(2, 2, 3)), C.symmetric.check(lib.zeros(2, 3))]
    cat = C.cat([C.positive, C.real, C.unit_interval], 1, [1, 1, 1])
    out["cat"] = [cat.check(x), cat.event_dim, cat.is_discrete]
    stack = C.stack([C.positive, C.nonnegative_integer, C.real], 1)
    out["stack"] = [stack.check(x), stack.event_dim, stack.is_discrete]
    mix = C.MixtureSameFamilyConstraint(C.interval(lib.tensor([0.0, -1.0]), 2.0))
    out["mixture"] = [mix.check(lib.tensor([0.5, -0.5, 1.5])), mix.event_dim]
    out["meta"] = [
        (getattr(C, n).event_dim, getattr(C, n).is_discrete)
        for n in ("lower_triangular", "corr_cholesky", "square", "symmetric")
    ]
    out["repr"] = [repr(C.less_than(1.0))]
    return out


def test_constraints_against_torch(device):
    _agree(_constraints, device)


def _registry(lib):
    D, C, out = lib.distributions, lib.distributions.constraints, {}
    x = lib.tensor([[0.3, -1.2, 0.5], [1.0, 0.2, -0.4]])
    cases = {
        "real": C.real,
        "real_vector": C.real_vector,
        "positive": C.positive,
        "nonnegative": C.nonnegative,
        "greater_than": C.greater_than(lib.tensor([1.0, 2.0, 3.0])),
        "greater_than_eq": C.greater_than_eq(-1.0),
        "less_than": C.less_than(2.0),
        "unit_interval": C.unit_interval,
        "interval": C.interval(-2.0, lib.tensor([1.0, 2.0, 3.0])),
        "half_open_interval": C.half_open_interval(1.0, 4.0),
        "simplex": C.simplex,
        "corr_cholesky": C.corr_cholesky,
        "independent": C.independent(C.positive, 1),
        "cat": C.cat([C.positive, C.real, C.unit_interval], 1, [1, 1, 1]),
        "stack": C.stack([C.positive, C.real, C.unit_interval], 1),
    }
    for name, constraint in cases.items():
        for kind, registry in (("biject", D.biject_to), ("transform", D.transform_to)):
            t = registry(constraint)
            y = t(x)
            # softmax (transform_to(simplex)) is not bijective: no log-det-Jacobian, as torch's
            ladj = t.log_abs_det_jacobian(x, y) if t.bijective else None
            out[f"{name}.{kind}"] = [
                y,
                t.inv(y),
                ladj,
                bool(constraint.check(y).all()),
                type(t).__name__,
            ]
    m = lib.tensor([[0.3, -1.2], [1.0, 0.2]])
    for name in ("lower_cholesky", "positive_definite", "positive_semidefinite"):
        t = D.transform_to(getattr(C, name))
        out[name] = [t(m), bool(getattr(C, name).check(t(m)).all()), type(t).__name__]
    errors = []
    for bad in (
        lambda: D.biject_to(C.lower_cholesky),
        lambda: D.biject_to(C.positive_definite),
        lambda: D.transform_to(C.boolean),
        lambda: D.biject_to(C.nonnegative_integer),
        lambda: D.biject_to.register(3, lambda c: None),
    ):
        try:
            bad()
            errors.append(None)
        except (NotImplementedError, TypeError) as e:
            errors.append(type(e).__name__)
    out["errors"] = errors
    # a distribution's parameter constraint, as a program optimizing it unconstrained reads it
    scale = D.transform_to(D.Normal.arg_constraints["scale"])(lib.tensor([-1.0, 0.0, 2.0]))
    out["normal_scale"] = scale
    registry = D.constraint_registry.ConstraintRegistry()
    registry.register(C.positive, lambda c: D.transforms.SoftplusTransform())
    out["custom"] = [registry(C.positive)(lib.tensor([0.0, 1.0])), type(D.biject_to).__name__]
    return out


def test_biject_to_transform_to_against_torch(device):
    _agree(_registry, device)


def _utils(lib):
    U, out = lib.distributions.utils, {}
    a, b = U.broadcast_all(lib.tensor([[1.0], [2.0]]), 0.5)
    c, d = U.broadcast_all(1.0, 2)
    out["broadcast_all"] = [a, b, c, d, str(c.dtype).rpartition(".")[2]]
    probs = lib.tensor([0.0, 0.2, 1.0])
    out["clamp_probs"] = U.clamp_probs(probs)
    if _FLOAT64[0]:  # (where the device runs float64: rusticl's llvmpipe does not)
        out["clamp_probs64"] = U.clamp_probs(probs.double())
    out["probs_to_logits"] = [
        U.probs_to_logits(probs, is_binary=True),
        U.probs_to_logits(lib.tensor([0.2, 0.3, 0.5])),
    ]
    logits = lib.tensor([[0.0, 1.0, -1.0]])
    out["logits_to_probs"] = [U.logits_to_probs(logits), U.logits_to_probs(logits, True)]
    m = lib.arange(16.0).reshape(4, 4)
    out["tril"] = [U.tril_matrix_to_vec(m, d) for d in (0, -1, -2, 1)]
    out["vec"] = [
        U.vec_to_tril_matrix(lib.arange(1.0, 7.0)),
        U.vec_to_tril_matrix(lib.arange(1.0, 7.0).reshape(1, 6), diag=-1),
        U.vec_to_tril_matrix(lib.arange(1.0, 4.0), diag=-1),
    ]
    v = _p(lib, [1.0, 2.0, 3.0])
    (g,) = _grad((U.vec_to_tril_matrix(v) * lib.tensor([[1.0, 5.0], [2.0, 3.0]])).sum(), [v])
    out["vec.grad"] = g
    out["euler"] = U.euler_constant
    calls = []

    class Lazy:
        @U.lazy_property
        def value(self):
            calls.append(1)
            return lib.tensor(2.0)

    obj = Lazy()
    out["lazy"] = [obj.value, obj.value, len(calls), "value" in vars(obj)]
    errors = []
    for bad in (
        lambda: U.broadcast_all(lib.tensor(1.0), "2"),
        lambda: U.vec_to_tril_matrix(lib.zeros(5)),
        lambda: U.tril_matrix_to_vec(lib.zeros(3, 3), diag=3),
    ):
        try:
            bad()
            errors.append(None)
        except ValueError as e:
            errors.append(type(e).__name__)
    out["errors"] = errors
    return out


def test_utils_against_torch(device):
    _agree(_utils, device)


# --- KL divergences


def _kl(lib):
    D, t, kl = lib.distributions, lib.tensor, lib.distributions.kl_divergence
    half, two = t([0.3, 0.6]), t([1.0, 2.0])
    cb = D.ContinuousBernoulli(t([0.2, 0.7]))
    pareto, pareto2 = D.Pareto(t([1.0, 0.5]), t([3.0, 2.5])), D.Pareto(t([0.5, 1.0]), t([2.0, 4.5]))
    beta = D.Beta(t([2.0, 0.5]), t([3.0, 1.5]))
    normal, exp = D.Normal(half, two), D.Exponential(two)
    gamma, gumbel = D.Gamma(two, half), D.Gumbel(half, two)
    laplace, uniform = D.Laplace(half, two), D.Uniform(t([0.1, 0.2]), t([0.5, 0.9]))
    wide = D.Uniform(t([-1.0, 0.5]), t([2.0, 3.0]))
    pairs = {
        "cb_cb": (cb, D.ContinuousBernoulli(logits=t([0.5, -1.0]))),
        "pareto_pareto": (pareto, pareto2),
        "bernoulli_poisson": (D.Bernoulli(half), D.Poisson(two)),
        "beta_cb": (beta, cb),
        "beta_pareto": (beta, pareto),
        "beta_exp": (beta, exp),
        "beta_gamma": (beta, gamma),
        "beta_normal": (beta, normal),
        "beta_uniform": (beta, wide),
        "cb_pareto": (cb, pareto),
        "cb_exp": (cb, exp),
        "cb_normal": (cb, normal),
        "cb_uniform": (cb, wide),
        "exp_beta": (exp, beta),
        "exp_cb": (exp, cb),
        "exp_pareto": (exp, pareto),
        "exp_uniform": (exp, wide),
        "exp_gamma": (exp, gamma),
        "exp_gumbel": (exp, gumbel),
        "exp_normal": (exp, normal),
        "gamma_beta": (gamma, beta),
        "gamma_cb": (gamma, cb),
        "gamma_pareto": (gamma, pareto),
        "gamma_uniform": (gamma, wide),
        "gamma_exp": (gamma, exp),
        "gamma_gumbel": (gamma, gumbel),
        "gamma_normal": (gamma, normal),
        "gumbel_beta": (gumbel, beta),
        "gumbel_exp": (gumbel, exp),
        "gumbel_normal": (gumbel, normal),
        "laplace_pareto": (laplace, pareto),
        "laplace_normal": (laplace, normal),
        "normal_beta": (normal, beta),
        "normal_gumbel": (normal, gumbel),
        "normal_laplace": (normal, laplace),
        "pareto_beta": (pareto, beta),
        "pareto_uniform": (pareto, wide),
        "pareto_exp": (pareto, exp),
        "pareto_gamma": (pareto, gamma),
        "pareto_normal": (pareto, normal),
        "poisson_bernoulli": (D.Poisson(two), D.Bernoulli(half)),
        "poisson_binomial": (D.Poisson(two), D.Binomial(3, half)),
        "uniform_beta": (uniform, beta),
        "uniform_cb": (uniform, cb),
        "uniform_exp": (uniform, exp),
        "uniform_gamma": (uniform, gamma),
        "uniform_gumbel": (uniform, gumbel),
        "uniform_normal": (uniform, normal),
        "uniform_pareto": (D.Uniform(t([1.5, 2.0]), t([2.0, 5.0])), pareto),
        "halfcauchy": (D.HalfCauchy(two), D.HalfCauchy(half)),
        "invgamma": (D.InverseGamma(two, half), D.InverseGamma(half, two)),
        "lognormal_chi2": (D.Chi2(two), D.Chi2(t([3.0, 1.5]))),
    }
    out = {name: kl(p, q) for name, (p, q) in pairs.items()}
    # the Bregman divergence of the exponential family agrees with the closed forms
    bregman = D.kl._kl_expfamily_expfamily
    out["bregman"] = [
        bregman(D.Gamma(two, half), D.Gamma(half, two)),
        bregman(D.Normal(half, two), D.Normal(two, half)),
        bregman(D.Dirichlet(t([[1.0, 2.0], [0.5, 3.0]])), D.Dirichlet(t([2.0, 2.0]))),
        bregman(D.Poisson(two), D.Poisson(half)),
    ]
    # in float64: near probs 1/2 the closed forms cancel, and float32 rounding differs
    if _FLOAT64[0]:
        loc = lib.tensor([0.2, 0.7], dtype=lib.float64, requires_grad=True)
        cb64 = D.ContinuousBernoulli(t([0.2, 0.7], dtype=lib.float64))
        out["grad"] = _grad(kl(D.ContinuousBernoulli(loc.sigmoid()), cb64).sum(), [loc])
    errors = []
    for bad in (
        lambda: bregman(D.Gamma(two, half), D.Normal(half, two)),
        lambda: kl(D.Weibull(two, half), D.Weibull(half, two)),
        lambda: kl(D.VonMises(half, two), D.VonMises(half, two)),
        lambda: kl(
            D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(2)),
            D.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3)),
        ),
    ):
        try:
            bad()
            errors.append(None)
        except (NotImplementedError, ValueError) as e:
            errors.append(type(e).__name__)
    out["errors"] = errors
    return out


def test_kl_pairs_against_torch(device):
    _agree(_kl, device)


# --- argument and value validation


def _errors(lib):
    D, t = lib.distributions, lib.tensor
    L = lib.distributions.transforms.CorrCholeskyTransform()(t([0.3, -0.5, 0.8]))
    out = []
    for bad in (
        lambda: D.HalfCauchy(t(-1.0)),
        lambda: D.HalfCauchy(t(1.0)).log_prob(t(-1.0)),
        lambda: D.Pareto(t(1.0), t(0.0)),
        lambda: D.Pareto(t(-1.0), t(2.0)),
        lambda: D.Pareto(t(1.0), t(2.0)).log_prob(t(0.5)),
        lambda: D.Weibull(t(1.0), t(-2.0)),
        lambda: D.Weibull(t(1.0), t(2.0)).log_prob(t(-0.5)),
        lambda: D.Kumaraswamy(t(0.0), t(1.0)),
        lambda: D.Kumaraswamy(t(1.0), t(1.0)).log_prob(t(1.5)),
        lambda: D.InverseGamma(t(1.0), t(-1.0)),
        lambda: D.InverseGamma(t(1.0), t(1.0)).log_prob(t(0.0)),
        lambda: D.FisherSnedecor(t(1.0), t(0.0)),
        lambda: D.FisherSnedecor(t(1.0), t(2.0)).log_prob(t(-1.0)),
        lambda: D.VonMises(t(0.0), t(-1.0)),
        lambda: D.VonMises(t(0.0), t(1.0)).log_prob(t(float("nan"))),
        lambda: D.GeneralizedPareto(t(0.0), t(-1.0), t(0.5)),
        lambda: D.GeneralizedPareto(t(0.0), t(1.0), t(0.5)).log_prob(t(-1.0)),
        lambda: D.GeneralizedPareto(t(0.0), t(1.0), t(-0.5)).log_prob(t(3.0)),
        lambda: D.ContinuousBernoulli(),
        lambda: D.ContinuousBernoulli(t(1.5)),  # clamped, then valid: as torch, no error
        lambda: D.ContinuousBernoulli(t(1.5), validate_args=True),
        lambda: D.ContinuousBernoulli(t(0.3)).log_prob(t(1.5)),
        lambda: D.LogisticNormal(t([0.0]), t([-1.0])),
        lambda: D.LogisticNormal(t([0.0]), t([1.0])).log_prob(t([0.5, 0.6])),
        lambda: D.Multinomial(t(3), t([0.5, 0.5])),
        lambda: D.Multinomial(3, t([-0.5, 0.5])),
        lambda: D.Multinomial(3, t([0.5, 0.5])).log_prob(t([2.0, 2.0])),
        lambda: D.Multinomial(3, t([0.5, 0.5])).log_prob(t([-1.0, 2.0])),
        lambda: D.NegativeBinomial(t(-1.0), t(0.5)),
        lambda: D.NegativeBinomial(t(2.0), t(1.0)),
        lambda: D.NegativeBinomial(t(2.0)),
        lambda: D.NegativeBinomial(t(2.0), t(0.5)).log_prob(t(1.5)),
        lambda: D.OneHotCategoricalStraightThrough(t([0.5, 0.5])).log_prob(t([1.0, 1.0])),
        lambda: D.LowRankMultivariateNormal(t(0.0), lib.ones(2, 1), lib.ones(2)),
        lambda: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2), lib.ones(2)),
        lambda: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(3, 1), lib.ones(2)),
        lambda: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(3)),
        lambda: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), t([1.0, -1.0])),
        lambda: D.LowRankMultivariateNormal(lib.zeros(3, 2), lib.ones(2, 2, 1), lib.ones(2)),
        lambda: D.LKJCholesky(1, t(1.0)),
        lambda: D.LKJCholesky(3, t(0.0)),
        lambda: D.LKJCholesky(3, t(1.0)).log_prob(2 * L),
        lambda: D.Wishart(t(1.0), lib.eye(3)),
        lambda: D.Wishart(t(4.0), t([[1.0, 2.0], [2.0, 1.0]])),
        lambda: D.Wishart(t(4.0), lib.eye(2)).log_prob(t([[1.0, 2.0], [2.0, 1.0]])),
        lambda: D.Wishart(t(4.0), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
        lambda: D.Wishart(t(4.0), t(1.0)),
        lambda: D.Pareto(t(1.0), t(0.0), validate_args=False),
        lambda: D.Pareto(t(1.0), t(2.0), validate_args=False).log_prob(t(0.5)),
    ):
        try:
            bad()
            out.append(None)
        except (ValueError, NotImplementedError, AssertionError) as e:
            out.append(type(e).__name__)
    return out


def test_validation_errors_as_torchs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Wishart's low df
        assert _errors(clgrad) == _errors(torch)


# --- shapes: draws, expand, batch and event shapes


def _new_batched(lib):
    """One of each new distribution with a batch of 2 (parameters on the default device)."""
    D, t = lib.distributions, lib.tensor
    two, half = t([1.0, 2.0]), t([0.3, 0.6])
    return {
        "HalfCauchy": D.HalfCauchy(two),
        "Pareto": D.Pareto(two, t([4.5, 6.0])),
        "Weibull": D.Weibull(two, t([1.5, 0.8])),
        "Kumaraswamy": D.Kumaraswamy(two, t([3.0, 0.8])),
        "InverseGamma": D.InverseGamma(t([6.0, 8.0]), two),
        "FisherSnedecor": D.FisherSnedecor(t([5.0, 12.0]), t([20.0, 30.0])),
        "VonMises": D.VonMises(t([0.5, -2.5]), t([2.0, 0.5])),
        "GeneralizedPareto": D.GeneralizedPareto(half, two, t([0.1, -0.3])),
        "ContinuousBernoulli": D.ContinuousBernoulli(t([0.2, 0.8])),
        "LogisticNormal": D.LogisticNormal(t([[0.0, 1.0], [1.0, -1.0]]), t([0.5, 1.0])),
        "Multinomial": D.Multinomial(5, t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
        "NegativeBinomial": D.NegativeBinomial(t([3.0, 0.5]), half),
        "OneHotCategoricalStraightThrough": D.OneHotCategoricalStraightThrough(
            t([[0.2, 0.8], [0.5, 0.5]])
        ),
        "LowRankMultivariateNormal": D.LowRankMultivariateNormal(
            t([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]]),
            t([[1.0, 0.0], [0.5, 1.0], [0.0, -0.5]]),
            t([0.5, 1.0, 2.0]),
        ),
        "LKJCholesky": D.LKJCholesky(3, t([0.5, 3.0])),
        "Wishart": D.Wishart(t([4.0, 6.0]), t([[1.0, 0.3], [0.3, 2.0]])),
    }


def _draw_shapes(lib):
    out = {}
    for name, d in _new_batched(lib).items():
        for shape in ((), (3,), (2, 3)):
            s = d.sample(shape)
            out[name, shape] = (tuple(s.shape), str(s.dtype).rpartition(".")[2], s.requires_grad)
            if d.has_rsample:
                out[name, shape, "r"] = tuple(d.rsample(shape).shape)
        e = d.expand((4, 2))
        out[name, "expand"] = (
            tuple(e.batch_shape),
            tuple(e.event_shape),
            tuple(e.sample((3,)).shape),
            e.has_rsample,
        )
        out[name] = (d.has_rsample, tuple(d.batch_shape), tuple(d.event_shape))
        out[name, "support"] = (d.support.event_dim, d.support.is_discrete)
    return out


def test_sample_shapes_and_dtypes(device):
    clgrad.set_default_device(device)
    try:
        got = _draw_shapes(clgrad)
    finally:
        clgrad.set_default_device("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns on every Wishart rsample
        assert got == _draw_shapes(torch)


def _expanded_values(lib):
    """log_prob, mean and variance of each new distribution expanded to a batch of (3, 2)."""
    out = {}
    values = {
        "HalfCauchy": [0.5, 2.0],
        "Pareto": [2.5, 3.0],
        "Weibull": [0.5, 2.0],
        "Kumaraswamy": [0.3, 0.8],
        "InverseGamma": [0.4, 0.3],
        "FisherSnedecor": [1.2, 0.7],
        "VonMises": [0.3, -1.0],
        "GeneralizedPareto": [1.0, 2.0],
        "ContinuousBernoulli": [0.3, 0.6],
        "LogisticNormal": [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]],
        "Multinomial": [[1.0, 1.0, 3.0], [5.0, 0.0, 0.0]],
        "NegativeBinomial": [2.0, 0.0],
        "OneHotCategoricalStraightThrough": [[0.0, 1.0], [1.0, 0.0]],
        "LowRankMultivariateNormal": [[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]],
    }
    for name, d in _new_batched(lib).items():
        e = d.expand((3, 2))
        if name in values:
            out[name, "log_prob"] = e.log_prob(lib.tensor(values[name]))
        for moment in ("mean", "variance"):
            try:
                out[name, moment] = getattr(e, moment)
            except NotImplementedError:
                out[name, moment] = None
    return out


def test_expand_against_torch(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _agree(_expanded_values, device)


def test_submodules_as_torchs():
    """Every module of torch.distributions imports from clgrad.distributions under its name,
    exporting the same names (and the same objects as the package)."""
    names = [
        m.name
        for m in __import__("pkgutil").iter_modules(torch.distributions.__path__)
        if not m.name.startswith("_")
    ]
    assert len(names) >= 47
    for name in names:
        mine = importlib.import_module(f"clgrad.distributions.{name}")
        theirs = importlib.import_module(f"torch.distributions.{name}")
        assert set(theirs.__all__) <= set(mine.__all__), name
        for attr in theirs.__all__:
            if attr[0].isupper() and hasattr(torch.distributions, attr):
                assert getattr(mine, attr) is getattr(clgrad.distributions, attr), (name, attr)
        assert getattr(clgrad.distributions, name) is mine, name
    assert set(torch.distributions.__all__) <= set(clgrad.distributions.__all__)
    from clgrad.distributions.kl import kl_divergence
    from clgrad.distributions.normal import Normal
    from clgrad.distributions.studentT import StudentT

    assert Normal is clgrad.distributions.Normal and StudentT is clgrad.distributions.StudentT
    assert kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)).item() == 0.0
    for cls in ("Normal", "Gamma", "Beta", "Dirichlet", "Bernoulli", "Poisson", "Exponential"):
        assert issubclass(
            getattr(clgrad.distributions, cls), clgrad.distributions.ExponentialFamily
        )
    assert issubclass(clgrad.distributions.Wishart, clgrad.distributions.ExponentialFamily)
    assert issubclass(
        clgrad.distributions.ContinuousBernoulli, clgrad.distributions.ExponentialFamily
    )


# --- draws: their statistics, and gradients through rsample


def _moments_agree(name, s, mean, var, n):
    """Sample mean and variance within about 5 standard errors of the exact ones."""
    np.testing.assert_allclose(s.mean(0), mean, atol=5 * np.sqrt(var.max() / n), err_msg=name)
    # the variance's standard error, bounded through the 4th moment of the draws
    fourth = ((s - mean) ** 4).mean(0)
    np.testing.assert_allclose(s.var(0), var, atol=6 * np.sqrt(fourth.max() / n), err_msg=name)


def test_sample_statistics(device):
    clgrad.manual_seed(0)
    n = 20000
    clgrad.set_default_device(device)
    try:
        dists = _new_batched(clgrad)
    finally:
        clgrad.set_default_device("cpu")
    for name in (
        "Pareto", "Weibull", "Kumaraswamy", "InverseGamma", "FisherSnedecor",
        "GeneralizedPareto", "ContinuousBernoulli", "Multinomial", "NegativeBinomial",
        "OneHotCategoricalStraightThrough", "LowRankMultivariateNormal", "Wishart",
    ):  # fmt: skip
        d = dists[name]
        # to float64 on the host: the device may have no float64
        s = d.sample((n,)).cpu().double().numpy()
        _moments_agree(name, s, d.mean.cpu().double().numpy(), d.variance.cpu().double().numpy(), n)
    for name in ("HalfCauchy", "Pareto", "Weibull", "Kumaraswamy", "GeneralizedPareto"):
        # the CDF at the sample quantiles is the quantile's level, to a binomial error
        d = dists[name]
        s = d.sample((n,)).cpu().double().numpy()
        for q in (0.1, 0.5, 0.9):
            at = clgrad.tensor(np.quantile(s, q, axis=0), dtype=clgrad.float32, device=device)
            cdf = d.cdf(at).cpu().numpy()
            np.testing.assert_allclose(cdf, q, atol=5 * np.sqrt(q * (1 - q) / n), err_msg=name)
    # the full covariance of the low-rank normal: W W^T + D
    d = dists["LowRankMultivariateNormal"]
    s = d.sample((n,)).cpu().double().numpy()
    cov = d.covariance_matrix.cpu().double().numpy()
    for b in range(2):
        np.testing.assert_allclose(np.cov(s[:, b].T), cov[b], atol=0.1)
    # von Mises: angles in [-pi, pi), mean resultant direction loc, 1 - circular variance
    d = dists["VonMises"]
    s = d.sample((n,)).cpu().double().numpy()
    assert s.min() >= -np.pi and s.max() < np.pi
    loc, var = d.loc.cpu().numpy(), d.variance.cpu().numpy()
    np.testing.assert_allclose(np.cos(s - loc).mean(0), 1 - var, atol=0.02)
    np.testing.assert_allclose(np.sin(s - loc).mean(0), 0, atol=0.02)
    # the logistic normal's draws map back (inverse stick breaking) to the normal
    d = dists["LogisticNormal"]
    y = d.sample((n,))
    assert np.allclose(y.sum(-1).cpu().numpy(), 1, atol=1e-5) and bool((y > 0).all())
    x = d.transforms[0].inv(y).cpu().double().numpy()
    np.testing.assert_allclose(x.mean(0), d.loc.cpu().numpy(), atol=0.04)
    np.testing.assert_allclose(x.std(0), np.broadcast_to(d.scale.cpu().numpy(), (2, 2)), atol=0.03)
    # LKJ: unit diagonal, each correlation (r + 1) / 2 ~ Beta(c + (d - 2) / 2) twice, so
    # mean 0 and variance 1 / (2 c + d - 1) (torch's draws miss this: see LKJCholesky)
    d = dists["LKJCholesky"]
    L = d.sample((n,))
    assert bool(clgrad.distributions.constraints.corr_cholesky.check(L).all())
    C = (L @ L.transpose(-2, -1)).cpu().double().numpy()
    np.testing.assert_allclose(np.diagonal(C, 0, -2, -1), 1, atol=1e-5)
    r = C[..., [1, 2, 2], [0, 0, 1]]  # (n, 2, 3): the three correlations of each batch entry
    conc = d.concentration.cpu().numpy()[:, None]
    np.testing.assert_allclose(r.mean(0), 0, atol=0.03)
    np.testing.assert_allclose(r.var(0), np.broadcast_to(1 / (2 * conc + 2), (2, 3)), atol=0.01)


def test_reparameterized_gradients(device):
    """d E[f(x)] / d parameter through 20000 rsample draws, against the gradient of the exact
    E[f(x)] (the mean, or the second moment where the mean does not depend on a parameter)."""
    clgrad.manual_seed(1)
    n = 20000
    D, t = clgrad.distributions, clgrad.tensor

    def p(values):
        return t(values, device=device, requires_grad=True)

    cases = [
        ("Pareto", lambda a, b: D.Pareto(a, b), [[1.0, 2.0], [4.5, 6.0]], 0.05),
        ("Weibull", lambda a, b: D.Weibull(a, b), [[1.0, 2.0], [1.5, 3.0]], 0.05),
        ("Kumaraswamy", lambda a, b: D.Kumaraswamy(a, b), [[2.0, 0.7], [3.0, 1.5]], 0.05),
        ("InverseGamma", lambda a, b: D.InverseGamma(a, b), [[6.0, 9.0], [2.0, 1.0]], 0.08),
        ("GeneralizedPareto", lambda a, b: D.GeneralizedPareto(0.5, a, b),
         [[1.0, 2.0], [0.1, -0.3]], 0.05),
        ("ContinuousBernoulli", lambda a: D.ContinuousBernoulli(a), [[0.2, 0.8]], 0.05),
        ("FisherSnedecor", lambda a, b: D.FisherSnedecor(a, b), [[5.0, 12.0], [20.0, 30.0]],
         0.1),
    ]  # fmt: skip
    for name, make, values, rtol in cases:
        params = [p(v) for v in values]
        got = clgrad.autograd.grad(make(*params).rsample((n,)).mean(0).sum(), params)
        # a second instance: the first one's graph (a parameter's reciprocal, say) is freed
        want = clgrad.autograd.grad(make(*params).mean.sum(), params, allow_unused=True)
        for g, w in zip(got, want):
            w = np.zeros(2) if w is None else w.cpu().numpy()
            np.testing.assert_allclose(g.cpu().numpy(), w, rtol=rtol, atol=0.02, err_msg=name)
    # the low-rank normal's mean is loc: its second moment W W^T + D + loc^2 reaches W and D
    loc, W, diag = p([0.5, -1.0]), p([[1.0], [0.5]]), p([0.5, 2.0])
    d = D.LowRankMultivariateNormal(loc, W, diag)
    params = [loc, W, diag]
    got = clgrad.autograd.grad((d.rsample((n,)) ** 2).mean(0).sum(), params)
    want = clgrad.autograd.grad((d.variance + d.mean**2).sum(), params)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.cpu().numpy(), rtol=0.05, atol=0.03)
    # the Wishart's mean df Sigma, through the chi-squared (gamma) draws and the factor
    df, A = p([5.0, 7.0]), p([[1.0, 0.0], [0.5, 1.5]])
    d = D.Wishart(df, scale_tril=A)
    got = clgrad.autograd.grad(d.rsample((n,)).mean(0).sum(), [df, A])
    want = clgrad.autograd.grad(d.mean.sum(), [df, A])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.cpu().numpy(), rtol=0.05, atol=0.05)
    # the straight-through estimator: the gradient is that of the probabilities' expectation
    logits = p([0.0, 1.0])
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    (g,) = clgrad.autograd.grad((d.rsample((4,)) * t([1.0, 3.0], device=device)).sum(), [logits])
    probs = D.OneHotCategoricalStraightThrough(logits=logits).probs
    (w,) = clgrad.autograd.grad(4 * (probs * t([1.0, 3.0], device=device)).sum(), [logits])
    np.testing.assert_allclose(g.cpu().numpy(), w.cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_log_prob_gradcheck():
    D, T = clgrad.distributions, clgrad.distributions.transforms
    f64 = dict(dtype=clgrad.float64, requires_grad=True)

    def x64(values):
        return clgrad.tensor(values, dtype=clgrad.float64)

    cases = [
        (lambda W, d: D.LowRankMultivariateNormal(x64([0.0, 1.0, 0.5]), W, d).log_prob(
            x64([0.3, -0.2, 1.0])),
         [clgrad.tensor([[1.0, 0.2], [0.5, -0.3], [0.0, 0.7]], **f64),
          clgrad.tensor([1.0, 0.5, 2.0], **f64)]),
        (lambda df, A: D.Wishart(df, A @ A.T + x64([[1.0, 0.0], [0.0, 1.0]])).log_prob(
            x64([[3.0, 0.5], [0.5, 2.0]])),
         [clgrad.tensor(4.5, **f64), clgrad.tensor([[1.0, 0.2], [0.3, 0.8]], **f64)]),
        (lambda c, v: D.LKJCholesky(3, c).log_prob(T.CorrCholeskyTransform()(v)),
         [clgrad.tensor(1.5, **f64), clgrad.tensor([0.3, -0.5, 0.8], **f64)]),
        (lambda s, c: D.GeneralizedPareto(0.5, s, c).log_prob(x64([1.0, 2.5])),
         [clgrad.tensor([1.0, 2.0], **f64), clgrad.tensor([0.3, -0.2], **f64)]),
        (lambda p: D.ContinuousBernoulli(p).log_prob(x64([0.3, 0.8])),
         [clgrad.tensor([0.2, 0.7], **f64)]),
        (lambda n, lg: D.NegativeBinomial(n, logits=lg).log_prob(x64([2.0, 5.0])),
         [clgrad.tensor([3.0, 1.5], **f64), clgrad.tensor([-0.5, 0.5], **f64)]),
        (lambda loc, k: D.VonMises(loc, k).log_prob(x64([0.5, 3.0])),
         [clgrad.tensor([1.0, -2.0], **f64), clgrad.tensor([2.0, 5.0], **f64)]),
        (lambda a, b: D.Kumaraswamy(a, b).log_prob(x64([0.3, 0.8])),
         [clgrad.tensor([2.0, 0.7], **f64), clgrad.tensor([3.0, 1.5], **f64)]),
        (lambda v: T.CorrCholeskyTransform().log_abs_det_jacobian(
            v, T.CorrCholeskyTransform()(v)),
         [clgrad.tensor([0.3, -0.5, 0.8, 0.1, 1.2, -0.7], **f64)]),
        (lambda v: T.StickBreakingTransform()(v), [clgrad.tensor([0.3, -0.5, 0.8], **f64)]),
    ]  # fmt: skip
    for fn, inputs in cases:
        assert clgrad.autograd.gradcheck(fn, inputs)


def _distribution_reprs(lib):
    """repr and the parameters held of each distribution, built as a PyTorch program would."""
    D = lib.distributions
    relaxed = importlib.import_module(f"{lib.__name__}.distributions.relaxed_bernoulli")
    z2 = lib.zeros(2)
    made = {
        "Normal scalars": D.Normal(0.0, 1.0),
        "Normal batch": D.Normal(z2, 1.0),
        "Gumbel": D.Gumbel(0.0, 2.0),
        "Categorical logits": D.Categorical(logits=lib.zeros(1, 3)),
        "Categorical probs": D.Categorical(probs=lib.ones(3)),
        "Bernoulli logits": D.Bernoulli(logits=z2),
        "Bernoulli probs": D.Bernoulli(probs=lib.tensor(0.25)),
        "Binomial": D.Binomial(3, probs=lib.tensor(0.5)),
        "Geometric": D.Geometric(logits=z2),
        "LogitRelaxedBernoulli": relaxed.LogitRelaxedBernoulli(lib.tensor(0.5), logits=z2),
        "MultivariateNormal": D.MultivariateNormal(z2, lib.eye(2)),
        "LowRankMultivariateNormal": D.LowRankMultivariateNormal(z2, lib.ones(2, 1), lib.ones(2)),
        "LogNormal": D.LogNormal(0.0, 1.0),
        "Beta": D.Beta(1.0, 2.0),
    }
    out = {}
    for name, d in made.items():
        out[f"{name} repr"] = repr(d).replace(lib.__name__ + ".", "")
        out[f"{name} held"] = sorted(k for k in vars(d) if not k.startswith("_"))
    # the derived form, once read, is held and agrees with the given one
    c = made["Categorical logits"]
    out["Categorical probs"] = c.probs
    out["Categorical held after"] = sorted(k for k in vars(c) if not k.startswith("_"))
    out["Bernoulli logits"] = made["Bernoulli probs"].logits
    out["Geometric probs"] = made["Geometric"].probs
    out["Categorical expanded"] = D.Categorical(probs=lib.ones(3)).expand((2,)).logits
    return out


def test_repr_and_lazy_parameters_as_torchs(device):
    # a distribution holds the parameter it was given; the other form is derived on first use
    # (torch's lazy_property), and repr shows a one-element parameter's value
    _agree(_distribution_reprs, device)
