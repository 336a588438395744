"""Devices: the ``Device`` every backend's devices derive from, the list of devices, and
``CLGRAD_DEVICE`` parsing.

This module knows no backend. A backend registers its device kind with ``register_kind``
(``clgrad.backend`` does so for the host and for OpenCL when it is imported); the list of
devices is gathered from the registered kinds at first use.
"""

from __future__ import annotations

import enum
import os
import re
import threading
from collections.abc import Callable
from functools import cached_property

NO_OPENCL_HINT = (
    "no OpenCL platform was found. `pip install 'clgrad[pocl]'` (or `pip install "
    "'pyopencl[pocl]'`) gives a CPU OpenCL device with no root; for a GPU install its "
    "vendor's OpenCL driver (an ICD file under /etc/OpenCL/vendors)."
)


class DeviceType(str, enum.Enum):
    """What kind of device a ``Device`` is. It is a ``str`` too, the device's kind string
    ("cpu" for the host, "cl" for the OpenCL kinds, "meta"), because PyTorch code uses
    ``x.device.type`` as one (PyTorch's ``device.type`` is a string): compares it with
    ``"cpu"``, passes it to ``torch.autocast(device_type=...)``, writes it to JSON.

    Two kinds compare by identity (an OpenCL GPU and an OpenCL CPU device are both "cl");
    ``.value`` is its description.

    >>> clgrad.device("cpu").type == "cpu", clgrad.device("cpu").type is clgrad.DeviceType.HOST
    (True, True)
    >>> f"{clgrad.device('cpu').type}", clgrad.device("cpu").type.value
    ('cpu', 'host cpu')
    >>> isinstance(clgrad.device("cpu").type, str), clgrad.DeviceType.GPU == clgrad.DeviceType.CPU
    (True, False)
    """

    def __new__(cls, kind: str, description: str):
        member = str.__new__(cls, kind)
        member._value_ = description
        return member

    HOST = ("cpu", "host cpu")
    GPU = ("cl", "opencl gpu")
    CPU = ("cl", "opencl cpu")
    ACCELERATOR = ("cl", "opencl accelerator")
    META = ("meta", "meta: shapes and dtypes, no data")

    def __eq__(self, other):
        if isinstance(other, DeviceType):
            return self is other
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__  # as the string it equals: {"cpu": ...}[x.device.type] finds it

    def __str__(self):
        return str.__str__(self)

    __repr__ = str.__repr__  # 'cpu', as PyTorch's string prints (``.name`` tells the kinds apart)

    def __format__(self, spec):
        return str.__format__(str(self), spec)

    def __reduce_ex__(self, protocol):  # pickled by name: two kinds share a string
        return getattr, (DeviceType, self.name)


