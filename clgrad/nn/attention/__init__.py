"""``torch.nn.attention``: which implementations ``scaled_dot_product_attention`` may use.

clgrad has one implementation, which serves as PyTorch's CPU build serves: as the math backend
and as the flash-attention one. ``sdpa_kernel`` (and ``torch.backends.cuda``'s switches, kept
here) choose among the backends; with neither of those two enabled, attention raises torch's
RuntimeError, as it does on the CPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from enum import IntEnum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(IntEnum):
    """The backends of ``scaled_dot_product_attention``, numbered as PyTorch numbers them.

    >>> SDPBackend.MATH
    <SDPBackend.MATH: 0>
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# the enabled backends (torch.backends.cuda's enable_*_sdp switches read and set them)
_enabled = {
    SDPBackend.MATH: True,
    SDPBackend.FLASH_ATTENTION: True,
    SDPBackend.EFFICIENT_ATTENTION: True,
    SDPBackend.CUDNN_ATTENTION: True,
    SDPBackend.OVERRIDEABLE: True,
}
# what clgrad's implementation can stand for
_SERVED_BY_CLGRAD = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION)


def check_backend_enabled() -> None:
    """Raises torch's RuntimeError when no backend clgrad's implementation stands for is on."""
    if not any(_enabled[b] for b in _SERVED_BY_CLGRAD):
        raise RuntimeError(
            "No viable backend for scaled_dot_product_attention was found. This is likely due "
            "to turning off both the math kernel and the fused kernels."
        )


@contextlib.contextmanager
def sdpa_kernel(
    backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False
) -> Iterator[None]:
    """Inside the block only ``backends`` are enabled; the switches are restored after it.

    >>> import clgrad.nn.functional as F
    >>> q = clgrad.ones(1, 1, 2, 4)
    >>> with sdpa_kernel([SDPBackend.MATH]):
    ...     F.scaled_dot_product_attention(q, q, q).shape
    clgrad.Size([1, 1, 2, 4])
    >>> with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    ...     F.scaled_dot_product_attention(q, q, q)
    Traceback (most recent call last):
    RuntimeError: No viable backend for scaled_dot_product_attention was found. ...
    """
    chosen = {backends} if isinstance(backends, SDPBackend) else set(backends)
    before = dict(_enabled)
    for b in _enabled:
        _enabled[b] = b in chosen
    try:
        yield
    finally:
        _enabled.update(before)
