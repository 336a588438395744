"""``torch.utils._pytree``: nested containers ("pytrees") flattened to a list of leaves and a
``TreeSpec`` that rebuilds them, as PyTorch's pure-Python implementation.

Nodes are list, tuple, dict (in insertion order, as torch: keys are not sorted), OrderedDict,
defaultdict, deque, every namedtuple class, and the types given to ``register_pytree_node``;
anything else (``None``, numbers, tensors) is a leaf. The specs print and compare as torch's.

>>> from clgrad.utils._pytree import tree_flatten, tree_unflatten
>>> leaves, spec = tree_flatten({"b": [1, 2], "a": (3, None)})
>>> leaves
[1, 2, 3, None]
>>> tree_unflatten([x * 10 if x else x for x in leaves], spec)
{'b': [10, 20], 'a': (30, None)}
"""

from __future__ import annotations

import dataclasses
import functools
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = [
    "PyTree",
    "Context",
    "FlattenFn",
    "UnflattenFn",
    "PyTreeSpec",
    "TreeSpec",
    "LeafSpec",
    "SequenceKey",
    "MappingKey",
    "GetAttrKey",
    "keystr",
    "key_get",
    "register_pytree_node",
    "tree_is_leaf",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_unflatten",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_structure",
    "tree_map",
    "tree_map_with_path",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "map_only",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "treespec_leaf",
    "treespec_tuple",
    "treespec_dict",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
]

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(NamedTuple):
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[Any, NodeDef] = {}
SERIALIZED_TYPE_NAMES: dict[Any, str] = {}


# ---- key paths ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a list, tuple or deque: prints ``[i]``.

    >>> str(SequenceKey(2)), SequenceKey(2).get(["a", "b", "c"])
    ('[2]', 'c')
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a dict: prints ``['key']``.

    >>> str(MappingKey("lr")), MappingKey("lr").get({"lr": 0.1})
    ("['lr']", 0.1)
    """

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The field of a child in a namedtuple: prints ``.name``.

    >>> P = namedtuple("P", "x y")
    >>> str(GetAttrKey("y")), GetAttrKey("y").get(P(1, 2))
    ('.y', 2)
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as one string, as torch's ``keystr``.

    >>> keystr((MappingKey("a"), SequenceKey(0), GetAttrKey("x")))
    "['a'][0].x"
    """
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: tuple) -> Any:
    """The subtree of ``obj`` at the key path ``kp``.

    >>> key_get({"a": [5, 6]}, (MappingKey("a"), SequenceKey(1)))
    6
    """
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- registration ------------------------------------------------------------------------------
def _register(
    cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, flatten_with_keys_fn=None
):
    if cls in SUPPORTED_NODES:
        warnings.warn(
            f"{cls} is already registered as pytree node. Overwriting the previous registration.",
            stacklevel=3,
        )
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    SERIALIZED_TYPE_NAMES[cls] = serialized_type_name or NO_SERIALIZED_TYPE_NAME_FOUND


