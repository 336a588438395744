"""``torch.nn.utils.clip_grad``'s path to ``clgrad.nn.utils``' gradient clipping (``from
torch.nn.utils.clip_grad import clip_grad_norm_``)."""

from . import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]
