"""DistributedDataParallel: one model replica per process, gradients averaged over MPI."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import numpy as np

from ... import distributed as dist
from ...autograd.engine import queue_callback
from ...ops.movement import cat
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """Parameters (one device, one dtype) whose gradients travel as one flat message."""

    def __init__(self, params):
        self.params = params
        self.offsets = np.cumsum([0] + [p.numel() for p in params]).tolist()
        self.numel = self.offsets[-1]
        self.device, self.dtype = params[0].device, params[0].dtype
        # a cpu bucket is flattened into one array kept between steps
        self.host = np.empty(self.numel, self.dtype.np) if self.device.is_cpu else None
        self.reset()

    def reset(self):
        self.pending = len(self.params)
        self.buffer = None
        self.request = None


class DistributedDataParallel(Module):
    """Data parallelism over processes, as ``torch.nn.parallel.DistributedDataParallel``: each
    rank runs ``module`` on its own batch; backward averages the gradients over the ranks, so
    every replica takes the same optimizer step.

    Construction checks that every rank holds the same parameters (names, shapes, dtypes; a
    clear error on every rank otherwise), then copies rank 0's parameters and buffers to the
    others. The gradients are all-reduced in buckets of about ``bucket_cap_mb`` MB, in the
    reverse order of ``module.parameters()`` (about the order backward produces them): a
    hook on each parameter starts a bucket's non-blocking all-reduce (MPI_Iallreduce, staged
    on the host) as soon as its last gradient is accumulated, so the communication overlaps
    the rest of backward, and a callback at the end of backward waits for them and writes the
    averages into ``.grad``. Within ``no_sync()`` gradients only accumulate locally; the next
    backward outside it averages the sum. ``broadcast_buffers`` (default) copies rank 0's
    buffers (BatchNorm's running statistics) to every rank before each forward.

    A parameter that got no gradient on a rank counts as zeros there, and every parameter has
    a ``.grad`` after a synchronized backward (``find_unused_parameters`` is accepted, and
    not needed). ``device_ids``, ``output_device`` and ``gradient_as_bucket_view`` are
    accepted and ignored: the module stays on the device it is on.

    >>> model = clgrad.nn.Linear(2, 1)
    >>> clgrad.nn.parallel.DistributedDataParallel(model)
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        group = dist._default_group(process_group)
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 2**20)
        self._group = group
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._check_same_model(named)
        self._sync(list(module.parameters()) + list(module.buffers()))
        self._buckets = self._make_buckets([p for _, p in named])
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        self._queued = False
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for _, p in named]

    # ---- construction ----------------------------------------------------------------------
    def _check_same_model(self, named):
        """Every rank must hold the same parameters: their gradients travel as flat buckets,
        which must line up element for element."""
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in named]
        everyone = self._group.comm.allgather(mine)  # names and shapes, not tensors
        for r, theirs in enumerate(everyone):
            if theirs != mine:
                diff = next(
                    (f"{a} here, {b} on rank {r}" for a, b in zip(mine, theirs) if a != b),
                    f"{len(mine)} parameters here, {len(theirs)} on rank {r}",
                )
                raise dist.DistError(
                    "DistributedDataParallel: the ranks' models differ (every rank must build "
                    f"the same module): rank {self._group.rank} vs rank {r}: {diff}"
                )

    def _sync(self, tensors):
        """Copies rank 0's ``tensors`` to every rank, one message per (device, dtype)."""
        g = self._group
        if g.size == 1:
            return
        for same in _by_device_dtype(tensors).values():
            flat = np.concatenate([dist._host(t)[0].reshape(-1) for t in same])
            g.comm.Bcast(flat, root=0)
            if g.rank != 0:
                at = 0
                for t in same:
                    n = t.numel()
                    dist._write(t, flat[at : at + n])
                    at += n

    def _make_buckets(self, params):
        buckets = []
        for same in _by_device_dtype(list(reversed(params))).values():
            current, size = [], 0
            for p in same:
                current.append(p)
                size += p.numel() * p.dtype.itemsize
                if size >= self.bucket_bytes_cap:
                    buckets.append(_Bucket(current))
                    current, size = [], 0
            if current:
                buckets.append(_Bucket(current))
        return buckets

    # ---- forward and backward ----------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync(buffers)
        return self.module(*inputs, **kwargs)

    @contextmanager
    def no_sync(self):
        """Within it backward accumulates the gradients locally, without communication (gradient
        accumulation); the first backward after it averages the accumulated sums::

            with ddp.no_sync():
                loss_fn(ddp(x1), y1).backward()  # local only
            loss_fn(ddp(x2), y2).backward()  # averages the sum of both gradients
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def _grad_ready(self, p: Tensor) -> None:
        """Post-accumulate-grad hook: p's gradient is final for this backward."""
        if not self.require_backward_grad_sync:
            return
        if not self._queued:
            queue_callback(self._finish)
            self._queued = True
        bucket = self._bucket_of[id(p)]
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch(bucket)
        # MPI progresses a non-blocking collective when it is called: poke the ones in flight
        for b in self._buckets:
            if b.request is not None:
                b.request.Test()

    def _launch(self, bucket: _Bucket) -> None:
        grads = [p.grad if p.grad is not None else p.new_zeros(p.shape) for p in bucket.params]
        if bucket.device.is_cpu:
            buf = bucket.host
            np.concatenate([dist._host(grad)[0].reshape(-1) for grad in grads], out=buf)
        else:
            # one kernel and one read for the bucket, not a read per parameter
            buf = cat([grad.reshape(-1) for grad in grads])._numpy()
        g = self._group
        bucket.buffer = buf
        bucket.request = g.comm.Iallreduce(g.MPI.IN_PLACE, buf, g.MPI.SUM)

    def _finish(self) -> None:
        """After backward: every bucket's all-reduce done, its average written into .grad."""
        self._queued = False
        try:
            for b in self._buckets:
                if b.request is None:  # a parameter that got no gradient in this backward
                    self._launch(b)
            size = self._group.size
            for b in self._buckets:
                b.request.Wait()
                buf = b.buffer
                buf *= buf.dtype.type(1.0 / size)
                for p, start, end in zip(b.params, b.offsets, b.offsets[1:]):
                    if p.grad is None:
                        p.grad = p.new_zeros(p.shape)
                    dist._write(p.grad, buf[start:end])
        finally:
            for b in self._buckets:
                b.reset()


def _by_device_dtype(tensors):
    groups: dict = {}
    for t in tensors:
        groups.setdefault((str(t.device), str(t.dtype)), []).append(t)
    return groups
