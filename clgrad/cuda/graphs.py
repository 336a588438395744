"""``clgrad.cuda.graphs``: ``torch.cuda``'s CUDA graphs (``CUDAGraph``, ``graph``,
``make_graphed_callables``) on the OpenCL devices ``"cuda"`` names, made of what
``clgrad.compile`` captures with: ``clgrad.capture`` records every kernel launched between
``capture_begin`` and ``capture_end`` (the memory allocated meanwhile is the graph's, kept from
the allocator's cache while the graph lives) and ``replay`` enqueues the same launches again,
on the same memory: new inputs are copied into the captured (static) tensors first, and the
results are read from the captured outputs, as with PyTorch's graphs. Random ops draw new
numbers at each replay, and Adam's step counts advance, as ``clgrad.compile``'s replays do.

One difference: PyTorch's capture queues nothing, and its outputs hold garbage until the first
replay; clgrad's capture runs the work once while recording it. So a captured in-place update
(an optimizer's step) is applied at the capture too, once more than under PyTorch. Work that a
replay of launches cannot redo (a read of device memory to the host such as ``.item()``, a
tensor made from host data) raises RuntimeError at ``capture_end``, where PyTorch raises at the
op; work on the ``cpu`` device runs at the capture and is not replayed, as in PyTorch.

>>> if clgrad.cuda.is_available():
...     x = clgrad.zeros(3, device="cuda")
...     g = clgrad.cuda.CUDAGraph()
...     with clgrad.cuda.graph(g):
...         y = x * 2 + 1
...     _ = x.copy_(clgrad.tensor([1.0, 2.0, 3.0]))
...     g.replay()
...     assert y.tolist() == [3.0, 5.0, 7.0]
"""

from __future__ import annotations

import itertools
import warnings

from .. import capture
from ..autograd.engine import grad as autograd_grad
from ..autograd.function import Function, once_differentiable
from ..backend.opencl import replay
from ..device import accelerators, cuda_device
from ..nn import Module
from ..ops.creation import zeros_like
from ..tensor import Tensor
from .streams import Stream, stream

__all__ = [
    "CUDAGraph",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "make_graphed_callables",
]

_pools = itertools.count(1)
_CAPTURE_MODES = ("global", "thread_local", "relaxed")


def is_current_stream_capturing() -> bool:
    """Whether a capture is underway (a ``CUDAGraph``'s, or ``clgrad.compile``'s), as
    ``torch.cuda.is_current_stream_capturing``.

    >>> clgrad.cuda.is_current_stream_capturing()
    False
    """
    return capture.active is not None


def graph_pool_handle() -> tuple[int, int]:
    """An opaque memory pool token for ``graph(..., pool=)``, as
    ``torch.cuda.graph_pool_handle``. Accepted and ignored: each graph keeps the blocks it
    allocated, and blocks freed meanwhile return to the device's cache.

    >>> isinstance(clgrad.cuda.graph_pool_handle(), tuple)
    True
    """
    return (0, next(_pools))


def _runtimes() -> list:
    """The runtimes of the OpenCL devices opened so far."""
    return [rt for d in accelerators() if (rt := d.__dict__.get("runtime")) is not None]


