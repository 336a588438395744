"""The checks tests/test_multi_device.py runs in one subprocess with two OpenCL devices.

    POCL_DEVICES="pthread pthread" python tests/multi_device_checks.py two    # cl:0 and cl:1
    POCL_DEVICES=pthread RUSTICL_ENABLE=llvmpipe python tests/multi_device_checks.py platforms

Each check prints ``PASS <name>`` or ``FAIL <name>: <error>``; ``SKIP <reason>`` alone when
the devices it needs are not there.
"""

from __future__ import annotations

import sys
import traceback

import numpy as np

import clgrad
import clgrad.nn as nn

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def values(dt):
    v = (clgrad.arange(-60, 60, dtype=clgrad.float64) * 1.37).reshape(4, 30)
    return v.to(getattr(clgrad, dt))


def check_moves():
    """cl:0 -> cl:1 -> cpu -> cl:1 -> cl:0 is exact in every dtype, strided sources too."""
    for dt in DTYPES:
        v = values(dt)
        for src in (v, v.t()):
            r = src.to("cl:0").to("cl:1")
            assert r.device == clgrad.device("cl:1") and r.dtype is v.dtype
            r = r.cpu().to("cl:1").to("cl:0")
            assert r.device == clgrad.device("cl:0")
            assert np.array_equal(r.cpu().numpy(), src.numpy()), dt
            assert np.array_equal(src.to("cl:1").t().to("cl:0").cpu().numpy(), src.t().numpy())


def check_move_snapshot():
    """A move copies the value at the time of the call: in-place writes queued on the source
    afterwards do not reach the copy, and the source queue is never finished for it."""
    x = clgrad.arange(1 << 16, dtype=clgrad.float32).to("cl:0")
    want = x.cpu().numpy()
    y = x.to("cl:1")
    x.add_(1)
    assert np.array_equal(y.cpu().numpy(), want)
    assert np.array_equal(x.cpu().numpy(), want + 1)


def check_no_global_synchronize():
    """A copy between the two devices finishes no queue: it waits for the source's queue
    through an event, and nothing waits for the destination's."""
    d0, d1 = clgrad.device("cl:0"), clgrad.device("cl:1")
    x = clgrad.ones(1000, device="cl:0")
    x.to("cl:1")  # open both runtimes first
    calls = []
    rt_class = type(d0.runtime)
    original = rt_class.synchronize
    rt_class.synchronize = lambda self: calls.append(self.device)
    try:
        y = (x * 3).to("cl:1") + 1
    finally:
        rt_class.synchronize = original
    if d0.runtime.context == d1.runtime.context:  # buffer to buffer: no queue finished
        assert calls == [], calls
    assert y.cpu().tolist() == [4.0] * 1000


def check_own_runtimes():
    """Each device has its own runtime: queue, allocator, kernel cache."""
    d0, d1 = clgrad.device("cl:0"), clgrad.device("cl:1")
    (clgrad.ones(3, device="cl:0") + 1).cpu()
    (clgrad.ones(3, device="cl:1") + 1).cpu()
    r0, r1 = d0.runtime, d1.runtime
    assert r0 is not r1 and r0.queue != r1.queue
    assert r0.allocator is not r1.allocator and r0.kernels is not r1.kernels
    assert r0.queue.device == d0._cl and r1.queue.device == d1._cl


def check_allocators():
    """Each device's allocator counts only its own memory."""
    a0, a1 = clgrad.cl.memory_allocated("cl:0"), clgrad.cl.memory_allocated("cl:1")
    big = clgrad.zeros(1 << 20, device="cl:1")
    assert clgrad.cl.memory_allocated("cl:1") >= a1 + 4 * (1 << 20)
    assert clgrad.cl.memory_allocated("cl:0") == a0
    moved = big.to("cl:0")
    assert clgrad.cl.memory_allocated("cl:0") >= a0 + 4 * (1 << 20)
    del big, moved


def _expect_devices_error(fn, what):
    try:
        fn()
    except RuntimeError as e:
        text = str(e)
        assert "cl:0" in text and "cl:1" in text, f"{what}: {text}"
        return
    raise AssertionError(f"{what}: no RuntimeError")


