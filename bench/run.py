"""clgrad's benchmark suite: each device against NumPy and PyTorch CPU (when installed), in one run.

    python bench/run.py                          # every device, every group, full sizes
    python bench/run.py --quick                  # small sizes (the test suite runs this)
    python bench/run.py --devices cl:0           # only these devices
    python bench/run.py --only dispatch          # only these groups (one group: a quick run)
    python bench/run.py --only matmul training --quick

Groups (``--only``; all of them by default):
    elementwise    a + b, broadcast, transposed and exp bandwidth
    reductions     sum (all, last dim, first dim) and softmax bandwidth
    matmul         float32 GFLOP/s at three sizes
    dispatch       host time per small eager op, and the polynomial-fit step (eager, and
                   compiled with clgrad.compile where it exists)
    compile_times  one kernel built cold, then from the disk cache
    training       conv2d, MLP and CNN training steps, and the two models of
                   examples/train_digits.py
    main_job       examples/train_digits.py as a subprocess, from empty kernel caches
                   (CLGRAD_CACHE_DIR, POCL_CACHE_DIR) and again with them warm

Every figure is a median of repeated runs after a warm-up; PyTorch CPU runs the same workload
in the same process beside each figure it has one for. Results go to bench/results/ as
JSON per device (vendor, device, driver, date) plus a Markdown table and a PNG chart;
bench/compare.py renders the cross-vendor comparison from every JSON there.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import clgrad  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

# training steps are timed as a training loop runs them: this many queued one after another,
# then one sync (a loop reads its loss every so often, not after every step); a sync per step
# would add the device's wake-up latency to every step, which PyTorch's CPU path never pays
LOOP_STEPS = 10
# the polyfit step's loop per sample (clgrad eager and compiled, PyTorch): 10 steps of a
# millisecond after the settling pause read 30-50% above a loop's steady rate, on both sides
POLYFIT_STEPS = 100

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


# Every timing starts on quiet cores: it first waits SETTLE_S seconds with nothing running,
# then warms up for at least WARM_S seconds. NumPy's OpenBLAS and PyTorch's OpenMP threads keep
# spinning on the cores for about 0.1 s after a call returns, and a CPU OpenCL device runs its
# kernels on worker threads of its own: timed in that window, either side shares the cores with
# the other's idle threads (clgrad's 512^3 matmul measured 170-270 GFLOP/s right after a NumPy
# matmul, 340 on quiet cores). ``--quick`` (the test suite) sets both to 0.
SETTLE_S = 0.3
WARM_S = 0.1


def median_time(fn, sync, repeat=7, warmup=2, inner=1):
    """Median seconds of one call of ``fn`` (each sample runs it ``inner`` times, then syncs).

    Each call's result is kept until the sync: clgrad defers elementwise launches and leaves
    out work whose result is dropped before it runs, so a discarded result would time nothing.
    """
    if SETTLE_S:
        time.sleep(SETTLE_S)
    start, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - start < WARM_S:
        kept = [fn()]
        sync()
        done += 1
    kept = []
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            kept.append(fn())
        sync()
        samples.append((time.perf_counter() - t) / inner)
        kept.clear()
    return statistics.median(samples)


class Suite:
    def __init__(self, device, quick):
        self.dev = clgrad.device(device)
        self.quick = quick
        self.rows = []  # (group, name, unit, clgrad, numpy, torch)
        self.sync = lambda: clgrad.synchronize(self.dev)
        self.repeat = 3 if quick else 7

    def add(self, group, name, unit, ours, ref_np, ref_torch=None):
        self.rows.append(
            {
                "group": group,
                "name": name,
                "unit": unit,
                "clgrad": ours,
                "numpy": ref_np,
                "torch": ref_torch,
            }
        )
        ratio = f"{ours / ref_np:.2f}x numpy" if ref_np else ""
        if unit in ("ms", "us", "s") and ref_np:
            ratio = f"{ref_np / ours:.2f}x numpy speed"
        nan = float("nan")
        print(
            f"  {name:<34} {ours:10.2f} {unit:<7} numpy {ref_np or nan:10.2f}  "
            f"torch {ref_torch or nan:10.2f}  {ratio}",
            flush=True,
        )

    def t(self, fn, inner=1):
        return median_time(fn, self.sync, repeat=self.repeat, inner=inner)

    # ---- the suite -------------------------------------------------------------------------
    def matmul(self):
        for n in [64, 128] if self.quick else [256, 512, 1024]:
            a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
            b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
            ta, tb = clgrad.tensor(a, device=self.dev), clgrad.tensor(b, device=self.dev)
            flop = 2 * n**3 / 1e9
            # throughput, as a loop of products runs: LOOP_STEPS queued, then one sync (a sync
            # per product would add the device's wake-up latency, ~50 us here, to each)
            ours = flop / self.t(lambda ta=ta, tb=tb: ta @ tb, inner=LOOP_STEPS)
            ref = flop / median_time(
                lambda a=a, b=b: a @ b, lambda: None, self.repeat, inner=LOOP_STEPS
            )

            def torch_gflops(T, a=a, b=b, flop=flop):
                ta, tb = T.from_numpy(a), T.from_numpy(b)
                return flop / median_time(
                    lambda: ta @ tb, lambda: None, self.repeat, inner=LOOP_STEPS
                )

            name = f"matmul {n}x{n}x{n} float32"
            self.add("matmul", name, "GFLOP/s", ours, ref, self._torch(torch_gflops))

    def elementwise(self):
        n = 1 << (18 if self.quick else 24)
        rng = np.random.default_rng(0)
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        c = np.empty_like(a)
        ta, tb = clgrad.tensor(a, device=self.dev), clgrad.tensor(b, device=self.dev)
        gb = 3 * n * 4 / 1e9
        ours = gb / self.t(lambda: ta + tb)
        ref = gb / self.host(lambda: np.add(a, b, out=c))
        to = self._torch(lambda T: gb / self.host_torch(T.add, a, b))
        self.add("elementwise", "a + b contiguous float32", "GB/s", ours, ref, to)
        rows = 1 << (9 if self.quick else 12)
        m = a[: rows * rows].reshape(rows, rows)
        v = b[:rows]
        tm, tv = clgrad.tensor(m, device=self.dev), clgrad.tensor(v, device=self.dev)
        out = np.empty_like(m)
        gb = 2 * m.size * 4 / 1e9
        ours = gb / self.t(lambda: tm + tv)
        ref = gb / self.host(lambda: np.add(m, v, out=out))
        to = self._torch(lambda T: gb / self.host_torch(T.add, m, v))
        self.add("elementwise", "matrix + row broadcast float32", "GB/s", ours, ref, to)
        ours = gb / self.t(lambda: tm.T + tv)
        ref = gb / self.host(lambda: np.add(m.T, v, out=out))
        to = self._torch(lambda T: gb / self.host_torch(lambda x, y: x.T + y, m, v))
        self.add("elementwise", "transposed + row broadcast", "GB/s", ours, ref, to)
        gb = 2 * n * 4 / 1e9
        ours = gb / self.t(lambda: ta.exp())
        ref = gb / self.host(lambda: np.exp(a, out=c))
        to = self._torch(lambda T: gb / self.host_torch(T.exp, a))
        self.add("elementwise", "exp float32", "GB/s", ours, ref, to)
        # a chain: one fused kernel here, three passes over memory in NumPy and eager torch
        ours = gb / self.t(lambda: (2 * ta + 1).exp())
        ref = gb / self.host(lambda: np.exp(2 * a + 1))
        to = self._torch(lambda T: gb / self.host_torch(lambda x: (2 * x + 1).exp(), a))
        self.add("elementwise", "exp(2x + 1) float32 (a chain)", "GB/s", ours, ref, to)

    def reductions(self):
        n = 1 << (18 if self.quick else 24)
        a = np.random.default_rng(0).random(n, dtype=np.float32)
        ta = clgrad.tensor(a, device=self.dev)
        gb = n * 4 / 1e9
        self.add(
            "reduction",
            "sum (all) float32",
            "GB/s",
            gb / self.t(lambda: ta.sum()),
            gb / self.host(lambda: a.sum()),
            self._torch(lambda T: gb / self.host_torch(T.sum, a)),
        )
        rows = 1 << (9 if self.quick else 12)
        m = a[: rows * rows].reshape(rows, rows)
        tm = clgrad.tensor(m, device=self.dev)
        gb = m.size * 4 / 1e9
        self.add(
            "reduction",
            "sum over last dim",
            "GB/s",
            gb / self.t(lambda: tm.sum(1)),
            gb / self.host(lambda: m.sum(1)),
            self._torch(lambda T: gb / self.host_torch(lambda x: x.sum(1), m)),
        )
        self.add(
            "reduction",
            "sum over first dim",
            "GB/s",
            gb / self.t(lambda: tm.sum(0)),
            gb / self.host(lambda: m.sum(0)),
            self._torch(lambda T: gb / self.host_torch(lambda x: x.sum(0), m)),
        )

        def np_softmax():
            e = np.exp(m - m.max(1, keepdims=True))
            return e / e.sum(1, keepdims=True)

        self.add(
            "reduction",
            "softmax over last dim",
            "GB/s",
            2 * gb / self.t(lambda: tm.softmax(1)),
            2 * gb / self.host(np_softmax),
            self._torch(lambda T: 2 * gb / self.host_torch(lambda x: x.softmax(1), m)),
        )

    def dispatch(self):
        """Host time to enqueue one small op: the Python thread's own CPU time over many ops
        (the device works on other threads), and the wall time including the device's work;
        PyTorch CPU runs each op on its tensors beside it."""
        import small_ops

        a = clgrad.ones(16, device=self.dev)
        b = clgrad.ones(16, device=self.dev)
        k = 200 if self.quick else 2000
        na, nb = np.ones(16, np.float32), np.ones(16, np.float32)
        torch_ops = self._torch(lambda T: small_ops.workloads(T, "cpu")) or {}

        def host_us(fn, sync=self.sync):
            # results kept and the sync inside the sample: clgrad queues deferred launches at
            # the sync and never runs work whose result was dropped (see median_time)
            fn()  # warm-up
            samples = []
            for _ in range(self.repeat):
                sync()
                kept = None
                if not self.quick:  # 70 ms each with torch loaded: the test suite's run skips it
                    small_ops.collected()
                kept = []
                t = time.thread_time()
                for _ in range(k):
                    kept.append(fn())
                sync()
                samples.append((time.thread_time() - t) / k * 1e6)
            return statistics.median(samples)

        def torch_us(name):
            return host_us(torch_ops[name][0], lambda: None) if name in torch_ops else None

        ref = median_time(lambda: na + nb, lambda: None, self.repeat, inner=k) * 1e6
        ours = host_us(lambda: a + b)
        self.add("dispatch", "small op a + b, host time", "us", ours, ref, torch_us("a + b"))
        self.add(
            "dispatch",
            "small op a + b, with device work",
            "us",
            self.t(lambda: a + b, inner=k) * 1e6,
            ref,
            torch_us("a + b"),
        )
        # the other small ops of bench/small_ops.py (which also compares with a git revision)
        for name, (fn, _) in small_ops.workloads(clgrad, self.dev).items():
            if name != "a + b":
                self.add(
                    "dispatch",
                    f"small op {name}, host time",
                    "us",
                    host_us(fn),
                    None,
                    torch_us(name),
                )
        name = "polyfit step (4 weights, 2000 points)"
        steps = LOOP_STEPS if self.quick else POLYFIT_STEPS
        to = self._torch(lambda T: self.host(small_ops.polyfit_step(T, "cpu"), steps) * 1e6)
        step = small_ops.polyfit_step(clgrad, self.dev)
        self.add("dispatch", name, "us", self.t(step, inner=steps) * 1e6, None, to)
        if hasattr(clgrad, "compile"):  # the compiled step against PyTorch's eager one
            compiled = clgrad.compile(small_ops.polyfit_step(clgrad, self.dev))
            us = self.t(compiled, inner=steps) * 1e6
            self.add("dispatch", f"{name}, clgrad.compile", "us", us, None, to)

    def compile_times(self):
        if self.dev.is_cpu:
            return
        rt = self.dev.runtime
        from clgrad.backend.opencl import runtime as R

        src = "__kernel void cg_bench_probe(__global float *x) { x[get_global_id(0)] *= 2.0f; }"
        tag = f"// {time.time_ns()}\n"
        t = time.perf_counter()
        rt.build(tag + src, "bench")  # new source: a cold build, then saved to disk
        cold = time.perf_counter() - t
        t = time.perf_counter()
        rt.build(tag + src, "bench")  # the same source: loaded from the disk cache
        warm = time.perf_counter() - t
        _ = R
        self.add("compile", "kernel build cold", "ms", cold * 1e3, None)
        self.add("compile", "kernel build warm (disk cache)", "ms", warm * 1e3, None)

    def training(self):
        """conv2d and training steps: clgrad on the device, NumPy by hand, PyTorch CPU; then the
        two models of examples/train_digits.py, against PyTorch CPU."""
        import workloads

        # conv2d alone: one call, then the sync (a forward kept queued ten deep would keep ten
        # column matrices alive, which no loop does); the training steps as a loop runs them
        conv = workloads.conv_steps(self.dev, self.quick)
        ours = {**conv, **workloads.training_steps(self.dev, self.quick)}
        ref = workloads.numpy_steps(self.quick)
        ref_torch = self._torch(lambda T: workloads.torch_steps(self.quick)) or {}
        torch_ms = {}
        for name, fn in ours.items():
            inner = 1 if name in conv else LOOP_STEPS  # PyTorch's loop as long as ours
            if name in ref_torch:
                torch_ms[name] = self.host(ref_torch[name], inner) * 1e3
            self.add(
                "training",
                name,
                "ms",
                self.t(fn, inner=inner) * 1e3,
                self.host(ref[name]) * 1e3 if name in ref else None,
                torch_ms.get(name),
            )
        if hasattr(clgrad, "compile"):  # the same steps captured, against PyTorch's eager ones
            for name in (workloads.MLP2, workloads.CNN):
                compiled = clgrad.compile(ours[name])
                ms = self.t(compiled, inner=LOOP_STEPS) * 1e3
                self.add("training", f"{name}, clgrad.compile", "ms", ms, None, torch_ms.get(name))
        digits_torch = self._torch(lambda T: workloads.digits_steps(T, "cpu")) or {}
        for name, fn in workloads.digits_steps(clgrad, self.dev).items():
            to = self.host(digits_torch[name], LOOP_STEPS) * 1e3 if name in digits_torch else None
            self.add("training", name, "ms", self.t(fn, inner=LOOP_STEPS) * 1e3, None, to)

    def main_job(self):
        """examples/train_digits.py on this device as a subprocess: first with empty kernel
        caches (clgrad's and PoCL's), then again with the caches the first run filled."""
        if self.dev.is_cpu:
            return
        root = Path(__file__).resolve().parents[1]
        script = [sys.executable, str(root / "examples" / "train_digits.py")]
        script += ["--quick"] if self.quick else []
        with tempfile.TemporaryDirectory(prefix="clgrad-bench-") as tmp:
            env = dict(
                os.environ,
                CLGRAD_DEVICE=str(self.dev),
                CLGRAD_CACHE_DIR=os.path.join(tmp, "clgrad"),
                POCL_CACHE_DIR=os.path.join(tmp, "pocl"),
                PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
            )
            seconds = []
            for _ in ("cold", "warm"):
                t = time.perf_counter()
                subprocess.run(
                    [*script, "--plot", os.path.join(tmp, "loss.png")],
                    env=env,
                    cwd=tmp,
                    check=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                seconds.append(time.perf_counter() - t)
        cold, warm = seconds
        self.add("main job", "train_digits.py, cold caches", "s", cold, None)
        self.add("main job", "train_digits.py, warm caches", "s", warm, None)
        self.add("main job", "train_digits.py, cold / warm", "x", cold / warm, None)

    def host(self, fn, inner=1):
        """Median seconds of a host (NumPy, PyTorch CPU) call: nothing to wait for; ``inner``
        calls per sample, as a loop runs them (a step timed alone right after the settling
        pause runs on cold caches)."""
        return median_time(fn, lambda: None, self.repeat, inner=inner)

    def host_torch(self, fn, *arrays):
        """``host`` of ``fn`` over PyTorch tensors viewing ``arrays``."""
        import torch

        ts = [torch.from_numpy(np.ascontiguousarray(x)) for x in arrays]
        return self.host(lambda: fn(*ts))

    def _torch(self, fn):
        if not HAVE_TORCH:
            return None
        import torch

        torch.set_num_threads(max(1, len(__import__("os").sched_getaffinity(0))))
        return fn(torch)

    def run(self, groups):
        print(f"{self.dev} — {self.dev.vendor} {self.dev.name} (driver {self.dev.driver_version})")
        for g in groups:
            getattr(self, g)()
        return {
            "device": str(self.dev),
            "vendor": self.dev.vendor,
            "name": self.dev.name,
            "platform": self.dev.platform,
            "driver": self.dev.driver_version,
            "host": platform.processor() or platform.machine(),
            "date": datetime.date.today().isoformat(),
            "quick": self.quick,
            "numpy": np.__version__,
            "results": self.rows,
        }


GROUPS = [
    "elementwise",
    "reductions",
    "matmul",
    "dispatch",
    "compile_times",
    "training",
    "main_job",
]


def merged(previous, result, groups):
    """``result`` of a run of some ``groups`` (``--only``) over the ``previous`` results of the
    same device: the other groups' rows are kept, so that a quick run of one group doesn't
    drop the rest of a committed table.

    >>> old = {"results": [{"group": "matmul", "clgrad": 1.0}, {"group": "main job", "clgrad": 9}]}
    >>> new = {"results": [{"group": "main job", "clgrad": 8.0}]}
    >>> [(r["group"], r["clgrad"]) for r in merged(old, new, ["main_job"])["results"]]
    [('matmul', 1.0), ('main job', 8.0)]
    """
    # the groups this run measured, by the names its rows carry ("main job" for --only
    # main_job): their previous rows are replaced, not kept beside the new ones
    ran = {r["group"] for r in result["results"]}
    rows = [r for r in previous.get("results", []) if r["group"] not in ran]
    rows += result["results"]
    order = {g: i for i, g in enumerate(GROUPS)}
    rows.sort(key=lambda r: order.get(r["group"], len(order)))  # stable: within a group as run
    return {**result, "results": rows}


def slug(result):
    return re.sub(r"[^a-z0-9]+", "-", f"{result['vendor']}-{result['name']}".lower()).strip("-")


def _ratio(ours, ref, unit) -> str:
    """How many times faster clgrad is than ``ref`` (a time or a rate); empty without one."""
    if not ref:
        return ""
    return f"{ref / ours:.2f}x" if unit in ("ms", "us", "s") else f"{ours / ref:.2f}x"


def markdown(result):
    lines = [
        f"### {result['vendor']} {result['name']} ({result['device']}, driver "
        f"{result['driver']}, {result['date']})",
        "",
        "| benchmark | unit | clgrad | NumPy | ratio | PyTorch CPU | vs PyTorch |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["results"]:
        ref, ref_t, unit = r["numpy"], r.get("torch"), r["unit"]
        ref_s = "" if ref is None else f"{ref:.2f}"
        torch_s = "" if ref_t is None else f"{ref_t:.2f}"
        ours = r["clgrad"]
        lines.append(
            f"| {r['name']} | {unit} | {ours:.2f} | {ref_s} | {_ratio(ours, ref, unit)} | "
            f"{torch_s} | {_ratio(ours, ref_t, unit)} |"
        )
    return "\n".join(lines) + "\n"


def chart(result, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = [r for r in result["results"] if r["numpy"]]
    ratios = [
        (r["numpy"] / r["clgrad"]) if r["unit"] in ("ms", "us", "s") else (r["clgrad"] / r["numpy"])
        for r in rows
    ]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    ax.barh([r["name"] for r in rows], ratios, color="#3b7dd8")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("speed relative to NumPy on the same machine (higher is better)")
    ax.set_title(f"{result['vendor']} {result['name']}")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--devices", nargs="*", help="device names (default: every OpenCL device)")
    p.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    p.add_argument("--out", default=str(RESULTS), help="where JSON/Markdown/PNG go")
    p.add_argument(
        "--only",
        nargs="+",
        choices=GROUPS,
        metavar="GROUP",
        help=f"run only these groups, of: {', '.join(GROUPS)} (see above)",
    )
    args = p.parse_args(argv)
    if args.quick:
        global SETTLE_S, WARM_S
        SETTLE_S = WARM_S = 0.0
    devices = args.devices or [str(d) for d in clgrad.devices() if d.is_cl] or ["cpu"]
    groups = args.only or GROUPS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for d in devices:
        result = Suite(d, args.quick).run(groups)
        name = slug(result) + ("-quick" if args.quick else "")
        if args.only and (out / f"{name}.json").exists():
            result = merged(json.loads((out / f"{name}.json").read_text()), result, groups)
        (out / f"{name}.json").write_text(json.dumps(result, indent=1))
        (out / f"{name}.md").write_text(markdown(result))
        chart(result, out / f"{name}.png")
        written.append(out / f"{name}.json")
        print(f"wrote {out / name}.json/.md/.png")
    return written


if __name__ == "__main__":
    main()
