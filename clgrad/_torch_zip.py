"""Reading PyTorch's own checkpoint files (``torch.save``'s zip format, the default since
PyTorch 1.6) for ``clgrad.load``: pretrained weights and checkpoints written by PyTorch load
without PyTorch installed.

The format: a zip archive whose members sit under one folder (``<name>/``):

- ``data.pkl``: the saved object, pickled; each tensor is a call of
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  whose storage is a persistent id ``('storage', <dtype>Storage, key, location, numel)``;
- ``data/<key>``: each storage's bytes, in the order ``byteorder`` names (little by default);
- ``version``, ``.format_version``, ``byteorder``, ``.storage_alignment`` and the like.

Unpickling runs only what this module maps the pickle's names to (tensors, parameters,
dtypes, devices, sizes, plain containers) unless ``weights_only=False``, as ``torch.load``:
then other ``torch.*`` names are looked up under ``clgrad.*`` (a whole pickled module), and any
other name as pickle would, which runs code the file chooses. Every storage is checked against
its member's size, and every tensor against its storage, before anything is allocated.
"""

from __future__ import annotations

import importlib
import io
import math
import pickle
import zipfile
import zlib

import numpy as np

from . import dtypes as D
from .tensor import Size, Tensor

# the storage classes PyTorch names in its persistent ids -> dtype name
_STORAGE_DTYPES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
# torch's dtype names (``torch.float32`` pickles as the global ``torch float32``)
_DTYPE_NAMES = (
    "float32 float float64 double float16 half bfloat16 int64 long int32 int int16 short "
    "int8 uint8 bool complex64 cfloat complex128 cdouble"
).split()


def _dtype(name: str):
    """clgrad's dtype of this name, or None where clgrad has none."""
    try:
        return D.as_dtype(name)
    except (TypeError, KeyError, ValueError):
        return None


def is_torch_archive(names) -> bool:
    """Whether a zip archive's member ``names`` are those of ``torch.save``'s format."""
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


class _StorageType:
    """What a pickled ``torch.<X>Storage`` stands for here: its dtype."""

    def __init__(self, name: str):
        self.name = name
        self.dtype_name = _STORAGE_DTYPES[name]
        self.dtype = _dtype(self.dtype_name)


class _Storage:
    """A storage read from the archive: its elements as a flat host array, made into a
    tensor on each device once (``on``)."""

    def __init__(self, array: np.ndarray, dtype, location: str):
        self.array, self.dtype, self.location = array, dtype, location
        self.tensors: dict = {}

    def on(self, map_location) -> Tensor:
        from .ops.creation import tensor
        from .serialization import _target_device

        key = id(map_location) if callable(map_location) else None
        t = self.tensors.get(key)
        if t is None:
            values = D.host_values(self.array, self.dtype)
            if callable(map_location) and not isinstance(map_location, (str, dict)):
                t = map_location(tensor(values, dtype=self.dtype, device="cpu"), self.location)
                if not isinstance(t, Tensor):
                    raise TypeError("clgrad.load: map_location must return a Tensor")
            else:
                device = _target_device(self.location, map_location)
                t = tensor(values, dtype=self.dtype, device=device)
            self.tensors[key] = t
        return t


