"""``Optimizer``: parameter groups with per-group options, per-parameter state, state dicts.

Every update runs on the parameters' own device, under no_grad, with in-place Tensor ops:
``step()`` never reads a value back from an OpenCL device. Step counts (and NAdam's
``mu_product``) are 0-d tensors on the host ``cpu`` device, as PyTorch keeps them, so state
dicts hold the same types as torch's; reading them there costs no transfer.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .. import capture
from ..autograd.grad_mode import enable_grad, no_grad
from ..backend.host import array as host_array
from ..dtypes import float32, float64, get_default_dtype
from ..hooks import RemovableHandle
from ..ops.complex import view_as_complex, view_as_real
from ..ops.creation import scalar_tensor, zeros_like
from ..tensor import Tensor

#: What an optimizer takes: tensors, or dicts that each define a parameter group.
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def implementation_options(
    foreach: bool | None = None,
    fused: bool | None = None,
    capturable: bool = False,
    differentiable: bool = False,
    *,
    keys: tuple[str, ...] = ("foreach", "fused", "capturable", "differentiable"),
) -> dict[str, Any]:
    """PyTorch's implementation switches, as an optimizer's defaults hold them (so its
    ``state_dict()["param_groups"]`` has torch's keys). ``foreach``, ``fused`` and ``capturable``
    choose how PyTorch runs the same update (multi-tensor kernels, one fused kernel, CUDA graphs),
    never what it computes, so clgrad accepts and records them; ``differentiable=True`` (autograd
    through ``step()``) is refused, since every update here runs under no_grad. ``keys`` are the
    switches the optimizer's PyTorch counterpart has.

    >>> from clgrad.optim.optimizer import implementation_options
    >>> implementation_options(foreach=True)
    {'foreach': True, 'fused': None, 'capturable': False, 'differentiable': False}
    """
    if differentiable:
        raise NotImplementedError(
            "differentiable=True is not supported: clgrad's optimizers update under no_grad"
        )
    if foreach and fused:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    given = {
        "foreach": foreach,
        "fused": fused,
        "capturable": capturable,
        "differentiable": differentiable,
    }
    return {k: given[k] for k in keys}


def fused_enabled(group: dict[str, Any]) -> bool:
    """Whether a parameter group may update with the fused kernels (one launch per parameter,
    as PyTorch's ``fused``/``foreach`` paths): by default (``None``, PyTorch's choice of the fast
    path) and when asked for; ``foreach=False`` or ``fused=False`` keeps one op per term, to
    compare the two.

    >>> from clgrad.optim.optimizer import fused_enabled
    >>> fused_enabled({"foreach": None, "fused": None}), fused_enabled({"foreach": False})
    (True, False)
    """
    return group.get("foreach") is not False and group.get("fused") is not False


def fusable(p: Tensor, grad: Tensor, states: list, asked: bool | None = None) -> bool:
    """Whether the fused kernel can update ``p``: the parameter, its gradient and its state
    tensors are contiguous, of one floating dtype and shape, on one cpu or OpenCL device, and
    the gradient is not the parameter's own memory (the kernel writes param as it reads grad).
    Otherwise the caller takes the per-op path (strided views, mixed devices or dtypes).
    A 16-bit parameter takes it only where ``fused=True`` was ``asked`` for: the kernel
    computes in float32, as PyTorch's fused path, while its default path computes a float16
    or bfloat16 parameter's update in that dtype, op by op (Adam's eps is 0 in float16 there).

    >>> from clgrad.optim.optimizer import fusable
    >>> w = clgrad.zeros(2, 3)
    >>> fusable(w, clgrad.ones(2, 3), []), fusable(w, clgrad.ones(3, 2).T, [])
    (True, False)
    """
    dev, dt, shape = p._storage.device, p.dtype, p._shape
    if not dt.is_floating_point or not (dev.is_cpu or dev.is_cl) or not p.is_contiguous():
        return False
    if dt.itemsize == 2 and not asked:
        return False
    if grad._storage is p._storage:
        return False
    for t in (grad, *states):
        if (
            t._storage.device != dev
            or t.dtype is not dt
            or t._shape != shape
            or not t.is_contiguous()
        ):
            return False
    return True


def fused_update(kind: str, flags: frozenset, p: Tensor, grad: Tensor, states: list, scalars):
    """One fused ``kind`` update of ``p`` and its ``states`` in place (see
    ``clgrad.backend.base.OPTIMIZERS`` for the formulas, flags and scalars): one kernel launch,
    no read back. Counts as an in-place write of each tensor it updates.

    >>> from clgrad.optim.optimizer import fused_update
    >>> w, g = clgrad.tensor([1.0, 2.0]), clgrad.tensor([0.5, -1.0])
    >>> fused_update("sgd", frozenset(), w, g, [], (-0.1, 0.0, 1.0, 0.0, 0.0))
    >>> w
    tensor([0.9500, 2.1000])
    """
    p._storage.device.backend.optimizer_step(
        kind, flags, [t._record() for t in (p, grad, *states)], scalars
    )
    p._bump_version()
    for t in states:
        t._bump_version()


# A parameter joins a grouped launch up to this many elements (past them its own kernel's run
# dwarfs a launch's cost), and a launch updates at most this many parameters (a kernel's
# arguments are bounded: OpenCL promises 1 KiB, and a parameter with three states takes 96).
GROUP_MAX_NUMEL = 1 << 20
GROUP_MAX_TENSORS = 8


class FusedUpdates:
    """The fused updates of one step, launched a group of parameters at a time where the
    device says that pays (``Backend.optimizer_group_max``: on GPUs), as PyTorch's foreach and
    fused paths do: parameters of one device, dtype and ``scalars`` share a launch (``launch``
    sends what is left; call it before the step returns). A parameter over GROUP_MAX_NUMEL,
    and every update while a step is captured (whose scalars a replay recomputes per
    parameter), goes alone, as ``fused_update``.

    >>> from clgrad.optim.optimizer import FusedUpdates
    >>> w, v = clgrad.tensor([1.0, 2.0]), clgrad.tensor([3.0])
    >>> updates = FusedUpdates("sgd", frozenset())
    >>> for p in (w, v):
    ...     updates.add(p, clgrad.ones_like(p), [], (-0.5, 0.0, 1.0, 0.0, 0.0))
    >>> updates.launch()
    >>> w, v
    (tensor([0.5000, 1.5000]), tensor([2.5000]))
    """

    def __init__(self, kind: str, flags: frozenset):
        self.kind, self.flags = kind, flags
        self.pending: dict[tuple, list] = {}

    def add(self, p: Tensor, grad: Tensor, states: list, scalars) -> None:
        device = p._storage.device
        most = min(GROUP_MAX_TENSORS, device.backend.optimizer_group_max)
        if most <= 1 or p.numel() > GROUP_MAX_NUMEL or capture.active is not None:
            fused_update(self.kind, self.flags, p, grad, states, scalars)
            return
        key = (device, p.dtype, tuple(scalars))
        members = self.pending.setdefault(key, [])
        members.append((p, grad, states))
        if len(members) >= most:
            self._launch(key)

    def launch(self) -> None:
        for key in list(self.pending):
            self._launch(key)

    def _launch(self, key) -> None:
        members = self.pending.pop(key)
        device, _, scalars = key
        device.backend.optimizer_step_group(
            self.kind,
            self.flags,
            [[t._record() for t in (p, grad, *states)] for p, grad, states in members],
            scalars,
        )
        for p, _, states in members:
            p._bump_version()
            for t in states:
                t._bump_version()


# The wording of torch's ValueError for each hyperparameter that must not be negative (the
# others read "Invalid <name> value").
_INVALID = {"lr": "learning rate", "eps": "epsilon value"}


def check_hyperparameters(**values: Any) -> None:
    """Raises PyTorch's ValueError for the first invalid value, in the order given (each
    optimizer passes them in its torch counterpart's order, so the same error wins when several
    are off): ``betas`` must lie in [0, 1), every other value must not be negative. An ``lr``
    that is ``required`` (SGD's, set per group) is checked per group, not here.

    >>> from clgrad.optim.optimizer import check_hyperparameters
    >>> check_hyperparameters(lr=0.1, betas=(0.9, 1.0))
    Traceback (most recent call last):
    ...
    ValueError: Invalid beta parameter at index 1: 1.0
    """
    for name, value in values.items():
        if name == "betas":
            for i in (0, 1):  # (PyTorch's: a 1-tuple is an IndexError, extra values unread)
                if not 0.0 <= value[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {value[i]}")
        elif value is not required:
            # a Tensor lr (which a scheduler can update in place) is one number
            if isinstance(value, Tensor) and value.numel() != 1:
                raise ValueError(f"Tensor {name} must be 1-element")
            if value < 0.0:
                raise ValueError(f"Invalid {_INVALID.get(name, name + ' value')}: {value}")


#: Why a step captured by ``clgrad.compile`` with a Tensor hyperparameter runs eagerly: the
#: capture guards on the tensor's identity, not its value, which a scheduler changes in place.
TENSOR_HYPERPARAMETER_NOT_REPLAYED = (
    "an optimizer hyperparameter is a Tensor (its value, which a replay would not read again, "
    "can change in place)"
)


def scalar_value(value: Any) -> Any:
    """A hyperparameter as a Python number: a 1-element Tensor (PyTorch's Tensor ``lr`` or
    ``betas``, which a scheduler updates with ``fill_``) is read at each step, so the update
    runs on the parameter's device whichever device holds it. Other values are returned as
    they are.

    >>> from clgrad.optim.optimizer import scalar_value
    >>> scalar_value(clgrad.tensor(0.5)), scalar_value(0.1)
    (0.5, 0.1)
    """
    if not isinstance(value, Tensor):
        return value
    if capture.active is not None:
        capture.active.fail(TENSOR_HYPERPARAMETER_NOT_REPLAYED)
    return value.item()


def real_view(t: Tensor) -> Tensor:
    """``t`` as PyTorch's optimizers update a complex tensor: its real view (``view_as_real``,
    the real and imaginary parts two real coordinates, sharing its memory), so every update
    treats them as independent numbers; a real tensor as it is.

    >>> from clgrad.optim.optimizer import real_view
    >>> real_view(clgrad.tensor([1 + 2j])), real_view(clgrad.tensor([3.0]))
    (tensor([[1., 2.]]), tensor([3.]))
    """
    return view_as_real(t) if t.is_complex() else t


def complex_state(state: dict, updated: dict, shape) -> None:
    """Puts into ``state`` the entries an update of a complex parameter's real view (of
    ``shape``) created in ``updated``: tensors of the view's shape become complex views of
    their memory (PyTorch keeps a complex parameter's state complex), others (step counts)
    stay as they are. Entries the update found there (updated in place) are left alone."""
    for name, value in updated.items():
        old = state.get(name)
        if value is old or (isinstance(old, Tensor) and old.is_complex()):
            continue
        if isinstance(value, Tensor) and value._shape == shape:
            value = view_as_complex(value)
        state[name] = value


#: The devices clgrad's fused kernels run on (named in ``check_fused``'s error).
FUSED_DEVICES = ["cpu", "cl"]


def check_fused(group: dict[str, Any], p: Tensor) -> None:
    """PyTorch's RuntimeError for ``fused=True`` asked of a parameter its fused kernels don't
    take (a complex or integer one), raised at ``step()`` as torch's
    ``_device_dtype_check_for_fused``; without ``fused=True`` such a parameter takes the
    per-op path."""
    if group.get("fused") and not p.is_floating_point():
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {FUSED_DEVICES} but {p.dtype} and {p.device.type}"
        )


def refuse_sparse(p: Tensor, message: str) -> None:
    """PyTorch's RuntimeError (``message``, each optimizer's own words) for a sparse gradient
    (``nn.Embedding(sparse=True)``'s) reaching an optimizer without a sparse formulation.

    >>> from clgrad.optim.optimizer import refuse_sparse
    >>> w = clgrad.nn.Parameter(clgrad.zeros(3, 2))
    >>> clgrad.nn.functional.embedding(clgrad.tensor([1]), w, sparse=True).sum().backward()
    >>> refuse_sparse(w, "Adam does not support sparse gradients")
    Traceback (most recent call last):
    RuntimeError: Adam does not support sparse gradients
    """
    if not isinstance(p._grad, Tensor):  # (a sparse tensor is no Tensor subclass)
        raise RuntimeError(message)


def refuse_complex(optimizer: Optimizer, p: Tensor) -> None:
    """PyTorch's RuntimeError for an optimizer without a complex formulation (Adafactor,
    Muon) stepping a complex parameter."""
    if p.is_complex():
        raise RuntimeError(f"{type(optimizer).__name__} does not support complex parameters")


def fused_flags(**on: bool) -> frozenset:
    """The names of the fused kernel's flags that are on (see ``clgrad.backend.base.OPTIMIZERS``).

    >>> from clgrad.optim.optimizer import fused_flags
    >>> sorted(fused_flags(momentum=True, nesterov=False, maximize=True))
    ['maximize', 'momentum']
    """
    return frozenset(name for name, value in on.items() if value)


def scalar_dtype():
    """The dtype of the 0-d tensors in an optimizer's state (``step``, NAdam's ``mu_product``,
    ASGD's ``eta`` and ``mu``), as PyTorch's ``_get_scalar_dtype``: float64 while the default
    dtype is float64, else float32.

    >>> from clgrad.optim.optimizer import scalar_dtype
    >>> scalar_dtype()
    clgrad.float32
    """
    return float64 if get_default_dtype() is float64 else float32


def scalar_state(value: float, device: Any = None) -> Tensor:
    """A 0-d tensor of ``value`` in ``scalar_dtype()``, on ``device`` (the host ``cpu`` by
    default): what an optimizer keeps as its step count and other per-parameter numbers.

    >>> from clgrad.optim.optimizer import scalar_state
    >>> scalar_state(3)
    tensor(3.)
    """
    with no_grad():
        return scalar_tensor(float(value), dtype=scalar_dtype(), device=device or "cpu")


#: Why a step captured by ``clgrad.compile`` that counts an optimizer's steps outside a fused
#: kernel runs eagerly: the count is host state, and the numbers computed from it are baked into
#: the recorded launches; a replay would advance neither.
STEP_NOT_REPLAYED = (
    "Python state it reads changed during the capture (an optimizer's step count, which a "
    "replay would not advance)"
)


def count_step(state: dict, replayed: bool = False) -> float:
    """Counts one more step in ``state["step"]`` (a 0-d tensor, in place) and returns the new
    count as a Python float, as PyTorch's ``step_t += 1`` then ``_get_value(step_t)``. While a
    step is captured (``clgrad.compile``) the capture is given up unless ``replayed``: the
    caller hands the recording a scalar source that counts the step at each replay.

    >>> from clgrad.optim.optimizer import count_step, scalar_state
    >>> state = {"step": scalar_state(0)}
    >>> count_step(state), state["step"]
    (1.0, tensor(1.))
    """
    if capture.active is not None and not replayed:
        capture.active.fail(STEP_NOT_REPLAYED)
    step = state["step"]
    if step.device.is_cpu:
        # a count on the host (where PyTorch keeps it too): one NumPy add on its memory, not
        # an op per parameter per step
        value = host_array(step._record())
        value += 1
        step._bump_version()
        return float(value)
    step.add_(1)  # ASGD's, on the parameter's device
    return float(step.item())


def recount_step(state: dict) -> float:
    """``count_step`` for the replay of a captured step (``clgrad.compile``): the count goes into
    a new tensor, so that a checked replay, which puts back the objects it found, also puts back
    the count; returns the new count.

    >>> from clgrad.optim.optimizer import recount_step, scalar_state
    >>> first = scalar_state(4)
    >>> state = {"step": first}
    >>> recount_step(state), first, state["step"]
    (5.0, tensor(4.), tensor(5.))
    """
    old = state["step"]
    value = float(old.item()) + 1
    with no_grad():
        state["step"] = scalar_tensor(value, dtype=old.dtype, device=old.device)
    return value


def init_state(
    state: dict, p: Tensor, zeros: Iterable[str], device: Any = None, **numbers: Any
) -> None:
    """Fills a parameter's empty ``state`` on its first update, in PyTorch's key order:
    ``step`` (0), then the ``numbers``, each a 0-d tensor (``scalar_state``) on ``device`` (the
    host by default), then a zero tensor like ``p`` for each name in ``zeros``. A state that
    exists (a later step, or one loaded from a state dict) is kept.

    >>> from clgrad.optim.optimizer import init_state
    >>> state = {}
    >>> init_state(state, clgrad.ones(2), ["exp_avg"], mu_product=1.0)
    >>> state
    {'step': tensor(0.), 'mu_product': tensor(1.), 'exp_avg': tensor([0., 0.])}
    """
    if state:
        return
    state["step"] = scalar_state(0, device)
    for name, value in numbers.items():
        state[name] = scalar_state(value, device)
    for name in zeros:
        state[name] = zeros_like(p).detach()


def decayed_grad(
    p: Tensor, g: Tensor, weight_decay: float, lr: float = 0.0, decoupled: bool = False
) -> Tensor:
    """``g`` with PyTorch's weight decay: the L2 term ``g + weight_decay * p`` or, ``decoupled``
    (AdamW's), ``p`` shrunk in place by ``1 - lr * weight_decay`` and ``g`` as it is. The
    per-op path of every optimizer; the fused kernels do the same from their flags.

    >>> from clgrad.optim.optimizer import decayed_grad
    >>> decayed_grad(clgrad.tensor([1.0, 2.0]), clgrad.tensor([0.5, 0.5]), 0.1)
    tensor([0.6000, 0.7000])
    """
    if weight_decay == 0:
        return g
    if decoupled:
        p.mul_(1 - lr * weight_decay)
        return g
    return g + p * weight_decay


# The step hooks of every optimizer (``register_optimizer_step_pre_hook``): the pre-hooks run
# before each optimizer's own, the post-hooks after, as PyTorch's.
_global_optimizer_pre_hooks: dict[int, Callable[..., Any]] = {}
_global_optimizer_post_hooks: dict[int, Callable[..., Any]] = {}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs)`` to run before the ``step`` of every optimizer
    (before the optimizer's own pre-hooks); a non-None result is ``(new_args, new_kwargs)``, as
    ``torch.optim.optimizer.register_optimizer_step_pre_hook``.

    >>> from clgrad.optim.optimizer import register_optimizer_step_pre_hook
    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.ones(1))], lr=0.1)
    >>> handle = register_optimizer_step_pre_hook(lambda o, args, kwargs: print(type(o).__name__))
    >>> opt.step()
    SGD
    >>> handle.remove()
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs)`` to run after the ``step`` of every optimizer
    (after the optimizer's own post-hooks), as
    ``torch.optim.optimizer.register_optimizer_step_post_hook``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step):
    """An optimizer's ``step`` between the step pre-hooks and post-hooks (the global ones
    first among the pre-hooks and last among the post-hooks)."""

    @functools.wraps(step)
    def hooked(self, *args, **kwargs):
        own_pre = self.__dict__.get("_optimizer_step_pre_hooks")
        own_post = self.__dict__.get("_optimizer_step_post_hooks")
        if not (own_pre or own_post or _global_optimizer_pre_hooks or _global_optimizer_post_hooks):
            return step(self, *args, **kwargs)
        pre = [*_global_optimizer_pre_hooks.values(), *(own_pre or {}).values()]
        post = [*(own_post or {}).values(), *_global_optimizer_post_hooks.values()]
        args = (self, *args)
        for hook in pre:
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                        f"{result}."
                    )
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in post:
            hook(self, args, kwargs)
        return out

    return hooked


class Optimizer:
    """Base class of the optimizers, as ``torch.optim.Optimizer``: holds ``param_groups`` (a list
    of dicts, each with its "params" and its options, ``defaults`` filling the options a group
    does not set) and ``state`` (per parameter). ``params`` is an iterable of tensors, or of
    dicts that each define a group. Subclasses implement ``step``; every update runs on the
    parameters' own device, under no_grad, with in-place tensor ops.

    >>> import clgrad.nn as nn
    >>> model = nn.Linear(2, 1)
    >>> opt = clgrad.optim.SGD(
    ...     [{"params": [model.weight]}, {"params": [model.bias], "lr": 0.5}], lr=0.1
    ... )
    >>> [group["lr"] for group in opt.param_groups]
    [0.1, 0.5]
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {params.type_name()}"
            )
        if isinstance(params, dict):
            params = [params]
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a parameter group: a dict with "params" (a tensor or an ordered collection of
        tensors) and any options that override the optimizer's defaults, as
        ``torch.optim.Optimizer.add_param_group`` (typically to train layers unfrozen later).
        A parameter may belong to one group only.

        >>> model = clgrad.nn.Linear(2, 1)
        >>> opt = clgrad.optim.SGD([model.weight], lr=0.1)
        >>> opt.add_param_group({"params": model.bias, "lr": 1.0})
        >>> len(opt.param_groups), opt.param_groups[1]["lr"], opt.param_groups[1]["momentum"]
        (2, 1.0, 0)
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        # the dict given becomes the group, filled in place, as PyTorch's: a program that keeps
        # it (or the list of dicts it built the optimizer from) sees and changes the group
        group = param_group
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        params = list(params)
        named = [isinstance(p, tuple) for p in params]
        if any(named):  # named_parameters(): the names go to the group's "param_names"
            if not all(named):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        group["params"] = params
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            group.setdefault(name, default)
        if len({id(p) for p in group["params"]}) != len(group["params"]):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=3,
            )
        for g in self.param_groups:
            if ("param_names" in group) != ("param_names" in g):
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param "
                    f"group {'with' if 'param_names' in group else 'without'} names to the "
                    "optimizer"
                )
        ids = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in ids for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:  # every optimizer's step runs the step hooks
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(optimizer, args, kwargs)`` to run before every ``step`` (``args``
        starts with the optimizer itself); a non-None result is ``(new_args, new_kwargs)``, as
        ``torch.optim.Optimizer.register_step_pre_hook``.

        >>> w = clgrad.nn.Parameter(clgrad.ones(1))
        >>> opt = clgrad.optim.SGD([w], lr=0.1)
        >>> h = opt.register_step_pre_hook(lambda o, args, kwargs: print("stepping"))
        >>> opt.step()
        stepping
        """
        return self._step_hook(self.__dict__.setdefault("_optimizer_step_pre_hooks", {}), hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(optimizer, args, kwargs)`` to run after every ``step``, as
        ``torch.optim.Optimizer.register_step_post_hook``."""
        return self._step_hook(self.__dict__.setdefault("_optimizer_step_post_hooks", {}), hook)

    @staticmethod
    def _step_hook(hooks, hook, prepend: bool = False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:  # (the dicts keep insertion order: the new hook moved to the front)
            for key in [k for k in hooks if k != handle.id]:
                hooks[key] = hooks.pop(key)
        return handle

    def _hooks(self, kind: str) -> dict:
        """The hooks of ``kind`` registered on this optimizer, in the order they run."""
        return self.__dict__.setdefault(f"_optimizer_{kind}_hooks", {})

    def register_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer)`` to run before ``state_dict`` builds the dict (first of
        the hooks with ``prepend``), as ``torch.optim.Optimizer.register_state_dict_pre_hook``."""
        return self._step_hook(self._hooks("state_dict_pre"), hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer, state_dict)`` to run on the dict ``state_dict`` built; a
        non-None result replaces it, as ``torch.optim.Optimizer.register_state_dict_post_hook``.

        >>> w = clgrad.nn.Parameter(clgrad.ones(1))
        >>> opt = clgrad.optim.SGD([w], lr=0.1)
        >>> h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "epoch": 3})
        >>> opt.state_dict()["epoch"]
        3
        """
        return self._step_hook(self._hooks("state_dict_post"), hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer, state_dict)`` to run before ``load_state_dict`` loads (on
        a shallow copy of the dict given); a non-None result is loaded instead, as
        ``torch.optim.Optimizer.register_load_state_dict_pre_hook``."""
        return self._step_hook(self._hooks("load_state_dict_pre"), hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer)`` to run after ``load_state_dict`` has loaded, as
        ``torch.optim.Optimizer.register_load_state_dict_post_hook``."""
        return self._step_hook(self._hooks("load_state_dict_post"), hook, prepend)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every parameter: to None (the default) or, with
        ``set_to_none=False``, to zeros, as ``torch.optim.Optimizer.zero_grad``.

        >>> w = clgrad.nn.Parameter(clgrad.ones(2))
        >>> opt = clgrad.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.zero_grad()
        >>> w.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    if capture.active is not None:
                        capture.note_grad(p, "set")
                    if set_to_none:
                        p._grad = None
                    elif capture.active is not None:
                        # a captured step's grads are the recording's own: a new zeroed one
                        p._grad = p._grad.detach()
                        p._grad.zero_()
                    else:
                        # the same tensor, zeroed in place, as PyTorch's: a program (or hook)
                        # holding p.grad sees the zeros
                        grad = p._grad
                        if grad.grad_fn is not None:
                            grad.detach_()
                        else:
                            grad.requires_grad_(False)
                        grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (an update of every parameter that has a gradient); the
        optional ``closure`` re-evaluates the model (with grad enabled) and returns the loss, which
        ``step`` returns. Each subclass implements it; the base raises NotImplementedError.
        """
        raise NotImplementedError

    def _closure(self, closure):
        # every step() starts here: a captured step (clgrad.compile) guards on this optimizer
        if capture.active is not None:
            capture.note_optimizer(self)
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _params_with_grad(self, group):
        return [p for p in group["params"] if p._grad is not None]

    # ---- state dicts -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as a dict, in PyTorch's layout: ``{"state": {index: {name: value}},
        "param_groups": [{options..., "params": [index, ...]}]}``, the parameters numbered in group
        order. Tensors are not copied.

        >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
        >>> opt = clgrad.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> state = opt.state_dict()
        >>> state["state"]
        {0: {'momentum_buffer': tensor([2., 4.])}}
        >>> state["param_groups"][0]["params"], state["param_groups"][0]["lr"]
        ([0], 0.1)
        """
        for hook in list(self._hooks("state_dict_pre").values()):
            hook(self)
        state_dict = self._packed_state()
        for hook in list(self._hooks("state_dict_post").values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def _packed_state(self) -> dict[str, Any]:
        """``state_dict()``'s dict, before its hooks."""
        index, groups, n = {}, [], 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                if id(p) not in index:
                    index[id(p)] = n
                    n += 1
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the options and per-parameter state from a ``state_dict()`` of an optimizer over
        parameters of the same group sizes, as ``torch.optim.Optimizer.load_state_dict``: state
        tensors are copied to each parameter's device (and its dtype, for floating-point state).

        >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
        >>> opt = clgrad.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> fresh = clgrad.optim.SGD([w], lr=0.5, momentum=0.9)
        >>> fresh.load_state_dict(opt.state_dict())
        >>> fresh.param_groups[0]["lr"], fresh.state[w]["momentum_buffer"]
        (0.1, tensor([2., 4.]))
        """
        state_dict = state_dict.copy()  # (the hooks see a shallow copy, as torch's)
        for hook in list(self._hooks("load_state_dict_pre").values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        self._load_packed_state(state_dict)
        for hook in list(self._hooks("load_state_dict_post").values()):
            hook(self)

    def _load_packed_state(self, state_dict: dict[str, Any]) -> None:
        """``load_state_dict``'s loading, between its hooks."""
        state_dict = deepcopy({"param_groups": state_dict["param_groups"]}) | {
            "state": state_dict["state"]
        }
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(self.param_groups, saved):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group"
                )
        id_map = {}
        for g, s in zip(self.param_groups, saved):
            for p, i in zip(g["params"], s["params"]):
                id_map[i] = p
        self.state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            k = int(key) if isinstance(key, str) else key
            if k not in id_map:
                continue
            p = id_map[k]
            self.state[p] = self._tensor_scalars(
                p, {name: _cast(p, v, name) for name, v in value.items()}
            )
        # the saved groups (copies) become the groups, holding this optimizer's parameters, as
        # PyTorch's: an option set on a group since (a key the saved dict lacks) is gone, but
        # the options a state dict from an older release lacks get their defaults, as
        # PyTorch's __setstate__ gives them
        for i, (g, s) in enumerate(zip(self.param_groups, saved)):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            for name, default in self.defaults.items():
                if default is not required:
                    s.setdefault(name, default)
            self.param_groups[i] = s

    #: The state entries PyTorch keeps as 0-d tensors (``scalar_state``), and whether they live on
    #: the parameter's device (ASGD's) rather than the host.
    # the state entries kept as 0-d tensors: PyTorch's built-in optimizers convert their
    # "step" in their own __setstate__; a user's subclass of Optimizer keeps its Python ints
    # (``range(state["step"])`` in Lion or LAMB after a checkpoint resume)
    _scalar_keys: tuple[str, ...] = ()
    _scalars_on_param_device = False

    def _tensor_scalars(self, p: Tensor, state: dict) -> dict:
        """``state`` with the ``_scalar_keys`` entries that are Python numbers (a state dict
        saved when clgrad kept them so) made 0-d tensors, as PyTorch's ``__setstate__`` does."""
        device = p.device if self._scalars_on_param_device else None
        for name in self._scalar_keys:
            if name in state and not isinstance(state[name], Tensor):
                state[name] = scalar_state(state[name], device)
        return state

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for p, st in self.state.items():
            if isinstance(p, Tensor):
                self._tensor_scalars(p, st)

    def __repr__(self):
        # torch's: each group after a line break of its own, so a blank line between groups
        text = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for k in sorted(g):
                if k != "params":
                    text += f"    {k}: {g[k]}\n"
        return text + ")"


def _cast(p, value, key=None):
    """A loaded state entry, as PyTorch's ``load_state_dict`` casts it: tensors (in dicts and
    sequences too) go to ``p``'s device and, for a floating-point ``p``, its dtype; but ``step``
    stays as it is (PyTorch keeps it off the device so reading it costs nothing). PyTorch moves
    the step to the device under ``fused``/``capturable`` for its GPU-side bias corrections;
    clgrad computes those on the host either way, so its step stays there."""
    if isinstance(value, Tensor):
        with no_grad():
            moved = value.detach()
            if key != "step":
                moved = moved.to(device=p.device, dtype=p.dtype if p.is_floating_point() else None)
            # a copy: the loaded optimizer must not update the state dict's tensors in place
            return moved.clone() if moved._storage is value._storage else moved
    if isinstance(value, dict):
        return {k: _cast(p, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(p, v) for v in value)
    return value
