"""The ``cpu`` device: host memory, and each primitive a line or two of NumPy on strided views."""

from __future__ import annotations

import itertools
import math
import os
from functools import cached_property

import numpy as np

from .. import capture
from ..device import Device, DeviceType, register_kind
from ..dtypes import bfloat16, bfloat16_bits, bfloat16_values
from ..errors import OutOfMemoryError
from .base import OPTIMIZERS, Backend, View
from .philox import normal_bits, philox_bits, philox_uniform, philox_unit, uniform_bits


def array(v: View) -> np.ndarray:
    """The view's elements as a NumPy array over its storage (no copy). NumPy checks that the
    view stays inside the storage's buffer; a view of no element needs none of it (its offset
    may lie at or past the end: a column of an empty matrix)."""
    item = v.dtype.itemsize
    if 0 in v.shape:
        return np.empty(v.shape, v.dtype.np)
    return np.ndarray(
        v.shape,
        v.dtype.np,
        buffer=v.buffer,
        offset=v.offset * item,
        strides=tuple(s * item for s in v.strides),
    )


def read(v: View, ct=None) -> np.ndarray:
    """The view's elements as numbers, converted to the NumPy type ``ct`` where given: a
    bfloat16 view's bit patterns become float32 (a new array), any other view's array is
    ``array(v)`` (no copy unless converted)."""
    a = array(v)
    if v.dtype is bfloat16:
        a = bfloat16_values(a)
    return a if ct is None else a.astype(ct, copy=False)


def write(v: View, values) -> None:
    """Stores ``values`` (broadcast to the view's shape) into the view in its dtype: rounded to
    nearest even for bfloat16, else NumPy's unsafe cast (float to half overflows to inf,
    quietly). Floats reach uint8 through int64, as in PyTorch (and the OpenCL kernels): a
    negative value wraps on every machine, where NumPy's direct cast saturates on ARM."""
    if v.dtype is bfloat16:
        np.copyto(array(v), bfloat16_bits(values))
        return
    with np.errstate(over="ignore", invalid="ignore"):  # (NumPy warns on both)
        if v.dtype.np == np.uint8 and np.asarray(values).dtype.kind == "f":
            values = np.asarray(values).astype(np.int64)
        np.copyto(array(v), values, casting="unsafe")


def _compute_np(dt):
    # the 16-bit floats compute in float32 (bfloat16's NumPy type is its bits' uint16)
    return np.float32 if dt.name in ("float16", "bfloat16") else dt.np


# Backend.scan's combinations by ReduceKernel name
_SCANS = {"sum": np.cumsum, "prod": np.cumprod, "logaddexp": np.logaddexp.accumulate}


class HostAllocator:
    """Host storage is a byte array from NumPy (its allocator already pools memory)."""

    def alloc(self, nbytes: int) -> np.ndarray:
        if capture.active is not None:
            capture.note_host_work()
        try:
            return np.empty(nbytes, np.uint8)
        except MemoryError:
            raise OutOfMemoryError(f"cpu: cannot allocate {nbytes} bytes") from None

    def release(self, buffer, nbytes: int) -> None:
        pass


