"""clgrad: PyTorch-style tensors and autograd on any OpenCL device (and on the host with NumPy).

>>> import clgrad
>>> x = clgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""

import builtins as _builtins

from . import (
    _dynamo,
    accelerator,
    amp,
    autograd,
    backend,
    backends,
    cl,
    compiler,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    hub,
    jit,
    linalg,
    mps,
    multiprocessing,
    nn,
    optim,
    overrides,
    profiler,
    quasirandom,
    random,
    return_types,
    signal,
    sparse,
    special,
    testing,
    torch_version,
    utils,
    version,
    xpu,
)
from .accelerator import get_device_module
from .amp import (
    GradScaler,
    autocast,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .aten import *  # noqa: F403
from .aten_native import *  # noqa: F403
from .autograd import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .compile import compile
from .device import (
    Device,
    DeviceType,
    default_device,
    device,
    devices,
    get_default_device,
    set_default_device,
    synchronize,
)
from .dtypes import (
    bfloat16,
    can_cast,
    channels_last,
    channels_last_3d,
    complex64,
    complex128,
    contiguous_format,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    layout,
    memory_format,
    preserve_format,
    promote_types,
    result_type,
    set_default_dtype,
    strided,
    uint8,
)
from .dtypes import bool_ as bool
from .errors import KernelBuildError, OutOfMemoryError
from .func import vmap
from .functional import *  # noqa: F403
from .ops.complex import complex, conj, imag, polar, real, sgn, view_as_complex, view_as_real
from .ops.creation import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    Generator,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    as_tensor,
    default_generator,
    empty_like,
    from_numpy,
    full_like,
    get_rng_state,
    initial_seed,
    manual_seed,
    ones_like,
    poisson,
    rand_like,
    randint_like,
    randn_like,
    seed,
    set_rng_state,
    tensor,
    zeros_like,
)
from .ops.typed_storage import LEGACY_STORAGES as _LEGACY_STORAGES
from .ops.typed_storage import TypedStorage
from .serialization import load, save
from .storage import UntypedStorage
from .streams import Event, Stream
from .tensor import Size, Tensor

half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
globals().update({_cls.__name__: _cls for _cls in _LEGACY_STORAGES.values()})  # FloatStorage...
long, int, short = int64, int32, int16
__version__ = version.__version__
sparse_coo = sparse.sparse_coo
sparse_coo_tensor = sparse.sparse_coo_tensor
spmm = sparse.mm


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a clgrad Tensor.

    >>> clgrad.is_tensor(clgrad.zeros(1)), clgrad.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of ``input``.

    >>> clgrad.numel(clgrad.zeros(2, 3))
    6
    """
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is floating.

    >>> clgrad.is_floating_point(clgrad.zeros(1)), clgrad.is_floating_point(clgrad.arange(2))
    (True, False)
    """
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    """Whether ``input``'s dtype is complex (complex64, complex128).

    >>> clgrad.is_complex(clgrad.zeros(1))
    False
    """
    return input.is_complex()


def is_nonzero(input: Tensor) -> bool:
    """Whether the single element of ``input`` is not zero (RuntimeError for any other
    number of elements), as ``torch.is_nonzero``.

    >>> clgrad.is_nonzero(clgrad.tensor([1.5]))
    True
    """
    return input.is_nonzero()


def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype holds negative values (every dtype but uint8 and bool).

    >>> clgrad.is_signed(clgrad.zeros(1)), clgrad.is_signed(clgrad.zeros(1, dtype=clgrad.uint8))
    (True, False)
    """
    return input.is_signed()


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted for PyTorch programs: ``'highest'``, ``'high'`` or ``'medium'`` is recorded (and
    returned by ``get_float32_matmul_precision``) but changes nothing, since clgrad's float32
    matmul always multiplies and accumulates in float32, as CPU torch does. Any other value
    warns and is ignored, as torch does.

    >>> clgrad.set_float32_matmul_precision("high"); clgrad.get_float32_matmul_precision()
    'high'
    >>> clgrad.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    """The value ``set_float32_matmul_precision`` recorded (``'highest'`` until then).

    >>> clgrad.get_float32_matmul_precision()
    'highest'
    """
    return _matmul_precision[0]


