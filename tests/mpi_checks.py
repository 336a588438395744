"""The checks tests/test_distributed.py runs under ``mpiexec -n 2`` (one launch, many checks).

    mpiexec -n 2 python tests/mpi_checks.py main cpu,cl:0   # collectives, errors, DDP
    mpiexec -n 2 python tests/mpi_checks.py abort           # rank 1 raises: the job aborts

Every rank prints ``OK <rank>`` at the end of ``main``; an assertion that fails on any rank
aborts the job (the process group's excepthook), so the launch exits nonzero.
"""

from __future__ import annotations

import sys

import numpy as np

import clgrad
import clgrad.distributed as dist
import clgrad.nn as nn
import clgrad.nn.functional as F


def expect(error, fn, text):
    try:
        fn()
    except error as e:
        assert text in str(e), str(e)
    else:
        raise AssertionError(f"no {error.__name__}")


def collectives(dev, r, n):
    def t(values, dtype=clgrad.float32):
        return clgrad.tensor(values, dtype=dtype, device=dev)

    x = t([1.0, 2.0, 3.0]) * (r + 1)
    dist.all_reduce(x)
    assert x.tolist() == [3.0, 6.0, 9.0], x
    for op, want in ((dist.ReduceOp.MAX, 2), (dist.ReduceOp.MIN, 1), (dist.ReduceOp.PRODUCT, 2)):
        x = t([r + 1], clgrad.int64)
        dist.all_reduce(x, op=op)
        assert x.tolist() == [want], (op, x)
    x = t([[1.0, 2.0], [3.0, 4.0]]).t() + r  # strided: staged and written back
    work = dist.all_reduce(x, op=dist.ReduceOp.AVG, async_op=True)
    assert work.wait() and work.is_completed()
    assert x.tolist() == [[1.5, 3.5], [2.5, 4.5]], x
    x = t([r, r], clgrad.bool)
    dist.all_reduce(x)  # a sum of truth values: or
    assert x.tolist() == [True, True]
    x = t([float(r)] * 3)
    dist.broadcast(x, src=1)
    assert x.tolist() == [1.0] * 3
    outs = [t([0.0, 0.0]) for _ in range(n)]
    dist.all_gather(outs, t([r, 10 + r]))
    assert [o.tolist() for o in outs] == [[0.0, 10.0], [1.0, 11.0]]
    out = t([[0.0] * 2] * n)
    dist.all_gather_into_tensor(out, t([r, 10 + r]))
    assert out.tolist() == [[0.0, 10.0], [1.0, 11.0]]
    out = t([0.0, 0.0])
    dist.reduce_scatter(out, [t([10 * i + r, 1]) for i in range(n)])
    assert out.tolist() == [20 * r + 1, 2], out
    out = t([0.0])
    dist.reduce_scatter_tensor(out, t([1.0, 2.0]) * (r + 1))
    assert out.tolist() == [3.0 * (r + 1)], out
    x = t([r + 1.0])
    dist.reduce(x, dst=0)
    assert x.tolist() == ([3.0] if r == 0 else [2.0])
    gathered = [t([0.0]) for _ in range(n)] if r == 0 else None
    dist.gather(t([r]), gathered, dst=0)
    assert r != 0 or [g.item() for g in gathered] == [0.0, 1.0]
    x = t([-1.0])
    dist.scatter(x, [t([5.0]), t([6.0])] if r == 1 else None, src=1)
    assert x.tolist() == [5.0 + r]
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r})
    assert objs == [{"rank": 0}, {"rank": 1}]


def mismatches(dev, r):
    # every rank must raise (not hang): a shape, a dtype, a different collective
    ones = clgrad.ones
    expect(dist.DistError, lambda: dist.all_reduce(ones(2 + r, device=dev)), "disagree")
    # float64 where the device runs it (Mesa's llvmpipe has no fp64), else int32
    other = clgrad.float64 if clgrad.device(dev).supports(clgrad.float64) else clgrad.int32
    dtype = clgrad.float32 if r == 0 else other
    expect(dist.DistError, lambda: dist.all_reduce(ones(2, dtype=dtype, device=dev)), other.name)
    if r == 0:
        expect(dist.DistError, lambda: dist.broadcast(ones(2, device=dev), 0), "broadcast")
    else:
        expect(dist.DistError, lambda: dist.all_reduce(ones(2, device=dev)), "broadcast")
    dist.barrier()


def digits_batches(steps, batch, seed=0):
    rng = np.random.default_rng(seed)
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    picks = [rng.choice(len(y), batch, replace=False) for _ in range(steps)]
    return [(x[i], y[i]) for i in picks]


def mlp(dev, seed):
    clgrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)


