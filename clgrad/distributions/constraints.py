"""The sets a distribution's parameters and values live in, as ``torch.distributions.constraints``:
each constraint's ``check(value)`` is a bool tensor (one entry per event), ``event_dim`` the
number of rightmost dims one event spans, ``is_discrete`` whether its values are integers."""

from __future__ import annotations

from .. import dtypes as D
from ..ops.creation import full
from ..ops.decomp import eigvalsh
from ..ops.elementwise import isclose
from ..ops.movement import cat as _cat
from ..ops.movement import stack as _stack

__all__ = [
    "Constraint",
    "MixtureSameFamilyConstraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """A set of values: ``check(value)`` says which events lie in it.

    >>> clgrad.distributions.constraints.positive.check(clgrad.tensor([1.0, -1.0]))
    tensor([ True, False])
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """Placeholder for a set that depends on other parameters (never checked by itself)."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a placeholder for a parameter-dependent set.

    >>> clgrad.distributions.constraints.is_dependent(clgrad.distributions.constraints.dependent)
    True
    """
    return isinstance(constraint, _Dependent)


class dependent_property(property):
    """A property whose value is a constraint depending on the instance (a ``support`` that
    reads the parameters), as torch's.

    >>> clgrad.distributions.Binomial(3, clgrad.tensor(0.5)).support
    IntegerInterval(lower_bound=0, upper_bound=3.0)
    """

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        """``@dependent_property(is_discrete=...)``: the keyword form wraps ``fn`` here."""
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _Real(Constraint):
    def check(self, value):
        return value == value  # NaN is the one float outside the reals


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(_GreaterThanEq):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _IndependentConstraint(Constraint):
    """``base_constraint`` with its rightmost ``reinterpreted_batch_ndims`` batch dims read as
    event dims: an event lies in it when every entry does, as torch's (its name too, which
    user code checks with ``isinstance`` and registers transforms for).

    >>> C = clgrad.distributions.constraints
    >>> C.independent(C.positive, 1).check(clgrad.tensor([[1.0, 2.0], [1.0, -1.0]]))
    tensor([ True, False])
    """

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint}, {self.reinterpreted_batch_ndims})"


_Independent = _IndependentConstraint  # clgrad's earlier name


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    is_discrete, event_dim = True, 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Multinomial(Constraint):
    """Counts of at most ``upper_bound`` draws in all (nonnegative, summing to at most it)."""

    is_discrete, event_dim = True, 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).all(-1).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).all(-1).all(-1)
        return lower & (value.diagonal(0, -2, -1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit norm."""

    event_dim = 2

    def check(self, value):
        # as torch's: rounding leaves a row's norm within a few eps of 1 per entry
        tol = D.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = (value.detach() ** 2).sum(-1).sqrt()
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        is_square = value.shape[-2] == value.shape[-1]
        return full(value.shape[:-2], is_square, dtype=D.bool_, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(square.all()):
            return square
        return isclose(value, value.transpose(-2, -1), atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric  # eigvalsh would read one triangle of a non-symmetric matrix
        return eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric  # eigvalsh would read one triangle of a non-symmetric matrix
        return eigvalsh(value).gt(0).all(-1)


class _Cat(Constraint):
    """``cseq[i]`` on the i-th block of ``lengths[i]`` entries along ``dim`` (as ``cat``).

    >>> C = clgrad.distributions.constraints
    >>> C.cat([C.positive, C.real], 0, [1, 2]).check(clgrad.tensor([1.0, -1.0, -2.0]))
    tensor([True, True, True])
    """

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})"
            )
        self.dim = dim

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` on the i-th slice along ``dim`` (as ``stack``).

    >>> C = clgrad.distributions.constraints
    >>> C.stack([C.positive, C.real], 0).check(clgrad.tensor([-1.0, -2.0]))
    tensor([False,  True])
    """

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        slices = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return _stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """A mixture's support: its components' ``base_constraint``, checked against every
    component (the value broadcast over the component dim), as torch's.

    >>> C = clgrad.distributions.constraints
    >>> C.MixtureSameFamilyConstraint(C.positive).check(clgrad.tensor([1.0, -1.0]))
    tensor([ True, False])
    """

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim

    def check(self, value):
        if value.ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.ndim - self.event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


dependent = _Dependent()
real = _Real()
real_vector = _IndependentConstraint(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
simplex = _Simplex()
one_hot = _OneHot()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
independent = _IndependentConstraint
cat = _Cat
stack = _Stack
