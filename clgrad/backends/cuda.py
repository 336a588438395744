"""``torch.backends.cuda``'s switches: kept and harmless. clgrad's float32 matmul is float32 on
every device (no TF32), whatever ``matmul.allow_tf32`` says.

>>> clgrad.backends.cuda.matmul.allow_tf32 = True
>>> clgrad.backends.cuda.matmul.allow_tf32
True
>>> clgrad.backends.cuda.matmul.allow_tf32 = False
"""

from types import SimpleNamespace

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
