"""``python -m clgrad selftest``: the report, the table, the JSON file and the exit status, and
that a kernel computing a wrong value (or failing to build) is reported as failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

import clgrad
from clgrad import selftest
from clgrad.backend.base import MapKernel
from clgrad.backend.host import HostBackend, array
from clgrad.ops.registry import ELEMENTWISE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_report(device):
    report = selftest.run(device, quick=True)
    json.dumps(report)  # the report is plain JSON
    dev = clgrad.device(device)
    info = report["device"]
    assert info["device"] == str(dev) and info["name"] == dev.name
    assert info["driver_version"] == dev.driver_version and info["vendor"] == dev.vendor
    for key in ("platform", "clgrad", "numpy", "pyopencl"):
        assert key in info
    assert report["passed"], selftest.table(report)
    assert report["failures"] == [] and report["failed"] == 0
    assert set(report["summary"]) == set(selftest.FAMILIES)
    runs = [
        d.name
        for d in clgrad.ops.registry.ALL_DTYPES
        if d.name in selftest.DTYPES and dev.supports(d)  # (the battery's dtypes)
    ]
    for family in ("elementwise", "reduction", "cumsum", "index", "copy"):
        assert sorted(report["summary"][family]) == sorted(runs), family
    table = selftest.table(report)
    assert "elementwise" in table and "all passed" in table and dev.driver_version in table


def _elementwise_cases(battery):
    return {(c.op, c.dtype, c.case) for c in battery if c.family == "elementwise"}


def test_every_declared_op_and_dtype_is_in_the_full_battery():
    seen = _elementwise_cases(selftest.checks("cpu", full=True))
    for op in ELEMENTWISE.values():
        for dt in (d for d in op.dtypes if d.name in selftest.DTYPES):
            for case in ("contiguous", "broadcast", "non-contiguous"):
                assert (op.name, dt.name, case) in seen


def test_default_battery_every_op_in_float32_and_a_sample_in_every_dtype():
    seen = _elementwise_cases(selftest.checks("cpu"))
    for op in ELEMENTWISE.values():
        for dt in (d for d in op.dtypes if d.name in selftest.DTYPES):
            sampled = dt.name == "float32" or op.name in selftest.SAMPLE_OPS
            assert ((op.name, dt.name, "non-contiguous") in seen) == sampled, (op.name, dt.name)
    # every dtype a device can run meets the elementwise family
    assert {d for _, d, _ in seen} == set(selftest.DTYPES)
    # naming an op checks it in every dtype
    only = _elementwise_cases(selftest.checks("cpu", only=["tan"]))
    assert {d for _, d, _ in only} == {
        d.name for d in ELEMENTWISE["tan"].dtypes if d.name in selftest.DTYPES
    }


def _break_mul(device, monkeypatch):
    """mul computes ``a * b + 1``: in its kernel expression on OpenCL, in the host backend
    on cpu (whose kernel is the NumPy reference itself)."""
    op = ELEMENTWISE["mul"]
    if clgrad.device(device).is_cl:
        wrong = MapKernel("mul", "(in0 * in1 + ({T})1)", op.kernel.numpy)
        monkeypatch.setattr(op, "kernel", wrong)
    else:
        elementwise = HostBackend.elementwise

        def wrong_elementwise(self, kernel, out, operands, compute):
            elementwise(self, kernel, out, operands, compute)
            if kernel.name == "mul":
                a = array(out)
                a[...] = ~a if a.dtype == np.bool_ else a + 1

        monkeypatch.setattr(HostBackend, "elementwise", wrong_elementwise)


def test_a_wrong_kernel_is_reported_and_exits_1(device, monkeypatch, tmp_path, capsys):
    _break_mul(device, monkeypatch)
    out = tmp_path / "report.json"
    from clgrad.__main__ import main

    status = main(["selftest", device, "--quick", "--only", "mul", "add", "--out", str(out)])
    assert status == 1
    report = json.loads(out.read_text())
    assert not report["passed"]
    failed = {(f["family"], f["op"]) for f in report["failures"]}
    assert failed == {("elementwise", "mul")}
    dtypes = {f["dtype"] for f in report["failures"]}
    assert {"float32", "int64"} <= dtypes
    for f in report["failures"]:
        assert "max abs error" in f["error"] and f["max_error"] > 0
        assert f["driver_version"] == clgrad.device(device).driver_version
    assert report["summary"]["elementwise"]["float32"]["passed"] > 0  # add still passes
    printed = capsys.readouterr().out
    assert "FAILED" in printed and "elementwise float32 mul (contiguous)" in printed


def test_a_kernel_that_fails_to_build_is_reported(cl_device, monkeypatch, tmp_path):
    op = ELEMENTWISE["mul"]
    monkeypatch.setattr(op, "kernel", MapKernel("mul", "(in0 * in1 +)", op.kernel.numpy))
    report = selftest.run(cl_device, quick=True, only=["mul"])
    assert not report["passed"] and report["failures"]
    driver = clgrad.device(cl_device).driver_version
    for f in report["failures"]:
        assert f["op"] == "mul" and f["error"].startswith("KernelBuildError")
        assert driver in f["error"] and f["driver_version"] == driver


def test_command_line_writes_the_default_report(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run(
        [sys.executable, "-m", "clgrad", "selftest", "cpu", "--quick", "--only", "add"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    path = tmp_path / "clgrad-selftest-cpu.json"
    report = json.loads(path.read_text())
    assert report["passed"] and report["device"]["device"] == "cpu"
    assert "all passed" in run.stdout and str(path) in run.stdout


def test_compare():
    assert selftest.compare(np.array([1, 2]), np.array([1, 2]), 0, 0) == (None, 0.0)
    error, worst = selftest.compare(np.array([1.0, np.nan]), np.array([1.0, 2.0]), 0, 0)
    assert error and worst == float("inf")
    assert selftest.compare(np.array([np.inf]), np.array([np.inf]), 0, 0)[0] is None
    assert "shape" in selftest.compare(np.zeros(2), np.zeros(3), 0, 0)[0]
