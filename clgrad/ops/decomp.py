"""Matrix decompositions and solvers: inv, det, slogdet, solve, cholesky, qr, svd, eigh, pinv,
lstsq, matrix_rank and what composes from them (``torch.linalg``'s and the top-level aliases).

Host-computed: the data makes a round trip (device -> NumPy's LAPACK in float64 -> device),
as no OpenCL decomposition kernel exists yet. Gradients are the textbook formulas (the ones
PyTorch uses), written with Tensor ops, so the backward pass runs on the device except where it
needs a decomposition itself (an inverse). ``matrix_power`` never leaves the device.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import math
import operator
import os
import warnings

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function, once_differentiable
from ..errors import LinAlgError
from ..tensor import Tensor
from .complex import imag, real
from .core import SCALAR_TYPE_NAMES, check_out, sum_to, with_out, write_out
from .creation import _upload, eye, zeros
from .linalg import matmul
from .movement import cat, diag_embed, diagonal
from .results import return_type
from .scans import product_of_others


def _check_square(name, A, square=True, complex_ok=False):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    accepted = (D.float32, D.float64, *D.COMPLEX) if complex_ok else (D.float32, D.float64)
    if A.dtype not in accepted:
        kind = "floating point or complex" if complex_ok else "floating point"
        raise RuntimeError(f"{name}: Expected a {kind} tensor as input. Got {A.dtype.name}")


def _host(x) -> np.ndarray:
    return np.asarray(x._numpy(), dtype=np.float64)


def _up(arr, like, dtype=None):
    dt = dtype or like.dtype
    # np.array, not ascontiguousarray: that makes a 0-d result 1-d
    return _upload(np.array(np.asarray(arr), dtype=dt.np, order="C"), dt, like.device)


def _openblas_threads():
    """(set, get) of the OpenBLAS that NumPy loaded (its thread count), or None: found by the
    symbol names OpenBLAS builds carry (NumPy's wheels prefix them ``scipy_``, suffix ``64_``)."""
    libs = []
    for folder in ("numpy.libs", os.path.join("numpy", ".dylibs")):
        pattern = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), folder, "*openblas*")
        libs += glob.glob(pattern)
    for path in libs:
        try:
            lib = ctypes.CDLL(path)  # loaded by NumPy already: the same library
        except OSError:
            continue
        for prefix in ("scipy_", ""):
            for suffix in ("64_", "_64", ""):
                setter = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    setter.restype, getter.restype = None, ctypes.c_int
                    return setter, getter
    return None


_BLAS = []  # [(set, get) or None], found on first use

# up to this order a matrix's LAPACK call runs on one thread: OpenBLAS's threads wait for each
# other by spinning, so on a CPU shared with the OpenCL device's threads (or other processes)
# a 256 x 256 solve took 100-400 ms on two threads against 1-2 ms on one
_ONE_THREAD_MAX_N = 512


@contextlib.contextmanager
def _blas_threads(*arrays):
    """Runs the block with NumPy's OpenBLAS on one thread when every matrix of ``arrays`` is
    of order <= _ONE_THREAD_MAX_N (small ones gain nothing from threads), restored after."""
    if not _BLAS:
        _BLAS.append(_openblas_threads())
    blas = _BLAS[0]
    small = all(max(a.shape[-2:], default=0) <= _ONE_THREAD_MAX_N for a in arrays)
    if blas is None or not small:
        yield
        return
    setter, getter = blas
    before = getter()
    if before <= 1:
        yield
        return
    setter(1)
    try:
        yield
    finally:
        setter(before)


def _blas(fn, a, **kwargs):
    """``fn(a, **kwargs)`` with small matrices on one BLAS thread (``_blas_threads``)."""
    with _blas_threads(a):
        return fn(a, **kwargs)


def _lapack(name, fn, *arrays):
    """``fn(*arrays)``, NumPy's LinAlgError raised as clgrad's (a RuntimeError, as torch's);
    small matrices on one BLAS thread (``_blas_threads``)."""
    try:
        with np.errstate(all="ignore"), _blas_threads(*arrays):
            return fn(*arrays)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"{name}: {e} (the input is singular or not positive-definite)") from e


def _t(x):
    return x.transpose(-2, -1)


class _Inv(Function):
    @staticmethod
    def forward(ctx, A):
        out = _up(_lapack("linalg.inv", np.linalg.inv, _host(A)), A)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (X,) = ctx.saved_tensors
        return -_t(X) @ g @ _t(X)  # d(A^-1) = -A^-1 dA A^-1


