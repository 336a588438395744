"""Attention and transformers: MultiheadAttention, TransformerEncoderLayer/Encoder,
TransformerDecoderLayer/Decoder and Transformer, with PyTorch's parameter names and layouts
(so a torch state dict loads as it is)."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from ... import dtypes as D
from ...autograd.grad_mode import is_grad_enabled
from ...ops import autocast as _ac
from ...ops.creation import empty, full
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .activation import GELU, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

if TYPE_CHECKING:
    from ...device import Device
    from ...dtypes import dtype as DType
    from ...tensor import Tensor


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear MultiheadAttention's ``out_proj`` is, under PyTorch's class name."""


class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention``: ``softmax(q k^T / sqrt(d))
    v`` in ``num_heads`` heads of ``embed_dim / num_heads`` dims, between projections of
    ``query`` ``(L, N, E)`` and ``key`` / ``value`` ``(S, N, kdim / vdim)`` (batch first with
    ``batch_first``; unbatched ``(L, E)`` too). ``key_padding_mask`` ``(N, S)`` and
    ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)`` mask keys out where True (bool) or
    add (float). Returns ``(output, weights)``: the weights ``(N, L, S)`` averaged over the
    heads, ``(N, num_heads, L, S)`` with ``average_attn_weights=False``, None without
    ``need_weights``.

    >>> mha = clgrad.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = clgrad.ones(3, 5, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (clgrad.Size([3, 5, 8]), clgrad.Size([3, 5, 5]))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's initialization: Xavier-uniform projections, zero biases, Xavier-normal
        bias_k / bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """The attention output and (with ``need_weights``) the attention weights
        (``F.multi_head_attention_forward`` with this module's parameters)."""
        batched = query.ndim == 3
        if batched and self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
        )  # fmt: skip
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


def _is_function(fn, public) -> bool:
    """``fn is public`` for one of clgrad's public functions, which may be wrapped while
    ``__torch_function__`` dispatch is on (a Tensor subclass alive) or the profiler runs: a
    default argument bound before then is a function under the wrappers."""
    while public is not None:
        if fn is public:
            return True
        public = getattr(public, "__wrapped__", None)
    return False


def _activation(activation):
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class _TransformerLayer(Module):
    """What TransformerEncoderLayer and TransformerDecoderLayer share: the sub-modules
    (decoder layers add ``multihead_attn`` and a third norm / dropout), the constructor with
    torch's signature, and the self-attention and feed-forward blocks. Sub-modules are
    registered in torch's order so state dict keys (and their order) match ``torch.nn``'s."""

    _blocks = 2  # residual blocks: norm1..normN and dropout1..dropoutN; decoder layers have 3

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        if self._blocks == 3:
            self.multihead_attn = MultiheadAttention(
                d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
            )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, self._blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, self._blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)
        if self._blocks == 2:
            # torch's encoder layers stash which activation they have (1 relu, 2 gelu) for
            # their fast path's checks
            act = self.activation
            self.activation_relu_or_gelu = (
                1
                if _is_function(act, F.relu) or isinstance(act, ReLU)
                else 2
                if _is_function(act, F.gelu) or isinstance(act, GELU)
                else 0
            )

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
            need_weights=False, is_causal=is_causal,
        )[0]  # fmt: skip
        return self.dropout1(x)

    def _ff_block(self, x):
        # the feed-forward block is the last one, so its dropout is the last numbered one
        last_dropout = getattr(self, f"dropout{self._blocks}")
        return last_dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with a residual connection and a
    LayerNorm (after, or before with ``norm_first``), as ``torch.nn.TransformerEncoderLayer``.

    >>> layer = clgrad.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(clgrad.rand(3, 5, 8)).shape
    clgrad.Size([3, 5, 8])
    """

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """The encoded ``src`` (same shape)."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward block,
    each with a residual connection and a LayerNorm, as ``torch.nn.TransformerDecoderLayer``.

    >>> layer = clgrad.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> layer(clgrad.rand(4, 2, 8), clgrad.rand(6, 2, 8)).shape
    clgrad.Size([4, 2, 8])
    """

    _blocks = 3

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(
            x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
            is_causal=is_causal, need_weights=False,
        )[0]  # fmt: skip
        return self.dropout2(x)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The decoded ``tgt`` (same shape)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        return self.norm3(x + self._ff_block(x))


class _TransformerStack(Module):
    """What TransformerEncoder and TransformerDecoder share: ``num_layers`` deep copies of
    one layer (``layers.0`` ... in the state dict, as torch) and an optional final norm."""

    def __init__(self, layer: Module, num_layers: int, norm: Module | None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def _run(self, x, *args, **kwargs):
        """``x`` through every layer, each called with the same extra arguments, then
        ``norm`` (if given)."""
        for layer in self.layers:
            x = layer(x, *args, **kwargs)
        return self.norm(x) if self.norm is not None else x


def _why_not_sparsity_fast_path(layer) -> str:
    """torch.nn.TransformerEncoder's reason not to use nested tensors with ``layer`` ("" for
    none)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    reasons = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attn.batch_first,
            f"{name}.self_attn.batch_first was not True(use batch_first for better inference "
            "performance)",
        ),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((why for failed, why in reasons if failed), "")


