"""One declaration per op.

An elementwise op or a reduction is declared once, as a decorated Python function: the
decorator takes the op's kernel (an OpenCL C expression, or a reduction's neutral element and
combine expression), its NumPy reference, its dtype rule and its gradient written with Tensor
ops; the function itself is the op's public face (its name, signature, docstring and
example) and says how its arguments reach the kernel by calling ``apply``. From that one
entry come the autograd ``Function``, ``clgrad.<name>``, ``Tensor.<name>``, the in-place
``Tensor.<name>_`` (``inplace=True``), the kernel on every backend, and a torch comparison in
the test suite.

Gradient formulas name what they need, as PyTorch's ``derivatives.yaml`` does: ``grad``
(of the output), ``result`` (the output) and the op's own parameter names. The machinery saves
exactly those, reduces each input's gradient to the input's shape and dtype, and skips the
formulas of inputs that need no gradient. A Python number operand reaches the kernel as a scalar
argument and a formula as the number itself.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function, apply_new_output, needs_recording
from ..backend.base import COPY, FILL, MapKernel, ReduceKernel, bundle
from ..tensor import Tensor, contiguous_strides, wrap_dim
from .autocast import if_listed
from .core import (
    COMPLEX_HOOKS,
    INTO,
    PYTHON_NUMBERS,
    SCALAR_TYPE_NAMES,
    ComplexOperands,
    broadcast_shapes,
    check_out,
    check_scalar,
    int_dim,
    launch,
    launch_kept,
    launch_kept_into,
    layout_key,
    normalize_dims,
    numpy_names,
    overflow_error,
    overflows,
    sum_to,
    write_out,
)
from .inplace import inplace, recording

ELEMENTWISE: dict[str, ElementwiseOp] = {}
REDUCTIONS: dict[str, ReductionOp] = {}

ALL_DTYPES = (
    D.float32,
    D.float64,
    D.float16,
    D.bfloat16,
    D.int64,
    D.int32,
    D.int16,
    D.int8,
    D.uint8,
    D.bool_,
)
INTEGRAL_DTYPES = (D.int64, D.int32, D.int16, D.int8, D.uint8, D.bool_)
NUMERIC_DTYPES = ALL_DTYPES[:-1]  # every dtype but bool
FLOAT_DTYPES = (D.float32, D.float64, D.float16, D.bfloat16)


# ---- dtype rules: the promoted operand dtype -> (result dtype, compute dtype) ------------------
def same(dt):
    """The result has the promoted dtype of the operands (add, mul, maximum, ...)."""
    return dt, dt


def floating(dt):
    """An integer or bool input gives the default float (exp, div, atan2, ...)."""
    f = D.to_float(dt)
    return f, f


def keep_dtype(dt):
    """The input's dtype (amax, amin; a checked scalar's type)."""
    return dt


def predicate(dt):
    """A bool result computed in the operands' dtype (comparisons, isnan, ...)."""
    return D.bool_, dt


def integral(dt):
    """Bool and integer operands only (bitwise ops)."""
    if dt.is_floating_point:
        raise NotImplementedError(f"this op is only defined for bool and integer tensors, got {dt}")
    return dt, dt


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _any_needs(operands, indices) -> bool:
    """Whether one of ``operands[indices]`` (within the operands given) needs a gradient."""
    for j in indices:
        if j < len(operands):
            x = operands[j]
            if isinstance(x, Tensor) and x.requires_grad:
                return True
    return False


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _grad_for(meta, g):
    """``g`` reduced to the shape and cast to the dtype of an input (its meta: (shape, dtype))."""
    shape, dt = meta
    g = sum_to(g, shape)
    return g if g.dtype is dt else g.to(dt)


def _formula(fn: Callable | None, names: tuple) -> tuple | None:
    """``(fn, the names it reads)``; the names must be ``grad``, ``result`` or ``names``."""
    if fn is None:
        return None
    wanted = tuple(inspect.signature(fn).parameters)
    unknown = set(wanted) - {"grad", "result", *names}
    if unknown:
        raise TypeError(f"gradient formula reads unknown names {sorted(unknown)}")
    return fn, wanted


def _function_class(
    name: str, forward: Callable, backward: Callable, operands=0, node_name=None
) -> type:
    """The autograd ``Function`` of a declared op (its node is ``<Name>Backward0``, or
    ``node_name``); its first ``operands`` arguments have an edge in the graph even as Python
    numbers (PyTorch's wrapped scalars: ``x * 2`` has two)."""
    return type(
        _camel(name),
        (Function,),
        {
            "forward": staticmethod(forward),
            "backward": staticmethod(backward),
            "number_edges": operands,
            "node_name": node_name,
            "__module__": __name__,
            "__qualname__": _camel(name),
        },
    )


