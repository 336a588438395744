"""The older weight normalization of torch.nn.utils.weight_norm: parameters ``<name>_g`` and
``<name>_v``, the weight recomputed by a forward pre-hook."""

from __future__ import annotations

from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["weight_norm", "remove_weight_norm"]


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replaces the parameter ``name`` by ``name_g`` (its norms over every dim but ``dim``)
    and ``name_v`` (its direction), recomputing ``name = g * v / ||v||`` before every forward,
    as the deprecated ``torch.nn.utils.weight_norm`` (prefer
    ``clgrad.nn.utils.parametrizations.weight_norm``).

    >>> layer = clgrad.nn.utils.weight_norm(clgrad.nn.Linear(3, 2))
    >>> sorted(layer.state_dict())
    ['bias', 'weight_g', 'weight_v']
    """
    if dim is None:
        dim = -1
    weight = getattr(module, name)
    if isinstance(module.__dict__.get("_weight_norm_hooks"), dict) and name in (
        module._weight_norm_hooks
    ):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))

    def compute(mod, _args):
        object.__setattr__(
            mod, name, _weight_norm(getattr(mod, name + "_v"), getattr(mod, name + "_g"), dim)
        )

    compute(module, ())
    hooks = module.__dict__.setdefault("_weight_norm_hooks", {})
    hooks[name] = module.register_forward_pre_hook(compute)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undoes ``weight_norm``: ``name`` is a Parameter again, holding the current weight.

    >>> layer = clgrad.nn.utils.weight_norm(clgrad.nn.Linear(3, 2))
    >>> layer = clgrad.nn.utils.remove_weight_norm(layer)
    >>> sorted(layer.state_dict())
    ['bias', 'weight']
    """
    hooks = module.__dict__.get("_weight_norm_hooks", {})
    if name not in hooks:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    hooks.pop(name).remove()
    weight = getattr(module, name).detach()
    module.__dict__.pop(name, None)
    del module._parameters[name + "_g"]
    del module._parameters[name + "_v"]
    module.register_parameter(name, Parameter(weight))
    return module
