"""clgrad.distributed, DistributedDataParallel and DistributedSampler.

The multi-process checks run under ``mpiexec -n 2`` (tests/mpi_checks.py, one launch for all
of them): collectives on every test device, mismatched tensors raising on every rank, init
errors, and 20 DDP steps against 20 single-process steps on the whole batch. They are skipped
where mpi4py or mpiexec is missing (``pip install ".[dist]"``; the test extra installs both).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import clgrad
from tests.conftest import DEVICES

ROOT = Path(__file__).resolve().parents[1]


def _mpiexec():
    here = Path(sys.executable).parent / "mpiexec"  # the mpich wheel's, in the venv's bin/
    return str(here) if here.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or MPIEXEC is None,
    reason="needs mpi4py and mpiexec: pip install '.[dist]' (mpi4py and the mpich wheel)",
)


def launch(*args, timeout=300):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    return subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, str(ROOT / "tests" / "mpi_checks.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


@needs_mpi
def test_collectives_errors_and_ddp_under_mpiexec():
    pytest.importorskip("sklearn")
    run = launch("main", ",".join(DEVICES))
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "OK 0" in run.stdout and "OK 1" in run.stdout, out


@needs_mpi
def test_a_raising_rank_aborts_the_job():
    start = time.perf_counter()
    run = launch("abort", timeout=120)  # a hang fails here, with TimeoutExpired
    # (not the traceback's text: mpiexec may tear the job down before forwarding it)
    assert run.returncode != 0, run.stdout + run.stderr
    assert time.perf_counter() - start < 60


def test_no_process_group():
    dist = clgrad.distributed
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(clgrad.ones(2))
    with pytest.raises(ValueError, match="init_process_group"):  # PyTorch's error type too
        dist.get_world_size()
    with pytest.raises(RuntimeError, match="MPI only"):
        dist.init_process_group("nccl")
    with pytest.raises(RuntimeError, match="num_replicas and rank"):
        clgrad.utils.data.distributed.DistributedSampler(range(4))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_shards_as_torch(shuffle, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from clgrad.utils.data.distributed import DistributedSampler

    for n in (1, 5, 7, 8, 13):
        for replicas in (1, 2, 3, 4):
            for rank in range(replicas):
                theirs = TorchSampler(
                    range(n), replicas, rank, shuffle, seed=7, drop_last=drop_last
                )
                mine = DistributedSampler(
                    range(n), replicas, rank, shuffle, seed=7, drop_last=drop_last
                )
                theirs.set_epoch(3)
                mine.set_epoch(3)
                # torch's permutation for seed + epoch, sharded by clgrad's logic
                g = torch.Generator().manual_seed(7 + 3)
                order = torch.randperm(n, generator=g).tolist() if shuffle else list(range(n))
                mine._order = lambda order=order: list(order)
                assert list(mine) == list(theirs), (n, replicas, rank)
                assert len(mine) == len(theirs)
    # clgrad's own permutation: the shards cover the dataset (padded or cut), new each epoch
    shards = [DistributedSampler(range(10), 3, r, shuffle, 1, drop_last) for r in range(3)]
    seen = [i for s in shards for i in s]
    assert len(seen) == (9 if drop_last else 12)
    assert set(seen) <= set(range(10)) and len(set(seen)) == (9 if drop_last else 10)
    first = list(shards[0])
    shards[0].set_epoch(1)
    assert (list(shards[0]) != first) == shuffle
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(range(4), 2, 2)
