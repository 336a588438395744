"""``functional_call``: a module run with other tensors in place of its parameters and
buffers, as ``torch.func.functional_call`` (meta-learning, ensembles, per-sample gradients)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Calls ``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts``
    (by dotted name; one dict or several) in place of its parameters and buffers, which are
    put back afterwards, as ``torch.func.functional_call``: gradients flow to the given
    tensors. ``tie_weights``: a tensor given for one of a tied parameter's names serves all of
    them; ``strict``: every parameter and buffer must be given, and nothing else.

    >>> lin = clgrad.nn.Linear(2, 1)
    >>> w = clgrad.ones(1, 2, requires_grad=True)
    >>> out = clgrad.func.functional_call(lin, {"weight": w, "bias": clgrad.zeros(1)},
    ...                                   (clgrad.tensor([[1.0, 2.0]]),))
    >>> out
    tensor([[3.]], grad_fn=<AddmmBackward0>)
    >>> out.sum().backward()
    >>> w.grad
    tensor([[1., 2.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = dict(parameter_and_buffer_dicts)
    else:
        given = {}
        for d in parameter_and_buffer_dicts:
            for key in d:
                if key in given:
                    raise ValueError(
                        f"{key} appeared in multiple dictionaries; behavior of functional call "
                        "is ambiguous"
                    )
            given.update(d)
    own = {
        **dict(module.named_parameters(remove_duplicate=False)),
        **dict(module.named_buffers(remove_duplicate=False)),
    }
    if tie_weights:  # a tensor given for one name of a tied parameter serves the others
        by_id = {id(own[k]): v for k, v in given.items() if k in own}
        for name, t in own.items():
            if name not in given and id(t) in by_id:
                given[name] = by_id[id(t)]
    if strict:
        missing = [k for k in own if k not in given]
        unexpected = [k for k in given if k not in own]
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected))
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing))
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(parts)
            )
    swapped = []
    try:
        for name, tensor in given.items():
            swapped.append(_swap(module, name, tensor))
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for restore in reversed(swapped):
            restore()


_ABSENT = object()


def _swap(module, name, tensor):
    """Puts ``tensor`` at dotted ``name`` (a parameter's, a buffer's, a parametrized tensor's
    or a new attribute's slot); returns what puts the old one back."""
    path, _, key = name.rpartition(".")
    owner = module.get_submodule(path) if path else module
    for table in (owner._parameters, owner._buffers):
        if key in table:
            previous, table[key] = table[key], tensor
            return lambda: table.__setitem__(key, previous)
    if isinstance(getattr(type(owner), key, None), property):
        # a parametrized tensor: set through its setter (the parametrization's right_inverse
        # writes its originals), as PyTorch's swap does; the value read before goes back so
        previous = getattr(owner, key)
        setattr(owner, key, tensor)
        return lambda: setattr(owner, key, previous)
    table = owner.__dict__
    previous = table.get(key, _ABSENT)
    table[key] = tensor
    return lambda: table.pop(key) if previous is _ABSENT else table.__setitem__(key, previous)
