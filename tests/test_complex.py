"""complex64 / complex128 tensors against torch on every device: creation, printing, promotion,
arithmetic and its gradients (for real losses), structural ops, casts and refusals."""

import io
import pickle
import warnings

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

RNG = np.random.default_rng(0)
A = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
B = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
R = RNG.standard_normal((3, 4)).astype(np.float32)


def _name(dt):
    return str(dt).split(".")[-1]


def _both(device, fn, *arrays, grad=True, rtol=2e-5):
    """fn(lib, *tensors) in torch and clgrad: values, dtype and, for a real loss of the result,
    every input's gradient."""
    results = []
    for lib in (torch, clgrad):
        kw = {} if lib is torch else {"device": device}
        xs = [lib.tensor(a, requires_grad=grad and a.dtype.kind in "fc", **kw) for a in arrays]
        y = fn(lib, *xs)
        grads = None
        if grad and (y.is_complex() or y.is_floating_point()):
            y2 = y.resolve_conj() if lib is torch else y
            if y.is_complex():
                loss = (lib.view_as_real(y2) * 1.5).sum() + y2.abs().sum()
            else:
                loss = (y2 * 1.5).sum()
            loss.backward()
            grads = [x.grad for x in xs if x.requires_grad]
        results.append((y, grads))
    (ty, tg), (cy, cg_) = results
    assert _name(ty.dtype) == _name(cy.dtype)
    expected = ty.detach().resolve_conj().numpy()
    np.testing.assert_allclose(cy.detach().cpu().numpy(), expected, rtol=rtol, atol=rtol)
    if tg is not None:
        for a, b in zip(tg, cg_):
            assert _name(a.dtype) == _name(b.dtype)
            np.testing.assert_allclose(
                b.cpu().numpy(), a.resolve_conj().numpy(), rtol=1e-4, atol=1e-4
            )
    return cy


OPS = {
    "mul": (lambda L, a, b: a * b, [A, B]),
    "mul_real": (lambda L, a, r: a * r, [A, R]),
    "add": (lambda L, a, b: a + b, [A, B]),
    "sub_number": (lambda L, a: 2 - a, [A]),
    "add_complex_number": (lambda L, a: a + (1 - 2j), [A]),
    "real_times_complex_number": (lambda L, r: (0.5 + 1j) * r, [R]),
    "div": (lambda L, a, b: a / b, [A, B]),
    "div_real": (lambda L, a, r: a / r, [A, R]),
    "rdiv": (lambda L, a: 2 / a, [A]),
    "neg": (lambda L, a: -a, [A]),
    "abs": (lambda L, a: a.abs(), [A]),
    "angle": (lambda L, a: a.angle(), [A]),
    "exp": (lambda L, a: a.exp(), [A]),
    "log": (lambda L, a: a.log(), [A]),
    "sqrt": (lambda L, a: a.sqrt(), [A]),
    "reciprocal": (lambda L, a: a.reciprocal(), [A]),
    "sin_cos_tanh": (lambda L, a: a.sin() + a.cos() * a.tanh(), [A * 0.5]),
    "sigmoid": (lambda L, a: a.sigmoid(), [A]),
    "pow": (lambda L, a, b: a**2 + a**b, [A, B]),
    "conj": (lambda L, a: a.conj() * 2, [A]),
    "real_imag": (lambda L, a: a.real * 2 + a.imag, [A]),
    "complex": (lambda L, r, i: L.complex(r, i), [R, R * 2]),
    "polar": (lambda L, r, t: L.polar(r, t), [np.abs(R), R]),
    "sum": (lambda L, a: a.sum(), [A]),
    "sum_dim": (lambda L, a: a.sum(1, keepdim=True), [A]),
    "mean": (lambda L, a: a.mean(0), [A]),
    "matmul": (lambda L, a, b: a @ b.T, [A, B]),
    "matvec": (lambda L, a, b: a @ b[0], [A, B]),
    "view_as_real": (lambda L, a: L.view_as_real(a) * 2, [A]),
    "view_as_complex": (lambda L, r: L.view_as_complex(r.reshape(6, 2)), [R]),
    "reshape_permute": (lambda L, a: a.t().reshape(12) * 1, [A]),
    "contiguous": (lambda L, a: a.t().contiguous(), [A]),
    "cat_stack": (lambda L, a, b: L.stack([L.cat([a, b], 1), L.cat([b, a], 1)]), [A, B]),
    "flip_roll": (lambda L, a: a.flip(0).roll(1, 1) + a.roll(2), [A]),
    "index_select": (lambda L, a: a.index_select(1, L.tensor([2, 0]).to(a.device)), [A]),
    "indexing": (lambda L, a: a[[0, 2]].sum() + a[a.real > 0].sum() + a[..., 1].sum(), [A]),
    "where": (lambda L, a, b: L.where(a.real > 0, a, b), [A, B]),
    "expand": (lambda L, a: a.unsqueeze(0).expand(2, 3, 4) * 1, [A]),
    "promote_float64": (lambda L, r, a: r + a, [R.astype(np.float64), A]),
    "cast": (lambda L, a: a.to(L.complex128).to(L.complex64) * 1, [A]),
    "gather_take": (
        lambda L, a: (
            a.gather(1, _idx(L, a, [[1, 0], [0, 0], [2, 3]])) * 1
            + a.take(_idx(L, a, [0, 5, 11])).reshape(3, 1)
        ),
        [A],
    ),
    "scatter": (
        lambda L, a, b: (
            a.scatter(1, _idx(L, a, [[1], [0], [3]]), b[:, :1])
            + a.scatter(0, _idx(L, a, [[2, 0, 1, 1]]), 1j)
        ),
        [A, B],
    ),
    "masked_fill": (lambda L, a: a.masked_fill(a.real > 0, 1 - 1j), [A]),
    "tril_triu": (lambda L, a: a.tril() + a.triu(1) * 2, [A]),
    "cumsum": (lambda L, a: a.cumsum(1), [A]),
    "prod": (lambda L, a: a.prod(1) + a[:, :3].prod(), [A]),
    "var_std": (lambda L, a: a.var(1) + a.std(), [A]),
    "norm": (lambda L, a: a.norm() + L.linalg.vector_norm(a, 1, dim=0), [A]),
    "vdot": (lambda L, a, b: L.vdot(a[0], b[1]), [A, B]),
}


