"""``torch.autograd.graph``: hooks on the tensors the graph saves for backward
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``,
``allow_mutation_on_saved_tensors``), ``Node``, and ``GradientEdge`` / ``get_gradient_edge``.

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

import contextlib
import inspect
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ..tensor import Tensor
from .engine import queue_callback
from .function import GradientEdge, Node, grad_accumulator
from .grad_mode import _state, no_grad

__all__ = [
    "GradientEdge",
    "Node",
    "allow_mutation_on_saved_tensors",
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


# ---- allow_mutation_on_saved_tensors ------------------------------------------------------------
class _Saved:
    """One tensor saved for backward inside ``allow_mutation_on_saved_tensors``: the tensor
    and its version then, and the copy made of it before a write to its memory."""

    __slots__ = ("tensor", "version", "clone", "__weakref__")

    def __init__(self, tensor: Tensor) -> None:
        self.tensor, self.version, self.clone = tensor, tensor._version, None


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (torch's class of that name):
    the tensors saved in it, by the memory they view, and the copies made of them. Held weakly:
    what the graph frees is forgotten here too; cleared when the block exits."""

    def __init__(self) -> None:
        self.active = True
        # Storage -> the saved tensors over it; (id, version) -> the one entry of a tensor saved
        # again unchanged (the entry keeps its tensor alive, so the id is not reused meanwhile)
        self.by_storage: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.by_tensor: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def pack(self, tensor: Tensor) -> _Saved:
        key = (id(tensor), tensor._version)
        entry = self.by_tensor.get(key)
        if entry is None or entry.tensor is not tensor:
            entry = _Saved(tensor)
            self.by_tensor[key] = entry
            self.by_storage.setdefault(tensor._storage, weakref.WeakSet()).add(entry)
        return entry

    def unpack(self, entry: _Saved) -> Tensor:
        if not self.active:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in "
                "which the graph was originally recorded."
            )
        if entry.clone is not None:
            return entry.clone
        t = entry.tensor
        if t._version != entry.version:
            # written by a path the block does not see (not a clgrad function, method or
            # operator): the values saved are gone, and backward must not use the new ones
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.type()} {list(t.shape)}] is at version {t._version}; "
                f"expected version {entry.version} instead. allow_mutation_on_saved_tensors "
                "copies a saved tensor before a clgrad operation writes to it; this write did "
                "not go through one."
            )
        return t

    def before_write(self, tensor: Tensor) -> None:
        """Copies every tensor saved over ``tensor``'s memory, not copied yet, before a write."""
        entries = self.by_storage.get(getattr(tensor, "_storage", None))
        if not entries:
            return
        with no_grad():
            for entry in list(entries):
                if entry.clone is None and entry.tensor is not None:
                    entry.clone = entry.tensor.detach().clone()
                    entry.tensor = None  # as torch's: the copy stands for it from now on

    def clear(self) -> None:
        self.active = False
        for entries in list(self.by_storage.values()):
            for entry in list(entries):
                entry.tensor = entry.clone = None
        self.by_storage.clear()
        self.by_tensor.clear()


# functions, methods and operators that write to a tensor other than by a trailing underscore
_WRITES_ARG0 = frozenset(
    {"__setitem__"}
    | {
        f"__i{op}__"
        for op in "add sub mul matmul truediv floordiv mod pow and or xor lshift rshift".split()
    }
)
# ...and ones with a trailing underscore that change no values
_NO_WRITE = frozenset({"requires_grad_", "share_memory_", "detach_", "retain_grad_"})
_INPLACE_PARAM: dict = {}  # function -> the position of its ``inplace`` parameter, or None


def _inplace_position(func) -> int | None:
    try:
        return _INPLACE_PARAM[func]
    except (KeyError, TypeError):
        pass
    position = None
    try:
        names = list(inspect.signature(func).parameters)
        position = names.index("inplace") if "inplace" in names else None
    except (TypeError, ValueError):
        pass
    try:
        _INPLACE_PARAM[func] = position
    except TypeError:
        pass
    return position


def _written(func, args: tuple, kwargs: dict) -> list:
    """The tensors a call of ``func`` writes to: ``self`` of an in-place method (``add_``,
    ``copy_``, ``x[i] = v``, ``x += v``) or the first argument of an in-place function
    (``relu_``, ``_foreach_add_``'s list), ``out=``, and the input of a function called with
    ``inplace=True``."""
    name = getattr(func, "__name__", "")
    found = []
    out = kwargs.get("out")
    if out is not None:
        found += list(out) if isinstance(out, (tuple, list)) else [out]
    first = args[0] if args else None
    base = name.lstrip("_")
    writes = name in _WRITES_ARG0 or (
        base.endswith("_") and not name.startswith("__") and base not in _NO_WRITE
    )
    if not writes and first is not None:
        if kwargs.get("inplace") is True:
            writes = True
        elif "inplace" not in kwargs:
            position = _inplace_position(func)
            writes = position is not None and len(args) > position and args[position] is True
    if writes and first is not None:
        found += list(first) if isinstance(first, (tuple, list)) else [first]
    return [t for t in found if isinstance(t, Tensor)]


_mutation_allowed = [False]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Inside it, a tensor saved for backward may be changed in place: it is copied before the
    write and backward uses the copy, as ``torch.autograd.graph.allow_mutation_on_saved_tensors``
    (the forward and the backward both run inside; not nested). The writes seen are those of
    clgrad's functions, methods and operators (in-place methods, ``x[i] = v``, ``out=``,
    ``inplace=True``); a write by another path still fails backward, as it does outside.

    >>> with clgrad.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = clgrad.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
    """
    from .._torch_function import TorchFunctionMode

    class _CloneBeforeWrite(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            for t in _written(func, args, kwargs):
                ctx.before_write(t)
            return func(*args, **kwargs)

    if _mutation_allowed[0]:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    _mutation_allowed[0] = True
    try:
        with saved_tensors_hooks(ctx.pack, ctx.unpack), _CloneBeforeWrite():
            yield ctx
    finally:
        ctx.clear()
        _mutation_allowed[0] = False
