"""Datasets and the DataLoader, as torch.utils.data (in-process: ``num_workers`` workers are
taken in turn in the calling process, as PyTorch's workers would hand their batches back).

A ``TensorDataset`` under the default collate is batched with one gather per tensor (one
kernel on its device, through int64 offsets computed on the host), never by stacking samples.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
    Sized,
)
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from ... import distributed as dist
from ... import dtypes as D
from ...device import default_device
from ...ops.creation import Generator, randperm
from ...ops.creation import tensor as _tensor
from ...ops.indexing import take
from ...ops.movement import stack
from ...tensor import Tensor

# what a dataset, a sampler or a loader yields, for annotations (``Dataset[tuple[Tensor, int]]``)
T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "Dataset",
    "TensorDataset",
    "Subset",
    "ConcatDataset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "default_convert",
    "IterableDataset",
    "ChainDataset",
    "StackDataset",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "get_worker_info",
    "WorkerInfo",
    "DistributedSampler",
]


class Dataset(Generic[T_co]):
    """Base class of map-style datasets, as ``torch.utils.data.Dataset``: subclasses implement
    ``__getitem__(index)`` (one sample) and ``__len__``; ``a + b`` concatenates two datasets
    (a ConcatDataset).

    >>> class Squares(clgrad.utils.data.Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> Squares()[3], len(Squares() + Squares())
    (9, 8)
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """A dataset of tensors that share their first dim, as ``torch.utils.data.TensorDataset``:
    sample ``i`` is ``tuple(t[i] for t in tensors)``. Under the DataLoader's default collate a
    batch is one gather per tensor (on its device), never a stack of samples.

    >>> x, y = clgrad.arange(10.0).reshape(5, 2), clgrad.arange(5)
    >>> ds = clgrad.utils.data.TensorDataset(x, y)
    >>> len(ds), ds[1]
    (5, (tensor([2., 3.]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        # PyTorch's checks and their classes: an assertion, and size(0)'s IndexError
        if any(t.ndim == 0 for t in tensors):
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _batch(self, indices):
        """Each tensor's rows ``indices`` (host ints), one gather per tensor."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = idx[(idx < -n) | (idx >= n)][0]
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {n}")
        idx = idx % n if n else idx
        return [_rows(t, idx) for t in self.tensors]


def _tensor_rows(dataset, indices):
    """The default-collated batch of ``indices`` as one gather per tensor, where ``dataset`` is
    a TensorDataset (or a Subset of one, as ``random_split`` makes) whose samples are its
    tensors' rows: a subclass with its own ``__getitem__`` is not. None where it is not."""
    while type(dataset).__getitem__ is Subset.__getitem__ and isinstance(dataset, Subset):
        if type(dataset).__getitems__ is not Subset.__getitems__:
            return None
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset).__getitem__ is TensorDataset.__getitem__ and isinstance(
        dataset, TensorDataset
    ):
        return dataset._batch(indices)
    return None


def _rows(t, idx):
    """t[idx] for host int64 indices: a contiguous slice when they are consecutive, else one
    ``take`` through offsets computed on the host."""
    if t.requires_grad:
        return t[_tensor(idx, dtype=D.int64, device=t.device)]
    if idx.size and np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size)):
        return t[int(idx[0]) : int(idx[0]) + idx.size].clone()
    row = np.zeros((), dtype=np.int64)
    for d in range(1, t.ndim):
        row = row[..., None] + np.arange(t.shape[d], dtype=np.int64) * t.stride(d)
    offsets = (idx * t.stride(0)).reshape((-1,) + (1,) * (t.ndim - 1)) + row + t.storage_offset()
    return take(t, _tensor(np.ascontiguousarray(offsets), dtype=D.int64, device=t.device))


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order, as ``torch.utils.data.Subset``.

    >>> ds = clgrad.utils.data.TensorDataset(clgrad.arange(5))
    >>> sub = clgrad.utils.data.Subset(ds, [4, 0])
    >>> len(sub), sub[0]
    (2, (tensor(4),))
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        """The samples at ``indices``: through the dataset's own ``__getitems__`` where it has
        one (a dataset that loads batches at once), as PyTorch's Subset."""
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """The concatenation of several datasets, indexed as one, as
    ``torch.utils.data.ConcatDataset``.

    >>> ds = clgrad.utils.data.TensorDataset(clgrad.arange(5))
    >>> both = clgrad.utils.data.ConcatDataset([ds, ds])
    >>> len(both), both[6]
    (10, (tensor(1),))
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")  # as torch's assert
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        i = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if i == 0 else self.cumulative_sizes[i - 1]
        return self.datasets[i][idx - start]


class IterableDataset(Dataset[T_co]):
    """Base class of iterable-style datasets, as ``torch.utils.data.IterableDataset``:
    subclasses implement ``__iter__``; the DataLoader batches what it yields (no sampler);
    ``a + b`` chains two of them.

    >>> class Count(clgrad.utils.data.IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> [b.tolist() for b in clgrad.utils.data.DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """The iterable datasets ``datasets`` one after another, as
    ``torch.utils.data.ChainDataset``.

    >>> class Count(clgrad.utils.data.IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(2))
    >>> list(clgrad.utils.data.ChainDataset([Count(), Count()]))
    [0, 1, 0, 1]
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset[T_co]):
    """Samples of several equally long datasets side by side, as
    ``torch.utils.data.StackDataset``: positional datasets give tuples, keyword ones dicts.

    >>> ds = clgrad.utils.data.StackDataset(x=[1, 2], y=["a", "b"])
    >>> len(ds), ds[1]
    (2, {'x': 2, 'y': 'b'})
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        sets = args or tuple(kwargs.values())
        if not sets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(sets[0])
        if any(len(d) != self._length for d in sets):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


@dataclass(frozen=True)
class WorkerInfo:
    """The worker a DataLoader is loading in, as ``torch.utils.data.get_worker_info()`` gives
    it: ``id`` (0 to ``num_workers - 1``), ``num_workers``, ``seed`` (this epoch's base seed
    plus the id) and ``dataset`` (the worker's copy of an IterableDataset, else the dataset).
    clgrad's workers take turns in the calling process, as PyTorch's thread workers do."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "thread"


_current_worker: list[WorkerInfo | None] = [None]
_END = object()  # what next() gives for an exhausted stream of batches


def get_worker_info() -> WorkerInfo | None:
    """The ``WorkerInfo`` of the DataLoader worker loading now (inside a dataset's
    ``__getitem__`` / ``__iter__``, the collate function, or ``worker_init_fn``), None outside a
    worker or when the DataLoader has ``num_workers=0``, as ``torch.utils.data.get_worker_info``.
    An IterableDataset shards itself with it, as it would in PyTorch's workers.

    >>> clgrad.utils.data.get_worker_info() is None
    True
    """
    return _current_worker[0]


@contextmanager
def _in_worker(info: WorkerInfo | None):
    """Loads as worker ``info`` inside the block (``get_worker_info()`` answers it)."""
    previous, _current_worker[0] = _current_worker[0], info
    try:
        yield
    finally:
        _current_worker[0] = previous


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: Generator | None = None,
) -> list[Subset]:
    """Splits ``dataset`` at random into non-overlapping Subsets of the given ``lengths`` (or
    fractions that sum to 1, the remainder spread one by one over the first splits), as
    ``torch.utils.data.random_split``; the permutation comes from ``generator`` (default: the
    global generator).

    >>> ds = clgrad.utils.data.TensorDataset(clgrad.arange(10))
    >>> train, val = clgrad.utils.data.random_split(ds, [0.8, 0.2])
    >>> len(train), len(val), sorted(train.indices + val.indices) == list(range(10))
    (8, 2, True)
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = randperm(n, generator=generator).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start : start + length]))
        start += length
    return out


