"""The structural ops PyTorch programs reach for (shape ops, sort and selection, running ops,
scatter and index families, einsum and products) against torch on every test device: values,
dtypes, gradients and exception classes, on 0-d, empty and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_helper import DEVICES, Input, compare

import clgrad

NAN = float("nan")
INF = float("inf")
# distinct values (ties make the order of equal elements matter only where a test says so)
DISTINCT = Input(values=np.random.default_rng(1).permutation(20).reshape(4, 5).astype("float32"))
WITH_NAN = Input(values=np.array([[3.0, NAN, 1.0, 2.0, 1.0], [NAN, 0.0, NAN, 5.0, 5.0]], "float32"))
TIES = Input(values=np.array([[2, 1, 2, 1, 3, 1], [0, 0, 1, 0, 1, 0]]), dtype="int64")


# ---- sorting and selection ---------------------------------------------------------------------
SORTS = {
    "sort": lambda x: x.sort(),
    "sort_dim0_desc": lambda t, x: t.sort(x, dim=0, descending=True),
    "sort_stable_desc": lambda t, x: t.sort(x, stable=True, descending=True),
    "argsort": lambda x: x.argsort(dim=0),
    "msort": lambda t, x: t.msort(x),
    "topk": lambda x: x.topk(2),
    "topk_small_dim0": lambda t, x: t.topk(x, 3, dim=0, largest=False),
    "kthvalue": lambda x: x.kthvalue(2, dim=1, keepdim=True),
    "median": lambda x: x.median(),
    "median_dim": lambda x: x.median(dim=0),
    "nanmedian_dim": lambda t, x: t.nanmedian(x, 1),
}


@pytest.mark.parametrize("op", SORTS)
@pytest.mark.parametrize("x", [DISTINCT, WITH_NAN], ids=["distinct", "nan"])
def test_sorting(op, x):
    compare(SORTS[op], x)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_results_are_row_major(device, dim):
    """As PyTorch's for a row-major input: ``.view()`` of a sort along any dim works (the rows
    sorted along dim 0 came back in a transposed layout, which refused it)."""
    x = clgrad.tensor(
        np.random.default_rng(5).standard_normal((3, 4, 2)).astype(np.float32), device=device
    )
    values, indices = x.sort(dim)
    for t in (values, indices, clgrad.msort(x)):
        assert t.is_contiguous() and t.view(-1).shape == (24,)


@pytest.mark.parametrize("op", ["sort", "sort_stable_desc", "argsort", "msort"])
def test_sort_is_stable(op):
    # which of equal elements topk, kthvalue and median name is PyTorch's implementation's
    # choice; a stable sort's order is defined
    compare(SORTS[op], TIES)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "uint8", "bool"])
def test_sort_dtypes(dtype):
    compare(lambda x: x.sort(dim=0, stable=True), Input((5, 3), dtype), grad=False)


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda x: x.sort(), Input(())),
        (lambda x: x.sort(dim=0), Input((0, 3))),
        (lambda x: x.topk(1, dim=0), Input(())),
        (lambda x: x.kthvalue(1), Input((3, 0))),
        (lambda x: x.median(), Input((0,))),
        (lambda x: x.median(dim=1), Input((2, 0))),
        (lambda x: x.topk(6), Input((5,))),
        (lambda x: x.kthvalue(0), Input((5,))),
        (lambda x: x.sort(dim=2), Input((2, 3))),
        (lambda x: x.sort(), Input((1000,))),  # a padded network: 1024 lanes
    ],
)
def test_sorting_edges(fn, x):
    compare(fn, x)


# mode: rows of up to 16 elements, where PyTorch's sort (an insertion sort there) keeps equal
# elements in order, so its index is the last occurrence, as clgrad's always is
MODE_ROWS = Input(values=np.array([[2, 1, 2, 1, 3, 1, 0], [5, 4, 4, 5, 9, 9, 4]], "float32"))


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda x: x.mode(), MODE_ROWS),
        (lambda t, x: t.mode(x, 0, keepdim=True), MODE_ROWS),
        (lambda x: x.mode(), TIES),
        (lambda x: x.mode(), Input(values=np.array([NAN, NAN], "float32"))),
        (lambda x: x.mode(), Input(values=np.array([1.0, NAN, 2.0, 2.0], "float32"))),
        (lambda x: x.mode(), Input(())),
        (lambda x: x.mode(dim=1), Input((2, 0))),
    ],
)
def test_mode(fn, x):
    compare(fn, x)


def test_mode_long_rows():
    """Rows of 20,000 (every pair of elements compared took 3 GB before, 10 GB at 70,000): the
    values against torch's, and each index names an occurrence of the value."""
    values = np.random.default_rng(3).integers(-9, 10, (2, 20_000)).astype("float32")
    compare(lambda x: x.mode().values, Input(values=values), grad=False)
    for device in DEVICES:
        got = clgrad.tensor(values, device=device).mode(1)
        picked = np.take_along_axis(values, got.indices.cpu().numpy()[:, None], 1)[:, 0]
        np.testing.assert_array_equal(picked, got.values.cpu().numpy())


