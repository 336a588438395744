"""Learning-rate schedules (PyTorch's recursive formulas, ``get_last_lr``, state dicts)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"]


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
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "an optimizer"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self.step()

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
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` is deprecated; call step() without it.",
                UserWarning,
                stacklevel=2,
            )
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

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


class LambdaLR(LRScheduler):
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

    def get_lr(self) -> list[float]:
        """``base_lr * lr_lambda(last_epoch)`` for each group."""
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with None in place of each ``lr_lambda`` (functions are not
        saved)."""
        state = super().state_dict()
        state["lr_lambdas"] = [None] * len(self.lr_lambdas)  # functions are not saved
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the scheduler's state, keeping its own ``lr_lambda`` functions."""
        lambdas = self.lr_lambdas
        super().load_state_dict(state_dict)
        self.lr_lambdas = lambdas


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

    def get_lr(self) -> list[float]:
        """The current lrs, times ``gamma`` when ``last_epoch`` is a positive multiple of
        ``step_size``.
        """
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
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
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs, times ``gamma`` for each time ``last_epoch`` is in ``milestones``."""
        times = self.milestones.count(self.last_epoch)
        return [group["lr"] * self.gamma**times for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        passed = sum(1 for m in self.milestones if m <= self.last_epoch)
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

    def get_lr(self) -> list[float]:
        """The current lrs times ``gamma`` (unchanged at epoch 0)."""
        if self.last_epoch == 0:
            return [group["lr"] for group in self.optimizer.param_groups]
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

    def get_lr(self) -> list[float]:
        """The next lrs on the cosine, by PyTorch's recursive formula from the current ones."""
        groups = self.optimizer.param_groups
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return [g["lr"] for g in groups]
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
