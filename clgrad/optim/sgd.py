"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (PyTorch's
formulation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..ops.complex import view_as_complex
from ..ops.creation import empty_like
from ..tensor import Tensor
from .optimizer import (
    FusedUpdates,
    Optimizer,
    check_fused,
    check_hyperparameters,
    decayed_grad,
    fusable,
    fused_enabled,
    fused_flags,
    implementation_options,
    real_view,
    refuse_sparse,
    scalar_value,
)

if TYPE_CHECKING:
    from .optimizer import ParamsT


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum, dampening, Nesterov momentum, weight
    decay (an L2 term ``weight_decay * p`` added to the gradient) and ``maximize``, as
    ``torch.optim.SGD`` and its formulation: ``buf = momentum * buf + (1 - dampening) * g``
    (``buf = g`` on the first step), ``p -= lr * buf`` (or ``lr * (g + momentum * buf)`` with
    ``nesterov``).

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8000, 1.6000], requires_grad=True)

    A sparse gradient (``nn.Embedding(sparse=True)``'s) updates only the rows it holds, as
    torch's (weight decay refused with it).
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_hyperparameters(lr=lr, momentum=momentum, weight_decay=weight_decay)
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
                **implementation_options(
                    foreach,
                    fused,
                    False,
                    differentiable,
                    keys=("foreach", "differentiable", "fused"),
                ),
            ),
        )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one SGD update of every parameter that has a gradient; returns the loss of the
        optional ``closure`` (called first, with grad enabled), else None.
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum = scalar_value(group["lr"]), group["momentum"]
                dampening = group["dampening"]
                wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
                fused = fused_enabled(group)
                flags = fused_flags(
                    momentum=momentum != 0,
                    nesterov=nesterov,
                    weight_decay=wd != 0,
                    maximize=maximize,
                )
                updates = FusedUpdates("sgd", flags)
                for p in self._params_with_grad(group):
                    check_fused(group, p)
                    if not isinstance(p._grad, Tensor):  # a sparse gradient
                        if group.get("fused"):
                            refuse_sparse(p, "`_fused_sgd` does not support sparse gradients")
                        self._sparse_update(p, lr, momentum, dampening, wd, nesterov, maximize)
                        continue
                    if fused and self._fused(updates, p, flags, lr, momentum, dampening, wd, group):
                        continue
                    # one op per term: fused=False/foreach=False, or what the kernel can't take
                    # (a strided parameter or buffer, mixed devices or dtypes); a complex
                    # parameter as its real view (its buffer kept complex), as the others'
                    param, grad = real_view(p), real_view(p._grad)
                    g = decayed_grad(param, -grad if maximize else grad, wd)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = g.clone().detach()
                            state["momentum_buffer"] = (
                                view_as_complex(buf) if p.is_complex() else buf
                            )
                        else:
                            buf = real_view(buf)
                            buf.mul_(momentum).add_(g, alpha=1 - dampening)
                        g = g + buf * momentum if nesterov else buf
                    param.add_(g, alpha=-lr)
                updates.launch()
        return loss

    def _sparse_update(self, p, lr, momentum, dampening, wd, nesterov, maximize):
        """torch's update of ``p`` by a sparse gradient (``nn.Embedding(sparse=True)``'s): only
        the rows it holds change; a momentum buffer is sparse too (the entries of every step's
        gradient), and weight decay raises torch's error (a sparse gradient plus a dense
        parameter)."""
        g = -p._grad if maximize else p._grad
        if wd != 0:
            g = g.add(p, alpha=wd)  # (raises, as torch's)
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.clone().detach()
            else:
                # coalesced, so the buffer holds one entry per row seen (appending each step's
                # entries grew it without bound; torch's merges entries it already holds)
                buf = state["momentum_buffer"] = (
                    buf.mul_(momentum).add_(g, alpha=1 - dampening).coalesce()
                )
            g = g.add(buf, alpha=momentum) if nesterov else buf
        g._add_into(p, alpha=-lr)

    def _fused(self, updates, p, flags, lr, momentum, dampening, wd, group):
        """The update of p by the fused kernel (with ``updates``' others), when it applies (else
        False, nothing done)."""
        states, first = [], False
        if momentum != 0:
            buf = self.state[p].get("momentum_buffer")
            first = buf is None
            if first:  # the kernel writes the first step's d into it
                buf = empty_like(p).detach()
            states.append(real_view(buf))
        param, grad = real_view(p), real_view(p._grad)
        if not fusable(param, grad, states, group.get("fused")):
            return False
        if first:
            self.state[p]["momentum_buffer"] = buf
        scalars = (-lr, momentum, 1 - dampening, wd, 1.0 if first else 0.0)
        updates.add(param, grad, states, scalars)
        return True
