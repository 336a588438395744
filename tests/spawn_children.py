"""Functions tests/test_compat_programs2.py runs in spawned processes: a module of their own,
so that a child imports clgrad alone (not torch, which the test module imports)."""


def sum_into_queue(rank, queue, tensors):
    """Puts, for each tensor, ``(rank, sum of tensor * rank, its device)`` on ``queue``."""
    queue.put([(rank, (t * rank).sum().item(), str(t.device)) for t in tensors])


def raise_in_rank_one(rank):
    """Fails in the process of rank 1 only."""
    if rank == 1:
        raise ValueError(f"rank {rank} failed")


def exit_with_three(rank):
    """Leaves with exit code 3, without an exception's traceback."""
    raise SystemExit(3)
