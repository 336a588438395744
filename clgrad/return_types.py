"""``clgrad.return_types``: the named tuples of ops that return several tensors, under
``torch.return_types``' names, so that ``isinstance(r, torch.return_types.max)`` and
annotations naming them work; ``values, indices = x.max(0)`` and ``r.values`` work on each.

>>> r = clgrad.tensor([[1, 5], [7, 2]]).max(1)
>>> isinstance(r, clgrad.return_types.max), r.indices
(True, tensor([1, 0]))

The linear-algebra results are torch's classes too (``linalg_svd``, ``linalg_qr``,
``linalg_eigh``, the ``lu`` and ``*_ex`` families, ``svd``, ``qr``, ``geqrf``, ...).

>>> type(clgrad.linalg.qr(clgrad.eye(2))) is clgrad.return_types.linalg_qr
True
"""

from __future__ import annotations

from .aten import _histogramdd_result as histogramdd
from .ops.decomp import RESULT_TYPES as _LINALG
from .ops.decomp import slogdet_result as slogdet
from .ops.reduction import aminmax_result as aminmax
from .ops.reduction import max_result as max
from .ops.reduction import min_result as min
from .ops.scans import cummax_result as cummax
from .ops.scans import cummin_result as cummin
from .ops.sorting import histogram_result as histogram
from .ops.sorting import kthvalue_result as kthvalue
from .ops.sorting import median_result as median
from .ops.sorting import mode_result as mode
from .ops.sorting import nanmedian_result as nanmedian
from .ops.sorting import sort_result as sort
from .ops.sorting import topk_result as topk
from .ops.special_math import _Frexp as frexp

__all__ = [
    "aminmax",
    "cummax",
    "cummin",
    "frexp",
    "histogram",
    "histogramdd",
    "kthvalue",
    "max",
    "median",
    "min",
    "mode",
    "nanmedian",
    "slogdet",
    "sort",
    "topk",
]

# the linear-algebra ops' classes, under their names (pickles of results find them here)
globals().update(_LINALG)
__all__ += sorted(name for name in _LINALG if not name.startswith("_"))
