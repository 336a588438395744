"""torch.special's Bessel, Airy, erfcx, ndtri and orthogonal-polynomial functions
(clgrad/ops/special_math.py, each a kernel of kernels/_special.cl.mako and a NumPy counterpart)
against PyTorch on every test device, in float32 and (where the device runs it) float64.

Values are compared on grids that reach every branch of PyTorch's algorithms: both sides of
each branch point, small, large, negative arguments, zero, the infinities and NaN. The
polynomials also take orders that are negative, fractional, NaN, infinite or past int64, and
large orders inside and outside [-1, 1]. Both sides run the same algorithm in the argument's
dtype, so float64 agrees to about 1e-13; float32 to PyTorch's own rounding, except where an
ill-conditioned step (acos times a large order, a cancelling recurrence) magnifies one ulp of a
libm function or a fused multiply-add in PyTorch's build: those comparisons carry a bound that
grows with the order.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import supports
from mako.lookup import TemplateLookup

import clgrad
from clgrad.backend.opencl.render import kernels_dir

UNARY = [
    "ndtri",
    "erfcx",
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
]
CHEBYSHEV = [f"{s}chebyshev_polynomial_{k}" for s in ("", "shifted_") for k in "tuvw"]
POLYNOMIALS = CHEBYSHEV + [
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]
DIFFERENTIABLE = {"ndtri", "erfcx"}
FLOATS = ["float32", "float64"]

# (rtol, atol) against PyTorch
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-15)}


def _need(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")


def _close(got, want, rtol, atol, what=""):
    """clgrad's result against torch's: shape, dtype, NaN where torch has NaN, the same
    infinities, and the finite values within ``rtol``/``atol``."""
    assert tuple(got.shape) == tuple(want.shape), what
    assert got.dtype.name == str(want.dtype).rpartition(".")[2], what
    g, w = got.cpu().numpy().astype(np.float64), want.numpy().astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: NaN")
    inf = np.isinf(w)
    np.testing.assert_array_equal(g[inf], w[inf], err_msg=f"{what}: infinities")
    finite = np.isfinite(w)
    np.testing.assert_allclose(g[finite], w[finite], rtol=rtol, atol=atol, err_msg=what)


def _grid(name, dtype):
    """Arguments that reach every branch of ``name``'s algorithm."""
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan]
    if name == "ndtri":  # the central fit, both tails below and past exp(-32), the edges
        tiny = np.geomspace(1e-300 if dtype == "float64" else 1e-38, 0.1, 200)
        points = [np.linspace(-0.5, 1.5, 401), tiny, 1 - tiny, edges]
        points.append([1.0, 0.13533528323661269, 0.8646647167633873, 1.2664165549e-14, 1e-7])
        return np.concatenate(points)
    wide = np.concatenate(
        [np.linspace(-40, 40, 801), np.geomspace(1e-9, 1e5, 120), -np.geomspace(1e-9, 1e5, 120)]
    )
    special = {
        "erfcx": [-26.7, -26.71, -26.69, -6.1, -6.11, -6.09, 50, 50.01, 5e7, 5.1e7, 1e10],
        "airy_ai": [2.09, 2.0899, -2.09, -2.0899, 8.32, 8.33, 103.89, 103.9, -300],
        "spherical_bessel_j0": [0.5, 0.4999, -0.5, -0.4999, 1e6],
    }.get(name, [5.0, 5.0001, 4.9999, 1e-5, 0.99e-5, 2.0, 2.0001, 8.0, 8.0001, 700, 720, 1e6])
    return np.concatenate([wide, special, [-s for s in special], edges])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", UNARY)
def test_values_match_torch(device, name, dtype):
    _need(device, dtype)
    a = _grid(name, dtype).astype(dtype)
    want = getattr(torch.special, name)(torch.from_numpy(a))
    got = getattr(clgrad.special, name)(clgrad.tensor(a, device=device))
    _close(got, want, *TOL[dtype], what=name)


@pytest.mark.parametrize("name", UNARY)
def test_integer_and_bool_inputs_give_the_default_float(device, name):
    values = np.array([0, 1, 2, 3, 7, 40], np.int64)
    for np_dtype in ("int64", "int32", "uint8"):
        a = values.astype(np_dtype)
        want = getattr(torch.special, name)(torch.from_numpy(a))
        got = getattr(clgrad.special, name)(clgrad.tensor(a, device=device))
        _close(got, want, *TOL["float32"], what=f"{name} {np_dtype}")
    flags = np.array([True, False])
    want = getattr(torch.special, name)(torch.from_numpy(flags))
    got = getattr(clgrad.special, name)(clgrad.tensor(flags, device=device))
    _close(got, want, *TOL["float32"], what=f"{name} bool")


