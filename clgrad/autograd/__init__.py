"""Reverse-mode automatic differentiation: backward, grad, Function, grad modes, gradcheck,
the derivatives of whole functions (``functional``: jacobian, hessian, vjp, ...), and
``profiler`` (torch.autograd.profiler's ``profile`` and ``record_function``)."""

from __future__ import annotations

from . import forward_ad, functional, graph, profiler
from .engine import backward, grad
from .function import Function, FunctionCtx, Node
from .grad_mode import (
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
    "inference_mode",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
    "set_detect_anomaly",
    "detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]
