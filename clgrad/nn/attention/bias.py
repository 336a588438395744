"""``torch.nn.attention.bias``: causal masks that ``scaled_dot_product_attention`` takes as its
``attn_mask`` without a mask tensor being built by the caller, as PyTorch's. ``causal_upper_left``
lets query i see keys 0..i; ``causal_lower_right`` aligns the last query with the last key (a
decoding step's queries against a longer cache). PyTorch's ``CausalBias`` is a Tensor subclass
that attention recognizes; clgrad's is a plain object that attention materializes into the bool
mask (``_materialize``), which gives the same result.

>>> from clgrad.nn.attention.bias import causal_lower_right
>>> causal_lower_right(2, 3)._materialize()
tensor([[ True,  True, False],
        [ True,  True,  True]])
"""

from __future__ import annotations

from enum import IntEnum

from ...device import resolve
from ...dtypes import bool_
from ...ops.creation import ones

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(IntEnum):
    """Where a causal mask's diagonal starts: the top left or the bottom right corner.

    >>> CausalVariant.LOWER_RIGHT
    <CausalVariant.LOWER_RIGHT: 2>
    """

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of ``seq_len_q`` queries by ``seq_len_kv`` keys, as PyTorch's."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError("variant must be a CausalVariant")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            import warnings

            warnings.warn(
                "Lower right causal bias will produce NaNs in the output when seq_len_q > "
                "seq_len_kv!",
                stacklevel=2,
            )

    def _materialize(self, device=None):
        """The bool mask (seq_len_q, seq_len_kv): True where a query may attend."""
        allowed = ones(self.seq_len_q, self.seq_len_kv, dtype=bool_, device=resolve(device))
        if self.variant == CausalVariant.UPPER_LEFT:
            return allowed.tril(0)
        return allowed.tril(self.seq_len_kv - self.seq_len_q)

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size) -> CausalBias:
    """The causal mask whose diagonal starts at the top left: query i sees keys 0..i.

    >>> causal_upper_left(2, 3)._materialize()
    tensor([[ True, False, False],
            [ True,  True, False]])
    """
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size) -> CausalBias:
    """The causal mask whose diagonal ends at the bottom right: the last query sees every key.

    >>> causal_lower_right(1, 3)._materialize()
    tensor([[True, True, True]])
    """
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
