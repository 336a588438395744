"""clgrad.utils._pytree against torch.utils._pytree: the same leaves, specs (repr, counts),
unflatten results, key paths and errors for the containers torch handles."""

from __future__ import annotations

import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import clgrad
import clgrad.utils._pytree as cp

tp = pytest.importorskip("torch.utils._pytree")

Point = namedtuple("Point", "x y")

TREES = [
    1,
    None,
    "leaf",
    [],
    (),
    {},
    [[]],
    [1, (2, None)],
    {"b": 1, "a": [2, 3]},  # insertion order, not sorted
    OrderedDict(z=1, a=2),
    defaultdict(list, {"k": [1, 2], "j": 3}),
    Point(1, [2, {"q": 3}]),
    deque([1, (2,)], maxlen=4),
    {"nested": {"deep": [Point((), None), OrderedDict(u=(4, 5))]}},
]


@pytest.mark.parametrize("tree", TREES, ids=[repr(t)[:40] for t in TREES])
def test_flatten_unflatten_like_torch(tree):
    l1, s1 = tp.tree_flatten(tree)
    l2, s2 = cp.tree_flatten(tree)
    assert l2 == l1
    assert repr(s2) == repr(s1)
    assert (s2.num_leaves, s2.num_nodes, s2.num_children) == (
        s1.num_leaves,
        s1.num_nodes,
        s1.num_children,
    )
    new = [("new", i) for i in range(len(l1))]
    u1, u2 = tp.tree_unflatten(new, s1), cp.tree_unflatten(new, s2)
    assert u2 == u1 and type(u2) is type(u1)
    assert cp.tree_leaves(tree) == tp.tree_leaves(tree)
    assert repr(cp.tree_structure(tree)) == repr(tp.tree_structure(tree))
    assert cp.tree_structure(tree) == cp.tree_structure(tree)
    assert hash(cp.tree_structure(tree)) == hash(cp.tree_structure(tree))


def test_defaultdict_keeps_factory_and_deque_maxlen():
    d = cp.tree_map(lambda x: x, defaultdict(list, {"a": 1}))
    assert d.default_factory is list
    assert cp.tree_map(lambda x: x, deque([1], maxlen=3)).maxlen == 3


def test_tree_map_and_friends_like_torch():
    tree = {"x": 7, "y": (42, 64), "z": None, "s": "a"}
    for f in (lambda x: x is None, lambda x: str(x)):
        assert cp.tree_map(f, tree) == tp.tree_map(f, tree)
    assert cp.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    assert cp.tree_map_only(int, lambda x: -x, tree) == tp.tree_map_only(int, lambda x: -x, tree)
    assert cp.tree_map_only((int, str), lambda x: x * 2, tree) == tp.tree_map_only(
        (int, str), lambda x: x * 2, tree
    )
    pred = lambda x: isinstance(x, int)  # noqa: E731
    assert cp.tree_all(pred, tree) == tp.tree_all(pred, tree) is False
    assert cp.tree_any(pred, tree) == tp.tree_any(pred, tree) is True
    assert cp.tree_all_only(int, lambda x: x > 0, tree) is True
    assert cp.tree_any_only(str, lambda x: x == "b", tree) is False
    is_leaf = lambda x: isinstance(x, tuple)  # noqa: E731
    assert cp.tree_leaves(tree, is_leaf=is_leaf) == tp.tree_leaves(tree, is_leaf=is_leaf)


def test_tensors_are_leaves_and_map():
    params = {"w": clgrad.ones(2), "b": [clgrad.zeros(1)], "step": 3}
    out = cp.tree_map_only(clgrad.Tensor, lambda t: t + 1, params)
    assert out["w"].tolist() == [2.0, 2.0] and out["b"][0].tolist() == [1.0] and out["step"] == 3
    assert len(cp.tree_leaves(params)) == 3


def test_key_paths_like_torch():
    tree = {"a": [1, Point(2, 3)], "b": (4,)}
    p1, _ = tp.tree_flatten_with_path(tree)
    p2, _ = cp.tree_flatten_with_path(tree)
    assert [(tp.keystr(k), v) for k, v in p1] == [(cp.keystr(k), v) for k, v in p2]
    assert [cp.key_get(tree, k) for k, _ in p2] == [v for _, v in p2]
    f = lambda kp, x: (len(kp), x)  # noqa: E731
    assert cp.tree_map_with_path(f, tree) == tp.tree_map_with_path(f, tree)


def test_register_pytree_node():
    class Box:
        def __init__(self, items, label):
            self.items, self.label = items, label

        def __eq__(self, other):
            return (self.items, self.label) == (other.items, other.label)

    cp.register_pytree_node(
        Box,
        lambda b: (b.items, b.label),
        lambda xs, label: Box(list(xs), label),
        serialized_type_name="tests.Box",
    )
    try:
        leaves, spec = cp.tree_flatten([Box([1, (2, 3)], "l"), 4])
        assert leaves == [1, 2, 3, 4]
        assert cp.tree_unflatten([5, 6, 7, 8], spec) == [Box([5, (6, 7)], "l"), 8]
        assert repr(spec).startswith("TreeSpec(list, None, [TreeSpec(Box, l, [")
        with pytest.raises(ValueError, match="already registered as pytree node"):
            cp.register_pytree_node(Box, lambda b: ([], None), lambda xs, c: Box([], c))
        with pytest.raises(ValueError, match="Type mismatch"):
            cp.tree_map(lambda a, b: a, [Box([1], "l")], [[1]])
        with pytest.raises(ValueError, match="Node context mismatch for custom node type"):
            cp.tree_map(lambda a, b: a, Box([1], "l"), Box([1], "m"))
    finally:
        del cp.SUPPORTED_NODES[Box]
    with pytest.raises(ValueError, match="must be None or registered"):
        cp.register_pytree_node(Box, lambda b: ([], None), lambda xs, c: 0, to_dumpable_context=str)
    assert Box not in cp.SUPPORTED_NODES


@pytest.mark.parametrize(
    "tree, other",
    [
        ([1, 2], [1, 2, 3]),
        ([1, 2], (1, 2)),
        ({"a": 1}, {"b": 1}),
        (Point(1, 2), namedtuple("Other", "x y")(1, 2)),
    ],
)
def test_structure_errors_like_torch(tree, other):
    with pytest.raises(ValueError) as theirs:
        tp.tree_map(lambda a, b: a, tree, other)
    with pytest.raises(ValueError) as ours:
        cp.tree_map(lambda a, b: a, tree, other)
    assert str(ours.value).split(";")[0] == str(theirs.value).split(";")[0]


def test_dict_types_mix_and_unflatten_count_error():
    assert cp.tree_map(lambda a, b: a + b, {"a": 1}, OrderedDict(a=2)) == {"a": 3}
    spec = cp.tree_structure([1, 2])
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers to"):
        spec.unflatten([1])
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        cp.tree_unflatten([1], [2])
    assert cp.tree_unflatten(spec, [3, 4]) == [3, 4]  # either order, as torch


def test_leafspec_warns_as_torch():
    with pytest.warns(FutureWarning, match="LeafSpec"):
        spec = cp.LeafSpec()
    assert spec == cp.treespec_leaf() and repr(spec) == "*"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cp.tree_flatten([1, 2])  # the shared leaf spec does not warn


def test_treespec_is_frozen_and_importable_from_clgrad_utils():
    spec = cp.tree_structure((1,))
    with pytest.raises(AttributeError):
        spec.num_leaves = 3
    assert clgrad.utils._pytree is cp