def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of each square matrix in ``A``, like ``torch.linalg.inv``; a singular one
    raises ``clgrad.linalg.LinAlgError``. Host-computed: the data makes a round trip.

    >>> clgrad.linalg.inv(clgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _check_square("linalg.inv", A)
    return _out(_Inv.apply(A), out)


def _out(result, out):
    """``result``, or written into ``out`` as PyTorch's out= variants write: refused where
    ``result`` requires grad, ``out`` resized (with PyTorch's warning when it held elements)
    where its shape differs, a float result refused by an integer ``out``."""
    if out is None:
        return result
    check_out("linalg", out, (result,), {})
    return write_out(out, result)


class _Slogdet(Function):
    @staticmethod
    def forward(ctx, A):
        sign, logabs = _blas(np.linalg.slogdet, _host(A))
        sign, logabs = _up(sign, A), _up(logabs, A)
        ctx.save_for_backward(A)  # sign is an output with a zero gradient, as PyTorch's
        return sign, logabs

    @staticmethod
    def backward(ctx, _gsign, glog):
        (A,) = ctx.saved_tensors
        return glog[..., None, None] * _t(inv(A))  # d log|det A| = tr(A^-1 dA)


def slogdet(A: Tensor):
    """``(sign, log|det|)`` of each square matrix in ``A``, like ``torch.slogdet``.
    Host-computed: the data makes a round trip.

    >>> clgrad.slogdet(clgrad.tensor([[-2.0, 0.0], [0.0, 1.0]]))
    clgrad.return_types.slogdet(
    sign=tensor(-1.),
    logabsdet=tensor(0.6931))
    """
    _check_square("linalg.slogdet", A)
    return slogdet_result(*_Slogdet.apply(A))


def linalg_slogdet(A: Tensor):
    """``slogdet`` as ``torch.linalg.slogdet``: its result is torch's ``linalg_slogdet``.

    >>> clgrad.linalg.slogdet(clgrad.tensor([[-2.0, 0.0], [0.0, 1.0]])).sign
    tensor(-1.)
    """
    return _Result("linalg_slogdet", slogdet(A))


slogdet_result = return_type("slogdet", ["sign", "logabsdet"])


class _Det(Function):
    @staticmethod
    def forward(ctx, A):
        host = _blas(np.linalg.det, _host(A))
        out = _up(host, A)
        ctx.save_for_backward(A, out)
        ctx.singular = not np.all(host != 0)
        return out

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors
        if not ctx.singular:  # Jacobi's formula, differentiable again through inv and det
            return (g * d)[..., None, None] * _t(inv(A))
        # PyTorch's singular case: through the SVD A = U S Vh,
        # d det = det(U) det(Vh) * sum_i (prod_{j != i} s_j) (U^T dA Vh^T)_ii, no inverse
        U, S, Vh = _Svd.apply(A)
        alpha = _Det.apply(U) * _Det.apply(Vh)
        D = product_of_others(S, (-1,)) * (g * alpha)[..., None]
        return (U * D.unsqueeze(-2)) @ Vh


def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix in ``A``, like ``torch.linalg.det`` (its gradient
    needs ``A`` invertible). Host-computed: the data makes a round trip.

    >>> clgrad.linalg.det(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(-2.)
    """
    _check_square("linalg.det", A)
    return _Det.apply(A)


def logdet(A: Tensor) -> Tensor:
    """``log(det(A))``: NaN where the determinant is negative, ``-inf`` where it is 0, like
    ``torch.logdet``. Host-computed: the data makes a round trip.

    >>> clgrad.logdet(clgrad.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918)
    """
    _check_square("logdet", A)
    sign, logabs = _Slogdet.apply(A)
    return logabs.where(sign >= 0, float("nan"))


def _vector_rhs(A, B):
    """Whether ``B`` is a (batch of) vector(s) for ``solve``, by torch's rule."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


class _Solve(Function):
    @staticmethod
    def forward(ctx, A, B):
        out = _up(_lapack("linalg.solve", np.linalg.solve, _host(A), _host(B)), B)
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        gB = _Solve.apply(_t(A), g)  # A^T gB = g
        gA = -gB @ _t(X) if ctx.needs_input_grad[0] else None
        return (None if gA is None else sum_to(gA, A.shape)), gB


def solve(A: Tensor, B: Tensor, *, left=True, out=None) -> Tensor:
    """The ``X`` with ``A @ X = B`` (``X @ A = B`` when ``left`` is False), like
    ``torch.linalg.solve``: ``B`` is a matrix, a vector or a batch of either, batch dims
    broadcast; a singular ``A`` raises ``LinAlgError``. Host-computed: the data makes a round
    trip.

    >>> clgrad.linalg.solve(clgrad.tensor([[2.0, 0.0], [0.0, 4.0]]), clgrad.tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    _check_square("linalg.solve", A)
    if B.dtype is not A.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
            f"{A.dtype.name} and B of type {B.dtype.name} instead"
        )
    if not left:
        return _out(_t(solve(_t(A), _t(B))), out)
    vector = _vector_rhs(A, B)
    rhs = B.unsqueeze(-1) if vector else B
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(rhs.shape[:-2])))
    n = A.shape[-1]
    if rhs.shape[-2] != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {rhs.shape[-2]}x{rhs.shape[-1]})"
        )
    x = _Solve.apply(A.expand(batch + (n, n)), rhs.expand(batch + tuple(rhs.shape[-2:])))
    return _out(x.squeeze(-1) if vector else x, out)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, A):
        L = _up(_lapack("linalg.cholesky", np.linalg.cholesky, _host(A)), A)
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx, gL):
        # Murray (2016), as PyTorch: gA = L^-T Phi(L^T gL) L^-1 with Phi the lower triangle
        # and half the diagonal, symmetrised
        (L,) = ctx.saved_tensors
        P = (_t(L) @ gL).tril()
        P = 0.5 * (P + _t(P.tril(-1)))
        Linv = inv(L)
        return _t(Linv) @ P @ Linv


def cholesky(A: Tensor, *, upper=False, out=None) -> Tensor:
    """The Cholesky factor ``L`` (lower; ``L^T`` with ``upper``) of each symmetric
    positive-definite matrix in ``A``, like ``torch.linalg.cholesky``; one that is not raises
    ``LinAlgError``. Host-computed: the data makes a round trip.

    >>> clgrad.linalg.cholesky(clgrad.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    _check_square("linalg.cholesky", A)
    if upper:  # the upper triangle read, as PyTorch's: the lower one of A^T, factor transposed
        return _out(_t(_Cholesky.apply(_t(A))), out)
    return _out(_Cholesky.apply(A), out)


def cholesky_legacy(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """``torch.cholesky``: ``linalg.cholesky(input, upper=upper)``.

    >>> clgrad.cholesky(clgrad.tensor([[4.0]]))
    tensor([[2.]])
    """
    return cholesky(input, upper=upper, out=out)


def _skew(X):
    return X - _t(X)


class _Eigh(Function):
    @staticmethod
    def forward(ctx, A, uplo):
        w, V = _blas(np.linalg.eigh, _host(A), UPLO=uplo)
        w, V = _up(w, A), _up(V, A)
        ctx.save_for_backward(w, V)
        # an output no gradient reaches stays None: eigenvalues alone must not divide by the
        # gaps between them (repeated eigenvalues made every entry NaN)
        ctx.set_materialize_grads(False)
        return w, V

    @staticmethod
    def backward(ctx, gw, gV):
        # PyTorch's linalg_eig_backward (real symmetric case): gA = V (skew(V^T gV)/2 / E +
        # diag(gw)) V^T with E_ij = w_j - w_i (1 on the diagonal)
        w, V = ctx.saved_tensors
        M = diag_embed(gw) if gw is not None else None
        if gV is not None:
            E = w.unsqueeze(-2) - w.unsqueeze(-1)
            I = eye(w.shape[-1], dtype=w.dtype, device=w.device)
            skew = 0.5 * _skew(_t(V) @ gV) / (E + I) * (1 - I)
            M = skew if M is None else skew + M
        if M is None:
            return None, None
        return V @ M @ _t(V), None


def eigh(A: Tensor, UPLO: str = "L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix in ``A`` (ascending values,
    vectors as columns), like ``torch.linalg.eigh``; only the ``UPLO`` triangle is read.
    Host-computed: the data makes a round trip.

    >>> clgrad.linalg.eigh(clgrad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    _check_square("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V = _Eigh.apply(A, UPLO)
    return _Result("linalg_eigh", (w, V))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each symmetric matrix in ``A``, ascending, like
    ``torch.linalg.eigvalsh``. Host-computed: the data makes a round trip.

    >>> clgrad.linalg.eigvalsh(clgrad.tensor([[2.0, 1.0], [1.0, 2.0]]))
    tensor([1., 3.])
    """
    return eigh(A, UPLO)[0]


class _Eig(Function):
    """The eigen-decomposition of a general square matrix (complex values and vectors, even of a
    real one), by LAPACK's geev as PyTorch's CPU build. V's inverse is kept for the backward
    (V^-H = inv(V)^H)."""

    @staticmethod
    def forward(ctx, A):
        host = np.asarray(A._numpy(), dtype=np.complex128 if A.is_complex() else np.float64)
        if not np.isfinite(host).all():
            raise RuntimeError("linalg.eig: input tensor should not contain infs or NaNs.")
        L, V = _lapack("linalg.eig", np.linalg.eig, host)
        cdt = A.dtype if A.is_complex() else A.dtype.to_complex()
        L, V_host = _up(L.astype(np.complex128), A, cdt), V
        V = _up(V_host.astype(np.complex128), A, cdt)
        if ctx.recording:  # (only a backward reads the inverse)
            Vinv = _up(_lapack("linalg.eig", np.linalg.inv, V_host).astype(np.complex128), A, cdt)
            ctx.save_for_backward(L, V, Vinv)
            ctx.real_input = not A.is_complex()
        return L, V

    @staticmethod
    @once_differentiable
    def backward(ctx, gL, gV):
        # PyTorch's linalg_eig_backward: gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV)))
        # / conj(E)) V^H, E_ij = L_j - L_i (1 on the diagonal); real part for a real input.
        # The inverse is a constant here: its second derivative is refused (once_differentiable)
        L, V, Vinv = ctx.saved_tensors
        Vh = V.mH
        VhgV = Vh @ gV
        phases = imag(VhgV.diagonal(0, -2, -1))
        if not bool((phases.abs() <= 1e-2).all()):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined."
            )
        VhgV = VhgV - Vh @ (V * real(VhgV.diagonal(0, -2, -1)).unsqueeze(-2))
        inner = VhgV.diagonal_scatter(gL, 0, -2, -1)
        Lc = L.conj()
        E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
        E = E.diagonal_scatter(E.new_ones(L.shape), 0, -2, -1)
        gA = Vinv.mH @ ((inner / E) @ Vh)
        return real(gA) if ctx.real_input else gA


def eig(A: Tensor):
    """``(eigenvalues, eigenvectors)`` of each square matrix in ``A``, complex (complex64 for a
    float32 input), the vectors as unit-norm columns, like ``torch.linalg.eig`` (LAPACK's geev,
    as PyTorch's CPU build: the same order; a vector's phase, which any LAPACK picks its own
    way, may differ from PyTorch's by a factor e^{i phi}). Host-computed: the data makes a
    round trip; the gradient is PyTorch's, once differentiable, and refuses a loss that depends
    on the vectors' phases.

    >>> clgrad.linalg.eig(clgrad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([2.+0.j, 1.+0.j])
    """
    _check_square("linalg.eig", A, complex_ok=True)
    L, V = _Eig.apply(A)
    return _Result("linalg_eig", (L, V))


def eigvals(A: Tensor) -> Tensor:
    """The eigenvalues of each square matrix in ``A``, complex, in ``eig``'s order, like
    ``torch.linalg.eigvals``. Host-computed: the data makes a round trip.

    >>> clgrad.linalg.eigvals(clgrad.tensor([[0.0, -1.0], [1.0, 0.0]]))
    tensor([0.+1.j, 0.-1.j])
    """
    _check_square("linalg.eigvals", A, complex_ok=True)
    return _Eig.apply(A)[0]


# the linear-algebra ops' results: torch's ``return_types`` named tuples, by name (exported by
# ``clgrad.return_types``)
RESULT_TYPES = {
    kind: return_type(kind, fields.split())
    for kind, fields in {
        "linalg_slogdet": "sign logabsdet",
        "linalg_eigh": "eigenvalues eigenvectors",
        "linalg_eig": "eigenvalues eigenvectors",
        "linalg_svd": "U S Vh",
        "svd": "U S V",
        "linalg_qr": "Q R",
        "qr": "Q R",
        "linalg_lstsq": "solution residuals rank singular_values",
        "triangular_solve": "solution cloned_coefficient",
        "geqrf": "a tau",
        "linalg_lu_factor_ex": "LU pivots info",
        "linalg_lu_factor": "LU pivots",
        "linalg_lu": "P L U",
        "lu_unpack": "P L U",
        "_lu_with_info": "LU pivots info",
        "linalg_ldl_factor_ex": "LD pivots info",
        "linalg_ldl_factor": "LD pivots",
        "linalg_inv_ex": "inverse info",
        "linalg_cholesky_ex": "L info",
        "linalg_solve_ex": "result info",
    }.items()
}


def _Result(kind, values):
    """``values`` as torch's ``return_types.<kind>``: fields read by name, printed one per line.

    >>> _Result("linalg_qr", (1, 2)).R
    2
    """
    return RESULT_TYPES[kind](*values)


class _Svd(Function):
    @staticmethod
    def forward(ctx, A):
        U, S, Vh = _lapack("linalg.svd", lambda a: np.linalg.svd(a, full_matrices=False), _host(A))
        U, S, Vh = _up(U, A), _up(S, A), _up(Vh, A)
        ctx.save_for_backward(U, S, Vh)
        ctx.set_materialize_grads(False)  # (_svd_backward: no U or Vh gradient is no term)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        return _svd_backward(*ctx.saved_tensors, gU, gS, gVh)


class _SvdFull(Function):
    """The full SVD of a non-square matrix: square U and Vh. Their extra columns (rows) are any
    basis of a subspace, so their gradients are ignored, as PyTorch ignores them."""

    @staticmethod
    def forward(ctx, A):
        U, S, Vh = _lapack("linalg.svd", lambda a: np.linalg.svd(a, full_matrices=True), _host(A))
        U, S, Vh = _up(U, A), _up(S, A), _up(Vh, A)
        ctx.save_for_backward(U, S, Vh)
        ctx.set_materialize_grads(False)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
        return _svd_backward(U[..., :k], S, Vh[..., :k, :], gU, gS, gVh)


def _svd_backward(U, S, Vh, gU, gS, gVh):
    """PyTorch's svd_backward (real, reduced, distinct singular values). Gradients that are
    None (no output used) add no term: with the singular values' alone, U diag(gS) Vh, with
    no division by their differences (a repeated value gives no NaN there, as in PyTorch's:
    det's gradient reads only S of the SVD of an orthogonal matrix)."""
    if gS is None:
        gS = zeros(S.shape, dtype=S.dtype, device=S.device)
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)) @ Vh
    if gU is None:
        gU = zeros(U.shape, dtype=U.dtype, device=U.device)
    if gVh is None:
        gVh = zeros(Vh.shape, dtype=Vh.dtype, device=Vh.device)
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    V, gV = _t(Vh), _t(gVh)
    S2 = S * S
    I = eye(k, dtype=S.dtype, device=S.device)
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + I
    UhgU, VhgV = _skew(_t(U) @ gU), _skew(Vh @ gV)
    gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E * (1 - I) + diag_embed(gS)
    if m > k:
        gUSinv = gU / S.unsqueeze(-2)
        gA = (U @ gA + gUSinv - U @ (_t(U) @ gUSinv)) @ Vh
    elif n > k:
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = U @ (gA @ Vh + SinvgVh - (SinvgVh @ V) @ Vh)
    else:
        gA = U @ gA @ Vh
    return gA


def svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, like ``torch.linalg.svd``; the gradient
    holds where the singular values are distinct, as PyTorch's. ``full_matrices=True`` gives
    square ``U`` / ``Vh`` of a non-square ``A``, whose extra columns' (rows') gradients are
    ignored, as PyTorch's.
    Host-computed: the data makes a round trip.

    >>> clgrad.linalg.svd(clgrad.tensor([[3.0, 0.0], [0.0, -2.0]])).S
    tensor([3., 2.])
    """
    _check_square("linalg.svd", A, square=False)
    m, n = A.shape[-2], A.shape[-1]
    if full_matrices and m != n:
        return _Result("linalg_svd", _SvdFull.apply(A))
    return _Result("linalg_svd", _Svd.apply(A))


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """The singular values of each matrix in ``A``, descending, like ``torch.linalg.svdvals``.
    Host-computed: the data makes a round trip.

    >>> clgrad.linalg.svdvals(clgrad.tensor([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.])
    """
    _check_square("linalg.svdvals", A, square=False)
    return _Svd.apply(A)[1]


def svd_legacy(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``), reduced unless ``some`` is False.

    >>> clgrad.svd(clgrad.tensor([[2.0, 0.0], [0.0, 1.0]])).S
    tensor([2., 1.])
    """
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        U, Vh = U.detach() * 0, Vh.detach() * 0
    return _Result("svd", (U, S, _t(Vh)))


class _Qr(Function):
    @staticmethod
    def forward(ctx, A):
        Q, R = _blas(np.linalg.qr, _host(A), mode="reduced")
        Q, R = _up(Q, A), _up(R, A)
        ctx.save_for_backward(Q, R, A)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R, A = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR)
        # m < n, as PyTorch's: A = [X | Y] with X = Q U (U = R's first m columns, square) and
        # Y = Q V, so V = Q^T Y adds Y gV^T to X's gQ, and Y's gradient is Q gV
        Y = A[..., m:]
        gU, gV = gR[..., :m], gR[..., m:]
        gX = _qr_backward_tall(Q, R[..., :m], gQ + Y @ _t(gV), gU)
        return cat([gX, Q @ gV], -1)


def _qr_backward_tall(Q, R, gQ, gR):
    # m >= n: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q (Seeger et al.)
    M = R @ _t(gR) - _t(gQ) @ Q
    low = M.tril(-1)
    sym = low + _t(low) + diag_embed(diagonal(M, 0, -2, -1))
    return (gQ + Q @ sym) @ _t(inv(R))


class _QrComplete(Function):
    """The complete QR of a tall matrix: recorded, but with no derivative (its extra columns of
    Q are any basis of a subspace), as PyTorch's."""

    @staticmethod
    def forward(ctx, A):
        Q, R = _blas(np.linalg.qr, _host(A), mode="complete")
        return _up(Q, A), _up(R, A)

    @staticmethod
    def backward(ctx, gQ, gR):
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def qr(A: Tensor, mode: str = "reduced"):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns and ``R`` upper triangular,
    like ``torch.linalg.qr`` (``mode`` "reduced", "complete" or "r"). Host-computed: the data
    makes a round trip.

    >>> clgrad.linalg.qr(clgrad.tensor([[3.0, 0.0], [4.0, 1.0]])).R.abs()
    tensor([[5.0000, 0.8000],
            [0.0000, 0.6000]])
    """
    _check_square("linalg.qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        return _Result("linalg_qr", _QrComplete.apply(A))
    Q, R = _Qr.apply(A)
    if mode == "r":
        Q = Q.new_empty((0,))
    return _Result("linalg_qr", (Q, R))


def qr_legacy(input: Tensor, some: bool = True):
    """``torch.qr``: ``linalg.qr`` in mode "reduced" (``some``) or "complete".

    >>> clgrad.qr(clgrad.eye(2)).R.abs()
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _Result("qr", qr(input, "reduced" if some else "complete"))


def _spectrum(a, hermitian):
    """The singular values of each host matrix in ``a``, largest first, or with ``hermitian``
    the moduli of its eigenvalues, from its lower triangle (LAPACK's eigh reads that one)."""
    if hermitian:
        return np.abs(_blas(np.linalg.eigvalsh, a))
    return _blas(np.linalg.svd, a, compute_uv=False)


def _tolerance(s, atol, rtol, shape, dtype):
    """PyTorch's cut-off ``max(atol, rtol * largest)`` per matrix (``atol``/``rtol`` numbers or
    tensors broadcast over the batch): ``rtol`` defaults to ``eps * max(m, n)``, or to 0 where
    a positive ``atol`` is given."""
    atol_h = 0.0 if atol is None else _host_number(atol)
    if rtol is None:
        positive = atol is not None and np.all(np.asarray(atol_h) > 0)
        rtol = 0.0 if positive else float(np.finfo(dtype.np).eps) * max(shape[-2:])
    return np.maximum(atol_h, _host_number(rtol) * s.max(-1, initial=0.0))


def _host_number(v):
    return _host(v) if isinstance(v, Tensor) else np.asarray(v, dtype=np.float64)


class _Pinv(Function):
    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        # one decomposition gives both the cut-off (from its values) and the inverse
        a = _host(A)
        if hermitian:
            a = np.tril(a) + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))
            w, V = _blas(np.linalg.eigh, a)
            cutoff = _tolerance(np.abs(w), atol, rtol, A.shape, A.dtype)
            keep = np.abs(w) > cutoff[..., None]
            w_inv = np.where(keep, 1 / np.where(keep, w, 1), 0)
            p = (V * w_inv[..., None, :]) @ np.conj(np.swapaxes(V, -1, -2))
        else:
            U, sv, Vh = _blas(np.linalg.svd, a, full_matrices=False)
            keep = sv > _tolerance(sv, atol, rtol, A.shape, A.dtype)[..., None]
            s_inv = np.where(keep, 1 / np.where(keep, sv, 1), 0)
            p = (
                np.conj(np.swapaxes(Vh, -1, -2))
                * s_inv[..., None, :]
                @ np.conj(np.swapaxes(U, -1, -2))
            )
        P = _up(p, A)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, g):
        # PyTorch's pinv_backward
        A, P = ctx.saved_tensors
        m, n = A.shape[-2], A.shape[-1]
        Ph, gh = _t(P), _t(g)
        if m <= n:
            K = gh @ P
            KPh = K @ Ph
            gA = -_t(P @ K) + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
        else:
            K = P @ gh
            PhK = Ph @ K
            gA = -_t(K @ P) + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A
        return gA, None, None, None


def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix in ``A``, like ``torch.linalg.pinv``:
    singular values (with ``hermitian``, eigenvalues of the lower triangle) at or below
    ``max(atol, rtol * largest)`` count as zero; ``atol``/``rtol`` may be tensors, one value
    per matrix; ``rcond`` is the older name of ``rtol``. Host-computed: the data makes a round
    trip.

    >>> clgrad.linalg.pinv(clgrad.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    >>> clgrad.linalg.pinv(clgrad.tensor([[2.0, 0.0], [0.0, 0.1]]), atol=0.5)
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    _check_square("linalg.pinv", A, square=False)
    if rcond is not None:
        if rtol is not None:
            raise RuntimeError("linalg.pinv: rcond and rtol cannot both be given")
        rtol = rcond
    return _Pinv.apply(A, atol, rtol, hermitian)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv(input, rtol=rcond)``.

    >>> clgrad.pinverse(clgrad.tensor([[4.0]]))
    tensor([[0.2500]])
    """
    return pinv(input, rtol=rcond)


def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False, tol=None) -> Tensor:
    """The number of singular values of each matrix in ``A`` above the tolerance
    (``max(atol, rtol * largest)``; by default ``rtol = eps * max(m, n)``), like
    ``torch.linalg.matrix_rank`` (int64). Host-computed: the data makes a round trip.

    >>> clgrad.linalg.matrix_rank(clgrad.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    _check_square("linalg.matrix_rank", A, square=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    s = _spectrum(_host(A), hermitian)
    tolerance = _tolerance(s, atol, rtol, A.shape, A.dtype)[..., None]
    return _up((s > tolerance).sum(-1), A, D.int64)


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of the least-squares problem
    ``min |A X - B|``, like ``torch.linalg.lstsq``: with its CPU default driver "gelsy"
    ``residuals`` and ``singular_values`` are empty, ``rank`` is filled; "gelsd" and "gelss"
    give the singular values, and with "gels" too the squared residuals of a tall full-rank
    ``A``. The solution is
    ``pinv(A) @ B`` (its gradient too). Host-computed: the data makes a round trip.

    >>> A = clgrad.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> clgrad.linalg.lstsq(A, clgrad.tensor([[1.0], [2.0], [3.0]])).solution
    tensor([[1.],
            [2.]])
    """
    _check_square("linalg.lstsq", A, square=False)
    vector = B.ndim == A.ndim - 1  # a (batch of) right-hand side vector(s), as torch's
    if B.ndim > A.ndim or A.ndim - B.ndim > 1:
        raise RuntimeError(
            "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    if vector:
        B = B.unsqueeze(-1)
    if A.shape[-2] != B.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    eps = float(np.finfo(A.dtype.np).eps)
    r = rcond if rcond is not None else eps * max(A.shape[-2:])
    X = pinv(A, rtol=r) @ B
    rank = matrix_rank(A, rtol=r)
    empty = X.flatten()[:0]  # (recorded: PyTorch's empty outputs have the node too)
    residuals = empty
    singular_values = empty.detach()  # (not differentiable in PyTorch's lstsq, even empty)
    m, n = A.shape[-2], A.shape[-1]
    if driver in ("gelsd", "gelss"):
        singular_values = svdvals(A).detach()
    if driver == "gels":  # (QR-based: it has no rank to report)
        rank = rank.flatten()[:0]
    if driver not in (None, "gelsy") and m > n and bool((rank == n).all()):
        # the squared residual of each column: computed where every matrix has full rank
        residuals = ((A @ X - B) ** 2).sum(-2)
    if vector:  # (its residuals keep their column, as torch's)
        X = X.squeeze(-1)
    return _Result("linalg_lstsq", (X, residuals, rank, singular_values))


# Pade [6/6] coefficients of exp: c_k = (12 - k)! 6! / (12! k! (6 - k)!)
_PADE6 = tuple(
    math.factorial(12 - k)
    * math.factorial(6)
    / (math.factorial(12) * math.factorial(k) * math.factorial(6 - k))
    for k in range(7)
)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix in ``A``, like
    ``torch.linalg.matrix_exp``: scaling and squaring around a [6/6] Pade approximant (A scaled
    by 2^-s to a 1-norm of at most 1/2, where the approximant is exact to float64 rounding,
    then squared s times); matrix products and a solve, so the gradient flows through it.

    >>> clgrad.linalg.matrix_exp(clgrad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    if A.dtype is D.float16:
        # PyTorch takes half: computed in float32 (the solve has no half kernel), rounded once
        return matrix_exp(A.to(D.float32)).to(D.float16)
    _check_square("linalg.matrix_exp", A)
    if not A.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
            f"{A.dtype.name.capitalize()}"
        )
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A.clone()
    # the largest 1-norm in the batch sets the scaling (one host read)
    norm = float(A.detach().abs().sum(-2).amax())
    if not math.isfinite(norm):  # (no scaling brings it under 1/2: NaN, as PyTorch's)
        return A * 0 + float("nan")
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    X = A / (2.0**squarings) if squarings else A
    identity = eye(n, dtype=A.dtype, device=A.device)
    power = identity.expand(A.shape)
    numerator = power * _PADE6[0]
    denominator = power * _PADE6[0]
    for k in range(1, 7):
        power = power @ X
        numerator = numerator + power * _PADE6[k]
        denominator = denominator + power * (_PADE6[k] * (-1) ** k)
    result = solve(denominator, numerator)
    for _ in range(squarings):
        result = result @ result
    return result


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` multiplied by itself ``n`` times (``n`` < 0: the inverse's power; 0: the identity),
    like ``torch.linalg.matrix_power``: by repeated squaring on ``A``'s device.

    >>> clgrad.linalg.matrix_power(clgrad.tensor([[1, 1], [0, 1]]), 3)
    tensor([[1, 3],
            [0, 1]])
    """
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{A.shape[-2] if A.ndim >= 2 else 1} by {A.shape[-1] if A.ndim else 1} matrices"
        )
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    n = operator.index(n)  # (an integer tensor of one element, a NumPy integer)
    if n == 0:
        I = eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return I.expand(A.shape).clone() if not A.requires_grad else A * 0 + I
    if n < 0:
        A, n = inv(A), -n
    result, square = None, A
    while True:  # binary powering: log2(n) squarings
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            return result if result is not A else A.clone()
        square = matmul(square, square)


def matrix_norm_spectral(A, ord, dim, keepdim):
    """``matrix_norm``'s "nuc", 2 and -2: the sum, largest and smallest singular value."""
    d0, d1 = (d % A.ndim for d in dim)
    x = A.movedim((d0, d1), (-2, -1))
    s = svdvals(x)
    out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def _matrix_norm_any(A, p):
    inf = float("inf")
    if p == "fro":  # the vector norm: gradient 0 at a zero matrix (a sqrt's would be NaN)
        return A.norm(2, (-2, -1))
    if p == "nuc":
        return svdvals(A).sum(-1)
    summed, across = (-2, -1) if p in (1, -1) else (-1, -2)
    sums = A.abs().sum(summed, keepdim=True)
    out = sums.amax(across, keepdim=True) if p in (1, inf) else sums.amin(across, keepdim=True)
    return out.squeeze(-1).squeeze(-1)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """The ``X`` with ``A X = B`` for ``A = L L^T`` given its Cholesky factor ``L`` (``U^T U``
    with ``upper``), like ``torch.cholesky_solve``: two triangular solves.

    >>> L = clgrad.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> clgrad.cholesky_solve(clgrad.tensor([[6.0], [4.0]]), L)
    tensor([[1.],
            [1.]])
    """
    if B.ndim < 2 or L.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {B.ndim} dimensions instead"
            if B.ndim < 2
            else f"u should have at least 2 dimensions, but has {L.ndim} dimensions instead"
        )
    return _out(_CholeskySolve.apply(B, L, upper), out)


class _CholeskySolve(Function):
    """X = (L L^T)^-1 B (U^T U with ``upper``) by two triangular solves, which read only L's
    triangle. The gradient is PyTorch's: it differentiates L L^T as if L were full, so a leaf L
    gets one in its other triangle too (a factor from ``cholesky`` gets nothing from there:
    cholesky's backward reads only the triangle)."""

    @staticmethod
    def forward(ctx, B, L, upper):
        if upper:
            X = solve_triangular(L, solve_triangular(_t(L), B, upper=False), upper=True)
        else:
            X = solve_triangular(_t(L), solve_triangular(L, B, upper=False), upper=True)
        ctx.save_for_backward(L, X)
        ctx.upper, ctx.b_shape = upper, B.shape
        return X

    @staticmethod
    def backward(ctx, g):
        L, X = ctx.saved_tensors
        gB = _CholeskySolve.apply(g, L, ctx.upper)  # (L L^T)^-1 is symmetric
        gL = None
        if ctx.needs_input_grad[1]:
            both = gB @ _t(X)
            both = both + _t(both)
            gL = sum_to(-(L @ both) if ctx.upper else -(both @ L), L.shape)
        return sum_to(gB, ctx.b_shape), gL, None


def cholesky_inverse(L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """The inverse of ``A = L L^T`` (``U^T U`` with ``upper``) from its Cholesky factor, like
    ``torch.cholesky_inverse``.

    >>> clgrad.cholesky_inverse(clgrad.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    _check_square("cholesky_inverse", L)
    n = L.shape[-1]
    identity = eye(n, dtype=L.dtype, device=L.device).expand(L.shape)
    return _out(cholesky_solve(identity, L, upper), out)


def solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular: bool = False):
    """The ``X`` with ``A @ X = B`` (``X @ A = B`` when ``left`` is False) reading only the
    ``upper`` or lower triangle of ``A`` (its diagonal as ones with ``unitriangular``), like
    ``torch.linalg.solve_triangular``; batch dims broadcast. A zero on the diagonal raises
    ``LinAlgError`` (PyTorch returns inf / nan there). Host-computed: the data makes a round
    trip; the gradient reaches only the triangle read.

    >>> A = clgrad.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> clgrad.linalg.solve_triangular(A, clgrad.tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    _check_square("linalg.solve_triangular", A)
    if B.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    if unitriangular:  # the diagonal is not read at all (a NaN there changes nothing)
        T = (A.triu(1) if upper else A.tril(-1)) + eye(A.shape[-1], dtype=A.dtype, device=A.device)
    else:
        T = A.triu() if upper else A.tril()
    return solve(T, B, left=left)


def triangular_solve(
    B, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False
):
    """The deprecated ``torch.triangular_solve``: ``(solution, cloned_coefficient)``, where the
    solution ``X`` has ``op(T) @ X = B`` for the ``upper`` (or lower) triangle ``T`` of ``A``
    (``op`` transposes with ``transpose``), as ``linalg.solve_triangular`` (arguments reversed),
    and ``cloned_coefficient`` is a copy of ``A``, with torch's deprecation warning.

    >>> import warnings
    >>> A = clgrad.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.triangular_solve(clgrad.tensor([[3.0], [4.0]]), A).solution
    tensor([[1.],
            [1.]])
    """
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will "
        "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
        "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
        "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).",
        UserWarning,
        stacklevel=2,
    )
    if B.ndim < 2 or A.ndim < 2:
        raise RuntimeError(
            f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{B.ndim} dimensions instead"
            if B.ndim < 2
            else f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
            f"{A.ndim} dimensions instead"
        )
    # the triangle of A read as op(A)'s: transposing swaps which triangle holds it
    T = A.mT if transpose else A
    X = solve_triangular(T, B, upper=upper != transpose, unitriangular=unitriangular)
    return _Result("triangular_solve", (X, A.clone()))


def _reflector_checks(name, A, tau):
    """torch's checks shared by householder_product and ormqr: ``tau``'s rank, batch and
    dtype against ``A``'s (its length is each caller's own check)."""
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    if A.ndim > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
            f"{list(tau.shape[:-1])}"
        )


def _check_lapack_dtype(kernel, A):
    # torch's LAPACK kernels have no other dtype: its NotImplementedError (a RuntimeError)
    if A.dtype not in (D.float32, D.float64):
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[A.dtype.name]}'"
        )


def _reflectors(A, k):
    """The ``k`` Householder vectors LAPACK stores in ``A`` as the columns of an ``m x k``
    matrix: column i is 0 above row i, 1 at it and ``A[i+1:, i]`` below it."""
    m = A.shape[-2]
    return A[..., :, :k].tril(-1) + eye(m, k, dtype=A.dtype, device=A.device)


def _apply_reflectors(V, tau, C, left, transpose):
    """``op(Q) C`` (``left``) or ``C op(Q)``, ``Q = H_1 ... H_k`` with ``H_i = I - tau_i v_i
    v_i^T``, each reflector applied as a rank-1 update (never forming ``Q``): Tensor ops, so
    autograd differentiates it. ``op`` transposes with ``transpose``; as each ``H_i`` is
    symmetric, that only reverses the order."""
    k = tau.shape[-1]
    if k == 0:
        return C.clone()  # a new tensor, as PyTorch's, even with nothing to apply
    scaled = V * tau.unsqueeze(-2)  # tau_i v_i, column i
    # Q C applies H_k first; C Q applies H_1 first; transposing swaps the two
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for i in order:
        v, tv = V[..., :, i : i + 1], scaled[..., :, i : i + 1]
        if left:
            C = C - tv @ (_t(v) @ C)
        else:
            C = C - (C @ v) @ _t(tv)
    return C


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k`` for each ``m x n`` matrix in ``A`` (``m >=
    n >= k``), ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` the Householder vector stored below
    the diagonal of column ``i`` (LAPACK's orgqr), like ``torch.linalg.householder_product``
    (alias ``torch.orgqr``). Computed on the device as ``k`` rank-1 updates, so the gradient
    reaches ``A``'s strictly lower triangle and ``tau``, as PyTorch's.

    >>> A = clgrad.tensor([[0.0, 0.0], [1.0, 0.0]])
    >>> clgrad.linalg.householder_product(A, clgrad.tensor([1.0, 0.0]))
    tensor([[ 0., -1.],
            [-1.,  0.]])
    """
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if n < tau.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    _reflector_checks(name, A, tau)
    if tau.dtype is not A.dtype:
        raise RuntimeError(
            f"{name}: tau dtype {SCALAR_TYPE_NAMES[tau.dtype.name]} does not match input dtype "
            f"{SCALAR_TYPE_NAMES[A.dtype.name]}"
        )
    _check_lapack_dtype("orgqr_cpu", A)
    k = tau.shape[-1]
    Q = eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    if k == 0:
        # no reflector: the identity, still recorded (the gradient is 0, as PyTorch's); the
        # empty sums add an exact 0 whatever A holds
        zero = A[..., :0, :].sum((-2, -1), keepdim=True) + tau[..., :0].sum(-1)[..., None, None]
        return _out(Q + zero, out)
    return _out(_apply_reflectors(_reflectors(A, k), tau, Q, True, False), out)


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """``torch.orgqr``: ``linalg.householder_product(input, tau)``.

    >>> clgrad.orgqr(clgrad.zeros(2, 1), clgrad.tensor([2.0]))
    tensor([[-1.],
            [ 0.]])
    """
    return householder_product(input, tau)


class _Geqrf(Function):
    @staticmethod
    def forward(ctx, A):
        # NumPy's "raw" QR is LAPACK geqrf's output in Fortran order: the matrix transposed
        h, tau = _lapack("geqrf", lambda a: np.linalg.qr(a, mode="raw"), _host(A))
        return _up(np.swapaxes(h, -1, -2), A), _up(tau, A)

    @staticmethod
    def backward(ctx, ga, gtau):
        # PyTorch has none either (its outputs are recorded, its backward raises this)
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input: Tensor):
    """``(a, tau)``: LAPACK geqrf's QR of each matrix in ``input``, as ``torch.geqrf``: ``R``
    in ``a``'s upper triangle, the Householder vectors below its diagonal (their leading 1
    implicit), ``tau`` their scales (``Q = householder_product(a, tau)``). Not differentiable,
    as PyTorch's: backward through it raises. Host-computed: the data makes a round trip.

    >>> a, tau = clgrad.geqrf(clgrad.tensor([[3.0], [4.0]]))
    >>> a, tau
    (tensor([[-5.0000],
            [ 0.5000]]), tensor([1.6000]))
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype("geqrf_cpu", input)
    return _Result("geqrf", _Geqrf.apply(input))


def ormqr(
    input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False
) -> Tensor:
    """``op(Q) @ other`` (``other @ op(Q)`` when ``left`` is False; ``op`` transposes with
    ``transpose``) for ``Q = H_1 ... H_k`` the square product of the Householder reflectors
    in ``(input, tau)`` as ``geqrf`` returns them, like ``torch.ormqr``. Computed on the device
    as ``k`` rank-1 updates of ``other`` (``Q`` is never formed), so the gradient reaches all
    three, as PyTorch's.

    >>> a, tau = clgrad.geqrf(clgrad.tensor([[3.0], [4.0]]))
    >>> clgrad.ormqr(a, tau, clgrad.tensor([[1.0], [0.0]]))
    tensor([[-0.6000],
            [-0.8000]])
    """
    name = "torch.ormqr"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim and tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(
            f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )
    _reflector_checks(name, input, tau)
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"{name}: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {other.ndim} and input.ndim is equal to {input.ndim}"
        )
    if input.ndim > 2 and tuple(other.shape[:-2]) != tuple(input.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of other to be equal to input.shape[:-2], but "
            f"got {list(other.shape[:-2])}"
        )
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:
            # (torch's message has no space after "dtype")
            raise RuntimeError(
                f"{name}: Expected input and {what} to have the same dtype, but input has dtype"
                f"{SCALAR_TYPE_NAMES[input.dtype.name]} and {what} has dtype "
                f"{SCALAR_TYPE_NAMES[t.dtype.name]}"
            )
    _check_lapack_dtype("ormqr_cpu", input)
    k = tau.shape[-1]
    return _apply_reflectors(_reflectors(input, k), tau, other, left, transpose)


# PyTorch's out= (core.with_out: a tuple of tensors, resized as PyTorch's) on its legacy
# decompositions, however clgrad's namespaces bind them
qr_legacy, svd_legacy, triangular_solve = (
    with_out(fn) for fn in (qr_legacy, svd_legacy, triangular_solve)
)
