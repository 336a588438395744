"""Collective communication between processes, as ``torch.distributed``, over MPI (mpi4py).

Launch one process per rank with ``mpiexec -n 2 python train.py`` (``pip install ".[dist]"``
installs mpi4py and an MPICH whose ``mpiexec`` lands in the environment's ``bin/``), call
``init_process_group("mpi")``, then the collectives work on tensors of any device: a cpu
tensor's memory goes to MPI as it is (in place when contiguous); an OpenCL tensor is read to
the host, communicated, and written back. Tensors are never pickled: each collective hands
MPI a contiguous NumPy buffer (mpi4py's upper-case, buffer-based calls).

Each collective first exchanges a small header (which collective, dtype, shape, op, root) with
every rank, so ranks that disagree raise the same ``RuntimeError`` on every rank instead of
hanging or mixing bytes; and once the group is up, an exception no one catches on any rank
aborts the whole job (``MPI_Abort``) instead of leaving the other ranks waiting for it.

Importing this module never imports mpi4py nor starts MPI: ``init_process_group`` does.

>>> import clgrad.distributed as dist
>>> dist.is_initialized()
False
>>> dist.ReduceOp.SUM
<RedOpType.SUM: 0>
"""

from __future__ import annotations

import enum
import importlib.util
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes as D
from .autograd import no_grad
from .ops.creation import from_numpy
from .tensor import Tensor

__all__ = [
    "DistError",
    "ProcessGroupError",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
]


class DistError(RuntimeError):
    """An error of a collective (ranks that disagree), as ``torch.distributed.DistError``."""


class ProcessGroupError(DistError, ValueError):
    """A collective before ``init_process_group``, or a second ``init_process_group``: a
    RuntimeError, and a ValueError as PyTorch raises there."""


class ReduceOp(enum.Enum):
    """How ``all_reduce``, ``reduce`` and ``reduce_scatter`` combine the ranks' elements, as
    ``torch.distributed.ReduceOp`` (``AVG``: the sum divided by the world size, floats only).

    >>> clgrad.distributed.ReduceOp.MAX
    <RedOpType.MAX: 3>
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MAX = 3
    MIN = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self):
        return f"RedOpType.{self.name}"


ReduceOp.RedOpType = ReduceOp  # type: ignore[attr-defined]


class _Group:
    """The default process group: a duplicate of MPI_COMM_WORLD (a program's own MPI traffic on
    COMM_WORLD cannot match clgrad's messages) and the module mpi4py.MPI."""

    def __init__(self, MPI):
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.previous_excepthook = None


_group: _Group | None = None

NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


def is_available() -> bool:
    """Whether ``init_process_group`` can work here: mpi4py is installed (nothing is imported).

    >>> isinstance(clgrad.distributed.is_available(), bool)
    True
    """
    return importlib.util.find_spec("mpi4py") is not None


is_mpi_available = is_available


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not since).

    >>> clgrad.distributed.is_initialized()
    False
    """
    return _group is not None


def _default_group(group=None) -> _Group:
    if _group is None:
        raise ProcessGroupError(NOT_INITIALIZED)
    if group is not None and group is not _group:
        raise NotImplementedError("clgrad.distributed has the default process group only")
    return _group


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: Any = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Joins this process to the job ``mpiexec`` started, as ``torch.distributed.
    init_process_group``: the rank and world size are MPI's (``world_size``/``rank``, when
    given, must agree with them; ``init_method`` and ``store`` are not needed). ``backend`` is
    ``"mpi"`` (or None): MPI is the one transport, for tensors of every device.

    From here on an exception that no one catches, on any rank, aborts every rank.

    >>> clgrad.distributed.init_process_group("nccl")
    Traceback (most recent call last):
    ...
    RuntimeError: clgrad.distributed runs over MPI only: backend 'nccl' is not available; ...
    """
    global _group
    if backend is not None and str(backend).lower() != "mpi":
        raise RuntimeError(
            f"clgrad.distributed runs over MPI only: backend {backend!r} is not available; "
            "call init_process_group('mpi') (tensors of every device go through it) and launch "
            "with mpiexec -n N python ..."
        )
    if _group is not None:
        raise ProcessGroupError("trying to initialize the default process group twice!")
    if not is_available():
        raise RuntimeError(
            "clgrad.distributed needs mpi4py and an MPI library: pip install 'clgrad[dist]' "
            "(mpi4py and the mpich wheel, whose mpiexec lands in the environment's bin/)"
        )
    if "mpi4py.MPI" not in sys.modules:
        import mpi4py

        # MPI starts here, at the first import of mpi4py.MPI, and is finalized at exit (so a
        # destroyed group can be made again). Threads: mpi4py's default, MPI_THREAD_MULTIPLE,
        # which MPICH's asynchronous progress (MPIR_CVAR_ASYNC_PROGRESS=1) needs.
        mpi4py.rc.initialize = True
        mpi4py.rc.finalize = True
        mpi4py.rc.threads = True
    from mpi4py import MPI

    if not MPI.Is_initialized() or MPI.Is_finalized():
        raise RuntimeError("MPI is not initialized (mpi4py.rc.initialize was turned off)")
    group = _Group(MPI)
    for name, given, actual in (("world_size", world_size, group.size), ("rank", rank, group.rank)):
        if given is not None and given >= 0 and given != actual:
            group.comm.Free()
            raise ValueError(
                f"init_process_group({name}={given}) but MPI gives {actual}: with MPI the "
                "launcher (mpiexec -n N) sets the ranks; leave world_size and rank out"
            )
    if group.size > 1:
        group.previous_excepthook = sys.excepthook
        sys.excepthook = _abort_on_uncaught
    _group = group