def _public(
    body: Callable,
    apply: Callable,
    check: Callable | None = None,
    out: bool = False,
    overlap: str | None = None,
):
    """The op's public function: ``body`` with its first parameter (``apply``) bound;
    ``check(args)`` first where the op doesn't take every dtype (before the body's own
    argument handling: PyTorch checks dtypes first). NumPy's ``axis``/``keepdims`` name
    ``dim``/``keepdim``, as in PyTorch; ``out``: the function (not the method) takes
    PyTorch's ``out=`` keyword (``core.write_out``), refused over an argument's memory as
    ``core.check_out``'s ``overlap`` says."""
    name = body.__name__
    if out:

        @functools.wraps(body)
        def public(*args, out=None, **kwargs):
            if kwargs:
                kwargs = numpy_names(name, kwargs)
            if out is not None:
                check_out(name, out, args, kwargs, overlap)
            if check is not None:
                check(args, kwargs)
            result = body(apply, *args, **kwargs)
            return result if out is None else write_out(out, result)

    else:

        @functools.wraps(body)
        def public(*args, **kwargs):
            if kwargs:
                kwargs = numpy_names(name, kwargs)
            if check is not None:
                check(args, kwargs)
            return body(apply, *args, **kwargs)

    sig = inspect.signature(body)
    public.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
    return if_listed(public, name)  # on autocast's lists: its arguments cast inside a region