@pytest.mark.parametrize("name", ["bessel_j0", "ndtri", "hermite_polynomial_h"])
def test_default_dtype_float64(device, name):
    """Integer arguments take the default float dtype, whichever it is."""
    _need(device, "float64")
    args = [np.array([0, 1, 3])] + ([np.array(2)] if name in POLYNOMIALS else [])
    saved = clgrad.get_default_dtype()
    clgrad.set_default_dtype(clgrad.float64)
    torch.set_default_dtype(torch.float64)
    try:
        want = getattr(torch.special, name)(*[torch.from_numpy(a) for a in args])
        got = getattr(clgrad.special, name)(*[clgrad.tensor(a, device=device) for a in args])
    finally:
        clgrad.set_default_dtype(saved)
        torch.set_default_dtype(torch.float32)
    _close(got, want, *TOL["float64"], what=name)


@pytest.mark.parametrize("name", UNARY + POLYNOMIALS)
def test_half_is_refused_as_torch(device, name):
    args = [np.array([0.5], np.float16)] + ([np.array([2.0], np.float16)] * (name in POLYNOMIALS))
    with pytest.raises(NotImplementedError) as expected:
        getattr(torch.special, name)(*[torch.from_numpy(a) for a in args])
    with pytest.raises(NotImplementedError) as got:
        getattr(clgrad.special, name)(*[clgrad.tensor(a, device=device) for a in args])
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name", ["bessel_y1", "erfcx", "modified_bessel_k0"])
def test_shapes_and_layouts(device, name):
    """0-d, empty, transposed, stepped and broadcast views: each element's own value."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 9, (4, 6)).astype(np.float32)
    fn, tfn = getattr(clgrad.special, name), getattr(torch.special, name)
    x = clgrad.tensor(a, device=device)
    t = torch.from_numpy(a)
    for got, want in [
        (fn(x[1, 2]), tfn(t[1, 2])),
        (fn(x[:0]), tfn(t[:0])),
        (fn(clgrad.zeros(0, 3, device=device)), tfn(torch.zeros(0, 3))),
        (fn(x.T), tfn(t.T)),
        (fn(x[:, ::2]), tfn(t[:, ::2])),
        (fn(x[:1].expand(4, 6)), tfn(t[:1].expand(4, 6))),
    ]:
        _close(got, want, *TOL["float32"], what=name)
    assert fn(x[1, 2]).shape == ()


@pytest.mark.parametrize("name", UNARY)
def test_numbers_are_refused_as_torch(device, name):
    with pytest.raises(TypeError):
        getattr(torch.special, name)(0.5)
    with pytest.raises(TypeError, match="must be Tensor"):
        getattr(clgrad.special, name)(0.5)


def test_out(device):
    x = clgrad.tensor([0.5, 1.0, 2.0], device=device)
    out = clgrad.empty(3, device=device)
    assert clgrad.special.bessel_j0(x, out=out) is out
    want = torch.special.bessel_j0(torch.tensor([0.5, 1.0, 2.0]))
    _close(out, want, *TOL["float32"])
    out = clgrad.empty(2, device=device)
    res = clgrad.special.legendre_polynomial_p(x[:2], 3, out=out)
    assert res is out
    _close(out, torch.special.legendre_polynomial_p(torch.tensor([0.5, 1.0]), 3), 1e-6, 1e-7)
    with pytest.raises(RuntimeError, match="can't be cast"):
        clgrad.special.ndtri(x, out=clgrad.empty(3, dtype=clgrad.int64, device=device))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.special.ndtri(torch.ones(3), out=torch.empty(3, dtype=torch.int64))


# ---- gradients ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_torch(device, name, dtype):
    _need(device, dtype)
    a = {"ndtri": np.array([1e-6, 0.1, 0.5, 0.9, 0.999]), "erfcx": np.linspace(-5, 60, 14)}[name]
    a = a.astype(dtype)
    cot = np.linspace(-1, 2, a.size).astype(dtype)
    t = torch.from_numpy(a).requires_grad_()
    y = getattr(torch.special, name)(t)
    y.backward(torch.from_numpy(cot))
    x = clgrad.tensor(a, device=device, requires_grad=True)
    z = getattr(clgrad.special, name)(x)
    assert type(z.grad_fn).__name__ == type(y.grad_fn).__name__
    z.backward(clgrad.tensor(cot, device=device))
    _close(x.grad, t.grad, *TOL[dtype], what=name)


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradcheck(device, name):
    _need(device, "float64")
    a = {"ndtri": [0.05, 0.3, 0.5, 0.8, 0.97], "erfcx": [-3.0, -0.5, 0.2, 4.0, 30.0]}[name]
    x = clgrad.tensor(a, dtype=clgrad.float64, device=device, requires_grad=True)
    fn = getattr(clgrad.special, name)
    assert clgrad.autograd.gradcheck(fn, [x])
    assert clgrad.autograd.gradgradcheck(fn, [x])


@pytest.mark.parametrize("name", sorted(set(UNARY) - DIFFERENTIABLE) + POLYNOMIALS)
def test_no_gradient_as_torch(device, name):
    """PyTorch has no derivative for these: the result doesn't require grad, and backward
    through it raises torch's RuntimeError."""
    a = np.array([0.25, 0.5, 2.0], np.float32)
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor(a, device=dev, requires_grad=True)
        args = [x] + (
            [lib.tensor([3.0, 2.0, 5.0], device=dev, requires_grad=True)] * (name in POLYNOMIALS)
        )
        y = getattr(lib.special, name)(*args)
        assert not y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError, match="does not require grad"):
            y.sum().backward()


