"""Training steps eager, captured (``clgrad.compile``) and in torch on the CPU, in one run: the
polynomial fit of "Learning PyTorch with Examples" (4 scalar weights, 2000 points, a manual
SGD update under no_grad) and a digits MLP step (64-128-10, batch 64, Adam).

    python bench/compile_step.py [--device cl:0] [--reps 200] [--torch-threads 1]

Each figure is the median over ``--reps`` samples of 10 steps then a wait for the device,
divided by 10, after a warm-up (which also captures). Ratios are to torch's time in the same
run (below 1: faster than torch). torch runs on one thread by default: on a small shared
machine its OpenMP threads spin against the other load (the MLP step took 19 ms on 2 threads
and 0.8 ms on 1 on a busy 2-core host).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import clgrad  # noqa: E402

STEPS = 10  # per sample: a replay only enqueues, so the wait is shared by several steps


def median_us(step, sync, reps, warmup=5):
    for _ in range(warmup):
        step()
    sync()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(STEPS):
            step()
        sync()
        samples.append((time.perf_counter() - t) / STEPS)
    return statistics.median(samples) * 1e6


def polynomial(lib, device):
    """The tutorial's step on ``lib`` (clgrad or torch)."""
    kw = {"device": device} if device else {}
    x = lib.linspace(-math.pi, math.pi, 2000, **kw)
    y = lib.sin(x)
    a, b, c, d = (lib.tensor(v, requires_grad=True, **kw) for v in (0.1, -0.2, 0.3, 0.05))

    def step():
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            for w in (a, b, c, d):
                w -= 1e-6 * w.grad
                w.grad = None
        return loss

    return step


def mlp(lib, device):
    kw = {"device": device} if device else {}
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10))
    model = model.to(device) if device else model
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.random((64, 64), dtype=np.float32), **kw)
    y = lib.tensor(rng.integers(0, 10, 64), **kw)

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cl:0")
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--torch-threads", type=int, default=1)
    args = p.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(args.torch_threads)
    except ImportError:
        torch = None
    sync = clgrad.device(args.device).synchronize
    rows = []
    for name, make in (("polynomial fit step", polynomial), ("digits MLP step (Adam)", mlp)):
        eager = median_us(make(clgrad, args.device), sync, args.reps)
        compiled = median_us(clgrad.compile(make(clgrad, args.device)), sync, args.reps)
        ref = median_us(make(torch, None), lambda: None, args.reps) if torch else math.nan
        rows.append((name, eager, compiled, ref))
    print(f"| step on {args.device} | eager us | compiled us | torch CPU us | compiled/torch |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, eager, compiled, ref in rows:
        print(f"| {name} | {eager:.0f} | {compiled:.0f} | {ref:.0f} | {compiled / ref:.2f}x |")
    return rows


if __name__ == "__main__":
    main()
