"""gradcheck / gradgradcheck: autograd's Jacobian against central finite differences."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..dtypes import complex128, float64
from ..tensor import Tensor
from . import forward_ad
from .engine import grad
from .function import Function


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


def _as_outputs(out) -> list:
    """The tensors among what ``func`` returned (one tensor or a sequence)."""
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, Tensor)]


def _differentiable(outs) -> list:
    """The outputs gradcheck checks, as PyTorch's: those that require grad."""
    return [o for o in outs if o.requires_grad]


def _flat(t) -> np.ndarray:
    a = t.detach().cpu().numpy().reshape(-1)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def _check_inputs(inputs) -> list:
    """PyTorch's checks of the inputs: the positions of those that require grad (ValueError
    where none does), a warning for each that is not double precision, RuntimeError for one with
    a repeated (stride 0) dimension, whose elements cannot be perturbed one at a time."""
    diff = [k for k, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )
    for k in diff:
        x = inputs[k]
        if x.dtype not in (float64, complex128):
            warnings.warn(
                f"Input #{k} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=3,
            )
        if any(st == 0 and sz > 1 for st, sz in zip(x.stride(), x.shape)):
            raise RuntimeError(
                f"The {k}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck."
            )
    return diff


def _check_same_meta(outs, ref, idx, eps) -> None:
    """PyTorch's AssertionError where perturbing an input changes an output's shape or dtype
    (finite differences are meaningless then)."""
    for a, b in zip(ref, outs):
        if tuple(a.shape) != tuple(b.shape):
            raise AssertionError(
                "Expected `func` to return outputs with the same shape when inputs are "
                f"perturbed on index {idx} by {eps}, but got: shapes {b.size()} and {a.size()}."
            )
        if a.dtype != b.dtype:
            raise AssertionError(
                "Expected `func` to return outputs with the same dtype when inputs are "
                f"perturbed on index {idx} by {eps}, but got: dtypes {b.dtype} and {a.dtype}."
            )


def _numerical(func, inputs, k, eps, ref):
    """Central differences of every output in ``ref`` by each element of ``inputs[k]``: per
    element, (d outputs / d its real part, d outputs / d its imaginary part or None). As
    PyTorch's, the input itself is perturbed (through ``.data``: no version change), so a
    ``func`` that also reads it from elsewhere (a closure) sees the perturbation."""
    x = inputs[k]
    data = x.data
    units = (1, 1j) if x.is_complex() else (1,)
    columns = []
    for idx in np.ndindex(*x.shape):
        orig = data[idx].item()
        parts = []
        for unit in units:
            vals = []
            for sign in (1, -1):
                data[idx] = orig + sign * eps * unit
                try:
                    # with grad enabled: ``func`` may itself differentiate (gradgradcheck);
                    # read before the input is restored (an output may be the input itself)
                    outs = _as_outputs(func(*inputs))
                    _check_same_meta(outs, ref, idx, eps)
                    vals.append([_flat(o) for o in outs])
                finally:
                    data[idx] = orig
            parts.append([(a - b) / (2 * eps) for a, b in zip(*vals)])
        columns.append((parts[0], parts[1] if len(parts) > 1 else None))
    return columns  # columns[j] -> (per output d/dre, per output d/dim or None)


def _analytical(outs, diff_inputs, unit):
    """Rows of the Jacobian by one backward pass per output element, the grad_output ``unit``
    there (1, or 1j for the imaginary part of a complex output): rows[output][element] -> per
    input, the gradient flattened (zeros where it does not reach the input)."""
    rows = []
    for o in outs:
        if isinstance(unit, complex) and not o.is_complex():
            rows.append(None)  # a real output has no imaginary part to check
            continue
        per_out = []
        for e in range(o.numel()):
            g = Tensor._full(o.shape, 0, o.dtype, o.device)
            g.view(-1)[e] = unit
            gs = grad([o], diff_inputs, [g], retain_graph=True, allow_unused=True)
            per_out.append(
                [np.zeros(x.numel()) if gi is None else _flat(gi) for x, gi in zip(diff_inputs, gs)]
            )
        rows.append(per_out)
    return rows


