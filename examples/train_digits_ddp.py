"""Train the digits MLP of train_digits.py on several processes: DistributedDataParallel over MPI.

    mpiexec -n 2 python examples/train_digits_ddp.py            # 2 processes on this machine
    mpiexec -f hosts -n 4 python examples/train_digits_ddp.py   # 4 over the machines in hosts
    CLGRAD_DEVICE=cl:0 mpiexec -n 2 python examples/train_digits_ddp.py --quick

Each rank reads its shard of every epoch through a DistributedSampler, so a global batch of
64 is 64 / world size images per rank; DDP averages the gradients over the ranks, so every
replica takes the same step and stays equal to the others. Rank 0 prints.
"""

from __future__ import annotations

import argparse
import time

from train_digits import accuracy, load, mlp

import clgrad
import clgrad.distributed as dist
import clgrad.nn.functional as F
from clgrad.nn.parallel import DistributedDataParallel as DDP
from clgrad.utils.data import DataLoader
from clgrad.utils.data.distributed import DistributedSampler


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="default: what CLGRAD_DEVICE selects")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64, help="the global batch, over all ranks")
    p.add_argument("--quick", action="store_true", help="few samples and epochs")
    args = p.parse_args(argv)
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = clgrad.device(args.device) if args.device else clgrad.default_device()
    epochs = 2 if args.quick else args.epochs
    clgrad.manual_seed(rank)  # different on purpose: DDP starts every rank from rank 0's model
    train_set, test_set = load(device, limit=300 if args.quick else None)
    if rank == 0:
        print(f"{world} processes on {device} ({device.name}): {len(train_set)} training images")
    model = DDP(mlp().to(device))
    opt = clgrad.optim.Adam(model.parameters(), lr=1e-2)
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    loader = DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler)
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)  # a new order each epoch, the same on every rank
        total = clgrad.zeros((), device=device)
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()  # averages the gradients over the ranks
            opt.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)  # the mean loss over every rank's shard
        if rank == 0:
            acc = accuracy(model.module, test_set)
            print(
                f"epoch {epoch:2d}: loss {total.item() / len(loader):.4f}  test accuracy {acc:.3f}"
            )
    acc = accuracy(model.module, test_set)
    if rank == 0:
        print(
            f"test accuracy {acc:.3f} in {time.perf_counter() - start:.1f} s on {world} processes"
        )
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
