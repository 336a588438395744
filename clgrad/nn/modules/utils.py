"""``torch.nn.modules.utils``: the tuple helpers custom layers import (``_pair(3) == (3, 3)``)
and ``consume_prefix_in_state_dict_if_present``, which strips the ``module.`` prefix that
``DataParallel`` and ``DistributedDataParallel`` give a checkpoint's keys.

>>> from clgrad.nn.modules.utils import _pair, _triple
>>> _pair(3), _pair((1, 2)), _triple([4, 5, 6])
((3, 3), (1, 2), (4, 5, 6))
"""

from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A function turning an iterable into a tuple and anything else into ``n`` copies of it."""

    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """Each element of ``t`` repeated ``n`` times, last element first: the (left, right)
    padding of each dim in the order ``F.pad`` takes it.

    >>> _reverse_repeat_tuple((1, 2), 2)
    (2, 2, 1, 1)
    """
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults: list[int]) -> list[int]:
    """An adaptive pooling's output size, its None entries taken from ``defaults`` (the
    input's trailing sizes)."""
    if isinstance(out_size, (int, float)) or hasattr(out_size, "__index__"):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strips ``prefix`` from the keys of ``state_dict`` that start with it, in place (and from
    its ``_metadata``'s), as torch's.

    >>> sd = {"module.fc.weight": 1, "module.fc.bias": 2}
    >>> consume_prefix_in_state_dict_if_present(sd, "module.")
    >>> sorted(sd)
    ['fc.bias', 'fc.weight']
    """
    keys = list(state_dict.keys())
    for key in keys:
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # the metadata of the root module, "", stays as it is
            if len(key) == 0:
                continue
            # the metadata of a module named "module" itself
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix) :]] = metadata.pop(key)
