"""torch.linalg's decompositions and solvers (host-computed, gradients on the device), the
special functions composed on the device, and the remaining top-level names, against torch on
every test device: values, dtypes, gradients (float64), error classes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_helper import Input, compare

import clgrad

F64 = Input((3, 3), "float64")
B64 = Input((2, 3, 3), "float64")
T64 = Input((4, 3), "float64")
W64 = Input((3, 4), "float64")
F32 = Input((3, 3), "float32")
V64 = Input((3,), "float64")


def _spd(t, x):
    """A well-conditioned symmetric positive-definite matrix from ``x``."""
    return x @ x.mT + 3 * t.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _dominant(t, x):
    """A well-conditioned (diagonally dominant) matrix from ``x``."""
    return x + 6 * t.eye(x.shape[-1], dtype=x.dtype, device=x.device)


LINALG = [
    ("inv", lambda t, x: t.linalg.inv(_dominant(t, x)), [B64]),
    ("inv-f32", lambda t, x: t.linalg.inv(_dominant(t, x)), [F32]),
    ("inverse", lambda t, x: t.inverse(_dominant(t, x)), [F64]),
    ("det", lambda t, x: t.linalg.det(_dominant(t, x)), [B64]),
    ("det-method", lambda x: (x * 2).det(), [F64]),
    ("slogdet", lambda t, x: t.linalg.slogdet(x), [B64]),
    ("logdet", lambda t, x: t.logdet(_spd(t, x)), [F64]),
    (
        "solve",
        lambda t, a, b: t.linalg.solve(_dominant(t, a), b),
        [B64, Input((2, 3, 2), "float64")],
    ),
    ("solve-vec", lambda t, a, b: t.linalg.solve(_dominant(t, a), b), [F64, V64]),
    (
        "solve-broadcast",
        lambda t, a, b: t.linalg.solve(_dominant(t, a), b),
        [F64, Input((2, 3, 1), "float64")],
    ),
    (
        "solve-right",
        lambda t, a, b: t.linalg.solve(_dominant(t, a), b, left=False),
        [F64, Input((2, 3), "float64")],
    ),
    ("cholesky", lambda t, x: t.linalg.cholesky(_spd(t, x)), [B64]),
    ("cholesky-upper", lambda t, x: t.cholesky(_spd(t, x), upper=True), [F64]),
    ("eigvalsh", lambda t, x: t.linalg.eigvalsh(_spd(t, x)), [B64]),
    # eigenvectors only up to sign: compare sign-free functions of them
    (
        "eigh",
        lambda t, x: (lambda w, v: (w, v * v, v @ t.diag_embed(w) @ v.mT))(
            *t.linalg.eigh(x + x.mT)
        ),
        [F64],
    ),
    ("svdvals", lambda t, x: t.linalg.svdvals(x), [T64]),
    (
        "svd-tall",
        lambda t, x: (lambda u, s, vh: (s, u @ vh, (u * u).sum(-1)))(
            *t.linalg.svd(x, full_matrices=False)
        ),
        [T64],
    ),
    (
        "svd-wide",
        lambda t, x: (lambda u, s, vh: (s, u @ vh))(*t.linalg.svd(x, full_matrices=False)),
        [W64],
    ),
    ("svd-legacy", lambda t, x: (lambda u, s, v: (s, u @ v.mT))(*t.svd(x)), [B64]),
    (
        "qr",
        lambda t, x: (
            lambda q, r: (q @ r, r.abs(), (q * r.diagonal(0, -2, -1).sign().unsqueeze(-2)))
        )(*t.linalg.qr(x)),
        [T64],
    ),
    ("pinv", lambda t, x: t.linalg.pinv(x), [T64]),
    ("pinv-wide", lambda t, x: t.linalg.pinv(x), [W64]),
    ("pinverse", lambda t, x: t.pinverse(x), [F64]),
    ("lstsq", lambda t, a, b: t.linalg.lstsq(a, b).solution, [T64, Input((4, 2), "float64")]),
    ("matrix_rank", lambda t, x: t.linalg.matrix_rank(x[..., :1] * x[..., :1, :]), [B64]),
    ("matrix_rank-full", lambda t, x: t.linalg.matrix_rank(x), [T64]),
    ("matrix_power", lambda t, x: (t.linalg.matrix_power(x, 3), t.matrix_power(x, 1)), [B64]),
    ("matrix_power-neg", lambda t, x: t.linalg.matrix_power(_dominant(t, x), -2), [F64]),
    ("matrix_power-int", lambda t, x: t.linalg.matrix_power(x, 4), [Input((3, 3), "int64", -2, 2)]),
    (
        "matrix_norm-nuc",
        lambda t, x: (
            t.linalg.matrix_norm(x, "nuc"),
            t.linalg.matrix_norm(x, 2),
            t.linalg.matrix_norm(x, -2),
        ),
        [T64],
    ),
    ("cond", lambda t, x: t.linalg.cond(x), [F64]),
    # torch's own backward of cond(p=1) fails (it writes a saved inverse in place): values only
    ("cond-1", lambda t, x: t.linalg.cond(_dominant(t, x).detach(), 1), [F64]),
    (
        "solve_triangular",
        lambda t, a, b: (
            t.linalg.solve_triangular(_dominant(t, a), b, upper=True),
            t.linalg.solve_triangular(_dominant(t, a), b.mT, upper=False, left=False),
            t.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
        ),
        [B64, Input((2, 3, 3), "float64")],
    ),
    # L read as its triangle, differentiated as a full matrix (PyTorch's formula): the leaf
    # gets a gradient in the triangle the forward does not read
    (
        "cholesky_solve",
        lambda t, b, x: (
            t.cholesky_solve(b, _dominant(t, x)),
            t.cholesky_solve(b[0], _dominant(t, x), upper=True),
        ),
        [Input((2, 3, 2), "float64"), F64],
    ),
    (
        "cholesky_inverse",
        lambda t, x: (
            t.cholesky_inverse(_dominant(t, x)),
            t.cholesky_inverse(_dominant(t, x), upper=True),
        ),
        [F64],
    ),
    ("inv-int", lambda t, x: t.linalg.inv(x), [Input((2, 2), "int64")]),
    ("inv-nonsquare", lambda t, x: t.linalg.inv(x), [T64]),
    ("det-1d", lambda t, x: t.linalg.det(x), [V64]),
]


@pytest.mark.parametrize("fn, inputs", [c[1:] for c in LINALG], ids=[c[0] for c in LINALG])
def test_linalg_against_torch(fn, inputs):
    compare(fn, *inputs, layouts=["contiguous", "transposed"], rtol=1e-6, atol=1e-6,
            grad_rtol=1e-6, grad_atol=1e-6)  # fmt: skip


@pytest.mark.parametrize(
    "name, fn",
    [("inv", lambda t, a: t.linalg.inv(a)), ("solve", lambda t, a: t.linalg.solve(a, a[0])),
     ("cholesky", lambda t, a: t.linalg.cholesky(a - 2 * a.new_ones(2).diag_embed()))],
)  # fmt: skip
def test_singular_raises_linalg_error(name, fn):
    assert issubclass(clgrad.linalg.LinAlgError, RuntimeError)
    singular = [[1.0, 2.0], [2.0, 4.0]]
    with pytest.raises(torch.linalg.LinAlgError):
        fn(torch, torch.tensor(singular) if name != "cholesky" else torch.eye(2))
    for device in ("cpu", "cl:0") if "cl:0" in _devices() else ("cpu",):
        a = clgrad.tensor(singular if name != "cholesky" else [[1.0, 0], [0, 1.0]], device=device)
        with pytest.raises(clgrad.linalg.LinAlgError):
            fn(clgrad, a)


def _devices():
    from conftest import DEVICES

    return DEVICES


@pytest.mark.parametrize("name", ["inv", "det", "cholesky", "eigh", "svd", "qr", "solve", "pinv"])
def test_gradcheck(name):
    """float64 gradcheck of each decomposition's backward against finite differences."""
    fns = {
        "inv": lambda a: clgrad.linalg.inv(a + 4 * clgrad.eye(3, dtype=a.dtype)),
        "det": lambda a: clgrad.linalg.det(a),
        "cholesky": lambda a: clgrad.linalg.cholesky(a @ a.mT + clgrad.eye(3, dtype=a.dtype)),
        "eigh": lambda a: (lambda w, v: (w, v * v))(*clgrad.linalg.eigh(a + a.mT)),
        "svd": lambda a: (lambda u, s, vh: (s, u @ vh))(*clgrad.linalg.svd(a[:, :2], False)),
        "qr": lambda a: (lambda q, r: (q @ r.sign().diag().diag(), r.abs()))(
            *clgrad.linalg.qr(a[:, :2])
        ),
        "solve": lambda a: clgrad.linalg.solve(a + 4 * clgrad.eye(3, dtype=a.dtype), a[:, :1]),
        "pinv": lambda a: clgrad.linalg.pinv(a[:, :2]),
    }
    torch.manual_seed(0)
    a = clgrad.tensor(torch.randn(3, 3, dtype=torch.float64).numpy(), requires_grad=True)
    assert clgrad.autograd.gradcheck(fns[name], (a,), eps=1e-6, atol=1e-5)


