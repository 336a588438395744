"""clgrad: PyTorch-style tensors and autograd on any OpenCL device (and on the host with NumPy).

>>> import clgrad
>>> x = clgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""

from . import accelerator, autograd, backend, backends, cl, cuda, nn, optim, utils
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
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
from .dtypes import bool_ as bool
from .dtypes import (
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .errors import KernelBuildError, OutOfMemoryError
from .functional import *  # noqa: F403
from .ops.creation import (
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
    arange,
    as_tensor,
    bernoulli,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from .serialization import load, save
from .tensor import Size, Tensor

half, float, double = float16, float32, float64
long, int, short = int64, int32, int16
__version__ = "0.1.0"


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a clgrad Tensor.

    >>> clgrad.is_tensor(clgrad.zeros(1)), clgrad.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)