def _abort_on_uncaught(exc_type, exc, tb):
    """sys.excepthook while the group is up: print as usual, then abort every rank (the others
    would otherwise wait forever in their next collective)."""
    group = _group
    hook = group.previous_excepthook if group is not None else sys.__excepthook__
    (hook or sys.__excepthook__)(exc_type, exc, tb)
    if group is not None:
        sys.stderr.write(f"clgrad.distributed: rank {group.rank} raised; aborting the job\n")
        sys.stderr.flush()
        group.MPI.COMM_WORLD.Abort(1)


def destroy_process_group(group=None) -> None:
    """Leaves the process group (MPI itself stays up until exit; ``init_process_group`` may
    run again), as ``torch.distributed.destroy_process_group``.

    >>> clgrad.distributed.destroy_process_group()
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    global _group
    g = _default_group(group)
    if sys.excepthook is _abort_on_uncaught:
        sys.excepthook = g.previous_excepthook or sys.__excepthook__
    _group = None
    g.comm.Free()


def get_rank(group=None) -> int:
    """This process's rank, 0 ... world size - 1.

    >>> clgrad.distributed.get_rank()
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    return _default_group(group).rank


def get_world_size(group=None) -> int:
    """How many processes the job has.

    >>> clgrad.distributed.get_world_size()
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    return _default_group(group).size


def get_backend(group=None) -> str:
    """The backend's name: ``"mpi"``."""
    _default_group(group)
    return "mpi"


# ---- moving elements between tensors and MPI ---------------------------------------------
def _host(t: Tensor) -> tuple[np.ndarray, bool]:
    """t's elements as a C-contiguous host array, and whether writing it writes t (a contiguous
    cpu tensor: its own memory; otherwise a copy, read from the device)."""
    if t.device.is_cpu:
        a = t._numpy()
        if a.flags.c_contiguous and a.flags.writeable:
            return a, True
    return np.ascontiguousarray(t._numpy()), False


def _write(t: Tensor, a: np.ndarray) -> None:
    """Writes host array ``a`` (t's shape or size) into t, unrecorded, as an in-place op."""
    if t.is_contiguous():
        t.device.backend.from_numpy(t._record(), a.reshape(t._shape))
        t._bump_version()
    else:
        with no_grad():
            t.copy_(from_numpy(np.ascontiguousarray(a).reshape(t._shape)))


