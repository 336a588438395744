"""Adam and AdamW (PyTorch's formulation; amsgrad, weight_decay, maximize).

The bias corrections are Python floats from the step count, kept as a Python int.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..ops.elementwise import maximum
from .optimizer import Optimizer, fusable, fused_enabled, fused_update, implementation_options

if TYPE_CHECKING:
    from .optimizer import ParamsT


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
    """The Adam optimizer, as ``torch.optim.Adam`` and its formulation: running averages of the
    gradient and of its square (``betas``), bias-corrected, give the update
    ``p -= lr * m_hat / (sqrt(v_hat) + eps)``; ``weight_decay`` adds an L2 term to the
    gradient, ``amsgrad`` uses the running maximum of ``v``, ``maximize`` ascends. The step
    count is a Python int.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9000, 1.9000], requires_grad=True)
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'step']
    """

    _decoupled = False

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
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
                **implementation_options(
                    foreach,
                    fused,
                    capturable,
                    differentiable,
                    keys=("foreach", "capturable", "differentiable", "fused"),
                ),
                decoupled_weight_decay=decoupled_weight_decay or self._decoupled,
            ),
        )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one Adam (or AdamW) update of every parameter that has a gradient; returns the
        loss of the optional ``closure`` (called first, with grad enabled), else None.
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
                decoupled = group.get("decoupled_weight_decay", self._decoupled)
                fused = fused_enabled(group)
                flags = frozenset(
                    name
                    for name, on in (
                        ("amsgrad", amsgrad),
                        ("weight_decay", wd != 0),
                        ("decoupled", decoupled),
                        ("maximize", maximize),
                    )
                    if on
                )
                for p in self._params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p).detach()
                        state["exp_avg_sq"] = zeros_like(p).detach()
                        if amsgrad:
                            state["max_exp_avg_sq"] = zeros_like(p).detach()
                    state["step"] += 1
                    step = state["step"]
                    if fused:
                        states = [state["exp_avg"], state["exp_avg_sq"]]
                        if amsgrad:
                            states.append(state["max_exp_avg_sq"])
                        if fusable(p, p._grad, states):
                            scalars = (
                                beta1,
                                1 - beta1,
                                beta2,
                                1 - beta2,
                                eps,
                                wd,
                                1 - lr * wd,
                                lr / (1 - beta1**step),
                                math.sqrt(1 - beta2**step),
                            )
                            fused_update("adam", flags, p, p._grad, states, scalars)
                            continue
                    # one op per term: fused=False/foreach=False, or what the kernel can't take
                    # (a strided parameter or state, mixed devices or dtypes)
                    g = -p._grad if maximize else p._grad
                    if wd != 0:
                        if decoupled:
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
                        m.copy_(maximum(m, exp_avg_sq))
                        denom = m.sqrt() / bias2_sqrt + eps
                    else:
                        denom = exp_avg_sq.sqrt() / bias2_sqrt + eps
                    p.sub_(exp_avg / denom * (lr / bias1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``: each step first shrinks the
    parameter, ``p -= lr * weight_decay * p`` (``weight_decay`` 0.01 by default), then applies
    the Adam update to the unmodified gradient.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.AdamW([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8990, 1.8980], requires_grad=True)
    """

    _decoupled = True

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )
