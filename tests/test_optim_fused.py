"""The fused optimizer steps (one kernel per parameter, ``kernels/optim.cl.mako`` and
``HostBackend.optimizer_step``) against the per-op path (``foreach=False``) and torch.optim:
the same trajectory within float32 rounding, one launch per parameter, float16 parameters,
the per-op fallback for strided tensors, and state dicts that load into either path."""

import numpy as np
import pytest

import clgrad
from clgrad.backend.host import HostBackend

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
X = RNG.normal(size=(16, 5)).astype(np.float32)
Y = RNG.normal(size=(16, 2)).astype(np.float32)
INIT = [
    RNG.normal(size=(8, 5)).astype(np.float32) * 0.5,
    RNG.normal(size=8).astype(np.float32),
    RNG.normal(size=(2, 8)).astype(np.float32) * 0.5,
    RNG.normal(size=2).astype(np.float32),
]

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "maximize": True, "betas": (0.8, 0.99)}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "maximize": True, "weight_decay": 0.05}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
]
IDS = [f"{n}-{','.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in CASES]


def _model(lib, device=None, dtype=None, init=INIT):
    """A 5-8-2 tanh MLP's parameters (plus one that never gets a gradient) and its loss."""
    kw = {"device": device} if device else {}
    dt = {"dtype": getattr(lib, dtype)} if dtype else {}
    params = [lib.nn.Parameter(lib.tensor(a, **kw, **dt)) for a in init]
    unused = lib.nn.Parameter(lib.ones(3, **kw, **dt))
    x, y = lib.tensor(X, **kw, **dt), lib.tensor(Y, **kw, **dt)

    def loss_fn():
        h = lib.tanh(x @ params[0].T + params[1])
        return ((h @ params[2].T + params[3] - y) ** 2).mean()

    return params + [unused], loss_fn


def _steps(opt, loss_fn, n):
    for _ in range(n):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()


def _run(lib, name, kw, device=None, steps=8, dtype=None):
    params, loss_fn = _model(lib, device, dtype)
    opt = getattr(lib.optim, name)(params, **kw)
    _steps(opt, loss_fn, steps)
    return [p.detach().float().cpu().numpy() for p in params], opt


def _numpy(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else t


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_fused_matches_per_op_and_torch(device, name, kw):
    fused, opt = _run(clgrad, name, kw, device)
    per_op, ref = _run(clgrad, name, {**kw, "foreach": False}, device)
    want, theirs = _run(torch, name, kw)
    for f, p, w in zip(fused, per_op, want):
        # the same formulas in the same rounding order: equal in practice
        np.testing.assert_allclose(f, p, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(f, w, rtol=2e-5, atol=2e-6)
    # the state holds the same names and values, as torch's does
    mine, other, torch_state = opt.state_dict(), ref.state_dict(), theirs.state_dict()
    assert sorted(mine["state"]) == sorted(other["state"]) == sorted(torch_state["state"])
    for i, state in mine["state"].items():
        assert sorted(state) == sorted(other["state"][i]) == sorted(torch_state["state"][i])
        for key, value in state.items():
            if key == "step":
                assert value == other["state"][i][key] == int(torch_state["state"][i][key])
                continue
            np.testing.assert_allclose(
                _numpy(value), _numpy(other["state"][i][key]), rtol=1e-6, atol=1e-7
            )
            # (torch's gradients differ from clgrad's by rounding, and the state sums them)
            np.testing.assert_allclose(
                _numpy(value), torch_state["state"][i][key].numpy(), rtol=1e-4, atol=1e-5
            )


def _count_launches(device, monkeypatch):
    """A list that grows by one per kernel launch (cl) or backend primitive call (cpu)."""
    calls = []
    dev = clgrad.device(device)
    if dev.is_cl:
        rt = dev.runtime
        rt.flush()  # (work deferred before: not the step's)
        # launches one at a time, so the per-op path counts its ops (fusion would merge them)
        monkeypatch.setattr(dev.backend, "fuse", False)
        # every enqueue of a kernel ends in this one (launch and enqueue call it)
        original = rt.enqueue_now

        def counting(kernel, *args, **kwargs):
            calls.append(kernel.function_name)
            return original(kernel, *args, **kwargs)

        monkeypatch.setattr(rt, "enqueue_now", counting)
    else:
        for prim in ("elementwise", "optimizer_step", "reduce"):
            original = getattr(HostBackend, prim)

            def counting(self, *args, _prim=prim, _original=original, **kwargs):
                calls.append(_prim)
                return _original(self, *args, **kwargs)

            monkeypatch.setattr(HostBackend, prim, counting)
    return calls


def test_opencl_devices_group_parameters_and_the_host_does_not(cl_device):
    assert clgrad.device(cl_device).backend.optimizer_group_max == 8
    assert clgrad.device("cpu").backend.optimizer_group_max == 1


@pytest.mark.parametrize("name,kw", [CASES[2], CASES[5], CASES[12]], ids=["sgd", "adam", "rms"])
def test_one_launch_per_group_of_parameters(device, name, kw, monkeypatch):
    """The four parameters with a gradient (one dtype, one set of scalars) take one launch on
    an OpenCL device, as PyTorch's foreach path, and one launch each on the host."""
    grouped = clgrad.device(device).is_cl
    params, loss_fn = _model(clgrad, device)
    opt = getattr(clgrad.optim, name)(params, **kw)
    per_op = getattr(clgrad.optim, name)(params, **kw, foreach=False)
    _steps(opt, loss_fn, 2)  # builds the kernels, makes the state
    counts = {}
    for label, o in (("fused", opt), ("per_op", per_op)):
        o.zero_grad()
        loss_fn().backward()
        calls = _count_launches(device, monkeypatch)
        o.step()
        counts[label] = list(calls)
        monkeypatch.undo()
    with_grad = 4  # the fifth parameter has no gradient: skipped
    assert len(counts["fused"]) == (1 if grouped else with_grad), counts
    assert len(set(counts["fused"])) == 1
    assert len(counts["per_op"]) >= 3 * with_grad, counts["per_op"]


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_grouped_launches_split_where_they_must(cl_device, kind, monkeypatch):
    """Groups hold at most GROUP_MAX_TENSORS parameters of one dtype and one set of scalars,
    none over GROUP_MAX_NUMEL; every parameter ends where its own launch puts it."""
    from clgrad.optim import optimizer as O

    monkeypatch.setattr(O, "GROUP_MAX_NUMEL", 300)
    dtypes = ["float32"] * 10 + ["float64"] * 2
    if not clgrad.device(cl_device).supports(clgrad.float64):
        dtypes = dtypes[:10]
    rng = np.random.default_rng(0)
    sizes = [3, 17, 1, 257, 64, 5, 400, 2, 9, 33, 7, 4][: len(dtypes)]  # 400: over the limit
    values = [rng.standard_normal(n) for n in sizes]
    grads = [rng.standard_normal(n) for n in sizes]

    def run(lib, device, **kw):
        ps = [
            lib.nn.Parameter(lib.tensor(v, dtype=getattr(lib, d), device=device))
            for v, d in zip(values, dtypes)
        ]
        opt = getattr(lib.optim, {"sgd": "SGD", "adam": "Adam"}[kind])(
            [{"params": ps[:6]}, {"params": ps[6:], "lr": 0.05}], lr=0.1, **kw
        )
        for _ in range(2):
            for p, g in zip(ps, grads):
                p.grad = lib.tensor(g, dtype=p.dtype, device=device)
            opt.step()
        return [p.detach().cpu().numpy() for p in ps]

    extra = {"momentum": 0.9} if kind == "sgd" else {}
    calls = _count_launches(cl_device, monkeypatch)
    got = run(clgrad, cl_device, **extra)
    want = run(torch, "cpu", **extra)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # per step: group 1 (6 float32) in one launch; group 2: 4 float32 of which one is too big
    # (alone) and the other 3 together, then the float64 pair
    per_step = 1 + 2 + (1 if len(dtypes) > 10 else 0)
    updates = [c for c in calls if c.startswith("cg_optim")]  # (Adam's state starts at zero)
    assert len(updates) == 2 * per_step, calls
    # groups of 6 and 3 parameters ran kernels built for 8 and 4: only powers of two are built
    rt = clgrad.device(cl_device).runtime
    slots = {key[5] for key in rt.kernels if type(key) is tuple and key[:2] == ("optim", kind)}
    assert {4, 8} <= slots <= {1, 2, 4, 8}, slots  # (other tests of the process build too)


def test_new_lr_and_step_reuse_the_kernel(cl_device):
    params, loss_fn = _model(clgrad, cl_device)
    opt = clgrad.optim.Adam(params, lr=0.01, amsgrad=True)
    _steps(opt, loss_fn, 1)
    rt = clgrad.device(cl_device).runtime
    programs = len(rt.programs)
    for lr in (0.02, 0.005, 0.001):
        opt.param_groups[0]["lr"] = lr
        _steps(opt, loss_fn, 1)
    assert len(rt.programs) == programs


def test_step_never_reads_the_device(device, monkeypatch):
    params, loss_fn = _model(clgrad, device)
    opt = clgrad.optim.AdamW(params, lr=0.01, amsgrad=True)
    _steps(opt, loss_fn, 1)
    loss_fn().backward()
    backend = clgrad.device(device).backend
    read = backend.to_numpy

    def refuse(*args, **kwargs):
        raise AssertionError("the optimizer step read the device")

    def read_counts_only(view):
        # the step counts live on the host, as PyTorch's: reading them costs no transfer
        if any(view.buffer is st["step"]._storage.data for st in opt.state.values()):
            return read(view)
        refuse()

    monkeypatch.setattr(backend, "to_numpy", read_counts_only)
    monkeypatch.setattr(backend, "synchronize", refuse)
    opt.step()


@pytest.mark.parametrize("name,kw", [CASES[3], CASES[9], CASES[12]], ids=["sgd", "adamw", "rms"])
def test_float16_params(device, name, kw):
    if not clgrad.device(device).supports(clgrad.float16):
        pytest.skip(f"{device} has no float16")

    def run(lib, dtype, **extra):
        # gradients of order 1: squared, they stay inside half's range (Adam's v of a tiny
        # gradient underflows to 0 in a half state, on either path and in torch)
        kw_dev = {"device": device} if lib is clgrad else {}
        params = [
            lib.nn.Parameter(lib.tensor(a, dtype=getattr(lib, dtype), **kw_dev)) for a in INIT
        ]
        opt = getattr(lib.optim, name)(params, **kw, **extra)
        for _ in range(4):
            opt.zero_grad()
            sum(((p - 2) ** 2).sum() for p in params).backward()
            opt.step()
        return [p.detach().float().cpu().numpy() for p in params], opt

    fused, opt = run(clgrad, "float16")
    per_op, _ = run(clgrad, "float16", foreach=False)
    want, _ = run(torch, "float32")
    # fused computes each step in float and rounds to half once; the per-op path rounds
    # after every op: both stay within half precision of the float32 trajectory
    for f, p, w in zip(fused, per_op, want):
        np.testing.assert_allclose(f, w, rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(p, w, rtol=5e-3, atol=5e-3)
    for state in opt.state.values():
        for key, value in state.items():
            if key != "step":
                assert value.dtype == clgrad.float16, key


def test_strided_param_and_grad_take_the_per_op_path(device, monkeypatch):
    # a transposed parameter, and a contiguous one whose gradient is a transposed view
    base = clgrad.tensor(INIT[0].T.copy(), device=device)
    strided = clgrad.nn.Parameter(base.T)
    assert not strided.is_contiguous()
    plain = clgrad.nn.Parameter(clgrad.tensor(INIT[2], device=device))
    t_strided = torch.nn.Parameter(torch.tensor(INIT[0]))
    t_plain = torch.nn.Parameter(torch.tensor(INIT[2]))
    grads = [RNG.normal(size=(8, 5)).astype(np.float32), RNG.normal(size=(2, 8)).astype(np.float32)]
    opt = clgrad.optim.Adam([strided, plain], lr=0.01, weight_decay=0.1)
    ref = torch.optim.Adam([t_strided, t_plain], lr=0.01, weight_decay=0.1)
    calls = []
    original = clgrad.device(device).backend.optimizer_step
    monkeypatch.setattr(
        clgrad.device(device).backend,
        "optimizer_step",
        lambda *a: calls.append(a[0]) or original(*a),
    )
    for _ in range(3):
        strided.grad = clgrad.tensor(grads[0], device=device)
        plain.grad = clgrad.tensor(grads[1].T.copy(), device=device).T
        t_strided.grad, t_plain.grad = torch.tensor(grads[0]), torch.tensor(grads[1])
        opt.step()
        ref.step()
    assert calls == []  # neither could use the kernel
    np.testing.assert_allclose(_numpy(strided), t_strided.detach().numpy(), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(_numpy(plain), t_plain.detach().numpy(), rtol=2e-5, atol=2e-6)


def test_group_across_devices(device):
    # one group, one parameter on the host and one on the device under test: each is updated
    # by its own device's kernel
    a = clgrad.nn.Parameter(clgrad.tensor(INIT[0]))
    b = clgrad.nn.Parameter(clgrad.tensor(INIT[2], device=device))
    ta, tb = torch.nn.Parameter(torch.tensor(INIT[0])), torch.nn.Parameter(torch.tensor(INIT[2]))
    opt = clgrad.optim.SGD([a, b], lr=0.1, momentum=0.9, nesterov=True)
    ref = torch.optim.SGD([ta, tb], lr=0.1, momentum=0.9, nesterov=True)
    for _ in range(3):
        a.grad, b.grad = clgrad.ones(8, 5), clgrad.full((2, 8), 0.5, device=device)
        ta.grad, tb.grad = torch.ones(8, 5), torch.full((2, 8), 0.5)
        opt.step()
        ref.step()
    np.testing.assert_allclose(_numpy(a), ta.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_numpy(b), tb.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,kw", [CASES[2], CASES[5], CASES[12]], ids=["sgd", "adam", "rms"])
@pytest.mark.parametrize(
    "first,then", [(None, False), (False, None)], ids=["fused-to-per_op", "per_op-to-fused"]
)
def test_state_dict_round_trip(device, name, kw, first, then):
    straight, _ = _run(clgrad, name, {**kw, "foreach": False}, device, steps=6)
    params, loss_fn = _model(clgrad, device)
    opt = getattr(clgrad.optim, name)(params, **kw, foreach=first)
    _steps(opt, loss_fn, 3)
    fresh = getattr(clgrad.optim, name)(params, **kw, foreach=then)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["foreach"] is first  # the loaded options, as torch
    fresh.param_groups[0]["foreach"] = then
    _steps(fresh, loss_fn, 3)
    for p, w in zip(params, straight):
        np.testing.assert_allclose(_numpy(p), w, rtol=1e-6, atol=1e-7)
