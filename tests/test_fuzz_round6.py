"""Families a sixth differential round found (realistic programs and PyTorch's own tests run
against clgrad): gradients at the edges of their domains, vector right-hand sides, factory
functions under another default device; each checked against torch on every device."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from test_fuzz_families import both

import clgrad


def _grads(lib, dev, fn, *values, dtype="float32"):
    xs = [lib.tensor(v, dtype=getattr(lib, dtype), device=dev).requires_grad_() for v in values]
    out = fn(lib, *xs)
    out.sum().backward()
    return [out, *[x.grad for x in xs]]


def test_atan2_gradient_at_the_origin(device):
    """0 (signed as torch's) where input^2 + other^2 is 0, underflow included; not NaN."""

    def case(lib, dev):
        x, y = [0.0, 0.0, 1e-30, 0.0, 1.0, -3.0], [0.0, -0.0, 0.0, 1e-30, 2.0, 0.5]
        return _grads(lib, dev, lambda L, a, b: L.atan2(a, b), x, y)

    both(device, case)


def test_xlog1py_gradients(device):
    """The input's gradient is log1p(other), 0 only where input is 0 and other <= -1."""

    def case(lib, dev):
        x, y = [0.0, 0.0, 2.0, 0.0, -1.5], [-1.0, 2.0, 3.0, -2.0, 0.5]
        out = _grads(lib, dev, lambda L, a, b: L.special.xlog1py(a, b), x, y)
        row = lib.tensor([[0.0], [1.0]], device=dev, requires_grad=True)  # broadcast
        lib.special.xlog1py(row, lib.tensor([1.0, 2.0], device=dev)).sum().backward()
        scalar = lib.special.xlog1py(2, lib.tensor([1, 2], device=dev))
        return [*out, row.grad, scalar, lib.special.xlog1py(lib.tensor([1, 2], device=dev), 3)]

    both(device, case)


def test_logit_gradient_outside_the_unit_interval(device):
    """NaN outside [0, 1] without eps; 0 outside [eps, 1 - eps] with it."""

    def case(lib, dev):
        x = [-0.1, 1.1, 0.5, 0.25]
        plain = _grads(lib, dev, lambda L, a: L.special.logit(a), x)
        clamped = _grads(lib, dev, lambda L, a: L.logit(a, eps=0.2), x)
        return plain + clamped

    both(device, case)


@pytest.mark.parametrize("shapes", [((5, 3), (5,)), ((2, 5, 3), (2, 5)), ((2, 5, 3), (5,))])
@pytest.mark.parametrize("driver", [None, "gelsd", "gels"])
def test_lstsq_takes_vector_right_hand_sides(device, shapes, driver):
    """``other`` one dim shorter than ``input`` is a (batch of) vector(s): the solution drops
    the column, the residuals keep it, as torch's; two dims shorter raises."""
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")
    rng = np.random.default_rng(0)
    a, b = rng.random(shapes[0]), rng.random(shapes[1])

    def case(lib, dev):
        out = lib.linalg.lstsq(lib.tensor(a, device=dev), lib.tensor(b, device=dev), driver=driver)
        return [out.solution, out.residuals, out.rank, out.singular_values]

    both(device, case)


def test_factories_of_host_values_under_an_opencl_default_device():
    """``fft.rfftfreq`` with ``CLGRAD_DEVICE=cl:0`` and no ``device=``: its values are made on
    the host, not read back from the default device (TypeError)."""
    if not any(d.is_cl for d in clgrad.devices()):
        pytest.skip("no OpenCL device")
    code = (
        "import clgrad\n"
        "f = clgrad.fft.rfftfreq(8)\n"
        "assert str(f.device) == 'cl:0', f.device\n"
        "print(f.cpu().tolist(), clgrad.fft.fftfreq(5).cpu().tolist())\n"
    )
    env = dict(os.environ, CLGRAD_DEVICE="cl:0")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    want = [torch.fft.rfftfreq(8).tolist(), torch.fft.fftfreq(5).tolist()]
    assert done.stdout.strip() == " ".join(str(w) for w in want)


def test_complex_powers_of_zero_and_negative_integers(device):
    """A complex base takes negative integer powers; a zero base gives torch's (C99 cpow's)
    0, inf + NaN j or NaN by the exponent's real part; ``** 0`` is one."""

    def case(lib, dev):
        c = lib.complex64
        y = lib.tensor([0, 1j, -1 + 1j, 2 + 0j, 0.5, -0.5, 1.5 + 1j, -2, 3], dtype=c, device=dev)
        zero = lib.zeros(9, dtype=c, device=dev)
        pair = lib.tensor([0j, 1 + 1j], device=dev)
        return [
            lib.view_as_real(r)
            for r in (
                zero**y,
                0 ** y[6:],
                pair**2.5,
                pair**-1,
                pair**-3,
                pair**0,
                lib.tensor([True, False], device=dev) ** lib.tensor(1.5 + 1j, device=dev),
                lib.tensor([0j, 2j], device=dev) ** lib.tensor([2.0, -1.0], device=dev),
            )
        ]

    both(device, case)


def test_version_gates_take_the_modern_paths():
    """``torch.__version__ >= "2.0"`` (and packaging's parse) as programs gate features:
    clgrad names the PyTorch API it implements, its own release as the local label."""
    from packaging import version

    v = clgrad.__version__
    assert v >= "2.0" and v >= (2, 1) and version.parse(v) >= version.parse("2.0")
    assert v.split("+")[0] == torch.__version__.split("+")[0] == clgrad.version.TORCH_API
    assert v.endswith("+clgrad." + clgrad.version.clgrad_version)


def test_advanced_indices_that_do_not_broadcast_raise_index_error(device):
    def case(lib, dev):
        x = lib.arange(24, device=dev).reshape(2, 3, 4)
        return x[[0, 1], [0, 1, 2]]

    def put(lib, dev):
        x = lib.arange(24, device=dev).reshape(2, 3, 4)
        index = (lib.tensor([0, 1], device=dev), lib.tensor([[0, 1, 2]], device=dev))
        return x.index_put_(index, lib.tensor(1, device=dev))

    both(device, case)
    both(device, put)
    with pytest.raises(IndexError, match="shape mismatch"):
        clgrad.arange(24, device=device).reshape(2, 3, 4)[:, [0, 1], [[0, 1, 2]]]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(1, 4), (5, 4), (2, 3, 4)])
