"""``torch.overrides``: the ``__torch_function__`` protocol's helpers, for libraries that
write functions taking tensor-like objects.

clgrad's own functions and Tensor methods do not dispatch to ``__torch_function__`` (clgrad's
Tensor defines none, and its ops do not look for one), so a tensor subclass behaves as
clgrad's Tensor. What this module gives is the protocol for functions that ask for it
themselves, as torch's: ``has_torch_function(args)`` is True when an argument's type defines
``__torch_function__`` (a plain clgrad Tensor does not), and ``handle_torch_function`` calls
those overrides, subclasses before their bases, until one returns something other than
``NotImplemented`` (TypeError when none does).

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

import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .tensor import Tensor

__all__ = [
    "get_ignored_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
]


def _overrides(arg_type: type) -> bool:
    return getattr(arg_type, "__torch_function__", None) is not None


def _get_overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """The arguments whose ``__torch_function__`` is to be called, in order: one per type,
    a subclass before its base classes, otherwise left to right (NEP 18's order, as torch's)."""
    types: set[type] = set()
    args: list[Any] = []
    for arg in relevant_args:
        arg_type = type(arg)
        if arg_type in types or not _overrides(arg_type):
            continue
        types.add(arg_type)
        index = len(args)
        for i, old in enumerate(args):
            if issubclass(arg_type, type(old)):
                index = i
                break
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` has a type that defines ``__torch_function__``
    (never a plain clgrad Tensor).

    >>> class T:
    ...     __torch_function__ = classmethod(lambda cls, func, types, args=(), kw=None: 0)
    >>> has_torch_function((clgrad.zeros(1), 2)), has_torch_function((clgrad.zeros(1), T()))
    (False, True)
    """
    return any(_overrides(type(a)) for a in relevant_args)


def has_torch_function_unary(obj: Any) -> bool:
    """``has_torch_function((obj,))``, for a function of one argument.

    >>> has_torch_function_unary(clgrad.zeros(1))
    False
    """
    return _overrides(type(obj))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``, with the arguments given one by one.

    >>> has_torch_function_variadic(clgrad.zeros(1), None, 3)
    False
    """
    return has_torch_function(args)


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of the overriding
    arguments among ``relevant_args``, subclasses first, and return the first result that is
    not ``NotImplemented``; torch's TypeError when every one declines. A plain method (not a
    classmethod) warns DeprecationWarning, as torch.

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
    overloaded = _get_overloaded_args(relevant_args)
    types = tuple(map(type, overloaded))
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn(
                "Defining your `__torch_function__ as a plain method is deprecated and "
                "will be an error in future, please define it as a classmethod.",
                DeprecationWarning,
                stacklevel=2,
            )
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    func_name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(
        f"no implementation found for '{func_name}' on types that implement "
        f"__torch_function__: {[type(arg) for arg in overloaded]}"
    )


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a clgrad Tensor (or subclass) or its type defines
    ``__torch_function__``.

    >>> is_tensor_like(clgrad.zeros(1)), is_tensor_like(6), is_tensor_like(None)
    (True, False, False)
    """
    return isinstance(inp, Tensor) or hasattr(inp, "__torch_function__")


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
