"""Small eager ops, where the host's dispatch cost is the whole cost: a library-agnostic set of
workloads (clgrad, an older clgrad for A/B, or torch: anything with PyTorch's API).

    python bench/small_ops.py                # cl:0 if there is one, else cpu
    python bench/small_ops.py --device cpu --repeat 20 --calls 2000
    python bench/small_ops.py --ab HEAD~3    # the same figures for that commit, interleaved
    python bench/small_ops.py --only polyfit --ab HEAD~3   # the workloads whose names match

Each figure is the Python thread's own CPU time per call (``time.thread_time``: the device runs
its work on other threads), the median of ``repeat`` samples of ``calls`` calls; with ``--ab``
the two versions alternate sample by sample in one process, so that load from other processes
falls on both alike.
"""

from __future__ import annotations

import argparse
import gc
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def workloads(lib, device):
    """name -> (function, ops per call): tiny tensors, so each op is all dispatch."""
    a = lib.ones(16, device=device)
    b = lib.ones(16, device=device)
    x = lib.ones(16, device=device)
    m = lib.ones(4, 8, device=device)
    w = lib.ones(8, 4, device=device)
    ag = lib.ones(16, device=device, requires_grad=True)
    bg = lib.ones(16, device=device, requires_grad=True)
    mg = lib.ones(4, 8, device=device, requires_grad=True)
    wg = lib.ones(8, 4, device=device, requires_grad=True)

    def add_():
        x.add_(b)

    def backward(make):
        def step():
            make().backward()

        return step

    return {
        "a + b": (lambda: a + b, 1),
        "a * 2.0": (lambda: a * 2.0, 1),
        "a.relu()": (lambda: a.relu(), 1),
        "a.sum()": (lambda: a.sum(), 1),
        "m @ w (4x8 @ 8x4)": (lambda: m @ w, 1),
        "x.add_(y)": (add_, 1),
        "a + b, requires_grad": (lambda: ag + bg, 1),
        "a * 2.0, requires_grad": (lambda: ag * 2.0, 1),
        "a.relu(), requires_grad": (lambda: ag.relu(), 1),
        "a.sum(), requires_grad": (lambda: ag.sum(), 1),
        "m @ w, requires_grad": (lambda: mg @ wg, 1),
        # forward and backward: per call, the ops of both passes and the gradient accumulation
        "(a * b).sum().backward()": (backward(lambda: (ag * bg).sum()), 1),
        "(m @ w).relu().sum().backward()": (backward(lambda: (mg @ wg).relu().sum()), 1),
    }


def polyfit_step(lib, device):
    """One step of the polynomial fit of PyTorch's "Learning PyTorch with Examples" (autograd
    version): 4 scalar weights, 2000 points, an update under no_grad."""
    x = lib.linspace(-math.pi, math.pi, 2000, device=device)
    y = lib.sin(x)
    lib.manual_seed(0)
    weights = [lib.randn((), device=device, requires_grad=True) for _ in range(4)]
    a, b, c, d = weights
    lr = 1e-6

    def step():
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            for w in weights:
                w -= lr * w.grad
                w.grad = None

    return step


def collected() -> None:
    """A full garbage collection, before a sample: the thousands of graphs a sample keeps
    would otherwise start one in some samples (a full collection walks every object, torch's
    modules too, when enough have survived since the last), which the next sample's ops would
    pay for: clgrad's nodes are Python objects, PyTorch's are not. The collections of young
    objects that a real loop also runs still happen inside the sample."""
    gc.collect()


def sample(fn, calls, sync):
    """Thread CPU time and wall time (seconds) per call over ``calls`` calls and a sync.

    Results are kept until the sync, which is inside the sample: clgrad defers elementwise
    launches to that point and leaves out work whose result was dropped before it ran, so the
    host time includes queueing every kernel and nothing is skipped."""
    sync()
    collected()
    kept = []
    t, w = time.thread_time(), time.perf_counter()
    for _ in range(calls):
        kept.append(fn())
    sync()
    host = time.thread_time() - t
    return host / calls, (time.perf_counter() - w) / calls


