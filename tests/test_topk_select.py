"""topk by selection (``cg_topk_rows``: one pass over each row keeping a sorted list of k)
gives exactly what the full sort gave: the same values and indices in the same order (NaN as
the largest, equal elements in index order), on every dtype, along any dim, largest or
smallest, k from 1 to the selection's limit; values and gradients as PyTorch's."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad
from clgrad.backend.opencl import sort as sort_family

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8"]
CASES = [
    ((256, 300), 1, 10, True),
    ((7, 33), 0, 5, False),
    ((3, 4, 50), 1, 4, True),
    ((5, 40), -1, 40, False),  # k = n
    ((2, 100), 1, 64, True),  # the selection's largest k
    ((6, 9), 1, 1, False),
]


def _input(dtype, shape, device, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in ("int64", "int32", "int8"):
        a = rng.integers(-4, 4, shape)  # many ties
    elif dtype == "uint8":
        a = rng.integers(0, 6, shape)
    else:
        a = np.round(rng.standard_normal(shape), 1)  # some ties
        a.reshape(-1)[::17] = np.nan
    t = torch.tensor(a).to(getattr(torch, dtype))
    host = t.float().numpy() if dtype == "bfloat16" else t.numpy()
    return clgrad.tensor(host, device=device).to(getattr(clgrad, dtype)), t


def _numpy(x):
    return x.float().cpu().numpy() if x.dtype == clgrad.bfloat16 else x.cpu().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_selection_equals_the_sort(cl_device, dtype, case, monkeypatch):
    if not supports(cl_device, getattr(clgrad, dtype)):
        pytest.skip(f"no {dtype} on this device")
    shape, dim, k, largest = case
    x, t = _input(dtype, shape, cl_device)
    rt = clgrad.device(cl_device).backend.rt
    if not sort_family.selects(rt, x.numel() // shape[dim], shape[dim], k):
        pytest.skip("this device sorts these rows")
    values, indices = x.topk(k, dim, largest)
    monkeypatch.setattr(sort_family, "selects", lambda *args: False)
    sorted_values, sorted_indices = x.topk(k, dim, largest)
    np.testing.assert_array_equal(_numpy(values), _numpy(sorted_values))
    np.testing.assert_array_equal(indices.cpu().numpy(), sorted_indices.cpu().numpy())
    # PyTorch's values; its indices may order ties otherwise: they must name equal values
    tv, _ = t.topk(k, dim, largest)
    np.testing.assert_array_equal(_numpy(values), tv.double().numpy())
    picked = t.gather(dim % t.ndim, torch.tensor(indices.cpu().numpy()))
    np.testing.assert_array_equal(picked.double().numpy(), tv.double().numpy())


def test_gradient_goes_to_the_selected_places(device):
    a = np.random.default_rng(1).standard_normal((64, 80)).astype(np.float32)
    x = clgrad.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(x.detach().cpu().numpy(), requires_grad=True)
    g = np.random.default_rng(2).standard_normal((64, 7)).astype(np.float32)
    x.topk(7, 1)[0].backward(clgrad.tensor(g, device=device))
    t.topk(7, 1)[0].backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy())


def test_rows_past_llvmpipes_loop_limit_are_sorted(cl_device, monkeypatch):
    rt = clgrad.device(cl_device).backend.rt
    monkeypatch.setattr(rt, "loop_limit", 1000)
    assert not sort_family.selects(rt, 4, 500, 3)
    x, t = _input("float32", (4, 500), cl_device)
    values, _ = x.topk(3, 1)
    np.testing.assert_array_equal(values.cpu().numpy(), t.topk(3, 1)[0].numpy())
