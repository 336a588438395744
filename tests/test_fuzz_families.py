"""Families of differences from torch that a differential fuzzer found (random programs run in
torch and clgrad), each checked against torch on every device: the in-place operators, ops
that returned their input object, gradients at special points, decompositions' gradients and
error reporting, and edge shapes."""

import numpy as np
import pytest
import torch

import clgrad


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if isinstance(x, (torch.Tensor, clgrad.Tensor)):
        return (tuple(x.shape), str(x.dtype).split(".")[-1], x.detach().cpu().numpy())
    return x


def _same(got, want):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, tuple):
        assert got[:2] == want[:2]
        np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-5)
    else:
        assert got == want


def _builtin_base(cls):
    """The nearest built-in exception class ``cls`` derives from (RuntimeError, ...)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def both(device, case):
    """``case(lib, dev)`` in torch and clgrad: the same values (or the same exception class)."""
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        try:
            results.append(("ok", _np(case(lib, dev))))
        except Exception as e:  # the class is compared below
            results.append(("raised", type(e)))
    (kind_t, want), (kind_c, got) = results
    assert kind_c == kind_t, (results[0], results[1])
    if kind_t == "raised":  # the same class, or torch's private one of that name
        assert issubclass(got, want) or want.__name__.lstrip("_") == got.__name__, (want, got)
        assert issubclass(got, _builtin_base(want)), (want, got)
    else:
        _same(got, want)


@pytest.mark.parametrize("op", ["&=", "|=", "^=", "//=", "%=", "**="])
def test_inplace_operators_write_in_place(device, op):
    """``x &= m``, ``x //= 3``, ``x **= 2``, ... write into x (its views and aliases see it)."""

    def case(lib, dev):
        x = lib.tensor([6, 5, 7], device=dev)
        alias, view = x, x[:2]
        ns = {"view": view, "x": x}
        exec(f"view {op} 3", ns)
        exec(f"x {op} 2", ns)
        return [x, alias, ns["x"] is x]

    both(device, case)


def test_inplace_ops_refuse_a_float_result_in_an_int_tensor(device):
    def floordiv(lib, dev):
        x = lib.tensor([3, 5, 7], device=dev)
        x //= 2.5
        return x

    def div_floor(lib, dev):
        return lib.tensor([3, 5, 7], device=dev).div_(2.5, rounding_mode="floor")

    def mask_and(lib, dev):
        m = lib.tensor([True, False, True], device=dev)
        alias = m
        m &= lib.tensor([True, True, False], device=dev)
        return alias

    for case in (floordiv, div_floor, mask_and):
        both(device, case)


NEW_TENSOR_OPS = {
    "pad nothing": lambda lib, x: lib.nn.functional.pad(x, (0, 0)),
    "cumprod of one": lambda lib, x: x[:, :1].cumprod(1),
    "logcumsumexp of one": lambda lib, x: x[:, :1].logcumsumexp(1),
    "cummax of one": lambda lib, x: x[:, :1].cummax(1)[0],
    "diff n=0": lambda lib, x: lib.diff(x, n=0),
    "diff of an empty dim": lambda lib, x: lib.diff(x[:, :0], dim=1),
    "x[...]": lambda lib, x: x[...],
    "x[:]": lambda lib, x: x[:],
    "expand to its shape": lambda lib, x: x.expand(2, 3),
    "broadcast_to its shape": lambda lib, x: lib.broadcast_to(x, (2, 3)),
}


@pytest.mark.parametrize("name", list(NEW_TENSOR_OPS))
def test_ops_return_a_new_tensor_not_their_input(device, name):
    """An op with nothing to do still returns a new tensor (a copy or a view, as torch's):
    writing into the result in place, or a hook on it, must not reach the leaf itself."""

    def case(lib, dev):
        w = lib.ones(2, 3, device=dev, requires_grad=True)
        x = w * 1
        y = NEW_TENSOR_OPS[name](lib, x)
        is_new = y is not x and y is not w
        y.register_hook(lambda g: g * 100)
        y.sum().backward()
        return [is_new, w.grad, y.is_leaf]

    both(device, case)


A32 = np.array([[2.0, 1.0], [1.0, 3.0], [0.5, -1.0]], np.float32)