# ---- elementwise ------------------------------------------------------------------------------
class ElementwiseOp:
    """A declared elementwise op; see ``elementwise``."""

    saves_numbers = False  # (``elementwise``'s: set by the declaration)

    def __init__(
        self,
        body,
        kernel,
        result,
        grads,
        inplace,
        dtypes,
        domain,
        mask_first,
        checks,
        variants=None,
        takes_out=True,
        nodes=None,
    ):
        exact, scalar_type, refuse, scalars, tensors, shortcut, dtype_check = checks
        self.name = body.__name__
        self.kernel = kernel
        # operand 1's Python number -> the kernel that replaces ``kernel`` for it (``kernel_for``)
        # number -> MapKernel, and number -> the input dtypes its variant is for (else all)
        self.variants = {k: v[0] for k, v in (variants or {}).items()}
        self.variant_dtypes = {k: v[1] for k, v in (variants or {}).items() if v[1] is not None}
        self.result = result
        self.dtypes = dtypes
        # checked on every call only where the op doesn't take every dtype
        self.restricted = None if set(dtypes) == set(ALL_DTYPES) else frozenset(dtypes)
        self.domain = domain
        self.inplace = inplace
        self.mask_first = mask_first
        self.refuse = refuse
        self.dtype_check = dtype_check
        params = [
            p
            for p in list(inspect.signature(body).parameters.values())[1:]
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in scalars
        ]
        self.arity = len(params)
        self.params = tuple(p.name for p in params)
        # numbers that follow the operands into the kernel (and the formulas), never operands
        self.scalars = tuple(scalars)
        # an operand that may be None (clamp's bounds); None for any other is a TypeError
        self.optional = frozenset(i for i, p in enumerate(params) if p.default is None)
        self.exact = tuple(self.params.index(n) for n in exact)
        self.tensors = tuple(self.params.index(n) for n in tensors)
        self.scalar_type = scalar_type
        self.shortcut = shortcut
        self._dtypes = {}  # dtypes_of's decisions
        # the keys of operands that passed _check_operands' checks -> the scalar type their
        # ``exact`` numbers must fit (None where the op has no such check)
        self._passed = {}
        if grads is not None and not isinstance(grads, tuple):
            grads = (grads,)
        self.grads = (
            None if grads is None else tuple(_formula(g, self.params + self.scalars) for g in grads)
        )
        self.differentiable = grads is not None
        self.function = self._function() if self.differentiable else None
        self._variants = {}
        self.apply = self.function.apply if self.differentiable else self.run
        if nodes is not None and self.differentiable:
            self.apply = self._overloads(nodes)
        checked = self.restricted is not None or bool(exact) or bool(tensors) or bool(dtype_check)
        if self.arity == 1:
            check = self._check_unary
        else:
            check = self._check_operands if checked else None
        self.public = _public(body, self.apply, check, out=takes_out, overlap="partial")
        self.method = _public(body, self.apply, check)
        self.operator = _operator(body, self.apply, check) if self.arity == 2 else None
        self.inplace_method = _inplace_method(body, self, checked) if inplace else None

    def _check_unary(self, args, kwargs=None):
        """A unary op's input must be a tensor: TypeError as PyTorch's argument parser, not
        an AttributeError from inside the op."""
        x = args[0] if args else (kwargs or {}).get("input")
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{self.name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(x).__name__}"
            )
        if self.restricted is not None:
            self._check_dtype(x.dtype)

    def _check_operands(self, args, kwargs=None, out=None):
        """PyTorch's checks in its order, before the body runs: the argument types (its
        parser's TypeError), the broadcast shape, for an in-place op (``out``) that ``out``
        holds the result's shape and dtype (RuntimeError), then the dtype the kernels take
        (NotImplementedError) and, for ``exact`` ops, that each Python number fits it."""
        # Every check but ``exact``'s reads only the operands' dtypes, shapes and number types
        # (and the default float dtype): operands like ones that passed before pass again.
        key = None
        if not kwargs and len(args) == self.arity:
            key = [D._default_float, None if out is None else (out.dtype, out._shape)]
            for x in args:
                if isinstance(x, Tensor):
                    key.append((x.dtype, x._shape))
                elif type(x) in PYTHON_NUMBERS:
                    key.append(type(x))
                else:
                    key = None
                    break
        if key is not None:
            key = tuple(key)
            passed = self._passed.get(key, False)
            if passed is not False:
                for x in args:  # the values, which the key does not hold
                    check_scalar(x)
                if passed is not None:  # the numbers among ``exact`` must fit the scalar type
                    for i in self.exact:
                        x = args[i]
                        if not isinstance(x, Tensor) and overflows(x, passed):
                            raise overflow_error(passed)
                return
        kwargs = kwargs or {}
        named = [
            args[i] if i < len(args) else kwargs.get(name) for i, name in enumerate(self.params)
        ]
        for i, x in enumerate(named):
            if x is None and i not in self.optional:
                got = ", ".join(type(x).__name__ for x in named)
                raise TypeError(
                    f"{self.name}() received an invalid combination of arguments - got ({got})"
                )
        for i in self.tensors:  # PyTorch's parser: these take tensors only
            if not isinstance(named[i], Tensor):
                raise TypeError(
                    f"{self.name}(): argument '{self.params[i]}' (position {i + 1}) must be "
                    f"Tensor, not {type(named[i]).__name__}"
                )
        for x in named:  # PyTorch's parser: before any check of dtypes
            check_scalar(x)
        operands = [x for x in named if x is not None]
        if not operands:
            return
        dt = self._promote(operands[1:] if self.mask_first else operands)
        shapes = [x._shape for x in operands if isinstance(x, Tensor)]
        shape = broadcast_shapes(*shapes)
        if out is not None:
            if shape != out._shape:
                raise RuntimeError(
                    f"output with shape {list(out._shape)} doesn't match the broadcast shape "
                    f"{list(shape)}"
                )
        if self.dtype_check is not None:  # the op's own, in place of these two
            self.dtype_check(*named, out=out)
        else:
            if out is not None:
                check_cast(dt, out.dtype)  # PyTorch's common dtype, before its kernel's
            if self.restricted is not None and not (self.shortcut and self.shortcut(*named)):
                self._check_dtype(dt)
        if self.exact:
            self._check_exact(named, dt)
        if key is not None:
            if len(self._passed) >= 4096:  # shapes that keep changing: start over
                self._passed.clear()
            self._passed[key] = self.scalar_type(dt) if self.exact else None

    def _check_exact(self, named, dt):
        """For ``exact`` ops: each Python number among them must fit ``dt``'s scalar type."""
        st = self.scalar_type(dt)
        for i in self.exact:
            x = named[i]
            if x is not None and not isinstance(x, Tensor):
                check_scalar(x)
                if overflows(x, st):
                    raise overflow_error(st)

    def _promote(self, operands):
        """The operands' promoted dtype; PyTorch's TypeError for an operand that is no tensor
        or number."""
        try:
            return D.result_type(*operands)
        except (TypeError, AttributeError, KeyError, ValueError):
            got = ", ".join(type(x).__name__ for x in operands)
            raise TypeError(
                f"{self.name}() received an invalid combination of arguments - got ({got})"
            ) from None

    def _check_dtype(self, dt):
        if dt in self.restricted:
            return
        if dt.category == 3:  # complex: ops.complex computes it (dtypes_of raises) or refuses
            if self.name in COMPLEX_HOOKS["supported"]:
                return
            COMPLEX_HOOKS["refuse"](self.name, dt)
        if self.refuse is not None:
            raise RuntimeError(self.refuse)
        raise NotImplementedError(
            f"\"{self.name}\" not implemented for '{SCALAR_TYPE_NAMES[dt.name]}'"
        )

    def dtypes_of(self, operands):
        """(result dtype, compute dtype or one per operand) for these operands; PyTorch's
        TypeError for an operand that is no tensor or number, NotImplementedError for a dtype
        the op doesn't take."""
        if self.scalars:
            operands = operands[: self.arity]
        # Promotion reads only each tensor's dtype and whether it is 0-d, each number's type
        # and the default float dtype: decided once per such key (a raise is never cached).
        key = [D._default_float]
        for x in operands:
            key.append((x.dtype, not x._shape) if isinstance(x, Tensor) else type(x))
        key = tuple(key)
        got = self._dtypes.get(key)
        if got is None:
            got = self._dtypes[key] = self._dtypes_uncached(operands)
        return got

    def _dtypes_uncached(self, operands):
        dt = self._promote(operands[1:] if self.mask_first else operands)
        if dt.category == 3:  # never cached: the op's entry point computes on the real view
            raise ComplexOperands(self.name)
        if self.restricted is not None:
            self._check_dtype(dt)
        if self.mask_first:
            out, ct = self.result(dt)
            return out, (D.bool_, ct, ct)
        return self.result(dt)

    def run(self, *operands, out=None):
        """The forward computation: the kernel over broadcast operands, no recording. A new
        output of operands of a layout seen before skips working out the dtypes and the launch
        (``core.layout_key``: they depend on nothing else)."""
        kernel = self.kernel_for(operands) if self.variants else self.kernel
        if out is not None:
            out_dt, ct = self.dtypes_of(operands)
            if out is operands[0]:  # in place (a Linear's bias): its launch kept per layout
                _launch_into(kernel, operands, out_dt, ct)
                return out
            return launch(kernel, operands, out_dt, ct, out=out)
        key = layout_key(kernel, operands)
        done = launch_kept(key, operands)
        if done is not None:
            return done
        try:
            out_dt, ct = self.dtypes_of(operands)
        except ComplexOperands:
            if self.differentiable:  # (its apply catches it, outside any recording)
                raise
            return COMPLEX_HOOKS["elementwise"](self, operands)
        return launch(kernel, operands, out_dt, ct, key=key)

    def kernel_for(self, operands) -> MapKernel:
        """The op's kernel, or its variant for operand 1's Python number (``elementwise``'s
        ``variants``: pow's ``x ** 2`` as a product, with no library call in the kernel)."""
        if self.variants and len(operands) > 1 and type(operands[1]) in (int, float):
            kernel = self.variants.get(operands[1], self.kernel)
            only = self.variant_dtypes.get(operands[1])
            if only is not None and getattr(operands[0], "dtype", None) not in only:
                return self.kernel
            return kernel
        return self.kernel

    def variant(self, node_name, edges=None):
        """The op's Function whose node PyTorch names ``node_name`` (one op, several
        overloads: ``x ** 2`` is PowBackward0, ``x ** y`` PowBackward1), with an edge for
        each of its first ``edges`` operands (all by default) even as Python numbers and for
        every tensor (PyTorch's Scalar arguments have none: ``x ** 2``'s node has one edge)."""
        key = (node_name, edges)
        if key not in self._variants:
            self._variants[key] = self._function(node_name, edges)
        return self._variants[key]

    def _overloads(self, nodes):
        """The apply that records each call in the node of PyTorch's overload its operands
        take (``nodes(*operands)``: ``(node name, edges)`` for ``variant``, None for the op's
        own node); in-place forms record through it too, as PyTorch's x.pow_(2) is
        PowBackward0."""
        own = self.function.apply

        def apply(*operands):
            node = nodes(*operands)
            if node is None:
                return own(*operands)
            return self.variant(*node).apply(*operands)

        return apply

    def _function(self, node_name=None, edges=None) -> type:
        op = self
        names = self.params + self.scalars
        reads = set()
        for g in self.grads:
            if g is not None:
                reads.update(g[1])
        saved = tuple(i for i, n in enumerate(names) if n in reads)
        # the operands whose formulas read each saved one: it is saved only when one of them
        # needs a gradient, as PyTorch's (x * w with w needing none saves w alone, so writing
        # into x afterwards is fine)
        saved_readers = tuple(
            tuple(j for j, g in enumerate(self.grads) if g is not None and names[i] in g[1])
            for i in saved
        )
        # the operands whose formula reads the result: it is saved only when one of them needs
        # a gradient (pow's exponent does; x ** 2 saves x alone, as PyTorch, so writing into
        # the power afterwards is fine)
        result_readers = tuple(
            i for i, g in enumerate(self.grads) if g is not None and "result" in g[1]
        )

        def forward(ctx, *operands):
            out = op.run(*operands)
            if ctx.recording:
                metas, numbers = [], []
                for x in operands:
                    if isinstance(x, Tensor):
                        # what a gradient needs of an input it does not read
                        metas.append((x._shape, x.dtype))
                        numbers.append(None)
                    else:
                        metas.append(None)
                        numbers.append(x)
                ctx.metas, ctx.numbers = metas, numbers
                kept = [
                    operands[i] if _is_tensor(operands[i]) and _any_needs(operands, js) else None
                    for i, js in zip(saved, saved_readers)
                ]
                if op.saves_numbers:  # (a second backward through them raises)
                    ctx.holds_number = any(
                        not _is_tensor(operands[i]) and _any_needs(operands, js)
                        for i, js in zip(saved, saved_readers)
                    )
                saves_result = False
                for i in result_readers:
                    x = operands[i]
                    if isinstance(x, Tensor) and x.requires_grad:
                        saves_result = True
                        break
                ctx.save_for_backward(*kept, out if saves_result else None)
            return out

        def backward(ctx, grad):
            values = {"grad": grad}
            *kept, result = ctx.saved_tensors
            for i, t in zip(saved, kept):
                values[names[i]] = t if t is not None else ctx.numbers[i]
            values["result"] = result
            needs = ctx.needs_input_grad
            grads = []
            for i, formula in enumerate(op.grads):
                if formula is None or not needs[i] or ctx.metas[i] is None:
                    grads.append(None)
                    continue
                fn, wanted = formula
                g = fn(*[values[n] for n in wanted])
                grads.append(_grad_for(ctx.metas[i], g))
            return tuple(grads) + (None,) * (len(names) - len(grads))

        n = self.arity if edges is None else edges
        function = _function_class(self.name, forward, backward, n, node_name)
        generic = function.apply
        arity = -1 if self.scalars else self.arity

        def apply(*operands):
            """Function.apply made short: straight to ``run`` where nothing records, and the
            node made directly where every argument is an operand (a number among ``scalars``
            has no edge: the generic path knows, as it knows a tensor past ``edges``)."""
            try:
                if not needs_recording(operands):
                    return op.run(*operands)
                if len(operands) != arity:
                    return generic(*operands)
                if edges is None:
                    return apply_new_output(function, operands)
                # the first n operands have an edge, and every tensor after them (1 - x: x's)
                positions = list(range(n))
                for i in range(n, arity):
                    if isinstance(operands[i], Tensor):
                        positions.append(i)
                return apply_new_output(function, operands, positions)
            except ComplexOperands:  # (a try costs nothing until it catches)
                return COMPLEX_HOOKS["elementwise"](op, operands)

        function.apply = staticmethod(apply)
        return function


