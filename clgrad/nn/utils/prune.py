"""Pruning, as ``torch.nn.utils.prune``: a pruned parameter ``name`` becomes ``name_orig``
(the parameter), ``name_mask`` (a buffer of 0s and 1s) and the attribute ``name = orig * mask``,
recomputed by a forward pre-hook. Pruning a pruned tensor again prunes among what is left
(a ``PruningContainer`` combines the masks); ``remove`` makes the pruning permanent.

>>> import clgrad.nn.utils.prune as prune
>>> layer = clgrad.nn.Linear(4, 2)
>>> with clgrad.no_grad():
...     _ = layer.weight.copy_(clgrad.tensor([[1.0, -2.0, 3.0, -4.0], [0.5, 6.0, -0.1, 2.0]]))
>>> _ = prune.l1_unstructured(layer, "weight", amount=0.25)
>>> layer.weight_mask
tensor([[1., 1., 1., 1.],
        [0., 1., 0., 1.]])
>>> sorted(layer.state_dict())
['bias', 'weight_mask', 'weight_orig']
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...ops.creation import ones_like, rand_like, zeros_like
from ...ops.movement import cat
from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


def _check_amount(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _count_to_prune(amount, size: int) -> int:
    """How many of ``size`` units ``amount`` (a count, or a fraction rounded) prunes."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor) -> None:
    if t.ndim <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {t.shape} with {t.ndim} dims"
        )


