"""``torch._dynamo.config``: the settings PyTorch programs set around ``torch.compile``.

``cache_size_limit`` (and its newer name ``recompile_limit``) is clgrad's: how many captured
graphs, one per input signature, a compiled function keeps before the oldest is dropped
(``clgrad.compile.CACHE_LIMIT``, 8 as torch's default). The others are kept with torch's
defaults for programs that read or set them, and change nothing: ``suppress_errors`` (clgrad's
compiled functions fall back to eager execution on what they cannot capture, unless
``fullgraph=True``), ``verbose`` (``CLGRAD_DEBUG=1`` logs captures), the dynamic-shape switches
(clgrad captures one graph per shape), ``optimize_ddp``, ... Setting or reading a name torch's
config does not have raises AttributeError, as torch's does.

>>> from clgrad._dynamo import config
>>> config.suppress_errors = True
>>> config.cache_size_limit
8
>>> with config.patch(cache_size_limit=4):
...     config.recompile_limit
4
>>> config.suppress_errors = False
"""

from __future__ import annotations

import contextlib
import sys
import types

from ..compile import CompiledFunction

# clgrad.compile the module (the package's ``clgrad.compile`` attribute is the function)
_compile = sys.modules[CompiledFunction.__module__]

suppress_errors = False
verbose = False
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
fail_on_recompile_limit_hit = False
error_on_recompile = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True
automatic_dynamic_shapes = True
assume_static_by_default = True
specialize_int = False
specialize_float = False
force_parameter_static_shapes = True
force_nn_module_property_static_shapes = True
inline_inbuilt_nn_modules = True
dynamic_shapes = True
guard_nn_modules = True
replay_record_enabled = False
raise_on_ctx_manager_usage = True
allow_unspec_int_on_nn_module = False
skip_nnmodule_hook_guards = True
cache_size_limit: int  # clgrad.compile.CACHE_LIMIT, through the properties below
recompile_limit: int


class _Config(types.ModuleType):
    """This module: its settings can be changed, none added."""

    @property
    def cache_size_limit(self) -> int:
        return _compile.CACHE_LIMIT

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        _compile.CACHE_LIMIT = int(value)

    recompile_limit = cache_size_limit

    def __setattr__(self, name, value):
        if not name.startswith("_") and not hasattr(self, name):
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        super().__setattr__(name, value)

    def __getattr__(self, name):
        raise AttributeError(f"{self.__name__}.{name} does not exist")


def _settings() -> list[str]:
    names = [
        name
        for name, value in vars(sys.modules[__name__]).items()
        if not name.startswith("_") and isinstance(value, (bool, int, float, str))
    ]
    return sorted([*names, "cache_size_limit", "recompile_limit"])


def get_config_copy() -> dict:
    """Every setting and its value.

    >>> get_config_copy()["optimize_ddp"]
    True
    """
    module = sys.modules[__name__]
    return {name: getattr(module, name) for name in _settings()}


class patch(contextlib.ContextDecorator):
    """Settings changed inside a ``with`` block or a decorated function, then restored:
    ``patch(name=value, ...)``, ``patch("name", value)`` or ``patch({"name": value})``.

    >>> from clgrad._dynamo import config
    >>> @config.patch("verbose", True)
    ... def f():
    ...     return config.verbose
    >>> f(), config.verbose
    (True, False)
    """

    def __init__(self, arg1=None, arg2=None, **changes):
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        self.changes = changes
        self._saved: list[dict] = []

    def __enter__(self):
        module = sys.modules[__name__]
        self._saved.append({name: getattr(module, name) for name in self.changes})
        for name, value in self.changes.items():
            setattr(module, name, value)
        return self

    def __exit__(self, *exc):
        module = sys.modules[__name__]
        for name, value in self._saved.pop().items():
            setattr(module, name, value)
        return False


sys.modules[__name__].__class__ = _Config
