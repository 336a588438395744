"""PyTorch's ``torch._foreach_*`` functions: one op applied to each tensor of a list (EMA
updates, hand-written optimizers and gradient clipping call them). Out-of-place forms return a
tuple of new tensors and record autograd as the single-tensor op does; in-place forms (``_``)
change the tensors of the first list and return that list. A second operand is a number, a
list of numbers (one per tensor), a list of tensors, or (where torch takes one) a single
tensor; lists of different lengths raise torch's RuntimeError.
"""

from __future__ import annotations

from numbers import Number

from .. import dtypes as D
from ..tensor import Tensor
from . import reduction as _R
from .core import SCALAR_TYPE_NAMES, TYPE_META_NAMES

__all__: list[str] = []

_UNARY = (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p "
    "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc"
).split()


def _tensors(tensors, name="self") -> list:
    """The first operand as a list, refused empty as torch's."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"argument '{name}' (position 1) must be tuple of Tensors, not {type(tensors).__name__}"
        )
    tensors = tensors if isinstance(tensors, list) else list(tensors)  # an in-place form returns it
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _per_tensor(n, other, *, scalars=True, tensor=True, tensor_overload=False):
    """``other`` as ``n`` operands: a list of tensors or numbers (of length ``n``), one tensor
    (where ``tensor``) or one number, each repeated. One tensor of more than 0 dims is refused
    as torch refuses it: a RuntimeError where the op has a tensor overload (add, mul, div),
    else a TypeError (a 0-d one passes there as the number it holds)."""
    if isinstance(other, (list, tuple)):
        other = list(other)
        if other and isinstance(other[0], Tensor):
            for i, o in enumerate(other):
                if not isinstance(o, Tensor):
                    raise TypeError(
                        f"expected Tensor as element {i} in argument 1, but got {type(o).__name__}"
                    )
            if len(other) != n:
                raise RuntimeError(
                    f"Tensor lists must have the same number of tensors, got {n} and {len(other)}"
                )
            return other
        if not scalars:
            raise TypeError("expected a list of Tensors")
        if len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return other
    if isinstance(other, Tensor):
        if not tensor:
            raise TypeError("expected a number or a list, not Tensor")
        if other.ndim and tensor_overload:
            raise RuntimeError(
                f"scalar tensor expected to be 0 dim but it has {other.ndim} dimensions and "
                f"{other.numel()} elements."
            )
        if other.ndim:
            raise TypeError("received an invalid combination of arguments - got (list, Tensor)")
        return [other] * n
    if isinstance(other, (Number, bool)) or hasattr(other, "__index__"):
        return [other] * n
    raise TypeError(f"expected a number, a list or a Tensor, not {type(other).__name__}")


def _export(fn, name, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    globals()[name] = fn
    __all__.append(name)


def _in_place(tensors, results):
    """Writes ``results`` into ``tensors`` (torch's in-place forms) and returns the list; a
    result whose type the tensor cannot hold (a float maximum into an int tensor) raises
    torch's RuntimeError before any tensor is written."""
    for t, r in zip(tensors, results):
        if not D.can_cast(r.dtype, t.dtype):
            raise RuntimeError(
                f"result type {SCALAR_TYPE_NAMES[r.dtype.name]} can't be cast to the desired "
                f"output type {TYPE_META_NAMES[t.dtype.name]}"
            )
    for t, r in zip(tensors, results):
        t.copy_(r)
    return tensors


def _make_unary(op):
    def out_of_place(self):
        return tuple(getattr(t, op)() for t in _tensors(self))

    def in_place(self):
        self = _tensors(self)
        for t in self:
            getattr(t, op + "_")()
        return self

    doc = f"""``{op}`` of each tensor of a list, as ``torch._foreach_{op}``.

    >>> x = clgrad.tensor([0.25, 0.5])
    >>> bool(clgrad.equal(clgrad._foreach_{op}([x, x])[1], x.{op}()))
    True
    """
    _export(out_of_place, f"_foreach_{op}", doc)
    in_doc = f"""``_foreach_{op}`` in place: each tensor of the list is replaced by its ``{op}``.

    >>> xs = [clgrad.tensor([0.25, 0.5])]
    >>> want = xs[0].{op}()
    >>> out = clgrad._foreach_{op}_(xs)
    >>> out is xs, bool(clgrad.equal(xs[0], want))
    (True, True)
    """
    _export(in_place, f"_foreach_{op}_", in_doc)


for _op in _UNARY:
    _make_unary(_op)


def _binary_operands(self, other, alpha, name):
    self = _tensors(self)
    overload = name.rstrip("_").rpartition("_")[2] in ("add", "mul", "div")
    others = _per_tensor(len(self), other, tensor_overload=overload)
    # alpha goes with a list of tensors (and, for add only, one tensor), as torch's overloads
    one_tensor = isinstance(other, Tensor) and not name.startswith("_foreach_add")
    if alpha is not None and (one_tensor or not all(isinstance(o, Tensor) for o in others)):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be tuple of Tensors, not "
            f"{type(other).__name__}"
        )
    return self, others, ({} if alpha is None else {"alpha": alpha})


