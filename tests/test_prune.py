"""clgrad.nn.utils.prune against torch.nn.utils.prune on every device: masks of each method
(alone, chained on one tensor, and global), the state dict, forward and gradients of a pruned
layer, remove and is_pruned, and the errors."""

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch's submodule is not imported with torch.nn)

import clgrad

RNG = np.random.default_rng(0)
W = RNG.standard_normal((6, 4, 3)).astype(np.float32)  # distinct magnitudes: no ties
B = RNG.standard_normal(6).astype(np.float32)


def _pruned(lib, device, steps):
    P = lib.nn.utils.prune
    conv = lib.nn.Conv1d(4, 6, 3).to(device)
    with lib.no_grad():
        conv.weight.copy_(lib.tensor(W, device=device))
        conv.bias.copy_(lib.tensor(B, device=device))
    for step in steps:
        step(P, conv)
    return conv


STEPS = {
    "l1 fraction": [lambda P, m: P.l1_unstructured(m, "weight", amount=0.3)],
    "l1 count": [lambda P, m: P.l1_unstructured(m, "weight", amount=7)],
    "ln structured": [lambda P, m: P.ln_structured(m, "weight", amount=2, n=2, dim=0)],
    "ln structured dim 1": [lambda P, m: P.ln_structured(m, "weight", amount=0.5, n=1, dim=1)],
    "chained": [
        lambda P, m: P.l1_unstructured(m, "weight", amount=0.3),
        lambda P, m: P.ln_structured(m, "weight", amount=2, n=1, dim=0),
        lambda P, m: P.l1_unstructured(m, "weight", amount=5),
    ],
    "identity then l1": [
        lambda P, m: P.identity(m, "weight"),
        lambda P, m: P.l1_unstructured(m, "bias", amount=2),
    ],
    "custom mask": [
        lambda P, m: P.custom_from_mask(m, "bias", mask=m.bias.detach() * 0 + (m.bias > 0))
    ],
}


@pytest.mark.parametrize("name", list(STEPS))
def test_pruning_matches_torch(device, name):
    results = []
    data = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        torch.manual_seed(0)
        conv = _pruned(lib, dev, STEPS[name])
        x = lib.tensor(data, device=dev)
        y = conv(x)
        y.square().sum().backward()
        state = {k: v.detach().cpu().numpy() for k, v in conv.state_dict().items()}
        grads = {n: p.grad.cpu().numpy() for n, p in conv.named_parameters()}
        results.append((state, y.detach().cpu().numpy(), grads))
    (ts, ty, tg), (cs, cy, cg) = results
    assert sorted(cs) == sorted(ts)
    for k in ts:
        np.testing.assert_allclose(cs[k], ts[k], rtol=1e-6, err_msg=k)
    np.testing.assert_allclose(cy, ty, rtol=1e-4, atol=1e-5)
    for k in tg:
        np.testing.assert_allclose(cg[k], tg[k], rtol=1e-4, atol=1e-4, err_msg=k)


def test_global_remove_and_random_match_torch(device):
    out = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        P = lib.nn.utils.prune
        conv = _pruned(lib, dev, [lambda P, m: P.l1_unstructured(m, "weight", amount=0.2)])
        lin = lib.nn.Linear(3, 2).to(dev)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(W[0, :2], device=dev))
        P.global_unstructured([(conv, "weight"), (lin, "weight")], P.L1Unstructured, amount=0.5)
        masks = [conv.weight_mask.cpu().numpy(), lin.weight_mask.cpu().numpy()]
        pruned = conv.weight.detach().cpu().numpy()
        assert P.is_pruned(conv) and P.is_pruned(lib.nn.Sequential(lin))
        P.remove(conv, "weight")
        assert sorted(conv.state_dict()) == ["bias", "weight"] and not P.is_pruned(conv)
        np.testing.assert_array_equal(conv.weight.detach().cpu().numpy(), pruned)
        rand = lib.nn.Linear(10, 10).to(dev)
        P.random_unstructured(rand, "weight", amount=0.3)
        P.random_structured(rand, "weight", amount=3, dim=1)
        zero_cols = int((rand.weight_mask.sum(0) == 0).sum())
        out.append(masks + [int((rand.weight_mask == 0).sum()) >= 30, zero_cols])
    for g, w in zip(out[1], out[0]):
        np.testing.assert_array_equal(g, w)


def test_pruning_errors_match_torch():
    for lib in (torch, clgrad):
        P = lib.nn.utils.prune
        with pytest.raises(ValueError):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5)
        with pytest.raises(ValueError):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=5)
        with pytest.raises(TypeError):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount="half")
        with pytest.raises(ValueError):
            P.ln_structured(lib.nn.Linear(2, 2), "bias", amount=1, n=2, dim=0)
        with pytest.raises(ValueError):
            P.remove(lib.nn.Linear(2, 2), "weight")
        with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", 1, importance_scores=lib.ones(3))


def test_a_second_pruning_ranks_the_masked_values(device):
    # ln_structured after custom_from_mask scores each channel by its masked norm, as torch's
    # (it scored the unmasked weight_orig: other channels survived)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 1, 3, 3)).astype(np.float32)
    mask = (rng.random((6, 1, 3, 3)) > 0.5).astype(np.float32)
    kept = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        m = lib.nn.Conv2d(1, 6, 3).to(dev)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        P = lib.nn.utils.prune
        P.custom_from_mask(m, "weight", lib.tensor(mask, device=dev))
        P.l1_unstructured(m, "bias", amount=3)
        P.ln_structured(m, "weight", amount=0.5, n=2, dim=0)
        kept.append(m.weight_mask.sum((1, 2, 3)).tolist())
    assert kept[0] == kept[1]
