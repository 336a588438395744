"""``clgrad.save`` / ``clgrad.load``: tensors, state dicts and nested containers in a NumPy
``.npz`` file that any NumPy program can read (no clgrad needed; no pickle unless the object
holds something other than tensors, numbers, strings and containers, such as a whole module).

Format
------
The file is an ordinary (uncompressed) ``.npz`` archive, ``numpy.load(f)`` opens it:

- ``t0``, ``t1``, ... : one array per distinct tensor, in its dtype and shape (float16/32/64,
  int8/16/32/64, uint8, bool; bfloat16, which NumPy lacks, as its bit patterns in uint16: the
  high half of each float32). A tensor that appears several times is stored once.
- ``s0``, ``s1``, ... : where several saved tensors view one storage (``x`` and ``x[1:]``), that
  storage once, flat; each of those tensors is a view of it, and they load sharing memory.
- ``__structure__`` : a 0-d unicode array holding UTF-8 JSON that describes the saved object.
  Its top level is ``{"format": "clgrad.npz", "version": 1, "object": NODE}``, where a NODE is
  one of

  ============================================== ================================================
  ``{"type": "tensor", "key": "t0", "dtype":     a tensor: its array, its dtype name, whether
  "float32", "requires_grad": false,             it required grad, the device it was saved from,
  "device": "cl:0", "parameter": false}``        and whether it was an ``nn.Parameter``
  ``{"type": "tensor", "key": "s0", "id": "t3",  a tensor over a shared storage (``s0``): its
  "view": {"offset": 2, "shape": [2, 3],         place in it, in elements; ``id`` tells
  "stride": [1, 2]}, ...}``                      distinct tensors apart
  ``{"type": "dict", "ordered": true,            a dict (an OrderedDict when ``ordered``), keys
  "items": [[KEY, NODE], ...]}``                 and values both NODEs, in order
  ``{"type": "list" | "tuple" | "size",         a list, tuple or Size of NODEs (a subclass,
  "items": [...]}``                              such as a namedtuple, is pickled)
  ``{"type": "int" | "float" | "bool" | "str",  a Python scalar (non-finite floats are the
  "value": ...}``                                strings "inf", "-inf", "nan")
  ``{"type": "none"}``                           None
  ``{"type": "dtype" | "device", "value": ...}`` a clgrad dtype or device, by name
  ``{"type": "pickle", "key": "p0", "tensors":   any other object (a whole ``nn.Module``, a
  [NODE, ...]}``                                 set, an instance of your class), pickled into
                                                 the uint8 array ``p0``; the tensors it holds are
                                                 stored as arrays, the pickle names them by
                                                 their index in ``tensors``
  ============================================== ================================================

Only ``pickle`` entries run code when loaded, and ``load`` unpickles them only with
``weights_only=False`` or for the classes ``add_safe_globals`` allows, as ``torch.load``.

Reading it without clgrad::

    import json, numpy as np
    z = np.load("model.npz")
    meta = json.loads(z["__structure__"].item())
    weight = z[meta["object"]["items"][0][1]["key"]]
"""

from __future__ import annotations

import codecs
import contextlib
import importlib
import io
import json
import math
import os
import pickle
import secrets
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npformat

from . import dtypes as D
from .device import Device, resolve
from .tensor import Size, Tensor

FORMAT, VERSION = "clgrad.npz", 1
_SAVEABLE = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
# the NumPy dtype of each saveable dtype's arrays in the file (bfloat16's: its bits' uint16)
_MEMBER_TYPES = {name: D.as_dtype(name).np.name for name in _SAVEABLE}