def check_cast(result, out):
    """An in-place op's result must be castable to its tensor's dtype (no float into int)."""
    if result.category > out.category:
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[result.name]} can't be cast to the desired "
            f"output type {SCALAR_TYPE_NAMES[out.name]}"
        )


# a binary op's NumPy counterpart, for ``tensor <op> ndarray`` (``_operator``)
NUMPY_UFUNCS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "pow": np.power,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift,
}


def _operator(body, apply, check) -> Callable:
    """A binary op as a Python operator (``Tensor.__add__`` ...): ``method``'s path, and with
    a NumPy array as the other operand what PyTorch gives: NumPy computes it on the host (its
    type promotion: float32 times a float64 array is float64) and the result is a cpu tensor;
    a tensor that requires grad or is not on the cpu is refused, as torch's ``__array__``
    refuses it."""
    name = body.__name__
    ufunc = NUMPY_UFUNCS.get(name)

    def operator(self, other):
        if type(other) is np.ndarray and ufunc is not None:
            return _through_numpy(ufunc, self, other)
        if check is not None:
            check((self, other), None)
        return body(apply, self, other)

    operator.__name__ = f"__{name}__"
    operator.__doc__ = body.__doc__
    return if_listed(operator, name)


def _through_numpy(ufunc, x, array):
    if x.requires_grad:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    if not x.device.is_cpu:
        raise TypeError(
            f"can't convert {x.device} device type tensor to numpy. Use Tensor.cpu() to copy "
            "the tensor to host memory first."
        )
    with np.errstate(all="ignore"):
        result = ufunc(x._numpy(), array)
    if result.dtype == np.bool_:  # torch's __array_wrap__ gives its bool results as uint8
        result = result.astype(np.uint8)
    return Tensor._from_numpy(np.ascontiguousarray(result), D.as_dtype(result.dtype), x.device)


