"""One optimizer step over the parameters of an MLP 784-256-256-10: the fused kernels (one
launch per parameter) against the per-op path (``foreach=False``) and torch.optim on the CPU,
in one run.

    python bench/optim_step.py [--devices cpu,cl:0] [--optimizers Adam,SGD] [--reps 21]

Gradients are set once; each sample is one ``step()`` then a wait for the device, the median
of ``--reps`` samples after a warm-up (which also builds the kernels). ``vs torch`` is torch's
time over ours (above 1: faster than torch).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import clgrad  # noqa: E402

SHAPES = [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]
KWARGS = {
    "Adam": {"lr": 1e-3},
    "AdamW": {"lr": 1e-3, "amsgrad": True},
    "SGD": {"lr": 0.01, "momentum": 0.9, "nesterov": True},
    "RMSprop": {"lr": 0.01, "momentum": 0.9, "centered": True},
}


def median_ms(step, sync, reps, warmup=3):
    for _ in range(warmup):
        step()
    sync()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        step()
        sync()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1e3


def arrays():
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s, dtype=np.float32) * 0.05 for s in SHAPES]
    grads = [rng.standard_normal(s, dtype=np.float32) * 0.01 for s in SHAPES]
    return weights, grads


def clgrad_ms(device, name, reps, **extra):
    weights, grads = arrays()
    params = [clgrad.nn.Parameter(clgrad.tensor(w, device=device)) for w in weights]
    for p, g in zip(params, grads):
        p.grad = clgrad.tensor(g, device=device)
    opt = getattr(clgrad.optim, name)(params, **KWARGS[name], **extra)
    return median_ms(opt.step, lambda: clgrad.synchronize(device), reps)


def torch_ms(name, reps):
    import torch

    weights, grads = arrays()
    params = [torch.nn.Parameter(torch.from_numpy(w)) for w in weights]
    for p, g in zip(params, grads):
        p.grad = torch.from_numpy(g)
    opt = getattr(torch.optim, name)(params, **KWARGS[name])  # torch's default: foreach on CPU
    return median_ms(opt.step, lambda: None, reps)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    default = ",".join(["cpu"] + [str(d) for d in clgrad.devices() if d.is_cl][:1])
    p.add_argument("--devices", default=default)
    p.add_argument("--optimizers", default="Adam")
    p.add_argument("--reps", type=int, default=21)
    args = p.parse_args(argv)
    numel = sum(int(np.prod(s)) for s in SHAPES)
    print(f"MLP 784-256-256-10: {len(SHAPES)} parameters, {numel} elements; median of {args.reps}")
    print(
        f"{'device':<6} {'optimizer':<8} {'fused ms':>9} {'per-op ms':>10} {'torch ms':>9} "
        f"{'fused/per-op':>13} {'vs torch':>9}"
    )
    rows = []
    for name in args.optimizers.split(","):
        try:
            theirs = torch_ms(name, args.reps)
        except ImportError:
            theirs = float("nan")
        for device in args.devices.split(","):
            dev = clgrad.device(device)
            fused = clgrad_ms(dev, name, args.reps)
            per_op = clgrad_ms(dev, name, args.reps, foreach=False)
            rows.append((device, name, fused, per_op, theirs))
            print(
                f"{device:<6} {name:<8} {fused:>9.3f} {per_op:>10.3f} {theirs:>9.3f} "
                f"{per_op / fused:>12.1f}x {theirs / fused:>8.2f}x",
                flush=True,
            )
    return rows


if __name__ == "__main__":
    main()
