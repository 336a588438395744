"""Recurrent layers: RNN, LSTM, GRU and their cells RNNCell, LSTMCell, GRUCell, with PyTorch's
parameter names, shapes and initialization (so a torch state dict loads as it is).

Each layer multiplies the whole input sequence by ``weight_ih`` in one matmul, then steps
through time with one ``h @ weight_hh.T`` per step; the gradient flows through those Tensor
ops (backpropagation through time by the autograd engine)."""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...ops import autocast as _autocast
from ...ops.creation import empty, zeros
from ...ops.creation import tensor as _tensor
from ...ops.elementwise import where
from ...ops.movement import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _lengths, _pack, pad_packed_sequence
from .module import Module

if TYPE_CHECKING:
    from ...device import Device
    from ...dtypes import dtype as DType
    from ...tensor import Tensor

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _step(mode, xw, h, c, w_hh, b_hh, w_hr=None):
    """One time step: ``xw`` is the input's projection (with ``bias_ih``); returns (h, c).
    ``w_hr`` (an LSTM with ``proj_size``) projects the new hidden state down, with no bias."""
    hw = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        h, c = LSTMCellStep.apply(xw, hw, c)
        return (h if w_hr is None else F.linear(h, w_hr)), c
    if mode == "GRU":
        return GRUCellStep.apply(xw, hw, h), c
    pre = xw + hw
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), c


def _lstm_gates(xw, hw, c):
    """An LSTM step from its two projections: (i, f, g, o) activated, the new cell state."""
    i, f, g, o = (xw + hw).chunk(4, -1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    return i, f, g, o, f * c + i * g


class LSTMCellStep(Function):
    """An LSTM time step in one node (torch's fused cell): ``(h, c)`` from the input's and the
    hidden state's projections ``xw``, ``hw`` and the cell state ``c``. Its backward is the
    gates' derivatives written out: one node per step instead of a dozen (a sequence's
    backward is mostly their host time), and its elementwise ops fuse. With ``create_graph``
    the gates are computed again from the inputs, recorded, so gradients of gradients see
    them (as Convolution remakes its column matrix)."""

    @staticmethod
    def forward(ctx, xw, hw, c):
        i, f, g, o, c2 = _lstm_gates(xw, hw, c)
        tc = c2.tanh()
        ctx.save_for_backward(xw, hw, c, i, f, g, o, tc)
        return o * tc, c2

    @staticmethod
    def backward(ctx, gh, gc):
        xw, hw, c, i, f, g, o, tc = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: the gates with their graph
            i, f, g, o, c2 = _lstm_gates(xw, hw, c)
            tc = c2.tanh()
        # (a missing gradient of h or c arrives as zeros: ctx.materialize_grads)
        dc = gc + gh * o * (1 - tc * tc)
        di, df, dg = dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g)
        gates = cat([di, df, dg, gh * tc * o * (1 - o)], -1)
        return gates, gates, dc * f