def _launch_into(kernel, operands, out_dt, ct) -> None:
    """``operands[0] = kernel(operands)`` in compute dtypes ``ct``, unrecorded: by the launch
    kept for the operands' layout (``launch_kept_into``) once ``launch`` has kept one."""
    key = layout_key(kernel, operands, INTO)
    if not launch_kept_into(key, operands):
        launch(kernel, operands, out_dt, ct, out=operands[0], key=key)


def _write_into(op: ElementwiseOp, operands, ct) -> None:
    """An in-place op's unrecorded write: ``_launch_into``, then the version bump."""
    x = operands[0]
    _launch_into(op.kernel_for(operands), operands, x.dtype, ct)
    x._bump_version()


def _inplace_method(body, op: ElementwiseOp, checked: bool) -> Callable:
    """``Tensor.<name>_``: the same body, its ``apply`` writing into the first operand;
    ``checked``: PyTorch's checks (``_check_operands``) run first."""

    def apply_(x, *others):
        out_dt, ct = op.dtypes_of((x, *others))
        check_cast(out_dt, x.dtype)
        operands = (x, *others)
        if not recording(x, *others):  # inplace's direct write, without making its closures
            _write_into(op, operands, ct)
            return x
        direct = functools.partial(_write_into, op, operands, ct)
        return inplace(x, lambda old: op.apply(old, *others), direct, *others)

    @functools.wraps(body)
    def method(self, *args, **kwargs):
        if checked:
            op._check_operands((self, *args), kwargs, out=self)
        try:
            result = body(apply_, self, *args, **kwargs)
        except ComplexOperands:  # complex operands: computed out of place, then written
            if op.name in ("abs", "angle"):  # (a real result: torch refuses the write)
                raise RuntimeError(
                    f"In-place {op.name} is not supported for complex tensors."
                ) from None
            result = body(op.apply, self, *args, **kwargs)
        if result is self:
            return self
        # a body that computes out of place (round to decimals, integer passthrough, a floor
        # division): its result must still be castable to this tensor's dtype
        check_cast(result.dtype, self.dtype)
        return self.copy_(result)

    method.__name__ = method.__qualname__ = op.name + "_"
    method.__doc__ = f"In-place ``{op.name}``: writes the result into this tensor."
    sig = inspect.signature(body)
    method.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
    return method


