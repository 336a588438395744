"""All-reduce bandwidth through clgrad.distributed against mpi4py's own, and a DDP step.

    mpiexec -n 2 python bench/allreduce.py                   # cpu tensors, 100 MB
    mpiexec -n 2 python bench/allreduce.py --device cl:0     # OpenCL tensors (host-staged)

Prints, on rank 0: the median time and bus bandwidth (2 (n - 1) / n bytes per element, as
nccl-tests count) of a sum all-reduce of a float32 gradient through ``dist.all_reduce`` and
through ``comm.Allreduce(MPI.IN_PLACE, array)`` on a NumPy array of the same size, their
ratio; then the median training step of the digits MLP (batch 64 per rank) under
DistributedDataParallel and in a single process (the same per-rank batch, no communication).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import clgrad
import clgrad.distributed as dist
import clgrad.nn as nn
import clgrad.nn.functional as F


def timed(fns, repeat):
    """The median time of each of ``fns``, run in turn (on a busy machine, noise hits both)."""
    for fn in fns:
        fn()  # warm-up
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            dist.barrier()
            start = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - start)
    return [statistics.median(ts) for ts in times]


def trainer(model, device, batch=64):
    """One training step of ``model`` on a fixed batch, as a function."""
    opt = clgrad.optim.SGD(model.parameters(), lr=0.01)
    x = clgrad.randn(batch, 64, device=device)
    y = clgrad.randint(0, 10, (batch,), device=device)

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        clgrad.synchronize()

    return step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default="cpu")
    p.add_argument("--mb", type=float, default=100.0, help="gradient size in MB (float32)")
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args(argv)
    dist.init_process_group("mpi")
    from mpi4py import MPI

    rank, world = dist.get_rank(), dist.get_world_size()
    device = clgrad.device(args.device)
    n = int(args.mb * 2**20) // 4
    grad = clgrad.ones(n, device=device)
    array = np.ones(n, np.float32)
    ours, theirs = timed(
        [lambda: dist.all_reduce(grad), lambda: MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, array)],
        args.repeat,
    )
    bus = 2 * (world - 1) / world * n * 4 / 1e9
    clgrad.manual_seed(0)
    make = lambda: nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))  # noqa: E731
    single, ddp = timed(
        [
            trainer(make().to(device), device),
            trainer(nn.parallel.DistributedDataParallel(make().to(device)), device),
        ],
        args.repeat * 10,
    )
    if rank == 0:
        print(f"{world} ranks, {args.mb:g} MB float32 on {device} ({device.name})")
        for name, t in (("clgrad.distributed.all_reduce", ours), ("mpi4py Allreduce", theirs)):
            print(f"{name:30s} {t * 1e3:8.1f} ms  {bus / t:6.2f} GB/s bus")
        print(f"ratio (clgrad / mpi4py bandwidth): {theirs / ours:.2f}")
        print(f"digits MLP step: single process {single * 1e3:.2f} ms, DDP {ddp * 1e3:.2f} ms")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
