"""GFLOP/s of the OpenCL matmul kernel against NumPy (BLAS) on the same machine, in one run.

    python bench/matmul_probe.py [--device cl:0] [--sizes 256,512,1024] [--reps 5]

Square float32 matmuls. Each timed call is bracketed by ``queue.finish()``; NumPy and the kernel
take turns, so both see the same machine load, and each reports the median of ``--reps`` runs
after a warm-up. ``ratio`` is kernel GFLOP/s over NumPy's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import clgrad  # noqa: E402
from clgrad.backend.opencl.matmul import matmul  # noqa: E402
from clgrad.device import Device, devices  # noqa: E402


def probe(device, n, reps):
    rt = device.runtime
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, n, n), dtype=np.float32)
    b = rng.standard_normal((1, n, n), dtype=np.float32)
    # the View records of device tensors: the arguments the library passes
    ta, tb = clgrad.tensor(a, device=device), clgrad.tensor(b, device=device)
    tout = clgrad.empty((1, n, n), device=device)
    da, db, out = ta._record(), tb._record(), tout._record()
    a2, b2 = a[0], b[0]

    def run_cl():
        rt.queue.finish()
        t = time.perf_counter()
        matmul(rt, out, da, db, clgrad.float32)
        rt.queue.finish()
        return time.perf_counter() - t

    def run_np():
        t = time.perf_counter()
        np.matmul(a2, b2)
        return time.perf_counter() - t

    for _ in range(2):  # warm-up: builds, first-touch, BLAS thread start
        run_cl(), run_np()
    t_cl, t_np = [], []
    for _ in range(reps):
        t_np.append(run_np())
        t_cl.append(run_cl())
    host = tout.cpu().numpy()[0]
    err = float(np.abs(host - a2 @ b2).max() / max(1.0, float(np.abs(a2 @ b2).max())))
    flops = 2.0 * n**3
    return flops / np.median(t_cl) / 1e9, flops / np.median(t_np) / 1e9, err


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="an OpenCL device (default: the first)")
    p.add_argument("--sizes", default="256,512,1024")
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    device = Device(args.device) if args.device else next(d for d in devices() if d.is_cl)
    print(f"{device} {device.name} ({device.driver_version}); numpy {np.__version__}")
    print(f"{'n':>6} {'clgrad GF/s':>12} {'numpy GF/s':>11} {'ratio':>6} {'max rel err':>12}")
    for n in (int(s) for s in args.sizes.split(",")):
        mine, ref, err = probe(device, n, args.reps)
        print(f"{n:>6} {mine:>12.1f} {ref:>11.1f} {mine / ref:>6.2f} {err:>12.2g}", flush=True)


if __name__ == "__main__":
    main()
