"""One OpenCL device's context, in-order queue, caching allocator and program cache.

Thread safety: kernel objects are shared, and setting a kernel's arguments then enqueueing it
is two steps, so ``Runtime.launch`` does both under the runtime's ``launch_lock``; the program
and kernel caches fill under ``lock``; the allocator has a lock of its own.

After ``fork`` a child cannot use the OpenCL driver its parent opened (the driver's threads are
gone: the child would hang on its first kernel), so every runtime raises there instead.
"""

from __future__ import annotations

import _signal
import atexit
import contextlib
import errno
import hashlib
import logging
import os
import tempfile
import threading
import warnings
import weakref
from collections import defaultdict, deque
from pathlib import Path
from time import perf_counter

import numpy as np
import pyopencl as cl

from ... import capture
from ...errors import KernelBuildError, OutOfMemoryError
from ..base import BUNDLES
from . import builtins
from .fusion import Fuser
from .render import BUILD_LOCK, render

log = logging.getLogger("clgrad")


def int_setting(name: str, default: int = 0) -> int:
    """The integer environment variable ``name``; a value that is not one is a warning and
    ``default``, never an error on every op."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        warnings.warn(
            f"ignoring {name}={raw!r}: not an integer (using {default})", RuntimeWarning, 2
        )
        return default


DEBUG = int_setting("CLGRAD_DEBUG")
# elementwise fusion (fusion.py): on unless CLGRAD_FUSION=0; a chain's kernel is built on its
# CLGRAD_FUSE_AFTER-th sighting; deferred launches past MAX_DEFERRED are queued
FUSION = int_setting("CLGRAD_FUSION", 1) != 0
FUSE_AFTER = max(1, int_setting("CLGRAD_FUSE_AFTER", 2))
MAX_DEFERRED = 256
# CPU devices: launches wait in the queue behind a user event (the gate), which opens once
# BATCH_LAUNCHES wait there, at the first launch BATCH_SECONDS after it closed, or as soon as
# the host waits for the queue (``host_wait``). PoCL hands each runnable command to its worker
# threads at once, waking them, and the wake is paid by the launching thread: 12-30 us a launch
# on a 2-core VM (74 us after the threads slept through 1 ms of host work) against 3 us behind
# a gate. GPUs' drivers batch their submissions themselves. CLGRAD_BATCH_LAUNCHES=1 hands every
# launch to the device at once.
BATCH_LAUNCHES = max(1, int_setting("CLGRAD_BATCH_LAUNCHES", 32))
BATCH_SECONDS = 1e-3
# A launch of this many work-items or more opens the gate at once (``plans.run``: a plan over
# this many bytes of memory): the threads stay busy with it while the host queues what
# follows, so no launch needs to wake them, and the work starts while the host goes on.
HEAVY_ITEMS = 1 << 15
if DEBUG and not log.handlers:
    logging.basicConfig(level=logging.DEBUG, format="clgrad: %(message)s")

_PROBES = {
    "double": "__kernel void probe(__global double *x) { x[0] = x[0] * 2.0 + 1.0; }",
    "half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    "__kernel void probe(__global half *x) { x[0] = x[0] * (half)2 + (half)1; }",
}


# ---- fork --------------------------------------------------------------------------------------
FORK_MESSAGE = (
    "Cannot re-initialize OpenCL in forked subprocess. To use OpenCL with multiprocessing, "
    "you must use the 'spawn' start method"
)
_opened = False  # whether this process has called into the OpenCL driver
_forked = False  # whether this is a child forked after that
_runtimes: weakref.WeakSet = weakref.WeakSet()


def mark_opened():
    """Called before the first call into the driver (listing the platforms): a child forked
    after it cannot use OpenCL."""
    global _opened
    _opened = True


def _after_fork_in_child():
    global _forked
    if not _opened:
        return
    _forked = True
    for rt in list(_runtimes):
        rt.allocator.__class__ = _ForkedAllocator
        rt.__class__ = _ForkedRuntime


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _open_gates():
    """Hands every launch still behind a gate to its device at exit: the driver's teardown
    waits for the queues to drain."""
    if not _forked:
        for rt in list(_runtimes):
            rt.submit()


class _ForkedRuntime:
    """What a parent's ``Runtime`` becomes in a forked child: any use raises."""

    def __getattribute__(self, name):
        if name == "synchronize":  # nothing was queued in this process: nothing to wait for
            return _no_op
        raise RuntimeError(FORK_MESSAGE)


def _no_op(*args, **kwargs):
    pass


# iterations a work-item's loops may take in all on Mesa's llvmpipe (``Runtime.loop_limit``)
LLVMPIPE_LOOP_LIMIT = 65535


# ---- the on-disk binary cache ----------------------------------------------------------------
def cache_dir() -> Path:
    root = os.environ.get("CLGRAD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "clgrad"
    )
    return Path(root)


# an entry: MAGIC, the entry's key (the sha256 its file is named by), the sha256 of the binary,
# then the binary; a file that does not check out is never handed to the driver
MAGIC = b"CLGRADK\x01"
_HEADER = len(MAGIC) + 64


