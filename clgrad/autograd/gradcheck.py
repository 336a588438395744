"""gradcheck / gradgradcheck: autograd's Jacobian against central finite differences."""

from __future__ import annotations

import numpy as np


class GradcheckError(RuntimeError):
    pass


def _tensors(xs):
    from ..tensor import Tensor

    return [x for x in xs if isinstance(x, Tensor)]


def _outputs(func, inputs):
    from ..tensor import Tensor

    out = func(*inputs)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical(func, inputs, k, eps):
    """d outputs / d inputs[k], one column per element of inputs[k] (central differences)."""
    from ..ops.creation import tensor

    x = inputs[k]
    base = x.detach().cpu().numpy().astype(np.float64)
    columns = []
    for j in range(base.size):
        vals = []
        for sign in (1, -1):
            p = base.copy()
            p.reshape(-1)[j] += sign * eps
            moved = list(inputs)
            moved[k] = tensor(p, dtype=x.dtype, device=x.device, requires_grad=x.requires_grad)
            # with grad enabled: ``func`` may itself differentiate (gradgradcheck)
            vals.append(
                [
                    o.detach().cpu().numpy().astype(np.float64).reshape(-1)
                    for o in _outputs(func, moved)
                ]
            )
        columns.append([(a - b) / (2 * eps) for a, b in zip(*vals)])
    return columns  # columns[j][output] -> vector over output elements


def _analytical(func, inputs, diff):
    """Rows of the Jacobian by one backward pass per output element."""
    from ..ops.creation import zeros_like
    from . import grad

    outs = _outputs(func, inputs)
    rows = []  # rows[output][element] -> list over diff inputs of flattened grads
    for o in outs:
        per_out = []
        for e in range(o.numel()):
            g = zeros_like(o)
            g.view(-1)[e] = 1.0
            if not o.requires_grad:
                per_out.append([np.zeros(inputs[k].numel()) for k in diff])
                continue
            gs = grad([o], [inputs[k] for k in diff], [g], retain_graph=True, allow_unused=True)
            per_out.append(
                [
                    np.zeros(inputs[k].numel())
                    if gi is None
                    else gi.detach().cpu().numpy().astype(np.float64).reshape(-1)
                    for k, gi in zip(diff, gs)
                ]
            )
        rows.append(per_out)
    return outs, rows


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_):
    """True when autograd's gradients of ``func`` at ``inputs`` match finite differences.

    Use float64 inputs where the device runs it (``eps`` is sized for double precision).
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [k for k, x in enumerate(inputs) if getattr(x, "requires_grad", False)]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    outs, rows = _analytical(func, inputs, diff)
    for pos, k in enumerate(diff):
        numeric = _numerical(func, inputs, k, eps)
        for oi, o in enumerate(outs):
            for e in range(o.numel()):
                for j in range(inputs[k].numel()):
                    a = rows[oi][e][pos][j]
                    n = numeric[j][oi][e]
                    if not abs(a - n) <= atol + rtol * abs(n):
                        msg = (
                            f"Jacobian mismatch for output {oi} with respect to input {k}: "
                            f"element (out {e}, in {j}) numerical {n:.6g} vs analytical {a:.6g}"
                        )
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def gradgradcheck(
    func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_
):
    """gradcheck of the gradient itself: second derivatives by create_graph=True."""
    from ..ops.creation import randn
    from . import grad

    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = [
            randn(o.shape, dtype=o.dtype, device=o.device).requires_grad_() for o in outs
        ]
    grad_outputs = list(grad_outputs)
    n_in = len(inputs)
    diff = [k for k, x in enumerate(inputs) if getattr(x, "requires_grad", False)]

    def first_grads(*args):
        xs, gos = args[:n_in], args[n_in:]
        o = _outputs(func, xs)
        gs = grad(o, [xs[k] for k in diff], list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads,
        inputs + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
