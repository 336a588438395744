"""Householder QR pieces (torch.geqrf, linalg.householder_product / orgqr, ormqr, and their
Tensor methods) and the orthogonal parametrization (nn.utils.parametrizations.orthogonal)
against torch on every test device: values (geqrf's exactly LAPACK's layout), shapes (batched,
tall, square, wide, empty), dtypes, gradients (torch's and finite differences), errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad

DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-5, "float64": 1e-11}


def _need(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")


def _random(shape, dtype, seed=0, low=None, high=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _pair(a, device, requires_grad=False):
    """The same array as a torch tensor and as a clgrad tensor on ``device``."""
    t = torch.tensor(a, requires_grad=requires_grad)
    c = clgrad.tensor(a, device=device, requires_grad=requires_grad)
    return t, c


def _host(x):
    return x.detach().cpu().numpy()


def _close(got, want, dtype, scale=1.0):
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(
        _host(got), want.detach().numpy(), rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale
    )


def _same_error(fn):
    """``fn(torch)`` and ``fn(clgrad)`` raise the same class, with the same message."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(clgrad)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


# -- geqrf ------------------------------------------------------------------------------------

GEQRF_SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 1, 3, 3), (1, 1), (0, 3), (3, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", GEQRF_SHAPES, ids=str)
def test_geqrf_is_lapacks(device, dtype, shape):
    _need(device, dtype)
    t, c = _pair(_random(shape, dtype), device)
    ta, ttau = torch.geqrf(t)
    result = clgrad.geqrf(c)
    a, tau = result
    assert result.a is a and result.tau is tau
    assert str(a.device) == device and str(tau.device) == device
    # R above the diagonal and the reflectors below it, in LAPACK's signs: exactly torch's
    _close(a, ta, dtype, 10)
    _close(tau, ttau, dtype, 10)
    ma, mtau = c.geqrf()
    _close(ma, ta, dtype, 10)
    _close(mtau, ttau, dtype, 10)


def test_geqrf_zero_column_skips_the_reflection(device):
    # LAPACK's tau of 0 where there is nothing to reflect (orthogonal's right_inverse reads it)
    t, c = _pair(np.array([[1.0, 2.0], [0.0, 3.0], [0.0, 0.0]], np.float32), device)
    ta, ttau = torch.geqrf(t)
    a, tau = clgrad.geqrf(c)
    assert ttau[0] == 0 and _host(tau)[0] == 0
    _close(a, ta, "float32")
    _close(tau, ttau, "float32")


def test_geqrf_backward_raises_as_torch(device):
    t, c = _pair(_random((4, 3), "float32"), device, requires_grad=True)
    ta, ttau = torch.geqrf(t)
    a, tau = clgrad.geqrf(c)
    assert a.requires_grad and tau.requires_grad  # recorded, as torch's
    for want, got in ((ta, a), (ttau, tau)):
        with pytest.raises(NotImplementedError) as torch_error:
            want.sum().backward()
        with pytest.raises(NotImplementedError) as error:
            got.sum().backward()
        assert str(error.value) == str(torch_error.value)


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.geqrf(t.ones(3)), lambda t: t.geqrf(t.ones(3, 3, dtype=t.int32)),
     lambda t: t.geqrf(t.ones(2, 2, dtype=t.int64))],
    ids=["1d", "int32", "int64"],
)  # fmt: skip
def test_geqrf_errors(fn):
    _same_error(fn)


# -- householder_product ----------------------------------------------------------------------

