"""Creating tensors: from data, filled, ranges, and random (a counter-based generator)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

import numpy as np

from .. import capture
from .. import dtypes as D
from ..autograd.function import Function
from ..backend.base import FILL
from ..device import Device, default_device, resolve
from ..storage import Storage
from ..tensor import Size, Tensor, index_arg
from .core import (
    COMPLEX_HOOKS,
    SCALAR_TYPE_NAMES,
    TYPE_META_NAMES,
    launch,
    overflow_error,
    overflows,
    scalar_fill_value,
)


def _size_keyword(factory):
    """``factory`` (zeros, ones, empty, rand, randn) taking its size as ints, one sequence, or
    PyTorch's ``size=`` keyword."""

    @functools.wraps(factory)
    def sized(*sizes, **kwargs):
        if "size" in kwargs:
            if sizes:
                raise TypeError(f"{factory.__name__}() got multiple values for argument 'size'")
            sizes = (kwargs.pop("size"),)
        return factory(*sizes, **kwargs)

    return sized


def _tensor_options(*, layout: bool = True, pin_memory: bool = True, memory_format=False):
    """A factory that takes PyTorch's other tensor options as its torch counterpart does:
    ``layout`` (``strided``, the one layout here), ``pin_memory`` (accepted as
    ``Tensor.pin_memory()`` is: host memory is what device copies read) and, for ``empty`` and
    the ``*_like`` factories, ``memory_format`` (every layout is row-major, as ``clone``
    explains); a value of the wrong type is torch's TypeError, an option the torch factory
    lacks too.

    >>> clgrad.zeros(2, layout=clgrad.strided, pin_memory=False)
    tensor([0., 0.])
    """
    taken = [key for key, on in zip(OPTION_TYPES, (layout, pin_memory, memory_format)) if on]

    def wrap(factory):
        name = factory.__name__

        @functools.wraps(factory)
        def options(*args, **kwargs):
            for key in taken:
                check_option(name, key, kwargs.pop(key, None))
            return factory(*args, **kwargs)

        return options

    return wrap


# the tensor options a factory (or ``to``) takes beside dtype, device and requires_grad
OPTION_TYPES = {"layout": D.layout, "pin_memory": bool, "memory_format": D.memory_format}


def check_option(name: str, key: str, value) -> None:
    """PyTorch's TypeError for a tensor option ``key`` (``OPTION_TYPES``) given to ``name``
    with a value of another type; None is its default. clgrad's layouts are all strided and
    row-major, so a well-typed value changes nothing.

    >>> from clgrad.ops.creation import check_option
    >>> check_option("to", "memory_format", 1)
    Traceback (most recent call last):
    ...
    TypeError: to(): argument 'memory_format' must be memory_format, not int
    """
    kind = OPTION_TYPES[key]
    if value is not None and not isinstance(value, kind):
        raise TypeError(
            f"{name}(): argument '{key}' must be {kind.__name__}, not {type(value).__name__}"
        )


def _shape(size) -> tuple:
    """A size given as ints or one sequence of ints, checked as PyTorch's argument parser does:
    a float or bool size is a TypeError, a negative one a RuntimeError."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    shape = []
    for n in size:
        if isinstance(n, (bool, float, np.bool_)) or not hasattr(n, "__index__"):
            raise TypeError(
                f"argument 'size' must be tuple of ints, but found element of type "
                f"{type(n).__name__}"
            )
        shape.append(int(n.__index__()))
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {shape}")
    return tuple(shape)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _check_int64(*values):
    """Python ints a tensor is made of must fit int64, as PyTorch's unpacking checks."""
    for v in values:
        if isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


