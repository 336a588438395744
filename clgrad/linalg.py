"""``clgrad.linalg``: PyTorch's ``torch.linalg`` names: norms and products composed from
clgrad's ops, and the decompositions and solvers of ``ops/decomp.py`` (inv, det, slogdet, solve,
cholesky, qr, svd, svdvals, eigh, eigvalsh, lstsq, pinv, matrix_rank, cond), which are
host-computed: the data makes a round trip through NumPy's LAPACK; their gradients run on the
device. A singular or non-positive-definite input raises ``LinAlgError`` (a RuntimeError).
"""

from __future__ import annotations

from .dtypes import int32 as _int32
from .errors import LinAlgError
from .ops import decomp as _DC
from .ops import linalg as _L
from .ops import movement as _M
from .ops import reduction as _R
from .ops.autocast import autocast_op
from .ops.core import with_out as _with_out

__all__ = ["vector_norm", "matrix_norm", "norm", "matmul", "multi_dot", "vecdot", "cross"]
__all__ += ["diagonal", "LinAlgError", "inv", "det", "slogdet", "solve", "cholesky", "qr"]
__all__ += ["svd", "svdvals", "eigh", "eigvalsh", "lstsq", "pinv", "matrix_rank", "matrix_power"]
__all__ += ["cond", "vander", "inv_ex", "cholesky_ex", "solve_ex", "solve_triangular"]

inv, det, slogdet, solve, cholesky = _DC.inv, _DC.det, _DC.slogdet, _DC.solve, _DC.cholesky
qr, svd, svdvals, eigh, eigvalsh = _DC.qr, _DC.svd, _DC.svdvals, _DC.eigh, _DC.eigvalsh
lstsq, pinv, matrix_rank, cond = _DC.lstsq, _DC.pinv, _DC.matrix_rank, _DC.cond
matrix_power, solve_triangular = _DC.matrix_power, _DC.solve_triangular

matmul = _L.matmul


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (every element when None), like
    ``torch.linalg.vector_norm``.

    >>> clgrad.linalg.vector_norm(clgrad.tensor([3.0, -4.0])), clgrad.linalg.vector_norm(
    ...     clgrad.tensor([3.0, -4.0]), ord=1)
    (tensor(5.), tensor(7.))
    """
    return _R.norm(x, ord, dim, keepdim, dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of ``A`` over the two dims ``dim``: ``"fro"``, or ``1`` / ``-1`` (the
    largest / smallest column sum of magnitudes) and ``inf`` / ``-inf`` (rows), like
    ``torch.linalg.matrix_norm``; ``"nuc"``, ``2`` and ``-2`` are the sum, largest and
    smallest singular value (host-computed: the data makes a round trip).

    >>> clgrad.linalg.matrix_norm(clgrad.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    """
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    x = A if dtype is None else A.to(dtype)
    d0, d1 = (d % x.ndim for d in dim)
    if ord == "fro":
        return _R.norm(x, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        return _DC.matrix_norm_spectral(x, ord, (d0, d1), keepdim)
    inf = float("inf")
    if ord not in (1, -1, inf, -inf):
        raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} is not supported by clgrad")
    # 1 / -1: sum down the rows (dim d0), then the extreme over the columns; inf: the other way
    summed, across = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = x.abs().sum(summed, keepdim=True)
    out = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` as ``torch.linalg.norm`` chooses: a matrix norm for a
    string ``ord``, a two-dim ``dim``, or a 2-d input with ``ord`` and no ``dim``.

    >>> clgrad.linalg.norm(clgrad.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if (
        isinstance(ord, str)
        or (dim is not None and len(dim) == 2)
        or (dim is None and ord is not None and A.ndim == 2)
    ):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@autocast_op
def multi_dot(tensors):
    """The product of a chain of matrices (the first and last may be vectors), like
    ``torch.linalg.multi_dot``.

    >>> a = clgrad.ones(2, 3)
    >>> clgrad.linalg.multi_dot([a, a.T, a]).shape
    clgrad.Size([2, 3])
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got 0")
    out = tensors[0]
    for t in tensors[1:]:
        out = _L.matmul(out, t)
    return out


def vecdot(x, y, *, dim=-1):
    """The dot product of ``x`` and ``y`` along ``dim`` (broadcast), like
    ``torch.linalg.vecdot``.

    >>> clgrad.linalg.vecdot(clgrad.tensor([[1.0, 2.0]]), clgrad.tensor([3.0, 4.0]))
    tensor([11.])
    """
    return (x * y).sum(dim)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim``, like ``torch.linalg.cross``.

    >>> clgrad.linalg.cross(clgrad.tensor([1.0, 0.0, 0.0]), clgrad.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    return _L.cross(input, other, dim=dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the matrices in the last two dims, like ``torch.linalg.diagonal``.

    >>> clgrad.linalg.diagonal(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    return _M.diagonal(A, offset, dim1, dim2)


def vander(x, *, N=None):
    """The Vandermonde matrix of the last dim of ``x`` with increasing powers ``x ** 0`` ...
    ``x ** (N-1)``, like ``torch.linalg.vander``.

    >>> clgrad.linalg.vander(clgrad.tensor([2, 3]))
    tensor([[1, 2],
            [1, 3]])
    """
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    if N is not None and N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _M._powers(x, x.shape[-1] if N is None else N)


def _ex(fn, A, *args, **kwargs):
    """``(result, info)`` where ``fn`` succeeded (``info`` 0): the ``*_ex`` variants, which
    raise with ``check_errors`` and otherwise here too (clgrad has no partial results)."""
    out = fn(A, *args, **kwargs)
    return out, A.new_zeros(tuple(A.shape[:-2]), dtype=_int32)


def inv_ex(A, *, check_errors=False):
    """``(inv(A), info)``, like ``torch.linalg.inv_ex``; a singular ``A`` raises.

    >>> clgrad.linalg.inv_ex(clgrad.eye(2)).info
    tensor(0, dtype=clgrad.int32)
    """
    return _DC._Result(("inverse", "info"), _ex(inv, A))


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(cholesky(A), info)``, like ``torch.linalg.cholesky_ex``; a matrix that is not
    positive-definite raises.

    >>> clgrad.linalg.cholesky_ex(clgrad.eye(2)).L
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _DC._Result(("L", "info"), _ex(cholesky, A, upper=upper))


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(solve(A, B), info)``, like ``torch.linalg.solve_ex``; a singular ``A`` raises.

    >>> clgrad.linalg.solve_ex(clgrad.eye(2), clgrad.ones(2)).result
    tensor([1., 1.])
    """
    out = solve(A, B, left=left)
    return _DC._Result(("result", "info"), (out, A.new_zeros(tuple(A.shape[:-2]), dtype=_int32)))


# PyTorch's out= (a tuple of tensors for the decompositions) on every function that takes one
# there: all but diagonal and vander
globals().update(
    {
        name: _with_out(globals()[name])
        for name in __all__
        if name not in ("LinAlgError", "diagonal", "vander")
    }
)
