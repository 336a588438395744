"""``clgrad.linalg``: PyTorch's ``torch.linalg`` names: norms and products composed from
clgrad's ops, and the decompositions and solvers of ``ops/decomp.py`` (inv, det, slogdet, solve,
cholesky, qr, svd, svdvals, eigh, eigvalsh, eig, eigvals, lstsq, pinv, matrix_rank, cond) and
``ops/lu.py`` (lu_factor, lu_factor_ex, lu, lu_solve), which are host-computed: the data makes
a round trip through NumPy; their gradients run on the device. A singular or
non-positive-definite input raises ``LinAlgError`` (a RuntimeError). ``householder_product``
(also ``ops/decomp.py``) runs on the device.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _D
from .errors import LinAlgError
from .ops import decomp as _DC
from .ops import elementwise as _E
from .ops import ldl as _LDL
from .ops import linalg as _L
from .ops import lu as _LU
from .ops import movement as _M
from .ops import reduction as _R
from .ops.autocast import autocast_op
from .ops.core import with_out as _with_out
from .ops.creation import eye, tensor

__all__ = ["vector_norm", "matrix_norm", "norm", "matmul", "multi_dot", "vecdot", "cross"]
__all__ += ["diagonal", "LinAlgError", "inv", "det", "slogdet", "solve", "cholesky", "qr"]
__all__ += ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "lstsq", "pinv"]
__all__ += ["matrix_rank", "matrix_power"]
__all__ += ["cond", "vander", "inv_ex", "cholesky_ex", "solve_ex", "solve_triangular"]
__all__ += ["matrix_exp", "lu_factor", "lu_factor_ex", "lu", "lu_solve"]
__all__ += ["householder_product", "tensorinv", "tensorsolve", "ldl_factor_ex", "ldl_factor"]
__all__ += ["ldl_solve"]

inv, det, slogdet, solve, cholesky = _DC.inv, _DC.det, _DC.linalg_slogdet, _DC.solve, _DC.cholesky
qr, svd, svdvals, eigh, eigvalsh = _DC.qr, _DC.svd, _DC.svdvals, _DC.eigh, _DC.eigvalsh
eig, eigvals = _DC.eig, _DC.eigvals
lstsq, pinv, matrix_rank = _DC.lstsq, _DC.pinv, _DC.matrix_rank
matrix_power, solve_triangular = _DC.matrix_power, _DC.solve_triangular
matrix_exp, householder_product = _DC.matrix_exp, _DC.householder_product
lu_factor, lu_factor_ex, lu, lu_solve = _LU.lu_factor, _LU.lu_factor_ex, _LU.lu, _LU.lu_solve
tensorinv, tensorsolve = _LDL.tensorinv, _LDL.tensorsolve
ldl_factor_ex, ldl_factor, ldl_solve = _LDL.ldl_factor_ex, _LDL.ldl_factor, _LDL.ldl_solve

matmul = _L.matmul


@autocast_op
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (every element when None), like
    ``torch.linalg.vector_norm``.

    >>> clgrad.linalg.vector_norm(clgrad.tensor([3.0, -4.0])), clgrad.linalg.vector_norm(
    ...     clgrad.tensor([3.0, -4.0]), ord=1)
    (tensor(5.), tensor(7.))
    """
    return _R.norm(x, ord, dim, keepdim, dtype)


@autocast_op
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