def _gru_gates(xw, hw, h):
    """A GRU step from its two projections: r, z, n, the hidden state's n part, the new h."""
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = hw.chunk(3, -1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return r, z, n, hn, n + z * (h - n)  # (1 - z) * n + z * h


class GRUCellStep(Function):
    """A GRU time step in one node, as ``LSTMCellStep``: the new ``h`` from the input's and
    the hidden state's projections ``xw``, ``hw`` and ``h``."""

    @staticmethod
    def forward(ctx, xw, hw, h):
        r, z, n, hn, h2 = _gru_gates(xw, hw, h)
        ctx.save_for_backward(xw, hw, h, r, z, n, hn)
        return h2

    @staticmethod
    def backward(ctx, gh):
        xw, hw, h, r, z, n, hn = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: the gates with their graph
            r, z, n, hn, _ = _gru_gates(xw, hw, h)
        dn = gh * (1 - z) * (1 - n * n)
        dr = dn * hn * r * (1 - r)
        dz = gh * (h - n) * z * (1 - z)
        return cat([dr, dz, dn], -1), cat([dr, dz, dn * r], -1), gh * z


def _refuse_projection(proj_size):
    """PyTorch's RNN and GRU take ``proj_size`` only to refuse it (their base class has it)."""
    if proj_size:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence behind RNN, LSTM and GRU."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        # PyTorch's checks, in its order and with its classes (a float size is a TypeError)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        kw = {"device": device, "dtype": dtype}
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size or hidden_size  # the size of h (and of each layer's output)
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                size_in = input_size if layer == 0 else real_hidden * dirs
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                params = [("weight_ih", (gate, size_in)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    params += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:  # after the biases: PyTorch's order, in state dicts too
                    params.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in params:
                    setattr(self, name + sfx, Parameter(empty(*shape, **kw)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as
        PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights into one buffer for cuDNN here; clgrad's
        kernels read each weight where it is (kept so that models calling it run unchanged).

        >>> clgrad.nn.LSTM(2, 3).flatten_parameters()
        """

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters, a list per layer and direction, as PyTorch's ``all_weights``.

        >>> [tuple(w.shape) for w in clgrad.nn.GRU(2, 3).all_weights[0]]
        [(9, 2), (9, 3), (9,), (9,)]
        """
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        flat = self._flat_weights
        return [flat[i : i + per] for i in range(0, len(flat), per)]

    def _weights(self, layer, d):
        """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) of a layer and direction, None
        for those it lacks."""
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        # getattr, not the parameters dict: weight_norm, spectral_norm, pruning and
        # parametrizations put a weight in the instance or behind a class property
        get = functools.partial(getattr, self)
        w_hr = get("weight_hr" + sfx) if self.proj_size else None
        if self.bias:
            return (
                get("weight_ih" + sfx),
                get("weight_hh" + sfx),
                get("bias_ih" + sfx),
                get("bias_hh" + sfx),
                w_hr,
            )
        return get("weight_ih" + sfx), get("weight_hh" + sfx), None, None, w_hr

    def _run(self, input, hx, mask=None):
        """input (L, N, H_in); hx (h0, c0), each (layers * dirs, N, H) (c0 None but for LSTM;
        h0's H is ``proj_size`` when set);
        ``mask`` (L, N, 1) bool, where a sequence is alive (packed input): past its length a
        sequence keeps its state and outputs zeros, so each runs exactly its length in both
        directions. Returns output (L, N, dirs * H) and the final (h, c) stacks."""
        dirs = 2 if self.bidirectional else 1
        h0, c0 = hx
        x, hs, cs = input, [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, d)
                xw = F.linear(x, w_ih, b_ih)  # the whole sequence at once
                k = layer * dirs + d
                h, c = h0[k], (c0[k] if c0 is not None else None)
                steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
                seq = [None] * x.shape[0]
                for t in steps:
                    if mask is None:
                        h, c = _step(self.mode, xw[t], h, c, w_hh, b_hh, w_hr)
                        seq[t] = h
                        continue
                    hn, cn = _step(self.mode, xw[t], h, c, w_hh, b_hh, w_hr)
                    m = mask[t]
                    seq[t] = where(m, hn, 0.0)
                    h = where(m, hn, h)
                    c = where(m, cn, c) if c is not None else None
                outs.append(stack(seq))
                hs.append(h)
                cs.append(c)
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, stack(hs), (stack(cs) if self.mode == "LSTM" else None)

    def _prepare(self, input, hx):
        """Batch dim second and an initial state, as PyTorch accepts them (unbatched inputs
        too); returns (input, (h0, c0), unbatched)."""
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D "
                "tensor instead"
            )
        unbatched = input.ndim == 2
        weight = getattr(self, self._flat_weights_names[0])
        if input.dtype != weight.dtype and not _autocast.active[0]:  # autocast casts in linear
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                f"Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({input.dtype})"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.shape[-1]}"
            )
        x = (
            input.unsqueeze(1)
            if unbatched
            else (input.transpose(0, 1) if self.batch_first else input)
        )
        n = x.shape[1]
        dirs = 2 if self.bidirectional else 1
        shape = (self.num_layers * dirs, n, self.proj_size or self.hidden_size)
        cell_shape = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0 = zeros(*shape, dtype=input.dtype, device=input.device)
            c0 = None
            if self.mode == "LSTM":  # (one zero state for both, unless a projection sizes h)
                c0 = (
                    h0
                    if shape == cell_shape
                    else zeros(*cell_shape, dtype=h0.dtype, device=h0.device)
                )
        else:
            h0, c0 = hx if self.mode == "LSTM" else (hx, None)
            if unbatched:
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            # PyTorch's wording: an LSTM names the pair's members
            names = ("hidden[0]", "hidden[1]") if self.mode == "LSTM" else ("hidden", None)
            for t, want, what in ((h0, shape, names[0]), (c0, cell_shape, names[1])):
                if t is not None and tuple(t.shape) != want:
                    raise RuntimeError(f"Expected {what} size {want}, got {list(t.shape)}")
        return x, (h0, c0), unbatched

    def forward(self, input: Tensor, hx: Tensor | tuple[Tensor, Tensor] | None = None):
        """The output of the last layer at every step and the final hidden state (for LSTM,
        the pair (h_n, c_n)) of every layer and direction. A PackedSequence input gives a
        PackedSequence output (each sequence run for its own length; ``hx`` and the final
        state in the batch's original order)."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, state, unbatched = self._prepare(input, hx)
        out, h, c = self._run(x, state)
        if unbatched:
            out, h = out.squeeze(1), h.squeeze(1)
            c = c.squeeze(1) if c is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, ((h, c) if self.mode == "LSTM" else h)

    def _forward_packed(self, packed, hx):
        padded, lengths = pad_packed_sequence(packed)  # (T, N, H_in), the original order
        n = _lengths(lengths)
        x, state, _ = self._prepare(padded if not self.batch_first else padded.transpose(0, 1), hx)
        steps = _tensor(np.arange(x.shape[0]).reshape(-1, 1, 1), device=x.device)
        mask = steps < _tensor(n.reshape(1, -1, 1), device=x.device)
        out, h, c = self._run(x, state, mask)
        order = (
            _lengths(packed.sorted_indices)
            if packed.sorted_indices is not None
            else np.arange(len(n))
        )
        data, _ = _pack(out, n, order)
        out = PackedSequence(
            data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices
        )
        return out, ((h, c) if self.mode == "LSTM" else h)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """An Elman RNN, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu with
    ``nonlinearity="relu"``), stacked ``num_layers`` deep, as ``torch.nn.RNN``: input
    ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``, or unbatched ``(L, H_in)``),
    returns ``(output, h_n)``; parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``_reverse`` for the backward direction).

    >>> rnn = clgrad.nn.RNN(3, 5, num_layers=2, batch_first=True)
    >>> out, h = rnn(clgrad.ones(4, 7, 3))
    >>> out.shape, h.shape
    (clgrad.Size([4, 7, 5]), clgrad.Size([2, 4, 5]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Device | str | None = None,
        dtype: DType | None = None,
        proj_size: int = 0,
    ) -> None:
        _refuse_projection(proj_size)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(
            mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )  # fmt: skip
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A long short-term memory layer, as ``torch.nn.LSTM``: gates i, f, g, o (in that order
    in the weights), ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)``; returns
    ``(output, (h_n, c_n))``. With ``proj_size`` P (0 < P < hidden_size) each new hidden state
    is projected down, ``h_t = W_hr (o * tanh(c_t))`` (``weight_hr_l{k}``, shape
    ``(P, hidden_size)``, no bias): ``h``, the output and the next layer's input have P
    features (per direction), ``c`` keeps ``hidden_size``.

    >>> lstm = clgrad.nn.LSTM(3, 5, bidirectional=True)
    >>> out, (h, c) = lstm(clgrad.ones(7, 2, 3))
    >>> out.shape, h.shape, c.shape
    (clgrad.Size([7, 2, 10]), clgrad.Size([2, 2, 5]), clgrad.Size([2, 2, 5]))
    >>> lstm = clgrad.nn.LSTM(3, 5, num_layers=2, proj_size=2)
    >>> out, (h, c) = lstm(clgrad.ones(7, 2, 3))
    >>> out.shape, h.shape, c.shape
    (clgrad.Size([7, 2, 2]), clgrad.Size([2, 2, 2]), clgrad.Size([2, 2, 5]))
    >>> [name for name, _ in lstm.named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_hr_l0']
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, device, dtype,
        )  # fmt: skip


