"""``torch.types``: the type aliases PyTorch annotates with (``Number``, ``Device``,
``_size``...), for programs whose annotations name them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO

from .device import Device as _Device
from .dtypes import dtype as _dtype
from .dtypes import layout as _layout
from .storage import UntypedStorage as Storage
from .tensor import Size, Tensor

_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors = Tensor | Sequence[Tensor | None]
_int = int
_float = float
_bool = bool
_complex = complex
_str = str
_bytes = bytes
_size = Size | list[int] | tuple[int, ...]
_symsize = _size
_dispatchkey = str
_device = _Device
_Number = int | float | bool
Number = int | float | bool
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
# what a device argument may be: a Device, its name, or an accelerator's index
Device = _Device | str | int | None
FileLike = str | os.PathLike | IO[bytes]

__all__ = [
    "BoolLikeType",
    "Device",
    "FileLike",
    "FloatLikeType",
    "IntLikeType",
    "Number",
    "Size",
    "Storage",
    "Tensor",
    "_device",
    "_dtype",
    "_layout",
    "_size",
]
