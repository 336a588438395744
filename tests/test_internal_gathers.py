"""Gathers at positions clgrad computes itself (a reflect/replicate/circular pad, nearest
interpolation, adaptive pooling, the distributions' triangular packing) run without reading the
device back: ``index_select``'s range check waits for the smallest and largest index, which
these positions cannot fail. Their results and gradients stay PyTorch's."""

import numpy as np
import pytest
import torch
from conftest import assert_close

import clgrad
from clgrad.backend.opencl import runtime as opencl_runtime

CASES = {
    "pad reflect": lambda F, x: F.pad(x, (2, 3, 1, 2), mode="reflect"),
    "pad replicate": lambda F, x: F.pad(x, (2, 3, 1, 0), mode="replicate"),
    "pad circular": lambda F, x: F.pad(x, (2, 3, 1, 2), mode="circular"),
    "interpolate nearest": lambda F, x: F.interpolate(x, size=(11, 4), mode="nearest"),
    "adaptive avg, uneven windows": lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)),
    "adaptive avg, even widths": lambda F, x: F.adaptive_avg_pool2d(x, (5, 3)),
    "adaptive avg 1d": lambda F, x: F.adaptive_avg_pool1d(x[0], 4),
    "adaptive avg 3d": lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 4)),
    "adaptive max": lambda F, x: F.adaptive_max_pool2d(x, (3, 4)),
}


def _input(lib, device=None):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype(np.float32)
    x[0, 1, 2, 3] = np.inf  # stays in its own windows: no NaN spreads to the others
    kwargs = {"device": device} if device else {}
    return lib.tensor(x, requires_grad=True, **kwargs)


@pytest.mark.parametrize("case", CASES)
def test_results_and_gradients_are_torchs(device, case):
    fn = CASES[case]
    x, tx = _input(clgrad, device), _input(torch)
    y, ty = fn(clgrad.nn.functional, x), fn(torch.nn.functional, tx)
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(clgrad.tensor(g, device=device))
    ty.backward(torch.tensor(g))
    assert_close(y, ty.detach())
    assert_close(x.grad, tx.grad)


@pytest.mark.parametrize("case", CASES)
def test_no_read_back_of_the_device(cl_device, case, monkeypatch):
    x = _input(clgrad, cl_device).detach()
    CASES[case](clgrad.nn.functional, x)  # kernels built, inputs written
    waits = []
    real = opencl_runtime.Runtime.host_wait
    monkeypatch.setattr(
        opencl_runtime.Runtime, "host_wait", lambda rt, wait: waits.append(1) or real(rt, wait)
    )
    y = CASES[case](clgrad.nn.functional, x)
    assert not waits
    assert y.shape == CASES[case](torch.nn.functional, _input(torch).detach()).shape


def test_triangular_packing_waits_for_nothing(cl_device, monkeypatch):
    from clgrad.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

    m = clgrad.arange(16.0, device=cl_device).reshape(4, 4)
    vec_to_tril_matrix(tril_matrix_to_vec(m))
    waits = []
    real = opencl_runtime.Runtime.host_wait
    monkeypatch.setattr(
        opencl_runtime.Runtime, "host_wait", lambda rt, wait: waits.append(1) or real(rt, wait)
    )
    packed = tril_matrix_to_vec(m, -1)
    back = vec_to_tril_matrix(packed, -1)
    assert not waits
    assert back.tolist() == torch.arange(16.0).reshape(4, 4).tril(-1).tolist()
