"""The ``__torch_function__`` protocol's state, below every other module: whether subclass
dispatch is disabled (``DisableTorchFunctionSubclass``) or all of it (``DisableTorchFunction``),
the stack of ``TorchFunctionMode``s, the Tensor subclasses that override, and the call of the
overrides (``dispatch``).

clgrad's entry points do not look for overrides until a program makes a Tensor subclass that
overrides or enters a mode: then ``clgrad.overrides`` wraps them (``install``, which it sets
here). They are unwrapped when the last such subclass is collected and no mode is entered. A
program that never does either pays nothing.

>>> with DisableTorchFunctionSubclass():
...     is_torch_function_enabled()
False
"""

from __future__ import annotations

import warnings
import weakref


class _State:
    """The switches every wrapped entry point reads."""

    __slots__ = ("subclass", "all", "modes", "check", "installed", "install", "uninstall")

    def __init__(self):
        self.subclass = True  # DisableTorchFunctionSubclass is not in force
        self.all = True  # DisableTorchFunction is not in force
        self.modes: list = []  # the TorchFunctionMode stack, innermost last
        # whether a wrapped entry point looks at its arguments at all: read first by each, so
        # that the disabled state (inside every default __torch_function__) costs one test
        self.check = False
        self.installed = False
        # set by clgrad.overrides, which can reach the namespaces to wrap
        self.install = self.uninstall = lambda: None


S = _State()


def _refresh() -> None:
    # (not installed: a wrapper left under another, the profiler's, when they were taken off
    # stays until that one puts it back; it then only calls through)
    S.check = S.installed and S.all and (S.subclass or bool(S.modes))


# types that never override, skipped without looking them up (Tensor and Parameter are added by
# clgrad.tensor and clgrad.nn.parameter: torch's exact-Tensor and Parameter exclusion)
PLAIN: set = {int, float, bool, complex, str, bytes, type(None), slice, type(Ellipsis), type}

# torch.overrides.get_default_nowrap_functions(): the functions whose results the default
# __torch_function__ leaves as they are (the ``.grad`` getter); filled by clgrad.overrides
NOWRAP: set = set()


class _DisabledTorchFunctionImpl:
    """``torch._C._disabled_torch_function_impl``: a ``__torch_function__`` that calls the
    function with subclass dispatch off and keeps its results as they are; a class that sets
    it (``nn.Parameter``) does not override. An instance (not a function), so that it does not
    bind as a method, as torch's built-in does not."""

    __name__ = __qualname__ = "_disabled_torch_function_impl"

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


def overrides_type(t: type) -> bool:
    """Whether instances of ``t`` are dispatched on: it has a ``__torch_function__`` that is not
    the disabled one, and is not Tensor itself (torch's rule for its built-in functions)."""
    if t in PLAIN:
        return False
    tf = getattr(t, "__torch_function__", None)
    return tf is not None and tf is not _disabled_torch_function_impl


def _add(found: list | None, arg) -> list:
    """``arg`` into the overloaded arguments: one per type, a subclass before its bases,
    otherwise left to right (NEP 18's order, as torch's)."""
    if found is None:
        return [arg]
    t = type(arg)
    index = len(found)
    for i, old in enumerate(found):
        old_t = type(old)
        if old_t is t:
            return found
        if index == len(found) and issubclass(t, old_t):
            index = i
    found.insert(index, arg)
    return found


def overloaded(args, kwargs) -> list | None:
    """The overriding arguments of a call, lists and tuples looked into one level (torch's
    TensorList arguments); ``None`` when nothing is to be dispatched (no overriding argument and
    no mode), ``[]`` when only a mode is."""
    found = None
    if S.subclass:
        values = args if not kwargs else (*args, *kwargs.values())
        for a in values:
            t = type(a)
            if t in PLAIN:
                continue
            if t is list or t is tuple:
                for b in a:
                    if type(b) not in PLAIN and overrides_type(type(b)):
                        found = _add(found, b)
            elif overrides_type(t):
                found = _add(found, a)
    if found is None:
        return [] if S.modes else None
    return found


def with_self(found: list | None, args: tuple) -> list | None:
    """A method's overloaded arguments: with a mode entered, ``self`` is among them even as a
    plain Tensor (its type is in ``types``), as torch's methods."""
    if found is None or not (S.all and S.modes):
        return found
    this = args[0]
    t = type(this)
    for a in found:
        if type(a) is t:
            return found
    out = [this]
    for a in found:
        _add(out, a)
    return out


def python_rule(found: list | None, args: tuple, kwargs) -> list | None:
    """The overloaded arguments as torch's Python functions (``nn.functional``'s) find them:
    plain Tensors too (their default override runs the function), unless subclass dispatch is
    off."""
    if found is None or not (S.subclass and S.all):
        return found
    out = None
    for a in args if not kwargs else (*args, *kwargs.values()):
        for b in a if type(a) is list or type(a) is tuple else (a,):
            tf = getattr(type(b), "__torch_function__", None)
            if tf is not None and tf is not _disabled_torch_function_impl:
                out = _add(out, b)
    return out or found


_RAISE = object()