def elementwise(
    expr: str,
    numpy: Callable,
    *,
    result: Callable = same,
    grad=None,
    inplace: bool = False,
    dtypes: tuple = ALL_DTYPES,
    domain: tuple | None = None,
    mask_first: bool = False,
    exact: tuple[str, ...] = (),
    scalar_type: Callable = keep_dtype,
    refuse: str | None = None,
    scalars: tuple[str, ...] = (),
    tensors: tuple[str, ...] = (),
    shortcut: Callable | None = None,
    variants: dict | None = None,
    out: bool = True,
    dtype_check: Callable | None = None,
    nodes: Callable | None = None,
    saves_numbers: bool = False,
) -> Callable:
    """Declares the decorated function as an elementwise op.

    ``expr`` is OpenCL C over ``in0``, ``in1``, ... in the compute type ``{T}``; ``numpy`` the
    same computation on NumPy arrays; ``result`` the dtype rule (``same``, ``floating``,
    ``predicate``, ``integral``); ``grad`` one formula per operand (a tuple; one formula for a
    unary op; None where an operand has no gradient); ``dtypes`` what the op accepts and
    ``domain`` where its test inputs are drawn. ``mask_first``: operand 0 is a bool mask and
    the others decide the dtype (``where``). ``exact``: the parameters whose Python numbers
    PyTorch converts with a range check (its ``Scalar.to<T>()``: clamp's bounds, pow's
    exponent; other ops wrap them as C converts), to ``scalar_type(promoted dtype)``.
    ``refuse``: the message of the RuntimeError PyTorch's op raises itself for a dtype outside
    ``dtypes`` (relu of bool), where it does not leave that to its kernels'
    NotImplementedError. ``scalars``: parameters that are options, not operands (hardtanh's
    bounds, leaky_relu's slope): Python numbers the body passes to ``apply`` after the
    operands, reaching the kernel as ``in<k>`` in the compute type and the formulas by name.
    ``tensors``: the parameters PyTorch takes as tensors only (TypeError for a number, before
    the dtype check). ``shortcut(*operands)``: true for the calls that the body answers
    without the kernel, where PyTorch does so before its kernel's dtype dispatch (pow's
    exponent ``True``/``False`` of a bool tensor: a copy or ones): the dtype check skips them;
    it reads only the operands' types (the checks' outcomes are kept by type and shape).
    ``variants``: {number: expression, or (expression, its NumPy function, the input dtypes it
    is for)} used instead of ``expr`` (and ``numpy``) where operand 1 is that Python number
    (pow's exponents 2 and 3 as products: on CPU devices a library call anywhere in a kernel
    leaves it scalar, even where a branch skips it; 0.5 and -0.5 as sqrt and rsqrt, which
    PyTorch takes for float and double only). Same gradient. ``out``: the function takes
    PyTorch's ``out=`` (``torch.relu``, ``torch.isnan`` and a few others take none: TypeError).
    ``dtype_check(*operands, out=)``: the op's own dtype checks in ATen's order, in place of the
    common dtype's castability into an in-place op's ``out`` and of the kernels' dtypes (lerp's:
    its meta function's, and a common dtype its number weight takes no part in); run after the
    shapes' checks. ``nodes(*operands)``: ``(node name, edges)`` of PyTorch's overload for
    these operands (``ElementwiseOp.variant``; pow's with a number exponent is PowBackward0,
    its node without the exponent's edge), None for the op's own ``<Name>Backward0``.
    ``saves_numbers``: PyTorch's node saves a Python number operand its formulas read (mul and
    div run on the number wrapped in a tensor), so a second backward through it raises.
    """

    def declare(body: Callable) -> Callable:
        name = body.__name__
        if name in ELEMENTWISE:
            raise ValueError(f"elementwise op {name!r} is declared twice")
        kernel = MapKernel(name, expr, numpy)
        op = ElementwiseOp(
            body,
            kernel,
            result,
            grad,
            inplace,
            dtypes,
            domain,
            mask_first,
            (exact, scalar_type, refuse, scalars, tensors, shortcut, dtype_check),
            {k: _variant(name, k, e, numpy) for k, e in (variants or {}).items()},
            out,
            nodes,
        )
        op.saves_numbers = saves_numbers
        ELEMENTWISE[name] = op
        op.public.op = op
        _bundle(op)
        return op.public

    return declare


def _variant(name, number, declared, numpy) -> tuple:
    """(MapKernel, input dtypes or None) of a declared variant (``elementwise``'s)."""
    expr, fn, only = (declared, numpy, None) if isinstance(declared, str) else (*declared, None)[:3]
    return MapKernel(_variant_name(name, number), expr, fn), only


