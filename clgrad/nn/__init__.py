"""Neural-network building blocks, as torch.nn: Module, Parameter, layers, losses, init and
functional."""

from .. import tensor as _tensor  # noqa: F401, I001  (first: the ops import it)
from . import attention, functional, grad, init, parallel, utils  # noqa: F401
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

functional.grad = grad  # torch.nn.functional.grad is torch.nn.grad

__all__ = [
    "Buffer",
    "DataParallel",
    "LinearCrossEntropyOptions",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "functional",
    "grad",
    "init",
    "parallel",
    "utils",
    *_modules_all,
]
