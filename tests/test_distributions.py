"""clgrad.distributions against torch.distributions: log_prob and its gradients, entropy,
moments, cdf/icdf, shapes of draws, kl_divergence, argument validation, sample statistics."""

from __future__ import annotations

import numpy as np
import torch

import clgrad


def _rounded(t):
    return None if t is None else np.round(np.asarray(t.tolist(), dtype=float), 4).tolist()


def _normal_and_uniform(lib):
    D, r = lib.distributions, _rounded
    loc = lib.tensor([0.0, 1.0], requires_grad=True)
    scale = lib.tensor([1.0, 2.0], requires_grad=True)
    n = D.Normal(loc, scale)
    lp = n.log_prob(lib.tensor([0.5, -1.0]))
    lp.sum().backward()
    out = [r(lp), r(loc.grad), r(scale.grad), r(n.entropy()), r(n.mean), r(n.variance)]
    out += [r(n.stddev), r(n.cdf(lib.tensor([0.5, 1.0]))), r(n.icdf(lib.tensor([0.5, 0.9])))]
    out += [tuple(n.sample((3,)).shape), n.rsample().requires_grad, n.sample().requires_grad]
    out += [tuple(n.batch_shape), tuple(n.event_shape)]
    u = D.Uniform(lib.tensor([0.0, 1.0]), lib.tensor([2.0, 5.0]))
    out += [r(u.log_prob(lib.tensor([1.0, 4.0]))), r(u.entropy()), r(u.mean), r(u.variance)]
    return [*out, tuple(u.sample((4, 2)).shape)]


