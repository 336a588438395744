"""The LU family: ``torch.linalg``'s ``lu_factor``, ``lu_factor_ex``, ``lu`` and ``lu_solve``,
and the top-level ``lu_unpack``, ``lu`` and ``lu_solve`` (PyTorch's deprecated forms).

The factorization is host-computed, as ``ops/decomp.py``'s: the data makes a round trip
(device -> NumPy -> device). NumPy has no LU of its own, so ``_getrf`` is LAPACK getrf's
algorithm (partial pivoting: the first largest magnitude of each column) in the input's dtype,
vectorized over the batch; its pivots are LAPACK's, 1-based int32. Unpacking and solving are
Tensor ops (``tril`` / ``triu``, ``matmul``, ``solve_triangular``), so their gradients need no
formula of their own; the factorization's gradient is PyTorch's ``linalg_lu_backward`` written
with Tensor ops, so gradients of gradients work too.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function
from ..tensor import Tensor
from .core import SCALAR_TYPE_NAMES
from .creation import eye
from .decomp import _Result, _t, _up, solve_triangular
from .movement import cat


def _getrf(a: np.ndarray, pivot: bool = True):
    """``(LU, pivots, info)`` of each matrix of ``a`` (``(..., m, n)``), as LAPACK's getrf gives
    them: ``LU`` holds L's strict lower part and U, ``pivots`` the 1-based row swapped with each
    row in turn, ``info`` 0 or the 1-based index of the first zero pivot (whose column is left
    unscaled, as getrf leaves it). Without ``pivot`` no rows are swapped (pivots 1..k)."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    count = int(np.prod(batch, dtype=np.int64))
    # in the input's dtype, as sgetrf / dgetrf: which pivots come out exactly zero (info)
    # depends on the precision's rounding
    lu = np.array(a, order="C", copy=True).reshape((count, m, n))
    pivots = np.tile(np.arange(1, k + 1, dtype=np.int32), (count, 1))
    info = np.zeros(count, np.int32)
    rows = np.arange(count)
    with np.errstate(all="ignore"):
        for j in range(k):
            if pivot:  # the first largest magnitude (idamax's), swapped into row j
                p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
                pivots[:, j] = p + 1
                top = lu[rows, j].copy()
                lu[rows, j] = lu[rows, p]
                lu[rows, p] = top
            d = lu[:, j, j]
            zero = d == 0
            info[(info == 0) & zero] = j + 1
            # getrf scales a column only by a nonzero pivot (with pivoting, a zero one's column
            # is all zeros: the update below changes nothing)
            col = lu[:, j + 1 :, j]
            lu[:, j + 1 :, j] = np.where(zero[:, None], col, col / d[:, None])
            lu[:, j + 1 :, j + 1 :] -= lu[:, j + 1 :, j, None] * lu[:, j, None, j + 1 :]
    return (
        lu.reshape(a.shape),
        pivots.reshape(batch + (k,)),
        info.reshape(batch),
    )


