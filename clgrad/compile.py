"""``clgrad.compile``: a step captured once as its kernel launches, then replayed.

The model is CUDA graphs (``torch.compile(mode="reduce-overhead")``): the first call for given
inputs runs eagerly (a warm-up: optimizer state and lazily made tensors appear), the second runs
for real while ``clgrad.capture`` records every kernel it launches, and later calls only copy
the new inputs into the captured ones and enqueue the recorded launches again; no Python op, no
autograd graph, no allocation. See the README section "Captured steps: clgrad.compile".
"""

from __future__ import annotations

import functools
import logging
import warnings
import weakref

import numpy as np
import pyopencl as cl

from . import capture
from .autograd.grad_mode import is_grad_enabled, no_grad
from .backend.opencl import replay
from .backend.opencl import runtime as cl_runtime
from .nn import Module
from .nn.modules import module as module_mod
from .optim.lr_scheduler import LRScheduler
from .optim.optimizer import Optimizer
from .tensor import Tensor

log = logging.getLogger("clgrad")

# a capture that sees the Python state it guards change (a warm-up not finished) is retried on
# the next call this many times before the key runs eagerly for good
UNSTEADY_RETRIES = 3
# graphs kept per compiled function (one per input signature) before the oldest is dropped
CACHE_LIMIT = 8
# torch.compile's modes: each one runs the same captured step here
MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_SCALARS = (bool, int, float, complex, str, type(None))


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend="inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
    check: bool | None = None,
):
    """Captures the kernels ``model`` (a function or an ``nn.Module``) launches and replays them
    on later calls, as ``torch.compile(mode="reduce-overhead")`` replays CUDA graphs: a whole
    training step (forward, loss, backward, ``optimizer.step()``, ``zero_grad()``) then costs
    little more than enqueueing its kernels.

    Call 1 for an input signature runs eagerly (warm-up), call 2 runs while recording, calls 3+
    copy the tensor arguments into the captured inputs, enqueue the recorded launches and return
    fresh copies of the outputs (a kept ``loss`` is never overwritten). Each leaf's ``.grad``
    is set as the captured call left it; Adam's step counts and bias corrections, and the
    offsets of random ops (dropout draws new numbers), advance at each replay.

    A new capture is made when a guard changes: the tensor arguments' shapes, strides, dtypes
    and devices, grad mode, Python scalar arguments, the modules' ``training`` flags and their
    parameters (and ``requires_grad``), the optimizers' hyperparameters (``lr`` set by a
    scheduler) and parameters, and ``.grad`` replaced by the user where backward accumulates.

    What it cannot see runs eagerly instead (warned once), never replayed wrong: a read of
    device memory to the host (``.item()``, ``.numpy()``, print, ``nonzero``, a branch on a
    tensor's value) or a tensor made from host data inside the step; Python state the step
    changes (an optimizer or scheduler counter) that is not advanced at replay; outputs that are
    not tensors; tensor arguments that require grad. Outputs that require grad (a module's
    forward in training, with backward outside) run eagerly too: the backward would cross the
    replay. Data-dependent Python control flow that does not read the device (a branch on a
    Python counter) and other Python side effects are invisible: the replay repeats the
    captured branch. ``check=True`` (or ``CLGRAD_COMPILE_CHECK=1``) runs every replay against
    eager execution and raises RuntimeError when they differ. ``CLGRAD_DEBUG=1`` logs captures,
    replays and recaptures.

    On the ``cpu`` device (NumPy on the host, no kernels) the function runs eagerly; the
    guards still apply. ``mode``, ``dynamic``, ``backend`` and ``options`` are accepted and
    ignored (``mode`` must be one of torch's); ``fullgraph=True`` raises where the step would
    fall back to eager; ``disable=True`` returns ``model`` itself.

    >>> w = clgrad.tensor([1.0, 2.0], requires_grad=True)  # on "cl:0": calls 3+ replay
    >>> opt = clgrad.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> @clgrad.compile
    ... def step(x):
    ...     opt.zero_grad()
    ...     loss = ((w * x).sum() - 1) ** 2
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> x = clgrad.tensor([0.5, 0.5])
    >>> [round(step(x).item(), 4) for _ in range(4)]
    [0.25, 0.2025, 0.1296, 0.059]
    >>> round(step(x * 2).item(), 4)  # new values, the same signature: a replay on "cl:0"
    1.505
    """
    if mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES[1:])}")
    if model is None:  # @clgrad.compile(...) as a decorator with options
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
            check=check,
        )
    if disable:
        return model
    if check is None:
        check = cl_runtime.int_setting("CLGRAD_COMPILE_CHECK") != 0
    if isinstance(model, Module):
        return CompiledModule(model, CompiledFunction(model, check=check, fullgraph=fullgraph))
    if not callable(model):
        raise RuntimeError(f"clgrad.compile expects a callable or a Module, got {type(model)}")
    return CompiledFunction(model, check=check, fullgraph=fullgraph)


