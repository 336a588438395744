"""no_grad, enable_grad, set_grad_enabled, inference_mode: thread-local, context and decorator."""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar


class _ThreadState(threading.local):
    """Grad mode, per thread; the class attributes are every thread's defaults (a plain
    ``threading.local`` read with ``getattr(..., default)`` raises and catches an AttributeError
    inside each read in a thread that never set it: 1 us of every op's dispatch)."""

    enabled = True
    inference = False
    # autograd.graph.saved_tensors_hooks: the (pack, unpack) pairs in effect, innermost last;
    # a message where disable_saved_tensors_hooks forbids registering any
    saved_hooks: tuple = ()
    saved_hooks_refused: str | None = None


_state = _ThreadState()

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
    return _state.enabled


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
        make = self._clone
        if inspect.isclass(fn):
            # torch's (deprecated) class form: the construction runs in the mode, nothing else
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)

        elif inspect.isgeneratorfunction(fn):
            return _wrap_generator(make, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make():
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self):
        return self.__class__(*self._args())

    def _args(self):
        return ()


def _wrap_generator(make, gen_fn):
    """``gen_fn`` wrapped so that each step of its generator (first run, ``send``, ``throw``,
    ``close``) runs in a fresh ``make()`` context and the caller's mode holds between steps, as
    torch's decorators wrap generators: a plain ``with`` around the call would switch the mode
    only while the generator object is created."""

    @functools.wraps(gen_fn)
    def generator_context(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with make():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make():
                        gen.close()
                    raise
                except BaseException as error:
                    with make():
                        response = gen.throw(error)
                else:
                    with make():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


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
    return _state.inference


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


# anomaly mode: a plain list, not thread-local, as torch's flag is global; the engine reads
# ANOMALY[0] once per node, so the check costs one boolean test while it is off
ANOMALY = [False]
# called with the new setting when anomaly mode switches (autograd.function swaps in the node
# constructor that records the forward's stack then: nothing is recorded while it is off)
_ANOMALY_LISTENERS: list = []


def _set_anomaly(on: bool) -> None:
    on = bool(on)
    if on != ANOMALY[0]:
        ANOMALY[0] = on
        for listener in _ANOMALY_LISTENERS:
            listener(on)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``set_detect_anomaly`` / ``detect_anomaly``).

    >>> clgrad.is_anomaly_enabled()
    False
    """
    return ANOMALY[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN (it does whenever it is on).

    >>> clgrad.is_anomaly_check_nan_enabled()
    False
    """
    return ANOMALY[0]


class set_detect_anomaly:
    """Turn anomaly detection on or off, like ``torch.autograd.set_detect_anomaly``: at once
    when called, and back to the previous setting on leaving a ``with`` block. While on, the
    backward engine checks every backward function's gradients and raises RuntimeError
    ``Function 'XxxBackward0' returned nan values in its 0th output.`` at the first NaN.

    >>> x = clgrad.tensor([0.0, 1.0], requires_grad=True)
    >>> with clgrad.autograd.set_detect_anomaly(True):
    ...     (x.sqrt() * clgrad.tensor([0.0, 1.0])).sum().backward()
    Traceback (most recent call last):
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = ANOMALY[0]
        _set_anomaly(bool(mode) and bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _set_anomaly(self.prev)


class detect_anomaly:
    """A context manager (or decorator) that turns anomaly detection on inside it, like
    ``torch.autograd.detect_anomaly``, with torch's UserWarning that it slows backward.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with clgrad.autograd.detect_anomaly():
    ...         clgrad.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True) -> None:
        import warnings

        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = ANOMALY[0]
        _set_anomaly(self.check_nan)

    def __exit__(self, *exc) -> None:
        _set_anomaly(self.prev)

    def __call__(self, fn: _F) -> _F:
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