def save(
    obj: Any,
    f: str | os.PathLike | BinaryIO,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Saves ``obj`` to ``f`` (a path or a binary file object), as ``torch.save``: tensors (and
    Parameters), Python numbers, strings, None, dtypes, devices, and dicts, OrderedDicts, lists
    and tuples of them are stored as data, in the ``.npz`` format described in this module's
    docstring; anything else (a whole ``nn.Module``, an optimizer, a set, your own class) is
    pickled (with ``pickle_module`` and ``pickle_protocol``), its tensors still stored as
    arrays, and loads only with ``load(..., weights_only=False)``. A tensor that appears
    several times is stored once.

    Saving to a path never leaves a damaged file behind: the data goes to a temporary file in
    the same directory, is flushed to disk, and then replaces ``f`` in one step, so a crash, a
    Ctrl-C or a full disk during the save leaves the previous file as it was.

    >>> import io
    >>> buf = io.BytesIO()
    >>> clgrad.save({"w": clgrad.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> clgrad.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    arrays, memo = {}, {}
    pickling = (pickle_module or pickle, max(2, pickle_protocol))
    root = _encode(obj, arrays, memo, pickling)
    _share_storages(arrays, memo)
    meta = json.dumps({"format": FORMAT, "version": VERSION, "object": root})
    payload = dict(arrays)
    payload["__structure__"] = np.array(meta)
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fsdecode(f))
        if parent and not os.path.isdir(parent):  # torch's check, before anything is written
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        _atomic_write(os.fspath(f), lambda fh: np.savez(fh, **payload))
    else:
        np.savez(f, **payload)


def _atomic_write(path: str, write: Callable[[BinaryIO], None]) -> None:
    """Runs ``write(fh)`` on a temporary file next to ``path``, syncs it to disk and renames it
    over ``path``; on any exception (KeyboardInterrupt included) the temporary file goes and
    ``path`` is untouched."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    target = os.path.realpath(path)  # a symlink keeps pointing at the (new) file
    directory, name = os.path.split(target)
    if os.path.isdir(target):
        raise IsADirectoryError(f"clgrad.save: {path!r} is a directory")
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # created as open(path, "wb") would create path: mode 0o666 less the umask
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            try:
                mode = os.stat(target).st_mode & 0o7777
            except FileNotFoundError:
                pass
            else:
                with contextlib.suppress(OSError):
                    os.chmod(tmp, mode)  # an existing file keeps its permissions
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Makes the rename itself durable where the OS lets a directory be synced (POSIX)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _encode(obj, arrays, memo, pickling=(pickle, 2)):
    from .nn.parameter import Parameter

    def enc(v):
        return _encode(v, arrays, memo, pickling)

    if isinstance(obj, Tensor):
        if id(obj) in memo:
            key, _, nodes = memo[id(obj)]
        else:
            if obj.dtype.name not in _SAVEABLE:
                raise TypeError(f"clgrad.save: cannot save a tensor of dtype {obj.dtype}")
            key = f"t{len(memo)}"
            arrays[key] = np.array(_stored(obj), copy=True, order="C")
            nodes = []
            memo[id(obj)] = (key, obj, nodes)  # keeps obj alive, so its id stays unique
        node = {
            "type": "tensor",
            "key": key,
            "dtype": obj.dtype.name,
            "requires_grad": bool(obj.requires_grad),
            "device": str(obj.device),
            "parameter": isinstance(obj, Parameter),
        }
        nodes.append(node)  # (_share_storages may turn it into a view of a shared storage)
        return node
    if obj is None:
        return {"type": "none"}
    if isinstance(obj, bool):
        return {"type": "bool", "value": obj}
    if isinstance(obj, int):
        return {"type": "int", "value": obj}
    if isinstance(obj, float):
        return {"type": "float", "value": obj if math.isfinite(obj) else repr(obj)}
    if isinstance(obj, str):
        return {"type": "str", "value": obj}
    if isinstance(obj, D.dtype):
        return {"type": "dtype", "value": obj.name}
    if isinstance(obj, Device):
        return {"type": "device", "value": str(obj)}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return enc(obj.item())
    # the containers themselves, not their subclasses (a namedtuple, a defaultdict): those are
    # pickled, so they load as what they were (and weights_only refuses them, as torch does)
    if type(obj) in (dict, OrderedDict):
        return {
            "type": "dict",
            "ordered": type(obj) is OrderedDict,
            "items": [[enc(k), enc(v)] for k, v in obj.items()],
        }
    if type(obj) in (list, tuple, Size):
        return {
            "type": {list: "list", tuple: "tuple", Size: "size"}[type(obj)],
            "items": [enc(v) for v in obj],
        }
    return _encode_pickled(obj, arrays, memo, pickling)


def _stored(t: Tensor) -> np.ndarray:
    """The host array a tensor is saved as: its elements, bfloat16's as their bit patterns."""
    return t.device.backend.to_numpy(t._record())


def _share_storages(arrays, memo) -> None:
    """Where several saved tensors view one storage (``x`` and ``x[1:]``, a weight and its
    transpose), stores that storage once, as ``s0``, ``s1``, ... and each tensor as a view of
    it (offset, shape, strides), so that they load sharing memory, as torch's do; a tensor alone
    on its storage keeps an array of its own elements."""
    by_storage: dict[int, list] = {}
    for entry in memo.values():
        by_storage.setdefault(id(entry[1]._storage), []).append(entry)
    for entries in by_storage.values():
        dtypes = {t.dtype for _, t, _ in entries}
        if len(entries) < 2 or len(dtypes) != 1:  # (views in several dtypes: each its own)
            continue
        first = entries[0][1]
        storage, dt = first._storage, first.dtype
        skey = f"s{sum(k.startswith('s') for k in arrays)}"
        whole = Tensor._make(storage, (storage.nbytes // dt.itemsize,), (1,), 0, dt)
        arrays[skey] = np.array(_stored(whole), copy=True)
        for key, t, nodes in entries:
            del arrays[key]
            for node in nodes:
                node["id"], node["key"] = key, skey
                node["view"] = {
                    "offset": t._offset,
                    "shape": list(t._shape),
                    "stride": list(t._stride),
                }


def _encode_pickled(obj, arrays, memo, pickling):
    """A ``pickle`` node: ``obj`` pickled, each tensor in it stored as an array of its own."""
    module, protocol = pickling
    tensors, index = [], {}

    class _Pickler(module.Pickler):
        def persistent_id(self, o):
            if isinstance(o, Tensor):
                if id(o) not in index:
                    index[id(o)] = len(tensors)
                    tensors.append(_encode(o, arrays, memo, pickling))
                return index[id(o)]
            return None

    buf = io.BytesIO()
    try:
        _Pickler(buf, protocol).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise TypeError(
            f"clgrad.save: cannot save an object of type {type(obj).__name__}: it is neither "
            f"data (tensors, numbers, strings, containers) nor picklable ({e})"
        ) from None
    key = f"p{sum(k.startswith('p') for k in arrays)}"
    arrays[key] = np.frombuffer(buf.getvalue(), dtype=np.uint8).copy()
    return {"type": "pickle", "key": key, "tensors": tensors}


class CheckpointError(RuntimeError):
    """``clgrad.load`` was given something it cannot read: not a clgrad checkpoint (the message
    says what the file is instead), a damaged or truncated one, or one whose arrays declare
    more data than the file holds or than this machine can hold."""


# A deflated member may inflate to at most this many times its compressed size (past
# _INFLATE_FLOOR bytes): clgrad itself never compresses, and a higher ratio is a zip bomb.
MAX_INFLATE_RATIO = 200
_INFLATE_FLOOR = 64 * 2**20


def load(
    f: str | os.PathLike | BinaryIO,
    map_location: str | Device | dict[str, str] | Callable[[Tensor, str], Tensor] | None = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Loads an object saved by ``save`` from ``f`` (a path or a binary file object), as
    ``torch.load``. Tensors go back to the device they were saved from unless ``map_location``
    says otherwise: a device (string or Device) for every tensor, a dict {saved device: device},
    or a callable ``fn(tensor_on_cpu, saved_device_str)`` that returns the tensor to use.
    Parameters come back as ``nn.Parameter``.

    ``weights_only`` (True unless given, as in PyTorch 2.6 and later) loads data only: a file
    holding a pickled object (a whole module, saved by ``save(model)``) raises
    ``pickle.UnpicklingError``, as ``torch.load`` does, unless every class it names was allowed
    with ``add_safe_globals``; ``weights_only=False`` unpickles it, which runs code the file
    chooses, so only for files you trust. ``mmap`` and ``pickle_load_args`` are accepted and
    unused.

    Files written by PyTorch's ``torch.save`` (its zip format, PyTorch 1.6 and later) load too,
    with the same ``map_location`` and ``weights_only`` rules: pretrained weights need no
    PyTorch installed. A file that is neither, or a damaged one, raises ``CheckpointError`` (a
    ``RuntimeError``) saying what the file is; so does an array that declares more data than
    its file holds, inflates more than ``MAX_INFLATE_RATIO`` times, or exceeds free memory.

    >>> import io
    >>> buf = io.BytesIO()
    >>> clgrad.save(clgrad.nn.Linear(3, 2).state_dict(), buf)
    >>> _ = buf.seek(0)
    >>> state = clgrad.load(buf, map_location="cpu")
    >>> list(state), state["weight"].shape, state["weight"].device
    (['weight', 'bias'], clgrad.Size([2, 3]), device(type='cpu'))
    >>> clgrad.load(io.BytesIO(b"step,loss\\n1,0.5\\n"))
    Traceback (most recent call last):
    ...
    clgrad.serialization.CheckpointError: clgrad.load: the file object is not a clgrad
    checkpoint: it is a text file (it starts with 'step,loss\\n1,0.5\\n')
    """
    unpickling = (pickle_module or pickle, weights_only is not False)
    if isinstance(f, (str, os.PathLike)):
        where = repr(os.fspath(f))
        with open(f, "rb") as fh:
            return _load(fh, map_location, where, unpickling)
    return _load(f, map_location, "the file object", unpickling)


def _load(fh, map_location, where, unpickling=(pickle, True)):
    if not (hasattr(fh, "seekable") and fh.seekable()):
        fh = io.BytesIO(fh.read())
    start = fh.tell()
    head = fh.read(512)
    fh.seek(start)
    if not head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise CheckpointError(
            f"clgrad.load: {where} is not a clgrad checkpoint: it is {_describe(head)}"
        )
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as e:
        raise CheckpointError(
            f"clgrad.load: {where} is a damaged or truncated zip archive, not a readable clgrad "
            f"checkpoint ({type(e).__name__}: {e})"
        ) from None
    with zf:
        names = set(zf.namelist())
        if "__structure__.npy" not in names and _is_torch_archive(names):
            return _load_torch_archive(zf, where, map_location, unpickling)
        if "__structure__.npy" not in names:
            shown = ", ".join(sorted(names)[:8]) + (", ..." if len(names) > 8 else "")
            raise CheckpointError(
                f"clgrad.load: {where} is not a clgrad file: a zip archive without the "
                f"__structure__ entry clgrad writes; its members: {shown or 'none'}"
            )
        reader = _Members(zf, where)
        structure = reader.array("__structure__", text=True)
        try:
            meta = json.loads(structure.item())
        except ValueError as e:
            raise CheckpointError(
                f"clgrad.load: {where} is damaged: its __structure__ entry is not JSON ({e})"
            ) from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise CheckpointError(f"clgrad.load: {where} has an unknown format {fmt!r}")
        if not isinstance(meta.get("version", 0), int) or meta.get("version", 0) > VERSION:
            raise CheckpointError(
                f"clgrad.load: the file has format version {meta['version']}, this clgrad reads "
                f"up to {VERSION}"
            )
        if "object" not in meta:
            raise CheckpointError(f"clgrad.load: {where} is damaged: no object in __structure__")
        reader.check_sizes(meta["object"])
        reader.unpickling = unpickling
        return _decode(meta["object"], reader, {}, map_location)


def _describe(head: bytes) -> str:
    """What a file that is not a zip archive is, from its first bytes."""
    if not head:
        return "an empty file"
    if head.startswith(b"\x93NUMPY"):
        return "a single NumPy array (.npy); read it with numpy.load"
    if head[:1] == b"\x80" and len(head) > 1 and 2 <= head[1] <= 5:
        return (
            "a Python pickle (such as a legacy torch.save file); clgrad.load reads only "
            "clgrad's .npz checkpoints"
        )
    if head.startswith(b"\x1f\x8b"):
        return "a gzip-compressed file"
    if head.startswith(b"\x89HDF"):
        return "an HDF5 file"
    if b"\x00" not in head:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        if text and len(text.encode()) >= len(head) - 3:
            return f"a text file (it starts with {text[:40]!r})"
    return f"not a zip archive but a file of unknown format (it starts with {head[:16]!r})"


def _available_memory() -> int | None:
    """Bytes of host memory free now (Linux and most Unixes), or None where unknown."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


class _Members:
    """Reads the ``.npy`` members of an open checkpoint, checking each declared size against
    the member's stored size before allocating anything."""

    def __init__(self, zf: zipfile.ZipFile, where: str):
        self.zf, self.where = zf, where

    def _damaged(self, key, why):
        return CheckpointError(f"clgrad.load: {self.where} is damaged: entry {key!r} {why}")

    def header(self, key, text=False):
        """(zip info, dtype, shape, fortran order, data bytes, header bytes) of member key."""
        try:
            info = self.zf.getinfo(f"{key}.npy")
        except KeyError:
            raise self._damaged(key, "is missing from the archive") from None
        try:
            with self.zf.open(info) as m:
                version = npformat.read_magic(m)
                if version == (1, 0):
                    shape, fortran, dtype = npformat.read_array_header_1_0(m)
                elif version == (2, 0):
                    shape, fortran, dtype = npformat.read_array_header_2_0(m)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
                offset = m.tell()
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as e:
            raise self._damaged(key, f"is not a readable array ({type(e).__name__}: {e})") from None
        if dtype.hasobject or not (
            dtype.name in _MEMBER_TYPES.values() or (text and dtype.kind == "U" and not shape)
        ):
            raise self._damaged(key, f"holds {dtype} data, which clgrad never writes")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes != info.file_size - offset:
            raise self._damaged(
                key,
                f"declares {nbytes} bytes of data ({dtype} of shape {shape}) but holds "
                f"{info.file_size - offset}",
            )
        return info, dtype, shape, fortran, nbytes, offset

    def check_sizes(self, root):
        """Refuses, before any allocation, members that inflate suspiciously or that together
        exceed the free memory."""
        total = 0
        for key in sorted({k for k in _tensor_keys(root) if isinstance(k, str)}):
            info, dtype, shape, _, nbytes, _ = self.header(key)
            if (
                info.compress_type != zipfile.ZIP_STORED
                and nbytes > _INFLATE_FLOOR
                and nbytes > MAX_INFLATE_RATIO * max(info.compress_size, 1)
            ):
                raise CheckpointError(
                    f"clgrad.load: {self.where}: entry {key!r} ({dtype} of shape {shape}) "
                    f"would inflate from {info.compress_size} compressed bytes to {nbytes}, more "
                    f"than clgrad.serialization.MAX_INFLATE_RATIO ({MAX_INFLATE_RATIO}) times: "
                    "refusing a possible zip bomb (raise MAX_INFLATE_RATIO to load it anyway)"
                )
            total += nbytes
        free = _available_memory()
        if free is not None and total > free:
            raise CheckpointError(
                f"clgrad.load: {self.where} holds {total} bytes of tensor data, more than the "
                f"{free} bytes of memory free now"
            )

    def array(self, key, text=False):
        """Member ``key`` as a NumPy array in native byte order."""
        info, dtype, shape, fortran, nbytes, offset = self.header(key, text)
        try:
            with self.zf.open(info) as m:
                m.read(offset)
                data = bytearray(nbytes)
                got = m.readinto(memoryview(data)) if nbytes else 0
                while got < nbytes:
                    n = m.readinto(memoryview(data)[got:])
                    if not n:
                        break
                    got += n
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as e:
            raise self._damaged(key, f"cannot be read ({type(e).__name__}: {e})") from None
        if got != nbytes:
            raise self._damaged(key, f"is truncated ({got} of {nbytes} bytes)")
        array = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
        return array if dtype.isnative else array.astype(dtype.newbyteorder("="))


def _tensor_keys(node):
    """The array keys the structure ``node`` refers to."""
    if isinstance(node, dict):
        if node.get("type") in ("tensor", "pickle"):
            yield node.get("key")
        for field in ("items", "tensors"):
            for v in node.get(field, ()) if isinstance(node.get(field), list) else ():
                yield from _tensor_keys(v)
    elif isinstance(node, list):
        for v in node:
            yield from _tensor_keys(v)


def _target_device(saved, map_location):
    if map_location is None:
        target = saved
    elif isinstance(map_location, dict):
        target = map_location.get(saved, saved)
    else:
        target = map_location
    try:
        return resolve(target)
    except RuntimeError as e:
        raise RuntimeError(
            f"clgrad.load: the tensor was saved on {saved}, which can't be opened here ({e}); "
            "pass map_location='cpu' (or another device) to load it elsewhere"
        ) from None


def _decode(node, members, cache, map_location):
    try:
        kind = node["type"]
        if kind == "tensor":
            key = node["key"]
            if not isinstance(key, str):
                raise TypeError(f"a tensor key must be a string, got {key!r}")
            dtype_name = node["dtype"]
            if "device" not in node:
                raise KeyError("device")
        elif kind in ("dict", "list", "tuple", "size"):
            children = node["items"]
            if not isinstance(children, list) or (
                kind == "dict" and not all(isinstance(kv, list) and len(kv) == 2 for kv in children)
            ):
                raise TypeError(f"malformed {kind} items")
        elif kind in ("bool", "int", "str", "float", "dtype", "device"):
            value = node["value"]
        elif kind == "pickle":
            key, tensors = node["key"], node["tensors"]
            if not isinstance(key, str) or not isinstance(tensors, list):
                raise TypeError("malformed pickle entry")
    except (KeyError, TypeError, IndexError) as e:
        raise CheckpointError(
            "clgrad.load: the file is damaged: malformed entry in its __structure__ "
            f"({e!r} in {node!r:.80})"
        ) from None
    if kind == "tensor":
        ident = node.get("id", key)  # a view of a shared storage names its array "key"
        if ident not in cache:

            def array():  # read only where needed: a shared storage's once
                a = members.array(key)
                if a.dtype.name != _MEMBER_TYPES.get(dtype_name):
                    raise CheckpointError(
                        f"clgrad.load: the file is damaged: entry {key!r} holds {a.dtype} "
                        f"data, its description says {dtype_name}"
                    )
                return a

            cache[ident] = _make_tensor(node, array, map_location, cache)
        return cache[ident]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str"):
        return value
    if kind == "float":
        return float(value)
    if kind == "dtype":
        return D.as_dtype(value)
    if kind == "device":
        return resolve(value)
    if kind == "dict":
        items = [
            (
                _hashable(_decode(k, members, cache, map_location)),
                _decode(v, members, cache, map_location),
            )
            for k, v in children
        ]
        return OrderedDict(items) if node.get("ordered") else dict(items)
    if kind in ("list", "tuple", "size"):
        items = [_decode(v, members, cache, map_location) for v in children]
        return {"list": list, "tuple": tuple, "size": Size}[kind](items)
    if kind == "pickle":
        return _unpickle(node, members, cache, map_location)
    raise CheckpointError(f"clgrad.load: unknown entry type {kind!r}")


def _view_of(storage: Tensor, view, key) -> Tensor:
    """The tensor ``view`` describes over a loaded flat ``storage`` (checked to lie inside it:
    a damaged file raises, never reads past the storage)."""
    try:
        offset, shape, stride = view["offset"], view["shape"], view["stride"]
        ints = [offset, *shape, *stride]
        if not all(type(v) is int and v >= 0 for v in ints) or len(shape) != len(stride):
            raise TypeError("bad geometry")
    except (KeyError, TypeError) as e:
        raise CheckpointError(
            f"clgrad.load: the file is damaged: bad view of {key!r} ({e})"
        ) from None
    if all(shape) and offset + sum((n - 1) * s for n, s in zip(shape, stride)) >= storage.numel():
        raise CheckpointError(
            f"clgrad.load: the file is damaged: a view of {key!r} reaches past its storage"
        )
    return storage.detach().as_strided(shape, stride, offset)


def _hashable(k):
    return tuple(_hashable(v) for v in k) if isinstance(k, list) else k


def _make_tensor(node, array, map_location, cache):
    """The tensor ``node`` describes, from ``array()`` (its elements, or its storage's: read
    once per storage and device, kept in ``cache``)."""
    from .nn.parameter import Parameter
    from .ops.creation import tensor

    dt = D.as_dtype(node["dtype"])

    def values():  # the elements as numbers (bfloat16's arrays hold its bit patterns)
        return D.host_values(array(), dt)

    view = node.get("view")
    where = ("storage", node["key"], node["device"])  # one copy of a shared storage per device
    t = cache.get(where) if view is not None else None
    if t is None:
        if callable(map_location) and not isinstance(map_location, (str, Device, dict)):
            t = map_location(tensor(values(), dtype=dt, device="cpu"), node["device"])
            if not isinstance(t, Tensor):
                raise TypeError("clgrad.load: map_location must return a Tensor")
        else:
            t = tensor(values(), dtype=dt, device=_target_device(node["device"], map_location))
        if view is not None:
            cache[where] = t
    if view is not None:
        t = _view_of(t, view, node["key"])
    if node.get("parameter"):
        return Parameter(t.detach(), node.get("requires_grad", True))
    if node.get("requires_grad") and not t.requires_grad:
        t = t.detach().requires_grad_(True)
    return t


# ---- pickled objects ---------------------------------------------------------------------
_SAFE_GLOBALS: dict[tuple[str, str], Any] = {}
#: what weights_only loading unpickles without being told: plain containers and numbers
_BUILTIN_SAFE = {
    ("builtins", "set"): set,
    ("builtins", "complex"): complex,
    ("builtins", "bytearray"): bytearray,
    ("_codecs", "encode"): codecs.encode,  # how pickle's protocol 2 writes bytes
    ("collections", "OrderedDict"): OrderedDict,
}


def _global_name(obj) -> tuple[str, str]:
    return obj.__module__, obj.__qualname__


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allows ``load(..., weights_only=True)`` to unpickle objects of these classes (or call
    these functions), as ``torch.serialization.add_safe_globals``: for a file you trust whose
    pickled parts name only them.

    >>> import io, fractions
    >>> buf = io.BytesIO()
    >>> clgrad.save({"ratio": fractions.Fraction(1, 3)}, buf)
    >>> clgrad.serialization.add_safe_globals([fractions.Fraction])
    >>> _ = buf.seek(0)
    >>> clgrad.load(buf)
    {'ratio': Fraction(1, 3)}
    >>> clgrad.serialization.clear_safe_globals()
    """
    for g in safe_globals:
        target = g[0] if isinstance(g, tuple) else g
        name = (g[1].rsplit(".", 1)[0], g[1].rsplit(".", 1)[1]) if isinstance(g, tuple) else None
        _SAFE_GLOBALS[name or _global_name(target)] = target


def get_safe_globals() -> list[Any]:
    """The classes and functions ``add_safe_globals`` allowed, as
    ``torch.serialization.get_safe_globals``.

    >>> clgrad.serialization.get_safe_globals()
    []
    """
    return list(_SAFE_GLOBALS.values())


def clear_safe_globals() -> None:
    """Forgets every class and function ``add_safe_globals`` allowed."""
    _SAFE_GLOBALS.clear()


class safe_globals(contextlib.ContextDecorator):
    """Allows these classes for weights_only loading inside a ``with`` block only, as
    ``torch.serialization.safe_globals``.

    >>> import fractions
    >>> with clgrad.serialization.safe_globals([fractions.Fraction]):
    ...     len(clgrad.serialization.get_safe_globals())
    1
    >>> clgrad.serialization.get_safe_globals()
    []
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = dict(_SAFE_GLOBALS)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _SAFE_GLOBALS.clear()
        _SAFE_GLOBALS.update(self._saved)


def _refused(module: str, name: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint.\n"
        "\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
        "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set "
        "to `False` will likely succeed, but it can result in arbitrary code execution. Do it "
        "only if you got the file from a trusted source.\n"
        "\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
        "steps in the following error message.\n"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {module}.{name} was not an allowed "
        "global by default. Please use `clgrad.serialization.add_safe_globals"
        f"([{name}])` or the `clgrad.serialization.safe_globals([{name}])` context manager "
        "to allowlist this global if you trust this class/function."
    )


def _unpickle(node, members, cache, map_location):
    module, weights_only = getattr(members, "unpickling", (pickle, True))
    tensors = node["tensors"]
    loaded = {}

    class _Unpickler(module.Unpickler):
        def persistent_load(self, pid):
            if not isinstance(pid, int) or not 0 <= pid < len(tensors):
                raise CheckpointError(f"clgrad.load: the file is damaged: bad tensor id {pid!r}")
            if pid not in loaded:
                loaded[pid] = _decode(tensors[pid], members, cache, map_location)
            return loaded[pid]

        def find_class(self, mod, name):
            if not weights_only:
                return super().find_class(mod, name)
            if mod == "__builtin__":  # protocol 2 writes Python 2's name of builtins
                mod = "builtins"
            allowed = _SAFE_GLOBALS.get((mod, name)) or _BUILTIN_SAFE.get((mod, name))
            if allowed is None:
                raise _refused(mod, name)
            return allowed

    data = members.array(node["key"])
    if data.dtype != np.uint8 or data.ndim != 1:
        raise CheckpointError(f"clgrad.load: the file is damaged: {node['key']!r} is no pickle")
    return _Unpickler(io.BytesIO(data.tobytes())).load()


# ---- PyTorch's own files ------------------------------------------------------------------
# Reading PyTorch's own checkpoint files (``torch.save``'s zip format, the default since
# PyTorch 1.6) for ``clgrad.load``: pretrained weights and checkpoints written by PyTorch load
# without PyTorch installed.
#
# The format: a zip archive whose members sit under one folder (``<name>/``):
#
# - ``data.pkl``: the saved object, pickled; each tensor is a call of
#   ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
#   whose storage is a persistent id ``('storage', <dtype>Storage, key, location, numel)``;
# - ``data/<key>``: each storage's bytes, in the order ``byteorder`` names (little by default);
# - ``version``, ``.format_version``, ``byteorder``, ``.storage_alignment`` and the like.
#
# Unpickling runs only what this module maps the pickle's names to (tensors, parameters,
# dtypes, devices, sizes, plain containers) unless ``weights_only=False``, as ``torch.load``:
# then other ``torch.*`` names are looked up under ``clgrad.*`` (a whole pickled module), and any
# other name as pickle would, which runs code the file chooses. Every storage is checked against
# its member's size, and every tensor against its storage, before anything is allocated.
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


def _torch_dtype(name: str):
    """clgrad's dtype of this name, or None where clgrad has none."""
    try:
        return D.as_dtype(name)
    except (TypeError, KeyError, ValueError):
        return None


def _is_torch_archive(names) -> bool:
    """Whether a zip archive's member ``names`` are those of ``torch.save``'s format."""
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


class _StorageType:
    """What a pickled ``torch.<X>Storage`` stands for here: its dtype."""

    def __init__(self, name: str):
        self.name = name
        self.dtype_name = _STORAGE_DTYPES[name]
        self.dtype = _torch_dtype(self.dtype_name)


class _Storage:
    """A storage read from the archive: its elements as a flat host array, made into a
    tensor on each device once (``on``)."""

    def __init__(self, array: np.ndarray, dtype, location: str):
        self.array, self.dtype, self.location = array, dtype, location
        self.tensors: dict = {}

    def on(self, map_location) -> Tensor:
        from .ops.creation import tensor

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


def _load_torch_archive(zf: zipfile.ZipFile, where: str, map_location, unpickling):
    """The object a ``torch.save`` archive ``zf`` holds (see this section's comment)."""
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
            dtype = _torch_dtype(name) if name in _DTYPE_NAMES else None
            if dtype is not None:
                return dtype
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
