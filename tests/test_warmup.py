"""``python -m clgrad warmup``: after it, a process running the same workload builds nothing."""

import os
import subprocess
import sys
import textwrap

import pytest

from clgrad import warmup


def _run(code, env):
    full = {**os.environ, **env}
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_a_warmed_workload_builds_nothing(cl_device, tmp_path):
    """clgrad's binary cache (forced on, so that every program it builds leaves a file) is
    filled by the warm-up's processes; a later process training the same model adds none.
    (PoCL's own cache is the suite's: what is asserted is clgrad's.)"""
    env = {"CLGRAD_CACHE_DIR": str(tmp_path / "cache"), "CLGRAD_BINARY_CACHE": "1"}
    out = _run(
        f"""
        from clgrad.__main__ import main
        raise SystemExit(main(["warmup", "{cl_device}", "--jobs", "2", "--only", "mlp"]))
        """,
        env,
    )
    assert f"{cl_device} mlp:" in out and "warm: 1 workloads" in out
    built = set(os.listdir(tmp_path / "cache"))
    assert built
    _run(
        f"""
        import clgrad
        clgrad.manual_seed(1)
        from clgrad.warmup import mlp
        mlp(clgrad.device("{cl_device}"))
        """,
        env,
    )
    assert set(os.listdir(tmp_path / "cache")) == built


def test_unknown_workload_is_refused():
    with pytest.raises(ValueError, match="unknown workloads"):
        warmup.run(["cpu"], jobs=1, only=["nope"])


@pytest.mark.parametrize("name", ["cnn", "transformer", "lstm"])
def test_each_workload_runs_on_the_host(name):
    assert list(warmup.run(["cpu"], jobs=1, only=[name])) == [f"cpu {name}"]