def _permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    """The row order the pivots' swaps give: row ``i`` of ``P^T A`` is row ``perm[i]`` of A."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    flat = pivots.reshape((count, k)).astype(np.int64) - 1
    perm = np.tile(np.arange(m), (count, 1))
    rows = np.arange(count)
    for j in range(k):
        p = flat[:, j]
        top = perm[:, j].copy()
        perm[:, j] = perm[rows, p]
        perm[rows, p] = top
    return perm.reshape(batch + (m,))


def _p_matrix(pivots: Tensor, m: int, like: Tensor, name: str) -> Tensor:
    """The permutation matrix ``P`` (``A = P L U``) of ``pivots``, in ``like``'s dtype on its
    device. The pivots are read on the host, where the swaps are a loop over them."""
    piv = np.asarray(pivots._numpy())
    if piv.size and (piv.min() < 1 or piv.max() > m):
        raise RuntimeError(
            "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
            "Did you properly pass the result of lu_factor?"
            if name == "lu_unpack"
            else "Pivots given to lu_solve must all be "
            + ("greater or equal to 1" if piv.min() < 1 else "smaller or equal to LU.size(-2)")
            + ". Did you properly pass the result of lu_factor?"
        )
    perm = _permutation(piv, m)
    P = np.zeros(perm.shape + (m,), like.dtype.np)
    # P[perm[i], i] = 1: P^T A takes row perm[i] of A to row i
    np.put_along_axis(P, perm[..., None, :], 1, axis=-2)
    return _up(P, like)


def _check_factor_input(name, A):
    """PyTorch's errors for what ``linalg.lu_factor`` cannot factor (``name``: the caller's)."""
    if A.ndim < 2:
        raise RuntimeError(
            f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead"
        )
    if A.dtype not in (D.float32, D.float64):
        raise NotImplementedError(
            f"\"lu_cpu\" not implemented for '{SCALAR_TYPE_NAMES[A.dtype.name]}'"
        )


def _check_pivot(pivot, A):
    # PyTorch's CPU LU always pivots; its CUDA one (cuSOLVER) may not: clgrad's cpu device
    # answers as the former, its OpenCL devices as the latter
    if not pivot and A.device.type == "cpu":
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


class _LuFactor(Function):
    @staticmethod
    def forward(ctx, A, pivot):
        lu, piv, info = _getrf(np.asarray(A._numpy()), pivot)
        LU = _up(lu, A)
        pivots, infos = _up(piv, A, D.int32), _up(info, A, D.int32)
        ctx.pivot = pivot
        ctx.save_for_backward(LU, pivots)
        ctx.mark_non_differentiable(pivots, infos)
        return LU, pivots, infos

    @staticmethod
    def backward(ctx, g, _gpivots, _ginfo):
        LU, pivots = ctx.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        if g.numel() == 0:
            return g * 0, None
        k = min(m, n)
        P, L, U = lu_unpack(LU, pivots, unpack_pivots=ctx.pivot)
        gA = _lu_backward(g[..., :k], g[..., :k, :], L, U)
        return (P @ gA if ctx.pivot else gA), None


def _lu_backward(gL, gU, L, U):
    """PyTorch's ``linalg_lu_backward`` without its final ``P @``: the gradient of ``A`` from
    those of ``L`` (``m x k``) and ``U`` (``k x n``); only their strict lower and upper parts
    matter. Square: ``L^-T [(L^T gL) o 1_L + (gU U^T) o 1_U] U^-T``; a wide or tall matrix adds
    the gradient of its extra columns (rows) to the square part's."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = (_t(L) @ gL).tril(-1) + (gU @ _t(U)).triu()
        gA = solve_triangular(_t(U), gA, upper=False, left=False)
        return solve_triangular(_t(L), gA, upper=True, unitriangular=True)
    if m < n:
        U1, gU1, gU2 = U[..., :k], gU[..., :k], gU[..., k:]
        gA = _t(L) @ gL - gU.triu() @ _t(U)
        gA = solve_triangular(_t(U1), gA.tril(-1), upper=False, left=False)
        gA = cat([gA + gU1.triu(), gU2], -1)
        return solve_triangular(_t(L), gA, upper=True, unitriangular=True)
    L1, gL1, gL2 = L[..., :k, :], gL[..., :k, :], gL[..., k:, :]
    gA = gU @ _t(U) - _t(L) @ gL.tril(-1)
    gA = solve_triangular(_t(L1), gA.triu(), upper=True, unitriangular=True)
    gA = cat([gA + gL1.tril(-1), gL2], -2)
    return solve_triangular(_t(U), gA, upper=False, left=False)


