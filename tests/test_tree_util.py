"""Tests for netcl.tree_util: round trips over random nested structures, multi-tree maps,
None and is_leaf handling, registration, dataclasses, treedef equality, key paths, errors."""
import collections
import dataclasses
import functools
import operator
import pickle
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from netcl import tree_util as tu
from netcl.tree_util import (
    DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef, SequenceKey, all_leaves, keystr,
    register_dataclass, register_pytree_node, register_pytree_node_class, tree_all, tree_flatten,
    tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map, tree_map_with_path,
    tree_reduce, tree_structure, tree_transpose, tree_unflatten, treedef_is_leaf)

Point = collections.namedtuple("Point", "x y")
Other = collections.namedtuple("Other", "x y")


@dataclasses.dataclass
class DC:
    a: Any
    b: Any
    tag: int = dataclasses.field(default=0, metadata={"static": True})


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: Any
    name: str = dataclasses.field(default="f", metadata={"static": True})
    inits = 0

    def __post_init__(self):
        type(self).inits += 1


# ----------------------------------------------------------------------------- references

def ref_leaves(x):
    """Independent reference flattening (children order as documented)."""
    if x is None:
        return []
    if type(x) in (list, tuple) or isinstance(x, tuple) and hasattr(x, "_fields"):
        return [leaf for c in x for leaf in ref_leaves(c)]
    if type(x) is dict:
        return [leaf for k in sorted(x) for leaf in ref_leaves(x[k])]
    if type(x) is collections.OrderedDict:
        return [leaf for k in x for leaf in ref_leaves(x[k])]
    if isinstance(x, DC):
        return ref_leaves(x.a) + ref_leaves(x.b)
    if isinstance(x, Frozen):
        return ref_leaves(x.x)
    return [x]


def get_path(tree, path):
    for k in path:
        tree = getattr(tree, k.name) if isinstance(k, GetAttrKey) else tree[
            k.idx if isinstance(k, SequenceKey) else k.key]
    return tree


class Tag:
    def __init__(self, i):
        self.i = i

    def __eq__(self, other):
        return isinstance(other, Tag) and other.i == self.i


leaf = st.integers(-5, 5) | st.text(max_size=2) | st.booleans() | st.floats(allow_nan=False)


def _extend(children):
    return (st.lists(children, max_size=3) | st.lists(children, max_size=3).map(tuple)
            | st.dictionaries(st.text(max_size=2), children, max_size=3)
            | st.dictionaries(st.text(max_size=2), children, max_size=3).map(
                collections.OrderedDict)
            | st.builds(Point, children, children)
            | st.builds(DC, children, children, st.integers(0, 2))
            | st.builds(Frozen, children))


trees = st.recursive(leaf | st.none(), _extend, max_leaves=12)
fast = settings(max_examples=60, deadline=None)


# ----------------------------------------------------------------------------- round trips

@fast
@given(trees)
def test_flatten_matches_reference_and_round_trips(tree):
    leaves, td = tree_flatten(tree)
    assert leaves == ref_leaves(tree)
    assert td.num_leaves == len(leaves)
    back = tree_unflatten(td, leaves)
    assert back == tree and type(back) is type(tree)
    assert tree_structure(back) == td and hash(tree_structure(back)) == hash(td)
    assert tree_leaves(tree) == leaves


@fast
@given(trees)
def test_unflatten_places_new_leaves_in_order(tree):
    leaves, td = tree_flatten(tree)
    tags = [Tag(i) for i in range(len(leaves))]
    tagged = td.unflatten(tags)
    assert ref_leaves(tagged) == tags
    assert tree_structure(tagged) == td



@fast
@given(trees, trees)
def test_matcher_takes_apart_exactly_its_structure(tree, other):
    td = tree_structure(tree)
    match = td.matcher()
    assert match(tree) == tree_leaves(tree)
    same = tree_map(lambda x: Tag(0), tree)     # same structure, other leaves
    assert match(same) == tree_leaves(same)
    got = match(other)
    if tree_structure(other) == td:
        assert got == tree_leaves(other)
    elif got is not None:   # only a subtree where `tree` has a leaf may pass as that leaf
        assert got == td.flatten_up_to(other)
        assert tree_structure(other) != td


