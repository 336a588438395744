"""The ``meta`` device: tensors with a shape, a dtype and autograd but no data, as PyTorch's.

A model built there (``with clgrad.device("meta"):``, ``device="meta"``) costs no memory and
no compute; ``Module.to_empty`` then gives it storage on a real device, and
``load_state_dict`` its values. Every op runs its front end as on any device (its shape,
dtype and device checks raise as there), and its primitive does nothing. What needs the
values raises: reading them (``item``, ``tolist``, printing the elements, a copy to another
device) and the ops whose result's shape depends on them (``nonzero``, ``masked_select``...).
"""

from __future__ import annotations

from ..device import Device, DeviceType, register_named
from .base import Backend

NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaAllocator:
    """No memory: a meta storage's buffer is None."""

    def alloc(self, nbytes: int) -> None:
        return None

    def release(self, buffer, nbytes: int) -> None:
        pass


def _nothing(self, *args, **kwargs) -> None:
    """A primitive of the meta device: there is no data to compute."""


class MetaBackend(Backend):
    """Every primitive computes nothing; those whose caller needs values raise, as PyTorch's
    meta kernels do."""

    def to_numpy(self, x):
        raise NotImplementedError(NO_DATA)

    def nonzero(self, x):
        raise NotImplementedError(
            "aten::nonzero: the meta device has no values, and the result's shape depends on them"
        )

    def copy_from(self, dst, src, src_backend, keep) -> bool:
        return True  # (into a meta tensor: nothing to write)


for _name in (
    "elementwise",
    "arange",
    "reduce",
    "scan",
    "cum_extreme",
    "matmul",
    "take",
    "put",
    "gather_rows",
    "gather_dim",
    "add_rows",
    "sort",
    "random",
    "optimizer_step",
    "from_numpy",
    "synchronize",
    "unfold",
    "fold",
    "window_max",
    "window_put",
    "softmax",
    "softmax_backward",
    "norm",
    "norm_backward",
    "nll",
    "nll_grad",
):
    setattr(MetaBackend, _name, _nothing)


class MetaDevice(Device):
    """``meta``: shapes and dtypes only (see the module docstring).

    >>> x = clgrad.empty(2, 3, device="meta")
    >>> (x @ x.T).shape, x.is_meta
    (clgrad.Size([2, 2]), True)
    """

    kind = "meta"
    is_cpu = is_cl = False
    type = DeviceType.META
    name = platform = vendor = "meta"
    supports_float64 = supports_float16 = True
    backend = MetaBackend()
    allocator = MetaAllocator()


register_named("meta", MetaDevice._make(None))
