"""Adam and AdamW (PyTorch's formulation; amsgrad, weight_decay, maximize).

The bias corrections are Python floats from the step count, kept as a Python int.
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..ops.elementwise import Maximum
from .optimizer import Optimizer


def _check(lr, betas, eps, weight_decay):
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    _decoupled = False

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        maximize=False,
    ):
        _check(lr, betas, eps, weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
            ),
        )

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
                for p in self._params_with_grad(group):
                    g = -p._grad if maximize else p._grad
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p).detach()
                        state["exp_avg_sq"] = zeros_like(p).detach()
                        if amsgrad:
                            state["max_exp_avg_sq"] = zeros_like(p).detach()
                    state["step"] += 1
                    step = state["step"]
                    if wd != 0:
                        if self._decoupled:
                            p.mul_(1 - lr * wd)
                        else:
                            g = g + p * wd
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.mul_(beta1).add_(g * (1 - beta1))
                    exp_avg_sq.mul_(beta2).add_(g * g * (1 - beta2))
                    bias1 = 1 - beta1**step
                    bias2_sqrt = math.sqrt(1 - beta2**step)
                    if amsgrad:
                        m = state["max_exp_avg_sq"]
                        m.copy_(Maximum.apply(m, exp_avg_sq))
                        denom = m.sqrt() / bias2_sqrt + eps
                    else:
                        denom = exp_avg_sq.sqrt() / bias2_sqrt + eps
                    p.sub_(exp_avg / denom * (lr / bias1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: p -= lr * wd * p before the Adam update."""

    _decoupled = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