# ---- samplers --------------------------------------------------------------------------------
class Sampler(Generic[T_co]):
    """Base class of samplers, as ``torch.utils.data.Sampler``: ``__iter__`` yields dataset
    indices (or, for a batch sampler, lists of them) and ``__len__`` says how many.

    >>> class Reversed(clgrad.utils.data.Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    >>> list(Reversed(3))
    [2, 1, 0]
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Yields the indices ``0, 1, ..., len(data_source) - 1`` in order, as
    ``torch.utils.data.SequentialSampler``.

    >>> list(clgrad.utils.data.SequentialSampler(range(4)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Yields the indices of ``data_source`` in random order, a new permutation per pass (or,
    with ``replacement``, ``num_samples`` independent draws), as
    ``torch.utils.data.RandomSampler``; the numbers come from ``generator`` (default: the
    global generator, so ``clgrad.manual_seed`` makes the order reproducible).

    >>> _ = clgrad.manual_seed(0)
    >>> order = list(clgrad.utils.data.RandomSampler(range(5)))
    >>> sorted(order)
    [0, 1, 2, 3, 4]
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields: ``num_samples`` if given, else ``len(data_source)``."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        # drawn as the pass goes, as torch's: minGPT's trainer asks for num_samples=int(1e10)
        # with replacement and reads a few batches (one draw of them all ran out of memory)
        n = len(self.data_source)
        if self.replacement:
            from ...ops.creation import randint

            for start in range(0, self.num_samples, 32):
                size = min(32, self.num_samples - start)
                yield from randint(0, n, (size,), device="cpu", generator=self.generator).tolist()
            return
        for start in range(0, self.num_samples, n):
            perm = randperm(n, generator=self.generator).tolist()
            yield from perm[: self.num_samples - start]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter,
    unless ``drop_last``), as ``torch.utils.data.BatchSampler``.

    >>> list(clgrad.utils.data.BatchSampler(range(5), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(clgrad.utils.data.BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class SubsetRandomSampler(Sampler[int]):
    """Yields the given ``indices`` in a random order, a new one per pass, as
    ``torch.utils.data.SubsetRandomSampler``.

    >>> sorted(clgrad.utils.data.SubsetRandomSampler([4, 1, 7]))
    [1, 4, 7]
    """

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Yields ``num_samples`` indices drawn with probabilities proportional to ``weights``
    (with ``replacement`` or without), as ``torch.utils.data.WeightedRandomSampler``.

    >>> _ = clgrad.manual_seed(0)
    >>> list(clgrad.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = weights.detach().cpu().numpy() if isinstance(weights, Tensor) else weights
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = _tensor(w, dtype=D.float64, device="cpu")
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self):
        from ...ops.creation import multinomial

        draw = multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        return iter(draw.tolist())

    def __len__(self):
        return self.num_samples


# ---- collate ---------------------------------------------------------------------------------
_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def collate(batch: Sequence[Any], *, collate_fn_map: dict | None = None) -> Any:
    """Merges a list of samples into a batch by the type of its first element, as
    ``torch.utils.data._utils.collate.collate``: ``collate_fn_map`` maps a type (or a tuple of
    types) to the function that collates a batch of it (called with ``collate_fn_map=``; the
    exact type first, then the first entry the element is an instance of); mappings and
    sequences are collated key by key and position by position into a copy of the first one
    (a tuple becomes a list, a namedtuple stays one); anything else raises torch's TypeError.

    >>> from clgrad.utils.data._utils.collate import collate, default_collate_fn_map
    >>> class Point:
    ...     def __init__(self, x):
    ...         self.x = x
    >>> def collate_points(batch, *, collate_fn_map=None):
    ...     return clgrad.tensor([p.x for p in batch])
    >>> collate([(Point(1), 2.0), (Point(3), 4.0)],
    ...         collate_fn_map={Point: collate_points, **default_collate_fn_map})
    [tensor([1, 3]), tensor([2., 4.], dtype=clgrad.float64)]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    def each(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, Mapping):
        try:
            if isinstance(elem, MutableMapping):  # a copy keeps its type (a defaultdict's factory)
                clone = copy.copy(elem)
                clone.update({key: each([d[key] for d in batch]) for key in elem})
                return clone
            return elem_type({key: each([d[key] for d in batch]) for key in elem})
        except TypeError:  # the mapping type cannot be made from a dict
            return {key: each([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(each(samples) for samples in zip(*batch)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [each(samples) for samples in transposed]
        try:
            if isinstance(elem, MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = each(samples)
                return clone
            return elem_type([each(samples) for samples in transposed])
        except TypeError:  # the sequence type cannot be made from a list
            return [each(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERROR.format(elem_type))


def collate_tensor_fn(batch: Sequence[Tensor], *, collate_fn_map: dict | None = None) -> Tensor:
    """Tensors stacked along a new dim 0: ``default_collate``'s function for tensors.

    >>> from clgrad.utils.data._utils.collate import collate_tensor_fn
    >>> collate_tensor_fn([clgrad.ones(2), clgrad.zeros(2)])
    tensor([[1., 1.],
            [0., 0.]])
    """
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None) -> Any:
    """NumPy arrays as tensors of their dtype, collated by ``collate_fn_map``'s tensor function
    (string and object arrays raise torch's TypeError).

    >>> import numpy as np
    >>> from clgrad.utils.data._utils.collate import (
    ...     collate_numpy_array_fn, default_collate_fn_map)
    >>> collate_numpy_array_fn([np.zeros(2, np.int32), np.ones(2, np.int32)],
    ...                        collate_fn_map=default_collate_fn_map)
    tensor([[0, 0],
            [1, 1]], dtype=clgrad.int32)
    """
    elem = batch[0]
    if elem.dtype.kind in "SaUO":
        raise TypeError(_COLLATE_ERROR.format(elem.dtype))
    return collate(
        [_tensor(np.asarray(b), device=default_device()) for b in batch],
        collate_fn_map=collate_fn_map,
    )


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """NumPy scalars as a tensor of their dtype.

    >>> import numpy as np
    >>> from clgrad.utils.data._utils.collate import collate_numpy_scalar_fn
    >>> collate_numpy_scalar_fn([np.float32(1), np.float32(2)])
    tensor([1., 2.])
    """
    return _tensor(np.array(batch), device=default_device())


def collate_float_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """Python floats as a float64 tensor.

    >>> from clgrad.utils.data._utils.collate import collate_float_fn
    >>> collate_float_fn([1.5, 2.5])
    tensor([1.5000, 2.5000], dtype=clgrad.float64)
    """
    return _tensor(list(batch), dtype=D.float64, device=default_device())


def collate_int_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """Python ints and bools as a tensor of the dtype of them all (int64, bool, or the default
    float where floats follow an int).

    >>> from clgrad.utils.data._utils.collate import collate_int_fn
    >>> collate_int_fn([1, 2]), collate_int_fn([True, False])
    (tensor([1, 2]), tensor([ True, False]))
    """
    return _tensor(list(batch), device=default_device())


def collate_str_fn(batch, *, collate_fn_map: dict | None = None) -> Any:
    """Strings and bytes stay as given.

    >>> from clgrad.utils.data._utils.collate import collate_str_fn
    >>> collate_str_fn(("a", "b"))
    ('a', 'b')
    """
    return batch


# default_collate's functions by type; a program may add its own types (as torch documents)
default_collate_fn_map: dict = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Sequence[Any]) -> Any:
    """Merges a list of samples into a batch, as ``torch.utils.data.default_collate``: tensors are
    stacked along a new dim 0, NumPy arrays and scalars stacked into a tensor of their dtype,
    Python floats a float64 tensor, ints and bools a tensor of the dtype of them all (int64,
    bool, or float where floats follow an int), on the default device; strings stay as given,
    and mappings and sequences are collated element by element into a copy of their type
    (tuples come back as lists, namedtuples as namedtuples). It is
    ``collate(batch, collate_fn_map=default_collate_fn_map)``: a type added to that map is
    collated by its function.

    >>> from clgrad.utils.data import default_collate
    >>> default_collate([(clgrad.ones(2), 1), (clgrad.zeros(2), 0)])
    [tensor([[1., 1.],
            [0., 0.]]), tensor([1, 0])]
    >>> default_collate([{"x": 1.5}, {"x": 2.5}])["x"].dtype
    clgrad.float64
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data: Any) -> Any:
    """Converts NumPy arrays and scalars in ``data`` (through dicts, namedtuples, lists and
    tuples, tuples becoming lists) into tensors, leaving everything else as is, as
    ``torch.utils.data.default_convert``: the DataLoader's ``collate_fn`` when
    ``batch_size=None``.

    >>> import numpy as np
    >>> clgrad.utils.data.default_convert({"x": np.zeros(2), "n": 3})
    {'x': tensor([0., 0.], dtype=clgrad.float64), 'n': 3}
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)):
        if data.dtype.kind in "SUO":  # strings and objects stay NumPy, as torch
            return data
        return _tensor(np.asarray(data), device=default_device())
    if isinstance(data, dict):
        items = [(k, default_convert(v)) for k, v in data.items()]
        return dict(items) if type(data) is dict else type(data)(items)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


class DataLoader(Generic[T_co]):
    """Iterates over a dataset in batches, as ``torch.utils.data.DataLoader``: indices come from
    ``sampler`` (by default sequential, or random per epoch with ``shuffle``, drawn from
    ``generator`` or the global generator), are grouped by ``batch_size`` (or a
    ``batch_sampler``; the last batch dropped with ``drop_last``), and the samples are merged
    by ``collate_fn`` (``default_collate``). ``batch_size=None`` yields the samples one by one,
    through ``default_convert``. An ``IterableDataset`` is batched in the order it yields
    (no sampler, shuffle or batch_sampler allowed).

    Loading runs in the calling process, its ``num_workers`` workers taking turns as PyTorch's
    hand their batches back: each epoch (once, with ``persistent_workers``) calls
    ``worker_init_fn(id)`` for each worker; batch i of a map-style dataset is loaded by worker
    ``i % num_workers``; an IterableDataset is iterated by each worker over a copy of its own
    (so a dataset that does not shard itself with ``get_worker_info()`` is yielded once per
    worker, as in PyTorch), their batches interleaved in turn until each runs out. Inside a
    worker ``get_worker_info()`` gives its ``WorkerInfo``, whose ``dataset`` is the worker's
    shallow copy of the dataset (attributes set on it are the worker's own, as in PyTorch,
    but objects they share are shared). Unlike PyTorch's worker processes, the workers share
    the calling process: no random state is reseeded, and ``worker_init_fn``'s other effects
    are the caller's.
    ``pin_memory``, ``prefetch_factor``, ``timeout`` and ``multiprocessing_context`` are
    accepted for compatibility.

    >>> from clgrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(clgrad.arange(10.0).reshape(5, 2), clgrad.arange(5))
    >>> loader = DataLoader(ds, batch_size=2)
    >>> len(loader)
    3
    >>> [(tuple(x.shape), y.tolist()) for x, y in loader]
    [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
    """

    def __init__(
        self,
        dataset: Dataset | Sequence[Any],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            # an iterable dataset orders itself: PyTorch refuses the ordering options
            for what, value in (
                ("shuffle", shuffle),
                ("sampler", sampler),
                ("batch_sampler", batch_sampler),
            ):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {what} option, "
                        f"but got {what}={value}"
                    )
            sampler = ()
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        if sampler is None:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.pin_memory = num_workers, pin_memory
        self._auto_collation = batch_sampler is not None
        self.collate_fn = (
            collate_fn
            if collate_fn is not None
            else (default_collate if self._auto_collation else default_convert)
        )
        self.worker_init_fn, self.timeout = worker_init_fn, timeout
        self.persistent_workers = persistent_workers
        self.multiprocessing_context, self.prefetch_factor = (
            multiprocessing_context,
            prefetch_factor,
        )
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self._workers: list[WorkerInfo] | None = None  # kept between epochs if persistent
        self._initialized = True

    _initialized = False
    _FIXED = (
        "batch_size",
        "batch_sampler",
        "sampler",
        "drop_last",
        "dataset",
        "persistent_workers",
    )

    def __setattr__(self, attr, value):
        # PyTorch's guard: the loader's batching is set once (its batch sampler was made
        # from these), so a later assignment would be silently ignored
        if self._initialized and attr in self._FIXED:
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(attr, value)

    def _start_workers(self) -> list[WorkerInfo]:
        """This epoch's workers (the persistent ones of an earlier epoch if kept), each
        initialized by ``worker_init_fn`` as it starts; their seeds are one draw from the
        loader's generator plus their ids, as PyTorch's."""
        if self._workers is not None and self.persistent_workers:
            return self._workers
        from ...ops.creation import randint

        base_seed = int(randint(0, 2**62, (), generator=self.generator).item())
        workers = []
        for worker_id in range(self.num_workers):
            # each worker's own (shallow) copy, as each of PyTorch's receives one: what a
            # worker_init_fn sets on info.dataset is that worker's alone
            try:
                dataset = copy.copy(self.dataset)
            except (TypeError, copy.Error):  # a dataset that cannot be copied is shared
                dataset = self.dataset
            info = WorkerInfo(worker_id, self.num_workers, base_seed + worker_id, dataset)
            if self.worker_init_fn is not None:
                with _in_worker(info):
                    self.worker_init_fn(worker_id)
            workers.append(info)
        self._workers = workers
        return workers

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.num_workers > 0:
            return _MultiProcessingDataLoaderIter(self, self._iter_workers(self._start_workers()))
        return _SingleProcessDataLoaderIter(self, self._iter_batches())

    def _iter_workers(self, workers: list[WorkerInfo]):
        """The batches, each loaded inside the worker PyTorch would load it in."""
        if self._iterable:
            # each worker batches its own copy of the dataset; they hand batches back in
            # turn, one that has run out dropping from the rotation
            streams = [(info, self._iter_iterable(info.dataset)) for info in workers]
            while streams:
                for entry in list(streams):
                    info, stream = entry
                    with _in_worker(info):
                        batch = next(stream, _END)
                    if batch is _END:
                        streams.remove(entry)
                    else:
                        yield batch
            return
        # batch i is worker i % num_workers's, loaded from that worker's copy of the dataset
        for i, index in enumerate(self._indices()):
            info = workers[i % len(workers)]
            with _in_worker(info):
                yield self._fetch(info.dataset, index)

    def _iter_batches(self):
        """The batches, loaded in the calling process."""
        if self._iterable:
            yield from self._iter_iterable(self.dataset)
            return
        for index in self._indices():
            yield self._fetch(self.dataset, index)

    def _indices(self):
        """The sampler's indices, grouped into batches when the loader batches."""
        return iter(self.batch_sampler if self._auto_collation else self.sampler)

    def _fetch(self, dataset, index):
        """The batch of ``index`` (the sample, without batching) from ``dataset``."""
        if not self._auto_collation:
            return self.collate_fn(dataset[index])
        if self.collate_fn is default_collate:
            rows = _tensor_rows(dataset, index)  # one gather per tensor
            if rows is not None:
                return rows
        if hasattr(dataset, "__getitems__"):
            return self.collate_fn(dataset.__getitems__(index))
        return self.collate_fn([dataset[i] for i in index])

    def _iter_iterable(self, dataset):
        """The batches of an IterableDataset: its samples in the order it yields them."""
        if not self._auto_collation:
            for sample in dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:  # the dataset's own length, when it has one (a TypeError if not)
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler) if self._auto_collation else len(self.sampler)


class _BaseDataLoaderIter:
    """An epoch's iterator over a DataLoader's batches, as PyTorch's: ``len()`` is the
    loader's, ``_num_yielded`` counts the batches handed out so far.

    >>> it = iter(clgrad.utils.data.DataLoader(range(5), batch_size=2))
    >>> len(it), next(it).tolist(), it._num_yielded
    (3, [0, 1], 1)
    """

    def __init__(self, loader: DataLoader, batches) -> None:
        self._loader, self._batches, self._num_yielded = loader, batches, 0
        self._dataset, self._num_workers = loader.dataset, loader.num_workers

    def __iter__(self):
        return self

    def __next__(self):
        batch = next(self._batches)
        self._num_yielded += 1
        return batch

    def __len__(self) -> int:
        return len(self._loader)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """The iterator of a loader with ``num_workers=0``."""


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """The iterator of a loader with workers (which take turns in this process)."""


# ---- sharding over the ranks of a distributed job ---------------------------------------
class DistributedSampler(Sampler[T_co]):
    """Yields the indices of rank ``rank``'s shard of ``dataset``, as
    ``torch.utils.data.distributed.DistributedSampler``: with ``shuffle`` a permutation drawn
    from a generator seeded ``seed + epoch`` (the same on every rank: call ``set_epoch(e)``
    at the start of each epoch for a new order), else ``0 .. len - 1``; then padded by
    repeating its start (or, with ``drop_last``, cut) to a multiple of ``num_replicas``, and
    rank r takes every ``num_replicas``-th index starting at r. ``num_replicas`` and ``rank``
    default to the process group's.

    Given the same permutation, the shards are PyTorch's index for index. The permutation
    itself is clgrad's ``randperm``, whose numbers differ from PyTorch's for the same seed.

    >>> s = clgrad.utils.data.distributed.DistributedSampler(
    ...     range(5), num_replicas=2, rank=1, shuffle=False)
    >>> list(s), len(s)
    ([1, 3, 0], 3)
    >>> list(clgrad.utils.data.distributed.DistributedSampler(
    ...     range(5), num_replicas=2, rank=1, shuffle=False, drop_last=True))
    [1, 3]
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            if not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler needs num_replicas and rank, or an initialized process "
                    "group (clgrad.distributed.init_process_group) to take them from"
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # every rank the same number of samples, the remainder dropped
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def _order(self) -> list[int]:
        """The dataset's indices in this epoch's order, the same on every rank."""
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        g = Generator()
        g.manual_seed(self.seed + self.epoch)
        return randperm(n, generator=g).tolist()

    def __iter__(self) -> Iterator[int]:
        indices = self._order()
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch, whose number seeds the next pass's permutation (with ``shuffle``).

        >>> s = clgrad.utils.data.distributed.DistributedSampler(range(8), 2, 0, seed=1)
        >>> s.set_epoch(3)
        >>> sorted(s) == sorted(set(s)) and len(list(s)) == 4
        True
        """
        self.epoch = epoch