def check_mixed_device_errors():
    """Every op family refuses operands on two devices, naming both."""
    a = clgrad.arange(6.0).reshape(2, 3).to("cl:0")
    b = clgrad.arange(6.0).reshape(2, 3).to("cl:1")
    i1 = clgrad.tensor([0, 1]).to("cl:1")
    m1 = (b > 2).to("cl:1")
    cases = {
        "add": lambda: a + b,
        "maximum": lambda: clgrad.maximum(a, b),
        "mul_": lambda: a.clone().mul_(b),
        "add_ into cl:1": lambda: b.clone().add_(a),
        "sum out=": lambda: clgrad.sum(a, 0, out=clgrad.zeros(3, device="cl:1")),
        "mean out=": lambda: clgrad.mean(a, 1, out=clgrad.zeros(2, device="cl:1")),
        "add out=": lambda: clgrad.add(a, a, out=clgrad.zeros(2, 3, device="cl:1")),
        "matmul": lambda: a @ b.t(),
        "mm": lambda: clgrad.mm(a, b.t()),
        "bmm": lambda: clgrad.bmm(a[None], b.t()[None]),
        "linear": lambda: nn.functional.linear(a, b),
        "cat": lambda: clgrad.cat([a, b]),
        "stack": lambda: clgrad.stack([a, b]),
        "index": lambda: a[i1],
        "setitem index": lambda: a.clone().__setitem__(i1, 1.0),
        "index_put_ values": lambda: a.clone().index_put_((clgrad.tensor([0]).to("cl:0"),), b[0]),
        "index_select": lambda: clgrad.index_select(a, 0, i1),
        "gather": lambda: clgrad.gather(a, 1, clgrad.zeros(2, 3, dtype=clgrad.int64).to("cl:1")),
        "scatter_add_": lambda: a.clone().scatter_add_(
            1, clgrad.zeros(2, 3, dtype=clgrad.int64).to("cl:1"), a
        ),
        "masked_fill_": lambda: a.clone().masked_fill_(m1, 0.0),
        "where": lambda: clgrad.where(a > 1, a, b),
        "where condition": lambda: clgrad.where(m1, a, a),
        "lerp": lambda: clgrad.lerp(a, b, 0.5),
    }
    for name, fn in cases.items():
        _expect_devices_error(fn, name)


def check_copy_across_devices():
    """copy_ and a basic-index assignment move the source, as torch's."""
    a = clgrad.zeros(2, 3, device="cl:0")
    b = clgrad.arange(6.0).reshape(2, 3).to("cl:1")
    a.copy_(b)
    assert a.device == clgrad.device("cl:0") and a.cpu().tolist() == b.cpu().tolist()
    a.copy_(b.t().t().to(clgrad.float64))
    a[0] = b[1]
    assert a.cpu().tolist() == [[3.0, 4.0, 5.0], [3.0, 4.0, 5.0]]
    b.copy_(clgrad.full((2, 3), 7.0))  # from cpu
    assert b.cpu().tolist() == [[7.0] * 3] * 2
    # a cpu index tensor works on any device, as in torch
    assert a[clgrad.tensor([1])].cpu().tolist() == [[3.0, 4.0, 5.0]]


def check_autograd():
    """Gradients come back to the device of the tensor they belong to."""
    x = clgrad.tensor([1.0, 2.0, 3.0], device="cl:0", requires_grad=True)
    y = x.to("cl:1") * 2
    y.sum().backward()
    assert x.grad.device == clgrad.device("cl:0") and x.grad.cpu().tolist() == [2.0] * 3
    w = clgrad.tensor([1.0, -1.0], device="cl:1", requires_grad=True)
    z = (x[:2] * w.to("cl:0")).sum() + (w * x[1:].to("cl:1")).sum().to("cl:0")
    z.backward()
    assert w.grad.device == clgrad.device("cl:1")
    assert w.grad.cpu().tolist() == [1.0 + 2.0, 2.0 + 3.0]
    c = clgrad.tensor([1.0, 2.0], requires_grad=True)  # cpu -> cl:1 -> cl:0
    (c.to("cl:1").to("cl:0") ** 2).sum().backward()
    assert c.grad.device.is_cpu and c.grad.tolist() == [2.0, 4.0]


