"""Lazy modules: layers that read their input size off their first input (``LazyModuleMixin``),
as torch.nn's ``LazyLinear``, ``LazyConv2d``, ``LazyBatchNorm2d``, ..."""

from __future__ import annotations

from itertools import chain

from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter


def is_lazy(t) -> bool:
    """Whether ``t`` is a placeholder whose shape is not known yet."""
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


class LazyModuleMixin:
    """A mixin for modules whose parameter shapes come from their first input, as
    ``torch.nn.modules.lazy.LazyModuleMixin``: the module holds ``UninitializedParameter`` and
    ``UninitializedBuffer`` placeholders; before its first forward it calls
    ``initialize_parameters(*args, **kwargs)``, which materializes them (the same objects),
    and then it becomes ``cls_to_become``. Loading a state dict into it first materializes the
    placeholders with the checkpoint's shapes. As in PyTorch, make the optimizer after the
    first forward (a dry run): one made before it holds the empty placeholders' storage.

    >>> class Scale(clgrad.nn.modules.lazy.LazyModuleMixin, clgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = clgrad.nn.UninitializedParameter()
    ...     def initialize_parameters(self, x):
    ...         self.weight.materialize(x.shape[-1:])
    ...         clgrad.nn.init.ones_(self.weight)
    ...     def forward(self, x):
    ...         return x * self.weight
    >>> m = Scale()
    >>> m.has_uninitialized_params()
    True
    >>> m(clgrad.ones(2, 3)).shape, m.weight.shape, m.has_uninitialized_params()
    (clgrad.Size([2, 3]), clgrad.Size([3]), False)
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters, with_kwargs=True
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is a placeholder."""
        return any(is_lazy(t) for t in chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materializes the placeholders from the first forward's arguments (each lazy module
        says how)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def _infer_parameters(self, args, kwargs=None) -> None:
        # the forward pre-hook: runs once, before the first forward
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        del self._initialize_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _load_from_state_dict(self, state_dict, prefix, *rest):
        # a checkpoint of the initialized module gives the placeholders their shapes
        for name, t in chain(self._parameters.items(), self._buffers.items()):
            value = state_dict.get(prefix + name)
            if is_lazy(t) and value is not None and not is_lazy(value):
                with no_grad():
                    t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, *rest)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # a placeholder is saved as itself (its detached data would be an empty tensor)
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for name, t in chain(self._parameters.items(), self._buffers.items()):
            if prefix + name in destination and is_lazy(t):
                destination[prefix + name] = t
