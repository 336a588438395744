"""``Module``: the base class of every layer, with PyTorch's registration, traversal,
device/dtype moves, train/eval and state_dict semantics."""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from ... import dtypes as D
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...device import Device, cuda_device, resolve
from ...hooks import RemovableHandle
from ...ops.creation import check_option, empty_like, zeros
from ...tensor import Tensor
from ..parameter import Buffer, Parameter, UninitializedBuffer

_M = TypeVar("_M", bound="Module")
_EXTRA_STATE = "_extra_state"  # the state_dict key of get_extra_state's value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _BackwardHooks:
    """One call's full backward hooks (``register_full_backward_hook``), laid out as PyTorch's
    ``BackwardHook``: identity Functions wrap the call's tensor arguments (where one requires
    grad) and its tensor outputs (a tensor or a tuple's; where one requires grad). The outputs'
    backward runs the backward pre-hooks on ``grad_output``, the inputs' runs the hooks with
    ``grad_input``; each tuple has an entry per argument (per output), None where it is not a
    tensor, and ``grad_output`` None where an output got no gradient. Where no input requires
    grad, the hooks run at the outputs with ``grad_input`` all None; where the outputs are not
    tensors (a list, a dict) the hooks do not run."""

    def __init__(self, module, args):
        self.module = module
        self.grad_output = None
        self.n_inputs, self.n_outputs = len(args), 0
        self.input_index = self.output_index = None
        self.input_like: dict = {}

    @staticmethod
    def _wrap(items, on_grads, materialize):
        """``items`` with their tensors through a BackwardHookFunction calling ``on_grads``,
        and the tensors' positions; ``items`` and None where no tensor requires grad."""
        index = [i for i, a in enumerate(items) if isinstance(a, Tensor)]
        if not any(items[i].requires_grad for i in index):
            return items, None
        new = BackwardHookFunction.apply(on_grads, materialize, *[items[i] for i in index])
        items = list(items)
        for i, t in zip(index, new if isinstance(new, tuple) else (new,)):
            items[i] = t
        return items, index

    def inputs(self, args):
        new, self.input_index = self._wrap(args, self.at_inputs, True)
        if self.input_index is None:
            return args
        # PyTorch's grad_input holds zeros for a tensor argument that got no gradient or does
        # not require grad: their shape, dtype and device (not the tensors, which would stay
        # alive with the graph)
        self.input_like = {
            i: (args[i].shape, args[i].dtype, args[i].device, args[i].requires_grad)
            for i in self.input_index
        }
        return tuple(new)

    def outputs(self, out):
        single = isinstance(out, Tensor)
        if not (single or isinstance(out, tuple)):
            warnings.warn(
                "For backward hooks to be called, module output should be a Tensor or a tuple of "
                f"Tensors but received {type(out)}",
                UserWarning,
                stacklevel=3,
            )
            return out
        outs = (out,) if single else out
        self.n_outputs = len(outs)
        new, self.output_index = self._wrap(outs, self.at_outputs, False)
        if self.output_index is None:
            return out
        return new[0] if single else type(out)(new)

    def at_outputs(self, grads):
        module = self.module
        grad_output = _through_hooks(
            [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()],
            lambda hook, go: hook(module, go),
            _packed(self.output_index, grads, self.n_outputs),
            "Backward pre hook returned an invalid number of grad_output",
        )
        self.grad_output = grad_output
        if self.input_index is None and (module._backward_hooks or _global_backward_hooks):
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients. See "
                "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook for more details.",
                UserWarning,
                stacklevel=1,
            )
            grad_input = (None,) * self.n_inputs
            for hook in [*_global_backward_hooks.values(), *module._backward_hooks.values()]:
                result = hook(module, grad_input, grad_output)
                if result is not None and not (
                    isinstance(result, tuple) and all(r is None for r in result)
                ):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_output = None
        return tuple(grad_output[i] for i in self.output_index)

    def _given(self, i, g):
        shape, dtype, device, requires_grad = self.input_like[i]
        return g if g is not None and requires_grad else zeros(shape, dtype=dtype, device=device)

    def at_inputs(self, grads):
        if self.grad_output is None:  # the gradient did not come through the outputs
            return grads
        module = self.module
        grads = [self._given(i, g) for i, g in zip(self.input_index, grads)]
        grad_input = _through_hooks(
            [*_global_backward_hooks.values(), *module._backward_hooks.values()],
            lambda hook, gi: hook(module, gi, self.grad_output),
            _packed(self.input_index, grads, self.n_inputs),
            "Backward hook returned an invalid number of grad_input",
        )
        self.grad_output = None
        return tuple(grad_input[i] for i in self.input_index)


def _through_hooks(hooks, call, grads, wrong_length: str):
    """``grads`` through each hook in turn (``call(hook, grads)``): a result that is not None
    replaces them, and must have their length (PyTorch's RuntimeError, ``wrong_length``)."""
    for hook in hooks:
        result = call(hook, grads)
        if result is not None:
            if len(result) != len(grads):
                raise RuntimeError(f"{wrong_length}, got {len(result)}, but expected {len(grads)}")
            grads = result
    return grads