@pytest.mark.parametrize("transposed", [False, True])
def test_full_svd_of_a_non_square_matrix_differentiates(device, transposed):
    """``linalg.svd(A)`` (full_matrices) of a non-square A: U and Vh require grad, and a
    gradient through their first min(m, n) columns (rows) reaches A, as torch's."""

    def case(lib, dev):
        a = A32.T.copy() if transposed else A32
        A = lib.tensor(a, device=dev, requires_grad=True)
        U, S, Vh = lib.linalg.svd(A)
        k = S.shape[0]
        w = lib.tensor(np.arange(1.0, 1.0 + k * k, dtype=np.float32).reshape(k, k), device=dev)
        # unique (sign-free) quantities of the first k singular vectors
        loss = ((Vh[:k].mT * S**2) @ Vh[:k] * w.sum()).sum() + ((U[:, :k] * S) @ Vh[:k]).sum()
        loss.backward()
        return [U.requires_grad, Vh.requires_grad, tuple(U.shape), tuple(Vh.shape), A.grad]

    both(device, case)


def test_complete_qr_of_a_tall_matrix_refuses_backward(device):
    def case(lib, dev):
        A = lib.tensor(A32, device=dev, requires_grad=True)
        Q, R = lib.linalg.qr(A, mode="complete")
        assert Q.requires_grad and R.requires_grad and tuple(Q.shape) == (3, 3)
        (Q.sum() + R.sum()).backward()

    both(device, case)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs_per_driver(device, driver):
    def case(lib, dev):
        A = lib.tensor(A32, device=dev, requires_grad=True)
        B = lib.tensor(np.ones((3, 2), np.float32), device=dev)
        r = lib.linalg.lstsq(A, B, driver=driver)
        out = [r.solution, r.residuals, r.singular_values, tuple(r.rank.shape)]
        if r.residuals.numel():
            r.residuals.sum().backward()
            out.append(A.grad)
        return out + [r.residuals.requires_grad]

    both(device, case)


NOT_PD = [[1.0, 2.0], [2.0, 1.0]]
SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("name", ["cholesky_ex", "inv_ex", "solve_ex"])
def test_ex_functions_report_info_instead_of_raising(device, name):
    """``cholesky_ex`` / ``inv_ex`` / ``solve_ex`` give LAPACK's ``info`` per matrix and do not
    raise for a failed one (the others' results and gradients are right); ``check_errors``
    raises, as torch's."""
    bad = NOT_PD if name == "cholesky_ex" else SINGULAR

    def case(lib, dev):
        good = [[4.0, 1.0], [1.0, 3.0]]
        A = lib.tensor([good, bad, good], device=dev, requires_grad=True)
        fn = getattr(lib.linalg, name)
        args = (lib.ones(3, 2, device=dev),) if name == "solve_ex" else ()
        result, info = fn(A, *args)
        kept = result[[0, 2]]
        kept.sum().backward()
        return [info, kept, A.grad[[0, 2]]]

    def strict(lib, dev):
        fn = getattr(lib.linalg, name)
        args = (lib.ones(2, device=dev),) if name == "solve_ex" else ()
        fn(lib.tensor(bad, device=dev), *args, check_errors=True)

    both(device, case)
    both(device, strict)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize(
    "x, src",
    [
        ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]),
        ([0.0, 2.0, 3.0, 4.0], [5.0, 0.0, 7.0, 8.0]),  # a zero in self, a lone zero in src
        ([1.0, 2.0, 3.0, 4.0], [0.0, 6.0, 0.0, 8.0]),  # two zeros scattered to one position
    ],
)
def test_scatter_reduce_prod_gradient(device, include_self, x, src):
    def case(lib, dev):
        xt = lib.tensor(x, device=dev, requires_grad=True)
        st = lib.tensor(src, device=dev, requires_grad=True)
        idx = lib.tensor([0, 1, 0, 3], device=dev)
        y = lib.scatter_reduce(xt, 0, idx, st, reduce="prod", include_self=include_self)
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0], device=dev)).sum().backward()
        return [y, xt.grad, st.grad]

    both(device, case)


def test_cosine_similarity_broadcasts_before_the_norms(device):
    def case(lib, dev):
        rng = np.random.default_rng(2)
        a = lib.tensor(rng.standard_normal((3, 1), np.float32), device=dev, requires_grad=True)
        b = lib.tensor(rng.standard_normal((3, 4), np.float32), device=dev, requires_grad=True)
        out = lib.nn.functional.cosine_similarity(a, b, dim=1)
        out.sum().backward()
        return [out, a.grad, b.grad]

    both(device, case)


