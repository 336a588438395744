"""Devices, CLGRAD_DEVICE, the kernel and binary caches, errors, and the installed wheel."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import clgrad
from clgrad.backend.opencl.render import KernelRenderError, render, templates

D = sys.modules["clgrad.device"]

ROOT = Path(__file__).resolve().parents[1]


def run_py(code, env=None, cwd=None, python=sys.executable):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [python, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=300,
    )


def test_device_registry():
    devs = clgrad.devices()
    assert str(devs[0]) == "cpu" and devs[0].type is clgrad.DeviceType.HOST
    for i, d in enumerate(devs[1:]):
        assert str(d) == f"cl:{i}"
        assert d.type in (
            clgrad.DeviceType.GPU,
            clgrad.DeviceType.CPU,
            clgrad.DeviceType.ACCELERATOR,
        )
        assert d.vendor in ("NVIDIA", "AMD", "Intel", "Apple", "PoCL", "other")
        assert d.name and d.driver_version and d.compute_units > 0 and d.global_memory > 0
        assert isinstance(d.supports_float64, bool) and isinstance(d.supports_float16, bool)
        assert d.runtime is d.runtime  # one context and queue, opened once
    assert clgrad.device("cpu") == "cpu"


def _fresh_parse(spec, monkeypatch, env=None):
    monkeypatch.setattr(D, "_resolved", {})
    if env is None:
        monkeypatch.delenv("CLGRAD_DEVICE", raising=False)
    else:
        monkeypatch.setenv("CLGRAD_DEVICE", env)
    return D.resolve(spec)


def test_device_selection(monkeypatch):
    cls = [d for d in clgrad.devices() if d.is_cl]
    assert _fresh_parse("cpu", monkeypatch) is D.host()
    if not cls:
        with pytest.raises(RuntimeError, match="pip install"):
            _fresh_parse("cl", monkeypatch)
        return
    gpus = [d for d in cls if d.type is clgrad.DeviceType.GPU]
    assert _fresh_parse("cl", monkeypatch) is (gpus or cls)[0]
    assert _fresh_parse("cl:0", monkeypatch) is cls[0]
    assert _fresh_parse("CL:0", monkeypatch) is cls[0]
    assert _fresh_parse(cls[0].vendor.lower(), monkeypatch) is cls[0]
    assert _fresh_parse(cls[0].name.upper()[:5], monkeypatch).vendor  # a name substring
    assert _fresh_parse("cl", monkeypatch, env=f"cl:{len(cls) - 1}") is cls[-1]
    with pytest.raises(RuntimeError, match=r"no device matches 'nothing-like-this'.*cpu.*cl:0"):
        _fresh_parse("nothing-like-this", monkeypatch)
    with pytest.raises(RuntimeError, match="there are"):
        _fresh_parse(f"cl:{len(cls)}", monkeypatch)
    if not gpus:
        with pytest.raises(RuntimeError, match="no OpenCL GPU"):
            _fresh_parse("gpu", monkeypatch)


def test_clgrad_device_env_sets_default_device():
    r = run_py(
        "import clgrad; print(clgrad.default_device(), clgrad.ones(2).device)",
        env={"CLGRAD_DEVICE": "cpu"},
    )
    assert r.stdout.split() == ["cpu", "cpu"], r.stderr
    if any(d.is_cl for d in clgrad.devices()):
        r = run_py(
            "import clgrad; print(clgrad.default_device(), clgrad.ones(2).device)",
            env={"CLGRAD_DEVICE": "cl:0"},
        )
        assert r.stdout.split() == ["cl:0", "cl:0"], r.stderr
    r = run_py("import clgrad; clgrad.ones(2)", env={"CLGRAD_DEVICE": "no-such-device"})
    assert r.returncode != 0 and "no device matches 'no-such-device'" in r.stderr


def test_info_command():
    r = subprocess.run([sys.executable, "-m", "clgrad", "info"], capture_output=True, text=True)
    assert r.returncode == 0
    assert "cpu" in r.stdout and "vendor" in r.stdout and "fp64" in r.stdout
    for d in clgrad.devices()[1:]:
        assert str(d) in r.stdout


def test_without_any_opencl_platform():
    code = """
        import clgrad
        x = clgrad.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        print(x.grad.tolist())
        try:
            clgrad.device("cl")
        except RuntimeError as e:
            print("ERR", e)
    """
    r = run_py(code, env={"OCL_ICD_VENDORS": "/nonexistent"})
    assert r.returncode == 0, r.stderr
    assert "[2.0, 4.0]" in r.stdout
    assert "ERR" in r.stdout and "pip install" in r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "clgrad", "info"],
        capture_output=True,
        text=True,
        env={**os.environ, "OCL_ICD_VENDORS": "/nonexistent"},
    )
    assert r.returncode == 0 and "pocl" in r.stdout


def test_render_errors_name_template_and_parameters():
    with pytest.raises(
        KernelRenderError, match=r"elementwise\.cl\.mako.*\n.*parameters: .*name='x'"
    ):
        render("elementwise.cl.mako", name="x")
    assert "elementwise.cl.mako" in templates()


def test_build_failure_reports_device_log_and_source(cl_device):
    rt = clgrad.device(cl_device).runtime
    with pytest.raises(clgrad.KernelBuildError) as info:
        rt.build("__kernel void broken(__global float *x) { x[0] = undefined_thing; }", "broken")
    msg = str(info.value)
    assert cl_device in msg and "undefined_thing" in msg
    path = msg.split("source: ")[1].split("\n")[0]
    assert Path(path).read_text().startswith("__kernel void broken")


def test_kernels_are_cached_per_process(cl_device):
    x = clgrad.ones(10, device=cl_device)
    x + x
    rt = clgrad.device(cl_device).runtime
    n_prog, n_kern = len(rt.programs), len(rt.kernels)
    for n in (3, 17, 1000):  # new shapes reuse the same program and kernel object
        y = clgrad.ones(n, device=cl_device)
        y + y
    assert (len(rt.programs), len(rt.kernels)) == (n_prog, n_kern)


@pytest.mark.parametrize("binary_cache", ["1", ""])
def test_disk_cache_makes_second_process_faster(cl_device, tmp_path, binary_cache):
    """With clgrad's binary cache (forced on), and with the default: on PoCL that is PoCL's own
    cache alone, and clgrad writes no binaries (asking PoCL for one generates every kernel)."""
    code = f"""
        import time, clgrad
        t = time.perf_counter()
        x = clgrad.ones(8, device="{cl_device}")
        for op in ("exp", "log", "sin", "cos", "tanh", "sqrt", "sigmoid", "relu"):
            getattr(x, op)()
        (x @ x.reshape(8, 1)).sum().item()
        print(time.perf_counter() - t)
    """
    env = {
        "CLGRAD_CACHE_DIR": str(tmp_path / "cache"),
        "POCL_CACHE_DIR": str(tmp_path / "pocl"),
        # Mesa's (rusticl's) own cache of compiled kernels, which outlives a suite run: the
        # first process must build from nothing there too
        "MESA_SHADER_CACHE_DIR": str(tmp_path / "mesa"),
        "CLGRAD_BINARY_CACHE": binary_cache,
    }
    cold = float(run_py(code, env=env).stdout.strip().splitlines()[-1])
    wrote = (tmp_path / "cache").is_dir() and any((tmp_path / "cache").iterdir())
    pocl = clgrad.device(cl_device).platform == "Portable Computing Language"
    assert wrote == (binary_cache == "1" or not pocl)
    warm = min(float(run_py(code, env=env).stdout.strip().splitlines()[-1]) for _ in range(2))
    assert warm < 0.7 * cold, (cold, warm)


# one workload for both builds: each kernel family the suite leans on, forward and backward
_BUILD_OPT_WORKLOAD = """
import numpy as np
import clgrad