class Device:
    """A place tensors live and ops run: ``cpu`` (the host) or ``cl:N`` (an OpenCL device).

    Devices are singletons made by their backend; ``clgrad.device("cl:0")`` finds one.
    A subclass sets ``kind`` ("cpu" or "cl") and provides ``backend`` (the primitives),
    ``allocator`` (``alloc(nbytes)`` / ``release(buffer, nbytes)``) and the descriptive
    properties below.

    >>> clgrad.device("cpu")
    device(type='cpu')
    >>> clgrad.device("cpu") == "cpu"
    True
    """

    kind = "cpu"
    is_cpu = True  # class attributes: read on every op, so a plain lookup
    is_cl = False
    type = DeviceType.HOST

    def __new__(cls, spec="cpu", index=None):
        if isinstance(spec, Device):
            return spec
        return resolve(spec if index is None else f"{spec}:{index}")

    @property
    def is_cuda(self) -> bool:
        """Whether PyTorch's ``"cuda"`` names this device (see ``cuda_devices``)."""
        return self.is_cl and self in cuda_devices()

    @classmethod
    def _make(cls, index: int, **attrs) -> Device:
        self = object.__new__(cls)
        self.index = index
        for k, v in attrs.items():
            setattr(self, k, v)
        return self

    def __repr__(self):
        if self.index is None or self.kind == "cpu":  # one device of its kind: no index
            return f"device(type='{self.kind}')"
        return f"device(type='{self.kind}', index={self.index})"

    def __str__(self):
        if self.index is None or self.kind == "cpu":
            return self.kind
        return f"{self.kind}:{self.index}"

    def __eq__(self, other):
        if other is self:  # devices are singletons: the common case is one compare
            return True
        if isinstance(other, str):
            try:
                other = resolve(other)
            except RuntimeError:
                return False
        return isinstance(other, Device) and str(self) == str(other)

    def __hash__(self):
        # a device equals its name (``== "cl:0"``), so it hashes as the name: made once, as
        # dicts keyed by devices hash them on every op
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash(str(self))
        return h

    def __reduce__(self):
        return (resolve, (str(self),))

    def __enter__(self) -> Device:
        """``with clgrad.device("cl:0"):`` makes this the device that tensors created inside
        without a ``device=`` go to (modules' parameters too), in this thread, as
        ``torch.device``'s context manager.

        >>> with clgrad.device("cpu"):
        ...     clgrad.zeros(1).device
        device(type='cpu')
        """
        _scoped.__dict__.setdefault("devices", []).append(self)
        return self

    def __exit__(self, *exc) -> None:
        _scoped.devices.pop()

    # ---- what a backend's device provides ------------------------------------------------
    name = "device"
    platform = ""
    vendor = "other"
    driver_version = ""
    compute_units = 1
    global_memory = 0
    supports_float64 = True
    supports_float16 = True  # whether half *arithmetic* compiles; half storage works everywhere

    @cached_property
    def backend(self):
        raise NotImplementedError

    @cached_property
    def allocator(self):
        raise NotImplementedError

    def supports(self, dt) -> bool:
        """Whether tensors of dtype ``dt`` can live here (float64, and complex128 whose parts
        are float64, need double precision).

        >>> clgrad.device("cpu").supports(clgrad.complex128)
        True
        """
        return dt.to_real().name != "float64" or self.supports_float64

    def require(self, *dts) -> None:
        """Raises RuntimeError naming the device when it cannot run one of ``dts``.

        >>> clgrad.device("cpu").require(clgrad.float32, clgrad.float64)
        """
        for dt in dts:
            if not self.supports(dt):
                raise RuntimeError(
                    f"{self} ({self.name}) cannot run {dt}: the device has no double precision "
                    "(cl_khr_fp64); use float32"
                )

    def synchronize(self) -> None:
        """Waits for the work queued on this device."""

    def flush(self) -> None:
        """Queues the work this device holds back (deferred elementwise launches, fused at
        this point), without waiting for it.

        >>> clgrad.device("cpu").flush()
        """


class _Unavailable(Device):
    """``cuda`` or ``cuda:N`` where there is no such device: a name that prints, compares and
    pickles as torch's ``torch.device("cuda")`` does on a machine without a GPU (a program may
    make one without using it), while whatever would use it (a tensor made there, a copy to it,
    its properties) raises the RuntimeError that says why."""

    is_cpu = False
    kind = "cuda"
    type = "cuda"

    def _refuse(self):
        raise RuntimeError(f"no device matches {str(self)!r}: {self.why}")

    backend = allocator = property(_refuse)
    name = platform = vendor = driver_version = property(_refuse)
    compute_units = global_memory = property(_refuse)

    def supports(self, dt) -> bool:
        self._refuse()

    def synchronize(self) -> None:
        self._refuse()

    def flush(self) -> None:  # nothing queued there: nothing to do
        pass


# ---- the registry ------------------------------------------------------------------------------
_lock = threading.Lock()
_host: Device | None = None
_enumerators: list[Callable[[int], list[Device]]] = []
_registry: list[Device] | None = None
_named: dict[str, Device] = {}  # devices a backend names once (``meta``), not among devices()
errors: list[str] = []  # why a registered kind found no device (shown by `clgrad info`)


def register_kind(enumerate_devices: Callable[[int], list[Device]], host: bool = False):
    """A backend's devices: ``enumerate_devices(first_index)`` lists them at first use. The
    host kind gives the one ``cpu`` device."""
    global _host, _registry
    with _lock:
        if host:
            (_host,) = enumerate_devices(0)
        else:
            _enumerators.append(enumerate_devices)
            _registry = None


