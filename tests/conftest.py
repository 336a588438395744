"""Every op test runs on ``cpu`` and on each OpenCL device found.

CLGRAD_TEST_DEVICES (comma-separated, e.g. ``cpu,cl:0``) restricts the list.

The suite builds its kernels without the driver's optimizer (``CLGRAD_BUILD_OPT=0``): its tensors
are tiny, so building is most of its time, and unoptimized builds take less than half as long on
PoCL. ``CLGRAD_BUILD_OPT=1 python -m pytest`` runs it on optimized kernels (a new driver's
check); ``test_optimized_builds_agree`` compares the two on every run.

Likewise a fused kernel is built once its chain has been seen 32 times (``CLGRAD_FUSE_AFTER``,
2 for users): a test that evaluates one function a few dozen times (gradcheck's finite
differences) would otherwise build a kernel per chain in the background, which on 2 cores took
a third of those tests' time, and never run it again. Training loops of more steps still build
and run their fused kernels, and tests/test_fusion.py builds every chain it runs at its first
sighting; ``CLGRAD_FUSE_AFTER=2 python -m pytest`` runs the whole suite as users' programs fuse.
"""

import os
import sys

# clgrad's compiled modules are cached even where PYTHONDONTWRITEBYTECODE is set (this machine
# and some CI images set it): the tests start subprocesses that import clgrad, and each would
# otherwise compile its hundred-odd modules again, 1.5-3 s apiece on 2 cores (cached, the
# runtime and distributed tests took half as long). The subprocesses read the cache; only this
# process writes it, into __pycache__ beside the sources (ignored by git).
sys.dont_write_bytecode = False

# before any device starts (its runtime reads the setting), and for the subprocesses tests start
os.environ.setdefault("CLGRAD_BUILD_OPT", "0")
os.environ.setdefault("CLGRAD_FUSE_AFTER", "32")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import clgrad  # noqa: E402


def _devices():
    wanted = os.environ.get("CLGRAD_TEST_DEVICES")
    found = [str(d) for d in clgrad.devices()]
    if wanted:
        return [d.strip() for d in wanted.split(",") if d.strip()]
    return found


DEVICES = _devices()
CL_DEVICES = [d for d in DEVICES if d != "cpu"]


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES)
    if "cl_device" in metafunc.fixturenames:
        metafunc.parametrize(
            "cl_device",
            CL_DEVICES or [pytest.param(None, marks=pytest.mark.skip(reason="no OpenCL device"))],
        )


def tolerance(dtype):
    """(rtol, atol) a result in ``dtype`` is held to."""
    name = dtype.name if hasattr(dtype, "name") else np.dtype(dtype).name
    return {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}.get(
        name, (0, 0)
    )


def assert_close(actual, expected, dtype=None, rtol=None, atol=None):
    """Compares a clgrad tensor with a NumPy reference: shape, dtype and values."""
    expected = np.asarray(expected)
    got = actual.detach().cpu().numpy() if isinstance(actual, clgrad.Tensor) else np.asarray(actual)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if dtype is not None:
        assert actual.dtype == dtype, f"dtype {actual.dtype} != {dtype}"
    r, a = tolerance(actual.dtype if isinstance(actual, clgrad.Tensor) else got.dtype)
    np.testing.assert_allclose(
        got.astype(np.float64) if got.dtype.kind == "f" else got,
        expected.astype(np.float64) if expected.dtype.kind == "f" else expected,
        rtol=r if rtol is None else rtol,
        atol=a if atol is None else atol,
        equal_nan=True,
    )


def supports(device, dtype):
    return clgrad.device(device).supports(dtype)