SEARCHES = [
    # (sorted sequence, values): NaN on either side goes where torch's binary search puts it
    ([1.0, 2.0, 2.0, 2.0, 3.0], [2.0, 0.0, 4.0, NAN, 2.5]),
    ([1.0, 5.0, NAN, NAN, NAN], [3.0, NAN, 5.0, 0.0]),
    ([1.0, 2.0, NAN], [[NAN, 1.0], [3.0, 2.0]]),
    ([-INF, 0.0, INF], [-INF, INF, 0.0, NAN]),
    ([5.0], 5.0),
    ([[1.0, 3.0, 5.0], [0.0, 0.0, 9.0]], [[3.0, 6.0], [0.0, 10.0]]),  # a sequence per row
]


@pytest.mark.parametrize("seq, values", SEARCHES)
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted(seq, values, right):
    seq, values = np.array(seq, "float32"), np.array(values, "float32")
    compare(
        lambda t, s, v: t.searchsorted(s, v, right=right),
        Input(values=seq),
        Input(values=values),
        grad=False,
        layouts=["contiguous"],
    )
    if seq.ndim == 1 and values.ndim:
        compare(
            lambda t, v, s: t.bucketize(v, s, right=right, out_int32=True),
            Input(values=values),
            Input(values=seq),
            grad=False,
            layouts=["contiguous"],
        )


def test_search_large():
    """200,000 values in a table of 20,000 (every pair compared took 4 GB before): a binary
    search, and isin through one."""
    rng = np.random.default_rng(4)
    table = np.sort(rng.integers(0, 10**6, 20_000))
    values = rng.integers(0, 10**6, 200_000)
    expected = np.searchsorted(table, values)
    for device in DEVICES:
        got = clgrad.searchsorted(
            clgrad.tensor(table, device=device), clgrad.tensor(values, device=device)
        )
        np.testing.assert_array_equal(got.cpu().numpy(), expected)
        hit = clgrad.isin(clgrad.tensor(values, device=device), clgrad.tensor(table, device=device))
        np.testing.assert_array_equal(hit.cpu().numpy(), np.isin(values, table))


@pytest.mark.parametrize(
    "fn, inputs",
    [
        # dims past either operand's rank: torch's RuntimeError (an IndexError before)
        (lambda t, a, b: t.tensordot(a, b, dims=3), [Input((2, 3)), Input((3, 2))]),
        (lambda t, a, b: t.tensordot(a, b, dims=2), [Input((2, 3)), Input((3,))]),
        (lambda t, a, b: t.tensordot(a, b, dims=1), [Input((3,)), Input((3,))]),
        # an empty input: torch's RuntimeError (an IndexError before)
        (lambda t, x: t.quantile(x, 0.5), [Input((0,))]),
        (lambda t, x: t.nanquantile(x, 0.5, dim=0), [Input((0, 3))]),
    ],
)
def test_tensordot_and_quantile_refusals(fn, inputs):
    compare(fn, *inputs)


