"""clgrad.nn.utils.parametrize: a tensor of a module computed on every access from "original"
parameters, as torch.nn.utils.parametrize (the module's class is swapped for a subclass with a
property of the tensor's name, as PyTorch does)."""

from __future__ import annotations

from typing import Any

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized"]


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to its originals (``original``,
    or ``original0``, ``original1``, ... where the first one's ``right_inverse`` returns
    several tensors)."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        with no_grad():
            new = first.right_inverse(original) if hasattr(first, "right_inverse") else original
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            self.original = (
                original if new is original else Parameter(new.detach(), original.requires_grad)
            )
        else:
            self.ntensors = len(new)
            for i, t in enumerate(new):
                setattr(self, f"original{i}", Parameter(t.detach(), original.requires_grad))

    def forward(self) -> Tensor:
        """The parametrized tensor: the originals through every parametrization."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrized tensor (``tensor_name``, or any), as
    ``torch.nn.utils.parametrize.is_parametrized``.

    >>> clgrad.nn.utils.parametrize.is_parametrized(clgrad.nn.Linear(2, 2))
    False
    """
    plist = module.__dict__.get("_modules", {}).get("parametrizations")
    if plist is None:
        return False
    return tensor_name is None or tensor_name in plist


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Makes ``module.<tensor_name>`` the result of ``parametrization`` applied to the original
    tensor (kept as ``module.parametrizations.<tensor_name>.original``), as
    ``torch.nn.utils.parametrize.register_parametrization``; a second registration on the same
    tensor chains after the first.

    >>> class Double(clgrad.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    >>> layer = clgrad.nn.Linear(2, 1)
    >>> _ = clgrad.nn.utils.parametrize.register_parametrization(layer, "bias", Double())
    >>> bool((layer.bias == layer.parametrizations.bias.original * 2).all())
    True
    """
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe)
    if not is_parametrized(module):
        cls = module.__class__
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    module._forget(tensor_name)
    module.parametrizations[tensor_name] = plist

    def get(self, name=tensor_name):
        return self.parametrizations[name]()

    setattr(module.__class__, tensor_name, property(get))
    return module


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undoes ``register_parametrization`` on ``tensor_name``: the tensor becomes a Parameter
    again, holding the parametrized value (``leave_parametrized``) or the original, as
    ``torch.nn.utils.parametrize.remove_parametrizations``.

    >>> layer = clgrad.nn.utils.parametrizations.weight_norm(clgrad.nn.Linear(2, 1))
    >>> _ = clgrad.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, type(layer.weight).__name__
    ('Linear', 'Parameter')
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    with no_grad():
        if leave_parametrized:
            value: Any = getattr(module, tensor_name)
            requires_grad = (
                plist.original.requires_grad if plist.is_tensor else plist.original0.requires_grad
            )
            param = Parameter(value.detach(), requires_grad)
        elif plist.is_tensor:
            param = plist.original
        else:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, param)
    if not len(module.parametrizations):
        del module.parametrizations
        module.__class__ = module.__class__.__bases__[0]
    return module