# (input shape, number of reflectors)
HP_SHAPES = [((4, 4), 4), ((5, 3), 3), ((5, 3), 1), ((2, 4, 3), 3), ((2, 1, 3, 2), 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, k", HP_SHAPES, ids=str)
def test_householder_product_values(device, dtype, shape, k):
    _need(device, dtype)
    A = _random(shape, dtype, 1)
    tau = _random(shape[:-2] + (k,), dtype, 2, 0.0, 2.0)
    (tA, ctA), (tt, ct) = _pair(A, device), _pair(tau, device)
    want = torch.linalg.householder_product(tA, tt)
    got = clgrad.linalg.householder_product(ctA, ct)
    assert str(got.device) == device
    _close(got, want, dtype, 10)
    _close(clgrad.orgqr(ctA, ct), want, dtype, 10)
    _close(ctA.orgqr(ct), want, dtype, 10)
    out = clgrad.empty(0, dtype=got.dtype, device=device)
    assert clgrad.linalg.householder_product(ctA, ct, out=out) is out
    _close(out, want, dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (2, 5, 2)], ids=str)
def test_householder_product_of_geqrf_is_qr(device, dtype, shape):
    _need(device, dtype)
    A = _random(shape, dtype, 3)
    a, tau = clgrad.geqrf(clgrad.tensor(A, device=device))
    Q = clgrad.linalg.householder_product(a, tau)
    R = a[..., : shape[-1], :].triu()
    tQ, tR = torch.linalg.qr(torch.tensor(A))
    _close(Q @ R, torch.tensor(A), dtype, 20)
    # the QR torch computes the same way (its signs too)
    _close(Q, tQ, dtype, 20)
    _close(R, tR, dtype, 20)


def test_householder_product_without_reflectors(device):
    t, c = _pair(_random((4, 2), "float32"), device, requires_grad=True)
    tt, ct = _pair(np.zeros((0,), np.float32), device, requires_grad=True)
    want = torch.linalg.householder_product(t, tt)
    got = clgrad.linalg.householder_product(c, ct)
    _close(got, want, "float32")
    assert got.requires_grad == want.requires_grad
    got.sum().backward()
    want.sum().backward()
    # torch leaves the gradient undefined, clgrad's is zeros: the same to an optimizer
    assert t.grad is None and tt.grad is None
    assert not _host(c.grad).any() and tuple(ct.grad.shape) == (0,)
    empty = clgrad.linalg.householder_product(clgrad.ones(2, 0, 0, device=device),
                                              clgrad.ones(2, 0, device=device))  # fmt: skip
    assert tuple(empty.shape) == (2, 0, 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, k", HP_SHAPES, ids=str)
def test_householder_product_gradient_is_torchs(device, dtype, shape, k):
    _need(device, dtype)
    A = _random(shape, dtype, 4)
    tau = _random(shape[:-2] + (k,), dtype, 5, 0.0, 2.0)
    cot = _random(shape, dtype, 6)
    (tA, cA), (tt, ct) = _pair(A, device, True), _pair(tau, device, True)
    torch.linalg.householder_product(tA, tt).backward(torch.tensor(cot))
    clgrad.linalg.householder_product(cA, ct).backward(clgrad.tensor(cot, device=device))
    # only the strictly lower triangle (the reflectors) and tau get one, as torch's
    assert not np.any(np.triu(_host(cA.grad)))
    _close(cA.grad, tA.grad, dtype, 10)
    _close(ct.grad, tt.grad, dtype, 10)


def test_householder_product_gradcheck(device):
    _need(device, "float64")
    A = clgrad.tensor(_random((2, 4, 3), "float64", 7), device=device, requires_grad=True)
    tau = clgrad.tensor(_random((2, 3), "float64", 8, 0.2, 1.8), device=device,
                        requires_grad=True)  # fmt: skip
    fn = clgrad.linalg.householder_product
    assert clgrad.autograd.gradcheck(fn, (A, tau), eps=1e-6, atol=1e-7)
    assert clgrad.autograd.gradgradcheck(fn, (A, tau), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.linalg.householder_product(t.ones(3), t.ones(1)),
     lambda t: t.linalg.householder_product(t.ones(3, 4), t.ones(3)),
     lambda t: t.linalg.householder_product(t.ones(4, 3), t.ones(4)),
     lambda t: t.linalg.householder_product(t.ones(4, 3), t.ones(2, 3)),
     lambda t: t.linalg.householder_product(t.ones(2, 4, 3), t.ones(3, 3)),
     lambda t: t.linalg.householder_product(t.ones(4, 3), t.ones(3, dtype=t.float64)),
     lambda t: t.linalg.householder_product(t.ones(4, 3, dtype=t.int32),
                                            t.ones(3, dtype=t.int32)),
     lambda t: t.orgqr(t.ones(3, 4), t.ones(3))],
    ids=["1d", "wide", "long-tau", "tau-rank", "tau-batch", "dtypes", "int", "orgqr"],
)  # fmt: skip
def test_householder_product_errors(fn):
    _same_error(fn)


# -- ormqr ------------------------------------------------------------------------------------

# (input shape, other shape for left=True; right: other transposed)
ORMQR_SHAPES = [((4, 3), (4, 2)), ((4, 4), (4, 5)), ((3, 4), (3, 2)), ((2, 5, 2), (2, 5, 3))]


def _ormqr_inputs(in_shape, other_shape, left, dtype):
    a, tau = torch.geqrf(torch.tensor(_random(in_shape, dtype, 9)))
    other = _random(other_shape, dtype, 10)
    if not left:
        other = np.ascontiguousarray(np.swapaxes(other, -1, -2))
    return a.numpy(), tau.numpy(), other


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize("transpose", [False, True], ids=["Q", "QT"])
@pytest.mark.parametrize("shapes", ORMQR_SHAPES, ids=str)
def test_ormqr_values_and_gradients(device, dtype, left, transpose, shapes):
    _need(device, dtype)
    a, tau, other = _ormqr_inputs(*shapes, left, dtype)
    (ta, ca), (tt, ct), (to, co) = (_pair(x, device, True) for x in (a, tau, other))
    want = torch.ormqr(ta, tt, to, left, transpose)
    got = clgrad.ormqr(ca, ct, co, left, transpose)
    assert str(got.device) == device
    _close(got, want, dtype, 10)
    _close(ca.ormqr(ct, co, left=left, transpose=transpose), want, dtype, 10)
    cot = _random(tuple(want.shape), dtype, 11)
    want.backward(torch.tensor(cot))
    got.backward(clgrad.tensor(cot, device=device))
    for mine, theirs in ((ca, ta), (ct, tt), (co, to)):
        _close(mine.grad, theirs.grad, dtype, 20)


def test_ormqr_is_a_product_with_q(device):
    # op(Q) as householder_product builds it (square: as many rows as reflectors)
    a, tau, other = _ormqr_inputs((4, 4), (4, 3), True, "float32")
    ca, ct, co = (clgrad.tensor(x, device=device) for x in (a, tau, other))
    Q = clgrad.linalg.householder_product(ca, ct)
    _close(clgrad.ormqr(ca, ct, co), torch.tensor(_host(Q @ co)), "float32")
    _close(clgrad.ormqr(ca, ct, co, transpose=True), torch.tensor(_host(Q.mT @ co)), "float32")
    out = clgrad.empty(0, device=device)
    assert clgrad.ormqr(ca, ct, co, out=out) is out
    _close(out, torch.tensor(_host(Q @ co)), "float32")


def test_ormqr_gradcheck(device):
    _need(device, "float64")
    a, tau, other = _ormqr_inputs((2, 4, 3), (2, 4, 2), True, "float64")
    args = [clgrad.tensor(x, device=device, requires_grad=True) for x in (a, tau, other)]
    for left, transpose in ((True, False), (True, True)):

        def fn(x, t, c, left=left, transpose=transpose):
            return clgrad.ormqr(x, t, c, left, transpose)

        assert clgrad.autograd.gradcheck(fn, args, eps=1e-6, atol=1e-7)
    args[2] = clgrad.tensor(np.swapaxes(other, -1, -2).copy(), device=device, requires_grad=True)
    fn = lambda x, t, c: clgrad.ormqr(x, t, c, False, True)  # noqa: E731
    assert clgrad.autograd.gradcheck(fn, args, eps=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.ormqr(t.ones(3), t.ones(3), t.ones(3, 2)),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(3), t.ones(4)),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(3), t.ones(5, 2)),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(3), t.ones(4, 2), left=False),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(4), t.ones(4, 2)),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(2), t.ones(2, 4), left=False),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(2, 3), t.ones(4, 2)),
     lambda t: t.ormqr(t.ones(2, 4, 3), t.ones(2, 3), t.ones(4, 2)),
     lambda t: t.ormqr(t.ones(2, 4, 3), t.ones(1, 3), t.ones(2, 4, 2)),
     lambda t: t.ormqr(t.ones(2, 4, 3), t.ones(2, 3), t.ones(1, 4, 2)),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(3, dtype=t.float64), t.ones(4, 2)),
     lambda t: t.ormqr(t.ones(4, 3), t.ones(3), t.ones(4, 2, dtype=t.float64)),
     lambda t: t.ormqr(*(t.ones(s, dtype=t.int32) for s in ((4, 3), (3,), (4, 2))))],
    ids=["1d-input", "1d-other", "rows", "columns", "tau-long", "tau-short-right", "tau-rank",
         "other-rank", "tau-batch", "other-batch", "tau-dtype", "other-dtype", "int"],
)  # fmt: skip
def test_ormqr_errors(fn):
    _same_error(fn)