def ddp_matches_one_process(dev, r, n, steps=20, per_rank=16):
    """20 DDP steps, each rank on its half of a batch, give the parameters of 20 steps of one
    process on the whole batch (float32 rounding apart)."""
    batches = digits_batches(steps, per_rank * n)
    ref = mlp(dev, 0)
    ref_opt = clgrad.optim.SGD(ref.parameters(), lr=0.2, momentum=0.9)
    model = mlp(dev, 1 + r)  # different on every rank: DDP copies rank 0's ...
    if r == 0:
        model.load_state_dict(mlp(dev, 0).state_dict())  # ... which is the reference's
    # a small bucket cap: several buckets, launched while backward goes on
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.004)
    assert len(ddp._buckets) > 1
    opt = clgrad.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
    for s, (xb, yb) in enumerate(batches):
        x, y = clgrad.tensor(xb, device=dev), clgrad.tensor(yb, device=dev)
        loss = F.cross_entropy(ref(x), y)
        ref_opt.zero_grad()
        loss.backward()
        ref_opt.step()
        mine = slice(r * per_rank, (r + 1) * per_rank)
        opt.zero_grad()
        if s % 5 == 4:  # gradient accumulation: half under no_sync, half synchronized
            half = per_rank // 2
            with ddp.no_sync():
                xs, ys = x[mine][:half], y[mine][:half]
                (F.cross_entropy(ddp(xs), ys) / 2).backward()
            xs, ys = x[mine][half:], y[mine][half:]
            (F.cross_entropy(ddp(xs), ys) / 2).backward()
        else:
            F.cross_entropy(ddp(x[mine]), y[mine]).backward()
        opt.step()
    for (name, a), b in zip(ref.named_parameters(), model.parameters()):
        err = float((a - b).abs().max())
        assert err < 1e-5, (dev, name, err)
    # the replicas are equal to the last bit
    for p in model.parameters():
        copy = p.detach().clone()
        dist.broadcast(copy, src=0)
        assert bool((copy == p).all()), dev


def sync_batchnorm_matches_one_process(dev, r, n, per_rank=6):
    """SyncBatchNorm on each rank's share of a batch gives what BatchNorm gives on the whole
    batch: outputs, input gradients, running statistics, and (summed over the ranks, as DDP
    does) the weight and bias gradients; in eval mode it normalizes with the running ones."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((per_rank * n, 3, 4, 5)) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    ref = nn.BatchNorm2d(3).to(dev)
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3))).to(dev)[0]
    assert type(sync) is nn.SyncBatchNorm
    with clgrad.no_grad():
        for bn in (ref, sync):
            bn.weight.copy_(clgrad.tensor([0.5, 1.0, 2.0]))
            bn.bias.copy_(clgrad.tensor([0.1, -0.2, 0.3]))
    mine = slice(r * per_rank, (r + 1) * per_rank)
    for _ in range(2):  # twice: the running statistics move on from the first step's
        xr = clgrad.tensor(x, device=dev, requires_grad=True)
        xs = clgrad.tensor(x[mine], device=dev, requires_grad=True)
        want, got = ref(xr), sync(xs)
        (want * clgrad.tensor(g, device=dev)).sum().backward()
        (got * clgrad.tensor(g[mine], device=dev)).sum().backward()
        np.testing.assert_allclose(
            got.detach().cpu().numpy(), want.detach().cpu().numpy()[mine], 1e-4, 1e-5
        )
        np.testing.assert_allclose(xs.grad.cpu().numpy(), xr.grad.cpu().numpy()[mine], 1e-4, 1e-5)
    for p, q in ((sync.weight, ref.weight), (sync.bias, ref.bias)):
        total = p.grad.clone()
        dist.all_reduce(total)
        np.testing.assert_allclose(total.cpu().numpy(), q.grad.cpu().numpy(), 1e-4, 1e-4)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            getattr(sync, name).cpu().numpy(), getattr(ref, name).cpu().numpy(), 1e-5, 1e-5
        )
    assert int(sync.num_batches_tracked) == 2
    sync.eval(), ref.eval()
    xs = clgrad.tensor(x[mine], device=dev)
    np.testing.assert_allclose(
        sync(xs).detach().cpu().numpy(), ref(xs).detach().cpu().numpy(), 1e-5, 1e-5
    )


def main(devices):
    expect(RuntimeError, lambda: dist.get_rank(), "init_process_group")
    expect(RuntimeError, lambda: dist.all_reduce(clgrad.ones(1)), "init_process_group")
    expect(RuntimeError, lambda: dist.init_process_group("gloo"), "MPI only")
    dist.init_process_group("mpi")
    expect(RuntimeError, lambda: dist.init_process_group("mpi"), "twice")
    r, n = dist.get_rank(), dist.get_world_size()
    assert n == 2 and dist.is_initialized()
    for dev in devices:
        collectives(dev, r, n)
        mismatches(dev, r)
        ddp_matches_one_process(dev, r, n)
        sync_batchnorm_matches_one_process(dev, r, n)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    dist.init_process_group("mpi")  # again, after destroy
    dist.barrier()
    print(f"OK {r}", flush=True)


def abort():
    dist.init_process_group("mpi")
    if dist.get_rank() == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.barrier()  # rank 0 would wait here forever without the abort


if __name__ == "__main__":
    if sys.argv[1] == "main":
        main(sys.argv[2].split(","))
    else:
        abort()
