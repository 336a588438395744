"""Derivatives of whole functions, as ``torch.autograd.functional``: ``vjp``, ``jvp``,
``jacobian``, ``hessian``, ``vhp``, ``hvp``. Each runs the function once and then reverse-mode
passes of ``autograd.grad``: one per output element for a Jacobian, the double-backward trick
for the forward-mode products (``jvp``, ``hvp``). ``inputs`` is a Tensor or a tuple of them, and
the results mirror that (and the function's outputs): tuples where tuples were given.

>>> def f(x):
...     return x ** 2
>>> clgrad.autograd.functional.jacobian(f, clgrad.tensor([1.0, 3.0]))
tensor([[2., 0.],
        [0., 6.]])
>>> clgrad.autograd.functional.hessian(lambda x: (x ** 3).sum(), clgrad.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable

from ..tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _construct_standard_basis_for(tensors, tensor_numels) -> tuple:
    """PyTorch's helper: for tensors of ``tensor_numels`` elements (N in all), one ``(N, n_i)``
    chunk each (its dtype and device), the chunks side by side the N x N identity.

    >>> from clgrad.autograd.functional import _construct_standard_basis_for
    >>> _construct_standard_basis_for((clgrad.ones(1), clgrad.ones(2)), (1, 2))[1]
    tensor([[0., 0.],
            [1., 0.],
            [0., 1.]])
    """
    total = sum(tensor_numels)
    chunks = []
    start = 0
    for t, n in zip(tensors, tensor_numels):
        chunk = t.new_zeros((total, n))
        chunk.diagonal(-start).fill_(1)
        chunks.append(chunk)
        start += n
    return tuple(chunks)


def _as_tuple(x, what: str, fn: str) -> tuple[bool, tuple]:
    """(whether ``x`` was a tuple, ``x`` as a tuple of tensors); torch's TypeError else."""
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, (tuple, list)):
        raise TypeError(
            f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the "
            f"given {what} has type {type(x)}."
        )
    for i, el in enumerate(x):
        if not isinstance(el, Tensor):
            raise TypeError(
                f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but "
                f"the value at index {i} has type {type(el)}."
            )
    return True, tuple(x)


def _untuple(res, was_tuple):
    """``res`` as the caller gave its structure: ``was_tuple`` a bool (one level) or a pair
    (outputs, inputs) for a nested result."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not outer:
            res = res[0]
            return res if inner else res[0]
        return res if inner else tuple(r[0] for r in res)
    return res if was_tuple else res[0]


def _prepare(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the inputs: differentiable views where the caller wants a graph
    through them (``create_graph``), fresh leaves otherwise."""
    return tuple(
        x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
        for x in inputs
    )


def _finish(res, create_graph: bool):
    """Detaches the results unless the caller asked for a graph through them."""
    if isinstance(res, Tensor):
        return res if create_graph else res.detach()
    return tuple(_finish(r, create_graph) for r in res)