def results(device):
    clgrad.manual_seed(0)
    x = clgrad.randn(37, 19, device=device)
    w = clgrad.randn(19, 23, device=device, requires_grad=True)
    y = (x @ w).tanh()
    out = {
        "matmul_tanh": y,
        "softmax": y.softmax(1),
        "exp_chain": (2 * x + 1).exp().sum(0),
        "cumsum": x.cumsum(0),
        "sort": x.sort(1)[0],
        "conv2d": clgrad.nn.functional.conv2d(x[None, None], w[None, None, :3, :3]),
        "max_pool": clgrad.nn.functional.max_pool2d(x[None], 2),
    }
    (y.logsumexp(1).mean() + out["conv2d"].square().mean()).backward()
    out["grad"] = w.grad
    return {k: v.detach().cpu().numpy() for k, v in out.items()}
"""


def test_optimized_builds_agree(cl_device, tmp_path):
    """CLGRAD_BUILD_OPT=0 (the suite's setting: conftest) builds with -cl-opt-disable, the
    default optimizes; the same kernels give the same results either way."""
    opt = os.environ.get("CLGRAD_BUILD_OPT") != "0"
    assert ("-cl-opt-disable" in clgrad.device(cl_device).runtime.build_options) != opt
    namespace = {}
    exec(_BUILD_OPT_WORKLOAD, namespace)
    here = namespace["results"](cl_device)
    r = run_py(
        _BUILD_OPT_WORKLOAD
        + f"""
rt = clgrad.device("{cl_device}").runtime
assert ("-cl-opt-disable" in rt.build_options) == {opt}, rt.build_options
np.savez(r"{tmp_path / "other.npz"}", **results("{cl_device}"))
""",
        env={"CLGRAD_BUILD_OPT": "0" if opt else "1"},
    )
    assert r.returncode == 0, r.stderr
    other = np.load(tmp_path / "other.npz")
    assert sorted(other.files) == sorted(here)
    for name, value in here.items():
        np.testing.assert_allclose(other[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


def test_debug_logs_launches(cl_device):
    r = run_py(
        f"import clgrad; x = clgrad.ones(4, device='{cl_device}'); (x + x).tolist()",
        env={"CLGRAD_DEBUG": "1"},
    )
    assert "launch cg_elementwise_add" in r.stderr
    r = run_py(
        f"import clgrad; x = clgrad.ones(4, device='{cl_device}'); (x * x).tolist()",
        env={"CLGRAD_DEBUG": "2", "CLGRAD_CACHE_DIR": "/tmp/clgrad-debug-test"},
    )
    assert "__kernel void cg_elementwise_mul" in r.stderr


def test_out_of_memory(cl_device):
    dev = clgrad.device(cl_device)
    with pytest.raises(clgrad.OutOfMemoryError, match=cl_device):
        clgrad.empty(dev.global_memory // 2 + 2**20, dtype=clgrad.float32, device=dev)
    assert (clgrad.ones(4, device=dev) * 2).tolist() == [2.0] * 4  # the device still works


def test_allocator_reuses_blocks(cl_device):
    x = clgrad.empty(1000, device=cl_device)
    buf = x._storage.data
    del x
    y = clgrad.empty(1000, device=cl_device)
    assert y._storage.data is buf


def test_async_enqueue_no_sync(cl_device, monkeypatch):
    import pyopencl as cl

    calls = []
    rt = clgrad.device(cl_device).runtime
    monkeypatch.setattr(rt, "synchronize", lambda: calls.append(1))
    real_wait = cl.Event.wait
    monkeypatch.setattr(cl.Event, "wait", lambda self: (calls.append(1), real_wait(self)))
    x = clgrad.ones(100, device=cl_device)
    y = ((x * 2 + 1).exp().sum(0) + x[:3].mean()).relu()
    assert calls == []
    assert y.item() > 0


def test_wheel_ships_kernels(tmp_path):
    """Builds the wheel, installs it in a fresh venv and runs a kernel from outside the repo."""
    dist = tmp_path / "dist"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    wheel = next(dist.glob("clgrad-*.whl"))
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "clgrad/kernels/elementwise.cl.mako" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = run_py(
        "import sysconfig; print(sysconfig.get_paths()['purelib'])", python=py
    ).stdout.strip()
    # the wheel goes into the new venv; its dependencies are borrowed from this environment
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", site, str(wheel)],
        check=True,
        capture_output=True,
    )
    code = """
        import clgrad, pathlib
        from clgrad.backend.opencl.render import kernels_dir
        print(kernels_dir())
        devs = [d for d in clgrad.devices() if d.is_cl]
        x = clgrad.arange(4.0, device=devs[0] if devs else "cpu")
        print((x * x).tolist())
    """
    r = run_py(code, cwd=tmp_path, python=py, env={"PYTHONPATH": ""})
    assert r.returncode == 0, r.stderr
    assert str(ROOT) not in r.stdout.splitlines()[0]
    assert "[0.0, 1.0, 4.0, 9.0]" in r.stdout


def test_a_bundle_the_driver_refuses_builds_its_kernels_alone(cl_device, monkeypatch):
    """Runtime.bundled: the kernels filed under one key build together where the device
    bundles; a refused bundle is remembered, and each kernel then builds alone."""
    from clgrad.backend.base import BUNDLES, MapKernel
    from clgrad.errors import KernelBuildError

    rt = clgrad.device(cl_device).runtime
    monkeypatch.setattr(rt, "bundle", True)
    monkeypatch.setattr(rt, "unbundled", set())
    a, b = MapKernel("cg_test_a", "in0", None), MapKernel("cg_test_b", "in0", None)
    key = ("test bundle",)
    monkeypatch.setitem(BUNDLES, key, [b, a])
    asked = []

    def build(kernels):
        asked.append(tuple(k.name for k in kernels))
        if len(kernels) > 1:
            raise KernelBuildError("refused")
        return kernels[0].name

    assert rt.bundled(key, a, build) == "cg_test_a"
    assert rt.bundled(key, b, build) == "cg_test_b"
    assert asked == [("cg_test_a", "cg_test_b"), ("cg_test_a",), ("cg_test_b",)]
    assert key in rt.unbundled
    asked.clear()
    assert rt.bundled(key, a, lambda kernels: len(kernels)) == 1  # remembered
    monkeypatch.setattr(rt, "unbundled", set())
    assert rt.bundled(key, a, lambda kernels: len(kernels)) == 2  # sorted, both
    assert rt.bundled(None, a, lambda kernels: len(kernels)) == 1  # no bundle


def test_mixed_operands_build_with_the_ops_of_their_compute_type(cl_device, monkeypatch):
    """An elementwise bundle is keyed by compute type and result dtype, not by the operands'
    storage types: ops over a float32 and an int64 tensor (computed in float) all come from the
    one program the first of them built, and give PyTorch's results."""
    import torch

    rt = clgrad.device(cl_device).runtime
    monkeypatch.setattr(rt, "bundle", True)
    monkeypatch.setattr(rt, "unbundled", set())
    monkeypatch.setattr(rt, "kernels", {})  # nothing built before this test stands in
    monkeypatch.setattr(rt, "programs", {})
    x = np.array([[1.5, -2.0, 3.25], [0.5, 7.0, -1.0]] * 3, np.float32)  # a shape of its own
    n = np.array([[2, 3, -1], [4, -5, 6]] * 3, np.int64)
    a, i = clgrad.tensor(x, device=cl_device), clgrad.tensor(n, device=cl_device)
    ta, ti = torch.from_numpy(x), torch.from_numpy(n)
    ops = ["add", "mul", "sub", "div", "maximum", "atan2"]
    for name in ops:
        got, want = getattr(clgrad, name)(a, i), getattr(torch, name)(ta, ti)
        assert got.dtype == clgrad.float32 and want.dtype == torch.float32
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)
        assert len(rt.programs) == 1, name


