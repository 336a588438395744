"""Tensor's methods, attached in one place: every declared op (``registry``) becomes a method
(and its in-place ``_`` form), and the hand-written families add theirs below, a line each.
"""

from __future__ import annotations

import copy
import math
import numbers
import warnings

import numpy as np

from .. import dtypes as D
from ..autograd import backward as _backward
from ..autograd import is_grad_enabled
from ..autograd.function import Function, register_post_accumulate_grad_hook
from ..device import cuda_device, resolve
from ..storage import UntypedStorage
from ..tensor import _STATE_SLOTS, Tensor, contiguous_strides
from . import activation as _activation  # noqa: F401  (declares its ops before _attach)
from . import complex as CX
from . import creation as C
from . import elementwise as E
from . import indexing as I
from . import inplace as IP
from . import linalg as L
from . import movement as M
from . import reduction as R
from . import scans as SC
from . import sorting as SO
from . import sparse as SP
from . import typed_storage
from .core import (
    SCALAR_TYPE_NAMES,
    SCALARS,
    TYPE_META_NAMES,
    check_no_overlap,
    check_out,
    numpy_named,
    write_out,
)
from .registry import ELEMENTWISE, REDUCTIONS, check_cast


def _reflected(fn):
    """``other <op> self`` for the reflected operators (``__radd__``, ...)."""

    def method(self, other):
        return fn(other, self)

    method.__name__ = f"__r{fn.__name__}__"
    return method


def rtruediv(self, other):
    """``other / self`` as PyTorch's ``Tensor.__rtruediv__`` computes it: ``self.reciprocal()
    * other`` (its rounding, and its MulBackward0 over ReciprocalBackward0).

    >>> 2 / clgrad.tensor([4.0, 0.5])
    tensor([0.5000, 4.0000])
    """
    return self.reciprocal() * other


def _comparison(fn, arrays=False):
    """A comparison operator: ``NotImplemented`` for what is no tensor or number, so Python
    falls back as PyTorch's do (``x == None`` is False, ``x < None`` a TypeError). With
    ``arrays`` (==) a NumPy array of numbers is compared elementwise, as a tensor of its
    values: PyTorch hands it to NumPy, which returns the comparison (not Python's identity
    test, which said False)."""

    def method(self, other):
        if arrays and isinstance(other, np.ndarray) and other.dtype.kind in "biuf":
            other = C.tensor(other, device=self.device)
        if not isinstance(other, (Tensor, *SCALARS)):
            return NotImplemented
        return fn(self, other)

    method.__name__ = f"__{fn.__name__}__"
    return method


def _cast(dt):
    def method(self, memory_format=None):
        return self.to(dt, memory_format=memory_format)

    return method


def record_stream(self, stream) -> None:
    """Marks the tensor's memory as used by ``stream``, as ``Tensor.record_stream``: nothing to
    do on an OpenCL device, which has one in-order queue (no stream can read the memory after
    another reuses it); a cpu tensor refuses it, as PyTorch's CPU backend.

    >>> clgrad.ones(2).record_stream(clgrad.Stream(device="cpu"))
    Traceback (most recent call last):
    NotImplementedError: Could not run 'aten::record_stream' with arguments from the 'CPU' backend.
    """
    if self.device.is_cpu:
        raise NotImplementedError(
            "Could not run 'aten::record_stream' with arguments from the 'CPU' backend."
        )