def _variant_name(name, number) -> str:
    """A C identifier for ``name``'s variant at ``number``: pow_2, pow_0p5, pow_m1."""
    return f"{name}_{number}".replace("-", "m").replace(".", "p")


def _bundle(op) -> None:
    """Files ``op``'s kernel under the compute C type and result dtype it has for each dtype it
    takes (``backend.base.bundle``), where one compute type serves every operand: not for a
    mask-first op (``where``), whose first operand is a bool. Operands of any storage type load
    into the compute type, so one key also serves mixed operands (a float32 tensor plus an int64
    one); ``copy`` is filed with every one-operand key (a same-type copy joins the unary ops)."""
    if op.mask_first:
        return
    for dt in op.dtypes:
        try:
            out, compute = op.result(dt)
        except (NotImplementedError, RuntimeError, TypeError):
            continue
        if isinstance(compute, D.dtype):
            n = op.arity + len(op.scalars)
            key = (n, compute.compute_ctype, out.name)
            for kernel in (op.kernel, *op.variants.values()):
                bundle(key, kernel)
            if n == 1:
                bundle(key, COPY)


# ---- reductions -------------------------------------------------------------------------------
def sum_dtype(dt):
    """Integers and bool accumulate into int64, as PyTorch's sum and prod do (a complex
    input raises ComplexOperands: ``ops.complex`` sums its real view)."""
    category = dt.category
    if category == 2:
        return dt
    if category < 2:
        return D.int64
    raise ComplexOperands("sum")  # (sum, nansum, prod: ops.complex computes them)


def extreme_dtype(dt):
    """The input's dtype (amax, amin); complex numbers have no order (ComplexOperands)."""
    if dt.category == 3:
        raise ComplexOperands("amax")
    return dt


def index_dtype(dt):
    return D.int64


def reduced_shape(shape, dims, keepdim) -> tuple:
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def run_reduce(kernel: ReduceKernel, x, dims, keepdim, out_dt, acc=None):
    """The backend reduction of ``x`` over ``dims``, viewed with or without the reduced dims."""
    x.device.require(out_dt)
    out = Tensor._empty(reduced_shape(x._shape, dims, False), out_dt, x.device)
    if kernel.arg and x.ndim == 0:  # the one element's index
        launch(FILL, [0], out_dt, out_dt, out=out)
    elif x.ndim == 0 and kernel.map_expr != "x":  # its one element mapped still (nansum's NaN)
        x.device.backend.reduce(kernel, out._record(), x.reshape(1)._record(), (0,), acc)
    elif x.ndim == 0 or not dims:  # nothing to reduce: a copy in the result's dtype
        # (into bool, computed in the input's dtype: 0.4 is True, not truncated to 0 first)
        launch(COPY, [x], out_dt, x.dtype if out_dt is D.bool_ else acc or x.dtype, out=out)
    elif out.numel():
        x.device.backend.reduce(kernel, out._record(), x._record(), dims, acc)
    if keepdim:
        kept = reduced_shape(x._shape, dims, True)
        return out._view(kept, contiguous_strides(kept), 0)
    return out


def refuse_integral_output(dt) -> None:
    """A recorded op asked for an integral ``dtype=`` (sum, cumsum, ...): ATen's set_history
    refuses the output."""
    if not dt.is_floating_point:
        raise RuntimeError(f"Autograd not support dtype: {SCALAR_TYPE_NAMES[dt.name]}")


