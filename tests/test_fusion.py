"""Elementwise fusion (clgrad/backend/opencl/fusion.py): deferred launches run as fused kernels
with eager semantics.

Every test runs with fusion forced on (each chain fused at its first sighting) and compares
with the same computation with fusion off on the same device (bit for bit), with the NumPy host
device and with torch where semantics are at stake: errors at the call that caused them,
in-place writes, views and version counters across deferred work, autograd through fused
chains.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
from conftest import CL_DEVICES
from torch_helper import TOLERANCE, Input, mask

import clgrad
from clgrad.backend.opencl.fusion import KINDS
from clgrad.ops.registry import ELEMENTWISE

pytestmark = pytest.mark.skipif(not CL_DEVICES, reason="no OpenCL device")


def _runtime(device):
    return clgrad.device(device).runtime


@contextlib.contextmanager
def fusion(device, on=True):
    """Fusion on (every group of two or more launches fused at its first sighting, built in
    this thread) or off on ``device``."""
    dev = clgrad.device(device)
    rt, backend = dev.runtime, dev.backend
    if rt.fuser is None:
        pytest.skip("CLGRAD_FUSION=0: fusion is off in this process")
    rt.flush()
    fuser = rt.fuser
    saved = backend.fuse, fuser.fuse_after, fuser.wait, fuser.min_launches
    backend.fuse, fuser.fuse_after, fuser.wait, fuser.min_launches = on, 1, True, 2
    try:
        yield fuser
    finally:
        rt.flush()
        backend.fuse, fuser.fuse_after, fuser.wait, fuser.min_launches = saved


def _same(a, b):
    a, b = a.cpu().numpy(), b.cpu().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _operands(op, dt, rng):
    lo, hi = op.domain if op.domain is not None else (-3, 3)
    shapes = [(3, 4), (4,), (3, 1)][: op.arity]
    arrays = []
    for i, shape in enumerate(shapes):
        if i == 0 and op.mask_first:
            arrays.append(mask(shape).sample(rng))
        else:
            nonzero = op.name in ("div", "floor_divide", "remainder", "true_divide") and i == 1
            arrays.append(Input(shape, dt.name, lo, hi, nonzero=nonzero).sample(rng))
    return arrays


def _chain(op, xs):
    """A copy of the first operand, the op, a copy of its result: three launches in one group,
    the middle values held in registers."""
    first = xs[0].clone()
    return op.public(first, *xs[1:]).clone()


# A fused program costs ~0.2 s to build on PoCL, whatever it holds: the chains of one dtype run
# back to back (all of shape (3, 4)) and fuse into one group, so a dtype builds one program (a
# few where the group fills a kernel's arguments). By default every op runs in its first float
# dtype (else its first dtype) and a sample of ops, one per kind of kernel expression, in every
# dtype they take; CLGRAD_TEST_ALL_PATHS=1 runs every op in every dtype.
SAMPLE_OPS = {"add", "mul", "div", "where", "maximum", "eq", "bitwise_and", "exp", "abs", "pow"}
ALL_PATHS = bool(os.environ.get("CLGRAD_TEST_ALL_PATHS"))


def _dtypes_to_test(name, op):
    # (not bfloat16, which NumPy's inputs cannot hold: it never fuses, as half does not, and
    # tests/test_bfloat16.py compares its ops with torch's)
    if ALL_PATHS or name in SAMPLE_OPS:
        return [dt for dt in op.dtypes if dt is not clgrad.bfloat16]
    floats = [dt for dt in op.dtypes if dt.is_floating_point and dt.name != "float16"]
    return floats[:1] or op.dtypes[:1]


OPS_OF_DTYPE: dict[str, list[str]] = {}
for _name, _op in sorted(ELEMENTWISE.items()):
    for _dt in _dtypes_to_test(_name, _op):
        OPS_OF_DTYPE.setdefault(_dt.name, []).append(_name)


@pytest.mark.parametrize("dtype", sorted(OPS_OF_DTYPE))
def test_fused_chains_of_every_op_and_dtype(cl_device, dtype):
    """Each op between two copies, every op of the dtype in one flush: the same bits fused as
    unfused, and NumPy's values; an op that refuses its inputs unfused refuses them fused."""
    dt = getattr(clgrad, dtype)
    if dtype == "float64" and not clgrad.device(cl_device).supports(clgrad.float64):
        pytest.skip(f"{cl_device} does not run float64")
    inputs, unfused = {}, {}
    for name in OPS_OF_DTYPE[dtype]:
        op = ELEMENTWISE[name]
        arrays = _operands(op, dt, np.random.default_rng(0))
        with fusion(cl_device, on=False):
            try:
                unfused[name] = _chain(op, [clgrad.tensor(a, device=cl_device) for a in arrays])
                unfused[name] = unfused[name].cpu()
            except Exception as e:  # inputs the op refuses (a bool negated, an integer 0 divisor)
                with fusion(cl_device), pytest.raises(type(e)):
                    _chain(op, [clgrad.tensor(a, device=cl_device) for a in arrays])
                continue
        inputs[name] = arrays
    # every input on the device first: a copy from the host would flush between the chains
    tensors = {n: [clgrad.tensor(a, device=cl_device) for a in xs] for n, xs in inputs.items()}
    with fusion(cl_device) as fuser:
        before = fuser.launched
        fused = {name: _chain(ELEMENTWISE[name], xs) for name, xs in tensors.items()}
        _runtime(cl_device).flush()
        if dtype != "float16" and fused:  # half values are not kept in registers: not fused
            assert fuser.launched > before
    for name, arrays in inputs.items():
        a, b = fused[name].cpu().numpy(), unfused[name].numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
        host = _chain(ELEMENTWISE[name], [clgrad.tensor(a) for a in arrays])
        rtol, atol = TOLERANCE.get(fused[name].dtype.name, (0, 0))
        np.testing.assert_allclose(
            a.astype(np.float64),
            host.numpy().astype(np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=name,
        )


def test_chain_stores_only_what_is_read(cl_device):
    """exp(2x + 1): one kernel; the intermediates' storages die before the flush, so they are
    never written (the kernel's structure has one store)."""
    x = clgrad.linspace(-2, 2, 1000, device=cl_device)
    with fusion(cl_device) as fuser:
        before = fuser.launched
        y = (2 * x + 1).exp()
        _runtime(cl_device).flush()
        assert fuser.launched == before + 1
        # key: (layout, maxd, ops, sources, the view each op stores into or -1, view dtypes)
        names = {k: [KINDS[n][0].name for n in k[2]] for k in fuser.kernels}
        key = [k for k, ops in names.items() if ops == ["mul", "add", "exp"]][-1]
        assert [store >= 0 for store in key[4]] == [False, False, True]
    np.testing.assert_allclose(y.cpu().numpy(), np.exp(2 * x.cpu().numpy() + 1), rtol=1e-6)


def test_repeated_flushes_replay_their_plan_with_new_arguments(cl_device):
    """A flush seen before is run from its kept plan (``Fuser.plans``), with this flush's
    buffers, offsets and Python numbers: a new tensor each time, another scale, another
    slice of one storage, a chain whose intermediate is kept alive; each equals the unfused
    result bit for bit."""
    rt = _runtime(cl_device)
    base = np.linspace(-1, 1, 1001).astype(np.float32)
    cases = [(scale, start, keep) for keep in (False, True) for start in (0, 1) for scale in (2, 3)]

    def run(scale, start, keep):
        x = clgrad.tensor(base, device=cl_device)[start : start + 1000]
        t = x * scale + 1
        y = (t * x).exp()
        rt.flush()
        return y, (t if keep else None)

    with fusion(cl_device) as fuser:
        got = []
        for case in cases * 2:  # the second round replays every plan the first one made
            plans = len(fuser.plans)
            got.append(run(*case))
        assert len(fuser.plans) == plans  # the last flush was a replay
        assert fuser.plans
    with fusion(cl_device, on=False):
        want = [run(*case) for case in cases * 2]
    for (y, t), (wy, wt) in zip(got, want):
        _same(y, wy)
        if t is not None:
            _same(t, wt)


def test_a_loop_over_slices_keeps_one_plan(cl_device):
    """An RNN-style loop over the slices of one tensor flushes the same launches through views
    that start elsewhere each step: the plans decide by which views are the same, not by their
    offsets, so one kept plan serves every step (700 steps would otherwise make 700 plans and
    overflow the cache, planning every flush anew); two slices of one buffer in one flush still
    count as two views. Every step equals the unfused result bit for bit."""
    rt = _runtime(cl_device)
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((40, 3, 50)).astype(np.float32)

    def run():
        inputs = clgrad.tensor(xs, device=cl_device)
        h = clgrad.zeros(3, 50, device=cl_device)
        out = []
        for t, x in enumerate(inputs):
            h = (x * 0.5 + h * inputs[t // 2]).tanh()  # a second slice of the same storage
            rt.flush()
            out.append(h)
        return out

    with fusion(cl_device) as fuser:
        before = len(fuser.plans)
        run()  # plans made (and the fused kernels built: the fixture waits for builds)
        plans = len(fuser.plans)
        assert plans - before <= 4
        got = run()
        assert len(fuser.plans) == plans
    with fusion(cl_device, on=False):
        want = run()
    for y, wy in zip(got, want):
        _same(y, wy)


def test_broadcast_scalars_casts_and_strides(cl_device):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 6)).astype(np.float32)
    b = rng.standard_normal((6,)).astype(np.float32)
    c = rng.integers(-3, 3, (5, 1)).astype(np.int32)

    def run(lib, device=None):
        ta = lib.tensor(a, device=device).t()  # strided
        tb = lib.tensor(b, device=device)
        tc = lib.tensor(c, device=device)
        y = (ta.t() * 2.5 + tb) / (tc.abs() + 1)  # int -> float promotion inside the chain
        z = (y > 0.1).to(lib.int64) * 3 + tc  # bool -> int64
        return y.sigmoid().tanh(), z

    with fusion(cl_device):
        got = run(clgrad, cl_device)
    want = run(torch)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 70), (2, 3, 300), (4, 1, 257)])
