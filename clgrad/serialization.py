"""``clgrad.save`` / ``clgrad.load``: tensors, state dicts and nested containers in a NumPy
``.npz`` file that any NumPy program can read (no pickle, no clgrad needed).

Format
------
The file is an ordinary (uncompressed) ``.npz`` archive, ``numpy.load(f)`` opens it:

- ``t0``, ``t1``, ... : one array per distinct tensor, in its dtype and shape (float16/32/64,
  int8/16/32/64, uint8, bool). A tensor that appears several times is stored once.
- ``__structure__`` : a 0-d unicode array holding UTF-8 JSON that describes the saved object.
  Its top level is ``{"format": "clgrad.npz", "version": 1, "object": NODE}``, where a NODE is
  one of

  ============================================== ================================================
  ``{"type": "tensor", "key": "t0", "dtype":     a tensor: its array, its dtype name, whether
  "float32", "requires_grad": false,             it required grad, the device it was saved from,
  "device": "cl:0", "parameter": false}``        and whether it was an ``nn.Parameter``
  ``{"type": "dict", "ordered": true,            a dict (an OrderedDict when ``ordered``), keys
  "items": [[KEY, NODE], ...]}``                 and values both NODEs, in order
  ``{"type": "list" | "tuple", "items": [...]}`` a list or tuple of NODEs
  ``{"type": "int" | "float" | "bool" | "str",  a Python scalar (non-finite floats are the
  "value": ...}``                                strings "inf", "-inf", "nan")
  ``{"type": "none"}``                           None
  ``{"type": "dtype" | "device", "value": ...}`` a clgrad dtype or device, by name
  ============================================== ================================================

Reading it without clgrad::

    import json, numpy as np
    z = np.load("model.npz")
    meta = json.loads(z["__structure__"].item())
    weight = z[meta["object"]["items"][0][1]["key"]]
"""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from . import dtypes as D
from .device import Device, resolve
from .tensor import Tensor

