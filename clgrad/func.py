"""``clgrad.func``: ``torch.func``'s function transforms on clgrad's autograd: ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian``,
``vmap``, ``functionalize``, and ``functional_call`` / ``stack_module_state`` /
``replace_all_batch_norm_modules_`` to use them on modules.

Arguments are pytrees: tensors inside tuples, lists and dicts (a module's parameter dict, as
``functional_call`` takes it). The transforms compose (``vmap(grad(f))`` gives per-sample
gradients, ``jacfwd(jacrev(f))`` a Hessian): an inner one keeps the graph an outer one needs.
``vmap`` maps by running ``func`` once per index of the mapped dim and stacking the results
(PyTorch traces a batched program instead: the numbers are the same, the time is a loop's);
``jacfwd`` takes the same reverse-mode passes as ``jacrev``.

>>> from clgrad.func import grad, vmap
>>> grad(lambda x: (x ** 3).sum())(clgrad.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> vmap(grad(lambda x: (x ** 3).sum()))(clgrad.tensor([[1.0], [2.0]]))
tensor([[ 3.],
        [12.]])
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ._torch_function import TorchFunctionMode
from .autograd.engine import grad as _autograd_grad
from .autograd.forward_ad import _check_tangent_size, _Dual, _tangent
from .autograd.function import _dual_levels, _transform_depth, _vmap_depth
from .autograd.grad_mode import enable_grad
from .nn.modules.normalization import _BatchNorm
from .nn.utils.stateless import functional_call
from .ops.creation import default_generator
from .ops.movement import stack
from .tensor import Tensor

__all__ = [
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]

# how many transforms are running: an inner one keeps the graph (an outer one differentiates
# its results), the outermost returns detached results unless its inputs required grad. (The
# list is autograd.function's: a custom Function applied under a transform is checked there.)
_depth = _transform_depth


# ---- pytrees -----------------------------------------------------------------------------------
def _flatten(tree) -> tuple[list, Any]:
    """The tensors of ``tree`` (tuples, lists and dicts of them) in order, and its structure."""
    if isinstance(tree, Tensor):
        return [tree], None
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub, spec = _flatten(item)
            leaves += sub
            specs.append((len(sub), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key, item in tree.items():
            sub, spec = _flatten(item)
            leaves += sub
            specs.append((key, len(sub), spec))
        return leaves, (dict, specs)
    return [], ("value", tree)


def _unflatten(leaves, spec):
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind == "value":
        return specs
    if kind is dict:
        out, at = {}, 0
        for key, n, sub in specs:
            out[key] = _unflatten(leaves[at : at + n], sub)
            at += n
        return out
    out, at = [], 0
    for n, sub in specs:
        out.append(_unflatten(leaves[at : at + n], sub))
        at += n
    return tuple(out) if kind is tuple else out


def _argnums(argnums, n: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


# ---- reverse mode ------------------------------------------------------------------------------
def _track(args, nums):
    """``args`` with each tensor of the differentiated arguments replaced by one that records:
    a differentiable alias where it already requires grad (an outer transform's input), a new
    leaf otherwise; the new tensors per argument; whether any input required grad."""
    args = list(args)
    tracked, outer = [], False
    for i in nums:
        leaves, spec = _flatten(args[i])
        new = []
        for x in leaves:
            outer = outer or x.requires_grad
            new.append(x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True))
        tracked.append(new)
        args[i] = _unflatten(new, spec)
    return args, tracked, outer


def _closes_over(outputs, tracked) -> bool:
    """Whether ``outputs`` depend on a tensor that requires grad besides the ``tracked``
    inputs (one ``func`` closes over): then, as in torch.func, the results stay differentiable
    with respect to it (the graph is kept, the results not detached)."""
    own = {id(x) for x in tracked}
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in own:
            return True
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _gradients(outputs, inputs, cotangents, keep_graph: bool):
    """Gradients of ``outputs`` (weighted by ``cotangents``) for every input: zeros where an
    input was not used, as torch.func gives them."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    grads = (None,) * len(inputs)
    if pairs:
        outs, cots = zip(*pairs)
        grads = _autograd_grad(
            list(outs), list(inputs), list(cots), True, keep_graph, allow_unused=True
        )
    return [x.new_zeros(x.shape) if g is None else g for g, x in zip(grads, inputs)]


def _finish(tree, keep_graph: bool):
    if keep_graph:
        return tree
    leaves, spec = _flatten(tree)
    return _unflatten([x.detach() for x in leaves], spec)


def _transform(fn):
    """Counts a transform's depth while ``fn`` runs."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        _depth[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _depth[0] -= 1

    return run


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of the scalar ``func`` with respect to the
    arguments ``argnums`` (an int, or a tuple: a tuple of gradients), as
    ``torch.func.grad_and_value``; with ``has_aux``, ``func`` returns ``(value, aux)`` and the
    value part is ``(value, aux)``.

    >>> from clgrad.func import grad_and_value
    >>> grad_and_value(lambda x: (x * x).sum())(clgrad.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """

    @_transform
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args), "grad_and_value")
        with enable_grad():
            args, tracked, outer = _track(args, nums)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}"
                )
            if out.ndim != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {out.ndim} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?"
                )
            flat = [x for xs in tracked for x in xs]
            keep = outer or _depth[0] > 1 or _closes_over([out], flat)
            grads = _gradients([out], flat, [out.new_ones(())], keep)
        per_arg, at = [], 0
        for i, xs in zip(nums, tracked):
            _, spec = _flatten(args[i])
            per_arg.append(_unflatten(grads[at : at + len(xs)], spec))
            at += len(xs)
        result = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = _finish(out, keep)
        if has_aux:
            return result, (value, _finish(aux, keep))
        return result, value

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of the scalar ``func`` with respect to the arguments
    ``argnums``, as ``torch.func.grad`` (with ``has_aux``: ``(gradient, aux)``).

    >>> from clgrad.func import grad
    >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(clgrad.ones(2), clgrad.tensor([3.0, 4.0]))
    (tensor([3., 4.]), tensor([1., 1.]))
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``, where ``vjp_fn(cotangents)`` gives the tuple of the
    vector-Jacobian products with respect to each primal (callable many times), as
    ``torch.func.vjp``; with ``has_aux``, a third element: ``func``'s aux output.

    >>> from clgrad.func import vjp
    >>> out, vjp_fn = vjp(lambda x: x ** 2, clgrad.tensor([1.0, 3.0]))
    >>> vjp_fn(clgrad.ones(2))
    (tensor([2., 6.]),)
    """
    _depth[0] += 1
    try:
        with enable_grad():
            args, tracked, outer = _track(primals, range(len(primals)))
            out = func(*args)
            aux = None
            if has_aux:
                out, aux = out
            out_leaves, out_spec = _flatten(out)
            for o in out_leaves:
                if not _float(o):
                    raise RuntimeError(
                        "vjp(f, ...): All outputs of f must be floating-point or complex "
                        f"Tensors, got Tensor with dtype {o.dtype}"
                    )
            flat = [x for xs in tracked for x in xs]
            keep = outer or _depth[0] > 1 or _closes_over(out_leaves, flat)
    finally:
        _depth[0] -= 1

    def vjp_fn(cotangents):
        cot_leaves, _ = _flatten(cotangents)
        if len(cot_leaves) != len(out_leaves):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                "of outputs to the function"
            )
        with enable_grad():
            grads = _gradients(out_leaves, flat, cot_leaves, keep or _depth[0] > 0)
        result, at = [], 0
        for i, xs in enumerate(tracked):
            _, spec = _flatten(args[i])
            result.append(_finish(_unflatten(grads[at : at + len(xs)], spec), keep))
            at += len(xs)
        return tuple(result)

    if has_aux:
        return _finish(out, keep), vjp_fn, _finish(aux, keep)
    return _finish(out, keep), vjp_fn


# ---- forward mode, by the double-backward trick ----------------------------------------------
def _jvp_check(primals, tangents, name: str):
    """torch.func's checks of ``jvp``'s arguments; the primal and tangent leaves."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{name}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    p_leaves, p_spec = _flatten(primals)
    if not p_leaves:
        raise RuntimeError(f"{name}: Expected primals to contain at least one Tensor.")
    if tangents is None:
        return p_leaves, None
    t_leaves, t_spec = _flatten(tangents)
    if not isinstance(tangents, tuple) or p_spec != t_spec:
        raise RuntimeError(
            f"{name}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be."
        )
    for p, t in zip(p_leaves, t_leaves):
        _check_tangent_size(p, t)
    return p_leaves, t_leaves


