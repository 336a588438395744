"""The structural ops PyTorch programs reach for (shape ops, sort and selection, running ops,
scatter and index families, einsum and products) against torch on every test device: values,
dtypes, gradients and exception classes, on 0-d, empty and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest
from torch_helper import Input, compare

NAN = float("nan")
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