@pytest.mark.parametrize(
    "fn, inputs, grad",
    [
        # indices naming slices of no element are not checked, as PyTorch's (whose backward
        # of index_add and index_copy then checks: the forward alone is compared)
        (lambda t, x: x[t.tensor([5])], [Input((2, 0))], True),
        (lambda t, x: x[t.tensor([5]), t.tensor([1])], [Input((2, 3, 0))], True),
        (lambda t, x, s: x.index_add(0, _at(t, x, 5), s), [Input((2, 0)), Input((1, 0))], False),
        (lambda t, x, s: x.index_copy(0, _at(t, x, 5), s), [Input((2, 0)), Input((1, 0))], False),
        (lambda t, x: x.index_fill(0, _at(t, x, 5), 1.0), [Input((2, 0))], True),
        # where a slice holds elements they are
        (lambda t, x: x[t.tensor([5])], [Input((0, 3))], True),
        (lambda t, x, s: x.index_add(0, _at(t, x, 5), s), [Input((2, 3)), Input((1, 3))], True),
    ],
)
def test_indices_of_empty_slices(fn, inputs, grad):
    compare(fn, *inputs, grad=grad)


def _at(lib, x, i):
    """An index tensor holding ``i`` on x's device."""
    return lib.tensor([i], device=x.device)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        # fuzzing round 4: torch's errors, where clgrad computed or raised another
        (lambda t, x: x.repeat_interleave(2, 0), [Input(())]),
        (lambda t, x: x.repeat_interleave(2, -1), [Input(())]),
        (lambda t, x: x.repeat_interleave(2), [Input(())]),
        (lambda t, x: (x > 0).addcmul(x > 1, x > 2), [Input((3,))]),
        (lambda t, x: x.cumsum(-3, dtype=t.int32), [Input((2, 3))]),  # the dim checked first
        # a contracted dim of size 1 broadcasts; an empty contraction gives zeros
        (lambda t, a, b: t.tensordot(a, b, dims=1), [Input((2, 3)), Input((1, 4))]),
        (lambda t, a, b: t.tensordot(a, b, dims=1), [Input((2, 1)), Input((3, 4))]),
        (lambda t, a, b: t.tensordot(a, b, dims=([2], [0])), [Input((2, 3, 1)), Input((5, 3))]),
        (lambda t, a, b: t.tensordot(a, b, dims=1), [Input((2, 0)), Input((0, 4))]),
        # index_put's values broadcast as they are (x[i] = v drops leading ones; it does not)
        (
            lambda t, x, v: x.index_put((t.tensor([0, 1, 2, 3]),), v),
            [Input((4, 4)), Input((1, 4, 4))],
        ),
        (lambda t, x, v: x.index_put((t.tensor([0, 1]),), v), [Input((4,)), Input((3,))]),
        (lambda t, x, v: x.index_put((t.tensor([0, 2]),), v), [Input((3, 4)), Input((4,))]),
    ],
)
def test_round4_refusals(fn, inputs):
    compare(fn, *inputs)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "bool", "float16", "float32"])
def test_median_of_nothing(device, name, dtype):
    """PyTorch's NaN as C converts it into the dtype (integer medians of no element raised a
    ValueError on cpu and a driver argument error on OpenCL)."""
    expected = getattr(torch.zeros((0, 3), dtype=getattr(torch, dtype)), name)()
    got = getattr(clgrad.zeros((0, 3), dtype=getattr(clgrad, dtype), device=device), name)()
    assert str(got.dtype).rpartition(".")[2] == str(expected.dtype).rpartition(".")[2]
    assert str(got.item()) == str(expected.item())


@pytest.mark.parametrize(
    "fn, inputs, grad",
    [
        # weights broadcasting past the input: PyTorch writes them into a loss of its shape
        (lambda t, x, w: _bce_logits(t, x, weight=w), [Input(()), Input((2,))], False),
        (lambda t, x, w: _bce_logits(t, x, pos_weight=w), [Input((2, 2)), Input((2, 2, 2))], False),
        (
            lambda t, x, w: _bce_logits(t, x, weight=w, pos_weight=w),
            [Input((2, 3)), Input((3,))],
            False,
        ),
        # weights that require grad: PyTorch has no derivative for them
        (lambda t, x, w: _bce_logits(t, x, weight=w), [Input((2, 3)), Input((3,))], True),
        (lambda t, x, w: _bce_logits(t, x, pos_weight=w), [Input((2, 3)), Input((3,))], True),
        (
            lambda t, x, w: t.nn.functional.multi_margin_loss(x, t.tensor([0, 2]), weight=w),
            [Input((2, 3)), Input((3,))],
            True,
        ),
    ],
)
def test_loss_weights(fn, inputs, grad):
    compare(fn, *inputs, grad=grad)