class Work:
    """What an ``async_op=True`` collective returns, as torch's ``Work``: ``wait()`` blocks until
    the collective is done and its result is in the tensors; ``is_completed()`` asks."""

    def __init__(self, request=None, finish: Callable[[], None] | None = None):
        self._request, self._finish = request, finish
        self._done = request is None and finish is None

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()

    def wait(self, timeout=None) -> bool:
        if self._request is not None:
            self._request.Wait()
        self._complete()
        return True

    def is_completed(self) -> bool:
        if self._done:
            return True
        if self._request is not None and not self._request.Test():
            return False
        self._complete()
        return True

    def is_success(self) -> bool:
        return self.is_completed()

    def synchronize(self) -> None:
        self.wait()


def _run(g, async_op, blocking, nonblocking, finish=None):
    """Runs the blocking MPI call, or starts the non-blocking one and returns its Work."""
    if async_op:
        return Work(nonblocking(), finish)
    blocking()
    if finish is not None:
        finish()
    return None


# ---- the header every rank exchanges before a collective ---------------------------------
_KINDS = [
    "all_reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce",
    "gather",
    "scatter",
    "barrier",
    "all_gather_object",
    "broadcast_object_list",
]
_DTYPES = [
    D.float32,
    D.float64,
    D.float16,
    D.int64,
    D.int32,
    D.int16,
    D.int8,
    D.uint8,
    D.bool_,
]
_MAX_DIMS = 6
_HEADER = 6 + _MAX_DIMS


def _check(g: _Group, kind: str, t: Tensor | None, op=None, root=-1, count=-1) -> None:
    """Every rank's (collective, dtype, shape, op, root, list length), gathered: ranks that
    disagree all raise the same error instead of hanging or exchanging mismatched bytes."""
    h = np.full(_HEADER, -1, np.int64)
    h[0] = _KINDS.index(kind)
    h[2] = -1 if op is None else op.value
    h[3] = root
    h[4] = count
    if t is not None:
        h[1] = _DTYPES.index(t.dtype)
        shape = t._shape
        h[5] = len(shape)
        dims = shape if len(shape) <= _MAX_DIMS else (*shape[: _MAX_DIMS - 1], -2)
        h[6 : 6 + len(dims)] = dims
    if g.size == 1:
        return
    all_h = np.empty((g.size, _HEADER), np.int64)
    g.comm.Allgather(h, all_h)
    if (all_h == all_h[0]).all():
        return
    raise DistError(
        f"clgrad.distributed.{kind}: the ranks disagree: "
        + "; ".join(f"rank {r}: {_describe(row)}" for r, row in enumerate(all_h))
    )


def _describe(row) -> str:
    parts = [_KINDS[row[0]]]
    if row[1] >= 0:
        ndim = int(row[5])
        dims = [int(d) for d in row[6 : 6 + min(ndim, _MAX_DIMS)]]
        shape = ", ".join("..." if d == -2 else str(d) for d in dims)
        parts.append(f"{_DTYPES[row[1]]} [{shape}]")
    if row[2] >= 0:
        parts.append(f"op {ReduceOp(int(row[2])).name}")
    if row[3] >= 0:
        parts.append(f"root {row[3]}")
    if row[4] >= 0:
        parts.append(f"{row[4]} tensors in the list")
    return " ".join(parts)