def _idx(lib, like, values):
    return lib.tensor(values).to(like.device)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_and_gradient_as_torch(device, name):
    fn, arrays = OPS[name]
    if any(a.dtype == np.float64 for a in arrays) or name == "cast":
        if not supports(device, clgrad.float64):
            pytest.skip("no float64 on this device")
    _both(device, fn, *arrays)


@pytest.mark.parametrize(
    "name", ["eq", "ne", "isnan", "isinf", "isfinite", "eq_number", "ne_number"]
)
def test_predicates(device, name):
    fn = {
        "eq": lambda L, a, b: a == b,
        "ne": lambda L, a, b: a != b,
        "isnan": lambda L, a, b: L.isnan(a * b / 0),
        "isinf": lambda L, a, b: L.isinf(a / 0),
        "isfinite": lambda L, a, b: L.isfinite(a / (b.real > 0)),
        "eq_number": lambda L, a, b: (a * 0 + 1j) == 1j,
        "ne_number": lambda L, a, b: (a * 0) != 0,
    }[name]
    _both(device, fn, A, A.copy() if name == "eq" else B, grad=False)


def test_creation(device):
    kw = {"device": device}
    z = clgrad.tensor([1 + 2j, 3.5 - 4j], **kw)
    assert z.dtype is clgrad.complex64 and z.is_complex() and not z.is_floating_point()
    assert clgrad.cfloat is clgrad.complex64 and clgrad.cdouble is clgrad.complex128
    assert clgrad.complex64.is_complex and not clgrad.float32.is_complex
    assert clgrad.complex64.to_real() is clgrad.float32
    assert clgrad.float64.to_complex() is clgrad.complex128
    assert z.tolist() == [1 + 2j, 3.5 - 4j] and z[0].item() == 1 + 2j
    assert isinstance(z[1].item(), complex)
    assert float(clgrad.tensor(2 + 0j)) == 2.0 and complex(clgrad.tensor(1.5)) == 1.5 + 0j
    with pytest.raises(RuntimeError, match="without overflow"):
        float(clgrad.tensor(1 + 2j))
    assert clgrad.tensor([1j]).type() == "clgrad.ComplexFloatTensor"
    np.testing.assert_array_equal(z.cpu().numpy(), np.array([1 + 2j, 3.5 - 4j], np.complex64))
    a = np.array([1 + 1j, 2], dtype=np.complex64)
    assert clgrad.tensor(a, **kw).dtype is clgrad.complex64
    assert clgrad.zeros(2, dtype=clgrad.cfloat, **kw).tolist() == [0j, 0j]
    assert clgrad.ones(2, dtype=clgrad.cfloat, **kw).tolist() == [1, 1]
    assert clgrad.full((2,), 1 - 1j, **kw).tolist() == [1 - 1j, 1 - 1j]
    assert clgrad.zeros_like(z).dtype is clgrad.complex64
    assert clgrad.empty(3, dtype=clgrad.complex64, **kw).shape == (3,)
    _ = clgrad.manual_seed(0)
    r = clgrad.randn(20000, dtype=clgrad.complex64, **kw)
    assert r.dtype is clgrad.complex64
    parts = clgrad.view_as_real(r)
    assert abs(float(parts.var()) - 0.5) < 0.03  # each part N(0, 1/2), as torch's
    assert abs(float((r.abs() ** 2).mean()) - 1.0) < 0.05