@autocast_op
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` as ``torch.linalg.norm`` chooses: a matrix norm for a
    string ``ord``, a two-dim ``dim``, or a 2-d input with ``ord`` and no ``dim``.

    >>> clgrad.linalg.norm(clgrad.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A.ndim}D."
        )
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
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):  # the ends may be vectors, the middle are matrices
        where = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
        if where is not None and t.ndim not in (1, 2):
            raise RuntimeError(
                f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.ndim}D"
            )
        if where is None and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
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
    if x.dtype is _D.bool_:  # (before any other check, as PyTorch's)
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got Bool"
        )
    if x.ndim == 0:  # a 0-d x is one point, as PyTorch's broadcasting makes it: (1, N)
        x = x.reshape(1)
    if N is None:
        N = x.shape[-1]
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _M._powers(x, N)


def _cholesky_info(a) -> int:
    """LAPACK potrf's info for one matrix: 0, or the order of the first leading minor that is
    not positive-definite (minors of a positive-definite matrix are too: a binary search)."""

    def ok(k):
        try:
            np.linalg.cholesky(a[:k, :k])
            return True
        except np.linalg.LinAlgError:
            return False

    n = a.shape[-1]
    if ok(n):
        return 0
    lo, hi = 0, n  # minor lo factors, minor hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return hi


def _lu_info(a) -> int:
    """LAPACK getrf's info for one matrix: 0, or the 1-based index of the first zero pivot of
    its LU factorization with partial pivoting."""
    u = np.array(a, dtype=np.float64 if a.dtype == np.float64 else np.float32, copy=True)
    n = u.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1 :] -= np.outer(u[k + 1 :, k] / u[k, k], u[k])
    return 0


def _ex(name, fn, info_of, A, check_errors, *args, **kwargs):
    """``(fn(A, ...), info)``, as the ``*_ex`` functions give them: ``info`` per matrix is
    LAPACK's (0 where it succeeded); a failed matrix's result is NaN instead of LAPACK's
    partial one, the others' are computed (with their gradients) as ``fn`` computes them.
    ``check_errors``: a failure raises, as in PyTorch."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        return fn(A, *args, **kwargs), None  # fn raises torch's error for the shape
    host = A.detach().cpu().numpy()
    infos = np.zeros(host.shape[:-2], np.int32)  # (an empty matrix succeeds: info 0)
    if host.size:
        flat = host.reshape((-1,) + host.shape[-2:])
        infos = np.array([info_of(m) for m in flat], np.int32).reshape(host.shape[:-2])
    info = tensor(infos, device=A.device)
    if not infos.any():
        return fn(A, *args, **kwargs), info
    if check_errors:
        raise LinAlgError(
            f"linalg.{name}: The factorization could not be completed (info = {infos.max()}): "
            "the input is singular or not positive-definite."
        )
    failed = tensor(infos != 0, device=A.device)
    identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    # the failed matrices replaced by the identity: no error for the others' results
    result = fn(_E.where(failed.reshape(infos.shape + (1, 1)), identity, A), *args, **kwargs)
    mask = failed.reshape(infos.shape + (1,) * (result.ndim - infos.ndim))
    return _E.where(mask, float("nan"), result), info


def inv_ex(A, *, check_errors=False):
    """``(inv(A), info)``, like ``torch.linalg.inv_ex``: ``info`` is LAPACK's for each matrix
    (0, or the 1-based index of a zero pivot), and a singular matrix's inverse is NaN instead
    of raising (unless ``check_errors``).

    >>> clgrad.linalg.inv_ex(clgrad.tensor([[1.0, 2.0], [2.0, 4.0]])).info
    tensor(2, dtype=clgrad.int32)
    """
    out, info = _ex("inv_ex", inv, _lu_info, A, check_errors)
    return _DC._Result("linalg_inv_ex", (out, info))


def cond(A, p=None):
    """The condition number of each matrix in ``A`` in the ``p``-norm (None / 2: the ratio of
    the largest and smallest singular value, of any matrix), like ``torch.linalg.cond``: for
    the other norms ``norm(A) * norm(inv(A))``, inf for a singular matrix (inverted by
    ``inv_ex``, as PyTorch's). Host-computed: the data makes a round trip.

    >>> clgrad.linalg.cond(clgrad.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(4.)
    >>> clgrad.linalg.cond(clgrad.tensor([[1.0, 2.0], [2.0, 4.0]]), 1)
    tensor(inf)
    """
    _DC._check_square("linalg.cond", A, square=p not in (None, 2, -2))
    if p is None or p in (2, -2):
        s = _DC.svdvals(A)
        return s.amax(-1) / s.amin(-1) if p != -2 else s.amin(-1) / s.amax(-1)
    inverse, info = inv_ex(A)
    singular = info > 0
    # a singular matrix and its (NaN) inverse as identities: its inf carries no NaN gradient
    square = singular.reshape(singular.shape + (1, 1))
    identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    A, inverse = _E.where(square, identity, A), _E.where(square, identity, inverse)
    result = _DC._matrix_norm_any(A, p) * _DC._matrix_norm_any(inverse, p)
    return result.masked_fill(singular, float("inf"))


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(cholesky(A), info)``, like ``torch.linalg.cholesky_ex``: ``info`` is the order of the
    first leading minor that is not positive-definite (0: none), and such a matrix's factor is
    NaN instead of raising (unless ``check_errors``): code that adds jitter and retries reads
    it.

    >>> clgrad.linalg.cholesky_ex(clgrad.tensor([[1.0, 2.0], [2.0, 1.0]])).info
    tensor(2, dtype=clgrad.int32)
    """
    out, info = _ex(
        "cholesky_ex", lambda a: cholesky(a, upper=upper), _cholesky_info, A, check_errors
    )
    return _DC._Result("linalg_cholesky_ex", (out, info))


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(solve(A, B), info)``, like ``torch.linalg.solve_ex``: ``info`` as ``inv_ex``'s, a
    singular system's solution NaN instead of raising (unless ``check_errors``).

    >>> clgrad.linalg.solve_ex(clgrad.eye(2), clgrad.ones(2)).result
    tensor([1., 1.])
    """
    out, info = _ex("solve_ex", lambda a: solve(a, B, left=left), _lu_info, A, check_errors)
    return _DC._Result("linalg_solve_ex", (out, info))


# PyTorch's out= (a tuple of tensors for the decompositions) on every function that takes one
# there: all but diagonal and vander
globals().update(
    {
        name: _with_out(globals()[name])
        for name in __all__
        if name not in ("LinAlgError", "diagonal", "vander")
    }
)