class CUDAGraph:
    """Kernel launches captured once and replayed, as ``torch.cuda.CUDAGraph`` (see the
    module's docstring). ``keep_graph`` is accepted: the launches are ready to replay at
    ``capture_end`` either way, and ``instantiate`` does nothing.

    >>> g = clgrad.cuda.CUDAGraph()
    >>> g.replay()
    Traceback (most recent call last):
    ...
    RuntimeError: Called CUDAGraph::replay without a preceding successful capture.
    """

    def __init__(self, keep_graph: bool = False) -> None:
        self.keep_graph = keep_graph
        self._recording: capture.Recording | None = None
        self._launches: replay.BoundLaunches | None = None  # the captured launches
        self._fusion: list = []
        self._pool = graph_pool_handle()
        self._debug = False

    def capture_begin(
        self, pool=None, capture_error_mode: str = "global", check_input_liveness: bool = False
    ) -> None:
        """Starts recording the kernels launched on the cuda devices, as
        ``torch.cuda.CUDAGraph.capture_begin`` (``torch.cuda.graph`` calls it); ``pool`` is
        accepted and ignored."""
        if self._launches is not None:
            raise RuntimeError(
                "This CUDAGraph instance already owns a captured graph. To capture a new graph, "
                "create a new instance."
            )
        if capture_error_mode not in _CAPTURE_MODES:
            raise RuntimeError(
                "Unknown capture error mode. Expected `global`, `thread_local`, or `relaxed`, "
                f"got {capture_error_mode}"
            )
        if capture.active is not None:
            raise RuntimeError("a capture is already underway (one capture at a time)")
        cuda_device()  # raises, naming the devices, where there is no cuda device
        # clgrad.compile's capture: the work queued before is not part of it, and the
        # runtimes fuse as for a step replayed many times
        self._recording, self._fusion = replay.start_capture()

    def _stop(self) -> capture.Recording | None:
        rec, fusing = self._recording, self._fusion
        self._recording, self._fusion = None, []
        if rec is not None:
            replay.stop_capture(rec, fusing)  # the launches the capture deferred are part of it
        return rec

    def capture_end(self) -> None:
        """Ends the capture and makes its launches ready to replay, as
        ``torch.cuda.CUDAGraph.capture_end``; RuntimeError where the captured work holds
        what a replay of launches cannot redo."""
        if self._recording is None or capture.active is not self._recording:
            raise RuntimeError("Called CUDAGraph::capture_end without a matching capture_begin")
        rec = self._stop()
        reason = rec.unsupported
        if reason == capture.HOST_WORK:  # run at the capture, not replayed: as in PyTorch
            reason = None
        if reason is None and rec.source is not None:
            reason = "a scalar source no kernel launch consumed"
        if reason is not None:
            raise RuntimeError(
                f"operation not permitted when stream is capturing: the captured work has {reason}"
                ", which a replay of its kernel launches cannot redo"
            )
        for flag, fail, _ in rec.checks:  # the capture raises where eager execution would
            if bool(flag.item()):
                fail()
        if not rec.launches:
            warnings.warn(
                "The CUDA Graph is empty. This usually means that the graph was attempted to "
                "be captured on wrong device or stream.",
                UserWarning,
                2,
            )
        self._launches = replay.BoundLaunches(rec)

    def instantiate(self) -> None:
        """Does nothing: the launches are ready at ``capture_end`` (PyTorch's
        ``instantiate`` builds the executable graph of a ``keep_graph`` capture)."""
        if self._launches is None:
            raise RuntimeError("instantiate() called without a preceding successful capture")

    def replay(self) -> None:
        """Enqueues the captured launches again, as ``torch.cuda.CUDAGraph.replay``: after
        the work queued before, without waiting for it."""
        if self._launches is None:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful capture.")
        self._launches.replay()

    def reset(self) -> None:
        """Drops the captured launches and gives their memory back, as
        ``torch.cuda.CUDAGraph.reset``.

        >>> clgrad.cuda.CUDAGraph().reset()
        """
        if self._recording is not None:
            self._stop()
        if self._launches is not None:
            self._launches.release()
        self._launches = None

    def pool(self) -> tuple[int, int]:
        """This graph's memory pool token, as ``torch.cuda.CUDAGraph.pool``.

        >>> isinstance(clgrad.cuda.CUDAGraph().pool(), tuple)
        True
        """
        return self._pool

    def enable_debug_mode(self) -> None:
        """Makes ``debug_dump`` write the captured launches."""
        self._debug = True

    def debug_dump(self, debug_path: str) -> None:
        """Writes the captured launches (kernel, global and local sizes), one a line, to
        ``debug_path`` after ``enable_debug_mode``, as ``torch.cuda.CUDAGraph.debug_dump``
        writes its graph."""
        if not self._debug:
            warnings.warn(
                "CUDA Graphs debug not enabled, set with [graph].enable_debug_mode()",
                UserWarning,
                2,
            )
            return
        with open(debug_path, "w") as f:
            bound = self._launches.bound if self._launches is not None else ()
            for _, _, kernel, global_size, local_size, _ in bound:
                f.write(f"{kernel.function_name} global={global_size} local={local_size}\n")