def _forward_columns(func, inputs, diff, k):
    """d outputs / d inputs[k] by forward-mode AD: per element of inputs[k], the outputs'
    tangents when every input that requires grad is a dual, as PyTorch's (zero tangents but
    for that element's basis vector in inputs[k])."""
    x = inputs[k]
    columns = []
    for j in range(x.numel()):
        with forward_ad.dual_level():
            moved = list(inputs)
            for i in diff:
                tangent = Tensor._full(inputs[i].shape, 0, inputs[i].dtype, inputs[i].device)
                if i == k:
                    tangent.view(-1)[j] = 1.0
                moved[i] = forward_ad.make_dual(inputs[i].detach(), tangent)
            column = []
            for o in _differentiable(_as_outputs(func(*moved))):
                t = forward_ad.unpack_dual(o).tangent
                column.append(np.zeros(o.numel()) if t is None else _flat(t))
        columns.append(column)
    return columns  # columns[j][output] -> vector over output elements


class _UndefinedGrad(Function):
    """The identity whose backward passes no gradient on (PyTorch's ``UndefinedGrad``): what
    is before it sees "no gradient" as its grad_output."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return None


_UNDEFINED_NOTE = (
    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)


def _check_undefined_grads(outs, diff_inputs) -> None:
    """PyTorch's check that backward copes with outputs that get no gradient: with all of
    them so, it must run and give no (or zero) gradients."""
    cut = [_UndefinedGrad.apply(o) for o in outs]
    zeros = [Tensor._full(o.shape, 0, o.dtype, o.device) for o in cut]

    def bc_warning():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is "
            "enabled by default, but it may break existing callers of this function. If this "
            'is true for you, you can call this function with "check_undefined_grad=False" to '
            "disable the feature",
            stacklevel=4,
        )

    try:
        gs = grad(cut, diff_inputs, zeros, allow_unused=True)
    except RuntimeError as e:
        bc_warning()
        raise GradcheckError(
            f"Expected backward function to handle undefined output grads. {_UNDEFINED_NOTE}"
        ) from e
    if any(g is not None and bool((g != 0).any()) for g in gs):
        bc_warning()
        raise GradcheckError(
            "Expected all input grads to be undefined or zero when all output grads are "
            f"undefined or zero. {_UNDEFINED_NOTE}"
        )


def _check(
    func, inputs, diff, eps, atol, rtol, nondet_tol, check_forward_ad, check_backward_ad,
    check_undefined_grad,
) -> None:  # fmt: skip
    """gradcheck's checks, in PyTorch's order; GradcheckError at the first that fails."""
    ref = _as_outputs(func(*inputs))
    outs = _differentiable(ref)
    positions = [next(i for i, r in enumerate(ref) if r is o) for o in outs]
    numeric = {k: _numerical(func, inputs, k, eps, ref) for k in diff}
    if not outs:  # nothing to differentiate: then nothing may depend on the inputs
        for columns in numeric.values():
            for re, im in columns:
                if any(np.any(v != 0) for v in re + (im or [])):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    diff_inputs = [inputs[k] for k in diff]
    # outputs of a fresh call for backward: the perturbations were written through the
    # inputs' ``.data``, which makes a view among the first call's outputs (an input given back
    # by a custom Function, say) rebuild its grad_fn as a plain view of the input
    outs = _differentiable(_as_outputs(func(*inputs)))
    # the real part of each output, then (complex ones) the imaginary part, as PyTorch's
    parts = [("real", 1, np.real)]
    if any(o.is_complex() for o in outs):
        parts.insert(0, ("imaginary", 1j, np.imag))
    for part, unit, proj in parts if check_backward_ad else ():
        rows = _analytical(outs, diff_inputs, unit)
        again = _analytical(outs, diff_inputs, unit)
        for r1, r2 in zip(rows, again):
            for e1, e2 in zip(r1 or (), r2 or ()):
                for a, b in zip(e1, e2):
                    if a.size and np.max(np.abs(a - b)) > nondet_tol:
                        raise GradcheckError(
                            "Backward is not reentrant, i.e., running backward with same input "
                            "and grad_output multiple times gives different values, although "
                            "analytical gradient matches numerical gradient.The tolerance for "
                            f"nondeterminism was {nondet_tol}."
                        )
        for pos, k in enumerate(diff):
            for oi, o in enumerate(outs):
                if part == "imaginary" and not o.is_complex():
                    continue
                for j, (re, im) in enumerate(numeric[k]):
                    n = proj(re[positions[oi]])
                    if im is not None:
                        n = n + 1j * proj(im[positions[oi]])
                    a = np.array([rows[oi][e][pos][j] for e in range(o.numel())])
                    if not np.all(np.abs(a - n) <= atol + rtol * np.abs(n)):
                        prefix = (
                            f"While considering the {part} part of complex outputs only, "
                            if o.is_complex()
                            else ""
                        )
                        raise GradcheckError(
                            f"{prefix}Jacobian mismatch for output {oi} with respect to input "
                            f"{pos},\nnumerical:{n}\nanalytical:{a}\n"
                        )
    if check_forward_ad:
        for pos, k in enumerate(diff):
            forward = _forward_columns(func, inputs, diff, k)
            for oi in range(len(outs)):
                for j, (re, _) in enumerate(numeric[k]):
                    n, a = re[positions[oi]], forward[j][oi]
                    if not np.all(np.abs(a - n) <= atol + rtol * np.abs(n)):
                        raise GradcheckError(
                            f"Jacobian computed with forward mode mismatch for output {oi} with "
                            f"respect to input {pos},\nnumerical:{n}\nanalytical:{a}\n"
                        )
    if check_backward_ad:
        # a backward that ignores its grad_output (adds to it, say) gives nonzero here
        zeros = [Tensor._full(o.shape, 0, o.dtype, o.device) for o in outs]
        gs = grad(outs, diff_inputs, zeros, retain_graph=True, allow_unused=True)
        if any(g is not None and bool((g != 0).any()) for g in gs):
            raise GradcheckError("backward not multiplied by grad_output")
        if check_undefined_grad:
            _check_undefined_grads(outs, diff_inputs)


def gradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    **_: Any,
) -> bool:
    """Checks the gradients that autograd computes for ``func`` at ``inputs`` (those inputs
    with ``requires_grad=True``) against central finite differences of step ``eps``, element
    by element of the Jacobian, as ``torch.autograd.gradcheck``: returns True when every
    element agrees within ``atol + rtol * |numerical|``; otherwise raises ``GradcheckError``
    (or returns False when ``raise_exception=False``). Use float64 inputs where the device
    runs them (``eps`` is sized for double precision; others get PyTorch's warning). As
    PyTorch's, it perturbs the input tensors themselves (a ``func`` that reads them from a
    closure sees it), checks complex outputs' real and imaginary parts and complex inputs by
    their real and imaginary parts, that backward gives the same gradients twice (within
    ``nondet_tol``), that it scales with its grad_output, and (``check_undefined_grad``) that
    it copes with outputs that get no gradient. ``check_forward_ad`` also checks the
    forward-mode Jacobian (``forward_ad``: a custom Function's ``jvp``),
    ``check_backward_ad=False`` skips the reverse-mode one. Other PyTorch keywords
    (``fast_mode``, ``check_batched_grad``, ...) are accepted; the full Jacobian is checked.

    >>> x = clgrad.tensor([1.0, 2.0, 3.0], dtype=clgrad.float64, requires_grad=True)
    >>> clgrad.autograd.gradcheck(lambda t: (t * t).sum(), (x,), check_forward_ad=True)
    True
    >>> clgrad.autograd.gradcheck(lambda t: t.detach() * t, (x,), raise_exception=False)
    False
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = _check_inputs(inputs)
    try:
        _check(
            func, inputs, diff, eps, atol, rtol, nondet_tol, check_forward_ad,
            check_backward_ad, check_undefined_grad,
        )  # fmt: skip
    except GradcheckError:
        if raise_exception:
            raise
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
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    **_: Any,
) -> bool:
    """Checks second derivatives, as ``torch.autograd.gradgradcheck``: runs ``gradcheck`` on
    the function that maps ``(inputs, grad_outputs)`` to the gradients of ``func`` (taken with
    ``create_graph=True``). ``grad_outputs`` defaults to standard normal tensors shaped like the
    outputs (from a fixed seed, so the check is repeatable; complex ones for complex outputs).
    ``nondet_tol`` and ``check_undefined_grad`` go to that ``gradcheck``. Returns True or raises
    ``GradcheckError`` (or returns False when ``raise_exception=False``).

    >>> x = clgrad.tensor([1.0, 2.0], dtype=clgrad.float64, requires_grad=True)
    >>> clgrad.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outs = _differentiable(_as_outputs(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(0)

        def random(o):
            a = rng.standard_normal(o.shape)
            if o.is_complex():
                a = a + 1j * rng.standard_normal(o.shape)
            return Tensor._from_numpy(a, o.dtype, o.device).requires_grad_()

        grad_outputs = [random(o) for o in outs]
    grad_outputs = list(grad_outputs)
    n_in = len(inputs)
    diff = [k for k, x in enumerate(inputs) if getattr(x, "requires_grad", False)]

    def first_grads(*args):
        xs, gos = args[:n_in], args[n_in:]
        o = _differentiable(_as_outputs(func(*xs)))
        gs = grad(o, [xs[k] for k in diff], list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads,
        inputs + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
    )
