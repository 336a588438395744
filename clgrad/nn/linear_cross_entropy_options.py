"""``LinearCrossEntropyOptions``: the options of ``linear_cross_entropy``'s chunked path, as
``torch.nn.LinearCrossEntropyOptions`` (its fields, defaults and checks)."""

from __future__ import annotations

import dataclasses
import re

ACC_POLICIES = ("accurate", "balanced", "compact", "auto")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How ``linear_cross_entropy`` may split its batch to bound the memory of the logits, as
    PyTorch's: ``batch_chunk_size`` rows per chunk, or a ``chunking_method`` ("auto",
    "aspect_ratio", "aspect_ratio:N"); ``acc_policy`` and ``acc_dtype`` its precision
    trade-off; ``allow_retain_graph``. clgrad computes the loss in one piece whatever they say
    (its results are the reference path's, which the chunked path equals), after PyTorch's
    checks of them.

    >>> clgrad.nn.LinearCrossEntropyOptions(batch_chunk_size=64).acc_policy
    'auto'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def check(self) -> None:
        """PyTorch's ValueError for options its chunked path refuses (checked at the call)."""
        if self.acc_policy not in ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        method = self.chunking_method
        if method is not None and not re.fullmatch(r"auto|aspect_ratio(:[1-9]\d*)?", method):
            raise ValueError(f"invalid chunking_method: {method!r}")
        size = self.batch_chunk_size
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
