"""``clgrad.version``: ``torch.version``'s fields, for programs that read them to learn which
build runs: clgrad is built for no CUDA, ROCm or XPU toolkit (its accelerators are OpenCL
devices), so those are None, as in PyTorch's CPU build.

``__version__`` names the PyTorch release whose API clgrad implements, with clgrad's own
release as its local label (as PyTorch's builds carry "+cpu"): programs gate features on
``torch.__version__ >= "2.0"``, and clgrad's own number would send them down their oldest
paths. ``clgrad_version`` is clgrad's release alone (the package's version).

>>> import clgrad.version
>>> clgrad.version.cuda is None, clgrad.version.hip is None, clgrad.version.debug
(True, True, False)
>>> clgrad.__version__ >= "2.0", clgrad.__version__.split("+")[0] == clgrad.version.TORCH_API
(True, True)
"""

from __future__ import annotations

from .torch_version import TorchVersion

__all__ = ["TORCH_API", "__version__", "clgrad_version", "cuda", "debug", "git_version", "hip"]
__all__ += ["rocm", "xpu"]

# the PyTorch release whose API and behaviour clgrad follows (its tests' reference, pinned in
# pyproject.toml's test extra)
TORCH_API = "2.13.0"
# clgrad's own release, as pyproject.toml's version
clgrad_version = "0.1.0"
__version__ = TorchVersion(f"{TORCH_API}+clgrad.{clgrad_version}")
debug = False
cuda = None
hip = None
rocm = None
xpu = None
# PyTorch writes "Unknown" where its build could not read the commit; clgrad records none
git_version = "Unknown"
