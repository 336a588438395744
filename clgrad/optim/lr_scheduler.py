"""Learning-rate schedules (PyTorch's recursive formulas, ``get_last_lr``, state dicts)."""

from __future__ import annotations

import bisect
import functools
import math
import types
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "ReduceLROnPlateau",
    "MultiplicativeLR",
    "PolynomialLR",
    "ChainedScheduler",
    "CyclicLR",
]


def _check_optimizer(optimizer):
    # torch's TypeError, raised before anything touches the optimizer's groups
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _warn_epoch():
    # stacklevel 3: the warning names the line that called the scheduler's step(epoch)
    warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=3)


def _copy(value):
    """``value``, or a copy of a Tensor lr: the lists a scheduler keeps (``base_lrs``,
    ``get_last_lr()``) never alias a group's Tensor lr, which it updates in place."""
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer, key) -> list:
    """Each group's ``key`` (copied where it is a Tensor)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value) -> None:
    """Sets ``group[key]``; a Tensor there (PyTorch's Tensor lr) is filled in place, so the
    optimizer, and any program holding it, keeps the same tensor, as PyTorch's schedulers do."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.squeeze() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _warns_outside_step(get_lr):
    """A built-in scheduler's ``get_lr``, which warns when called other than by ``step()`` (it
    computes the next lrs, which a program wanting the current ones reads from
    ``get_last_lr()``), as PyTorch's."""

    @functools.wraps(get_lr)
    def checked(self):
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        return get_lr(self)

    return checked


def _track_optimizer_steps(optimizer) -> None:
    """Wraps ``optimizer.step`` (once) to record that it ran, so a scheduler's first
    ``step()`` can warn when it comes before the optimizer's, as PyTorch's does (the
    optimizer's ``_opt_called``; the wrapper is marked ``_wrapped_by_lr_sched``)."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    owner = weakref.ref(optimizer)  # (the optimizer holds the wrapper: no cycle)
    step = optimizer.step.__func__

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return step.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


def _format_param(name, optimizer, value) -> list:
    """``value`` for each of the optimizer's groups: one value for all, or a list of one each
    (Tensors copied), with PyTorch's ValueError for a list of another length."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(value)} values, param_groups has {n}."
            )
    else:
        value = [value] * n
    return [_copy(v) for v in value]


class LRScheduler:
    """Base class of the learning-rate schedules, as ``torch.optim.lr_scheduler.LRScheduler``:
    it records each group's ``initial_lr`` (``base_lrs``) and sets the groups' "lr" at
    construction (epoch 0) and at every ``step()``, which is called once per epoch after
    ``optimizer.step()``. Subclasses implement ``get_lr``, PyTorch's recursive formulas from
    the current lrs (so schedules compose), and a closed form for ``step(epoch)``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step()
    >>> sched.step()
    >>> sched.last_epoch, sched.get_last_lr(), opt.param_groups[0]["lr"]
    (1, [0.5], 0.5)
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)"
                    )
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_steps(optimizer)
        self._step_count = 0
        self._initial_step()

    _is_initial = False
    # True while step() computes the lrs (PyTorch sets it on the instance, so its state dicts
    # hold it: ours do too)
    _get_lr_called_within_step = False

    def _initial_step(self):
        self._step_count = 0
        # the schedules that resume (last_epoch given) keep the lrs they find at this step
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rate of each parameter group at the current ``last_epoch``, computed
        from the current ones (the subclass's rule); ``step()`` applies it. The base raises
        NotImplementedError.
        """
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rate of each parameter group as of the last ``step()`` (or construction), as
        ``get_last_lr`` of PyTorch's schedulers.

        >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=0.1)
        >>> clgrad.optim.lr_scheduler.StepLR(opt, step_size=1).get_last_lr()
        [0.1]
        """
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advances the schedule by one epoch and writes the new learning rates into the optimizer's
        groups; with ``epoch`` (deprecated, as in PyTorch, with a warning) it jumps to that epoch
        using the closed form.

        >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
        >>> sched = clgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
        >>> opt.step()
        >>> sched.step()
        >>> opt.param_groups[0]["lr"]
        0.1
        """
        if self._step_count == 1:  # the first step() after the constructor's
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            _warn_epoch()
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _group_lrs(self):
        """Each group's current lr (the recursive formulas start from these; a Tensor lr
        copied)."""
        return _group_values(self.optimizer, "lr")

    def _set_lrs(self, values):
        """Writes ``values`` into the groups' "lr" (a Tensor lr in place) and records them for
        ``get_last_lr``."""
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = self._group_lrs()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state (every attribute but the optimizer), for ``load_state_dict``.

        >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
        >>> state = clgrad.optim.lr_scheduler.StepLR(opt, step_size=3).state_dict()
        >>> state["last_epoch"], state["step_size"], state["base_lrs"]
        (0, 3, [1.0])
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the scheduler's state from a ``state_dict()``.

        >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
        >>> sched = clgrad.optim.lr_scheduler.StepLR(opt, step_size=3)
        >>> sched.load_state_dict({"last_epoch": 7})
        >>> sched.last_epoch
        7
        """
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """``LRScheduler``'s name before PyTorch 2.0, which custom schedulers written for older
    releases still subclass (``class Warmup(_LRScheduler): def get_lr(self): ...``)."""


class _LambdaSchedule(LRScheduler):
    """What LambdaLR and MultiplicativeLR share: an ``lr_lambda`` per group (one for all, or a
    list of one each); the state dict holds None for a function and a copy of the ``__dict__``
    of a callable object, as PyTorch's."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; in ``lr_lambdas``, None for each function (functions are not
        saved) and the attributes of each callable object.

        >>> class Decay:
        ...     def __init__(self, rate):
        ...         self.rate = rate
        ...
        ...     def __call__(self, epoch):
        ...         return self.rate**epoch
        >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
        >>> LambdaLR = clgrad.optim.lr_scheduler.LambdaLR
        >>> LambdaLR(opt, [Decay(0.5)]).state_dict()["lr_lambdas"]
        [{'rate': 0.5}]
        """
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(f, types.FunctionType) else f.__dict__.copy()
            for f in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the scheduler's state, keeping its own ``lr_lambda`` functions (a callable
        object gets its saved attributes back)."""
        saved = state_dict.get("lr_lambdas", [])
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "lr_lambdas"})
        for f, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                f.__dict__.update(attrs)


