"""``torch.backends.cuda``'s switches: kept and harmless. clgrad's float32 matmul is float32 on
every device (no TF32), whatever ``matmul.allow_tf32`` says.

>>> clgrad.backends.cuda.matmul.allow_tf32 = True
>>> clgrad.backends.cuda.matmul.allow_tf32
True
>>> clgrad.backends.cuda.matmul.allow_tf32 = False
"""

import contextlib
import warnings
from types import SimpleNamespace

from ..nn.attention import SDPBackend, _enabled

# PyTorch's defaults
matmul = SimpleNamespace(
    allow_tf32=False,
    allow_fp16_reduced_precision_reduction=True,
    allow_bf16_reduced_precision_reduction=True,
)


def is_built() -> bool:
    """Whether ``"cuda"`` can name a device: True, it names OpenCL devices (``clgrad.cuda``).

    >>> clgrad.backends.cuda.is_built()
    True
    """
    return True


# scaled_dot_product_attention's backends (clgrad.nn.attention keeps them: sdpa_kernel sets them)
def _switch(backend):
    def enable(enabled: bool) -> None:
        _enabled[backend] = bool(enabled)

    def is_enabled() -> bool:
        return _enabled[backend]

    return enable, is_enabled


enable_math_sdp, math_sdp_enabled = _switch(SDPBackend.MATH)
enable_flash_sdp, flash_sdp_enabled = _switch(SDPBackend.FLASH_ATTENTION)
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _switch(SDPBackend.EFFICIENT_ATTENTION)
enable_cudnn_sdp, cudnn_sdp_enabled = _switch(SDPBackend.CUDNN_ATTENTION)


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
):
    """The deprecated form of ``clgrad.nn.attention.sdpa_kernel``: the backends switched on
    or off inside the block, as torch's (with its FutureWarning).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with clgrad.backends.cuda.sdp_kernel(enable_math=False):
    ...         clgrad.backends.cuda.math_sdp_enabled()
    False
    >>> clgrad.backends.cuda.math_sdp_enabled()
    True
    """
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    wanted = {
        SDPBackend.FLASH_ATTENTION: enable_flash,
        SDPBackend.MATH: enable_math,
        SDPBackend.EFFICIENT_ATTENTION: enable_mem_efficient,
        SDPBackend.CUDNN_ATTENTION: enable_cudnn,
    }
    before = dict(_enabled)
    _enabled.update({b: bool(on) for b, on in wanted.items()})
    try:
        yield
    finally:
        _enabled.update(before)
