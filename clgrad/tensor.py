"""Tensor: a strided view (shape, strides, offset, dtype) of a Storage on one device.

Methods are one to three lines that call the ops in ``clgrad.ops``; autograd state
(``requires_grad``, ``grad``, ``grad_fn``) lives here too.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import dtypes as _dt
from .autograd.function import AccumulateGrad
from .device import resolve
from .storage import Storage


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``clgrad.Size([2, 3])``."""

    def __repr__(self):
        return f"clgrad.Size({list(self)})"

    def numel(self):
        return int(np.prod(self, dtype=np.int64))


def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _backend(device):
    """The module of primitives that runs on ``device`` (NumPy or OpenCL)."""
    return device.backend


class Tensor:
    __slots__ = (
        "_storage",
        "_shape",
        "_stride",
        "_offset",
        "dtype",
        "_requires_grad",
        "_grad",
        "grad_fn",
        "_output_nr",
        "_hooks",
        "_accumulator",
        "_retains_grad",
        "__weakref__",
    )
    __array_priority__ = 1000  # NumPy defers `array + tensor` to Tensor.__radd__

    def __init__(self, *args, **kwargs):
        raise TypeError("create tensors with clgrad.tensor(...), clgrad.zeros(...), ...")

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
        t.grad_fn = None
        t._output_nr = 0
        t._hooks = None
        t._accumulator = None
        t._retains_grad = False
        return t

    @classmethod
    def _empty(cls, shape, dt, device) -> Tensor:
        """A new contiguous tensor (on the hot path of every op: kept lean)."""
        shape = tuple(shape)
        strides, numel = [], 1
        for n in reversed(shape):
            if n < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension: {list(shape)}"
                )
            strides.append(numel)
            numel *= n if n else 1
        if dt.name == "float64" and not device.supports(dt):
            raise RuntimeError(
                f"{device} ({device.name}) cannot run {dt}: the device has no double precision "
                "(cl_khr_fp64); use float32"
            )
        numel = numel if 0 not in shape else 0
        return cls._make(Storage.allocate(device, numel, dt), shape, strides[::-1], 0, dt)

    @classmethod
    def _alias(cls, t, grad_fn=None, output_nr=0) -> Tensor:
        """A new tensor object over the same elements (and version counter)."""
        a = cls._make(t._storage, t._shape, t._stride, t._offset, t.dtype)
        if grad_fn is not None:
            a._requires_grad = True
            a.grad_fn = grad_fn
            a._output_nr = output_nr
        return a

    def _view(self, shape, stride, offset) -> Tensor:
        return Tensor._make(self._storage, shape, stride, offset, self.dtype)

    # ---- metadata --------------------------------------------------------------------------
    shape = property(lambda self: Size(self._shape))
    device = property(lambda self: self._storage.device)
    ndim = property(lambda self: len(self._shape))
    is_cuda = property(lambda self: False)
    is_floating_point = lambda self: self.dtype.is_floating_point  # noqa: E731
    _version = property(lambda self: self._storage.version)

    def size(self, dim=None):
        return self.shape if dim is None else self._shape[_wrap(dim, self.ndim)]

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[_wrap(dim, self.ndim)]

    def storage_offset(self):
        return self._offset

    def dim(self):
        return len(self._shape)

    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    def is_contiguous(self):
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

    def type_name(self):
        return f"clgrad.{self.dtype.name}"

    # ---- autograd state --------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

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
        if value is not None and tuple(value.shape) != self._shape:
            raise RuntimeError(
                f"assigned grad has data of a different size: {list(value.shape)} vs "
                f"{list(self._shape)}"
            )
        self._grad = value

    def _grad_accumulator(self):
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return acc

    def retain_grad(self):
        if self.grad_fn is None:
            return
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains_grad = True
        self.grad_fn._retained[self._output_nr] = weakref.ref(self)

    retains_grad = property(lambda self: self._retains_grad)

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
            hooks = self.grad_fn._pre_hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward

        backward([self], [gradient], retain_graph, create_graph, inputs=inputs)

    def detach(self):
        return Tensor._alias(self)

    def detach_(self):
        if self.grad_fn is not None and self._storage is not None:
            self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        return Tensor._alias(self)

    @data.setter
    def data(self, other):
        self._storage, self._shape, self._stride = other._storage, other._shape, other._stride
        self._offset, self.dtype = other._offset, other.dtype

    # ---- conversions and devices -----------------------------------------------------------
    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
        """``.to(device)``, ``.to(dtype)``, ``.to(device, dtype)`` or ``.to(other_tensor)``."""
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, _dt.dtype) or a in (float, int, bool):
                dtype = a
            else:
                device = a
        out = self
        if dtype is not None:
            out = E.cast(out, dtype)
        if device is not None and resolve(device) != out.device:
            out = C.to_device(out, resolve(device))
        return out.clone() if copy and out is self else out

    def cpu(self):
        return self.to("cpu")

    def cuda(self, *args, **kwargs):
        raise RuntimeError("clgrad has no CUDA backend; use .to('cl') for the OpenCL device")

    def type(self, dtype=None):
        return self.type_name() if dtype is None else self.to(dtype)

    float = lambda self: self.to(_dt.float32)  # noqa: E731
    double = lambda self: self.to(_dt.float64)  # noqa: E731
    half = lambda self: self.to(_dt.float16)  # noqa: E731
    long = lambda self: self.to(_dt.int64)  # noqa: E731
    int = lambda self: self.to(_dt.int32)  # noqa: E731
    short = lambda self: self.to(_dt.int16)  # noqa: E731
    bool = lambda self: self.to(_dt.bool_)  # noqa: E731
    byte = lambda self: self.to(_dt.uint8)  # noqa: E731
    char = lambda self: self.to(_dt.int8)  # noqa: E731

    def contiguous(self):
        return M.contiguous(self)

    def clone(self):
        return M.clone(self)

    # ---- arithmetic ------------------------------------------------------------------------
    __add__ = lambda self, o: E.add(self, o)  # noqa: E731
    __radd__ = lambda self, o: E.add(o, self)  # noqa: E731
    __sub__ = lambda self, o: E.sub(self, o)  # noqa: E731
    __rsub__ = lambda self, o: E.sub(o, self)  # noqa: E731
    __mul__ = lambda self, o: E.mul(self, o)  # noqa: E731
    __rmul__ = lambda self, o: E.mul(o, self)  # noqa: E731
    __truediv__ = lambda self, o: E.div(self, o)  # noqa: E731
    __rtruediv__ = lambda self, o: E.div(o, self)  # noqa: E731
    __floordiv__ = lambda self, o: E.floor_divide(self, o)  # noqa: E731
    __rfloordiv__ = lambda self, o: E.floor_divide(o, self)  # noqa: E731
    __mod__ = lambda self, o: E.remainder(self, o)  # noqa: E731
    __rmod__ = lambda self, o: E.remainder(o, self)  # noqa: E731
    __pow__ = lambda self, o: E.pow(self, o)  # noqa: E731
    __rpow__ = lambda self, o: E.pow(o, self)  # noqa: E731
    __matmul__ = lambda self, o: L.matmul(self, o)  # noqa: E731
    __rmatmul__ = lambda self, o: L.matmul(o, self)  # noqa: E731
    __neg__ = lambda self: E.neg(self)  # noqa: E731
    __pos__ = lambda self: self  # noqa: E731
    __abs__ = lambda self: E.Abs.apply(self)  # noqa: E731
    __invert__ = lambda self: E.bitwise_not(self)  # noqa: E731
    __and__ = __rand__ = lambda self, o: E.bitwise_and(self, o)  # noqa: E731
    __or__ = __ror__ = lambda self, o: E.bitwise_or(self, o)  # noqa: E731
    __xor__ = __rxor__ = lambda self, o: E.bitwise_xor(self, o)  # noqa: E731
    __eq__ = lambda self, o: E.compare("eq", self, o)  # noqa: E731
    __ne__ = lambda self, o: E.compare("ne", self, o)  # noqa: E731
    __lt__ = lambda self, o: E.compare("lt", self, o)  # noqa: E731
    __le__ = lambda self, o: E.compare("le", self, o)  # noqa: E731
    __gt__ = lambda self, o: E.compare("gt", self, o)  # noqa: E731
    __ge__ = lambda self, o: E.compare("ge", self, o)  # noqa: E731
    __hash__ = object.__hash__

    add = lambda self, o, alpha=1: E.add(self, o, alpha)  # noqa: E731
    sub = lambda self, o, alpha=1: E.sub(self, o, alpha)  # noqa: E731
    mul = lambda self, o: E.mul(self, o)  # noqa: E731
    div = lambda self, o, rounding_mode=None: E.div(self, o, rounding_mode)  # noqa: E731
    true_divide = lambda self, o: E.div(self, o)  # noqa: E731
    floor_divide = __floordiv__
    remainder = __mod__
    pow = __pow__
    matmul = __matmul__
    mm = lambda self, o: L.mm(self, o)  # noqa: E731
    bmm = lambda self, o: L.bmm(self, o)  # noqa: E731
    dot = lambda self, o: L.dot(self, o)  # noqa: E731
    neg = __neg__
    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    logical_not = lambda self: E.logical_not(self)  # noqa: E731
    logical_and = lambda self, o: E.bitwise_and(self.bool(), o.bool())  # noqa: E731
    logical_or = lambda self, o: E.bitwise_or(self.bool(), o.bool())  # noqa: E731
    bitwise_not = __invert__

    def equal(self, other):
        return self.shape == other.shape and bool((self == other).all())

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.allclose(self.numpy(force=True), np.asarray(other), rtol, atol, equal_nan))

    # ---- math ------------------------------------------------------------------------------
    exp = lambda self: E.Exp.apply(self)  # noqa: E731
    log = lambda self: E.Log.apply(self)  # noqa: E731
    log1p = lambda self: E.Log1p.apply(self)  # noqa: E731
    expm1 = lambda self: E.Expm1.apply(self)  # noqa: E731
    sqrt = lambda self: E.Sqrt.apply(self)  # noqa: E731
    rsqrt = lambda self: E.Rsqrt.apply(self)  # noqa: E731
    sin = lambda self: E.Sin.apply(self)  # noqa: E731
    cos = lambda self: E.Cos.apply(self)  # noqa: E731
    tanh = lambda self: E.Tanh.apply(self)  # noqa: E731
    sigmoid = lambda self: E.Sigmoid.apply(self)  # noqa: E731
    relu = lambda self: E.Relu.apply(self)  # noqa: E731
    erf = lambda self: E.Erf.apply(self)  # noqa: E731
    abs = __abs__
    sign = lambda self: E.Sign.apply(self)  # noqa: E731
    floor = lambda self: E.floor(self)  # noqa: E731
    ceil = lambda self: E.ceil(self)  # noqa: E731
    trunc = lambda self: E.trunc(self)  # noqa: E731
    round = lambda self, decimals=0: E.round_(self, decimals)  # noqa: E731
    clamp = lambda self, min=None, max=None: E.clamp(self, min, max)  # noqa: E731
    clip = clamp
    clamp_min = lambda self, v: E.clamp(self, v, None)  # noqa: E731
    clamp_max = lambda self, v: E.clamp(self, None, v)  # noqa: E731
    maximum = lambda self, o: E.Maximum.apply(self, o)  # noqa: E731
    minimum = lambda self, o: E.Minimum.apply(self, o)  # noqa: E731
    isnan = lambda self: E.isnan(self)  # noqa: E731
    isinf = lambda self: E.isinf(self)  # noqa: E731
    isfinite = lambda self: E.isfinite(self)  # noqa: E731
    where = lambda self, cond, other: E.where(cond, self, other)  # noqa: E731
    square = lambda self: E.mul(self, self)  # noqa: E731
    reciprocal = lambda self: E.div(1.0, self)  # noqa: E731

    # ---- reductions ------------------------------------------------------------------------
    sum = lambda self, dim=None, keepdim=False, dtype=None: R.sum(self, dim, keepdim, dtype)  # noqa: E731,E501
    mean = lambda self, dim=None, keepdim=False, dtype=None: R.mean(self, dim, keepdim, dtype)  # noqa: E731,E501
    prod = lambda self, dim=None, keepdim=False, dtype=None: R.prod(self, dim, keepdim, dtype)  # noqa: E731,E501
    max = lambda self, dim=None, keepdim=False: R.max(self, dim, keepdim)  # noqa: E731
    min = lambda self, dim=None, keepdim=False: R.min(self, dim, keepdim)  # noqa: E731
    amax = lambda self, dim=None, keepdim=False: R.amax(self, dim, keepdim)  # noqa: E731
    amin = lambda self, dim=None, keepdim=False: R.amin(self, dim, keepdim)  # noqa: E731
    argmax = lambda self, dim=None, keepdim=False: R.argmax(self, dim, keepdim)  # noqa: E731
    argmin = lambda self, dim=None, keepdim=False: R.argmin(self, dim, keepdim)  # noqa: E731
    all = lambda self, dim=None, keepdim=False: R.all(self, dim, keepdim)  # noqa: E731
    any = lambda self, dim=None, keepdim=False: R.any(self, dim, keepdim)  # noqa: E731
    logsumexp = lambda self, dim, keepdim=False: R.logsumexp(self, dim, keepdim)  # noqa: E731
    softmax = lambda self, dim, dtype=None: R.softmax(self, dim, dtype)  # noqa: E731
    log_softmax = lambda self, dim, dtype=None: R.log_softmax(self, dim, dtype)  # noqa: E731
    cumsum = lambda self, dim, dtype=None: R.cumsum(self, dim, dtype)  # noqa: E731

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=1):
        return R.var(self, dim, correction, keepdim, unbiased)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=1):
        return R.std(self, dim, correction, keepdim, unbiased)

    # ---- movement --------------------------------------------------------------------------
    view = lambda self, *shape: M.view(self, *shape)  # noqa: E731
    view_as = lambda self, other: M.view(self, other.shape)  # noqa: E731
    reshape = lambda self, *shape: M.reshape(self, *shape)  # noqa: E731
    reshape_as = lambda self, other: M.reshape(self, other.shape)  # noqa: E731
    flatten = lambda self, start_dim=0, end_dim=-1: M.flatten(self, start_dim, end_dim)  # noqa: E731,E501
    unflatten = lambda self, dim, sizes: M.unflatten(self, dim, sizes)  # noqa: E731
    permute = lambda self, *dims: M.permute(self, *dims)  # noqa: E731
    transpose = lambda self, d0, d1: M.transpose(self, d0, d1)  # noqa: E731
    swapaxes = transpose
    t = lambda self: M.t(self)  # noqa: E731
    T = property(lambda self: M.permute(self, tuple(reversed(range(self.ndim)))))
    mT = property(lambda self: M.transpose(self, -2, -1))
    movedim = lambda self, src, dst: M.movedim(self, src, dst)  # noqa: E731
    squeeze = lambda self, dim=None: M.squeeze(self, dim)  # noqa: E731
    unsqueeze = lambda self, dim: M.unsqueeze(self, dim)  # noqa: E731
    expand = lambda self, *shape: M.expand(self, *shape)  # noqa: E731
    expand_as = lambda self, other: M.expand(self, other.shape)  # noqa: E731
    broadcast_to = lambda self, shape: M.expand(self, shape)  # noqa: E731
    repeat = lambda self, *reps: M.repeat(self, *reps)  # noqa: E731
    flip = lambda self, dims: M.flip(self, dims)  # noqa: E731
    narrow = lambda self, dim, start, length: M.narrow(self, dim, start, length)  # noqa: E731
    select = lambda self, dim, index: M.select(self, dim, index)  # noqa: E731
    split = lambda self, size, dim=0: M.split(self, size, dim)  # noqa: E731
    chunk = lambda self, chunks, dim=0: M.chunk(self, chunks, dim)  # noqa: E731
    unbind = lambda self, dim=0: M.unbind(self, dim)  # noqa: E731
    as_strided = lambda self, size, stride, offset=None: M.as_strided(self, size, stride, offset)  # noqa: E731,E501

    # ---- indexing --------------------------------------------------------------------------
    __getitem__ = lambda self, key: I.getitem(self, key)  # noqa: E731
    __setitem__ = lambda self, key, value: I.setitem(self, key, value)  # noqa: E731
    gather = lambda self, dim, index: I.gather(self, dim, index)  # noqa: E731
    scatter_add = lambda self, dim, index, src: I.scatter_add(self, dim, index, src)  # noqa: E731
    index_select = lambda self, dim, index: I.index_select(self, dim, index)  # noqa: E731
    masked_fill = lambda self, mask, value: I.masked_fill(self, mask, value)  # noqa: E731
    masked_select = lambda self, mask: I.masked_select(self, mask)  # noqa: E731
    nonzero = lambda self, as_tuple=False: I.nonzero(self, as_tuple)  # noqa: E731

    # ---- in place --------------------------------------------------------------------------
    add_ = lambda self, o, alpha=1: IP.binary_("add", self, o if alpha == 1 else o * alpha)  # noqa: E731,E501
    sub_ = lambda self, o, alpha=1: IP.binary_("sub", self, o if alpha == 1 else o * alpha)  # noqa: E731,E501
    mul_ = lambda self, o: IP.binary_("mul", self, o)  # noqa: E731
    div_ = lambda self, o: IP.binary_("div", self, o)  # noqa: E731
    pow_ = lambda self, o: IP.binary_("pow", self, o)  # noqa: E731
    __iadd__ = lambda self, o: IP.binary_("add", self, o)  # noqa: E731
    __isub__ = lambda self, o: IP.binary_("sub", self, o)  # noqa: E731
    __imul__ = lambda self, o: IP.binary_("mul", self, o)  # noqa: E731
    __itruediv__ = lambda self, o: IP.binary_("div", self, o)  # noqa: E731
    zero_ = lambda self: IP.fill_(self, 0)  # noqa: E731
    fill_ = lambda self, value: IP.fill_(self, value)  # noqa: E731
    copy_ = lambda self, src, non_blocking=False: IP.copy_(self, src)  # noqa: E731
    clamp_ = lambda self, min=None, max=None: IP.unary_(self, lambda x: E.clamp(x, min, max))  # noqa: E731,E501
    relu_ = lambda self: IP.unary_(self, E.Relu.apply)  # noqa: E731
    exp_ = lambda self: IP.unary_(self, E.Exp.apply)  # noqa: E731
    sqrt_ = lambda self: IP.unary_(self, E.Sqrt.apply)  # noqa: E731
    neg_ = lambda self: IP.unary_(self, E.neg)  # noqa: E731
    sigmoid_ = lambda self: IP.unary_(self, E.Sigmoid.apply)  # noqa: E731
    tanh_ = lambda self: IP.unary_(self, E.Tanh.apply)  # noqa: E731
    masked_fill_ = lambda self, mask, v: IP.unary_(self, lambda x: I.masked_fill(x, mask, v))  # noqa: E731,E501
    lerp_ = lambda self, end, w: IP.binary_("add", self, (end - self) * w)  # noqa: E731

    def uniform_(self, a=0.0, b=1.0):
        return IP.copy_(
            self, C.rand(self.shape, dtype=self.dtype, device=self.device) * (b - a) + a
        )

    def normal_(self, mean=0.0, std=1.0):
        return IP.copy_(
            self, C.randn(self.shape, dtype=self.dtype, device=self.device) * std + mean
        )

    # ---- leaving clgrad --------------------------------------------------------------------
    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return _backend(self.device).to_numpy(self)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy(force=True)
        return a if dtype is None else a.astype(dtype)

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return self.numpy(force=True).reshape(()).item()

    def tolist(self):
        return self.numpy(force=True).tolist()

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no' if self.numel() == 0 else 'more than one'} "
                "values is ambiguous"
            )
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __repr__(self):
        from .format import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __reduce__(self):
        return (_rebuild, (self.detach().cpu().numpy(), str(self.device), self._requires_grad))

    def __deepcopy__(self, memo):
        t = self.detach().clone()
        t._requires_grad = self._requires_grad
        if self.grad is not None:
            t.grad = self.grad.clone()
        return t


def _rebuild(array, device, requires_grad):
    from .ops.creation import tensor

    return tensor(array, device=device, requires_grad=requires_grad)


class _HookHandle:
    def __init__(self, hooks, hook):
        self.hooks, self.hook = hooks, hook

    def remove(self):
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)


def _wrap(dim, ndim):
    """A dim in [-ndim, ndim) as a non-negative index, or IndexError as PyTorch words it."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def zeros(shape, dtype=None, device=None):
    from .ops.creation import zeros as _zeros

    return _zeros(shape, dtype=dtype, device=device)


# The ops import Tensor from this module, so they are imported after it is defined.
from .autograd import function as _function  # noqa: E402

_function.Tensor = Tensor
from .ops import creation as C  # noqa: E402
from .ops import elementwise as E  # noqa: E402
from .ops import indexing as I  # noqa: E402
from .ops import inplace as IP  # noqa: E402
from .ops import linalg as L  # noqa: E402
from .ops import movement as M  # noqa: E402
from .ops import reduction as R  # noqa: E402
