"""``clgrad.jit``: PyTorch's TorchScript entry points, for programs that use them. clgrad has no
TorchScript compiler: ``script`` and ``trace`` return the function or module itself, which runs
eagerly with the same results (a scripted program's semantics are its Python code's), and
``is_scripting()`` / ``is_tracing()`` are False, so code that branches on them takes its eager
path. The decorators (``ignore``, ``unused``, ``export``, ``interface``) and ``annotate`` /
``Attribute`` / ``Final`` leave what they wrap as it is; ``fork`` runs its function at once.
TorchScript archives (``save`` / ``load``) are refused with NotImplementedError: use
``clgrad.save`` of a state dict. For captured, replayed steps see ``clgrad.compile``.

>>> @clgrad.jit.script
... def double(x):
...     return x * 2
>>> double(clgrad.ones(2)), clgrad.jit.is_scripting()
(tensor([2., 2.]), False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final  # noqa: F401  (torch.jit.Final is typing's)

from .nn.modules.module import Module

__all__ = [
    "Attribute",
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "trace",
    "trace_module",
    "unused",
    "wait",
]


class ScriptModule(Module):
    """The class of TorchScript modules: nothing clgrad returns is one (``script`` returns the
    module itself), so ``isinstance(m, ScriptModule)`` is False here."""


class ScriptFunction:
    """The class of TorchScript functions: as ``ScriptModule``, never an instance here."""


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself (a function, a module or a class), run eagerly: clgrad has no
    TorchScript compiler, and a scriptable program computes the same eagerly.

    >>> layer = clgrad.nn.Linear(2, 1)
    >>> clgrad.jit.script(layer) is layer
    True
    """
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """``func`` itself (a function or a module), run eagerly on every call, as a trace of it
    would compute for inputs of the example's structure.

    >>> f = clgrad.jit.trace(lambda x: x + 1, clgrad.zeros(1))
    >>> f(clgrad.ones(1))
    tensor([2.])
    """
    return func


def trace_module(mod, inputs, *args, **kwargs):
    """``mod`` itself (see ``trace``)."""
    return mod


def is_scripting() -> bool:
    """False: nothing runs as TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: nothing is being traced here."""
    return False


def ignore(drop=False, **kwargs):
    """``@ignore`` / ``@ignore(drop=True)``: TorchScript leaves the function to Python; here
    everything is Python, so the function is returned as it is."""
    return drop if callable(drop) else (lambda fn: fn)


def unused(fn: Callable) -> Callable:
    """``@unused``: the function as it is (TorchScript replaces it by a raise)."""
    return fn


def export(fn: Callable) -> Callable:
    """``@export``: the method as it is (TorchScript compiles it as an entry point)."""
    return fn


def interface(obj):
    """``@interface``: the class as it is."""
    return obj


def annotate(the_type, the_value):
    """``the_value``: a type hint for TorchScript, nothing at run time."""
    return the_value


def Attribute(value, type=None):  # noqa: N802  (PyTorch's name)
    """``value``: a type hint for TorchScript, nothing at run time."""
    return value


class _Future:
    """``fork``'s result: the value computed at once, handed out by ``wait``."""

    def __init__(self, value) -> None:
        self._value = value

    def wait(self):
        return self._value


def fork(func: Callable, *args, **kwargs) -> _Future:
    """Runs ``func(*args, **kwargs)`` now (TorchScript may run it in parallel); ``wait`` gives
    its result."""
    return _Future(func(*args, **kwargs))


def wait(future: _Future) -> Any:
    """The result of a ``fork``."""
    return future.wait()


def freeze(mod: Module, preserved_attrs=None, optimize_numerics: bool = True) -> Module:
    """``mod`` itself, in eval mode as PyTorch requires (freezing inlines a scripted module's
    parameters; eagerly there is nothing to inline)."""
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    return mod


def optimize_for_inference(mod: Module, other_methods=None) -> Module:
    """``mod`` itself, put in eval mode."""
    return mod.eval()


def save(m, f, _extra_files=None) -> None:
    """Refused: clgrad writes no TorchScript archives (``clgrad.save(model.state_dict(), f)``
    saves the weights)."""
    raise NotImplementedError(
        "clgrad.jit.save: clgrad has no TorchScript; save the state dict with clgrad.save"
    )


def load(f, map_location=None, _extra_files=None):
    """Refused: clgrad reads no TorchScript archives."""
    raise NotImplementedError(
        "clgrad.jit.load: clgrad has no TorchScript; load a state dict with clgrad.load"
    )
