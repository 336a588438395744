"""Adadelta, Adagrad, Adamax, NAdam, RAdam and ASGD, in PyTorch's (single-tensor) formulation.

Each keeps torch's argument names, defaults, per-parameter state names and parameter-group keys
(``foreach`` / ``fused`` / ``capturable`` accepted and recorded), so state dicts line up with
PyTorch's. Updates are in-place Tensor ops on the parameter's own device under no_grad; step
counts and scalar factors (bias corrections, NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``)
are Python numbers, so ``step()`` never reads a value back from the device.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..ops.creation import full_like
from ..ops.elementwise import maximum
from .optimizer import (
    Optimizer,
    check_hyperparameters,
    decayed_grad,
    implementation_options,
    init_state,
)

if TYPE_CHECKING:
    from .optimizer import ParamsT


class _Simple(Optimizer):
    """The loop every optimizer here shares: ``_update(p, g, state, group)`` per parameter with
    a gradient, ``g`` already negated under ``maximize``."""

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one update of every parameter that has a gradient; returns the loss of the
        optional ``closure`` (called first, with grad enabled), else None.
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                for p in self._params_with_grad(group):
                    g = -p._grad if group["maximize"] else p._grad
                    self._update(p, g, self.state[p], group)
        return loss

    def _update(self, p, g, state, group):
        raise NotImplementedError


class Adadelta(_Simple):
    """The Adadelta optimizer, as ``torch.optim.Adadelta``: running averages (decay ``rho``) of
    the squared gradient and of the squared update scale the step,
    ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``, ``p -= lr * delta``.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.Adadelta([w])
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9968, 1.9968], requires_grad=True)
    >>> sorted(opt.state[w])
    ['acc_delta', 'square_avg', 'step']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        opts = implementation_options(
            foreach, None, capturable, differentiable, keys=("capturable", "foreach")
        )
        super().__init__(
            params,
            dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
            | opts
            | {"differentiable": differentiable},
        )

    def _update(self, p, g, state, group):
        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        init_state(state, p, ["square_avg", "acc_delta"])
        state["step"] += 1
        g = decayed_grad(p, g, wd)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).add_(g * g * (1 - rho))
        delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
        acc_delta.mul_(rho).add_(delta * delta * (1 - rho))
        p.add_(delta, alpha=-lr)