def _mpi_op(g: _Group, op: ReduceOp, dt: D.dtype):
    """The MPI op for ``op`` on ``dt``, and whether the result is divided by the world size."""
    MPI = g.MPI
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be a clgrad.distributed.ReduceOp, got {op!r}")
    if op is ReduceOp.AVG and not dt.is_floating_point:
        raise ValueError(f"ReduceOp.AVG needs a floating-point tensor, got {dt}")
    if dt is D.bool_:
        # MPI has no arithmetic on booleans: a sum or maximum of truth values is an "or"
        logical = {
            ReduceOp.SUM: MPI.LOR,
            ReduceOp.MAX: MPI.LOR,
            ReduceOp.BOR: MPI.LOR,
            ReduceOp.PRODUCT: MPI.LAND,
            ReduceOp.MIN: MPI.LAND,
            ReduceOp.BAND: MPI.LAND,
            ReduceOp.BXOR: MPI.LXOR,
        }
        return logical[op], False
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dt.is_floating_point:
        raise ValueError(f"ReduceOp.{op.name} needs an integer tensor, got {dt}")
    ops = {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MAX: MPI.MAX,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.BAND: MPI.BAND,
        ReduceOp.BOR: MPI.BOR,
        ReduceOp.BXOR: MPI.BXOR,
    }
    return ops[op], op is ReduceOp.AVG


def _tensor(t, name="tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(t).__name__}")
    return t


def _same_as(t: Tensor, others: Sequence[Tensor], what: str, size: int) -> None:
    if len(others) != size:
        raise ValueError(f"{what} must hold world_size ({size}) tensors, got {len(others)}")
    for o in others:
        _tensor(o, what)
        if o.dtype is not t.dtype or o.numel() != t.numel():
            raise ValueError(
                f"every tensor of {what} must have {t.numel()} elements of {t.dtype} (the "
                f"input's), got {o.dtype} {list(o.shape)}"
            )


# ---- the collectives -----------------------------------------------------------------------
def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Combines ``tensor`` over every rank with ``op``, in place on every rank.

    >>> clgrad.distributed.all_reduce(clgrad.ones(2))
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _tensor(tensor)
    mpi_op, average = _mpi_op(g, op, tensor.dtype)
    _check(g, "all_reduce", tensor, op)
    buf, direct = _host(tensor)

    def finish():
        if average:
            np.divide(buf, g.size, out=buf, casting="unsafe")
        if direct:
            tensor._bump_version()
        else:
            _write(tensor, buf)

    IN_PLACE = g.MPI.IN_PLACE
    return _run(
        g,
        async_op,
        lambda: g.comm.Allreduce(IN_PLACE, buf, mpi_op),
        lambda: g.comm.Iallreduce(IN_PLACE, buf, mpi_op),
        finish,
    )