def test_complex128_creation(device):
    if not supports(device, clgrad.float64):
        pytest.skip("no float64 on this device")
    kw = {"device": device}
    z = clgrad.tensor(np.array([1 + 1j, 2], dtype=np.complex128), **kw)
    assert z.dtype is clgrad.complex128
    assert repr(z.cpu()) == "tensor([1.+1.j, 2.+0.j], dtype=clgrad.complex128)"
    clgrad.set_default_dtype(clgrad.float64)
    try:
        assert clgrad.tensor([1j], **kw).dtype is clgrad.complex128
        assert (clgrad.tensor([1.5], **kw) * 1j).dtype is clgrad.complex128
        assert repr(clgrad.tensor([1j])) == "tensor([0.+1.j])"
    finally:
        clgrad.set_default_dtype(clgrad.float32)


@pytest.mark.parametrize(
    "values",
    [[1 + 2j, 3.5 - 4j], [[1e-5 + 2j, 300 - 4j], [0, 1e10j]], 1j, [0.25 + 0j, -1j, 2 + 0.5j]],
)
def test_repr_as_torch(values):
    expected = repr(torch.tensor(values)).replace("torch", "clgrad")
    assert repr(clgrad.tensor(values)) == expected


def test_promotion():
    assert clgrad.promote_types(clgrad.float64, clgrad.complex64) is clgrad.complex128
    assert clgrad.promote_types(clgrad.int64, clgrad.complex64) is clgrad.complex64
    assert clgrad.promote_types(clgrad.float16, clgrad.complex64) is clgrad.complex64
    assert clgrad.result_type(clgrad.tensor([1.0]), 1j) is clgrad.complex64
    assert clgrad.result_type(clgrad.tensor([1]), 1j) is clgrad.complex64
    assert (clgrad.tensor([1, 2]) * 1j).tolist() == [1j, 2j]
    assert (clgrad.tensor([1.0]) + clgrad.tensor([1j])).dtype is clgrad.complex64
    assert clgrad.finfo(clgrad.complex64).eps == clgrad.finfo(clgrad.float32).eps


def test_casts(device):
    z = clgrad.tensor([1 + 2j, -3j], device=device)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.float().tolist() == [1.0, 0.0]
    assert clgrad.tensor([1, 2], device=device).to(clgrad.complex64).tolist() == [1, 2]
    assert z.cpu().tolist() == z.tolist()
    t = clgrad.tensor([[1 + 2j, 3], [4, 5j]], device=device).t()
    assert t.cpu().tolist() == [[1 + 2j, 4], [3, 5j]]
    assert t.to("cpu").to(device).tolist() == [[1 + 2j, 4], [3, 5j]]


def test_cfloat_and_cdouble_methods(device):
    # Tensor.cfloat() / cdouble(), as .float() / .double(): a cast with a gradient
    x = clgrad.tensor([1.0, 2.0], device=device, requires_grad=True)
    z = x.cfloat()
    assert z.dtype == clgrad.complex64 and z.tolist() == [1, 2]
    (z * z).real.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    if supports(device, clgrad.complex128):
        assert clgrad.tensor([1, 2], device=device).cdouble().dtype == clgrad.complex128