def test_a_build_in_another_thread_leaves_the_warning_filters_alone(cl_device):
    """Fused kernels build in a background thread: the build must not touch the process's
    warning filters (``warnings.catch_warnings`` swaps them for every thread, so a
    ``pytest.warns`` or a user's filter in the main thread would lose warnings meanwhile),
    and a compiler's remarks still reach no one."""
    import random
    import threading
    import warnings

    rt = clgrad.device(cl_device).runtime
    # a new source each run: a build from source, not a binary from the disk cache
    source = (
        f"__kernel void probe(__global float *a) {{ a[0] = {random.random()}f; }}\n"
        "__kernel void unused(__global uint *a) { if (a[0] < 0u) a[0] = 1u; }\n"
    )
    before = list(warnings.filters)
    changed = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inside = list(warnings.filters)
        build = threading.Thread(target=rt.build, args=(source, "probe"))
        build.start()
        while build.is_alive():
            if warnings.filters != inside:
                changed.append(list(warnings.filters))
        build.join()
    assert not changed
    assert not caught
    assert warnings.filters == before


# ---- PoCL on a CPU its LLVM cannot name (clgrad.backend.opencl.pocl_cpu) -------------------
@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="Linux's /proc/self/mem")
@pytest.mark.parametrize("strings", [["generic"], ["x86-64", "generic"], [], ["generic"] * 2])
def test_the_unnamed_cpu_field_is_repointed_only_when_it_is_the_one(strings):
    import ctypes
    import struct

    from clgrad.backend.opencl import pocl_cpu

    # a device struct of pointers and small integers, the pointers to C strings; as long as
    # the read (_DEVICE_BYTES), so nothing beyond it is read
    kept = [ctypes.create_string_buffer(s.encode()) for s in strings]
    words = [7, 0] + [ctypes.addressof(b) for b in kept] + [1 << 62]
    device = ctypes.create_string_buffer(struct.pack(f"<{len(words)}Q", *words), 1024)
    fd = os.open("/proc/self/mem", os.O_RDWR)
    try:
        done = pocl_cpu._repoint(fd, ctypes.addressof(device), "haswell")
    finally:
        os.close(fd)
    after = struct.unpack_from(f"<{len(words)}Q", device.raw)
    assert done == (strings.count("generic") == 1)
    for w, old, s in zip(after[2:], words[2:], strings):
        if done and s == "generic":
            assert ctypes.string_at(w) == b"haswell" and w != old
        else:
            assert w == old
    assert after[:2] == (7, 0) and after[-1] == 1 << 62


