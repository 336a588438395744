"""``torch.signal``: window functions (``clgrad.signal.windows``), as PyTorch's.

>>> import clgrad.signal
>>> clgrad.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""

from . import windows

__all__ = ["windows"]