def test_writes(device):
    z = clgrad.zeros(3, dtype=clgrad.complex64, device=device)
    z[1] = 2 + 3j
    z[0] = clgrad.tensor(5.0, device=device)
    z[clgrad.tensor([2], device=device)] = 1j
    assert z.tolist() == [5, 2 + 3j, 1j]
    z.real[1] = 7
    z.imag.add_(1)
    assert z.tolist() == [5 + 1j, 7 + 4j, 2j]
    z.real = clgrad.ones(3, device=device)
    assert z.tolist() == [1 + 1j, 1 + 4j, 1 + 2j]
    z += 1j
    z *= 2
    z -= clgrad.tensor([1.0, 2.0, 3.0], device=device)
    assert z.tolist() == [1 + 4j, 0 + 10j, -1 + 6j]
    x = clgrad.tensor([1.0, 2.0], device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x += 1j


def test_gradients_of_complex_leaves(device):
    for lib in (torch, clgrad):
        kw = {} if lib is torch else {"device": device}
        z = lib.tensor([1 + 1j, 2 - 1j, 0j], requires_grad=True, **kw)
        w = lib.tensor([0.5j, 2, 1 + 1j], **kw)
        ((z * w).abs() ** 2).sum().backward()
        g1 = z.grad.clone()
        z.grad = None
        (z.real + 2 * z.imag + z.abs() + z.angle()).sum().backward()
        g2 = z.grad.clone()
        z.grad = None
        (z * z).backward(lib.tensor([1 + 0.5j, 1j, 1], **kw))
        g3 = z.grad
        if lib is torch:
            expected = [g.numpy() for g in (g1, g2, g3)]
        else:
            for e, g in zip(expected, (g1, g2, g3)):
                np.testing.assert_allclose(g.cpu().numpy(), e, rtol=1e-5, atol=1e-6)


def test_refusals_as_torch(device):
    z = clgrad.tensor([1 + 2j], device=device)
    for fn in (
        lambda: z < 1,
        lambda: z.max(),
        lambda: z.amin(),
        lambda: clgrad.relu(z),
        lambda: z.floor(),
        lambda: z.round(),
        lambda: z.sign(),
        lambda: z.clamp(0, 1),
        lambda: z.atan2(z),
        lambda: z.remainder(2),
        lambda: z.argmax(),
        lambda: z.sort(),
        lambda: z.topk(1),
        lambda: z.median(),
        lambda: z.unique(),
        lambda: z.clone().abs_(),
    ):
        with pytest.raises(RuntimeError):
            fn()
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        clgrad.tensor([1 + 2j], requires_grad=True, device=device).sum().backward()
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        clgrad.view_as_complex(clgrad.zeros(3, device=device))
    with pytest.raises(RuntimeError, match="only supported for complex"):
        clgrad.view_as_real(clgrad.zeros(3, device=device))
    with pytest.raises(RuntimeError, match="non-complex"):
        _ = clgrad.tensor([1.0]).imag


def test_sgn_and_conjugate_transpose(device):
    z = clgrad.tensor([[3 + 4j, 0j], [1j, 2]], device=device)
    np.testing.assert_allclose(
        z.sgn().cpu().numpy(), torch.tensor([[3 + 4j, 0j], [1j, 2]]).sgn().numpy(), rtol=1e-6
    )
    assert z.mH.tolist() == [[3 - 4j, -1j], [0j, 2]]
    assert z.mT.tolist() == [[3 + 4j, 1j], [0j, 2]]


def test_save_load_pickle(device):
    z = clgrad.tensor([1 + 1j, 2], device=device)
    assert pickle.loads(pickle.dumps(z)).tolist() == z.tolist()
    buf = io.BytesIO()
    clgrad.save({"z": z}, buf)
    buf.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = clgrad.load(buf)["z"]
    assert loaded.dtype is clgrad.complex64 and loaded.tolist() == z.tolist()


def _inplace_through_views(lib, kw, case):
    if case == "real_of_complex":
        w = lib.tensor([1 + 2j, 3 - 1j, -2j], requires_grad=True, **kw)
        z = w * 1
        z.real.mul_(2)
        z.imag[0] = 5.0
        (z.abs() ** 2).sum().backward()
        return z, w.grad
    if case == "write_parts":
        x = lib.tensor([1.0, 2.0], requires_grad=True, **kw)
        z = lib.zeros(2, dtype=lib.complex64, **kw)
        z.real = x * 2
        z[1] = x[0] * 1j
        (z.abs() ** 2).sum().backward()
        return z, x.grad
    if case == "complex_of_real":
        r = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, **kw)
        y = r * 1
        lib.view_as_complex(y).mul_(1j)
        (y**2 * lib.tensor([1.0, 2.0], **kw)).sum().backward()
        return y, r.grad
    w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True, **kw)
    z = w * 1
    zr = lib.view_as_real(z)
    zr[:, 1] = zr[:, 0] * 3
    (lib.view_as_real(z) * lib.tensor([1.0, 2.0], **kw)).sum().backward()
    return z, w.grad


