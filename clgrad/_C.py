"""``torch._C``'s names of the ``__torch_function__`` protocol: ``DisableTorchFunctionSubclass``,
``DisableTorchFunction``, ``_disabled_torch_function_impl`` (what ``nn.Parameter`` sets, so that
ops on it give plain Tensors) and the state's getters.

>>> with clgrad._C.DisableTorchFunctionSubclass():
...     clgrad._C._is_torch_function_enabled()
False
"""

from __future__ import annotations

from ._torch_function import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
)
from ._torch_function import S as _S
from ._torch_function import is_torch_function_enabled as _is_torch_function_enabled
from ._torch_function import is_torch_function_mode_enabled as _is_torch_function_mode_enabled
from ._torch_function import pop_mode as _pop_torch_function_stack
from ._torch_function import push_mode as _push_on_torch_function_stack

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_disabled_torch_function_impl",
    "_get_function_stack_at",
    "_is_torch_function_enabled",
    "_is_torch_function_mode_enabled",
    "_len_torch_function_stack",
    "_pop_torch_function_stack",
    "_push_on_torch_function_stack",
]


def _len_torch_function_stack() -> int:
    """How many ``TorchFunctionMode``s are entered.

    >>> _len_torch_function_stack()
    0
    """
    return len(_S.modes)


def _get_function_stack_at(i: int):
    """The ``i``-th entered mode, outermost first."""
    return _S.modes[i]