def load(zf: zipfile.ZipFile, where: str, map_location, unpickling):
    """The object a ``torch.save`` archive ``zf`` holds (see the module docstring)."""
    from .serialization import (
        _BUILTIN_SAFE,
        _SAFE_GLOBALS,
        MAX_INFLATE_RATIO,
        CheckpointError,
        _available_memory,
        _refused,
    )

    names = zf.namelist()
    pkl = next(n for n in names if n == "data.pkl" or n.endswith("/data.pkl"))
    prefix = pkl[: -len("data.pkl")]
    order = "little"
    if f"{prefix}byteorder" in names:
        order = zf.read(f"{prefix}byteorder").decode(errors="replace").strip()
        if order not in ("little", "big"):
            raise CheckpointError(f"clgrad.load: {where} has an unknown byte order {order!r}")
    module, weights_only = unpickling
    storages: dict[str, _Storage] = {}
    total = [0]

    def damaged(why):
        return CheckpointError(f"clgrad.load: {where} is damaged: {why}")

    def read_storage(storage_type, key, location, numel):
        if not isinstance(storage_type, _StorageType):
            raise damaged(f"storage {key!r} has no storage type but {storage_type!r}")
        if storage_type.dtype is None:
            raise CheckpointError(
                f"clgrad.load: {where} holds a {storage_type.dtype_name} tensor "
                f"({storage_type.name}), a dtype clgrad does not have"
            )
        if not isinstance(key, str) or type(numel) is not int or numel < 0:
            raise damaged(f"bad storage id {(key, numel)!r}")
        member = f"{prefix}data/{key}"
        try:
            info = zf.getinfo(member)
        except KeyError:
            raise damaged(f"storage {key!r} is missing from the archive") from None
        dt = storage_type.dtype
        itemsize = dt.np.itemsize  # (bfloat16: its bits, as uint16)
        nbytes = numel * itemsize
        if info.file_size != nbytes:
            raise damaged(f"storage {key!r} declares {nbytes} bytes but holds {info.file_size}")
        if (
            info.compress_type != zipfile.ZIP_STORED
            and nbytes > MAX_INFLATE_RATIO * max(info.compress_size, 1)
            and nbytes > 64 * 2**20
        ):
            raise CheckpointError(
                f"clgrad.load: {where}: storage {key!r} would inflate from "
                f"{info.compress_size} bytes to {nbytes}: refusing a possible zip bomb"
            )
        total[0] += nbytes
        free = _available_memory()
        if free is not None and total[0] > free:
            raise CheckpointError(
                f"clgrad.load: {where} holds more tensor data than the {free} bytes free now"
            )
        try:
            data = zf.read(info)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
            raise damaged(f"storage {key!r} cannot be read ({type(e).__name__}: {e})") from None
        stored = dt.np.newbyteorder("<" if order == "little" else ">")
        array = np.frombuffer(data, stored).astype(dt.np)  # native order, writable
        return _Storage(array, dt, str(location))

    def rebuild_tensor(storage, offset, size, stride, requires_grad=False, *_hooks_metadata):
        if not isinstance(storage, _Storage):
            raise damaged(f"a tensor's storage is {type(storage).__name__}, not a storage")
        ints = [offset, *size, *stride]
        if not all(type(v) is int and v >= 0 for v in ints) or len(size) != len(stride):
            raise damaged(f"bad tensor geometry {(offset, tuple(size), tuple(stride))!r}")
        numel = storage.array.size
        if math.prod(size) and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= numel:
            raise damaged("a tensor reaches past its storage")
        t = storage.on(map_location).detach().as_strided(tuple(size), tuple(stride), offset)
        return t.requires_grad_(True) if requires_grad else t

    def rebuild_parameter(data, requires_grad, backward_hooks, state=None):
        from .nn.parameter import Parameter

        p = Parameter(data.detach(), requires_grad)
        for name, value in (state or {}).items():
            setattr(p, name, value)
        return p

    def rebuild_from_type(func, new_type, args, state):
        # a tensor whose Python class is Tensor or Parameter (other subclasses are refused)
        t = func(*args)
        for name, value in (state or {}).items():
            setattr(t, name, value)
        return t

    def device(kind, index=None):
        from .device import resolve

        return resolve(kind if index is None else f"{kind}:{index}")

    def torch_global(mod, name):
        """What a ``torch.*`` name in the pickle stands for, or None."""
        if mod == "torch":
            if name in _STORAGE_DTYPES:
                return _StorageType(name)
            if name in _DTYPE_NAMES and _dtype(name) is not None:
                return _dtype(name)
            if name == "Size":
                return Size
            if name == "device":
                return device
            if name == "Tensor":
                return Tensor
        if mod == "torch._utils":
            if name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
                return rebuild_tensor
            if name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
                return rebuild_parameter
        if mod == "torch._tensor" and name == "_rebuild_from_type_v2":
            return rebuild_from_type
        if mod == "torch._tensor" and name == "Tensor":
            return Tensor
        if mod == "torch.nn.parameter" and name == "Parameter":
            from .nn.parameter import Parameter

            return Parameter
        return None

    class _Unpickler(module.Unpickler):
        def persistent_load(self, pid):
            if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
                raise damaged(f"unknown persistent id {pid!r:.80}")
            _, storage_type, key, location, numel = pid[:5]
            if key not in storages:
                storages[key] = read_storage(storage_type, key, location, numel)
            return storages[key]

        def find_class(self, mod, name):
            if mod == "__builtin__":  # protocol 2 writes Python 2's name of builtins
                mod = "builtins"
            mapped = torch_global(mod, name)
            if mapped is not None:
                return mapped
            if weights_only:
                allowed = _SAFE_GLOBALS.get((mod, name)) or _BUILTIN_SAFE.get((mod, name))
                if allowed is None:
                    raise _refused(mod, name)
                return allowed
            if mod == "torch" or mod.startswith("torch."):
                # a pickled torch object (a whole module): clgrad's class of the same name
                try:
                    return getattr(importlib.import_module("clgrad" + mod[5:]), name)
                except (ImportError, AttributeError):
                    raise pickle.UnpicklingError(
                        f"clgrad.load: {where} names {mod}.{name}, which clgrad does not have"
                    ) from None
            return super().find_class(mod, name)

    try:
        return _Unpickler(io.BytesIO(zf.read(pkl))).load()
    except (pickle.UnpicklingError, CheckpointError, RuntimeError, TypeError):
        raise
    except (EOFError, ValueError, KeyError, IndexError, AttributeError) as e:
        raise damaged(f"its data.pkl cannot be unpickled ({type(e).__name__}: {e})") from None