def broadcast(tensor: Tensor, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """Copies rank ``src``'s ``tensor`` into ``tensor`` on every other rank.

    >>> clgrad.distributed.broadcast(clgrad.ones(2), src=0)
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    src = src if group_src is None else group_src
    _root(g, src, "src")
    _check(g, "broadcast", _tensor(tensor), root=src)
    buf, direct = _host(tensor)

    def finish():
        if g.rank != src:
            if direct:
                tensor._bump_version()
            else:
                _write(tensor, buf)

    return _run(
        g,
        async_op,
        lambda: g.comm.Bcast(buf, root=src),
        lambda: g.comm.Ibcast(buf, root=src),
        finish,
    )


def _root(g, r, name):
    if not isinstance(r, int) or not 0 <= r < g.size:
        raise ValueError(f"{name} must be a rank in [0, {g.size - 1}], got {r!r}")


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group=None, async_op: bool = False):
    """Fills ``tensor_list[r]`` with rank r's ``tensor``, on every rank.

    >>> clgrad.distributed.all_gather([clgrad.ones(2)], clgrad.ones(2))
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _tensor(tensor)
    _same_as(tensor, tensor_list, "tensor_list", g.size)
    _check(g, "all_gather", tensor, count=len(tensor_list))
    send, _ = _host(tensor)
    recv = np.empty((g.size, *send.shape), send.dtype)

    def finish():
        for r, out in enumerate(tensor_list):
            _write(out, recv[r])

    return _run(
        g,
        async_op,
        lambda: g.comm.Allgather(send, recv),
        lambda: g.comm.Iallgather(send, recv),
        finish,
    )


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group=None, async_op: bool = False
):
    """Rank r's ``input_tensor`` lands in the r-th of world-size equal parts of
    ``output_tensor`` (dim 0 concatenated, or stacked), on every rank.

    >>> out = clgrad.empty(4)
    >>> clgrad.distributed.all_gather_into_tensor(out, clgrad.ones(2))
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _tensor(input_tensor, "input_tensor")
    _tensor(output_tensor, "output_tensor")
    _sizes(output_tensor, input_tensor, g.size, "output_tensor", "input_tensor")
    _check(g, "all_gather_into_tensor", input_tensor)
    send, _ = _host(input_tensor)
    recv, direct = _host(output_tensor)

    def finish():
        if direct:
            output_tensor._bump_version()
        else:
            _write(output_tensor, recv)

    return _run(
        g,
        async_op,
        lambda: g.comm.Allgather(send, recv),
        lambda: g.comm.Iallgather(send, recv),
        finish,
    )


def _sizes(big, small, size, big_name, small_name):
    if big.dtype is not small.dtype:
        raise ValueError(
            f"{big_name} and {small_name} must have one dtype: {big.dtype}, {small.dtype}"
        )
    if big.numel() != size * small.numel():
        raise ValueError(
            f"{big_name} must have world_size ({size}) times the elements of {small_name}: "
            f"{list(big.shape)} and {list(small.shape)}"
        )


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group=None,
    async_op: bool = False,
):
    """``output`` on rank r becomes ``input_list[r]`` combined over every rank with ``op``.

    >>> clgrad.distributed.reduce_scatter(clgrad.ones(2), [clgrad.ones(2)])
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _tensor(output, "output")
    _same_as(output, input_list, "input_list", g.size)
    mpi_op, average = _mpi_op(g, op, output.dtype)
    _check(g, "reduce_scatter", output, op, count=len(input_list))
    send = np.concatenate([_host(t)[0].reshape(-1) for t in input_list])
    return _reduce_scatter(g, output, send, mpi_op, average, async_op)


def reduce_scatter_tensor(
    output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False
):
    """``output`` on rank r becomes the r-th of world-size equal parts of ``input`` (dim 0)
    combined over every rank with ``op``.

    >>> clgrad.distributed.reduce_scatter_tensor(clgrad.ones(2), clgrad.ones(4))
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _tensor(output, "output")
    _tensor(input, "input")
    _sizes(input, output, g.size, "input", "output")
    mpi_op, average = _mpi_op(g, op, output.dtype)
    _check(g, "reduce_scatter_tensor", input, op)
    send, _ = _host(input)
    return _reduce_scatter(g, output, send.reshape(-1), mpi_op, average, async_op)


def _reduce_scatter(g, output, send, mpi_op, average, async_op):
    recv, direct = _host(output)

    def finish():
        if average:
            np.divide(recv, g.size, out=recv, casting="unsafe")
        if direct:
            output._bump_version()
        else:
            _write(output, recv)

    return _run(
        g,
        async_op,
        lambda: g.comm.Reduce_scatter_block(send, recv, mpi_op),
        lambda: g.comm.Ireduce_scatter_block(send, recv, mpi_op),
        finish,
    )


def reduce(
    tensor: Tensor,
    dst: int = 0,
    op: ReduceOp = ReduceOp.SUM,
    group=None,
    async_op: bool = False,
    group_dst=None,
):
    """``tensor`` on rank ``dst`` becomes ``tensor`` combined over every rank with ``op``; the
    other ranks' tensors are left as they are.

    >>> clgrad.distributed.reduce(clgrad.ones(2), dst=0)
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    dst = dst if group_dst is None else group_dst
    _root(g, dst, "dst")
    _tensor(tensor)
    mpi_op, average = _mpi_op(g, op, tensor.dtype)
    _check(g, "reduce", tensor, op, root=dst)
    buf, direct = _host(tensor)
    root = g.rank == dst
    send = g.MPI.IN_PLACE if root else buf

    def finish():
        if root:
            if average:
                np.divide(buf, g.size, out=buf, casting="unsafe")
            if direct:
                tensor._bump_version()
            else:
                _write(tensor, buf)

    return _run(
        g,
        async_op,
        lambda: g.comm.Reduce(send, buf if root else None, mpi_op, root=dst),
        lambda: g.comm.Ireduce(send, buf if root else None, mpi_op, root=dst),
        finish,
    )


