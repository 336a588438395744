"""The OpenCL device's primitives: each renders (once) a kernel family and launches it."""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from ...tensor import Tensor
from ..elementwise_table import OPS
from .launch import INDEX_NP, INT32_MAX, merge_dims


def _fp64(*dts) -> bool:
    return any(d.name == "float64" for d in dts)


# the NumPy type of a scalar kernel argument of each C type (half scalars are passed as float)
_SCALAR_NP = {
    "float": np.float32,
    "double": np.float64,
    "half": np.float32,
    "uchar": np.uint8,
    "char": np.int8,
    "short": np.int16,
    "int": np.int32,
    "long": np.int64,
}


_elementwise_kernels: dict = {}  # a lean key -> kernel: this lookup is on every op's path


def elementwise(op, out, operands, compute):
    """out = OPS[op](operands...), each operand converted to its compute dtype first."""
    n = out.numel()
    if n == 0:
        return
    rt = out._storage.device.runtime
    shape = out._shape
    # one pass over the operands: this function is on every op's path, so it stays lean
    flat = out.is_contiguous()
    small = out._storage.nbytes <= INT32_MAX * out.dtype.itemsize
    tensors, ins = [], []
    for x, dt in zip(operands, compute):
        if isinstance(x, Tensor):
            tensors.append(x)
            ins.append((x.dtype.ctype, dt.compute_ctype))
            flat = flat and x._shape == shape and x.is_contiguous()
            small = small and x._storage.nbytes <= INT32_MAX * x.dtype.itemsize
        else:
            ins.append((None, dt.compute_ctype))
    ins = tuple(ins)
    # offsets stay inside their storages, so a storage's size bounds every index
    itype = "int" if small else "long"
    if flat:
        mshape, mstrides, layout = (n,), None, "flat"
    else:
        strides = [out._stride] + [_broadcast_strides(t, shape) for t in tensors]
        mshape, mstrides = merge_dims(shape, strides)
        if len(mshape) == 1 and all(s[0] == 1 for s in mstrides):
            layout = "flat"
        else:
            # a 2-D launch pays off once rows are long enough to fill work-groups
            layout = "rows" if mshape[-1] >= 64 else "general"
    key = (rt, op, ins, out.dtype, len(mshape), layout, itype)
    kernel = _elementwise_kernels.get(key)
    if kernel is None:
        ct = compute[0].compute_ctype if compute else out.dtype.compute_ctype
        kernel = _elementwise_kernels[key] = rt.kernel(
            "elementwise.cl.mako",
            f"cg_elementwise_{op}",
            name=op,
            expr=OPS[op][0].replace("{T}", ct),
            ins=ins,
            out_ct=out.dtype.ctype,
            out_bool=out.dtype.name == "bool",
            ndim=len(mshape),
            layout=layout,
            index_t=itype,
            fp64=_fp64(out.dtype, *compute),
            grid_stride=rt.is_gpu,
        )
        # the argument types are known now: typing the kernel once lets every launch pass
        # plain Python numbers (no NumPy scalar per argument)
        I = INDEX_NP[itype]
        types = [None, I]
        for st, cty in ins:
            types += [_SCALAR_NP[cty]] if st is None else [None, I]
        if layout != "flat":
            types += [I] * (len(mshape) * (2 + len(tensors)))
        kernel.set_scalar_arg_dtypes(types + [I])
        rt.typed.add(kernel)
    args = [out._storage.data, out._offset]
    for x, (st, _) in zip(operands, ins):
        if st is None:
            args.append(x)
        else:
            args += [x._storage.data, x._offset]
    if layout != "flat":
        for d, size in enumerate(mshape):
            args += [size, mstrides[0][d]]
            args += [s[d] for s in mstrides[1:]]
    args.append(n)
    if layout == "rows":
        inner, L = mshape[-1], rt.local_size
        rt.launch(kernel, (-(-inner // L) * L, n // inner), (L, 1), args)
    else:
        rt.launch1d(kernel, n, args)


def _broadcast_strides(t, shape):
    lead = len(shape) - t.ndim
    return (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(t._shape, t._stride))


def arange(out, start, step, dt):
    elementwise("arange", out, [start, step], [dt, dt])


def random(out, kind, seed, offset, dt):
    n = out.numel()
    if n == 0:
        return
    rt = out.device.runtime
    acc = "double" if dt.name == "float64" else "float"
    kernel = rt.kernel(
        "random.cl.mako",
        "cg_random",
        kind=kind,
        out_ct=out.dtype.ctype,
        acc=acc,
        fp64=acc == "double",
    )
    args = [
        out._storage.data,
        np.uint64(out._offset),
        np.uint32(seed & 0xFFFFFFFF),
        np.uint32((seed >> 32) & 0xFFFFFFFF),
        np.uint64(offset),
        np.uint64(n),
    ]
    rt.launch1d(kernel, n, args)


def to_numpy(t) -> np.ndarray:
    """Waits for the queue and copies the tensor's elements to a new host array."""
    host = np.empty(t._shape, t.dtype.np)
    if host.size == 0:
        return host
    if not t.is_contiguous():
        t = t.contiguous()
    cl.enqueue_copy(
        t.device.runtime.queue,
        host,
        t._storage.data,
        src_offset=t._offset * t.dtype.itemsize,
        is_blocking=True,
    )
    return host


def from_numpy(dst, arr):
    """Copies a host array into a contiguous tensor (blocking: the array may be temporary)."""
    arr = np.ascontiguousarray(arr, dtype=dst.dtype.np)
    if arr.size:
        cl.enqueue_copy(
            dst.device.runtime.queue,
            dst._storage.data,
            arr,
            dst_offset=dst._offset * dst.dtype.itemsize,
            is_blocking=True,
        )


def _index_kernel(dst, function):
    rt = dst.device.runtime
    return rt, rt.kernel(
        "index.cl.mako",
        function,
        ct=dst.dtype.ctype,
        atomic64=rt.atomic64,
        fp64=dst.dtype.name == "float64",
    )


def _limit(t):
    return np.int64(t._storage.nbytes // t.dtype.itemsize)


def take(out, src, offsets):
    """out (contiguous) = src's storage at int64 ``offsets`` (contiguous)."""
    rt, k = _index_kernel(src, "cg_index_take")
    n = out.numel()
    rt.launch1d(
        k,
        n,
        [
            out._storage.data,
            np.int64(out._offset),
            src._storage.data,
            _limit(src),
            offsets._storage.data,
            np.int64(offsets._offset),
            np.int64(n),
        ],
    )


def put(dst, offsets, values, accumulate):
    """dst's storage at ``offsets`` = values, or += values (atomically) with ``accumulate``."""
    rt, k = _index_kernel(dst, "cg_index_put_add" if accumulate else "cg_index_put")
    n = offsets.numel()
    rt.launch1d(
        k,
        n,
        [
            dst._storage.data,
            _limit(dst),
            offsets._storage.data,
            np.int64(offsets._offset),
            values._storage.data,
            np.int64(values._offset),
            np.int64(n),
        ],
    )


def nonzero(x):
    """Indices of the nonzero elements (the count decides the shape, so this reads the device)."""
    host = to_numpy(x)
    return (
        np.stack(np.nonzero(host), axis=1).astype(np.int64)
        if x.ndim
        else np.zeros((int(bool(host)), 0), np.int64)
    )


from .matmul import matmul  # noqa: E402,F401  (kernels/matmul.cl.mako)
from .reduce import cumsum, reduce  # noqa: E402,F401  (kernels/reduce.cl.mako, scan.cl.mako)
