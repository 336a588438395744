"""``torch.utils.data._utils.collate``: ``collate`` with its map of functions by type
(``default_collate_fn_map``, which a program may extend), the functions themselves,
``default_collate`` and ``default_convert``, and the two names custom collate functions copied
from PyTorch's import: the pattern of NumPy dtypes that hold strings or objects and the message
for a type it cannot collate."""

import re

from .. import (
    collate,
    collate_float_fn,
    collate_int_fn,
    collate_numpy_array_fn,
    collate_numpy_scalar_fn,
    collate_str_fn,
    collate_tensor_fn,
    default_collate,
    default_collate_fn_map,
    default_convert,
)

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)

__all__ = [
    "collate",
    "collate_float_fn",
    "collate_int_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_str_fn",
    "collate_tensor_fn",
    "default_collate",
    "default_collate_fn_map",
    "default_convert",
    "default_collate_err_msg_format",
    "np_str_obj_array_pattern",
]
