"""Autocast's state and its per-op casts (``clgrad.amp.autocast`` is the context manager).

Inside an enabled autocast region, an op on PyTorch's lists (``aten/src/ATen/autocast_mode.cpp``)
casts its floating-point tensor arguments before it runs, as PyTorch's dispatcher does: the
matrix products and convolutions to the region's lower-precision dtype (float16 or bfloat16;
float64 stays as it is), the ops that lose range or accuracy in 16 bits (exp, log, pow, the
losses, the norms) to float32. Each cast is an ordinary ``Tensor.to``, so gradients flow back
in each input's own dtype. The ops an op calls inside run as written: autocast applies once, at the
op the program called (PyTorch excludes its autocast key below the first op the same way).

Device types are PyTorch's: ``"cuda"`` is every OpenCL device (``clgrad.cuda``'s mapping),
``"cpu"`` clgrad's host device. Each has its own lists, as in PyTorch (the CUDA lists cast more
to float32: exp, softmax and sum among them). The state is per thread, as PyTorch's.
"""

from __future__ import annotations

import contextlib
import functools
import threading

from .. import dtypes as D
from ..tensor import Tensor

LOWER = "lower"  # cast to the region's dtype
FP32 = "fp32"  # cast to float32
FP32_UNLESS_DTYPE = "fp32 unless dtype"  # float32 where no ``dtype=`` is given
BANNED = "banned"  # raises: PyTorch's CUDA autocast refuses it
AS_IS = "as is"  # runs in its inputs' dtypes, and so do the ops it calls

# ops in the lower precision on both device types
_LOWER = {
    "matmul", "mm", "bmm", "mv", "addmm", "addmv", "addr", "baddbmm", "addbmm", "einsum",
    "chain_matmul", "multi_dot", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
}  # fmt: skip
_LOSSES = {
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "nll_loss",
    "cross_entropy", "binary_cross_entropy_with_logits", "poisson_nll_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "multilabel_margin_loss", "cosine_embedding_loss", "cdist",
}  # fmt: skip
# ops that are one kernel in PyTorch, on no list (they run in their input's dtype), which
# clgrad writes with listed ops (a sum): those run as they are inside them
_OWN_DTYPE = {"avg_pool1d", "avg_pool2d", "avg_pool3d", "embedding_bag"}
_POLICIES = {
    "cuda": {
        **dict.fromkeys(_LOWER, LOWER),
        **dict.fromkeys(_LOSSES, FP32),
        **dict.fromkeys(
            "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
            "softplus layer_norm group_norm cosine_similarity dist pdist renorm logsumexp".split(),
            FP32,
        ),
        **dict.fromkeys("softmax log_softmax sum prod cumsum cumprod".split(), FP32_UNLESS_DTYPE),
        # (upsample_* is interpolate; norm, frobenius_norm and linalg's norms are the norms)
        **dict.fromkeys("rms_norm interpolate norm vector_norm matrix_norm".split(), FP32),
        **dict.fromkeys(_OWN_DTYPE, AS_IS),
        "binary_cross_entropy": BANNED,
    },
    "cpu": {
        # PyTorch's CPU list lacks the matrix-vector products and einsum: mv, addmv and addr
        # keep their dtype (their own kernels), einsum casts only the products it runs
        **dict.fromkeys(_LOWER - {"mv", "addmv", "addr", "einsum"}, LOWER),
        **dict.fromkeys(("mv", "addmv", "addr"), AS_IS),
        **dict.fromkeys(_LOSSES, FP32),
        "binary_cross_entropy": FP32,
        "prod": FP32,
        **dict.fromkeys(_OWN_DTYPE, AS_IS),
    },
}
# default region dtypes, PyTorch's
DEFAULT_DTYPES = {"cuda": D.float16, "cpu": D.bfloat16}
SUPPORTED_DTYPES = (D.float16, D.bfloat16)