def _bernoulli_and_categorical(lib):
    D, r = lib.distributions, _rounded
    b = D.Bernoulli(probs=lib.tensor([0.25, 0.9]))
    out = [r(b.log_prob(lib.tensor([1.0, 0.0]))), r(b.entropy()), r(b.mean), r(b.variance)]
    bl = D.Bernoulli(logits=lib.tensor([0.0, 2.0]))
    out += [tuple(b.sample((5,)).shape), r(bl.probs), r(bl.log_prob(lib.tensor([1.0, 1.0])))]
    c = D.Categorical(probs=lib.tensor([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    out += [r(c.log_prob(lib.tensor([1, 2]))), r(c.entropy()), tuple(c.sample((6,)).shape)]
    out += [str(c.sample().dtype).rpartition(".")[2], r(c.mode), tuple(c.batch_shape)]
    logits = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    cl = D.Categorical(logits=logits)
    lp = cl.log_prob(lib.tensor([2]))
    lp.sum().backward()
    return [*out, r(cl.probs), r(lp), r(logits.grad), r(cl.entropy())]


def _kl_and_errors(lib):
    D, r = lib.distributions, _rounded
    c = D.Categorical(probs=lib.tensor([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    b = D.Bernoulli(probs=lib.tensor([0.25, 0.9]))
    out = [
        r(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(lib.tensor([1.0, 0.0]), 2.0))),
        r(D.kl_divergence(c, D.Categorical(logits=lib.zeros(2, 3)))),
        r(D.kl_divergence(b, D.Bernoulli(probs=lib.tensor([0.5, 0.5])))),
        r(D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(lib.tensor([-1.0, 0.5]), 2.0))),
    ]
    for bad in (
        lambda: D.Normal(0.0, -1.0),
        lambda: D.Bernoulli(probs=lib.tensor([1.5])),
        lambda: D.Categorical(probs=lib.tensor([-0.1, 1.0])),
        lambda: D.Bernoulli(),
        lambda: c.log_prob(lib.tensor([3, 0])),
        lambda: D.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
        lambda: D.Normal(0.0, -1.0, validate_args=False),
        lambda: D.kl_divergence(c, D.Normal(0.0, 1.0)),
    ):
        try:
            bad()
            out.append(None)
        except (ValueError, NotImplementedError) as e:
            out.append(type(e))
    return out


def test_normal_and_uniform():
    assert _normal_and_uniform(clgrad) == _normal_and_uniform(torch)


def test_bernoulli_and_categorical():
    assert _bernoulli_and_categorical(clgrad) == _bernoulli_and_categorical(torch)


def test_kl_divergence_and_validation():
    assert _kl_and_errors(clgrad) == _kl_and_errors(torch)


def test_sample_statistics():
    clgrad.manual_seed(0)
    s = clgrad.distributions.Normal(clgrad.tensor(2.0), clgrad.tensor(3.0)).sample((20000,))
    assert abs(s.mean().item() - 2) < 0.1 and abs(s.std().item() - 3) < 0.1
    probs = clgrad.tensor([0.2, 0.3, 0.5])
    s = clgrad.distributions.Categorical(probs=probs).sample((20000,))
    freq = [(s == k).float().mean().item() for k in range(3)]
    np.testing.assert_allclose(freq, probs.tolist(), atol=0.02)
    s = clgrad.distributions.Uniform(-1.0, 3.0).sample((20000,))
    assert s.min().item() >= -1 and s.max().item() < 3 and abs(s.mean().item() - 1) < 0.05


# --- the rest of torch.distributions: each function below runs once with clgrad on ``device``
# and once with torch, and returns {name: value}; _agree compares the two


def _values(x):
    if isinstance(x, (clgrad.Tensor, torch.Tensor)):
        x = x.detach().cpu()
        return np.asarray(x.tolist(), dtype=float) if x.dtype.is_floating_point else x.tolist()
    if isinstance(x, (tuple, list)):
        return [_values(v) for v in x]
    return x


def _same(got, want, name, rtol, atol):
    if isinstance(want, np.ndarray):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    elif isinstance(want, list) and want and isinstance(want[0], (np.ndarray, list)):
        assert len(got) == len(want), name
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{name}[{i}]", rtol, atol)
    else:
        assert got == want, name


def _agree(fn, device, rtol=1e-4, atol=1e-5):
    """``fn``'s results with clgrad (tensors made without a device land on ``device``) and
    with torch agree: floats to ``rtol``/``atol``, everything else exactly."""
    default = clgrad.default_device()
    clgrad.set_default_device(device)
    try:
        got = fn(clgrad, device)
    finally:
        clgrad.set_default_device(default)
    want = fn(torch, "cpu")
    assert got.keys() == want.keys()
    for name in want:
        _same(_values(got[name]), _values(want[name]), name, rtol, atol)


def _param(lib, device, values, grad=True):
    return lib.tensor(values, device=device, requires_grad=grad)


def _report(dist, value, params, out, name, moments=("mean", "variance", "mode")):
    """log_prob at ``value`` and its gradient in ``params``, entropy and moments, into out."""
    lp = dist.log_prob(value)
    grads = torch_or_clgrad_grad(lp.sum(), params)
    out[f"{name}.log_prob"] = lp
    for i, g in enumerate(grads):
        out[f"{name}.grad{i}"] = g
    for moment in moments:
        out[f"{name}.{moment}"] = getattr(dist, moment)
    out[f"{name}.shapes"] = (tuple(dist.batch_shape), tuple(dist.event_shape))


def torch_or_clgrad_grad(y, params):
    lib = clgrad if isinstance(y, clgrad.Tensor) else torch
    return lib.autograd.grad(y, params)


def _continuous(lib, device):
    D, p, out = lib.distributions, _param, {}
    rate = p(lib, device, [0.5, 2.0])
    d = D.Exponential(rate)
    x = lib.tensor([1.5, 0.25], device=device)
    _report(d, x, [rate], out, "exponential")
    out["exponential.extra"] = [d.entropy(), d.cdf(x), d.icdf(lib.tensor([0.3, 0.9])), d.stddev]
    loc, scale = p(lib, device, [0.0, 1.0]), p(lib, device, [1.0, 0.5])
    for name, cls in (("laplace", D.Laplace), ("cauchy", D.Cauchy), ("gumbel", D.Gumbel)):
        d = cls(loc, scale)
        x = lib.tensor([0.5, -1.0], device=device)
        moments = ("mean", "variance", "mode") if name != "cauchy" else ("mode",)
        _report(d, x, [loc, scale], out, name, moments)
        q = lib.tensor([0.2, 0.7], device=device)
        out[f"{name}.extra"] = [d.entropy(), d.cdf(x), d.icdf(q), d.stddev]
    out["cauchy.moments"] = [D.Cauchy(loc, scale).mean, D.Cauchy(loc, scale).variance]
    d = D.HalfNormal(scale)
    x = lib.tensor([0.5, 2.0], device=device)
    _report(d, x, [scale], out, "halfnormal")
    out["halfnormal.extra"] = [d.entropy(), d.cdf(x), d.icdf(lib.tensor([0.2, 0.7]))]
    d = D.LogNormal(loc, scale)
    _report(d, x, [loc, scale], out, "lognormal")
    out["lognormal.extra"] = [d.entropy(), d.cdf(x), d.icdf(lib.tensor([0.2, 0.7]))]
    df = p(lib, device, [1.5, 3.0, 6.0])
    d = D.StudentT(df, lib.tensor(0.5, device=device), 2.0)
    _report(d, lib.tensor([0.0, 1.0, -3.0], device=device), [df], out, "studentt")
    out["studentt.entropy"] = d.entropy()
    out["studentt.edges"] = [D.StudentT(lib.tensor([0.5, 1.5, 2.5])).variance]
    out["studentt.mean_df_below_1"] = D.StudentT(lib.tensor([0.5, 1.5])).mean
    return out


def _gamma_family(lib, device):
    D, p, out = lib.distributions, _param, {}
    conc, rate = p(lib, device, [0.5, 2.0, 7.5]), p(lib, device, [1.0, 3.0, 0.5])
    d = D.Gamma(conc, rate)
    _report(d, lib.tensor([0.3, 1.0, 12.0], device=device), [conc, rate], out, "gamma")
    out["gamma.entropy"] = d.entropy()
    out["gamma.cdf"] = d.cdf(lib.tensor([0.3, 1.0, 12.0], device=device)).detach()
    df = p(lib, device, [1.0, 4.0])
    d = D.Chi2(df)
    _report(d, lib.tensor([0.5, 3.0], device=device), [df], out, "chi2")
    out["chi2.extra"] = [d.entropy(), d.df, d.cdf(lib.tensor([0.5, 3.0], device=device)).detach()]
    c1, c0 = p(lib, device, [0.5, 2.0, 5.0]), p(lib, device, [0.7, 3.0, 1.5])
    d = D.Beta(c1, c0)
    _report(d, lib.tensor([0.1, 0.5, 0.9], device=device), [c1, c0], out, "beta")
    out["beta.extra"] = [d.entropy(), d.concentration1, d.concentration0]
    conc = p(lib, device, [[1.0, 2.0, 3.0], [0.5, 4.0, 1.5]])
    d = D.Dirichlet(conc)
    value = lib.tensor([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], device=device)
    _report(d, value, [conc], out, "dirichlet")
    out["dirichlet.entropy"] = d.entropy()
    out["dirichlet.corner_mode"] = D.Dirichlet(lib.tensor([0.5, 0.3, 0.9])).mode
    return out


def _discrete(lib, device):
    D, p, out = lib.distributions, _param, {}
    probs = p(lib, device, [0.2, 0.5, 0.9])
    d = D.Binomial(lib.tensor([3.0, 5.0, 10.0], device=device), probs)
    _report(d, lib.tensor([1.0, 5.0, 7.0], device=device), [probs], out, "binomial")
    logits = p(lib, device, [-1.0, 0.0, 2.0])
    d = D.Binomial(4, logits=logits)
    _report(d, lib.tensor([0.0, 2.0, 4.0], device=device), [logits], out, "binomial_logits")
    out["binomial.entropy"] = d.entropy()
    out["binomial.support"] = D.Binomial(2, probs=lib.tensor([0.5, 0.1])).enumerate_support()
    d = D.Geometric(probs)
    _report(d, lib.tensor([0.0, 3.0, 1.0], device=device), [probs], out, "geometric")
    out["geometric.entropy"] = d.entropy()
    out["geometric.logits"] = D.Geometric(logits=lib.tensor([0.0, 1.0])).probs
    out["geometric.one"] = D.Geometric(lib.tensor([1.0])).log_prob(lib.tensor([0.0]))
    rate = p(lib, device, [0.5, 3.0, 10.0])
    d = D.Poisson(rate)
    _report(d, lib.tensor([0.0, 2.0, 12.0], device=device), [rate], out, "poisson")
    probs = p(lib, device, [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    d = D.OneHotCategorical(probs=probs)
    value = lib.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]], device=device)
    _report(d, value, [probs], out, "onehot")
    out["onehot.entropy"] = d.entropy()
    out["onehot.logits"] = D.OneHotCategorical(logits=lib.tensor([0.0, 1.0])).probs
    b = D.Bernoulli(probs=lib.tensor([0.2, 0.5, 0.8], device=device))
    out["bernoulli.mode"] = b.mode
    return out


def test_continuous_against_torch(device):
    _agree(_continuous, device)


def test_gamma_family_against_torch(device):
    _agree(_gamma_family, device)


def test_discrete_against_torch(device):
    _agree(_discrete, device)


def _transforms(lib, device):
    D, T, p, out = lib.distributions, lib.distributions.transforms, _param, {}
    x = p(lib, device, [-1.5, 0.0, 0.7])
    for name, t in (
        ("exp", T.ExpTransform()),
        ("sigmoid", T.SigmoidTransform()),
        ("tanh", T.TanhTransform()),
        ("affine", T.AffineTransform(1.0, -3.0)),
        ("affine_tensor", T.AffineTransform(lib.tensor([0.0, 1.0, 2.0]), lib.tensor(2.0))),
        ("compose", T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.TanhTransform()])),
    ):
        y = t(x)
        ladj = t.log_abs_det_jacobian(x, y)
        (grad,) = torch_or_clgrad_grad((y + ladj).sum(), [x])
        out[name] = [y, t.inv(y), ladj, t.inv.log_abs_det_jacobian(y, x), grad]
    t = T.AffineTransform(lib.zeros(3), lib.tensor([1.0, 2.0, 4.0]), event_dim=1)
    out["affine_event"] = t.log_abs_det_jacobian(lib.zeros(2, 3), lib.zeros(2, 3))
    cached = T.TanhTransform(cache_size=1)
    y = cached(x)
    out["cache"] = [cached.inv(y) is x, T.TanhTransform().inv(y) is x]
    out["eq"] = [T.ExpTransform() == T.ExpTransform(), T.ExpTransform().inv.inv == T.ExpTransform()]
    # SAC's squashed Gaussian: log-density of the action through the tanh
    mu, std = p(lib, device, [0.0, 0.5]), p(lib, device, [1.0, 0.3])
    d = D.TransformedDistribution(D.Normal(mu, std), [T.TanhTransform(cache_size=1)])
    action = lib.tensor([0.3, -0.6], device=device)
    _report(d, action, [mu, std], out, "squashed", moments=())
    d = D.TransformedDistribution(
        D.Normal(mu, std), [T.AffineTransform(1.0, 2.0), T.ExpTransform()]
    )
    value = lib.tensor([2.0, 5.0], device=device)
    out["affine_exp"] = [d.log_prob(value), d.cdf(value), d.icdf(lib.tensor([0.3, 0.8]))]
    out["affine_exp.shapes"] = [tuple(d.sample((4,)).shape), d.has_rsample]
    decreasing = D.TransformedDistribution(D.Normal(mu, std), T.AffineTransform(0.0, -1.0))
    out["decreasing.cdf"] = decreasing.cdf(value)
    # a transform of event_dim 1 makes a batch of Normals one event
    d = D.TransformedDistribution(
        D.Normal(lib.zeros(2, 3), 1.0), T.AffineTransform(0.0, lib.ones(3) * 2, event_dim=1)
    )
    out["event_transform"] = [
        tuple(d.batch_shape),
        tuple(d.event_shape),
        d.log_prob(lib.ones(2, 3)),
    ]
    return out


def _independent_and_mixture(lib, device):
    D, p, out = lib.distributions, _param, {}
    loc, scale = (
        p(lib, device, [[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]]),
        p(lib, device, [1.0, 2.0, 0.5]),
    )
    d = D.Independent(D.Normal(loc, scale), 1)
    _report(d, lib.ones(2, 3, device=device), [loc, scale], out, "independent")
    out["independent.entropy"] = d.entropy()
    out["independent.more"] = [tuple(d.rsample((5,)).shape), d.has_rsample]
    d2 = D.Independent(D.Normal(loc, scale), 2)
    out["independent2"] = [
        tuple(d2.batch_shape),
        tuple(d2.event_shape),
        d2.log_prob(lib.zeros(2, 3)),
    ]
    out["independent.expand"] = tuple(d.expand((4, 2)).sample().shape)
    weights = p(lib, device, [[0.3, 0.7], [0.5, 0.5]])
    means, stds = (
        p(lib, device, [[-1.0, 2.0], [0.0, 1.0]]),
        p(lib, device, [[1.0, 0.5], [2.0, 1.0]]),
    )
    d = D.MixtureSameFamily(D.Categorical(probs=weights), D.Normal(means, stds))
    _report(
        d,
        lib.tensor([0.5, -0.5], device=device),
        [weights, means, stds],
        out,
        "mixture",
        ("mean", "variance"),
    )
    out["mixture.cdf"] = d.cdf(lib.tensor([0.5, -0.5], device=device))
    out["mixture.shapes"] = [tuple(d.sample((3,)).shape), tuple(d.sample().shape)]
    # a mixture of diagonal Gaussians in 2-d: components with an event dim
    comp = D.Independent(D.Normal(lib.tensor([[0.0, 0.0], [3.0, 3.0]]), lib.ones(2, 2)), 1)
    d = D.MixtureSameFamily(D.Categorical(logits=lib.zeros(2)), comp)
    out["mixture2d"] = [d.log_prob(lib.tensor([[1.0, 1.0], [3.0, 2.0]])), d.mean, d.variance]
    out["mixture2d.shape"] = tuple(d.sample((4,)).shape)
    return out


def _multivariate_normal(lib, device):
    D, p, out = lib.distributions, _param, {}
    loc = p(lib, device, [[0.0, 1.0, -1.0], [2.0, 0.0, 0.5]])
    tril = p(lib, device, [[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]])
    x = lib.tensor([[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]], device=device)
    d = D.MultivariateNormal(loc, scale_tril=tril)
    _report(d, x, [loc, tril], out, "scale_tril")
    out["scale_tril.matrices"] = [
        d.covariance_matrix,
        d.precision_matrix,
        d.scale_tril,
        d.entropy(),
    ]
    cov = p(lib, device, [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
    d = D.MultivariateNormal(loc, covariance_matrix=cov)
    _report(d, x, [loc, cov], out, "covariance")
    out["covariance.matrices"] = [d.scale_tril, d.precision_matrix, d.entropy(), d.stddev]
    prec = p(lib, device, [[1.0, 0.2, 0.0], [0.2, 2.0, 0.3], [0.0, 0.3, 0.8]])
    d = D.MultivariateNormal(loc[0], precision_matrix=prec)
    _report(d, x, [prec], out, "precision")
    out["precision.matrices"] = [d.covariance_matrix, d.scale_tril, d.entropy()]
    out["shapes"] = [tuple(d.expand((4,)).sample((2,)).shape), tuple(d.rsample((5, 2)).shape)]
    return out


def _relaxed(lib, device):
    D, p, out = lib.distributions, _param, {}
    temperature, logits = lib.tensor(0.7, device=device), p(lib, device, [-1.0, 0.5])
    d = D.RelaxedBernoulli(temperature, logits=logits)
    _report(d, lib.tensor([0.2, 0.9], device=device), [logits], out, "relaxed_bernoulli", ())
    out["relaxed_bernoulli.probs"] = D.RelaxedBernoulli(temperature, probs=lib.tensor(0.3)).logits
    logits = p(lib, device, [[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]])
    d = D.RelaxedOneHotCategorical(temperature, logits=logits)
    value = lib.tensor([[0.2, 0.7, 0.1], [0.5, 0.25, 0.25]], device=device)
    _report(d, value, [logits], out, "relaxed_onehot", ())
    out["relaxed_onehot.shape"] = tuple(d.rsample((4,)).shape)
    return out


def test_transforms_against_torch(device):
    _agree(_transforms, device)


def test_independent_and_mixture_against_torch(device):
    _agree(_independent_and_mixture, device)


def test_multivariate_normal_against_torch(device):
    _agree(_multivariate_normal, device, rtol=2e-4)


def test_relaxed_against_torch(device):
    _agree(_relaxed, device)


def _batched(lib):
    """One of each distribution with a batch of 2 (parameters on the default device)."""
    D, t = lib.distributions, lib.tensor
    two, half = t([1.0, 2.0]), t([0.3, 0.6])
    return {
        "Exponential": D.Exponential(two),
        "Laplace": D.Laplace(half, two),
        "Cauchy": D.Cauchy(half, two),
        "HalfNormal": D.HalfNormal(two),
        "Gumbel": D.Gumbel(half, two),
        "LogNormal": D.LogNormal(half, two),
        "StudentT": D.StudentT(two, half),
        "Gamma": D.Gamma(two, half),
        "Chi2": D.Chi2(two),
        "Beta": D.Beta(two, half),
        "Dirichlet": D.Dirichlet(t([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])),
        "Poisson": D.Poisson(two),
        "Binomial": D.Binomial(t([3.0, 5.0]), half),
        "Geometric": D.Geometric(half),
        "OneHotCategorical": D.OneHotCategorical(t([[0.2, 0.8], [0.5, 0.5]])),
        "MultivariateNormal": D.MultivariateNormal(t([[0.0, 1.0], [1.0, 0.0]]), lib.eye(2)),
        "Independent": D.Independent(D.Normal(t([[0.0, 1.0], [1.0, 0.0]]), 1.0), 1),
        "RelaxedBernoulli": D.RelaxedBernoulli(t(0.5), probs=half),
        "RelaxedOneHotCategorical": D.RelaxedOneHotCategorical(t(0.5), probs=t([[0.2, 0.8]])),
        "Mixture": D.MixtureSameFamily(
            D.Categorical(probs=t([[0.2, 0.8], [0.5, 0.5]])),
            D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), 1.0),
        ),
        "Tanh": D.TransformedDistribution(
            D.Normal(half, two), [D.transforms.TanhTransform(cache_size=1)]
        ),
    }


def _draw_shapes(lib):
    out = {}
    for name, d in _batched(lib).items():
        for shape in ((), (3,), (2, 3)):
            s = d.sample(shape)
            out[name, shape] = (tuple(s.shape), str(s.dtype).rpartition(".")[2], s.requires_grad)
            if d.has_rsample:
                out[name, shape, "r"] = tuple(d.rsample(shape).shape)
        out[name] = (d.has_rsample, tuple(d.batch_shape), tuple(d.event_shape))
    return out


def test_sample_shapes_and_dtypes(device):
    clgrad.set_default_device(device)
    try:
        got = _draw_shapes(clgrad)
    finally:
        clgrad.set_default_device("cpu")
    assert got == _draw_shapes(torch)


def test_new_sample_statistics(device):
    """Means and variances of 20000 draws within about 5 standard errors of the exact ones."""
    clgrad.manual_seed(0)
    n = 20000
    clgrad.set_default_device(device)
    try:
        dists = _batched(clgrad)
    finally:
        clgrad.set_default_device("cpu")
    for name in (
        "Exponential", "Laplace", "HalfNormal", "Gumbel", "Gamma", "Chi2", "Beta", "Dirichlet",
        "Poisson", "Binomial", "Geometric", "OneHotCategorical", "MultivariateNormal", "Mixture",
    ):  # fmt: skip
        d = dists[name]
        # to float64 on the host: the device may have no float64
        s = d.sample((n,)).cpu().double().numpy()
        mean, var = d.mean.cpu().double().numpy(), d.variance.cpu().double().numpy()
        np.testing.assert_allclose(s.mean(0), mean, atol=5 * np.sqrt(var.max() / n), err_msg=name)
        # the variance's standard error, bounded through the 4th moment of the draws
        fourth = ((s - mean) ** 4).mean(0)
        np.testing.assert_allclose(s.var(0), var, atol=6 * np.sqrt(fourth.max() / n), err_msg=name)
    s = dists["StudentT"].sample((n,)).cpu().numpy()  # df 1 has no mean: compare medians
    np.testing.assert_allclose(np.median(s, 0), [0.3, 0.6], atol=0.05)
    s = dists["Cauchy"].sample((n,)).cpu().numpy()
    np.testing.assert_allclose(np.quantile(s, 0.75, 0), [1.3, 2.6], atol=0.15)  # loc + scale


def test_gamma_rsample_gradient_is_torchs():
    """The implicit-reparameterization gradient dx/dalpha at fixed draws, against torch's."""
    from clgrad.distributions.gamma import _standard_gamma_grad

    alpha = [0.05, 0.3, 1.0, 1.0, 2.5, 7.0, 20.0, 150.0, 150.0]
    x = [1e-8, 0.2, 0.05, 3.0, 2.0, 9.0, 18.0, 140.0, 175.0]
    got = _standard_gamma_grad(
        clgrad.tensor(alpha, dtype=clgrad.float64), clgrad.tensor(x).double()
    )
    want = torch._standard_gamma_grad(torch.tensor(alpha).double(), torch.tensor(x).double())
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-3)


