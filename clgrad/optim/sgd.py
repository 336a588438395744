"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (PyTorch's
formulation)."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, required


class SGD(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
    ):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
            ),
        )

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
                for p in self._params_with_grad(group):
                    g = p._grad
                    if maximize:
                        g = -g
                    if wd != 0:
                        g = g + p * wd
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = g.clone().detach()
                            state["momentum_buffer"] = buf
                        else:
                            buf.mul_(momentum).add_(g, alpha=1 - dampening)
                        g = g + buf * momentum if nesterov else buf
                    p.add_(g, alpha=-lr)
        return loss
