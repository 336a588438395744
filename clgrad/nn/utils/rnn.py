"""clgrad.nn.utils.rnn: padding and packing variable-length sequences, as torch.nn.utils.rnn.

A PackedSequence holds the time steps of a batch one after another (the sequences sorted by
decreasing length, ``batch_sizes[t]`` of them alive at step ``t``); RNN, LSTM and GRU accept
one and return one. Lengths and batch sizes are host ints (they decide shapes); the data stays
on its device and the packing and unpacking are differentiable (indexing and ``cat``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ... import dtypes as D
from ...ops.creation import arange, empty_like, full
from ...ops.creation import tensor as _tensor
from ...ops.movement import cat, stack
from ...tensor import Tensor

__all__ = [
    "invert_permutation",
    "PackedSequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """The packed form of a batch of sequences, as ``torch.nn.utils.rnn.PackedSequence``:
    ``data`` ``(sum of lengths, *)``, ``batch_sizes`` (int64, on the CPU), and the
    permutation to and from decreasing length (``sorted_indices`` / ``unsorted_indices``,
    None when the batch was given sorted).

    >>> from clgrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([clgrad.tensor([1.0, 2.0]), clgrad.tensor([3.0])])
    >>> p.data, p.batch_sizes
    (tensor([1., 3., 2.]), tensor([2, 1]))

    As PyTorch's, made from ``(data, batch_sizes)`` too, and ``unsorted_indices`` is worked out
    from ``sorted_indices`` where not given.
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("PackedSequence: give (data, batch_sizes) or both")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """The same packing with ``data.to(*args, **kwargs)`` (the index tensors follow a
        device change; ``batch_sizes`` stays on the CPU)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: t.to(data.device)) if data.device != self.data.device else (lambda t: t)
        return PackedSequence(
            data,
            self.batch_sizes,
            None if self.sorted_indices is None else move(self.sorted_indices),
            None if self.unsorted_indices is None else move(self.unsorted_indices),
        )

    def cpu(self, *args, **kwargs) -> PackedSequence:
        """The packing on the cpu device."""
        return self.to("cpu")

    def cuda(self, *args, **kwargs) -> PackedSequence:
        """The packing on ``cuda`` (an OpenCL device here)."""
        return self.to("cuda" if not args else args[0])

    def double(self) -> PackedSequence:
        return self.to(D.float64)

    def float(self) -> PackedSequence:
        return self.to(D.float32)

    def half(self) -> PackedSequence:
        return self.to(D.float16)

    def long(self) -> PackedSequence:
        return self.to(D.int64)

    def int(self) -> PackedSequence:
        return self.to(D.int32)

    def short(self) -> PackedSequence:
        return self.to(D.int16)

    def char(self) -> PackedSequence:
        return self.to(D.int8)

    def byte(self) -> PackedSequence:
        return self.to(D.uint8)

    @property
    def is_cuda(self) -> bool:
        """False: clgrad has no CUDA tensors."""
        return False

    def is_pinned(self) -> bool:
        """False: clgrad has no pinned host memory."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (None for None), as
    ``torch.nn.utils.rnn.invert_permutation``: a PackedSequence's ``unsorted_indices`` from its
    ``sorted_indices``.

    >>> invert_permutation(clgrad.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    positions = arange(permutation.numel(), device=permutation.device)
    return empty_like(permutation).scatter_(0, permutation, positions)


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return lengths.detach().cpu().numpy().astype(np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def pad_sequence(
    sequences: Tensor | Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stacks tensors of shapes ``(L_i, *)`` into ``(L_max, B, *)`` (``(B, L_max, *)`` with
    ``batch_first``), padding with ``padding_value`` on the ``padding_side``, as
    ``torch.nn.utils.rnn.pad_sequence``.

    >>> from clgrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([clgrad.tensor([1, 2]), clgrad.tensor([3])], batch_first=True)
    tensor([[1, 2],
            [3, 0]])
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        pad = longest - s.shape[0]
        if pad:
            fill = full((pad,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, fill]) if padding_side == "right" else cat([fill, s])
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The list of sequences ``pad_sequence`` padded, cut to ``lengths``, as
    ``torch.nn.utils.rnn.unpad_sequence``.

    >>> from clgrad.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(clgrad.tensor([[1, 2], [3, 0]]), clgrad.tensor([2, 1]), batch_first=True)
    [tensor([1, 2]), tensor([3])]
    """
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :n] for i, n in enumerate(_lengths(lengths).tolist())]


def _pack(x: Tensor, lengths: np.ndarray, order: np.ndarray) -> tuple[Tensor, Tensor]:
    """(data, batch_sizes) of the time-major padded ``x`` ``(T, B, *)``, the batch taken in
    ``order`` (decreasing lengths)."""
    sorted_lengths = lengths[order]
    steps = int(sorted_lengths[0]) if len(order) else 0
    sizes = [int((sorted_lengths > t).sum()) for t in range(steps)]
    perm = _tensor(order, dtype=D.int64, device=x.device)
    xs = x[:steps].index_select(1, perm)
    data = cat([xs[t, :b] for t, b in enumerate(sizes)])
    return data, _tensor(sizes, dtype=D.int64, device="cpu")


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    of the given ``lengths``, as ``torch.nn.utils.rnn.pack_padded_sequence``; with
    ``enforce_sorted`` the lengths must be decreasing, otherwise the batch is sorted (and the
    permutation kept in the PackedSequence).

    >>> from clgrad.nn.utils.rnn import pack_padded_sequence
    >>> x = clgrad.tensor([[1.0, 2.0], [3.0, 0.0]])
    >>> pack_padded_sequence(x, [2, 1], batch_first=True).data
    tensor([1., 3., 2.])
    """
    n = _lengths(lengths)
    if n.size and n.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    x = input.transpose(0, 1) if batch_first else input
    if len(n) != x.shape[1]:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(n)} (batch_size="
            f"{x.shape[1]})"
        )
    if enforce_sorted:
        if np.any(np.diff(n) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX exportability."
            )
        order, sorted_idx, unsorted_idx = np.arange(len(n)), None, None
    else:
        order = np.argsort(-n, kind="stable")
        sorted_idx = _tensor(order, dtype=D.int64, device=input.device)
        unsorted_idx = _tensor(np.argsort(order), dtype=D.int64, device=input.device)
    if int(n.max()) > x.shape[0]:
        raise RuntimeError(
            f"Expected sequence length to be larger than or equal to {int(n.max())}, got "
            f"{x.shape[0]}"
        )
    data, sizes = _pack(x, n, order)
    return PackedSequence(data, sizes, sorted_idx, unsorted_idx)


def _packed_lengths(sizes: np.ndarray) -> np.ndarray:
    """Each sorted sequence's length, from the batch sizes per step."""
    b = int(sizes[0]) if sizes.size else 0
    return np.array([int((sizes > i).sum()) for i in range(b)], dtype=np.int64)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The padded batch and the lengths (int64, on the CPU) of a PackedSequence, in the batch's
    original order, as ``torch.nn.utils.rnn.pad_packed_sequence``; ``total_length`` pads the
    time dim further.

    >>> from clgrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([clgrad.tensor([1.0]), clgrad.tensor([2.0, 3.0])], enforce_sorted=False)
    >>> pad_packed_sequence(p, batch_first=True)
    (tensor([[1., 0.],
            [2., 3.]]), tensor([1, 2]))
    """
    data, sizes = sequence.data, _lengths(sequence.batch_sizes)
    lengths = _packed_lengths(sizes)
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                f"Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    b = int(sizes[0]) if sizes.size else 0
    rows, start = [], 0
    for t in range(steps):
        k = int(sizes[t]) if t < len(sizes) else 0
        row = data[start : start + k]
        start += k
        if k < b:
            fill = full(
                (b - k,) + tuple(data.shape[1:]),
                padding_value,
                dtype=data.dtype,
                device=data.device,
            )
            row = cat([row, fill]) if k else fill
        rows.append(row)
    padded = stack(rows)
    length_t = _tensor(lengths, dtype=D.int64, device="cpu")
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        length_t = _tensor(
            lengths[_lengths(sequence.unsorted_indices)], dtype=D.int64, device="cpu"
        )
    return (padded.transpose(0, 1) if batch_first else padded), length_t


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of tensors ``(L_i, *)``, as ``torch.nn.utils.rnn.pack_sequence``.

    >>> from clgrad.nn.utils.rnn import pack_sequence
    >>> pack_sequence([clgrad.tensor([1, 2, 3]), clgrad.tensor([4])]).batch_sizes
    tensor([2, 1, 1])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of tensors a PackedSequence holds, as ``torch.nn.utils.rnn.unpack_sequence``.

    >>> from clgrad.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> unpack_sequence(pack_sequence([clgrad.tensor([1, 2]), clgrad.tensor([3])]))
    [tensor([1, 2]), tensor([3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
