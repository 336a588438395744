"""Adadelta, Adagrad, Adamax, NAdam, RAdam, ASGD, Rprop and Adafactor, in PyTorch's
(single-tensor) formulation.

Each keeps torch's argument names, defaults, per-parameter state names and parameter-group keys
(``foreach`` / ``fused`` / ``capturable`` accepted and recorded), so state dicts line up with
PyTorch's. Updates are in-place Tensor ops on the parameter's own device under no_grad. The
per-parameter numbers are 0-d tensors of the types PyTorch keeps: the step counts and NAdam's
``mu_product`` on the host (read there at no cost, for the bias corrections), ASGD's ``step``,
``eta`` and ``mu`` on the parameter's device (read back each step, as PyTorch's own ASGD does).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..dtypes import finfo
from ..ops.creation import full_like, zeros_like
from ..ops.elementwise import maximum, where
from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    check_fused,
    check_hyperparameters,
    complex_state,
    count_step,
    decayed_grad,
    implementation_options,
    init_state,
    real_view,
    refuse_complex,
    refuse_sparse,
    scalar_state,
    scalar_value,
)

if TYPE_CHECKING:
    from .optimizer import ParamsT


class _Simple(Optimizer):
    """The loop every optimizer here shares: ``_update(p, g, state, group)`` per parameter with
    a gradient, ``g`` already negated under ``maximize``; a complex parameter is updated as its
    real view (the real and imaginary parts two coordinates), its state kept complex, as
    PyTorch's, unless the optimizer refuses complex parameters."""

    _scalar_keys: tuple[str, ...] = ("step",)

    _supports_complex = True
    _supports_sparse = False  # Adagrad's update takes a sparse gradient (torch's)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one update of every parameter that has a gradient; returns the loss of the
        optional ``closure`` (called first, with grad enabled), else None.
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                for p in self._params_with_grad(group):
                    check_fused(group, p)
                    if not self._supports_sparse:
                        refuse_sparse(p, f"{self._torch_name()} does not support sparse gradients")
                    elif group.get("fused"):  # (Adagrad: its fused kernel takes dense ones only)
                        refuse_sparse(p, "`fused` does not support sparse grad or complex param")
                    g = -p._grad if group["maximize"] else p._grad
                    if not p.is_complex():
                        self._update(p, g, self.state[p], group)
                        continue
                    if not self._supports_complex:
                        refuse_complex(self, p)
                    state = self.state[p]
                    updated = {
                        k: real_view(v) if isinstance(v, Tensor) else v for k, v in state.items()
                    }
                    p_real = real_view(p)
                    self._update(p_real, real_view(g), updated, group)
                    complex_state(state, updated, p_real._shape)
        return loss

    def _update(self, p, g, state, group):
        raise NotImplementedError

    def _torch_name(self) -> str:
        """The name of the torch optimizer this is (a user's subclass says its base's, as
        torch's messages name the optimizer they are written in)."""
        return next(c for c in type(self).__mro__ if c.__module__ == __name__).__name__


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
        lr, rho, eps, wd = (
            scalar_value(group["lr"]),
            group["rho"],
            group["eps"],
            group["weight_decay"],
        )
        init_state(state, p, ["square_avg", "acc_delta"])
        count_step(state)
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

    A sparse gradient (``nn.Embedding(sparse=True)``'s) updates only the rows it holds, as
    torch's (``weight_decay`` refused with it).
    """

    _supports_sparse = True

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
                self._init_state(self.state[p], p, group)

    @staticmethod
    def _init_state(state, p, group):
        state["step"] = scalar_state(0)
        value = group["initial_accumulator_value"]
        if p.is_complex():  # both parts start there, as PyTorch's
            value = complex(value, value)
        state["sum"] = full_like(p, value, requires_grad=False)
        state["sum"] = state["sum"].detach()

    def _update(self, p, g, state, group):
        if not state:  # a parameter of a group added later (add_param_group)
            self._init_state(state, p, group)
        step = count_step(state)
        clr = scalar_value(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        if not isinstance(g, Tensor):
            self._sparse_update(p, g, state, group, clr)
            return
        g = decayed_grad(p, g, group["weight_decay"])
        state["sum"].add_(g * g)
        p.sub_(g / (state["sum"].sqrt() + group["eps"]) * clr)

    @staticmethod
    def _sparse_update(p, g, state, group, clr):
        """torch's sparse Adagrad: the squares of the (coalesced) gradient's rows added into
        the sum, and those rows alone of ``p`` stepped, by the sum's rows there."""
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        g = g.coalesce()  # the rows' squares are of their totals: one entry per row
        values = g._values()
        g._with_values(values * values)._add_into(state["sum"])
        std = g._gather(state["sum"]).sqrt() + group["eps"]
        g._with_values(values / std)._add_into(p, alpha=-clr)


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
        step = count_step(state)
        g = decayed_grad(p, g, group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(g, 1 - beta1)
        exp_inf.copy_(maximum(exp_inf * beta2, g.abs() + eps))
        clr = scalar_value(group["lr"]) / (1 - beta1**step)
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
    >>> sorted(opt.state[w]), opt.state[w]["mu_product"]
    (['exp_avg', 'exp_avg_sq', 'mu_product', 'step'], tensor(0.4501))
    """

    _scalar_keys = ("step", "mu_product")

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
            scalar_value(group["lr"]),
            group["betas"],
            group["eps"],
            group["weight_decay"],
        )
        init_state(state, p, ["exp_avg", "exp_avg_sq"], mu_product=1.0)
        step = count_step(state)
        bias_correction2 = 1 - beta2**step
        g = decayed_grad(p, g, wd, lr, group["decoupled_weight_decay"])
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        # a float32 tensor, rounded each step as PyTorch's
        mu_product = float(state["mu_product"].mul_(mu).item())
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
            scalar_value(group["lr"]),
            group["betas"],
            group["eps"],
            group["weight_decay"],
        )
        init_state(state, p, ["exp_avg", "exp_avg_sq"])
        step = count_step(state)
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
    plus a running average ``ax`` of the parameter from step ``t0`` on. ``step``, ``eta`` and
    ``mu`` are 0-d tensors on the parameter's device, as PyTorch keeps them, read back each step
    (as PyTorch's single-tensor ASGD does).

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8000, 1.6000], requires_grad=True)
    >>> sorted(opt.state[w]), opt.state[w]["eta"]
    (['ax', 'eta', 'mu', 'step'], tensor(0.1000))
    """

    _scalar_keys = ("step", "eta", "mu")
    _scalars_on_param_device = True

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
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        lr = scalar_value(group["lr"])
        init_state(state, p, ["ax"], device=p.device, eta=lr, mu=1.0)
        step = count_step(state)
        g = decayed_grad(p, g, group["weight_decay"])
        eta = float(state["eta"].item())
        p.mul_(1 - lambd * eta)
        p.add_(g, alpha=-eta)
        mu = float(state["mu"].item())
        if mu != 1:
            state["ax"].add_((p - state["ax"]) * mu)
        else:
            state["ax"].copy_(p)
        state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
        state["mu"].fill_(1 / max(1, step - t0))


class Rprop(_Simple):
    """The resilient backpropagation optimizer, as ``torch.optim.Rprop``: each element keeps a
    step size of its own (``lr`` at first) that grows by ``etas[1]`` while its gradient keeps
    its sign and shrinks by ``etas[0]`` when the sign flips (within ``step_sizes``); the
    parameter moves by its step size against the gradient's sign alone. After a flip the
    element rests for a step (its gradient counts as 0).

    >>> w = clgrad.nn.Parameter(clgrad.tensor([1.0, 2.0]))
    >>> opt = clgrad.optim.Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([0.7800, 1.7800], requires_grad=True)
    >>> sorted(opt.state[w])
    ['prev', 'step', 'step_size']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(
            params,
            dict(lr=lr, etas=etas, step_sizes=step_sizes)
            | implementation_options(foreach, None, capturable, differentiable, keys=("foreach",))
            | {"maximize": maximize, "differentiable": differentiable, "capturable": capturable},
        )

    def _update(self, p, g, state, group):
        (eta_minus, eta_plus), (smallest, largest) = group["etas"], group["step_sizes"]
        if not state:
            init_state(state, p, ["prev"])
            state["step_size"] = full_like(g, scalar_value(group["lr"])).detach()
        count_step(state)
        prev, step_size = state["prev"], state["step_size"]
        # the factors in the parameter's dtype (a float32 where() of the etas rounded a
        # float64 step size: float32(1.2) = 1.2000000477), filled as PyTorch's
        factor = (g * prev).sign()
        factor.masked_fill_(factor > 0, eta_plus)
        factor.masked_fill_(factor < 0, eta_minus)
        factor.masked_fill_(factor == 0, 1.0)
        step_size.mul_(factor).clamp_(smallest, largest)
        # where the sign flipped the element rests; its gradient is remembered as 0
        g = where(factor == eta_minus, 0.0, g)
        p.addcmul_(g.sign(), step_size, value=-1)
        prev.copy_(g)


class Adafactor(_Simple):
    """The Adafactor optimizer, as ``torch.optim.Adafactor``: for a matrix (or a batch of them)
    the second moment is kept factored, as running averages of its row and column means
    (``row_var``, ``col_var``: O(rows + cols) memory), for a vector as a running average
    (``variance``); the averaging weight is ``step ** beta2_decay``. The step is the gradient
    over the root of that estimate, clipped to RMS ``d``, scaled by the parameter's own RMS
    (at least ``eps[1]``) times ``min(lr, 1 / sqrt(step))``. The RMS values stay on the device
    (PyTorch reads them back each step).

    >>> w = clgrad.nn.Parameter(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> opt = clgrad.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([[0.7879, 1.7000],
            [2.7154, 3.7317]], requires_grad=True)
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    _supports_complex = False

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(
            params,
            dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay)
            | {"foreach": foreach, "maximize": maximize},
        )

    def _update(self, p, g, state, group):
        lr, d, wd = scalar_value(group["lr"]), group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = finfo(p.dtype).eps
        if not state:
            state["step"] = scalar_state(0)
            if g.ndim > 1:
                state["row_var"] = g.new_zeros((*g.shape[:-1], 1))
                state["col_var"] = g.new_zeros((*g.shape[:-2], 1, g.shape[-1]))
            else:
                state["variance"] = zeros_like(g)
        step = count_step(state)
        weight = step ** group["beta2_decay"]  # of the new squared gradient in the averages
        rho = min(lr, 1 / math.sqrt(step))
        n = max(p.numel(), 1)
        alpha = (p.norm() / math.sqrt(n)).clamp_(min=eps2) * rho  # before the decay, as torch
        if wd != 0:
            p.mul_(1 - lr * wd)
        if g.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_((g * g).mean(-1, keepdim=True), weight)
            col_var.lerp_((g * g).mean(-2, keepdim=True), weight)
            estimate = (row_var @ col_var) / row_var.mean(-2, keepdim=True).clamp(min=eps1)
        else:
            state["variance"].lerp_(g * g, weight)
            estimate = state["variance"]
        # eps1 squared: the root below brings it back to eps1's size
        update = estimate.clamp(min=eps1 * eps1).rsqrt() * g
        clip = (update.norm() / (math.sqrt(max(update.numel(), 1)) * d)).clamp_(min=1.0)
        p.sub_(update * (alpha / clip))