module_mod.module_compiler[0] = compile  # Module.compile()'s compiler


class CompiledModule(Module):
    """What ``compile(module)`` returns, as torch's ``OptimizedModule``: the module under
    ``_orig_mod`` (so its parameters, ``train()``/``eval()`` and state dict go through), its
    forward captured; other attributes are the module's."""

    def __init__(self, mod: Module, compiled: CompiledFunction):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            mods = self.__dict__.get("_modules")
            if mods is None or "_orig_mod" not in mods:
                raise
            return getattr(mods["_orig_mod"], name)


class _Entry:
    """One input signature of a compiled function: its calls, its graph, or why it is eager."""

    __slots__ = ("calls", "graph", "eager", "unsteady", "objects")

    def __init__(self, objects):
        self.calls = 0
        self.graph: _Graph | None = None
        self.eager: str | None = None
        self.unsteady = 0
        self.objects = objects  # the non-scalar arguments: their ids are in the key


class CompiledFunction:
    """What ``compile(fn)`` returns: calls ``fn`` eagerly, captures it, then replays."""

    def __init__(self, fn, *, check: bool = False, fullgraph: bool = False):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.check = check
        self.fullgraph = fullgraph
        self.entries: dict[tuple, _Entry] = {}
        self.warned = False
        # calls that ran eagerly, that captured, that replayed (tests and CLGRAD_DEBUG read it)
        self.counts = {"eager": 0, "capture": 0, "replay": 0}

    def __get__(self, instance, owner=None):  # a compiled method binds as a function would
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if capture.active is not None:  # inside another capture: its launches are that one's
            return self.fn(*args, **kwargs)
        tensors, key, objects = [], [is_grad_enabled()], []
        _flatten((args, kwargs), tensors, key, objects)
        key = tuple(key)
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= CACHE_LIMIT:
                old = self.entries.pop(next(iter(self.entries)))
                if old.graph is not None:
                    old.graph.close()
            entry = self.entries[key] = _Entry(objects)
        graph = entry.graph
        if graph is not None:
            if graph.guard() == graph.guards:
                self.counts["replay"] += 1
                if self.check:
                    return graph.checked_replay(tensors, self.fn, args, kwargs)
                return graph.replay(tensors)
            if cl_runtime.DEBUG:
                log.debug("compile: %s: a guard changed, recapturing", _name(self.fn))
            graph.close()
            entry.graph = None
            entry.calls = max(entry.calls, 1)  # warmed up already: capture on this call
        if entry.eager is not None:
            self.counts["eager"] += 1
            return self.fn(*args, **kwargs)
        for t in tensors:
            if not t._storage.device.is_cl:
                return self._eager(entry, "tensors on the cpu device run eagerly", args, kwargs)
            if t.requires_grad:
                return self._eager(entry, "a tensor argument requires grad", args, kwargs, True)
        entry.calls += 1
        if entry.calls == 1:
            self.counts["eager"] += 1
            if cl_runtime.DEBUG:
                log.debug("compile: %s: warm-up call (eager)", _name(self.fn))
            return self.fn(*args, **kwargs)
        return self._capture(entry, tensors, args, kwargs)

    def _eager(self, entry, reason, args, kwargs, warn=False):
        entry.eager = reason
        self.counts["eager"] += 1
        if warn:
            self._fallback(reason)
        elif cl_runtime.DEBUG:
            log.debug("compile: %s runs eagerly: %s", _name(self.fn), reason)
        return self.fn(*args, **kwargs)

    def _fallback(self, reason):
        message = f"clgrad.compile: {_name(self.fn)} runs eagerly: {reason}"
        if self.fullgraph:
            raise RuntimeError(message + " (fullgraph=True)")
        if cl_runtime.DEBUG:
            log.debug("%s", message)
        if not self.warned:
            self.warned = True
            warnings.warn(message, UserWarning, 3)

    def _capture(self, entry, tensors, args, kwargs):
        with no_grad():
            static_in = [t.detach().clone() for t in tensors]
        s_args, s_kwargs = _rebuild((args, kwargs), iter(static_in))
        modules, optimizers, schedulers = _reachable(self.fn, (args, kwargs))
        before = _snapshot(modules, optimizers, schedulers)
        versions = [t._storage.version for t in static_in]
        self.counts["capture"] += 1
        rec, fusing = replay.start_capture()
        rec.first_optimizer = functools.partial(_add_snapshot, before)
        try:
            out = self.fn(*s_args, **s_kwargs)
        finally:
            replay.stop_capture(rec, fusing)  # work deferred by the step is part of it
        # arguments the step wrote in place: the caller's tensors get what it wrote (a replay
        # writes the captured copies, then these too)
        mutated = [i for i, t in enumerate(static_in) if t._storage.version != versions[i]]
        for flag, fail, _ in rec.checks:  # the captured call raises as eager would, after it
            if bool(flag.item()):
                fail()
        with no_grad():
            for i in mutated:
                tensors[i].copy_(static_in[i])
        optimizers = list({id(o): o for o in [*optimizers, *rec.optimizers.values()]}.values())
        static_out, spec = [], []
        bad_output = _flatten_out(out, static_out, spec)
        reason = rec.unsupported
        if reason is None and rec.source is not None:
            reason = "a scalar source no kernel launch consumed"
        if reason is None and bad_output:
            reason = f"it returns {bad_output}"
        if reason is not None:
            entry.eager = reason
            if reason is capture.HOST_WORK:  # the cpu device runs eagerly, as documented
                if cl_runtime.DEBUG:
                    log.debug("compile: %s runs eagerly: %s", _name(self.fn), reason)
            else:
                self._fallback(reason)
            return out
        if not rec.launches:
            entry.eager = "it launches no kernel (the cpu device, or no tensor work)"
            return out
        if is_grad_enabled() and not rec.accumulated and any(t.requires_grad for t in static_out):
            # a forward whose backward runs outside (a training step's backward inside has
            # used its graph: its outputs are returned detached)
            entry.eager = "an output requires grad (its backward would cross the replay)"
            if cl_runtime.DEBUG:
                log.debug("compile: %s runs eagerly: %s", _name(self.fn), entry.eager)
            return out
        claimed = {(id(c), k) for c, k in rec.claims}
        after = _snapshot(modules, optimizers, schedulers)
        changed = [k for k in before.keys() | after.keys() if k[:2] not in claimed]
        changed = [k for k in changed if before.get(k, _MISSING) != after.get(k, _MISSING)]
        if changed:
            entry.unsteady += 1
            what = f"Python state it reads changed during the capture ({changed[0][2]})"
            if entry.unsteady >= UNSTEADY_RETRIES:
                entry.eager = what
                self._fallback(what)
            else:
                entry.calls = 1  # capture again on the next call
                if cl_runtime.DEBUG:
                    log.debug("compile: %s: %s; capturing again", _name(self.fn), what)
            return out
        graph = _Graph(rec, static_in, static_out, spec, modules, optimizers)
        graph.mutated = mutated
        entry.graph = graph
        if cl_runtime.DEBUG:
            log.debug(
                "compile: %s: captured %d launches (%d patched)",
                _name(self.fn),
                len(rec.launches),
                len(rec.patches),
            )
        return graph.outputs()