def test_matcher_checks_node_types_lengths_keys_and_aux():
    match = tree_structure(([1, (2, None)], {"a": 3}, Point(4, 5), DC(6, 7, tag=1))).matcher()
    assert match(([8, (9, None)], {"a": 10}, Point(11, 12), DC(13, 14, tag=1))) == \
        [8, 9, 10, 11, 12, 13, 14]
    for bad in [((8, (9, None)), {"a": 10}, Point(11, 12), DC(13, 14, tag=1)),  # tuple for list
                ([8, (9, 0)], {"a": 10}, Point(11, 12), DC(13, 14, tag=1)),     # leaf for None
                ([8, (9, None, 1)], {"a": 10}, Point(11, 12), DC(13, 14, tag=1)),
                ([8, (9, None)], {"b": 10}, Point(11, 12), DC(13, 14, tag=1)),  # other key
                ([8, (9, None)], {"a": 10}, Other(11, 12), DC(13, 14, tag=1)),  # other type
                ([8, (9, None)], {"a": 10}, (11, 12), DC(13, 14, tag=1)),
                ([8, (9, None)], {"a": 10}, Point(11, 12), DC(13, 14, tag=2)),  # other aux
                [8, (9, None)]]:
        assert match(bad) is None, bad

@fast
@given(trees)
def test_tree_map_single_and_multi(tree):
    wrapped = tree_map(lambda x: [x], tree)  # list leaves become subtrees below tree's leaves
    assert tree_leaves(wrapped) == tree_leaves(tree)
    pairs = tree_map(lambda x, y: Tag((x, y)), tree, wrapped)
    assert tree_leaves(pairs) == [Tag((x, [x])) for x in tree_leaves(tree)]
    assert tree_structure(pairs) == tree_structure(tree)
    assert tree_map(lambda x: x, tree) == tree


@fast
@given(trees)
def test_paths_point_at_leaves(tree):
    pairs, td = tree_flatten_with_path(tree)
    assert td == tree_structure(tree)
    assert [x for _, x in pairs] == tree_leaves(tree)
    for path, x in pairs:
        assert get_path(tree, path) == x
    assert len({keystr(p) for p, _ in pairs}) == len(pairs)
    assert tree_leaves(tree_map_with_path(lambda p, x: keystr(p), tree)) == [keystr(p) for p, _ in pairs]


@fast
@given(trees)
def test_pytreedef_children_and_counts(tree):
    td = tree_structure(tree)
    kids = td.children()
    assert sum(k.num_leaves for k in kids) == td.num_leaves or not kids
    assert td.num_nodes == 1 + sum(k.num_nodes for k in kids)
    assert (td.num_nodes == 1) == treedef_is_leaf(td)


# ----------------------------------------------------------------------------- node types

def test_builtin_structures_and_reprs():
    assert repr(tree_structure([1, {"a": 2}])) == "PyTreeDef([*, {'a': *}])"
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tree_structure(5)) == "PyTreeDef(*)"
    assert repr(tree_structure(None)) == "PyTreeDef(None)"
    assert repr(tree_structure(Point(1, 2))) == "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"
    assert tree_structure("abc").num_leaves == 1  # strings are leaves
    assert tree_leaves({"b": 1, "a": 2, "c": (3, 4)}) == [2, 1, 3, 4]  # sorted keys
    assert list(tree_map(lambda x: x, {"b": 1, "a": 2})) == ["a", "b"]


def test_none_is_an_empty_node():
    assert tree_leaves([None, 1]) == [1]
    td = tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1 and treedef_is_leaf(td)
    assert td != tree_structure(1)
    assert tree_map(lambda x: x + 1, [None, 1, (None,)]) == [None, 2, (None,)]
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    with pytest.raises(ValueError, match="None"):
        tree_map(lambda a, b: a, [None, 1], [3, 1])


def test_is_leaf_stops_descent_including_root():
    t = [(1, 2), [3, (4,)]]
    assert tree_leaves(t, is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2), 3, (4,)]
    assert tree_leaves(t, is_leaf=lambda x: isinstance(x, list)) == [t]
    out = tree_map(lambda x: ("T", x), t, is_leaf=lambda x: isinstance(x, tuple))
    assert out == [("T", (1, 2)), [("T", 3), ("T", (4,))]]