class HostBackend(Backend):
    def elementwise(self, kernel, out, operands, compute):
        fn = kernel.numpy
        args = [
            read(x, _compute_np(dt)) if isinstance(x, View) else np.array(x, dtype=_compute_np(dt))
            for x, dt in zip(operands, compute)
        ]
        dest = array(out)
        with np.errstate(all="ignore"):
            if isinstance(fn, np.ufunc) and fn.nout == 1 and dest.dtype == _compute_np(compute[0]):
                fn(*args, out=dest)  # straight into the output: no temporary, no second pass
                return
            result = fn(*args)
            write(out, result)

    def arange(self, out, start, step, dt):
        with np.errstate(all="ignore"):
            values = start + np.arange(out.numel(), dtype=_compute_np(dt)) * np.array(
                step, _compute_np(dt)
            )
        write(out, values.reshape(out.shape))

    def reduce(self, kernel, out, x, dims, acc):
        a = read(x)
        with np.errstate(all="ignore"):  # (a NaN cast to an integer gives what C's gives)
            if acc is not None and not kernel.arg:
                ct = _compute_np(acc)
                if kernel.map_expr != "x" and a.dtype.kind == "f" and np.dtype(ct).kind != "f":
                    # PyTorch maps each element before the cast (nansum's NaN is 0, then
                    # cast): the reduction of each element alone is its mapped value
                    a = kernel.numpy(a[..., None], axis=-1)
                a = a.astype(ct, copy=False)
            if kernel.arg:
                # one dim (or all, flattened): NaN counts as the extreme, as PyTorch
                d = dims[0] if len(dims) == 1 and x.ndim > 0 else None
                src = a if d is not None else a.reshape(-1)
                axis = d if d is not None else 0
                r = kernel.numpy(src, axis=axis)
                if np.issubdtype(src.dtype, np.floating):
                    nan = np.isnan(src)
                    r = np.where(nan.any(axis=axis), nan.argmax(axis=axis), r)
            else:
                r = kernel.numpy(a, axis=tuple(dims))
        write(out, r)

    def scan(self, out, x, dim, acc, kernel):
        ct = _compute_np(acc)
        if ct == np.float32 and (kernel.name in ("sum", "prod") or out.dtype.name == "float32"):
            # PyTorch's CPU kernels run float scans in double (acc_type<float>: a running
            # product may pass float's range and come back, a million logaddexps of float32
            # drift by 0.06), logcumsumexp's of the 16-bit floats in float: so does the host
            ct = np.float64
        a = read(x, ct)
        with np.errstate(all="ignore"):  # overflow and NaN propagate silently, as in PyTorch
            write(out, _SCANS[kernel.name](a, axis=dim))

    def scans_extreme(self, lines, length):
        return True

    def computes_distances(self, outputs, length):
        # (NumPy makes the differences of a block of rows at a time)
        return True

    def distances(self, out, x1, x2, p):
        a = read(x1, _compute_np(out.dtype))
        b = read(x2, _compute_np(out.dtype))
        result = np.empty(out.shape, a.dtype)
        rows = max(1, (1 << 22) // max(1, b.shape[1] * b.shape[2]))  # ~4M differences a block
        with np.errstate(all="ignore"):  # NaN and inf propagate silently, as in PyTorch
            for i in range(0, a.shape[1], rows):
                diff = np.abs(a[:, i : i + rows, None, :] - b[:, None, :, :])
                if p == 0:  # (a NaN makes it NaN, as PyTorch's min(ceil(|d|), 1))
                    part = np.minimum(np.ceil(diff), 1).sum(-1)
                elif p == 2:
                    part = np.sqrt((diff * diff).sum(-1))
                elif p == math.inf:  # (a NaN passed over, as PyTorch's)
                    part = np.fmax.reduce(diff, axis=-1, initial=0)
                elif p == 1:
                    part = diff.sum(-1)
                else:
                    part = (diff**p).sum(-1) ** (1 / p)
                result[:, i : i + rows] = part
        write(out, result)

    def cum_extreme(self, values, indices, x, dim, largest):
        a = read(x)
        running = (np.maximum if largest else np.minimum).accumulate(a, axis=dim)
        shape = [1] * a.ndim
        shape[dim] = a.shape[dim]
        position = np.arange(a.shape[dim]).reshape(shape)
        # the last position up to each whose value is the running extreme (a NaN: the last
        # NaN, which the extreme is from its first on)
        hit = (a == running) | np.isnan(a) if a.dtype.kind in "fc" else a == running
        index = np.maximum.accumulate(np.where(hit, position, 0), axis=dim)
        write(indices, index)
        write(values, np.take_along_axis(a, index, axis=dim))

    def matmul(self, out, a, b, acc):
        dt = _compute_np(acc)
        with np.errstate(all="ignore"):  # inf and NaN propagate silently, as in PyTorch
            product = np.matmul(read(a, dt), read(b, dt))
        write(out, product)

    def take(self, out, src, offsets):
        flat = array(View(src.buffer, 0, (src.nbytes // src.dtype.itemsize,), (1,), src.dtype, 0))
        np.copyto(array(out), flat[array(offsets)], casting="unsafe")

    def gather_rows(self, out, src, index):
        np.copyto(array(out), np.take(array(src), array(index), axis=1), casting="unsafe")

    def gather_dim(self, out, src, index, dim):
        idx = array(index)
        # src's other dims cut to index's sizes, as gather reads them
        a = array(src)[
            tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(idx.shape))
        ]
        np.copyto(array(out), np.take_along_axis(a, idx, axis=dim), casting="unsafe")

    def add_rows(self, out, index, src):
        o, idx, values = array(out), array(index), array(src)
        if out.dtype is bfloat16:  # through flat positions, each add rounded in order
            positions = np.arange(o.size).reshape(o.shape)[:, idx, :]
            flat = np.empty(o.size, np.uint16)
            flat[:] = o.reshape(-1)
            _accumulate_bfloat16(flat, positions.reshape(-1), bfloat16_values(values).reshape(-1))
            o[...] = flat.reshape(o.shape)
        else:
            np.add.at(o, (slice(None), idx), values)

    def put(self, dst, offsets, values, accumulate):
        flat = array(View(dst.buffer, 0, (dst.nbytes // dst.dtype.itemsize,), (1,), dst.dtype, 0))
        offs, vals = array(offsets).reshape(-1), array(values).reshape(-1)
        if accumulate and dst.dtype is bfloat16:
            _accumulate_bfloat16(flat, offs, bfloat16_values(vals))
        elif accumulate:
            np.add.at(flat, offs, vals)
        else:
            flat[offs] = vals

    def sort(self, values, indices, x, descending):
        a = read(x)
        if descending:
            # stable descending: the reverse of a stable ascending sort of the reversed row
            # keeps equal elements in their order (and NaN, sorted last, comes first)
            n = a.shape[-1]
            order = (n - 1 - np.argsort(a[..., ::-1], axis=-1, kind="stable"))[..., ::-1]
        else:
            order = np.argsort(a, axis=-1, kind="stable")
        np.copyto(array(indices), order, casting="unsafe")
        # the elements themselves, bit for bit (bfloat16's NaN payloads too)
        np.copyto(array(values), np.take_along_axis(array(x), order, axis=-1), casting="unsafe")

    def nonzero(self, x):
        a = read(x)  # (bfloat16's -0.0 is a nonzero pattern but zero)
        if not x.ndim:
            return np.zeros((int(bool(a)), 0), np.int64)
        return np.stack(np.nonzero(a), axis=1).astype(np.int64)

    def random(self, out, kind, seed, offset, dt):
        n = out.numel()
        if kind == "normal":
            # (0, 1): log() never sees 0; as many bits as the kernel's cg_uniform
            u = philox_uniform(seed, offset, 2 * n, normal_bits(dt.name))
            u1, u2 = u[0::2], u[1::2]
            values = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        elif kind == "bits":
            values = philox_bits(seed, offset, n).astype(np.int64)
        else:
            values = philox_unit(seed, offset, n, uniform_bits(out.dtype.name))
        write(out, values.reshape(out.shape))

    def optimizer_step(self, kind, flags, views, scalars):
        # the kernel's formulas (base.OPTIMIZERS) term by term in the compute dtype, each
        # product and sum rounded as the per-op path rounds it; the new values are written
        # back at the end (float16 storage is rounded once, there)
        spec = OPTIMIZERS[kind]
        ct = np.dtype(_compute_np(views[0].dtype)).type
        p, g, *states = [read(v, ct) for v in views]
        s = dict(zip(spec.scalars, (ct(x) for x in scalars)))
        st = dict(zip(spec.state_names(flags), states))
        new = {}  # index in views -> new value
        with np.errstate(all="ignore"):
            d = -g if "maximize" in flags else g
            if "weight_decay" in flags:
                if "decoupled" in flags:
                    p = p * s["decay"]
                else:
                    d = d + p * s["weight_decay"]
            if kind == "sgd":
                if "momentum" in flags:
                    if s["first"]:
                        buf = d.copy()
                    else:
                        buf = st["momentum_buffer"] * s["momentum"] + d * s["dampening1"]
                    new[2] = buf
                    d = d + buf * s["momentum"] if "nesterov" in flags else buf
                new[0] = p + d * s["neg_lr"]
            elif kind == "adam":
                m = st["exp_avg"] * s["beta1"] + d * s["one_minus_beta1"]
                v = st["exp_avg_sq"] * s["beta2"] + d * d * s["one_minus_beta2"]
                new[2], new[3] = m, v
                if "amsgrad" in flags:
                    v = np.maximum(st["max_exp_avg_sq"], v)  # NaN propagates, as maximum()
                    new[4] = v
                new[0] = p - m / (np.sqrt(v) / s["bias2_sqrt"] + s["eps"]) * s["step_size"]
            else:  # rmsprop
                sq = st["square_avg"] * s["alpha"] + d * d * s["one_minus_alpha"]
                new[2] = sq
                if "centered" in flags:
                    ga = st["grad_avg"] * s["alpha"] + d * s["one_minus_alpha"]
                    new[2 + len(states) - 1] = ga
                    avg = np.sqrt(sq - ga * ga) + s["eps"]
                else:
                    avg = np.sqrt(sq) + s["eps"]
                if "momentum" in flags:
                    buf = st["momentum_buffer"] * s["momentum"] + d / avg
                    new[3] = buf
                    new[0] = p + buf * s["neg_lr"]
                else:
                    new[0] = p + d / avg * s["neg_lr"]
        for i, value in new.items():
            write(views[i], value)

    def to_numpy(self, x):
        return array(x)

    def from_numpy(self, dst, arr):
        if dst.dtype is bfloat16 and arr.dtype != np.uint16:  # numbers, not bit patterns
            arr = bfloat16_bits(arr)
        with np.errstate(over="ignore", invalid="ignore"):  # 1e300 as float32 is inf, quietly
            np.copyto(array(dst), arr, casting="unsafe")

    def synchronize(self):
        pass

    def unfold(self, out, x, stride, dilation, padding):
        nd = x.ndim - 2
        kernel, outs = out.shape[2 : 2 + nd], out.shape[2 + nd :]
        if not out.numel():
            return
        a = np.pad(
            array(x),
            ((0, 0), (0, 0), *_conv_pads(x.shape[2:], kernel, outs, stride, dilation, padding)),
        )
        st = a.strides[2:]
        windows = np.lib.stride_tricks.as_strided(
            a,
            out.shape,
            a.strides[:2]
            + tuple(s * d for s, d in zip(st, dilation))
            + tuple(s * t for s, t in zip(st, stride)),
            writeable=False,
        )
        np.copyto(array(out), windows)

    def fold(self, out, cols, stride, dilation, padding):
        nd = out.ndim - 2
        spatial = out.shape[2:]
        kernel, outs = cols.shape[2 : 2 + nd], cols.shape[2 + nd :]
        pads = _conv_pads(spatial, kernel, outs, stride, dilation, padding)
        src = read(cols, _compute_np(cols.dtype))
        acc = np.zeros(
            out.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(spatial, pads)), src.dtype
        )
        if src.size:
            # one strided add per kernel position: the windows of one position never overlap
            for k in itertools.product(*map(range, kernel)):
                region = tuple(
                    slice(i * d, i * d + (o - 1) * s + 1, s)
                    for i, d, o, s in zip(k, dilation, outs, stride)
                )
                acc[(slice(None), slice(None)) + region] += src[(slice(None), slice(None)) + k]
        crop = tuple(slice(lo, lo + n) for n, (lo, _) in zip(spatial, pads))
        write(out, acc[(slice(None), slice(None)) + crop])

    def window_max(self, values, indices, win):
        if not values.numel():
            return
        # a copy: the windows overlap or skip (bfloat16's compared as numbers)
        flat = read(win).reshape(values.shape + (-1,))
        at = np.argmax(flat, axis=-1)  # the first largest ...
        if flat.dtype.kind in "fc":  # ... or the last NaN, as PyTorch's max pooling
            nan = np.isnan(flat)
            last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            at = np.where(nan.any(axis=-1), last_nan, at)
        np.copyto(array(indices), at)
        write(values, np.take_along_axis(flat, at[..., None], -1)[..., 0])

    def window_put(self, out, grad, indices, win):
        if not grad.numel():
            return
        window = int(np.prod(win.shape[grad.ndim :]))
        flat = np.zeros(grad.shape + (window,), grad.dtype.np)
        at = array(indices)[..., None].astype(np.intp)
        np.put_along_axis(flat, at, array(grad)[..., None], -1)
        np.copyto(array(win), flat.reshape(win.shape))  # the windows tile out: each once

    def softmax(self, out, x, dim, log, acc):
        a = read(x, _compute_np(acc))
        with np.errstate(all="ignore"):  # an all -inf row is NaN, as in PyTorch
            z = a - a.max(axis=dim, keepdims=True)
            e = np.exp(z)
            s = e.sum(axis=dim, keepdims=True)
            r = z - np.log(s) if log else e / s
        write(out, r)

    def softmax_backward(self, out, y, g, dim, log, acc):
        ct = _compute_np(acc)
        yv, gv = read(y, ct), read(g, ct)
        with np.errstate(all="ignore"):  # as the forward: NaN rows stay NaN
            if log:
                r = gv - np.exp(yv) * gv.sum(axis=dim, keepdims=True)
            else:
                r = yv * (gv - (gv * yv).sum(axis=dim, keepdims=True))
        write(out, r)

    def norm(self, y, stats, x, weight, bias, per, eps, acc):
        a = read(x, _compute_np(acc))
        m = a.mean(axis=(0, 2), keepdims=True)
        var = ((a - m) ** 2).mean(axis=(0, 2), keepdims=True)
        r = 1 / np.sqrt(var + eps)
        out = (a - m) * r
        shape = (1, -1, 1) if per == "c" else (1, 1, -1)
        if weight is not None:
            out = out * read(weight, out.dtype).reshape(shape)
        if bias is not None:
            out = out + read(bias, out.dtype).reshape(shape)
        write(y, out)
        for view, value in zip(stats, (m, var, r)):
            write(view, value.reshape(-1))

    def norm_backward(self, dx, dw, db, x, g, weight, mean, rstd, per, acc):
        ct = _compute_np(acc)
        m, r = read(mean, ct)[None, :, None], read(rstd, ct)[None, :, None]
        xhat = (read(x, ct) - m) * r
        gv = read(g, ct)
        shape = (1, -1, 1) if per == "c" else (1, 1, -1)
        hv = gv if weight is None else gv * read(weight, ct).reshape(shape)
        mean_h = hv.mean(axis=(0, 2), keepdims=True)
        mean_hx = (hv * xhat).mean(axis=(0, 2), keepdims=True)
        write(dx, r * (hv - mean_h - xhat * mean_hx))
        if per == "c" and dw is not None:
            write(dw, (gv * xhat).sum(axis=(0, 2)))
        if per == "c" and db is not None:
            write(db, gv.sum(axis=(0, 2)))

    def nll(self, out, x, target, weight, ignore_index, acc):
        terms, w = _nll_terms(x, target, weight, ignore_index, acc)
        if out.ndim == 1:
            write(out, terms)
            return
        groups = out.shape[0]
        starts = np.arange(groups) * -(-terms.size // groups)
        pairs = array(out)
        pairs[:, 0] = np.add.reduceat(terms, starts) if terms.size else 0
        pairs[:, 1] = np.add.reduceat(w, starts) if terms.size else 0

    def nll_grad(self, out, g, target, weight, ignore_index, acc):
        res = np.zeros(out.shape, _compute_np(acc))  # (then stored in out's dtype)
        t, counts = _nll_targets(target, res.shape[1], ignore_index)
        if counts.any():  # (not where there is no class to index)
            w = _nll_weights(weight, t, counts, acc)
            o, i = np.divmod(np.arange(t.size), res.shape[2])
            with np.errstate(invalid="ignore"):  # 0 * inf where an ignored element's g is inf
                res[o, t, i] = np.where(counts, -(w * read(g, _compute_np(acc))), 0)
        write(out, res)


def _nll_targets(target, c, ignore_index):
    """The targets (out-of-range ones as 0) and whether each counts (``Backend.nll``)."""
    t = array(target).reshape(-1)
    counts = (t >= 0) & (t < c) & (t != ignore_index)
    return np.where(counts, t, 0), counts


def _nll_weights(weight, t, counts, acc):
    """Each element's weight w[t] (1 without weights), 0 where it doesn't count."""
    ct = _compute_np(acc)
    if weight is None or not counts.any():  # (no weight to index where there is no class)
        return counts.astype(ct)
    return np.where(counts, read(weight, ct)[t], 0).astype(ct)


def _nll_terms(x, target, weight, ignore_index, acc):
    """Each element's term -w[t] * x[o, t, i] and its weight w[t] (0 where it doesn't
    count), in the compute type."""
    a = read(x)
    t, counts = _nll_targets(target, a.shape[1], ignore_index)
    w = _nll_weights(weight, t, counts, acc)
    o, i = np.divmod(np.arange(t.size), a.shape[2])
    if counts.any():
        picked = a[o, t, i].astype(_compute_np(acc))
    else:  # also where there is no class to index
        picked = np.zeros(t.size, w.dtype)
    return np.where(counts, -(w * picked), 0).astype(w.dtype), w


def _accumulate_bfloat16(flat, offsets, values):
    """``flat[offsets] += values`` on bfloat16 bit patterns, each add rounded to bfloat16 in
    the order given, as PyTorch's CPU accumulation adds a repeated offset's values one at a
    time: the k-th occurrences of the offsets are added together, in order of k."""
    order = np.argsort(offsets, kind="stable")
    sorted_offsets = offsets[order]
    first = np.r_[True, sorted_offsets[1:] != sorted_offsets[:-1]]
    group_start = np.maximum.accumulate(np.where(first, np.arange(order.size), 0))
    occurrence = np.empty_like(order)
    occurrence[order] = np.arange(order.size) - group_start  # k of each element
    for k in range(int(occurrence.max(initial=-1)) + 1):
        at = occurrence == k  # distinct offsets: one fancy-indexed add
        o = offsets[at]
        flat[o] = bfloat16_bits(bfloat16_values(flat[o]) + values[at])


def _conv_pads(spatial, kernel, outs, stride, dilation, padding):
    """(lo, hi) zeros per spatial dim that make every window of unfold's geometry fall inside
    the padded image."""
    return tuple(
        (p, max(0, (o - 1) * s + d * (k - 1) + 1 - (n + p)))
        for n, k, o, s, d, p in zip(spatial, kernel, outs, stride, dilation, padding)
    )


class HostDevice(Device):
    """The host: memory from NumPy, ops computed by NumPy."""

    kind = "cpu"
    is_cpu, is_cl = True, False
    type = DeviceType.HOST
    name = "host (NumPy)"
    platform = "host"
    vendor = "host"
    driver_version = "numpy " + np.__version__
    compute_units = os.cpu_count() or 1
    supports_float64 = supports_float16 = True

    @cached_property
    def global_memory(self):
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    @cached_property
    def backend(self):
        return HostBackend()

    @cached_property
    def allocator(self):
        return HostAllocator()


# index None, as PyTorch's ``torch.device("cpu").index`` (the host is one device)
register_kind(lambda first: [HostDevice._make(None)], host=True)
