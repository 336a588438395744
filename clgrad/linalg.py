"""``clgrad.linalg``: PyTorch's ``torch.linalg`` names for what composes from clgrad's ops
(norms, products). Decompositions and solvers (inv, solve, det, qr, svd, eigh, cholesky, lstsq)
are not here yet: a program calling them gets ``AttributeError``.
"""

from __future__ import annotations

from .ops import linalg as _L
from .ops import movement as _M
from .ops import reduction as _R

__all__ = ["vector_norm", "matrix_norm", "norm", "matmul", "multi_dot", "vecdot", "cross"]
__all__ += ["diagonal"]

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
    ``torch.linalg.matrix_norm``; ``"nuc"`` and ``2`` (singular values) are not supported.

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