def test_broadcast_rows_kernel(cl_device, shape):
    """Long inner rows with broadcast and strided operands run as a 2-D launch (the rows
    layout): every element, the partial last work-group, the outer dims' arithmetic."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(shape[-1:]).astype(np.float32)
    col = rng.standard_normal(shape[:-1] + (1,)).astype(np.float32)
    t = rng.standard_normal(shape[::-1]).astype(np.float32)

    def run(lib, device=None):
        tx, tb, tc = (lib.tensor(v, device=device) for v in (x, bias, col))
        tt = lib.tensor(t, device=device).permute(*range(len(shape) - 1, -1, -1))  # strided
        return (((tx + tb).relu() * tc - tt) * 0.5 + 1,)

    with fusion(cl_device, on=False):
        unfused = run(clgrad, cl_device)
    with fusion(cl_device) as fuser:
        before = fuser.launched
        got = run(clgrad, cl_device)
        _runtime(cl_device).flush()
        assert fuser.launched == before + 1
        # its code walks the inner dim by 1 (x, bias, out), 0 (col) and the argument (tt)
        assert any(k[0] == "rows" and set(k[-1]) == {0, 1, None} for k in fuser.kernels)
    _same(got[0], unfused[0])
    np.testing.assert_allclose(got[0].cpu().numpy(), run(torch)[0].numpy(), rtol=1e-6, atol=1e-6)


def test_errors_raise_at_the_call(cl_device):
    with fusion(cl_device):
        x = clgrad.ones(3, 4, device=cl_device)
        y = x * 2 + 1  # deferred
        with pytest.raises(RuntimeError, match="must match the size"):
            y + clgrad.ones(5, device=cl_device)
        with pytest.raises(RuntimeError, match="can't be cast"):
            clgrad.ones(3, dtype=clgrad.int64, device=cl_device).add_(0.5)
        with pytest.raises(TypeError):
            y + "a"
        # the deferred work is intact
        np.testing.assert_array_equal(y.cpu().numpy(), np.full((3, 4), 3, np.float32))


def test_inplace_writes_and_views_across_deferred_work(cl_device):
    def run(lib, device=None):
        x = lib.arange(12.0, device=device).reshape(3, 4)
        y = x * 2  # reads x before the in-place writes below
        x.add_(1)
        v = x[:, ::2]  # a strided view of x
        v.mul_(10)
        w = x.t()  # a transposed view read after the writes
        z = w + y.t()
        x[0] = -1.0  # indexing assignment into a storage deferred work reads
        return y, x, z, v.clone()

    with fusion(cl_device):
        got = run(clgrad, cl_device)
    want = run(torch)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


def test_overlapping_views_are_not_fused_into_a_race(cl_device):
    """A launch reading a buffer through another view than the group writes it: the group
    breaks there (a work-item would read what another one writes)."""

    def run(lib, device=None):
        x = lib.arange(10.0, device=device)
        x.mul_(2)
        x[1:] += x[:-1].clone()  # reads the shifted view
        y = x[:-1] + x[1:]  # two shifted views of one deferred result
        x.add_(y.sum())
        return x, y

    with fusion(cl_device):
        got = run(clgrad, cl_device)
    want = run(torch)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


def test_version_counters_and_saved_tensors(cl_device):
    with fusion(cl_device):
        a = clgrad.ones(4, device=cl_device, requires_grad=True)
        b = a * 3
        c = b.exp()  # saves its result
        c.mul_(2)  # bumps the version of what exp saved
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()


def test_autograd_through_fused_chains(cl_device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((5,)).astype(np.float32)

    def run(lib, device=None):
        ta = lib.tensor(a, device=device, requires_grad=True)
        tb = lib.tensor(b, device=device, requires_grad=True)
        h = (ta * tb + 1).tanh()
        h.retain_grad()
        seen = []
        h.register_hook(lambda g: seen.append(g * 1))
        loss = ((h - 0.5) ** 2).sum()
        (ga,) = lib.autograd.grad(loss, ta, create_graph=True)
        (gga,) = lib.autograd.grad(ga.sum(), tb, retain_graph=True)
        loss.backward()
        return loss, ta.grad, tb.grad, h.grad, seen[0], gga

    with fusion(cl_device):
        got = run(clgrad, cl_device)
    want = run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(
            g.detach().cpu().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-5
        )


def test_many_deferred_launches_flush_on_their_own(cl_device):
    with fusion(cl_device):
        x = clgrad.zeros(7, device=cl_device)
        for _ in range(600):
            x.add_(1)
        assert len(_runtime(cl_device).deferred) < 600
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(7, 600, np.float32))


def test_many_reductions_of_one_deferred_launch(cl_device):
    """Sums of a tensor whose fill is still deferred join its group until the list is full;
    a flush then may hold back a group of reductions alone, which the next launch flushes by
    itself (it used to take the one-launch path, which knew only elementwise launches)."""
    with fusion(cl_device):
        a = clgrad.ones(16, device=cl_device)
        sums = [a.sum() for _ in range(600)]
        clgrad.synchronize()
    assert [s.item() for s in sums] == [16.0] * 600


def test_a_full_list_is_cut_where_the_loop_cuts_itself(cl_device):
    """An eager loop of elementwise ops and reductions alone (the polynomial fit of PyTorch's
    tutorial) fills the deferred list again and again: each flush leaves its last group
    deferred, so the loop's groups, and the kernels built for them, are the same whatever
    step the list fills in (no new one after the first fillings); the values are fusion
    off's."""
    from clgrad.backend.opencl.runtime import MAX_DEFERRED

    def fit(on):
        x = clgrad.linspace(-3.0, 3.0, 50, device=cl_device)
        y = clgrad.sin(x)
        ws = [clgrad.tensor(v, device=cl_device, requires_grad=True) for v in (0.1, 0.2, 0.3, 0.4)]
        structures = []
        with fusion(cl_device, on=on) as fuser:
            for _ in range(2):
                for _ in range(3 * MAX_DEFERRED // 20):  # about 20 launches a step
                    a, b, c, d = ws
                    loss = (a + b * x + c * x**2 + d * x**3 - y).pow(2).sum()
                    loss.backward()
                    with clgrad.no_grad():
                        for w in ws:
                            w -= 1e-4 * w.grad
                            w.grad = None
                structures.append(set(fuser.kernels))
        return [w.detach().cpu().numpy() for w in ws], structures

    fused, (first, second) = fit(True)
    plain, _ = fit(False)
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert second == first, f"{len(second - first)} new structures: the cut moves"


def _release_during_flush(device):
    """A collection inside ``flush`` (the deferred list already taken) that empties the
    allocator's cache must not release a buffer the launches being queued still name: it waits
    in ``late_release`` until they are queued. (Released at once, the launch is queued with a
    freed buffer: PoCL crashed, the worker crash of a CI run.)"""
    rt = _runtime(device)
    allocator = clgrad.device(device).allocator
    with fusion(device) as fuser:
        fuser.min_launches = 99  # the group's launches one by one: each names its buffers
        a = clgrad.arange(1000.0, device=device)
        b = a * 2
        c = b + 1
        del b  # its buffer goes back to the cache while its launch waits in the list
        waited = []
        run = fuser.run

        def run_after_a_collection(entries, hold_last=False):
            allocator.empty_cache()  # what a garbage collection's releases can end in
            waited.append(len(rt.late_release))
            return run(entries, hold_last)

        fuser.run = run_after_a_collection
        try:
            rt.flush()
        finally:
            del fuser.run
        assert waited and waited[0] > 0
        assert not rt.late_release
        expected = np.arange(1000, dtype=np.float32) * 2 + 1
        np.testing.assert_array_equal(c.cpu().numpy(), expected)


def test_buffers_let_go_during_a_flush_outlive_its_launches(cl_device):
    if _runtime(cl_device).fuser is None:
        pytest.skip("CLGRAD_FUSION=0: fusion is off in this process")
    # in a subprocess: the failure this guards against is a crash
    code = (
        f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import test_fusion; "
        f"test_fusion._release_during_flush({cl_device!r})"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"


def test_cross_device_copy_sees_deferred_work(cl_device):
    with fusion(cl_device):
        x = clgrad.ones(5, device=cl_device) * 4 + 1
        np.testing.assert_array_equal(x.to("cpu").numpy(), np.full(5, 5, np.float32))
        y = clgrad.ones(5) * 4
        z = y.to(cl_device) - 1
        np.testing.assert_array_equal(z.cpu().numpy(), np.full(5, 3, np.float32))


def test_training_loop_equal_with_fusion_on_and_off(cl_device):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((64, 8)).astype(np.float32)
    target = rng.integers(0, 3, 64)

    def train(on):
        clgrad.manual_seed(0)
        model = clgrad.nn.Sequential(
            clgrad.nn.Linear(8, 16), clgrad.nn.GELU(), clgrad.nn.Linear(16, 3)
        ).to(cl_device)
        opt = clgrad.optim.Adam(model.parameters(), lr=1e-2)
        x = clgrad.tensor(data, device=cl_device)
        t = clgrad.tensor(target, device=cl_device)
        with fusion(cl_device, on=on):
            for _ in range(5):
                opt.zero_grad()
                loss = clgrad.nn.functional.cross_entropy(model(x), t)
                loss.backward()
                opt.step()
            return [p.detach().cpu() for p in model.parameters()]

    # (a fused reduction sums in another order: equal to float32 rounding, not bit for bit)
    for a, b in zip(train(True), train(False)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)


def test_background_build_runs_unfused_until_ready(cl_device):
    """A chain's kernel builds in a background thread; the chain runs one op at a time until
    it is ready, then fused, with the same values throughout."""
    rt = _runtime(cl_device)
    with fusion(cl_device) as fuser:
        fuser.wait = False
        x = clgrad.arange(50.0, device=cl_device)
        before = fuser.launched
        results = []
        for step in range(400):
            results.append((x * 3 - step).abs().sqrt().cpu())
            if fuser.launched > before:
                break
            for future in list(fuser.building.values()):
                future.result(timeout=120)
        assert fuser.launched > before, "the background build never finished"
        rt.flush()
    for step, r in enumerate(results):
        expected = np.sqrt(np.abs(np.arange(50.0, dtype=np.float32) * 3 - step))
        np.testing.assert_allclose(r.numpy(), expected, rtol=1e-6)


REDUCTIONS = ["sum", "mean", "amax", "amin", "prod", "all", "any", "nansum"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_chain_feeding_a_full_reduction_is_one_kernel(cl_device, name, dtype):
    """``((y_pred - y) ** 2).sum()``: the reduction runs inside the chain's kernel."""
    if dtype == "float64" and not clgrad.device(cl_device).supports(clgrad.float64):
        pytest.skip(f"{cl_device} does not run float64")
    if dtype == "int32" and name == "mean":
        pytest.skip("mean of integers is refused (tests/test_registry_ops.py checks it)")
    rng = np.random.default_rng(4)
    a = rng.uniform(0.5, 1.5, (37, 29)).astype(dtype)
    b = rng.uniform(0.5, 1.5, (29,)).astype(dtype)

    def run(lib, device=None):
        ta, tb = lib.tensor(a, device=device), lib.tensor(b, device=device)
        chain = (ta - tb) * 2 + 1
        return getattr(lib, name)(chain)

    with fusion(cl_device) as fuser:
        before = fuser.launched
        got = run(clgrad, cl_device)
        _runtime(cl_device).flush()
        if name != "mean":  # mean divides after its sum: two kernels
            assert fuser.launched == before + 1
    want = run(torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5)


def test_reduction_of_a_kept_chain_stores_it(cl_device):
    """The chain's value is stored where it is still read after the reduction."""

    def run(lib, device=None):
        x = lib.linspace(-2, 2, 300, device=device)
        d = (x * 3 - 1).abs()
        total = d.sum()
        partial = d.amax(0)  # a reduction of the same value later
        return d * total, partial, (x + 1).sum(0)  # a reduction over a dim, not fused

    with fusion(cl_device):
        got = run(clgrad, cl_device)
    want = run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_large_reductions_are_not_fused_into_one_work_group(cl_device):
    x = clgrad.ones(1 << 17, device=cl_device)
    with fusion(cl_device) as fuser:
        before = fuser.launched
        s = ((x * 2 - 1) * 3).sum()
        assert s.item() == 3 * (1 << 17)
        assert fuser.launched == before + 1  # the chain fused, the reduction on its own


def test_several_reductions_of_one_chain_are_one_kernel(cl_device):
    """A gradient's g, g * x, g * x**2 summed to scalar weights (the polynomial fit's
    backward): every reduction of the group's values runs in the group's kernel, whichever
    launch wrote the value, and the group goes on after each."""

    def run(lib, device=None):
        x = lib.linspace(-2, 2, 500, device=device)
        g = (x * 3 - 1) * 2
        first = g.sum()
        second = (g * x).sum()
        third = (g * x * x).amax()
        again = g.sum()  # the same value, reduced again after others
        return first, second, third, again, (g + 1).prod()

    with fusion(cl_device) as fuser:
        before = fuser.launched
        got = run(clgrad, cl_device)
        _runtime(cl_device).flush()
        assert fuser.launched == before + 1
    want = run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-4)


def test_reduced_values_and_results_keep_program_order(cl_device):
    """A launch that reads a reduction's result, or writes where one is read, waits for it:
    the result exists only once the kernel's loop is over."""

    def run(lib, device=None):
        x = lib.linspace(0.5, 1.5, 200, device=device)
        y = x * 2
        total = y.sum()
        scaled = y * total  # reads the result: a new group
        y.mul_(3)  # rewrites the reduced values after the reduction
        late = y.sum()
        return total, scaled, late, y

    with fusion(cl_device):
        got = run(clgrad, cl_device)
    want = run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
    with fusion(cl_device, on=False):
        unfused = run(clgrad, cl_device)
    _same(got[3], unfused[3])  # (reductions may sum in another order)


def test_large_groups_stop_at_a_reduction(cl_device):
    """A group with a reduction runs as one work-group: past JOIN_AFTER_REDUCE_MAX elements,
    the launches after the reduction make a kernel of their own."""
    from clgrad.backend.opencl.fusion import JOIN_AFTER_REDUCE_MAX

    x = clgrad.ones(JOIN_AFTER_REDUCE_MAX + 1, device=cl_device)
    with fusion(cl_device) as fuser:
        before = fuser.launched
        a = (x * 2) - 1
        s = a.sum()
        b = (a + 1) * 3
        _runtime(cl_device).flush()
        assert fuser.launched == before + 2
    assert s.item() == JOIN_AFTER_REDUCE_MAX + 1 and b[0].item() == 6.0


def test_reduction_into_a_buffer_the_group_read_before(cl_device):
    """A reduction's result may land in a recycled buffer that an earlier launch of its group
    read (its old value): the group still runs as one kernel, the reads coming first."""
    rt = _runtime(cl_device)
    x = clgrad.linspace(0.5, 1.5, 300, device=cl_device)
    with fusion(cl_device) as fuser:
        z = clgrad.full((), 3.0, device=cl_device)
        rt.flush()
        z_buffer = z._storage.data
        before = fuser.launched
        y = x * z  # reads z's buffer
        del z  # its buffer goes back to the allocator, which hands it to the sum
        total = (y + 1).sum()
        recycled = total._storage.data is z_buffer
        rt.flush()
        assert fuser.launched == before + 1
    assert recycled  # (the allocator's reuse is what this test is about)
    np.testing.assert_allclose(total.item(), ((x * 3) + 1).sum().item(), rtol=1e-6)
    np.testing.assert_allclose(y.cpu().numpy(), (x * 3).cpu().numpy())


@pytest.mark.parametrize("rounds", [0, 4])
def test_ctrl_c_in_a_flush_leaves_no_launch_unqueued(cl_device, monkeypatch, rounds):
    """Ctrl-C while a flush queues the deferred launches (one, or several groups): every launch
    is queued, then KeyboardInterrupt is raised, so each tensor holds what the eager ops
    computed (a flush cut short would have dropped the rest)."""
    rt = clgrad.device(cl_device).runtime
    if rt.fuser is None:
        pytest.skip("fusion is off: nothing is deferred")
    assert threading.current_thread() is threading.main_thread()  # where signals arrive
    x, y = clgrad.zeros(100, device=cl_device), clgrad.zeros(7, device=cl_device)
    rt.flush()
    x.add_(1)
    for _ in range(rounds):  # two shapes in turn: a group (and a launch) each
        y.add_(2)
        x.add_(1)
    enqueue = rt.enqueue_now
    interrupts = []

    def interrupted_once(*args):
        if not interrupts:
            interrupts.append(1)
            signal.raise_signal(signal.SIGINT)
        return enqueue(*args)

    monkeypatch.setattr(rt, "enqueue_now", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        rt.flush()
    monkeypatch.undo()
    assert interrupts
    assert x.tolist() == [rounds + 1.0] * 100 and y.tolist() == [2.0 * rounds] * 7


def _random_program(rng, n):
    """A random eager program over three tensors of ``n`` elements: what a flush must keep in
    program order (elementwise chains, Python numbers, reductions kept, dropped and read back,
    in-place writes of clones and of overlapping slices, syncs, bursts of reductions), long
    enough to cross the deferred list's limit several times. Each op is (kind, arguments)."""
    ops = []
    for _ in range(400):
        i, j, k = rng.integers(3), rng.integers(3), rng.random()
        if k < 0.3:
            ops.append(("binary", i, j, rng.integers(3)))
        elif k < 0.5:
            ops.append(("reduce", i, ("sum", "amax", "mean")[rng.integers(3)]))
        elif k < 0.6:
            ops.append(("inplace", i, (0.5, 1.0, 2.0)[rng.integers(3)]))
        elif k < 0.7:
            ops.append(("drop", rng.integers(10)))
        elif k < 0.8:
            ops.append(("scalar", i, (0.5, -1.0, 3.0)[rng.integers(3)]))
        elif k < 0.85:
            ops.append(("sync",))
        elif k < 0.9:
            ops.append(("read_back", i))
        elif k < 0.99:
            ops.append(("slices", i, j))
        else:  # a list's worth of reductions of one value
            ops.append(("burst", i))
    return ops


def _run_program(lib, ops, n, device=None):
    """``ops`` (``_random_program``) on leaves that require grad; the values, the reductions
    still kept and the leaves' gradients of the sum of all of them."""
    kw = {} if device is None else {"device": device}
    leaves = [lib.full((n,), float(i + 1), requires_grad=True, **kw) for i in range(3)]
    v, kept = [leaf * 1 for leaf in leaves], []
    for kind, *a in ops:
        if kind == "binary":
            i, j, which = a
            r = (v[i] + v[j], v[i] * v[j], v[i] - v[j])[which]
            v[i] = r / (r.abs().amax() + 1)
        elif kind == "reduce":
            kept.append(getattr(v[a[0]], a[1])())
        elif kind == "inplace":
            v[a[0]] = v[a[0]].clone()
            v[a[0]].mul_(a[1]).add_(0.25)
        elif kind == "drop" and kept:
            kept.pop(a[0] % len(kept))
        elif kind == "scalar":
            v[a[0]] = v[a[0]] * a[1] + 1
        elif kind == "sync" and device is not None:
            clgrad.synchronize()
        elif kind == "read_back" and kept:
            v[a[0]] = v[a[0]] + kept[-1]
        elif kind == "slices" and n > 1:
            i, j = a
            v[i] = v[i].clone()
            v[i][: n // 2].add_(v[j][n - n // 2 :])
        elif kind == "burst":
            kept += [v[a[0]].sum() for _ in range(300)]
    total = sum(x.sum() for x in v) + sum(s * 1 for s in kept)
    total.backward()
    return [x.detach() for x in v + kept] + [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("seed", range(4))
def test_random_eager_programs_match_torch(cl_device, seed):
    """Random programs of 400 ops (deferred, fused, flushed at the list's limit and at every
    other kernel, the way an eager loop meets them), forward and gradients, against torch."""
    rng = np.random.default_rng(seed)
    n = (1, 7, 16, 300)[seed]
    ops = _random_program(rng, n)
    got = _run_program(clgrad, ops, n, cl_device)
    want = _run_program(torch, ops, n)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("n", [32768, 40000])
def test_scratch_taken_during_a_flush_spares_what_its_launches_read(cl_device, n):
    """A storage that dies while deferred launches read it gives its buffer back; a reduction
    long enough for two passes takes scratch for its partials during the flush, which must not
    be that buffer (the add after it read the partials instead of ``m``; logsumexp of 32,768
    zeros gave 16394.4)."""

    def shifted_sum(x):
        m = clgrad.ones(1, device=x.device) if isinstance(x, clgrad.Tensor) else torch.ones(1)
        return m + (x - m).exp().sum(0, keepdim=True)  # (m dies before the flush)

    a = np.linspace(-1, 1, n, dtype=np.float32)
    for fn in (shifted_sum, lambda x: x.logsumexp(0)):
        got = fn(clgrad.tensor(a, device=cl_device))
        want = fn(torch.tensor(a))
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5)
