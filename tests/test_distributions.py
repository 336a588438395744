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
