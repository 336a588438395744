"""Times the OpenCL reduction and cumsum kernels against NumPy.

    python bench/reduce_probe.py [--device cl:0] [--repeat 15]

Calls clgrad.backend.opencl.reduce directly on the View records of device tensors (the same
arguments the library passes), waits with queue.finish(), and reports medians after warm-up:
GB/s counts the bytes read (and, for cumsum, written) once.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import clgrad
from clgrad.backend.opencl import reduce as R
from clgrad.device import devices
from clgrad.ops.reduction import REDUCE_KERNELS


def upload(dev, arr):
    """A device tensor holding ``arr`` (kept alive by the caller) and its View record."""
    t = clgrad.tensor(arr, device=dev)
    return t, t._record()


def empty(dev, shape):
    t = clgrad.empty(tuple(shape), dtype=clgrad.float32, device=dev)
    return t, t._record()


def median_time(fn, sync, repeat, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="cl:N (default: the first OpenCL device)")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    cls = [d for d in devices() if d.is_cl]
    dev = next(d for d in cls if str(d) == args.device) if args.device else cls[0]
    rt = dev.runtime
    print(f"device: {dev} ({dev.name}), {dev.compute_units} compute units; numpy {np.__version__}")

    rng = np.random.default_rng(0)
    flat = rng.standard_normal(16 * 2**20, dtype=np.float32)
    square = rng.standard_normal((4096, 4096), dtype=np.float32)
    rows = rng.standard_normal((4096, 1024), dtype=np.float32)
    f32 = clgrad.float32
    keep = []  # the tensors behind the records

    def reduction(a, dims):
        (xt, x), (ot, out) = (
            upload(dev, a),
            empty(dev, [n for d, n in enumerate(a.shape) if d not in dims]),
        )
        keep.extend((xt, ot))
        return lambda: R.reduce(rt, REDUCE_KERNELS["sum"], out, x, dims, f32)

    def scan(a, dim):
        (xt, x), (ot, out) = upload(dev, a), empty(dev, a.shape)
        keep.extend((xt, ot))
        return lambda: R.cumsum(rt, out, x, dim, f32)

    probes = [
        ("sum, all of 16M", flat.nbytes, reduction(flat, (0,)), lambda: flat.sum()),
        (
            "sum 4096x4096, dim 1",
            square.nbytes,
            reduction(square, (1,)),
            lambda: square.sum(axis=1),
        ),
        (
            "sum 4096x4096, dim 0",
            square.nbytes,
            reduction(square, (0,)),
            lambda: square.sum(axis=0),
        ),
        (
            "cumsum 4096x1024, dim 1",
            2 * rows.nbytes,
            scan(rows, 1),
            lambda: np.cumsum(rows, axis=1),
        ),
    ]
    print(
        f"{'probe':26s} {'clgrad ms':>10s} {'GB/s':>7s} {'numpy ms':>9s} {'GB/s':>7s} {'ratio':>6s}"
    )
    for name, nbytes, ours, theirs in probes:
        t_cl = median_time(ours, rt.queue.finish, args.repeat)
        t_np = median_time(theirs, lambda: None, args.repeat)
        print(
            f"{name:26s} {t_cl * 1e3:10.3f} {nbytes / t_cl / 1e9:7.2f} {t_np * 1e3:9.3f} "
            f"{nbytes / t_np / 1e9:7.2f} {t_np / t_cl:6.2f}x"
        )


if __name__ == "__main__":
    main()
