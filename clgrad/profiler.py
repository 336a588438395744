"""``torch.profiler``: ``profile`` (with ``schedule``, ``on_trace_ready`` and ``step()``),
``record_function``, ``ProfilerActivity``, ``ProfilerAction``, ``schedule``,
``tensorboard_trace_handler`` and ``supported_activities``.

It measures host (CPU) time: each ``record_function`` range and each clgrad op called through
the ``clgrad``, ``clgrad.nn.functional``, ``clgrad.linalg`` and ``clgrad.special`` namespaces
or a Tensor method (named as torch's ops: ``aten::add``, ``aten::mm``, ``aten::linear``, ...),
and each optimizer's ``step`` and ``zero_grad`` (``Optimizer.step#SGD.step``). Ops are timed by
wrappers put on those functions and methods when the first profiler starts collecting and
taken off when the last one stops, so a program pays nothing for them while it does not
profile. An op's time is the host's: on an OpenCL device that is enqueueing its kernels, not
running them (``clgrad.synchronize()`` inside a range makes it wait for them); the device
columns of torch's reports are zeros. ``ProfilerActivity.CUDA`` is accepted and adds nothing.
Functions bound to a name before profiling starts (``from clgrad import add``), clgrad's own
calls between its modules, and the autograd engine's work (but not the Tensor ops of a
backward formula) are not seen.

>>> from clgrad.profiler import profile, record_function, ProfilerActivity
>>> x = clgrad.ones(4, 5)
>>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
...     with record_function("model_inference"):
...         y = clgrad.mm(x, x.t()) + 1
>>> [(e.key, e.count) for e in prof.key_averages()]
[('model_inference', 1), ('aten::t', 1), ('aten::mm', 1), ('aten::add', 1)]
>>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=2))  # doctest: +SKIP
"""

from __future__ import annotations

import enum
import functools
import json
import os
import socket
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterable

from . import cuda
from . import linalg as _linalg
from . import special as _special
from .autograd import profiler as _ap
from .autograd.profiler import record_function
from .nn import functional as _F
from .optim.optimizer import Optimizer
from .tensor import Tensor

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    """The kinds of activity torch's profiler traces: clgrad records ``CPU`` (host) activity;
    the others are accepted.

    >>> ProfilerActivity.CPU
    <ProfilerActivity.CPU: 0>
    """

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __str__(self):
        return f"ProfilerActivity.{self.name}"


class ProfilerAction(enum.Enum):
    """What a ``schedule`` tells the profiler to do at a step.

    >>> ProfilerAction.RECORD_AND_SAVE.value
    3
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set[ProfilerActivity]:
    """``{ProfilerActivity.CPU}``, with ``CUDA`` where ``clgrad.cuda.is_available()`` (its
    ops are then timed on the host as the others).

    >>> ProfilerActivity.CPU in supported_activities()
    True
    """
    out = {ProfilerActivity.CPU}
    if cuda.is_available():
        out.add(ProfilerActivity.CUDA)
    return out


def kineto_available() -> bool:
    """True: clgrad's profiler writes the traces torch's Kineto would.

    >>> kineto_available()
    True
    """
    return True


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """torch's schedule: skips ``skip_first`` steps, then repeats cycles of ``wait`` steps
    (NONE), ``warmup`` steps (WARMUP) and ``active`` steps (RECORD, the last one
    RECORD_AND_SAVE, which hands the trace to ``on_trace_ready``), ``repeat`` times (0: until
    profiling ends). ``skip_first_wait`` leaves out the first cycle's wait.

    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(step).name for step in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        if mod_step < num_steps - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    return schedule_fn


