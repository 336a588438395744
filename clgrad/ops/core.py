"""What every op needs: broadcasting, device and dtype checks, and launching a primitive."""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import warnings

import numpy as np

from .. import dtypes as D
from ..autograd.grad_mode import is_grad_enabled
from ..backend.base import COPY, FILL, MapKernel
from ..tensor import Tensor, new_view, real_view, wrap_dim

Number = numbers.Number
# what PyTorch takes as a Scalar: NumPy's bool too (a comparison of NumPy scalars gives one)
SCALARS = (numbers.Number, np.bool_)


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def broadcast_shapes(*shapes) -> tuple:
    """PyTorch's broadcasting; a mismatch names every shape (a shape may be one int, as
    ``torch.broadcast_shapes(5, (2, 1))`` takes it)."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i] and out[i] != 1 and n != 1:
                shown = " and ".join(str(list(x)) for x in shapes)
                raise RuntimeError(
                    f"The size of tensor a ({out[i]}) must match the size of tensor b ({n}) at "
                    f"non-singleton dimension {i}: shapes {shown} do not broadcast"
                )
            if n != 1:
                out[i] = n
    return tuple(out)


def same_device(*xs):
    """The one device of the tensors among ``xs``; 0-d cpu tensors may join any device."""
    dev = None
    for x in xs:
        if isinstance(x, Tensor) and not (x.ndim == 0 and x.device.is_cpu):
            if dev is None:
                dev = x.device
            elif x.device != dev:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, {dev} and {x.device}!"
                )
    if dev is None:
        dev = next((x.device for x in xs if isinstance(x, Tensor)), None)
    return dev


def as_operand(x, device):
    """A tensor on ``device``, or a Python number (0-d cpu tensors become numbers elsewhere)."""
    if isinstance(x, Tensor):
        if x.device != device and x.ndim == 0 and x.device.is_cpu:
            return x.item()
        return x
    if isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, Number):
        return x.item() if hasattr(x, "item") else float(x)
    if isinstance(x, np.bool_):  # (no Number: ``a * (s > 1)``) PyTorch takes it as a float
        return float(x)
    raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")


# PyTorch's names for dtypes in its messages (c10::ScalarType)
SCALAR_TYPE_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}

# how ATen's messages print a tensor's dtype() (caffe2::TypeMeta's names: "expected dtype float
# for `end` but got dtype long int")
TYPE_META_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}

# PyTorch's C names in "value cannot be converted to type ... without overflow"
_C_NAMES = {
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}
_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
}


def refuse_bool(x, kernel: str | None) -> None:
    """An ATen CPU kernel (``kernel``; None: one that takes bool) refusing a bool ``x``, as
    its dtype dispatch does, with its message.

    >>> refuse_bool(clgrad.tensor([True]), "median_out")
    Traceback (most recent call last):
    NotImplementedError: "median_out" not implemented for 'Bool'
    """
    if kernel is not None and x.dtype is D.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def overflows(value, dt) -> bool:
    """Whether ``dt`` cannot hold the Python number ``value`` (c10::overflows: NaN and inf fit
    a floating dtype; an unsigned dtype takes negatives down to -max, which wrap; a complex
    number fits a real dtype where its imaginary part is zero and its real part fits)."""
    if dt.category == 0:
        return False
    if isinstance(value, complex) and dt.category != 3:
        if value.imag != 0:
            return True
        value = value.real
    if dt.category == 2:
        big = _FLOAT_MAX.get(dt.name)
        return big is not None and math.isfinite(value) and abs(value) > big
    if dt.category == 3:  # (complex: any number fits, as for float)
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return True
    bits = 8 * dt.itemsize
    if isinstance(value, float):  # a float must lie in the range itself: no wrap (-2.7 to uint8)
        lo = -(1 << (bits - 1)) if dt.is_signed else 0
        return not lo <= value <= (1 << (bits - dt.is_signed)) - 1
    if dt.is_signed:
        return not -(1 << (bits - 1)) <= value < (1 << (bits - 1))
    return not -(1 << bits) < value < (1 << bits)


def overflow_error(dt) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_C_NAMES[dt.name]} without overflow")


_SCALAR_INTS = (-(1 << 63), 1 << 64)  # the Python ints a Scalar holds: int64's and uint64's


def check_scalar(value) -> None:
    """PyTorch's OverflowError for a Python int that is neither an int64 nor a uint64 (its
    conversion to a Scalar, before anything else looks at the number)."""
    if type(value) is int and not _SCALAR_INTS[0] <= value < _SCALAR_INTS[1]:
        raise OverflowError(
            "int too big to convert" if value > 0 else "can't convert negative int to unsigned"
        )


def kernel_scalar(value, dt, exact=False):
    """The Python number ``value`` as a kernel argument of compute dtype ``dt``: a float for a
    floating dtype, an int (truncated toward zero, wrapped to ``dt``'s width as C converts)
    for an integer one, 0 or 1 for bool. ``exact``: the value is stored as is (fill, copy), and
    one that ``dt`` cannot hold raises RuntimeError as PyTorch does. An int that is neither an
    int64 nor a uint64 raises OverflowError, as PyTorch's conversion to a Scalar does. A
    complex number is true where nonzero for bool; a real dtype takes it only where its
    imaginary part is zero (c10's checked conversion raises for a part it would drop)."""
    check_scalar(value)
    if isinstance(value, complex) and dt.category != 3:
        if dt.category == 0:
            return int(value != 0)
        if value.imag != 0:
            raise overflow_error(dt)
        value = value.real
    if exact and overflows(value, dt):
        raise overflow_error(dt)
    if dt.category == 2:
        return float(value)
    if dt.category == 0:
        return int(bool(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise overflow_error(dt)
        value = int(value)
    bits = 8 * dt.itemsize
    value = int(value) & ((1 << bits) - 1)
    if dt.is_signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def empty(shape, dt, device) -> Tensor:
    return Tensor._empty(shape, dt, device)


# the Python number types a kernel takes as they are (a subclass, a NumPy scalar: as_operand)
PYTHON_NUMBERS = (bool, int, float)


# PyTorch fills a one-element cpu tensor through its scalar_fill, which converts the number to
# float16 or bfloat16 through double with no range check (past the range: an infinity, so
# ``full((1,), -1e9, dtype=float16)`` is -inf), where its fill kernel, for any other size,
# raises; the other dtypes are range checked either way. A 0-d fill stays checked (PyTorch's
# is not): index_fill and scatter make their number a 0-d tensor through ``full`` and rely on
# its check, where PyTorch's kernels check the number themselves
_UNCHECKED_ONE_ELEMENT_FILLS = (D.float16, D.bfloat16)


def scalar_fill_value(value, t):
    """The number ``full``/``fill_`` store in ``t``: for a one-element float16 or bfloat16 ``t``
    as scalar_fill converts it, rounded to its dtype (an infinity past its range); else
    ``value`` itself, which the fill's launch range checks.

    >>> scalar_fill_value(1e6, clgrad.zeros(1, dtype=clgrad.float16))
    inf
    """
    dt = t.dtype
    if dt not in _UNCHECKED_ONE_ELEMENT_FILLS or t.numel() != 1 or not t.ndim:
        return value
    if isinstance(value, (Tensor, bool, np.bool_)):
        return value
    check_scalar(value)
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        if value.imag != 0:  # (its conversion to double comes first, and refuses that part)
            raise overflow_error(D.float64)
        value = value.real
    return D.held(value, dt)


def launch(kernel: MapKernel, operands, out_dtype, compute=None, out=None, shape=None, key=None):
    """Runs elementwise ``kernel`` over broadcast ``operands`` into a new tensor (or ``out``).

    ``compute`` is one dtype for every operand or a list with one per operand. ``key``: a
    declared op's ``layout_key`` of these operands, under which a new output's plan is kept.
    """
    if shape is None:
        done = _launch_fast(kernel, operands, out_dtype, compute, out, key)
        if done is not None:
            return done
    if out_dtype.category == 3:  # a complex copy or fill: through the real view
        return complex_launch(kernel, operands, out_dtype, out, shape)
    if out is None:
        device = same_device(*operands)
    else:
        device = out.device
        same_device(out, *operands)
    operands = [as_operand(x, device) for x in operands]
    if compute is None:
        compute = D.result_type(*operands)
    if not isinstance(compute, (list, tuple)):
        compute = [compute] * len(operands)
    if shape is None:
        shape = broadcast_shapes(*(x._shape for x in operands if isinstance(x, Tensor)))
    # Python numbers reach a kernel in the Python type of their compute dtype, converted
    # (and, where stored as is, range-checked) once, here
    exact = kernel is FILL or kernel is COPY
    operands = [
        x if isinstance(x, Tensor) else kernel_scalar(x, dt, exact)
        for x, dt in zip(operands, compute)
    ]
    if not device.is_cpu and (out_dtype is D.float64 or D.float64 in compute):
        device.require(out_dtype, *compute)
    if out is None:
        out = Tensor._empty(shape, out_dtype, device)
    else:
        _check_writable(out, shape, operands)
        operands = [_unalias(x, out) for x in operands]
    device.backend.elementwise(
        kernel,
        out._record(),
        [x._record() if isinstance(x, Tensor) else x for x in operands],
        compute,
    )
    return out


# the broadcast shape of operand shapes seen before (``_launch_fast``)
_BROADCASTS: dict[tuple, tuple] = {}
# what ``_launch_fast`` decided for a new output of a layout seen before: (shape, out dtype,
# device, the backend's plan, per operand None or a number's compute dtype, whether numbers are
# stored as they are), by (kernel, out dtype, compute, per operand (dtype, shape, strides, id of
# its device, which the entry keeps alive) or its number type), or by a declared op's
# ``layout_key``; an op on tensors of a layout seen before only fills in buffers, offsets and
# numbers (``launch_kept``)
_PREPARED: dict[tuple, tuple] = {}
_PREPARED_SIZE = 4096
# the heads of a declared op's keys (``layout_key``), which no key of ``_launch_fast``'s own
# has: a new output's, an in-place write's
_OP_KEY = object()
INTO = object()


def _operands_key(head: list, operands) -> tuple:
    """``head`` and, per operand, (dtype, shape, strides, id of its device) or number type."""
    for x in operands:
        if isinstance(x, Tensor):
            head.append((x.dtype, x._shape, x._stride, id(x._storage.device)))
        else:
            head.append(type(x))
    return tuple(head)


def layout_key(kernel, operands, head=_OP_KEY) -> tuple:
    """The ``_PREPARED`` key of a declared op's ``kernel`` over ``operands``: what decides its
    result and compute dtypes (each operand's dtype and shape, each number's type, the default
    float dtype) and its launch (strides, devices), without working the dtypes out. ``head``
    tells a new output's key from an in-place write's (``INTO``)."""
    key = [head, kernel, D._default_float]
    for x in operands:  # _operands_key inline: the path of every declared op
        if isinstance(x, Tensor):
            key.append((x.dtype, x._shape, x._stride, id(x._storage.device)))
        else:
            key.append(type(x))
    return tuple(key)


def launch_kept(key, operands) -> Tensor | None:
    """A new output of ``operands`` by the launch ``_launch_fast`` kept under ``key``, or None
    where it kept none: only buffers, offsets and numbers are filled in."""
    got = _PREPARED.get(key)
    if got is None:
        return None
    shape, out_dtype, device, plan, numbers, exact = got
    records = _records(operands, numbers, exact)
    out = Tensor._empty(shape, out_dtype, device)
    s = out._storage  # out._record() without the call
    out_record = new_view((s.data, 0, out._shape, out._stride, out_dtype, s.nbytes))
    device.backend.run_elementwise(plan, out_record, records)
    return out


def launch_kept_into(key, operands) -> bool:
    """Writes ``kernel(operands)`` into ``operands[0]`` (an in-place op) by the launch
    ``_launch_fast`` kept under ``key`` (``layout_key(kernel, operands, INTO)``); False where it
    kept none, or where another operand shares the written storage (``launch`` may have to copy
    it first: ``_unalias``)."""
    got = _PREPARED.get(key)
    if got is None:
        return False
    storage = operands[0]._storage
    for x in operands[1:]:
        if isinstance(x, Tensor) and x._storage is storage:
            return False
    device, plan, numbers, exact = got[2:]
    records = _records(operands, numbers, exact)
    device.backend.run_elementwise(plan, records[0], records)
    return True


def _launch_fast(kernel, operands, out_dtype, compute, out, key=None):
    """``launch`` in the common case, kept short: tensors on one device, of shapes that
    broadcast (a bias, a 0-d weight) to ``out``'s shape where it is given, and Python numbers;
    None for any other case (``launch`` takes it, and raises what it raises). A new output's
    plan is kept under ``key`` (a declared op's ``layout_key``), or under a key of its own; an
    in-place write's (``out`` is ``operands[0]``) under ``key`` where one is given."""
    if out is None and key is None:
        if type(compute) is list:
            compute = tuple(compute)
        key = _operands_key([kernel, out_dtype, compute], operands)
        done = launch_kept(key, operands)
        if done is not None:
            return done
    first = out
    if first is None:
        for first in operands:  # the first tensor: ``lr * w.grad`` has a number first
            if isinstance(first, Tensor):
                break
        else:
            return None
    shape, device = first._shape, first._storage.device
    storage = None if out is None else out._storage
    broadcast = False
    for x in operands:
        if isinstance(x, Tensor):
            if x._storage.device is not device:
                return None
            if x._shape != shape:
                broadcast = True
            if x._storage is storage and x is not out:  # may need a copy first (_unalias)
                return None
        elif type(x) not in PYTHON_NUMBERS:
            return None
    if broadcast:
        shapes = tuple([x._shape for x in operands if isinstance(x, Tensor)])
        full = _BROADCASTS.get(shapes)
        if full is None:
            full = broadcast_shapes(*shapes)  # raises for shapes that don't broadcast
            if len(_BROADCASTS) >= 1024:  # shapes that keep changing: start over
                _BROADCASTS.clear()
            _BROADCASTS[shapes] = full
        if out is not None and full != shape:  # launch's _check_writable raises
            return None
        shape = full
    if out is not None and 0 in out._stride:  # may overlap itself (_check_writable)
        return None
    if compute is None:
        compute = D.result_type(*operands)
    if not isinstance(compute, (list, tuple)):
        compute = [compute] * len(operands)
    if out_dtype.category == 3:  # never kept: ``launch`` takes complex outputs
        return None
    exact = kernel is FILL or kernel is COPY
    numbers = tuple(None if isinstance(x, Tensor) else dt for x, dt in zip(operands, compute))
    records = _records(operands, numbers, exact)
    if not device.is_cpu and (out_dtype is D.float64 or D.float64 in compute):
        device.require(out_dtype, *compute)
    backend = device.backend
    if out is None:
        out = Tensor._empty(shape, out_dtype, device)
    out_record = out._record()
    plan = backend.elementwise_plan(kernel, out_record, records, compute)
    if key is not None:  # (always for a new output: made above where none was given)
        if len(_PREPARED) >= _PREPARED_SIZE:  # layouts that keep changing: start over
            _PREPARED.clear()
        _PREPARED[key] = (out._shape, out_dtype, device, plan, numbers, exact)
    backend.run_elementwise(plan, out_record, records)
    return out


def _records(operands, numbers, exact) -> list:
    """What a backend sees of ``operands``: a View of each tensor (``numbers`` None there), each
    Python number as a kernel argument of its compute dtype (``numbers``; ``kernel_scalar``)."""
    records = []
    for x, dt in zip(operands, numbers):
        if dt is None:
            s = x._storage  # x._record() without the call: this loop runs for every op
            records.append(new_view((s.data, x._offset, x._shape, x._stride, x.dtype, s.nbytes)))
        else:
            records.append(kernel_scalar(x, dt, exact))
    return records


# what ops do with complex operands, computed on their real views: set by ops.complex (above
# this layer), reached only where a dtype check met a complex dtype (a miss or an error path)
COMPLEX_HOOKS: dict = {}


class ComplexOperands(NotImplementedError):
    """Raised where an op's dtype resolution meets a complex dtype (a cache miss: real ops
    never pass there): the op's entry point catches it and computes on the real view
    (``ops.complex``); one that reaches the user is an op clgrad does not compute for
    complex tensors."""

    def __init__(self, name="this op"):
        super().__init__(f"clgrad: {name} is not implemented for complex tensors")


def complex_view(r) -> Tensor:
    """The complex elements of a real (..., 2) tensor whose last stride is 1 (and others
    even), an unrecorded view (``view_as_complex`` records one)."""
    v = Tensor._make(
        r._storage,
        r._shape[:-1],
        tuple(s // 2 for s in r._stride[:-1]),
        r._offset // 2,
        r.dtype.to_complex(),
    )
    v._counter = r._counter
    return v


def complex_part(t, k: int) -> Tensor:
    """The real (``k`` 0) or imaginary (1) parts of complex ``t``, an unrecorded view."""
    v = Tensor._make(
        t._storage, t._shape, tuple(2 * s for s in t._stride), 2 * t._offset + k, t.dtype.to_real()
    )
    v._counter = t._counter
    return v


def complex_launch(kernel, operands, out_dtype, out=None, shape=None) -> Tensor:
    """``launch`` of a copy or a fill into a complex output: the parts written through the
    real view (a real source fills the real parts, zeros the imaginary ones)."""
    if kernel is not COPY and kernel is not FILL:
        raise ComplexOperands(kernel.name)
    x = operands[0]
    if out is None:
        device = same_device(*operands)
        if shape is None:
            shape = x._shape if isinstance(x, Tensor) else ()
        out = Tensor._empty(shape, out_dtype, device)
        if out_dtype.to_real() is D.float64:
            device.require(D.float64)
    elif shape is not None or isinstance(x, Tensor):
        _check_writable(out, shape or x._shape, operands)
    if isinstance(x, Tensor) and x.ndim == 0 and x.device != out.device:
        x = x.item()
    rdt = out_dtype.to_real()
    if isinstance(x, Tensor) and x.dtype.category == 3:
        if x.device != out.device:
            x = x.to(out.device)
        launch(COPY, [real_view(x)], rdt, x.dtype.to_real(), out=real_view(out))
    elif isinstance(x, Tensor):
        launch(COPY, [x], rdt, x.dtype, out=complex_part(out, 0))
        launch(FILL, [0], rdt, rdt, out=complex_part(out, 1))
    else:
        value = complex(x)
        launch(FILL, [value.real], rdt, rdt, out=complex_part(out, 0))
        launch(FILL, [value.imag], rdt, rdt, out=complex_part(out, 1))
    return out


def complex_nonzero(t) -> Tensor:
    """Where complex ``t`` is true, as C++'s cast to bool: either part nonzero (2j too)."""
    return (complex_part(t, 0) != 0) | (complex_part(t, 1) != 0)


def warn_complex_to_real(stacklevel=4) -> None:
    warnings.warn(
        "Casting complex values to real discards the imaginary part",
        UserWarning,
        stacklevel=stacklevel,
    )


def copy_into(out, src) -> None:
    """``out[...] = src`` (broadcast, converted to out's dtype), an unrecorded write."""
    if src.device != out.device:
        src = src.to(out.device)
    if src.dtype.category == 3 and out.dtype is D.bool_:  # (nothing discarded: no warning)
        src = complex_nonzero(src)
    elif src.dtype.category == 3 and out.dtype.category != 3:
        warn_complex_to_real()
        src = complex_part(src, 0)
    launch(COPY, [src], out.dtype, src.dtype, out=out)
    out._bump_version()


def _check_writable(out, shape, operands):
    if tuple(shape) != out._shape:
        try:
            full = broadcast_shapes(out._shape, shape)
        except RuntimeError:
            full = None
        if full != out._shape:
            raise RuntimeError(
                f"output with shape {list(out._shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
    check_internal_overlap(out)


def check_internal_overlap(out) -> None:
    """PyTorch's refusal to write into a tensor whose elements share memory (an expanded one);
    an empty tensor writes nothing: no overlap, as PyTorch's."""
    if any(s == 0 and n > 1 for n, s in zip(out._shape, out._stride)) and 0 not in out._shape:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )


def _unalias(x, out):
    """An operand over ``out``'s memory, as PyTorch's in-place and ``out=`` ops take it: the
    same elements in the same layout are read where they are written; a layout that shares
    some but not all of out's block of memory raises RuntimeError (PyTorch's
    ``assert_no_partial_overlap``); any other operand of out's storage (a layout too irregular
    to tell) is copied first, so the op never reads an element it has already written."""
    if not isinstance(x, Tensor) or x._storage is not out._storage:
        return x
    return x.clone() if _no_partial_overlap(x, out) == "too hard" else x


def _no_partial_overlap(x, out) -> str:
    """``_overlap(x, out)``, RuntimeError where it is partial (PyTorch's message)."""
    status = _overlap(x, out)
    if status == "partial":
        raise RuntimeError(_OVERLAP)
    return status


_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)


def check_no_overlap(out, args, full: bool = True) -> None:
    """PyTorch's refusal of an in-place write that reads its own memory through another
    argument (the tensors among ``args``, nested in lists and tuples too): RuntimeError where
    one lies over part of ``out``'s elements, or (``full``: its ``assert_no_overlap``, as the
    indexed writes check their sources) over the same elements; ``full=False`` allows that
    (``assert_no_partial_overlap``, as elementwise ops check their operands).

    >>> x = clgrad.arange(4.0)
    >>> x[:2].index_add_(0, clgrad.tensor([0, 1]), x[2:])  # another part of x: fine
    tensor([2., 4.])
    >>> x.index_add_(0, clgrad.tensor([0, 1, 2, 3]), x)
    Traceback (most recent call last):
    ...
    RuntimeError: unsupported operation: some elements of the input tensor and the written-to ...
    """
    for t in _tensors_in(args):
        if t._storage is out._storage:
            status = _no_partial_overlap(t, out)
            if full and status == "full":
                raise RuntimeError(_OVERLAP)


def _dense(t) -> bool:
    """Whether ``t``'s elements fill one block of memory, each its own (PyTorch's
    ``is_non_overlapping_and_dense``): its strides, smallest first, are those of a
    contiguous tensor."""
    expected = 1
    for stride, n in sorted((s, n) for n, s in zip(t._shape, t._stride) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _overlap(x, out) -> str:
    """How operand ``x`` lies over ``out``, of one storage (PyTorch's ``get_overlap_status``):
    "full" (the same elements, same layout), "none", "partial" or "too hard"."""
    if x._shape == out._shape and x._stride == out._stride and x._offset == out._offset:
        return "full"
    if not x.numel() or not out.numel():
        return "none"
    if not (_dense(x) and _dense(out)):
        return "too hard"
    # byte ranges: a view in another dtype counts its offset in its own elements
    x_begin, out_begin = x._offset * x.dtype.itemsize, out._offset * out.dtype.itemsize
    x_end = x_begin + x.numel() * x.dtype.itemsize
    out_end = out_begin + out.numel() * out.dtype.itemsize
    if x_begin == out_begin and x_end == out_end:
        return "full" if x._stride == out._stride else "partial"
    return "partial" if x_begin < out_end and out_begin < x_end else "none"


def _is_int(d) -> bool:
    # what PyTorch's argument parser takes as an int: no bool, no float
    return (
        isinstance(d, numbers.Integral)
        and not isinstance(d, bool)
        or (isinstance(d, Tensor) and d.ndim == 0 and not d.dtype.is_floating_point)
    )


def _not_int(name, dim, what="int"):
    return TypeError(f"{name}(): argument 'dim' must be {what}, not {type(dim).__name__}")


class _EveryDim:
    """The default ``dim`` of ops whose PyTorch signatures have no None for it (prod, max,
    min): left out, the op reduces every dim; an explicit None is a TypeError."""

    def __repr__(self):
        return "<every dim>"


EVERY_DIM = _EveryDim()


def int_dim(name, dim, none=False):
    """``dim`` where PyTorch's signature takes one int (argmax, prod, max): TypeError, as its
    argument parser, for a tuple, a float, a bool (and None unless ``none``)."""
    if (dim is None and none) or _is_int(dim):
        return int(dim) if isinstance(dim, Tensor) else dim
    raise _not_int(name, dim)


def normalize_dims(dim, ndim, empty_is_all=True, name="reduction") -> tuple:
    """``dim`` (None, an int or a sequence of ints) as a sorted tuple of non-negative dims;
    ``dim=()`` reduces over every dim (PyTorch's legacy rule for sum, mean, ...), or over none
    without ``empty_is_all`` (all, any)."""
    if dim is None:
        return tuple(range(ndim))
    # one plain int, alone or in a sequence: the commonest dim argument (softmax's, mean's,
    # a gradient's sum_to), on the path of every such op
    one = dim[0] if type(dim) in (tuple, list) and len(dim) == 1 else dim
    if type(one) is int:
        return (wrap_dim(one, ndim),)
    if _is_int(dim):
        dim = (int(dim),)
    elif not isinstance(dim, (tuple, list)) or not all(_is_int(d) for d in dim):
        raise _not_int(name, dim, "tuple of ints")
    if len(dim) == 0:
        return tuple(range(ndim)) if empty_is_all else ()
    dims = tuple(sorted({wrap_dim(int(d), ndim) for d in dim}))
    if len(dims) != len(tuple(dim)):
        raise RuntimeError(f"dim {list(dim)} appears multiple times in the list of dims")
    return dims


def sum_to(g, shape):
    """Sums a broadcast gradient back to ``shape`` (the input's)."""
    shape = tuple(shape)
    if g._shape == shape:
        return g
    lead = g.ndim - len(shape)
    if lead < 0:  # an input with leading size-1 dims past g's (a value assigned to a slice)
        return sum_to(g, shape[-lead:]).reshape(shape)
    dims = list(range(lead)) + [
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    ]
    if dims and len(dims) == lead:  # only leading dims: the sum has the shape already
        # a 0-d input's gradient (a scalar weight, a bias of ()) sums every dim: the same
        # reduction without parsing a list of dims (a few us on every such backward)
        return g.sum(dim=dims) if shape else g.sum()
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape) if lead or tuple(g.shape) != shape else g


# ---- PyTorch's keyword conventions: NumPy's names and out= -------------------------------------
# PyTorch's argument parser takes NumPy's names for these parameters everywhere it takes them
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
_NUMPY_KEYWORDS = frozenset(NUMPY_NAMES)


def numpy_names(name, kwargs) -> dict:
    """``kwargs`` with NumPy's ``axis``/``keepdims`` renamed ``dim``/``keepdim``, as PyTorch's
    argument parser reads them (TypeError where both spellings are given)."""
    if not kwargs or _NUMPY_KEYWORDS.isdisjoint(kwargs):  # a test in C: every keyword call
        return kwargs
    out = {}
    for k, v in kwargs.items():
        k2 = NUMPY_NAMES.get(k, k)
        if k2 in out:
            raise TypeError(f"{name}() got multiple values for argument '{k2}'")
        out[k2] = v
    return out


def _tensors_in(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors_in(v)


def check_out(name, out, args, kwargs, overlap: str | None = None):
    """PyTorch's refusal of ``out=`` under autograd: RuntimeError where grad mode is on and an
    argument or ``out`` itself requires grad (its result could not be differentiated); and of
    an argument over ``out``'s memory, before any work: over part of it with ``overlap``
    "partial" (an elementwise op: PyTorch's TensorIterator refuses it), over any of it with
    "any" (an op that reads its inputs while it writes: cat, gather, index_select, ...);
    "input partial": the first argument over part of it, any other over any of it (the
    indexed writes, which copy their input into out first)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
    inputs = list(_tensors_in((*args, *kwargs.values())))
    if is_grad_enabled() and any(t._requires_grad for t in (*inputs, *outs)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    if overlap == "input partial":
        first, rest = args[:1], (*args[1:], *kwargs.values())
        for o in outs:
            check_no_overlap(o, first, full=False)
            check_no_overlap(o, rest)
    elif overlap is not None:
        for o in outs:
            check_no_overlap(o, inputs, full=overlap == "any")


def write_out(out, result, cast_error: type | None = RuntimeError, warn: bool = True):
    """``result`` written into ``out`` as PyTorch's out= variants do: ``out`` resized where its
    shape differs (a UserWarning when it held elements, unless not ``warn``), the result's
    dtype cast to ``out``'s where the casting rules allow (``cast_error`` otherwise:
    RuntimeError, or TypeError as ``torch.cat`` raises it; None: any cast); ``out`` is
    returned."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"out must be a tuple of {len(result)} tensors")
        written = [write_out(o, r, cast_error, warn) for o, r in zip(out, result)]
        return result._make(written) if hasattr(result, "_make") else tuple(written)
    if not isinstance(result, Tensor):  # a Python value (allclose): nothing to write
        raise TypeError("out= is only taken by functions that return tensors")
    if not isinstance(out, Tensor):  # one result: PyTorch's argument parser wants one tensor
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if cast_error is not None and result.dtype.category > out.dtype.category:
        raise cast_error(
            f"result type {SCALAR_TYPE_NAMES[result.dtype.name]} can't be cast to the desired "
            f"output type {SCALAR_TYPE_NAMES[out.dtype.name]}"
        )
    if result.device != out.device:
        raise RuntimeError(
            f"Expected out tensor to have device {result.device}, but got {out.device} instead"
        )
    if out._shape != result._shape:
        check_internal_overlap(out)  # (PyTorch's, before it resizes)
        if out.numel() and warn:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._shape)}, which does not match the required output shape "
                f"{list(result._shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=4,
            )
        fresh = Tensor._empty(result._shape, out.dtype, out.device)
        out._storage, out._shape, out._stride, out._offset = (
            fresh._storage,
            fresh._shape,
            fresh._stride,
            0,
        )
    copy_into(out, result)
    return out


def with_out(fn, overlap: str | None = None, dtype: str = "cast"):
    """``fn`` (a hand-written function: matmul, cat, mean, ...) with PyTorch's ``out=`` keyword
    and NumPy's ``axis``/``keepdims`` names; see ``check_out`` (``overlap``) and
    ``write_out``. ``dtype``: how the result reaches out's dtype: "cast" where PyTorch's
    casting rules allow (RuntimeError), "cat" the same with ``torch.cat``'s TypeError, "same"
    only into the result's own dtype (isin, multinomial, softmax: RuntimeError), "any" into
    any dtype (bernoulli's 0s and 1s), "compute" computed in out's dtype (cumsum, cumprod:
    their ``dtype=`` defaults to out's; a ``dtype`` that differs raises RuntimeError). A
    function may name its own mode in an ``out_dtype`` attribute, which ``dtype`` yields to,
    and set ``out_resize_warns = False`` where PyTorch resizes its out without a warning.

    >>> x = clgrad.arange(4.0)
    >>> clgrad.cat([x[:1], x[3:]], out=x[1:3])  # other elements of x: fine
    tensor([0., 3.])
    >>> clgrad.cat([x[:2]], out=x[1:3])  # cat refuses any input over out's memory
    Traceback (most recent call last):
    ...
    RuntimeError: unsupported operation: some elements of the input tensor and the written-to ...
    """
    name = fn.__name__
    dtype = getattr(fn, "out_dtype", dtype)
    # False where PyTorch resizes out silently (its resize_ rather than resize_output)
    warn = getattr(fn, "out_resize_warns", True)
    cast_error = {"cat": TypeError, "any": None}.get(dtype, RuntimeError)
    first = _first_parameter(fn)

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        kwargs = numpy_names(name, kwargs)
        if first is not None and "input" in kwargs:
            kwargs[first] = kwargs.pop("input")
        if out is None:
            return fn(*args, **kwargs)
        check_out(name, out, args, kwargs, overlap)
        if dtype == "compute" and isinstance(out, Tensor):
            asked = kwargs.get("dtype")
            if asked is None:
                kwargs["dtype"] = out.dtype
            elif D.as_dtype(asked) is not out.dtype:
                raise RuntimeError(
                    f"Expected out tensor to have dtype {D.as_dtype(asked).name}, but got "
                    f"{out.dtype.name} instead"
                )
        result = fn(*args, **kwargs)
        if dtype == "same" and isinstance(result, Tensor) and result.dtype is not out.dtype:
            raise RuntimeError(
                f"Expected out tensor to have dtype {result.dtype.name}, but got "
                f"{out.dtype.name} instead"
            )
        return write_out(out, result, cast_error, warn)

    return function


def factory_out(fn):
    """``fn`` (a factory: zeros, arange, rand, ...) with PyTorch's ``out=``: the values are
    made in out's dtype on out's device (a ``dtype`` that differs raises PyTorch's
    RuntimeError) and written into it, resized where its shape differs (``write_out``).

    >>> out = clgrad.empty(0, dtype=clgrad.int64)
    >>> clgrad.arange(3, out=out)
    tensor([0, 1, 2])
    >>> clgrad.zeros(2, dtype=clgrad.float32, out=out)
    Traceback (most recent call last):
    ...
    RuntimeError: dtype Float does not match dtype of out parameter (Long)
    """
    name = fn.__name__

    @functools.wraps(fn)
    def factory(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        check_out(name, out, (), {})
        dtype = kwargs.get("dtype")
        if dtype is not None and D.as_dtype(dtype) is not out.dtype:
            raise RuntimeError(
                f"dtype {SCALAR_TYPE_NAMES[D.as_dtype(dtype).name]} does not match dtype of out "
                f"parameter ({SCALAR_TYPE_NAMES[out.dtype.name]})"
            )
        kwargs.pop("requires_grad", None)  # the values are written into out, which keeps its own
        kwargs.update(dtype=out.dtype, device=out.device)
        # PyTorch's arange resizes out through resize_output, which warns; its other factories
        # resize it silently
        return write_out(out, fn(*args, **kwargs), warn=name == "arange")

    return factory


def numpy_named(fn):
    """``fn`` (a hand-written method: ``Tensor.mean``, ...) taking NumPy's ``axis``/``keepdims``
    names, as PyTorch's methods do."""
    name = fn.__name__
    first = _first_parameter(fn)

    @functools.wraps(fn)
    def method(*args, **kwargs):
        if not kwargs:
            return fn(*args)
        kwargs = numpy_names(name, kwargs)
        if first is not None and "input" in kwargs:
            kwargs[first] = kwargs.pop("input")
        return fn(*args, **kwargs)

    return method


def _first_parameter(fn) -> str | None:
    """The name ``fn`` gives the tensor PyTorch's function calls ``input``
    (``torch.gather(input=x, dim=1, index=i)``), where it gives another; else None."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if not params or params[0].kind not in (params[0].POSITIONAL_OR_KEYWORD,):
        return None
    return None if params[0].name in ("input", "self", "tensors") else params[0].name