def _packed(index, values, size) -> tuple:
    """A tuple of ``size`` Nones with ``values`` at the positions ``index``."""
    packed = [None] * size
    for i, v in zip(index, values):
        packed[i] = v
    return tuple(packed)


class BackwardHookFunction(Function):
    """The identity over a module call's tensors, whose backward hands their gradients to
    ``on_grads`` (``_BackwardHooks``'s ``at_inputs`` or ``at_outputs``) and passes on what it
    returns; ``materialize`` False: an output that got no gradient hands on None."""

    @staticmethod
    def forward(ctx, on_grads, materialize, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.on_grads(grads))


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


# hooks every module runs (register_module_forward_pre_hook / register_module_forward_hook),
# before its own
# clgrad.compile's compile(), put here when clgrad.compile is imported (it sits above nn, which
# cannot import it): what Module.compile() compiles the module's call with
module_compiler: list = [None]

_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_with_kwargs: set = set()
_global_always_called: set = set()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
# hooks that see (and may replace) every parameter, buffer and submodule a module registers
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, args)`` to run before every module's forward (before the
    module's own pre-hooks), as ``torch.nn.modules.module.register_module_forward_pre_hook``;
    a non-None result replaces the arguments. Returns a handle whose ``remove()`` takes it off.

    >>> from clgrad.nn.modules.module import register_module_forward_pre_hook
    >>> seen = []
    >>> h = register_module_forward_pre_hook(lambda m, args: seen.append(type(m).__name__))
    >>> _ = clgrad.nn.Sequential(clgrad.nn.ReLU())(clgrad.ones(1))
    >>> h.remove()
    >>> seen
    ['Sequential', 'ReLU']
    """
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Registers ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) to run after every module's forward (before the module's own hooks), as
    ``torch.nn.modules.module.register_module_forward_hook``; a non-None result replaces the
    output; ``always_call`` runs it (with output None) where forward raises.

    >>> from clgrad.nn.modules.module import register_module_forward_hook
    >>> h = register_module_forward_hook(lambda m, args, out: out * 2)
    >>> clgrad.nn.Identity()(clgrad.ones(2)).tolist()
    [2.0, 2.0]
    >>> h.remove()
    """
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_with_kwargs.add(handle.id)
    if always_call:
        _global_always_called.add(handle.id)
    return handle