@pytest.mark.parametrize("case", ["real_of_complex", "write_parts", "complex_of_real", "slices"])
def test_inplace_through_views_as_torch(device, case):
    # a write through .real / .imag / view_as_real / view_as_complex rewrites the base's
    # history (CopySlices through the view of the other kind), as torch's
    expected = _inplace_through_views(torch, {}, case)
    got = _inplace_through_views(clgrad, {"device": device}, case)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g.detach().cpu().numpy(), e.detach().numpy(), rtol=1e-6)


def test_isreal(device):
    z = clgrad.tensor([1 + 0j, 1j, 2], device=device)
    assert z.isreal().tolist() == [True, False, True]


def test_node_names_as_torch():
    for fn in (
        lambda L, z: z * 2,
        lambda L, z: z.exp(),
        lambda L, z: z + 1,
        lambda L, z: z / z,
        lambda L, z: z.abs(),
        lambda L, z: z.sum(),
        lambda L, z: z.sum(0),
        lambda L, z: z.mean(),
    ):
        names = [
            fn(L, L.tensor([1 + 1j], requires_grad=True)).grad_fn.name() for L in (torch, clgrad)
        ]
        assert names[0] == names[1]


@pytest.mark.parametrize(
    "name, fn",
    [
        ("lerp number", lambda lib, a, b: lib.lerp(a, b, 0.25)),
        ("lerp tensor", lambda lib, a, b: a.lerp(b, b * 0.5)),
        ("log1p", lambda lib, a, b: (a * 0.3).log1p() + b),
        ("expm1", lambda lib, a, b: (a * 0.3).expm1() + b),
        ("add float alpha", lambda lib, a, b: a.add(b, alpha=0.5)),
        ("sub complex alpha", lambda lib, a, b: a.sub(b, alpha=2 - 1j)),
        ("addcmul float value", lambda lib, a, b: a.addcmul(a, b, value=0.25)),
    ],
)
def test_more_ops_and_alphas(device, name, fn):
    _both(device, fn, A, B)


def test_alpha_rules_as_torch(device):
    for lib in (torch, clgrad):
        kw = {} if lib is torch else {"device": device}
        z = lib.tensor([1 + 2j], **kw)
        assert z.clone().add_(z, alpha=0.5).tolist() == [1.5 + 3j]  # a float alpha for complex
        with pytest.raises(RuntimeError, match="must not be a complex number"):
            lib.tensor([1.0], **kw).add(lib.tensor([1.0], **kw), alpha=1j)
        with pytest.raises(RuntimeError, match="must not be a floating point number"):
            lib.tensor([1], **kw).add(lib.tensor([1], **kw), alpha=0.5)


def test_assert_close_on_complex(device):
    # the parts' dtype's tolerances and |a - b| as the distance, as torch.testing's
    messages = []
    for lib in (torch, clgrad):
        kw = {} if lib is torch else {"device": device}
        a = lib.tensor([1 + 2j, 3 - 1j], **kw)
        lib.testing.assert_close(a, a + 1e-7)
        with pytest.raises(AssertionError) as caught:
            lib.testing.assert_close(a, a + 0.1j)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_complex128_needs_double_precision(device):
    # complex128's parts are float64: a device without cl_khr_fp64 refuses it as it refuses
    # float64, at creation (its kernels could not be built)
    dev = clgrad.device(device)
    assert dev.supports(clgrad.complex128) == dev.supports(clgrad.float64)
    if dev.supports(clgrad.float64):
        assert clgrad.tensor([1j], dtype=clgrad.complex128, device=device).tolist() == [1j]
    else:
        with pytest.raises(RuntimeError, match="no double precision"):
            clgrad.tensor([1j], dtype=clgrad.complex128, device=device)
