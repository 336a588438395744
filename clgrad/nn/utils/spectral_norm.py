"""The older spectral normalization of torch.nn.utils.spectral_norm: the parameter
``<name>_orig``, the power method's buffers ``<name>_u`` and ``<name>_v``, and the normalized
weight recomputed by a forward pre-hook."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import (
    _check_spectral_args,
    _default_spectral_dim,
    _power_iteration,
    _spectral_normalized,
    _start_vectors,
    _weight_matrix,
)

__all__ = ["remove_spectral_norm", "spectral_norm"]


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divides ``module.<name>`` by its spectral norm before every forward, as the older
    ``torch.nn.utils.spectral_norm``: the parameter becomes ``<name>_orig``, the power method's
    vectors the buffers ``<name>_u`` and ``<name>_v`` (one step per forward in training, none
    in eval). Prefer ``clgrad.nn.utils.parametrizations.spectral_norm``.

    >>> layer = clgrad.nn.utils.spectral_norm(clgrad.nn.Linear(4, 3))
    >>> sorted(layer.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    hooks = module.__dict__.setdefault("_spectral_norm_hooks", {})
    if name in hooks:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        dim = _default_spectral_dim(module)
    weight = module._parameters[name]
    dim = _check_spectral_args(weight, n_power_iterations, dim)
    with no_grad():
        u, v = _start_vectors(_weight_matrix(weight, dim), eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    object.__setattr__(module, name, weight.data)
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)

    def compute(mod, _args):
        original = getattr(mod, name + "_orig")
        u, v = getattr(mod, name + "_u"), getattr(mod, name + "_v")
        if mod.training:
            weight_mat = _weight_matrix(original.detach(), dim)
            _power_iteration(weight_mat, u, v, n_power_iterations, eps, u_first=False)
        normalized = _spectral_normalized(lambda w: _weight_matrix(w, dim), original, u, v)
        object.__setattr__(mod, name, normalized)

    hooks[name] = (module.register_forward_pre_hook(compute), dim)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undoes ``spectral_norm``: ``name`` is a Parameter again, holding the normalized weight
    of the current estimate (no power step).

    >>> layer = clgrad.nn.utils.remove_spectral_norm(clgrad.nn.utils.spectral_norm(
    ...     clgrad.nn.Linear(4, 3)))
    >>> sorted(layer.state_dict())
    ['bias', 'weight']
    """
    hooks = module.__dict__.get("_spectral_norm_hooks", {})
    if name not in hooks:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    handle, dim = hooks.pop(name)
    handle.remove()
    original = module._parameters.pop(name + "_orig")
    u, v = module._buffers.pop(name + "_u"), module._buffers.pop(name + "_v")
    with no_grad():
        weight = _spectral_normalized(lambda w: _weight_matrix(w, dim), original, u, v)
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(weight.detach()))
    return module
