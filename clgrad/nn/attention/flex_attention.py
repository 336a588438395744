"""``torch.nn.attention.flex_attention``: attention whose scores a Python function rewrites
(``score_mod``) and whose pattern another one masks (``mask_mod``, made a ``BlockMask`` by
``create_block_mask``), as PyTorch's.

PyTorch compiles the two functions into one fused kernel and skips the blocks a mask leaves
empty. clgrad runs them eagerly, as PyTorch does without ``torch.compile``, but on whole
tensors: each function is called once with index tensors that broadcast over (batch, head,
query, key) (``b`` of shape (B, 1, 1, 1), ``h`` (1, H, 1, 1), ``q_idx`` (1, 1, L, 1),
``kv_idx`` (1, 1, 1, S)), where PyTorch's eager path vmaps it over 0-d ones. A function of
elementwise ops, comparisons, ``where`` and tensor indexing by those indices (a bias table
``bias[h, q_idx - kv_idx]``) gives the same values either way; Python control flow on the
indices works in neither. The full score matrix is built, so memory grows with L * S; the
gradients reach query, key, value and whatever the functions close over, on every device.

>>> from clgrad.nn.attention.flex_attention import create_block_mask, flex_attention
>>> def causal(b, h, q_idx, kv_idx):
...     return q_idx >= kv_idx
>>> mask = create_block_mask(causal, None, None, 4, 4, device="cpu")
>>> q = k = v = clgrad.ones(1, 2, 4, 8)
>>> flex_attention(q, k, v, block_mask=mask).shape
clgrad.Size([1, 2, 4, 8])
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import NamedTuple, TypedDict

from ... import dtypes as _D
from ...device import resolve
from ...ops import elementwise as _E
from ...ops.creation import arange as _arange
from ...ops.creation import ones as _ones
from ...ops.creation import zeros as _zeros
from ...tensor import Tensor

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "FlexKernelOptions",
    "and_masks",
    "create_block_mask",
    "create_mask",
    "flex_attention",
    "noop_mask",
    "or_masks",
]

_DEFAULT_BLOCK = 128


class FlexKernelOptions(TypedDict, total=False):
    """PyTorch's tuning options of the fused kernel; clgrad's eager path accepts and needs
    none of them."""


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention`` returns, as PyTorch's.

    >>> q = clgrad.zeros(1, 1, 2, 4)
    >>> out, aux = flex_attention(q, q, q, return_aux=AuxRequest(lse=True))
    >>> aux.lse, aux.max_scores
    (tensor([[[0.6931, 0.6931]]]), None)
    """

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs ``flex_attention`` was asked for (None where not).

    >>> AuxOutput(lse=clgrad.zeros(1))
    AuxOutput(lse=tensor([0.]), max_scores=None)
    """

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask_mod that keeps every position.

    >>> i = clgrad.tensor(0)
    >>> noop_mask(i, i, i, i)
    tensor(True)
    """
    return _ones((), dtype=_D.bool_, device=batch.device)


def and_masks(*mask_mods: Callable) -> Callable:
    """The mask_mod that keeps what every one of ``mask_mods`` keeps.

    >>> both = and_masks(lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: q - kv < 2)
    >>> create_mask(both, 1, 1, 3, 3, device="cpu")[0, 0].int()
    tensor([[1, 0, 0],
            [1, 1, 0],
            [0, 1, 1]], dtype=clgrad.int32)
    """
    return _combined(mask_mods, True)


def or_masks(*mask_mods: Callable) -> Callable:
    """The mask_mod that keeps what any of ``mask_mods`` keeps.

    >>> either = or_masks(lambda b, h, q, kv: q == kv, lambda b, h, q, kv: kv == 0)
    >>> create_mask(either, 1, 1, 3, 3, device="cpu")[0, 0].int()
    tensor([[1, 0, 0],
            [1, 1, 0],
            [1, 0, 1]], dtype=clgrad.int32)
    """
    return _combined(mask_mods, False)


def _combined(mask_mods, every):
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b, h, q_idx, kv_idx):
        result = _ones((), dtype=_D.bool_, device=b.device) if every else None
        for mask_mod in mask_mods:
            kept = mask_mod(b, h, q_idx, kv_idx)
            if result is None:
                result = kept
            else:
                result = result & kept if every else result | kept
        return result if result is not None else _ones((), dtype=_D.bool_, device=b.device) < 0

    return combined


def _indices(B, H, L, S, device):
    """The broadcasting (b, h, q_idx, kv_idx) index tensors (int64) the functions are given."""
    return (
        _arange(B, device=device).reshape(B, 1, 1, 1),
        _arange(H, device=device).reshape(1, H, 1, 1),
        _arange(L, device=device).reshape(1, 1, L, 1),
        _arange(S, device=device).reshape(1, 1, 1, S),
    )


def _mask_of(mask_mod, B, H, L, S, device) -> Tensor:
    """mask_mod over every (b, h, q, kv): a bool tensor (B, H, L, S)."""
    kept = mask_mod(*_indices(B, H, L, S, device))
    if not isinstance(kept, Tensor) or kept.dtype is not _D.bool_:
        raise RuntimeError(f"mask_mod must return a boolean tensor, got {type(kept).__name__}")
    return kept.expand(B, H, L, S)


