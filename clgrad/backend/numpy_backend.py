"""The ``cpu`` device: each primitive is a line or two of NumPy on strided views."""

from __future__ import annotations

import numpy as np

from .elementwise_table import OPS
from .philox import philox_uniform


def array(t) -> np.ndarray:
    """The tensor's elements as a NumPy view of its storage (no copy)."""
    item = t.dtype.itemsize
    base = t._storage.data
    return np.lib.stride_tricks.as_strided(
        base[t._offset :] if t._offset else base,
        t._shape,
        tuple(s * item for s in t._stride),
    )


def _compute_np(dt):
    return np.float32 if dt.name == "float16" else dt.np


def elementwise(op, out, operands, compute):
    fn = OPS[op][1]
    args = [
        array(x).astype(_compute_np(dt), copy=False)
        if hasattr(x, "_storage")
        else np.array(x, dtype=_compute_np(dt))
        for x, dt in zip(operands, compute)
    ]
    dest = array(out)
    with np.errstate(all="ignore"):
        if isinstance(fn, np.ufunc) and fn.nout == 1 and dest.dtype == _compute_np(compute[0]):
            fn(*args, out=dest)  # straight into the output: no temporary, no second pass
            return
        result = fn(*args)
    np.copyto(dest, result, casting="unsafe")


def arange(out, start, step, dt):
    with np.errstate(all="ignore"):
        values = start + np.arange(out.numel(), dtype=_compute_np(dt)) * np.array(
            step, _compute_np(dt)
        )
    np.copyto(array(out), values.reshape(out.shape), casting="unsafe")


_REDUCE = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "argmax": np.argmax,
    "argmin": np.argmin,
}


def reduce(op, out, x, dims, acc):
    """``out`` (shape of x without ``dims``) = op over ``dims`` of x, accumulated in ``acc``."""
    a = array(x)
    if acc is not None and op in ("sum", "prod"):
        a = a.astype(_compute_np(acc), copy=False)
    with np.errstate(all="ignore"):
        if op in ("argmax", "argmin"):
            # one dim (or all, flattened): NaN counts as the extreme, as PyTorch
            d = dims[0] if len(dims) == 1 and x.ndim > 0 else None
            src = a if d is not None else a.reshape(-1)
            axis = d if d is not None else 0
            if np.issubdtype(src.dtype, np.floating):
                nan = np.isnan(src)
                r = np.where(nan.any(axis=axis), nan.argmax(axis=axis), _REDUCE[op](src, axis=axis))
            else:
                r = _REDUCE[op](src, axis=axis)
        else:
            r = _REDUCE[op](a, axis=tuple(dims)) if a.size or op not in ("max", "min") else a
    np.copyto(array(out), r, casting="unsafe")


def cumsum(out, x, dim, acc):
    np.copyto(array(out), np.cumsum(array(x).astype(_compute_np(acc)), axis=dim), casting="unsafe")


def matmul(out, a, b, acc):
    dt = _compute_np(acc)
    np.copyto(
        array(out),
        np.matmul(array(a).astype(dt, copy=False), array(b).astype(dt, copy=False)),
        casting="unsafe",
    )


def nonzero(x):
    return (
        np.stack(np.nonzero(array(x)), axis=1).astype(np.int64)
        if x.ndim
        else np.zeros((int(bool(array(x))), 0), np.int64)
    )


def random(out, kind, seed, offset, dt):
    n = out.numel()
    u = philox_uniform(seed, offset, 2 * n if kind == "normal" else n)
    if kind == "normal":
        u1, u2 = u[0::2], u[1::2]
        values = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    else:
        values = u
    np.copyto(array(out), values.reshape(out.shape), casting="unsafe")


def to_numpy(t) -> np.ndarray:
    return array(t)


def from_numpy(dst, arr):
    np.copyto(array(dst), arr, casting="unsafe")


def synchronize():
    pass


def take(out, src, offsets):
    np.copyto(array(out), src._storage.data[array(offsets)], casting="unsafe")


def put(dst, offsets, values, accumulate):
    data, offs, vals = dst._storage.data, array(offsets).reshape(-1), array(values).reshape(-1)
    if accumulate:
        np.add.at(data, offs, vals)
    else:
        data[offs] = vals