SPECIAL = [
    ("lgamma", lambda t, x: t.lgamma(x), [Input((3, 4), "float64", -4.5, 12)]),
    ("lgamma-f32", lambda t, x: t.lgamma(x), [Input((3, 4), "float32", 0.1, 30)]),
    ("lgamma-int", lambda t, x: t.lgamma(x), [Input((5,), "int64", 1, 9)]),
    ("gammaln", lambda t, x: t.special.gammaln(x), [Input((5,), "float64", 0.2, 5)]),
    ("digamma", lambda t, x: t.digamma(x), [Input((3, 4), "float64", -4.5, 12)]),
    ("digamma-f32", lambda t, x: t.special.psi(x), [Input((3, 4), "float32", 0.1, 30)]),
    (
        "digamma-poles",
        lambda t, x: t.digamma(x),
        [Input(values=[0.0, -1.0, -2.0, 1.0], grad=False)],
    ),
    ("erfinv", lambda t, x: t.erfinv(x), [Input((3, 4), "float64", -0.999, 0.999)]),
    ("erfinv-f32", lambda t, x: t.special.erfinv(x), [Input((3, 4), "float32", -0.99, 0.99)]),
    ("erfinv-edges", lambda t, x: t.erfinv(x), [Input(values=[-1.0, 1.0, 1.5, 0.0])]),
    ("i0", lambda t, x: t.i0(x), [Input((3, 4), "float64", -30, 30)]),
    ("i0-f32", lambda t, x: t.special.i0(x), [Input((6,), "float32", -5, 5)]),
    (
        "xlog1py",
        lambda t, x, y: t.special.xlog1py(x * (x > 0), y),
        [F32, Input((3, 3), "float32", -0.9, 3)],
    ),
    (
        "gcd",
        lambda t, x, y: (t.gcd(x, y), t.lcm(x, y)),
        [Input((8,), "int64", -30, 30), Input((8,), "int64", -12, 12)],
    ),
    ("gcd-float", lambda t, x: t.gcd(x, x), [F32]),
    (
        "i1-i0e-i1e",
        lambda t, x: (t.special.i1(x), t.special.i0e(x), t.special.i1e(x)),
        [Input((3, 4), "float64", -40, 40)],
    ),
    ("multigammaln", lambda t, x: t.special.multigammaln(x, 3), [Input((5,), "float64", 1.1, 6)]),
    (
        "multigammaln-low",
        lambda t, x: t.special.multigammaln(x, 3),
        [Input((5,), "float64", 0.1, 0.9)],
    ),
    ("multigammaln-p0", lambda t, x: t.special.multigammaln(x, 0), [Input((5,), "float64", 1, 2)]),
    ("frexp", lambda t, x: t.frexp(x * 100), [Input((3, 4), "float32")]),
    ("ldexp", lambda t, x, e: t.ldexp(x, e), [F32, Input((3, 3), "int64", 0, 3)]),
]


