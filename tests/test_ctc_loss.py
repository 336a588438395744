"""nn.CTCLoss / F.ctc_loss / torch.ctc_loss against torch on every device: losses, the
gradients at the logits and at the log-probabilities (torch's form), target layouts,
reductions, zero_infinity, and errors."""

import numpy as np
import pytest
import torch

import clgrad

RNG = np.random.default_rng(0)
CASES = [
    # T, N, C, target lengths, input lengths, reduction, zero_infinity
    (6, 2, 5, [3, 2], [6, 5], "mean", False),
    (5, 2, 4, [2, 2], [1, 5], "none", True),  # an impossible alignment, zeroed
    (8, 3, 6, [4, 0, 3], [8, 7, 8], "sum", False),  # an empty target
    (7, 2, 4, [3, 3], [7, 7], "mean", False),
]


def _run(lib, device, T, N, C, tl, il, reduction, zero_infinity, layout, logits, targets):
    x = lib.tensor(logits, device=device, requires_grad=True)
    lp = x.log_softmax(2)
    lp.retain_grad()
    if layout == "concatenated":
        t = lib.tensor(np.concatenate([row[:n] for row, n in zip(targets, tl)]), device=device)
    else:
        t = lib.tensor(targets, device=device)
    lengths = (lib.tensor(il), lib.tensor(tl)) if layout == "tensors" else (il, tl)
    loss = lib.nn.CTCLoss(reduction=reduction, zero_infinity=zero_infinity)(lp, t, *lengths)
    loss.sum().backward()
    return [loss.detach().cpu().numpy(), x.grad.cpu().numpy(), lp.grad.cpu().numpy()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"T{c[0]}-N{c[1]}-{c[5]}")
@pytest.mark.parametrize("layout", ["padded", "concatenated", "tensors"])
def test_ctc_loss_matches_torch(device, case, layout):
    T, N, C, tl, il, reduction, zero_infinity = case
    logits = RNG.standard_normal((T, N, C)).astype(np.float32)
    targets = RNG.integers(1, C, (N, max(tl))).astype(np.int64)
    targets[0, :2] = targets[0, 0]  # a repeated label: a blank must come between
    args = (T, N, C, tl, il, reduction, zero_infinity, layout, logits, targets)
    want = _run(torch, "cpu", *args)
    got = _run(clgrad, device, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_unbatched_and_aten_form_match_torch(device):
    logits = RNG.standard_normal((6, 4)).astype(np.float32)
    out = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        lp = lib.tensor(logits, device=dev).log_softmax(1)
        t = lib.tensor([1, 2, 2], device=dev)
        unbatched = lib.nn.functional.ctc_loss(lp, t, (6,), (3,), reduction="none")
        aten = lib.ctc_loss(lp.unsqueeze(1), t.unsqueeze(0), [6], [3], 0, 2)
        out.append([unbatched.cpu().numpy(), aten.cpu().numpy()])
    for g, w in zip(out[1], out[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_ctc_loss_errors_match_torch(device):
    lp_np = RNG.standard_normal((5, 2, 4)).astype(np.float32)
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        lp = lib.tensor(lp_np, device=dev).log_softmax(2)
        t = lib.tensor([[1, 2], [3, 3]], device=dev)
        ctc = lib.nn.functional.ctc_loss
        for lengths, kw in (
            (([6, 5], [2, 2]), {}),  # an input longer than T
            (([5, 5], [3, 2]), {}),  # a target longer than its row
            (([5], [2, 2]), {}),  # lengths for another batch size
            (([5, 5], [2, 2]), {"blank": 4}),  # blank past the classes
        ):
            with pytest.raises(RuntimeError):
                ctc(lp, t, *lengths, **kw)
