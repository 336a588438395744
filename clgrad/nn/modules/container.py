"""Containers: Sequential, ModuleList, ModuleDict, ParameterList."""

from __future__ import annotations

from collections import OrderedDict

from ..parameter import Parameter
from .module import Module


def _index(idx, n, what):
    i = int(idx)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for {what} of length {n}")
    return i % n


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: a list of modules keyed "0", "1", ..."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def _key(self, idx):
        return list(self._modules)[_index(idx, len(self), type(self).__name__)]

    def __setitem__(self, idx, module):
        self.add_module(self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for k in keys[idx] if isinstance(idx, slice) else [self._key(idx)]:
            del self._modules[k]
        self._renumber(list(self._modules.values()))

    def _renumber(self, modules):
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self


class Sequential(_ModuleSequence):
    """Runs its modules in order: ``Sequential(a, b, c)(x) == c(b(a(x)))``.

    Also takes one OrderedDict of named modules.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]


class ModuleList(_ModuleSequence):
    """A list of modules whose parameters the parent registers."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __iadd__(self, modules):
        return self.extend(modules)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward: iterate over its modules instead")


class ModuleDict(Module):
    """An ordered dict of modules whose parameters the parent registers."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        return self._modules.pop(key)

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward: index it instead")


class ParameterList(Module):
    """A list of Parameters registered as ``0``, ``1``, ..."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, idx):
        return self._parameters[str(_index(idx, len(self), "ParameterList"))]

    def append(self, value):
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(len(self)), value)
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(
            f"({k}): Parameter containing: [{p.type_name()} of size {'x'.join(map(str, p.shape))}"
            f"{'' if p.device.is_cpu else ' (' + str(p.device) + ')'}]"
            for k, p in self._parameters.items()
        )