_MISSING = object()


class _Graph:
    """A captured step: its launches, the buffers they use (kept from the allocator's cache
    while it lives), its static inputs and outputs, and the Python state a replay restores."""

    def __init__(self, rec, static_in, static_out, spec, modules, optimizers):
        self.claims = rec.claims
        # (flag, fail, the storages it depends on alone or None) and, per check, their
        # versions when it last passed
        self.checks = [
            (flag, fail, _watched(inputs, rec.allocated)) for flag, fail, inputs in rec.checks
        ]
        # the capture read every check: as passed at the versions it left
        self.checked = [
            None if w is None else tuple(s.version for s in w) for _, _, w in self.checks
        ]
        self.static_in = static_in
        self.mutated = []  # the indices of the arguments the step writes in place
        self.sources = [None] * len(static_in)  # (weakref to storage, version) last copied
        self.static_out = [t.detach() for t in static_out]
        self.spec = spec
        self.modules = modules
        self.optimizers = optimizers
        # (leaf, its .grad after the capture, its .grad before when backward accumulates)
        self.leaves = [
            (leaf, leaf._grad, entry if how == "accumulate" else _MISSING)
            for leaf, entry, how in rec.leaves.values()
        ]
        self.launches_bound = replay.BoundLaunches(rec)
        # what the step reads and writes beyond its own memory and its inputs (the parameters,
        # the optimizer's state): what check mode compares
        inputs = {t._storage.data.int_ptr for t in static_in}
        self.buffers = self.launches_bound.buffers
        self.external = [
            v for p, v in self.buffers.items() if p not in rec.allocated and p not in inputs
        ]
        self.guards = self.guard()

    def close(self):
        self.launches_bound.release()

    def guard(self) -> tuple:
        """What must be as at the capture for a replay to be right (see ``compile``)."""
        g = []
        for m in self.modules:
            for sub in m.modules():
                g.append(sub.training)
                g += [(id(p), p.requires_grad) for p in sub._parameters.values() if p is not None]
        for opt in self.optimizers:
            for group in opt.param_groups:
                g += [_hashable(v) for k, v in group.items() if k != "params"]
                g += [id(p) for p in group["params"]]
        for leaf, _, entry in self.leaves:
            g.append(leaf.requires_grad)
            if entry is not _MISSING:  # backward adds into this .grad: it must be the same
                g.append(leaf._grad is entry)
        return tuple(g)

    def replay(self, tensors):
        with no_grad():
            for i, (static, t) in enumerate(zip(self.static_in, tensors)):
                s = t._storage
                last = self.sources[i]
                seen = (s.version, t._offset, t._stride)
                if last is None or last[0]() is not s or last[1] != seen:
                    static.copy_(t)
                    self.sources[i] = (weakref.ref(s), seen)
        self.launches_bound.replay()
        for leaf, final, _ in self.leaves:
            leaf._grad = final
        if self.mutated:
            with no_grad():
                for i in self.mutated:
                    tensors[i].copy_(self.static_in[i])
        self.run_checks()
        if cl_runtime.DEBUG:
            log.debug("compile: replayed %d launches", len(self.launches_bound.bound))
        return self.outputs()

    def run_checks(self):
        """The step's input checks, as eager makes them: each flag read, unless the tensors
        it depends on are unchanged since it last passed."""
        for i, (flag, fail, watched) in enumerate(self.checks):
            seen = None if watched is None else tuple(s.version for s in watched)
            if seen is not None and seen == self.checked[i]:
                continue
            if bool(flag.item()):
                fail()
            self.checked[i] = seen

    def outputs(self):
        with no_grad():
            return _rebuild_out(self.spec, iter([t.clone() for t in self.static_out]))

    def checked_replay(self, tensors, fn, args, kwargs):
        """A replay checked against eager execution from the same state; eager's result
        stands. Raises RuntimeError naming what differed."""
        start = {p: _read(rt, b) for p, (rt, b) in self.buffers.items()}
        claims = [(c, k, capture.get_claim(c, k)) for c, k in self.claims]
        grads = [(leaf, leaf._grad) for leaf, _, _ in self.leaves]
        with no_grad():
            written = [(tensors[i], tensors[i].clone()) for i in self.mutated]
        out_r = _host_outputs(self.replay(tensors))
        ext_r = [_read(rt, b) for rt, b in self.external]
        grads_r = [_host(leaf._grad) for leaf, _ in grads]
        for p, (rt, b) in self.buffers.items():
            rt.host_wait(lambda q, b=b, p=p: cl.enqueue_copy(q, b, start[p], is_blocking=True))
        for c, k, v in claims:
            capture.set_claim(c, k, v)
        for leaf, g in grads:
            leaf._grad = g
        with no_grad():
            for t, before in written:
                t.copy_(before)
        self.sources = [None] * len(self.static_in)  # the inputs were restored too
        out = fn(*args, **kwargs)
        problems = []
        out_e = _host_outputs(out)
        if len(out_e) != len(out_r):
            problems.append(f"{len(out_r)} outputs replayed, {len(out_e)} eager")
        for i, (a, b) in enumerate(zip(out_r, out_e)):
            if not _close(a, b):
                problems.append(f"output {i}: replay {_show(a)}, eager {_show(b)}")
        for i, (leaf, _) in enumerate(grads):
            if not _close(grads_r[i], _host(leaf._grad)):
                problems.append(f"the .grad of leaf {i} (shape {tuple(leaf.shape)})")
        for (rt, b), before in zip(self.external, ext_r):
            if not _close_bytes(before, _read(rt, b)):
                problems.append(f"device memory the step writes ({b.size} bytes)")
        if problems:
            raise RuntimeError(
                f"clgrad.compile check: the replay of {_name(fn)} differs from eager "
                "execution: " + "; ".join(problems[:5])
            )
        return out