def test_half_linear_rounds_once(device, dtype, shape):
    """A 16-bit Linear layer adds its bias to the float32 sums and rounds once, as torch's
    addmm (3-d input flattened into it too): bit for bit, gradients included."""
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in (shape, (3, 4), (3,)))

    def case(lib, dev):
        d = getattr(lib, dtype)
        xt, wt, bt = (lib.tensor(v, device=dev).to(d).requires_grad_() for v in (x, w, b))
        y = lib.nn.functional.linear(xt, wt, bt)
        y.float().square().sum().backward()
        return [t.float() for t in (y, xt.grad, wt.grad, bt.grad)]

    both(device, case)
    got, want = case(clgrad, device)[0], case(torch, "cpu")[0]
    np.testing.assert_array_equal(got.detach().cpu().numpy(), want.detach().numpy())


def test_einsum_sublist_form(device):
    """``einsum(op1, sublist1, op2, sublist2, [out])``, ints for subscripts and ``...``."""

    def case(lib, dev):
        a = lib.arange(6.0, device=dev).reshape(2, 3)
        b = lib.arange(12.0, device=dev).reshape(3, 4)
        c = lib.arange(30.0, device=dev).reshape(5, 2, 3)
        return [
            lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
            lib.einsum(a, [0, 1], b, [1, 2]),
            lib.einsum(c, [..., 0, 1], b, [1, 2], [..., 0, 2]),
            lib.einsum(lib.eye(3, device=dev), [27, 27]),
        ]

    both(device, case)
    with pytest.raises(ValueError):
        clgrad.einsum(clgrad.ones(3, device=device), [52])


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "bfloat16", "uint8"])
def test_gather_in_one_pass(device, dtype):
    """gather reads each value at its index in one pass (``Backend.gather_dim``): every dim,
    an index smaller than the input in the other dims, strided and expanded indices and
    inputs, as torch's; its gradient too."""
    if not clgrad.device(device).supports(getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    rng = np.random.default_rng(4)
    data, data2 = rng.standard_normal((4, 6, 8)) * 4, rng.standard_normal((5, 7))

    def case(lib, dev):
        x = lib.tensor(data.astype(np.float32), device=dev).to(getattr(lib, dtype))
        outs = []
        for d, shape in ((0, (3, 5, 2)), (1, (4, 6, 8)), (2, (2, 6, 3))):
            idx = lib.tensor(np.random.default_rng(d).integers(0, x.shape[d], shape), device=dev)
            outs.append(lib.gather(x, d, idx))
        idx = lib.tensor([[0, 3, 1]], device=dev).expand(5, 3)  # stride 0
        outs.append(lib.gather(x[:, 1, :].t(), 1, idx))
        outs.append(lib.gather(x[::2, ::3, 1], 0, lib.tensor([[1], [0]], device=dev)))
        return [o.float() if o.dtype == lib.bfloat16 else o for o in outs]

    both(device, case)

    def grad(lib, dev):
        x = lib.tensor(data2.astype(np.float32), device=dev).requires_grad_()
        idx = lib.tensor([[0, 0, 6], [1, 2, 1]], device=dev)
        lib.gather(x, 1, idx).square().sum().backward()
        return [x.grad]

    both(device, grad)


def test_iinfo_refuses_bool_and_non_integers():
    for dt in ("bool", "float32", "complex64"):
        for lib in (torch, clgrad):
            with pytest.raises(TypeError):
                lib.iinfo(getattr(lib, dt))
    for dt in ("uint8", "int8", "int16", "int32", "int64"):
        want, got = torch.iinfo(getattr(torch, dt)), clgrad.iinfo(getattr(clgrad, dt))
        assert (got.min, got.max, got.bits) == (want.min, want.max, want.bits)


def test_complex_exp2_and_logical_not(device):
    def case(lib, dev):
        z = lib.tensor([1 + 2j, 0j, -1.5 + 0.5j], device=dev, requires_grad=True)
        out = lib.exp2(z)
        out.abs().sum().backward()
        return [lib.view_as_real(out), lib.logical_not(z.detach()), lib.view_as_real(z.grad)]

    both(device, case)


def test_norm_and_multi_dot_shape_checks(device):
    cases = [
        lambda L, d: L.linalg.norm(L.ones(2, 3, 4, device=d), ord=1),
        lambda L, d: L.linalg.norm(L.ones(2, 3, 4, device=d), ord=1, dim=(0,)),
        lambda L, d: L.linalg.multi_dot([L.ones(3, 3, device=d)]),
        lambda L, d: L.linalg.multi_dot([L.ones(2, 3, 3, device=d), L.ones(3, 3, device=d)]),
        lambda L, d: L.linalg.multi_dot([L.ones(3, 3, device=d), L.ones(3, 3, 3, device=d)]),
        lambda L, d: L.linalg.multi_dot(
            [L.ones(3, device=d), L.ones(3, 3, 3, device=d), L.ones(3, device=d)]
        ),
        lambda L, d: L.linalg.multi_dot([L.ones(3, device=d), L.ones(3, device=d)]),
    ]
    for fn in cases:
        both(device, lambda lib, dev, fn=fn: [fn(lib, dev)])


def test_bincount_refuses_other_dtypes_as_torch(device):
    for values in ([True, False], [1.0, 2.0], [[1, 2]], [1, 2]):
        both(device, lambda lib, dev, v=values: [lib.bincount(lib.tensor(v, device=dev))])


def test_nn_edges_as_torch(device):
    """LPPool with p = +-inf is max pooling of |x| (its gradient too); RReLU's gradient at 0
    is its slope; adaptive max pooling picks the last NaN of a window."""
    nan = float("nan")

    def case(lib, dev):
        F = lib.nn.functional
        x = lib.tensor([[[[0.5, -3.0], [2.0, 1.0]]]], device=dev, requires_grad=True)
        pooled = lib.nn.LPPool2d(float("inf"), 2)(x)
        pooled.sum().backward()
        low = F.lp_pool1d(lib.tensor([[1.0, -4.0, 2.0, 0.5]], device=dev), float("-inf"), 2)
        cube = F.lp_pool3d(lib.full((1, 2, 2, 2), -2.0, device=dev), float("inf"), 2)
        r = lib.tensor([0.0, -1.0, 2.0], device=dev, requires_grad=True)
        lib.nn.RReLU(0.1, 0.3).eval()(r).sum().backward()
        w = lib.tensor([[[1.0, nan, 3.0, nan, 0.0]]], device=dev, requires_grad=True)
        values, index = F.adaptive_max_pool1d(w, 1, return_indices=True)
        values.sum().backward()
        square = lib.tensor([[[[1.0, nan], [nan, 2.0]]]], device=dev)
        return [pooled, x.grad, low, cube, r.grad, values, index, w.grad,
                F.adaptive_max_pool2d(square, 1, return_indices=True)[1]]  # fmt: skip

    both(device, case)


def test_embedding_argument_checks(device):
    """EmbeddingBag's offsets checked as torch's; an index on another device than the table
    and a loss's non-tensor target raise torch's classes (not a driver's error)."""
    bag = clgrad.nn.EmbeddingBag(10, 2).to(device)
    words = clgrad.tensor([1, 2, 3, 4], device=device)
    for offsets in ([1, 3], [0, 3, 9], [0, 3, 1]):
        with pytest.raises(RuntimeError):
            bag(words, clgrad.tensor(offsets, device=device))
    assert tuple(bag(words, clgrad.tensor([0, 2, 4], device=device)).shape) == (3, 2)
    other = "cpu" if device != "cpu" else next((d for d in clgrad.devices() if d.is_cl), None)
    if other is not None:
        with pytest.raises(RuntimeError, match="same device"):
            clgrad.nn.Embedding(10, 4).to(device)(clgrad.tensor([1, 2], device=other))
    F = clgrad.nn.functional
    with pytest.raises(TypeError):
        F.cross_entropy(clgrad.randn(10, device=device), 3)
    with pytest.raises(TypeError):
        F.nll_loss(clgrad.randn(3, 4, device=device), 1)


def test_grid_sample_takes_one_dtype(device):
    """input and grid of different dtypes: torch's RuntimeError, not a float64 result."""
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def case(lib, dev):
        image = lib.ones(1, 1, 2, 2, device=dev)
        grid = lib.zeros(1, 1, 1, 2, dtype=lib.float64, device=dev)
        return [lib.nn.functional.grid_sample(image, grid, align_corners=False)]

    both(device, case)


def test_cpu_autocast_casts_what_torch_casts():
    """The host device's autocast lists are PyTorch's CPU lists: the matrix-vector products
    keep float32, einsum casts only the products it runs."""
    names = ["mv", "addmv", "addr", "mm", "multi_dot", "prelu", "einsum_ew", "einsum_mm"]
    names += ["addbmm", "vec@mat", "mat@vec"]

    def dtypes(lib):
        F, m, v = lib.nn.functional, lib.ones(3, 3), lib.ones(3)
        cases = [
            lambda: lib.mv(m, v),
            lambda: lib.addmv(v, m, v),
            lambda: lib.addr(m, v, v),
            lambda: m @ m,
            lambda: lib.linalg.multi_dot([m, m]),
            lambda: F.prelu(m, lib.ones(1)),
            lambda: lib.einsum("ij,ij->ij", m, m),
            lambda: lib.einsum("ij,kj->ik", m, m),
            lambda: lib.addbmm(m, m[None], m[None]),
            lambda: v @ m,
            lambda: m @ v,
        ]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            return {n: str(f().dtype).split(".")[-1] for n, f in zip(names, cases)}

    assert dtypes(clgrad) == dtypes(torch)


def test_einsum_is_on_the_cuda_list(cl_device):
    """On an OpenCL device (autocast's "cuda" lists, where einsum is one of the ops cast),
    einsum casts its operands itself, even where it runs no product."""
    a = clgrad.ones(2, 3, device=cl_device)
    with clgrad.autocast(device_type=clgrad.device(cl_device).type, dtype=clgrad.bfloat16):
        outs = [clgrad.einsum("ij,ij->ij", a, a), clgrad.einsum(a, [0, 1], a, [0, 1], [0, 1])]
    assert [o.dtype for o in outs] == [clgrad.bfloat16] * 2