class _State(threading.local):
    def __init__(self):
        self.enabled = {"cuda": False, "cpu": False}
        self.dtype = dict(DEFAULT_DTYPES)
        self.inside = False  # an autocast op is running: the ops it calls are not cast again


state = _State()
# enabled regions in every thread: while 0, an op's wrapper only reads this
active = [0]


def snapshot() -> tuple:
    """This thread's autocast state (which device types are on, their dtypes), for
    ``restored``."""
    return dict(state.enabled), dict(state.dtype)


@contextlib.contextmanager
def restored(snap: tuple):
    """Runs its block under the autocast state ``snap`` (``snapshot``), then puts this
    thread's own back: a checkpoint's recomputation runs in its forward's autocast region, as
    PyTorch's (outside it, a bfloat16 forward recomputed in float32 failed in backward).

    >>> with clgrad.autocast("cpu", dtype=clgrad.bfloat16):
    ...     snap = snapshot()
    >>> with restored(snap):
    ...     (clgrad.ones(2, 2) @ clgrad.ones(2, 2)).dtype
    clgrad.bfloat16
    """
    own = snapshot()
    state.enabled.update(snap[0])
    state.dtype.update(snap[1])
    active[0] += 1  # (the ops' wrappers read the state while any region is open)
    try:
        yield
    finally:
        active[0] -= 1
        state.enabled.update(own[0])
        state.dtype.update(own[1])


def device_type_of(t: Tensor) -> str:
    return "cpu" if t._storage.device.is_cpu else "cuda"


def _first_tensor(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            return a
        if type(a) in (list, tuple):
            for x in a:
                if isinstance(x, Tensor):
                    return x
    return None


def _cast(x, target, device_type):
    if isinstance(x, Tensor):
        if (
            x.dtype is not target
            and x.dtype in (D.float16, D.bfloat16, D.float32)
            and device_type_of(x) == device_type
        ):
            return x.to(target)
        return x
    if type(x) in (list, tuple) and any(isinstance(t, Tensor) for t in x):  # multi_dot's list
        return type(x)(_cast(t, target, device_type) for t in x)
    return x


def autocast_op(fn=None, *, name: str | None = None):
    """Makes ``fn`` (an op named ``name``, by default its own name) cast its arguments as
    autocast's lists say, inside an enabled region of the device type of its first tensor
    argument; elsewhere it is called as it is (one list lookup).

    >>> from clgrad.ops.autocast import autocast_op
    >>> @autocast_op(name="mm")
    ... def product(a, b):
    ...     return a @ b
    >>> with clgrad.autocast("cpu", dtype=clgrad.float16):
    ...     product(clgrad.ones(2, 2), clgrad.ones(2, 2)).dtype
    clgrad.float16
    """
    if fn is None:
        return functools.partial(autocast_op, name=name)
    op = name or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not active[0] or state.inside:
            return fn(*args, **kwargs)
        first = _first_tensor(args, kwargs)
        if first is None:
            return fn(*args, **kwargs)
        device_type = device_type_of(first)
        policy = _POLICIES[device_type].get(op)
        if policy is None or not state.enabled[device_type]:
            return fn(*args, **kwargs)
        if policy is BANNED:
            raise RuntimeError(_BANNED_MESSAGE)
        if policy is FP32_UNLESS_DTYPE and kwargs.get("dtype") is not None:
            return fn(*args, **kwargs)
        if policy is not AS_IS:
            target = state.dtype[device_type] if policy is LOWER else D.float32
            args = [_cast(a, target, device_type) for a in args]
            kwargs = {k: _cast(v, target, device_type) for k, v in kwargs.items()}
        state.inside = True
        try:
            return fn(*args, **kwargs)
        finally:
            state.inside = False

    return wrapper


_BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)


def if_listed(fn, name: str):
    """``autocast_op(fn)`` where an op of this name is on a device type's list, else ``fn``
    itself: the registry's functions, methods and operators of the other ops keep no wrapper."""
    if any(name in p for p in _POLICIES.values()):
        return autocast_op(fn, name=name)
    return fn
