"""Renders the cross-vendor comparison from every result in bench/results/.

    python bench/compare.py            # writes bench/results/CROSS_VENDOR.md and .png

Each column is one measured device; each cell is the absolute figure and, in brackets, the
speed relative to NumPy measured on that device's host in the same run (higher is better).
Absolute figures from different machines compare the devices; the ratios say how each does
against the CPU it came with.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
TIME_UNITS = ("ms", "us", "s")


def speedup(row):
    if not row.get("numpy"):
        return None
    return (
        row["numpy"] / row["clgrad"] if row["unit"] in TIME_UNITS else row["clgrad"] / row["numpy"]
    )


def load(results_dir, include_quick=False):
    runs = []
    for path in sorted(Path(results_dir).glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("quick") and not include_quick:
            continue
        runs.append(data)
    return runs


def table(runs):
    names = []
    for run in runs:
        for row in run["results"]:
            if row["name"] not in names:
                names.append(row["name"])
    header = ["benchmark", "unit"] + [f"{r['vendor']} {r['name']} ({r['date']})" for r in runs]
    lines = ["| " + " | ".join(header) + " |", "| --- | --- |" + " ---: |" * len(runs)]
    for name in names:
        unit, cells = "", []
        for run in runs:
            row = next((r for r in run["results"] if r["name"] == name), None)
            if row is None:
                cells.append("")
                continue
            unit = row["unit"]
            s = speedup(row)
            cells.append(f"{row['clgrad']:.2f}" + (f" ({s:.2f}x)" if s else ""))
        lines.append(f"| {name} | {unit} | " + " | ".join(cells) + " |")
    drivers = "\n".join(
        f"- {r['vendor']} {r['name']}: `{r['device']}`, platform {r['platform']}, driver "
        f"{r['driver']}, host {r['host']}, NumPy {r['numpy']}, measured {r['date']}"
        for r in runs
    )
    return "\n".join(lines) + "\n\n" + drivers + "\n"


def chart(runs, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [r["name"] for r in runs[0]["results"] if speedup(r)] if runs else []
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(names) * max(1, len(runs)) + 1.5))
    height = 0.8 / max(1, len(runs))
    for k, run in enumerate(runs):
        vals = []
        for name in names:
            row = next((r for r in run["results"] if r["name"] == name), None)
            vals.append(speedup(row) if row else 0)
        ax.barh(
            [i + k * height for i in range(len(names))],
            vals,
            height,
            label=f"{run['vendor']} {run['name']}",
        )
    ax.set_yticks([i + height * (len(runs) - 1) / 2 for i in range(len(names))], names)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("speed relative to NumPy on the same host (log scale, higher is better)")
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def update_readme(text, readme):
    """Puts the table between the README's bench markers (the README shows the latest)."""
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    body = Path(readme).read_text()
    if start in body and end in body:
        head, rest = body.split(start, 1)
        Path(readme).write_text(head + start + "\n" + text + end + rest.split(end, 1)[1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--results", default=str(RESULTS))
    p.add_argument("--out", default=str(RESULTS / "CROSS_VENDOR.md"))
    p.add_argument("--include-quick", action="store_true")
    p.add_argument("--readme", help="also put the table into this README between its markers")
    args = p.parse_args(argv)
    runs = load(args.results, include_quick=True) if args.include_quick else load(args.results)
    if not runs:
        runs = load(args.results, include_quick=True)
    out = Path(args.out)
    text = table(runs)
    out.write_text("# clgrad across devices\n\n" + text)
    chart(runs, out.with_suffix(".png"))
    if args.readme:
        update_readme(text, args.readme)
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    main()