KINKS = {
    "xlogy at x = 0": lambda lib, x, y: lib.xlogy(x * 0, y),
    "xlogy at x = 0, y <= 0": lambda lib, x, y: lib.xlogy(x * 0, -y),
    "prelu at 0": lambda lib, x, y: lib.nn.functional.prelu(x * 0, lib.tensor([0.25])),
    "multilabel hinge at 0": lambda lib, x, y: lib.nn.functional.multilabel_margin_loss(
        lib.stack([x[:1] * 0 - 0.5, x[:1] * 0 + 1, x[:1] * 0 + 1, x[:1] * 0 + 2], 1),
        lib.tensor([[0, 2, 3, -1]]),
    ),
    "multi-margin hinge at 0": lambda lib, x, y: lib.nn.functional.multi_margin_loss(
        lib.stack([x[:1] * 0, x[:1] * 0 + 1, x[:1] * 0 + 0.5], 1), lib.tensor([1])
    ),
}


@pytest.mark.parametrize("name", list(KINKS))
def test_gradients_at_kinks_match_torch(name):
    """The gradient exactly at a kink or a special point is torch's own choice."""

    def case(lib, dev):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.tensor([0.5, 2.0, 4.0], requires_grad=True)
        KINKS[name](lib, x, y).sum().backward()
        return [x.grad, y.grad]

    both("cpu", case)


def test_prod_second_derivative_with_a_zero(device):
    def case(lib, dev):
        x = lib.tensor([[0.0, -1.0], [-1.5, 2.0]], device=dev, requires_grad=True)
        (g,) = lib.autograd.grad(lib.prod(x, 0).sum(), x, create_graph=True)
        (g * lib.tensor([[1.0, 1.0], [10.0, 1.0]], device=dev)).sum().backward()
        y = lib.tensor([2.0, 0.0, 3.0], device=dev, requires_grad=True)
        (h,) = lib.autograd.grad(y.prod(), y, create_graph=True)
        (h * lib.tensor([1.0, 2.0, 3.0], device=dev)).sum().backward()
        return [g, x.grad, h, y.grad]

    both(device, case)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("cov of one row", lambda lib, d: lib.cov(lib.tensor([[1.0, 2.0, 4.0]], device=d))),
        ("corrcoef of one row", lambda lib, d: lib.corrcoef(lib.tensor([[1.0, 2.0]], device=d))),
        ("nonzero 0-d", lambda lib, d: lib.nonzero(lib.tensor(3.0, device=d), as_tuple=True)),
        ("nonzero 0-d zero", lambda lib, d: lib.nonzero(lib.tensor(0.0, device=d), as_tuple=True)),
    ],
)
def test_edge_shapes_match_torch(device, name, fn):
    both(device, lambda lib, dev: fn(lib, dev))


EDGES = {
    "unique_consecutive of one": lambda lib, d: lib.unique_consecutive(
        lib.zeros(1, device=d), dim=0
    ),
    "nan_to_num past float32": lambda lib, d: lib.nan_to_num(
        lib.tensor([float("inf"), float("-inf"), float("nan")], device=d), 1e39, 1e40, -1e40
    ),
    "area interpolation to size 0": lambda lib, d: lib.nn.functional.interpolate(
        lib.ones(1, 1, 1, device=d), scale_factor=0.5, mode="area"
    ),
    "dropout2d of a 2-D input": lambda lib, d: lib.nn.functional.dropout2d(
        lib.ones(2, 3, device=d), p=0.0
    ),
    "dropout2d of a 1-D input": lambda lib, d: lib.nn.functional.dropout2d(lib.ones(3, device=d)),
    "lcm of a bool": lambda lib, d: lib.lcm(lib.tensor([2, 3], device=d), True),
    "gcd of a number": lambda lib, d: lib.gcd(lib.tensor([2, 3], device=d), 2),
}


@pytest.mark.parametrize("name", list(EDGES))
def test_more_edges_match_torch(device, name):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(device, lambda lib, dev: EDGES[name](lib, dev))


