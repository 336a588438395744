"""Lean builds on PoCL: the builtins a program calls declared from the driver's opencl-c.h
(``clgrad/backend/opencl/builtins.py``) instead of the whole header."""

import logging

import numpy as np
import pyopencl as cl
import pytest

import clgrad
from clgrad.backend.opencl import builtins

# a kernel over the builtins of every kind the templates call: math in each float type,
# conversions, half loads and stores, work-item functions, barriers, atomics, min/max, select
SOURCE = """
__kernel void lean_probe(__global float *out, __global const float *x, __global half *h,
                         __global int *count, __local float *scratch) {
    size_t i = get_global_id(0);
    float v = x[i];
    scratch[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    float w = scratch[get_local_size(0) - 1 - get_local_id(0)];
    out[i] = exp(v) + log1p(fabs(v)) + tanh(w) + convert_float(convert_int_rtz(v * 3.0f))
        + fmin(v, w) + select(1.0f, 2.0f, isnan(v)) + as_float(as_int(v) & 0x7fffffff)
        + (float)min((int)i, 3) + native_sqrt(fabs(v)) + fma(v, w, 1.0f);
    vstore_half(vload_half(i, h) * 2.0f, i, h);
    atomic_add(count, 1);
}
"""


def reference(x, h):
    w = x.reshape(-1, 8)[:, ::-1].reshape(-1)
    i = np.arange(len(x))
    out = (
        np.exp(x)
        + np.log1p(np.abs(x))
        + np.tanh(w)
        + np.trunc(x * 3).astype(np.float32)
        + np.fmin(x, w)
        + 1
        + np.abs(x)
        + np.minimum(i, 3)
        + np.sqrt(np.abs(x))
        + x * w
        + 1
    )
    return out.astype(np.float32), (h * 2).astype(np.float16)


def run_probe(rt, source):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 32).astype(np.float32)
    h = rng.uniform(-2, 2, 32).astype(np.float16)
    prg = rt.build(source, "lean-probe")
    mf = cl.mem_flags
    q = cl.CommandQueue(rt.context, rt.device._cl)
    xb = cl.Buffer(rt.context, mf.COPY_HOST_PTR, hostbuf=x)
    hb = cl.Buffer(rt.context, mf.COPY_HOST_PTR, hostbuf=h)
    ob = cl.Buffer(rt.context, mf.READ_WRITE, x.nbytes)
    count = np.zeros(1, np.int32)
    cb = cl.Buffer(rt.context, mf.COPY_HOST_PTR, hostbuf=count)
    prg.lean_probe(q, (32,), (8,), ob, xb, hb, cb, cl.LocalMemory(32))
    out = np.empty_like(x)
    for host, buf in ((out, ob), (h2 := np.empty_like(h), hb), (count, cb)):
        cl.enqueue_copy(q, host, buf)
    want_out, want_h = reference(x, h)
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(h2, want_h)
    assert count[0] == 32


def lean_runtime(cl_device):
    rt = clgrad.device(cl_device).runtime
    if rt.builtin_header is None:
        pytest.skip("builds declare their builtins on pyopencl's PoCL only")
    return rt


def test_a_lean_build_runs_like_a_plain_one(cl_device, caplog):
    rt = clgrad.device(cl_device).runtime
    with caplog.at_level(logging.DEBUG, logger="clgrad"):
        run_probe(rt, SOURCE)
    assert "whole builtin header" not in caplog.text  # the lean build itself did it
    if rt.builtin_header is not None:
        header = builtins.load(rt.builtin_header)
        called = builtins.called(SOURCE, header)
        assert {"exp", "vload_half", "barrier", "atomic_add", "select"} <= called
        declared = header.declarations(called)
        assert declared.count("#if") == declared.count("#endif")
        assert len(declared) < 60_000  # a small part of the 980 KB header


def test_a_builtin_the_scan_misses_falls_back_to_the_whole_header(cl_device, caplog):
    """A name the source spells only through the preprocessor (token pasting) is not found by
    the scan: the lean build fails, and the plain build, which sees every declaration, runs."""
    rt = lean_runtime(cl_device)
    pasted = SOURCE.replace("exp(v)", "PASTE(ex, p)(v)").replace(
        "__kernel", "#define PASTE(a, b) a##b\n__kernel", 1
    )
    assert "exp" not in builtins.called(pasted, builtins.load(rt.builtin_header))
    with caplog.at_level(logging.DEBUG, logger="clgrad"):
        run_probe(rt, pasted)
    assert "whole builtin header" in caplog.text


def test_the_switch_turns_lean_builds_off(cl_device, monkeypatch):
    monkeypatch.setenv("CLGRAD_LEAN_HEADER", "0")
    fresh = type(clgrad.device(cl_device).runtime)(clgrad.device(cl_device))
    assert fresh.builtin_header is None
    run_probe(fresh, SOURCE)


def test_a_system_pocl_is_left_alone():
    """The header is only taken where its package's version is the platform's PoCL."""
    assert builtins.pocl_header("OpenCL 3.0 PoCL 999.0  Linux, Release") is None