# ---- helpers -------------------------------------------------------------------------------
def _watched(inputs, allocated):
    """The storages of ``inputs``, where a check depends on them alone and none is memory of
    the step's own (rewritten by each replay without a new version); else None."""
    if not inputs:
        return None
    storages = tuple(t._storage for t in inputs)
    if any(s.data.int_ptr in allocated for s in storages):
        return None
    return storages


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _hashable(v):
    return id(v) if isinstance(v, Tensor) else v


def _flatten(obj, tensors, key, objects):
    """Appends the tensors in ``obj`` (nested tuples, lists, dicts) to ``tensors`` and what a
    capture depends on to ``key``: each tensor's layout, dtype and device, each scalar's value,
    any other object's identity (kept in ``objects``)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        key.append((obj._shape, obj._stride, obj.dtype, obj._storage.device, obj.requires_grad))
    elif isinstance(obj, _SCALARS):
        key.append((type(obj), obj))
    elif isinstance(obj, (tuple, list)):
        key.append((type(obj), len(obj)))
        for x in obj:
            _flatten(x, tensors, key, objects)
    elif isinstance(obj, dict):
        key.append((dict, tuple(obj)))
        for x in obj.values():
            _flatten(x, tensors, key, objects)
    else:
        key.append(id(obj))
        objects.append(obj)


def _rebuild(obj, tensors):
    if isinstance(obj, Tensor):
        return next(tensors)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_rebuild(x, tensors) for x in obj)
    if isinstance(obj, dict):
        return {k: _rebuild(v, tensors) for k, v in obj.items()}
    return obj


def _flatten_out(out, tensors, spec) -> str | None:
    """Like ``_flatten`` for a result: ``spec`` describes its structure; returns what cannot be
    replayed (a value that is not a tensor, None or a container of them), else None."""
    if isinstance(out, Tensor):
        tensors.append(out)
        spec.append(Tensor)
    elif out is None:
        spec.append(None)
    elif isinstance(out, (tuple, list)):
        spec.append((type(out), len(out)))
        for x in out:
            bad = _flatten_out(x, tensors, spec)
            if bad:
                return bad
    elif isinstance(out, dict):
        spec.append((dict, tuple(out)))
        for x in out.values():
            bad = _flatten_out(x, tensors, spec)
            if bad:
                return bad
    else:
        return f"a {type(out).__name__} (only tensors are replayed)"
    return None


def _rebuild_out(spec, tensors):
    def build(it):
        s = next(it)
        if s is Tensor:
            return next(tensors)
        if s is None:
            return None
        kind, n = s
        if kind is dict:
            return {k: build(it) for k in n}
        return kind(build(it) for _ in range(n))

    return build(iter(spec))


def _reachable(fn, args):
    """The modules, optimizers and LR schedulers ``fn`` can reach: its arguments, its closure,
    the globals its code names (and, one level down, those of the functions it names)."""
    found, seen = [], set()

    def visit(obj, depth):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, (Module, Optimizer, LRScheduler)):
            found.append(obj)
        elif isinstance(obj, (tuple, list)):
            for x in obj:
                visit(x, depth)
        elif isinstance(obj, dict):
            for x in obj.values():
                visit(x, depth)
        elif depth > 0 and (callable(obj) or isinstance(obj, functools.partial)):
            visit_function(obj, depth - 1)

    def visit_function(f, depth):
        if isinstance(f, functools.partial):
            visit(f.func, depth + 1)
            visit(f.args, depth)
            return
        visit(getattr(f, "__self__", None), depth)
        f = getattr(f, "__func__", f)
        if isinstance(f, (Module, CompiledFunction)):
            visit(f, depth)
            f = getattr(f, "fn", None) or type(f).forward
        code = getattr(f, "__code__", None)
        if code is None:
            return
        for cell in getattr(f, "__closure__", None) or ():
            try:
                visit(cell.cell_contents, depth)
            except ValueError:  # an empty cell
                pass
        names, stack = set(), [code]
        while stack:
            c = stack.pop()
            names.update(c.co_names)
            stack += [k for k in c.co_consts if hasattr(k, "co_names")]
        g = getattr(f, "__globals__", {})
        for name in names:
            if name in g:
                visit(g[name], depth)

    visit(args, 1)
    visit_function(fn, 2)
    modules = [m for m in found if isinstance(m, Module)]
    return (
        modules,
        [o for o in found if isinstance(o, Optimizer)],
        [s for s in found if isinstance(s, LRScheduler)],
    )


def _snapshot(modules, optimizers, schedulers) -> dict:
    """The Python state a replay would not redo, as {(id(container), key, label): value}: the
    modules' scalar attributes, training flags and parameters; the optimizers' hyperparameters
    and per-parameter state (a tensor by identity); the schedulers' counters."""
    snap = {}

    def scalars(obj, label):
        for k, v in vars(obj).items():
            if isinstance(v, _SCALARS) or isinstance(v, Tensor):
                snap[(id(obj), k, f"{label}.{k}")] = _hashable(v)

    for m in modules:
        for name, sub in m.named_modules():
            scalars(sub, type(sub).__name__)
            for k, p in sub._parameters.items():
                snap[(id(sub._parameters), k, f"parameter {name}.{k}")] = (
                    id(p),
                    p is not None and p.requires_grad,
                )
    for opt in optimizers:
        label = type(opt).__name__
        for i, group in enumerate(opt.param_groups):
            for k, v in group.items():
                v = tuple(map(id, v)) if k == "params" else _hashable(v)
                snap[(id(group), k, f"{label} group {i} {k}")] = v
        for st in opt.state.values():
            for k, v in st.items():
                snap[(id(st), k, f"{label} state {k}")] = _hashable(v)
    for s in schedulers:
        scalars(s, type(s).__name__)
    return snap