def _bce_logits(lib, x, **weights):
    return lib.nn.functional.binary_cross_entropy_with_logits(x, x.detach().sigmoid(), **weights)


# ---- running ops -------------------------------------------------------------------------------
RUNNING = {
    "cumprod": lambda x: x.cumprod(1),
    "cumprod_dim0": lambda t, x: t.cumprod(x, dim=0),
    "cummax": lambda x: x.cummax(1),
    "cummin": lambda t, x: t.cummin(x, 0),
    "logcumsumexp": lambda x: x.logcumsumexp(1),
}
ZEROS = Input(values=np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [1.5, -2.0, 0.0, 1.0, 2.0]], "float32"))


@pytest.mark.parametrize("op", RUNNING)
@pytest.mark.parametrize("x", [Input((3, 5)), ZEROS], ids=["random", "zeros"])
def test_running(op, x):
    compare(RUNNING[op], x)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_running_extremes_nan(op):
    # (cumprod's gradient through a NaN is NaN where PyTorch's formula gives some zeros)
    compare(RUNNING[op], WITH_NAN)


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda x: x.cumprod(0), Input((), "int32")),
        (lambda x: x.cumprod(0), Input((0, 2))),
        (lambda t, x: t.cumprod(x, 1, dtype=t.float64), Input((2, 3), "int64")),
        (lambda x: x.cummax(0), Input((4, 3), "int16")),
        (lambda x: x.cummin(-1), Input(())),
        (lambda x: x.logcumsumexp(0), Input((3,), "int64")),
        (lambda x: x.cummax(2), Input((2, 2))),
    ],
)
def test_running_edges(fn, x):
    compare(fn, x)


# ---- shape ops ---------------------------------------------------------------------------------
SHAPES = {
    "tril": (lambda x: x.tril(), (3, 4)),
    "triu_k": (lambda t, x: t.triu(x, 1), (2, 3, 4)),
    "tril_neg": (lambda t, x: t.tril(x, -1), (4, 3)),
    "tril_": (lambda x: x.clone().tril_(1), (3, 3)),
    "diagonal": (lambda x: x.diagonal(), (3, 4)),
    "diagonal_dims": (lambda t, x: t.diagonal(x, -1, 2, 0), (3, 2, 4)),
    "diag_1d": (lambda t, x: t.diag(x, 1), (3,)),
    "diag_2d": (lambda t, x: t.diag(x, -1), (3, 4)),
    "diag_embed": (lambda t, x: t.diag_embed(x, 1, 0, 2), (2, 3)),
    "diagflat": (lambda t, x: t.diagflat(x), (2, 2)),
    "trace": (lambda t, x: t.trace(x), (3, 4)),
    "roll": (lambda t, x: t.roll(x, 2), (2, 3)),
    "roll_dims": (lambda x: x.roll((1, -1), (0, 1)), (3, 4)),
    "fliplr": (lambda t, x: t.fliplr(x), (2, 3)),
    "flipud": (lambda x: x.flipud(), (3, 2)),
    "rot90": (lambda t, x: t.rot90(x), (2, 3)),
    "rot90_k": (lambda t, x: t.rot90(x, -1, [2, 0]), (2, 3, 4)),
    "rot90_2": (lambda x: x.rot90(2), (2, 3)),
    "repeat_interleave": (lambda x: x.repeat_interleave(2), (2, 3)),
    "repeat_interleave_dim": (lambda t, x: t.repeat_interleave(x, 3, dim=1), (2, 3)),
    "unfold": (lambda x: x.unfold(1, 2, 1), (2, 5)),
    "unfold_step": (lambda x: x.unfold(0, 2, 3), (7, 2)),
    "meshgrid": (lambda t, x: t.meshgrid(x[0], x[1, :2], indexing="ij"), (2, 3)),
    "meshgrid_xy": (lambda t, x: t.meshgrid(x[0], x[1, :2], x[0, 1], indexing="xy"), (2, 3)),
}


@pytest.mark.parametrize("op", SHAPES)
def test_shape_ops(op):
    fn, shape = SHAPES[op]
    compare(fn, shape)