def create_mask(mod_fn: Callable, B, H, Q_LEN: int, KV_LEN: int, device=None) -> Tensor:
    """The dense bool mask (B, H, Q_LEN, KV_LEN) of a mask_mod (``B`` / ``H`` None: 1), or of a
    score_mod (five arguments: where it leaves a zero score finite), as PyTorch's
    ``create_mask``.

    >>> create_mask(lambda b, h, q, kv: q >= kv, None, None, 2, 2, device="cpu")
    tensor([[[[ True, False],
              [ True,  True]]]])
    >>> def no_future(score, b, h, q, kv):
    ...     return clgrad.where(q >= kv, score, float("-inf"))
    >>> create_mask(no_future, None, None, 2, 2, device="cpu")[0, 0, 0]
    tensor([ True, False])
    """
    B, H, device = B or 1, H or 1, resolve(device)
    if len(inspect.signature(mod_fn).parameters) == 5:  # a score_mod, as torch tells them
        zeros = _zeros(B, H, Q_LEN, KV_LEN, device=device)
        scores = mod_fn(zeros, *_indices(B, H, Q_LEN, KV_LEN, device))
        return (scores != float("-inf")).expand(B, H, Q_LEN, KV_LEN)
    return _mask_of(mod_fn, B, H, Q_LEN, KV_LEN, device)


class BlockMask:
    """A mask_mod with the blocks it leaves empty, full or partial, as PyTorch's ``BlockMask``:
    ``kv_num_blocks`` / ``kv_indices`` the partial key blocks of each query block (their
    indices first, ascending), ``full_kv_*`` the full ones, ``q_*`` the same per key block;
    ``to_dense()`` the blocks that are computed, ``sparsity()`` the percentage that is not.
    clgrad's ``flex_attention`` applies ``mask_mod`` to every position; the blocks are what
    PyTorch's kernel would skip.

    >>> m = create_block_mask(lambda b, h, q, kv: q >= kv, 2, None, 256, 256, device="cpu")
    >>> m.shape, m.numel(), m.kv_num_blocks[0, 0].tolist(), m.full_kv_num_blocks[0, 0].tolist()
    ((2, 1, 256, 256), 131072, [1, 1], [0, 1])
    >>> m.to_dense()[1, 0].tolist(), m.sparsity(), m.to("cpu").shape
    ([[1, 0], [1, 1]], 25.0, (2, 1, 256, 256))
    """

    def __init__(self, mask_mod, B, H, Q_LEN, KV_LEN, device, BLOCK_SIZE):
        self.mask_mod = mask_mod
        self.seq_lengths = (Q_LEN, KV_LEN)
        self.BLOCK_SIZE = BLOCK_SIZE
        dense = _mask_of(mask_mod, B, H, Q_LEN, KV_LEN, device)
        bq, bkv = BLOCK_SIZE
        nq, nkv = -(-Q_LEN // bq), -(-KV_LEN // bkv)
        # the mask padded with False to whole blocks, then the kept count of each block
        padded = dense.new_zeros((B, H, nq * bq, nkv * bkv), dtype=_D.bool_)
        padded[:, :, :Q_LEN, :KV_LEN] = dense
        counts = padded.reshape(B, H, nq, bq, nkv, bkv).sum((3, 5))
        full = counts == bq * bkv
        partial = (counts > 0) & ~full
        self.kv_num_blocks, self.kv_indices = _ordered(partial)
        self.full_kv_num_blocks, self.full_kv_indices = _ordered(full)
        self.q_num_blocks, self.q_indices = _ordered(partial.transpose(-2, -1))
        self.full_q_num_blocks, self.full_q_indices = _ordered(full.transpose(-2, -1))

    @property
    def shape(self) -> tuple:
        """(B, H, Q_LEN, KV_LEN)."""
        return (*tuple(self.kv_num_blocks.shape[:2]), *self.seq_lengths)

    def numel(self) -> int:
        """How many (b, h, q, kv) positions the mask covers."""
        return math.prod(self.shape)

    def to_dense(self) -> Tensor:
        """Which blocks (B, H, q blocks, kv blocks) are computed (int32 0/1)."""
        return _dense(self.kv_num_blocks, self.kv_indices) | _dense(
            self.full_kv_num_blocks, self.full_kv_indices
        )

    def sparsity(self) -> float:
        """The percentage of the mask's positions in blocks that are not computed, by PyTorch's
        count (whole blocks, so short sequences can give a negative number, as there)."""
        computed = int(self.kv_num_blocks.sum().item() + self.full_kv_num_blocks.sum().item())
        size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - size / self.numel())

    def to(self, device) -> BlockMask:
        """A copy whose block tensors are on ``device``."""
        other = object.__new__(BlockMask)
        other.__dict__.update(
            {k: v.to(device) if isinstance(v, Tensor) else v for k, v in self.__dict__.items()}
        )
        return other

    def __repr__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%)"


