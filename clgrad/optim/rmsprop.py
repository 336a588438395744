"""RMSprop (PyTorch's formulation: alpha, eps, weight_decay, momentum, centered, maximize)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from .optimizer import Optimizer, fusable, fused_enabled, fused_update, implementation_options

_KEYS = ("capturable", "foreach", "differentiable")

if TYPE_CHECKING:
    from .optimizer import ParamsT


class RMSprop(Optimizer):
    """The RMSprop optimizer, as ``torch.optim.RMSprop`` and its formulation: a running average
    of the squared gradient (decay ``alpha``) scales the update,
    ``p -= lr * g / (sqrt(avg) + eps)``; ``centered`` subtracts the squared running mean of the
    gradient, ``momentum`` accumulates the scaled updates, ``weight_decay`` adds an L2 term and
    ``maximize`` ascends.

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.RMSprop([w], lr=0.01)
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
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
                **implementation_options(foreach, None, capturable, differentiable, keys=_KEYS),
            ),
        )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one RMSprop update of every parameter that has a gradient; returns the loss of
        the optional ``closure`` (called first, with grad enabled), else None.
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
                fused = fused_enabled(group)
                flags = frozenset(
                    name
                    for name, on in (
                        ("momentum", momentum > 0),
                        ("centered", centered),
                        ("weight_decay", wd != 0),
                        ("maximize", group["maximize"]),
                    )
                    if on
                )
                for p in self._params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["square_avg"] = zeros_like(p).detach()
                        if momentum > 0:
                            state["momentum_buffer"] = zeros_like(p).detach()
                        if centered:
                            state["grad_avg"] = zeros_like(p).detach()
                    state["step"] += 1
                    if fused:
                        states = [state["square_avg"]]
                        if momentum > 0:
                            states.append(state["momentum_buffer"])
                        if centered:
                            states.append(state["grad_avg"])
                        if fusable(p, p._grad, states):
                            scalars = (-lr, alpha, 1 - alpha, eps, wd, momentum)
                            fused_update("rmsprop", flags, p, p._grad, states, scalars)
                            continue
                    # one op per term: foreach=False, or what the kernel can't take (a strided
                    # parameter or state, mixed devices or dtypes)
                    g = -p._grad if group["maximize"] else p._grad
                    if wd != 0:
                        g = g + p * wd
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).add_(g * g * (1 - alpha))
                    if centered:
                        grad_avg = state["grad_avg"]
                        grad_avg.mul_(alpha).add_(g * (1 - alpha))
                        avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
                    else:
                        avg = square_avg.sqrt() + eps
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(g / avg)
                        p.add_(buf, alpha=-lr)
                    else:
                        p.add_(g / avg, alpha=-lr)
        return loss
