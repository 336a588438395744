"""``clgrad.Stream`` and ``clgrad.Event`` (``torch.Stream`` / ``torch.Event``, device-agnostic)
on every test device.

On ``cpu`` and ``meta`` they are compared with PyTorch's cpu build: attributes, answers, reprs
and the errors of what those backends cannot do. On an OpenCL device they are ``clgrad.cuda``'s
stream and event: that runs in a subprocess with ``CLGRAD_DEVICE`` set to the device (what
"cuda" means is read once per process, as tests/test_cuda_api.py does), which prints one JSON
object, asserted on here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

import clgrad
from clgrad.device import cuda_devices


def _outcome(call):
    """What ``call()`` gives: its value, or its exception's class name and message."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return type(e).__name__, str(e)


def _host_answers(lib, device):
    """What a program asks of a stream and an event of the cpu / meta ``device``."""
    s, e = lib.Stream(device=device), lib.Event(device=device)
    timed = [lib.Event(device=device, enable_timing=True) for _ in range(2)]
    with s as entered:
        inside = entered is s
    return [
        repr(s).split(".", 1)[1],
        repr(e).split(".", 1)[1],
        (s.device_type, s.device_index, str(s.device), s.stream_id),
        (str(e.device), e.event_id),
        (s.query(), s.synchronize(), s.is_capturing(), s.wait_event(e), inside),
        (e.query(), e.synchronize(), e.wait(), e.wait(s)),
        _outcome(lambda: s.native_handle),
        _outcome(s.record_event),
        _outcome(lambda: s.wait_stream(s)),
        _outcome(e.record),
        _outcome(lambda: e.record(s)),
        _outcome(lambda: e.elapsed_time(e)),
        _outcome(lambda: timed[0].elapsed_time(timed[1])),
        _outcome(lambda: e.elapsed_time(1)),
        s == lib.Stream(device=device, priority=-1),
        hash(s) == hash(lib.Stream(device=device)),
        s == lib.Stream(device="cpu" if device == "meta" else "meta"),
    ]


def _refusals(lib):
    """The errors of arguments both builds refuse (PyTorch's cpu build has no accelerator)."""
    calls = [
        lambda: lib.Stream(device=1.5),
        lambda: lib.Stream(priority="high"),
        lambda: lib.Event(enable_timing=1),
        lambda: lib.Event(device="cpu", blocking=None),
        lambda: lib.Stream("cpu", 0),
    ]
    if not clgrad.cuda.is_available():
        calls += [lambda: lib.Stream(device=0), lambda: lib.Event(device=0)]
    return [_outcome(c)[0] for c in calls]


ON_DEVICE = r"""
import json
import clgrad as torch

out = {}
s = torch.Stream(device="cuda")
fresh = torch.Stream()  # a new stream of the current accelerator, as in PyTorch
default = torch.cuda.default_stream()
e = torch.Event(device="cuda", enable_timing=True)
out["kinds"] = [isinstance(s, torch.Stream), isinstance(s, torch.cuda.Stream),
                isinstance(e, torch.Event), isinstance(e, torch.cuda.Event),
                isinstance(torch.cuda.current_stream(), torch.Stream),
                isinstance(torch.cuda.Event(), torch.Event)]
out["devices"] = [str(s.device), str(fresh.device), str(e.device), s.device_index,
                  str(torch.Stream(device=0).device), str(torch.Event(device=0).device)]
x = torch.arange(6.0, device="cuda")
start = torch.Event(device="cuda", enable_timing=True)
with s:
    inside = torch.cuda.current_stream() is s
    start.record()
    y = x * 2 + 1
    e.record()
    marker = s.record_event()
e.synchronize()
s.wait_stream(default)
s.synchronize()
out["work"] = [inside, torch.cuda.current_stream() == default,
               y.cpu().numpy().tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0],
               e.query(), marker.query(), s.query(), start.elapsed_time(e) >= 0.0,
               fresh != s and fresh != default]
print(json.dumps(out))
"""


def test_cpu_and_meta_as_pytorch(device):
    if device != "cpu":
        pytest.skip("the cpu and meta backends' streams are compared once")
    for name in ("cpu", "meta"):
        assert _host_answers(clgrad, name) == _host_answers(torch, name)
    assert _refusals(clgrad) == _refusals(torch)
    # with no accelerator, torch.Stream() is the cpu's (PyTorch's cpu build has none)
    if not clgrad.cuda.is_available():
        assert clgrad.Stream() == clgrad.Stream(device="cpu")
        assert str(clgrad.Event().device) == str(torch.Event().device) == "cpu"


def test_accelerator_streams_are_clgrad_cudas(device):
    if device == "cpu":
        pytest.skip("an OpenCL device's streams")
    env = {**os.environ, "CLGRAD_DEVICE": device}
    run = subprocess.run(
        [sys.executable, "-c", ON_DEVICE], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["kinds"] == [True] * 6
    assert got["devices"] == [device, device, device, 0, device, device]
    assert got["work"] == [True] * 8


def test_an_opencl_device_cuda_does_not_name_is_refused(device):
    dev = clgrad.device(device)
    if not dev.is_cl or dev in cuda_devices():
        pytest.skip("an OpenCL device that is not a cuda device")
    # as clgrad.cuda.Stream refuses it: PyTorch has no name for it
    for make in (clgrad.Stream, clgrad.Event):
        with pytest.raises(ValueError, match="is not a cuda device"):
            make(device=device)
