"""torch.nn.attention.flex_attention against torch on every test device: outputs and
log-sum-exps for score_mods and mask_mods (causal, sliding window, relative bias, softcap, a
fully masked row, and_masks / or_masks, GQA), the BlockMask's blocks; gradients (torch's CPU
build has no flex_attention backward) against the same attention written with
scaled_dot_product_attention and softmax; torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import clgrad
from clgrad.nn.attention import flex_attention as CF

TF = pytest.importorskip("torch.nn.attention.flex_attention")
RNG = np.random.default_rng(0)
Q, K, V = (
    RNG.standard_normal(s).astype(np.float32) for s in ((2, 4, 5, 8), (2, 2, 6, 8), (2, 2, 6, 8))
)
BIAS = RNG.standard_normal((4, 11)).astype(np.float32)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 1


def first_row_empty(b, h, q_idx, kv_idx):
    return (q_idx > 0) & (kv_idx <= q_idx)


CASES = {
    "plain": (None, None),
    "causal": (causal, None),
    "relative bias": (None, lambda lib, bias: lambda s, b, h, q, kv: s + bias[h, q - kv + 5]),
    "window and softcap": (window, lambda lib, bias: lambda s, b, h, q, kv: 5 * lib.tanh(s / 5)),
    "a masked row": (first_row_empty, None),
    "and_masks / or_masks": ("combined", None),
}


def _run(lib, flex, device, case):
    mask_mod, score = CASES[case]
    kw = {} if lib is torch else {"device": device}
    q, k, v, bias = (lib.tensor(x, **kw) for x in (Q, K, V, BIAS))
    if mask_mod == "combined":
        mask_mod = flex.or_masks(flex.and_masks(causal, window), lambda b, h, q, kv: kv == 0)
    where = "cpu" if lib is torch else device
    block = flex.create_block_mask(mask_mod, None, None, 5, 6, device=where) if mask_mod else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note that it runs uncompiled
        out, lse = flex.flex_attention(
            q, k, v, score_mod=score and score(lib, bias), block_mask=block, enable_gqa=True,
            return_lse=True,
        )  # fmt: skip
    blocks = None
    if block is not None:
        blocks = [block.to_dense(), block.kv_num_blocks, block.kv_indices, block.full_kv_indices]
        blocks = [b.cpu().numpy() for b in blocks] + [block.sparsity(), tuple(block.shape)]
    return out.detach().cpu().numpy(), lse.detach().cpu().numpy(), blocks


@pytest.mark.parametrize("case", CASES)
def test_outputs_and_blocks_as_torch(device, case):
    got_out, got_lse, got_blocks = _run(clgrad, CF, device, case)
    out, lse, blocks = _run(torch, TF, device, case)
    np.testing.assert_allclose(got_out, out, atol=2e-6)
    np.testing.assert_allclose(got_lse, lse, atol=2e-6)  # -inf where a row is masked
    assert got_lse.dtype == np.float32
    if blocks is not None:
        for g, w in zip(got_blocks[:4], blocks[:4]):
            np.testing.assert_array_equal(g, w)
        assert got_blocks[4] == pytest.approx(blocks[4]) and got_blocks[5] == blocks[5]


def test_block_structure_of_several_blocks(device):
    # partial blocks listed first, in ascending order, as torch's stable argsort lists them
    got = CF.create_block_mask(causal, 2, None, 300, 260, device=device, BLOCK_SIZE=(128, 64))
    want = TF.create_block_mask(causal, 2, None, 300, 260, device="cpu", BLOCK_SIZE=(128, 64))
    for name in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                 "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"):  # fmt: skip
        np.testing.assert_array_equal(
            getattr(got, name).cpu().numpy(), getattr(want, name).numpy(), err_msg=name
        )
    np.testing.assert_array_equal(got.to_dense().cpu().numpy(), want.to_dense().numpy())
    assert got.shape == tuple(want.shape) and got.sparsity() == pytest.approx(want.sparsity())


def test_gradients_match_torchs_scaled_dot_product_attention(device):
    # torch's CPU build has no flex_attention backward: its sdpa with the same causal mask is
    # the reference
    weights = RNG.standard_normal((2, 2, 5, 8)).astype(np.float32)
    grads = []
    for lib, kw in ((torch, {}), (clgrad, {"device": device})):
        q, k, v = (lib.tensor(x[:, :2], requires_grad=True, **kw) for x in (Q, K, V))
        if lib is torch:
            mask = torch.ones(5, 6, dtype=torch.bool).tril()
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            block = CF.create_block_mask(causal, None, None, 5, 6, device=device)
            out = CF.flex_attention(q, k, v, block_mask=block)
        (out * lib.tensor(weights, **kw)).sum().backward()
        grads.append([t.grad.cpu().numpy() for t in (q, k, v)])
    for got, want in zip(*grads[::-1]):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_score_mod_parameters_get_torchs_gradients(device):
    # a learned relative bias that score_mod closes over: its gradient against torch's
    # autograd of the same scores written out (softmax(q k^T / sqrt(E) + bias[h, q - kv]) v)
    grads = []
    for lib, kw in ((torch, {}), (clgrad, {"device": device})):
        q, k, v = (lib.tensor(x[:1, :2], **kw) for x in (Q, K, V))
        bias = lib.tensor(BIAS[:2], requires_grad=True, **kw)
        if lib is torch:
            qi, kvi = torch.arange(5)[:, None], torch.arange(6)
            scores = q @ k.transpose(-2, -1) / 8**0.5 + bias[:, qi - kvi + 5]
            out = torch.softmax(scores, -1) @ v
        else:
            out = CF.flex_attention(
                q, k, v, score_mod=lambda s, b, h, qi, kvi, bias=bias: s + bias[h, qi - kvi + 5]
            )
        out.sum().backward()
        grads.append(bias.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-5)


def test_refusals_as_torch(device):
    for lib, flex, kw in ((torch, TF, {}), (clgrad, CF, {"device": device})):
        q, k = lib.ones(1, 4, 3, 8, **kw), lib.ones(1, 2, 3, 8, **kw)
        with pytest.raises(ValueError, match="enable_gqa=True"):
            flex.flex_attention(q, k, k)
        block = flex.create_block_mask(causal, None, None, 4, 4, device="cpu" if not kw else device)
        with pytest.raises(ValueError, match="block_mask was created for"):
            flex.flex_attention(q, q, q, block_mask=block)


def test_create_mask_of_a_score_mod_as_torch(device):
    # a five-argument function is a score_mod: the mask is where it leaves a zero score finite
    def rule(lib):
        return lambda score, b, h, q, kv: lib.where(q >= kv, score + q - kv, float("-inf"))

    got = CF.create_mask(rule(clgrad), 2, 1, 3, 4, device=device)
    want = TF.create_mask(rule(torch), 2, 1, 3, 4, device="cpu")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
