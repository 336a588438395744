"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

if TYPE_CHECKING:
    from ...tensor import Tensor

_S = TypeVar("_S", bound="_ModuleSequence")


def _index(idx, n, what):
    i = int(idx)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for {what} of length {n}")
    return i % n


_CONTAINER_DEPRECATED = (
    "`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
    "Subclass that instead."
)


class Container(Module):
    """A Module holding the modules given by keyword, as torch's deprecated ``nn.Container``:
    making one, or defining a subclass, gives its FutureWarning (subclass ``Module`` instead).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     c = clgrad.nn.Container(lin=clgrad.nn.Linear(2, 1))
    >>> [name for name, _ in c.named_children()]
    ['lin']
    """

    def __init_subclass__(cls, **kwargs):
        warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: Any) -> None:
        if type(self) is Container:  # a subclass warned where it was defined, as torch's
            warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


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

    def append(self: _S, module: Module) -> _S:
        """Adds ``module`` at the end (under the next index) and returns the container, as
        ``append`` of ``torch.nn.Sequential`` and ``torch.nn.ModuleList``.

        >>> len(clgrad.nn.ModuleList([clgrad.nn.ReLU()]).append(clgrad.nn.Tanh()))
        2
        """
        self.add_module(str(len(self)), module)
        return self

    def extend(self: _S, modules: Iterable[Module]) -> _S:
        """Appends every module of ``modules`` in order and returns the container.

        >>> len(clgrad.nn.Sequential().extend([clgrad.nn.ReLU(), clgrad.nn.Tanh()]))
        2
        """
        for m in modules:
            self.append(m)
        return self

    def insert(self: _S, index: int, module: Module) -> _S:
        """Inserts ``module`` before position ``index`` (renumbering the ones after it) and
        returns the container.

        >>> seq = clgrad.nn.Sequential(clgrad.nn.ReLU()).insert(0, clgrad.nn.Tanh())
        >>> seq
        Sequential(
          (0): Tanh()
          (1): ReLU()
        )
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self

    def pop(self, key: int | slice) -> Module:
        """Removes the module at ``key`` (renumbering the ones after it) and returns it.

        >>> seq = clgrad.nn.Sequential(clgrad.nn.ReLU(), clgrad.nn.Tanh())
        >>> seq.pop(0), len(seq)
        (ReLU(), 1)
        """
        module = self[key]
        del self[key]
        return module


class Sequential(_ModuleSequence):
    """A chain of modules run in order, as ``torch.nn.Sequential``:
    ``Sequential(a, b, c)(x) == c(b(a(x)))``. The modules are registered as "0", "1", ... or,
    given one OrderedDict, under its names; indexing returns a module, slicing a Sequential.

    >>> import clgrad.nn as nn
    >>> net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> net(clgrad.ones(2, 4)).shape
    clgrad.Size([2, 1])
    >>> len(net), net[-1]
    (3, Linear(in_features=3, out_features=1, bias=True))
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input: Any) -> Any:
        """Passes ``input`` through each module in turn and returns the last one's output."""
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def _other_sequential(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {type(other)} "
                "is given."
            )

    def _factor(self, n):
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(n)}")
        if n <= 0:
            raise ValueError(f"Non-positive multiplication factor {n} for {type(self)}")

    def __add__(self, other: Sequential) -> Sequential:
        """The modules of both, in a new Sequential (the same module objects), as PyTorch's.

        >>> len(clgrad.nn.Sequential(clgrad.nn.ReLU()) + clgrad.nn.Sequential(clgrad.nn.Tanh()))
        2
        """
        self._other_sequential(other)
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        self._other_sequential(other)
        return self.extend(list(other))

    def __mul__(self, n: int) -> Sequential:
        """The modules repeated ``n`` times, in a new Sequential (the same module objects).

        >>> len(clgrad.nn.Sequential(clgrad.nn.ReLU(), clgrad.nn.Tanh()) * 3)
        6
        """
        self._factor(n)
        return Sequential(*(list(self) * n))

    __rmul__ = __mul__

    def __imul__(self, n: int) -> Sequential:
        self._factor(n)
        self._renumber(list(self) * n)
        return self