def test_ordereddict_defaultdict_and_unsortable_keys():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tree_flatten(od)
    assert leaves == [1, 2]
    back = td.unflatten([10, 20])
    assert type(back) is collections.OrderedDict and list(back.items()) == [("b", 10), ("a", 20)]
    dd = collections.defaultdict(list, {"z": 1, "y": 2})
    leaves, td = tree_flatten(dd)
    assert leaves == [2, 1]
    back = td.unflatten([5, 6])
    assert type(back) is collections.defaultdict and back.default_factory is list
    assert dict(back) == {"y": 5, "z": 6}
    assert td != tree_structure(collections.defaultdict(set, {"z": 1, "y": 2}))
    mixed = {1: "one", "x": "ex"}  # int and str keys do not sort: insertion order
    assert tree_leaves(mixed) == ["one", "ex"]
    assert tree_map(operator.add, mixed, {"x": "!", 1: "?"}) == {1: "one?", "x": "ex!"}


def test_dataclass_nodes_and_frozen():
    d = DC(1, (2, 3), tag=7)
    leaves, td = tree_flatten(d)
    assert leaves == [1, 2, 3] and td.node_data() == (DC, (7,))
    assert td.unflatten([4, 5, 6]) == DC(4, (5, 6), tag=7)
    assert td != tree_structure(DC(1, (2, 3), tag=8))
    Frozen.inits = 0
    f = Frozen(x=[1, 2], name="w")
    g = tree_map(lambda v: v * 10, f)
    assert g == Frozen(x=[10, 20], name="w") and Frozen.inits == 2
    g2 = tree_map(lambda v: v, f)
    assert Frozen.inits == 2 and isinstance(g2, Frozen)  # rebuilt without re-running __init__
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.x = 3
    assert tree_leaves_with_path(d)[0] == ((GetAttrKey("a"),), 1)
    assert tree_leaves(DC) == [DC]  # the class itself is a leaf


def test_namedtuple_types_must_match():
    assert tree_leaves(Point(1, (2, 3))) == [1, 2, 3]
    assert tree_structure(Point(1, 2)) != tree_structure(Other(1, 2))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"namedtuple\[Point\].*namedtuple\[Other\]"):
        tree_map(lambda a, b: a, Point(1, 2), Other(1, 2))


# ----------------------------------------------------------------------------- registration

class Box:
    def __init__(self, v, label):
        self.v, self.label = v, label

    def __eq__(self, other):
        return isinstance(other, Box) and (self.v, self.label) == (other.v, other.label)


register_pytree_node(Box, lambda b: ((b.v,), b.label), lambda label, ch: Box(ch[0], label))


@register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), "meta"

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert aux == "meta"
        return cls(*children)


@functools.partial(register_dataclass, data_fields=["w"], meta_fields=["n"])
@dataclasses.dataclass
class Layer:
    w: Any
    n: int
    calls = 0

    def __post_init__(self):
        type(self).calls += 1


def test_custom_nodes():
    t = [Box((1, 2), "L"), Pair(3, Box(4, "M"))]
    leaves, td = tree_flatten(t)
    assert leaves == [1, 2, 3, 4]
    back = td.unflatten([5, 6, 7, 8])
    assert back[0] == Box((5, 6), "L") and isinstance(back[1], Pair) and back[1].b == Box(8, "M")
    assert "CustomNode(Box['L'], [(*, *)])" in repr(td)
    assert td != tree_structure([Box((1, 2), "other"), Pair(3, Box(4, "M"))])
    assert [keystr(p) for p, _ in tree_leaves_with_path(t)] == [
        "[0][<flat index 0>][0]", "[0][<flat index 0>][1]", "[1][<flat index 0>]",
        "[1][<flat index 1>][<flat index 0>]"]
    with pytest.raises(ValueError, match=r"\[0\].*'L'.*'X'"):
        tree_map(lambda a, b: a, t, [Box((1, 2), "X"), Pair(3, Box(4, "M"))])