def _rooted(g, name, tensor, tensors, root, root_arg, list_arg, role) -> bool:
    """The checks gather and scatter share (the root rank, the tensor, the list only the root
    passes, then the collective's header on every rank); whether this rank is the root."""
    _root(g, root, root_arg)
    _tensor(tensor)
    is_root = g.rank == root
    if is_root:
        _same_as(tensor, tensors or [], list_arg, g.size)
    elif tensors:
        raise ValueError(f"Argument ``{list_arg}`` must NOT be specified on non-{role} ranks.")
    _check(g, name, tensor, root=root)
    return is_root


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int = 0,
    group=None,
    async_op: bool = False,
    group_dst=None,
):
    """Rank ``dst``'s ``gather_list[r]`` receives rank r's ``tensor`` (other ranks pass None).

    >>> clgrad.distributed.gather(clgrad.ones(2))
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    dst = dst if group_dst is None else group_dst
    root = _rooted(g, "gather", tensor, gather_list, dst, "dst", "gather_list", "destination")
    send, _ = _host(tensor)
    recv = np.empty((g.size, *send.shape), send.dtype) if root else None

    def finish():
        if root:
            for r, out in enumerate(gather_list):
                _write(out, recv[r])

    return _run(
        g,
        async_op,
        lambda: g.comm.Gather(send, recv, root=dst),
        lambda: g.comm.Igather(send, recv, root=dst),
        finish,
    )


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int = 0,
    group=None,
    async_op: bool = False,
    group_src=None,
):
    """``tensor`` on rank r receives rank ``src``'s ``scatter_list[r]`` (other ranks pass None).

    >>> clgrad.distributed.scatter(clgrad.ones(2))
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    src = src if group_src is None else group_src
    root = _rooted(g, "scatter", tensor, scatter_list, src, "src", "scatter_list", "source")
    send = np.concatenate([_host(t)[0].reshape(-1) for t in scatter_list]) if root else None
    recv, direct = _host(tensor)

    def finish():
        if direct:
            tensor._bump_version()
        else:
            _write(tensor, recv)

    return _run(
        g,
        async_op,
        lambda: g.comm.Scatter(send, recv, root=src),
        lambda: g.comm.Iscatter(send, recv, root=src),
        finish,
    )


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Waits until every rank has called ``barrier``.

    >>> clgrad.distributed.barrier()
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _check(g, "barrier", None)
    return _run(g, async_op, g.comm.Barrier, g.comm.Ibarrier)


def all_gather_object(object_list: list, obj: Any, group=None) -> None:
    """Fills ``object_list[r]`` with rank r's picklable ``obj`` (pickled: for small Python
    values such as metrics; tensors go through ``all_gather``).

    >>> clgrad.distributed.all_gather_object([None], {"loss": 0.5})
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    if len(object_list) != g.size:
        raise ValueError(f"object_list must hold world_size ({g.size}) places")
    _check(g, "all_gather_object", None)
    object_list[:] = g.comm.allgather(obj)


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    """Replaces ``object_list``'s items on every rank with rank ``src``'s (pickled).

    >>> clgrad.distributed.broadcast_object_list([1, 2])
    Traceback (most recent call last):
    ...
    clgrad.distributed.ProcessGroupError: Default process group has not been initialized, ...
    """
    g = _default_group(group)
    _root(g, src, "src")
    _check(g, "broadcast_object_list", None, root=src, count=len(object_list))
    object_list[:] = g.comm.bcast(list(object_list), root=src)