def pack_entry(key: bytes, binary: bytes) -> bytes:
    return MAGIC + key + hashlib.sha256(binary).digest() + binary


def unpack_entry(key: bytes, data: bytes) -> bytes | None:
    """The binary of a cache entry, or None when the file is not a whole entry for ``key``
    (truncated, corrupted, another entry's file, an older format)."""
    if len(data) <= _HEADER or not data.startswith(MAGIC):
        return None
    n = len(MAGIC)
    binary = data[_HEADER:]
    if data[n : n + 32] != key or data[n + 32 : _HEADER] != hashlib.sha256(binary).digest():
        return None
    return binary


def write_atomically(path: Path, data: bytes):
    """Writes ``path`` as a temporary file renamed into place: a reader sees the old file or
    the whole new one, never a part (an interrupted write leaves no file behind)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class DiskCache:
    """Program binaries by key under ``cache_dir()``. A directory that cannot be used (too long
    a name, not writable) is one warning and then no caching: it costs time, never a failure."""

    def __init__(self):
        self.broken = False
        self.lock = threading.Lock()

    def _give_up(self, root, e: OSError):
        with self.lock:
            if self.broken:
                return
            self.broken = True
        warnings.warn(
            f"clgrad's kernel cache directory {str(root)[:200]!r} cannot be used "
            f"({type(e).__name__}: {e.strerror or e}); kernels are built from source instead "
            "(set CLGRAD_CACHE_DIR to a writable directory)",
            RuntimeWarning,
            3,
        )

    def get(self, key: bytes) -> bytes | None:
        if self.broken:
            return None
        root = cache_dir()
        path = root / f"{key.hex()}.bin"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ENOTDIR):
                self._give_up(root, e)
            return None
        binary = unpack_entry(key, data)
        if binary is None:
            self.discard(key)
        return binary

    def discard(self, key: bytes):
        try:
            (cache_dir() / f"{key.hex()}.bin").unlink(missing_ok=True)
        except OSError:
            pass

    def put(self, key: bytes, binary: bytes):
        if self.broken:
            return
        root = cache_dir()
        try:
            root.mkdir(parents=True, exist_ok=True)
            write_atomically(root / f"{key.hex()}.bin", pack_entry(key, binary))
        except OSError as e:
            self._give_up(root, e)


disk_cache = DiskCache()

# Drivers that keep built programs on disk themselves, by source. Asking PoCL for a program's
# binary makes it generate every kernel of the program (about 0.1 s each, most never launched:
# an elementwise program holds three layouts), while its own cache (POCL_CACHE_DIR) gives a warm
# build in 20 ms: clgrad's binary cache would only add work there.
_SELF_CACHING = ("Portable Computing Language",)


def _use_binary_cache(platform_name: str) -> bool:
    """Whether programs go through clgrad's binary cache: CLGRAD_BINARY_CACHE=1 or 0 decides,
    else every driver but those that cache their builds themselves."""
    setting = int_setting("CLGRAD_BINARY_CACHE", -1)
    if setting in (0, 1):
        return bool(setting)
    return platform_name.strip() not in _SELF_CACHING


def _quiet_build(program, options, device) -> cl.Program:
    """Builds ``program`` (``_program``'s, from source or binaries) for ``device`` alone (its
    context may hold other devices, which never run this program), without pyopencl's
    CompilerWarning for a non-empty build log: compiler remarks (an always-false unsigned
    compare) are not the user's business; CLGRAD_DEBUG=2 shows the source to look at.

    The build goes to pyopencl's program object beneath ``Program``, whose ``build`` is where
    the warning is raised: silencing it with ``warnings.catch_warnings`` instead would swap the
    warning filters of every thread while a background build runs (that context manager is not
    thread-safe), and a ``pytest.warns`` or a user's filter in the main thread would lose its
    warnings meanwhile."""
    with BUILD_LOCK:
        try:
            program._build(options=" ".join(options).encode(), devices=[device])
        except cl.Error as e:
            log = program.get_build_info(device, cl.program_build_info.LOG)
            raise cl.RuntimeError(f"{e}\n\nbuild log on {device.name}:\n{log}") from None
    return cl.Program(program)


def _program(context, *source_or_binaries):
    """pyopencl's program object beneath ``Program`` (see ``_quiet_build``), from a source or
    from (devices, binaries)."""
    return cl._cl._Program(context, *source_or_binaries)


# ---- contexts ------------------------------------------------------------------------------------
_contexts: dict[int, cl.Context | None] = {}  # platform -> its shared context (None: none)
_contexts_lock = threading.Lock()


def context_for(cl_device) -> cl.Context:
    """The context ``cl_device`` opens in: one shared by every device of its platform, so that
    a copy between two of them is a buffer-to-buffer ``enqueue_copy`` (no host round trip);
    a context of its own where the platform cannot make one for all its devices, or with
    CLGRAD_SHARED_CONTEXT=0."""
    if int_setting("CLGRAD_SHARED_CONTEXT", 1) == 0:
        return cl.Context([cl_device])
    platform = cl_device.platform
    with _contexts_lock:
        if platform.int_ptr not in _contexts:
            devices = platform.get_devices()
            try:
                _contexts[platform.int_ptr] = cl.Context(devices) if len(devices) > 1 else None
            except cl.Error:
                _contexts[platform.int_ptr] = None
        shared = _contexts[platform.int_ptr]
    return shared if shared is not None else cl.Context([cl_device])


# ---- the caching allocator ---------------------------------------------------------------------
def bucket_size(nbytes: int) -> int:
    """The size of the block a request of ``nbytes`` gets: powers of two up to 1 MiB (256 bytes
    at least), then steps of an eighth of the power of two below, so that requests of varying
    sizes reuse each other's blocks (at most 1/8 is wasted above 1 MiB)."""
    if nbytes <= 256:
        return 256
    if nbytes <= 1 << 20:
        return 1 << (nbytes - 1).bit_length()
    step = 1 << ((nbytes.bit_length() - 1) - 3)
    return -(-nbytes // step) * step


# ``Allocator.recent``: blocks of up to RECENT_BYTES, at most RECENT_BLOCKS of a size
RECENT_BYTES = 1 << 20
RECENT_BLOCKS = 64


class Allocator:
    """Keeps freed buffers by bucket size and hands them out again: allocation is the slow part.

    The cache holds at most ``cache_limit`` bytes (a quarter of the device's memory, 2 GiB at
    most): caching beyond it releases the least recently freed blocks. ``in_use`` and
    ``cached`` count bytes of whole blocks; ``peak`` is the largest ``in_use`` since the last
    reset.

    ``release`` runs in ``Storage.__del__``, so in any thread and inside a garbage collection
    that may interrupt this allocator's own critical section: it only appends to ``pending``
    and files the pending blocks when it gets the lock without waiting (else the next call
    that holds the lock files them).

    Most blocks an eager loop frees are small and wanted again at once, by the next op's
    output: ``release`` puts those in ``recent`` (a list per size, with no lock: a list's
    append and pop are atomic) and ``alloc`` takes them from there first. A recent block still
    counts as in use; everything that reads the counts or walks the cache files the recent
    blocks first (``_drain``), as a miss does.
    """

    ALIGN = 256
    CACHE_CAP = 2 << 30
    TOUCH_BYTES = 4 << 20  # new buffers this large are touched, so a lazy allocation fails here

    def __init__(self, runtime):
        self.runtime = runtime
        # bucket size -> (sequence number, buffer), least recently freed first
        self.free: dict[int, deque] = defaultdict(deque)
        self.seq = 0
        self.in_use = 0  # bytes handed out and not yet returned
        self.cached = 0  # bytes held in self.free
        self.peak = 0
        self.cache_limit = min(runtime.device.global_memory // 4, self.CACHE_CAP)
        self.lock = threading.Lock()
        self.pending: list[tuple[cl.Buffer, int]] = []  # returned, not yet filed
        self.recent: dict[int, list] = {}  # bucket size -> blocks returned, counted in use
        # the blocks of captured steps (clgrad.compile): int_ptr -> how many graphs use it (a
        # replay writes them, so they must not go back to the cache while one lives), and
        # int_ptr -> (buffer, nbytes) of those returned meanwhile
        self.pinned: dict[int, int] = {}
        self.held: dict[int, tuple] = {}

    round = staticmethod(bucket_size)

    def alloc(self, nbytes: int) -> cl.Buffer:
        size = 256 if nbytes <= 256 else bucket_size(nbytes)  # the smallest bucket, no call
        recent = self.recent.get(size)
        if recent:
            try:
                buf = recent.pop()
            except IndexError:  # another thread took the last one
                pass
            else:
                if capture.active is not None:
                    capture.active.allocated.add(buf.int_ptr)
                return buf
        buf = victims = None
        with self.lock:
            if self.pending:
                victims = self._drain()
            bucket = self.free.get(size)
            if bucket:
                buf = bucket.pop()[1]
                self.cached -= size
                self.in_use += size
                if self.in_use > self.peak:
                    self.peak = self.in_use
        if victims:
            self._let_go(victims)
        if buf is None:
            buf = self._new(size)
            with self.lock:
                self.in_use += size
                if self.in_use > self.peak:
                    self.peak = self.in_use
        if capture.active is not None:  # the captured step owns what it allocates
            capture.active.allocated.add(buf.int_ptr)
        return buf

    def _new(self, size):
        rt = self.runtime
        dev = rt.device
        limit = rt.max_mem_alloc_size
        for attempt in range(2):
            # OpenCL allocates lazily, so a buffer larger than the device holds may "succeed"
            # and fail at first use: check against what the device reports before asking, and
            # make the driver back a large buffer now (``_create``)
            if size <= limit and self.in_use + self.cached + size <= dev.global_memory:
                try:
                    return self._create(size)
                except (cl.MemoryError, cl.RuntimeError, cl.LogicError):
                    pass
            if attempt == 0:
                self.empty_cache()
        raise OutOfMemoryError(
            f"{dev} ({dev.name}) cannot allocate {size} bytes: {self.in_use} bytes in use, "
            f"largest single allocation {limit}, global memory {dev.global_memory}"
        )

    def _create(self, size) -> cl.Buffer:
        rt = self.runtime
        if rt.host_memory:
            # a CPU device's memory is the host's: ALLOC_HOST_PTR allocates it now and reports
            # a failure (PoCL allocates a plain buffer at its first use, and crashes if it can't)
            flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
            return cl.Buffer(rt.context, flags, size)
        buf = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, size)
        if size >= self.TOUCH_BYTES:
            try:  # on a queue of its own: waiting for it does not wait for the work queued
                cl.enqueue_fill_buffer(rt.side_queue, buf, np.uint8(0), 0, size).wait()
            except BaseException:
                buf.release()
                raise
        return buf

    def release(self, buf: cl.Buffer, nbytes: int):
        if self.runtime.written:
            self.runtime.released(buf)
        self.put_back(buf, nbytes)

    def put_back(self, buf: cl.Buffer, nbytes: int):
        """Files ``buf`` for reuse as ``release`` does, leaving the deferred launches that
        write it alone: a block ``alloc`` just handed out and the caller could not use."""
        if nbytes <= RECENT_BYTES and not self.pinned:
            size = 256 if nbytes <= 256 else bucket_size(nbytes)
            recent = self.recent.get(size)
            if recent is None:
                recent = self.recent.setdefault(size, [])
            if len(recent) < RECENT_BLOCKS:
                recent.append(buf)
                return
        self.pending.append((buf, nbytes))
        if self.lock.acquire(False):
            try:
                victims = self._drain()
            finally:
                self.lock.release()
            if victims:
                self._let_go(victims)

    def _drain(self) -> list:
        """Files the pending blocks in the cache (under the lock); returns the blocks to
        release to keep the cache under its limit."""
        victims = []
        pending = self.pending
        for size, recent in list(self.recent.items()):  # a copy: other threads add sizes
            while recent:
                try:
                    pending.append((recent.pop(), size))
                except IndexError:  # another thread took the last one
                    break
        while pending:
            buf, nbytes = pending.pop()
            if self.pinned and buf.int_ptr in self.pinned:  # still in use by replays
                self.held[buf.int_ptr] = (buf, nbytes)
                continue
            size = 256 if nbytes <= 256 else bucket_size(nbytes)
            self.in_use -= size
            if size > self.cache_limit:
                victims.append(buf)
                continue
            if self.cached + size > self.cache_limit:
                self._evict(self.cache_limit - size, victims)
            self.seq += 1
            self.free[size].append((self.seq, buf))
            self.cached += size
        return victims

    def _evict(self, target: int, victims: list):
        """Moves the least recently freed blocks to ``victims`` until ``cached <= target``."""
        while self.cached > target:
            _, size = min((b[0][0], s) for s, b in self.free.items() if b)
            victims.append(self.free[size].popleft()[1])
            self.cached -= size

    def _let_go(self, victims):
        """Releases ``victims``, or hands them to the runtime while deferred launches may
        still name them (it releases them after it queues those): launches waiting in the list,
        or taken from it by a flush that is queueing them now (a garbage collection inside
        ``flush`` lands here with the list already empty)."""
        if victims:
            rt = self.runtime
            if rt.deferred or rt.flushing:
                rt.late_release.extend(victims)
            else:
                _release_all(victims)

    def pin(self, ptrs):
        """Keeps the blocks ``ptrs`` (int_ptr) out of the cache until as many ``unpin``: one
        cached now, or returned later, is held instead (a captured step's memory, which its
        replays read and write). Several graphs may pin one block (a parameter)."""
        with self.lock:
            victims = self._drain()
            for ptr in ptrs:
                self.pinned[ptr] = self.pinned.get(ptr, 0) + 1
            for size, bucket in self.free.items():
                for entry in [e for e in bucket if e[1].int_ptr in self.pinned]:
                    bucket.remove(entry)
                    self.held[entry[1].int_ptr] = (entry[1], size)
                    self.cached -= size
                    self.in_use += size
        self._let_go(victims)

    def unpin(self, ptrs):
        """Ends a ``pin``: blocks no graph pins any more and no storage holds return to the
        cache."""
        with self.lock:
            for ptr in ptrs:
                n = self.pinned.get(ptr, 0) - 1
                if n > 0:
                    self.pinned[ptr] = n
                    continue
                self.pinned.pop(ptr, None)
                if ptr in self.held:
                    self.pending.append(self.held.pop(ptr))
            victims = self._drain()
        self._let_go(victims)

    def stats(self) -> tuple[int, int, int]:
        """(in_use, cached, peak) with every returned block filed."""
        with self.lock:
            victims = self._drain()
            out = self.in_use, self.cached, self.peak
        self._let_go(victims)
        return out

    def empty_cache(self):
        """Releases every cached block."""
        with self.lock:
            victims = self._drain()
            victims += [buf for bucket in self.free.values() for _, buf in bucket]
            self.free.clear()
            self.cached = 0
        self._let_go(victims)

    def reset_peak(self):
        with self.lock:
            victims = self._drain()
            self.peak = self.in_use
        self._let_go(victims)


@contextlib.contextmanager
def _interrupts_held():
    """Ctrl-C (SIGINT) during the block raises once the block is over: a flush cut short would
    lose the deferred launches it had not queued yet, leaving tensors that eager execution
    had computed unwritten (a second Ctrl-C raises at once). Only in the main thread (the one
    Python gives signals to).
    ``_signal``, the module ``signal`` wraps: its wrappers' enum conversions cost 3 us a call
    (an exception each), the handler swap itself 0.3 us."""
    previous = _signal.getsignal(_signal.SIGINT)
    if previous is None:  # a handler not set from Python: it could not be put back
        yield
        return
    got = []

    def held(signum, frame):
        if got:  # a second Ctrl-C: the block may hang (a driver's), the user insists
            raise KeyboardInterrupt
        got.append(frame)

    _signal.signal(_signal.SIGINT, held)
    try:
        yield
    finally:
        _signal.signal(_signal.SIGINT, previous)
        if got:
            if callable(previous):
                previous(_signal.SIGINT, got[0])
            elif previous == _signal.SIG_DFL:
                _signal.raise_signal(_signal.SIGINT)


def _release_all(buffers):
    for buf in buffers:
        buf.release()


class _ForkedAllocator(Allocator):
    """What a parent's allocator becomes in a forked child: its buffers belong to the parent."""

    def alloc(self, nbytes):
        raise RuntimeError(FORK_MESSAGE)

    def release(self, buf, nbytes):
        pass

    def empty_cache(self):
        pass

    def stats(self):
        raise RuntimeError(FORK_MESSAGE)

    reset_peak = stats


class Runtime:
    """Opened lazily by ``Device.runtime``: one context and one in-order queue per device."""

    def __init__(self, device):
        if _forked:
            raise RuntimeError(FORK_MESSAGE)
        self.device = device
        self.context = context_for(device._cl)
        # the device named: a queue of a shared context would otherwise go to its first device
        self._queue = cl.CommandQueue(self.context, device._cl)
        # (event, what must stay alive until it completes) of copies reading this device's
        # memory from another device's queue (see ``hold``)
        self.held: list = []
        # fills the allocator's new buffers (made on first use: most devices never need it)
        self._side_queue = None
        self.programs: dict[tuple, cl.Program] = {}
        # the one kernel cache of this device: kernel families look kernels up by a lean key of
        # their own (``cached``) so the lookup on each launch costs a dict probe
        self.kernels: dict[tuple, cl.Kernel] = {}
        # kernel -> its scalar argument types as pyopencl was told them (None: a buffer)
        self.typed: dict[cl.Kernel, tuple] = {}
        self.lock = threading.RLock()  # builds and the program and kernel caches
        self.launch_lock = threading.Lock()  # a kernel's arguments and its enqueue, together
        self.flush_lock = threading.RLock()  # one thread queues the deferred launches at a time
        d = device._cl
        self.cache_key = f"{d.platform.name}|{d.platform.version}|{d.name}|{d.driver_version}"
        # -w (OpenCL's own option): warnings about generated code are nothing a user can act
        # on, and PoCL's compiler prints them on the terminal ("18 warnings generated": x != x,
        # the NaN test, is a self-comparison in an int kernel)
        self.build_options = ["-cl-std=CL1.2", "-w"]
        self.binary_cache = _use_binary_cache(d.platform.name)
        self.is_gpu = bool(d.type & cl.device_type.GPU)
        # Mesa's llvmpipe ends any work-item's loops after 65535 iterations in all (its loop
        # limiter: nested loops count together), silently: kernels whose items loop over a
        # size (a norm's group, a product's K) take another path or split past it there
        self.loop_limit = LLVMPIPE_LOOP_LIMIT if "llvmpipe" in d.name.lower() else None
        # float division and sqrt rounded correctly, as PyTorch's CUDA and CPU kernels do: GPU
        # drivers default to approximations of a few ulp (a fused optimizer step and the same
        # update run op by op then drift apart); CPU devices round these correctly anyway
        if self.is_gpu and d.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT:
            self.build_options.append("-cl-fp32-correctly-rounded-divide-sqrt")
        # float exp/log/tanh as vectorizable arithmetic (kernels/_prelude.cl.mako) where libm
        # is scalar calls: devices that are not GPUs; CLGRAD_POLY_MATH=0/1 forces it off/on
        if int_setting("CLGRAD_POLY_MATH", 0 if self.is_gpu else 1):
            self.build_options.append("-DCG_POLY_MATH")
        # CLGRAD_BUILD_OPT=0: kernels built without the driver's optimizer (-cl-opt-disable),
        # for work where building dominates (a test suite, a short script on tiny tensors): on
        # PoCL a cold start then builds about 2.4x faster and the kernels run slower. The
        # option is part of the cache keys, so such builds never stand in for optimized ones.
        if not int_setting("CLGRAD_BUILD_OPT", 1):
            self.build_options.append("-cl-opt-disable")
        # PoCL: the builtins a program calls declared in front of it, where PoCL would parse
        # all of opencl-c.h twice per build (builtins.py); CLGRAD_LEAN_HEADER=0 turns it off
        self.builtin_header = None
        if int_setting("CLGRAD_LEAN_HEADER", 1):
            self.builtin_header = builtins.pocl_header(d.platform.version)
        self.host_memory = bool(d.type & cl.device_type.CPU)
        # elementwise kernels of one compute type and result dtype in one program (``bundled``)
        # where building costs per program: PoCL's CPU devices generate a kernel's code at its
        # first launch only, and without the optimizer build a program of 90 kernels in 185 ms,
        # one of 3 in 25. Not where the driver compiles every kernel at the build (GPUs), nor
        # with clgrad's binary cache (asking for a binary makes PoCL generate every kernel), nor
        # in optimized builds: PoCL optimizes every kernel of a program at its build (780 ms for
        # those 90), and a workload launches a few of each bundle (the main job's cold start took
        # 50.7 s bundled, 44.7 s not: medians of 3). CLGRAD_BUNDLE=0/1 forces.
        lazy = not self.is_gpu and not self.binary_cache
        unoptimized = "-cl-opt-disable" in self.build_options
        self.bundle = bool(int_setting("CLGRAD_BUNDLE", 1 if lazy and unoptimized else 0))
        self.unbundled: set = set()  # bundle keys the driver refused to build (``bundled``)
        # read once: querying the driver's extension string is a call into the driver
        self.atomic64 = "cl_khr_int64_base_atomics" in d.extensions
        # native vector widths (elements): what the CPU micro-kernels' vectors are shaped by
        self.vector_width = {
            "float": d.native_vector_width_float,
            "double": d.native_vector_width_double,
        }
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
        self.allocator = Allocator(self)
        # elementwise launches not yet queued, in order (fusion.py); ``written``: buffer id ->
        # the deferred launches writing it, so a storage's death marks them (``release``)
        self.deferred: list = []
        self.written: dict[int, list] = {}
        self.flushing = 0  # flushes in progress (``flush``)
        # launches held behind a gate (BATCH_LAUNCHES) at most, on CPU devices; the gate (a
        # user event, or None) and how many launches wait behind it
        self.batch = BATCH_LAUNCHES if not self.is_gpu and BATCH_LAUNCHES > 1 else 0
        self.gate = None
        self.gated = 0
        self.gate_closed = 0.0  # perf_counter() when the gate closed
        self.late_release: list = []  # buffers the allocator let go while deferred launches held
        # the buffers the launches of the flush under way touch (``Fuser.run``): what a scratch
        # buffer taken meanwhile must not be (``plans.run``)
        self.flush_buffers: list = []
        self.fuser = Fuser(self, FUSE_AFTER) if FUSION else None
        _runtimes.add(self)

    @property
    def queue(self) -> cl.CommandQueue:
        """The device's in-order queue, for code that queues commands of its own (and may wait
        for them): its deferred launches are queued and its gate opened first, so that nothing
        queued before waits on the host."""
        self.flush()
        self.submit()
        return self._queue

    @property
    def side_queue(self) -> cl.CommandQueue:
        if self._side_queue is None:
            with self.lock:
                if self._side_queue is None:
                    self._side_queue = cl.CommandQueue(self.context, self.device._cl)
        return self._side_queue

    # ---- programs ----------------------------------------------------------------------------
    def probe(self, kind: str) -> bool:
        """Builds and runs a tiny kernel: extension strings alone are not always truthful. No
        half without cl_khr_fp16 (OpenCL C has no other way to it), and no build to find that
        out: PoCL's compiler would print its errors on the terminal."""
        np_t = {"double": np.float64, "half": np.float16}[kind]
        if kind == "half" and "cl_khr_fp16" not in self.device._cl.extensions:
            return False
        try:
            prg = _quiet_build(_program(self.context, _PROBES[kind]), [], self.device._cl)
            x = np.array([3], np_t)
            buf = cl.Buffer(self.context, cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
            prg.probe(self.side_queue, (1,), None, buf)
            cl.enqueue_copy(self.side_queue, x, buf)  # blocking
            return float(x[0]) == 7.0
        except Exception:
            return False

    def kernel(self, template: str, function: str, **params) -> cl.Kernel:
        """Kernel ``function`` of ``template`` rendered with ``params``; built once per process."""
        key = (template, function, tuple(sorted(params.items())))
        k = self.kernels.get(key)
        if k is None:
            with self.lock:
                k = self.kernels.get(key)
                if k is None:
                    prg = self.program(template, **params)
                    k = self.kernels[key] = cl.Kernel(prg, function)
        return k

    def bundled(self, key, kernel, build) -> cl.Kernel:
        """``build(kernels)`` for every kernel filed with ``kernel`` under ``key`` in
        ``backend.base.BUNDLES``, where this device builds them in one program (``bundle``);
        ``build((kernel,))`` where it does not, where ``kernel`` has no bundle, or where the
        driver refused this bundle once (then remembered: each of its kernels builds alone)."""
        members = BUNDLES.get(key) if self.bundle and key not in self.unbundled else None
        if members and kernel in members:
            try:
                return build(tuple(sorted(members, key=lambda m: m.name)))
            except KernelBuildError:
                log.debug("bundle %s not built; building %s alone", key, kernel.name)
                self.unbundled.add(key)
        return build((kernel,))

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
            with self.lock:
                prg = self.programs.get(key)
                if prg is None:
                    source = render(template, **params)
                    if DEBUG >= 2:
                        log.debug("rendered %s %s:\n%s", template, params, source)
                    prg = self.programs[key] = self.build(source, template)
        return prg

    def build(self, source: str, label: str = "program") -> cl.Program:
        """Builds ``source``, reusing a binary cached on disk by an earlier process (checked
        against its checksum first: a damaged entry is rebuilt, never given to the driver).
        Where the runtime knows the driver's builtin header, the builtins ``source`` calls
        are declared in front of it instead (``builtins``), and a plain build is the fallback
        if that one fails."""
        if self.builtin_header is not None:
            header = builtins.load(self.builtin_header)
            declared = header.declarations(builtins.called(source, header))
            lean = self.build_options + [f"-D{builtins.GUARD}"]
            try:
                return self._build(f"{declared}\n{source}", label, lean, report=False)
            except cl.RuntimeError as e:  # a declaration missed: the header's own way
                log.debug("%s: built again with the whole builtin header after: %s", label, e)
        return self._build(source, label, self.build_options)

    def _build(self, source: str, label: str, options: list, report=True) -> cl.Program:
        """``build`` with these options; a failure raises KernelBuildError, which keeps the
        source in a file, or with ``report`` False the driver's own error."""
        opts = " ".join(options)
        key = hashlib.sha256(f"{self.cache_key}\n{opts}\n{source}".encode()).digest()
        dev = self.device._cl
        binary = disk_cache.get(key) if self.binary_cache else None
        if binary is not None:
            try:
                return _quiet_build(_program(self.context, [dev], [binary]), options, dev)
            except Exception:
                disk_cache.discard(key)  # a binary this driver rejects: rebuild from source
        try:
            prg = _quiet_build(_program(self.context, source), options, dev)
        except cl.RuntimeError as e:
            if not report:
                raise
            src_path = Path(tempfile.gettempdir()) / f"clgrad-{label}-{key.hex()[:12]}.cl"
            try:
                write_atomically(src_path, source.encode())
            except OSError as w:
                src_path = f"(not written: {w})"
            raise KernelBuildError(
                f"building {label} failed on {self.device} ({self.device.name}, driver "
                f"{dev.driver_version}).\nsource: {src_path}\nbuild log:\n{e}"
            ) from None
        if self.binary_cache:
            # one binary per device of the program (the context's), built for this one only
            devices = prg.get_info(cl.program_info.DEVICES)
            binaries = prg.get_info(cl.program_info.BINARIES)
            if len(binaries) == len(devices) and dev in devices:
                disk_cache.put(key, binaries[devices.index(dev)])
        return prg

    # ---- launching ---------------------------------------------------------------------------
    def set_arg_types(self, kernel: cl.Kernel, types):
        """Tells pyopencl ``kernel``'s scalar argument types (NumPy types, None for buffers)."""
        with self.launch_lock:
            kernel.set_scalar_arg_dtypes(types)
            self.typed[kernel] = tuple(types)

    def type_like(self, kernel: cl.Kernel, args):
        """``set_arg_types`` from example arguments: NumPy scalars give their types."""
        self.set_arg_types(kernel, [type(a) if isinstance(a, np.generic) else None for a in args])

    def launch(self, kernel: cl.Kernel, global_size, local_size, args):
        """Enqueues ``kernel``; scalar arguments are NumPy scalars (their type is the C type).

        The first launch tells pyopencl the scalar types, which switches it to a generated
        invoker: 4 us per launch instead of 26 us for setting arguments one by one.
        """
        if kernel not in self.typed:
            self.type_like(kernel, args)
        self.enqueue(kernel, global_size, local_size, args)

    def enqueue(self, kernel: cl.Kernel, global_size, local_size, args):
        """``launch`` of a kernel typed when it was built (``set_arg_types``), with sizes the
        caller computed once: the path of every small op, so only the lock and the enqueue."""
        if self.deferred or self.flushing:
            self.flush()
        self.enqueue_now(kernel, global_size, local_size, args)

    def enqueue_now(self, kernel: cl.Kernel, global_size, local_size, args):
        """``enqueue`` without flushing the deferred launches first (``flush`` runs them).
        Setting the arguments and enqueueing happen under ``launch_lock``: the kernel object is
        shared by every thread."""
        if DEBUG:
            log.debug(
                "launch %s on %s global=%s local=%s",
                kernel.function_name,
                self.device,
                global_size,
                local_size,
            )
        if capture.active is not None:
            capture.record_launch(self, kernel, global_size, local_size, args)
        with self.launch_lock:
            if self.batch:
                self._gated(kernel, global_size, local_size, args)
            else:
                kernel(self._queue, global_size, local_size, *args)

    def _gated(self, kernel, global_size, local_size, args):
        """Enqueues a launch behind the gate (under ``launch_lock``), closing one first where
        none is; opens it once BATCH_LAUNCHES wait there, BATCH_SECONDS after it closed, or
        behind a launch of HEAVY_ITEMS work-items (which closes none)."""
        items = global_size[0]
        for n in global_size[1:]:
            items *= n
        if self.gate is None:
            if items >= HEAVY_ITEMS:
                kernel(self._queue, global_size, local_size, *args)
            else:  # the launch waits for the gate, and those after it for the launch
                kernel(self._queue, global_size, local_size, *args, wait_for=[self._new_gate()])
                self.gated = 1
            return
        kernel(self._queue, global_size, local_size, *args)
        self.gated += 1
        if (
            items >= HEAVY_ITEMS
            or self.gated >= self.batch
            or perf_counter() - self.gate_closed > BATCH_SECONDS
        ):
            self.open_gate()

    def _new_gate(self) -> cl.UserEvent:
        self.gate = cl.UserEvent(self.context)
        self.gate_closed = perf_counter()
        self.gated = 0
        return self.gate

    def close_gate(self):
        """Closes the gate where the device has one and it is open: what is queued next waits
        behind it until ``open_gate`` (under ``launch_lock``; a captured step's replay)."""
        if self.batch and self.gate is None:
            cl.enqueue_marker(self._queue, wait_for=[self._new_gate()])

    def open_gate(self):
        """Hands the launches behind the gate, if any, to the device (under ``launch_lock``)."""
        gate = self.gate
        if gate is not None:
            try:  # (an interrupt may not leave the launches behind it waiting for ever)
                gate.set_status(cl.command_execution_status.COMPLETE)
            finally:
                self.gate = None

    def submit(self):
        """``open_gate``, taking the lock (``plans.run`` after heavy work, ``queue``)."""
        if self.gate is not None:
            with self.launch_lock:
                self.open_gate()

    def host_wait(self, wait):
        """Calls ``wait(queue)``, which waits for the queue's work so far (a blocking copy,
        ``finish``), after queueing the deferred launches and with the gate open, under
        ``launch_lock``: no other thread's gate can come between the open gate and the wait."""
        self.flush()
        with self.launch_lock:
            self.open_gate()
            return wait(self._queue)

    def launch1d(self, kernel: cl.Kernel, n: int, args, per_item: int = 1):
        """Launches a grid-stride kernel over ``n`` items."""
        items = max(1, min(-(-n // per_item), self.max_work_items))
        items = -(-items // self.local_size) * self.local_size
        self.launch(kernel, (items,), (self.local_size,), args)

    def hold(self, event: cl.Event, keep) -> None:
        """Keeps ``keep`` (what owns memory of this device that another device's queue reads)
        alive until ``event`` completes: its buffer must not return to this allocator, and be
        written by this queue, while the other queue may still read it. Completed holds are
        dropped here and at ``synchronize``, without waiting."""
        done = cl.command_execution_status.COMPLETE
        with self.lock:
            self.held = [h for h in self.held if h[0].command_execution_status > done]
            self.held.append((event, keep))

    # ---- deferred elementwise launches (fusion.py) -----------------------------------------
    def defer(self, entry) -> None:
        """Keeps an elementwise launch for ``flush`` (which fuses what it can)."""
        with self.flush_lock:  # threads share the list: none may append to one being flushed
            deferred = self.deferred
            deferred.append(entry)
            # _keep's filing inline: this runs for every elementwise op
            self.written.setdefault(id(entry.out[0]), []).append(entry)
            if len(deferred) >= MAX_DEFERRED:
                self.flush(hold_last=True)

    def _keep(self, entry) -> None:
        """Appends ``entry`` to the deferred list, filed under the buffer it writes (which
        ``released`` looks up), under ``flush_lock``."""
        self.deferred.append(entry)
        self.written.setdefault(id(entry.out[0]), []).append(entry)

    def flush(self, hold_last: bool = False) -> None:
        """Queues the deferred launches (as few kernels as fusion makes them): called before
        anything else reaches the queue or the device's memory. Nothing to do (no deferred
        launch, no flush under way in another thread): returns at once. In the main thread,
        Ctrl-C waits until every launch is queued (``_interrupts_held``): none is lost.
        ``hold_last`` (a full list, nothing waiting for the queue): the last group stays
        deferred, so a loop of elementwise ops is cut where its own structure cuts it, not
        wherever the count ran out (a cut that moves from step to step would make each step
        a kernel of its own to build)."""
        if not (self.deferred or self.flushing):
            return
        main = threading.current_thread() is threading.main_thread()
        with self.flush_lock, _interrupts_held() if main else contextlib.nullcontext():
            # ``flushing`` stays set until every launch is queued: another thread that sees it
            # waits here (``flush``) instead of queueing ahead of them, while this thread's own
            # launches from inside (a reduction run apart) find nothing left to flush.
            entries, self.deferred = self.deferred, []
            self.written = {}
            self.flushing += 1
            try:
                if entries:
                    for e in self.fuser.run(entries, hold_last):  # deferred again, in order
                        self._keep(e)
            finally:
                self.flushing -= 1
                late, self.late_release = self.late_release, []
        _release_all(late)

    def released(self, buf) -> None:
        """A storage gave ``buf`` back: the deferred launches writing it need not store."""
        written = self.written.pop(id(buf), None)
        if written is not None:
            for entry in written:
                entry.dead = True

    def synchronize(self):
        self.host_wait(cl.CommandQueue.finish)
        with self.lock:
            done = cl.command_execution_status.COMPLETE
            self.held = [h for h in self.held if h[0].command_execution_status > done]
