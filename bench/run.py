"""clgrad's benchmark suite: each device against NumPy (and PyTorch CPU when installed), in one run.

    python bench/run.py                 # every device, full sizes
    python bench/run.py --quick         # small sizes (the test suite runs this)
    python bench/run.py --devices cl:0  # only these

Every figure is a median of repeated runs after a warm-up. Results go to bench/results/ as
JSON per device (vendor, device, driver, date) plus a Markdown table and a PNG chart;
bench/compare.py renders the cross-vendor comparison from every JSON there.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import clgrad  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def median_time(fn, sync, repeat=7, warmup=2, inner=1):
    """Median seconds of one call of ``fn`` (each sample runs it ``inner`` times, then syncs)."""
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - t) / inner)
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
        print(
            f"  {name:<34} {ours:10.2f} {unit:<7} numpy {ref_np or float('nan'):10.2f}  {ratio}",
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
            ours = flop / self.t(lambda ta=ta, tb=tb: ta @ tb)
            ref = flop / median_time(lambda a=a, b=b: a @ b, lambda: None, self.repeat)

            def torch_gflops(T, a=a, b=b, flop=flop):
                ta, tb = T.from_numpy(a), T.from_numpy(b)
                return flop / median_time(lambda: ta @ tb, lambda: None, self.repeat)

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
        ref = gb / median_time(lambda: np.add(a, b, out=c), lambda: None, self.repeat)
        self.add("elementwise", "a + b contiguous float32", "GB/s", ours, ref)
        rows = 1 << (9 if self.quick else 12)
        m = a[: rows * rows].reshape(rows, rows)
        v = b[:rows]
        tm, tv = clgrad.tensor(m, device=self.dev), clgrad.tensor(v, device=self.dev)
        out = np.empty_like(m)
        gb = 2 * m.size * 4 / 1e9
        ours = gb / self.t(lambda: tm + tv)
        ref = gb / median_time(lambda: np.add(m, v, out=out), lambda: None, self.repeat)
        self.add("elementwise", "matrix + row broadcast float32", "GB/s", ours, ref)
        ours = gb / self.t(lambda: tm.T + tv)
        ref = gb / median_time(lambda: np.add(m.T, v, out=out), lambda: None, self.repeat)
        self.add("elementwise", "transposed + row broadcast", "GB/s", ours, ref)
        ours = 2 * n * 4 / 1e9 / self.t(lambda: ta.exp())
        ref = 2 * n * 4 / 1e9 / median_time(lambda: np.exp(a, out=c), lambda: None, self.repeat)
        self.add("elementwise", "exp float32", "GB/s", ours, ref)

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
            gb / median_time(lambda: a.sum(), lambda: None, self.repeat),
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
            gb / median_time(lambda: m.sum(1), lambda: None, self.repeat),
        )
        self.add(
            "reduction",
            "sum over first dim",
            "GB/s",
            gb / self.t(lambda: tm.sum(0)),
            gb / median_time(lambda: m.sum(0), lambda: None, self.repeat),
        )

        def np_softmax():
            e = np.exp(m - m.max(1, keepdims=True))
            return e / e.sum(1, keepdims=True)

        self.add(
            "reduction",
            "softmax over last dim",
            "GB/s",
            2 * gb / self.t(lambda: tm.softmax(1)),
            2 * gb / median_time(np_softmax, lambda: None, self.repeat),
        )

    def dispatch(self):
        """Host time to enqueue one small op: the Python thread's own CPU time over many ops
        (the device works on other threads), and the wall time including the device's work."""
        a = clgrad.ones(16, device=self.dev)
        b = clgrad.ones(16, device=self.dev)
        k = 200 if self.quick else 2000
        na, nb = np.ones(16, np.float32), np.ones(16, np.float32)

        def host_us(fn):
            samples = []
            for _ in range(self.repeat):
                self.sync()
                t = time.thread_time()
                for _ in range(k):
                    fn()
                samples.append((time.thread_time() - t) / k * 1e6)
            self.sync()
            return statistics.median(samples)

        host_us(lambda: a + b)  # warm-up
        ref = median_time(lambda: na + nb, lambda: None, self.repeat, inner=k) * 1e6
        self.add("dispatch", "small op a + b, host time", "us", host_us(lambda: a + b), ref)
        self.add(
            "dispatch",
            "small op a + b, with device work",
            "us",
            self.t(lambda: a + b, inner=k) * 1e6,
            ref,
        )
        # the other small ops of bench/small_ops.py (which also compares with a git revision)
        import small_ops

        for name, (fn, _) in small_ops.workloads(clgrad, self.dev).items():
            if name != "a + b":
                host_us(fn)  # warm-up
                self.add("dispatch", f"small op {name}, host time", "us", host_us(fn), None)
        step = small_ops.polyfit_step(clgrad, self.dev)
        polyfit_us = self.t(step) * 1e6
        self.add("dispatch", "polyfit step (4 weights, 2000 points)", "us", polyfit_us, None)

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
        """conv2d and training steps: clgrad on the device, NumPy by hand, PyTorch CPU."""
        import workloads

        ours = {
            **workloads.conv_steps(self.dev, self.quick),
            **workloads.training_steps(self.dev, self.quick),
        }
        ref = workloads.numpy_steps(self.quick)
        ref_torch = self._torch(lambda T: workloads.torch_steps(self.quick)) or {}
        host = lambda fn: median_time(fn, lambda: None, self.repeat) * 1e3  # noqa: E731
        for name, fn in ours.items():
            self.add(
                "training",
                name,
                "ms",
                self.t(fn) * 1e3,
                host(ref[name]),
                host(ref_torch[name]) if name in ref_torch else None,
            )

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


GROUPS = ["elementwise", "reductions", "matmul", "dispatch", "compile_times"]


def slug(result):
    return re.sub(r"[^a-z0-9]+", "-", f"{result['vendor']}-{result['name']}".lower()).strip("-")


def markdown(result):
    lines = [
        f"### {result['vendor']} {result['name']} ({result['device']}, driver "
        f"{result['driver']}, {result['date']})",
        "",
        "| benchmark | unit | clgrad | NumPy | ratio |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in result["results"]:
        ref = r["numpy"]
        if ref is None:
            ratio = ""
        elif r["unit"] in ("ms", "us", "s"):
            ratio = f"{ref / r['clgrad']:.2f}x"
        else:
            ratio = f"{r['clgrad'] / ref:.2f}x"
        ref_s = "" if ref is None else f"{ref:.2f}"
        lines.append(f"| {r['name']} | {r['unit']} | {r['clgrad']:.2f} | {ref_s} | {ratio} |")
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
    p.add_argument("--only", nargs="*", choices=GROUPS + ["training"], help="run these groups")
    args = p.parse_args(argv)
    devices = args.devices or [str(d) for d in clgrad.devices() if d.is_cl] or ["cpu"]
    groups = args.only or GROUPS + ["training"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for d in devices:
        result = Suite(d, args.quick).run(groups)
        name = slug(result) + ("-quick" if args.quick else "")
        (out / f"{name}.json").write_text(json.dumps(result, indent=1))
        (out / f"{name}.md").write_text(markdown(result))
        chart(result, out / f"{name}.png")
        written.append(out / f"{name}.json")
        print(f"wrote {out / name}.json/.md/.png")
    return written


if __name__ == "__main__":
    main()
