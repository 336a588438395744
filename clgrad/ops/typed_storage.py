"""``Tensor.storage()``: PyTorch's (deprecated) TypedStorage, a view of a tensor's whole memory
as a flat run of elements of its dtype, for programs that still read or write through it."""

from __future__ import annotations

import warnings

from ..storage import UntypedStorage
from ..tensor import Tensor

_WARNED = [False]


class TypedStorage:
    """The elements of a tensor's storage, in its dtype, as ``torch.TypedStorage``: every view
    of one storage sees the same elements, and writes through it reach them.

    >>> x = clgrad.arange(4.0)
    >>> s = x[2:].storage()
    >>> s.size(), s[3], s.dtype
    (4, 3.0, clgrad.float32)
    >>> s[0] = 7.0
    >>> x
    tensor([7., 1., 2., 3.])
    """

    is_sparse = False

    def __init__(self, storage, dtype):
        if not _WARNED[0]:
            _WARNED[0] = True
            warnings.warn(
                "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
                "will be the only storage class. This should only matter to you if you are using "
                "storages directly.  To access UntypedStorage directly, use "
                "tensor.untyped_storage() instead of tensor.storage()",
                UserWarning,
                stacklevel=3,
            )
        self._storage = storage
        self.dtype = dtype

    def _flat(self) -> Tensor:
        """The whole storage as a 1-d tensor (writes through it reach every view)."""
        n = self.size()
        return Tensor._make(self._storage, (n,), (1,), 0, self.dtype)

    @property
    def device(self):
        return self._storage.device

    @property
    def is_cuda(self) -> bool:
        return False

    def size(self) -> int:
        return self._storage.nbytes // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._storage.nbytes

    def data_ptr(self) -> int:
        return UntypedStorage(self._storage).data_ptr()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._storage)

    def _index(self, idx) -> int:
        if not isinstance(idx, int):
            if isinstance(idx, slice):
                raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n if n else idx

    def __getitem__(self, idx):
        return self._flat()[self._index(idx)].item()

    def __setitem__(self, idx, value) -> None:
        flat = self._flat()
        if isinstance(idx, slice):
            flat[idx] = value
        else:
            flat[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._flat().tolist()

    def fill_(self, value) -> TypedStorage:
        self._flat().fill_(value)
        return self

    def copy_(self, source, non_blocking=None) -> TypedStorage:
        src = source._flat() if isinstance(source, TypedStorage) else source
        self._flat().copy_(src)
        return self

    def is_shared(self) -> bool:
        return False

    def is_pinned(self, device=None) -> bool:
        return False

    def cpu(self) -> TypedStorage:
        if self.device.is_cpu:
            return self
        return self._flat().cpu().storage()

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"torch.{_LEGACY_NAMES.get(self.dtype.name, self.dtype.name)}Storage"
        raise NotImplementedError("TypedStorage.type(dtype): convert the tensor instead")

    def __repr__(self):
        values = "".join(f" {v}\n" for v in self.tolist())
        return (
            f"{values}[clgrad.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
            f"of size {self.size()}]"
        )


# torch's legacy storage class names by dtype
_LEGACY_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def storage(self) -> TypedStorage:
    """``Tensor.storage()``: the tensor's memory as a TypedStorage of its dtype."""
    return TypedStorage(self._storage, self.dtype)


class _LegacyStorageMeta(type):
    """``isinstance(x.storage(), clgrad.FloatStorage)``: a TypedStorage of that dtype, as
    PyTorch's legacy storage classes answer."""

    def __instancecheck__(cls, instance):
        if type.__instancecheck__(cls, instance):
            return True
        return isinstance(instance, TypedStorage) and instance.dtype is cls._dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """A TypedStorage of one dtype made by size or from a sequence: ``clgrad.FloatStorage(3)``
    (zeros), ``clgrad.FloatStorage([1, 2])``, on the cpu device."""

    _dtype = None

    def __init__(self, *args, device=None):
        from .creation import tensor, zeros  # the creation ops sit beside this module

        if not args:
            t = zeros(0, dtype=self._dtype, device=device)
        elif len(args) == 1 and isinstance(args[0], int):
            t = zeros(args[0], dtype=self._dtype, device=device)
        elif len(args) == 1:
            t = tensor(list(args[0]), dtype=self._dtype, device=device)
        else:
            raise TypeError(f"{type(self).__name__}(): expected a size or a sequence")
        TypedStorage.__init__(self, t._storage, self._dtype)


def _legacy_storage(name, dt):
    return _LegacyStorageMeta(f"{name}Storage", (_LegacyStorage,), {"_dtype": dt})


def _legacy_storages():
    from .. import dtypes as D

    out = {
        name: _legacy_storage(legacy, D.as_dtype(name)) for name, legacy in _LEGACY_NAMES.items()
    }
    for cls in out.values():
        cls.__module__ = "clgrad"
        cls.__qualname__ = cls.__name__
    return out


# dtype name -> the legacy storage class: clgrad.FloatStorage, ... (Tensor.storage_type)
LEGACY_STORAGES = _legacy_storages()