@_tensor_options(memory_format=True)
@_size_keyword
def empty(
    *size: int | Sequence[int],
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of the given size whose elements are not initialised (whatever the new memory
    holds), like ``torch.empty``; the size may be given as separate ints or one sequence.

    >>> x = clgrad.empty(2, 3)
    >>> x.shape, x.dtype
    (clgrad.Size([2, 3]), clgrad.float32)
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(Tensor._empty(_shape(size), dt, resolve(device)), requires_grad)


@_tensor_options()
def full(
    size: int | Sequence[int],
    fill_value: Number,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``, like ``torch.full``; without a
    ``dtype`` it is inferred from the value (bool, int64, or the default float dtype).

    >>> clgrad.full((2, 2), 7)
    tensor([[7, 7],
            [7, 7]])
    >>> clgrad.full((3,), 0.5).dtype
    clgrad.float32
    """
    if isinstance(fill_value, Tensor):  # a 0-d tensor is a number to PyTorch's parser
        if fill_value.ndim:
            raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not Tensor")
        fill_value = fill_value.item()
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
    out = empty(*_shape((size,)), dtype=dtype, device=device)
    launch(FILL, [scalar_fill_value(fill_value, out)], out.dtype, out.dtype, out=out)
    return _finish(out, requires_grad)


@_tensor_options()
@_size_keyword
def zeros(
    *size: int | Sequence[int],
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of the given size filled with 0, in the default dtype unless ``dtype`` is given,
    like ``torch.zeros``.

    >>> clgrad.zeros(2, 3)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    >>> clgrad.zeros((2,), dtype=clgrad.int64)
    tensor([0, 0])
    """
    return full(
        _shape(size),
        0,
        dtype=dtype or D.get_default_dtype(),
        device=device,
        requires_grad=requires_grad,
    )


@_tensor_options()
@_size_keyword
def ones(
    *size: int | Sequence[int],
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of the given size filled with 1, in the default dtype unless ``dtype`` is given,
    like ``torch.ones``.

    >>> clgrad.ones(2, 2)
    tensor([[1., 1.],
            [1., 1.]])
    """
    return full(
        _shape(size),
        1,
        dtype=dtype or D.get_default_dtype(),
        device=device,
        requires_grad=requires_grad,
    )


def _ragged(data, dim=0) -> Exception | None:
    """torch's error for a nested list that is not rectangular: the first sequence (depth
    first) whose length is not its siblings' (ValueError), or a number where its siblings are
    sequences or the other way round (TypeError)."""
    if not isinstance(data, (list, tuple)) or not data:
        return None
    first = data[0]
    want = len(first) if isinstance(first, (list, tuple)) else None
    for item in data:
        got = len(item) if isinstance(item, (list, tuple)) else None
        if got is None and want is not None:
            return TypeError("not a sequence")
        if got is not None and want is None:
            return TypeError(f"'{type(item).__name__}' object cannot be interpreted as a number")
        if got != want:
            return ValueError(f"expected sequence of length {want} at dim {dim + 1} (got {got})")
    for item in data:
        found = _ragged(item, dim + 1)
        if found:
            return found
    return None


def _infer_np(data):
    """The NumPy array and clgrad dtype ``tensor(data)`` starts from, with PyTorch's inference."""
    if isinstance(data, Tensor):  # (its numbers: bfloat16's as float32)
        return data.detach().cpu()._numpy(), data.dtype
    if isinstance(data, (np.ndarray, np.generic)):  # a NumPy scalar keeps its dtype too
        return np.asarray(data), D.as_dtype(data.dtype)
    items_dtype = None
    if isinstance(data, (list, tuple)):
        has_tensor, items_dtype = _scan_items(data)
        if has_tensor:
            data = _to_lists(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise _ragged(data) or ValueError(f"expected a rectangular nested sequence: {e}") from None
    if data is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    big = arr.dtype.kind == "f" and arr.size and np.abs(arr).max() >= 2.0**63
    if arr.dtype == object or arr.dtype == np.uint64 or big:
        try:
            _check_int64(*_flat(data))  # Python ints past int64 (NumPy made them uint64/float)
        except ValueError:
            if not all(isinstance(v, (int, float, bool)) for v in _flat(data)):
                raise
            return np.array(_to_lists(data), dtype=object), None
    if arr.dtype == object:
        raise TypeError(
            f"can't build a tensor from {type(data).__name__} with ragged or non-numeric items"
        )
    if items_dtype is not None:
        return arr, items_dtype
    if arr.dtype.kind == "f":
        return arr, D.get_default_dtype()
    if arr.dtype.kind in "iu":
        return arr, D.int64
    if arr.dtype.kind == "b":
        return arr, D.bool_
    if arr.dtype.kind == "c":
        return arr, D.get_default_dtype().to_complex()
    raise TypeError(f"can't build a tensor from data of NumPy dtype {arr.dtype}")


_PYTHON_NUMBER_TYPES = frozenset((float, int, bool))


def _scan_items(data):
    """(whether nested ``data`` holds a tensor, the dtype PyTorch infers for it where it holds
    tensors or NumPy scalars or arrays, else None): their dtypes promoted with the Python
    numbers' (a float: the default dtype, an int: int64), as torch.tensor infers them."""
    kinds = set(map(type, _flat(data)))
    if kinds <= _PYTHON_NUMBER_TYPES:  # the common case, in one pass at C speed per item
        return False, None
    has_tensor, typed, dt = False, False, None
    for x in _flat(data):
        if isinstance(x, Tensor):
            has_tensor = typed = True
            d = x.dtype
        elif isinstance(x, (np.generic, np.ndarray)):  # before float: np.float64 is one
            typed = True
            d = D.as_dtype(x.dtype)
        elif isinstance(x, bool):
            d = D.bool_
        elif isinstance(x, int):
            d = D.int64
        elif isinstance(x, float):
            d = D.get_default_dtype()
        else:
            continue
        dt = d if dt is None else D.promote_types(dt, d)
    return has_tensor, dt if typed else None


def _flat(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            yield x


def _to_lists(data):
    """Nested sequences as lists of Python numbers: a tensor among the items is a number to
    PyTorch (``tensor([t1, t2])`` of one-element tensors has shape (2,)), and one of more
    elements is refused, as PyTorch refuses it."""
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_to_lists(x) for x in data]
    return data


def _check_fits(arr, dt):
    """Python numbers converted to an integer dtype must fit it (no NaN, no wrap), as PyTorch."""
    if arr.size == 0 or arr.dtype.kind == "b":
        return
    info = np.iinfo(dt.np)
    lo, hi = arr.min(), arr.max()
    # an unsigned dtype takes negatives down to -max, which wrap (c10::overflows)
    low = -info.max if info.min == 0 else info.min
    if arr.dtype.kind == "f":
        bad = not (np.isfinite(lo) and np.isfinite(hi)) or np.isnan(arr).any()
        bad = bad or lo <= low - 1.0 or hi >= info.max + 1.0
    else:
        bad = int(lo) < low or int(hi) > info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def _upload(arr, dt, device):
    out = Tensor._empty(arr.shape, dt, device)
    device.backend.from_numpy(out._record(), arr)
    return out


@_tensor_options(layout=False)
def tensor(
    data: Any,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists or tuples, a NumPy array
    or a tensor), like ``torch.tensor``: Python floats become the default float dtype, ints
    int64 and bools bool, unless ``dtype`` is given.

    >>> clgrad.tensor([[1., 2.], [3., 4.]], device="cpu").sum().item()
    10.0
    >>> clgrad.tensor([1, 2, 3])
    tensor([1, 2, 3])
    >>> clgrad.tensor(2.5).dtype, clgrad.tensor([True]).dtype
    (clgrad.float32, clgrad.bool)
    """
    arr, dt = _infer_np(data)
    if dt is None:  # Python ints past int64: only a floating or bool dtype holds them
        if dtype is None or D.as_dtype(dtype).category == 1:
            raise ValueError("Overflow when unpacking long long")
    dt = D.as_dtype(dtype) if dtype is not None else dt
    if dt.category == 1 and not isinstance(data, (Tensor, np.ndarray)):
        _check_fits(np.asarray(arr), dt)
    elif dt.category != 1 and arr.dtype == object:  # ints past int64 fit a float or bool
        arr = np.array(_to_lists(data), dtype=np.float64)
    dev = (
        resolve(device)
        if device is not None
        else (data.device if isinstance(data, Tensor) else default_device())
    )
    return _finish(_upload(np.asarray(arr), dt, dev), requires_grad)


def as_tensor(
    data: Any, dtype: D.dtype | None = None, device: str | Device | None = None
) -> Tensor:
    """``data`` as a tensor, like ``torch.as_tensor``: a tensor already of that dtype and device
    comes back as is, a cpu NumPy array of the right dtype is shared (no copy), anything else is
    copied as by ``tensor``.

    >>> import numpy as np
    >>> a = np.array([1.0, 2.0])
    >>> t = clgrad.as_tensor(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 2.], dtype=clgrad.float64)
    """
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
    """A cpu tensor that shares memory with ``array`` (same dtype, shape and strides), like
    ``torch.from_numpy``: writes to one show in the other.

    >>> import numpy as np
    >>> a = np.arange(3)
    >>> t = clgrad.from_numpy(a)
    >>> t[0] = 10
    >>> a
    array([10,  1,  2])
    """
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


@_tensor_options(memory_format=True)
def empty_like(
    t: Tensor,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialised tensor with the shape of ``t`` (and its dtype and device unless given),
    like ``torch.empty_like``.

    >>> clgrad.empty_like(clgrad.ones(2, 3, dtype=clgrad.int64)).shape
    clgrad.Size([2, 3])
    """
    return _like(empty, t, dtype, device, requires_grad=requires_grad)


@_tensor_options(memory_format=True)
def zeros_like(
    t: Tensor,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Zeros with the shape of ``t`` (and its dtype and device unless given), like
    ``torch.zeros_like``.

    >>> clgrad.zeros_like(clgrad.tensor([1, 2, 3]))
    tensor([0, 0, 0])
    """
    return _like(zeros, t, dtype, device, requires_grad=requires_grad)


@_tensor_options(memory_format=True)
def ones_like(
    t: Tensor,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Ones with the shape of ``t`` (and its dtype and device unless given), like
    ``torch.ones_like``.

    >>> clgrad.ones_like(clgrad.zeros(2), dtype=clgrad.int64)
    tensor([1, 1])
    """
    return _like(ones, t, dtype, device, requires_grad=requires_grad)


@_tensor_options(memory_format=True)
def full_like(
    t: Tensor,
    fill_value: Number,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``fill_value`` in the shape of ``t`` (and its dtype and device unless given), like
    ``torch.full_like``.

    >>> clgrad.full_like(clgrad.zeros(2, 2), 3)
    tensor([[3., 3.],
            [3., 3.]])
    """
    return full(
        t.shape,
        fill_value,
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def _refuse_bool_range(name: str, dt) -> None:
    """ATen's arange / range kernels take no bool dtype (their dispatch, before any check of
    the bounds)."""
    if dt is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")


@_tensor_options()
def arange(
    start: Number | None = None,
    end: Number | None = None,
    step: Number = 1,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """The values ``start, start + step, ...`` up to but not including ``end`` (``arange(n)``
    counts from 0), like ``torch.arange``: int64 when every bound is an int, else the default
    float dtype.

    >>> clgrad.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> clgrad.arange(1, 2, 0.25)
    tensor([1.0000, 1.2500, 1.5000, 1.7500])
    """
    if end is None:
        if start is None:
            raise TypeError("arange() missing required argument 'end' (pos 1)")
        start, end = 0, start
    elif start is None:  # arange(end=n)
        start = 0
    # (a NumPy scalar as the Python number it holds: np.float32 is no float)
    vals = [v.item() if isinstance(v, (Tensor, np.generic)) else v for v in (start, end, step)]
    if any(isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX for v in vals):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    start, end, step = vals
    if dtype is None:
        is_float = any(isinstance(v, float) for v in vals)
        dtype = D.get_default_dtype() if is_float else D.int64
    dt = D.as_dtype(dtype)
    _refuse_bool_range("arange", dt)
    if not all(math.isfinite(v) for v in vals):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(0, math.ceil((end - start) / step))
    if not dt.is_floating_point:
        # PyTorch computes in the integer type: the bounds and the step truncate. The size is
        # the truncated range's for int64 (arange(0, 5, 1.5, dtype=int64) has 5 elements) and
        # the given range's for the narrower types (4 in int32), as ATen's arange computes it
        start, end, step = int(start), int(end), int(step)
        if dt is D.int64:
            if step == 0:  # (its size divides by the truncated step)
                raise ValueError("step must be nonzero")
            n = max(0, math.ceil((end - start) / step))
        # (a narrower type's step may truncate to 0: n copies of start, as torch's)
    out = Tensor._empty((n,), dt, resolve(device))
    # computed in double where it can be, so large int64 ranges stay exact
    acc = (
        D.int64
        if not dt.is_floating_point
        else (D.float64 if out.device.supports_float64 else D.float32)
    )
    out.device.backend.arange(out._record(), start, step, acc)
    return _finish(out, requires_grad)


@_tensor_options()
def linspace(
    start: Number,
    end: Number,
    steps: int,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included, like
    ``torch.linspace``; the default float dtype unless ``dtype`` is given.

    >>> clgrad.linspace(0, 1, steps=5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    start, end, dt = _space_ends("linspace", start, end, dtype)
    steps = index_arg(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps < 2:
        return _one_or_no_value(start, steps, dt, device, requires_grad)
    if dt is D.bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if dt.is_complex:  # each part spaced on its own, as c10::complex's step * index scales both
        start, end = (_complex_end(v, dt) for v in (start, end))
        rdt = dt.to_real()
        re = _linspace_values(start.real, end.real, steps, rdt)
        im = _linspace_values(start.imag, end.imag, steps, rdt)
        vals = re + 1j * im
    else:
        if not dt.is_floating_point:
            start, end = (_integer_end(v, dt) for v in (start, end))
        elif any(overflows(v, dt) for v in (start, end)):  # (ATen's Scalar to the dtype)
            raise overflow_error(dt)
        vals = _linspace_values(start, end, steps, dt)
    return tensor(
        vals.astype(D.host_type(dt)), dtype=dt, device=device, requires_grad=requires_grad
    )


def _space_ends(name, start, end, dtype):
    """``(start, end, dtype)`` of linspace or logspace (``name``): the ends as Python numbers (a
    0-d tensor gives its value), the dtype given or PyTorch's default (its complex one where an
    end is complex); RuntimeError where a complex end meets a real dtype."""
    ends = []
    for which, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor):
            if v.ndim:
                raise RuntimeError(
                    f"{name} only supports 0-dimensional start and end tensors, but got {which} "
                    f"with {v.ndim} dimension(s)."
                )
            v = v.item()
        elif isinstance(v, np.generic):
            v = v.item()
        ends.append(v)
    inferred = D.get_default_dtype()
    if any(isinstance(v, complex) for v in ends):
        inferred = inferred.to_complex()
    if dtype is None:
        return ends[0], ends[1], inferred
    dt = D.as_dtype(dtype)
    if inferred.is_complex and not dt.is_complex:
        raise RuntimeError(
            f"torch.{name}(): inferred dtype {TYPE_META_NAMES[inferred.name]} can't be safely "
            f"cast to passed dtype {SCALAR_TYPE_NAMES[dt.name]}"
        )
    return ends[0], ends[1], dt


def _one_or_no_value(value, steps, dt, device, requires_grad) -> Tensor:
    """linspace's or logspace's result of ``steps`` 0 or 1, as ATen makes it: empty with no
    check of the ends, or one element filled with ``value`` (fill_'s conversion to ``dt``:
    a float16 one past the range is an infinity, an integer one is range checked; bool and
    complex dtypes too, which the spacing kernels refuse or compute otherwise)."""
    if steps == 0:
        return empty(0, dtype=dt, device=device, requires_grad=requires_grad)
    return full((1,), value, dtype=dt, device=device, requires_grad=requires_grad)


def _complex_end(v, dt) -> complex:
    """An end of a complex linspace or logspace, each part in the range of ``dt``'s parts (ATen's
    Scalar to c10::complex: RuntimeError past it)."""
    v = complex(v)
    if any(overflows(part, dt.to_real()) for part in (v.real, v.imag)):
        raise overflow_error(dt)
    return v


def _linspace_values(start, end, steps, dt) -> np.ndarray:
    """``steps`` (2 or more) values of a real linspace from ``start`` to ``end`` (numbers
    already in ``dt``'s range) as ATen's CPU kernel computes them, a host array."""
    # PyTorch's formula: the first half counts up from start, the second down from end, so
    # the ends are exact and no value passes them (start + i * step alone can overshoot end by
    # an ulp: a kaiser window's sqrt(1 - x^2) was NaN), in the dtype's own arithmetic
    # (integers' in float64 from the ends cast to the dtype, then truncated toward zero)
    i = np.arange(steps)
    half = steps // 2
    with np.errstate(all="ignore"):  # inf and nan ends give what they give, as in torch
        if dt is not D.float16 and dt is not D.bfloat16:  # (integers in float64, as ATen)
            fused = D.float32 if dt is D.float32 else D.float64
            vals = _linspace_fused(start, end, steps, i, half, fused)
        else:  # c10's Half and BFloat16 arithmetic: each operation rounded to the dtype
            r = np.float16 if dt is D.float16 else _bf16_round
            first, last = r(np.float32(start)), r(np.float32(end))
            step = r(r(last - first) / r(np.float32(steps - 1)))
            up = r(first + r(step * r(i.astype(np.float32))))
            down = r(last - r(step * r((steps - 1 - i).astype(np.float32))))
            vals = np.where(i < half, up, down)
    if not dt.is_floating_point:
        vals = np.trunc(vals)
    return vals


def _bf16_round(x):
    """``x`` (float32) rounded to the nearest bfloat16, as float32."""
    return D.bfloat16_values(D.bfloat16_bits(np.asarray(x, dtype=np.float32)))


def _linspace_fused(start, end, steps, i, half, dt):
    """float32/float64 linspace as ATen's CPU kernel computes it: the step in the dtype, then
    ``start + step * i`` (``end - step * (steps - 1 - i)`` in the second half) rounded once, a
    fused multiply-add (torch's build contracts it), not rounded after the product too."""
    ct = np.float32 if dt is D.float32 else np.float64
    first, last = ct(start), ct(end)
    step = (last - first) / ct(steps - 1) if steps > 1 else ct(0)
    k = np.where(i < half, i, -(steps - 1 - i)).astype(np.float64)
    base = np.where(i < half, np.float64(first), np.float64(last))
    if ct is np.float32:  # a float32 step times an index is exact in float64: one rounding
        return (base + np.float64(step) * k).astype(np.float32)
    # float64: the product's rounding error (Dekker's split) added back before the rounding
    prod = np.float64(step) * k
    split = 134217729.0  # 2**27 + 1
    a_hi = np.float64(step) * split
    a_hi = a_hi - (a_hi - np.float64(step))
    a_lo = np.float64(step) - a_hi
    b_hi = k * split
    b_hi = b_hi - (b_hi - k)
    b_lo = k - b_hi
    prod_err = ((a_hi * b_hi - prod) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = base + prod
    sum_err = np.where(np.abs(base) >= np.abs(prod), (base - total) + prod, (prod - total) + base)
    fused = total + (sum_err + prod_err)
    return np.where(np.isfinite(total), fused, total)


def _integer_end(v, dt):
    """An end of an integer linspace in ``dt``, converted as c10 checks a scalar: within the
    dtype's range, where an unsigned dtype also takes an int down to -max (-5 wraps to 251 in
    uint8); RuntimeError past it."""
    info = np.iinfo(dt.np)
    low = -info.max if info.min == 0 and not isinstance(v, (float, np.floating)) else info.min
    if not low <= v <= info.max:
        raise overflow_error(dt)
    return int(np.array(int(v)).astype(dt.np))


@_tensor_options()
def eye(
    n: int,
    m: int | None = None,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """An ``n`` x ``m`` matrix (square when ``m`` is left out) with ones on the diagonal and
    zeros elsewhere, like ``torch.eye``.

    >>> clgrad.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    m = n if m is None else m
    out = zeros(n, m, dtype=dtype, device=device)
    diag = out._view((min(n, m),), (m + 1,), 0)
    launch(FILL, [1], out.dtype, out.dtype, out=diag)
    return _finish(out, requires_grad)


# ---- random ----------------------------------------------------------------------------------
class Generator:
    """A random number generator, like ``torch.Generator``, to pass as ``generator=`` to the
    random functions: Philox4x32-10 state, a seed and how many numbers have been drawn from it.
    The numbers differ from PyTorch's for the same seed.

    >>> g = clgrad.Generator().manual_seed(1)
    >>> a = clgrad.rand(3, generator=g)
    >>> b = clgrad.rand(3, generator=clgrad.Generator().manual_seed(1))
    >>> a.equal(b), g.initial_seed()
    (True, 1)
    """

    DEFAULT_SEED = 67280421310721

    def __init__(self, device: str | Device | None = None, seed: int = DEFAULT_SEED) -> None:
        # PyTorch's one argument is the device; the numbers are the same on every device here
        if isinstance(device, int) and not isinstance(device, bool) and seed == self.DEFAULT_SEED:
            device, seed = None, device  # clgrad's older Generator(seed)
        self.device = resolve(device) if device is not None else resolve("cpu")
        self.manual_seed(seed)

    def seed(self) -> int:
        """Restarts the generator from a seed taken from the operating system; returns it."""
        import os

        return self.manual_seed(int.from_bytes(os.urandom(8), "little")).initial_seed()

    def get_state(self) -> Tensor:
        """The generator's state (its seed and how many numbers it has drawn) as a uint8 cpu
        tensor, for ``set_state``, as ``torch.Generator.get_state`` (PyTorch's holds its own
        generator's state, a different layout).

        >>> g = clgrad.Generator().manual_seed(3)
        >>> state = g.get_state()
        >>> a = clgrad.rand(2, generator=g)
        >>> a.equal(clgrad.rand(2, generator=g.set_state(state)))
        True
        """
        words = np.array([self._seed, self.offset], dtype=np.uint64)
        return tensor(words.view(np.uint8), dtype=D.uint8, device="cpu")

    def set_state(self, new_state: Tensor) -> Generator:
        """Restores a state from ``get_state``; returns the generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not D.uint8:
            raise TypeError("expected a torch.ByteTensor, but got " + type(new_state).__name__)
        raw = np.ascontiguousarray(new_state.detach().cpu()._numpy())
        if raw.shape != (16,):
            raise RuntimeError(
                f"Expected a clgrad generator state of 16 bytes, got {raw.size}: states saved by "
                "PyTorch's generators don't carry over"
            )
        self._seed, self.offset = (int(v) for v in raw.view(np.uint64))
        return self

    def manual_seed(self, seed: int) -> Generator:
        """Restarts the generator from ``seed`` (taken modulo 2**64); returns the generator."""
        self._seed = int(seed) & 0xFFFFFFFFFFFFFFFF  # (seed() is a method)
        self.offset = 0
        return self

    def initial_seed(self) -> int:
        """The seed the generator was last started from."""
        return self._seed

    def take(self, n: int) -> int:
        """Reserves the next ``n`` numbers; returns how many were drawn before them."""
        start = self.offset
        self.offset += n
        return start


default_generator = Generator()


def get_rng_state() -> Tensor:
    """The default generator's state as a uint8 tensor, like ``torch.get_rng_state``.

    >>> state = clgrad.get_rng_state()
    >>> a = clgrad.rand(3)
    >>> clgrad.set_rng_state(state)
    >>> a.equal(clgrad.rand(3))
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restores the default generator's state from ``get_rng_state``, like
    ``torch.set_rng_state``."""
    default_generator.set_state(new_state)


def manual_seed(seed: int) -> Generator:
    """Seeds the default generator, like ``torch.manual_seed``, and returns it; the same seed
    gives the same numbers on every device (not the numbers PyTorch gives).

    >>> _ = clgrad.manual_seed(0)
    >>> a = clgrad.rand(2)
    >>> _ = clgrad.manual_seed(0)
    >>> a.equal(clgrad.rand(2))
    True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds the default generator from the operating system's randomness and returns the
    seed, like ``torch.seed``.

    >>> s = clgrad.seed()
    >>> s == clgrad.initial_seed()
    True
    """
    import os

    return manual_seed(int.from_bytes(os.urandom(8), "little"))._seed


def initial_seed() -> int:
    """The seed the default generator was last started from, like ``torch.initial_seed``.

    >>> _ = clgrad.manual_seed(42)
    >>> clgrad.initial_seed()
    42
    """
    return default_generator.initial_seed()


def _random(kind, size, dtype, device, generator, requires_grad):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if dt.category == 3:
        return COMPLEX_HOOKS["random"](
            kind, _shape(size), dt, resolve(device), generator, requires_grad
        )
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kind}" is only implemented for floating types, got {dt}')
    out = Tensor._empty(_shape(size), dt, resolve(device))
    n = out.numel()
    _fill_random(out, kind, 2 * n if kind == "normal" else n, generator, dt)
    return _finish(out, requires_grad)


def _random_bits(n, device, generator) -> Tensor:
    """The generator's next ``n`` Philox draws, each an int64 in ``[0, 2**32)``."""
    return _fill_random(Tensor._empty((n,), D.int64, device), "bits", n, generator, D.int64)


def _fill_random(out, kind, count, generator, compute) -> Tensor:
    """``out`` filled from the generator's next ``count`` counters (the backend's ``random``)."""
    gen = generator or default_generator
    start = gen.take(count)
    if capture.active is not None and count:  # a replay draws the next numbers, as this call does
        capture.scalar_source(lambda: (gen._seed, gen.take(count)), [(gen, "offset")])
    out.device.backend.random(out._record(), kind, gen._seed, start, compute)
    return out


@_tensor_options()
@_size_keyword
def rand(
    *size: int | Sequence[int],
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    generator: Generator | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform random numbers in ``[0, 1)`` of the given size, like ``torch.rand`` (a floating
    dtype only).

    >>> _ = clgrad.manual_seed(0)
    >>> x = clgrad.rand(2, 3)
    >>> x.shape, bool(((x >= 0) & (x < 1)).all())
    (clgrad.Size([2, 3]), True)
    """
    return _random("uniform", size, dtype, device, generator, requires_grad)


@_tensor_options()
@_size_keyword
def randn(
    *size: int | Sequence[int],
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    generator: Generator | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal random numbers (mean 0, variance 1) of the given size, like
    ``torch.randn`` (a floating dtype only).

    >>> _ = clgrad.manual_seed(0)
    >>> x = clgrad.randn(4, 2, dtype=clgrad.float64)
    >>> x.shape, x.dtype
    (clgrad.Size([4, 2]), clgrad.float64)
    """
    return _random("normal", size, dtype, device, generator, requires_grad)


def _no_grad_for_integers(dt, requires_grad):
    if requires_grad and not dt.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


@_tensor_options()
def randint(
    low: int = 0,
    high: int | Sequence[int] | None = None,
    size: Sequence[int] | None = None,
    *,
    generator: Generator | None = None,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Random integers in ``[low, high)`` of shape ``size``, int64 unless ``dtype`` is given, like
    ``torch.randint``, in each of its forms: ``randint(high, size)``, ``randint(low, high,
    size)``, and with keywords (``randint(high=10, size=(3,))``).

    >>> _ = clgrad.manual_seed(0)
    >>> x = clgrad.randint(0, 10, (2, 5))
    >>> x.shape, x.dtype, bool(((x >= 0) & (x < 10)).all())
    (clgrad.Size([2, 5]), clgrad.int64, True)
    >>> clgrad.randint(3, (4,)).shape, clgrad.randint(high=3, size=(2,), dtype=clgrad.int32).dtype
    (clgrad.Size([4]), clgrad.int32)
    """
    if size is None and isinstance(high, (tuple, list, Size)):
        low, high, size = 0, low, high  # randint(high, size)
    elif high is None:
        low, high = 0, low  # randint(high, size=...)
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (low, high)):
        raise TypeError("randint(): low and high must be ints")
    _check_int64(int(low), int(high))
    if high <= low:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    _no_grad_for_integers(dt, requires_grad)
    dev = resolve(device)
    shape = _shape((size,))
    if dt.category == 1:
        info = np.iinfo(dt.np)
        for name, v in (("from", low), ("to - 1", high - 1)):
            if not info.min <= v <= info.max:
                raise RuntimeError(f"{name} is out of bounds for {dt.name}")
    # integers from the draws' bits, as ATen's random_from_to: one 32-bit draw modulo the span,
    # or 63 bits of two draws past 2**32 (a float uniform's 24 bits times the span reached only
    # 2**24 values: randint(0, 2**31 - 1) gave odd numbers only)
    span, n = high - low, math.prod(shape)
    if span <= 1 << 32:
        r = _random_bits(n, dev, generator).remainder(span)
    else:
        words = _random_bits(2 * n, dev, generator).reshape(n, 2)
        r = ((words[:, 0] & 0x7FFFFFFF) * (1 << 32) + words[:, 1]).remainder(span)
    return _finish((r + low).reshape(shape).to(dt), requires_grad)


@_tensor_options(memory_format=True)
def rand_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``rand`` in the shape of ``input`` (and its dtype and device unless given), like
    ``torch.rand_like``.

    >>> _ = clgrad.manual_seed(0)
    >>> clgrad.rand_like(clgrad.zeros(2, 2, dtype=clgrad.float64)).dtype
    clgrad.float64
    """
    return rand(
        input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        generator=generator,
        requires_grad=requires_grad,
    )


@_tensor_options(memory_format=True)
def randn_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``randn`` in the shape of ``input`` (and its dtype and device unless given), like
    ``torch.randn_like``.

    >>> _ = clgrad.manual_seed(0)
    >>> clgrad.randn_like(clgrad.zeros(3, 1)).shape
    clgrad.Size([3, 1])
    """
    return randn(
        input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        generator=generator,
        requires_grad=requires_grad,
    )


@_tensor_options(memory_format=True)
def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    generator: Generator | None = None,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``randint`` in the shape of ``input`` (and its dtype and device unless given), like
    ``torch.randint_like``: ``randint_like(x, high)`` or ``randint_like(x, low, high)``.

    >>> _ = clgrad.manual_seed(0)
    >>> x = clgrad.randint_like(clgrad.zeros(4, dtype=clgrad.int64), 3)
    >>> x.shape, x.dtype, bool((x < 3).all())
    (clgrad.Size([4]), clgrad.int64, True)
    """
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        input.shape,
        generator=generator,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )


@_tensor_options()
def randperm(
    n: int,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    generator: Generator | None = None,
) -> Tensor:
    """A random permutation of ``0 .. n-1``, int64 unless ``dtype`` is given, like
    ``torch.randperm``.

    >>> _ = clgrad.manual_seed(0)
    >>> sorted(clgrad.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    keys = rand(n, dtype=D.float32, device="cpu", generator=generator).numpy()
    if n < 1 << 32:
        # uniforms in [0, 1) order as their bits: one sort of (bits, index) pairs gives the
        # stable argsort's permutation, 9x faster than argsort of the floats
        pairs = keys.view(np.uint32).astype(np.uint64) << np.uint64(32)
        pairs |= np.arange(n, dtype=np.uint64)
        perm = (np.sort(pairs) & np.uint64(0xFFFFFFFF)).astype(np.int64)
    else:
        perm = np.argsort(keys, kind="stable")
    return tensor(perm, dtype=dtype or D.int64, device=device)


def _as_host(t):
    """A tensor's values as a float64 NumPy array on the host (a copy for an OpenCL tensor)."""
    return np.asarray(t.detach().cpu()._numpy(), dtype=np.float64)


@_tensor_options()
def normal(
    mean: Tensor | float = 0.0,
    std: Tensor | float = 1.0,
    size: Sequence[int] | None = None,
    *,
    generator: Generator | None = None,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal random numbers, like ``torch.normal``: ``normal(mean, std)`` with a tensor for
    either or both (one number per element, broadcast; the result keeps their dtype and
    device), or ``normal(mean, std, size)`` with numbers.

    >>> _ = clgrad.manual_seed(0)
    >>> clgrad.normal(clgrad.zeros(3), 1.0).shape, clgrad.normal(2.0, 0.5, size=(2, 2)).shape
    (clgrad.Size([3]), clgrad.Size([2, 2]))
    >>> clgrad.normal(clgrad.arange(4.0), clgrad.zeros(4))
    tensor([0., 1., 2., 3.])
    """
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments: a size is "
                "needed when mean and std are numbers"
            )
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        z = randn(_shape((size,)), dtype=dtype, device=device, generator=generator)
        return _finish(z * std + mean, requires_grad)
    if size is not None:
        raise TypeError("normal(): size is only taken with a number mean and std")
    if isinstance(std, Tensor):
        if std.numel() and bool((std < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    like = tensors[0] if len(tensors) == 1 else (mean if mean.numel() >= std.numel() else std)
    shape = like.shape
    if len(tensors) == 2:
        shape = np.broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    # mean's dtype where both are tensors: PyTorch draws into an empty_like(mean) in place
    dt = tensors[0].dtype if len(tensors) == 1 else mean.dtype
    z = randn(shape, dtype=dt, device=like.device, generator=generator)
    return (z * std + mean).to(dt).detach()


def bernoulli(
    input: Tensor, p: float | None = None, *, generator: Generator | None = None
) -> Tensor:
    """Draws 1 with probability ``input`` (or ``p`` for every element), else 0, like
    ``torch.bernoulli``; the result has ``input``'s shape, dtype and device.

    >>> _ = clgrad.manual_seed(0)
    >>> clgrad.bernoulli(clgrad.tensor([0.0, 1.0, 1.0, 0.0]))
    tensor([0., 1., 1., 0.])
    """
    prob = input if p is None else p
    if isinstance(prob, Tensor) and prob.numel():
        if bool(((prob < 0) | (prob > 1)).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    elif not isinstance(prob, Tensor) and not 0 <= prob <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={prob}")
    u = rand(input.shape, dtype=D.float32, device=input.device, generator=generator)
    return (u < prob).to(input.dtype)


def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """Draws ``num_samples`` category indices from each row of ``input`` (weights, not
    necessarily normalised), with or without replacement, like ``torch.multinomial``; int64 on
    ``input``'s device. It draws on the host (the weights are read back).

    >>> _ = clgrad.manual_seed(0)
    >>> clgrad.multinomial(clgrad.tensor([0.0, 0.0, 5.0]), 2, replacement=True)
    tensor([2, 2])
    >>> sorted(clgrad.multinomial(clgrad.tensor([1.0, 1.0, 1.0]), 3).tolist())
    [0, 1, 2]
    """
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {input.dtype}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    # (the rows named: a distribution over no category has no -1 to infer)
    w = _as_host(input).reshape(input.shape[0] if input.ndim == 2 else 1, input.shape[-1])
    k = w.shape[1]
    if not replacement and num_samples > k:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (w.sum(1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows = w.shape[0]
    if not rows:  # no distribution: no draw
        out = np.zeros((0, num_samples), np.int64)
    elif replacement:
        u = _as_host(rand(rows, num_samples, dtype=D.float64, device="cpu", generator=generator))
        cdf = np.cumsum(w, axis=1)
        cdf /= cdf[:, -1:]
        out = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
        out = np.minimum(out, k - 1)
    else:
        if ((w > 0).sum(1) < num_samples).any():
            raise RuntimeError(
                "invalid multinomial distribution (with replacement=False, not enough "
                "non-negative category to sample)"
            )
        # exponential races: the smallest -log(u) / w are a draw without replacement
        u = _as_host(rand(rows, k, dtype=D.float64, device="cpu", generator=generator))
        with np.errstate(divide="ignore"):
            keys = -np.log(np.maximum(u, 1e-300)) / w
        out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    out = out.reshape(*input.shape[:-1], num_samples)
    return tensor(out.astype(np.int64), dtype=D.int64, device=input.device)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson-distributed counts with rates ``input``, like ``torch.poisson``; the result has
    ``input``'s shape, dtype and device. It draws on the host with NumPy, seeded from
    ``generator``.

    >>> _ = clgrad.manual_seed(0)
    >>> x = clgrad.poisson(clgrad.full((1000,), 4.0))
    >>> x.dtype, bool(abs(x.mean() - 4.0) < 0.3), clgrad.poisson(clgrad.zeros(2))
    (clgrad.float32, True, tensor([0., 0.]))
    """
    lam = _as_host(input)
    if (lam < 0).any() or not np.isfinite(lam).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    gen = generator or default_generator
    # a NumPy generator seeded from the next numbers of ours, so the draws follow its seed
    seed = [gen._seed & 0xFFFFFFFF, gen._seed >> 32, gen.take(1), 0x5EED]
    counts = np.random.default_rng(seed).poisson(lam)
    return tensor(counts.astype(D.host_type(input.dtype)), dtype=input.dtype, device=input.device)


@_tensor_options()
def logspace(
    start: Number,
    end: Number,
    steps: int,
    base: float = 10.0,
    *,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end`` evenly spaced on a log scale,
    like ``torch.logspace``.

    >>> clgrad.logspace(0, 3, steps=4)
    tensor([   1.,   10.,  100., 1000.])
    >>> clgrad.logspace(0, 2, 3, base=2)
    tensor([1., 2., 4.])
    """
    start, end, dt = _space_ends("logspace", start, end, dtype)
    steps = index_arg(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    with np.errstate(all="ignore"):  # (a negative base's fractional powers are NaN, as in C)
        if steps < 2:  # ATen fills one element with base ** start, in double (or complex)
            if dt.is_complex:
                first = complex(np.power(np.complex128(base), np.complex128(start)))
            else:
                first = float(np.power(np.float64(base), np.float64(start)))
            return _one_or_no_value(first, steps, dt, device, requires_grad)
        if dt is D.bool_:
            raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
        if dt.is_complex:
            start, end = (_complex_end(v, dt) for v in (start, end))
            vals = np.power(np.complex128(base), _halfway_exponents(start, end, steps))
        elif not dt.is_floating_point:
            # ATen's integer kernel: the ends converted to the dtype (wrapped), the powers of
            # base as a float in double, converted to the dtype as C converts
            start, end = (_integer_end(v, dt) for v in (start, end))
            exps = _halfway_exponents(float(start), float(end), steps)
            vals = _c_double_to_int(np.power(np.float64(np.float32(base)), exps), dt)
        else:
            if any(overflows(v, dt) for v in (start, end)):  # (ATen's Scalar to the dtype)
                raise overflow_error(dt)
            vals = np.power(float(base), np.linspace(float(start), float(end), steps))
        vals = vals.astype(D.host_type(dt))  # (past a float16's range: infinities)
    return tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)


def _halfway_exponents(start, end, steps) -> np.ndarray:
    """logspace's exponents as ATen's kernel steps them: up from ``start`` for the first half,
    down from ``end`` for the second (both ends exact)."""
    i = np.arange(steps)
    step = (end - start) / (steps - 1)
    return np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))


def _c_double_to_int(vals, dt) -> np.ndarray:
    """float64 ``vals`` converted to integer dtype ``dt`` as PyTorch's x86 build converts them
    (cvttsd2si): truncated toward zero into int64 for int64, into int32 for the narrower types,
    whose low bits they keep; a value past that range, or NaN, becomes its lowest."""
    wide = np.int64 if dt is D.int64 else np.int32
    info = np.iinfo(wide)
    fits = np.isfinite(vals) & (vals > float(info.min) - 1) & (vals < float(info.max) + 1)
    ints = np.where(fits, np.trunc(np.where(fits, vals, 0)), 0).astype(wide)
    return np.where(fits, ints, info.min).astype(wide).astype(dt.np)


class ToDevice(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, device):
        ctx.device = x.device
        if x.device.is_cl and device.is_cl and x.device.platform == device.platform:
            # devices sharing a context copy buffer to buffer; the source is a private copy,
            # which nothing queued later on x's device can overwrite before the copy reads it
            src = x.clone() if x.numel() else x
            out = Tensor._empty(x._shape, x.dtype, device)
            if device.backend.copy_from(
                out._record(), src._record(), x.device.backend, src._storage
            ):
                return out
        if x.dtype.category == 3:  # (read through its real view)
            host = x._numpy() if x.device.is_cl else x._numpy().copy()
            return _upload(host, x.dtype, device)
        host = x.device.backend.to_numpy(x._record())  # a cl device's is already a fresh copy
        if device.is_cpu and x.dtype is not D.bfloat16:  # (bfloat16's host array: its bits)
            return from_numpy(host if x.device.is_cl else host.copy())
        return _upload(host, x.dtype, device)

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.device), None


def to_device(x, device):
    return ToDevice.apply(x, device)


# ---- PyTorch's legacy constructors: Tensor(...), FloatTensor(...), ... ---------------------
def _legacy_new(dt, args, device=None) -> Tensor:
    """``torch.Tensor(...)`` (``dt`` None: the default dtype) or ``torch.FloatTensor(...)``: no
    argument gives an empty tensor, ints (or a Size) an uninitialised one of that size, a tensor
    an alias of it (``FloatTensor`` only takes float32 ones), a sequence or NumPy array a copy."""
    device = resolve(device)
    first = args[0] if args else None
    if len(args) == 1 and isinstance(first, Tensor):
        if dt is not None and first.dtype is not dt:
            raise TypeError(f"expected {dt} (got {first.dtype})")
        return first.detach()  # PyTorch's shares the storage too
    dt = dt or D.get_default_dtype()
    if not args:
        return Tensor._empty((0,), dt, device)
    if len(args) > 1 or isinstance(first, (int, Size)):
        return Tensor._empty(_shape(args), dt, device)
    if len(args) == 1 and isinstance(first, (list, tuple, np.ndarray)):
        return tensor(first, dtype=dt, device=device)
    raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")


Tensor._legacy_new = staticmethod(_legacy_new)


class _LegacyType(type):
    """The type of ``FloatTensor`` & co.: calling one makes a cpu tensor of its dtype (as
    ``Tensor(...)`` makes one of the default dtype), and ``isinstance(t, FloatTensor)`` asks
    whether ``t`` is a float32 cpu tensor, as in PyTorch."""

    def __call__(cls, *args, device=None):
        return _legacy_new(cls.dtype, args, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.is_cpu


def _legacy_type(name, dt):
    doc = f"""PyTorch's legacy ``{name}``: ``{name}(data)`` or ``{name}(*sizes)`` makes a {dt.name}
    tensor; ``isinstance(t, {name})`` asks whether ``t`` is a {dt.name} cpu tensor.

    >>> isinstance(clgrad.{name}([1, 0]), clgrad.{name}), clgrad.{name}(2, 3).shape
    (True, clgrad.Size([2, 3]))
    """
    return _LegacyType(name, (), {"dtype": dt, "__doc__": doc, "__module__": "clgrad"})


FloatTensor = _legacy_type("FloatTensor", D.float32)
DoubleTensor = _legacy_type("DoubleTensor", D.float64)
HalfTensor = _legacy_type("HalfTensor", D.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", D.bfloat16)
LongTensor = _legacy_type("LongTensor", D.int64)
IntTensor = _legacy_type("IntTensor", D.int32)
ShortTensor = _legacy_type("ShortTensor", D.int16)
CharTensor = _legacy_type("CharTensor", D.int8)
ByteTensor = _legacy_type("ByteTensor", D.uint8)
BoolTensor = _legacy_type("BoolTensor", D.bool_)
LEGACY_TYPES = (
    FloatTensor,
    DoubleTensor,
    HalfTensor,
    BFloat16Tensor,
    LongTensor,
    IntTensor,
    ShortTensor,
    CharTensor,
    ByteTensor,
    BoolTensor,
)


def _triangle_indices(lower, row, col, offset, dtype, device):
    if dtype not in (None, D.int64, D.int32):
        raise RuntimeError(f'"{"tril" if lower else "triu"}_indices" not implemented for {dtype}')
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return tensor(np.stack([rows, cols]), dtype=dtype or D.int64, device=device)


@_tensor_options()
def tril_indices(row, col, offset=0, *, dtype=None, device=None) -> Tensor:
    """The ``(2, N)`` row and column indices of the lower triangle (below diagonal
    ``offset``) of a ``row`` x ``col`` matrix, like ``torch.tril_indices``.

    >>> clgrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices(True, row, col, offset, dtype, device)


@_tensor_options()
def triu_indices(row, col, offset=0, *, dtype=None, device=None) -> Tensor:
    """The ``(2, N)`` row and column indices of the upper triangle (above diagonal
    ``offset``) of a ``row`` x ``col`` matrix, like ``torch.triu_indices``.

    >>> clgrad.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _triangle_indices(False, row, col, offset, dtype, device)


@_tensor_options()
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor holding ``s`` in the default float dtype (or ``dtype``), like
    ``torch.scalar_tensor``.

    >>> clgrad.scalar_tensor(3)
    tensor(3.)
    """
    return full((), s, dtype=dtype or D.get_default_dtype(), device=device,
                requires_grad=requires_grad)  # fmt: skip


@_tensor_options()
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialised tensor with the given ``size`` and ``stride`` (over new memory just
    large enough), like ``torch.empty_strided``.

    >>> clgrad.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs {len(size)}")
    span = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    base = empty(span, dtype=dtype, device=device)
    out = Tensor._make(base._storage, size, stride, 0, base.dtype)
    return _finish(out, requires_grad)


def range_inclusive(
    start: Number,
    end: Number,
    step: Number = 1,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """PyTorch's deprecated ``torch.range``: ``start`` to ``end`` with ``end`` included, in the
    default float dtype unless ``dtype`` is given, with torch's deprecation UserWarning.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    import warnings

    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior "
        "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
        "values in [start, end).",
        UserWarning,
        stacklevel=3,  # through factory_out
    )
    if dtype is not None:
        _refuse_bool_range("range", D.as_dtype(dtype))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    out = Tensor._empty((n,), dt, resolve(device))
    acc = (
        D.int64
        if not dt.is_floating_point
        else (D.float64 if out.device.supports_float64 else D.float32)
    )
    if not dt.is_floating_point:
        start, step = int(start), int(step)
    out.device.backend.arange(out._record(), start, step, acc)
    return _finish(out, requires_grad)


def asarray(
    obj: Any,
    *,
    dtype: D.dtype | None = None,
    device: str | Device | None = None,
    copy: bool | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``obj`` (a tensor, NumPy array, buffer, scalar or nested sequence) as a tensor, like
    ``torch.asarray``: a tensor or cpu NumPy array is shared when dtype and device already match
    and ``copy`` is not True; ``copy=False`` where a copy is needed raises ValueError.

    >>> import numpy as np
    >>> a = np.array([1.0, 2.0], dtype=np.float32)
    >>> t = clgrad.asarray(a)
    >>> a[0] = 7.0
    >>> t
    tensor([7., 2.])
    >>> clgrad.asarray([1, 2], dtype=clgrad.float32, copy=True)
    tensor([1., 2.])
    """
    dt = D.as_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        dev = resolve(device) if device is not None else obj.device
        same = (dt is None or dt == obj.dtype) and dev == obj.device
        if copy is False and not same:
            raise ValueError("can't alias tensor from obj: a copy was requested off (copy=False)")
        if same and not copy:
            out = obj
        else:
            out = obj.detach().to(device=dev, dtype=dt or obj.dtype, copy=True)
    elif isinstance(obj, (np.ndarray, bytes, bytearray, memoryview)):
        arr = np.asarray(obj) if isinstance(obj, np.ndarray) else np.frombuffer(obj, np.uint8)
        shared = as_tensor(arr, dtype=dt, device=device)
        aliased = shared.device.is_cpu and shared.dtype.np == arr.dtype
        if copy is False and not aliased:
            raise ValueError("can't alias NumPy array: a copy is needed for this dtype or device")
        out = shared.clone() if copy else shared
    else:
        if copy is False:
            raise ValueError(f"can't alias {type(obj).__name__}: a copy is needed (copy=False)")
        out = tensor(obj, dtype=dt, device=device)
    if requires_grad:
        out = out.requires_grad_(True)
    return out


_WARNED_READONLY = [False]


def frombuffer(
    buffer: Any,
    *,
    dtype: D.dtype,
    count: int = -1,
    offset: int = 0,
    requires_grad: bool = False,
) -> Tensor:
    """A 1-D cpu tensor sharing memory with ``buffer`` (any object with the buffer protocol),
    ``count`` elements of ``dtype`` from byte ``offset`` (-1: to the end), like
    ``torch.frombuffer``; a read-only buffer (``bytes``) warns once, as torch does, and is copied.

    >>> b = bytearray(b"\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00")
    >>> t = clgrad.frombuffer(b, dtype=clgrad.int32)
    >>> b[0] = 9
    >>> t
    tensor([9, 2], dtype=clgrad.int32)
    """
    import warnings

    dt = D.as_dtype(dtype)
    size = memoryview(buffer).nbytes
    if size == 0 or (count != 0 and offset >= size) or offset < 0:
        raise ValueError(
            f"both buffer length ({size}) and offset ({offset}) must be greater than 0 and "
            "the offset must be smaller than the buffer length"
        )
    if count < 0 and (size - offset) % dt.itemsize:
        raise ValueError(
            f"buffer length ({size - offset} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({dt.itemsize})"
        )
    arr = np.frombuffer(buffer, dtype=dt.np, count=count, offset=offset)
    if not arr.flags.writeable:
        if not _WARNED_READONLY[0]:
            _WARNED_READONLY[0] = True
            warnings.warn(
                "The given buffer is not writable, and PyTorch does not support non-writable "
                "tensors. This means you can write to the underlying (supposedly non-writable) "
                "buffer using the tensor. You may want to copy the buffer to protect its data or "
                "make it writable before converting it to a tensor. This type of warning will be "
                "suppressed for the rest of this program.",
                UserWarning,
                stacklevel=2,
            )
        # torch aliases read-only memory as writable; NumPy will not write through it, so
        # clgrad copies a read-only buffer (the values are the same, writes don't reach it)
        arr = arr.copy()
    return _finish(from_numpy(arr), requires_grad)


def _window(name, n, periodic, dtype, device, requires_grad, values):
    """A window of ``n`` points: ``values(m)`` gives the symmetric window of ``m`` points in
    float64 (NumPy); periodic windows are the first ``n`` of ``n + 1``, as torch computes them."""
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if n <= 1:
        arr = np.ones(n)
    else:
        arr = values(n + 1)[:n] if periodic else values(n)
    return tensor(arr.astype(D.host_type(dt)), dtype=dt, device=device, requires_grad=requires_grad)


def _cosine_sum(*coefs):
    def values(m):
        k = 2 * np.pi * np.arange(m) / (m - 1)
        return sum(c * np.cos(i * k) for i, c in enumerate(coefs))

    return values


@_tensor_options()
def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (N - 1))``, like ``torch.hann_window``
    (``periodic``: N is ``window_length + 1`` and the last point is dropped).

    >>> clgrad.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    f = _cosine_sum(0.5, -0.5)
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, f)


@_tensor_options()
def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window, ``alpha - beta cos(2 pi n / (N - 1))``, like
    ``torch.hamming_window``.

    >>> clgrad.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    f = _cosine_sum(alpha, -beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, f)


@_tensor_options()
def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window, ``0.42 - 0.5 cos(2 pi n/(N-1)) + 0.08 cos(4 pi n/(N-1))``, like
    ``torch.blackman_window``.

    >>> clgrad.blackman_window(5, periodic=False)[1:4]
    tensor([0.3400, 1.0000, 0.3400])
    """
    f = _cosine_sum(0.42, -0.5, 0.08)
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, f)


@_tensor_options()
def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Bartlett (triangular) window, ``1 - |2n / (N - 1) - 1|``, like
    ``torch.bartlett_window``.

    >>> clgrad.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """

    def f(m):
        return 1 - np.abs(2 * np.arange(m) / (m - 1) - 1)

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, f)


@_tensor_options()
def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / I0(beta)``, like
    ``torch.kaiser_window``.

    >>> clgrad.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """

    def f(m):
        return np.kaiser(m, beta)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)