def _global_hook(table, hook) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, grad_input, grad_output)`` for every module's backward (before
    the module's own full backward hooks), as torch's ``register_module_full_backward_hook``;
    a non-None result replaces ``grad_input``.

    >>> from clgrad.nn.modules.module import register_module_full_backward_hook
    >>> seen = []
    >>> h = register_module_full_backward_hook(lambda m, gi, go: seen.append(type(m).__name__))
    >>> x = clgrad.ones(2, requires_grad=True)
    >>> clgrad.nn.Tanh()(x).sum().backward()
    >>> h.remove()
    >>> seen
    ['Tanh']
    """
    return _global_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``register_module_full_backward_hook`` (torch's deprecated form, whose gradients were
    those of the module's last operation, is given the full module's here, as a module's own
    ``register_backward_hook`` is).

    >>> from clgrad.nn.modules.module import register_module_backward_hook
    >>> register_module_backward_hook(lambda m, gi, go: None).remove()
    """
    return register_module_full_backward_hook(hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, grad_output)`` to run when the gradients of every module's
    outputs are ready (before the module's own backward pre-hooks), as torch's
    ``register_module_full_backward_pre_hook``; a non-None result replaces ``grad_output``.

    >>> from clgrad.nn.modules.module import register_module_full_backward_pre_hook
    >>> h = register_module_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
    >>> x = clgrad.ones(2, requires_grad=True)
    >>> clgrad.nn.Identity()(x * 1).sum().backward()
    >>> h.remove()
    >>> x.grad
    tensor([10., 10.])
    """
    return _global_hook(_global_backward_pre_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, name, param)`` to run whenever a module registers a parameter
    (a non-None result is registered instead), as torch's
    ``register_module_parameter_registration_hook``.

    >>> from clgrad.nn.modules.module import register_module_parameter_registration_hook
    >>> names = []
    >>> h = register_module_parameter_registration_hook(lambda m, n, p: names.append(n))
    >>> _ = clgrad.nn.Linear(2, 2)
    >>> h.remove()
    >>> names
    ['weight', 'bias']
    """
    return _global_hook(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, name, buffer)`` to run whenever a module registers or assigns a
    buffer (a non-None result is registered instead), as torch's
    ``register_module_buffer_registration_hook``.

    >>> from clgrad.nn.modules.module import register_module_buffer_registration_hook
    >>> names = []
    >>> h = register_module_buffer_registration_hook(lambda m, n, b: names.append(n))
    >>> _ = clgrad.nn.BatchNorm1d(2)
    >>> h.remove()
    >>> names
    ['running_mean', 'running_var', 'num_batches_tracked']
    """
    return _global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, name, submodule)`` to run whenever a module registers a
    submodule (a non-None result is registered instead), as torch's
    ``register_module_module_registration_hook``.

    >>> from clgrad.nn.modules.module import register_module_module_registration_hook
    >>> names = []
    >>> h = register_module_module_registration_hook(lambda m, n, c: names.append(n))
    >>> _ = clgrad.nn.Sequential(clgrad.nn.ReLU(), clgrad.nn.Tanh())
    >>> h.remove()
    >>> names
    ['0', '1']
    """
    return _global_hook(_global_module_registration_hooks, hook)


def _registered(table, module, name, value):
    """``value`` as the registration hooks in ``table`` leave it."""
    for hook in list(table.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class Module:
    """Base class of every layer and model, as ``torch.nn.Module``: subclasses call
    ``super().__init__()``, assign their Parameters, submodules and buffers as attributes (which
    registers them) and implement ``forward``; calling the module runs its forward pre-hooks,
    ``forward`` and its forward hooks. Registered members are found recursively by
    ``parameters()``, ``state_dict()``, ``to()``, ``train()``/``eval()`` and the rest.

    >>> class Net(clgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = clgrad.nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> net = Net()
    >>> net
    Net(
      (fc): Linear(in_features=4, out_features=2, bias=True)
    )
    >>> net(clgrad.ones(3, 4)).shape
    clgrad.Size([3, 2])
    >>> [name for name, _ in net.named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool
    # the layout version recorded in state dicts (state_dict()._metadata), as PyTorch's: a
    # module whose saved layout changed counts up and converts older checkpoints on loading
    _version: int = 1
    # what a module unpickled from before backward hooks existed reads (registering one makes
    # the module's own table: _hooks_table)
    _backward_hooks = _backward_pre_hooks = MappingProxyType({})
    # torch's class attributes: dump_patches is obsolete; a subclass with call_super_init
    # hands the constructor's arguments on to the next class in its MRO (a mixin)
    dump_patches: bool = False
    call_super_init: bool = False
    T_destination = TypeVar("T_destination", bound=dict[str, Any])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module, which every subclass defines; call the module itself
        (``module(x)``) rather than ``forward`` so that the hooks run. The base raises
        NotImplementedError."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """A call of the module: ``forward``, between its hooks where it has any."""
        if (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        ):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        """``forward`` between its hooks (registered with or without ``with_kwargs``); hooks
        registered with ``always_call`` also run, with output None, where forward raises. The
        global hooks (``register_module_forward_hook``, ...) run first, as PyTorch's."""
        with_kwargs = self.__dict__.get("_hooks_with_kwargs", set()) | _global_with_kwargs
        pre_hooks = [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]
        forward_hooks = [*_global_forward_hooks.items(), *self._forward_hooks.items()]
        for key, hook in pre_hooks:
            if key in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {result}."
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hooks = None
        if is_grad_enabled() and (
            self._backward_hooks
            or self._backward_pre_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        ):
            backward_hooks = _BackwardHooks(self, args)
            args = backward_hooks.inputs(args)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            always = self.__dict__.get("_hooks_always_called", set()) | _global_always_called
            for key, hook in forward_hooks:
                if key in always:
                    hook(self, args, kwargs, None) if key in with_kwargs else hook(self, args, None)
            raise
        for key, hook in forward_hooks:
            if key in with_kwargs:
                result = hook(self, args, kwargs, out)
            else:
                result = hook(self, args, out)
            if result is not None:
                out = result
        if backward_hooks is not None:
            out = backward_hooks.outputs(out)
        return out

    def _add_hook(self, hooks, hook, prepend=False, with_kwargs=False, always_call=False):
        handle = RemovableHandle(hooks)
        key = handle.id
        hooks[key] = hook
        if prepend:
            hooks.move_to_end(key, last=False)
        for flag, name in (
            (with_kwargs, "_hooks_with_kwargs"),
            (always_call, "_hooks_always_called"),
        ):
            if flag:
                self.__dict__.setdefault(name, set()).add(key)
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Registers ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) to run after every ``forward``; a non-None result replaces the output,
        as ``torch.nn.Module.register_forward_hook``. ``prepend`` runs it before the hooks
        registered so far; ``always_call`` runs it (with output None) where forward raises.
        Returns a handle whose ``remove()`` unregisters it.

        >>> relu = clgrad.nn.ReLU()
        >>> handle = relu.register_forward_hook(lambda module, args, out: out * 10)
        >>> relu(clgrad.tensor([1.0, -1.0]))
        tensor([10., 0.])
        >>> handle.remove()
        >>> relu(clgrad.tensor([1.0, -1.0]))
        tensor([1., 0.])
        """
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs, always_call)

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(module, args)`` to run before every ``forward``; a non-None result
        (a tuple, or a single value) replaces the positional arguments, as
        ``torch.nn.Module.register_forward_pre_hook``. With ``with_kwargs`` it is
        ``hook(module, args, kwargs)`` and returns None or ``(args, kwargs)``; ``prepend`` runs
        it before the hooks registered so far. Returns a handle whose ``remove()`` unregisters
        it.

        >>> relu = clgrad.nn.ReLU()
        >>> handle = relu.register_forward_pre_hook(lambda module, args: -args[0])
        >>> relu(clgrad.tensor([1.0, -1.0]))
        tensor([0., 1.])
        """
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(module, grad_input, grad_output)`` to run when the gradients with
        respect to the module's tensor inputs are computed (``grad_output``: those with respect
        to its outputs); a non-None result replaces ``grad_input``, as
        ``torch.nn.Module.register_full_backward_hook`` (Grad-CAM reads activations' gradients
        this way).

        >>> lin = clgrad.nn.Linear(2, 1)
        >>> seen = []
        >>> h = lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> lin(clgrad.ones(3, 2, requires_grad=True)).sum().backward()
        >>> seen
        [clgrad.Size([3, 1])]
        """
        return self._add_hook(self._hooks_table("_backward_hooks"), hook, prepend)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(module, grad_output)`` to run when the gradients with respect to
        the module's outputs are computed, before the full backward hooks; a non-None result
        replaces ``grad_output``, as ``torch.nn.Module.register_full_backward_pre_hook``.

        >>> relu = clgrad.nn.ReLU()
        >>> h = relu.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
        >>> x = clgrad.ones(2, requires_grad=True)
        >>> relu(x).sum().backward()
        >>> x.grad
        tensor([10., 10.])
        """
        return self._add_hook(self._hooks_table("_backward_pre_hooks"), hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``register_full_backward_hook`` (PyTorch's deprecated form gave the gradients of the
        module's last operation's inputs; the gradients of its outputs, which hooks mostly read,
        are the same)."""
        return self.register_full_backward_hook(hook)

    # ---- registration ----------------------------------------------------------------------
    def _check_name(self, name, kind):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Registers ``param`` (a Parameter, or None for an absent one) under ``name``, as
        assigning it as an attribute does, as ``torch.nn.Module.register_parameter``.

        >>> m = clgrad.nn.Module()
        >>> m.register_parameter("w", clgrad.nn.Parameter(clgrad.zeros(2)))
        >>> list(m.state_dict())
        ['w']
        """
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(clgrad.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                "created explicitly. To express '" + name + "' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        if param is not None:
            param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Registers ``tensor`` as a buffer named ``name``: state that is not a parameter (such
        as BatchNorm's running mean) but moves with ``to()`` and, when ``persistent``, is saved
        in the state dict, as ``torch.nn.Module.register_buffer``.

        >>> m = clgrad.nn.Module()
        >>> m.register_buffer("count", clgrad.zeros(1))
        >>> m.register_buffer("scratch", clgrad.zeros(1), persistent=False)
        >>> list(m.state_dict()), len(list(m.buffers()))
        (['count'], 2)
        """
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(clgrad Tensor or None required)"
            )
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Registers ``module`` as a child named ``name``, as assigning it as an attribute does,
        as ``torch.nn.Module.add_module`` (also named ``register_module``).

        >>> m = clgrad.nn.Module()
        >>> m.add_module("fc", clgrad.nn.Linear(2, 2))
        >>> m
        Module(
          (fc): Linear(in_features=2, out_features=2, bias=True)
        )
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(clgrad.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            d["_modules"][name] = _registered(_global_module_registration_hooks, self, name, value)
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(clgrad.nn.Module or None expected)"
                )
            d["_modules"][name] = _registered(_global_module_registration_hooks, self, name, value)
        elif isinstance(value, (Buffer, UninitializedBuffer)):
            if params is None:
                raise AttributeError("cannot assign buffers before Module.__init__() call")
            self.register_buffer(name, value, value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(clgrad Tensor or None expected)"
                )
            d["_buffers"][name] = _registered(_global_buffer_registration_hooks, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep=None):
        """Drops ``name`` from every store but ``keep``: a parameter or child assigned over one
        of its own kind keeps its place in the order (``parameters()``, ``state_dict()``, a
        ``Sequential``'s forward), as PyTorch's."""
        self.__dict__.pop(name, None)
        for key in ("_parameters", "_buffers", "_modules"):
            if key != keep:
                self.__dict__[key].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            store = d.get(key)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[key]:
                del self.__dict__[key][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(
            set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules)
        )

    # ---- traversal -------------------------------------------------------------------------
    def _named_members(self, get, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, module in modules:
            for name, value in get(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (mod_prefix + "." if mod_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Yields ``(dotted name, parameter)`` for the parameters of this module and (with
        ``recurse``) of every submodule, each shared parameter once unless
        ``remove_duplicate=False``, as ``torch.nn.Module.named_parameters``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.Linear(2, 1))
        >>> [(name, tuple(p.shape)) for name, p in net.named_parameters()]
        [('0.weight', (2, 3)), ('0.bias', (2,)), ('1.weight', (1, 2)), ('1.bias', (1,))]
        """
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yields the parameters of this module and (with ``recurse``) of every submodule, as
        ``torch.nn.Module.parameters``: what an optimizer takes.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.Linear(2, 1))
        >>> sum(p.numel() for p in net.parameters())
        11
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """Yields ``(dotted name, buffer)`` for the buffers of this module and (with
        ``recurse``) of every submodule, as ``torch.nn.Module.named_buffers``.

        >>> [name for name, _ in clgrad.nn.BatchNorm1d(3).named_buffers()]
        ['running_mean', 'running_var', 'num_batches_tracked']
        """
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Yields the buffers of this module and (with ``recurse``) of every submodule, as
        ``torch.nn.Module.buffers``.

        >>> [tuple(b.shape) for b in clgrad.nn.BatchNorm1d(3).buffers()]
        [(3,), (3,), ()]
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yields ``(name, module)`` for the direct submodules, as
        ``torch.nn.Module.named_children``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.ReLU())
        >>> [name for name, _ in net.named_children()]
        ['0', '1']
        """
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        """Yields the direct submodules, as ``torch.nn.Module.children``.

        >>> list(clgrad.nn.Sequential(clgrad.nn.ReLU(), clgrad.nn.Tanh()).children())
        [ReLU(), Tanh()]
        """
        for _, m in self.named_children():
            yield m

    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Yields ``(dotted name, module)`` for this module (named ``prefix``, "" by default)
        and every submodule, depth first, each shared module once unless
        ``remove_duplicate=False``, as ``torch.nn.Module.named_modules``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.ReLU())
        >>> [name for name, _ in net.named_modules()]
        ['', '0', '1']
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(
                memo, prefix + ("." if prefix else "") + name, remove_duplicate
            )

    def modules(self) -> Iterator[Module]:
        """Yields this module and every submodule, depth first, as ``torch.nn.Module.modules``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.ReLU())
        >>> [type(m).__name__ for m in net.modules()]
        ['Sequential', 'Linear', 'ReLU']
        """
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` ("" is the module itself); raises
        AttributeError if there is none, as ``torch.nn.Module.get_submodule``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.ReLU())
        >>> net.get_submodule("0")
        Linear(in_features=3, out_features=2, bias=True)
        """
        mod = self
        for part in target.split(".") if target else []:
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compiles the module's calls in place with ``clgrad.compile`` (its options as
        ``kwargs``), as ``torch.nn.Module.compile``: unlike ``clgrad.compile(module)``, the
        module stays itself, its state dict keys unchanged.

        >>> net = clgrad.nn.Linear(2, 1)
        >>> net.compile()
        >>> net(clgrad.ones(1, 2)).shape, sorted(net.state_dict())
        (clgrad.Size([1, 1]), ['bias', 'weight'])
        """
        self._compiled_call_impl = module_compiler[0](self._call_impl, *args, **kwargs)

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Puts ``module`` at the dotted path ``target`` (replacing the submodule there, or with
        ``strict=False`` adding one), as ``torch.nn.Module.set_submodule``: how programs swap a
        layer for another (a new classifier head, a quantized or LoRA-wrapped Linear).

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2), clgrad.nn.ReLU())
        >>> net.set_submodule("1", clgrad.nn.Tanh())
        >>> net[1]
        Tanh()
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``; raises AttributeError if there is none,
        as ``torch.nn.Module.get_parameter``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(3, 2))
        >>> net.get_parameter("0.bias").shape
        clgrad.Size([2])
        """
        prefix, _, name = target.rpartition(".")
        mod = self.get_submodule(prefix)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``, as ``torch.nn.Module.get_buffer``
        (AttributeError where there is none).

        >>> clgrad.nn.BatchNorm1d(2).get_buffer("running_mean")
        tensor([0., 0.])
        """
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path) if path else self
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    def share_memory(self: _M) -> _M:
        """Returns the module: PyTorch moves its CPU tensors to shared memory for worker
        processes; clgrad's tensors are not shared between processes that way."""
        return self

    def apply(self: _M, fn: Callable[[Module], Any]) -> _M:
        """Calls ``fn`` on every submodule (children first, recursively) and then on the module
        itself, and returns the module, as ``torch.nn.Module.apply`` (typically to initialize
        weights).

        >>> def init_weights(m):
        ...     if isinstance(m, clgrad.nn.Linear):
        ...         clgrad.nn.init.ones_(m.weight)
        >>> net = clgrad.nn.Sequential(clgrad.nn.Linear(2, 2), clgrad.nn.ReLU())
        >>> net.apply(init_weights)[0].weight.sum().item()
        4.0
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes -----------------------------------------------------------------------------
    def train(self: _M, mode: bool = True) -> _M:
        """Sets the module and every submodule to training mode (``mode=True``) or evaluation
        mode (``mode=False``), which changes layers such as Dropout and BatchNorm; returns the
        module, as ``torch.nn.Module.train``.

        >>> net = clgrad.nn.Sequential(clgrad.nn.Dropout())
        >>> net.train(False)[0].training
        False
        >>> net.train()[0].training
        True
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self: _M) -> _M:
        """Sets the module and every submodule to evaluation mode (``train(False)``) and returns
        it, as ``torch.nn.Module.eval``.

        >>> clgrad.nn.Dropout().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self: _M, requires_grad: bool = True) -> _M:
        """Sets ``requires_grad`` of every parameter in place (False freezes the module) and
        returns the module, as ``torch.nn.Module.requires_grad_``.

        >>> clgrad.nn.Linear(2, 2).requires_grad_(False).weight.requires_grad
        False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every parameter: to None (the default) or, with
        ``set_to_none=False``, to zeros, as ``torch.nn.Module.zero_grad``.

        >>> layer = clgrad.nn.Linear(2, 1)
        >>> layer(clgrad.ones(1, 2)).sum().backward()
        >>> layer.weight.grad
        tensor([[1., 1.]])
        >>> layer.zero_grad()
        >>> layer.weight.grad is None
        True
        """
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    p._grad = p._grad.detach()
                    p._grad.zero_()

    # ---- devices and dtypes ----------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Replaces every parameter's data (and grad) by fn(data) in place, and every buffer:
        the children's first, each through its own ``_apply``, as PyTorch's (a module that
        overrides it to convert state of its own, as torchmetrics' do, is reached by its
        parent's ``to()``)."""
        if recurse:
            for child in self.children():
                child._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p.detach())
                if new._storage is not p._storage or new.dtype is not p.dtype:
                    p.data = new
                if p._grad is not None:
                    p._grad = fn(p._grad)
            for name, b in self._buffers.items():
                if isinstance(b, UninitializedBuffer):  # stays a placeholder
                    b.data = fn(b.detach())
                elif b is not None:
                    self._buffers[name] = fn(b)
        return self

    def to(self: _M, *args: Any, **kwargs: Any) -> _M:
        """Moves and/or casts the parameters, their gradients and the buffers in place and
        returns the module, as ``torch.nn.Module.to``: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)`` (its device and dtype) or the keywords ``device``,
        ``dtype``, ``non_blocking`` and ``memory_format`` (accepted, as ``Tensor.to`` accepts
        it: every layout is row-major here). The dtype must be floating point and casts only
        floating-point tensors (integer buffers keep their dtype).

        >>> layer = clgrad.nn.Linear(2, 2).to(clgrad.float64)
        >>> layer.weight.dtype, layer.weight.device
        (clgrad.float64, device(type='cpu'))
        """
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        check_option("to", "memory_format", memory_format)
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, (str, Device, int)) and not isinstance(a, bool):
                device = a  # an int is cuda:N, as in PyTorch
            else:
                raise TypeError(f"to() received an invalid argument {a!r}")
        if dtype is not None:
            dtype = D.as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(
                    f"nn.Module.to only accepts floating point dtypes, but got desired dtype="
                    f"{dtype}"
                )
        device = resolve(device) if device is not None else None

        def convert(t):
            if dtype is not None and t.dtype.is_floating_point and t.dtype is not dtype:
                t = t.to(dtype)
            if device is not None and t.device != device:
                t = t.to(device)
            return t

        return self._apply(convert)

    def to_empty(self: _M, *, device, recurse: bool = True) -> _M:
        """Gives every parameter and buffer new, uninitialized storage on ``device`` (same
        shapes and dtypes) and returns the module, as ``torch.nn.Module.to_empty``: the step
        from a model built on the ``meta`` device to one whose values ``load_state_dict`` or
        an init then fills. ``recurse=False``: this module's own tensors only.

        >>> with clgrad.device("meta"):
        ...     layer = clgrad.nn.Linear(2, 3)
        >>> layer.to_empty(device="cpu").weight.device, layer.weight.shape
        (device(type='cpu'), clgrad.Size([3, 2]))
        """
        device = resolve(device)
        with no_grad():
            for m in self.modules() if recurse else [self]:
                for p in m._parameters.values():
                    if p is not None:
                        p.data = empty_like(p, device=device)
                        if p._grad is not None:
                            p._grad = empty_like(p._grad, device=device)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = empty_like(b, device=device)
        return self

    def cpu(self: _M) -> _M:
        """Moves every parameter and buffer to the host device ``cpu`` in place and returns the
        module, as ``torch.nn.Module.cpu``.

        >>> clgrad.nn.Linear(2, 2).cpu().weight.device
        device(type='cpu')
        """
        return self.to("cpu")

    def cuda(self: _M, device: int | str | Device | None = None) -> _M:
        """Moves every parameter and buffer in place to the OpenCL device ``"cuda"`` names
        (``device``: an index or a device; default the current one) and returns the module, as
        ``torch.nn.Module.cuda`` (see ``clgrad.cuda``).

        >>> if clgrad.cuda.is_available():
        ...     assert clgrad.nn.Linear(2, 2).cuda().weight.is_cuda
        """
        return self.to(cuda_device(device))

    def type(self: _M, dst_type: D.dtype | str) -> _M:
        """Casts every parameter and buffer (integer ones included) to ``dst_type`` in place and
        returns the module, as ``torch.nn.Module.type``.

        >>> clgrad.nn.Linear(2, 2).type(clgrad.float64).bias.dtype
        clgrad.float64
        """
        return self._apply(lambda t: t.to(dst_type))

    def float(self: _M) -> _M:
        """Casts the floating-point parameters and buffers to float32 in place and returns the
        module, as ``torch.nn.Module.float``.

        >>> clgrad.nn.Linear(2, 2).double().float().weight.dtype
        clgrad.float32
        """
        return self._apply(lambda t: t.float() if t.dtype.is_floating_point else t)

    def double(self: _M) -> _M:
        """Casts the floating-point parameters and buffers to float64 in place and returns the
        module, as ``torch.nn.Module.double``.

        >>> clgrad.nn.Linear(2, 2).double().weight.dtype
        clgrad.float64
        """
        return self._apply(lambda t: t.double() if t.dtype.is_floating_point else t)

    def half(self: _M) -> _M:
        """Casts the floating-point parameters and buffers to float16 in place and returns the
        module, as ``torch.nn.Module.half``.

        >>> clgrad.nn.Linear(2, 2).half().weight.dtype
        clgrad.float16
        """
        return self._apply(lambda t: t.half() if t.dtype.is_floating_point else t)

    def bfloat16(self: _M) -> _M:
        """Casts the floating-point parameters and buffers to bfloat16 in place and returns the
        module, as ``torch.nn.Module.bfloat16``.

        >>> clgrad.nn.Linear(2, 2).bfloat16().weight.dtype
        clgrad.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.dtype.is_floating_point else t)

    # ---- state dict ------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """The module's extra state for ``state_dict`` (any picklable value), where a subclass
        defines it (with ``set_extra_state``), as ``torch.nn.Module.get_extra_state``; the
        base raises RuntimeError.

        >>> class Counter(clgrad.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.count = 0
        ...     def get_extra_state(self):
        ...         return {"count": self.count}
        ...     def set_extra_state(self, state):
        ...         self.count = state["count"]
        >>> a, b = Counter(), Counter()
        >>> a.count = 5
        >>> _ = b.load_state_dict(a.state_dict())
        >>> b.count
        5
        """
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restores the value ``get_extra_state`` gave (from ``load_state_dict``), as
        ``torch.nn.Module.set_extra_state``; the base raises RuntimeError."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    def state_dict(
        self,
        *args: Any,
        destination: dict[str, Tensor] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ) -> dict[str, Tensor]:
        """An OrderedDict of every parameter and persistent buffer, by dotted name, of this
        module and its submodules (its own first), as ``torch.nn.Module.state_dict``. The
        tensors are detached but share storage with the module's (``keep_vars=True`` keeps the
        Parameters themselves); keys get ``prefix`` in front.

        >>> state = clgrad.nn.BatchNorm1d(3).state_dict()
        >>> list(state)
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        >>> state["running_var"]
        tensor([1., 1., 1.])
        """
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            # each module's version by prefix, as PyTorch's (load hooks read it: a checkpoint
            # from an older layout is converted)
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:  # (the legacy _register_state_dict_hook's new dict)
                destination = result
        return destination

    def _hooks_table(self, name) -> OrderedDict:
        """The module's own table of the hooks ``name`` (made at the first registration)."""
        return self.__dict__.setdefault(name, OrderedDict())

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, prefix, keep_vars)`` to run before ``state_dict`` saves
        this module, as ``torch.nn.Module.register_state_dict_pre_hook``."""
        return self._add_hook(self._hooks_table("_state_dict_pre_hooks"), hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, state_dict, prefix, local_metadata)`` to run after
        ``state_dict`` saved this module (and its submodules); it may change the dict in place,
        as ``torch.nn.Module.register_state_dict_post_hook`` (it must return None).

        >>> lin = clgrad.nn.Linear(2, 1)
        >>> h = lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop("bias"))
        >>> list(lin.state_dict())
        Traceback (most recent call last):
        ...
        RuntimeError: state_dict post-hook must return None
        """

        def checked(module, state_dict, prefix, local_metadata):
            if hook(module, state_dict, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")

        return self._add_hook(self._hooks_table("_state_dict_hooks"), checked)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's older post-hook: ``hook(module, state_dict, prefix, local_metadata)``,
        whose non-None result replaces the state dict."""
        return self._add_hook(self._hooks_table("_state_dict_hooks"), hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` to run before ``load_state_dict`` loads this module (it
        may rename or convert the checkpoint's keys in place: a copy of the dict given), as
        ``torch.nn.Module.register_load_state_dict_pre_hook``.

        >>> lin = clgrad.nn.Linear(2, 1)
        >>> def rename(module, sd, prefix, *rest):
        ...     sd[prefix + "weight"] = sd.pop(prefix + "w")
        >>> h = lin.register_load_state_dict_pre_hook(rename)
        >>> lin.load_state_dict({"w": clgrad.ones(1, 2), "bias": clgrad.zeros(1)})
        <All keys matched successfully>
        """
        return self._add_hook(
            self._hooks_table("_load_state_dict_pre_hooks"), lambda *a: hook(self, *a)
        )

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """PyTorch's older pre-hook: ``hook(state_dict, prefix, local_metadata, strict,
        missing_keys, unexpected_keys, error_msgs)`` (the module first ``with_module``)."""
        adapted = (lambda *a: hook(self, *a)) if with_module else hook
        return self._add_hook(self._hooks_table("_load_state_dict_pre_hooks"), adapted)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, incompatible_keys)`` to run after ``load_state_dict``
        loaded this module; it may edit ``incompatible_keys.missing_keys`` and
        ``.unexpected_keys`` in place (before a strict load raises for them), as
        ``torch.nn.Module.register_load_state_dict_post_hook``."""
        return self._add_hook(self._hooks_table("_load_state_dict_post_hooks"), hook)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        """Loads this module's own parameters and persistent buffers (not its children's) from
        ``state_dict``, with PyTorch's signature, so that a subclass overriding it the PyTorch
        way (torchvision's FrozenBatchNorm2d drops a key first) runs unchanged: the pre-hooks
        first, then each tensor copied in place (or, with ``local_metadata``'s
        ``assign_to_params_buffers``, assigned); missing keys, and with ``strict`` the keys
        under ``prefix`` that name nothing of this module, are appended to the lists."""
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        own = {n: p for n, p in self._parameters.items() if p is not None}
        own.update(
            {
                n: b
                for n, b in self._buffers.items()
                if b is not None and n not in self._non_persistent_buffers_set
            }
        )
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, target in own.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected Tensor or Tensor-like '
                    f"object from checkpoint but received {type(value)}"
                )
                continue
            if not target.shape and tuple(value.shape) == (1,):  # (PyTorch's old checkpoints)
                value = value[0]
            if tuple(value.shape) != tuple(target.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {target.shape}."
                )
                continue
            if not assign:
                try:
                    with no_grad():
                        target.copy_(value)
                except Exception as e:
                    error_msgs.append(
                        f'While copying the parameter named "{key}", whose dimensions in the '
                        f"model are {target.shape} and whose dimensions in the checkpoint are "
                        f"{value.shape}, an exception occurred : {e.args}."
                    )
            elif name in self._parameters:  # a new Parameter over the checkpoint's tensor
                setattr(self, name, Parameter(value, requires_grad=target.requires_grad))
            else:
                setattr(self, name, value)
        extra_key = prefix + _EXTRA_STATE
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    name = key[len(prefix) :].split(".", 1)
                    # a dotted name must lead to a child; a plain one, to a tensor of this one
                    if name[0] not in (self._modules if len(name) > 1 else own):
                        unexpected_keys.append(key)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copies the tensors of ``state_dict`` into the parameters and persistent buffers of
        the same names, in place (across devices and dtypes), as
        ``torch.nn.Module.load_state_dict``; with ``assign``, they take the state dict's tensors
        themselves (device and dtype included). A shape mismatch raises RuntimeError, and so,
        with ``strict``, do missing or unexpected keys; returns the named tuple
        ``(missing_keys, unexpected_keys)``.

        >>> src, dst = clgrad.nn.Linear(3, 2), clgrad.nn.Linear(3, 2)
        >>> dst.load_state_dict(src.state_dict())
        <All keys matched successfully>
        >>> bool((dst.weight == src.weight).all())
        True
        >>> dst.load_state_dict({"weight": clgrad.zeros(2, 3)}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # hooks and overrides may edit it: a copy of yours
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict, prefix, local_metadata, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {
                        k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state_dict, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in list(module.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                if hook(module, keys) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". ",
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ",
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- repr ------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The module-specific part of the repr, inside the parentheses (its options); ""
        by default. Subclasses override it, as in ``torch.nn.Module.extra_repr``.

        >>> clgrad.nn.Linear(3, 2).extra_repr()
        'in_features=3, out_features=2, bias=True'
        """
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = []
        for name, m in self._modules.items():
            children.append(f"({name}): " + _addindent(repr(m), 2))
        body = lines + children
        main = self._get_name() + "("
        if body:
            if len(lines) == 1 and not children:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(body) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