class GRU(RNNBase):
    """A gated recurrent unit layer, as ``torch.nn.GRU``: gates r, z, n (in that order in the
    weights), ``n_t = tanh(x W_in + b_in + r * (h W_hn + b_hn))``, ``h_t = (1 - z) * n_t +
    z * h_{t-1}``; returns ``(output, h_n)``.

    >>> gru = clgrad.nn.GRU(3, 5, num_layers=2)
    >>> out, h = gru(clgrad.ones(7, 3))
    >>> out.shape, h.shape
    (clgrad.Size([7, 5]), clgrad.Size([2, 5]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Device | str | None = None,
        dtype: DType | None = None,
        proj_size: int = 0,
    ) -> None:
        _refuse_projection(proj_size)
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )  # fmt: skip


class RNNCellBase(Module):
    """One step of a recurrence: ``weight_ih``, ``weight_hh`` and (with ``bias``) ``bias_ih``,
    ``bias_hh``, initialized as in RNNBase."""

    _mode = "RNN_TANH"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Device | str | None = None,
        dtype: DType | None = None,
        mode: str | None = None,
    ) -> None:
        super().__init__()
        if mode is not None:
            self._mode = mode
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate = _GATES[self._mode] * hidden_size
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(empty(gate, input_size, **kw))
        self.weight_hh = Parameter(empty(gate, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(gate, **kw))
            self.bias_hh = Parameter(empty(gate, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draws every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _cell(self, input, hx, lstm=False):
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        states = () if hx is None else (tuple(hx) if lstm else (hx,))
        for i, state in enumerate(states):
            if state.ndim not in (1, 2):
                what = f"hx[{i}]" if lstm else "hidden"
                raise ValueError(
                    f"{name}: Expected {what} to be 1D or 2D, got {state.ndim}D instead"
                )
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        # ATen's check_rnn_cell_forward_input / _hidden, before any product
        if x.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {x.shape[1]} expected {self.input_size}"
            )
        if hx is None:
            h = zeros(x.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            c = h if lstm else None
        else:
            states = tuple(t.unsqueeze(0) for t in states) if unbatched else states
            for i, state in enumerate(states):
                if state.shape[0] != x.shape[0]:
                    raise RuntimeError(
                        f"Input batch size {x.shape[0]} doesn't match hidden{i} batch size "
                        f"{state.shape[0]}"
                    )
                if state.shape[1] != self.hidden_size:
                    raise RuntimeError(
                        f"hidden{i} has inconsistent hidden_size: got {state.shape[1]}, expected "
                        f"{self.hidden_size}"
                    )
            h, c = states if lstm else (states[0], None)
        h, c = _step(self._mode, F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh,
                     self.bias_hh)  # fmt: skip
        if unbatched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return h, c

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"  # (unquoted, as torch prints it)
        return s


class RNNCell(RNNCellBase):
    """One Elman RNN step ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``, as
    ``torch.nn.RNNCell``: input ``(N, H_in)`` or ``(H_in,)``, ``hx`` zeros by default.

    >>> cell = clgrad.nn.RNNCell(3, 5)
    >>> cell(clgrad.ones(2, 3)).shape
    clgrad.Size([2, 5])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Device | str | None = None,
        dtype: DType | None = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype, mode)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state."""
        return self._cell(input, hx)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step, as ``torch.nn.LSTMCell``: returns ``(h', c')``.

    >>> h, c = clgrad.nn.LSTMCell(3, 5)(clgrad.ones(2, 3))
    >>> h.shape, c.shape
    (clgrad.Size([2, 5]), clgrad.Size([2, 5]))
    """

    _mode = "LSTM"

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        """The next (hidden, cell) state."""
        return self._cell(input, hx, lstm=True)


class GRUCell(RNNCellBase):
    """One GRU step, as ``torch.nn.GRUCell``.

    >>> clgrad.nn.GRUCell(3, 5)(clgrad.ones(3)).shape
    clgrad.Size([5])
    """

    _mode = "GRU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state."""
        return self._cell(input, hx)[0]
