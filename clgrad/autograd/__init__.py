"""Reverse-mode automatic differentiation: backward, grad, Function, grad modes, gradcheck,
the derivatives of whole functions (``functional``: jacobian, hessian, vjp, ...), and
``profiler`` (torch.autograd.profiler's ``profile`` and ``record_function``)."""

from __future__ import annotations

import threading

from . import forward_ad, functional, graph, profiler
from .engine import backward, grad
from .function import Function, FunctionCtx, Node
from .grad_mode import (
    _GradMode,
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable


class _Multithreading(threading.local):
    enabled = True  # every thread's default, as torch's


_multithreading = _Multithreading()


def _is_multithreading_enabled() -> bool:
    """The setting ``set_multithreading_enabled`` made in this thread (torch's
    ``torch._C._is_multithreading_enabled``)."""
    return _multithreading.enabled


class set_multithreading_enabled(_GradMode):  # noqa: N801  (PyTorch's name)
    """Turns multithreaded backward on or off in this thread: at once when called as a
    function, for the block in ``with``, for a function as a decorator, as
    ``torch.autograd.set_multithreading_enabled``. torch's engine runs an accelerator's
    backward on its own worker threads unless this is off; clgrad's engine always runs
    backward on the calling thread, which is what ``False`` asks for, so the setting is kept
    (and restored) but changes nothing about how backward runs.

    >>> with clgrad.autograd.set_multithreading_enabled(False):
    ...     x = clgrad.ones(2, requires_grad=True)
    ...     (x * 2).sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """

    def __new__(cls, mode):
        return object.__new__(cls)  # a function is no mode: no bare-decorator form

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = _multithreading.enabled
        _multithreading.enabled = self.mode  # takes effect at once, as torch's

    def __enter__(self) -> None:
        _multithreading.enabled = self.mode

    def __exit__(self, *exc) -> bool:
        _multithreading.enabled = self.prev
        return False

    def _args(self):
        return (self.mode,)

    def __call__(self, fn):
        _multithreading.enabled = self.prev  # as a decorator it switches nothing until called
        return super().__call__(fn)

    def clone(self):
        """A new instance with the same setting (torch's, for the decorator form)."""
        return self.__class__(self.mode)


__all__ = [
    "Function",
    "FunctionCtx",
    "Node",
    "Variable",
    "backward",
    "forward_ad",
    "functional",
    "graph",
    "profiler",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "set_multithreading_enabled",
    "inference_mode",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
    "set_detect_anomaly",
    "detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]