def register_named(name: str, device: Device) -> None:
    """A backend's one device of a kind that is not a place to compute (``meta``): found by
    ``name``, and not listed by ``devices()``."""
    _named[name] = device


def accelerators() -> list[Device]:
    """Every non-host device (``cl:0``, ``cl:1``, ...), in one stable order."""
    global _registry
    with _lock:
        if _registry is None:
            found: list[Device] = []
            for enumerate_devices in _enumerators:
                found += enumerate_devices(len(found))
            _registry = found
        return _registry


def host() -> Device:
    if _host is None:
        raise RuntimeError("no host backend is registered (import clgrad, not clgrad.device)")
    return _host


def devices() -> list[Device]:
    """Every device clgrad can use: ``cpu`` first, then ``cl:0``, ``cl:1``, ...

    >>> clgrad.devices()[0]
    device(type='cpu')
    """
    return [host(), *accelerators()]


def _no_device(spec, why):
    listed = ", ".join(f"{d} ({d.vendor} {d.name})" for d in devices())
    hint = f" Note: {NO_OPENCL_HINT}" if not accelerators() else ""
    return RuntimeError(f"no device matches {spec!r}: {why}. Devices: {listed}.{hint}")


def _gpus() -> list[Device]:
    return [d for d in accelerators() if d.type is DeviceType.GPU]


def _best() -> Device:
    found = accelerators()
    if not found:
        raise _no_device("cl", "there is no OpenCL device")
    return next(iter(_gpus()), found[0])


def _parse(spec: str) -> Device:
    s = spec.strip().lower()
    if s in ("cpu", "cpu:0"):  # (PyTorch's "cpu:0": the host is one device)
        return host()
    if s in _named:
        return _named[s]
    found = accelerators()
    m = re.fullmatch(r"cuda(?::(\d+))?", s)
    if m:
        pool = cuda_devices()
        n = _cuda_index if m[1] is None else int(m[1])
        if n >= len(pool):
            why = _NO_CUDA if not pool else f"there are {len(pool)} cuda devices"
            return _Unavailable._make(None if m[1] is None else n, why=why)
        return pool[n]
    if s == "cl":
        env = os.environ.get("CLGRAD_DEVICE", "").strip().lower()
        if env and env not in ("cl", "cpu"):
            chosen = _parse(env)
            if chosen.is_cl:
                return chosen
        return _best()
    m = re.fullmatch(r"(cl|gpu):(\d+)", s)
    if m:
        pool = found if m[1] == "cl" else _gpus()
        n = int(m[2])
        if n >= len(pool):
            raise _no_device(spec, f"there are {len(pool)} {m[1]} devices")
        return pool[n]
    if s == "gpu":
        if not _gpus():
            raise _no_device(spec, "there is no OpenCL GPU")
        return _gpus()[0]
    for d in found:
        if s and s in f"{d.vendor}\n{d.platform}\n{d.name}".lower():
            return d
    raise _no_device(spec, "nothing has that name, vendor or platform")


_resolved: dict[str, Device] = {}


def resolve(spec) -> Device:
    """A Device from a Device, 'cpu', 'cl', 'cl:N', 'gpu', 'gpu:N', 'cuda', 'cuda:N', an int
    (``cuda:N``, as PyTorch reads ``.to(0)``) or a vendor/name substring."""
    if isinstance(spec, Device):
        return spec
    if spec is None:
        return default_device()
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec = f"cuda:{spec}"
    if not isinstance(spec, str):
        raise TypeError(f"expected a device string or Device, got {type(spec).__name__}")
    dev = _resolved.get(spec)
    if dev is None:
        dev = _resolved[spec] = _parse(spec)
    return dev


def device(spec="cpu", index=None) -> Device:
    """``clgrad.device("cl")``: the OpenCL device CLGRAD_DEVICE selects, or the best one.

    >>> str(clgrad.device("cpu"))
    'cpu'
    """
    return Device(spec, index)


_default: Device | None = None
# the devices of the enclosing ``with device:`` blocks (``Device.__enter__``), per thread
_scoped = threading.local()