# -- orthogonal -------------------------------------------------------------------------------

MAPS = ["matrix_exp", "cayley", "householder"]
# (out_features, in_features): square, tall, wide; None: a batch of matrices as the weight
LAYERS = [(4, 4), (5, 3), (3, 5), None]


def _layers(lib, size, dtype, seed=0):
    """A Linear of ``size`` (None: a Module with a (2, 4, 3) weight) in each library, with the
    same values."""
    rng = np.random.default_rng(seed)
    out_f, in_f = size or (4, 3)
    weight = rng.standard_normal((2, 4, 3) if size is None else (out_f, in_f)).astype(dtype)
    bias = rng.standard_normal(out_f).astype(dtype)
    made = []
    for t in (torch, lib):
        m = t.nn.Linear(in_f, out_f, dtype=getattr(t, dtype))
        if size is None:
            m = t.nn.Module()
            m.weight = t.nn.Parameter(t.tensor(weight))
        else:
            with t.no_grad():
                m.weight.copy_(t.tensor(weight))
                m.bias.copy_(t.tensor(bias))
        made.append(m)
    return made


def _register(tm, cm, device, **kwargs):
    torch.nn.utils.parametrizations.orthogonal(tm, **kwargs)
    clgrad.nn.utils.parametrizations.orthogonal(cm.to(device), **kwargs)