def test_reparameterized_gradients(device):
    """d E[x] / d parameter from rsample, against the exact derivative of the mean."""
    clgrad.manual_seed(1)
    n = 20000
    D = clgrad.distributions
    a = clgrad.tensor([0.5, 3.0], device=device, requires_grad=True)
    b = clgrad.tensor([2.0, 1.0], device=device, requires_grad=True)
    D.Gamma(a, b).rsample((n,)).mean(0).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), 1 / np.array([2.0, 1.0]), rtol=0.05)
    a.grad = b.grad = None
    D.Beta(a, b).rsample((n,)).mean(0).sum().backward()
    av, bv = np.array([0.5, 3.0]), np.array([2.0, 1.0])
    np.testing.assert_allclose(a.grad.cpu().numpy(), bv / (av + bv) ** 2, rtol=0.08)
    np.testing.assert_allclose(b.grad.cpu().numpy(), -av / (av + bv) ** 2, rtol=0.08)
    conc = clgrad.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    D.Dirichlet(conc).rsample((n,)).mean(0)[0].backward()  # d(a0 / sum) / da
    np.testing.assert_allclose(conc.grad.cpu().numpy(), [5 / 36, -1 / 36, -1 / 36], atol=0.01)
    # with the same noise, rsample is exactly its formula
    loc = clgrad.tensor([1.0, -1.0], device=device, requires_grad=True)
    tril = clgrad.tensor([[1.0, 0.0], [0.5, 2.0]], device=device)
    clgrad.manual_seed(3)
    eps = clgrad.randn(4, 2, device=device)
    clgrad.manual_seed(3)
    x = D.MultivariateNormal(loc, scale_tril=tril).rsample((4,))
    np.testing.assert_allclose(
        x.detach().cpu().numpy(), (loc + eps @ tril.T).detach().cpu().numpy(), rtol=1e-5
    )
    temperature, logits = (
        clgrad.tensor(0.5, device=device),
        clgrad.tensor([0.0, 1.0, -1.0], device=device),
    )
    clgrad.manual_seed(4)
    u = clgrad.rand(3, device=device)
    clgrad.manual_seed(4)
    y = D.RelaxedOneHotCategorical(temperature, logits=logits).rsample()
    gumbel = -(-u.log()).log()
    np.testing.assert_allclose(
        y.cpu().numpy(), ((logits + gumbel) / 0.5).softmax(-1).cpu().numpy(), rtol=1e-5
    )