_deterministic = [False]
_threads = [1]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted for PyTorch programs: clgrad's kernels give the same results run to run (no
    atomics in its reductions), so there is nothing to switch; the flag is remembered.

    >>> clgrad.use_deterministic_algorithms(True); clgrad.are_deterministic_algorithms_enabled()
    True
    """
    _deterministic[0] = _builtins.bool(mode)
    _deterministic_warn_only[0] = _builtins.bool(warn_only)


_deterministic_warn_only = [False]
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The ``warn_only`` flag ``use_deterministic_algorithms`` was given.

    >>> clgrad.use_deterministic_algorithms(True, warn_only=True)
    >>> clgrad.is_deterministic_algorithms_warn_only_enabled()
    True
    >>> clgrad.use_deterministic_algorithms(False)
    """
    return _deterministic_warn_only[0]


def set_deterministic_debug_mode(debug_mode) -> None:
    """``use_deterministic_algorithms`` by PyTorch's other switch: ``"default"`` / 0 (off),
    ``"warn"`` / 1 (on, warn only), ``"error"`` / 2 (on).

    >>> clgrad.set_deterministic_debug_mode("warn"); clgrad.get_deterministic_debug_mode()
    1
    >>> clgrad.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2: the mode ``set_deterministic_debug_mode`` (or the algorithms' flags) set."""
    if not _deterministic[0]:
        return 0
    return 1 if _deterministic_warn_only[0] else 2


_warn_always = [False]


def set_warn_always(b: bool) -> None:
    """Whether warnings PyTorch gives once should be given every time; clgrad's warnings come
    from Python's ``warnings`` (its filters decide), so the flag is remembered.

    >>> clgrad.set_warn_always(True); clgrad.is_warn_always_enabled()
    True
    >>> clgrad.set_warn_always(False)
    """
    _warn_always[0] = _builtins.bool(b)


def is_warn_always_enabled() -> bool:
    """The flag ``set_warn_always`` set."""
    return _warn_always[0]


_interop_threads = [1]


def set_num_interop_threads(n: int) -> None:
    """Accepted for PyTorch programs, as ``set_num_threads``; ``get_num_interop_threads``
    returns the value."""
    _interop_threads[0] = _builtins.int(n)


def get_num_interop_threads() -> int:
    """The value ``set_num_interop_threads`` was given (1 until then)."""
    return _interop_threads[0]


def set_flush_denormal(mode: bool) -> bool:
    """False: clgrad does not switch the host's denormal flushing (PyTorch returns False too
    where it cannot).

    >>> clgrad.set_flush_denormal(True)
    False
    """
    return False


def are_deterministic_algorithms_enabled() -> bool:
    """The flag ``use_deterministic_algorithms`` set.

    >>> clgrad.use_deterministic_algorithms(False); clgrad.are_deterministic_algorithms_enabled()
    False
    """
    return _deterministic[0]


def set_num_threads(n: int) -> None:
    """Accepted for PyTorch programs (the host's NumPy and the OpenCL driver choose their own
    threads); ``get_num_threads`` returns the value.

    >>> clgrad.set_num_threads(2); clgrad.get_num_threads()
    2
    """
    _threads[0] = _builtins.int(n)


def get_num_threads() -> int:
    """The value ``set_num_threads`` was given (1 until then).

    >>> clgrad.get_num_threads() >= 1
    True
    """
    return _threads[0]


def set_default_tensor_type(t) -> None:
    """PyTorch's deprecated way to set the default float dtype: ``FloatTensor`` /
    ``DoubleTensor`` (or their names) set ``set_default_dtype``.

    >>> clgrad.set_default_tensor_type(clgrad.FloatTensor); clgrad.get_default_dtype()
    clgrad.float32
    """
    name = t if isinstance(t, str) else t.__name__
    kinds = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16}
    set_default_dtype(kinds[name.rsplit(".", 1)[-1]])