def _default_schedule(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = False, **_ignored
) -> Callable:
    """An ``on_trace_ready`` that writes each trace to ``dir_name`` (made where missing) as
    ``{worker_name}.{time_ns}.pt.trace.json`` (``.gz`` with ``use_gzip``), the worker named
    ``{hostname}_{pid}`` by default, as TensorBoard's profiler plugin reads them.

    >>> import os, tempfile
    >>> logdir = tempfile.mkdtemp()
    >>> with profile(on_trace_ready=tensorboard_trace_handler(logdir, "w")):
    ...     y = clgrad.ones(2) * 3
    >>> [name.split(".")[-3:] for name in os.listdir(logdir)]
    [['pt', 'trace', 'json']]
    """

    def handler_fn(prof) -> None:
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        # nanoseconds, as torch: traces written in one second do not clash
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """torch.profiler's profiler: a ``with`` block (or ``start()``/``stop()``) that records
    the host time of each clgrad op call and ``record_function`` range (see the module's
    docstring), as ``torch.profiler.profile``.

    With a ``schedule``, each ``prof.step()`` ends a step (recorded as ``ProfilerStep#N``,
    summed as ``ProfilerStep*``): the schedule's action for the next step starts, keeps or
    stops collecting, and at the end of each active span ``on_trace_ready(prof)`` is called,
    then the next span collects afresh (``acc_events=True`` keeps the earlier spans' events).
    Without one everything between start and stop is recorded, and ``on_trace_ready`` is
    called at the stop. ``record_shapes``, ``profile_memory`` and ``with_stack`` are as in
    ``clgrad.autograd.profiler.profile``; ``with_flops``, ``with_modules``,
    ``experimental_config`` and ``execution_trace_observer`` are accepted.

    >>> traces = []
    >>> def ready(p):
    ...     traces.append((p.step_num, {e.key: e.count for e in p.key_averages()}))
    >>> with profile(schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=ready) as p:
    ...     for _ in range(4):
    ...         y = clgrad.ones(2).neg()
    ...         p.step()
    >>> traces
    [(4, {'ProfilerStep*': 2, 'aten::ones': 2, 'aten::neg': 2})]
    """

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback=None,
        **_ignored,
    ):
        self.activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            self.activities.add(ProfilerActivity.CUDA)
        elif use_cuda is not None:
            self.activities.discard(ProfilerActivity.CUDA)
        if not self.activities:
            raise AssertionError("No valid profiler activities found")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.use_device = "cuda" if ProfilerActivity.CUDA in self.activities else None
        self.profiler: _ap.profile | None = None
        self.preset_metadata: dict = {}
        self.schedule = schedule or _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: record_function | None = None
        A = ProfilerAction
        prepare, start, stop, ready = (
            self.prepare_trace,
            self.start_trace,
            self.stop_trace,
            self._trace_ready,
        )
        # torch's transitions, from the action of the step that ends to that of the next
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [prepare],
            (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [
                functools.partial(_warn, "Incorrect schedule: WARMUP followed by NONE"),
                start,
                stop,
            ],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [start],
            (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [
                functools.partial(_warn, "Incorrect schedule: RECORD followed by NONE"),
                stop,
            ],
            (A.RECORD, A.WARMUP): [
                functools.partial(_warn, "Incorrect schedule: RECORD followed by WARMUP"),
                stop,
            ],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop],
            (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """Signals that the next step has started (see the class's docstring)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def _transit_action(self, prev_action, current_action) -> None:
        for action in self.action_map.get((prev_action, current_action), ()):
            action()

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def prepare_trace(self) -> None:
        if self.profiler is None or not self.acc_events:
            self.profiler = _ap.profile(
                use_device=self.use_device,
                record_shapes=self.record_shapes,
                with_flops=self.with_flops,
                profile_memory=self.profile_memory,
                with_stack=self.with_stack,
                with_modules=self.with_modules,
                acc_events=self.acc_events,
            )
        self.profiler._prepare_trace()

    def start_trace(self) -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler._start_trace()
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules"):
            if getattr(self, flag):
                self.add_metadata_json(flag, "1")
        for k, v in self.preset_metadata.items():
            self.add_metadata_json(k, v)

    def stop_trace(self) -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def _require(self, what: str) -> _ap.profile:
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        return self.profiler

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **kwargs):
        """The recorded ranges summed by name (and input shapes, and top stack entries, where
        asked): an EventList of FunctionEventAvg with ``key``, ``count``,
        ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time`` (the average) in
        microseconds, and ``table()``."""
        return self._require("getting key averages").key_averages(
            group_by_input_shape, group_by_stack_n, **kwargs
        )

    def events(self):
        """Every recorded range, as an EventList of FunctionEvent."""
        return self._require("accessing events").function_events

    def export_chrome_trace(self, path: str, **_ignored) -> None:
        """Writes the last collected span to ``path`` as a Chrome trace (JSON, gzip where
        ``path`` ends in ``.gz``), to open in ``chrome://tracing``, Perfetto or TensorBoard."""
        self._require("exporting chrome trace").export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes the recorded stacks (``with_stack=True``) for flame graph tools."""
        self._require("exporting stacks").export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """Adds ``key: value`` (a string) to the trace's top level."""
        self.add_metadata_json(key, json.dumps(value))

    def add_metadata_json(self, key: str, value: str) -> None:
        """Adds ``key`` with ``value`` (JSON text) to the trace's top level."""
        if self.profiler is not None:
            self.profiler._metadata[key] = json.loads(value)

    def preset_metadata_json(self, key: str, value: str) -> None:
        """Metadata added to the trace at each start of collection."""
        self.preset_metadata[key] = value

    def toggle_collection_dynamic(self, enable: bool, activities: Iterable) -> None:
        """Accepted: clgrad collects host activity throughout the active steps."""


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


# ---- the op wrappers ---------------------------------------------------------------------------
# Modules whose functions are clgrad's ops (wherever a namespace re-exports them)
_OP_MODULES = (
    "clgrad.aten",
    "clgrad.functional",
    "clgrad.nn.functional",
    "clgrad.linalg",
    "clgrad.special",
)
# functions of those modules that are no op (torch records no event for them)
_NOT_OPS = frozenset(
    "manual_seed seed initial_seed get_rng_state set_rng_state broadcast_shapes is_same_size "
    "is_inference_mode_enabled is_conj is_neg is_inference is_storage get_device typename "
    "device_check".split()
)
# Tensor methods that read metadata or manage autograd: torch records no op for them
_NOT_TENSOR_OPS = frozenset(
    "size stride dim ndimension numel nelement element_size data_ptr storage_offset "
    "is_contiguous is_floating_point is_complex is_signed is_conj is_neg is_inference is_pinned "
    "is_shared is_same_size get_device register_hook register_post_accumulate_grad_hook "
    "retain_grad requires_grad_ storage untyped_storage type_name dim_order backward numpy "
    "tolist apply_ share_memory_ new type".split()
)
_CASTS = frozenset("to float double half bfloat16 int long short char byte bool cpu cuda".split())
_CASTS |= {"type_as"}
_TENSOR_DUNDERS = {
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add_",
    "__sub__": "sub",
    "__rsub__": "rsub",
    "__isub__": "sub_",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__imul__": "mul_",
    "__truediv__": "div",
    "__rtruediv__": "div",
    "__itruediv__": "div_",
    "__floordiv__": "floor_divide",
    "__rfloordiv__": "floor_divide",
    "__ifloordiv__": "floor_divide_",
    "__mod__": "remainder",
    "__rmod__": "remainder",
    "__imod__": "remainder_",
    "__pow__": "pow",
    "__rpow__": "pow",
    "__ipow__": "pow_",
    "__matmul__": "matmul",
    "__rmatmul__": "matmul",
    "__neg__": "neg",
    "__pos__": "positive",
    "__abs__": "abs",
    "__invert__": "bitwise_not",
    "__and__": "bitwise_and",
    "__rand__": "bitwise_and",
    "__iand__": "bitwise_and_",
    "__or__": "bitwise_or",
    "__ror__": "bitwise_or",
    "__ior__": "bitwise_or_",
    "__xor__": "bitwise_xor",
    "__rxor__": "bitwise_xor",
    "__ixor__": "bitwise_xor_",
    "__lshift__": "__lshift__",
    "__rlshift__": "__rlshift__",
    "__ilshift__": "__ilshift__",
    "__rshift__": "__rshift__",
    "__rrshift__": "__rrshift__",
    "__irshift__": "__irshift__",
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
}
# F's ops torch records under their native names
_F_NAMES = {"cross_entropy": "cross_entropy_loss", "nll_loss": "nll_loss_nd"}


def _index_name(args) -> str:
    """torch's op for ``x[key]``: select for an integer, slice for slices, index for tensors
    and lists (where the key mixes them, the one torch ends with)."""
    key = args[1] if len(args) > 1 else None
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (Tensor, list)) for k in parts):
        return "aten::index"
    if any(isinstance(k, int) and not isinstance(k, bool) for k in parts):
        return "aten::select"
    return "aten::slice"


