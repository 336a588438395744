"""The LDL family of ``torch.linalg``: ``ldl_factor_ex``, ``ldl_factor`` and ``ldl_solve``
(real symmetric matrices), and ``tensorinv`` / ``tensorsolve``, composed of ``inv`` / ``solve``
and reshapes.

The factorization is host-computed, as ``ops/lu.py``'s: ``_sytf2`` is LAPACK sytf2's
Bunch-Kaufman algorithm with the lower triangle (``uplo='L'``, what torch asks of sytrf), in the
input's dtype, so ``LD`` and the pivots are LAPACK's: ``LD`` holds ``L``'s strict lower part
(its diagonal is ones; the subdiagonal of a 2 x 2 block is ``D``'s) and ``D``'s diagonal;
``pivots`` the 1-based row swapped with each row (``k`` for a 1 x 1 block), negated on both rows
of a 2 x 2 block. LAPACK's blocked sytrf (matrices past its block size, 64) takes the same
pivots, its updates rounding in another order. ``ldl_solve`` is sytrs's algorithm. As torch's,
neither is differentiable: a result of an input that requires grad requires grad, and its
backward raises.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function
from ..tensor import Tensor
from .core import SCALAR_TYPE_NAMES
from .decomp import _Result, _up, inv, solve
from .movement import movedim, reshape


def _sytf2(a: np.ndarray):
    """``(LD, pivots, info)`` of the symmetric matrix ``a`` (its lower triangle read), as
    LAPACK's sytf2 with ``uplo='L'`` (1-based pivots)."""
    a = np.array(a, order="C", copy=True)
    n = a.shape[0]
    dt = a.dtype.type
    alpha = (dt(1) + np.sqrt(dt(17))) / dt(8)
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(a[k + 1 :, k])))
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, dt(0)
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
        else:
            if absakk >= alpha * colmax:
                kp = k
            else:
                # the largest off-diagonal magnitude in row / column imax
                rowmax = np.max(np.abs(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = max(rowmax, np.max(np.abs(a[imax + 1 :, imax])))
                if absakk >= alpha * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= alpha * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # rows and columns kk and kp of the trailing matrix swapped
                if kp < n - 1:
                    a[kp + 1 :, [kk, kp]] = a[kp + 1 :, [kp, kk]]
                for j in range(kk + 1, kp):
                    a[j, kk], a[kp, j] = a[kp, j], a[j, kk]
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    d11 = dt(1) / a[k, k]
                    x = a[k + 1 :, k].copy()
                    # syr: A(i, j) += x(i) * (-d11 * x(j)), the lower triangle
                    a[k + 1 :, k + 1 :] += np.tril(x[:, None] * (-d11 * x)[None, :])
                    a[k + 1 :, k] = x * d11
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11 = a[k + 1, k + 1] / d21
                d22 = a[k, k] / d21
                t = dt(1) / (d11 * d22 - dt(1))
                d21 = t / d21
                for j in range(k + 2, n):
                    wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                    wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
                    a[j:, j] = a[j:, j] - a[j:, k] * wk - a[j:, k + 1] * wkp1
                    a[j, k], a[j, k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _sytrs(ld: np.ndarray, ipiv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``X`` with ``A X = B``, ``A``'s factorization ``(ld, ipiv)`` of ``_sytf2``, as LAPACK's
    sytrs with ``uplo='L'``."""
    b = np.array(b, copy=True)
    n = ld.shape[0]
    k = 0
    while k < n:  # L D X = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1 :] -= ld[k + 1 :, k, None] * b[k]
            b[k] /= ld[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2 :] -= ld[k + 2 :, k, None] * b[k]
                b[k + 2 :] -= ld[k + 2 :, k + 1, None] * b[k + 1]
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / akm1k
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = B
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= ld[k + 1 :, k] @ b[k + 1 :]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= ld[k + 1 :, k] @ b[k + 1 :]
                b[k - 1] -= ld[k + 1 :, k - 1] @ b[k + 1 :]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


class _LdlFactor(Function):
    @staticmethod
    def forward(ctx, A):
        a = np.asarray(A._numpy())
        batch, n = a.shape[:-2], a.shape[-1]
        flat = a.reshape((math.prod(batch), n, n))  # (-1 is ambiguous for 0 x 0 matrices)
        lds, pivs, infos = [], [], []
        with np.errstate(all="ignore"):
            for m in flat:
                ld, piv, info = _sytf2(m)
                lds.append(ld)
                pivs.append(piv)
                infos.append(info)
        LD = _up(np.array(lds, a.dtype).reshape(a.shape), A)
        pivots = _up(np.array(pivs, np.int32).reshape(batch + (n,)), A, D.int32)
        info = _up(np.array(infos, np.int32).reshape(batch), A, D.int32)
        ctx.mark_non_differentiable(pivots, info)
        return LD, pivots, info

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


class _LdlSolve(Function):
    @staticmethod
    def forward(ctx, LD, pivots, B):
        ld, piv, b = (np.asarray(t._numpy()) for t in (LD, pivots, B))
        batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
        n = ld.shape[-1]
        count = math.prod(batch)  # (-1 is ambiguous for empty matrices)
        ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((count, n, n))
        piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((count, n))
        shape = batch + b.shape[-2:]
        b = np.broadcast_to(b, shape).reshape((count,) + b.shape[-2:])
        with np.errstate(all="ignore"):
            out = [_sytrs(m, p.astype(np.int64), r) for m, p, r in zip(ld, piv, b)]
        return _up(np.array(out, b.dtype).reshape(shape), B)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def _check_ldl_input(A):
    name = "torch.linalg.ldl_factor_ex"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )
    if not A.dtype.is_floating_point or A.dtype is D.float16:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{SCALAR_TYPE_NAMES[A.dtype.name]}"
        )


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False):
    """``(LD, pivots, info)``: the Bunch-Kaufman factorization ``A = P L D L^T P^T`` of each
    symmetric matrix in ``A`` (its lower triangle read), like ``torch.linalg.ldl_factor_ex``:
    LAPACK sytrf's ``LD`` and 1-based int32 ``pivots`` (negative for the rows of a 2 x 2 block of
    ``D``); ``info`` 0, or the 1-based index of a zero diagonal block (which raises with
    ``check_errors``). ``hermitian`` is the same factorization for real matrices.
    Host-computed; not differentiable, as torch's.

    >>> clgrad.linalg.ldl_factor_ex(clgrad.tensor([[4.0, 2.0], [2.0, 3.0]]))
    clgrad.return_types.linalg_ldl_factor_ex(
    LD=tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]]),
    pivots=tensor([1, 2], dtype=clgrad.int32),
    info=tensor(0, dtype=clgrad.int32))
    """
    _check_ldl_input(A)
    LD, pivots, info = _LdlFactor.apply(A)
    if check_errors and info.numel() and bool(info.any()):
        raise _ldl_error("torch.linalg.ldl_factor_ex", info)
    return _Result("linalg_ldl_factor_ex", (LD, pivots, info))


def _ldl_error(name, info):
    i = int(np.asarray(info._numpy()).reshape(-1).max())
    return RuntimeError(
        f"{name}: the factorization could not be completed because the input is singular: "
        f"D[{i},{i}] is zero (LAPACK sytrf's info {i})"
    )


def ldl_factor(A: Tensor, *, hermitian: bool = False):
    """``(LD, pivots)`` of ``ldl_factor_ex``, like ``torch.linalg.ldl_factor``: a singular
    matrix (a zero block of ``D``) raises a RuntimeError. ``ldl_solve`` solves with them.

    >>> LD, pivots = clgrad.linalg.ldl_factor(clgrad.tensor([[1.0, 2.0], [2.0, 1.0]]))
    >>> pivots
    tensor([-2, -2], dtype=clgrad.int32)
    """
    _check_ldl_input(A)
    LD, pivots, info = _LdlFactor.apply(A)
    if info.numel() and bool(info.any()):
        raise _ldl_error("torch.linalg.ldl_factor", info)
    return _Result("linalg_ldl_factor", (LD, pivots))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``X`` with ``A @ X = B`` from ``ldl_factor``'s ``(LD, pivots)`` of ``A`` (batches
    broadcast), like ``torch.linalg.ldl_solve`` (LAPACK sytrs's algorithm). Host-computed; not
    differentiable, as torch's.

    >>> A = clgrad.tensor([[4.0, 2.0], [2.0, 3.0]])
    >>> LD, pivots = clgrad.linalg.ldl_factor(A)
    >>> clgrad.linalg.ldl_solve(LD, pivots, clgrad.tensor([[6.0], [5.0]]))
    tensor([[1.],
            [1.]])
    """
    name = "torch.linalg.ldl_solve"
    if B.ndim < 2:
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
            if B.ndim == 1
            else f"{name}: Expected B to have at least 2 dimensions, but it has {B.ndim}"
        )
    if LD.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor LD must have at least 2 dimensions.")
    if LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(
            f"{name}: LD must be batches of square matrices, but they are {LD.shape[-2]} by "
            f"{LD.shape[-1]} matrices"
        )
    if pivots.dtype.is_floating_point or pivots.dtype is D.bool_:
        raise RuntimeError(
            f"{name}: Expected pivots to be integers. Got {SCALAR_TYPE_NAMES[pivots.dtype.name]}"
        )
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is {LD.shape[-2]} by "
            f"{LD.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    if B.dtype is not LD.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{SCALAR_TYPE_NAMES[B.dtype.name]} and A of type {SCALAR_TYPE_NAMES[LD.dtype.name]} "
            "instead."
        )
    return _LdlSolve.apply(LD, pivots, B)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` as a tensor product: ``tensordot(tensorinv(A, ind), A, ind)`` is the
    identity on ``A.shape[:ind]``, like ``torch.linalg.tensorinv`` (``numpy.linalg.tensorinv``):
    ``inv`` of ``A`` seen as a ``prod(A.shape[:ind])`` square matrix, shaped
    ``A.shape[ind:] + A.shape[:ind]``; differentiable.

    >>> A = clgrad.eye(4).reshape(4, 2, 2) * 2
    >>> clgrad.linalg.tensorinv(A, ind=1).shape
    clgrad.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    front, back = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(front), math.prod(back)
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {cols} != {rows}"
        )
    return reshape(inv(reshape(A, (rows, cols))), back + front)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B``, like ``torch.linalg.tensorsolve``
    (``numpy.linalg.tensorsolve``): ``dims`` of ``A`` are moved to its end first; ``solve`` of
    ``A`` seen as a ``B.numel()`` square matrix; differentiable.

    >>> A = clgrad.eye(6).reshape(2, 3, 6) * 2
    >>> clgrad.linalg.tensorsolve(A, clgrad.ones(2, 3))
    tensor([0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000])
    """
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(A.shape[B.ndim :])
    cols, rows = math.prod(result_shape), B.numel()
    if cols != rows:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {cols} != {rows}"
        )
    x = solve(reshape(A, (rows, cols)), reshape(B, (rows,)))
    return reshape(x, result_shape)