def default_device() -> Device:
    """Where tensors are created when no ``device=`` is given: the device of the innermost
    ``with device:`` block, else ``set_default_device``'s, else CLGRAD_DEVICE's, else ``cpu``.

    >>> clgrad.default_device() in clgrad.devices()
    True
    """
    scoped = getattr(_scoped, "devices", None)
    if scoped:
        return scoped[-1]
    global _default
    if _default is None:
        env = os.environ.get("CLGRAD_DEVICE", "").strip()
        _default = _parse(env) if env else host()
    return _default


def get_default_device() -> Device:
    """``torch.get_default_device``: the device creation functions use (``default_device``).

    >>> clgrad.get_default_device() == clgrad.default_device()
    True
    """
    return default_device()


def set_default_device(spec) -> None:
    """Makes ``spec`` the device creation functions use (``"cuda"`` included, as
    ``torch.set_default_device``); ``None`` goes back to CLGRAD_DEVICE.

    >>> clgrad.set_default_device("cpu"); clgrad.zeros(1).device
    device(type='cpu')
    >>> clgrad.set_default_device(None)
    """
    global _default
    _default = None if spec is None else resolve(spec)


def synchronize(device=None) -> None:
    """Waits until every kernel queued on ``device`` (default: every device) is done.

    >>> clgrad.synchronize()
    """
    for d in [resolve(device)] if device is not None else devices():
        d.synchronize()


# ---- PyTorch's "cuda" ----------------------------------------------------------------------
# As PyTorch's ROCm build maps torch.cuda to AMD GPUs, "cuda" names OpenCL devices here, so
# `device = "cuda" if torch.cuda.is_available() else "cpu"` runs a PyTorch program on OpenCL.
# "cuda" is only a name: the device stays the one cl:N singleton (see README, "PyTorch device
# names on OpenCL").
_NO_CUDA = (
    'there is no OpenCL GPU ("cuda" means the OpenCL GPUs, or the OpenCL device CLGRAD_DEVICE '
    "names, e.g. CLGRAD_DEVICE=cl:0 for a CPU OpenCL device such as PoCL)"
)
_cuda_pool: list[Device] | None = None
_cuda_index = 0  # torch.cuda.set_device's current device, an index into cuda_devices()


def cuda_devices() -> list[Device]:
    """The devices ``"cuda:0"``, ``"cuda:1"``, ... name: the OpenCL device CLGRAD_DEVICE selects
    when it selects one (a CPU OpenCL device such as PoCL included), else every OpenCL GPU.

    >>> from clgrad.device import cuda_devices
    >>> all(d.is_cl for d in cuda_devices())
    True
    """
    global _cuda_pool
    if _cuda_pool is None:
        env = os.environ.get("CLGRAD_DEVICE", "").strip().lower()
        # CLGRAD_DEVICE=cuda names no particular device: that is the GPUs below
        chosen = _parse(env) if env and env != "cpu" and not env.startswith("cuda") else None
        _cuda_pool = [chosen] if chosen is not None and chosen.is_cl else _gpus()
    return _cuda_pool


def cuda_index() -> int:
    """The index of the current cuda device (``torch.cuda.current_device()``).

    >>> from clgrad.device import cuda_index
    >>> cuda_index()
    0
    """
    return _cuda_index


def set_cuda_index(index: int) -> None:
    """Makes ``cuda:index`` the device plain ``"cuda"`` names (``torch.cuda.set_device``).

    >>> from clgrad.device import set_cuda_index
    >>> set_cuda_index(0)
    """
    global _cuda_index
    pool = cuda_devices()
    if index != 0 and not 0 <= index < len(pool):
        raise _no_device(f"cuda:{index}", f"there are {len(pool)} cuda devices")
    _cuda_index = index
    _resolved.clear()  # "cuda" resolved to the previous current device


def cuda_device(spec=None) -> Device:
    """The device ``Tensor.cuda(spec)`` moves to: the current cuda device for None, ``cuda:N``
    for an int N, else ``spec`` as ``resolve`` reads it.

    >>> from clgrad.device import cuda_device
    >>> cuda_device("cpu")
    device(type='cpu')
    """
    dev = resolve("cuda" if spec is None else spec)
    if type(dev) is _Unavailable:  # what needs a cuda device raises without one, as torch's
        dev._refuse()
    return dev