def _factor_error(name, info: np.ndarray):
    """PyTorch's error for the first matrix whose factorization met a zero pivot."""
    first = int(np.flatnonzero(info.reshape(-1))[0])
    where = f"(Batch element {first}): " if info.ndim else ""
    i = int(info.reshape(-1)[first])
    return RuntimeError(
        f"torch.{name}: {where}U[{i},{i}] is zero and using it on lu_solve would result in a "
        "division by zero. If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
    )


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """``(LU, pivots, info)``: the LU factorization with partial pivoting of each matrix in
    ``A`` (any ``m x n``), like ``torch.linalg.lu_factor_ex``: ``LU`` holds ``L``'s strict lower
    part (its diagonal is ones) and ``U``; ``pivots`` (int32, 1-based, as LAPACK's) the row
    swapped with each row in turn; ``info`` 0, or the 1-based index of the first zero pivot of
    a singular matrix (which raises with ``check_errors``). ``pivot=False`` (no row swaps) is
    refused on the cpu device, as on PyTorch's CPU. Host-computed: the data makes a round trip.

    >>> clgrad.linalg.lu_factor_ex(clgrad.tensor([[1.0, 2.0], [2.0, 4.0]]))
    clgrad.return_types.linalg_lu_factor_ex(
    LU=tensor([[2.0000, 4.0000],
            [0.5000, 0.0000]]),
    pivots=tensor([2, 2], dtype=clgrad.int32),
    info=tensor(2, dtype=clgrad.int32))
    """
    _check_factor_input("torch.lu_factor", A)
    _check_pivot(pivot, A)
    LU, pivots, info = _LuFactor.apply(A, pivot)
    if check_errors and info.numel() and bool(info.any()):
        raise _factor_error("linalg.lu_factor_ex", np.asarray(info._numpy()))
    return _Result("linalg_lu_factor_ex", (LU, pivots, info))


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``(LU, pivots)`` of ``lu_factor_ex``, like ``torch.linalg.lu_factor``: a singular matrix
    (a zero pivot) raises a RuntimeError. ``lu_solve`` solves with them, ``lu_unpack`` gives
    ``P``, ``L`` and ``U``.

    >>> LU, pivots = clgrad.linalg.lu_factor(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU, pivots
    (tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]]), tensor([2, 2], dtype=clgrad.int32))
    """
    _check_factor_input("torch.lu_factor", A)
    _check_pivot(pivot, A)
    LU, pivots, info = _LuFactor.apply(A, pivot)
    if info.numel() and bool(info.any()):
        raise _factor_error("linalg.lu_factor", np.asarray(info._numpy()))
    return _Result("linalg_lu_factor", (LU, pivots))


def lu(A: Tensor, *, pivot: bool = True):
    """``(P, L, U)`` with ``A = P @ L @ U`` for each matrix in ``A`` (``m x n``; ``k = min(m,
    n)``), like ``torch.linalg.lu``: ``P`` an ``m x m`` permutation matrix, ``L`` ``m x k``
    unit lower triangular, ``U`` ``k x n`` upper triangular. A singular matrix is factored too
    (no error). ``pivot=False`` (``P`` empty) is refused on the cpu device, as on PyTorch's
    CPU. Host-computed: the data makes a round trip; the gradient is PyTorch's.

    >>> P, L, U = clgrad.linalg.lu(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P
    tensor([[0., 1.],
            [1., 0.]])
    >>> U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    _check_factor_input("linalg.lu", A)
    _check_pivot(pivot, A)
    LU, pivots, _ = _LuFactor.apply(A, pivot)
    return _Result("linalg_lu", tuple(lu_unpack(LU, pivots, unpack_pivots=pivot)))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from ``lu_factor``'s ``(LU, pivots)``, like ``torch.lu_unpack``:
    ``unpack_data=False`` leaves ``L`` and ``U`` empty, ``unpack_pivots=False`` ``P``. ``L``
    and ``U`` are read from ``LU`` on its device (their gradient reaches it); ``P`` is built
    on the host from the pivots.

    >>> P, L, U = clgrad.lu_unpack(clgrad.tensor([[3.0, 4.0], [0.5, 1.0]]),
    ...                            clgrad.tensor([2, 2], dtype=clgrad.int32))
    >>> L
    tensor([[1.0000, 0.0000],
            [0.5000, 1.0000]])
    >>> P @ L @ U
    tensor([[1.5000, 3.0000],
            [3.0000, 4.0000]])
    """
    if LU_data.ndim < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU_data.shape)} instead"
        )
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = LU_data.new_empty((0,))
    P = empty
    if unpack_pivots:
        if LU_pivots.dtype is not D.int32:
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor"
            )
        if LU_pivots.ndim < 1 or LU_pivots.shape[-1] != k:
            raise RuntimeError(
                f"torch.lu_unpack: Expected LU_pivots.size(-1) to be {k} (min(m, n) of LU), but "
                f"got pivots with shape {list(LU_pivots.shape)}"
            )
        P = _p_matrix(LU_pivots, m, LU_data, "lu_unpack")
        batch = tuple(LU_data.shape[:-2])
        if tuple(P.shape[:-2]) != batch:
            P = P.expand(batch + (m, m)).contiguous()
    if not unpack_data:
        return _Result("lu_unpack", (P, empty, empty.clone()))
    L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
    U = LU_data[..., :k, :].triu()
    return _Result("lu_unpack", (P, L, U))


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left=True, adjoint=False) -> Tensor:
    """The ``X`` with ``A X = B`` from ``A``'s ``lu_factor`` (``X A = B`` when ``left`` is
    False, ``A^T`` for ``A`` with ``adjoint``), like ``torch.linalg.lu_solve``: batch dims
    broadcast. Two triangular solves and the rows' permutation, Tensor ops all, so gradients
    reach ``LU`` and ``B`` (and gradients of gradients). A zero on ``U``'s diagonal raises
    ``LinAlgError`` as ``solve_triangular`` does (PyTorch returns inf / nan there).

    >>> A = clgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = clgrad.linalg.lu_factor(A)
    >>> clgrad.linalg.lu_solve(LU, pivots, clgrad.tensor([[5.0], [11.0]]))
    tensor([[1.],
            [2.]])
    """
    if not LU.dtype.is_floating_point:
        raise RuntimeError(
            "torch.linalg.lu_solve: Expected a floating point or complex tensor as input. Got "
            f"{SCALAR_TYPE_NAMES[LU.dtype.name]}"
        )
    if B.dtype is not LU.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{SCALAR_TYPE_NAMES[LU.dtype.name]} and B of type {SCALAR_TYPE_NAMES[B.dtype.name]} "
            "instead"
        )
    if pivots.dtype is not D.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if LU.ndim < 2:
        raise RuntimeError(
            "torch.linalg.lu_solve: The input tensor A must have at least 2 dimensions."
        )
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(
            "torch.linalg.lu_solve: A must be batches of square matrices, but they are "
            f"{LU.shape[-2]} by {n} matrices"
        )
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    if pivots.ndim < 1 or pivots.shape[-1] != n:
        raise RuntimeError(
            "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
            "matrix"
        )
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(
            "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
            f"pivots with shape {list(pivots.shape)} instead"
        )
    if LU.dtype not in (D.float32, D.float64):
        raise NotImplementedError(
            f"\"linalg.lu_solve_cpu\" not implemented for '{SCALAR_TYPE_NAMES[LU.dtype.name]}'"
        )
    P = _p_matrix(pivots, n, LU, "lu_solve")
    if not left:  # X A = B is A^T X^T = B^T (X A^T = B: A X^T = B^T)
        return _t(_lu_solve_left(LU, P, _t(B), not adjoint))
    return _lu_solve_left(LU, P, B, adjoint)


def _lu_solve_left(LU, P, B, adjoint):
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        Y = solve_triangular(LU, _t(P) @ B, upper=False, unitriangular=True)
        return solve_triangular(LU, Y, upper=True)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    Y = solve_triangular(_t(LU), B, upper=False)
    return P @ solve_triangular(_t(LU), Y, upper=True, unitriangular=True)


def lu_legacy(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``torch.lu`` (and ``Tensor.lu``), deprecated in PyTorch (a UserWarning): ``(LU,
    pivots)`` of ``linalg.lu_factor_ex``, and its ``info`` with ``get_infos``. A singular matrix
    raises no error either way, as in PyTorch.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.lu(clgrad.tensor([[0.0, 2.0], [1.0, 0.0]]), get_infos=True).pivots
    tensor([2, 2], dtype=clgrad.int32)
    """
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
        "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)",
        UserWarning,
        stacklevel=2,
    )
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return _Result("_lu_with_info", (LU, pivots, info))
    return LU, pivots


def lu_solve_legacy(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve`` (and ``Tensor.lu_solve``), deprecated in PyTorch (a UserWarning):
    ``linalg.lu_solve(LU_data, LU_pivots, b)``, its arguments in the other order.

    >>> import warnings
    >>> LU, pivots = clgrad.linalg.lu_factor(clgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.lu_solve(clgrad.tensor([[2.0], [2.0]]), LU, pivots)
    tensor([[1.0000],
            [0.5000]])
    """
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
        "X = torch.linalg.lu_solve(LU, pivots, B)",
        UserWarning,
        stacklevel=2,
    )
    return lu_solve(LU_data, LU_pivots, b)