def test_register_dataclass_uses_constructor():
    Layer.calls = 0
    leaves, td = tree_flatten(Layer(w=[1, 2], n=3))
    assert leaves == [1, 2] and td.node_data() == (Layer, (3,))
    assert td.unflatten([7, 8]) == Layer(w=[7, 8], n=3) and Layer.calls == 3
    assert tree_leaves_with_path(Layer(w=1, n=0)) == [((GetAttrKey("w"),), 1)]
    with pytest.raises(ValueError, match="init=True fields"):
        register_dataclass(dataclasses.make_dataclass("Q", ["a", "b"]), ["a"], [])
    with pytest.raises(TypeError, match="not a dataclass"):
        register_dataclass(type("NotDC", (), {}))


def test_register_twice_is_an_error():
    class Twice:
        pass
    register_pytree_node(Twice, lambda x: ((), None), lambda a, c: Twice())
    with pytest.raises(ValueError, match="Twice"):
        register_pytree_node(Twice, lambda x: ((), None), lambda a, c: Twice())
    with pytest.raises(ValueError, match="list"):
        register_pytree_node(list, lambda x: (x, None), lambda a, c: list(c))
    with pytest.raises(ValueError, match="Pair"):
        register_pytree_node_class(Pair)


def test_registration_overrides_auto_dataclass():
    @dataclasses.dataclass
    class Late:
        a: Any
        b: Any
    assert tree_leaves(Late(1, 2)) == [1, 2]
    register_pytree_node(Late, lambda x: ((x.b,), x.a), lambda a, ch: Late(a, ch[0]))
    assert tree_leaves(Late(1, 2)) == [2]


def test_partial():
    def f(a, b, *, c):
        return a + b + c
    p = Partial(f, 1, c=3)
    leaves, td = tree_flatten(p)
    assert leaves == [1, 3]
    q = tree_map(lambda x: x * 10, p)
    assert isinstance(q, Partial) and q(2) == 10 + 2 + 30
    assert tree_structure(Partial(f, 5, c=6)) == td
    assert tree_structure(Partial(operator.add, 5)) != tree_structure(Partial(operator.sub, 5))
    inner = functools.partial(f, 100)
    r = Partial(inner, 2, c=0)
    assert tree_leaves(r) == [2, 0] and r() == 102  # inner partial's args stay static


# ----------------------------------------------------------------------------- PyTreeDef

def test_pytreedef_equality_and_hash():
    a, b = tree_structure({"x": (1, 2), "y": [3]}), tree_structure({"y": ["q"], "x": ("r", "s")})
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert a != tree_structure({"x": (1, 2), "z": [3]})
    assert a != tree_structure({"x": [1, 2], "y": [3]})
    assert a != tree_structure({"x": (1, 2, 3), "y": [3]})
    assert tree_structure([1]) != tree_structure((1,)) and tree_structure([]) != tree_structure(())
    assert a != "PyTreeDef" and len({a, b, tree_structure([3])}) == 2
    assert a.num_leaves == 3 and a.num_nodes == 6
    assert a.children() == [tree_structure((0, 0)), tree_structure([0])]
    assert tree_structure(1).children() == []
    assert a.unflatten(iter("abc")) == {"x": ("a", "b"), "y": ["c"]}


def test_flatten_up_to_and_compose():
    td = tree_structure([0, {"k": 0}])
    assert td.flatten_up_to([(1, 2), {"k": [3]}]) == [(1, 2), [3]]
    assert repr(td.compose(tree_structure((0, 0)))) == "PyTreeDef([(*, *), {'k': (*, *)}])"


# ----------------------------------------------------------------------------- paths & keystr

def test_paths_and_keystr():
    t = {"b": [10, Point(20, None)], "a": DC(30, (), tag=1)}
    pairs = tree_leaves_with_path(t)
    assert pairs == [((DictKey("a"), GetAttrKey("a")), 30),
                     ((DictKey("b"), SequenceKey(0)), 10),
                     ((DictKey("b"), SequenceKey(1), GetAttrKey("x")), 20)]
    assert [keystr(p) for p, _ in pairs] == ["['a'].a", "['b'][0]", "['b'][1].x"]
    assert keystr(pairs[2][0], simple=True, separator="/") == "b/1/x"
    assert str(FlattenedIndexKey(3)) == "[<flat index 3>]"
    assert repr(SequenceKey(1)) == "SequenceKey(idx=1)" and SequenceKey(1) != DictKey(1)
    assert hash(DictKey("a")) == hash(DictKey("a"))
    assert pickle.loads(pickle.dumps(DictKey("a"))) == DictKey("a")
    match SequenceKey(4):
        case SequenceKey(idx=i):
            assert i == 4
    out = tree_map_with_path(lambda p, x, y: (keystr(p), x + y), {"u": 1, "v": (2,)}, {"u": 10, "v": (20,)})
    assert out == {"u": ("['u']", 11), "v": (("['v'][0]", 22),)}
    assert tree_flatten_with_path(7) == ([((), 7)], tree_structure(7))


