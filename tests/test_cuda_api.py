"""``clgrad.cuda``'s surface beyond devices and memory counters: events, streams, random state,
memory info, legacy typed tensors, nvtx and CUDA graphs (README: "PyTorch device names on
OpenCL").

What PyTorch's cpu build can answer is compared with it here: the signatures, the answers of
functions that need no GPU, the classes of the errors. What needs a device runs in a
subprocess with ``CLGRAD_DEVICE=cl:0`` (what "cuda" means is read once per process): its
checks print one JSON object, asserted on here.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import CL_DEVICES

import clgrad


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


# ---- signatures and the answers PyTorch's cpu build gives ----------------------------------
FUNCTIONS = [
    "current_stream",
    "default_stream",
    "device_of",
    "get_arch_list",
    "get_device_capability",
    "get_gencode_flags",
    "get_rng_state",
    "get_rng_state_all",
    "get_stream_from_external",
    "graph_pool_handle",
    "init",
    "initial_seed",
    "ipc_collect",
    "is_current_stream_capturing",
    "is_initialized",
    "make_graphed_callables",
    "manual_seed",
    "manual_seed_all",
    "mem_get_info",
    "memory_stats",
    "memory_summary",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
]
CLASSES = ["CUDAGraph", "Event", "ExternalStream", "Stream", "StreamContext", "graph"]
METHODS = {
    "Event": ["record", "wait", "query", "synchronize", "elapsed_time"],
    "Stream": ["wait_event", "wait_stream", "record_event", "query", "synchronize"],
    "CUDAGraph": (
        "capture_begin capture_end instantiate replay reset pool enable_debug_mode debug_dump"
    ).split(),
}


@pytest.mark.parametrize("name", FUNCTIONS + CLASSES)
def test_signatures_are_pytorchs(name):
    ours, theirs = getattr(clgrad.cuda, name), getattr(torch.cuda, name)
    assert _params(ours) == _params(theirs)
    for method in METHODS.get(name, []):
        assert _params(getattr(ours, method)) == _params(getattr(theirs, method)), method


def test_nvtx_and_accelerator_signatures_are_pytorchs():
    for name in torch.cuda.nvtx.__all__:
        assert _params(getattr(clgrad.cuda.nvtx, name)) == _params(getattr(torch.cuda.nvtx, name))
    for name in ("current_stream", "set_stream", "get_memory_info", "memory_stats"):
        ours, theirs = getattr(clgrad.accelerator, name), getattr(torch.accelerator, name)
        assert _params(ours) == _params(theirs), name


def test_answers_without_a_gpu_as_pytorch():
    """What PyTorch's cpu build answers without failing, clgrad answers the same."""
    assert clgrad.cuda.get_arch_list() == torch.cuda.get_arch_list() == []
    assert clgrad.cuda.get_gencode_flags() == torch.cuda.get_gencode_flags() == ""
    assert clgrad.cuda.is_current_stream_capturing() is False
    for name in ("manual_seed", "manual_seed_all"):
        assert getattr(clgrad.cuda, name)(5) is getattr(torch.cuda, name)(5) is None
    for name in ("seed", "seed_all", "ipc_collect"):
        assert getattr(clgrad.cuda, name)() is None
    on_cpu = clgrad.ones(2, device="cpu")
    assert isinstance(on_cpu, clgrad.cuda.FloatTensor) is isinstance(
        torch.ones(2), torch.cuda.FloatTensor
    )
    assert isinstance(on_cpu, clgrad.FloatTensor) and not isinstance(
        on_cpu.long(), clgrad.cuda.LongTensor
    )
    if not clgrad.cuda.is_available():  # as PyTorch's cpu build, which has no cuda device
        assert clgrad.cuda.memory_stats() == torch.cuda.memory_stats() == {}
        assert clgrad.cuda.get_rng_state_all() == torch.cuda.get_rng_state_all() == []
        assert clgrad.cuda.is_initialized() is torch.cuda.is_initialized() is False
        assert clgrad.cuda.device_count() == 0
        assert "Allocated memory" in clgrad.cuda.memory_summary()