def _load_torchs(cm, tm, device, perturb_seed=None):
    """Moves torch's state (after a random step away from ``original = -I``, so that the map
    is exercised) into ``cm``."""
    if perturb_seed is not None:
        original = tm.parametrizations.weight.original
        noise = torch.tensor(_random(tuple(original.shape), str(original.dtype)[6:], perturb_seed))
        # off the diagonal: householder reads its signs (+-1), which training leaves alone
        noise = noise * (1 - torch.eye(*original.shape[-2:], dtype=noise.dtype))
        with torch.no_grad():
            original.add_(0.4 * noise)
    cm.load_state_dict({k: clgrad.tensor(v.numpy(), device=device) for k, v in
                        tm.state_dict().items()})  # fmt: skip


def _check_orthogonal(W, dtype):
    W = torch.tensor(_host(W), dtype=torch.float64)
    if W.shape[-2] < W.shape[-1]:
        W = W.mT
    eye = torch.eye(W.shape[-1], dtype=torch.float64).expand(W.mT.shape[:-2] + (-1, -1))
    np.testing.assert_allclose((W.mT @ W).numpy(), eye.numpy(), atol=TOL[dtype] * 10)


@pytest.mark.parametrize("triv", [True, False], ids=["trivialization", "plain"])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("size", LAYERS, ids=str)
def test_orthogonal_registers_as_torch(device, size, orthogonal_map, triv):
    tm, cm = _layers(clgrad, size, "float32")
    _register(tm, cm, device, orthogonal_map=orthogonal_map, use_trivialization=triv)
    assert type(cm).__name__ == type(tm).__name__
    assert clgrad.nn.utils.parametrize.is_parametrized(cm, "weight")
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    W = cm.weight
    assert tuple(W.shape) == tuple(tm.weight.shape) and str(W.device) == device
    _check_orthogonal(W, "float32")
    tW = tm.weight
    square = tW.shape[-1] == tW.shape[-2]
    if square or not triv:  # (else torch completes the basis with random columns)
        # the same start: the weight orthogonalized as torch does (or kept, if the map
        # cannot invert it), the same original
        _close(W, tW, "float32", 10)
        _close(cm.parametrizations.weight.original, tm.parametrizations.weight.original,
               "float32", 10)  # fmt: skip


@pytest.mark.parametrize("size", LAYERS, ids=str)
def test_orthogonal_default_map(size):
    tm, cm = _layers(clgrad, size, "float32")
    _register(tm, cm, "cpu")
    want = tm.parametrizations.weight[0].orthogonal_map.name
    assert cm.parametrizations.weight[0].orthogonal_map.name == want
    assert want == ("matrix_exp" if size == (4, 4) else "householder")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("triv", [True, False], ids=["trivialization", "plain"])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("size", LAYERS, ids=str)
