"""no_grad, enable_grad, set_grad_enabled, inference_mode: thread-local, context and decorator."""

from __future__ import annotations

import functools
import threading

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def _set(enabled: bool):
    _state.enabled = enabled


class _GradMode:
    """Base of the grad-mode switches: usable as ``with`` block and as decorator."""

    enabled = True

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(self.enabled)
        return self

    def __exit__(self, *exc):
        _set(self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _args(self):
        return ()


class no_grad(_GradMode):
    """Records no graph inside: results have ``requires_grad=False``.

    >>> x = clgrad.ones(2, requires_grad=True)
    >>> with clgrad.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    enabled = False


class enable_grad(_GradMode):
    enabled = True


class inference_mode(_GradMode):
    def __init__(self, mode: bool = True):
        self.enabled = not mode

    def _args(self):
        return (not self.enabled,)


class set_grad_enabled(_GradMode):
    def __init__(self, mode: bool):
        self.enabled = bool(mode)
        self.prev = is_grad_enabled()
        _set(self.enabled)  # takes effect at once, as PyTorch's function form does

    def __enter__(self):
        return self

    def _args(self):
        return (self.enabled,)

    def __call__(self, fn):
        _set(self.prev)  # as a decorator it must not have switched anything yet
        return super().__call__(fn)