def test_log_prob_gradcheck():
    D = clgrad.distributions
    f64 = dict(dtype=clgrad.float64, requires_grad=True)
    cases = [
        (lambda df, loc: D.StudentT(df, loc, 1.5).log_prob(clgrad.tensor([0.3, -2.0]).double()),
         [clgrad.tensor([2.5, 6.0], **f64), clgrad.tensor([0.1, 0.2], **f64)]),
        (lambda c, r: D.Gamma(c, r).log_prob(clgrad.tensor([0.5, 2.0]).double()),
         [clgrad.tensor([0.7, 3.0], **f64), clgrad.tensor([1.5, 0.5], **f64)]),
        (lambda c: D.Dirichlet(c).entropy(), [clgrad.tensor([0.7, 3.0, 1.2], **f64)]),
        (lambda L: D.MultivariateNormal(clgrad.zeros(2).double(), scale_tril=L.tril()).log_prob(
            clgrad.tensor([0.4, -0.3]).double()),
         [clgrad.tensor([[1.0, 0.0], [0.3, 0.8]], **f64)]),
        (lambda A: D.MultivariateNormal(clgrad.zeros(2).double(), A @ A.T).entropy(),
         [clgrad.tensor([[1.0, 0.2], [0.3, 0.8]], **f64)]),
        (lambda m, s: D.TransformedDistribution(D.Normal(m, s), D.transforms.TanhTransform())
         .log_prob(clgrad.tensor([0.3, -0.8]).double()),
         [clgrad.tensor([0.1, 0.2], **f64), clgrad.tensor([0.5, 1.2], **f64)]),
    ]  # fmt: skip
    for fn, inputs in cases:
        assert clgrad.autograd.gradcheck(fn, inputs)