def _add_snapshot(snap, optimizer):
    """Adds an optimizer first seen at its ``step()`` to the snapshot taken before capturing."""
    for k, v in _snapshot((), [optimizer], ()).items():
        snap.setdefault(k, v)


def _read(rt, buf) -> np.ndarray:
    host = np.empty(buf.size, np.uint8)
    rt.host_wait(lambda q: cl.enqueue_copy(q, host, buf, is_blocking=True))
    return host


def _host(t):
    return None if t is None else t.detach().cpu().numpy()


def _host_outputs(out) -> list:
    tensors, spec = [], []
    _flatten_out(out, tensors, spec)
    return [_host(t) for t in tensors]


def _close(a, b) -> bool:
    """Equal within float32 rounding (exactly, for integers and bools)."""
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    scale = float(np.max(np.abs(b), initial=0.0)) if b.size else 0.0
    return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6 * max(scale, 1.0), equal_nan=True))


def _close_bytes(a, b) -> bool:
    """Two copies of a buffer: the same bytes, or float32 values within rounding (a buffer
    holds no dtype; a replay of the same kernels rounds the same, but atomics may not)."""
    if np.array_equal(a, b):
        return True
    if a.size % 4:
        return False
    return _close(a.view(np.float32), b.view(np.float32))


def _show(a) -> str:
    return np.array2string(a, threshold=6, precision=5) if a is not None else "None"
