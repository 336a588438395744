"""Every template is rendered and built, for every dtype it supports, on every OpenCL device."""

import pytest

import clgrad
from clgrad.backend.opencl.render import templates
from clgrad.ops.nn_ops import Col2Im, Im2Col

FLOATS = ["float32", "float64", "float16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _exercise(device, name):
    """Runs the ops whose kernels cover each template for one dtype."""
    dt = getattr(clgrad, name)
    x = clgrad.ones(4, 3, dtype=dt, device=device)
    (x + x).tolist()  # elementwise, flat
    (x.T + x[:, 0]).tolist()  # elementwise, strided
    x.sum(0).tolist()  # reduce
    x.amax().item()
    x.argmax(1).tolist()
    x.cumsum(1).tolist()  # scan
    x.cummax(1).indices.tolist()  # scan: a line per work-item
    x.gather(1, clgrad.tensor([[0], [2], [1], [0]], device=device)).tolist()  # gather
    x[clgrad.tensor([0, 2], device=device)].tolist()  # index: take
    clgrad.zeros(3, dtype=dt, device=device).scatter_add(
        0, clgrad.tensor([0, 0, 2], device=device), clgrad.ones(3, dtype=dt, device=device)
    ).tolist()  # index: put_add
    x[clgrad.tensor([1], device=device)] = clgrad.zeros(1, 3, dtype=dt, device=device)  # put
    (x @ x.T).tolist()  # matmul
    x.sort(1).values.tolist()  # sort
    img = clgrad.ones(1, 1, 3, 3, dtype=dt, device=device)
    F = clgrad.nn.functional
    # conv: im2col and col2im (through their Functions: PyTorch's unfold and fold refuse
    # integer dtypes, as its CPU kernels have none, but the templates take every dtype)
    cols = Im2Col.apply(img, (2, 2), (2, 2), (1, 1), (1, 1), (0, 0))
    assert Col2Im.apply(cols, (3, 3), (1, 1), (1, 1), (0, 0))[0, 0, 1].tolist() == [2, 4, 2]
    assert F.max_pool2d(img, 2, padding=1).tolist() == [[[[1, 1], [1, 1]]]]  # conv: windows
    if dt.is_floating_point:
        clgrad.rand(5, dtype=dt, device=device).tolist()  # random
        clgrad.randn(5, dtype=dt, device=device).tolist()
        x.softmax(1).tolist()  # softmax: a work-item per row
        clgrad.cdist(x, x, p=1).tolist()  # distance
        clgrad.ones(2, 600, dtype=dt, device=device).log_softmax(1).tolist()  # per group
        big = clgrad.ones(64, 64, dtype=dt, device=device)
        (big @ big).sum().item()  # the fast matmul path
        w = clgrad.nn.Parameter(clgrad.ones(4, 3, dtype=dt, device=device))
        w.grad = clgrad.ones(4, 3, dtype=dt, device=device)
        clgrad.optim.Adam([w], fused=True).step()  # optim (16-bit: only when asked for)
        w.tolist()
        logits = clgrad.zeros(2, 3, dtype=dt, device=device, requires_grad=True)
        F.cross_entropy(logits, clgrad.tensor([0, 2], device=device)).backward()  # nll
        assert F.nll_loss(logits, clgrad.tensor([1, 1], device=device), reduction="none").tolist()
        F.layer_norm(logits, (3,)).sum().backward()  # norm


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
def test_every_template_builds_for_every_dtype(cl_device, dtype):
    dev = clgrad.device(cl_device)
    if not dev.supports(getattr(clgrad, dtype)):
        pytest.skip(f"{cl_device} has no {dtype}")
    if dtype == "bool":
        b = clgrad.tensor([[True, False]], device=cl_device)
        assert (b & b).tolist() == [[True, False]] and b.any().item() and not b.all().item()
        assert b.T[clgrad.tensor([1], device=cl_device)].tolist() == [[False]]
        return
    _exercise(cl_device, dtype)
    ctype = getattr(clgrad, dtype).ctype
    # a program per template whose parameters name this dtype's C type
    built = {key[0] for key in dev.runtime.programs if f"'{ctype}'" in str(key[1])}
    # (fused kernels are built outside the program cache: tests/test_fusion.py covers them)
    expected = set(templates()) - {"fused.cl.mako"}
    if dtype in INTS:
        expected -= {"random.cl.mako", "optim.cl.mako", "softmax.cl.mako", "nll.cl.mako"}
        expected -= {"norm.cl.mako", "distance.cl.mako"}
    assert expected <= built, f"not built for {dtype}: {expected - built}"