class ReductionOp:
    """A declared reduction; see ``reduction``."""

    def __init__(self, body, kernel, result, grad, dims_node=None):
        self.name = body.__name__
        self.kernel = kernel
        self.result = result
        self.arg = kernel.arg
        self.arity = 1
        self.dtypes = ALL_DTYPES
        self.domain = None
        self.inplace = False
        self.grad = _formula(grad, ("input", "dim"))
        self.differentiable = grad is not None
        self.function = self._function() if self.differentiable else None
        self._variants = {}
        self.dims_node = dims_node
        self.public = _public(body, self.apply, out=True)
        self.method = _public(body, self.apply)
        self.inplace_method = None

    def apply(self, x, dim=None, keepdim=False, dtype=None, node=None):
        """Normalizes the arguments and runs the reduction (recorded when differentiable, in a
        node named ``node`` where given: another op's overload, as max() is amax's)."""
        if self.arg:
            return self._arg(x, dim, keepdim)
        dims = normalize_dims(dim, x.ndim)
        if x.numel() == 0 and self.kernel.neutral in ("LOWEST", "HIGHEST"):
            _require_elements(x, None if dim is None else dims, self.name)
        try:  # (the result dtype rules raise ComplexOperands for a complex input)
            dt = self.result(x.dtype) if dtype is None else self._asked(x, dtype)
        except ComplexOperands:
            return COMPLEX_HOOKS["reduction"](self, x, dim, keepdim, dtype)
        if self.function is not None and needs_recording((x,)):
            refuse_integral_output(dt)
            if node is None and dim is not None:
                node = self.dims_node
            return self.variant(node).apply(x, dims, keepdim, dt)
        return run_reduce(self.kernel, x, dims, keepdim, dt, D.accumulation(dt))

    def _asked(self, x, dtype):
        """A ``dtype=`` argument; a complex input or dtype goes to ``ops.complex``."""
        dt = D.as_dtype(dtype)
        if dt.category == 3 or x.dtype.category == 3:
            raise ComplexOperands(self.name)
        return dt

    def variant(self, node_name):
        """The reduction's Function whose node PyTorch names ``node_name`` (one op, several
        overloads: ``x.sum()`` is SumBackward0, ``x.sum(1)`` SumBackward1); None: its own."""
        if node_name is None:
            return self.function
        if node_name not in self._variants:
            self._variants[node_name] = self._function(node_name)
        return self._variants[node_name]

    def _arg(self, x, dim, keepdim):
        if x.dtype is D.bool_:
            raise RuntimeError(f"{self.name}(): does not support bool input")
        if x.dtype.category == 3:
            raise RuntimeError(f"{self.name}(): does not support complex input")
        if dim is None:
            if x.numel() == 0:
                raise IndexError(
                    f"{self.name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            out = run_reduce(self.kernel, x, tuple(range(x.ndim)), False, D.int64)
            return out.reshape((1,) * x.ndim) if keepdim else out
        d = wrap_dim(int_dim(self.name, dim), x.ndim)
        if x.ndim and x._shape[d] == 0:
            raise IndexError(f"{self.name}(): Expected reduction dim {d} to have non-zero size.")
        return run_reduce(self.kernel, x, (d,) if x.ndim else (), keepdim, D.int64)

    def _function(self, node_name=None) -> type:
        op = self
        fn, wanted = self.grad

        def forward(ctx, x, dims, keepdim, dt):
            y = run_reduce(op.kernel, x, dims, keepdim, dt, D.accumulation(dt))
            if ctx.recording:
                ctx.meta = (x._shape, x.dtype)
                ctx.dims, ctx.keepdim = dims, keepdim
                ctx.save_for_backward(
                    x if "input" in wanted else None, y if "result" in wanted else None
                )
            return y

        def backward(ctx, grad):
            x, result = ctx.saved_tensors
            shape, dt = ctx.meta
            kept = reduced_shape(shape, ctx.dims, True)
            values = {
                "grad": grad.reshape(kept) if not ctx.keepdim else grad,
                "result": result.reshape(kept) if result is not None else None,
                "input": x,
                "dim": ctx.dims,
            }
            g = fn(*[values[n] for n in wanted])
            if g._shape != shape:
                g = g.expand(shape)
            return (g if g.dtype is dt else g.to(dt)), None, None, None

        function = _function_class(self.name, forward, backward, node_name=node_name)
        generic = function.apply

        def apply(x, dims, keepdim, dt):
            """Function.apply made short: the node made directly (an edge for ``x`` only)."""
            if not needs_recording((x,)):
                return generic(x, dims, keepdim, dt)
            return apply_new_output(function, (x, dims, keepdim, dt), (0,))

        function.apply = staticmethod(apply)
        return function


def _require_elements(x, dims, name):
    """An empty reduction with no neutral element: RuntimeError without ``dim`` (``dims`` None),
    IndexError naming the first empty reduced dim, as PyTorch."""
    if dims is None:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument."
        )
    empty = [d for d in dims if x._shape[d] == 0]
    if empty:
        raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have non-zero size.")


def reduction(
    neutral: str,
    reduce_expr: str = "",
    numpy: Callable | None = None,
    *,
    map_expr: str = "x",
    result: Callable = sum_dtype,
    grad: Callable | None = None,
    arg: bool = False,
    better: str = "",
    dims_node: str | None = None,
) -> Callable:
    """Declares the decorated function as a reduction, as pyopencl's ``ReductionKernel`` takes
    one: each element mapped by ``map_expr`` (C over ``x``), combined by ``reduce_expr`` (C over
    ``a``, ``b``) from ``neutral``; or, with ``arg=True``, the index of the first element for
    which ``better`` (C over ``v``, ``s``) holds. ``numpy(array, axis=...)`` is the reference,
    ``result`` the dtype rule, ``grad`` the gradient over ``grad``, ``result``, ``input`` and
    ``dim`` (the reduced dims; ``grad`` and ``result`` come with them kept as size 1);
    ``dims_node`` the node's name where ``dim`` is given (PyTorch's overload with dims).
    """

    def declare(body: Callable) -> Callable:
        name = body.__name__
        if name in REDUCTIONS:
            raise ValueError(f"reduction {name!r} is declared twice")
        kernel = ReduceKernel(name, neutral, reduce_expr, numpy, map_expr, arg, better)
        op = ReductionOp(body, kernel, index_dtype if arg else result, grad, dims_node)
        REDUCTIONS[name] = op
        bundle(("reduce", arg), kernel)  # its C is written for every type
        op.public.op = op
        return op.public

    return declare
