"""``torch.backends.opt_einsum``: whether the ``opt_einsum`` package is there, and the
``enabled`` / ``strategy`` settings PyTorch keeps for it. As torch's, ``set_flags`` and
``flags`` check them (``enabled=True`` without the package, or a ``strategy`` while disabled
or not one of "auto", "greedy", "optimal", is torch's ValueError) and plain assignment
(``opt_einsum.enabled = True``) does not.

clgrad's ``einsum`` contracts its operands from left to right whatever these say (as PyTorch
does without the package): the settings are kept so programs that set them run.

>>> import clgrad.backends.opt_einsum as oe
>>> oe.is_available() == (oe.get_opt_einsum() is not None)
True
>>> oe.enabled == oe.is_available()
True
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None

__all__ = ["is_available", "get_opt_einsum", "set_flags", "flags", "enabled", "strategy"]

_STRATEGIES = ("auto", "greedy", "optimal")


@lru_cache
def is_available() -> bool:
    """Whether the ``opt_einsum`` package imported, as ``torch.backends.opt_einsum``'s.

    >>> isinstance(clgrad.backends.opt_einsum.is_available(), bool)
    True
    """
    return _opt_einsum is not None


def get_opt_einsum():
    """The ``opt_einsum`` package, or None without it.

    >>> m = clgrad.backends.opt_einsum.get_opt_einsum()
    >>> m is None or m.__name__ == "opt_einsum"
    True
    """
    return _opt_einsum


def _check_enabled(value) -> None:
    if not is_available() and value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap "
            "the benefits of calculating an optimal path for einsum. torch.einsum will "
            "fall back to contracting from left to right. To enable this optimal path "
            "calculation, please install opt-einsum."
        )


def _check_strategy(value) -> None:
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`."
        )
    if not enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please set `enabled` to `True` as well or unset `strategy`."
        )
    if value not in _STRATEGIES:
        raise ValueError(
            f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}"
        )


def set_flags(_enabled=None, _strategy=None):
    """Set ``enabled`` and ``strategy`` (each when not None); returns the previous pair.

    >>> clgrad.backends.opt_einsum.set_flags() == (
    ...     clgrad.backends.opt_einsum.enabled, clgrad.backends.opt_einsum.strategy)
    True
    """
    global enabled, strategy
    orig = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _check_enabled(_enabled)
        enabled = _enabled
    if _strategy is not None:
        _check_strategy(_strategy)
        strategy = _strategy
    return orig


@contextmanager
def flags(enabled=None, strategy=None):
    """``set_flags`` inside a ``with`` block, restored after it.

    >>> with clgrad.backends.opt_einsum.flags(enabled=False):
    ...     clgrad.backends.opt_einsum.enabled
    False
    """
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)


enabled = is_available()
strategy = "auto" if is_available() else None