def check_optimizers():
    """One param group holding parameters of two devices: each updates on its own device."""
    for make in (
        lambda ps: clgrad.optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: clgrad.optim.Adam(ps, lr=0.1),
        lambda ps: clgrad.optim.AdamW(ps, lr=0.1, foreach=False),
    ):
        p0 = nn.Parameter(clgrad.ones(3, device="cl:0"))
        p1 = nn.Parameter(clgrad.ones(3, device="cl:1"))
        ref = nn.Parameter(clgrad.ones(3))
        opt, ref_opt = make([p0, p1]), make([ref])
        for _ in range(3):
            opt.zero_grad()
            ref_opt.zero_grad()
            (p0 * p0).sum().backward()
            (p1 * p1).sum().backward()
            (ref * ref).sum().backward()
            opt.step()
            ref_opt.step()
        assert p0.device == clgrad.device("cl:0") and p1.device == clgrad.device("cl:1")
        for p in (p0, p1):
            np.testing.assert_allclose(p.detach().cpu().numpy(), ref.detach().numpy(), 1e-6)


def _mlp(lib, bn):
    layers = [lib.nn.Linear(8, 16), lib.nn.Tanh()]
    if bn:
        layers.append(lib.nn.BatchNorm1d(16))
    layers += [lib.nn.Linear(16, 4)]
    return lib.nn.Sequential(*layers)


def _data(bn):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    y = rng.standard_normal((16, 4)).astype(np.float32)
    clgrad.manual_seed(0)
    init = _mlp(clgrad, bn).state_dict()
    return x, y, {k: v.numpy() for k, v in init.items()}


def _chunked(lib, model, x):
    """DataParallel's forward on one device: chunk 0 runs the model itself; chunk 1 a replica
    sharing the parameters, whose buffer updates (BatchNorm's running stats) are lost."""
    outs = []
    for i, c in enumerate(x.chunk(2)):
        saved = [(m, dict(m._buffers)) for m in model.modules()]
        if i:  # the replica's buffers: copies (set aside, not restored in place: torch saves them)
            for m, bufs in saved:
                m._buffers.update({k: None if b is None else b.clone() for k, b in bufs.items()})
        outs.append(model(c))
        if i:
            for m, bufs in saved:
                m._buffers.update(bufs)
    return lib.cat(outs)


