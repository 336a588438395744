"""Adam and AdamW (PyTorch's formulation; amsgrad, weight_decay, maximize).

The bias corrections are Python floats from the step count, a 0-d tensor on the host (as
PyTorch keeps it), read there at no cost.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from .. import capture
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import maximum
from ..tensor import Tensor
from .optimizer import (
    FusedUpdates,
    Optimizer,
    check_fused,
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


# torch's words, AdamW's too
_NO_SPARSE = "Adam does not support sparse gradients, please consider SparseAdam instead"


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
    >>> sorted(opt.state[w]), opt.state[w]["step"]
    (['exp_avg', 'exp_avg_sq', 'step'], tensor(1.))
    """

    _scalar_keys: tuple[str, ...] = ("step",)

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
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        betas = _checked_betas(betas, foreach, capturable)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
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
                lr, eps = scalar_value(group["lr"]), group["eps"]
                beta1, beta2 = map(scalar_value, group["betas"])
                wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
                decoupled = group.get("decoupled_weight_decay", self._decoupled)
                fused = fused_enabled(group)
                flags = fused_flags(
                    amsgrad=amsgrad, weight_decay=wd != 0, decoupled=decoupled, maximize=maximize
                )
                updates = FusedUpdates("adam", flags)
                for p in self._params_with_grad(group):
                    check_fused(group, p)
                    refuse_sparse(p, _NO_SPARSE)
                    # the kernel takes the state tensors in this order, the ones in use only
                    names = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if amsgrad else [])
                    state = self.state[p]
                    init_state(state, p, names)
                    # a complex parameter and its state as their real views, as PyTorch's
                    param, grad = real_view(p), real_view(p._grad)
                    states = [real_view(state[name]) for name in names]
                    kernel = fused and fusable(param, grad, states, group.get("fused"))
                    # (the kernel's replay counts the step: see the scalar source below)
                    step = count_step(state, replayed=kernel)
                    if kernel:
                        scalars = _fused_scalars(lr, beta1, beta2, eps, wd, step)
                        if capture.active is not None:
                            # a replay of a captured step counts the step and recomputes the
                            # bias corrections (lr and betas are its guards)
                            capture.scalar_source(
                                partial(_next_step, state, lr, beta1, beta2, eps, wd),
                                [(state, "step")],
                            )
                        updates.add(param, grad, states, scalars)
                        continue
                    # one op per term: fused=False/foreach=False, or what the kernel can't take
                    # (a strided parameter or state, mixed devices or dtypes)
                    g = decayed_grad(param, -grad if maximize else grad, wd, lr, decoupled)
                    exp_avg, exp_avg_sq = states[0], states[1]
                    exp_avg.mul_(beta1).add_(g * (1 - beta1))
                    exp_avg_sq.mul_(beta2).add_(g * g * (1 - beta2))
                    bias1 = 1 - beta1**step
                    bias2_sqrt = math.sqrt(1 - beta2**step)
                    if amsgrad:
                        m = states[2]
                        m.copy_(maximum(m, exp_avg_sq))
                        denom = m.sqrt() / bias2_sqrt + eps
                    else:
                        denom = exp_avg_sq.sqrt() / bias2_sqrt + eps
                    param.sub_(exp_avg / denom * (lr / bias1))
                updates.launch()
        return loss


def _checked_betas(betas, foreach, capturable) -> tuple:
    """``betas`` as PyTorch's Adam takes them: two floats or two 1-element Tensors (kept as
    0-d tensors, read at each step), with its ValueErrors."""
    floats = all(isinstance(b, float) for b in betas)
    if not floats and not all(isinstance(b, Tensor) for b in betas):
        raise ValueError("betas must be either both floats or both Tensors")
    if floats:
        return tuple(betas)
    for i, beta in enumerate(betas):
        if foreach and not capturable:
            raise ValueError(
                f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
            )
        if beta.numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(b.squeeze() if b.ndim else b for b in betas)


def _fused_scalars(lr, beta1, beta2, eps, wd, step) -> tuple:
    """The scalars of the fused Adam kernel at ``step`` (see ``OPTIMIZERS["adam"]``)."""
    return (
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


def _next_step(state, lr, beta1, beta2, eps, wd) -> tuple:
    """Counts one more step in ``state`` and returns the fused kernel's scalars for it."""
    return _fused_scalars(lr, beta1, beta2, eps, wd, recount_step(state))


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