def register_pytree_node(
    cls: type,
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable | None = None,
    from_dumpable_context: Callable | None = None,
    flatten_with_keys_fn: Callable | None = None,
) -> None:
    """Make ``cls`` a node: ``flatten_fn(obj)`` returns ``(children, context)`` and
    ``unflatten_fn(children, context)`` rebuilds it, as torch's ``register_pytree_node``
    (ValueError if ``cls`` is registered already; the two dumpable-context functions go
    together or not at all).

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda xs, _: Pair(*xs))
    >>> tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(
            f"Both to_dumpable_context and from_dumpable_context for {cls} must "
            "be None or registered."
        )
    _register(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _map_keys(keys, values):
    return [(MappingKey(k), v) for k, v in zip(keys, values)]


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _namedtuple_flatten(d):
    return list(d), type(d)


_register(
    tuple,
    lambda d: (list(d), None),
    lambda values, _: tuple(values),
    serialized_type_name="builtins.tuple",
    flatten_with_keys_fn=lambda d: (_seq_keys(d), None),
)
_register(
    list,
    lambda d: (d, None),
    lambda values, _: list(values),
    serialized_type_name="builtins.list",
    flatten_with_keys_fn=lambda d: (_seq_keys(d), None),
)
_register(
    dict,
    _dict_flatten,
    _dict_unflatten,
    serialized_type_name="builtins.dict",
    flatten_with_keys_fn=lambda d: (_map_keys(d.keys(), d.values()), list(d.keys())),
)
_register(
    namedtuple,
    _namedtuple_flatten,
    lambda values, context: context(*values),
    serialized_type_name="collections.namedtuple",
    flatten_with_keys_fn=lambda d: (
        [(GetAttrKey(f), v) for f, v in zip(d._fields, d)],
        type(d),
    ),
)
_register(
    OrderedDict,
    _dict_flatten,
    lambda values, context: OrderedDict(zip(context, values)),
    serialized_type_name="collections.OrderedDict",
    flatten_with_keys_fn=lambda d: (_map_keys(d.keys(), d.values()), list(d.keys())),
)
_register(
    defaultdict,
    _defaultdict_flatten,
    lambda values, context: defaultdict(context[0], zip(context[1], values)),
    serialized_type_name="collections.defaultdict",
    flatten_with_keys_fn=lambda d: (
        _map_keys(d.keys(), d.values()),
        [d.default_factory, list(d.keys())],
    ),
)
_register(
    deque,
    lambda d: (list(d), d.maxlen),
    lambda values, context: deque(values, maxlen=context),
    serialized_type_name="collections.deque",
    flatten_with_keys_fn=lambda d: (_seq_keys(d), d.maxlen),
)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def is_namedtuple_class(cls) -> bool:
    """Whether ``cls`` is a namedtuple class (a tuple subclass with ``_fields``, ``_make`` and
    ``_asdict``).

    >>> is_namedtuple_class(namedtuple("P", "x")), is_namedtuple_class(tuple)
    (True, False)
    """
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and all(type(f) is str for f in cls._fields)
        and callable(getattr(cls, "_make", None))
        and callable(getattr(cls, "_asdict", None))
    )


def is_namedtuple(obj) -> bool:
    """Whether ``obj`` is a namedtuple class or an instance of one.

    >>> is_namedtuple(namedtuple("P", "x")(1)), is_namedtuple((1,))
    (True, False)
    """
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    """Whether ``obj`` is an instance of a namedtuple class.

    >>> is_namedtuple_instance(namedtuple("P", "x")(1))
    True
    """
    return is_namedtuple_class(type(obj))


def _get_node_type(tree):
    node_type = type(tree)
    # every namedtuple class is a node, under the one type ``namedtuple`` (as torch)
    return namedtuple if is_namedtuple_class(node_type) else node_type


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a node type, or ``is_leaf(tree)`` says so.

    >>> tree_is_leaf(1), tree_is_leaf(None), tree_is_leaf([1])
    (True, True, False)
    >>> tree_is_leaf((1, 2), is_leaf=lambda x: isinstance(x, tuple))
    True
    """
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