@pytest.mark.skipif(clgrad.cuda.is_available(), reason="this process has a cuda device")
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.current_stream(),
        lambda m: m.default_stream(),
        lambda m: m.Stream(),
        lambda m: m.init(),
        lambda m: m.initial_seed(),
        lambda m: m.get_rng_state(),
        lambda m: m.mem_get_info(),
        lambda m: m.get_device_capability(),
        lambda m: m.Event().record(),
        lambda m: m.CUDAGraph().capture_begin(),
    ],
)
def test_what_needs_a_cuda_device_raises_without_one(call):
    """PyTorch raises on each (its cpu build an AssertionError, "Torch not compiled with CUDA
    enabled", a CUDA build without a GPU a RuntimeError); clgrad raises a RuntimeError that
    says how to get a cuda device."""
    with pytest.raises((RuntimeError, AssertionError)):
        call(torch.cuda)
    with pytest.raises(RuntimeError, match="CLGRAD_DEVICE"):
        call(clgrad.cuda)
    assert clgrad.cuda.is_current_stream_capturing() is False  # nothing left half-started


def test_typed_tensors_need_a_cuda_device_as_in_pytorch():
    if clgrad.cuda.is_available():
        pytest.skip("this process has a cuda device")
    with pytest.raises(TypeError):
        torch.cuda.FloatTensor(2)
    with pytest.raises(RuntimeError, match="CLGRAD_DEVICE"):
        clgrad.cuda.FloatTensor(2)


def test_out_of_memory_error_is_pytorchs_kind():
    assert clgrad.cuda.OutOfMemoryError is clgrad.OutOfMemoryError
    assert issubclass(clgrad.cuda.OutOfMemoryError, RuntimeError)
    assert issubclass(torch.cuda.OutOfMemoryError, RuntimeError)


# ---- what needs no device ------------------------------------------------------------------
def test_event_errors_before_recording():
    """PyTorch's checks and messages (c10/cuda/CUDAEvent.h): no timing or not recorded is a
    ValueError in PyTorch 2.13 (a RuntimeError before it: both catch it), checked in that
    order, before anything is asked of a device."""
    plain, timed = clgrad.cuda.Event(), clgrad.cuda.Event(enable_timing=True)
    with pytest.raises(ValueError, match=r"^Both events must be created with argument "):
        plain.elapsed_time(timed)
    with pytest.raises(RuntimeError, match=r"'enable_timing=True'\.$"):
        timed.elapsed_time(plain)
    with pytest.raises(ValueError, match=r"^Both events must be recorded before calculating"):
        timed.elapsed_time(clgrad.cuda.Event(enable_timing=True))
    with pytest.raises(RuntimeError, match="recorded"):
        timed.elapsed_time(timed)
    assert plain.query() is True and plain.synchronize() is None and plain.device is None
    assert repr(plain) == "<clgrad.cuda.Event uninitialized>" and plain.cuda_event == 0
    plain.wait()  # an event never recorded has nothing to wait for


def test_graph_errors_without_a_capture():
    g = clgrad.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="capture_end without a matching capture_begin"):
        g.capture_end()
    with pytest.raises(RuntimeError, match="Unknown capture error mode"):
        g.capture_begin(capture_error_mode="strict")
    assert clgrad.cuda.is_current_stream_capturing() is False
    assert g.pool() != clgrad.cuda.CUDAGraph().pool()  # a token of its own
    with pytest.raises(TypeError, match="must contain only Tensors"):
        clgrad.cuda.make_graphed_callables(lambda x: x, (1.0,))


def test_nvtx_counts_its_ranges():
    nvtx = clgrad.cuda.nvtx
    assert nvtx.range_pop() == -1  # nothing pushed: NVTX's error value
    assert [nvtx.range_push("a"), nvtx.range_push("b")] == [0, 1]
    assert [nvtx.range_pop(), nvtx.range_pop(), nvtx.range_pop()] == [1, 0, -1]
    with nvtx.range("step {} of {n}", 1, n=3):
        assert nvtx.range_push("inner") == 1
        assert nvtx.range_pop() == 1
    assert nvtx.range_pop() == -1  # the range popped its push
    a, b = nvtx.range_start("x"), nvtx.range_start("y")
    assert a != b and nvtx.range_end(a) is None and nvtx.mark("m") is None

    @nvtx.range("decorated")
    def f(x):
        assert nvtx.range_push("in f") == 1 and nvtx.range_pop() == 1
        return x + 1

    assert f(1) == 2 and nvtx.range_pop() == -1


def test_stream_context_of_none_is_a_no_op():
    with clgrad.cuda.stream(None) as s, clgrad.cuda.StreamContext(None):
        assert s is None
    assert clgrad.cuda.set_stream(None) is None