def test_dropout2d_of_3d_input_drops_per_n_and_c_as_torch(device):
    """PyTorch takes a 3-D input to dropout2d as (N, C, L): one draw per (n, c), with a
    warning."""
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        y = clgrad.nn.functional.dropout2d(clgrad.ones(4, 8, 50, device=device), 0.5)
    y = y.cpu().numpy()
    assert (y.max(2) == y.min(2)).all() and 0 < (y[:, :, 0] == 0).sum() < 32


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(device, reduce, include_self):
    import warnings

    def case(lib, dev):
        # (no value of x equals a result it is left out of: torch counts such an excluded
        # value among amax/amin's ties, halving the source's gradient; clgrad does not)
        x = lib.tensor([[1.0, 2.0, 3.5], [7.0, 8.0, 9.5]], device=dev, requires_grad=True)
        src = lib.tensor([[2.0, 3.0], [4.0, 5.0]], device=dev, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "index_reduce() is in beta"
            y = x.index_reduce(
                1, lib.tensor([0, 2], device=dev), src, reduce, include_self=include_self
            )
        (y * lib.arange(6.0, device=dev).reshape(2, 3)).sum().backward()
        z = (
            x.detach()
            .clone()
            .index_reduce_(
                0, lib.tensor([1], device=dev), src.detach()[:1, :1].expand(1, 3), reduce
            )
        )
        return [y, x.grad, src.grad, z]

    both(device, case)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_match_torch(device, upper):
    def case(lib, dev):
        a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
        factor = np.linalg.cholesky(a)
        L = lib.tensor(factor.T.copy() if upper else factor, device=dev, requires_grad=True)
        B = lib.tensor(np.ones((3, 2), np.float32), device=dev, requires_grad=True)
        X = lib.cholesky_solve(B, L, upper=upper)
        inv = L.cholesky_inverse(upper=upper)
        (X.sum() + inv.square().sum()).backward()
        return [X, inv, L.grad.triu() if upper else L.grad.tril(), B.grad]

    both(device, case)


def test_embedding_scale_grad_by_freq_matches_torch(device):
    def case(lib, dev):
        emb = lib.nn.Embedding(5, 2, scale_grad_by_freq=True, padding_idx=4).to(dev)
        with lib.no_grad():
            emb.weight.copy_(lib.arange(10.0).reshape(5, 2))
        idx = lib.tensor([[0, 1, 1], [3, 1, 4]], device=dev)
        (emb(idx) * lib.arange(12.0, device=dev).reshape(2, 3, 2)).sum().backward()
        return [emb.weight.grad, repr(emb)]

    both(device, case)


def test_mT_of_a_0d_tensor_is_the_identity_as_torch(device):
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        assert float(clgrad.tensor(2.0, device=device).mT) == 2.0
    with pytest.raises(RuntimeError):
        _ = clgrad.ones(2, device=device).mT


def test_zero_norm_is_recorded_without_a_gradient(device):
    def case(lib, dev):
        x = lib.tensor([0.0, 2.0, -3.0, float("inf")], device=dev, requires_grad=True)
        n = lib.linalg.vector_norm(x, ord=0)
        n.backward()
        kept = lib.linalg.vector_norm(x, 0, dim=0, keepdim=True)
        return [n, n.requires_grad, x.grad is None, kept]

    both(device, case)


@pytest.mark.parametrize("scale", [0.1, 1.0, 8.0])
def test_matrix_exp_matches_torch(device, scale):
    def case(lib, dev):
        rng = np.random.default_rng(4)
        a = (rng.standard_normal((2, 3, 3)) * scale / 3).astype(np.float32)
        A = lib.tensor(a, device=dev, requires_grad=True)
        E = lib.linalg.matrix_exp(A)
        (E * lib.arange(9.0, device=dev).reshape(3, 3)).sum().backward()
        return [E / E.abs().max(), A.grad / A.grad.abs().max(), A[0].matrix_exp()]

    both(device, case)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((4,), {}),
        ((3,), {"range": (0.0, 3.0), "weight": "ones"}),
        (("edges",), {"density": True}),
        ((2,), {"density": True}),
    ],
)
def test_histogram_matches_torch(device, args, kwargs):
    def case(lib, dev):
        x = lib.tensor([1.0, 2.0, 1.0, 4.0, 2.5], device=dev)
        a = [lib.tensor([0.0, 1.5, 3.0, 5.0], device=dev) if v == "edges" else v for v in args]
        kw = {k: (lib.ones(5, device=dev) * 2 if v == "ones" else v) for k, v in kwargs.items()}
        hist, edges = lib.histogram(x, *a, **kw)
        same, empty = lib.histogram(lib.tensor([2.0, 2.0], device=dev), 2), x[:0].histogram(2)
        return [hist, edges, *same, *empty]

    both(device, case)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma_matches_torch(device, n):
    def case(lib, dev):
        x = lib.tensor([-2.5, -0.5, 0.3, 1.0, 5.0, 40.0], device=dev, requires_grad=True)
        y = lib.polygamma(n, x)
        (y / y.abs().max()).sum().backward()
        return [y / y.abs().max(), x.grad / x.grad.abs().max(), lib.special.polygamma(n, x)]

    both(device, case)