@pytest.mark.parametrize("dtype", ["int32", "bool", "float16"])
@pytest.mark.parametrize("op", ["tril", "diag_embed", "roll_dims", "rot90", "trace"])
def test_shape_ops_dtypes(op, dtype):
    fn, shape = SHAPES[op]
    compare(fn, Input(shape, dtype))


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda x: x.tril(), Input((3,))),
        (lambda x: x.triu(), Input((0, 3))),
        (lambda x: x.diagonal(5), Input((2, 3))),
        (lambda x: x.diagonal(0, 1, 1), Input((2, 3))),
        (lambda t, x: t.diag(x), Input(())),
        (lambda t, x: t.trace(x), Input((3,))),
        (lambda x: x.roll(1), Input(())),
        (lambda x: x.roll(3, 0), Input((0, 2))),
        (lambda x: x.roll((1, 2), (0,)), Input((2, 2))),
        (lambda t, x: t.fliplr(x), Input((3,))),
        (lambda x: x.rot90(1, [0, 0]), Input((2, 2))),
        (lambda x: x.repeat_interleave(2), Input(())),
        (lambda x: x.repeat_interleave(-1), Input((2,))),
        (lambda x: x.unfold(0, 3, 1), Input((2,))),
        (lambda x: x.unfold(0, 1, 1), Input(())),
    ],
)
def test_shape_ops_edges(fn, x):
    compare(fn, x)


def test_repeat_interleave_tensor_repeats():
    counts = Input(values=np.array([0, 2, 1]), dtype="int64", layouts=False)
    compare(lambda t, x, r: t.repeat_interleave(x, r, dim=0), Input((3, 2)), counts)
    compare(lambda t, r: t.repeat_interleave(r), counts)


