"""``torch.autograd.graph``: hooks on the tensors the graph saves for backward
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``), ``Node``, and
``GradientEdge`` / ``get_gradient_edge``.

>>> x = clgrad.ones(3, requires_grad=True)
>>> packed = []
>>> def pack(t):
...     packed.append(t.shape)
...     return t
>>> with clgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
...     y = (x * x).sum()
>>> y.backward()
>>> packed, x.grad
([clgrad.Size([3]), clgrad.Size([3])], tensor([2., 2., 2.]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from .engine import queue_callback
from .function import GradientEdge, Node, grad_accumulator
from .grad_mode import _state

__all__ = [
    "GradientEdge",
    "Node",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """While in effect, every tensor an op saves for backward is kept as ``pack_hook(tensor)``
    and given back to backward as ``unpack_hook(packed)``, as
    ``torch.autograd.graph.saved_tensors_hooks`` (the innermost pair wins). The version check
    of an in-place change after saving is the hooks' business then."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _state.saved_hooks_refused is not None:
            raise RuntimeError(_state.saved_hooks_refused)
        _state.saved_hooks = (*_state.saved_hooks, (self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _state.saved_hooks = _state.saved_hooks[:-1]


class save_on_cpu(saved_tensors_hooks):  # noqa: N801  (PyTorch's name)
    """Keeps the tensors saved for backward in host memory (``cpu``) and moves each back to
    its device when backward needs it, as ``torch.autograd.graph.save_on_cpu``: device memory
    for a deep model's activations traded for transfers."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """While in effect, registering ``saved_tensors_hooks`` raises RuntimeError with
    ``error_message``, as ``torch.autograd.graph.disable_saved_tensors_hooks``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        self.previous = _state.saved_hooks_refused
        _state.saved_hooks_refused = self.error_message
        return self

    def __exit__(self, *exc):
        _state.saved_hooks_refused = self.previous


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge of the backward graph where ``tensor``'s gradient arrives, as PyTorch's: its
    grad_fn and output number, a leaf's AccumulateGrad; ``autograd.grad`` takes it among its
    inputs (the gradient there even after ``tensor`` has been changed in place).

    >>> x = clgrad.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> edge = clgrad.autograd.graph.get_gradient_edge(y)
    >>> y.mul_(3)
    tensor([6., 6.], grad_fn=<MulBackward0>)
    >>> clgrad.autograd.grad(y.sum(), edge)
    (tensor([3., 3.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    if tensor.grad_fn is None:
        return GradientEdge(grad_accumulator(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor._output_nr)


def increment_version(tensor: Tensor) -> None:
    """Marks ``tensor`` as changed in place (its version goes up), as PyTorch's: what the graph
    saved of it then refuses backward."""
    tensor._bump_version()


class _MultiHandle:
    def __init__(self, handles) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all"):
    """Calls ``fn`` once per backward that reaches ``tensors``, as PyTorch's: with
    ``mode="all"`` after the backward, with the list of their gradients (None for those it did
    not reach); with ``mode="any"`` with the first of their gradients computed. Returns a handle
    whose ``remove()`` takes the hooks off.

    >>> a, b = clgrad.ones(2, requires_grad=True), clgrad.ones(2, requires_grad=True)
    >>> seen = []
    >>> h = clgrad.autograd.graph.register_multi_grad_hook((a, b), seen.append)
    >>> (a * 2).sum().backward()
    >>> seen
    [[tensor([2., 2.]), None]]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    pending: dict = {}  # the backward in progress: its gradients so far

    def finish():
        grads = [pending.get(i) for i in range(len(tensors))]
        pending.clear()
        fn(grads)

    def hook_for(i):
        def hook(grad):
            if mode == "any":
                if not pending:  # the first of them in this backward
                    pending[i] = grad
                    queue_callback(pending.clear)
                    fn(grad)
                return None
            if not pending:
                queue_callback(finish)
            pending[i] = grad
            return None

        return hook

    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)])