# ---- polynomials ----------------------------------------------------------------------------
# orders that are negative, fractional (truncated), NaN, infinite or past int64 (0 for all
# of those), and orders on both sides of each switch to the trigonometric forms (4, 6, 8)
ORDERS = [-5, -1, -0.5, 0, 0.7, 1, 1.9, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]
ODD_ORDERS = [np.nan, np.inf, -np.inf, 1e30, -1e30, 2.0**63, -(2.0**64)]
POINTS = [-1.0, 1.0, 0.0, -0.0, 0.5, 0.25, 0.75, 1 - 2.0**-20, -1 + 2.0**-20, np.inf, -np.inf]


def _polynomial_case(name, xs, ns, dtype, device, rtol, atol):
    x, n = np.meshgrid(np.asarray(xs, dtype), np.asarray(ns, dtype))
    want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n))
    got = getattr(clgrad.special, name)(
        clgrad.tensor(x, device=device), clgrad.tensor(n, device=device)
    )
    _close(got, want, rtol, atol, what=name)
    return got, want


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_values_match_torch(device, name, dtype):
    _need(device, dtype)
    xs = np.concatenate([np.linspace(-1.5, 1.5, 61), POINTS])
    if name == "laguerre_polynomial_l":  # its interesting range is x >= 0
        xs = np.concatenate([xs, np.linspace(0, 12, 49)])
    # float32's recurrences cancel: bound the error by the terms' size (float32's eps times
    # the largest |value| of the order on the grid)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 1e-5)
    _polynomial_case(name, xs, ORDERS + ODD_ORDERS, dtype, device, rtol, atol * _scale(name))


def _scale(name):
    """The magnitude of the polynomials' terms on the grid above (|x| <= 1.5, n <= 12; 12 for
    Laguerre's x): an absolute bound for cancelled values."""
    return {"hermite_polynomial_h": 1e6, "hermite_polynomial_he": 1e3}.get(name, 10.0)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_at_large_orders(device, name):
    """Orders up to 1000 in float64, where |x| <= 1 keeps the values bounded (Hermite's
    overflow to NaN there, and are NaN past 512 by PyTorch's rule anyway)."""
    _need(device, "float64")
    xs = np.concatenate([np.linspace(-1, 1, 41), [0.999999, -0.999999, 1e-3]])
    if name.startswith("shifted"):
        xs = (xs + 1) / 2
    if name == "laguerre_polynomial_l":
        xs = np.abs(xs) * 20
    ns = [20, 50, 100, 127, 128, 129, 255, 511, 512, 513, 1000]
    # acos's last bit times the order, and float64 recurrences over 1000 steps
    _polynomial_case(name, xs, ns, "float64", device, 1e-9, 1e-11)


@pytest.mark.parametrize("name", CHEBYSHEV)
def test_chebyshev_trigonometric_form_in_float32(device, name):
    """float32 inside (-1, 1) at large orders: cos/sin of the order times acos(x), where one
    ulp of acos becomes the order's worth of ulps: bounded by (n + 1)^2 float32 ulps."""
    xs = np.linspace(-0.95, 0.95, 39)
    if name.startswith("shifted"):
        xs = (xs + 1) / 2
    for n in (20, 100, 500):
        _polynomial_case(name, xs, [n], "float32", device, 0, 1.2e-7 * (2 * n + 2) ** 2)


def test_polynomials_of_nan_are_nan(device):
    """A NaN x gives NaN at every order from 1 (PyTorch's kernels return an uninitialized value
    from 2 on: their loop never runs) and torch's value below; Hermite's loops have no NaN test,
    and there PyTorch gives NaN too."""
    x = clgrad.tensor([np.nan] * 6, device=device)
    n = clgrad.tensor([-1.0, 0.0, 1.0, 2.0, 7.0, 30.0], device=device)
    for name in POLYNOMIALS:
        got = getattr(clgrad.special, name)(x, n).cpu().numpy()
        want = getattr(torch.special, name)(torch.full((3,), np.nan), torch.tensor([-1.0, 0, 1]))
        np.testing.assert_array_equal(got[:3], want.numpy(), err_msg=name)
        assert np.isnan(got[3:]).all(), name


