"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration, as
``torch.optim.Muon`` (PyTorch 2.9+), for the 2-D weights of hidden layers.

PyTorch runs the iteration in bfloat16. Here it computes in float32 and rounds each result to
bfloat16's precision (``round_to_bfloat16``) where PyTorch's bfloat16 ops round theirs: the
updates then agree with PyTorch's to the order in which its matrix products add up."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..ops.elementwise import where
from ..ops.linalg import addmm
from ..tensor import Tensor
from .optimizer import Optimizer, refuse_complex, refuse_sparse, scalar_value

if TYPE_CHECKING:
    from .optimizer import ParamsT

# Keller Jordan's quintic Newton-Schulz coefficients and step count, PyTorch's defaults
NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5
ADJUST_LR_FNS = (None, "original", "match_rms_adamw")


def round_to_bfloat16(x):
    """``x`` (float32) rounded to the nearest bfloat16 value (ties to even), as float32: what
    ``x.bfloat16().float()`` gives in PyTorch. The low 16 bits of the float's pattern go, and the
    8-bit significand left is rounded by adding just under half of its last place (plus its low
    bit, for ties); NaN stays NaN.

    >>> from clgrad.optim.muon import round_to_bfloat16
    >>> round_to_bfloat16(clgrad.tensor([1.0, 1.0040, -3.3333]))
    tensor([ 1.0000,  1.0078, -3.3281])
    """
    bits = x.to(D.float32).view(D.int32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & -0x10000).view(D.float32)
    return where(x.isnan(), x, rounded)


def zeropower_via_newtonschulz(grad, ns_coefficients=NS_COEFFICIENTS, ns_steps=NS_STEPS, eps=1e-7):
    """An approximate orthogonalization of the matrix ``grad`` (U S' V^T for grad = U S V^T,
    S' near 1): ``ns_steps`` steps of the quintic iteration X <- aX + (bA + cA^2)X, A = XX^T,
    from X = grad / max(||grad||, eps), on the wide orientation of the matrix.

    >>> from clgrad.optim.muon import zeropower_via_newtonschulz
    >>> o = zeropower_via_newtonschulz(clgrad.tensor([[3.0, 0.0], [0.0, 0.5]]))
    >>> bool(((o.diagonal() - 1).abs() < 0.35).all())
    True
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    bf16 = round_to_bfloat16  # where PyTorch's bfloat16 ops round
    tall = grad.shape[0] > grad.shape[1]
    x = bf16(grad.T if tall else grad)
    x = bf16(x / bf16(x.norm()).clamp(min=eps))  # a spectral norm of at most 1
    for _ in range(ns_steps):
        gram = bf16(x @ x.T)
        x = bf16(addmm(x, bf16(addmm(gram, gram, gram, beta=b, alpha=c)), x, beta=a))
    return x.T if tall else x


def adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    """The learning rate for a (A, B) parameter: Keller Jordan's sqrt(max(1, A / B))
    ("original", the default) or Moonshot's 0.2 * sqrt(max(A, B)) ("match_rms_adamw"), which
    gives the update AdamW's RMS."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """The Muon optimizer, as ``torch.optim.Muon``: a momentum buffer ``B = mu B + g`` (an
    ``lerp``), its Nesterov mix ``g + mu (B - g)`` or itself, orthogonalized
    (``zeropower_via_newtonschulz``), applied after a decoupled weight decay:
    ``p *= 1 - lr * weight_decay``, ``p -= adjusted_lr * O``. For 2-D parameters only (hidden
    layers' weights; biases and embeddings go to another optimizer, such as AdamW).

    >>> w = clgrad.nn.Parameter(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> opt = clgrad.optim.Muon([w], lr=0.02)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> sorted(opt.state[w])
    ['momentum_buffer']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
        eps: float = 1e-7,
        ns_steps: int = NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one update of every parameter that has a gradient; returns the loss of the
        optional ``closure`` (called first, with grad enabled), else None."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum = scalar_value(group["lr"]), group["momentum"]
                for p in self._params_with_grad(group):
                    refuse_sparse(p, "Muon does not support sparse gradients")
                    refuse_complex(self, p)
                    g = p._grad
                    if g.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = zeros_like(g)
                    buf = state["momentum_buffer"]
                    buf.lerp_(g, 1 - momentum)
                    update = g.lerp(buf, momentum) if group["nesterov"] else buf
                    update = zeropower_via_newtonschulz(
                        update, group["ns_coefficients"], group["ns_steps"], group["eps"]
                    )
                    p.mul_(1 - lr * group["weight_decay"])
                    p.add_(update, alpha=-adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