class graph:
    """Context manager capturing the cuda work of its block into ``cuda_graph``, as
    ``torch.cuda.graph``: it waits for the device and empties the allocator's cache first,
    makes ``stream`` (default: a stream of its own) the current stream inside, and calls
    ``capture_begin``/``capture_end``. An exception inside ends the capture without a graph.

    >>> if clgrad.cuda.is_available():
    ...     x, g = clgrad.zeros(2, device="cuda"), clgrad.cuda.CUDAGraph()
    ...     with clgrad.cuda.graph(g):
    ...         y = x + 1
    ...     g.replay()
    """

    default_capture_stream: Stream | None = None

    def __init__(
        self,
        cuda_graph: CUDAGraph,
        pool=None,
        stream: Stream | None = None,
        capture_error_mode: str = "global",
        enable_annotations: bool = False,
        check_input_liveness: bool = False,
    ) -> None:
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else self.default_capture_stream
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        cuda_device().synchronize()
        for rt in _runtimes():
            rt.allocator.empty_cache()
        self.stream_ctx = stream(self.capture_stream)
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(*self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:  # the block failed: no graph, and its exception goes on
                self.cuda_graph._stop()
        finally:
            self.stream_ctx.__exit__(exc_type, exc, tb)


# ---- make_graphed_callables ------------------------------------------------------------------
def _as_tuple(out) -> tuple[tuple, bool]:
    """(the tensors of a callable's output, whether it was one tensor)."""
    if isinstance(out, Tensor):
        return (out,), True
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        return tuple(out), False
    raise TypeError(
        "make_graphed_callables: a callable must return a Tensor or a tuple of Tensors, got "
        f"{type(out).__name__}"
    )


def _graphed(func, args: tuple, num_warmup_iters: int, allow_unused_input: bool, pool):
    """The autograd Function's apply that replays ``func``'s forward and backward graphs."""
    params = tuple(func.parameters()) if isinstance(func, Module) else ()
    surface = args + params  # the static inputs: the sample arguments and the parameters
    needs_grad = tuple(t for t in surface if t.requires_grad)
    for _ in range(num_warmup_iters):  # lazily made state appears before the capture
        outs, _ = _as_tuple(func(*args))
        outs = tuple(o for o in outs if o.requires_grad)
        if outs and needs_grad:
            autograd_grad(
                outs, needs_grad, tuple(zeros_like(o) for o in outs),
                only_inputs=True, allow_unused=allow_unused_input,
            )  # fmt: skip
    cuda_device().synchronize()
    fwd = CUDAGraph()
    with graph(fwd, pool=pool):
        static_out, single = _as_tuple(func(*args))
    grad_outs = tuple(zeros_like(o) if o.requires_grad else None for o in static_out)
    differentiable = tuple(o for o in static_out if o.requires_grad)
    bwd = CUDAGraph()
    with graph(bwd, pool=fwd.pool()):
        grads = ()
        if differentiable and needs_grad:
            grads = autograd_grad(
                differentiable, needs_grad, tuple(g for g in grad_outs if g is not None),
                only_inputs=True, allow_unused=allow_unused_input,
            )  # fmt: skip
    it = iter(grads)
    static_grads = tuple(next(it, None) if t.requires_grad else None for t in surface)
    n_args = len(args)

    class Graphed(Function):
        @staticmethod
        def forward(ctx, *inputs):
            for static, new in zip(surface[:n_args], inputs[:n_args]):
                if static.data_ptr() != new.data_ptr():
                    static.copy_(new)
            fwd.replay()
            return tuple(o.detach() for o in static_out)

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            for static, g in zip(grad_outs, grads):
                if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd.replay()
            return tuple(None if g is None else g.detach() for g in static_grads)

    def functionalized(*user_args):
        out = Graphed.apply(*user_args, *params)
        return out[0] if single else out

    functionalized.graphs = (fwd, bwd)  # (kept alive with the function)
    return functionalized


def make_graphed_callables(
    callables, sample_args, num_warmup_iters: int = 3, allow_unused_input: bool = False, pool=None
):
    """Graphed versions of ``callables`` (functions or modules), as
    ``torch.cuda.make_graphed_callables``: each one's forward and backward are captured as
    graphs (``CUDAGraph``) from ``sample_args`` after ``num_warmup_iters`` warm-up runs, and
    calling it copies the arguments into the captured ones and replays them; its outputs are
    the captured (static) outputs, overwritten by the next call, as in PyTorch. A module's
    ``forward`` is replaced, and replays while the module's ``training`` is as at the capture;
    a module must have no hooks and no buffer requiring grad. Arguments
    and outputs are tensors (a tuple of them); ``sample_args`` is a tuple per callable.

    >>> if clgrad.cuda.is_available():
    ...     lin = clgrad.nn.Linear(3, 2).cuda()
    ...     graphed = clgrad.cuda.make_graphed_callables(lin, (clgrad.ones(4, 3, device="cuda"),))
    ...     graphed(clgrad.ones(4, 3, device="cuda")).sum().backward()
    ...     assert lin.weight.grad is not None
    """
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    for c, args in zip(callables, sample_args):
        if not isinstance(args, tuple) or not all(isinstance(a, Tensor) for a in args):
            raise TypeError(
                "In the beta API, sample_args for each callable must contain only Tensors. "
                "Other types are not allowed."
            )
        if isinstance(c, Module):
            hooked = any(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                         for m in c.modules())  # fmt: skip
            if hooked:
                raise RuntimeError(
                    "Modules must not have hooks registered at the time they are passed. "
                    "However, registering hooks on modules after passing them through "
                    "make_graphed_callables is allowed."
                )
            if any(b.requires_grad for b in c.buffers()):
                raise RuntimeError(
                    "In any '_ModuleOrCallable' passed to make_graphed_callables, all buffers "
                    "must have requires_grad=False."
                )
    out = []
    for c, args in zip(callables, sample_args):
        replay = _graphed(c, args, num_warmup_iters, allow_unused_input, pool)
        if isinstance(c, Module):
            c.forward = _graphed_forward(c, c.training, replay, c.forward)
            out.append(c)
        else:
            out.append(replay)
    return out[0] if just_one else tuple(out)


def _graphed_forward(module, training: bool, replay, eager):
    def forward(*args, **kwargs):
        if module.training == training and not kwargs:
            return replay(*args)
        return eager(*args, **kwargs)

    return forward