class ModuleList(_ModuleSequence):
    """A list of modules, registered as "0", "1", ... so that the module holding it sees
    their parameters, as ``torch.nn.ModuleList``; it has no ``forward``: iterate over it.

    >>> import clgrad.nn as nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __repr__(self) -> str:
        """PyTorch's: runs of modules that print alike fold into ``(i-j): n x <module>``.

        >>> clgrad.nn.ModuleList([clgrad.nn.ReLU() for _ in range(3)])
        ModuleList(
          (0-2): 3 x ReLU()
        )
        """
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = [[0, 0, reprs[0]]]
        for i, r in enumerate(reprs[1:], 1):
            if r == runs[-1][2]:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            head = f"({start})" if start == end else f"({start}-{end}): {end - start + 1} x"
            text = f"{head}: {r}" if start == end else f"{head} {r}"
            lines.append(_addindent(text, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        """The modules of both, in a new ModuleList (the same module objects).

        >>> len(clgrad.nn.ModuleList([clgrad.nn.ReLU()]) + [clgrad.nn.Tanh()])
        2
        """
        return ModuleList([*self, *other])

    def __iadd__(self, modules):
        return self.extend(modules)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Raises NotImplementedError: a ModuleList is iterated, not called."""
        raise NotImplementedError("ModuleList has no forward: iterate over its modules instead")


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys so that the module holding it
    sees their parameters, as ``torch.nn.ModuleDict``; it has no ``forward``: index it.

    >>> import clgrad.nn as nn
    >>> acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
    >>> list(acts.keys()), "relu" in acts
    (['relu', 'tanh'], True)
    >>> acts["relu"](clgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(
        self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
    ) -> None:
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

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order.

        >>> list(clgrad.nn.ModuleDict({"a": clgrad.nn.ReLU()}).keys())
        ['a']
        """
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        """The modules, in insertion order.

        >>> list(clgrad.nn.ModuleDict({"a": clgrad.nn.ReLU()}).values())
        [ReLU()]
        """
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        """The ``(key, module)`` pairs, in insertion order.

        >>> list(clgrad.nn.ModuleDict({"a": clgrad.nn.ReLU()}).items())
        [('a', ReLU())]
        """
        return self._modules.items()

    def pop(self, key: str) -> Module:
        """Removes the module under ``key`` and returns it.

        >>> d = clgrad.nn.ModuleDict({"a": clgrad.nn.ReLU()})
        >>> d.pop("a"), len(d)
        (ReLU(), 0)
        """
        return self._modules.pop(key)

    def clear(self) -> None:
        """Removes every module.

        >>> d = clgrad.nn.ModuleDict({"a": clgrad.nn.ReLU()})
        >>> d.clear(); len(d)
        0
        """
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Adds (or replaces) the modules of a mapping or of an iterable of ``(key, module)``
        pairs, in order.

        >>> d = clgrad.nn.ModuleDict()
        >>> d.update([("a", clgrad.nn.ReLU()), ("b", clgrad.nn.Tanh())])
        >>> list(d.keys())
        ['a', 'b']
        """
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Raises NotImplementedError: a ModuleDict is indexed, not called."""
        raise NotImplementedError("ModuleDict has no forward: index it instead")


class ParameterList(Module):
    """A list of Parameters, registered as "0", "1", ... so that the module holding it sees
    them, as ``torch.nn.ParameterList``; plain tensors are wrapped into Parameters and other
    objects kept as they are (unregistered), as PyTorch's.

    >>> params = clgrad.nn.ParameterList([clgrad.zeros(2), clgrad.ones(3)])
    >>> params
    ParameterList(
      (0): Parameter containing: [clgrad.float32 of size 2]
      (1): Parameter containing: [clgrad.float32 of size 3]
    )
    >>> params[1].requires_grad, len(list(params.parameters())), len(params[1:])
    (True, 2, 1)
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        for v in values or ():
            self.append(v)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx, value):
        idx = _index(idx, len(self), "ParameterList")
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, str(idx), value)

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Adds ``value`` (a tensor wrapped into a Parameter unless it is one) at the end and
        returns the list.

        >>> len(clgrad.nn.ParameterList().append(clgrad.zeros(2)))
        1
        """
        new = self._size
        self._size += 1
        self[new] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Appends every value of ``values`` in order and returns the list.

        >>> len(clgrad.nn.ParameterList().extend([clgrad.zeros(2), clgrad.zeros(1)]))
        2
        """
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        # each line indented by two spaces of its own, as torch's (so that printed, a list of
        # several is indented by four, and a list of one prints on its parent's line)
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                dev = "" if p.device.is_cpu else " (" + str(p.device) + ")"
                size = "x".join(map(str, p.shape))
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.type_name()} of size {size}{dev}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)


