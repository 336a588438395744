"""dtype objects, PyTorch's type promotion, and the NumPy / OpenCL C names of each dtype."""

from __future__ import annotations

import numpy as np


class dtype:
    """A tensor element type, printed as PyTorch prints it (``clgrad.float32``)."""

    __slots__ = ("name", "np", "ctype", "compute_ctype", "itemsize", "category", "rank")

    def __init__(self, name, np_dtype, ctype, compute_ctype, category, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.ctype = ctype  # how the element is stored in an OpenCL buffer
        self.compute_ctype = compute_ctype  # how kernels compute with it (half computes in float)
        self.itemsize = self.np.itemsize
        self.category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.rank = rank  # order used to promote within a category

    is_floating_point = property(lambda self: self.category == 2)
    is_complex = property(lambda self: self.category == 3)
    is_signed = property(lambda self: self.name not in ("bool", "uint8"))

    def __repr__(self):
        return f"clgrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (float32 for complex64); any other dtype
        itself, as ``torch.dtype.to_real``.

        >>> clgrad.complex64.to_real()
        clgrad.float32
        """
        return _REAL_OF.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this floating dtype (complex64 for float32;
        float16 and bfloat16 give complex64: clgrad has no complex32), as
        ``torch.dtype.to_complex``.

        >>> clgrad.float64.to_complex()
        clgrad.complex128
        """
        if self.category == 3:
            return self
        if self.category != 2:
            raise RuntimeError(f"to_complex is only defined for floating types, got {self}")
        return complex128 if self is float64 else complex64


bool_ = dtype("bool", np.bool_, "uchar", "uchar", 0, 0)
uint8 = dtype("uint8", np.uint8, "uchar", "uchar", 1, 1)
int8 = dtype("int8", np.int8, "char", "char", 1, 1)
int16 = dtype("int16", np.int16, "short", "short", 1, 2)
int32 = dtype("int32", np.int32, "int", "int", 1, 3)
int64 = dtype("int64", np.int64, "long", "long", 1, 4)
float16 = dtype("float16", np.float16, "half", "float", 2, 1)
float32 = dtype("float32", np.float32, "float", "float", 2, 2)
float64 = dtype("float64", np.float64, "double", "double", 2, 3)

# float32's sign, exponent and top 7 significand bits: stored as those 16 bits (NumPy has no
# such type, so host arrays of it are uint16 bit patterns) and computed in float, as half is.
# Its OpenCL storage type "bf16" is a name of its own (a ushort typedef in the kernels'
# prelude), so that no template mistakes it for an integer.
bfloat16 = dtype("bfloat16", np.uint16, "bf16", "float", 2, 1)

# complex numbers: each element a (real, imag) pair of the part dtype, stored interleaved
# (the OpenCL type names the pair; kernels never see it: complex math runs on the real view)
complex64 = dtype("complex64", np.complex64, "float2", "float2", 3, 2)
complex128 = dtype("complex128", np.complex128, "double2", "double2", 3, 3)
COMPLEX = (complex64, complex128)
_REAL_OF = {complex64: float32, complex128: float64}

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
FLOATING = (float16, bfloat16, float32, float64)
INTEGRAL = (uint8, int8, int16, int32, int64)
# a NumPy array's dtype names a clgrad dtype; uint16 arrays are bfloat16's bits, not a dtype
_BY_NP = {d.np: d for d in ALL + COMPLEX if d is not bfloat16}
_BY_NAME = {d.name: d for d in ALL + COMPLEX}
_BY_NAME.update(half=float16, float=float32, double=float64, long=int64, int=int32, short=int16)
_BY_NAME.update(cfloat=complex64, cdouble=complex128)

_default_float = float32

# the dtypes stored in 16 bits and computed in float32
_FLOAT_STORED = (float16, bfloat16)


def _by_name(name):
    return _BY_NAME[name]


def get_default_dtype():
    return _default_float


def set_default_dtype(d):
    global _default_float
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def as_dtype(d) -> dtype:
    """Accepts a clgrad dtype, a NumPy dtype or type, a name, or a Python type (``float`` is
    float64, as in PyTorch, whatever the default dtype)."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return _BY_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"clgrad has no dtype for {d!r}") from None


def bfloat16_bits(values) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) nearest to ``values``, as PyTorch converts: float32
    first (a float64 rounds twice, as c10's ``BFloat16(float(x))``), then to nearest even of
    the 16 high bits; a NaN stays a quiet NaN of the same sign, +-inf and overflow past
    bfloat16's max give +-inf.

    >>> bfloat16_bits(np.array([1.0, 1.00390625, 1.01171875, -np.inf, np.nan]))
    array([16256, 16256, 16258, 65408, 32704], dtype=uint16)
    """
    with np.errstate(over="ignore"):  # a float64 past float32's range is inf, as in C
        f = np.array(values, dtype=np.float32, order="C")  # (a 0-d array stays 0-d)
    u = f.view(np.uint32)
    # (a NaN's pattern may wrap here: its rounded value is not taken)
    rounded = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16
    quiet_nan = (u >> 16) | np.uint32(0x40)
    return np.where(np.isnan(f), quiet_nan, rounded).astype(np.uint16)


def bfloat16_values(bits) -> np.ndarray:
    """The float32 values of bfloat16 bit patterns (uint16): exact, each pattern's bits are
    the high half of the float's.

    >>> bfloat16_values(np.array([16256, 49216], dtype=np.uint16))
    array([ 1., -3.], dtype=float32)
    """
    wide = np.asarray(bits, dtype=np.uint16).astype(np.uint32)
    return np.asarray(wide << 16, dtype=np.uint32).view(np.float32)  # (0-d stays an array)


def host_type(dt: dtype) -> np.dtype:
    """The NumPy type of ``dt``'s numbers on the host: float32 for bfloat16 (whose ``np`` is its
    bit patterns' uint16), ``dt.np`` for any other dtype. An array of it makes a tensor of
    ``dt`` (``clgrad.tensor(values.astype(host_type(dt)), dtype=dt)``)."""
    return np.dtype(np.float32) if dt is bfloat16 else dt.np


def held(value: float, dt: dtype) -> float:
    """The Python number ``value`` as the floating dtype ``dt`` holds it (rounded to nearest
    even; past its range, an infinity), as PyTorch casts a scalar into a tensor of ``dt``.

    >>> held(1.00390625, bfloat16), held(1e39, float32)
    (1.0, inf)
    """
    if dt is bfloat16:
        return float(bfloat16_values(bfloat16_bits(value)))
    with np.errstate(over="ignore"):
        return float(dt.np.type(value))


def host_values(array: np.ndarray, dt: dtype) -> np.ndarray:
    """A host array of ``dt``'s storage as numbers: bfloat16's bit patterns as float32, any
    other dtype's array as it is."""
    return bfloat16_values(array) if dt is bfloat16 else array


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's promote_types for the dtypes clgrad has."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == 3 and lo.category == 2:  # complex64 + float64: complex128
            return promote_types(hi.to_real(), lo).to_complex()
        return hi
    if {a, b} == {float16, bfloat16}:  # neither holds the other
        return float32
    if a.category == 1 and {a, b} == {uint8, int8}:
        return int16
    if a.category == 1 and uint8 in (a, b):
        other = b if a is uint8 else a
        return other if other.rank > 1 else int16
    return a if a.rank >= b.rank else b


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar when it stands alone."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, np.bool_):  # PyTorch's Scalar takes NumPy's bool as a float
        return _default_float
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return _default_float
    if isinstance(value, (complex, np.complexfloating)):
        return _default_float.to_complex()
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def _combine(higher, lower):
    # torch/csrc ... ScalarType combine_categories: a higher-priority group wins unless a
    # lower-priority group brings a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == 3:
        return higher
    if lower.category == 3:  # a complex number with a float tensor keeps its precision
        return higher.to_complex() if higher.category == 2 else lower
    if higher.category == 2:
        return higher
    if higher is bool_ or lower.category == 2:
        return promote_types(higher, lower) if lower.category > higher.category else higher
    return higher


def result_type(*operands) -> dtype:
    """PyTorch's result_type: dimensioned tensors > 0-d tensors > Python scalars."""
    groups = [None, None, None]
    for x in operands:
        if x is None:
            continue
        shape = getattr(x, "_shape", None)  # a Tensor (this module cannot import it)
        if shape is not None:
            g, d = (0 if shape else 1), x.dtype
        else:
            g, d = 2, scalar_dtype(x)
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def to_float(d: dtype) -> dtype:
    """The dtype an op that needs floating point (sqrt, true division) computes in."""
    return d if d.is_floating_point else _default_float


def accumulation(d: dtype) -> dtype:
    """The dtype a kernel computes ``d`` in: float32 for float16 and bfloat16 (16-bit
    storage, float arithmetic), ``d`` itself otherwise.

    >>> clgrad.dtypes.accumulation(clgrad.bfloat16)
    clgrad.float32
    """
    return float32 if d in _FLOAT_STORED else d


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow an in-place result of ``from_`` into ``to``: not
    floating into integral or bool, not integral into bool.

    >>> from clgrad.dtypes import can_cast, float32, int64
    >>> can_cast(int64, float32), can_cast(float32, int64)
    (True, False)
    """
    return from_.category <= to.category


class finfo:
    """Machine limits of a floating dtype (``bits``, ``eps``, ``max``, ``min``, ``tiny``,
    ``smallest_normal``, ``resolution``), as ``torch.finfo``; the default dtype when none given.

    >>> from clgrad.dtypes import finfo, float16
    >>> finfo(float16).max, finfo(float16).bits
    (65504.0, 16)
    """

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else type
        d = d.to_real()  # a complex dtype's limits are its parts'
        if not d.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use "
                "torch.iinfo to handle 'torch.finfo'"
            )
        if d is bfloat16:  # float32's exponent, 8 significand bits; NumPy has no such type
            self.dtype, self.bits, self.eps = d.name, 16, 2.0**-7
            self.max = float.fromhex("0x1.fep127")
            self.min = -self.max
            self.tiny = self.smallest_normal = 2.0**-126
            self.resolution = 0.01
            return
        info = np.finfo(d.np)
        self.dtype, self.bits = d.name, info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        # 10 ** -precision as a Python float, as torch's (NumPy's is float16(0.001) for half)
        self.resolution = 10.0**-info.precision

    def __eq__(self, other):  # (equal when of one dtype, as torch's; and unhashable)
        return type(other) is type(self) and other.dtype == self.dtype

    __hash__ = None

    def __repr__(self):
        # six significant digits (C's %g), as torch prints them
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype (``bits``, ``max``, ``min``), as ``torch.iinfo``.

    >>> from clgrad.dtypes import iinfo, int8
    >>> iinfo(int8).min, iinfo(int8).max
    (-128, 127)
    """

    def __init__(self, type):
        if type is bool_:  # (PyTorch's message names it as torch's)
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != 1:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to "
                "handle 'torch.iinfo'"
            )
        info = np.iinfo(type.np)
        self.dtype, self.bits = type.name, info.bits
        self.max, self.min = int(info.max), int(info.min)

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # as finfo's


class _NamedConstant:
    """A named constant that prints as ``clgrad.<name>`` (a memory format, a layout)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"clgrad.{self.name}"


class memory_format(_NamedConstant):
    """A memory layout name (``contiguous_format``, ``channels_last``, ...), as
    ``torch.memory_format``: accepted where PyTorch takes ``memory_format=``.

    >>> clgrad.channels_last
    clgrad.channels_last
    """

    __slots__ = ()


class layout(_NamedConstant):
    """How a tensor's elements are stored, as ``torch.layout``: clgrad's tensors are all
    ``strided`` (dense, with a stride per dim; no sparse layouts).

    >>> clgrad.ones(2).layout
    clgrad.strided
    """

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
