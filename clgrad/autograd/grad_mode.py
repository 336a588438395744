"""no_grad, enable_grad, set_grad_enabled, inference_mode: thread-local, context and decorator."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_state = threading.local()

_F = TypeVar("_F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """Whether operations record the autograd graph in this thread (``True`` unless a
    ``no_grad``, ``inference_mode`` or ``set_grad_enabled(False)`` is in effect), as
    ``torch.is_grad_enabled``.

    >>> clgrad.is_grad_enabled()
    True
    >>> with clgrad.no_grad():
    ...     clgrad.is_grad_enabled()
    False
    """
    return getattr(_state, "enabled", True)


def _set(enabled: bool):
    _state.enabled = enabled


class _GradMode:
    """Base of the grad-mode switches: usable as ``with`` block and as decorator."""

    enabled = True

    def __new__(cls, *args, **kwargs):
        # `@no_grad` without parentheses: PyTorch takes the function as the one argument
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])
        return super().__new__(cls)

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(self.enabled)
        return self

    def __exit__(self, *exc):
        _set(self.prev)
        return False

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _args(self):
        return ()


class no_grad(_GradMode):
    """Context manager (and a decorator: ``@no_grad()`` or ``@no_grad``) that disables gradient
    recording inside it: results computed there have ``requires_grad=False`` and no
    ``grad_fn``, as ``torch.no_grad``. The previous mode comes back on exit.

    >>> x = clgrad.ones(2, requires_grad=True)
    >>> with clgrad.no_grad():
    ...     (x * 2).requires_grad
    False
    >>> @clgrad.no_grad()
    ... def double(t):
    ...     return t * 2
    >>> double(x).requires_grad
    False
    >>> @clgrad.no_grad
    ... def triple(t):
    ...     return t * 3
    >>> triple(x).requires_grad
    False
    """

    enabled = False


class enable_grad(_GradMode):
    """Context manager (and a decorator, with or without parentheses) that turns gradient
    recording back on inside a ``no_grad`` block, as ``torch.enable_grad``.

    >>> x = clgrad.ones(2, requires_grad=True)
    >>> with clgrad.no_grad():
    ...     with clgrad.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    enabled = True


class inference_mode(_GradMode):
    """Context manager (and a decorator, with or without parentheses) for inference: like
    ``no_grad`` when ``mode`` is True (clgrad has no separate inference tensors), a no-op switch
    back to grad mode when False, as ``torch.inference_mode``.

    >>> x = clgrad.ones(2, requires_grad=True)
    >>> with clgrad.inference_mode():
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self, mode: bool = True) -> None:
        self.enabled = not mode

    def __enter__(self):
        self.prev_inference = is_inference_mode_enabled()
        _state.inference = not self.enabled
        return super().__enter__()

    def __exit__(self, *exc):
        _state.inference = self.prev_inference
        return super().__exit__(*exc)

    def _args(self):
        return (not self.enabled,)


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is in effect in this thread, as
    ``torch.is_inference_mode_enabled``.

    >>> with clgrad.inference_mode():
    ...     clgrad.autograd.grad_mode.is_inference_mode_enabled()
    True
    """
    return getattr(_state, "inference", False)


class set_grad_enabled(_GradMode):
    """Sets gradient recording on or off: at once when called as a function, for the block
    when used in ``with``, or for a function when used as a decorator, as
    ``torch.set_grad_enabled``.

    >>> x = clgrad.ones(2, requires_grad=True)
    >>> with clgrad.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    >>> _ = clgrad.set_grad_enabled(False)
    >>> clgrad.is_grad_enabled()
    False
    >>> _ = clgrad.set_grad_enabled(True)
    >>> clgrad.is_grad_enabled()
    True
    """

    def __new__(cls, mode):
        return object.__new__(cls)  # a function is no mode: no bare-decorator form

    def __init__(self, mode: bool) -> None:
        if callable(mode):
            raise TypeError(
                f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}"
            )
        self.enabled = bool(mode)
        self.prev = is_grad_enabled()
        _set(self.enabled)  # takes effect at once, as PyTorch's function form does

    def __enter__(self):
        return self

    def _args(self):
        return (self.enabled,)

    def __call__(self, fn: _F) -> _F:
        _set(self.prev)  # as a decorator it must not have switched anything yet
        return super().__call__(fn)