def test_pocl_devices_that_name_their_cpu_are_left_alone():
    import pyopencl as cl

    from clgrad.backend.opencl.pocl_cpu import needs_cpu_name

    class Device:
        type = cl.device_type.CPU
        version = "OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-znver3"

    assert not needs_cpu_name(Device())
    Device.version = Device.version.replace("znver3", "generic")
    assert needs_cpu_name(Device()) == (sys.platform == "linux" and os.uname().machine == "x86_64")
    Device.type = cl.device_type.GPU
    assert not needs_cpu_name(Device())


def test_every_opencl_device_builds(cl_device):
    """A device clgrad lists compiles: on a CPU PoCL's LLVM does not know (AMD Zen 5), PoCL 3.0
    named it "generic", which clang refuses, until clgrad named it (pocl_cpu)."""
    x = clgrad.arange(5.0, device=cl_device)
    assert (x * 2 + 1).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]


def _queued(rt):
    rt.flush()  # deferred elementwise launches (fusion) reach the queue
    return rt.gate is not None


def test_cpu_devices_hold_small_launches_behind_a_gate(cl_device, monkeypatch):
    from clgrad.backend.opencl import runtime as R

    rt = clgrad.device(cl_device).runtime
    if not rt.batch:
        pytest.skip("a GPU: every launch goes to the driver at once")
    monkeypatch.setattr(R, "BATCH_SECONDS", 1e9)  # only counts open it here
    x = clgrad.arange(16.0, device=cl_device)
    rt.synchronize()
    assert rt.gate is None
    sums = [x.sum()]
    assert _queued(rt)  # the launch waits behind the gate ...
    assert sums[0].item() == 120.0  # ... until the host waits for the queue
    assert rt.gate is None
    sums = [x.sum() for _ in range(rt.batch - 1)]
    assert _queued(rt) and rt.gated == rt.batch - 1
    sums.append(x.sum())  # the batch is full: the gate opens
    assert rt.gate is None
    x.sum()
    assert _queued(rt)
    big = clgrad.ones(R.HEAVY_ITEMS, device=cl_device) * 2  # heavy work opens it at once
    assert not _queued(rt)
    x.sum()
    rt.synchronize()
    assert rt.gate is None
    assert [s.item() for s in sums] == [120.0] * rt.batch and big.sum().item() == 2 * R.HEAVY_ITEMS