class TransformerEncoder(_TransformerStack):
    """``num_layers`` copies of ``encoder_layer`` in sequence, then ``norm`` (if given), as
    ``torch.nn.TransformerEncoder``.

    >>> layer = clgrad.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> enc = clgrad.nn.TransformerEncoder(layer, num_layers=2)
    >>> enc(clgrad.rand(5, 3, 8)).shape
    clgrad.Size([5, 3, 8])
    """

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__(encoder_layer, num_layers, norm)
        # torch's attributes: clgrad has no nested tensors, but a program may read them, and
        # torch warns where its layer rules out that path (the reasons in torch's order)
        self.enable_nested_tensor = self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """``src`` through every layer (and ``norm``). Where PyTorch's inference takes its
        nested-tensor path (eval, no gradient, a padding mask padding at the end, see
        ``_padded_positions``), the padded positions come out as zeros before ``norm``, as
        PyTorch's ``to_padded_tensor(0.0)`` leaves them; the others are the same either way
        (no query attends a padded key)."""
        padded = self._padded_positions(src, mask, src_key_padding_mask)
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))  # fmt: skip
        if padded is not None:
            x = x.masked_fill(padded.unsqueeze(-1), 0.0)
        return self.norm(x) if self.norm is not None else x

    def _padded_positions(self, src, mask, src_key_padding_mask) -> Tensor | None:
        """The padding mask as bools (True: padded) where PyTorch's TransformerEncoder would
        run its layers on a nested tensor, by its conditions in its order; else None."""
        first = self.layers[0] if len(self.layers) else None
        if (
            src_key_padding_mask is None
            or not self.use_nested_tensor
            or first is None
            or first.training
            or src.ndim != 3
            or mask is not None
            or _ac.state.enabled["cuda"]
        ):
            return None
        attn = first.self_attn
        weights = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                   attn.out_proj.bias, first.norm1.weight, first.norm1.bias,
                   first.norm2.weight, first.norm2.bias, first.linear1.weight,
                   first.linear1.bias, first.linear2.weight, first.linear2.bias)  # fmt: skip
        if is_grad_enabled() and any(w is not None and w.requires_grad for w in weights):
            return None
        m = src_key_padding_mask
        padded = m if m.dtype is D.bool_ else m != 0
        if self.mask_check:  # padding only at the end of each row (one read of the mask)
            if padded.shape != src.shape[:2]:
                return None
            rows = padded.cpu().numpy()
            if (rows[:, 1:] < rows[:, :-1]).any():
                return None
        return padded


class TransformerDecoder(_TransformerStack):
    """``num_layers`` copies of ``decoder_layer`` in sequence, then ``norm`` (if given), as
    ``torch.nn.TransformerDecoder``.

    >>> layer = clgrad.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> dec = clgrad.nn.TransformerDecoder(layer, num_layers=2)
    >>> dec(clgrad.rand(4, 3, 8), clgrad.rand(5, 3, 8)).shape
    clgrad.Size([4, 3, 8])
    """

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__(decoder_layer, num_layers, norm)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """``tgt`` through every layer, attending ``memory`` (then ``norm``)."""
        return self._run(
            tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal,
        )  # fmt: skip


class Transformer(Module):
    """An encoder-decoder transformer, as ``torch.nn.Transformer``: ``encoder`` (a
    TransformerEncoder with a final LayerNorm) reads ``src``, ``decoder`` maps ``tgt``
    attending the encoder's output; matrices initialized Xavier-uniform as in PyTorch.

    >>> model = clgrad.nn.Transformer(8, 2, 1, 1, dim_feedforward=16, batch_first=True)
    >>> model(clgrad.rand(2, 5, 8), clgrad.rand(2, 4, 8)).shape
    clgrad.Size([2, 4, 8])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias)  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            layer = TransformerEncoderLayer(*args, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            layer = TransformerDecoderLayer(*args, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The decoder's output for ``tgt`` given the encoding of ``src``."""
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )  # fmt: skip
        return self.decoder(
            tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(
        sz: int, device: Device | str | None = None, dtype: DType | None = None
    ) -> Tensor:
        """The float causal mask: 0 where key ``j <= i``, -inf above the diagonal.

        >>> clgrad.nn.Transformer.generate_square_subsequent_mask(3).tolist()
        [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
        """
        allowed = F._causal_mask(sz, sz, device)
        return full((sz, sz), -math.inf, device=device, dtype=dtype).masked_fill(allowed, 0.0)