# ---- on a cuda device: in a subprocess with CLGRAD_DEVICE=cl:0 -------------------------------
ON_DEVICE = r"""
import json, re, time
import numpy as np
import clgrad as torch

out = {}
out["initialized before"] = torch.cuda.is_initialized()
torch.cuda.init()
out["initialized after"] = torch.cuda.is_initialized()
cuda = torch.device("cuda")

def host(t):
    return t.detach().cpu().numpy().tolist()

# -- events: device time between two records
a = torch.randn(768, 768, device="cuda")
b = torch.randn(768, 768, device="cuda")
(a @ b).sum().item()  # kernels built, device idle
t0 = time.perf_counter()
for _ in range(2):
    c = a @ b
torch.cuda.synchronize()
# enough matmuls for 0.2 s of device work: still running when the host asks right after
reps = min(4000, max(3, int(0.2 / max((time.perf_counter() - t0) / 2, 1e-6))))
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
end.record()
end.synchronize()
empty = start.elapsed_time(end)
torch.cuda.synchronize()
t0 = time.perf_counter()
start.record()
for _ in range(reps):
    c = a @ b
end.record()
try:  # the matmuls are still running: PyTorch's error, not a wait
    start.elapsed_time(end)
    out["early"] = "no error"
except RuntimeError as e:
    out["early"] = str(e)
torch.cuda.synchronize()  # the device's queue: the timing markers need no wait of their own
wall = (time.perf_counter() - t0) * 1e3
busy = start.elapsed_time(end)
out["timing"] = [empty, busy, wall, type(busy).__name__]
out["event"] = [start.query(), end.query(), str(end.device), end.cuda_event != 0,
                repr(end).startswith("<clgrad.cuda.Event 0x")]
plain = torch.cuda.Event()
plain.record()
plain.synchronize()
try:
    plain.elapsed_time(end)
    out["plain"] = "no error"
except ValueError as e:
    out["plain"] = [str(e), isinstance(e, RuntimeError)]

# -- streams: handles on the one queue
s = torch.cuda.Stream()
default = torch.cuda.default_stream()
x = torch.arange(6.0, device="cuda")
with torch.cuda.stream(s):
    inside = [torch.cuda.current_stream() == s, torch.cuda.current_stream() != default,
              torch.accelerator.current_stream() == s]
    y = x * 2 + 1
    e = s.record_event()
s.wait_stream(default)
default.wait_event(e)
e.wait()
s.synchronize()
with s:
    inside.append(torch.cuda.current_stream() is s)
inside.append(torch.cuda.current_stream() == default)
torch.cuda.set_stream(s)
inside.append(torch.cuda.current_stream() is s)
torch.cuda.set_stream(default)
out["streams"] = inside + [host(y) == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0], s.query(), default.query(),
    default.stream_id, s.stream_id > 0, s.priority, torch.cuda.Stream(priority=-3).priority,
    str(s.device), s.device_index, s.cuda_stream == default.cuda_stream != 0,
    torch.cuda.Stream(0) != s, torch.cuda.current_stream(0) == default,
    type(torch.cuda.ExternalStream(99)).__mro__[1].__name__,
    torch.cuda.get_stream_from_external(99).cuda_stream]

# -- random state: the generator of the cuda device
torch.cuda.manual_seed(11)
first = host(torch.rand(5, device="cuda"))
torch.cuda.manual_seed_all(11)
again = host(torch.rand(5, device="cuda"))
state = torch.cuda.get_rng_state()
r1 = host(torch.randn(7, device="cuda"))
r_next = host(torch.randn(7, device="cuda"))
torch.cuda.set_rng_state(state)
r2 = host(torch.randn(7, device="cuda"))
all_states = torch.cuda.get_rng_state_all()
s1 = host(torch.rand(3, device="cuda"))
torch.cuda.set_rng_state_all(all_states)
s2 = host(torch.rand(3, device="cuda"))
torch.cuda.manual_seed(7)
seeded = torch.cuda.initial_seed()
torch.cuda.seed()
reseeded = torch.cuda.initial_seed()
torch.cuda.seed_all()
out["rng"] = [first == again, r1 == r2, r1 != r_next, s1 == s2, len(all_states),
              str(state.device), str(state.dtype), seeded, reseeded != 7,
              torch.cuda.initial_seed() != reseeded]

# -- memory
del a, b, c
torch.cuda.empty_cache()
free0, total = torch.cuda.mem_get_info()
reserved0 = torch.cuda.memory_reserved()
big = torch.empty(16 << 20, device="cuda")  # 64 MiB
free1, total1 = torch.cuda.mem_get_info("cuda")
stats = torch.cuda.memory_stats()
summary = torch.cuda.memory_summary()
out["memory"] = [total == total1 == torch.cuda.get_device_properties().total_memory,
                 free0 + reserved0 == total,
                 free0 - free1 >= 64 << 20, free1 + torch.cuda.memory_reserved() == total,
                 stats["allocated_bytes.all.current"] == torch.cuda.memory_allocated(),
                 stats["allocated_bytes.all.peak"] == torch.cuda.max_memory_allocated(),
                 stats["reserved_bytes.all.current"] == torch.cuda.memory_reserved(),
                 torch.accelerator.get_memory_info() == (free1, total),
                 torch.accelerator.memory_stats() == stats,
                 "device ID 0" in summary,
                 re.search(r"Allocated memory +\| +(\d+) (B|KiB|MiB|GiB) ", summary).groups()]
del big
try:
    torch.empty(1 << 50, device="cuda")
    out["oom"] = "no error"
except torch.cuda.OutOfMemoryError as e:
    out["oom"] = isinstance(e, RuntimeError)

# -- device facts
version = re.match(r"OpenCL (\d+)\.(\d+)", cuda._cl.version)
props = torch.cuda.get_device_properties(0)
out["capability"] = [list(torch.cuda.get_device_capability()),
                     [int(version[1]), int(version[2])], [props.major, props.minor]]
with torch.cuda.device_of(torch.ones(1, device="cuda")):
    out["device_of"] = torch.cuda.current_device()

# -- legacy typed tensors
kinds = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]
typed = {}
for k in kinds:
    cls = getattr(torch.cuda, k)
    t = cls([1, 0])
    typed[k] = [str(t.dtype), str(t.device), isinstance(t, cls), isinstance(t, getattr(torch, k)),
                isinstance(t.cpu(), cls), list(cls(2, 3).shape), t.type()]
out["typed"] = typed
out["typed others"] = [isinstance(torch.cuda.FloatTensor([1.0]), torch.cuda.DoubleTensor),
                       isinstance(torch.cuda.FloatTensor([1.0]), torch.cuda.FloatTensor)]
try:
    torch.cuda.FloatTensor(torch.ones(2, device="cpu"))
    out["typed cpu data"] = "no error"
except TypeError as e:
    out["typed cpu data"] = "TypeError"
moved = torch.ones(2, device="cpu").type(torch.cuda.LongTensor)
out["type to cuda class"] = [str(moved.device), str(moved.dtype), moved.tolist()]

# -- CUDA graphs
xs = torch.zeros(3, device="cuda")
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    capturing = torch.cuda.is_current_stream_capturing()
    ys = xs * 2 + 1
    noise = torch.rand(3, device="cuda") + ys * 0
xs.copy_(torch.tensor([1.0, 2.0, 3.0]))
g.replay()
first_noise = host(noise)
got = host(ys)
xs.copy_(torch.tensor([-1.0, 0.0, 1.0]))
g.replay()
out["graph"] = [capturing, torch.cuda.is_current_stream_capturing(), got, host(ys),
                first_noise != host(noise)]

def train(capture):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1).to("cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sx = torch.randn(16, 4, device="cuda")
    sy = sx @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]], device="cuda")
    losses = []

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ((model(sx) - sy) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    for _ in range(2):  # warm-up: the optimizer's state appears
        step()
    if capture:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = step()
        for _ in range(5):
            graph.replay()
            losses.append(static_loss.item())
    else:
        step()  # the capture's own run of the step
        losses = [step().item() for _ in range(5)]
    return losses

out["graph training"] = [train(True), train(False)]

bad = torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(bad):
        (xs * 2).sum().item()
    out["graph item"] = "no error"
except RuntimeError as e:
    out["graph item"] = [str(e), torch.cuda.is_current_stream_capturing()]

torch.manual_seed(1)
net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).cuda()
ref = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).cuda()
ref.load_state_dict(net.state_dict())
sample = torch.randn(4, 3, device="cuda", requires_grad=True)
graphed = torch.cuda.make_graphed_callables(net, (sample,))
fn = torch.cuda.make_graphed_callables(lambda t: (t * t).sum(dim=1),
                                       (torch.randn(4, 3, device="cuda", requires_grad=True),))
agree = []
for i in range(2):
    for p in (*net.parameters(), *ref.parameters()):
        p.grad = None
    inp = torch.randn(4, 3, device="cuda", requires_grad=True)
    twin = inp.detach().clone().requires_grad_(True)
    o1, o2 = graphed(inp), ref(twin)
    (o1 * torch.arange(2.0, device="cuda")).sum().backward()
    (o2 * torch.arange(2.0, device="cuda")).sum().backward()
    q = inp.detach().clone().requires_grad_(True)
    fq = fn(q)
    fq.sum().backward()
    agree.append([graphed is net,
                  np.allclose(host(o1), host(o2), atol=1e-6),
                  np.allclose(host(inp.grad), host(twin.grad), atol=1e-6),
                  np.allclose(host(net[0].weight.grad), host(ref[0].weight.grad), atol=1e-6),
                  np.allclose(host(fq), host((inp * inp).sum(dim=1)), atol=1e-6),
                  np.allclose(host(q.grad), host(2 * inp), atol=1e-6)])
out["graphed callables"] = agree
print(json.dumps(out))
"""


