"""clgrad.nn.utils.parametrize: a tensor of a module computed on every access from "original"
tensors, as torch.nn.utils.parametrize: the module's class is swapped for a subclass with a
property of the tensor's name, whose getter runs the parametrizations (or reads the value
``cached()`` keeps) and whose setter stores ``right_inverse(value)`` in the originals. The
original keeps its identity (its elements are replaced, as torch's ``set_`` does), so an
optimizer made before the registration still updates it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
    "ParametrizationList",
]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside the block each parametrized tensor is computed once, at its first use, and that
    value is reused (a weight read at every step of an RNN's loop), as
    ``torch.nn.utils.parametrize.cached``.

    >>> class Double(clgrad.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    >>> layer = clgrad.nn.utils.parametrize.register_parametrization(
    ...     clgrad.nn.Linear(2, 1), "weight", Double())
    >>> with clgrad.nn.utils.parametrize.cached():
    ...     layer.weight is layer.weight
    True
    >>> layer.weight is layer.weight
    False
    """
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """``dest`` takes ``src``'s elements and shape, keeping its identity (torch's ``set_``)."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to its originals (``original``,
    or ``original0``, ``original1``, ... where the first one's ``right_inverse`` returns
    several tensors), as torch's; ``right_inverse(value)`` stores a new value."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:  # torch's way to say "the identity"
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            for what in ("dtype", "device"):
                if getattr(original, what) != getattr(new, what):
                    raise ValueError(
                        f"When `right_inverse` outputs one tensor, it may not change the {what}."
                        f"\noriginal.{what}: {getattr(original, what)}\n"
                        f"right_inverse(original).{what}: {getattr(new, what)}"
                    )
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                        f"tuple...). Got element {i} of the sequence with type "
                        f"{type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\nparametrized dtype: {z.dtype}"
                )
            if z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\nparametrized shape: {z.shape}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Stores ``value`` as the parametrized tensor: the parametrizations' ``right_inverse``
        in reverse order, into the originals."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                        f"`original` has dtype {self.original.dtype}"
                    )
                _maybe_set(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors. "
                    f"Got {type(value).__name__}."
                )
            if len(value) != self.ntensors:
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors of length "
                    f"{self.ntensors}. Got a sequence of length {len(value)}."
                )
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. Got element "
                        f"{i} of type {type(tensor).__name__}."
                    )
                if original_i.dtype != tensor.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                        f"while `original{i}` has dtype {original_i.dtype}"
                    )
                _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the originals through every parametrization."""
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in modules[1:]:
            x = m(x)
        return x


def _inject_property(module: Module, tensor_name: str) -> None:
    def get(self):
        plist = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return plist()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = plist()
        return value

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get, set_original))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrized tensor (``tensor_name``, or any), as
    ``torch.nn.utils.parametrize.is_parametrized``.

    >>> clgrad.nn.utils.parametrize.is_parametrized(clgrad.nn.Linear(2, 2))
    False
    """
    plist = module.__dict__.get("_modules", {}).get("parametrizations")
    if plist is None or not isinstance(plist, ModuleDict):
        return False
    return tensor_name is None or tensor_name in plist


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Makes ``module.<tensor_name>`` the result of ``parametrization`` applied to the original
    tensor (kept as ``module.parametrizations.<tensor_name>.original``: the same Parameter or
    buffer object), as ``torch.nn.utils.parametrize.register_parametrization``; a second
    registration on the same tensor chains after the first. Assigning ``module.<tensor_name>``
    stores its ``right_inverse``.

    >>> class Double(clgrad.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    ...     def right_inverse(self, y):
    ...         return y / 2
    >>> layer = clgrad.nn.Linear(2, 1)
    >>> _ = clgrad.nn.utils.parametrize.register_parametrization(layer, "bias", Double())
    >>> layer.bias = clgrad.tensor([3.0])
    >>> layer.parametrizations.bias.original
    Parameter containing:
    tensor([1.5000], requires_grad=True)
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype or x.shape != y.shape:
                what = "dtype" if x.dtype != y.dtype else "shape"
                raise ValueError(
                    f"Registering a parametrization may not change the {what} of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.{what}: {getattr(y, what)}\n"
                    f"parametrization(module.{tensor_name}).{what}: {getattr(x, what)}"
                )
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe)
    module._forget(tensor_name)
    if not is_parametrized(module):
        cls = module.__class__
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undoes ``register_parametrization`` on ``tensor_name``: the original tensor object is
    registered again, holding the parametrized value (``leave_parametrized``) or its own, as
    ``torch.nn.utils.parametrize.remove_parametrizations``.

    >>> layer = clgrad.nn.utils.parametrizations.weight_norm(clgrad.nn.Linear(2, 1))
    >>> _ = clgrad.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, type(layer.weight).__name__
    ('Linear', 'Parameter')
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    original: Any
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t.detach())
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
            "parametrized in terms of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not len(module.parametrizations):
        del module.parametrizations
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations changed it, as torch's.

    >>> layer = clgrad.nn.utils.parametrizations.weight_norm(clgrad.nn.Linear(2, 1))
    >>> clgrad.nn.utils.parametrize.type_before_parametrizations(layer).__name__
    'Linear'
    """
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Registers ``from_module``'s parametrizations (of ``tensor_name``, or all) on
    ``to_module`` too, with copies of the original tensors, as torch's.

    >>> class Double(clgrad.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    >>> a = clgrad.nn.utils.parametrize.register_parametrization(
    ...     clgrad.nn.Linear(2, 1), "bias", Double())
    >>> b = clgrad.nn.utils.parametrize.transfer_parametrizations_and_params(
    ...     a, clgrad.nn.Linear(2, 1))
    >>> bool((b.bias == a.bias).all())
    True
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(
                to_module,
                name,
                Parameter(getattr(from_module, name).detach()),
            )
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        with no_grad():
            if source.is_tensor:
                target.original.data = source.original.detach().clone()
            else:
                for i in range(source.ntensors):
                    getattr(target, f"original{i}").data = (
                        getattr(source, f"original{i}").detach().clone()
                    )
    return to_module