# ---- TreeSpec ----------------------------------------------------------------------------------
class TreeSpec:
    """The structure of a pytree: the root's node ``type`` (None for a leaf), the ``context``
    its flatten function returned (dict keys, a namedtuple's class, ...), and one spec per
    child; ``num_leaves``, ``num_nodes`` and ``num_children`` count them. Prints as torch's.

    >>> spec = tree_structure({"w": [0, 0], "b": 0})
    >>> spec
    TreeSpec(dict, ['w', 'b'], [TreeSpec(list, None, [*,
          *]),
      *])
    >>> spec.num_leaves, spec.num_nodes, spec.num_children
    (3, 5, 2)
    >>> spec.unflatten([1, 2, 3])
    {'w': [1, 2], 'b': 3}
    """

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self._context = context
        self._children = children_specs
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(children_specs) != 0:
                raise AssertionError("leaf node should not have children")
            self.num_nodes = self.num_leaves = 1
            self.num_children = 0
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
            self.num_children = len(children_specs)

    def __setattr__(self, name, value):
        if hasattr(self, "num_children"):
            raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")
        object.__setattr__(self, name, value)

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        prefix = f"TreeSpec({self.type.__name__}, {self._context}, ["
        inner = ""
        if self.num_children > 0:
            indent += 2
            inner += self._children[0].__repr__(indent)
            inner += "," if self.num_children > 1 else ""
            inner += ",".join(
                "\n" + " " * indent + child.__repr__(indent) for child in self._children[1:]
            )
        return prefix + inner + "])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (
            str(self.type) == str(other.type)
            and self._context == other._context
            and self._children == other._children
        )

    def __hash__(self) -> int:
        node_type, ctx = self.type, self._context
        if node_type is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif node_type in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif not (node_type is None or node_type in BUILTIN_TYPES):
            ctx = None  # a registered type's context may not hash
        return hash((node_type, ctx, tuple(self._children)))

    @property
    def context(self) -> Context:
        return self._context

    @property
    def children_specs(self) -> list[TreeSpec]:
        return self._children

    def is_leaf(self) -> bool:
        """Whether the spec is one leaf.

        >>> tree_structure(1).is_leaf(), tree_structure([1]).is_leaf()
        (True, False)
        """
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list[TreeSpec]:
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        return self._children[index]

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this spec as a
        prefix; ValueError otherwise, with torch's messages).

        >>> tree_structure([0, 0]).flatten_up_to([(1, 2), {"a": 3}])
        [(1, 2), {'a': 3}]
        """
        out: list[PyTree] = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(
                    f"Node arity mismatch; expected {self.num_children}, but got {len(children)}."
                )
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            both_dict = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
            if not both_dict and node_type != self.type:
                raise ValueError(
                    f"Node type mismatch; expected {self.type!r}, but got {node_type!r}."
                )
            if len(node) != self.num_children:
                raise ValueError(
                    f"Node arity mismatch; expected {self.num_children}, but got {len(node)}."
                )
            if both_dict:
                keys = self._context if self.type is not defaultdict else self._context[1]
                got, expected = set(node), set(keys)
                if got != expected:
                    message = ""
                    if expected - got:
                        message += f"; missing key(s): {expected - got}"
                    if got - expected:
                        message += f"; extra key(s): {got - expected}"
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:
                    raise ValueError(
                        f"Node context mismatch for node type {self.type!r}; "
                        f"expected {self._context!r}, but got {context!r}."
                    )
        for subtree, spec in zip(children, self._children):
            spec._flatten_up_to(subtree, out)

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The pytree of this structure holding ``leaves`` (ValueError for a wrong count).

        >>> tree_structure((0, [0])).unflatten("ab")
        ('a', ['b'])
        """
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                f"but the spec refers to a pytree that holds {self.num_leaves} "
                f"items ({self})."
            )
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(leaves[start : start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (prints ``*``); ``tree_flatten`` shares one. Making one warns, as
    torch 2.13's (FutureWarning: ask ``spec.is_leaf()``, or ``treespec_leaf()`` for one).

    >>> spec = tree_structure(3.0)
    >>> spec, spec.num_leaves, isinstance(spec, LeafSpec), spec.is_leaf()
    (*, 1, True, True)
    """

    __slots__ = ()

    def __init__(self) -> None:
        if _LEAF_SPEC is not None:
            warnings.warn(
                "`isinstance(treespec, LeafSpec)` is deprecated, use "
                "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                FutureWarning,
                stacklevel=2,
            )
        super().__init__(None, None, [])


_LEAF_SPEC = None
_LEAF_SPEC = LeafSpec()


def treespec_leaf() -> LeafSpec:
    """The spec of a leaf.

    >>> treespec_leaf()
    *
    """
    return _LEAF_SPEC


def treespec_tuple(iterable: Iterable[TreeSpec] = (), /) -> TreeSpec:
    """A tuple's spec from its children's specs.

    >>> treespec_tuple([treespec_leaf(), treespec_leaf()]).unflatten([1, 2])
    (1, 2)
    """
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs) -> TreeSpec:
    """A dict's spec from its children's specs.

    >>> treespec_dict(a=treespec_leaf()).unflatten([1])
    {'a': 1}
    """
    dct = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in dct.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {dct!r}.")
    return TreeSpec(dict, list(dct.keys()), list(dct.values()))


# ---- flatten, unflatten, map -------------------------------------------------------------------
def tree_flatten(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and the ``TreeSpec`` that rebuilds it.

    >>> tree_flatten([1, {"k": (2, 3)}])
    ([1, 2, 3], TreeSpec(list, None, [*,
      TreeSpec(dict, ['k'], [TreeSpec(tuple, None, [*,
            *])])]))
    """
    leaves: list[Any] = []

    def helper(node):
        if tree_is_leaf(node, is_leaf=is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [helper(c) for c in children])

    spec = helper(tree)
    return leaves, spec


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The pytree of ``treespec``'s structure holding ``leaves`` (the inverse of
    ``tree_flatten``; the two arguments may come in either order, as torch's).

    >>> leaves, spec = tree_flatten((1, [2]))
    >>> tree_unflatten([5, 6], spec)
    (5, [6])
    """
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(
                f"Expected `treespec` to be an instance of "
                f"PyTreeSpec but got item of type {type(treespec)}."
            )
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None):
    """An iterator over the leaves of ``tree``.

    >>> list(tree_iter({"a": [1, 2], "b": 3}))
    [1, 2, 3]
    """
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` as a list.

    >>> tree_leaves([1, (2, None), {"x": 3}])
    [1, 2, None, 3]
    """
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """The ``TreeSpec`` of ``tree``.

    >>> tree_structure((1, 2))
    TreeSpec(tuple, None, [*,
      *])
    """
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """A new pytree of ``tree``'s structure whose leaves are ``func(leaf, *others)``; each of
    ``rests`` has ``tree``'s structure as a prefix.

    >>> tree_map(lambda x: x + 1, {"x": 7, "y": (42, 64)})
    {'x': 8, 'y': (43, 65)}
    >>> tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
    [[5, 7, 9], [6, 1, 2]]
    """
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(map(func, *flat_args))


def tree_map_(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """``func`` called on each leaf for its side effect; returns ``tree`` itself.

    >>> seen = []
    >>> tree_map_(seen.append, [1, (2,)])
    [1, (2,)]
    >>> seen
    [1, 2]
    """
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    deque(map(func, *flat_args), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: the function applies to values of the given type(s) (or passing the
    predicate) and returns others unchanged.

    >>> map_only(int)(lambda x: x * 2)(3), map_only(int)(lambda x: x * 2)("a")
    (6, 'a')
    """
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):

        def pred(x):
            return isinstance(x, type_or_types_or_pred)

    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x

        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None) -> PyTree:
    """``tree_map`` of ``func`` over the leaves of the given type(s); others stay.

    >>> tree_map_only(int, lambda x: x * 10, [1, "a", (2.5, 3)])
    [10, 'a', (2.5, 30)]
    """
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None) -> PyTree:
    """``tree_map_`` of ``func`` over the leaves of the given type(s).

    >>> out = []
    >>> _ = tree_map_only_(str, out.append, [1, "a", ("b",)])
    >>> out
    ['a', 'b']
    """
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for every leaf.

    >>> tree_all(lambda x: x > 0, [1, (2, 3)]), tree_all(lambda x: x > 1, [1, (2, 3)])
    (True, False)
    """
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for some leaf.

    >>> tree_any(lambda x: x is None, {"a": 1, "b": [None]})
    True
    """
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for every leaf of the given type(s).

    >>> tree_all_only(int, lambda x: x > 0, [1, "a", -0.5])
    True
    """
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for some leaf of the given type(s).

    >>> tree_any_only(float, lambda x: x < 0, [1, "a", -0.5])
    True
    """
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


# ---- key paths ---------------------------------------------------------------------------------
def _flatten_with_keys(node):
    node_def = SUPPORTED_NODES[_get_node_type(node)]
    if node_def.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node_def.type}. Please pass a "
            "flatten_with_keys_fn argument to register_pytree_node."
        )
    return node_def.flatten_with_keys_fn(node)


def tree_flatten_with_path(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> tuple[list[tuple[tuple, Any]], TreeSpec]:
    """``tree_flatten`` with each leaf's key path (a tuple of ``SequenceKey``,
    ``MappingKey``, ``GetAttrKey``).

    >>> pairs, spec = tree_flatten_with_path({"a": [1, 2]})
    >>> [(keystr(kp), v) for kp, v in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    out: list[tuple[tuple, Any]] = []

    def helper(node, path):
        if tree_is_leaf(node, is_leaf=is_leaf):
            out.append((path, node))
            return
        for key, child in _flatten_with_keys(node)[0]:
            helper(child, (*path, key))

    helper(tree, ())
    return out, tree_structure(tree, is_leaf=is_leaf)


def tree_leaves_with_path(tree: PyTree, is_leaf=None) -> list[tuple[tuple, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> [(keystr(kp), v) for kp, v in tree_leaves_with_path((5, {"b": 6}))]
    [('[0]', 5), ("[1]['b']", 6)]
    """
    return tree_flatten_with_path(tree, is_leaf=is_leaf)[0]


def tree_map_with_path(func, tree: PyTree, *rests: PyTree, is_leaf=None) -> PyTree:
    """``tree_map`` whose ``func`` gets each leaf's key path first.

    >>> tree_map_with_path(lambda kp, x: keystr(kp) + "=" + str(x), {"lr": 0.1})
    {'lr': "['lr']=0.1"}
    """
    pairs, treespec = tree_flatten_with_path(tree, is_leaf=is_leaf)
    paths, leaves = [p for p, _ in pairs], [v for _, v in pairs]
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(func(*xs) for xs in zip(paths, *flat_args))