# ----------------------------------------------------------------------------- reductions etc.

def test_reduce_all_all_leaves_transpose():
    t = [1, (2, {"a": 3}), None]
    assert tree_reduce(operator.add, t) == 6 and tree_reduce(operator.add, t, 100) == 106
    assert tree_reduce(operator.add, [None], 5) == 5
    with pytest.raises(TypeError):
        tree_reduce(operator.add, [None])
    assert tree_all([True, (1, None)]) and not tree_all([True, (0,)]) and tree_all([])
    assert all_leaves([1, "a", 2.0]) and not all_leaves([1, (2,)]) and not all_leaves([None])
    assert all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple))
    outer, inner = tree_structure([0, 0, 0]), tree_structure({"p": 0, "q": 0})
    lol = [{"p": 1, "q": 2}, {"p": 3, "q": 4}, {"p": 5, "q": 6}]
    assert tree_transpose(outer, inner, lol) == {"p": [1, 3, 5], "q": [2, 4, 6]}
    assert tree_transpose(outer, None, lol) == {"p": [1, 3, 5], "q": [2, 4, 6]}
    with pytest.raises(TypeError, match="Mismatch"):
        tree_transpose(outer, inner, lol[:2])


# ----------------------------------------------------------------------------- errors

def test_unflatten_wrong_leaf_count():
    td = tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"expected 3, got 2"):
        tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match=r"too many.*expected 3, got 4"):
        td.unflatten([1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"expected 1, got 0"):
        tree_unflatten(tree_structure(1), [])


def test_tree_map_mismatch_names_path_and_both_structures():
    tree = {"a": 1, "b": (0, (1, 2))}
    other = {"a": 1, "b": (0, [1, 2])}
    with pytest.raises(ValueError) as ei:
        tree_map(lambda x, y: x, tree, other)
    msg = str(ei.value)
    assert msg.startswith("tree_map: structures differ at ['b'][1]")
    assert "expected tuple of length 2, got list of length 2" in msg
    assert repr(tree_structure(tree)) in msg and repr(tree_structure(other)) in msg
    with pytest.raises(ValueError, match=r"at the root \(in tree argument 3\): expected dict with keys \['a', 'b'\], got dict with keys \['a', 'c'\]"):
        tree_map(lambda *xs: 0, tree, tree, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match=r"at the root.*length 2, got tuple of length 3"):
        tree_map(lambda x, y: x, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError, match=r"at \[0\].*got leaf 5"):
        tree_map(lambda x, y: x, [(1,)], [5])
    with pytest.raises(ValueError, match=r"at \['x'\]\.b"):
        tree_map_with_path(lambda p, x, y: x, {"x": DC(1, [2])}, {"x": DC(1, (2,))})


def test_tree_map_requires_callable():
    with pytest.raises(TypeError, match="tree_map: f must be callable, got int"):
        tree_map(3, [1, 2])
    with pytest.raises(TypeError, match="must be callable"):
        tree_map(3, None)  # checked even when there is no leaf to call it on
    with pytest.raises(TypeError, match="tree_map_with_path: f must be callable"):
        tree_map_with_path("f", [])


def test_flatten_is_fast_enough():
    """A 10-leaf dict of tuples should flatten in microseconds (generous CI bound)."""
    import timeit
    t = {k: (i, i + 1) for i, k in enumerate("abcde")}
    per_call = min(timeit.repeat(lambda: tree_flatten(t), number=2000, repeat=3)) / 2000
    assert per_call < 50e-6


def test_module_is_standalone():
    src = open(tu.__file__).read()
    assert "import numpy" not in src and "from netcl" not in src and "import netcl" not in src
    assert isinstance(tree_structure(1), PyTreeDef)