def dispatch(public, found: list, args: tuple, kwargs, qualname=None, declined=_RAISE):
    """torch's ``handle_torch_function``: the innermost mode first (popped while it runs), then
    the overloaded arguments' ``__torch_function__`` in order, until one returns something other
    than ``NotImplemented``. When none does: ``declined`` if given (an operator's
    ``NotImplemented``, so that Python's TypeError names the operator, as torch's), else
    TypeError, worded as torch's built-in functions word it when ``qualname`` (their name) is
    given, else as its Python functions."""
    types = tuple(type(a) for a in found)
    mode = None
    if S.all and S.modes:
        with _PopModeTemporarily() as mode:
            result = mode.__torch_function__(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in found:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn(
                "Defining your `__torch_function__ as a plain method is deprecated and "
                "will be an error in future, please define it as a classmethod.",
                DeprecationWarning,
                stacklevel=3,
            )
        result = method(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if declined is not _RAISE:
        return declined
    if qualname is not None:
        lines = [] if mode is None else [f"  - mode object {mode!r}"]
        lines += [f"  - tensor subclass {type(arg)}" for arg in found]
        raise TypeError(
            f"Multiple dispatch failed for '{qualname}'; all __torch_function__ handlers "
            "returned NotImplemented:\n\n" + "\n".join(lines) + "\n\nFor more information, "
            "try re-running with TORCH_LOGS=not_implemented"
        )
    name = f"{getattr(public, '__module__', None)}.{public.__name__}"
    msg = (
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(arg) for arg in found]}"
    )
    if mode is not None:
        msg += f" nor in mode {mode}"
    raise TypeError(msg)


# ---- the switches -------------------------------------------------------------------------------
class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: inside it, Tensor subclasses'
    ``__torch_function__`` is not called (modes still are); what every default
    ``__torch_function__`` runs its function in.

    >>> with DisableTorchFunctionSubclass():
    ...     is_torch_function_enabled()
    False
    """

    def __enter__(self):
        self._old = S.subclass
        S.subclass = False
        _refresh()
        return self

    def __exit__(self, *exc):
        S.subclass = self._old
        _refresh()


class DisableTorchFunction:
    """``torch._C.DisableTorchFunction``: inside it, neither subclasses' ``__torch_function__``
    nor modes are called.

    >>> with DisableTorchFunction():
    ...     is_torch_function_enabled(), is_torch_function_mode_enabled()
    (False, False)
    """

    def __enter__(self):
        self._old = (S.subclass, S.all)
        S.subclass = S.all = False
        _refresh()
        return self

    def __exit__(self, *exc):
        S.subclass, S.all = self._old
        _refresh()


def is_torch_function_enabled() -> bool:
    """``torch._C._is_torch_function_enabled``: False inside ``DisableTorchFunctionSubclass``
    or ``DisableTorchFunction``.

    >>> is_torch_function_enabled()
    True
    """
    return S.subclass and S.all


def is_torch_function_mode_enabled() -> bool:
    """``torch._C._is_torch_function_mode_enabled``: whether a mode is entered (and
    ``DisableTorchFunction`` is not in force).

    >>> is_torch_function_mode_enabled()
    False
    """
    return S.all and bool(S.modes)


# ---- the mode stack ------------------------------------------------------------------------------
def push_mode(mode) -> None:
    """Pushes ``mode`` on the mode stack (wrapping the entry points first, once)."""
    S.modes.append(mode)
    _refresh()
    if not S.installed:
        S.install()


def pop_mode():
    """Pops the innermost mode (torch's RuntimeError when there is none); unwraps the entry
    points when it was the last and no overriding subclass lives (wrapping them again takes
    a fraction of a millisecond: the wrappers are made once)."""
    if not S.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = S.modes.pop()
    _refresh()
    _maybe_uninstall()
    return mode


class _PopModeTemporarily:
    """The innermost mode off the stack while its ``__torch_function__`` runs (so that what it
    calls reaches the modes below it), back on after."""

    def __enter__(self):
        self.mode = S.modes.pop()
        _refresh()
        return self.mode

    def __exit__(self, *exc):
        S.modes.append(self.mode)
        _refresh()


# ---- the overriding subclasses -------------------------------------------------------------------
_LIVE: set = set()  # weak references to the overriding Tensor subclasses that exist


def subclass_defined(cls: type) -> None:
    """Called by ``Tensor.__init_subclass__``: a subclass that overrides (its
    ``__torch_function__`` is not the disabled one) switches dispatch on, until it and every
    other such subclass are collected."""
    if not overrides_type(cls):
        return
    _LIVE.add(weakref.ref(cls, _collected))
    if not S.installed:
        S.install()


def _collected(ref) -> None:
    _LIVE.discard(ref)
    _maybe_uninstall()


def release() -> bool:
    """Unwraps the entry points if no overriding subclass lives and no mode is entered (what a
    collected subclass and a mode's exit do themselves); whether they are unwrapped."""
    _maybe_uninstall()
    return not S.installed


def _maybe_uninstall() -> None:
    if S.installed and not _LIVE and not S.modes:
        S.uninstall()


# (here, at the bottom, so that the layers below clgrad.overrides may define modes too;
# clgrad.overrides exports it under PyTorch's name)
class TorchFunctionMode:
    """A context manager that sees every clgrad function, method and property call made inside
    its ``with`` block, as ``torch.overrides.TorchFunctionMode``: a subclass defines
    ``__torch_function__(self, func, types, args=(), kwargs=None)``, which runs with the mode
    off (what it calls reaches the modes entered before it, then the subclasses' overrides).

    >>> class Count(TorchFunctionMode):
    ...     def __init__(self):
    ...         self.names = []
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         self.names.append(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Count() as mode:
    ...     y = clgrad.ones(2).mul(3).sum()
    >>> mode.names, y
    (['ones', 'mul', 'sum'], tensor(6.))
    """

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn(
            "`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
            stacklevel=2,
        )
        return cls(*args, **kwargs)