@pytest.mark.parametrize("name", ["chebyshev_polynomial_u", "hermite_polynomial_he"])
def test_polynomial_arguments_promote_and_broadcast_as_torch(device, name):
    fn, tfn = getattr(clgrad.special, name), getattr(torch.special, name)
    x32 = np.array([[-0.3], [0.6], [1.2]], np.float32)
    n64 = np.array([0, 1, 3, 9], np.int64)
    cases = [
        (x32, n64),  # float32 x, int64 n (broadcast (3, 1) with (4,))
        (x32, 3),  # a Python int order
        (x32, 3.9),  # a Python float: truncated
        (n64, np.array(4.0, np.float32)),  # a 0-d float order of integers: float32
        (n64, np.array([2, 2, 3, 4], np.int64)),  # integers: the default float
        (0.5, n64),  # a Python number x
        (2, n64),
        (True, n64),
        (x32, np.array([True, False, True])[:, None]),  # a bool order
    ]
    if supports(device, clgrad.float64):
        cases += [(x32, n64.astype(np.float64)), (x32.astype(np.float64), 5)]
        cases += [(x32, np.array(4.0))]  # a 0-d float64 order: float32 still
    for x, n in cases:

        def wrap(lib, v, dev):
            return lib.tensor(v, device=dev) if isinstance(v, np.ndarray) else v

        want = tfn(wrap(torch, x, "cpu"), wrap(torch, n, "cpu"))
        got = fn(wrap(clgrad, x, device), wrap(clgrad, n, device))
        _close(got, want, 1e-6, 1e-6, what=f"{name}({type(x).__name__}, {type(n).__name__})")
    got = fn(x=clgrad.tensor(x32, device=device), n=2)  # torch's keywords
    _close(got, tfn(x=torch.from_numpy(x32), n=2), 1e-6, 1e-6)


@pytest.mark.parametrize("name", ["laguerre_polynomial_l", "shifted_chebyshev_polynomial_w"])
def test_polynomial_argument_errors(device, name):
    for args in [(0.5, 2), (clgrad.tensor([0.5], device=device), "2"), ([0.5], 2)]:
        targs = [
            torch.from_numpy(a.cpu().numpy()) if isinstance(a, clgrad.Tensor) else a for a in args
        ]
        with pytest.raises(TypeError):
            getattr(torch.special, name)(*targs)
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            getattr(clgrad.special, name)(*args)


# ---- kernels --------------------------------------------------------------------------------
def _helpers(source: str) -> str:
    lookup = TemplateLookup(directories=[str(kernels_dir())], strict_undefined=True)
    return lookup.get_template("_special.cl.mako").render(source=source)


def test_programs_define_only_the_helpers_they_call():
    """The special helpers reach only the programs whose expressions call them: other programs'
    sources are unchanged; a caller gets its helper in the types it names, and the helpers
    that one calls."""
    assert _helpers("cg_exp_float(in0) + cg_floordiv_long(in0, in1)") == ""
    source = _helpers("cg_bessel_y0_double(in0)")
    assert "cg_bessel_y0_double(" in source and "cg_bessel_j0_double(" in source
    assert "float" not in source and "cg_bessel_y1" not in source
    source = _helpers("cg_hermite_polynomial_he_float(in0, in1)")
    assert "cg_polynomial_order_float(" in source and "double" not in source


def test_fused_chain_with_a_special_function(cl_device):
    """A chain through a special function fuses into one kernel (the fused template defines
    its helper) with the same values as the launches run one by one."""
    dev = clgrad.device(cl_device)
    rt, backend = dev.runtime, dev.backend
    if rt.fuser is None:
        pytest.skip("CLGRAD_FUSION=0: fusion is off in this process")
    x = clgrad.linspace(0.5, 20, 1000, device=cl_device)

    def chain():
        return clgrad.special.bessel_y1(x * 2 + 1) * 3 + clgrad.special.chebyshev_polynomial_v(
            x / 20, 7
        )

    rt.flush()
    fuser = rt.fuser
    saved = backend.fuse, fuser.fuse_after, fuser.wait, fuser.min_launches
    backend.fuse = False
    try:
        plain = chain().cpu().numpy()
        backend.fuse, fuser.fuse_after, fuser.wait, fuser.min_launches = True, 1, True, 2
        rt.flush()
        before = fuser.launched
        fused = chain()
        rt.flush()
        assert fuser.launched > before
        assert all(k is not None for k in fuser.kernels.values())
    finally:
        rt.flush()
        backend.fuse, fuser.fuse_after, fuser.wait, fuser.min_launches = saved
    np.testing.assert_array_equal(fused.cpu().numpy(), plain)