FORMAT, VERSION = "clgrad.npz", 1
_SAVEABLE = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Saves ``obj`` to ``f`` (a path or a binary file object), as ``torch.save`` does for state
    dicts: tensors (and Parameters), Python numbers, strings, None, dtypes, devices, and dicts,
    OrderedDicts, lists and tuples of them. The file is the ``.npz`` format described in this
    module's docstring (no pickle); a tensor that appears several times is stored once.

    >>> import io
    >>> buf = io.BytesIO()
    >>> clgrad.save({"w": clgrad.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> clgrad.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    arrays, memo = {}, {}
    root = _encode(obj, arrays, memo)
    meta = json.dumps({"format": FORMAT, "version": VERSION, "object": root})
    payload = dict(arrays)
    payload["__structure__"] = np.array(meta)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, **payload)
    else:
        np.savez(f, **payload)


def _encode(obj, arrays, memo):
    from .nn.parameter import Parameter

    if isinstance(obj, Tensor):
        if id(obj) in memo:
            key = memo[id(obj)][0]
        else:
            if obj.dtype.name not in _SAVEABLE:
                raise TypeError(f"clgrad.save: cannot save a tensor of dtype {obj.dtype}")
            key = f"t{len(arrays)}"
            arrays[key] = np.array(obj.detach().numpy(), copy=True, order="C")
            memo[id(obj)] = (key, obj)  # keeps obj alive, so its id stays unique
        return {
            "type": "tensor",
            "key": key,
            "dtype": obj.dtype.name,
            "requires_grad": bool(obj.requires_grad),
            "device": str(obj.device),
            "parameter": isinstance(obj, Parameter),
        }
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
        return _encode(obj.item(), arrays, memo)
    if isinstance(obj, dict):
        return {
            "type": "dict",
            "ordered": isinstance(obj, OrderedDict),
            "items": [[_encode(k, arrays, memo), _encode(v, arrays, memo)] for k, v in obj.items()],
        }
    if isinstance(obj, (list, tuple)):
        return {
            "type": "tuple" if isinstance(obj, tuple) else "list",
            "items": [_encode(v, arrays, memo) for v in obj],
        }
    hint = " (save module.state_dict() instead)" if hasattr(obj, "state_dict") else ""
    raise TypeError(
        f"clgrad.save: cannot save an object of type {type(obj).__name__}{hint}; it saves "
        "tensors, numbers, strings, None, dtypes, devices and dicts/lists/tuples of them"
    )


def load(
    f: str | os.PathLike | BinaryIO,
    map_location: str | Device | dict[str, str] | Callable[[Tensor, str], Tensor] | None = None,
    weights_only: bool = True,
) -> Any:
    """Loads an object saved by ``save`` from ``f`` (a path or a binary file object), as
    ``torch.load``. Tensors go back to the device they were saved from unless ``map_location``
    says otherwise: a device (string or Device) for every tensor, a dict {saved device: device},
    or a callable ``fn(tensor_on_cpu, saved_device_str)`` that returns the tensor to use.
    Parameters come back as ``nn.Parameter``. ``weights_only`` is accepted for compatibility
    (the format holds data only, so loading never runs code).

    >>> import io
    >>> buf = io.BytesIO()
    >>> clgrad.save(clgrad.nn.Linear(3, 2).state_dict(), buf)
    >>> _ = buf.seek(0)
    >>> state = clgrad.load(buf, map_location="cpu")
    >>> list(state), state["weight"].shape, state["weight"].device
    (['weight', 'bias'], clgrad.Size([2, 3]), device(type='cpu'))
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, map_location)
    return _load(f, map_location)


def _load(fh, map_location):
    with np.load(fh, allow_pickle=False) as z:
        if "__structure__" not in z.files:
            raise RuntimeError("clgrad.load: not a clgrad file (no __structure__ entry)")
        meta = json.loads(z["__structure__"].item())
        if meta.get("format") != FORMAT:
            raise RuntimeError(f"clgrad.load: unknown format {meta.get('format')!r}")
        if meta.get("version", 0) > VERSION:
            raise RuntimeError(
                f"clgrad.load: the file has format version {meta['version']}, this clgrad reads "
                f"up to {VERSION}"
            )
        cache = {}
        return _decode(meta["object"], z, cache, map_location)


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


def _decode(node, z, cache, map_location):
    kind = node["type"]
    if kind == "tensor":
        key = node["key"]
        if key not in cache:
            cache[key] = _make_tensor(node, z[key], map_location)
        return cache[key]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str"):
        return node["value"]
    if kind == "float":
        return float(node["value"])
    if kind == "dtype":
        return D.as_dtype(node["value"])
    if kind == "device":
        return resolve(node["value"])
    if kind == "dict":
        items = [
            (_hashable(_decode(k, z, cache, map_location)), _decode(v, z, cache, map_location))
            for k, v in node["items"]
        ]
        return OrderedDict(items) if node.get("ordered") else dict(items)
    if kind in ("list", "tuple"):
        items = [_decode(v, z, cache, map_location) for v in node["items"]]
        return tuple(items) if kind == "tuple" else items
    raise RuntimeError(f"clgrad.load: unknown entry type {kind!r}")


def _hashable(k):
    return tuple(_hashable(v) for v in k) if isinstance(k, list) else k


def _make_tensor(node, array, map_location):
    from .nn.parameter import Parameter
    from .ops.creation import tensor

    dt = D.as_dtype(node["dtype"])
    if callable(map_location) and not isinstance(map_location, (str, Device, dict)):
        t = map_location(tensor(array, dtype=dt, device="cpu"), node["device"])
        if not isinstance(t, Tensor):
            raise TypeError("clgrad.load: map_location must return a Tensor")
    else:
        t = tensor(array, dtype=dt, device=_target_device(node["device"], map_location))
    if node.get("parameter"):
        return Parameter(t.detach(), node.get("requires_grad", True))
    if node.get("requires_grad") and not t.requires_grad:
        t = t.detach().requires_grad_(True)
    return t