def _kl_pairs(lib, device):
    D, t = lib.distributions, lib.tensor
    kl = D.kl_divergence
    half, two = t([0.3, 0.6]), t([1.0, 2.0])
    cov = t([[2.0, 0.3], [0.3, 1.0]])
    out = {
        "exponential": kl(D.Exponential(two), D.Exponential(half)),
        "laplace": kl(D.Laplace(half, two), D.Laplace(two, half)),
        "cauchy": kl(D.Cauchy(half, two), D.Cauchy(two, half)),
        "halfnormal": kl(D.HalfNormal(two), D.HalfNormal(half)),
        "gumbel": kl(D.Gumbel(half, two), D.Gumbel(two, half)),
        "lognormal": kl(D.LogNormal(half, two), D.LogNormal(two, half)),
        "gamma": kl(D.Gamma(two, half), D.Gamma(half, two)),
        "beta": kl(D.Beta(two, half), D.Beta(half, two)),
        "dirichlet": kl(D.Dirichlet(t([[1.0, 2.0], [3.0, 0.5]])), D.Dirichlet(t([0.5, 0.5]))),
        "poisson": kl(D.Poisson(two), D.Poisson(half)),
        "geometric": kl(D.Geometric(half), D.Geometric(t([0.5, 0.1]))),
        "binomial": kl(D.Binomial(t([5.0, 4.0]), half), D.Binomial(4, t([0.5, 0.1]))),
        "onehot": kl(D.OneHotCategorical(t([0.2, 0.8])), D.OneHotCategorical(t([0.5, 0.5]))),
        "independent": kl(
            D.Independent(D.Normal(t([[0.0, 1.0]]), two), 1),
            D.Independent(D.Normal(half, 1.0), 1),
        ),
        "mvn": kl(
            D.MultivariateNormal(t([[0.0, 1.0], [1.0, 0.0]]), cov),
            D.MultivariateNormal(half, scale_tril=t([[1.0, 0.0], [0.4, 0.5]])),
        ),
    }
    errors = []
    for bad in (
        lambda: kl(
            D.Independent(D.Normal(t([[0.0]]), 1.0), 1), D.Independent(D.Normal(t([[0.0]]), 1.0), 2)
        ),
        lambda: kl(D.OneHotCategorical(t([0.2, 0.8])), D.Normal(0.0, 1.0)),
        lambda: kl(D.Binomial(2, half), D.Binomial(4, half)),
    ):
        try:
            bad()
            errors.append(None)
        except (NotImplementedError, ValueError) as e:
            errors.append(type(e).__name__)
    out["errors"] = errors
    return out