def _on_device():
    env = {**os.environ, "CLGRAD_DEVICE": "cl:0"}
    run = subprocess.run(
        [sys.executable, "-c", ON_DEVICE], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def on_device():
    if "cl:0" not in CL_DEVICES:
        pytest.skip("needs cl:0")
    return _on_device()


def test_init_opens_the_device(on_device):
    assert on_device["initialized before"] is False and on_device["initialized after"] is True


def test_event_times_the_device_work_between_records(on_device):
    empty, busy, wall, kind = on_device["timing"]
    assert kind == "float"
    assert 0.0 <= empty < busy, (empty, busy)
    assert busy > 10 * max(empty, 0.05)  # 0.2 s of matmuls against nothing
    assert busy <= wall * 1.02 + 0.5  # within the host's view of the same interval
    assert on_device["early"] == "Both events must be completed before calculating elapsed time."
    assert on_device["event"] == [True, True, "cl:0", True, True]
    message, also_runtime = on_device["plain"]
    assert message == "Both events must be created with argument 'enable_timing=True'."
    assert also_runtime is True


def test_streams_are_handles_on_the_queue(on_device):
    got = on_device["streams"]
    assert got[:7] == [True] * 7, got
    assert got[7:] == [True, True, 0, True, 0, 0, "cl:0", 0, True, True, True, "Stream", 99]


def test_rng_state_drives_the_device_generator(on_device):
    first_again, restored, moved_on, all_restored, n, device, dtype, seeded, reseeded, again = (
        on_device["rng"]
    )
    assert first_again and restored and moved_on and all_restored and reseeded and again
    assert (n, device, dtype, seeded) == (1, "cpu", "clgrad.uint8", 7)


def test_memory_info_follows_allocations(on_device):
    *checks, (n, unit) = on_device["memory"]
    assert checks == [True] * 10, checks
    assert int(n) << {"B": 0, "KiB": 10, "MiB": 20, "GiB": 30}[unit] >= 64 << 20
    assert on_device["oom"] is True


def test_device_capability_and_device_of(on_device):
    capability, opencl, props = on_device["capability"]
    assert capability == opencl == props and capability[0] >= 1
    assert on_device["device_of"] == 0


def test_typed_tensors_on_the_cuda_device(on_device):
    names = {
        "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
        "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
        "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool",
    }  # fmt: skip
    for cls, dt in names.items():
        expected = [f"clgrad.{dt}", "cl:0", True, False, False, [2, 3], f"clgrad.cuda.{cls}"]
        assert on_device["typed"][cls] == expected, cls
    assert on_device["typed others"] == [False, True]
    assert on_device["typed cpu data"] == "TypeError"
    assert on_device["type to cuda class"] == ["cl:0", "clgrad.int64", [1, 1]]


def test_cuda_graph_capture_and_replay(on_device):
    capturing, after, first, second, fresh_noise = on_device["graph"]
    assert capturing is True and after is False
    assert first == [3.0, 5.0, 7.0] and second == [-1.0, 1.0, 3.0]
    assert fresh_noise is True  # random ops draw new numbers at each replay
    replayed, eager = on_device["graph training"]
    # the capture ran the step once (see clgrad.cuda.graphs); the replays go on from there
    assert replayed == pytest.approx(eager, rel=1e-5, abs=1e-7)
    assert replayed[-1] < replayed[0]
    message, still_capturing = on_device["graph item"]
    assert "not permitted when stream is capturing" in message and ".item()" in message
    assert still_capturing is False


def test_graphed_callables_match_eager(on_device):
    assert on_device["graphed callables"] == [[True] * 6, [True] * 6]
