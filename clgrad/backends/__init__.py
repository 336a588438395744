"""``clgrad.backends``: PyTorch's ``torch.backends`` switches, so programs that set them run.

clgrad has neither cuDNN, TF32, MPS, oneDNN, MKL nor OpenMP: the flags are kept (a program may
read back what it set) and change nothing; ``mps.is_available()`` is False. ``opt_einsum``
says whether the opt_einsum package is there (clgrad's einsum contracts left to right).

>>> clgrad.backends.cudnn.benchmark = True
>>> clgrad.backends.mps.is_available()
False
>>> clgrad.backends.cudnn.benchmark = False
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
