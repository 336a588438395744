"""gradcheck / gradgradcheck: autograd's Jacobian against central finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import forward_ad
from .engine import grad


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` and ``gradgradcheck`` when the analytical and numerical
    Jacobians differ (with ``raise_exception=True``), as
    ``torch.autograd.gradcheck.GradcheckError``; it is a ``RuntimeError``.

    >>> from clgrad.autograd.gradcheck import GradcheckError
    >>> x = clgrad.tensor([1.0, 2.0], dtype=clgrad.float64, requires_grad=True)
    >>> try:
    ...     clgrad.autograd.gradcheck(lambda t: t.detach() * 2 + t, (x,))
    ... except GradcheckError as e:
    ...     print(str(e)[:17])
    Jacobian mismatch
    """


def _tensors(xs):
    return [x for x in xs if isinstance(x, Tensor)]


def _outputs(func, inputs):
    out = func(*inputs)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical(func, inputs, k, eps):
    """d outputs / d inputs[k], one column per element of inputs[k] (central differences)."""
    x = inputs[k]
    base = x.detach().cpu().numpy().astype(np.float64)
    columns = []
    for j in range(base.size):
        vals = []
        for sign in (1, -1):
            p = base.copy()
            p.reshape(-1)[j] += sign * eps
            moved = list(inputs)
            moved[k] = Tensor._from_numpy(p, x.dtype, x.device).requires_grad_(x.requires_grad)
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
    outs = _outputs(func, inputs)
    rows = []  # rows[output][element] -> list over diff inputs of flattened grads
    for o in outs:
        per_out = []
        for e in range(o.numel()):
            g = Tensor._full(o.shape, 0, o.dtype, o.device)
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


def _forward_columns(func, inputs, k):
    """d outputs / d inputs[k] by forward-mode AD: per element of inputs[k], the outputs'
    tangents when that input is a dual whose tangent is that element's basis vector."""
    x = inputs[k]
    columns = []
    for j in range(x.numel()):
        tangent = Tensor._full(x.shape, 0, x.dtype, x.device)
        tangent.view(-1)[j] = 1.0
        with forward_ad.dual_level():
            moved = list(inputs)
            moved[k] = forward_ad.make_dual(x.detach(), tangent)
            column = []
            for o in _outputs(func, moved):
                t = forward_ad.unpack_dual(o).tangent
                column.append(
                    np.zeros(o.numel())
                    if t is None
                    else t.detach().cpu().numpy().astype(np.float64).reshape(-1)
                )
        columns.append(column)
    return columns  # columns[j][output] -> vector over output elements


def gradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    **_: Any,
) -> bool:
    """Checks the gradients that autograd computes for ``func`` at ``inputs`` (those inputs
    with ``requires_grad=True``) against central finite differences of step ``eps``, element
    by element of the Jacobian, as ``torch.autograd.gradcheck``: returns True when every
    element agrees within ``atol + rtol * |numerical|``; otherwise raises ``GradcheckError``
    (or returns False when ``raise_exception=False``). Use float64 inputs where the device
    runs them (``eps`` is sized for double precision). Other PyTorch keywords are accepted and
    ignored. ``check_forward_ad`` also checks the forward-mode Jacobian (``forward_ad``: a
    custom Function's ``jvp``), ``check_backward_ad=False`` skips the reverse-mode one.

    >>> x = clgrad.tensor([1.0, 2.0, 3.0], dtype=clgrad.float64, requires_grad=True)
    >>> clgrad.autograd.gradcheck(lambda t: (t * t).sum(), (x,), check_forward_ad=True)
    True
    >>> clgrad.autograd.gradcheck(lambda t: t.detach() * t, (x,), raise_exception=False)
    False
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [k for k, x in enumerate(inputs) if getattr(x, "requires_grad", False)]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    if check_backward_ad:
        outs, rows = _analytical(func, inputs, diff)
    else:
        outs = _outputs(func, inputs)
    for pos, k in enumerate(diff):
        numeric = _numerical(func, inputs, k, eps)
        forward = _forward_columns(func, inputs, k) if check_forward_ad else None
        for oi, o in enumerate(outs):
            for e in range(o.numel()):
                for j in range(inputs[k].numel()):
                    n = numeric[j][oi][e]
                    found = []
                    if check_backward_ad:
                        found.append(("", rows[oi][e][pos][j]))
                    if forward is not None:
                        found.append((" computed with forward mode", forward[j][oi][e]))
                    for how, a in found:
                        if not abs(a - n) <= atol + rtol * abs(n):
                            msg = (
                                f"Jacobian{how} mismatch for output {oi} with respect to input "
                                f"{k}: element (out {e}, in {j}) numerical {n:.6g} vs "
                                f"analytical {a:.6g}"
                            )
                            if raise_exception:
                                raise GradcheckError(msg)
                            return False
    return True


def gradgradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """Checks second derivatives, as ``torch.autograd.gradgradcheck``: runs ``gradcheck`` on
    the function that maps ``(inputs, grad_outputs)`` to the gradients of ``func`` (taken with
    ``create_graph=True``). ``grad_outputs`` defaults to standard normal tensors shaped like the
    outputs (from a fixed seed, so the check is repeatable). Returns True or raises
    ``GradcheckError`` (or returns False when ``raise_exception=False``).

    >>> x = clgrad.tensor([1.0, 2.0], dtype=clgrad.float64, requires_grad=True)
    >>> clgrad.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [
            Tensor._from_numpy(rng.standard_normal(o.shape), o.dtype, o.device).requires_grad_()
            for o in outs
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
