"""Several OpenCL devices in one process, and DataParallel over them.

The checks (tests/multi_device_checks.py) run in a subprocess that sets its own devices, so
this runs in CI's default run whatever the test devices are: ``POCL_DEVICES="pthread pthread"``
gives two PoCL devices (cl:0 and cl:1, one shared context), and PoCL next to Mesa rusticl
(``RUSTICL_ENABLE=llvmpipe``) gives two platforms, whose copies go through the host. One
subprocess runs many checks; a setup without the devices a check needs skips it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import multi_device_checks as checks

ROOT = Path(__file__).resolve().parents[1]


def _run(mode, **env):
    base = {k: v for k, v in os.environ.items() if k not in ("CLGRAD_DEVICE", "RUSTICL_ENABLE")}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT), *sys.path])
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "multi_device_checks.py"), mode],
        capture_output=True,
        text=True,
        timeout=600,
        env={**base, **env},
        cwd=ROOT,
    )
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    if out.startswith("SKIP"):
        return out.strip(), {}
    results, name = {}, None
    for line in out.splitlines():
        if line.startswith(("PASS ", "FAIL ")):
            name = line[5:].split(":", 1)[0]
            results[name] = line if line.startswith("FAIL") else ""
        elif name is not None and results[name]:
            results[name] += "\n" + line
    return None, results


@pytest.fixture(scope="module")
def two_devices():
    return _run("two", POCL_DEVICES="pthread pthread")


@pytest.mark.parametrize("name", [c.__name__[len("check_") :] for c in checks.TWO])
def test_two_devices(two_devices, name):
    skipped, results = two_devices
    if skipped:
        pytest.skip(skipped)
    assert name in results, f"{name} did not run"
    assert not results[name], results[name]


def test_a_device_of_another_platform_copies_through_the_host():
    skipped, results = _run("platforms", POCL_DEVICES="pthread", RUSTICL_ENABLE="llvmpipe")
    if skipped:
        pytest.skip(skipped)
    assert not results["other_platform"], results["other_platform"]
