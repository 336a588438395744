"""nn.AdaptiveLogSoftmaxWithLoss against torch's on every device: outputs, loss, gradients of
every parameter and the input, log_prob, predict, unbatched input, and the errors."""

import numpy as np
import pytest
import torch

import clgrad

RNG = np.random.default_rng(0)


def _pair(device, head_bias, div_value=2.0):
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(
        8, 12, cutoffs=[3, 7, 10], div_value=div_value, head_bias=head_bias
    )
    ours = clgrad.nn.AdaptiveLogSoftmaxWithLoss(
        8, 12, cutoffs=[3, 7, 10], div_value=div_value, head_bias=head_bias
    )
    ours.load_state_dict({k: clgrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours.to(device), theirs


@pytest.mark.parametrize("head_bias", [False, True])
def test_forward_backward_as_torch(device, head_bias):
    ours, theirs = _pair(device, head_bias)
    x = RNG.standard_normal((9, 8)).astype(np.float32)
    target = np.array([0, 2, 3, 6, 7, 9, 10, 11, 1])  # every cluster, the shortlist too
    xo = clgrad.tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out_o, loss_o = ours(xo, clgrad.tensor(target, device=device))
    out_t, loss_t = theirs(xt, torch.tensor(target))
    np.testing.assert_allclose(
        out_o.detach().cpu().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(loss_o.item(), loss_t.item(), rtol=1e-5)
    loss_o.backward()
    loss_t.backward()
    np.testing.assert_allclose(xo.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(
            p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )
    lp_o = ours.log_prob(clgrad.tensor(x, device=device)).detach().cpu().numpy()
    lp_t = theirs.log_prob(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(lp_o, lp_t, rtol=1e-5, atol=1e-6)
    assert (
        ours.predict(clgrad.tensor(x, device=device)).tolist()
        == theirs.predict(torch.tensor(x)).tolist()
    )


def test_unbatched_and_rare_predictions_as_torch(device):
    ours, theirs = _pair(device, True)
    with torch.no_grad():  # a head that prefers the clusters: predict takes its full path
        theirs.head.bias.copy_(torch.tensor([0, 0, 0, 5.0, 5.0, 5.0]))
    ours.head.bias.data.copy_(clgrad.tensor([0, 0, 0, 5.0, 5.0, 5.0], device=device))
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    assert (
        ours.predict(clgrad.tensor(x, device=device)).tolist()
        == theirs.predict(torch.tensor(x)).tolist()
    )
    out_o, loss_o = ours(clgrad.tensor(x[0], device=device), clgrad.tensor(8, device=device))
    out_t, loss_t = theirs(torch.tensor(x[0]), torch.tensor(8))
    assert out_o.shape == out_t.shape == ()
    np.testing.assert_allclose(out_o.item(), out_t.item(), rtol=1e-5)


def test_errors_as_torch():
    for lib in (clgrad, torch):
        for cutoffs in ([], [3, 3], [5, 2], [0, 4], [4, 12]):
            with pytest.raises(ValueError):
                lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=cutoffs)
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[3])
        for x, t in (
            (lib.ones(2, 8), lib.tensor([0, 12])),  # target out of range
            (lib.ones(3, 8), lib.tensor([0, 1])),  # batch sizes differ
            (lib.ones(2, 8), lib.zeros(2, 1, dtype=lib.long)),  # 2-d target
            (lib.ones(2, 8), lib.tensor(1)),  # 0-d target, 2-d input
        ):
            with pytest.raises(RuntimeError):
                m(x, t)