def _make_binary(op, method, with_alpha):
    """``_foreach_<op>`` and ``_foreach_<op>_``; the in-place form calls the tensor's own
    in-place method where it has one (so its dtype checks hold: an int tensor divided in place
    raises), else copies the result in."""
    own = method is None  # the tensor's method of that name (looked up at the call)
    if own:

        def method(t, o, **kw):
            return getattr(t, op)(o, **kw)

    def out_of_place(self, other, *, alpha=None):
        self, others, kw = _binary_operands(self, other, alpha, f"_foreach_{op}")
        return tuple(method(t, o, **kw) for t, o in zip(self, others))

    def in_place(self, other, *, alpha=None):
        self, others, kw = _binary_operands(self, other, alpha, f"_foreach_{op}_")
        if not own:
            return _in_place(self, [method(t, o, **kw) for t, o in zip(self, others)])
        for t, o in zip(self, others):
            getattr(t, op + "_")(o, **kw)
        return self

    if not with_alpha:
        out_of_place = _no_alpha(out_of_place)
        in_place = _no_alpha(in_place)
    doc = f"""``{op}`` of each tensor of a list with a number, a list of numbers, a list of tensors
    or one tensor, as ``torch._foreach_{op}``.

    >>> xs = [clgrad.tensor([1.0, 4.0]), clgrad.tensor([2.0])]
    >>> rs = clgrad._foreach_{op}(xs, 2.0)
    >>> [bool(clgrad.equal(r, clgrad.{op}(x, clgrad.full_like(x, 2.0)))) for r, x in zip(rs, xs)]
    [True, True]
    """
    _export(out_of_place, f"_foreach_{op}", doc)
    in_doc = f"""``_foreach_{op}`` in place: each tensor of the list is replaced by its ``{op}``
    with the other operand.

    >>> xs = [clgrad.tensor([1.0, 4.0]), clgrad.tensor([2.0])]
    >>> want = [clgrad.{op}(x, clgrad.full_like(x, 2.0)) for x in xs]
    >>> out = clgrad._foreach_{op}_(xs, [2.0, 2.0])
    >>> out is xs, [bool(clgrad.equal(x, w)) for x, w in zip(xs, want)]
    (True, [True, True])
    """
    _export(in_place, f"_foreach_{op}_", in_doc)


def _no_alpha(fn):
    def call(self, other):
        return fn(self, other)

    return call


def _maximum(t, o):
    return t.maximum(o) if isinstance(o, Tensor) else t.clamp_min(o)


def _minimum(t, o):
    return t.minimum(o) if isinstance(o, Tensor) else t.clamp_max(o)


_make_binary("add", None, True)
_make_binary("sub", None, True)
_make_binary("mul", None, False)
_make_binary("div", None, False)
_make_binary("maximum", _maximum, False)
_make_binary("minimum", _minimum, False)
_make_binary("clamp_min", None, False)
_make_binary("clamp_max", None, False)


def _foreach_pow(self, exponent):
    """Each tensor of a list to the power ``exponent`` (a number, a list of numbers or of
    tensors), or a number to the power of each tensor, as ``torch._foreach_pow``.

    >>> clgrad._foreach_pow([clgrad.tensor([3.0, 4.0])], [clgrad.tensor([2.0, 0.5])])
    (tensor([9., 2.]),)
    >>> clgrad._foreach_pow(2.0, [clgrad.tensor([3.0])])
    (tensor([8.]),)
    """
    if isinstance(self, Number):
        return tuple(self**t for t in _tensors(exponent, "exponent"))  # (promoted as torch's)
    self = _tensors(self)
    return tuple(t.pow(e) for t, e in zip(self, _per_tensor(len(self), exponent)))


def _foreach_pow_(self, exponent):
    """``_foreach_pow`` in place: each tensor of the list to the power ``exponent``.

    >>> xs = [clgrad.tensor([3.0])]
    >>> clgrad._foreach_pow_(xs, 2)
    [tensor([9.])]
    """
    self = _tensors(self)
    for t, e in zip(self, _per_tensor(len(self), exponent)):
        t.pow_(e)
    return self


def _foreach_lerp(self, tensors1, weight):
    """``lerp`` of each tensor of a list toward the tensors of ``tensors1`` by ``weight`` (a
    number, a list of numbers, a list of tensors or one tensor), as ``torch._foreach_lerp``.

    >>> clgrad._foreach_lerp([clgrad.zeros(2)], [clgrad.tensor([1.0, 2.0])], 0.25)
    (tensor([0.2500, 0.5000]),)
    """
    self = _tensors(self)
    ends = _per_tensor(len(self), _tensors(tensors1, "tensors1"), scalars=False)
    weights = _per_tensor(len(self), weight)
    return tuple(t.lerp(e, w) for t, e, w in zip(self, ends, weights))