# ---- products and einsum -----------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("...ij,jk", [(2, 1, 2, 3), (3, 4)]),
    ("i...,i...->...", [(2, 3), (2, 1)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("ij,ij->j", [(2, 3), (2, 3)]),
    ("Ba,aB", [(3, 2), (2, 3)]),
    ("ij,kl->", [(2, 3), (1, 2)]),
    ("ij,jk", [(2, 3), (2, 4)]),
    ("ij", [(2, 3), (3, 2)]),
    ("ijk", [(2, 3)]),
    ("ij->k", [(2, 3)]),
    ("ij->ii", [(2, 3)]),
]


@pytest.mark.parametrize("eq, shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(eq, shapes):
    compare(lambda t, *xs: t.einsum(eq, *xs), *shapes)


# PyTorch's types: a label summed within one operand promotes an integer to int64 (a sum), a
# product over no shared label is a broadcast multiply (promoting, bool too), a contraction a
# matmul (one type only: int64 against int32 raises)
EINSUM_TYPES = [
    ("...ik,...j->ij", [Input((1, 2, 3), "int32"), Input((3,), "int32")]),
    ("ij,ij->ij", [Input((2, 2), "bool"), Input((2, 2), "bool")]),
    ("i,j->ij", [Input((2,), "int16"), Input((3,), "int16")]),
    ("ii", [Input((3, 3), "int16")]),
    ("ijk,j->i", [Input((2, 3, 2), "int32"), Input((3,), "int32")]),
    ("i,j->ij", [Input((2,), "int8"), Input((3,), "float32")]),
    ("ij,jk->ik", [Input((2, 2), "int32"), Input((2, 2), "int64")]),
]


@pytest.mark.parametrize("eq, inputs", EINSUM_TYPES, ids=[e for e, _ in EINSUM_TYPES])
def test_einsum_result_types(eq, inputs):
    compare(lambda t, *xs: t.einsum(eq, *xs), *inputs)


PRODUCTS = {
    "mv": (lambda t, a, v: t.mv(a, v), [(2, 3), (3,)]),
    "mv_bad": (lambda t, a, v: t.mv(a, v), [(2, 3), (2,)]),
    "outer": (lambda t, a, b: t.outer(a, b), [(2,), (3,)]),
    "ger": (lambda a, b: a.ger(b), [(2,), (3,)]),
    "vdot": (lambda t, a, b: t.vdot(a, b), [(3,), (3,)]),
    "addmm": (lambda t, c, a, b: t.addmm(c, a, b, beta=0.5, alpha=2), [(3,), (2, 4), (4, 3)]),
    "addmv": (lambda t, c, a, b: t.addmv(c, a, b), [(2,), (2, 3), (3,)]),
    "baddbmm": (lambda t, c, a, b: t.baddbmm(c, a, b, beta=0), [(2, 1, 3), (2, 2, 4), (2, 4, 3)]),
    "addbmm": (lambda t, c, a, b: t.addbmm(c, a, b, alpha=3), [(2, 3), (2, 2, 4), (2, 4, 3)]),
    "kron": (lambda t, a, b: t.kron(a, b), [(2, 3), (2,)]),
    "cross": (lambda t, a, b: t.cross(a, b, dim=0), [(3, 2), (3, 1)]),
    "cross_bad": (lambda t, a, b: t.cross(a, b, dim=1), [(3, 2), (3, 2)]),
    "tensordot": (lambda t, a, b: t.tensordot(a, b), [(2, 3, 4), (3, 4, 2)]),
    "tensordot_lists": (
        lambda t, a, b: t.tensordot(a, b, ([0, 2], [2, 0])),
        [(3, 2, 4), (4, 2, 3)],
    ),
    "tensordot_bad": (lambda t, a, b: t.tensordot(a, b, 1), [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("op", PRODUCTS)
def test_products(op):
    fn, shapes = PRODUCTS[op]
    # torch's kron views a non-contiguous input and fails (a RuntimeError clgrad does not copy)
    compare(fn, *shapes, layouts=("contiguous",) if op == "kron" else None)


@pytest.mark.parametrize("op", ["outer", "kron", "mv", "addbmm", "baddbmm", "addmm"])
def test_products_int(op):
    fn, shapes = PRODUCTS[op]
    compare(fn, *[Input(s, "int32") for s in shapes], layouts=("contiguous",))


# ---- scatter and index families ----------------------------------------------------------------
def _ix(values):
    return Input(values=np.array(values), dtype="int64", layouts=False)


IDX2 = _ix([[0, 2, 1], [2, 0, 0]])  # a (2, 3) index into dim 0 of a (3, 4) tensor
UNIQ = _ix([[0, 2, 1], [1, 0, 2]])  # no repeats along dim 0: scatter's result is defined
IDX1 = _ix([2, 0, 2])
SCATTERS = {
    "scatter": (lambda x, i, s: x.scatter(0, i, s), [(3, 4), UNIQ, (2, 3)]),
    "scatter_value": (lambda t, x, i: t.scatter(x, 1, i, 2.5), [(2, 4), UNIQ]),
    "scatter_add_reduce": (  # torch has no derivative for scatter(reduce=)
        lambda x, i, s: x.scatter(0, i, s, reduce="add"),
        [Input((3, 4), grad=False), IDX2, Input((2, 3), grad=False)],
    ),
    "scatter_": (lambda x, i, s: x.clone().scatter_(0, i, s), [(3, 4), UNIQ, (2, 3)]),
    "scatter_add_": (lambda x, i, s: x.clone().scatter_add_(0, i, s), [(3, 4), IDX2, (2, 3)]),
    "reduce_sum": (lambda x, i, s: x.scatter_reduce(0, i, s, "sum"), [(3, 4), IDX2, (2, 3)]),
    "reduce_sum_excl": (
        lambda x, i, s: x.scatter_reduce(0, i, s, "sum", include_self=False),
        [(3, 4), IDX2, (2, 3)],
    ),
    "reduce_mean": (lambda x, i, s: x.scatter_reduce(0, i, s, "mean"), [(3, 4), IDX2, (2, 3)]),
    "reduce_mean_excl": (
        lambda x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False),
        [(3, 4), IDX2, (2, 3)],
    ),
    "reduce_amax": (lambda x, i, s: x.scatter_reduce(0, i, s, "amax"), [(3, 4), IDX2, (2, 3)]),
    "reduce_amin_excl": (
        lambda x, i, s: x.scatter_reduce(0, i, s, "amin", include_self=False),
        [(3, 4), IDX2, (2, 3)],
    ),
    "index_add": (lambda x, i, s: x.index_add(0, i, s, alpha=2), [(3, 2), IDX1, (3, 2)]),
    "index_add_dim1": (lambda t, x, i, s: t.index_add(x, 1, i, s), [(2, 3), IDX1, (2, 3)]),
    "index_add_": (lambda x, i, s: x.clone().index_add_(0, i, s), [(3, 2), IDX1, (3, 2)]),
    "index_copy": (lambda x, i, s: x.index_copy(1, i, s), [(2, 3), _ix([2, 0]), (2, 2)]),
    "index_fill": (lambda x, i: x.index_fill(1, i, -1.0), [(2, 3), _ix([2, -3])]),
    "index_put": (lambda x, i, v: x.index_put((i,), v, accumulate=True), [(3, 2), IDX1, (2,)]),
    "take": (lambda t, x, i: t.take(x, i), [(2, 3), _ix([[5, -1], [0, 0]])]),
    "take_along_dim": (lambda t, x, i: t.take_along_dim(x, i, 1), [(2, 3), _ix([[2, 0]])]),
    "take_along_flat": (  # torch views the input: a non-contiguous one fails there
        lambda t, x, i: t.take_along_dim(x, i),
        [Input((2, 3), layouts=False), _ix([5, 1])],
    ),
    "put": (lambda x, i, s: x.put(i, s), [(2, 3), _ix([4, -1]), (2,)]),
    "put_acc": (lambda x, i, s: x.clone().put_(i, s, accumulate=True), [(2, 3), IDX1, (3,)]),
    "masked_scatter": (
        lambda x, m, s: x.masked_scatter(m, s),
        [(2, 3), Input(values=np.array([True, False, True])), (2, 4)],
    ),
}


@pytest.mark.parametrize("op", SCATTERS)
def test_scatter_family(op):
    fn, inputs = SCATTERS[op]
    compare(fn, *inputs)


@pytest.mark.parametrize("dtype", ["int32", "float16"])
@pytest.mark.parametrize("op", ["scatter", "reduce_sum", "reduce_amax", "index_add", "take"])
def test_scatter_family_dtypes(op, dtype):
    fn, inputs = SCATTERS[op]
    compare(fn, *[Input(s, dtype) if isinstance(s, tuple) else s for s in inputs])


def test_scatter_reduce_prod():
    compare(
        lambda x, i, s: x.scatter_reduce(0, i, s, "prod", include_self=False),
        (3, 4),
        IDX2,
        (2, 3),
        grad=False,
    )


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (lambda x, i, s: x.scatter(0, i, s), [(3,), _ix([3]), (1,)]),
        (lambda x, i, s: x.scatter(0, i, s), [(3,), _ix([-1]), (1,)]),
        (lambda x, i, s: x.scatter(0, i, s.double()), [(3,), _ix([0]), (1,)]),
        (lambda x, i, s: x.scatter_reduce(0, i, s, "maximum"), [(3,), _ix([0]), (1,)]),
        (lambda x, i, s: x.scatter(0, i, s), [(), _ix(0), ()]),
        (lambda x, i, s: x.index_add(0, i, s), [(3,), _ix([3]), (1,)]),
        (lambda x, i, s: x.index_add(0, i, s), [(3,), _ix([-1]), (1,)]),
        (lambda x, i, s: x.index_add(0, i, s), [(3, 2), _ix([0]), (1, 3)]),
        (lambda x, i, s: x.index_copy(0, i, s), [(3,), _ix([5]), (1,)]),
        (lambda x, i: x.index_fill(0, i, 1.0), [(3,), _ix([3])]),
        (lambda t, x, i: t.take(x, i), [(2,), _ix([2])]),
        (
            lambda t, x, i: t.take(x, i),
            [
                (0,),
                _ix(
                    [],
                ),
            ],
        ),
        (lambda t, x, i: t.take_along_dim(x, i, 0), [(3,), _ix([-1])]),
        (lambda x, i, s: x.put(i, s), [(3,), _ix([3]), (1,)]),
        (lambda x, i, s: x.put(i, s), [(3,), _ix([0, 1]), (1,)]),
        (lambda x, m, s: x.masked_scatter(m, s), [(3,), Input(values=np.array([True] * 3)), (2,)]),
    ],
)
def test_scatter_family_edges(fn, inputs):
    compare(fn, *inputs)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x[(0, 1)],
        lambda t, x: x[(t.tensor([0, 1]), t.tensor([1, 0]))],
        lambda x: x[None, ..., 0],
        lambda x: x[(Ellipsis, None)],
    ],
)
def test_tuple_keys(fn):
    compare(fn, (2, 3))