def _ordered(blocks: Tensor) -> tuple[Tensor, Tensor]:
    """(how many blocks are set per row, the row's block indices with the set ones first in
    ascending order), int32, as PyTorch's stable descending argsort gives them."""
    count = blocks.sum(-1).to(_D.int32)
    n = blocks.shape[-1]
    # set blocks get their index, others n + index: one ascending sort puts them first
    order = _arange(n, device=blocks.device) + (~blocks).to(_D.int64) * n
    return count, order.argsort(-1).to(_D.int32)


def _dense(num_blocks: Tensor, indices: Tensor) -> Tensor:
    """The 0/1 (int32) block matrix that (num_blocks, indices) describe."""
    n = indices.shape[-1]
    taken = _arange(n, device=indices.device) < num_blocks.unsqueeze(-1)
    dense = indices.new_zeros(indices.shape, dtype=_D.int32)
    return dense.scatter(-1, indices.to(_D.int64), taken.to(_D.int32))


def create_block_mask(
    mask_mod: Callable,
    B,
    H,
    Q_LEN: int,
    KV_LEN: int,
    device=None,
    BLOCK_SIZE=_DEFAULT_BLOCK,
    _compile=False,
    separate_full_blocks: bool = True,
    compute_dq_write_order: bool = False,
    dq_kv_order: bool = True,
) -> BlockMask:
    """The ``BlockMask`` of ``mask_mod`` for (B, H, Q_LEN, KV_LEN) (``B`` / ``H`` None: 1,
    broadcast over any batch or head count), as PyTorch's ``create_block_mask``.

    >>> m = create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 256, 256, device="cpu")
    >>> m.shape, m.to_dense()[0, 0].tolist(), round(m.sparsity(), 2)
    ((1, 1, 256, 256), [[1, 0], [1, 1]], 25.0)
    """
    size = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    return BlockMask(mask_mod, B or 1, H or 1, Q_LEN, KV_LEN, resolve(device), size)


def flex_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    score_mod: Callable | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: FlexKernelOptions | None = None,
    *,
    return_aux: AuxRequest | None = None,
):
    """softmax(score_mod(q k^T * scale), masked by ``block_mask``) v for query (B, Hq, L, E),
    key (B, Hkv, S, E) and value (B, Hkv, S, Ev), as PyTorch's ``flex_attention``: a query
    whose every key is masked gets zeros (and a log-sum-exp of -inf); ``enable_gqa`` lets Hq be
    a multiple of Hkv. ``return_lse`` adds the log-sum-exp of each row (float32),
    ``return_aux`` the ``AuxOutput`` it asks for.

    >>> q = clgrad.arange(8.0).reshape(1, 1, 2, 4) / 8
    >>> out = flex_attention(q, q, q, score_mod=lambda s, b, h, qi, kvi: s * 0)
    >>> out[0, 0]
    tensor([[0.2500, 0.3750, 0.5000, 0.6250],
            [0.2500, 0.3750, 0.5000, 0.6250]])
    """
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, please "
            "use return_aux=AuxRequest(lse=True)"
        )
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim != 4:
            raise ValueError(f"NYI: {name} must be a 4D tensor, got {t.ndim}D")
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if key.shape[0] != B or value.shape[0] != B or value.shape[2] != S or key.shape[3] != E:
        raise ValueError(
            f"Expect query, key and value to agree in batch, and key and value in length: got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(
                f"Expect query and key/value to have the same number of heads but got Hq={Hq} "
                f"and Hkv={Hkv}. Try setting enable_gqa=True for GQA."
            )
        if Hq % Hkv:
            raise ValueError(
                f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                f"Hq={Hq} and Hkv={Hkv}."
            )
        key = key.repeat_interleave(Hq // Hkv, 1)
        value = value.repeat_interleave(Hq // Hkv, 1)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if score_mod is not None:
        scores = score_mod(scores, *_indices(B, Hq, L, S, query.device))
    if block_mask is not None:
        if tuple(block_mask.seq_lengths) != (L, S):
            raise ValueError(
                f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                f"q_len={L} and kv_len={S}."
            )
        kept = _mask_of(block_mask.mask_mod, B, Hq, L, S, query.device)
        scores = _E.where(kept, scores, float("-inf"))
    scores = scores.float() if scores.dtype in (_D.float16, _D.bfloat16) else scores
    # softmax with a row of -inf giving zeros: shifted by the row's largest finite score
    # (a constant to the gradient: the shift cancels in both the output and the lse)
    top = scores.detach().amax(-1, keepdim=True)
    top = _E.where(top == float("-inf"), 0.0, top)
    weights = (scores - top).exp()
    total = weights.sum(-1, keepdim=True)
    out = (weights @ value.to(weights.dtype)) / _E.where(total == 0, 1.0, total)
    out = out.to(query.dtype)
    lse = (total.log() + top).squeeze(-1).float()
    if return_lse:
        return out, lse
    if return_aux is not None:
        return out, AuxOutput(
            lse=lse if return_aux.lse else None,
            max_scores=scores.amax(-1).float() if return_aux.max_scores else None,
        )
    return out