class BasePruningMethod:
    """A way to compute a pruning mask (``compute_mask``), applied to a module's tensor as a
    forward pre-hook (``apply``), as ``torch.nn.utils.prune.BasePruningMethod``."""

    PRUNING_TYPE = "unstructured"
    _tensor_name = None

    def __call__(self, module: Module, inputs) -> None:
        object.__setattr__(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        raise NotImplementedError

    def apply_mask(self, module: Module) -> Tensor:
        """The pruned tensor: the original times the mask."""
        name = self._tensor_name
        return getattr(module, name + "_orig") * getattr(module, name + "_mask").to(
            getattr(module, name + "_orig").dtype
        )

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with a method made from ``args`` / ``kwargs``, after any
        earlier pruning of it (the masks combined); returns the method."""
        previous = None
        for key, hook in list(module._forward_pre_hooks.items()):
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                if previous is not None:
                    raise RuntimeError(f"More than one pruning hook on parameter {name}")
                previous = hook
                del module._forward_pre_hooks[key]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if previous is not None:
            container = previous
            if not isinstance(previous, PruningContainer):
                container = PruningContainer(previous)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)  # (pruned before: the masked tensor)
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of {module}, "
                f"got {importance_scores.shape} vs {orig.shape}"
            )
        # scored as the tensor is now, as PyTorch's: a second pruning ranks the masked values
        scores = importance_scores if importance_scores is not None else orig
        if previous is None:  # the first pruning: the parameter becomes name_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
            orig = getattr(module, name + "_orig")
        with no_grad():
            mask = method.compute_mask(scores.detach(), default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        object.__setattr__(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t: Tensor, default_mask=None, importance_scores=None) -> Tensor:
        """``t`` times the mask this method computes for it."""
        scores = t if importance_scores is None else importance_scores
        mask = self.compute_mask(scores, ones_like(t) if default_mask is None else default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Makes the pruning permanent: ``name`` is a Parameter holding the pruned values."""
        name = self._tensor_name
        weight = self.apply_mask(module)
        module.__dict__.pop(name, None)
        orig = module._parameters.pop(name + "_orig")
        del module._buffers[name + "_mask"]
        module.register_parameter(name, Parameter(weight.detach(), orig.requires_grad))


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one tensor, in order: each computes its mask among the
    units the earlier ones left."""

    def __init__(self, *methods) -> None:
        self._pruning_methods: tuple = ()
        for method in methods:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None:
            if self._tensor_name is None:
                self._tensor_name = method._tensor_name
            elif self._tensor_name != method._tensor_name:
                raise ValueError(
                    "Can only add pruning methods acting on the parameter named "
                    f"'{self._tensor_name}' to PruningContainer {self}. Found "
                    f"'{method._tensor_name}'"
                )
            self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, i):
        return self._pruning_methods[i]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the units still unpruned (the whole tensor for
        a global method; the channels with something left for a structured one)."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(t.dtype).clone()
        if method.PRUNING_TYPE == "unstructured":
            kept = mask == 1
            partial = method.compute_mask(t[kept], default_mask=mask[kept])
            mask[kept] = partial.to(mask.dtype)
            return mask
        if method.PRUNING_TYPE == "structured":
            dim = method.dim % t.ndim
            others = [d for d in range(t.ndim) if d != dim]
            channels = mask.sum(others) != 0
            index = [slice(None)] * t.ndim
            index[dim] = channels
            index = tuple(index)
            partial = method.compute_mask(t[index], default_mask=mask[index])
            mask[index] = partial.to(mask.dtype)
            return mask
        return method.compute_mask(t, default_mask=mask)


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (a tensor made prunable)."""

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` (a count or a fraction) of the units at random."""

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            chosen = rand_like(t).reshape(-1).topk(k).indices
            mask.view(-1)[chosen] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes ``amount`` (a count or a fraction) of the units of smallest magnitude."""

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            smallest = t.abs().reshape(-1).topk(k, largest=False).indices
            mask.view(-1)[smallest] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, kept, default_mask):
    mask = zeros_like(t)
    index = [slice(None)] * t.ndim
    index[dim] = kept
    mask[tuple(index)] = 1
    return mask * default_mask.to(mask.dtype)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim`` at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        dim = self.dim % t.ndim
        channels = t.shape[dim]
        k = _count_to_prune(self.amount, channels)
        if not k:
            return default_mask
        kept = rand_like(t.new_empty(channels)).topk(channels - k).indices
        return _channel_mask(t, dim, kept, default_mask)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim`` of smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        dim = self.dim % t.ndim
        channels = t.shape[dim]
        k = _count_to_prune(self.amount, channels)
        if not k:
            return default_mask
        others = [d for d in range(t.ndim) if d != dim]
        norms = t.norm(self.n, dim=others)
        kept = norms.topk(channels - k).indices
        return _channel_mask(t, dim, kept, default_mask)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        return default_mask * self.mask.to(default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Makes ``module.<name>`` prunable with nothing pruned (an all-ones mask)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prunes ``amount`` (a count or a fraction) of ``module.<name>``'s units at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    """Prunes ``amount`` of ``module.<name>``'s units of smallest magnitude (of
    ``importance_scores`` where given)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prunes ``amount`` of ``module.<name>``'s channels along ``dim`` at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores=None):
    """Prunes ``amount`` of ``module.<name>``'s channels along ``dim`` of smallest ``n``-norm.

    >>> import clgrad.nn.utils.prune as prune
    >>> conv = prune.ln_structured(clgrad.nn.Conv2d(2, 4, 3), "weight", amount=0.5, n=2, dim=0)
    >>> int((conv.weight_mask.sum((1, 2, 3)) == 0).sum())  # 2 of 4 output channels
    2
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable, pruning_method, importance_scores=None, **kwargs
) -> None:
    """Prunes the ``(module, name)`` pairs of ``parameters`` together: ``pruning_method``
    (an unstructured method class, e.g. ``L1Unstructured``) computes one mask over all their
    units (among those still unpruned), which each tensor then takes its part of."""
    pairs = list(parameters)
    scores = importance_scores or {}
    tensors = [scores.get(p, getattr(*p)) for p in pairs]
    flat = cat([t.detach().reshape(-1) for t in tensors])
    default = cat(
        [getattr(m, n + "_mask", ones_like(getattr(m, n))).detach().reshape(-1) for m, n in pairs]
    )
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    method._tensor_name = "temp"
    container = PruningContainer(method)
    with no_grad():
        mask = container.compute_mask(flat, default_mask=default)
    start = 0
    for (module, name), t in zip(pairs, tensors):
        size = t.numel()
        custom_from_mask(module, name, mask[start : start + size].reshape(t.shape))
        start += size


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prunes ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Makes the pruning of ``module.<name>`` permanent: a plain Parameter of the pruned values
    again, with no ``_orig``, ``_mask`` or hook."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or one of its submodules has a pruned tensor."""
    return any(
        isinstance(hook, BasePruningMethod)
        for m in module.modules()
        for hook in m._forward_pre_hooks.values()
    )