def _check_primal_types(primals, name):
    for x in primals:
        leaves, spec = _flatten(x)
        if not leaves:
            raise RuntimeError(f"{name}: Expected primals to only contain Tensors, got {type(x)}")


def _linearized(func, primals, has_aux, name, tangents=None):
    """(outputs tree, their leaves, aux, keep, a function tangent leaves -> J t leaves): the
    graph of ``u -> (u^T J)`` is recorded once, and ``J t`` is its gradient with respect to
    ``u`` weighted by ``t`` (``J`` is linear in ``u``, so no second pass depends on ``t``).

    With ``tangents`` known (``jvp``), ``func`` runs in a forward-AD level whose duals are the
    tracked inputs: a custom Function there answers with its ``jvp``, as PyTorch's, and then
    the outputs' tangents are read over that level (detached: that Function's ``jvp`` ran
    without recording)."""
    _check_primal_types(primals, name)
    _depth[0] += 1
    level = None
    try:
        with enable_grad():
            args, tracked, outer = _track(primals, range(len(primals)))
            keep = outer or _depth[0] > 1
            if tangents is not None:
                flat = [x for xs in tracked for x in xs]
                level = [_Dual(x, x, t.detach()) for x, t in zip(flat, tangents)]
                n_inputs = len(level)
                _dual_levels.append(level)
            try:
                out = func(*args)
            finally:
                if level is not None:  # (by identity: levels hold tensors, == compares them)
                    del _dual_levels[[k for k, lv in enumerate(_dual_levels) if lv is level][0]]
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        f"{name}: output of function f should be a tuple: (output, aux) if "
                        "has_aux is True"
                    )
                out, aux = out
            out_leaves, _ = _flatten(out)
            not_tensor = _flatten_strict(out)
            if not_tensor is not None:
                raise RuntimeError(
                    f"{name}: expected f(*primals) to return only tensors, got unsupported "
                    f"type {type(not_tensor)}"
                )
            flat_in = [x for xs in tracked for x in xs]
            if level is not None and len(level) > n_inputs:  # a Function's jvp gave tangents

                def by_level(_):
                    found = [_tangent(o, level) if _float(o) else None for o in out_leaves]
                    return [
                        o.new_zeros(o.shape) if t is None else t for t, o in zip(found, out_leaves)
                    ]

                return out, aux, keep, by_level
            # an integer output has no tangent to read (zeros of its dtype, as torch.func's)
            us = [
                o.new_zeros(o.shape).requires_grad_(True) if _float(o) else None for o in out_leaves
            ]
            pairs = [(o, u) for o, u in zip(out_leaves, us) if u is not None and o.requires_grad]
            vjps = [None] * len(flat_in)
            if pairs:
                outs, cots = zip(*pairs)
                vjps = _autograd_grad(
                    list(outs), flat_in, list(cots), True, True, allow_unused=True
                )
    finally:
        _depth[0] -= 1

    def apply(tangent_leaves):
        used = [(g, t) for g, t in zip(vjps, tangent_leaves) if g is not None]
        result = [None] * len(us)
        live = [u for u in us if u is not None]
        if used and live:
            gs, ts = zip(*used)
            with enable_grad():
                found = iter(
                    _autograd_grad(
                        list(gs), live, list(ts), True, keep or _depth[0] > 0, allow_unused=True
                    )
                )
            result = [None if u is None else next(found) for u in us]
        return [o.new_zeros(o.shape) if r is None else r for r, o in zip(result, out_leaves)]

    return out, aux, keep, apply


