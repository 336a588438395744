"""``python -m clgrad info``: the devices clgrad sees. ``python -m clgrad demo``: a tiny run.
``python -m clgrad selftest [device ...]``: every kernel family checked against NumPy on each
device (see ``clgrad.selftest``; ``python -m clgrad selftest --help``). ``python -m clgrad
warmup [device ...]``: builds the kernels common workloads use ahead of a first run."""

from __future__ import annotations

import argparse
import sys

import clgrad
from clgrad.device import NO_OPENCL_HINT, accelerators


def _gib(n):
    return f"{n / 2**30:.1f} GiB"


def info(out=sys.stdout):
    rows = [("device", "kind", "vendor", "name", "driver", "CUs", "memory", "fp64", "fp16")]
    for d in clgrad.devices():
        rows.append(
            (
                str(d),
                d.type.value,
                d.vendor,
                d.name,
                d.driver_version,
                str(d.compute_units),
                _gib(d.global_memory),
                "yes" if d.supports_float64 else "no",
                "yes" if d.supports_float16 else "storage",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)
        if k == 0:
            print("  ".join("-" * w for w in widths), file=out)
    print(f"\ndefault device: {clgrad.default_device()}  (CLGRAD_DEVICE selects it)", file=out)
    if not accelerators():
        print(f"\nNote: {NO_OPENCL_HINT}", file=out)


def demo(out=sys.stdout):
    """Fits y = 3x + 2 by gradient descent on the default device."""
    dev = clgrad.default_device()
    clgrad.manual_seed(0)
    x = clgrad.rand(256, 1, device=dev)
    y = 3 * x + 2
    w = clgrad.zeros(1, 1, device=dev, requires_grad=True)
    b = clgrad.zeros(1, device=dev, requires_grad=True)
    for _ in range(300):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        with clgrad.no_grad():
            w -= 0.5 * w.grad
            b -= 0.5 * b.grad
        w.grad = b.grad = None
    print(
        f"on {dev} ({dev.name}): fitted y = {w.item():.3f} x + {b.item():.3f}, "
        f"loss {loss.item():.2e}",
        file=out,
    )


def main(argv=None) -> int:
    """Runs a subcommand and returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "selftest":
        from clgrad import selftest

        return selftest.main(argv[1:])
    if argv and argv[0] == "warmup":
        from clgrad import warmup

        return warmup.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m clgrad", description=__doc__)
    parser.add_argument(
        "command", choices=["info", "demo", "selftest", "warmup"], nargs="?", default="info"
    )
    args = parser.parse_args(argv)
    {"info": info, "demo": demo}[args.command]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
