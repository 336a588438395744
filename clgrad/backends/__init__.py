"""``clgrad.backends``: PyTorch's ``torch.backends`` switches, so programs that set them run.

clgrad has neither cuDNN, TF32 nor MPS: the flags are kept (a program may read back what it
set) and change nothing; ``mps.is_available()`` is False.

>>> clgrad.backends.cudnn.benchmark = True
>>> clgrad.backends.mps.is_available()
False
>>> clgrad.backends.cudnn.benchmark = False
"""

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