def _float(t) -> bool:
    """Whether ``t`` has tangents and cotangents: a floating-point or complex tensor."""
    return t.dtype.category >= 2


def _flatten_strict(tree):
    """The first leaf of ``tree`` that is not a tensor (None where every leaf is one)."""
    if isinstance(tree, Tensor):
        return None
    if isinstance(tree, (tuple, list)):
        items = tree
    elif isinstance(tree, dict):
        items = tree.values()
    else:
        return tree
    for item in items:
        bad = _flatten_strict(item)
        if bad is not None:
            return bad
    return None


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product, as ``torch.func.jvp``
    (pytrees of tensors; with ``has_aux``, ``func`` returns ``(output, aux)`` and aux comes
    third). clgrad has no forward-mode AD: it is the gradient, with respect to a cotangent
    ``u``, of ``u^T J`` (two reverse passes; every clgrad op's backward is differentiable),
    except through a custom ``autograd.Function``, which answers with its ``jvp`` as in
    PyTorch (one without a ``jvp`` raises NotImplementedError).

    >>> from clgrad.func import jvp
    >>> jvp(lambda x: x ** 2, (clgrad.tensor([1.0, 3.0]),), (clgrad.ones(2),))
    (tensor([1., 9.]), tensor([2., 6.]))
    """
    p_leaves, t_leaves = _jvp_check(primals, tangents, "jvp(f, primals, tangents)")
    out, aux, keep, apply = _linearized(
        func, primals, has_aux, "jvp(f, primals, tangents)", t_leaves
    )
    out_leaves, spec = _flatten(out)
    result = (_finish(out, keep), _finish(_unflatten(apply(t_leaves), spec), keep))
    return (*result, _finish(aux, keep)) if has_aux else result


def linearize(func: Callable, *primals) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is ``J @ tangents`` at these
    primals, callable many times, as ``torch.func.linearize`` (the graph is recorded once).

    >>> from clgrad.func import linearize
    >>> out, jvp_fn = linearize(lambda x: x.sin(), clgrad.zeros(2))
    >>> jvp_fn(clgrad.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    _jvp_check(primals, None, "linearize")
    out, _, keep, apply = _linearized(func, primals, False, "linearize")
    _, spec = _flatten(out)

    def jvp_fn(*tangents):
        _, t_leaves = _jvp_check(primals, tangents, "linearize")
        return _finish(_unflatten(apply(t_leaves), spec), keep)

    return _finish(out, keep), jvp_fn


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None) -> Callable:
    """A function returning the Jacobian of ``func`` with respect to the arguments ``argnums``
    by reverse mode (one pass per output element), as ``torch.func.jacrev``: for an output of
    shape ``O`` and an argument of shape ``I``, shape ``O + I``.

    >>> from clgrad.func import jacrev
    >>> jacrev(lambda x: x ** 2)(clgrad.tensor([1.0, 3.0]))
    tensor([[2., 0.],
            [0., 6.]])
    """
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """``torch.func.jacfwd``'s Jacobian (the same numbers as ``jacrev``, computed the same way
    here: clgrad has no forward-mode AD).

    >>> from clgrad.func import jacfwd
    >>> jacfwd(lambda x: x.sin())(clgrad.zeros(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _jacobian(func, argnums, has_aux, "jacfwd")


def _jacobian(func, argnums, has_aux, name):
    @_transform
    def wrapper(*args):
        nums = _argnums(argnums, len(args), name)
        with enable_grad():
            args, tracked, outer = _track(args, nums)
            # PyTorch's jacfwd runs func under vmap (of jvp): a custom Function in it needs a
            # vmap rule there, as under vmap here
            mapped = name == "jacfwd"
            _vmap_depth[0] += mapped
            try:
                out = func(*args)
            finally:
                _vmap_depth[0] -= mapped
            aux = None
            if has_aux:
                out, aux = out
            out_leaves, out_spec = _flatten(out)
            flat = [x for xs in tracked for x in xs]
            keep = outer or _depth[0] > 1 or _closes_over(out_leaves, flat)
            # per output leaf, per input leaf: rows of the Jacobian, one backward per element
            jac = []
            for o in out_leaves:
                rows = [[] for _ in flat]
                elements = o.reshape(-1)
                for j in range(elements.numel()):
                    for k, g in enumerate(_gradients([elements[j]], flat, [None], keep)):
                        rows[k].append(g)
                jac.append(
                    [
                        (stack(r) if r else x.new_zeros((0, *x.shape))).reshape(
                            (*o.shape, *x.shape)
                        )
                        for r, x in zip(rows, flat)
                    ]
                )
        jac = _finish(jac, keep)

        def per_argument(row):
            result, at = [], 0
            for i, xs in zip(nums, tracked):
                _, spec = _flatten(args[i])
                result.append(_unflatten(row[at : at + len(xs)], spec))
                at += len(xs)
            return result[0] if isinstance(argnums, int) else tuple(result)

        per_output = [per_argument(row) for row in jac]
        result = per_output[0] if out_spec is None else _unflatten(per_output, out_spec)
        return (result, _finish(aux, keep)) if has_aux else result

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of the scalar ``func`` with respect to ``argnums``: ``jacfwd(jacrev(func))``,
    as ``torch.func.hessian``.

    >>> from clgrad.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(clgrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap --------------------------------------------------------------------------------------
def vmap(
    func: Callable,
    in_dims=0,
    out_dims=0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` mapped over a dim of its inputs, as ``torch.func.vmap``: ``in_dims`` (an int or
    None for every argument, or one per argument, None where it is not mapped) picks the mapped
    dim of each tensor, ``out_dims`` where it goes in the outputs. It runs ``func`` once per
    index and stacks the results. ``randomness``: ``"error"`` (a random op inside raises, as in
    PyTorch), ``"same"`` (each call draws the same numbers) or ``"different"``.

    An output whose out_dims is None must not derive from the mapped inputs (ValueError, as
    torch's, whose output would be a BatchedTensor there): while such a vmap runs, the results
    of clgrad's functions, methods and operators applied to the mapped slices are tracked.
    (Unlike torch's, an inner vmap's out_dims=None accepts a value derived only from an
    enclosing vmap's mapped inputs: those are the outer vmap's to track.)

    >>> from clgrad.func import vmap
    >>> vmap(lambda row, w: (row * w).sum(), in_dims=(0, None))(
    ...     clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), clgrad.tensor([1.0, 10.0]))
    tensor([21., 43.])
    """
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = (in_dims,) * len(args) if not isinstance(in_dims, (tuple, list)) else in_dims
        if len(dims) != len(args):
            raise ValueError(
                f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                f"structure of `inputs`. in_dims has structure {len(dims)} but inputs has "
                f"structure {len(args)}."
            )
        mapped, sizes = [], []
        for arg, dim in zip(args, dims):
            leaves, spec = _flatten(arg)
            leaf_dims = _in_dims_of(arg, dim, in_dims)
            for x, d in zip(leaves, leaf_dims):
                if d is None:
                    continue
                if not -x.ndim <= d < x.ndim:
                    raise ValueError(
                        f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                        f"an input but the input is of type {type(x)} with {x.ndim} dims"
                    )
                sizes.append(x.shape[d])
            leaf_dims = [None if d is None else d % x.ndim for x, d in zip(leaves, leaf_dims)]
            mapped.append((leaves, spec, leaf_dims))
        if not sizes:
            raise ValueError(
                f"vmap(f, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                "Tensor that is mapped over (in_dims not None)"
            )
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sizes} for the mapped dimension"
            )
        n = sizes[0]
        # an output left unbatched (out_dims None) must not derive from the mapped inputs:
        # torch's would be a BatchedTensor there and raises; the tracker tells which did
        tracker = _BatchedTracker() if _has_none(out_dims) else None

        def call(i):
            """func on the i-th slice of every mapped input (i None: on zeros of a slice's
            shape, for the output shapes of an empty batch)."""
            sliced = []
            for leaves, spec, leaf_dims in mapped:
                new = []
                for x, d in zip(leaves, leaf_dims):
                    if d is None:
                        new.append(x)
                        continue
                    if i is None:
                        new.append(x.select(d, 0) if x.shape[d] else _slice_zeros(x, d))
                    else:
                        new.append(x.select(d, i))
                    if tracker is not None:
                        tracker.mark(new[-1])
                sliced.append(_unflatten(new, spec))
            if tracker is None:
                return func(*sliced, **kwargs)
            with tracker:
                return func(*sliced, **kwargs)

        state = default_generator.get_state()
        results = []
        _vmap_depth[0] += 1  # (a custom Function applied meanwhile needs a vmap rule)
        try:
            for i in range(n):
                if randomness == "same":
                    default_generator.set_state(state)
                results.append(call(i))
                if randomness == "error" and not default_generator.get_state().equal(state):
                    default_generator.set_state(state)
                    raise RuntimeError(
                        "vmap: called random operation while in randomness error mode. Please "
                        "either use the 'same' or 'different' randomness flags on vmap or "
                        "perform the randomness operation out of vmap"
                    )
            empty = n == 0  # the output shapes from one call on zeros of a slice's shape
            if empty:
                results = [call(None)]
        finally:
            _vmap_depth[0] -= 1
        name = getattr(func, "__name__", repr(func))
        return _batched(results, out_dims, out_dims, name, empty, tracker)

    return wrapper


def _has_none(dims) -> bool:
    """Whether ``out_dims`` leaves some output unbatched (None, itself or inside a tuple)."""
    if isinstance(dims, (tuple, list)):
        return any(_has_none(d) for d in dims)
    return dims is None


class _BatchedTracker(TorchFunctionMode):
    """Marks the tensors a vmapped call derives from its mapped inputs: the slices, and the
    results of every clgrad function, method or operator that takes a marked tensor (an
    in-place one marks the tensor it writes). That is the data flow that makes a
    BatchedTensor in torch's vmap; this loop-based vmap has none, so the out_dims=None check
    reads the marks. Only what goes through clgrad's dispatched entry points is seen: a value
    that leaves as a Python number (``.item()``, which torch's vmap refuses) and comes back
    is not marked. Used only when out_dims has a None (a mode costs each op a dispatch)."""

    def __init__(self):
        super().__init__()
        # by id, weakly: a marked tensor that dies must not mark a new one given its id
        self._marked: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def mark(self, tree) -> None:
        for t in _flatten(tree)[0]:
            self._marked[id(t)] = t

    def is_batched(self, t) -> bool:
        return self._marked.get(id(t)) is t

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if any(self.is_batched(t) for t in _flatten([list(args), kwargs])[0]):
            self.mark(out)
        return out


def _in_dims_of(tree, dim, in_dims) -> list:
    """The mapped dim of each tensor of one argument ``tree`` (``_flatten``'s order): ``dim`` an
    int or None for all of them, or a tuple, list or dict shaped as the argument (torch's
    in_dims as a prefix of the inputs' pytree: ``in_dims=({"a": 0, "b": None},)``)."""
    if dim is None or isinstance(dim, int):
        return [dim] * len(_flatten(tree)[0])
    if isinstance(dim, (tuple, list)) and isinstance(tree, (tuple, list)) and len(dim) == len(tree):
        return [d for sub, sub_dim in zip(tree, dim) for d in _in_dims_of(sub, sub_dim, in_dims)]
    if isinstance(dim, dict) and isinstance(tree, dict) and dim.keys() == tree.keys():
        return [d for key, sub in tree.items() for d in _in_dims_of(sub, dim[key], in_dims)]
    raise ValueError(
        f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
        "structure of `inputs`."
    )


def _batched(samples, dims, out_dims, name, empty, tracker=None):
    """vmap's outputs: the per-sample ``samples`` (each an output tree) stacked along
    ``dims`` (an int, None for an output that is not batched, or a tuple matching a tuple
    output, as torch's out_dims prefix). An output under None that derives from the mapped
    inputs (``tracker``'s marks) raises ValueError, as torch's BatchedTensor there."""
    first = samples[0]
    if dims is None:
        if tracker is not None and any(
            tracker.is_batched(t) for sample in samples for t in _flatten(sample)[0]
        ):
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return first
    if isinstance(dims, (tuple, list)):
        if not isinstance(first, (tuple, list)) or len(first) != len(dims):
            raise ValueError(
                f"vmap(f, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                "the structure of `outputs`."
            )
        parts = [
            _batched([s[k] for s in samples], d, out_dims, name, empty, tracker)
            for k, d in enumerate(dims)
        ]
        return type(first)(parts) if not hasattr(first, "_fields") else type(first)(*parts)
    bad = _flatten_strict(first)
    if bad is not None or first is None:
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(bad)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    per_sample = [_flatten(s) for s in samples]
    spec = per_sample[0][1]
    if empty:
        outs = [x.new_zeros((0, *x.shape)) for x in per_sample[0][0]]
    else:
        outs = [
            stack([leaves[k] for leaves, _ in per_sample]) for k in range(len(per_sample[0][0]))
        ]
    return _unflatten([o if dims == 0 else o.movedim(0, dims) for o in outs], spec)


def _slice_zeros(x, d):
    shape = list(x.shape)
    del shape[d]
    return x.new_zeros(shape)


def stack_module_state(models: Sequence) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of ``models`` (of one architecture) stacked along a new
    first dim, as ``torch.func.stack_module_state``: dicts for ``functional_call`` under
    ``vmap`` (an ensemble run as one). The stacked parameters are new leaves that require
    grad where the models' do.

    >>> from clgrad.func import stack_module_state
    >>> params, buffers = stack_module_state([clgrad.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].requires_grad
    (clgrad.Size([4, 2, 3]), True)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not all(m.training == models[0].training for m in models):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    names = [n for n, _ in models[0].named_parameters()]
    params = {
        n: stack([dict(m.named_parameters())[n].detach() for m in models]).requires_grad_(
            dict(models[0].named_parameters())[n].requires_grad
        )
        for n in names
    }
    buffers = {
        n: stack([dict(m.named_buffers())[n] for m in models]) for n, _ in models[0].named_buffers()
    }
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Makes every batch norm in ``root`` (``root`` included) normalize with its batch's
    statistics alone, in place, as ``torch.func.replace_all_batch_norm_modules_``: its
    ``running_mean``, ``running_var`` and ``num_batches_tracked`` become None and
    ``track_running_stats`` False, so that no buffer is updated under ``vmap`` (an ensemble or
    per-sample gradients). Returns ``root``.

    >>> from clgrad.func import replace_all_batch_norm_modules_
    >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 4), clgrad.nn.BatchNorm1d(4))
    >>> net is replace_all_batch_norm_modules_(net)
    True
    >>> net[1].running_mean is None, net[1].track_running_stats
    (True, False)
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``torch.func.functionalize``'s signature and results: a function with ``func``'s
    semantics. torch's rewrites the in-place ops (and with ``remove="mutations_and_views"`` the
    views) of the program it traces into out-of-place ones, for backends and compilers that
    cannot express mutation; clgrad runs its ops eagerly and has no such program to rewrite,
    so the function returned runs ``func`` itself. What is observable matches torch's: the
    same outputs, in-place changes to the inputs land on the inputs (torch copies them back),
    and the outputs alias what torch's do: none aliases an input that ``func`` wrote to (such
    an output is returned as a copy), and with ``remove="mutations_and_views"`` no output is
    a view (one is returned as a copy), though an input returned unchanged is that input.

    >>> from clgrad.func import functionalize
    >>> def f(a):
    ...     b = a + 1
    ...     b.view(-1).add_(1)
    ...     return b
    >>> functionalize(f)(clgrad.zeros(2))
    tensor([2., 2.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations': all inplace and out= operators will "
            "be removed from the program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        inputs = _flatten([list(args), kwargs])[0]
        versions = [x._version for x in inputs]
        out = func(*args, **kwargs)
        # torch's outputs never alias an input the function wrote to (it copies the new
        # values back into the input, the outputs are its own); views only without
        # remove="mutations_and_views"
        written = {id(x._storage) for x, v in zip(inputs, versions) if x._version != v}
        given = {id(x) for x in inputs}

        def own(x):
            if id(x._storage) in written:
                return x.clone()
            if remove == "mutations_and_views" and id(x) not in given and x._base is not None:
                return x.clone()
            return x

        return _map_tensors(out, own)

    return wrapped


def _map_tensors(tree, fn):
    """``tree`` with each tensor ``t`` replaced by ``fn(t)``, its tuples (named ones too), lists
    and dicts rebuilt as they were."""
    if isinstance(tree, Tensor):
        return fn(tree)
    if isinstance(tree, dict):
        return type(tree)((k, _map_tensors(v, fn)) for k, v in tree.items())
    if isinstance(tree, (tuple, list)):
        items = [_map_tensors(v, fn) for v in tree]
        if isinstance(tree, tuple) and hasattr(tree, "_fields"):
            return type(tree)(*items)
        return type(tree)(items)
    return tree