def test_the_gate_opens_for_every_wait_of_the_host(cl_device, monkeypatch):
    from clgrad.backend.opencl import runtime as R

    rt = clgrad.device(cl_device).runtime
    monkeypatch.setattr(R, "BATCH_SECONDS", 1e9)
    x = clgrad.arange(8.0, device=cl_device)
    waits = [
        lambda y: y.item(),
        lambda y: y.cpu(),
        lambda y: y.tolist(),
        lambda y: clgrad.tensor([1.0], device=cl_device),  # a host copy in
        lambda y: clgrad.synchronize(cl_device),
    ]
    for wait in waits:
        y = (x * 3).sum()
        _queued(rt)
        wait(y)
        assert rt.gate is None
        assert y.item() == 84.0


def test_threads_sharing_a_gated_device_never_wait_on_each_other(cl_device):
    import threading

    x = clgrad.arange(64.0, device=cl_device)
    results, errors = [], []

    def work(k):
        try:
            for _ in range(30):
                ys = [(x + k).sum() for _ in range(5)]  # behind a gate, never full
                results.append(ys[-1].item())  # a read opens this thread's or another's
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads) and not errors
    assert sorted(set(results)) == [2016.0 + 64 * k for k in range(3)]


def test_a_process_exits_with_launches_behind_the_gate(cl_device):
    r = run_py(
        f"""
        import clgrad
        from clgrad.backend.opencl import runtime
        runtime.BATCH_SECONDS = 1e9  # (a first launch builds: it would open the gate)
        x = clgrad.ones(8, device="{cl_device}")
        y = x.sum()
        x.device.runtime.flush()
        print(x.device.runtime.gate is not None or x.device.runtime.batch == 0)
        """
    )
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