def _check_outputs(outputs, strict: bool) -> None:
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients. The "
                    "outputs must be computed in a differentiable manner from the input when "
                    "running in strict mode."
                )


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad (None for every input where none
    does), unused inputs None."""
    pairs = [
        (o, g) for o, g in zip(outputs, grad_outputs or (None,) * len(outputs)) if o.requires_grad
    ]
    if not pairs:
        return (None,) * len(inputs)
    outs, gs = zip(*pairs)
    gs = None if all(g is None for g in gs) else list(gs)
    return _grad(list(outs), list(inputs), gs, retain_graph, create_graph, allow_unused=True)


def _zeros_where_none(grads, refs, strict: bool, what: str, create_graph: bool = False):
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if strict and create_graph and g is not None and not g.requires_grad:
            raise RuntimeError(
                f"The jacobian of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The {what} of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."
                )
            g = ref.new_zeros(ref.shape)
        res.append(g)
    return tuple(res)


def _check_v(v, others, others_tuple: bool) -> None:
    """PyTorch's checks of ``v`` against what it pairs with (``others``, given as a tuple or
    not: the messages say which)."""
    if len(v) != len(others):
        if not others_tuple:
            raise RuntimeError("The given v should contain a single Tensor.")
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(others)} but got {len(v)}."
        )
    for i, (a, b) in enumerate(zip(v, others)):
        if tuple(a.shape) != tuple(b.shape):
            entry = f"Entry {i} in " if others_tuple else ""
            raise RuntimeError(
                f"{entry}v has invalid size: should be {b.size()} but got {a.size()}."
            )


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``
    (``v`` may be left out where ``func`` returns one element).

    >>> out, g = clgrad.autograd.functional.vjp(
    ...     lambda x: x * 3, clgrad.ones(2), clgrad.tensor([1.0, 2.0]))
    >>> g
    tensor([3., 6.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "vjp"
        )
        _check_outputs(outputs, strict)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "vjp")[1], create_graph, need_graph=False)
            _check_v(v, outputs, outputs_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
        with set_grad_enabled(create_graph or is_grad_enabled()):
            grads = _grads(outputs, inputs, v, create_graph)
            result = _zeros_where_none(grads, inputs, strict, "output", create_graph)
    return (
        _untuple(_finish(outputs, create_graph), outputs_tuple),
        _untuple(_finish(result, create_graph), inputs_tuple),
    )


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), J v)``: the Jacobian-vector product, by the double-backward trick
    (``v`` may be left out where the input has one element).

    >>> out, t = clgrad.autograd.functional.jvp(
    ...     lambda x: x ** 2, clgrad.tensor([1.0, 3.0]), clgrad.tensor([1.0, 1.0]))
    >>> t
    tensor([2., 6.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "jvp")[1], create_graph, need_graph=False)
            _check_v(v, inputs, inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element."
            )
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jvp"
        )
        _check_outputs(outputs, strict)
        # J v is the gradient, with respect to u, of (u^T J) v
        us = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outputs)
        vjps = _grads(outputs, inputs, us, create_graph=True)
        if v is None:
            v = tuple(x.new_ones(x.shape) for x in inputs)
        used = [(g, w) for g, w in zip(vjps, v) if g is not None]
        if strict:  # PyTorch's checks of the double-backward trick's first pass
            for i, g in enumerate(vjps):
                if g is None:
                    raise RuntimeError(
                        f"The output of the user-provided function is independent of input {i}."
                        " This is not allowed in strict mode."
                    )
                if not g.requires_grad:
                    raise RuntimeError(
                        f"The gradient with respect to input {i} is independent of the inputs "
                        "of the user-provided function. This is not allowed in strict mode."
                    )
        with set_grad_enabled(create_graph or is_grad_enabled()):
            if used:
                gs, ws = zip(*used)
                result = _grads(gs, us, ws, create_graph)
            else:
                result = (None,) * len(us)
            if strict:
                for i, r in enumerate(result):
                    if r is None:
                        raise RuntimeError(
                            f"The gradient with respect to the input is independent of entry {i}"
                            " in the grad_outputs when using the double backward trick to "
                            "compute forward mode gradients. This is not allowed in strict mode."
                        )
            result = _zeros_where_none(result, outputs, False, "output")
    return (
        _untuple(_finish(outputs, create_graph), outputs_tuple),
        _untuple(_finish(result, create_graph), outputs_tuple),
    )


def jacobian(
    func: Callable,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of ``func`` at ``inputs``: for an output of shape ``O`` and an input of
    shape ``I``, a tensor of shape ``O + I`` (a tuple per output and per input where tuples were
    given), one reverse-mode pass per output element. ``vectorize`` (PyTorch's vmap path) and
    ``strategy="forward-mode"`` compute the same numbers; here both take the same passes.

    >>> clgrad.autograd.functional.jacobian(
    ...     lambda a, b: a * b, (clgrad.tensor([2.0]), clgrad.tensor([5.0])))
    (tensor([[5.]]), tensor([[2.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):  # torch's error class
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strict and strategy == "forward-mode":
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `strategy=forward-mode` only works with "
            "`vectorize=True` at the moment."
        )
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian"
        )
        _check_outputs(outputs, strict)
        if strict and vectorize:  # (after the function ran, as PyTorch's)
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`."
            )
        result = []
        for i, out in enumerate(outputs):
            flat = out.reshape(-1)
            rows = [x.new_zeros((flat.numel(), *x.shape)) for x in inputs]
            for j in range(flat.numel()):
                grads = _grads((flat[j],), inputs, create_graph=create_graph, retain_graph=True)
                for k, g in enumerate(grads):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        continue
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {k}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[k][j] = g
            result.append(tuple(r.reshape((*out.shape, *x.shape)) for r, x in zip(rows, inputs)))
    return _untuple(_finish(tuple(result), create_graph), (outputs_tuple, inputs_tuple))


def hessian(
    func: Callable,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of a scalar ``func`` at ``inputs``: the Jacobian of its gradient, of shape
    ``I + I`` for an input of shape ``I`` (a tuple of tuples for several inputs).

    >>> clgrad.autograd.functional.hessian(
    ...     lambda x, y: (x * y).sum(), (clgrad.ones(1), clgrad.ones(1)))[0][1]
    tensor([[1.]])
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar(*xs):
        out = func(*xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_outputs(outs, strict)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.reshape(())

    def gradient(*xs):
        jac = jacobian(scalar, xs, create_graph=True)
        if strict:
            for i, j in enumerate(jac):
                if not j.requires_grad:
                    raise RuntimeError(
                        "While computing the hessian, found that the jacobian of the "
                        f"user-provided function with respect to input {i} is independent of "
                        "the input. This is not allowed in strict mode. You should ensure that "
                        "your function is twice differentiable and that the jacobian depends "
                        "on the inputs (this would be violated by a linear function for "
                        "example)."
                    )
        return jac

    res = jacobian(
        gradient, inputs, create_graph, strict, vectorize, strategy=outer_jacobian_strategy
    )
    return _untuple(res, (inputs_tuple, inputs_tuple))


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T H)`` for a scalar ``func``: the gradient of ``g . v``.

    >>> clgrad.autograd.functional.vhp(
    ...     lambda x: (x ** 3).sum(), clgrad.tensor([1.0, 2.0]), clgrad.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), H v)`` for a scalar ``func`` (H is symmetric: ``vhp``'s numbers,
    computed by the double-backward trick as PyTorch does).

    >>> clgrad.autograd.functional.hvp(
    ...     lambda x: (x ** 3).sum(), clgrad.tensor([1.0, 2.0]), clgrad.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(name, func, inputs, v, create_graph, strict):
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _prepare(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", name)[1], create_graph, need_graph=False)
            _check_v(v, inputs, inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element."
            )
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", name
        )
        _check_outputs(outputs, strict)
        if outputs_tuple:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {name} should contain a single "
                "element"
            )
        if v is None:
            v = (inputs[0].new_ones(inputs[0].shape),)
        g = _grads(outputs, inputs, create_graph=True)
        g = _zeros_where_none(g, inputs, strict, "output")
        with set_grad_enabled(create_graph or is_grad_enabled()):
            if name == "vhp":  # v^T H: the gradient of g . v
                res = _grads(g, inputs, v, create_graph)
            else:  # H v: the gradient in u of (the gradient in x of g . u) . v, u = 0
                us = tuple(x.new_zeros(x.shape).requires_grad_(True) for x in inputs)
                back = _grads(g, inputs, us, create_graph=True)
                pairs = [(b, w) for b, w in zip(back, v) if b is not None]
                res = (None,) * len(us)
                if pairs:
                    res = _grads([b for b, _ in pairs], us, [w for _, w in pairs], create_graph)
            res = _zeros_where_none(res, inputs, strict, "jacobian")
    return (
        _untuple(_finish(outputs, create_graph), outputs_tuple),
        _untuple(_finish(res, create_graph), inputs_tuple),
    )
