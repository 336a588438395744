"""``torch.sparse``: sparse COO tensors and their products (see ``clgrad.ops.sparse``).

>>> s = clgrad.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
>>> clgrad.sparse.mm(s, clgrad.eye(2))
tensor([[0., 2.],
        [3., 0.]])
"""

from ..ops.sparse import (
    DoubleTensor,
    FloatTensor,
    LongTensor,
    SparseCooTensor,
    addmm,
    mm,
    sparse_coo,
    sparse_coo_tensor,
    sum,
    to_sparse,
)

__all__ = [
    "DoubleTensor",
    "FloatTensor",
    "LongTensor",
    "SparseCooTensor",
    "addmm",
    "mm",
    "sparse_coo",
    "sparse_coo_tensor",
    "sum",
    "to_sparse",
]