class LambdaLR(_LambdaSchedule):
    """Sets each group's lr to ``base_lr * lr_lambda(epoch)`` (one function, or a list with one
    per group), as ``torch.optim.lr_scheduler.LambdaLR``; its state dict leaves the functions
    out.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> lrs = []
    >>> for _ in range(3):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5, 0.3333333333333333]
    """

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """``base_lr * lr_lambda(last_epoch)`` for each group."""
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiplies each group's lr by ``gamma`` every ``step_size`` epochs, as
    ``torch.optim.lr_scheduler.StepLR``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The current lrs, times ``gamma`` when ``last_epoch`` is a positive multiple of
        ``step_size``.
        """
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies each group's lr by ``gamma`` at each epoch listed in ``milestones`` (a milestone
    listed twice applies twice), as ``torch.optim.lr_scheduler.MultiStepLR``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        # {epoch: times listed}: PyTorch's Counter, so state dicts carry the same object
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The current lrs, times ``gamma`` for each time ``last_epoch`` is in ``milestones``."""
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        times = self.milestones[self.last_epoch]
        return [group["lr"] * self.gamma**times for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies each group's lr by ``gamma`` every epoch, as
    ``torch.optim.lr_scheduler.ExponentialLR``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The current lrs times ``gamma`` (unchanged by the constructor's step, which a
        scheduler resumed at ``last_epoch`` must not take again)."""
        if self._is_initial:
            return self._group_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneals each group's lr along a cosine from its base lr down to ``eta_min`` over
    ``T_max`` epochs (and back up over the next ``T_max``),
    ``eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``, computed recursively
    as PyTorch's ``torch.optim.lr_scheduler.CosineAnnealingLR`` does (so it composes with other
    changes of the lr).

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The next lrs on the cosine, by PyTorch's recursive formula from the current ones."""
        groups = self.optimizer.param_groups
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:  # (a resumed scheduler keeps the lrs it finds)
            return self._group_lrs()
        if self._step_count == 1 and e > 0:
            return [
                lo + (base - lo) * (1 + math.cos(e * math.pi / t)) / 2 for base in self.base_lrs
            ]
        if (e - 1 - t) % (2 * t) == 0:
            return [
                g["lr"] + (base - lo) * (1 - math.cos(math.pi / t)) / 2
                for base, g in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t)) * (g["lr"] - lo)
            + lo
            for g in groups
        ]

    def _get_closed_form_lr(self):
        return [
            self.eta_min
            + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """Multiplies each group's lr by ``factor`` for the first ``total_iters`` epochs, then
    restores it, as ``torch.optim.lr_scheduler.ConstantLR`` (a warm-up).

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The lrs times ``factor`` at epoch 0, divided back at ``total_iters``, else as they
        are."""
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales each group's lr linearly from ``start_factor`` to ``end_factor`` times its base lr
    over ``total_iters`` epochs, as ``torch.optim.lr_scheduler.LinearLR`` (a warm-up), by
    PyTorch's recursive formula.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal "
                "to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The next lrs on the line, from the current ones."""
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [g["lr"] * ratio for g in groups]

    def _get_closed_form_lr(self):
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [
            base * (self.start_factor + (self.end_factor - self.start_factor) * done)
            for base in self.base_lrs
        ]


def _check_schedulers(owner, schedulers, optimizer) -> None:
    """PyTorch's checks of the schedulers a SequentialLR or ChainedScheduler (``owner``) runs:
    each is a scheduler (TypeError), not ReduceLROnPlateau (whose step takes a metric), and
    drives ``optimizer`` (ValueError)."""
    kind = type(owner).__name__
    for i, sched in enumerate(schedulers):
        if not hasattr(sched, "optimizer"):
            raise TypeError(f"{kind} at index {i} should have `optimizer` as its attribute.")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(
                f"{kind} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence."
            )
        if sched.optimizer is not optimizer:
            raise ValueError(
                f"{kind} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(sched).__name__} at index {i} has {sched.optimizer}, which is "
                f"different from {type(optimizer).__name__}."
            )


def _undo_initial_step(sched) -> None:
    """Takes back the step ``sched`` took at its construction (each scheduler inside a nested
    SequentialLR or ChainedScheduler), as PyTorch's SequentialLR does."""
    inner = getattr(sched, "_schedulers", None)
    if inner is not None:
        for s in inner:
            _undo_initial_step(s)
    elif hasattr(sched, "last_epoch"):
        sched.last_epoch -= 1


class SequentialLR(LRScheduler):
    """Runs ``schedulers`` one after the other, switching at each epoch of ``milestones``, as
    ``torch.optim.lr_scheduler.SequentialLR`` (a warm-up then a decay, say); each scheduler
    restarts from epoch 0 at its milestone.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> warm = clgrad.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = clgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = clgrad.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler, but got no scheduler."
            )
        _check_schedulers(self, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than "
                f"the number of milestone points, but got number of schedulers {len(schedulers)} "
                f"and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # each scheduler stepped once at construction: undo that, start the first one afresh
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        for sched in self._schedulers:
            _undo_initial_step(sched)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        """Advances the running scheduler, or starts the next one at its milestone."""
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with each inner scheduler's state dict in ``_schedulers``."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the state, and each inner scheduler's from ``_schedulers``."""
        inner = state_dict["_schedulers"]
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for sched, s in zip(self._schedulers, inner):
            sched.load_state_dict(s)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from each group's base lr to ``eta_min`` over ``T_0`` epochs, restarting
    each time (every period ``T_mult`` times longer than the last), as
    ``torch.optim.lr_scheduler.CosineAnnealingWarmRestarts`` (SGDR). ``step(epoch)`` takes a
    fractional epoch, for steps within an epoch.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.5, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The lrs at ``T_cur`` epochs into the current period of ``T_i``."""
        cos = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advances one epoch, or jumps to ``epoch`` (which may be fractional). As PyTorch's,
        it leaves ``_step_count`` as the constructor set it (0)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)


_PHASE_KEYS = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")


class OneCycleLR(LRScheduler):
    """The 1cycle policy, as ``torch.optim.lr_scheduler.OneCycleLR``: the lr rises from
    ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of ``total_steps`` (or
    ``epochs * steps_per_epoch``) and anneals (``"cos"`` or ``"linear"``) to
    ``initial_lr / final_div_factor``, while the momentum (or Adam's beta1) cycles the other
    way between ``max_momentum`` and ``base_momentum``. It is stepped after every batch.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=0.1, momentum=0.9)
    >>> sched = clgrad.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.04, 0.8117, 0.2831, 0.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        up = float(pct_start * self.total_steps) - 1
        if three_phase:
            phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                 "base_momentum", "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]  # fmt: skip
        else:
            phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        # dicts with PyTorch's keys, as its state dicts hold them
        self._schedule_phases = [dict(zip(_PHASE_KEYS, phase)) for phase in phases]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        if last_epoch == -1:
            for m, group in zip(_format_param("max_lr", optimizer, max_lr), optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for hi, lo, group in zip(
                    _format_param("max_momentum", optimizer, max_momentum),
                    _format_param("base_momentum", optimizer, base_momentum),
                    optimizer.param_groups,
                ):
                    if self.use_beta1:
                        group["betas"] = (hi, *group["betas"][1:])
                    else:
                        group["momentum"] = hi
                    group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The lrs at step ``last_epoch`` of the cycle (and, with ``cycle_momentum``, sets each
        group's momentum or beta1 to match)."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end, lr0, lr1, m0, m1 = (phase[k] for k in _PHASE_KEYS)
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[lr0], group[lr1], pct)
                    if self.cycle_momentum:  # (the momentum keys exist only then)
                        momentum = self._anneal(group[m0], group[m1], pct)
                    break
                start = end
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiplies each group's lr by ``factor`` (not below ``min_lr``) once the metric passed to
    ``step(metric)`` has not improved (by ``threshold``, relative or absolute) for more than
    ``patience`` epochs, then waits ``cooldown`` epochs, as
    ``torch.optim.lr_scheduler.ReduceLROnPlateau``; ``mode="max"`` for a metric to raise.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> lrs = []
    >>> for val_loss in [1.0, 0.9, 0.9, 0.9, 0.9]:
    ...     opt.step()
    ...     sched.step(val_loss)
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 1.0, 1.0, 0.5, 0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        _check_optimizer(optimizer)
        self.factor, self.optimizer = factor, optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = self._group_lrs()
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: float, epoch: int | None = None) -> None:  # type: ignore[override]
        """Records the epoch's ``metrics`` (a number or a one-element tensor) and reduces the
        lrs when it has stopped improving."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            _warn_epoch()
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown don't count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to "
                    "a new param group being added to the optimizer. Please modify the `min_lrs` "
                    "field to match the length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out its cooldown after a reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the scheduler's state."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class MultiplicativeLR(_LambdaSchedule):
    """Multiplies each group's lr by ``lr_lambda(epoch)`` every epoch (one function, or one
    per group), as ``torch.optim.lr_scheduler.MultiplicativeLR``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> for _ in range(2):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The current lrs times ``lr_lambda(last_epoch)`` (unchanged at the constructor's step;
        a SequentialLR's restart at epoch 0 applies the factor, as torch's)."""
        if not self._is_initial:
            return [lr * f(self.last_epoch) for f, lr in zip(self.lr_lambdas, self._group_lrs())]
        return self._group_lrs()


class PolynomialLR(LRScheduler):
    """Decays each group's lr to 0 over ``total_iters`` epochs as ``(1 - epoch /
    total_iters) ** power`` times its initial lr, as ``torch.optim.lr_scheduler.PolynomialLR``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> sched = clgrad.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0]
    """

    def __init__(
        self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1
    ) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """The current lrs times this epoch's decay over the last one's."""
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        factor = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [lr * factor for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - done) ** self.power for base in self.base_lrs]


class ChainedScheduler(LRScheduler):
    """Steps every scheduler of ``schedulers`` at each ``step()``, their factors multiplied,
    as ``torch.optim.lr_scheduler.ChainedScheduler``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> warm = clgrad.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = clgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = clgrad.optim.lr_scheduler.ChainedScheduler([warm, decay])
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                "ChainedScheduler expects at least one scheduler to be chained, but got no "
                "scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._group_lrs()

    def step(self) -> None:  # type: ignore[override]
        """Steps each scheduler in turn."""
        for sched in self._schedulers:
            sched.step()
        self._last_lr = self._group_lrs()

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class CyclicLR(LRScheduler):
    """Cycles each group's lr between ``base_lr`` and ``max_lr`` (and the momentum the other
    way, with ``cycle_momentum``), a step per batch, as ``torch.optim.lr_scheduler.CyclicLR``:
    ``mode`` "triangular" (a constant amplitude), "triangular2" (halved every cycle),
    "exp_range" (times ``gamma`` every iteration), or your ``scale_fn``.

    >>> p = clgrad.nn.Parameter(clgrad.zeros(1))
    >>> opt = clgrad.optim.SGD([p], lr=0.1, momentum=0.9)
    >>> sched = clgrad.optim.lr_scheduler.CyclicLR(opt, 0.1, 0.5, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        if scale_fn is None:  # the mode's own rule, and what it counts
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    self._set_momentum(group, top)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """Each group's lr at this point of its cycle (and its momentum set, the other way)."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            factor = x / self.step_ratio
        else:
            factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base + (top - base) * factor * scale for base, top in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, bottom, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                self._set_momentum(group, top - (top - bottom) * factor * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; ``_scale_fn_custom`` is None for no ``scale_fn`` or a function
        (functions are not saved), the attributes of a callable object, as PyTorch's.

        >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=0.1, momentum=0.9)
        >>> sched = clgrad.optim.lr_scheduler.CyclicLR(opt, 0.1, 0.5, scale_fn=lambda x: 1.0)
        >>> sched.state_dict()["_scale_fn_custom"] is None
        True
        """
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom", None)
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the scheduler's state, keeping its own ``scale_fn`` (a callable object gets
        its saved attributes back)."""
        saved = state_dict.get("_scale_fn_custom")
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "_scale_fn_custom"})
        if saved is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(saved)