def _foreach_lerp_(self, tensors1, weight):
    """``_foreach_lerp`` in place (an EMA of weights: ``_foreach_lerp_(ema, params, 1 - d)``).

    >>> xs = [clgrad.zeros(2)]
    >>> clgrad._foreach_lerp_(xs, [clgrad.tensor([1.0, 2.0])], [0.5])
    [tensor([0.5000, 1.0000])]
    """
    self = _tensors(self)
    ends = _per_tensor(len(self), _tensors(tensors1, "tensors1"), scalars=False)
    for t, e, w in zip(self, ends, _per_tensor(len(self), weight)):
        t.lerp_(e, w)
    return self


def _values(n, value):
    """addcmul/addcdiv's ``value``: a number, a list of numbers, or a 1-d tensor of ``n``."""
    if isinstance(value, Tensor):
        if value.ndim != 1 or value.numel() != n:
            raise RuntimeError(
                f"Expected scalars to be a 1D tensor with {n} elements, got {list(value.shape)}"
            )
        return value.tolist()
    return _per_tensor(n, value, tensor=False)


def _make_addc(op):
    def out_of_place(self, tensor1, tensor2, value=1):
        self = _tensors(self)
        a = _per_tensor(len(self), _tensors(tensor1, "tensor1"), scalars=False)
        b = _per_tensor(len(self), _tensors(tensor2, "tensor2"), scalars=False)
        vals = _values(len(self), value)
        return tuple(getattr(t, op)(x, y, value=v) for t, x, y, v in zip(self, a, b, vals))

    def in_place(self, tensor1, tensor2, value=1):
        self = _tensors(self)
        a = _per_tensor(len(self), _tensors(tensor1, "tensor1"), scalars=False)
        b = _per_tensor(len(self), _tensors(tensor2, "tensor2"), scalars=False)
        for t, x, y, v in zip(self, a, b, _values(len(self), value)):
            getattr(t, op + "_")(x, y, value=v)
        return self

    doc = f"""``{op}`` of each tensor of a list with the tensors of two more lists and ``value``
    (a number, a list of numbers or a 1-d tensor), as ``torch._foreach_{op}``.

    >>> x = clgrad.tensor([1.0, 2.0])
    >>> bool(clgrad.equal(clgrad._foreach_{op}([x], [x], [x], 0.5)[0], x.{op}(x, x, value=0.5)))
    True
    """
    _export(out_of_place, f"_foreach_{op}", doc)
    in_doc = f"""``_foreach_{op}`` in place (Adam's moment updates, written per list).

    >>> xs = [clgrad.tensor([1.0, 2.0])]
    >>> want = xs[0].{op}(xs[0], xs[0], value=0.5)
    >>> out = clgrad._foreach_{op}_(xs, [xs[0].clone()], [xs[0].clone()], 0.5)
    >>> out is xs, bool(clgrad.equal(xs[0], want))
    (True, True)
    """
    _export(in_place, f"_foreach_{op}_", in_doc)


_make_addc("addcmul")
_make_addc("addcdiv")


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 (torch's keyword)
    """The vector norm of each tensor of a list (all its elements), as ``torch._foreach_norm``.

    >>> clgrad._foreach_norm([clgrad.tensor([3.0, 4.0]), clgrad.zeros(2)])
    (tensor(5.), tensor(0.))
    >>> clgrad._foreach_norm([clgrad.tensor([3.0, -4.0])], float("inf"))
    (tensor(4.),)
    """
    return tuple(_R.norm(t, ord, None, False, dtype) for t in _tensors(self))


def _foreach_max(self):
    """The largest element of each tensor of a list, as ``torch._foreach_max``.

    >>> clgrad._foreach_max([clgrad.tensor([3.0, 4.0]), clgrad.tensor([-1.0])])
    (tensor(4.), tensor(-1.))
    """
    return tuple(t.max() for t in _tensors(self))


def _foreach_clone(self):
    """A copy of each tensor of a list, as ``torch._foreach_clone``.

    >>> xs = [clgrad.ones(2)]
    >>> clgrad._foreach_clone(xs)[0] is xs[0]
    False
    """
    return tuple(t.clone() for t in _tensors(self))


def _foreach_zero_(self):
    """Fills each tensor of a list with zeros, as ``torch._foreach_zero_``.

    >>> clgrad._foreach_zero_([clgrad.ones(2)])
    [tensor([0., 0.])]
    """
    self = _tensors(self)
    for t in self:
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """Copies each tensor of ``src`` into the tensor of the list at its place (cast and moved as
    ``copy_``), as ``torch._foreach_copy_``.

    >>> clgrad._foreach_copy_([clgrad.zeros(2)], [clgrad.tensor([1, 2])])
    [tensor([1., 2.])]
    """
    self = _tensors(self)
    for t, s in zip(self, _per_tensor(len(self), _tensors(src, "src"), scalars=False)):
        t.copy_(s, non_blocking=non_blocking)
    return self


__all__ += [
    "_foreach_pow",
    "_foreach_pow_",
    "_foreach_lerp",
    "_foreach_lerp_",
    "_foreach_norm",
    "_foreach_max",
    "_foreach_clone",
    "_foreach_zero_",
    "_foreach_copy_",
]
