"""``Module``: the base class of every layer, with PyTorch's registration, traversal,
device/dtype moves, train/eval and state_dict semantics."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

from ... import dtypes as D
from ...autograd.grad_mode import no_grad
from ...device import Device, resolve
from ...tensor import Tensor
from ..parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _RemovableHandle:
    def __init__(self, hooks, key):
        self.hooks, self.key = hooks, key

    def remove(self):
        self.hooks.pop(self.key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


class Module:
    """Base class of layers: assign Parameters, Modules and buffers as attributes.

    >>> class Net(clgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = clgrad.nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    """

    training: bool
    _hook_id = 0

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, out)
            if result is not None:
                out = result
        return out

    def _add_hook(self, hooks, hook):
        Module._hook_id += 1
        hooks[Module._hook_id] = hook
        return _RemovableHandle(hooks, Module._hook_id)

    def register_forward_hook(self, hook):
        """``hook(module, args, output)`` runs after forward; a non-None result replaces output."""
        return self._add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        """``hook(module, args)`` runs before forward; a non-None result replaces args."""
        return self._add_hook(self._forward_pre_hooks, hook)

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

    def register_parameter(self, name, param):
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
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(clgrad Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
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
            self._forget(name)
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(clgrad.nn.Module or None expected)"
                )
            d["_modules"][name] = value
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(clgrad Tensor or None expected)"
                )
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        self.__dict__.pop(name, None)
        for key in ("_parameters", "_buffers", "_modules"):
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

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
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

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target):
        mod = self
        for part in target.split(".") if target else []:
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    def get_parameter(self, target):
        prefix, _, name = target.rpartition(".")
        mod = self.get_submodule(prefix)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def apply(self, fn):
        """Calls ``fn`` on every submodule (children first) and on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes -----------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    p._grad = p._grad.detach()
                    p._grad.zero_()

    # ---- devices and dtypes ----------------------------------------------------------------
    def _apply(self, fn, buffers=True):
        """Replaces every parameter's data (and grad) by fn(data) in place, and every buffer."""
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is None:
                        continue
                    new = fn(p.detach())
                    if new._storage is not p._storage or new.dtype is not p.dtype:
                        p.data = new
                    if p._grad is not None:
                        p._grad = fn(p._grad)
                if buffers:
                    for name, b in m._buffers.items():
                        if b is not None:
                            m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``: moves and
        casts (floating point only, as PyTorch) parameters, their grads and buffers in place."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, (str, Device)):
                device = a
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

    def cpu(self):
        return self.to("cpu")

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.dtype.is_floating_point else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.dtype.is_floating_point else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.dtype.is_floating_point else t)

    # ---- state dict ------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (detached)."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def _load_from_state_dict(self, state_dict, prefix, missing, errors, assign=False):
        own = {n: p for n, p in self._parameters.items() if p is not None}
        own.update(
            {
                n: b
                for n, b in self._buffers.items()
                if b is not None and n not in self._non_persistent_buffers_set
            }
        )
        for name, target in own.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected Tensor or Tensor-like '
                    f"object from checkpoint but received {type(value).__name__}"
                )
                continue
            if tuple(value.shape) != tuple(target.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {target.shape}."
                )
                continue
            if not assign:
                with no_grad():
                    target.copy_(value)
            elif name in self._parameters:
                target.data = value.detach()  # the Parameter object stays; its data is value's
            else:
                self._buffers[name] = value.detach()

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies tensors of ``state_dict`` into the parameters and buffers (across devices
        and dtypes); with ``assign``, they take the state dict's tensors themselves (device and
        dtype included). With ``strict``, missing or unexpected keys raise RuntimeError."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, errors = [], []
        expected = set()
        for prefix_mod, m in self.named_modules():
            prefix = prefix_mod + "." if prefix_mod else ""
            m._load_from_state_dict(state_dict, prefix, missing, errors, assign)
            for name, p in m._parameters.items():
                if p is not None:
                    expected.add(prefix + name)
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent_buffers_set:
                    expected.add(prefix + name)
        unexpected = [k for k in state_dict.keys() if k not in expected]
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
    def extra_repr(self):
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
