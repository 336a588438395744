"""One OpenCL device's context, in-order queue, caching allocator and program cache."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyopencl as cl

from ...errors import KernelBuildError, OutOfMemoryError
from .render import render

log = logging.getLogger("clgrad")
DEBUG = int(os.environ.get("CLGRAD_DEBUG", "0") or 0)
if DEBUG and not log.handlers:
    logging.basicConfig(level=logging.DEBUG, format="clgrad: %(message)s")

_PROBES = {
    "double": "__kernel void probe(__global double *x) { x[0] = x[0] * 2.0 + 1.0; }",
    "half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    "__kernel void probe(__global half *x) { x[0] = x[0] * (half)2 + (half)1; }",
}


def cache_dir() -> Path:
    root = os.environ.get("CLGRAD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "clgrad"
    )
    return Path(root)


def _quiet_build(program, options):
    """Builds without pyopencl's CompilerWarning: compiler remarks (an always-false unsigned
    compare) are not the user's business; CLGRAD_DEBUG=2 shows the source to look at."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        return program.build(options=options, cache_dir=False)


class Allocator:
    """Keeps freed buffers by size and hands them out again: allocation is the slow part."""

    ALIGN = 256

    def __init__(self, runtime):
        self.runtime = runtime
        self.free: dict[int, list[cl.Buffer]] = defaultdict(list)
        self.in_use = 0  # bytes handed out and not yet returned
        self.cached = 0  # bytes held in self.free
        self.lock = threading.Lock()

    def round(self, nbytes: int) -> int:
        return max(self.ALIGN, -(-nbytes // self.ALIGN) * self.ALIGN)

    def alloc(self, nbytes: int) -> cl.Buffer:
        size = self.round(nbytes)
        with self.lock:
            bucket = self.free.get(size)
            if bucket:
                self.cached -= size
                self.in_use += size
                return bucket.pop()
        buf = self._new(size)
        with self.lock:
            self.in_use += size
        return buf

    def _new(self, size):
        dev = self.runtime.device
        limit = self.runtime.max_mem_alloc_size
        for attempt in range(2):
            # OpenCL allocates lazily, so a buffer larger than the device holds may "succeed"
            # and fail at first use: check against what the device reports before asking.
            if size <= limit and self.in_use + self.cached + size <= dev.global_memory:
                try:
                    return cl.Buffer(self.runtime.context, cl.mem_flags.READ_WRITE, size)
                except (cl.MemoryError, cl.RuntimeError, cl.LogicError):
                    pass
            if attempt == 0:
                self.empty_cache()
        raise OutOfMemoryError(
            f"{dev} ({dev.name}) cannot allocate {size} bytes: {self.in_use} bytes in use, "
            f"largest single allocation {limit}, global memory {dev.global_memory}"
        )

    def release(self, buf: cl.Buffer, nbytes: int):
        size = self.round(nbytes)
        with self.lock:
            self.in_use -= size
            self.cached += size
            self.free[size].append(buf)

    def empty_cache(self):
        with self.lock:
            for bucket in self.free.values():
                for buf in bucket:
                    buf.release()
            self.free.clear()
            self.cached = 0


class Runtime:
    """Opened lazily by ``Device.runtime``: one context and one in-order queue per device."""

    def __init__(self, device):
        self.device = device
        self.context = cl.Context([device._cl])
        self.queue = cl.CommandQueue(self.context)
        self.allocator = Allocator(self)
        self.programs: dict[tuple, cl.Program] = {}
        # the one kernel cache of this device: kernel families look kernels up by a lean key of
        # their own (``cached``) so the lookup on each launch costs a dict probe
        self.kernels: dict[tuple, cl.Kernel] = {}
        self.typed: set[cl.Kernel] = set()
        self.lock = threading.RLock()
        d = device._cl
        self.cache_key = f"{d.platform.name}|{d.platform.version}|{d.name}|{d.driver_version}"
        self.build_options = ["-cl-std=CL1.2"]
        self.is_gpu = bool(d.type & cl.device_type.GPU)
        # read once: querying the driver's extension string is a call into the driver
        self.atomic64 = "cl_khr_int64_base_atomics" in d.extensions
        # Kernels loop grid-stride. A GPU wants just enough work-items to fill it; PoCL wants one
        # work-item per element in groups of 256, which it runs as a vectorized loop per core
        # (a grid-stride loop there walks memory with a stride and runs 30x slower).
        self.local_size = min(256, d.max_work_group_size)
        self.max_work_items = d.max_compute_units * 2048 if self.is_gpu else 2**40
        # capabilities, read once: each is a call into the driver
        self.max_work_group_size = d.max_work_group_size
        self.base_align_bytes = d.mem_base_addr_align // 8
        self.compute_units = d.max_compute_units
        self.max_mem_alloc_size = d.max_mem_alloc_size

    # ---- programs ----------------------------------------------------------------------------
    def probe(self, kind: str) -> bool:
        """Builds and runs a tiny kernel: extension strings alone are not always truthful."""
        np_t = {"double": np.float64, "half": np.float16}[kind]
        try:
            prg = _quiet_build(cl.Program(self.context, _PROBES[kind]), [])
            x = np.array([3], np_t)
            buf = cl.Buffer(self.context, cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
            prg.probe(self.queue, (1,), None, buf)
            cl.enqueue_copy(self.queue, x, buf)
            return float(x[0]) == 7.0
        except Exception:
            return False

    def kernel(self, template: str, function: str, **params) -> cl.Kernel:
        """Kernel ``function`` of ``template`` rendered with ``params``; built once per process."""
        key = (template, function, tuple(sorted(params.items())))
        k = self.kernels.get(key)
        if k is None:
            with self.lock:
                prg = self.program(template, **params)
                k = self.kernels[key] = getattr(prg, function)
        return k

    def cached(self, key: tuple, template: str, function: str, **params) -> cl.Kernel:
        """``kernel(template, function, **params)`` looked up by ``key``, a cheap tuple the
        caller builds (it must determine ``params``); built on the first miss."""
        k = self.kernels.get(key)
        if k is None:
            k = self.kernels[key] = self.kernel(template, function, **params)
        return k

    def program(self, template: str, **params) -> cl.Program:
        key = (template, tuple(sorted(params.items())))
        prg = self.programs.get(key)
        if prg is None:
            source = render(template, **params)
            if DEBUG >= 2:
                log.debug("rendered %s %s:\n%s", template, params, source)
            prg = self.programs[key] = self.build(source, template)
        return prg

    def build(self, source: str, label: str = "program") -> cl.Program:
        """Builds ``source``, reusing a binary cached on disk by an earlier process."""
        opts = " ".join(self.build_options)
        digest = hashlib.sha256(f"{self.cache_key}\n{opts}\n{source}".encode()).hexdigest()
        path = cache_dir() / f"{digest}.bin"
        dev = self.device._cl
        if path.exists():
            try:
                return _quiet_build(
                    cl.Program(self.context, [dev], [path.read_bytes()]), self.build_options
                )
            except Exception:
                path.unlink(missing_ok=True)  # a stale or corrupt binary: rebuild from source
        try:
            prg = _quiet_build(cl.Program(self.context, source), self.build_options)
        except cl.RuntimeError as e:
            src_path = Path(tempfile.gettempdir()) / f"clgrad-{label}-{digest[:12]}.cl"
            src_path.write_text(source)
            raise KernelBuildError(
                f"building {label} failed on {self.device} ({self.device.name}, driver "
                f"{dev.driver_version}).\nsource: {src_path}\nbuild log:\n{e}"
            ) from None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(prg.get_info(cl.program_info.BINARIES)[0])
            tmp.replace(path)
        except OSError:
            pass  # a read-only cache only costs time
        return prg

    # ---- launching ---------------------------------------------------------------------------
    def launch(self, kernel: cl.Kernel, global_size, local_size, args):
        """Enqueues ``kernel``; scalar arguments are NumPy scalars (their type is the C type).

        The first launch tells pyopencl the scalar types, which switches it to a generated
        invoker: 4 us per launch instead of 26 us for setting arguments one by one.
        """
        if DEBUG:
            log.debug(
                "launch %s on %s global=%s local=%s",
                kernel.function_name,
                self.device,
                global_size,
                local_size,
            )
        if kernel not in self.typed:
            kernel.set_scalar_arg_dtypes(
                [type(a) if isinstance(a, np.generic) else None for a in args]
            )
            self.typed.add(kernel)
        return kernel(self.queue, global_size, local_size, *args)

    def launch1d(self, kernel: cl.Kernel, n: int, args, per_item: int = 1):
        """Launches a grid-stride kernel over ``n`` items."""
        items = max(1, min(-(-n // per_item), self.max_work_items))
        items = -(-items // self.local_size) * self.local_size
        return self.launch(kernel, (items,), (self.local_size,), args)

    def synchronize(self):
        self.queue.finish()
