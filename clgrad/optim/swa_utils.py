"""Weight averaging, as ``torch.optim.swa_utils``: ``AveragedModel`` keeps a running average
(SWA, or an exponential moving average) of a model's parameters, ``SWALR`` anneals the
learning rate to a constant for SWA, ``update_bn`` recomputes batch-norm statistics for the
averaged weights."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param, _warns_outside_step
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "SWALR",
    "update_bn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
]


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """The in-place exponential moving average of lists of tensors: ``ema += (1 - decay) *
    (current - ema)`` (``AveragedModel``'s ``multi_avg_fn``)."""

    @no_grad()
    def ema_update(ema_params: list[Tensor], current_params: list[Tensor], num_averaged):
        for ema, current in zip(ema_params, current_params):
            ema.lerp_(current, 1 - decay)

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The in-place running mean of lists of tensors: ``avg += (current - avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_params: list[Tensor], current_params: list[Tensor], num_averaged):
        # (a count given as a tensor stays on its device: no host read per update)
        for averaged, current in zip(averaged_params, current_params):
            averaged.add_((current - averaged) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The exponential moving average of one tensor, returned: ``decay * ema + (1 - decay) *
    current`` (``AveragedModel``'s ``avg_fn``).

    >>> clgrad.optim.swa_utils.get_ema_avg_fn(0.5)(clgrad.tensor(0.0), clgrad.tensor(2.0), 1)
    tensor(1.)
    """

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running mean of one tensor, returned: ``avg + (current - avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are a running
    average of the model's, updated by ``update_parameters(model)``, as
    ``torch.optim.swa_utils.AveragedModel``: the mean of every update (SWA) by default, or
    ``avg_fn(averaged, current, n)`` / ``multi_avg_fn(averaged list, current list, n)``
    (``get_ema_multi_avg_fn(decay)`` for an EMA). Calling it runs the averaged copy.

    >>> model = clgrad.nn.Linear(1, 1)
    >>> swa = clgrad.optim.swa_utils.AveragedModel(model)
    >>> for w in (1.0, 3.0):
    ...     _ = model.weight.data.fill_(w)
    ...     swa.update_parameters(model)
    >>> swa.module.weight.item(), swa.n_averaged.item()
    (2.0, 2)
    """

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable | None = None,
        multi_avg_fn: Callable | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers
        self._updates = 0  # n_averaged on the host: a training step reads nothing back

    def _load_from_state_dict(self, state_dict, prefix, *rest):
        super()._load_from_state_dict(state_dict, prefix, *rest)
        self._updates = int(self.n_averaged.item())  # (one read, when a checkpoint loads)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Folds ``model``'s current parameters into the average (the first update copies
        them); without ``use_buffers`` the buffers are copied as they are."""
        if self.use_buffers:
            averaged = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            current = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            averaged, current = list(self.parameters()), list(model.parameters())
        averaged = [p.detach() for p in averaged]
        current = [p.detach().to(a.device) for p, a in zip(current, averaged)]
        with no_grad():
            if self._updates == 0:
                for a, c in zip(averaged, current):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(averaged, current):
                    a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            else:
                floating = [(a, c) for a, c in zip(averaged, current) if a.is_floating_point()]
                pairs = ([a for a, _ in floating], [c for _, c in floating])
                if self.multi_avg_fn is not None:  # a function of yours gets the count tensor
                    self.multi_avg_fn(*pairs, self.n_averaged)
                else:
                    get_swa_multi_avg_fn()(*pairs, self._updates)
                for a, c in zip(averaged, current):  # integer buffers (counts) are copied
                    if not a.is_floating_point():
                        a.copy_(c)
            if not self.use_buffers:  # the buffers follow the model's as they are
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1
            self._updates += 1


@no_grad()
def update_bn(loader: Iterable, model: Module, device: Any = None) -> None:
    """Recomputes every batch norm's running statistics of ``model`` as the mean over one pass
    of ``loader`` (batches, or tuples/lists whose first item is the input), as
    ``torch.optim.swa_utils.update_bn``; the model's mode and momenta are restored."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # a cumulative average over the pass
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value to ``swa_lr`` over ``anneal_epochs`` epochs
    (``anneal_strategy`` "cos" or "linear"), then keeps it there, as
    ``torch.optim.swa_utils.SWALR``.

    >>> opt = clgrad.optim.SGD([clgrad.nn.Parameter(clgrad.zeros(1))], lr=1.0)
    >>> SWALR = clgrad.optim.swa_utils.SWALR
    >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.55, 0.1, 0.1, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        # under PyTorch's name, which its state dicts hold
        self._anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        """The share of the way to ``swa_lr`` at fraction ``t`` of the annealing."""
        return t if self._anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @_warns_outside_step
    def get_lr(self) -> list[float]:
        """Each group's lr at this step of the annealing (from the lr it started from)."""
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        lrs = []
        for group in self.optimizer.param_groups:
            lr, swa_lr = group["lr"], group["swa_lr"]
            start = swa_lr if prev_alpha == 1 else (lr - prev_alpha * swa_lr) / (1 - prev_alpha)
            lrs.append(swa_lr * alpha + start * (1 - alpha))
        return lrs
