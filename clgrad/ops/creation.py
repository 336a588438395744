"""Creating tensors: from data, filled, ranges, and random (a counter-based generator)."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function
from ..device import default_device, resolve
from ..storage import Storage
from ..tensor import Tensor, _backend
from .core import launch


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(n) for n in size)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty(*size, dtype=None, device=None, requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(Tensor._empty(_shape(size), dt, resolve(device)), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
    out = empty(*_shape((size,)), dtype=dtype, device=device)
    launch("fill", [fill_value], out.dtype, out.dtype, out=out)
    return _finish(out, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return full(
        _shape(size),
        0,
        dtype=dtype or D.get_default_dtype(),
        device=device,
        requires_grad=requires_grad,
    )


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(
        _shape(size),
        1,
        dtype=dtype or D.get_default_dtype(),
        device=device,
        requires_grad=requires_grad,
    )


def _infer_np(data):
    """The NumPy array and clgrad dtype ``tensor(data)`` starts from, with PyTorch's inference."""
    if isinstance(data, Tensor):
        return data.detach().cpu().numpy(), data.dtype
    if isinstance(data, np.ndarray):
        return data, D.as_dtype(data.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _to_lists(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected a rectangular nested sequence of numbers: {e}") from None
    if arr.dtype == object:
        raise TypeError(
            f"can't build a tensor from {type(data).__name__} with ragged or non-numeric items"
        )
    if arr.dtype.kind == "f":
        return arr, D.get_default_dtype()
    if arr.dtype.kind in "iu":
        return arr, D.int64
    if arr.dtype.kind == "b":
        return arr, D.bool_
    raise TypeError(f"can't build a tensor from data of NumPy dtype {arr.dtype}")


def _flat(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            yield x


def _to_lists(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_to_lists(x) for x in data]
    return data


def _upload(arr, dt, device):
    out = Tensor._empty(arr.shape, dt, device)
    _backend(device).from_numpy(out, arr)
    return out


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, NumPy arrays).

    >>> clgrad.tensor([[1., 2.], [3., 4.]], device="cpu").sum().item()
    10.0
    """
    arr, dt = _infer_np(data)
    dt = D.as_dtype(dtype) if dtype is not None else dt
    dev = (
        resolve(device)
        if device is not None
        else (data.device if isinstance(data, Tensor) else default_device())
    )
    return _finish(_upload(np.asarray(arr), dt, dev), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory where it can (a tensor or a cpu NumPy array of the right dtype)."""
    dt = D.as_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        return data.to(device=device or data.device, dtype=dt or data.dtype)
    dev = resolve(device) if device is not None else default_device()
    if isinstance(data, np.ndarray) and dev.is_cpu and (dt is None or dt.np == data.dtype):
        try:
            return from_numpy(data)
        except (ValueError, TypeError):
            pass
    return tensor(data, dtype=dt, device=dev)


def from_numpy(array: np.ndarray) -> Tensor:
    """A cpu tensor that shares memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dt = D.as_dtype(array.dtype)
    item = array.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array with array.copy().)"
        )
    if any(s % item for s in array.strides):
        raise ValueError(
            "given numpy array strides not a multiple of the element byte size. "
            "Copy the numpy array to reallocate the memory."
        )
    strides = tuple(s // item for s in array.strides)
    span = 0 if array.size == 0 else 1 + sum((n - 1) * s for n, s in zip(array.shape, strides))
    base = np.lib.stride_tricks.as_strided(array, (span,), (item,))
    storage = Storage(resolve("cpu"), base, span * item)
    return Tensor._make(storage, array.shape, strides, 0, dt)


def _like(fn, t, dtype, device, **kw):
    return fn(t.shape, dtype=dtype or t.dtype, device=device or t.device, **kw)


def empty_like(t, dtype=None, device=None, requires_grad=False):
    return _like(empty, t, dtype, device, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return _like(zeros, t, dtype, device, requires_grad=requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return _like(ones, t, dtype, device, requires_grad=requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return full(
        t.shape,
        fill_value,
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in vals)
        dtype = D.get_default_dtype() if is_float else D.int64
    dt = D.as_dtype(dtype)
    n = max(0, math.ceil((end - start) / step))
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    out = Tensor._empty((n,), dt, resolve(device))
    # computed in double where it can be, so large int64 ranges stay exact
    acc = (
        D.int64
        if not dt.is_floating_point
        else (D.float64 if out.device.supports_float64 else D.float32)
    )
    _backend(out.device).arange(out, start, step, acc)
    return _finish(out, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    out = Tensor._empty((steps,), dt, resolve(device))
    acc = D.float64 if out.device.supports_float64 else D.float32
    _backend(out.device).arange(out, float(start), float(step), acc)
    return _finish(out, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    m = n if m is None else m
    out = zeros(n, m, dtype=dtype, device=device)
    diag = out._view((min(n, m),), (m + 1,), 0)
    launch("fill", [1], out.dtype, out.dtype, out=diag)
    return _finish(out, requires_grad)


# ---- random ----------------------------------------------------------------------------------
class Generator:
    """Philox4x32-10 state: a seed and how many numbers have been drawn from it."""

    DEFAULT_SEED = 67280421310721

    def __init__(self, seed=DEFAULT_SEED):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.offset = 0
        return self

    def initial_seed(self):
        return self.seed

    def take(self, n):
        start = self.offset
        self.offset += n
        return start


default_generator = Generator()


def manual_seed(seed):
    """Seeds the generator; the same seed gives the same numbers on every device."""
    return default_generator.manual_seed(seed)


def seed():
    import os

    return manual_seed(int.from_bytes(os.urandom(8), "little")).seed


def initial_seed():
    return default_generator.initial_seed()


def _random(kind, size, dtype, device, generator, requires_grad):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f'"{kind}" is only implemented for floating types, got {dt}')
    out = Tensor._empty(_shape(size), dt, resolve(device))
    gen = generator or default_generator
    n = out.numel()
    start = gen.take(2 * n if kind == "normal" else n)
    _backend(out.device).random(out, kind, gen.seed, start, dt)
    return _finish(out, requires_grad)


def rand(*size, dtype=None, device=None, generator=None, requires_grad=False):
    return _random("uniform", size, dtype, device, generator, requires_grad)


def randn(*size, dtype=None, device=None, generator=None, requires_grad=False):
    return _random("normal", size, dtype, device, generator, requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, generator=None):
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high <= low:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    dev = resolve(device)
    acc = D.float64 if dev.supports_float64 else D.float32
    u = _random("uniform", _shape((size,)), acc, dev, generator, False)
    span = high - low
    r = (u * span).floor().clamp(0, span - 1) + low
    return r.to(D.as_dtype(dtype) if dtype is not None else D.int64)


def rand_like(t, dtype=None, device=None):
    return rand(t.shape, dtype=dtype or t.dtype, device=device or t.device)


def randn_like(t, dtype=None, device=None):
    return randn(t.shape, dtype=dtype or t.dtype, device=device or t.device)


def randint_like(t, low, high=None, dtype=None, device=None):
    return randint(low, high, t.shape, dtype=dtype or t.dtype, device=device or t.device)


def randperm(n, dtype=None, device=None, generator=None):
    keys = rand(n, dtype=D.float32, device="cpu", generator=generator)
    return tensor(np.argsort(keys.numpy(), kind="stable"), dtype=dtype or D.int64, device=device)


class ToDevice(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, device):
        ctx.device = x.device
        host = _backend(x.device).to_numpy(x)  # a cl device's is already a fresh copy
        if device.is_cpu:
            return from_numpy(host if x.device.is_cl else host.copy())
        return _upload(host, x.dtype, device)

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.device), None


def to_device(x, device):
    return ToDevice.apply(x, device)
