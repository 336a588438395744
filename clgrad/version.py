"""``clgrad.version``: ``torch.version``'s fields, for programs that read them to learn which
build runs: clgrad is built for no CUDA, ROCm or XPU toolkit (its accelerators are OpenCL
devices), so those are None, as in PyTorch's CPU build.

>>> import clgrad.version
>>> clgrad.version.cuda is None, clgrad.version.hip is None, clgrad.version.debug
(True, True, False)
"""

from __future__ import annotations

from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

# the one place clgrad's version is written (clgrad.__version__ is this)
__version__ = TorchVersion("0.1.0")
debug = False
cuda = None
hip = None
rocm = None
xpu = None
# PyTorch writes "Unknown" where its build could not read the commit; clgrad records none
git_version = "Unknown"
