"""``torch.overrides``: the ``__torch_function__`` protocol. A Tensor subclass gets its own
type back from clgrad's functions, methods, operators and properties, and a subclass (or any
class) that defines ``__torch_function__`` sees each call, as torch's; a ``TorchFunctionMode``
entered with ``with`` sees every call.

The dispatch costs nothing until a program defines a Tensor subclass that overrides (one that
does not set ``__torch_function__ = clgrad._C._disabled_torch_function_impl``, as
``nn.Parameter`` does) or enters a mode: then the entry points (the functions of ``clgrad``,
``clgrad.nn.functional``, ``clgrad.linalg``, ``clgrad.fft`` and ``clgrad.special``, and
Tensor's methods, operators and properties) are replaced by wrappers that look for overriding
arguments (``_install``); they are put back when the last such subclass is collected and no
mode is entered.
Objects of other classes that define ``__torch_function__`` (not Tensors) are dispatched on
while that is so; on their own they do not switch it on.

>>> from clgrad.overrides import handle_torch_function, has_torch_function_unary
>>> def double(x):
...     if has_torch_function_unary(x):
...         return handle_torch_function(double, (x,), x)
...     return x * 2
>>> class Logged:
...     @classmethod
...     def __torch_function__(cls, func, types, args=(), kwargs=None):
...         return f"{func.__name__} on {cls.__name__}"
>>> double(clgrad.tensor([1.0])), double(Logged())
(tensor([2.]), 'double on Logged')
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import sys
import types as _types
from collections.abc import Callable, Iterable
from typing import Any

from . import _C  # noqa: F401  (binds clgrad._C, torch._C's names of the protocol)
from . import _torch_function as _tf
from ._torch_function import S as _S
from ._torch_function import TorchFunctionMode
from .tensor import Tensor

__all__ = [
    "BaseTorchFunctionMode",
    "TorchFunctionMode",
    "enable_reentrant_dispatch",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "wrap_torch_function",
]


def _get_overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """The arguments whose ``__torch_function__`` is to be called, in order: one per type,
    a subclass before its base classes, otherwise left to right (NEP 18's order, as torch's).
    As torch's Python function, a plain Tensor is one (its default override runs the function);
    nothing is while ``DisableTorchFunctionSubclass`` is in force."""
    if not _tf.is_torch_function_enabled():
        return []
    found = None
    for arg in relevant_args:
        tf = getattr(type(arg), "__torch_function__", None)
        if tf is not None and tf is not _tf._disabled_torch_function_impl:
            found = _tf._add(found, arg)
    return found or []


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` has a type that overrides ``__torch_function__`` (never
    a plain clgrad Tensor or a Parameter), or a mode is entered, as torch's.

    >>> class T:
    ...     __torch_function__ = classmethod(lambda cls, func, types, args=(), kw=None: 0)
    >>> has_torch_function((clgrad.zeros(1), 2)), has_torch_function((clgrad.zeros(1), T()))
    (False, True)
    """
    if _S.all and _S.modes:
        return True
    if not (_S.subclass and _S.all):
        return False
    return any(_tf.overrides_type(type(a)) for a in relevant_args)


