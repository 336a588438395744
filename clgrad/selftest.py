"""``python -m clgrad selftest [device ...]``: builds every kernel family in every dtype a device
runs and checks what they compute against NumPy, to find driver bugs before they reach a model.

The battery, per device:

- ``elementwise``: every op declared in ``clgrad.ops.registry.ELEMENTWISE``, in every dtype it
  accepts, on a contiguous shape, a broadcast one and a non-contiguous (transposed) one, against
  the op's own NumPy reference;
- ``reduction``: every op in ``REDUCTIONS`` over all elements, over the inner dim and over the
  outer dim of a transposed input;
- ``matmul``, ``cumsum``, ``index`` (gather through ``take``, writes through ``put`` and
  ``scatter_add``), ``random`` (the Philox streams must match the host's) and ``copy`` (every
  dtype cast to every other, and a non-contiguous copy);
- ``grad``: the gradients of a few ops against central finite differences.

``run(device)`` returns the report (a dict, the JSON file's content); ``main(argv)`` is the
command line. A kernel that fails to build, raises or computes a wrong value is a failure named
by its family, dtype, op and case, with the error or the largest error and the driver version.

On an OpenCL device the elementwise kernels are built many to a program before the checks run
(one compiler call per few dozen kernels instead of one per kernel); the checks then run the
ordinary code path, which finds them built. A program that fails to build is skipped, and each
of its kernels then builds (and fails) on its own, where the failure is reported.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

import clgrad

from . import dtypes as D
from .device import Device, resolve
from .errors import KernelBuildError
from .ops.registry import ALL_DTYPES, ELEMENTWISE, REDUCTIONS

FAMILIES = ("elementwise", "reduction", "matmul", "cumsum", "index", "random", "copy", "grad")
# (not bfloat16: the checks' NumPy references have no such type; tests/test_bfloat16.py
# compares its ops with PyTorch's)
DTYPES = tuple(d.name for d in ALL_DTYPES if d is not D.bfloat16)
# (rtol, atol) by result dtype; integers and bools compare exactly
TOLERANCE = {"float16": (2e-3, 2e-3), "float32": (2e-5, 1e-5), "float64": (1e-10, 1e-12)}
# a sum of N elements: its rounding error grows with N (the accumulator is float32 for float16)
SUM_TOLERANCE = {"float16": (4e-3, 4e-3), "float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)}
# every op runs in float32; in the other dtypes (unless --full) these ops, one or more of each
# kind of kernel expression: arithmetic, division, comparison, selection, a transcendental
# function, a sign-dependent one, bitwise, a reduction of each kind
SAMPLE_OPS = {
    "add",
    "mul",
    "div",
    "eq",
    "where",
    "exp",
    "abs",
    "bitwise_and",
    "maximum",
    "sigmoid",
    "sum",
    "amax",
    "argmax",
}
_DIVIDING = {"div", "floor_divide", "remainder", "true_divide"}


class _Skip(Exception):
    """The check does not apply (NumPy has no reference for it)."""


class _Deferred(BaseException):
    """Raised by the collecting pass where a kernel is not built yet (a BaseException, so no
    ``except Exception`` on the way swallows it)."""


@dataclass
class Check:
    """One check: ``fn()`` returns (result, expected, rtol, atol) or raises."""

    family: str
    dtype: str
    op: str
    case: str
    fn: Callable[[], tuple]


# ---- inputs ----------------------------------------------------------------------------------
def _draw(dt, shape, lo, hi, rng, nonzero=False):
    """Random values of dtype ``dt`` in [lo, hi] (NumPy array)."""
    if dt is D.bool_:
        a = rng.random(shape) < 0.5
        return np.ones(shape, bool) if nonzero else a
    if dt.category == 1:
        info = np.iinfo(dt.np)
        ilo, ihi = max(math.ceil(lo), int(info.min)), min(math.floor(hi), int(info.max))
        if ilo > ihi:
            ilo, ihi = 0, 1
        a = rng.integers(ilo, ihi + 1, size=shape).astype(dt.np)
        if nonzero:
            a[a == 0] = 1
        return a
    a = rng.uniform(lo, hi, size=shape)
    if nonzero:
        a = np.where(np.abs(a) < 0.25, 0.5, a)
    return a.astype(dt.np)


def _tensor(array, dt, device):
    return clgrad.tensor(array, dtype=dt, device=device)


def _compute_np(dt):
    return np.float32 if dt is D.float16 else dt.np


def _tolerance(dt, table=TOLERANCE):
    return table.get(dt.name, (0.0, 0.0))


# ---- comparing -------------------------------------------------------------------------------
def compare(got, expected, rtol, atol) -> tuple[str | None, float | None]:
    """(None or what is wrong, the largest absolute error) of ``got`` against ``expected``:
    same shape, same NaN and infinity positions, and ``|got - expected| <= atol + rtol *
    |expected|`` elsewhere (exact for integers and bools).

    >>> print(compare(np.array([1.0, 2.0]), np.array([1.0, 2.1]), 1e-3, 1e-3)[0])
    max abs error 0.1 at 1 of 2 elements (tolerance 0.001 + 0.001*|expected|); e.g. [1]: got 2.0,
    expected 2.1
    """
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return f"shape {list(got.shape)}, expected {list(expected.shape)}", None
    if got.size == 0:
        return None, 0.0
    g, e = got.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore"):
        if got.dtype.kind in "biu" and expected.dtype.kind in "biu":
            bad = got != expected
            err = np.abs(g - e)
        else:
            nan_g, nan_e = np.isnan(g), np.isnan(e)
            inf = np.isinf(e) | np.isinf(g)
            finite = ~(nan_g | nan_e | inf)
            err = np.where(finite, np.abs(g - e), 0.0)
            bad = (nan_g != nan_e) | (inf & (g != e)) | (finite & (err > atol + rtol * np.abs(e)))
            err = np.where(bad & ~finite, np.inf, err)
    max_err = float(err.max())
    if not bad.any():
        return None, max_err
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return (
        f"max abs error {max_err:.3g} at {int(bad.sum())} of {bad.size} elements (tolerance "
        f"{atol:g} + {rtol:g}*|expected|); e.g. {list(where)}: got {got[where].item()!r}, "
        f"expected {expected[where].item()!r}"
    ), max_err


# ---- the battery -----------------------------------------------------------------------------
def _elementwise_checks(dev, dtypes, rng, quick, full):
    out = []
    for op in ELEMENTWISE.values():
        for dt in op.dtypes:
            if dt.name not in dtypes:
                continue
            cases = ["contiguous", "broadcast", "non-contiguous"]
            if dt is not D.float32 and not full and op.name not in SAMPLE_OPS:
                continue
            if quick and dt is not D.float32 and op.name != "add":
                cases = cases[:1]  # strided layouts through add only
            for case in cases:
                seed = int(rng.integers(2**31))
                out.append(
                    Check(
                        "elementwise",
                        dt.name,
                        op.name,
                        case,
                        _elementwise_fn(op, dt, dev, case, seed),
                    )
                )
    return out


def _elementwise_fn(op, dt, dev, case, seed):
    def fn():
        rng = np.random.default_rng(seed)
        lo, hi = op.domain or (-3, 3)
        n = op.arity
        if case == "contiguous":
            shapes = [(4, 67)] * n
        elif case == "broadcast":
            shapes = [(5, 7), (7,), (5, 1)][:n] if n > 1 else [(7,)]
        else:
            shapes = [(5, 7)] * n
        arrays = []
        for i, shape in enumerate(shapes):
            if i == 0 and op.mask_first:
                arrays.append(rng.random(shape) < 0.5)
            else:
                nonzero = op.name in _DIVIDING and i == 1
                arrays.append(_draw(dt, shape, lo, hi, rng, nonzero))
        tensors = []
        for i, a in enumerate(arrays):
            t_dt = D.bool_ if i == 0 and op.mask_first else dt
            if case == "non-contiguous" and i == 0:
                t = _tensor(np.ascontiguousarray(a.T), t_dt, dev).t()
            elif case == "broadcast" and n == 1:
                t = _tensor(a, t_dt, dev).expand(5, 7)
                arrays[i] = np.broadcast_to(a, (5, 7))
            else:
                t = _tensor(a, t_dt, dev)
            tensors.append(t)
        out_dt, ct = op.dtypes_of(tensors)
        cts = list(ct) if isinstance(ct, (list, tuple)) else [ct] * n
        # options (hardtanh's bounds, elu's alpha) at their defaults, as op.public(*tensors) has
        options = [_default(op.public, name) for name in op.scalars]
        if len(inspect.signature(op.kernel.numpy).parameters) == n:
            options = []  # the body's option (logit's eps clamps the input), not the kernel's
        try:
            with np.errstate(all="ignore"):
                ref = op.kernel.numpy(
                    *(a.astype(_compute_np(c)) for a, c in zip(arrays, cts)), *options
                )
                ref = np.asarray(ref).astype(out_dt.np)
        except Exception as e:
            raise _Skip(f"NumPy has no reference: {type(e).__name__}: {e}") from None
        result = op.public(*tensors)
        if result.dtype is not out_dt:
            raise AssertionError(f"result dtype {result.dtype.name}, expected {out_dt.name}")
        ref = np.broadcast_to(ref, tuple(result.shape))
        return result.cpu().numpy(), ref, *_tolerance(out_dt)

    return fn


def _default(function, name):
    return inspect.signature(function).parameters[name].default


def _reduction_checks(dev, dtypes, rng, quick, full):
    out = []
    for op in REDUCTIONS.values():
        for dt in ALL_DTYPES:
            if dt.name not in dtypes:
                continue
            cases = ["all", "dim 1", "dim 0 of transposed"]
            if quick:
                cases = [] if dt is not D.float32 and op.name not in SAMPLE_OPS else cases[::2]
                cases = cases[:1] if dt is not D.float32 else cases
            elif not full and dt is not D.float32 and op.name not in SAMPLE_OPS:
                cases = cases[:1]
            for case in cases:
                seed = int(rng.integers(2**31))
                out.append(
                    Check(
                        "reduction", dt.name, op.name, case, _reduction_fn(op, dt, dev, case, seed)
                    )
                )
    return out


def _reduction_fn(op, dt, dev, case, seed):
    def fn():
        rng = np.random.default_rng(seed)
        a = _draw(dt, (6, 37), -2, 2, rng)
        x = _tensor(a, dt, dev)
        if case == "dim 0 of transposed":
            a = np.ascontiguousarray(a.T)
            x = _tensor(a, dt, dev).t()
            a = a.T
        axis = {"all": None, "dim 1": 1, "dim 0 of transposed": 0}[case]
        result = op.public(x) if axis is None else op.public(x, axis)
        out_dt = result.dtype
        if op.arg:
            ref = op.kernel.numpy(
                a.reshape(-1) if axis is None else a, axis=0 if axis is None else axis
            )
            expect_dt = D.int64
        else:
            expect_dt = op.result(dt)
            acc = D.float32 if expect_dt is D.float16 else expect_dt
            with np.errstate(all="ignore"):
                ref = op.kernel.numpy(a.astype(_compute_np(acc)), axis=axis)
        if out_dt is not expect_dt:
            raise AssertionError(f"result dtype {out_dt.name}, expected {expect_dt.name}")
        ref = np.asarray(ref).astype(expect_dt.np)
        rtol, atol = _tolerance(expect_dt, SUM_TOLERANCE)
        return result.cpu().numpy(), ref, rtol, atol

    return fn


def _cumsum_checks(dev, dtypes, rng, quick, full):
    out = []
    for dt in ALL_DTYPES:
        if dt.name in dtypes:
            for dim in (1,) if quick else (1, 0):
                seed = int(rng.integers(2**31))

                def fn(dt=dt, dim=dim, seed=seed):
                    a = _draw(dt, (5, 41), -2, 2, np.random.default_rng(seed))
                    result = clgrad.cumsum(_tensor(a, dt, dev), dim)
                    expect_dt = D.int64 if dt.category < 2 else dt
                    acc = D.float32 if dt is D.float16 else expect_dt
                    ref = np.cumsum(a.astype(_compute_np(acc)), axis=dim).astype(expect_dt.np)
                    return result.cpu().numpy(), ref, *_tolerance(expect_dt, SUM_TOLERANCE)

                out.append(Check("cumsum", dt.name, "cumsum", f"dim {dim}", fn))
    return out


def _matmul_checks(dev, dtypes, rng, quick, full):
    out = []
    shapes = {
        "(7, 9) @ (9, 5)": ((7, 9), (9, 5), False),
        "transposed (7, 9) @ (9, 5)": ((7, 9), (9, 5), True),
        "batched (3, 4, 6) @ (6, 5)": ((3, 4, 6), (6, 5), False),
    }
    for dt in ALL_DTYPES:
        if dt.name not in dtypes or dt is D.bool_:
            continue
        for case, (sa, sb, transposed) in list(shapes.items())[: 1 if quick else None]:
            seed = int(rng.integers(2**31))

            def fn(dt=dt, sa=sa, sb=sb, transposed=transposed, seed=seed):
                r = np.random.default_rng(seed)
                a, b = _draw(dt, sa, -2, 2, r), _draw(dt, sb, -2, 2, r)
                ta = _tensor(np.ascontiguousarray(a.T), dt, dev).t() if transposed else None
                ta = ta if ta is not None else _tensor(a, dt, dev)
                result = ta @ _tensor(b, dt, dev)
                acc = _compute_np(dt)
                ref = np.matmul(a.astype(acc), b.astype(acc)).astype(dt.np)
                return result.cpu().numpy(), ref, *_tolerance(dt, SUM_TOLERANCE)

            out.append(Check("matmul", dt.name, "matmul", case, fn))
    return out


def _index_checks(dev, dtypes, rng, quick, full):
    out = []
    for dt in ALL_DTYPES:
        if dt.name not in dtypes:
            continue
        seed = int(rng.integers(2**31))

        def take(dt=dt, seed=seed):
            r = np.random.default_rng(seed)
            a = _draw(dt, (6, 9), -3, 3, r)
            idx = r.integers(0, 6, size=11)
            result = _tensor(a, dt, dev)[_tensor(idx, D.int64, dev)]
            return result.cpu().numpy(), a[idx], 0.0, 0.0

        def put(dt=dt, seed=seed):
            r = np.random.default_rng(seed)
            a, v = _draw(dt, (6, 9), -3, 3, r), _draw(dt, (3, 9), -3, 3, r)
            idx = np.array([4, 0, 2])
            x = _tensor(a, dt, dev)
            x[_tensor(idx, D.int64, dev)] = _tensor(v, dt, dev)
            a = a.copy()
            a[idx] = v
            return x.cpu().numpy(), a, 0.0, 0.0

        def scatter_add(dt=dt, seed=seed):
            r = np.random.default_rng(seed)
            a, v = _draw(dt, (5,), 0, 3, r), _draw(dt, (12,), 0, 3, r)
            idx = r.integers(0, 5, size=12)
            result = clgrad.scatter_add(
                _tensor(a, dt, dev), 0, _tensor(idx, D.int64, dev), _tensor(v, dt, dev)
            )
            acc = _compute_np(dt)
            ref = a.astype(acc)
            np.add.at(ref, idx, v.astype(acc))
            return result.cpu().numpy(), ref.astype(dt.np), *_tolerance(dt, SUM_TOLERANCE)

        out.append(Check("index", dt.name, "take", "x[index]", take))
        out.append(Check("index", dt.name, "put", "x[index] = v", put))
        if dt is not D.bool_:
            out.append(Check("index", dt.name, "put_add", "scatter_add", scatter_add))
    return out


def _random_checks(dev, dtypes, rng, quick, full):
    out = []
    host = resolve("cpu")
    for dt in ALL_DTYPES:
        if dt.name not in dtypes:
            continue
        seed = int(rng.integers(2**31))
        if dt.is_floating_point:
            for kind, fn_ in (("uniform", clgrad.rand), ("normal", clgrad.randn)):

                def fn(dt=dt, make=fn_, kind=kind, seed=seed):
                    clgrad.manual_seed(seed)
                    result = make(1000, dtype=dt, device=dev).cpu().numpy()
                    clgrad.manual_seed(seed)
                    ref = make(1000, dtype=dt, device=host).cpu().numpy()
                    stats = _random_stats(result, kind)
                    if stats:
                        raise AssertionError(stats)
                    return result, ref, *_tolerance(dt)

                out.append(
                    Check("random", dt.name, "rand" if kind == "uniform" else "randn", kind, fn)
                )
        elif dt is not D.bool_:

            def fn(dt=dt, seed=seed):
                clgrad.manual_seed(seed)
                result = clgrad.randint(0, 7, (1000,), dtype=dt, device=dev).cpu().numpy()
                clgrad.manual_seed(seed)
                ref = clgrad.randint(0, 7, (1000,), dtype=dt, device=host).cpu().numpy()
                if len(np.unique(result)) != 7 or result.min() < 0 or result.max() > 6:
                    raise AssertionError(f"randint(0, 7) gave values {np.unique(result)}")
                return result, ref, 0.0, 0.0

            out.append(Check("random", dt.name, "randint", "uniform", fn))
    return out


def _random_stats(x, kind):
    """What is statistically off about 1000 draws, or an empty string."""
    x = x.astype(np.float64)
    if kind == "uniform":
        if x.min() < 0 or x.max() >= 1:
            return f"rand gave values outside [0, 1): min {x.min()}, max {x.max()}"
        if abs(x.mean() - 0.5) > 0.06:
            return f"rand's mean is {x.mean():.3f}, expected 0.5"
    elif abs(x.mean()) > 0.2 or abs(x.std() - 1) > 0.15:
        return f"randn's mean is {x.mean():.3f} and std {x.std():.3f}, expected 0 and 1"
    return ""


def _copy_checks(dev, dtypes, rng, quick, full):
    out = []
    for src in ALL_DTYPES:
        if src.name not in dtypes:
            continue
        targets = [d for d in ALL_DTYPES if d.name in dtypes]
        if quick:
            targets = [d for d in targets if d in (src, D.float32, D.int64, D.bool_)]
        for dst in targets:
            seed = int(rng.integers(2**31))

            def fn(src=src, dst=dst, seed=seed):
                # non-negative where the target is unsigned: a negative float to uint8 is
                # undefined in C and in NumPy alike
                lo = 0 if dst is D.uint8 else -3
                a = _draw(src, (4, 67), lo, 3, np.random.default_rng(seed))
                if src.is_floating_point and not dst.is_floating_point and dst is not D.bool_:
                    a = np.trunc(a).astype(src.np)  # exact values: no rounding question
                if src is dst:
                    result = _tensor(np.ascontiguousarray(a.T), src, dev).t().contiguous()
                else:
                    result = _tensor(a, src, dev).to(dst)
                return result.cpu().numpy(), a.astype(dst.np), *_tolerance(dst)

            case = "non-contiguous copy" if src is dst else f"to {dst.name}"
            out.append(Check("copy", src.name, "copy" if src is dst else "cast", case, fn))
    return out


# gradient checks: (name, function of the inputs, input shapes, domain)
_GRADS: list[tuple[str, Callable, tuple, tuple]] = [
    ("mul (broadcast)", lambda a, b: a * b, ((3, 4), (4,)), (-2, 2)),
    ("div", lambda a, b: a / b, ((3, 4), (3, 4)), (0.5, 2)),
    ("tanh", lambda a: a.tanh(), ((3, 4),), (-2, 2)),
    ("sigmoid", lambda a: a.sigmoid(), ((3, 4),), (-3, 3)),
    ("pow", lambda a, b: a**b, ((3, 4), (3, 4)), (0.5, 2)),
    ("sum(dim=1)", lambda a: a.sum(1), ((3, 4),), (-2, 2)),
    ("amax(dim=0)", lambda a: a.amax(0), ((3, 4),), (-2, 2)),
    ("matmul", lambda a, b: a @ b, ((3, 4), (4, 2)), (-2, 2)),
    ("cumsum", lambda a: a.cumsum(1), ((3, 4),), (-2, 2)),
    ("softmax", lambda a: a.softmax(1), ((3, 4),), (-2, 2)),
    ("index", lambda a: a[clgrad.tensor([2, 0, 2], device=a.device)], ((3, 4),), (-2, 2)),
]


def _grad_checks(dev, dtypes, rng, quick, full):
    dt = D.float64 if "float64" in dtypes else D.float32
    if dt.name not in dtypes:
        return []
    out = []
    for name, f, shapes, (lo, hi) in _GRADS[: 4 if quick else None]:
        seed = int(rng.integers(2**31))

        def fn(f=f, shapes=shapes, lo=lo, hi=hi, seed=seed):
            r = np.random.default_rng(seed)
            arrays = [r.uniform(lo, hi, s) for s in shapes]
            eps, (rtol, atol) = (1e-6, (1e-5, 1e-7)) if dt is D.float64 else (1e-2, (2e-2, 2e-3))
            xs = [_tensor(a, dt, dev).requires_grad_(True) for a in arrays]
            y = f(*xs)
            w = r.uniform(-1, 1, tuple(y.shape))
            (y * _tensor(w, dt, dev)).sum().backward()
            got = np.concatenate([x.grad.cpu().numpy().reshape(-1) for x in xs])

            def loss(values):
                with clgrad.no_grad():
                    ts = [_tensor(v, dt, dev) for v in values]
                    return float((f(*ts).cpu().numpy().astype(np.float64) * w).sum())

            numeric = []
            for k, a in enumerate(arrays):
                for i in range(a.size):
                    plus = [v.copy() for v in arrays]
                    minus = [v.copy() for v in arrays]
                    plus[k].reshape(-1)[i] += eps
                    minus[k].reshape(-1)[i] -= eps
                    numeric.append((loss(plus) - loss(minus)) / (2 * eps))
            return got, np.array(numeric), rtol, atol

        out.append(Check("grad", dt.name, name, "vs finite differences", fn))
    return out


_BUILDERS = {
    "elementwise": _elementwise_checks,
    "reduction": _reduction_checks,
    "matmul": _matmul_checks,
    "cumsum": _cumsum_checks,
    "index": _index_checks,
    "random": _random_checks,
    "copy": _copy_checks,
    "grad": _grad_checks,
}


def checks(device, *, quick=False, full=False, only: Iterable[str] | None = None) -> list[Check]:
    """The battery for ``device``: every family in every dtype the device runs; every
    elementwise op in float32 and a sample of them in the other dtypes, or every op in every
    dtype with ``full`` or where ``only`` names the checks to keep (families, ops, dtypes).

    >>> len(checks("cpu", only=["matmul"])) > 0
    True
    """
    dev = resolve(device)
    dtypes = {d.name for d in ALL_DTYPES if d.name in DTYPES and dev.supports(d)}
    rng = np.random.default_rng(0)
    wanted = set(only or ())
    out = []
    for build in _BUILDERS.values():
        for c in build(dev, dtypes, rng, quick, full or bool(wanted)):
            if not wanted or wanted & {c.family, c.op, c.dtype}:
                out.append(c)
    return out


# ---- running ---------------------------------------------------------------------------------
def _run_one(check: Check, host_twin: Callable[[Check], Check | None], clock: dict) -> dict:
    t0 = time.perf_counter()
    try:
        return _run_one_timed(check, host_twin)
    finally:
        clock[check.family] = clock.get(check.family, 0.0) + time.perf_counter() - t0


def _run_one_timed(check, host_twin):
    result = {"family": check.family, "dtype": check.dtype, "op": check.op, "case": check.case}
    try:
        got, expected, rtol, atol = check.fn()
    except _Skip as e:
        return {**result, "status": "skipped", "error": str(e)}
    except _Deferred:
        raise
    except Exception as e:  # a build failure, an exception in a launch, a wrong dtype
        message = f"{type(e).__name__}: {e}"
        if not isinstance(e, KernelBuildError) and _fails_on_host(host_twin(check)):
            # the host refuses it too: clgrad's own behaviour (a dtype an op does not take),
            # not the device's
            return {**result, "status": "skipped", "error": f"refused on every device: {message}"}
        return {**result, "status": "failed", "error": message[:4000]}
    error, max_err = compare(got, expected, rtol, atol)
    result.update(max_error=max_err, tolerance=[rtol, atol])
    if error:
        return {**result, "status": "failed", "error": error}
    return {**result, "status": "passed"}


def _fails_on_host(twin: Check | None) -> bool:
    if twin is None:
        return False
    try:
        twin.fn()
    except Exception:
        return True
    return False


def _run_all(dev: Device, battery: list[Check], log, host_twin, clock) -> list[dict]:
    """Runs every check. On an OpenCL device that builds one op per program (a GPU; CPU
    devices bundle them, see ``Runtime.bundle``), first in rounds where a check stops at the
    first elementwise kernel not built yet (recording what it wants); the wanted kernels are
    then built many per program, and the checks that stopped run again (a gradient needs the
    forward kernels before it asks for the backward ones). A check that got through a round
    keeps its result: it ran the ordinary path on kernels already built."""
    results: list[dict | None] = [None] * len(battery)
    pending = list(range(len(battery)))
    if dev.is_cl and not dev.runtime.bundle:  # (a device that bundles builds few programs)
        rt = dev.runtime
        original = rt.program
        done: set = set()
        for _round in range(4):
            wanted: dict = {}

            def collect(template, wanted=wanted, **params):
                key = (template, tuple(sorted(params.items())))
                if template != "elementwise.cl.mako" or key in rt.programs or key in done:
                    return original(template, **params)
                wanted[key] = params
                raise _Deferred

            rt.program = collect
            stopped = []
            try:
                for i in pending:
                    try:
                        results[i] = _run_one(battery[i], host_twin, clock)
                    except _Deferred:
                        stopped.append(i)
            finally:
                del rt.program
            pending = stopped
            if not wanted:
                break
            t0 = time.perf_counter()
            _build_together(rt, wanted)
            clock["elementwise builds"] = clock.get("elementwise builds", 0.0) + (
                time.perf_counter() - t0
            )
            done.update(wanted)
            log(f"  built {len(wanted)} elementwise kernels in {time.perf_counter() - t0:.1f} s")
    for i in pending:
        results[i] = _run_one(battery[i], host_twin, clock)
    return results


def _build_together(rt, wanted: dict, per_program: int = 48) -> None:
    from .backend.opencl.render import render

    groups: dict[str, list] = {}
    for key in sorted(wanted, key=repr):
        source = render(key[0], **wanted[key])
        cut = source.find("__kernel void ")
        if cut < 0:
            continue
        names = {name for name, _ in wanted[key]["ops"]}
        groups.setdefault(source[:cut], []).append((key, names, source[cut:]))
    for header, members in groups.items():
        buckets: list[list] = []
        for key, names, body in members:
            for b in buckets:
                if len(b) < per_program and all(names.isdisjoint(n) for _, n, _ in b):
                    b.append((key, names, body))
                    break
            else:
                buckets.append([(key, names, body)])
        for b in buckets:
            source = header + "".join(body for _, _, body in b)
            try:
                prg = rt.build(source, "selftest-elementwise")
            except Exception:
                continue  # each kernel then builds alone in the checks, and reports there
            for key, _, _ in b:
                rt.programs.setdefault(key, prg)


def device_info(dev: Device) -> dict:
    """The device's name, vendor, driver and platform, and the versions of what runs it.

    >>> device_info(clgrad.device("cpu"))["device"]
    'cpu'
    """
    info = {
        "device": str(dev),
        "name": dev.name,
        "vendor": dev.vendor,
        "driver_version": dev.driver_version,
        "platform": dev.platform if isinstance(dev.platform, str) else str(dev.platform),
        "type": dev.type.value,
        "float64": bool(dev.supports_float64),
        "clgrad": clgrad.version.clgrad_version,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "os": platform.platform(),
    }
    try:
        import pyopencl

        info["pyopencl"] = pyopencl.VERSION_TEXT
    except ImportError:
        info["pyopencl"] = None
    return info


def run(device=None, *, quick=False, full=False, only=None, log=None) -> dict:
    """Runs the self-test battery on ``device`` (default: the default device) and returns its
    report: ``device`` (name, vendor, driver, platform, versions), ``passed`` (True when every
    check passed), ``summary`` (family -> dtype -> counts), ``failures`` (family, dtype, op,
    case, error or largest error, driver) and ``seconds``. ``quick`` checks fewer shapes and
    casts; ``full`` every elementwise op in every dtype (else a sample outside float32);
    ``only`` keeps the checks of the named families, ops or dtypes; ``log`` (a function of a
    string) hears progress.

    >>> report = run("cpu", quick=True, only=["add", "sum"])
    >>> report["passed"], report["summary"]["elementwise"]["float32"]
    (True, {'passed': 3, 'failed': 0, 'skipped': 0})
    """
    log = log or (lambda message: None)
    dev = resolve(device) if device is not None else clgrad.default_device()
    start = time.perf_counter()
    info = device_info(dev)
    battery = checks(dev, quick=quick, full=full, only=only)
    log(f"{dev} ({dev.name}, driver {dev.driver_version}): {len(battery)} checks")
    twins: dict = {}

    def host_twin(check):
        """The same check on the host (the same inputs where the dtypes match)."""
        if not twins:
            twins.update(
                {
                    (c.family, c.dtype, c.op, c.case): c
                    for c in checks("cpu", quick=quick, full=full, only=only)
                }
            )
        return twins.get((check.family, check.dtype, check.op, check.case))

    clock: dict = {}
    results = _run_all(dev, battery, log, host_twin, clock)
    summary: dict = {}
    for r in results:
        counts = summary.setdefault(r["family"], {}).setdefault(
            r["dtype"], {"passed": 0, "failed": 0, "skipped": 0}
        )
        counts[r["status"]] += 1
    failures = [
        {**r, "device": str(dev), "driver_version": dev.driver_version}
        for r in results
        if r["status"] == "failed"
    ]
    return {
        "clgrad_selftest": 1,
        "device": info,
        "quick": bool(quick),
        "full": bool(full),
        "only": sorted(only) if only else None,
        "passed": not failures,
        "checks": len(results),
        "failed": len(failures),
        "skipped": sum(r["status"] == "skipped" for r in results),
        "seconds": round(time.perf_counter() - start, 2),
        "seconds_by_family": {k: round(v, 2) for k, v in clock.items()},
        "summary": summary,
        "failures": failures,
        "skips": [r for r in results if r["status"] == "skipped"],
    }


def table(report: dict) -> str:
    """The report as a table: one row per family, one column per dtype, each cell
    ``passed/checked`` (``ok`` when all passed, ``-`` where not run), then the failures.

    >>> print(table(run("cpu", quick=True, only=["matmul"])).splitlines()[1])
    family       float32  float64  float16  int64  int32  int16  int8  uint8  bool
    """
    info = report["device"]
    lines = [
        f"{info['device']}: {info['name']} ({info['vendor']}, driver {info['driver_version']})"
    ]
    header = ["family"] + list(DTYPES)
    rows = [header]
    for family in FAMILIES:
        if family not in report["summary"]:
            continue
        row = [family]
        for dt in DTYPES:
            c = report["summary"][family].get(dt)
            if not c or not (c["passed"] + c["failed"]):
                row.append("-")
            elif not c["failed"]:
                row.append("ok")
            else:
                row.append(f"{c['passed']}/{c['passed'] + c['failed']}")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if report["failures"]:
        lines.append(f"\n{report['failed']} of {report['checks']} checks failed:")
        for f in report["failures"]:
            first = f["error"].strip().splitlines()[0] if f["error"].strip() else ""
            lines.append(f"  {f['family']} {f['dtype']} {f['op']} ({f['case']}): {first[:200]}")
    verdict = "all passed" if report["passed"] else f"{report['failed']} FAILED"
    lines.append(
        f"\n{report['checks']} checks, {verdict}"
        + (f", {report['skipped']} skipped" if report["skipped"] else "")
        + f", in {report['seconds']:.1f} s"
    )
    return "\n".join(lines)


def _slug(device: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in device)


def main(argv=None, out=None) -> int:
    """``python -m clgrad selftest [device ...] [--quick | --full] [--only NAME ...] [--out PATH]``:
    prints a table per device, writes each report as JSON, and returns 0 when every check
    passed, 1 otherwise.

    >>> import tempfile
    >>> main(["cpu", "--quick", "--only", "matmul", "--out", tempfile.mkdtemp()])
    cpu (host (NumPy), driver numpy ...): ... checks
    ...
    report: ...clgrad-selftest-cpu.json
    <BLANKLINE>
    0
    """
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="python -m clgrad selftest",
        description="Checks every kernel family in every dtype against NumPy.",
    )
    parser.add_argument("devices", nargs="*", help="cpu, cl:0, ... (default: every OpenCL device)")
    level = parser.add_mutually_exclusive_group()
    level.add_argument("--quick", action="store_true", help="fewer shapes and casts")
    level.add_argument(
        "--full", action="store_true", help="every elementwise op in every dtype (minutes)"
    )
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="families, ops or dtypes to check"
    )
    parser.add_argument(
        "--out",
        help="the JSON report's path (default clgrad-selftest-<device>.json; with several devices, "
        "a directory)",
    )
    args = parser.parse_args(argv)
    names = args.devices or [str(d) for d in clgrad.devices() if d.is_cl]
    if not names:
        from .device import NO_OPENCL_HINT

        print(
            f"no OpenCL device to test ({NO_OPENCL_HINT}); `selftest cpu` tests the host", file=out
        )
        return 1
    ok = True
    for name in names:
        dev = resolve(name)
        report = run(
            dev,
            quick=args.quick,
            full=args.full,
            only=args.only,
            log=lambda m: print(m, file=out, flush=True),
        )
        print(table(report), file=out, flush=True)
        default = f"clgrad-selftest-{_slug(str(dev))}.json"
        if args.out and (len(names) > 1 or os.path.isdir(args.out)):
            path = os.path.join(args.out, default)
        else:
            path = args.out or default
        with open(path, "w") as fh:
            json.dump(report, fh, indent=1)
            fh.write("\n")
        print(f"report: {os.path.abspath(path)}\n", file=out, flush=True)
        ok = ok and report["passed"]
    return 0 if ok else 1
