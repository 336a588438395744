"""Tensor, the data structure: a strided view (shape, strides, offset, dtype) of a Storage on one
device, with its autograd state. It holds no op: ``clgrad.ops.methods`` attaches the methods
that compute, in one place.
"""

from __future__ import annotations

import functools
import operator
import warnings
import weakref

import numpy as np

from . import _torch_function as _tf
from . import capture
from . import dtypes as D
from .backend.base import FILL, View
from .device import resolve
from .format import tensor_repr
from .hooks import ListHookHandle
from .storage import Storage


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``clgrad.Size([2, 3])``.

    >>> clgrad.zeros(2, 3).shape
    clgrad.Size([2, 3])
    """

    def __repr__(self):
        return f"clgrad.Size({list(self)})"

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds.

        >>> clgrad.Size([2, 3]).numel()
        6
        """
        return int(np.prod(self, dtype=np.int64))

    # tuple's operations give a tuple: a shape built from a shape stays a Size, as torch's
    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def index_arg(value) -> int:
    """An int argument as PyTorch's argument parser takes it: an int, or anything with
    ``__index__`` (a NumPy integer, a one-element integer tensor); a float, a float tensor or
    anything else is a TypeError. Converted where it enters, so a tensor never
    flows into a size or an offset (where its arithmetic would make more tensors).

    >>> index_arg(3), index_arg(np.int64(2))
    (3, 2)
    """
    if type(value) is int:
        return value
    return operator.index(value)


def int_list_arg(value) -> tuple:
    """An int-list argument (dims, shifts) as PyTorch's parser takes it: one int-like value as
    a list of one, or a sequence of int-likes.

    >>> int_list_arg(1), int_list_arg([0, -1])
    ((1,), (0, -1))
    """
    if type(value) is int:
        return (value,)
    if hasattr(value, "__index__") and not isinstance(value, (list, tuple)):
        if getattr(value, "ndim", 0) == 0:
            return (operator.index(value),)
        value = value.tolist()  # a 1-d integer tensor: its elements
    return tuple(index_arg(v) for v in value)


def wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) as a non-negative index, or IndexError as PyTorch words it."""
    if type(dim) is not int:
        dim = operator.index(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


# View(...) without the Python-level __new__ of a NamedTuple: a record is made for every operand
# of every op
new_view = functools.partial(tuple.__new__, View)

# shape -> (shape as a tuple, contiguous strides, element count) of the shapes new tensors get:
# computed once per shape, as every op's result needs them
_GEOMETRY: dict = {}
_GEOMETRY_SIZE = 4096


def _contiguous_geometry(shape) -> tuple:
    """``_GEOMETRY``'s entry for ``shape`` (made and kept there), or PyTorch's RuntimeError for
    a negative size."""
    key = shape
    shape = tuple(shape)
    strides, numel = [], 1
    for n in reversed(shape):
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
        strides.append(numel)
        numel *= n if n else 1
    geometry = (shape, tuple(strides[::-1]), numel if 0 not in shape else 0)
    # kept for tuples of ints only: a Size would come back as the Size, NumPy ints as such
    if type(key) is tuple and all(type(n) is int for n in key):
        if len(_GEOMETRY) >= _GEOMETRY_SIZE:  # shapes that keep changing: start over
            _GEOMETRY.clear()
        _GEOMETRY[key] = geometry
    return geometry


class Tensor:
    """An n-dimensional array on one device that can record the ops applied to it.

    >>> x = clgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "_storage",
        "_shape",
        "_stride",
        "_offset",
        "dtype",
        "_requires_grad",
        "_grad",
        "_grad_fn",
        "_output_nr",
        "_base",
        "_view_meta",
        "_view_version",
        "_hooks",
        "_accumulator",
        "_retains_grad",
        "_counter",
        "__weakref__",
        # attributes a program sets on a tensor (``p.shared = True``), as on torch's: the dict
        # is made at the first one, so a tensor without any pays a pointer
        "__dict__",
    )
    __array_priority__ = 1000  # NumPy defers `array + tensor` to Tensor.__radd__

    def __new__(cls, *args, device=None):
        # PyTorch's legacy constructor: Tensor(data), Tensor(*sizes), Tensor(other); a
        # subclass's (``MyTensor([1.0])``, ``Tensor.__new__(cls, ...)``) is of that subclass
        t = Tensor._legacy_new(None, args, device)
        return t if cls is Tensor else _retype(t, cls)

    def __init__(self, *args, **kwargs):
        pass  # __new__ made the tensor

    def __init_subclass__(cls, **kwargs):
        # a subclass that overrides __torch_function__ switches clgrad's dispatch on (see
        # clgrad._torch_function): until one exists, no op looks for overrides
        super().__init_subclass__(**kwargs)
        _tf.subclass_defined(cls)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default override of a Tensor subclass, as torch's: ``func`` runs with subclass
        dispatch off, and its Tensor results (also inside tuples and lists) come back as
        ``cls`` (``as_subclass``, which keeps their history), except for the functions of
        ``clgrad.overrides.get_default_nowrap_functions()`` (``.grad``). ``NotImplemented``
        when another overriding type is not a base of ``cls``.

        >>> class Mine(clgrad.Tensor):
        ...     pass
        >>> x = clgrad.ones(2).as_subclass(Mine)
        >>> type(x + 1).__name__, type(x.max(0).values).__name__
        ('Mine', 'Mine')
        """
        if kwargs is None:
            kwargs = {}
        for t in types:
            if not issubclass(cls, t):
                return NotImplemented
        with _tf.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in _tf.NOWRAP:
                return ret
            return _convert(ret, cls)

    # Set by clgrad.ops.creation (the creation functions live above this layer)
    _legacy_new = staticmethod(lambda dt, args, device: None)

    @classmethod
    def _make(cls, storage, shape, stride, offset, dt) -> Tensor:
        t = object.__new__(cls)
        t._storage = storage
        t._shape = tuple(shape)
        t._stride = tuple(stride)
        t._offset = offset
        t.dtype = dt
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._base = None
        t._view_meta = None
        t._view_version = 0
        t._hooks = None
        t._accumulator = None
        t._retains_grad = False
        t._counter = None
        return t

    @classmethod
    def _empty(cls, shape, dt, device) -> Tensor:
        """A new contiguous tensor (on the hot path of every op: kept lean)."""
        try:
            geometry = _GEOMETRY.get(shape)
        except TypeError:  # a list
            geometry = None
        if geometry is None:
            geometry = _contiguous_geometry(shape)
        shape, strides, numel = geometry
        if dt is D.float64 or dt is D.complex128:  # (double precision, or refused)
            device.require(dt)
        # _make without its tuple() copies: the geometry's tuples are made once
        t = object.__new__(cls)
        nbytes = numel * dt.itemsize
        t._storage = Storage(device, device.allocator.alloc(nbytes), nbytes)  # allocate(), inline
        t._shape = shape
        t._stride = strides
        t._offset = 0
        t.dtype = dt
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._base = None
        t._view_meta = None
        t._view_version = 0
        t._hooks = None
        t._accumulator = None
        t._retains_grad = False
        t._counter = None
        return t

    @classmethod
    def _full(cls, shape, value, dt, device) -> Tensor:
        """A new contiguous tensor with every element ``value``."""
        t = cls._empty(shape, dt, device)
        if t.numel():
            if dt.category == 3:  # the parts filled through the real view
                value, rdt = complex(value), dt.to_real()
                for k, part in enumerate((value.real, value.imag)):
                    v = Tensor._make(t._storage, t._shape, tuple(2 * s for s in t._stride), k, rdt)
                    device.backend.elementwise(FILL, v._record(), [part], [rdt])
                return t
            device.backend.elementwise(FILL, t._record(), [value], [dt])
        return t

    @classmethod
    def _from_numpy(cls, array: np.ndarray, dt, device) -> Tensor:
        """A new tensor on ``device`` holding a copy of ``array`` converted to ``dt``."""
        t = cls._empty(array.shape, dt, resolve(device))
        if t.numel():
            t.device.backend.from_numpy(t._record(), array)
        return t

    @classmethod
    def _alias(cls, t, grad_fn=None, output_nr=0) -> Tensor:
        """A new tensor object over the same elements (and version counter)."""
        a = cls._make(t._storage, t._shape, t._stride, t._offset, t.dtype)
        a._counter = t._counter
        if grad_fn is not None:
            a._requires_grad = True
            a._grad_fn = grad_fn
            a._output_nr = output_nr
        return a

    def _view(self, shape, stride, offset) -> Tensor:
        """A tensor over this one's storage with the given geometry (in storage elements);
        raises, as PyTorch's setStorage does, unless every element lies inside the storage."""
        storage = self._storage
        lo = hi = offset
        for n, s in zip(shape, stride):
            if n == 0:  # no element: any geometry is fine
                break
            if s > 0:
                hi += (n - 1) * s
            elif s < 0:  # only made internally (flip), never kept
                lo += (n - 1) * s
        else:
            if lo < 0 or (hi + 1) * self.dtype.itemsize > storage.nbytes:
                _out_of_bounds(shape, stride, offset, self.dtype.itemsize, storage.nbytes)
        view = Tensor._make(storage, shape, stride, offset, self.dtype)
        view._counter = self._counter
        return view

    def _record(self) -> View:
        """What a backend sees of this tensor."""
        s = self._storage
        return new_view((s.data, self._offset, self._shape, self._stride, self.dtype, s.nbytes))

    # ---- metadata --------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._shape)

    @property
    def device(self):
        return self._storage.device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def is_cuda(self) -> bool:
        return self._storage.device.is_cuda

    @property
    def _version(self) -> int:
        """The in-place writes autograd sees: those through this tensor's version counter,
        which its views and ``detach()`` share, and ``.data`` does not."""
        if self._counter is not None:
            return self._counter[0]
        s = self._storage
        return s.version - s.unseen

    def _bump_version(self) -> None:
        """Counts an in-place write through this tensor."""
        s = self._storage
        s.version += 1
        if self._counter is not None:
            self._counter[0] += 1
            s.unseen += 1

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.category == 3

    # what PyTorch's other tensor kinds would answer: clgrad's tensors are dense and strided,
    # never sparse, quantized or nested
    layout = D.strided
    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = False
    # nor on a device kind clgrad has not (device-agnostic code asks ``x.is_mps``)
    is_mps = is_xpu = is_xla = is_ipu = is_mtia = is_maia = is_vulkan = False

    @property
    def is_meta(self) -> bool:
        """Whether the tensor is on the ``meta`` device (a shape and a dtype, no data)."""
        return self._storage.device.kind == "meta"

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def size(self, dim=None):
        return self.shape if dim is None else self._shape[wrap_dim(dim, self.ndim)]

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[wrap_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._offset

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_contiguous(self) -> bool:
        expected = 1
        for n, s in zip(reversed(self._shape), reversed(self._stride)):
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def type_name(self) -> str:
        return f"clgrad.{self.dtype.name}"

    # ---- autograd state --------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._base is not None and self._view_version != self._storage.version:
            Tensor._refresh_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True) -> Tensor:
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self.dtype.category < 2:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf). A view whose storage was written
        in place since its history was set gets a new one first: a view of its base's current
        history (PyTorch's AsStridedBackward0)."""
        if self._base is not None and self._view_version != self._storage.version:
            Tensor._refresh_view(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    # Set by clgrad.ops.inplace (the ops it needs live above this layer): refreshes the
    # history of a view whose storage changed (see ``grad_fn``).
    _refresh_view = staticmethod(lambda t: None)

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value):
        if capture.active is not None:
            capture.note_grad(self, "set")
        # checked here, as PyTorch does: a wrong .grad would fail the next optimizer step
        # half-way, some parameters already updated
        if value is not None:
            # (a sparse gradient too: nn.Embedding(sparse=True)'s, clgrad.ops.sparse)
            if not isinstance(value, Tensor) and not getattr(value, "is_sparse", False):
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if tuple(value.shape) != self._shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self._shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{value.device}' to a "
                    f"tensor with device type '{self.device}'. Please ensure that the gradient "
                    "and the tensor are on the same device"
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: attempting to assign a "
                    f"gradient with dtype '{value.dtype}' to a tensor with dtype "
                    f"'{self.dtype}'. The gradient must match the tensor's dtype"
                )
        self._grad = value

    @grad.deleter
    def grad(self):
        self.grad = None  # ``del p.grad``, as torch's: no gradient

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        if self.grad_fn is None:
            return
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains_grad = True
        self.grad_fn.retain(self._output_nr, weakref.ref(self))

    def register_hook(self, hook):
        """``hook(grad)`` runs when the gradient of this tensor is computed; it may return a
        replacement. Returns a handle whose ``remove()`` takes the hook off."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            hooks = self.grad_fn.hooks_of(self._output_nr)
        hooks.append(hook)
        return ListHookHandle(hooks, hook)

    def detach(self) -> Tensor:
        return Tensor._alias(self)

    def detach_(self) -> Tensor:
        if self._base is not None:  # (its base's history is the view's too)
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        if self.grad_fn is not None and self._storage is not None:
            self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The same elements, outside autograd, with a version counter of their own (as
        PyTorch's): writing them in place does not invalidate what the graph saved of this
        tensor."""
        alias = Tensor._alias(self)
        alias._counter = [0]
        return alias

    @data.setter
    def data(self, other):
        version = self._version  # PyTorch keeps the tensor's own version counter
        self._storage, self._shape, self._stride = other._storage, other._shape, other._stride
        self._offset, self.dtype = other._offset, other.dtype
        self._counter = [version]

    # ---- leaving clgrad --------------------------------------------------------------------
    # (``numpy()`` itself, with PyTorch's rules, is in clgrad.ops.methods: it reads the grad mode)
    def _numpy(self) -> np.ndarray:
        """The elements on the host, whatever the device and grad: a view on cpu, a copy else
        (bfloat16's as float32 numbers, a copy: NumPy has no bfloat16)."""
        if self.dtype.category == 3 and not self._storage.device.is_cpu:
            return _complex_numpy(self)
        return D.host_values(self.device.backend.to_numpy(self._record()), self.dtype)

    def __array__(self, dtype=None, copy=None):
        a = self._numpy()
        return a if dtype is None else a.astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy ufunc of a tensor (``np.exp(t)``) gives a cpu tensor, as torch's; a bool
        result comes back as uint8, as torch's does."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return Tensor._from_numpy(array, D.as_dtype(array.dtype), "cpu")

    def item(self):
        if self.is_meta:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return self._numpy().reshape(()).item()

    def _python_number(self, kind):
        # float(t), int(t): PyTorch's ValueError for more or fewer than one element
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if isinstance(value, complex) and kind is not complex:  # its real part, if exact
            if value.imag:
                raise RuntimeError(
                    f"value cannot be converted to type {kind.__name__.replace('float', 'double')}"
                    " without overflow"
                )
            value = value.real
        return kind(value)

    def tolist(self):
        return self._numpy().tolist()

    def __bool__(self):
        n = self.numel()
        if n != 1:
            more = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {more} is ambiguous")
        return bool(self.item())

    def __float__(self):
        return self._python_number(float)

    def __int__(self):
        return self._python_number(int)

    def __complex__(self):
        return self._python_number(complex)

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __repr__ = __str__ = tensor_repr
    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its number (``f"{loss:.4f}"``), as PyTorch's; any other as
        its repr (a subclass's 0-d too: torch refuses a format spec for it, TypeError)."""
        if not self._shape and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __reduce__(self):
        args = (self._numpy(), str(self.device), self._requires_grad, self.dtype.name)
        cls = type(self)
        if cls is not Tensor and not cls.__module__.startswith("clgrad."):
            # a user's subclass comes back as itself, with its attributes, as torch's
            return (_rebuild_subclass, (cls, args, self.__dict__ or None))
        return (_rebuild, args, self.__dict__ or None)  # (pickle sets the attributes back)


_tf.PLAIN.add(Tensor)
# torch's classes print as torch.Tensor and torch.Size: clgrad's as clgrad.Tensor and clgrad.Size
# (``type(x)`` in a program's output; pickles name them so too, which ``clgrad`` resolves)
Tensor.__module__ = Size.__module__ = "clgrad"


# what a tensor object is (elements, history, version): the slots a new object over the same
# tensor takes (not its weak references, nor the attributes a program set on the old object)
_STATE_SLOTS = tuple(s for s in Tensor.__slots__ if s not in ("__weakref__", "__dict__"))


def _retype(t: Tensor, cls: type) -> Tensor:
    """A new ``cls`` object that is ``t`` (the same slots: elements, history, version)."""
    out = object.__new__(cls)
    for slot in _STATE_SLOTS:
        setattr(out, slot, getattr(t, slot))
    return out


def _convert(ret, cls):
    """torch's ``_convert``: the Tensors of ``ret`` (itself, or inside tuples, named tuples and
    lists) as ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = (_convert(r, cls) for r in ret)
        make = getattr(type(ret), "_make", None)  # a named tuple takes its fields one by one
        return make(items) if make is not None else type(ret)(items)
    return ret


def real_view(t) -> Tensor:
    """A complex tensor's elements as (..., 2) of its real dtype (real, imag pairs), an
    unrecorded view sharing its version counter (``view_as_real`` records one)."""
    v = Tensor._make(
        t._storage,
        (*t._shape, 2),
        (*(2 * s for s in t._stride), 1),
        2 * t._offset,
        t.dtype.to_real(),
    )
    v._counter = t._counter
    return v


def _complex_numpy(t) -> np.ndarray:
    """A complex tensor's elements on the host, read through its real view (a device's
    strided copy kernels take real dtypes)."""
    pairs = np.ascontiguousarray(real_view(t)._numpy())
    return pairs.view(t.dtype.np).reshape(t._shape)


def _out_of_bounds(shape, stride, offset, itemsize, nbytes):
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    need = (offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1) * itemsize
    raise RuntimeError(
        f"setStorage: sizes {list(shape)}, strides {list(stride)}, storage offset {offset}, and "
        f"itemsize {itemsize} requiring a storage size of {need} are out of bounds for storage "
        f"of size {nbytes}"
    )


def _rebuild(array, device, requires_grad, dtype_name=None):
    # (the dtype's name: a bfloat16 tensor's array holds float32 numbers)
    dt = D.as_dtype(array.dtype if dtype_name is None else dtype_name)
    t = Tensor._from_numpy(array, dt, device)
    return t.requires_grad_(requires_grad)


def _rebuild_subclass(cls, args, state):
    t = _retype(_rebuild(*args), cls)
    if state:
        t.__dict__.update(state)
    return t
