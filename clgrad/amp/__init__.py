"""``clgrad.amp``: mixed precision as ``torch.amp`` has it, ``autocast``, ``GradScaler``, and
``custom_fwd`` / ``custom_bwd`` for custom Functions.

``"cuda"`` names every OpenCL device (the device type of a tensor on ``cl:N``; available where
there is one), ``"cpu"`` the host device.
Autocast's lower-precision dtype is float16 or bfloat16, by default PyTorch's: float16 for
``"cuda"``, bfloat16 for ``"cpu"``; another dtype warns and leaves the region disabled, as
PyTorch does for a dtype a device type does not support.

>>> model = clgrad.nn.Linear(3, 2)
>>> with clgrad.autocast("cpu", dtype=clgrad.float16):
...     out = model(clgrad.ones(4, 3))
...     loss = clgrad.nn.functional.mse_loss(out, clgrad.zeros(4, 2))
>>> out.dtype, loss.dtype
(clgrad.float16, clgrad.float32)
"""

from __future__ import annotations

import functools
import warnings

from .. import cl
from .. import dtypes as D
from ..ops import autocast as _ac
from ..tensor import Tensor
from .grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "clear_autocast_cache",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_available",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

DEVICE_TYPES = ("cuda", "cpu")
# clgrad's own name of the OpenCL kind: ``x.device.type`` of an OpenCL tensor is "cl", and code
# passes it as it would CUDA's "cuda" (``torch.autocast(device_type=x.device.type)``)
ALIASES = {"cl": "cuda"}


def _kind(device_type) -> str:
    """``device_type`` (a string) as autocast keys its state: "cl" is "cuda"."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    device_type = str(device_type)
    return ALIASES.get(device_type, device_type)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast runs on ``device_type``, as ``torch.amp.is_autocast_available``.

    >>> clgrad.amp.is_autocast_available("cpu")
    True
    """
    return ALIASES.get(device_type, device_type) in DEVICE_TYPES


class autocast:
    """Runs the ops of its region in mixed precision (see ``clgrad.ops.autocast``), as
    ``torch.autocast``: a context manager, or a decorator of a function.

    >>> with clgrad.autocast("cpu", dtype=clgrad.float16):
    ...     (clgrad.ones(2, 3) @ clgrad.ones(3, 2)).dtype
    clgrad.float16
    """

    def __init__(
        self,
        device_type: str,
        dtype: D.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ):
        device_type = _kind(device_type)
        if device_type not in DEVICE_TYPES:
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self.device = device_type
        self.fast_dtype = _ac.DEFAULT_DTYPES[device_type] if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled  # clgrad keeps no cast cache: nothing to switch
        if not self._enabled:
            return
        if device_type == "cuda" and not cl.is_available():
            warnings.warn(
                "CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2
            )
            self._enabled = False
        elif self.fast_dtype not in _ac.SUPPORTED_DTYPES:
            warnings.warn(
                f"In {device_type.upper()} autocast, but the target dtype is not supported. "
                f"Disabling autocast.\n{device_type.upper()} Autocast only supports dtype of "
                f"clgrad.bfloat16, clgrad.float16 currently (got {self.fast_dtype}).",
                stacklevel=2,
            )
            self._enabled = False

    def __enter__(self):
        s = _ac.state
        self._previous = (s.enabled[self.device], s.dtype[self.device])
        s.enabled[self.device] = self._enabled
        if self._enabled:
            s.dtype[self.device] = self.fast_dtype
            _ac.active[0] += 1
        return self

    def __exit__(self, *exc):
        s = _ac.state
        s.enabled[self.device], s.dtype[self.device] = self._previous
        if self._enabled:
            _ac.active[0] -= 1
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)

        return decorated