def test_zeta_and_mvlgamma_match_torch(device):
    def case(lib, dev):
        s = lib.tensor([2.0, 3.0, 1.0, 0.5, 4.5], device=dev)
        q = lib.tensor([1.0, -2.5, 3.0, 2.0, 0.25], device=dev, requires_grad=True)
        z = lib.special.zeta(s, q)
        z[[0, 1, 4]].sum().backward()
        m = lib.mvlgamma(lib.tensor([2.5, 4.0], device=dev), 3)
        return [z, q.grad, m, lib.tensor([2.5], device=dev).mvlgamma(2)]

    both(device, case)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_matches_torch(device, name):
    def case(lib, dev):
        a = lib.tensor([0.0, 0.5, 1.0, 3.0, 10.0, 100.0, -1.0, 2.0, 2.0, 2.0, 1e-3], device=dev)
        values = [1.0, 0.2, 1.0, 7.0, 9.5, 120.0, 1.0, -1.0, 0.0, float("inf"), 5.0]
        x = lib.tensor(values, device=dev, requires_grad=True)
        y = getattr(lib, name)(a, x)
        y[[1, 2, 3, 4, 5, 10]].sum().backward()
        special = getattr(lib.special, "gammainc" if name == "igamma" else "gammaincc")(a, x)
        return [y, x.grad[[1, 2, 3, 4, 5, 10]], special, getattr(a, name)(x)]

    both(device, case)


def test_incomplete_gamma_refuses_the_derivative_in_a(device):
    def case(lib, dev):
        a = lib.tensor([1.0], device=dev, requires_grad=True)
        lib.igamma(a, lib.tensor([1.0], device=dev)).sum().backward()

    both(device, case)


def test_nonzero_static_matches_torch(device):
    def case(lib, dev):
        x = lib.tensor([[0, 1], [2, 0], [3, 4]], device=dev)
        return [
            lib.nonzero_static(x, size=5),
            lib.nonzero_static(x, size=2, fill_value=9),
            x.nonzero_static(size=0),
            lib.nonzero_static(lib.tensor(3, device=dev), size=2),
        ]

    both(device, case)


GRADIENT_CASES = {
    "default": ({}, (5,)),
    "step": ({"spacing": 2.0}, (5,)),
    "coordinates": ({"spacing": "coords"}, (5,)),
    "coordinates, second order": ({"spacing": "coords", "edge_order": 2}, (5,)),
    "second order": ({"edge_order": 2}, (5,)),
    "every dim": ({}, (3, 4)),
    "one dim": ({"dim": 1}, (3, 4)),
    "steps per dim": ({"spacing": [1.0, 2.0]}, (3, 4)),
    "too short": ({"edge_order": 2}, (2,)),
}


@pytest.mark.parametrize("name", list(GRADIENT_CASES))
def test_gradient_matches_torch(device, name):
    kwargs, shape = GRADIENT_CASES[name]

    def case(lib, dev):
        data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) ** 2
        f = lib.tensor(data, device=dev, requires_grad=True)
        kw = dict(kwargs)
        if kw.get("spacing") == "coords":
            kw["spacing"] = (lib.tensor([0.0, 1.0, 1.5, 3.5, 4.0], device=dev),)
        out = lib.gradient(f, **kw)
        sum(o.sum() for o in out).backward()
        return [*out, f.grad]

    both(device, case)