def _train(lib, forward_of, model, x, y, steps=10):
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((forward_of(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return {k: v.detach().cpu().numpy().astype(np.float64) for k, v in model.state_dict().items()}


def _states_close(a, b, what):
    assert a.keys() == b.keys(), what
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=2e-5, atol=2e-6, err_msg=f"{what}: {k}")


def _dp_run(bn, device_ids, to_dp=True):
    x, y, init = _data(bn)
    model = _mlp(clgrad, bn)
    model.load_state_dict({k: clgrad.tensor(v) for k, v in init.items()})
    model.to(device_ids[0])
    forward = nn.DataParallel(model, device_ids=device_ids) if to_dp else model
    # DataParallel moves the cpu batch itself; the plain model needs it on its device
    xs = clgrad.tensor(x) if to_dp else clgrad.tensor(x).to(device_ids[0])
    ys = clgrad.tensor(y).to(device_ids[0])
    return _train(clgrad, forward, model, xs, ys)


def _torch_run(bn, chunked):
    import torch

    x, y, init = _data(bn)
    model = _mlp(torch, bn)
    model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    forward = (lambda t: _chunked(torch, model, t)) if chunked else model
    return _train(torch, forward, model, torch.tensor(x), torch.tensor(y))


def check_data_parallel_mlp():
    """DataParallel over cl:0 and cl:1, 10 SGD steps of an MLP: the parameters of training on
    one device on the full batch, and of torch on cpu."""
    dp = _dp_run(False, ["cl:0", "cl:1"])
    _states_close(dp, _dp_run(False, ["cl:0"], to_dp=False), "one device")
    _states_close(dp, _torch_run(False, chunked=False), "torch")


def check_data_parallel_batchnorm():
    """With BatchNorm1d each replica normalizes its own chunk and only the first replica's
    running statistics are kept (torch's semantics): equal to that computed on one device
    (clgrad, cl:0) and by torch on cpu."""
    dp = _dp_run(True, ["cl:0", "cl:1"])
    x, y, init = _data(True)
    model = _mlp(clgrad, True)
    model.load_state_dict({k: clgrad.tensor(v) for k, v in init.items()})
    model.to("cl:0")
    one = _train(
        clgrad,
        lambda t: _chunked(clgrad, model, t),
        model,
        clgrad.tensor(x).to("cl:0"),
        clgrad.tensor(y).to("cl:0"),
    )
    _states_close(dp, one, "one device")
    _states_close(dp, _torch_run(True, chunked=True), "torch")


def check_data_parallel_api():
    """Scatter of nested inputs, outputs gathered on output_device, the module check."""

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, batch, scale=1.0, tag=None):
            assert tag == "t"
            out = self.lin(batch["x"]) * scale
            return {"out": out, "pair": (out.sum(1), batch["y"][0] * 1)}

    m = Pair().to("cl:0")
    dp = nn.DataParallel(m, device_ids=["cl:0", "cl:1"], output_device="cpu")
    assert dp.module is m and list(dp.state_dict()) == ["module.lin.weight", "module.lin.bias"]
    x = clgrad.arange(15.0).reshape(5, 3)
    res = dp({"x": x, "y": [clgrad.arange(5.0)]}, scale=2.0, tag="t")
    assert res["out"].device.is_cpu and res["out"].shape == (5, 2)
    ref = m.lin(x.to("cl:0")) * 2.0
    np.testing.assert_allclose(res["out"].detach().numpy(), ref.detach().cpu().numpy(), 1e-6)
    assert res["pair"][1].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    res["out"].sum().backward()
    assert m.lin.weight.grad.device == clgrad.device("cl:0")
    np.testing.assert_allclose(
        m.lin.weight.grad.cpu().numpy(), np.tile(x.sum(0).numpy() * 2.0, (2, 1)), 1e-5
    )
    with clgrad.no_grad():  # a detached replication: no graph
        assert not dp({"x": x, "y": [x]}, tag="t")["out"].requires_grad
    try:
        nn.DataParallel(nn.Linear(3, 2).to("cl:1"), device_ids=["cl:0", "cl:1"])(x)
    except RuntimeError as e:
        assert "device_ids[0]" in str(e)
    else:
        raise AssertionError("a module on the wrong device ran")


def check_other_platform():
    """A device of another platform (its own context): moves go through the host."""
    first = clgrad.device("cl:0")
    other = [d for d in clgrad.devices() if d.is_cl and d.platform != first.platform]
    assert other, "no second platform"
    d1 = other[0]
    assert clgrad.device("cl:0").runtime.context != d1.runtime.context
    for dt in DTYPES:
        if dt == "float64" and not d1.supports_float64:
            continue
        v = values(dt)
        r = v.to("cl:0").to(d1)
        assert r.device == d1
        r = r.to("cl:0").cpu()
        assert np.array_equal(r.numpy(), v.numpy()), dt
    x = clgrad.arange(6.0, device="cl:0", requires_grad=True)
    ((x.to(d1) * 3).to("cl:0")).sum().backward()
    assert x.grad.cpu().tolist() == [3.0] * 6
    _expect_platform_error(x, d1)


def _expect_platform_error(x, d1):
    try:
        x + clgrad.ones(6, device=d1)
    except RuntimeError as e:
        assert "cl:0" in str(e) and str(d1) in str(e)
    else:
        raise AssertionError("no RuntimeError")


TWO = [
    check_moves,
    check_move_snapshot,
    check_no_global_synchronize,
    check_own_runtimes,
    check_allocators,
    check_mixed_device_errors,
    check_copy_across_devices,
    check_autograd,
    check_optimizers,
    check_data_parallel_mlp,
    check_data_parallel_batchnorm,
    check_data_parallel_api,
]


def main(mode):
    cl = [d for d in clgrad.devices() if d.is_cl]
    if mode == "two":
        if len(cl) < 2:
            print(f"SKIP {len(cl)} OpenCL devices")
            return
        checks = TWO
    else:
        if len({d.platform for d in cl}) < 2:
            print("SKIP no second OpenCL platform")
            return
        checks = [check_other_platform]
    for check in checks:
        name = check.__name__[len("check_") :]
        try:
            check()
        except Exception:
            print(f"FAIL {name}: {traceback.format_exc()}", flush=True)
        else:
            print(f"PASS {name}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