@pytest.mark.parametrize("fn, inputs", [c[1:] for c in SPECIAL], ids=[c[0] for c in SPECIAL])
def test_special_against_torch(fn, inputs):
    f64 = any(isinstance(i, Input) and i.dtype == "float64" for i in inputs)
    tol = 1e-7 if f64 else None
    compare(fn, *inputs, layouts=["contiguous"], rtol=tol, atol=tol,
            grad_rtol=1e-6 if f64 else 1e-4, grad_atol=1e-6 if f64 else 1e-4)  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_eig_and_eigvals_against_torch(device, dtype):
    # eigenvalues in LAPACK geev's order; eigenvectors up to a phase per vector (each LAPACK
    # picks its own), so compared by phase-free functions; gradients of a phase-free loss
    import numpy as np
    from conftest import supports

    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip("no float64 here")
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 4, 4))
    if dtype == "complex64":
        A = A + 1j * rng.standard_normal((2, 4, 4))
    A = A.astype(dtype)
    results = []
    for lib, kw in ((torch, {}), (clgrad, {"device": device})):
        a = lib.tensor(A, requires_grad=True, **kw)
        L, V = lib.linalg.eig(a)
        weights = lib.arange(4.0, **kw)
        loss = (L.real**2).sum() + 0.3 * L.imag.sum() + (V.abs() ** 2 * weights).sum()
        loss.backward()
        rebuilt = V @ lib.diag_embed(L) @ lib.linalg.inv(V) if lib is torch else None
        results.append([L, V.abs(), a.grad, lib.linalg.eigvals(a), rebuilt])
    (L, Vabs, grad, vals, rebuilt), (cL, cVabs, cgrad, cvals, _) = results
    tol = 1e-4 if dtype != "float64" else 1e-10
    assert str(cL.dtype).split(".")[1] == str(L.dtype).split(".")[1]
    for got, want in ((cL, L), (cVabs, Vabs), (cgrad, grad), (cvals, vals)):
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=tol)
    assert rebuilt is not None