class ParameterDict(Module):
    """An ordered dict of Parameters, registered under their keys so that the module holding
    it sees them, as ``torch.nn.ParameterDict``; plain tensors are wrapped into Parameters
    (other values are kept as plain attributes).

    >>> params = clgrad.nn.ParameterDict({"w": clgrad.ones(2), "b": clgrad.zeros(1)})
    >>> list(params.keys()), params["w"].requires_grad  # a plain dict's keys sorted, as torch
    (['b', 'w'], True)
    >>> sorted(name for name, _ in params.named_parameters())
    ['b', 'w']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        if hasattr(value, "shape") and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order.

        >>> list(clgrad.nn.ParameterDict({"a": clgrad.ones(1)}).keys())
        ['a']
        """
        return self._keys.keys()

    def values(self) -> Iterable[Any]:
        """The values, in insertion order.

        >>> [tuple(p.shape) for p in clgrad.nn.ParameterDict({"a": clgrad.ones(1)}).values()]
        [(1,)]
        """
        return [self[k] for k in self._keys]

    def items(self) -> Iterable[tuple[str, Any]]:
        """The ``(key, value)`` pairs, in insertion order.

        >>> [k for k, _ in clgrad.nn.ParameterDict({"a": clgrad.ones(1)}).items()]
        ['a']
        """
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        """The value under ``key``, or ``default``.

        >>> clgrad.nn.ParameterDict().get("a", 3)
        3
        """
        return self[key] if key in self else default

    def pop(self, key: str) -> Any:
        """Removes the value under ``key`` and returns it.

        >>> d = clgrad.nn.ParameterDict({"a": clgrad.ones(1)})
        >>> tuple(d.pop("a").shape), len(d)
        ((1,), 0)
        """
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Removes the last inserted ``(key, value)`` pair and returns it."""
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def clear(self) -> None:
        """Removes every value.

        >>> d = clgrad.nn.ParameterDict({"a": clgrad.ones(1)})
        >>> d.clear(); len(d)
        0
        """
        for k in list(self._keys):
            del self[k]

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value under ``key``, set to ``default`` first where there is none.

        >>> d = clgrad.nn.ParameterDict()
        >>> tuple(d.setdefault("a", clgrad.ones(2)).shape), list(d)
        ((2,), ['a'])
        """
        if key not in self:
            self[key] = default
        return self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same Parameters (not copies of them).

        >>> d = clgrad.nn.ParameterDict({"a": clgrad.ones(1)})
        >>> d.copy()["a"] is d["a"]
        True
        """
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict of ``keys``, each holding ``default``."""
        return ParameterDict((k, default) for k in keys)

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def update(self, parameters: Any) -> None:
        """Adds (or replaces) the values of a mapping or of an iterable of ``(key, value)``
        pairs: in order for pairs, an OrderedDict or a ParameterDict, by sorted key for a
        plain dict (as PyTorch's: a dict's order was not always defined).

        >>> d = clgrad.nn.ParameterDict()
        >>> d.update({"b": clgrad.ones(1), "a": clgrad.zeros(1)})
        >>> list(d)
        ['a', 'b']
        """
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Parameter):
                dev = "" if p.device.is_cpu else f" ({p.device})"
                size = "x".join(map(str, p.shape))
                # the legacy type name (FloatTensor), as torch's ParameterDict prints
                lines.append(f"  ({k}): Parameter containing: [{p.type()} of size {size}{dev}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)