def _device_type(device_type) -> str:
    device_type = ALIASES.get(device_type, device_type)
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread (``"cuda"`` by default, as
    ``torch.is_autocast_enabled()``).

    >>> with clgrad.autocast("cpu", dtype=clgrad.float16):
    ...     clgrad.is_autocast_enabled("cpu"), clgrad.is_autocast_enabled()
    (True, False)
    """
    return _ac.state.enabled[_device_type(device_type)]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turns autocast on or off for ``device_type`` (``set_autocast_enabled(enabled)``: for
    ``"cuda"``), as ``torch.set_autocast_enabled``; ``autocast`` restores it on exit."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    device_type = _device_type(device_type)
    was = _ac.state.enabled[device_type]
    _ac.state.enabled[device_type] = bool(enabled)
    _ac.active[0] += bool(enabled) - was


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts ``device_type``'s matrix products to, as
    ``torch.get_autocast_dtype`` (by default float16 for ``"cuda"``, bfloat16 for ``"cpu"``).

    >>> clgrad.get_autocast_dtype("cuda")
    clgrad.float16
    """
    return _ac.state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Sets the dtype ``get_autocast_dtype`` answers, as ``torch.set_autocast_dtype``."""
    _ac.state.dtype[_device_type(device_type)] = dtype


def get_autocast_gpu_dtype():
    """``get_autocast_dtype("cuda")``, PyTorch's older name."""
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    """``get_autocast_dtype("cpu")``, PyTorch's older name."""
    return get_autocast_dtype("cpu")


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")``, PyTorch's older name."""
    return is_autocast_enabled("cpu")


def clear_autocast_cache() -> None:
    """PyTorch drops its cache of cast weights; clgrad keeps none, so there is nothing to do."""


def _cast_floating(value, device_type: str, dtype):
    """``value`` with its floating tensors of ``device_type`` (float64 aside) cast to ``dtype``,
    through tuples, lists and dicts, as ``custom_fwd``'s ``cast_inputs`` casts them."""
    if isinstance(value, Tensor):
        eligible = (
            value.is_floating_point()
            and _ac.device_type_of(value) == device_type
            and value.dtype is not D.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, dict):
        return {k: _cast_floating(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_cast_floating(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorates a custom ``Function``'s ``forward`` for autocast, as ``torch.amp.custom_fwd``:
    it records the autocast state that ``custom_bwd`` restores in backward; with
    ``cast_inputs``, inside an enabled region the floating inputs are cast to that dtype and
    forward runs with autocast off.

    >>> class Double(clgrad.autograd.Function):
    ...     @staticmethod
    ...     @clgrad.amp.custom_fwd(device_type="cpu", cast_inputs=clgrad.float32)
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @clgrad.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> with clgrad.autocast("cpu", dtype=clgrad.float16):
    ...     Double.apply(clgrad.ones(2, dtype=clgrad.float16)).dtype
    clgrad.float32
    """
    device_type = _kind(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorated(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        if cast_inputs is None or not enabled:
            ctx._fwd_used_autocast = enabled if cast_inputs is None else False
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        with autocast(device_type, enabled=False):
            return fwd(
                *_cast_floating(args, device_type, cast_inputs),
                **_cast_floating(kwargs, device_type, cast_inputs),
            )

    return decorated


def custom_bwd(bwd=None, *, device_type: str):
    """Decorates a custom ``Function``'s ``backward``: it runs under the autocast state its
    forward ran in (``custom_fwd``), as ``torch.amp.custom_bwd``."""
    device_type = _kind(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorated(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorated


def deprecated_device_classes(device_type: str, default_dtype) -> tuple[type, type]:
    """``(autocast, GradScaler)`` as ``torch.<device_type>.amp`` spells them (deprecated):
    ``clgrad.amp``'s, for ``device_type``, with ``default_dtype`` and PyTorch's FutureWarning.

    >>> ac, _ = deprecated_device_classes("cpu", D.bfloat16)
    >>> ac.__name__, ac.__module__
    ('autocast', 'clgrad.cpu.amp')
    """

    def warn(name):
        warnings.warn(
            f"`torch.{device_type}.amp.{name}(args...)` is deprecated. "
            f"Please use `torch.amp.{name}('{device_type}', args...)` instead.",
            FutureWarning,
            stacklevel=3,
        )

    class DeviceAutocast(autocast):
        __doc__ = f'``clgrad.amp.autocast("{device_type}", ...)`` (deprecated).'

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warn("autocast")
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class DeviceGradScaler(GradScaler):
        __doc__ = f'``clgrad.amp.GradScaler("{device_type}", ...)`` (deprecated).'

        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):  # fmt: skip
            warn("GradScaler")
            super().__init__(
                device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled
            )

    for cls, name in ((DeviceAutocast, "autocast"), (DeviceGradScaler, "GradScaler")):
        cls.__name__ = cls.__qualname__ = name
        cls.__module__ = f"clgrad.{device_type}.amp"
    return DeviceAutocast, DeviceGradScaler