def has_torch_function_unary(obj: Any) -> bool:
    """``has_torch_function((obj,))``, for a function of one argument.

    >>> has_torch_function_unary(clgrad.zeros(1))
    False
    """
    return has_torch_function((obj,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``, with the arguments given one by one.

    >>> has_torch_function_variadic(clgrad.zeros(1), None, 3)
    False
    """
    return has_torch_function(args)


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call the innermost mode's ``__torch_function__(public_api, types, args, kwargs)``, then
    those of the overriding arguments among ``relevant_args``, subclasses first, and return the
    first result that is not ``NotImplemented``; torch's TypeError when every one declines. A
    plain method (not a classmethod) warns DeprecationWarning, as torch.

    >>> class No:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return NotImplemented
    >>> def f(x):
    ...     return handle_torch_function(f, (x,), x)
    >>> f(No())
    Traceback (most recent call last):
    TypeError: no implementation found for '...f' on types that implement __torch_function__: [...]
    """
    return _tf.dispatch(public_api, _get_overloaded_args(relevant_args), args, kwargs)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """A decorator that makes a function overridable: ``dispatcher(*args, **kwargs)`` names its
    relevant arguments, as torch's.

    >>> @wrap_torch_function(lambda x: (x,))
    ... def twice(x):
    ...     return x * 2
    >>> twice(clgrad.ones(1))
    tensor([2.])
    """

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a clgrad Tensor (or subclass) or its type defines
    ``__torch_function__``.

    >>> is_tensor_like(clgrad.zeros(1)), is_tensor_like(6), is_tensor_like(None)
    (True, False, False)
    """
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


# torch.overrides.get_ignored_functions()'s public names that clgrad has too: functions whose
# arguments are not tensors to dispatch on (creation, settings, the generator's state)
_IGNORED_TOP = """
arange are_deterministic_algorithms_enabled as_strided as_tensor asarray bartlett_window
blackman_window broadcast_shapes can_cast clear_autocast_cache compile cond device dtype empty
empty_permuted empty_strided enable_grad eye fill finfo from_numpy frombuffer full
get_autocast_cpu_dtype get_autocast_dtype get_autocast_gpu_dtype get_default_device
get_default_dtype get_deterministic_debug_mode get_float32_matmul_precision
get_num_interop_threads get_num_threads get_rng_state hamming_window hann_window iinfo
inference_mode initial_seed is_anomaly_check_nan_enabled is_anomaly_enabled
is_autocast_cache_enabled is_autocast_cpu_enabled is_autocast_enabled
is_deterministic_algorithms_warn_only_enabled is_grad_enabled is_inference_mode_enabled
is_storage is_tensor is_warn_always_enabled kaiser_window layout linspace load logspace
manual_seed memory_format no_grad normal ones promote_types rand rand_like randint
randint_like randn randn_like randperm range result_type save scalar_tensor seed
set_anomaly_enabled set_autocast_cache_enabled set_autocast_cpu_dtype set_autocast_cpu_enabled
set_autocast_dtype set_autocast_enabled set_autocast_gpu_dtype set_default_device
set_default_tensor_type set_deterministic_debug_mode set_float32_matmul_precision
set_flush_denormal set_grad_enabled set_num_interop_threads set_num_threads set_printoptions
set_rng_state set_warn_always tensor tril_indices triu_indices typename
use_deterministic_algorithms vander vmap zeros
""".split()
_IGNORED_FUNCTIONAL = """
hardsigmoid hardswish sigmoid tanh upsample upsample_bilinear upsample_nearest
""".split()
_IGNORED_TENSOR = """
as_subclass new new_empty new_empty_strided new_full new_ones new_tensor new_zeros stride
to_padded_tensor to_sparse_coo unflatten
""".split()


def get_ignored_functions() -> set[Callable]:
    """The functions that cannot be overridden by ``__torch_function__`` in torch (creation
    functions, global settings, ...), as clgrad's functions of those names.

    >>> fs = get_ignored_functions()
    >>> clgrad.zeros in fs, clgrad.add in fs
    (True, False)
    """
    # clgrad (the package) imports this module, so it is looked up, not imported
    root = sys.modules[__name__.rpartition(".")[0]]
    out: set[Callable] = set()
    for namespace, names in (
        (root, _IGNORED_TOP),
        (root.nn.functional, _IGNORED_FUNCTIONAL),
        (Tensor, _IGNORED_TENSOR),
    ):
        for name in names:
            value = getattr(namespace, name, None)
            if value is None:
                continue
            try:
                hash(value)
            except TypeError:
                continue
            out.add(value)
    return out


# ---- modes ---------------------------------------------------------------------------------------
class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose ``__torch_function__`` calls the function, as torch's: a base for modes
    that override a few functions only.

    >>> with BaseTorchFunctionMode():
    ...     clgrad.ones(1) + 1
    tensor([2.])
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    """The innermost entered mode, or None."""
    return _S.modes[-1] if _S.modes else None


def _get_current_function_mode_stack() -> list:
    """The entered modes, outermost first."""
    return list(_S.modes)


def _len_torch_function_stack() -> int:
    return len(_S.modes)


def _push_mode(mode) -> None:
    _tf.push_mode(mode)


def _pop_mode():
    return _tf.pop_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _tf.pop_mode()
    try:
        yield mode
    finally:
        _tf.push_mode(mode)


def _is_torch_function_mode_enabled() -> bool:
    return _tf.is_torch_function_mode_enabled()


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch's context manager for re-entering the dispatcher from a ``__torch_function__``: here
    a function called inside an override always dispatches as any call, so there is nothing to
    restore.

    >>> with enable_reentrant_dispatch():
    ...     clgrad.ones(1).sum()
    tensor(1.)
    """
    yield


def get_default_nowrap_functions() -> set[Callable]:
    """The functions whose results the default ``Tensor.__torch_function__`` does not turn into
    the subclass: the getters of ``.grad``, ``._grad`` and ``._base``, as torch's.

    >>> clgrad.Tensor.grad.__get__ in get_default_nowrap_functions()
    True
    """
    return {Tensor.grad.__get__, Tensor._grad.__get__, Tensor._base.__get__}


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a method of Tensor or a property's getter (``Tensor.grad.__get__``):
    what a ``__torch_function__`` gets whose first argument is ``self``.

    >>> is_tensor_method_or_property(clgrad.Tensor.add), is_tensor_method_or_property(clgrad.add)
    (True, False)
    """
    return func in _tensor_methods() or getattr(func, "__name__", None) == "__get__"


def _tensor_methods() -> list:
    return [v for k, v in vars(Tensor).items() if callable(v) and not isinstance(v, type)]


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """Namespace -> the functions of it that ``__torch_function__`` sees, as torch's (the
    modules ``clgrad``, ``clgrad.nn.functional``, ``clgrad.linalg``, ``clgrad.fft``,
    ``clgrad.special``, and ``clgrad.Tensor``'s methods and properties' getters).

    >>> fs = get_overridable_functions()
    >>> clgrad.add in fs[clgrad], clgrad.Tensor.add in fs[clgrad.Tensor]
    (True, True)
    """
    out: dict[Any, list[Callable]] = {}
    for namespace, names in _namespaces():
        out[namespace] = [getattr(namespace, n) for n in names]
    out[Tensor] = [
        Tensor.__dict__[n].__get__
        if isinstance(Tensor.__dict__[n], property)
        else getattr(Tensor, n)
        for n in _tensor_names()
    ]
    return out


# ---- the wrappers ------------------------------------------------------------------------------
# clgrad's functions that are no op on tensors (settings, the generator's state, saving and
# loading, devices): torch's modes do not see them either
_NOT_OPS = set(
    """
are_deterministic_algorithms_enabled broadcast_shapes clear_autocast_cache compile cond
default_device device devices from_dlpack get_autocast_cpu_dtype get_autocast_dtype
get_autocast_gpu_dtype get_default_device get_default_dtype get_deterministic_debug_mode
get_device_module get_float32_matmul_precision get_num_interop_threads get_num_threads
get_rng_state initial_seed is_anomaly_check_nan_enabled is_anomaly_enabled
is_autocast_cache_enabled is_autocast_cpu_enabled is_autocast_enabled
is_deterministic_algorithms_warn_only_enabled is_grad_enabled is_inference_mode_enabled
is_storage is_tensor is_warn_always_enabled load manual_seed save seed set_anomaly_enabled
set_autocast_cache_enabled set_autocast_cpu_dtype set_autocast_cpu_enabled set_autocast_dtype
set_autocast_enabled set_autocast_gpu_dtype set_default_device set_default_dtype
set_default_tensor_type set_deterministic_debug_mode set_float32_matmul_precision
set_flush_denormal set_num_interop_threads set_num_threads set_printoptions set_rng_state
set_warn_always synchronize to_dlpack typename use_deterministic_algorithms vmap while_loop
""".split()
)

# Tensor's special methods that dispatch (with the public function torch passes, where it is
# another method: ``x + 1`` is ``Tensor.add``, ``1 - x`` is ``Tensor.__rsub__``)
_OPERATORS = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__rsub__": "__rsub__",
    "__mul__": "mul", "__rmul__": "mul", "__truediv__": "div", "__rtruediv__": "__rdiv__",
    "__rdiv__": "__rdiv__", "__floordiv__": "__floordiv__", "__rfloordiv__": "__rfloordiv__",
    "__mod__": "remainder", "__rmod__": "__rmod__", "__pow__": "__pow__", "__rpow__": "__rpow__",
    "__matmul__": "matmul", "__rmatmul__": "__rmatmul__", "__and__": "__and__",
    "__rand__": "bitwise_and", "__or__": "__or__", "__ror__": "bitwise_or", "__xor__": "__xor__",
    "__rxor__": "bitwise_xor", "__lshift__": "__lshift__", "__rlshift__": "__rlshift__",
    "__rshift__": "__rshift__", "__rrshift__": "__rrshift__", "__eq__": "__eq__", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__iadd__": "add_",
    "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_", "__imod__": "remainder_", "__ipow__": "__ipow__",
    "__iand__": "__iand__", "__ior__": "__ior__", "__ixor__": "__ixor__",
    "__ilshift__": "__ilshift__", "__irshift__": "__irshift__",
}  # fmt: skip
_UNARY = {"__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__invert__": "__invert__"}
_DUNDERS = """
__len__ __array__ __bool__ __float__ __int__ __complex__ __index__ __repr__ __format__
__deepcopy__ __getitem__ __setitem__ __contains__ __reversed__
""".split()
_NOT_METHODS = {"as_subclass"}  # torch's ignored Tensor method that makes subclasses
_TORCH_NAMES = {"__pow__": "pow", "__ipow__": "pow_"}


# the functions that torch writes in Python (they find overloaded arguments as its Python
# handle_torch_function does); the others of these namespaces are built-in functions there
_PYTHON_TOP = set(
    """
atleast_1d atleast_2d atleast_3d block_diag broadcast_tensors cartesian_prod cdist chain_matmul
einsum lu meshgrid norm pca_lowrank split stft istft svd_lowrank tensordot unique
unique_consecutive unravel_index
""".split()
)
_BUILTIN_FUNCTIONAL = set(
    """
relu_ gelu softplus logsigmoid hardshrink softshrink hardtanh_ leaky_relu_ elu_ selu_ celu_
threshold_ rrelu_ prelu linear bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d
conv_transpose3d avg_pool2d avg_pool1d avg_pool3d adaptive_avg_pool1d one_hot pixel_shuffle
pixel_unshuffle channel_shuffle cosine_similarity pairwise_distance
scaled_dot_product_attention pdist
""".split()
)


# Tensor's methods that torch writes in Python (the same, for the dispatch: empty kwargs are a
# dict, plain Tensors are among the overloaded arguments)
_PYTHON_METHODS = set(
    """
__array__ __contains__ __deepcopy__ __floordiv__ __format__ __ipow__ __iter__ __len__ __pow__
__rdiv__ __repr__ __reversed__ __rfloordiv__ __rlshift__ __rmatmul__ __rmod__ __rpow__
__rrshift__ __rsub__ __rtruediv__ backward dim_order istft lu norm register_hook
register_post_accumulate_grad_hook resize resize_as share_memory_ split stft storage
storage_type to_sparse_coo unflatten unique unique_consecutive is_shared module_load
""".split()
)


def _qualname(namespace, name: str) -> str | None:
    """The name a built-in function's TypeError gives, or None for a Python function."""
    root = sys.modules[__name__.rpartition(".")[0]]
    if namespace is root:
        return None if name in _PYTHON_TOP else f"{root.__name__}.{name}"
    if namespace is root.nn.functional:
        return f"{namespace.__name__}.{name}" if name in _BUILTIN_FUNCTIONAL else None
    return f"{namespace.__name__}.{name}"


def _namespaces():
    """(namespace, names of its functions that dispatch), the Tensor class aside."""
    root = sys.modules[__name__.rpartition(".")[0]]
    for namespace in (root, root.nn.functional, root.linalg, root.fft, root.special):
        names = getattr(namespace, "__all__", None) or dir(namespace)
        yield (
            namespace,
            [
                n
                for n in names
                if not n.startswith("_")
                and not (namespace is root and n in _NOT_OPS)
                and isinstance(namespace.__dict__.get(n), _types.FunctionType)
            ],
        )


def _tensor_names() -> list[str]:
    out = []
    for name, value in vars(Tensor).items():
        if name.startswith("__"):
            if name in _OPERATORS or name in _UNARY or name in _DUNDERS:
                out.append(name)
        elif name.startswith("_") or name in _NOT_METHODS:
            continue
        elif isinstance(value, (_types.FunctionType, property)):
            # (not the dtype slot: clgrad's own code reads it many times an op, and a property
            # over it would cost every op a third more while dispatch is on)
            out.append(name)
    return out


def _function_wrapper(fn: Callable, qualname: str | None) -> Callable:
    """A namespace's function that dispatches: as torch's built-in functions (``qualname``,
    their name, words the TypeError), or as its Python functions (None: plain Tensor arguments
    are among the overloaded ones)."""
    overloaded, dispatch, python_rule = _tf.overloaded, _tf.dispatch, _tf.python_rule

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _S.check:
            found = overloaded(args, kwargs)
            if found is not None:
                if qualname is None:  # (torch's Python functions pass a dict)
                    return dispatch(wrapper, python_rule(found, args, kwargs), args, kwargs)
                return dispatch(wrapper, found, args, kwargs or None, qualname)
        return fn(*args, **kwargs)

    return wrapper


def _operator_wrapper(fn: Callable, public: str) -> Callable:
    overloaded, dispatch, overrides_type = _tf.overloaded, _tf.dispatch, _tf.overrides_type
    plain, modes, numbers_ = _tf.PLAIN, _S.modes, (int, float, bool, complex)
    with_self, python_rule = _tf.with_self, _tf.python_rule
    python = public in _PYTHON_METHODS
    qualname = None if python else f"clgrad.Tensor.{public}"

    @functools.wraps(fn)
    def wrapper(self, other):
        to = type(other)
        if (
            _S.check
            and (modes or type(self) not in plain or to not in plain)
            # what the operator refuses (None, a string) it still refuses: NotImplemented
            and (
                to in numbers_ or isinstance(other, (Tensor, numbers.Number)) or overrides_type(to)
            )
        ):
            args = (self, other)
            found = with_self(overloaded(args, None), args)
            if found is not None:
                if python:
                    found = python_rule(found, args, None)
                func = getattr(Tensor, public)
                kwargs = {} if python else None
                return dispatch(func, found, args, kwargs, qualname, NotImplemented)
        return fn(self, other)

    return wrapper


def _method_wrapper(fn: Callable, name: str, public: str | None = None) -> Callable:
    overloaded, dispatch, with_self = _tf.overloaded, _tf.dispatch, _tf.with_self
    python_rule, python = _tf.python_rule, (public or name) in _PYTHON_METHODS
    qualname = None if python else f"clgrad.Tensor.{public or name}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _S.check:
            found = with_self(overloaded(args, kwargs), args)
            if found is not None:
                func = wrapper if public is None else getattr(Tensor, public)
                if python:
                    return dispatch(func, python_rule(found, args, kwargs), args, kwargs)
                return dispatch(func, found, args, kwargs or None, qualname)
        return fn(*args, **kwargs)

    return wrapper


def _iter_wrapper(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def __iter__(self):
        # torch's Tensor.__iter__: the rows of unbind(0), which dispatches
        if _S.check and _tf.overloaded((self,), None) is not None:
            if self.dim() == 0:
                raise TypeError("iteration over a 0-d tensor")
            return iter(self.unbind(0))
        return fn(self)

    return __iter__


def _property_wrapper(
    name: str, get: Callable, set_: Callable | None, delete: Callable | None, doc: str | None
):
    """A property whose getter (and setter) dispatch, with ``Tensor.<name>.__get__`` (and
    ``__set__``) as the function, as torch's; its deleter (``del t.grad``) is the original's."""
    overloaded, dispatch, with_self = _tf.overloaded, _tf.dispatch, _tf.with_self
    plain, modes, qualname = _tf.PLAIN, _S.modes, f"clgrad.Tensor.{name}"

    def getter(self):
        # (read by clgrad's own code on every op: a plain tensor's costs two tests)
        if _S.check and (modes or type(self) not in plain):
            args = (self,)
            found = with_self(overloaded(args, None), args)
            if found is not None:
                return dispatch(prop.__get__, found, args, None, qualname + ".__get__")
        return get(self)

    def setter(self, value):
        if _S.check and (modes or type(self) not in plain):
            args = (self, value)
            found = with_self(overloaded((self,), None), args)
            if found is not None:
                dispatch(prop.__set__, found, args, None, qualname + ".__set__")
                return
        set_(self, value)

    prop = property(getter, None if set_ is None else setter, delete, doc)
    return prop


def _named(wrapper: Callable, name: str) -> Callable:
    wrapper.__name__ = name
    return wrapper


def _is_wrapper(value) -> bool:
    """Whether ``value`` (a namespace's or Tensor's attribute) is a dispatching wrapper."""
    if isinstance(value, property):
        value = value.fget
    try:
        return value in _ORIGINALS
    except TypeError:  # (unhashable)
        return False


_SAVED: list = []  # (owner, name, original, wrapper) of each wrapped entry point
# (owner id, name) -> (original, wrapper): made once, put on at each install (a mode entered
# in a loop wraps and unwraps each time)
_MADE: dict = {}


# wrapper (a property's getter) -> the attribute it replaced; kept here, not on the wrapper,
# where functools.wraps of another wrapper over it (the profiler's) would copy it
_ORIGINALS: dict = {}


def _original(value):
    """What ``value`` wraps, if it is a wrapper of this module left in place (another wrapper,
    the profiler's, was over it when they were taken off), else ``value``."""
    fget = value.fget if isinstance(value, property) else value
    try:
        return _ORIGINALS.get(fget, value)
    except TypeError:  # (unhashable)
        return value


def _put(owner, name: str, make: Callable) -> None:
    original = _original(owner.__dict__[name])
    made = _MADE.get((id(owner), name))
    if made is None or made[0] is not original:
        wrapper = make(original)
        fget = wrapper.fget if isinstance(wrapper, property) else wrapper
        _ORIGINALS[fget] = original
        made = _MADE[(id(owner), name)] = (original, wrapper)
    setattr(owner, name, made[1])
    _SAVED.append((owner, name, original, made[1]))


def _make_tensor_wrapper(name: str, value):
    d = vars(Tensor)
    if isinstance(value, property):
        return _property_wrapper(name, value.fget, value.fset, value.fdel, value.__doc__)
    if name == "__str__":  # str(t) is torch's Tensor.__repr__ (it has no __str__ of its own)
        return _method_wrapper(value, name, "__repr__")
    if name == "__iter__":
        return _iter_wrapper(value)
    if name in _OPERATORS:
        public = _OPERATORS[name] if _OPERATORS[name] in d else name
        wrapped = _operator_wrapper(value, public)
    elif name in _UNARY:
        wrapped = _method_wrapper(value, name, _UNARY[name])
    else:
        wrapped = _method_wrapper(value, name)
    # torch's name: an alias's (absolute, __getitem__) is its own, __pow__'s is pow
    return _named(wrapped, _TORCH_NAMES.get(name, name))


_TARGETS: list = []  # (owner, name, maker) of every entry point: found once


def _targets() -> list:
    if not _TARGETS:
        for namespace, names in _namespaces():
            for name in names:
                qualname = _qualname(namespace, name)
                make = functools.partial(_make_function_wrapper, name, qualname)
                _TARGETS.append((namespace, name, make))
        for name in (*_tensor_names(), "__str__", "__iter__"):
            _TARGETS.append((Tensor, name, functools.partial(_make_tensor_wrapper, name)))
    return _TARGETS


def _make_function_wrapper(name: str, qualname: str | None, fn: Callable) -> Callable:
    return _named(_function_wrapper(fn, qualname), name)


def _install() -> None:
    """Wraps every entry point (until ``_uninstall``)."""
    if _S.installed:
        return
    _S.installed = True
    _tf._refresh()
    made = _MADE
    for owner, name, make in _targets():
        current = owner.__dict__.get(name)
        pair = made.get((id(owner), name))
        if pair is not None and pair[0] is current:  # (the common case: wrapped before)
            setattr(owner, name, pair[1])
            _SAVED.append((owner, name, current, pair[1]))
        elif current is not None:
            _put(owner, name, make)
    _tf.NOWRAP.clear()
    _tf.NOWRAP.update(get_default_nowrap_functions())


def _uninstall() -> None:
    """Puts every wrapped entry point back (where a wrapper is still on it: one put over it
    since, the profiler's, puts it back itself when it stops)."""
    if not _S.installed:
        return
    while _SAVED:
        owner, name, original, wrapper = _SAVED.pop()
        if owner.__dict__.get(name) is wrapper:
            setattr(owner, name, original)
    _S.installed = False
    _tf._refresh()
    _tf.NOWRAP.clear()
    _tf.NOWRAP.update(get_default_nowrap_functions())


_S.install, _S.uninstall = _install, _uninstall
_tf.NOWRAP.update(get_default_nowrap_functions())
