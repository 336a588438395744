"""SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``'s), PyTorch's lazy
formulation: the moments and the parameter change only at the rows a step's gradient holds."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, scalar_value

if TYPE_CHECKING:
    from .optimizer import ParamsT


class SparseAdam(Optimizer):
    """Adam over sparse gradients, as ``torch.optim.SparseAdam``: each step coalesces the
    gradient and updates ``exp_avg`` and ``exp_avg_sq`` (dense, of the parameter's shape) and
    the parameter only at the rows it holds (``m += (1 - beta1) * (g - m)``,
    ``v += (1 - beta2) * (g**2 - v)``, ``p -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m /
    (sqrt(v) + eps)``). A dense gradient raises torch's RuntimeError.

    >>> emb = clgrad.nn.Embedding(4, 2, sparse=True)
    >>> before = emb.weight.detach().clone()
    >>> opt = clgrad.optim.SparseAdam(emb.parameters(), lr=0.1)
    >>> emb(clgrad.tensor([1, 1, 3])).sum().backward()
    >>> opt.step()
    >>> (emb.weight != before).any(1).tolist()
    [False, True, False, True]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        params = _refuse_sparse_params(params)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one update of every parameter that has a (sparse) gradient; returns the
        loss of the optional ``closure`` (called first, with grad enabled), else None."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = self._params_with_grad(group)
                # every gradient of the group checked before any update, as torch's
                for p in params:
                    if isinstance(p._grad, Tensor):
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam "
                            "instead"
                        )
                for p in params:
                    state = self.state[p]
                    if not state:
                        state["step"] = 0  # a Python int, as torch's SparseAdam keeps it
                        state["exp_avg"] = zeros_like(p).detach()
                        state["exp_avg_sq"] = zeros_like(p).detach()
                    state["step"] += 1
                    _update(p, state, group)
        return loss


def _update(p, state, group):
    beta1, beta2 = group["betas"]
    grad = -p._grad if group.get("maximize", False) else p._grad
    grad = grad.coalesce()  # the update is not linear in the gradient: one entry per row
    values = grad._values()
    if values.numel() == 0:
        return
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    # old <- b * old + (1 - b) * new, as old += (1 - b) * (new - old) at the rows held
    old_avg = grad._gather(exp_avg)
    avg_update = (values - old_avg) * (1 - beta1)
    grad._with_values(avg_update)._add_into(exp_avg)
    old_sq = grad._gather(exp_avg_sq)
    sq_update = (values * values - old_sq) * (1 - beta2)
    grad._with_values(sq_update)._add_into(exp_avg_sq)
    numer = avg_update + old_avg
    denom = (sq_update + old_sq).sqrt() + group["eps"]
    step = state["step"]
    step_size = scalar_value(group["lr"]) * math.sqrt(1 - beta2**step) / (1 - beta1**step)
    grad._with_values(numer / denom * -step_size)._add_into(p)


def _refuse_sparse_params(params):
    """``params`` as a list, after torch's ValueError for sparse tensors among them (SparseAdam
    keeps dense moments of each parameter's shape)."""
    if isinstance(params, Tensor):
        return params  # the base class's TypeError says why
    params = list(params)
    groups = params if params and isinstance(params[0], dict) else [{"params": params}]
    found = []
    for i, group in enumerate(groups):
        members = group.get("params", [])
        if isinstance(members, Tensor) or getattr(members, "is_sparse", False):
            members = [members]
        else:  # read once: it may be an iterator (the base class keeps this list)
            members = group["params"] = list(members)
        for j, p in enumerate(members):
            if getattr(p, "is_sparse", False):
                found.append([i, j])
    if found:
        raise ValueError(
            f"Sparse params at indices {found}: SparseAdam requires dense parameter tensors"
        )
    return params