def measure(libs, device, repeat, calls, only=None):
    """{lib label: {name: (host us, wall us)}}: the libraries' samples interleaved; ``only``:
    the workloads whose names contain it."""
    suites = {}
    for label, (lib, dev) in libs.items():
        dev = device if dev is None else dev
        ops = {name: fn for name, (fn, _) in workloads(lib, dev).items()}
        ops["polyfit step"] = polyfit_step(lib, dev)
        sync = (lambda lib=lib: lib.synchronize()) if hasattr(lib, "synchronize") else None
        suites[label] = (ops, sync or (lambda: None))
    names = [n for n in next(iter(suites.values()))[0] if only is None or only in n]
    out = {label: {} for label in suites}
    for name in names:
        n = max(1, calls // 20) if name == "polyfit step" else calls
        samples = {label: [] for label in suites}
        for ops, sync in suites.values():  # warm-up: kernels built, caches filled
            sample(ops[name], max(1, n // 10), sync)
        for _ in range(repeat):
            for label, (ops, sync) in suites.items():
                samples[label].append(sample(ops[name], n, sync))
        for label, s in samples.items():
            out[label][name] = (
                statistics.median(h for h, _ in s) * 1e6,
                statistics.median(w for _, w in s) * 1e6,
            )
    return out


def old_clgrad(rev):
    """clgrad at git revision ``rev`` imported as ``clgrad_old`` (from a temporary copy)."""
    tmp = Path(tempfile.mkdtemp(prefix="clgrad-ab-"))
    archive = subprocess.run(
        ["git", "archive", rev, "clgrad", "kernels"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    shutil.move(tmp / "clgrad", tmp / "clgrad_old")
    # autograd treats Functions declared under "clgrad." as its own ops (a faster path)
    fn = tmp / "clgrad_old" / "autograd" / "function.py"
    fn.write_text(
        fn.read_text().replace(
            'cls.__module__.startswith("clgrad.")',
            'cls.__module__.startswith(("clgrad.", "clgrad_old."))',
        )
    )
    sys.path.insert(0, str(tmp))
    import clgrad_old

    return clgrad_old


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", help="clgrad device (default: cl:0 if there is one, else cpu)")
    p.add_argument("--repeat", type=int, default=20, help="samples per figure")
    p.add_argument("--calls", type=int, default=2000, help="calls per sample (polyfit: 1/20)")
    p.add_argument("--ab", metavar="REV", help="also measure clgrad at this git revision")
    p.add_argument("--no-torch", action="store_true", help="leave PyTorch CPU out")
    p.add_argument("--only", metavar="TEXT", help="only the workloads whose names contain TEXT")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import clgrad

    device = args.device or ("cl:0" if any(d.is_cl for d in clgrad.devices()) else "cpu")
    libs = {"clgrad": (clgrad, None)}
    if args.ab:
        libs = {f"clgrad {args.ab}": (old_clgrad(args.ab), None), **libs}
    if not args.no_torch:
        try:
            import torch

            torch.set_num_threads(1)  # the same host thread count as clgrad's dispatch
            libs["torch cpu"] = (torch, "cpu")
        except ImportError:
            pass
    results = measure(libs, device, args.repeat, args.calls, args.only)
    labels = list(results)
    print(f"host time per call, us (median of {args.repeat} x {args.calls} calls; {device})")
    print(f"| op | {' | '.join(labels)} |")
    print(f"| --- |{' ---: |' * len(labels)}")
    for name in results[labels[0]]:
        cells = " | ".join(f"{results[label][name][0]:.1f}" for label in labels)
        print(f"| {name} | {cells} |")
    if "polyfit step" in results[labels[0]]:
        wall = " | ".join(f"{results[label]['polyfit step'][1]:.1f}" for label in labels)
        print(f"| polyfit step, wall time | {wall} |")
    return results


if __name__ == "__main__":
    main()