def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``.to(device)``, ``.to(dtype)``, ``.to(device, dtype)`` or ``.to(other_tensor)``
    (``memory_format`` is accepted: every layout is row-major here, as ``clone`` explains).

    >>> clgrad.tensor([1, 2]).to(clgrad.float32)
    tensor([1., 2.])
    """
    C.check_option("to", "memory_format", memory_format)
    flags = []  # positional non_blocking and copy, after the device, dtype or tensor
    for i, a in enumerate(args):
        if type(a) is bool and i:  # (a first argument is a device, a dtype or a tensor)
            flags.append(a)
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, D.dtype) or a in (float, int, bool):
            dtype = a
        else:
            device = a
    if len(flags) > 2:
        raise TypeError(f"to() received an invalid combination of arguments: {len(args)} given")
    copy = flags[1] if len(flags) == 2 else copy
    out = self
    if dtype is not None:
        out = E.cast(out, dtype)
    if device is not None and resolve(device) != out.device:
        out = C.to_device(out, resolve(device))
    return out.clone() if copy and out is self else out


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradient of this tensor into the ``.grad`` of the leaves.

    >>> x = clgrad.tensor(2.0, requires_grad=True)
    >>> (x * x).backward()
    >>> x.grad
    tensor(4.)
    """
    _backward([self], [gradient], retain_graph, create_graph, inputs=inputs)


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    u = C.rand(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return IP.copy_(self, u * (b - a) + a)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    z = C.randn(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return IP.copy_(self, z * std + mean)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills the tensor with 1 (probability ``p``, a number or a tensor) or 0, as
    ``torch.Tensor.bernoulli_``.

    >>> clgrad.zeros(3).bernoulli_(1.0)
    tensor([1., 1., 1.])
    """
    u = C.rand(self.shape, dtype=D.float32, device=self.device, generator=generator)
    return IP.copy_(self, (u < p).to(self.dtype))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills the tensor with exponential random numbers of rate ``lambd``, as
    ``torch.Tensor.exponential_``.

    >>> bool((clgrad.empty(100).exponential_(2.0) >= 0).all())
    True
    """
    u = C.rand(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return IP.copy_(self, -(1 - u).log() / lambd)


def _written_into(fn, refuse="any"):
    """``x.fn_(...)`` as ``x.copy_(fn(x, ...))`` (an indexed write, a composite elementwise
    op), with PyTorch's check first where ``refuse`` names one: a tensor argument over
    ``x``'s memory raises, over the same elements too ("any": PyTorch's indexed writes refuse
    their source so) or only over part of them ("partial": its elementwise ops)."""

    def method(self, *args, **kwargs):
        if refuse is not None:
            check_no_overlap(self, (*args, *kwargs.values()), full=refuse == "any")
        # a recorded write hands fn a copy: a gradient that saves x's old value (scatter_reduce's
        # prod and amin) must not see the version this write makes
        source = self.clone() if IP.recording(self, *args, *kwargs.values()) else self
        result = fn(source, *args, **kwargs)
        if result.dtype.category > self.dtype.category:  # addcmul_ of floats into an int
            raise RuntimeError(
                f"result type {SCALAR_TYPE_NAMES[result.dtype.name]} can't be cast to the "
                f"desired output type {SCALAR_TYPE_NAMES[self.dtype.name]}"
            )
        return IP.copy_(self, result)

    method.__name__ = f"{fn.__name__}_"
    return method


def _triangle_(triangle, self, diagonal):
    """``tril_`` / ``triu_``: into an expanded tensor too, as PyTorch's (with no warning): a
    memory location several elements share is zeroed where any of them is."""
    result = triangle(self, diagonal)
    if not IP.shared_dims(self):
        return IP.copy_(self, result)
    ones = C.ones(self.shape, dtype=D.bool_, device=self.device)
    return I.fill_shared(self, ~triangle(ones, diagonal), 0)


def _inplace_of(fn):
    """``x.fn_(...)`` for an out-of-place ``fn(x, ...)`` that may save ``x`` for its gradient:
    through ``inplace``, which hands ``fn`` a copy of the old value."""

    def method(self, *args, **kwargs):
        others = [v for v in (*args, *kwargs.values()) if isinstance(v, Tensor)]
        return IP.inplace(
            self,
            lambda old: fn(old, *args, **kwargs),
            lambda: IP.copy_(self, fn(self, *args, **kwargs)),
            *others,
        )

    method.__name__ = f"{fn.__name__}_"
    return method


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills the tensor with ``exp(N(mean, std**2))`` samples, as ``torch.Tensor.log_normal_``.

    >>> bool((clgrad.empty(100).log_normal_() > 0).all())
    True
    """
    z = C.randn(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return IP.copy_(self, (z * std + mean).exp())


def geometric_(self, p, *, generator=None):
    """Fills the tensor with the number of Bernoulli(``p``) trials up to the first success
    (1, 2, ...), as ``torch.Tensor.geometric_``: ``ceil(log(1 - u) / log(1 - p))``.

    >>> bool((clgrad.empty(100).geometric_(0.5) >= 1).all())
    True
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = C.rand(self.shape, dtype=D.float32, device=self.device, generator=generator)
    # 1 - u lies in (0, 1]: a sample of 0 would be log(0); clamp keeps it at least 1
    k = ((1 - u).log() / math.log1p(-p)).ceil().clamp(min=1)
    return IP.copy_(self, k.to(self.dtype))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills the tensor with Cauchy samples ``median + sigma * tan(pi * (u - 1/2))``, as
    ``torch.Tensor.cauchy_``.

    >>> clgrad.empty(3).cauchy_().shape
    clgrad.Size([3])
    """
    u = C.rand(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return IP.copy_(self, ((u - 0.5) * math.pi).tan() * sigma + median)


def random_(self, from_=0, to=None, *, generator=None):
    """Fills the tensor with random integers in ``[from_, to)`` (``random_(to)``: ``[0, to)``),
    as ``torch.Tensor.random_``; without bounds, the integers its dtype's mantissa holds
    exactly (``[0, 2**24]`` for float32, as PyTorch).

    >>> x = clgrad.zeros(5).random_(3, 6)
    >>> bool(((x >= 3) & (x < 6)).all())
    True
    """
    if to is None and from_ == 0:
        # a float's integers held exactly, an integer type's whole non-negative range
        exact = {"float16": 2**11, "bfloat16": 2**8, "float32": 2**24, "float64": 2**53}
        if self.dtype.name in exact:
            top = exact[self.dtype.name]
        else:
            top = 1 if self.dtype is D.bool_ else int(np.iinfo(self.dtype.np).max)
        # int64's [0, 2**63 - 1]: ``to`` itself must be an int64, so its top is left out
        from_, to = 0, min(top + 1, int(np.iinfo(np.int64).max))
    elif to is None:
        from_, to = 0, from_
    r = C.randint(from_, to, self.shape, device=self.device, generator=generator)
    return IP.copy_(self, r.to(self.dtype))


def _new(fn):
    def method(self, *args, dtype=None, device=None, requires_grad=False, **kw):
        return fn(
            *args,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
            **kw,
        )

    return method


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, **kw):
    """A copy of ``data`` as a tensor of this tensor's dtype and device unless given, as
    ``torch.Tensor.new_tensor``.

    >>> clgrad.zeros(1, dtype=clgrad.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=clgrad.float64)
    """
    if isinstance(data, Tensor):
        data = data.detach()
    return C.tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, **kw):
    """``fill_value`` in shape ``size``, with this tensor's dtype and device unless given, as
    ``torch.Tensor.new_full``.

    >>> clgrad.zeros(1, dtype=clgrad.int64).new_full((2,), 7)
    tensor([7, 7])
    """
    return C.full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        device=device or self.device,
        requires_grad=requires_grad,
        **kw,
    )


def _documented(fn, name, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


new_zeros = _documented(
    _new(C.zeros),
    "new_zeros",
    """Zeros of the given size, with this tensor's dtype and device unless given, as
    ``torch.Tensor.new_zeros``.

    >>> clgrad.ones(1, dtype=clgrad.int32).new_zeros(2, 2)
    tensor([[0, 0],
            [0, 0]], dtype=clgrad.int32)
    """,
)
new_ones = _documented(
    _new(C.ones),
    "new_ones",
    """Ones of the given size, with this tensor's dtype and device unless given, as
    ``torch.Tensor.new_ones``.

    >>> clgrad.zeros(1).new_ones((3,))
    tensor([1., 1., 1.])
    """,
)
new_empty = _documented(
    _new(C.empty),
    "new_empty",
    """An uninitialised tensor of the given size, with this tensor's dtype and device unless
    given, as ``torch.Tensor.new_empty``.

    >>> clgrad.zeros(1, dtype=clgrad.float64).new_empty(2, 3).dtype
    clgrad.float64
    """,
)


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on the OpenCL device ``"cuda"`` names (``device``: an index or a device; default
    the current one), as ``torch.Tensor.cuda`` (see ``clgrad.cuda``); ``self`` where it is
    already there.

    >>> x = clgrad.ones(2)
    >>> x.cuda().is_cuda if clgrad.cuda.is_available() else True
    True
    """
    return self.to(cuda_device(device), memory_format=memory_format)


def numpy(self, *, force=False) -> np.ndarray:
    """The tensor as a NumPy array sharing its memory, with PyTorch's rules: a TypeError for a
    tensor that is not on the cpu (copy it with ``.cpu()`` first), a RuntimeError for one that
    requires grad while grad mode is on (``.detach()`` first). ``force=True`` does both:
    ``self.detach().cpu().numpy()``.

    >>> x = clgrad.zeros(2)
    >>> x.numpy()[0] = 5.0
    >>> x
    tensor([5., 0.])
    >>> clgrad.ones(2, requires_grad=True).numpy(force=True)
    array([1., 1.], dtype=float32)
    """
    if not force:
        if not self.device.is_cpu:
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
    if self.dtype is D.bfloat16:  # NumPy has no bfloat16 (torch's error)
        raise TypeError("Got unsupported ScalarType BFloat16")
    return self._numpy()


# PyTorch's tensor type names are its legacy types' (``creation.LEGACY_TYPES``): ``x.type()``
# gives "clgrad.FloatTensor" (on an OpenCL device "clgrad.cuda.FloatTensor", where clgrad
# answers torch.cuda), as torch's "torch...."
_TYPE_NAMES = {t.dtype: t.__name__ for t in C.LEGACY_TYPES}
# (torch names complex tensors' types too, with no legacy class behind them)
_TYPE_NAMES |= {D.complex64: "ComplexFloatTensor", D.complex128: "ComplexDoubleTensor"}
_TYPES_BY_NAME = {name: dt for dt, name in _TYPE_NAMES.items()}


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """With no argument, the tensor's type name, as ``torch.Tensor.type()``; else the tensor
    converted to that dtype, legacy tensor type (``clgrad.DoubleTensor``: a cpu tensor) or
    type name (``"torch.DoubleTensor"``; ``"torch.cuda.FloatTensor"`` for the "cuda" device).

    >>> x = clgrad.ones(2)
    >>> x.type(), x.type("torch.DoubleTensor").dtype, x.type(clgrad.int64).dtype
    ('clgrad.FloatTensor', clgrad.float64, clgrad.int64)
    """
    if dtype is None:
        cuda = "" if self.device.is_cpu else "cuda."
        return f"clgrad.{cuda}{_TYPE_NAMES[self.dtype]}"
    if isinstance(dtype, str):
        module, _, name = dtype.rpartition(".")
        if name not in _TYPES_BY_NAME or module not in (
            "torch",
            "clgrad",
            "torch.cuda",
            "clgrad.cuda",
        ):
            raise ValueError(f"invalid type: '{dtype}'")
        device = "cuda" if module.endswith("cuda") else "cpu"
        return self.to(device=device, dtype=_TYPES_BY_NAME[name], non_blocking=non_blocking)
    if dtype in C.LEGACY_TYPES:  # FloatTensor, ...: a cpu tensor of its dtype
        return self.to(device="cpu", dtype=dtype.dtype)
    if isinstance(dtype, type) and getattr(dtype, "is_cuda", False):  # clgrad.cuda.FloatTensor
        return self.to(device="cuda", dtype=dtype.dtype, non_blocking=non_blocking)
    return self.to(dtype, non_blocking=non_blocking)


def new(self, *args, device=None):
    """PyTorch's legacy ``x.new(...)``: a tensor of x's dtype on x's device (or ``device``):
    no argument gives an empty one, ints (or a Size) an uninitialised one of that size, a
    sequence a copy of its data, a tensor of x's dtype an alias.

    >>> clgrad.ones(2, dtype=clgrad.int32).new([1, 2])
    tensor([1, 2], dtype=clgrad.int32)
    """
    return C._legacy_new(self.dtype, args, self.device if device is None else device)


def iter_(self):
    if not self._shape:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._shape[0]))


def deepcopy(self, memo):
    if self._grad_fn is not None:  # PyTorch's refusal: a copy could not carry the history
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    if id(self) in memo:
        return memo[id(self)]
    cls = type(self)
    if (
        cls is not Tensor
        and not cls.__module__.startswith("clgrad.")  # (Buffer: a Tensor to copy)
        and type(self.new_empty([])) is not cls
    ):
        # torch's refusal for a user's subclass (whose own __deepcopy__ would make one): its
        # default __torch_function__ runs this with subclass dispatch off, where new_empty
        # gives a Tensor
        raise RuntimeError(
            "The default implementation of __deepcopy__() for non-wrapper subclasses only works "
            "for subclass types that implement new_empty() and for which that function returns "
            "another instance of the same subclass. You should either properly implement "
            "new_empty() for your subclass or override __deepcopy__() if it is intended behavior "
            "for new_empty() to return an instance of a different type."
        )
    t = _storage_copy(self, memo)
    t._requires_grad = self._requires_grad
    if self._grad is not None:
        t._grad = copy.deepcopy(self._grad, memo)
    memo[id(self)] = t
    if self.__dict__:  # the attributes a program set, copied too, as torch's
        t.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return t


def shallow_copy(self):
    """``copy.copy(t)``: a new leaf over t's own memory (writes to one show in the other), of
    t's class and geometry, with t's ``requires_grad`` and attributes, as PyTorch's (its
    pickling protocol rebuilds a tensor over the same storage).

    >>> import copy
    >>> t = clgrad.zeros(2)
    >>> _ = copy.copy(t).add_(1)
    >>> t
    tensor([1., 1.])
    """
    t = type(self)._make(self._storage, self._shape, self._stride, self._offset, self.dtype)
    t._requires_grad = self._requires_grad
    t._counter = self._counter
    if self.__dict__:
        t.__dict__.update(self.__dict__)
    return t


def _storage_copy(x, memo):
    """A tensor of x's geometry over a copy of x's storage, made once per storage within one
    deepcopy (``memo``), as PyTorch's: views deep-copied together (``[t, t[:2]]``) share
    their copied storage as the originals share theirs."""
    key = ("clgrad.Storage", id(x._storage))
    storage = memo.get(key)
    if storage is None:
        whole = x._storage.nbytes // x.dtype.itemsize
        storage = x.detach()._view((whole,), (1,), 0).clone()._storage
        memo[key] = storage
        memo.setdefault(id(memo), []).append(x._storage)  # (kept alive: copy's own rule)
    return Tensor._make(storage, x._shape, x._stride, x._offset, x.dtype)


def invert(self):
    """``~self``: PyTorch's operator checks the dtype itself (TypeError) before
    ``bitwise_not`` would (NotImplementedError).

    >>> ~clgrad.tensor([True, False])
    tensor([False,  True])
    """
    if self.dtype.is_floating_point:
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return E.bitwise_not(self)


def data_ptr(self) -> int:
    """An integer that names where the first element lives: equal for tensors that start at the
    same element of one storage (what programs compare it for), not a host address."""
    return UntypedStorage(self._storage).data_ptr() + self._offset * self.dtype.itemsize


def apply_(self, callable):
    """Replaces each element by ``callable(element)`` (a Python function, on the host), as
    ``Tensor.apply_`` does on cpu tensors."""
    values = [callable(v) for v in self.detach().cpu()._numpy().ravel().tolist()]
    src = C.tensor(values, dtype=self.dtype, device=self.device).reshape(self.shape)
    return IP.copy_(self, src)


def is_contiguous(self, memory_format=None) -> bool:
    """Whether the elements lie in row-major order (``memory_format=channels_last``: in NHWC
    order, as PyTorch lays channels-last tensors)."""
    if memory_format is None or memory_format.name in ("contiguous_format", "preserve_format"):
        return _row_major(self._shape, self._stride)
    order = {"channels_last": (0, 2, 3, 1), "channels_last_3d": (0, 2, 3, 4, 1)}[memory_format.name]
    if len(order) != self.ndim:
        return False
    return _row_major([self._shape[d] for d in order], [self._stride[d] for d in order])


def _row_major(shape, stride) -> bool:
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _attach():
    for op in (*ELEMENTWISE.values(), *REDUCTIONS.values()):
        setattr(Tensor, op.name, op.method)
        if op.inplace_method is not None:
            setattr(Tensor, op.name + "_", op.inplace_method)
    for alias, name in E.ALIASES.items():
        setattr(Tensor, alias, getattr(Tensor, name))
        if hasattr(Tensor, name + "_"):
            setattr(Tensor, alias + "_", getattr(Tensor, name + "_"))
    methods = {
        # conversions, devices and autograd
        "to": to,
        "cpu": lambda self, memory_format=None: self.to("cpu", memory_format=memory_format),
        "cuda": cuda,
        "numpy": numpy,
        "type": type_,
        "new": new,
        "float": _cast(D.float32),
        "double": _cast(D.float64),
        "half": _cast(D.float16),
        "bfloat16": _cast(D.bfloat16),
        "cfloat": _cast(D.complex64),
        "cdouble": _cast(D.complex128),
        "long": _cast(D.int64),
        "int": _cast(D.int32),
        "short": _cast(D.int16),
        "bool": _cast(D.bool_),
        "byte": _cast(D.uint8),
        "char": _cast(D.int8),
        "backward": backward,
        "__iter__": iter_,
        "__deepcopy__": deepcopy,
        "__copy__": shallow_copy,
        # operators
        "__add__": ELEMENTWISE["add"].operator,
        "__radd__": ELEMENTWISE["add"].operator,  # self first, as PyTorch's
        "__sub__": ELEMENTWISE["sub"].operator,
        "__rsub__": _reflected(E.sub),
        "__mul__": ELEMENTWISE["mul"].operator,
        "__rmul__": ELEMENTWISE["mul"].operator,
        "__truediv__": ELEMENTWISE["div"].operator,
        "__rtruediv__": rtruediv,
        "__rdiv__": rtruediv,  # Python 2's name, which PyTorch's Tensor keeps
        "__floordiv__": ELEMENTWISE["floor_divide"].operator,
        "__rfloordiv__": _reflected(E.floor_divide),
        "__mod__": ELEMENTWISE["remainder"].operator,
        "__rmod__": _reflected(E.remainder),
        "__pow__": ELEMENTWISE["pow"].operator,
        "__rpow__": _reflected(E.pow),
        "__matmul__": L.matmul,
        "__rmatmul__": _reflected(L.matmul),
        "__neg__": E.neg,
        "__pos__": lambda self: self,
        "__abs__": E.abs,
        "__invert__": invert,
        "__and__": ELEMENTWISE["bitwise_and"].operator,
        "__rand__": ELEMENTWISE["bitwise_and"].operator,
        "__or__": ELEMENTWISE["bitwise_or"].operator,
        "__ror__": ELEMENTWISE["bitwise_or"].operator,
        "__xor__": ELEMENTWISE["bitwise_xor"].operator,
        "__rxor__": ELEMENTWISE["bitwise_xor"].operator,
        "__lshift__": ELEMENTWISE["bitwise_left_shift"].operator,
        "__rlshift__": _reflected(E.bitwise_left_shift),
        "__rshift__": ELEMENTWISE["bitwise_right_shift"].operator,
        "__rrshift__": _reflected(E.bitwise_right_shift),
        "__ilshift__": Tensor.bitwise_left_shift_,
        "__irshift__": Tensor.bitwise_right_shift_,
        "__eq__": _comparison(E.eq, arrays=True),
        "__ne__": _comparison(E.ne),  # (PyTorch's != with an array is Python's: True)
        "__lt__": _comparison(E.lt),
        "__le__": _comparison(E.le),
        "__gt__": _comparison(E.gt),
        "__ge__": _comparison(E.ge),
        "__iadd__": Tensor.add_,
        "__isub__": Tensor.sub_,
        "__imul__": Tensor.mul_,
        "__itruediv__": Tensor.div_,
        "__ifloordiv__": Tensor.floor_divide_,
        "__imod__": Tensor.remainder_,
        "__ipow__": Tensor.pow_,
        "__iand__": Tensor.bitwise_and_,
        "__ior__": Tensor.bitwise_or_,
        "__ixor__": Tensor.bitwise_xor_,
        "__hash__": object.__hash__,  # __eq__ is elementwise: hash by identity, as PyTorch
        # arithmetic beyond the declared ops
        "true_divide": E.true_divide,
        "square": E.square,
        "reciprocal": E.reciprocal,
        "where": lambda self, condition, other: E.where(condition, self, other),
        "clip": E.clip,
        "clamp_min": E.clamp_min,
        "clamp_max": E.clamp_max,
        "float_power": E.float_power,
        "float_power_": E.float_power_,
        "positive": E.positive,
        "isreal": E.isreal,
        "isclose": E.isclose,
        "equal": E.equal,
        "allclose": E.allclose,
        # reductions built on the declared ones (NumPy's axis= and keepdims= too)
        **{
            fn.__name__: numpy_named(fn)
            for fn in (R.mean, R.var, R.std, R.max, R.min, R.all, R.any, R.logsumexp)
            + (R.softmax, R.log_softmax, R.cumsum, R.var_mean, R.std_mean, R.aminmax)
            + (R.count_nonzero, R.norm)
        },
        # sorting, selection and running ops
        "sort": SO.sort,
        "argsort": SO.argsort,
        "msort": SO.msort,
        "topk": SO.topk,
        "kthvalue": SO.kthvalue,
        "median": SO.median,
        "nanmedian": SO.nanmedian,
        "cumprod": SC.cumprod,
        "cummax": SC.cummax,
        "cummin": SC.cummin,
        "logcumsumexp": SC.logcumsumexp,
        # linear algebra
        "matmul": L.matmul,
        "mm": L.mm,
        "bmm": L.bmm,
        "dot": L.dot,
        "vdot": L.vdot,
        "mv": L.mv,
        "outer": L.outer,
        "ger": L.outer,
        "addmm": L.addmm,
        "addmv": L.addmv,
        "baddbmm": L.baddbmm,
        "addbmm": L.addbmm,
        "kron": L.kron,
        "cross": L.cross,
        # movement
        "contiguous": M.contiguous,
        "clone": M.clone,
        "view": M.view,
        "view_as": lambda self, other: M.view(self, other.shape),
        "reshape": M.reshape,
        "reshape_as": lambda self, other: M.reshape(self, other.shape),
        "flatten": M.flatten,
        "unflatten": M.unflatten,
        "permute": M.permute,
        "transpose": M.transpose,
        "swapaxes": M.transpose,
        "t": M.t,
        "T": property(lambda self: M.permute(self, tuple(reversed(range(self.ndim))))),
        "mT": property(lambda self: M.transpose(self, -2, -1)),
        "movedim": M.movedim,
        "squeeze": M.squeeze,
        "unsqueeze": M.unsqueeze,
        "expand": M.expand,
        "expand_as": lambda self, other: M.expand(self, other.shape),
        "broadcast_to": M.expand,
        "repeat": M.repeat,
        "flip": M.flip,
        "narrow": M.narrow,
        "select": M.select,
        "split": M.split,
        "chunk": M.chunk,
        "unbind": M.unbind,
        "as_strided": M.as_strided,
        "tril": M.tril,
        "triu": M.triu,
        "tril_": lambda self, diagonal=0: _triangle_(M.tril, self, diagonal),
        "triu_": lambda self, diagonal=0: _triangle_(M.triu, self, diagonal),
        "diag": M.diag,
        "diagonal": M.diagonal,
        "diag_embed": M.diag_embed,
        "diagflat": M.diagflat,
        "trace": M.trace,
        "roll": M.roll,
        "fliplr": M.fliplr,
        "flipud": M.flipud,
        "rot90": M.rot90,
        "repeat_interleave": M.repeat_interleave,
        "unfold": M.unfold,
        # indexing
        "__getitem__": I.getitem,
        "__setitem__": I.setitem,
        "gather": I.gather,
        "scatter_add": I.scatter_add,
        "index_select": I.index_select,
        "masked_fill": I.masked_fill,
        "masked_fill_": I.masked_fill_,
        "masked_select": I.masked_select,
        "nonzero": I.nonzero,
        "nonzero_static": I.nonzero_static,
        "scatter": I.scatter,
        "scatter_reduce": I.scatter_reduce,
        "index_add": I.index_add,
        "index_copy": I.index_copy,
        "index_reduce": I.index_reduce,
        "index_fill": I.index_fill,
        "index_put": I.index_put,
        "masked_scatter": I.masked_scatter,
        "take": I.take_elements,
        "take_along_dim": I.take_along_dim,
        "put": I.put_elements,
        "scatter_": _written_into(I.scatter),
        "scatter_add_": _written_into(I.scatter_add),
        "scatter_reduce_": _written_into(I.scatter_reduce),
        "index_add_": _written_into(I.index_add),
        "index_copy_": _written_into(I.index_copy),
        "index_reduce_": _written_into(I.index_reduce),
        "index_fill_": I.index_fill_,
        "index_put_": I.index_put_,
        "masked_scatter_": _written_into(I.masked_scatter, refuse=None),
        "put_": _written_into(I.put_elements),
        # writes
        "copy_": IP.copy_,
        "fill_": IP.fill_,
        "zero_": IP.zero_,
        "uniform_": uniform_,
        "normal_": normal_,
        "bernoulli_": bernoulli_,
        "exponential_": exponential_,
        "random_": random_,
        "bernoulli": lambda self, p=None, *, generator=None: C.bernoulli(
            self, p, generator=generator
        ),
        "multinomial": C.multinomial,
        # new tensors like this one
        "new_tensor": new_tensor,
        "new_full": new_full,
        "new_zeros": new_zeros,
        "new_ones": new_ones,
        "new_empty": new_empty,
        # PyTorch names programs reach for (tests/test_drop_in_names.py)
        "swapdims": M.transpose,
        "moveaxis": M.movedim,
        "ravel": M.ravel,
        "tile": M.tile,
        "tensor_split": M.tensor_split,
        "hsplit": M.hsplit,
        "vsplit": M.vsplit,
        "dsplit": M.dsplit,
        "diff": M.diff,
        "argwhere": I.argwhere,
        "addcmul": E.addcmul,
        "addcdiv": E.addcdiv,
        "addcmul_": _written_into(E.addcmul, refuse="partial"),
        "addmm_": _inplace_of(L.addmm),
        "addmv_": _inplace_of(L.addmv),
        "addbmm_": _inplace_of(L.addbmm),
        "baddbmm_": _inplace_of(L.baddbmm),
        "addr": L.addr,
        "addr_": _inplace_of(L.addr),
        "log_normal_": log_normal_,
        "geometric_": geometric_,
        "cauchy_": cauchy_,
        "addcdiv_": _written_into(E.addcdiv, refuse="partial"),
        "nan_to_num": E.nan_to_num,
        "nan_to_num_": _written_into(E.nan_to_num, refuse=None),
        "clamp_min_": lambda self, min: self.clamp_(min, None),
        "clamp_max_": lambda self, max: self.clamp_(None, max),
        "clip_": lambda self, min=None, max=None: self.clamp_(min, max),
        "square_": lambda self: self.pow_(2),
        "nanmean": numpy_named(R.nanmean),
        "cov": L.cov,
        "corrcoef": L.corrcoef,
        "bincount": SO.bincount,
        "histc": SO.histc,
        "histogram": SO.histogram,
        "unique": SO.unique,
        "unique_consecutive": SO.unique_consecutive,
        "type_as": lambda self, other: self.to(other.dtype),
        "nbytes": property(lambda self: self.numel() * self.dtype.itemsize),
        "itemsize": property(lambda self: self.dtype.itemsize),
        "ndimension": lambda self: self.ndim,
        "is_signed": lambda self: self.dtype.is_signed,
        "is_cpu": property(lambda self: self.device == "cpu"),
        "get_device": lambda self: -1 if self.device == "cpu" else self.device.index,
        "data_ptr": data_ptr,
        "untyped_storage": lambda self: UntypedStorage(self._storage),
        "storage": typed_storage.storage,
        "apply_": apply_,
        "is_contiguous": is_contiguous,
        "pin_memory": lambda self, device=None: self,
        "is_pinned": lambda self, device=None: False,
        "share_memory_": lambda self: self,
        "is_shared": lambda self: False,
        "record_stream": record_stream,
        "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


_attach()


# ---- PyTorch names added for drop-in use (tests/test_drop_in_names.py, test_drop_in_linalg.py)


def _metadata_inplace(view_op):
    """``x.unsqueeze_(...)`` and the other in-place view ops: ``x`` takes the geometry of
    ``view_op(x)``. With a history, ``x`` takes the view's too (as PyTorch: ``UnsqueezeBackward``);
    a leaf that requires grad refuses, as PyTorch's does, and so does a view of a tensor that
    requires grad (its history is that of its base's region, which the new geometry would
    contradict)."""

    def method(self, *args, **kwargs):
        if self._requires_grad and self._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError(
                f"{view_op.__name__}_: clgrad does not change the shape of a view of a tensor "
                "that requires grad in place; use the out-of-place form"
            )
        out = view_op(self, *args, **kwargs)
        self._shape, self._stride, self._offset = out._shape, out._stride, out._offset
        self._bump_version()  # PyTorch counts a change of geometry as a write
        if out._grad_fn is not None:
            self._grad_fn, self._output_nr = out._grad_fn, out._output_nr
        return self

    method.__name__ = view_op.__name__ + "_"
    return method


def _comparison_inplace(fn):
    """``x.gt_(y)``: the comparison written into ``x`` in ``x``'s dtype (1 / 0)."""

    def method(self, other):
        return self.copy_(fn(self, other))

    method.__name__ = fn.__name__ + "_"
    return method


def dim_order(self, *, ambiguity_check=False) -> tuple:
    """The dims from outermost to innermost in memory (largest stride first; equal strides
    keep their order), like ``Tensor.dim_order``.

    >>> clgrad.zeros(2, 3).t().dim_order()
    (1, 0)
    """
    stride = self._stride
    return tuple(sorted(range(len(stride)), key=lambda d: -stride[d]))


def fill_diagonal_(self, fill_value, wrap=False):
    """Writes ``fill_value`` on the main diagonal (every dim of the same size past 2-d; a tall
    matrix restarts it every ``cols + 1`` rows with ``wrap``), like ``Tensor.fill_diagonal_``.

    >>> clgrad.zeros(2, 3).fill_diagonal_(1)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    shape = tuple(self.shape)
    step = sum(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    total = int(np.prod(shape))
    if self.ndim == 2 and wrap and shape[0] > shape[1]:
        flat = np.arange(0, total, step)
    else:
        flat = np.arange(min(shape)) * step
    mask = np.zeros(total, dtype=bool)
    mask[flat] = True
    m = C.tensor(mask.reshape(shape), device=self.device)
    return self.masked_fill_(m, fill_value)


def sum_to_size(self, *size):
    """The sum of ``self`` down to ``size``, which must broadcast to ``self``'s shape, like
    ``Tensor.sum_to_size``.

    >>> clgrad.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    from .core import sum_to  # with its one user, as the block's other imports

    if not size:  # ATen's sum_to sums to () always: a 0-d bool sums to an int64 count
        return self.sum()
    return sum_to(self, size)


def resize_(self, *sizes, memory_format=None):
    """Gives ``self`` the shape ``sizes``, like ``Tensor.resize_``: its own shape changes
    nothing (an expanded or strided tensor stays as it is); another is row-major over the same
    memory from the same offset (a strided tensor's memory read anew, not its elements), which
    grows where it is too short, keeping what it held (a tensor that is a view refuses that:
    its storage is shared). A tensor that requires grad refuses, as PyTorch's does.

    >>> clgrad.arange(6).resize_(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    sizes = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    sizes = tuple(int(n) for n in sizes)
    if sizes == self._shape:
        return self
    self._bump_version()  # PyTorch counts a resize_ to another shape as a write
    itemsize = self.dtype.itemsize
    held = self._storage.nbytes // itemsize
    needed = self._offset + math.prod(sizes)
    if needed > held:
        if self._base is not None:
            raise RuntimeError(
                "resize_: clgrad does not grow a view's memory (its storage is shared)"
            )
        grown = C.empty((needed,), dtype=self.dtype, device=self.device)
        if held:
            grown[:held].copy_(self._view((held,), (1,), 0))
        self._storage = grown._storage
    self._shape, self._stride = sizes, contiguous_strides(sizes)
    return self


def conj_physical(self, *, out=None) -> Tensor:
    """The elementwise complex conjugate (a real tensor itself, as PyTorch's), or its values
    written into ``out``.

    >>> x = clgrad.tensor([1.0, -2.0])
    >>> clgrad.conj_physical(x) is x
    True
    >>> clgrad.conj_physical(x, out=clgrad.empty(0))
    tensor([ 1., -2.])
    """
    if out is None:
        return CX.conj(self)
    check_out("conj_physical", out, (self,), {})
    return write_out(out, CX.conj(self))


def _conj_physical_(self) -> Tensor:
    # a real tensor's conjugate is itself; PyTorch still counts (and checks) the write
    if self.dtype.category == 3:
        return IP.copy_(self, CX.conj(self))
    return IP.inplace(self, lambda old: old, self._bump_version)


def adjoint(self) -> Tensor:
    """The conjugate transpose of the last two dims: their transpose, for real tensors."""
    if self.ndim < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got "
            f"{self.ndim}-D tensor."
        )
    return M.transpose(CX.conj(self), -2, -1)


def contains(self, element) -> bool:
    """``element in tensor``: whether any element equals it (a number or a tensor that
    broadcasts), as PyTorch's ``Tensor.__contains__``."""
    if not isinstance(element, (Tensor, numbers.Number)):
        raise RuntimeError(
            "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
            f"{type(element)}."
        )
    return bool((self == element).any().item())


def _set_part(k):
    """``z.real = value`` / ``z.imag = value``: written into those parts, as PyTorch's."""

    def setter(self, value):
        if self.dtype.category != 3 and k:
            CX.imag(self)  # raises, as PyTorch's
        (CX.real if k == 0 else CX.imag)(self).copy_(value) if self.dtype.category == 3 else (
            self.copy_(value)
        )

    return setter


def _matrix_T(name, fn, min_ndim, max_ndim=None):
    def get(self):
        if self.ndim == 0 and name in ("mT", "mH"):  # PyTorch's deprecated identity
            warnings.warn(
                f"Tensor.{name} is deprecated on 0-D tensors. This function is the identity in "
                "these cases.",
                UserWarning,
                stacklevel=2,
            )
            return self.view_as(self)
        if self.ndim < min_ndim or (max_ndim is not None and self.ndim > max_ndim):
            if max_ndim is not None:
                raise RuntimeError(
                    f"tensor.{name} is only supported on matrices (2-D tensors). Got "
                    f"{self.ndim}-D tensor."
                    + (" For batches of matrices, consider using tensor.mH" if name == "H" else "")
                )
            raise RuntimeError(
                f"tensor.{name} is only supported on matrices or batches of matrices. Got "
                f"{self.ndim}-D tensor."
            )
        return fn(self)

    return property(get)


def _attach_more():
    # imported here, with the block they serve, so this block stays one piece of the file
    from . import decomp as DC
    from . import lu as LU
    from . import special_math as SM

    def method_of(fn):
        return lambda self, *a, **k: fn(self, *a, **k)

    def inplace_of(fn, first=0):
        # fn reads a copy: what it saves for backward must not be the tensor written here; its
        # result must be castable to this tensor's dtype (a float into an int refused, as
        # PyTorch's); ``first``: where the tensor goes among fn's arguments (polygamma's n first)
        def method(self, *a, **k):
            a = list(a)
            result = fn(*a[:first], self.clone(), *a[first:], **k)
            check_cast(result.dtype, self.dtype)
            return self.copy_(result)

        return method

    cmp = {"gt": E.gt, "ge": E.ge, "lt": E.lt, "le": E.le, "eq": E.eq, "ne": E.ne}
    cmp |= {"greater": E.gt, "greater_equal": E.ge, "less": E.lt, "less_equal": E.le}
    cmp |= {"not_equal": E.ne}
    more = {name + "_": _comparison_inplace(fn) for name, fn in cmp.items()}
    more |= {
        "unsqueeze_": _metadata_inplace(M.unsqueeze),
        "squeeze_": _metadata_inplace(M.squeeze),
        "t_": _metadata_inplace(M.t),
        "transpose_": _metadata_inplace(M.transpose),
        "swapaxes_": _metadata_inplace(M.transpose),
        "swapdims_": _metadata_inplace(M.transpose),
        "cumsum_": lambda self, dim, *, dtype=None: self.copy_(R.cumsum(self, dim, dtype=dtype)),
        "cumprod_": lambda self, dim, *, dtype=None: self.copy_(
            SC.cumprod(self.clone(), dim, dtype=dtype)
        ),
        "fill_diagonal_": fill_diagonal_,
        "sum_to_size": sum_to_size,
        "resize_": resize_,
        "resize_as_": lambda self, other, memory_format=None: resize_(self, other.shape),
        "is_inference": lambda self: False,
        "to_dense": lambda self, dtype=None, *, masked_grad=None: (
            self if dtype is None else self.to(dtype)
        ),
        "dim_order": dim_order,
        "to_sparse": SP.to_sparse,
        "to_sparse_coo": SP.to_sparse,
        "is_same_size": lambda self, other: tuple(self.shape) == tuple(other.shape),
        "logical_not_": lambda self: self.copy_(self.logical_not()),
        "true_divide_": Tensor.div_,
        # complex numbers' API (ops/complex.py); a real tensor's conjugate is itself
        "conj": CX.conj,
        "sgn": CX.sgn,
        "conj_physical": conj_physical,
        "conj_physical_": _conj_physical_,
        "resolve_conj": lambda self: self,
        "resolve_neg": lambda self: self,
        "is_conj": lambda self: False,
        "is_neg": lambda self: False,
        "real": property(CX.real, _set_part(0)),
        "imag": property(CX.imag, _set_part(1)),
        "adjoint": adjoint,
        "__contains__": contains,
        "__reversed__": lambda self: self if self.ndim == 0 else M.flip(self, [0]),
        "is_nonzero": Tensor.__bool__,  # PyTorch's: the same test, the same errors
        "split_with_sizes": lambda self, split_sizes, dim=0: M.split(self, list(split_sizes), dim),
        "prelu": _activation.prelu,
        "unsafe_split": M.unsafe_split,
        "unsafe_chunk": M.unsafe_chunk,
        "unsafe_split_with_sizes": lambda self, split_sizes, dim=0: M.unsafe_split(
            self, list(split_sizes), dim
        ),
        "new_empty_strided": lambda self, size, stride, **kw: C.empty_strided(
            size, stride, **{"dtype": self.dtype, "device": self.device, **kw}
        ),
        "H": _matrix_T("H", lambda x: M.t(CX.conj(x)), 0, 2),
        "mT": _matrix_T("mT", lambda x: M.transpose(x, -2, -1), 2),
        "mH": _matrix_T("mH", lambda x: M.transpose(CX.conj(x), -2, -1), 2),
        # linear algebra (host-computed decompositions: ops/decomp.py)
        "det": method_of(DC.det),
        "logdet": method_of(DC.logdet),
        "slogdet": method_of(DC.slogdet),
        "inverse": method_of(DC.inv),
        "cholesky": method_of(DC.cholesky_legacy),
        "cholesky_solve": method_of(DC.cholesky_solve),
        "cholesky_inverse": method_of(DC.cholesky_inverse),
        "qr": method_of(DC.qr_legacy),
        "svd": method_of(DC.svd_legacy),
        "pinverse": method_of(DC.pinverse),
        "matrix_power": method_of(DC.matrix_power),
        "matrix_exp": method_of(DC.matrix_exp),
        "triangular_solve": method_of(DC.triangular_solve),
        "lu": method_of(LU.lu_legacy),
        "lu_solve": method_of(LU.lu_solve_legacy),
        "geqrf": method_of(DC.geqrf),
        "ormqr": method_of(DC.ormqr),
        "orgqr": method_of(DC.orgqr),
        "inner": L.inner,
        "dist": L.dist,
        "renorm": L.renorm,
        "renorm_": inplace_of(L.renorm),
        "narrow_copy": M.narrow_copy,
        "select_scatter": M.select_scatter,
        "slice_scatter": M.slice_scatter,
        "diagonal_scatter": M.diagonal_scatter,
        "quantile": SO.quantile,
        "nanquantile": SO.nanquantile,
        "mode": SO.mode,
        # special functions composed on the device (ops/special_math.py)
        "lgamma": SM.lgamma,
        "digamma": SM.digamma,
        "erfinv": SM.erfinv,
        "i0": SM.i0,
        "gcd": SM.gcd,
        "lcm": SM.lcm,
        "frexp": SM.frexp,
        "ldexp": SM.ldexp,
        "igamma": SM.igamma,
        "igammac": SM.igammac,
        "igamma_": inplace_of(SM.igamma),
        "igammac_": inplace_of(SM.igammac),
        "polygamma": lambda self, n: SM.polygamma(n, self),
        "polygamma_": inplace_of(SM.polygamma, first=1),
        "mvlgamma": lambda self, p: SM.multigammaln(self, p),
        "mvlgamma_": inplace_of(SM.multigammaln),
        **{name + "_": inplace_of(getattr(SM, name)) for name in ("lgamma", "digamma")},
        **{name + "_": inplace_of(getattr(SM, name)) for name in ("erfinv", "i0")},
        **{name + "_": inplace_of(getattr(SM, name)) for name in ("gcd", "lcm", "ldexp")},
    }
    for name, fn in more.items():
        setattr(Tensor, name, fn)


_attach_more()


# ---- storage and geometry methods: set_, resize, as_strided_, map_, as_subclass ------------------


def _grow_storage(storage, nbytes: int) -> None:
    """Gives ``storage`` at least ``nbytes`` bytes in place (every tensor over it keeps it), its
    old bytes first, as PyTorch's ``set_`` grows a storage that its new geometry overruns."""
    if nbytes <= storage.nbytes:
        return
    from ..storage import Storage

    new = Storage.allocate(storage.device, nbytes)
    old_bytes = storage.nbytes
    if old_bytes:
        src = Tensor._make(storage, (old_bytes,), (1,), 0, D.uint8)
        Tensor._make(new, (old_bytes,), (1,), 0, D.uint8).copy_(src)
    # swap the buffers: the old one goes back to the allocator with ``new``
    storage.data, new.data = new.data, storage.data
    storage.nbytes, new.nbytes = new.nbytes, old_bytes


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Makes ``self`` a tensor over ``source``'s memory, as ``Tensor.set_``: ``set_()`` an empty
    storage, ``set_(tensor)`` the tensor's storage and geometry, ``set_(storage, offset, size,
    stride)`` that geometry of a storage (grown, as PyTorch's, where it is too small). Writes
    through either tensor are then seen by the other.

    >>> a = clgrad.arange(4.0)
    >>> b = clgrad.zeros(1).set_(a)
    >>> b[0] = 7.0
    >>> a
    tensor([7., 1., 2., 3.])
    """
    if self._requires_grad and self._grad_fn is None and is_grad_enabled():
        raise RuntimeError(IP.LEAF_ERROR)
    if (storage_offset is None) != (size is None) or (source is None and size is not None):
        raise TypeError(
            "set_() received an invalid combination of arguments: expected (), (source), or "
            "(source, storage_offset, size, stride=None)"
        )
    if source is None:
        storage, offset, shape, strides = None, 0, (0,), (1,)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(
                f"Could not set tensor of type {TYPE_META_NAMES.get(source.dtype.name)} to a "
                f"tensor of type {TYPE_META_NAMES.get(self.dtype.name)}"
            )
        storage = source._storage
        if size is None:
            offset, shape, strides = source._offset, source._shape, source._stride
        else:
            offset = storage_offset
    elif isinstance(source, (UntypedStorage, typed_storage.TypedStorage)):
        if isinstance(source, typed_storage.TypedStorage) and source.dtype is not self.dtype:
            raise RuntimeError(
                f"Expected a Storage of type {self.dtype} or an UntypedStorage, but got type "
                f"{source.dtype} for argument 1 'storage'"
            )
        storage, offset = source._storage, storage_offset or 0
        if size is None:
            shape = (storage.nbytes // self.dtype.itemsize,)
            strides = (1,)
    else:
        raise TypeError(
            f"set_() received an invalid combination of arguments - got ({type(source).__name__})"
        )
    if size is not None:
        shape = tuple(int(n) for n in size)
        strides = contiguous_strides(shape) if stride is None else tuple(int(s) for s in stride)
        if len(strides) != len(shape):
            raise RuntimeError(
                f"unequal size length ({len(shape)}) and stride length ({len(strides)})"
            )
        if any(n < 0 for n in shape):
            raise RuntimeError("numel: integer multiplication overflow")
        if any(s < 0 for s in strides):
            raise RuntimeError(
                f"as_strided: Negative strides are not supported at the moment, got strides: "
                f"{list(strides)}"
            )
    offset = int(offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if storage is None:
        from ..storage import Storage

        storage = Storage.allocate(self.device, 0)
    elif storage.device != self.device:
        raise RuntimeError(
            f'Attempted to set the storage of a tensor on device "{self.device}" to a storage '
            f'on different device "{storage.device}".  This is no longer allowed; the devices '
            "must match."
        )
    if 0 not in shape:
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
        _grow_storage(storage, (last + 1) * self.dtype.itemsize)
    # torch's set_ has no derivative: a tensor with a history, or set to a tensor (not a
    # storage) that requires grad, gets a node whose backward raises
    sources = [Tensor._alias(self, self.grad_fn, self._output_nr)] if self._requires_grad else []
    if isinstance(source, Tensor) and size is None and source.requires_grad:
        sources.append(source)
    version = self._version  # the tensor keeps its own version counter, as PyTorch's
    self._storage, self._shape, self._stride, self._offset = storage, shape, strides, offset
    self._base = self._view_meta = None
    self._counter = [version]
    self._bump_version()
    if sources and is_grad_enabled():
        out = _SetBackward.apply(*sources, [self])
        self._requires_grad, self._grad_fn, self._output_nr = True, out._grad_fn, out._output_nr
    return self


class _SetBackward(Function):
    """The history ``set_`` gives: torch's NotImplemented node (its backward raises)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, *args):
        return Tensor._alias(args[-1][0])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for set_ is not implemented")


def is_set_to(self, tensor) -> bool:
    """Whether ``self`` and ``tensor`` are the same view of the same storage (storage, offset,
    sizes and strides), as ``Tensor.is_set_to``.

    >>> a = clgrad.arange(3.0)
    >>> clgrad.zeros(1).set_(a).is_set_to(a), a.clone().is_set_to(a)
    (True, False)
    """
    return (
        self._storage is tensor._storage
        and self._offset == tensor._offset
        and self._shape == tensor._shape
        and self._stride == tensor._stride
    )


def resize(self, *sizes):
    """``self``'s elements in the shape ``sizes``, of the same number of elements (a view where
    ``self`` is contiguous), as PyTorch's deprecated ``Tensor.resize`` (it warns).

    >>> clgrad.arange(6).resize(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize(self, sizes)


def resize_as(self, tensor):
    """``self``'s elements in ``tensor``'s shape, as PyTorch's deprecated ``Tensor.resize_as``
    (it warns).

    >>> clgrad.arange(4).resize_as(clgrad.zeros(2, 2))
    tensor([[0, 1],
            [2, 3]])
    """
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize(self, tuple(tensor.shape))


def _resize(self, sizes):
    sizes = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    numel = math.prod(sizes)
    if numel != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(str(n) for n in sizes)} ({numel} elements in total), "
            f"but the given tensor has a size of {'x'.join(str(n) for n in self.shape)} "
            f"({self.numel()} elements). autograd's resize can only change the shape of a given "
            "tensor, while preserving the number of elements. "
        )
    return M.view(M.contiguous(self), sizes)


def as_strided_(self, size, stride, storage_offset=None):
    """``self`` restrided in place over its storage, as ``Tensor.as_strided_`` (a leaf that
    requires grad refuses; a tensor with a history takes AsStrided's).

    >>> x = clgrad.arange(6.0)
    >>> x.as_strided_((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    if self._requires_grad and self._grad_fn is None and is_grad_enabled():
        raise RuntimeError(IP.LEAF_ERROR)
    out = M.as_strided(self, size, stride, storage_offset)
    self._shape, self._stride, self._offset = out._shape, out._stride, out._offset
    if out._grad_fn is not None:
        self._grad_fn, self._output_nr = out._grad_fn, out._output_nr
    self._bump_version()
    return self


def _map_check(self, name, pairs):
    if self._requires_grad or any(t._requires_grad for _, t in pairs):
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
            "instead."
        )
    for what, t in pairs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(t).__name__}")
        if t.dtype is not self.dtype or t.device != self.device:
            noun = "'other'" if name == "map_" else f"argument '{what}'"
            raise TypeError(f"{name}: expected {self.type()} for {noun} (got {t.type()})")
    if not self.device.is_cpu:
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _map_into(self, fn, others):
    args = [M.expand(t, self.shape)._numpy().ravel().tolist() for t in others]
    values = [fn(*vs) for vs in zip(self._numpy().ravel().tolist(), *args)]
    src = C.tensor(values, device=self.device).to(self.dtype).reshape(self.shape)
    return IP.copy_(self, src)


def map_(self, tensor, callable):
    """Replaces each element ``a`` by ``callable(a, b)``, ``b`` the element of ``tensor``
    (broadcast) at its place, as ``Tensor.map_``: cpu tensors of one dtype only, none that
    requires grad.

    >>> clgrad.arange(3.0).map_(clgrad.ones(3), lambda a, b: a + b)
    tensor([1., 2., 3.])
    """
    _map_check(self, "map_", [("other", tensor)])
    return _map_into(self, callable, [tensor])


def map2_(self, x, y, callable):
    """Replaces each element ``a`` by ``callable(a, b, c)``, ``b`` and ``c`` the elements of
    ``x`` and ``y`` (broadcast) at its place, as ``Tensor.map2_`` (cpu tensors only).

    >>> clgrad.arange(3.0).map2_(clgrad.ones(3), clgrad.ones(1), lambda a, b, c: a + b + c)
    tensor([2., 3., 4.])
    """
    _map_check(self, "map2_", [("x", x), ("y", y)])
    return _map_into(self, callable, [x, y])


def as_subclass(self, cls):
    """``self`` as an instance of ``cls`` (a subclass of Tensor): the same elements, storage and
    version counter; its history is an alias of ``self`` where ``self`` requires grad, as
    ``Tensor.as_subclass``.

    >>> class Mine(clgrad.Tensor):
    ...     pass
    >>> type(clgrad.ones(2).as_subclass(Mine)).__name__
    'Mine'
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
            "possible. Make sure your class inherits from Tensor."
        )
    src = M.view(self, self._shape) if self._requires_grad and is_grad_enabled() else self
    out = object.__new__(cls)
    for slot in _STATE_SLOTS:
        setattr(out, slot, getattr(src, slot))
    if src is self:  # no history: a new tensor object over the same elements
        out._grad = out._hooks = out._accumulator = None
        out._retains_grad = False
        out._requires_grad = False
    return out


def _make_subclass(cls, data, require_grad=False, **kwargs):
    """A ``cls`` (a subclass of Tensor) over ``data``'s elements, detached from its history and
    requiring grad if ``require_grad``, as ``torch.Tensor._make_subclass``: what a subclass's
    ``__new__`` returns (``nn.Parameter``'s pattern).

    >>> class Weight(clgrad.Tensor):
    ...     def __new__(cls, data):
    ...         return clgrad.Tensor._make_subclass(cls, data, True)
    >>> w = Weight(clgrad.ones(2))
    >>> type(w).__name__, w.requires_grad, w.is_leaf
    ('Weight', True, True)
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not isinstance(data, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(data).__name__}")
    out = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
    out._counter = data._counter  # a detached alias: the same version counter
    if require_grad:
        out.requires_grad_(True)
    return out


def storage_type(self):
    """The legacy storage class of the tensor's dtype (``clgrad.FloatStorage`` for float32), as
    ``Tensor.storage_type``.

    >>> clgrad.zeros(1).storage_type()
    <class 'clgrad.FloatStorage'>
    """
    return typed_storage.LEGACY_STORAGES[self.dtype.name]


def _attach_storage_methods():
    for fn in (set_, is_set_to, resize, resize_as, as_strided_, map_, map2_, as_subclass):
        setattr(Tensor, fn.__name__, fn)
    Tensor.storage_type = storage_type
    Tensor._make_subclass = staticmethod(_make_subclass)
    Tensor.const_data_ptr = data_ptr
    Tensor.as_strided_scatter = M.as_strided_scatter


_attach_storage_methods()