def test_eig_refusals_as_torch():
    for lib in (torch, clgrad):
        with pytest.raises(RuntimeError, match="square"):
            lib.linalg.eig(lib.ones(2, 3))
        with pytest.raises(RuntimeError):
            lib.linalg.eigvals(lib.ones(2, 2, dtype=lib.int64))
        # a loss that depends on the eigenvectors' phases is ill-defined
        a = lib.tensor([[0.0, -1.0], [1.0, 0.0]], requires_grad=True)
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            lib.linalg.eig(a)[1].imag.sum().backward()


@pytest.mark.filterwarnings("ignore:torch.(lu|triangular_solve) is deprecated")
@pytest.mark.parametrize(
    "call",
    [
        lambda L, A: L.linalg.qr(A),
        lambda L, A: L.qr(A),
        lambda L, A: A.qr(),
        lambda L, A: L.linalg.svd(A),
        lambda L, A: L.svd(A),
        lambda L, A: L.linalg.eigh(A @ A.mT),
        lambda L, A: L.linalg.eig(A),
        lambda L, A: L.linalg.lstsq(A, A),
        lambda L, A: L.linalg.lu(A),
        lambda L, A: L.linalg.lu_factor(A),
        lambda L, A: L.linalg.lu_factor_ex(A),
        lambda L, A: L.lu_unpack(*L.linalg.lu_factor(A)),
        lambda L, A: L.lu(A, get_infos=True),
        lambda L, A: L.linalg.ldl_factor(A @ A.mT),
        lambda L, A: L.linalg.ldl_factor_ex(A @ A.mT),
        lambda L, A: L.linalg.inv_ex(A),
        lambda L, A: L.linalg.cholesky_ex(A @ A.mT),
        lambda L, A: L.linalg.solve_ex(A, A),
        lambda L, A: L.triangular_solve(A, A.triu()),
        lambda L, A: L.geqrf(A),
        lambda L, A: L.linalg.slogdet(A),
        lambda L, A: L.slogdet(A),
        lambda L, A: A.slogdet(),
    ],
)
def test_linalg_results_are_torchs_named_tuples(call):
    """Each result is torch's ``return_types`` class: its name, its fields by name, and how it
    prints (a field per line), as tutorials print them."""
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=np.float32)
    got = call(clgrad, clgrad.tensor(a))
    want = call(torch, torch.tensor(a))
    assert type(got).__name__ == type(want).__name__
    assert isinstance(got, getattr(clgrad.return_types, type(want).__name__))
    head = repr(got).split("(\n")[0]
    assert head.replace("clgrad.", "torch.") == repr(want).split("(\n")[0]
    fields = [line.split("=")[0] for line in repr(want).split("\n") if "=tensor(" in line]
    assert [line.split("=")[0] for line in repr(got).split("\n") if "=tensor(" in line] == fields
    for name in fields:
        assert getattr(got, name).shape == tuple(getattr(want, name).shape)


def test_eigenvalues_alone_differentiate_at_repeated_eigenvalues(device):
    """No gradient reaches the eigenvectors: the gaps between eigenvalues are not divided by
    (the identity's gradient was all NaN), as torch's."""
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")
    for make in (
        lambda lib: lib.eye(3, dtype=lib.float64),
        lambda lib: 2 * lib.ones(2, 2).double(),
    ):
        grads = []
        for lib, dev in ((torch, "cpu"), (clgrad, device)):
            a = make(lib).to(dev).requires_grad_()
            (lib.linalg.eigvalsh(a) ** 2).sum().backward()
            b = make(lib).to(dev).requires_grad_()
            lib.linalg.eigh(b).eigenvalues.sum().backward()
            grads.append([a.grad.cpu().numpy(), b.grad.cpu().numpy()])
        for got, want in zip(grads[1], grads[0]):
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix(device):
    """A singular matrix's det has a gradient (the cofactor matrix, through the SVD, as torch's
    double-backward path computes it) where inverting it raised LinAlgError."""
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")
    cases = {
        (1.0, 2.0, 2.0, 4.0): [[4.0, -2.0], [-2.0, 1.0]],
        (2.0, 0.0, 0.0, 0.0): [[0.0, 0.0], [0.0, 2.0]],
        (0.0, 0.0, 0.0, 0.0): [[0.0, 0.0], [0.0, 0.0]],
    }
    for values, cofactors in cases.items():
        a = clgrad.tensor(values, dtype=clgrad.float64, device=device).reshape(2, 2)
        a.requires_grad_()
        clgrad.linalg.det(a).backward()
        np.testing.assert_allclose(a.grad.cpu().numpy(), cofactors, atol=1e-12)
    # and where it is invertible, Jacobi's formula as before, against torch
    m = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 1.0], [1.0, 0.2, 4.0]])
    a = clgrad.tensor(m, device=device, requires_grad=True)
    t = torch.tensor(m, requires_grad=True)
    clgrad.linalg.det(a).backward()
    torch.linalg.det(t).backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-12)