class Adagrad(_Simple):
    """The Adagrad optimizer, as ``torch.optim.Adagrad``: the running sum of squared gradients
    (starting at ``initial_accumulator_value``) scales each step,
    ``p -= clr * g / (sqrt(sum) + eps)`` with ``clr = lr / (1 + (step - 1) * lr_decay)``. Its
    state exists from construction, as PyTorch's does.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, weight_decay=weight_decay)
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                foreach=foreach,
                maximize=maximize,
            )
            | implementation_options(
                foreach, fused, False, differentiable, keys=("differentiable", "fused")
            ),
        )
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = 0
                self.state[p]["sum"] = full_like(
                    p, group["initial_accumulator_value"], requires_grad=False
                ).detach()

    def _update(self, p, g, state, group):
        state["step"] += 1
        g = decayed_grad(p, g, group["weight_decay"])
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"].add_(g * g)
        p.sub_(g / (state["sum"].sqrt() + group["eps"]) * clr)


class Adamax(_Simple):
    """The Adamax optimizer (Adam with the infinity norm), as ``torch.optim.Adamax``:
    ``exp_inf = max(beta2 * exp_inf, |g| + eps)``, ``p -= lr / (1 - beta1**step) * exp_avg /
    exp_inf``.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        super().__init__(
            params,
            dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach)
            | {"maximize": maximize}
            | implementation_options(
                foreach, None, capturable, differentiable, keys=("differentiable", "capturable")
            ),
        )

    def _update(self, p, g, state, group):
        (beta1, beta2), eps = group["betas"], group["eps"]
        init_state(state, p, ["exp_avg", "exp_inf"])
        state["step"] += 1
        g = decayed_grad(p, g, group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_inf.copy_(maximum(exp_inf * beta2, g.abs() + eps))
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p.sub_(exp_avg / exp_inf * clr)


class NAdam(_Simple):
    """The NAdam optimizer (Adam with Nesterov momentum), as ``torch.optim.NAdam``: the momentum
    coefficient ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))`` and its running
    product ``mu_product`` weight the gradient and the running average;
    ``decoupled_weight_decay`` shrinks the parameter as AdamW does.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8944, 1.8944], requires_grad=True)
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                momentum_decay=momentum_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
            )
            | implementation_options(foreach, None, capturable, differentiable, keys=_NO_FUSED),
        )

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps, wd = (
            group["lr"],
            group["betas"],
            group["eps"],
            group["weight_decay"],
        )
        init_state(state, p, ["exp_avg", "exp_avg_sq"], mu_product=1.0)
        state["step"] += 1
        step = state["step"]
        bias_correction2 = 1 - beta2**step
        g = decayed_grad(p, g, wd, lr, group["decoupled_weight_decay"])
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        state["mu_product"] = mu_product = float(state["mu_product"]) * mu
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_(g * g * (1 - beta2))
        denom = (exp_avg_sq / bias_correction2).sqrt() + eps
        p.add_(g / denom * (-lr * (1.0 - mu) / (1.0 - mu_product)))
        p.add_(exp_avg / denom * (-lr * mu_next / (1.0 - mu_product * mu_next)))


_NO_FUSED = ("foreach", "capturable", "differentiable")


class RAdam(_Simple):
    """The RAdam optimizer (rectified Adam), as ``torch.optim.RAdam``: while the variance of the
    adaptive rate is intractable (``rho_t <= 5``, the first steps) it takes bias-corrected
    momentum steps, then Adam steps scaled by the rectification term;
    ``decoupled_weight_decay`` shrinks the parameter as AdamW does.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        super().__init__(
            params,
            dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize)
            | implementation_options(
                foreach, None, capturable, differentiable, keys=("foreach", "capturable")
            )
            | {"decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable},
        )

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps, wd = (
            group["lr"],
            group["betas"],
            group["eps"],
            group["weight_decay"],
        )
        init_state(state, p, ["exp_avg", "exp_avg_sq"])
        state["step"] += 1
        step = state["step"]
        g = decayed_grad(p, g, wd, lr, group["decoupled_weight_decay"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_(g * g * (1 - beta2))
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
            adaptive = math.sqrt(bias_correction2) / (exp_avg_sq.sqrt() + eps)
            p.sub_(exp_avg * adaptive * (lr * rect / bias_correction1))
        else:
            p.sub_(exp_avg * (lr / bias_correction1))


class ASGD(_Simple):
    """Averaged stochastic gradient descent, as ``torch.optim.ASGD``: an SGD step with the
    decaying rate ``eta = lr / (1 + lambd * lr * step) ** alpha`` (and a decay term ``lambd``),
    plus a running average ``ax`` of the parameter from step ``t0`` on. ``eta`` and ``mu`` are
    Python floats here (0-d tensors in PyTorch).

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8000, 1.6000], requires_grad=True)
    >>> sorted(opt.state[w])
    ['ax', 'eta', 'mu', 'step']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr, weight_decay=weight_decay)
        super().__init__(
            params,
            dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay)
            | {"foreach": foreach, "maximize": maximize}
            | implementation_options(
                foreach, None, capturable, differentiable, keys=("differentiable", "capturable")
            ),
        )

    def _update(self, p, g, state, group):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        init_state(state, p, ["ax"], eta=float(lr), mu=1.0)
        state["step"] += 1
        step = state["step"]
        g = decayed_grad(p, g, group["weight_decay"])
        eta = float(state["eta"])
        p.mul_(1 - lambd * eta)
        p.add_(g, alpha=-eta)
        if float(state["mu"]) != 1:
            state["ax"].add_((p - state["ax"]) * float(state["mu"]))
        else:
            state["ax"].copy_(p)
        state["eta"] = lr / ((1 + lambd * lr * step) ** alpha)
        state["mu"] = 1 / max(1, step - t0)
