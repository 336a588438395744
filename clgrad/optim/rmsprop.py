"""RMSprop (PyTorch's formulation: alpha, eps, weight_decay, momentum, centered, maximize)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from .. import capture
from ..autograd.grad_mode import no_grad
from .optimizer import (
    FusedUpdates,
    Optimizer,
    check_hyperparameters,
    count_step,
    decayed_grad,
    fusable,
    fused_enabled,
    fused_flags,
    implementation_options,
    init_state,
    real_view,
    recount_step,
    refuse_sparse,
    scalar_value,
)

if TYPE_CHECKING:
    from .optimizer import ParamsT


def _count_step(state, scalars) -> tuple:
    recount_step(state)
    return scalars


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

    _scalar_keys: tuple[str, ...] = ("step",)

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
        check_hyperparameters(
            lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha
        )
        super().__init__(
            params,
            # in PyTorch's key order (its state_dict()["param_groups"] lists them so)
            dict(
                lr=lr,
                momentum=momentum,
                alpha=alpha,
                eps=eps,
                centered=centered,
                weight_decay=weight_decay,
                capturable=capturable,
                foreach=foreach,
                maximize=maximize,
                **implementation_options(
                    foreach, None, capturable, differentiable, keys=("differentiable",)
                ),
            ),
        )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one RMSprop update of every parameter that has a gradient; returns the loss of
        the optional ``closure`` (called first, with grad enabled), else None.
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, alpha, eps = scalar_value(group["lr"]), group["alpha"], group["eps"]
                wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
                fused = fused_enabled(group)
                flags = fused_flags(
                    momentum=momentum > 0,
                    centered=centered,
                    weight_decay=wd != 0,
                    maximize=group["maximize"],
                )
                updates = FusedUpdates("rmsprop", flags)
                for p in self._params_with_grad(group):
                    refuse_sparse(p, "RMSprop does not support sparse gradients")
                    # the kernel takes the state tensors in this order, the ones in use only
                    names = ["square_avg"]
                    if momentum > 0:
                        names.append("momentum_buffer")
                    if centered:
                        names.append("grad_avg")
                    state = self.state[p]
                    init_state(state, p, names)
                    # a complex parameter and its state as their real views, as PyTorch's
                    param, grad = real_view(p), real_view(p._grad)
                    named = {name: real_view(state[name]) for name in names}
                    states = list(named.values())
                    kernel = fused and fusable(param, grad, states, group.get("fused"))
                    # (the kernel's replay counts the step: see the scalar source below)
                    count_step(state, replayed=kernel)
                    if kernel:
                        scalars = (-lr, alpha, 1 - alpha, eps, wd, momentum)
                        if capture.active is not None:
                            # a replay of a captured step counts the step (the kernel's scalars
                            # are the hyperparameters, its guards)
                            capture.scalar_source(
                                partial(_count_step, state, scalars), [(state, "step")]
                            )
                        updates.add(param, grad, states, scalars)
                        continue
                    # one op per term: foreach=False, or what the kernel can't take (a strided
                    # parameter or state, mixed devices or dtypes)
                    g = decayed_grad(param, -grad if group["maximize"] else grad, wd)
                    square_avg = named["square_avg"]
                    square_avg.mul_(alpha).add_(g * g * (1 - alpha))
                    if centered:
                        grad_avg = named["grad_avg"]
                        grad_avg.mul_(alpha).add_(g * (1 - alpha))
                        avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
                    else:
                        avg = square_avg.sqrt() + eps
                    if momentum > 0:
                        buf = named["momentum_buffer"]
                        buf.mul_(momentum).add_(g / avg)
                        param.add_(buf, alpha=-lr)
                    else:
                        param.add_(g / avg, alpha=-lr)
                updates.launch()
        return loss
