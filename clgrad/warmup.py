"""``python -m clgrad warmup [device ...] [--jobs N] [--only NAME ...]``: builds ahead of time the
kernels that common workloads use, so that a first training run does not stop to compile.

Each workload is a few steps of the real thing on small data: an MLP and a small CNN trained
with SGD and Adam, a transformer encoder layer, an LSTM, and every declared elementwise op and
reduction in float32 on contiguous and strided inputs. Running them builds exactly the programs
(and, on drivers that generate code per kernel at its first launch, that code) a program using
the same layers will ask for, and leaves them in the caches every later process reads: clgrad's
(``CLGRAD_CACHE_DIR``) or the driver's own (PoCL's ``POCL_CACHE_DIR``).

Workloads run in ``--jobs`` processes at once (default: one per core, at most 4): a driver's
compiler is single-threaded within a process (PoCL holds one lock for all its builds), so the
cores of the machine build in parallel only from separate processes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import clgrad

from .device import resolve


def _train(device, model, x, target, optimizers=("SGD", "Adam")) -> None:
    """A few steps of each optimizer (two batch sizes: the last batch of an epoch is smaller),
    then an evaluation pass."""
    model = model.to(device)
    for name in optimizers:
        opt = getattr(clgrad.optim, name)(model.parameters(), lr=1e-3)
        for n in (len(x), len(x) - 1):
            loss = clgrad.nn.functional.cross_entropy(model(x[:n]), target[:n])
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
    model.eval()
    with clgrad.no_grad():
        model(x).argmax(1).tolist()


def _labels(device, n, classes=10):
    return clgrad.randint(0, classes, (n,), device=device)


def mlp(device) -> None:
    """``Linear``/``ReLU``/``Dropout`` layers and cross-entropy, trained with SGD and Adam."""
    nn = clgrad.nn
    model = nn.Sequential(
        nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 10)
    )
    _train(device, model, clgrad.rand(16, 1, 8, 8, device=device), _labels(device, 16))


def cnn(device) -> None:
    """``Conv2d``, ``BatchNorm2d``, pooling and ``Linear``, trained with SGD and Adam."""
    nn = clgrad.nn
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(64, 10),
    )
    _train(device, model, clgrad.rand(8, 1, 8, 8, device=device), _labels(device, 8))


def transformer(device) -> None:
    """A ``TransformerEncoderLayer`` (attention, ``LayerNorm``, GELU) under AdamW."""
    nn = clgrad.nn
    model = nn.Sequential(
        nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, activation="gelu", batch_first=True),
        nn.Flatten(),
        nn.Linear(16 * 5, 10),
    )
    _train(device, model, clgrad.rand(4, 5, 16, device=device), _labels(device, 4), ("AdamW",))


def lstm(device) -> None:
    """An ``LSTM`` and an ``Embedding`` under Adam."""
    nn = clgrad.nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(20, 8)
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.head = nn.Linear(16, 10)

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.head(out[:, -1])

    tokens = clgrad.randint(0, 20, (4, 6), device=device)
    _train(device, Tagger(), tokens, _labels(device, 4), ("Adam",))


def ops(device, part: int = 0, parts: int = 1) -> None:
    """Every declared elementwise op and reduction in float32, contiguous, broadcast and
    strided (the self-test's float32 battery, without its checking); ``part`` of ``parts``
    shares it between processes."""
    from .selftest import checks

    battery = [c for c in checks(device, only=["float32"]) if c.family != "grad"]
    for check in battery[part::parts]:
        try:
            check.fn()
        except Exception:  # noqa: BLE001 - a check that fails here is selftest's to report
            pass


WORKLOADS: dict[str, Callable] = {
    "mlp": mlp,
    "cnn": cnn,
    "transformer": transformer,
    "lstm": lstm,
    "ops": ops,
}


def _run_task(device_name: str, workload: str, part: int, parts: int) -> tuple[str, float]:
    start = time.perf_counter()
    device = resolve(device_name)
    clgrad.manual_seed(0)
    if workload == "ops":
        ops(device, part, parts)
    else:
        WORKLOADS[workload](device)
    clgrad.synchronize(device)
    return workload, time.perf_counter() - start


def default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def run(devices=None, *, jobs=None, only=None, log=None) -> dict:
    """Runs the workloads (``only``: those named) on each device, ``jobs`` processes at a time
    (1: in this process), and returns seconds per workload and device.

    >>> times = run(["cpu"], jobs=1, only=["mlp"])
    >>> list(times)
    ['cpu mlp']
    """
    log = log or (lambda message: None)
    names = [str(resolve(d)) for d in devices] if devices else _default_devices()
    jobs = default_jobs() if jobs is None else max(1, int(jobs))
    chosen = [w for w in WORKLOADS if not only or w in only]
    unknown = set(only or ()) - set(WORKLOADS)
    if unknown:
        raise ValueError(f"unknown workloads {sorted(unknown)}; choose from {list(WORKLOADS)}")
    # the op battery is the longest: it is cut into as many parts as there are processes
    tasks = [
        (dev, w, part, jobs if w == "ops" else 1)
        for dev in names
        for w in chosen
        for part in range(jobs if w == "ops" else 1)
    ]
    times: dict[str, float] = {}
    if jobs == 1:
        results = [_run_task(*t) for t in tasks]
    else:
        # spawn, not fork: a forked child of a process that used OpenCL cannot use it
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            results = [f.result() for f in [pool.submit(_run_task, *t) for t in tasks]]
    for (dev, *_), (workload, seconds) in zip(tasks, results):
        key = f"{dev} {workload}"
        times[key] = round(times.get(key, 0.0) + seconds, 2)
        log(f"{key}: {seconds:.1f} s")
    return times


def _default_devices() -> list[str]:
    return [str(d) for d in clgrad.devices() if d.is_cl] or ["cpu"]


def main(argv=None, out=None) -> int:
    """``python -m clgrad warmup [device ...] [--jobs N] [--only NAME ...]``.

    >>> main(["cpu", "--jobs", "1", "--only", "mlp"])
    cpu mlp: ... s
    warm: 1 workloads on cpu in ... s
    0
    """
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="python -m clgrad warmup",
        description="Builds the kernels common workloads use, ahead of a first run.",
    )
    parser.add_argument("devices", nargs="*", help="cpu, cl:0, ... (default: every OpenCL device)")
    parser.add_argument(
        "--jobs", type=int, default=None, help=f"processes at once (default {default_jobs()})"
    )
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", choices=list(WORKLOADS), help="workloads to run"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    devices = args.devices or _default_devices()
    run(devices, jobs=args.jobs, only=args.only, log=lambda m: print(m, file=out, flush=True))
    n = len(args.only or WORKLOADS)
    print(
        f"warm: {n} workloads on {', '.join(devices)} in {time.perf_counter() - start:.1f} s",
        file=out,
    )
    return 0