def test_kl_pairs_against_torch(device):
    _agree(_kl_pairs, device)


def test_register_kl_dispatches_to_subclasses():
    D = clgrad.distributions

    class Shifted(D.Exponential):
        pass

    p, q = Shifted(clgrad.tensor(2.0)), Shifted(clgrad.tensor(1.0))
    assert abs(D.kl_divergence(p, q).item() - (np.log(2) + 0.5 - 1)) < 1e-6  # the parent's

    @D.register_kl(Shifted, Shifted)
    def _kl_shifted(p, q):
        return p.rate * 0 + 7.0

    assert D.kl_divergence(p, q).item() == 7.0
    assert D.kl_divergence(D.Exponential(2.0), q).item() != 7.0


def _errors(lib):
    D, t = lib.distributions, lib.tensor
    out = []
    for bad in (
        lambda: D.Exponential(t([-1.0])),
        lambda: D.Exponential(t([1.0])).log_prob(t([-0.5])),
        lambda: D.Laplace(0.0, 0.0),
        lambda: D.Cauchy(0.0, -1.0),
        lambda: D.HalfNormal(t(1.0)).log_prob(t(-1.0)),
        lambda: D.Gumbel(t(0.0), t(-2.0)),
        lambda: D.LogNormal(0.0, -1.0),
        lambda: D.LogNormal(0.0, 1.0).log_prob(t(-1.0)),
        lambda: D.StudentT(t(-1.0)),
        lambda: D.Gamma(t(1.0), t(-1.0)),
        lambda: D.Gamma(t(1.0), t(1.0)).log_prob(t(-2.0)),
        lambda: D.Chi2(t(0.0)),
        lambda: D.Beta(t(1.0), t(0.0)),
        lambda: D.Beta(t(1.0), t(1.0)).log_prob(t(1.5)),
        lambda: D.Dirichlet(t([1.0, -1.0])),
        lambda: D.Dirichlet(t(1.0)),
        lambda: D.Dirichlet(t([1.0, 1.0])).log_prob(t([0.3, 0.3])),
        lambda: D.Poisson(t(-1.0)),
        lambda: D.Poisson(t(1.0)).log_prob(t(1.5)),
        lambda: D.Binomial(t(2.5), t(0.5)),
        lambda: D.Binomial(3, t(0.5)).log_prob(t(4.0)),
        lambda: D.Geometric(t(0.0)),
        lambda: D.Geometric(t(1.5)),
        lambda: D.OneHotCategorical(t([0.5, 0.5])).log_prob(t([1.0, 1.0])),
        lambda: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])),
        lambda: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
        lambda: D.MultivariateNormal(t([0.0, 0.0]), lib.eye(2), scale_tril=lib.eye(2)),
        lambda: D.MultivariateNormal(t(0.0), lib.eye(2)),
        lambda: D.Independent(D.Normal(t([0.0]), 1.0), 2),
        lambda: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t([0.0]), 1.0)),
        lambda: D.MixtureSameFamily(D.Categorical(t([0.5, 0.5])), D.Normal(t([0.0]), 1.0)),
        lambda: D.RelaxedBernoulli(t(0.5), probs=t(1.5)),
        lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
        lambda: D.Gamma(t(1.0), t(-1.0), validate_args=False),
    ):
        try:
            bad()
            out.append(None)
        except (ValueError, NotImplementedError) as e:
            out.append(type(e).__name__)
    return out


def test_validation_errors_as_torchs():
    assert _errors(clgrad) == _errors(torch)
