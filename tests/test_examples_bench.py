"""The examples and the benchmark suite run in the test suite, at a reduced size."""

import json
import runpy
import sys
from pathlib import Path

import pytest

import clgrad

ROOT = Path(__file__).resolve().parents[1]


def load_example(name):
    return runpy.run_path(str(ROOT / "examples" / f"{name}.py"))


def test_train_digits_quick(device, tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    main = load_example("train_digits")["main"]
    plot = tmp_path / "loss.png"
    results = main(["--quick", "--device", device, "--plot", str(plot)])
    assert set(results) == {"MLP", "CNN"}
    assert all(acc > 0.3 for acc in results.values()), results  # chance is 0.1
    assert plot.stat().st_size > 1000


def test_linear_by_hand(device, capsys):
    load_example("linear_by_hand")["main"](device)
    assert "equal: yes" in capsys.readouterr().out


def test_linear_regression(device):
    w, b, loss = load_example("linear_regression")["main"](device, steps=150)
    assert loss < 1e-3
    assert abs(b.item() - 1.0) < 0.05 and abs(w[0, 0].item() - 2.0) < 0.05


def test_bench_quick(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    run = runpy.run_path(str(ROOT / "bench" / "run.py"))
    devices = [str(d) for d in clgrad.devices() if d.is_cl][:1] or ["cpu"]
    # every group but main_job (two training runs of examples/train_digits.py, one from cold
    # kernel caches: a minute on PoCL)
    groups = [g for g in run["GROUPS"] if g != "main_job"]
    args = ["--quick", "--devices", *devices, "--out", str(tmp_path), "--only", *groups]
    written = run["main"](args)
    result = json.loads(Path(written[0]).read_text())
    names = {r["name"] for r in result["results"]}
    assert {
        "a + b contiguous float32",
        "small op a + b, host time",
        "MLP training step (784-256-10)",
        "digits MLP step (64-128-10)",
        "polyfit step (4 weights, 2000 points)",
    } <= names
    assert any(n.startswith("matmul") for n in names)
    assert all(r["clgrad"] > 0 for r in result["results"])
    assert result["vendor"] and result["driver"] and result["date"]
    if run["HAVE_TORCH"]:  # PyTorch CPU beside every workload it runs
        assert result["results"][0]["torch"] > 0
    assert Path(written[0]).with_suffix(".md").read_text().startswith("### ")
    compare = runpy.run_path(str(ROOT / "bench" / "compare.py"))["main"]
    out = compare(["--results", str(tmp_path), "--out", str(tmp_path / "CROSS_VENDOR.md")])
    assert "a + b contiguous float32" in Path(out).read_text()