def test_orthogonal_forward_and_gradient_are_torchs(device, dtype, size, orthogonal_map, triv):
    _need(device, dtype)
    tm, cm = _layers(clgrad, size, dtype, 1)
    _register(tm, cm, device, orthogonal_map=orthogonal_map, use_trivialization=triv)
    _load_torchs(cm, tm, device, perturb_seed=2)
    _close(cm.weight, tm.weight, dtype, 10)
    _check_orthogonal(cm.weight, dtype)
    x = _random((6, tm.weight.shape[-1]), dtype, 3)
    if size is None:
        tl = (tm.weight @ torch.tensor(x).T).square().sum()
        cl = (cm.weight @ clgrad.tensor(x, device=device).T).square().sum()
    else:
        tl = (tm(torch.tensor(x)) * torch.tensor(x[:, :1])).sum()
        cl = (cm(clgrad.tensor(x, device=device)) * clgrad.tensor(x[:, :1], device=device)).sum()
        _close(cm(clgrad.tensor(x, device=device)), tm(torch.tensor(x)), dtype, 10)
    tl.backward()
    cl.backward()
    original = cm.parametrizations.weight.original
    want = tm.parametrizations.weight.original.grad
    assert original.grad is not None and float(original.grad.abs().sum()) > 0
    _close(original.grad, want, dtype, 50)
    if size is not None:
        _close(cm.bias.grad, tm.bias.grad, dtype, 10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("size", [(4, 4), (5, 3), (3, 5)], ids=str)
def test_orthogonal_sgd_stays_orthogonal_as_torch(device, size, orthogonal_map):
    tm, cm = _layers(clgrad, size, "float32", 4)
    _register(tm, cm, device, orthogonal_map=orthogonal_map)
    _load_torchs(cm, tm, device)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    copt = clgrad.optim.SGD(cm.parameters(), lr=0.1)
    x = _random((8, size[1]), "float32", 5)
    y = _random((8, size[0]), "float32", 6)
    start = _host(cm.weight)
    for _ in range(4):
        for m, opt, t, dev in ((tm, topt, torch, None), (cm, copt, clgrad, device)):
            opt.zero_grad()
            xs, ys = (t.tensor(v) if dev is None else t.tensor(v, device=dev) for v in (x, y))
            ((m(xs) - ys) ** 2).mean().backward()
            opt.step()
        _check_orthogonal(cm.weight, "float32")
    assert np.abs(_host(cm.weight) - start).max() > 1e-3  # it trained
    _close(cm.weight, tm.weight, "float32", 20)


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("size", [(4, 4), (5, 3), (3, 5)], ids=str)
def test_orthogonal_right_inverse_of_an_orthogonal_matrix(device, size, orthogonal_map):
    # what assigning an orthogonal matrix to the weight runs: base becomes it (completed to a
    # square where it is not), the original -I, and the weight it
    tm, cm = _layers(clgrad, size, "float64", 7)
    _register(tm, cm, "cpu", orthogonal_map=orthogonal_map)
    Q = torch.linalg.qr(torch.tensor(_random(size, "float64", 8)).mT if size[0] < size[1]
                        else torch.tensor(_random(size, "float64", 8)))[0]  # fmt: skip
    Q = Q.mT if size[0] < size[1] else Q
    torch_orth, orth = tm.parametrizations.weight[0], cm.parametrizations.weight[0]
    want = torch_orth.right_inverse(Q)
    got = orth.right_inverse(clgrad.tensor(Q.numpy()))
    _close(got, want, "float64")
    base = _host(orth.base)
    np.testing.assert_allclose(base[:, : min(size)], torch_orth.base.numpy()[:, : min(size)],
                               atol=1e-12)  # fmt: skip
    with clgrad.no_grad():
        cm.parametrizations.weight.original.copy_(got)
    _close(cm.weight, Q, "float64", 10)


def test_orthogonal_householder_right_inverse_without_trivialization(device):
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip("the device has no float64")
    # geqrf's reflectors with the diagonal's signs; a skipped reflection (the identity's
    # columns: tau 0) flips its sign, so that the map gives the matrix back
    for Q in (torch.eye(4, 3, dtype=torch.float64),
              torch.linalg.qr(torch.tensor(_random((4, 3), "float64", 9)))[0]):  # fmt: skip
        tm, cm = _layers(clgrad, (4, 3), "float64", 10)
        _register(tm, cm, device, orthogonal_map="householder", use_trivialization=False)
        want = tm.parametrizations.weight[0].right_inverse(Q)
        got = cm.parametrizations.weight[0].right_inverse(clgrad.tensor(Q.numpy(), device=device))
        _close(got, want, "float64")
        _close(cm.parametrizations.weight[0](got), Q, "float64", 10)


@pytest.mark.parametrize(
    "make, kwargs",
    [(lambda t: t.nn.Linear(3, 3), {"name": "weights"}),
     (lambda t: t.nn.Linear(3, 3), {"name": "bias"}),
     (lambda t: t.nn.Linear(3, 3), {"orthogonal_map": "qr"})],
    ids=["missing", "vector", "map"],
)  # fmt: skip
def test_orthogonal_errors(make, kwargs):
    def fn(t):
        t.manual_seed(0)
        return t.nn.utils.parametrizations.orthogonal(make(t), **kwargs)

    _same_error(fn)


def test_orthogonal_right_inverse_wrong_shape():
    tm, cm = _layers(clgrad, (4, 3), "float32")
    _register(tm, cm, "cpu")
    with pytest.raises(ValueError) as want:
        tm.parametrizations.weight[0].right_inverse(torch.eye(3))
    with pytest.raises(ValueError) as got:
        cm.parametrizations.weight[0].right_inverse(clgrad.eye(3))
    assert str(got.value).replace("clgrad.Size", "torch.Size") == str(want.value)
