"""Shapes and strides into kernel arguments: broadcasting, dim merging, index width, sizes."""

from __future__ import annotations

import functools

import numpy as np

INT32_MAX = 2**31 - 1


def merge_dims(shape, strides_list):
    """Merges adjacent dims that every operand walks as one run; drops size-1 dims.

    ``strides_list`` holds each operand's strides over ``shape`` (0 where broadcast).
    Returns (shape, strides_list) with at least one dim.
    """
    dims = [i for i, s in enumerate(shape) if s != 1]
    if not dims:
        return (1,), [(0,) for _ in strides_list]
    out_shape = [shape[dims[0]]]
    out_strides = [[s[dims[0]]] for s in strides_list]
    for d in dims[1:]:
        n = shape[d]
        if all(os[-1] == s[d] * n for os, s in zip(out_strides, strides_list)):
            out_shape[-1] *= n
            for os, s in zip(out_strides, strides_list):
                os[-1] = s[d]
        else:
            out_shape.append(n)
            for os, s in zip(out_strides, strides_list):
                os.append(s[d])
    return tuple(out_shape), [tuple(s) for s in out_strides]


@functools.lru_cache(maxsize=4096)
def divisor(d: int) -> tuple[int, int]:
    """(m, s) such that ``n // d == (n * m) >> s`` for every 0 <= n < 2**31: division by an
    invariant integer as a multiply and a shift (Granlund and Montgomery, 1994). The strided
    kernels split an index into coordinates this way: a 64-bit multiply vectorizes and costs
    a few cycles, where an integer division is a scalar instruction of twenty or more (on PoCL
    a strided copy ran 5x faster).

    >>> m, s = divisor(7)
    >>> [(n * m) >> s for n in (0, 6, 7, 2**31 - 1)] == [0, 0, 1, (2**31 - 1) // 7]
    True
    """
    bits = (max(d, 1) - 1).bit_length()  # d <= 2**bits, so m < 2**32
    return -(-(1 << (31 + bits)) // max(d, 1)), 31 + bits


def dims_args(mshape, mstrides, maxd) -> list:
    """The strided kernels' per-dim arguments, innermost dim first: its size, the size's
    ``divisor`` and each operand's stride; ``maxd`` dims, those past the merged ones of size 1
    (so the kernels need no test for them).

    >>> args = dims_args((3, 5), [(5, 1), (0, 1)], 3)  # a (3, 5) output, a broadcast row
    >>> args == [5, *divisor(5), 1, 1, 3, *divisor(3), 5, 0, 1, *divisor(1), 1, 1]
    True
    """
    args = []
    ndim = len(mshape)
    for d in range(maxd):
        size = mshape[-1 - d] if d < ndim else 1
        args += (size, *divisor(size))
        args += [s[-1 - d] for s in mstrides] if d < ndim else [1] * len(mstrides)
    return args


def dims_types(index_np, n_strides, maxd) -> list:
    """The NumPy types of ``dims_args``' arguments for ``n_strides`` operands."""
    return [index_np, np.uint32, np.uint32, *[index_np] * n_strides] * maxd


def index_type(*extents) -> str:
    """``int`` when every offset a kernel can form fits in 31 bits, else ``long``."""
    return "int" if max(extents, default=0) <= INT32_MAX else "long"


def extent(v) -> int:
    """One past the largest element offset the ``View`` v reaches in its buffer."""
    if v.numel() == 0:
        return v.offset
    return v.offset + sum((n - 1) * abs(s) for n, s in zip(v.shape, v.strides)) + 1


INDEX_NP = {"int": np.int32, "long": np.int64}


# the NumPy type of a scalar kernel argument of each C type (half and bf16 scalars are passed
# as float)
SCALAR_NP = {
    "float": np.float32,
    "double": np.float64,
    "half": np.float32,
    "bf16": np.float32,
    "uchar": np.uint8,
    "char": np.int8,
    "short": np.int16,
    "int": np.int32,
    "long": np.int64,
}


def contiguous_strides(shape) -> tuple:
    """The strides of a contiguous (row-major) array of ``shape``."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def broadcast_strides(v, shape) -> tuple:
    """The View ``v``'s strides over ``shape`` it broadcasts to (0 where it is broadcast)."""
    if v.shape == shape:
        return v.strides
    lead = len(shape) - len(v.shape)
    return (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(v.shape, v.strides))


def group_kernel(rt, template: str, function: str, x, acc, itype: str, **params):
    """``function`` of ``template``, a kernel whose work-groups of ``rt.local_size`` items
    each walk a group of ``x``'s elements (nll, norm): rendered for x's storage type, the
    compute type of dtype ``acc`` and index type ``itype`` (and ``params``), built once per
    runtime."""
    st, ct = x.dtype.ctype, acc.compute_ctype
    return rt.cached(
        (template, function, st, ct, itype, rt.local_size, *params.values()),
        template,
        function,
        st=st,
        ct=ct,
        index_t=itype,
        ls=rt.local_size,
        fp64="double" in (st, ct),
        **params,
    )
