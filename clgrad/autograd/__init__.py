"""Reverse-mode automatic differentiation: backward, grad, Function, grad modes, gradcheck."""

from __future__ import annotations

from .engine import run_backward
from .function import Function, FunctionCtx, Node
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled


def _make_grads(tensors, grads):
    from ..ops.creation import ones_like

    out = []
    for t, g in zip(tensors, grads):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            g = ones_like(t)
        elif tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of {list(g.shape)} and output[0] "
                f"has a shape of {list(t.shape)}."
            )
        out.append(g)
    return out


def _as_list(x):
    if x is None:
        return None
    return [x] if not isinstance(x, (list, tuple)) else list(x)


def _check_requires_grad(tensors):
    for i, t in enumerate(tensors):
        if not t.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of the leaves."""
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    _check_requires_grad(tensors)
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_list(inputs)
    if inputs is not None and not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    >>> x = clgrad.tensor(3.0, requires_grad=True)
    >>> clgrad.autograd.grad(x ** 3, x)[0].item()
    27.0
    """
    outputs, inputs = _as_list(outputs), _as_list(inputs)
    _check_requires_grad(outputs)
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, _as_list(grad_outputs) or [None] * len(outputs))
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, capture=True)
    for i, (g, t) in enumerate(zip(result, inputs)):
        if g is None:
            if materialize_grads:
                from ..ops.creation import zeros_like

                result[i] = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
    return tuple(result)


from .gradcheck import gradcheck, gradgradcheck  # noqa: E402

__all__ = [
    "Function",
    "FunctionCtx",
    "Node",
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
]