def _setitem_name(args) -> str:
    """torch's op for ``x[key] = value``: index_put_ for a tensor or list key, else copy_ of
    a tensor value or fill_ of a number."""
    key = args[1] if len(args) > 1 else None
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (Tensor, list)) for k in parts):
        return "aten::index_put_"
    return "aten::copy_" if len(args) > 2 and isinstance(args[2], Tensor) else "aten::fill_"


def _shapes(args, kwargs) -> list:
    """The shapes of the tensor arguments (``[]`` for the others), as torch's Input Shapes."""
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in (*args, *kwargs.values())]


def _allocated(args, kwargs, out) -> dict | None:
    """The tensors ``out`` holds that share no storage with an argument, as {id of the
    storage: (bytes, on the host)}: what the op allocated (None where nothing)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    inputs = {id(a._storage) for a in (*args, *kwargs.values()) if isinstance(a, Tensor)}
    new = {}
    for o in outs:
        if isinstance(o, Tensor) and id(o._storage) not in inputs:
            new[id(o._storage)] = (o.numel() * o.element_size(), o.device.type == "cpu")
    return new or None


def _timed(fn: Callable, name, annotation: bool = False) -> Callable:
    """``fn`` recording each call under ``name`` (or ``name(args)`` where it is callable)
    while a profiler collects."""
    record, ids, wants, now = _ap._record, _ap._ids, _ap._Wants, time.perf_counter_ns
    dynamic = callable(name)

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        if not _ap._collecting:  # a stop in another thread left the wrapper in place a while
            return fn(*args, **kwargs)
        id = next(ids)
        stack = _ap._python_stack() if wants.stack else None
        shapes = _shapes(args, kwargs) if wants.shapes else None
        start = now()
        try:
            out = fn(*args, **kwargs)
        except BaseException:
            record(name(args) if dynamic else name, start, now(), id, annotation, shapes, stack)
            raise
        end = now()
        made = _allocated(args, kwargs, out) if wants.memory else None
        record(name(args) if dynamic else name, start, end, id, annotation, shapes, stack, made)
        return out

    return timed


def _optimizer_name(method: str) -> Callable:
    def name(args) -> str:
        kind = type(args[0]).__name__ if args else "Optimizer"
        return f"Optimizer.{method}#{kind}.{method}"

    return name


def _is_op(fn, name: str) -> bool:
    if not isinstance(fn, types.FunctionType) or name.startswith("_") or name in _NOT_OPS:
        return False
    module = fn.__module__ or ""
    if module.startswith("clgrad.ops."):
        return module != "clgrad.ops.autocast"
    return module in _OP_MODULES


def _targets():
    """(owner, attribute, function, name, annotation) of everything timed while profiling."""
    # the package itself, loaded before any of its modules: looked up, not imported, so that
    # this module stays below the top of the package's layers
    root = sys.modules[__name__.rpartition(".")[0]]
    for owner, prefix, renames in (
        (root, "aten::", {}),
        (_F, "aten::", _F_NAMES),
        (_linalg, "aten::linalg_", {}),
        (_special, "aten::special_", {}),
    ):
        for attr, fn in list(vars(owner).items()):
            if _is_op(fn, attr):
                yield owner, attr, fn, prefix + renames.get(attr, attr), False
    for attr, fn in list(vars(Tensor).items()):
        if not isinstance(fn, types.FunctionType):
            continue
        if attr in _TENSOR_DUNDERS:
            yield Tensor, attr, fn, "aten::" + _TENSOR_DUNDERS[attr], False
        elif attr == "__getitem__":
            yield Tensor, attr, fn, _index_name, False
        elif attr == "__setitem__":
            yield Tensor, attr, fn, _setitem_name, False
        elif not attr.startswith("_") and attr not in _NOT_TENSOR_OPS:
            yield Tensor, attr, fn, "aten::to" if attr in _CASTS else "aten::" + attr, False
    classes = [Optimizer]
    while classes:
        cls = classes.pop()
        classes += cls.__subclasses__()
        for method in ("step", "zero_grad"):
            fn = vars(cls).get(method)
            if isinstance(fn, types.FunctionType):
                yield cls, method, fn, _optimizer_name(method), True


# (owner, attribute) -> (function, its wrapper): made once, put on at each start
_wrappers: dict[tuple[int, str], tuple[Callable, Callable]] = {}
_installed: list[tuple[object, str, Callable, Callable]] = []


def _install() -> None:
    for owner, attr, fn, name, annotation in _targets():
        made = _wrappers.get((id(owner), attr))
        if made is None or made[0] is not fn:
            made = _wrappers[(id(owner), attr)] = (fn, _timed(fn, name, annotation))
        setattr(owner, attr, made[1])
        _installed.append((owner, attr, fn, made[1]))


def _uninstall() -> None:
    while _installed:
        owner, attr, fn, wrapper = _installed.pop()
        if vars(owner).get(attr) is wrapper:  # what was put there since stays
            setattr(owner, attr, fn)


_ap._instrumentation.append((_install, _uninstall))
_ap._skip_file(__file__)
