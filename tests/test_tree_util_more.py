"""The rest of jax.tree_util and jax.tree against JAX 0.10: one-level flattening (with and
without keys), is_tree_node, registration with keys, register_static (static under jit),
default_registry, tree_broadcast and tree_reduce_associative (hypothesis trees, compared with
JAX's results), treedef_children / treedef_tuple, is_leaf_takes_path, jax.tree.static,
KeyEntry / KeyPath, `import netcl.nn.initializers`, and typed errors naming the function."""
import collections
import dataclasses
import importlib
import inspect
import operator
import typing

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import netcl
import netcl.numpy as jnp
from netcl import tree_util as tu

jax = pytest.importorskip("jax")
jtu = jax.tree_util

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Reg:
    a: typing.Any
    b: typing.Any
    tag: str = dataclasses.field(default="t", metadata={"static": True})


# one registration per library, so results can be compared
for _lib in (tu, jtu):
    _lib.register_dataclass(Reg)


def _same_names(ours, theirs):
    missing = sorted(n for n in dir(theirs) if not n.startswith("_") and not hasattr(ours, n))
    assert not missing, f"{ours.__name__} lacks {missing}"


def test_every_jax_tree_util_and_tree_name_exists_with_its_signature():
    _same_names(tu, jtu)
    _same_names(netcl.tree, jax.tree)
    for name in ("flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
                 "register_pytree_with_keys", "register_pytree_with_keys_class",
                 "register_static", "tree_broadcast", "tree_reduce_associative",
                 "treedef_children", "treedef_tuple", "tree_flatten_with_path",
                 "tree_leaves_with_path", "tree_map_with_path"):
        ours = list(inspect.signature(getattr(tu, name)).parameters)
        theirs = list(inspect.signature(getattr(jtu, name)).parameters)
        assert ours == theirs, (name, ours, theirs)
    for name in ("flatten", "flatten_one_level", "flatten_one_level_with_keys",
                 "flatten_with_path", "is_node", "register_node", "register_dataclass_node"):
        assert callable(getattr(tu.default_registry, name))


# ---- one level -----------------------------------------------------------------------------

NODES = [(1, (2, 3)), [1, [2]], None, {"b": 1, "a": (2,)}, Point(1, [2]),
         collections.OrderedDict(b=1, a=2), collections.defaultdict(list, a=1),
         Reg(1, (2, 3)), ()]


@pytest.mark.parametrize("tree", NODES, ids=lambda t: type(t).__name__)
def test_flatten_one_level_matches_jax(tree):
    children, aux = tu.flatten_one_level(tree)
    jchildren, jaux = jtu.flatten_one_level(tree)
    assert list(children) == list(jchildren) and aux == jaux
    keyed, aux = tu.flatten_one_level_with_keys(tree)
    jkeyed, jaux = jtu.flatten_one_level_with_keys(tree)
    assert aux == jaux
    assert [c for _, c in keyed] == [c for _, c in jkeyed]
    # the keys render as JAX's (JAX 0.10 names both fields of a namedtuple by the first)
    if not isinstance(tree, Point):
        assert [str(k) for k, _ in keyed] == [str(k) for k, _ in jkeyed]
    assert [str(k) for k, _ in tu.flatten_one_level_with_keys(Point(1, 2))[0]] == [".x", ".y"]


@pytest.mark.parametrize("leaf", [1, "s", 2.5, jnp.ones(2), object()],
                         ids=["int", "str", "float", "array", "object"])
def test_flatten_one_level_of_a_leaf_is_a_value_error(leaf):
    for fn in (tu.flatten_one_level, tu.flatten_one_level_with_keys):
        with pytest.raises(ValueError, match=fn.__name__ + ".*can't tree-flatten type"):
            fn(leaf)
    assert tu.default_registry.flatten_one_level(leaf) is None
    assert tu.default_registry.flatten_one_level_with_keys(leaf) is None


def test_is_tree_node_matches_jax():
    for typ in (tuple, list, type(None), dict, collections.OrderedDict,
                collections.defaultdict, Point, Reg, tu.Partial, int, str, float, object):
        theirs = jtu.is_tree_node(jtu.Partial if typ is tu.Partial else typ)
        assert tu.is_tree_node(typ) == theirs == tu.default_registry.is_node(typ), typ
    assert not tu.is_tree_node(type(jnp.ones(2)))
    with pytest.raises(TypeError, match="is_tree_node: expected a type"):
        tu.is_tree_node((1, 2))


# ---- registration with keys, static nodes -----------------------------------------------------

def _keyed_class(lib, with_plain_flatten):
    calls = []

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return [(lib.GetAttrKey("a"), self.a), (lib.GetAttrKey("b"), self.b)], "aux"

        @classmethod
        def tree_unflatten(cls, aux, children):
            assert aux == "aux"
            return cls(*children)

        def __eq__(self, other):
            return type(other) is type(self) and (self.a, self.b) == (other.a, other.b)

    if with_plain_flatten:
        def tree_flatten(self):
            calls.append(1)
            return (self.a, self.b), "aux"
        Pair.tree_flatten = tree_flatten
    return lib.register_pytree_with_keys_class(Pair), calls


@pytest.mark.parametrize("with_plain_flatten", [False, True])
def test_register_pytree_with_keys_class_matches_jax(with_plain_flatten):
    ours, calls = _keyed_class(tu, with_plain_flatten)
    theirs, _ = _keyed_class(jtu, with_plain_flatten)
    tree, jtree = [ours(1, (2, 3)), 4], [theirs(1, (2, 3)), 4]
    paths = [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(tree)]
    jpaths = [(jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(jtree)]
    assert paths == jpaths == [("[0].a", 1), ("[0].b[0]", 2), ("[0].b[1]", 3), ("[1]", 4)]
    leaves, td = tu.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4] and td.unflatten(leaves) == tree
    # the plain flatten (when given) is the one walks without keys use
    assert bool(calls) == with_plain_flatten
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_with_keys_class(ours)


def test_register_pytree_with_keys_function_form():
    class Box:
        def __init__(self, v):
            self.v = v
    tu.register_pytree_with_keys(Box, lambda b: ([(tu.DictKey("v"), b.v)], None),
                                 lambda aux, ch: Box(*ch))
    (path, leaf), = tu.tree_leaves_with_path(Box(7))
    assert tu.keystr(path) == "['v']" and leaf == 7
    assert tu.tree_map(lambda x: x + 1, Box(7)).v == 8


def test_register_static_is_a_leafless_node_kept_static_under_jit():
    @tu.register_static
    class Mode(str):
        pass

    @jtu.register_static
    class JMode(str):
        pass

    tree = [Mode("add"), 1, {"m": Mode("sub")}]
    assert tu.tree_leaves(tree) == jtu.tree_leaves([JMode("add"), 1, {"m": JMode("sub")}])
    assert tu.tree_unflatten(tu.tree_structure(tree), [5]) == [Mode("add"), 5, {"m": "sub"}]
    assert tu.flatten_one_level(Mode("x")) == jtu.flatten_one_level(JMode("x")) == ([], "x")
    assert tu.tree_structure(Mode("a")) != tu.tree_structure(Mode("b"))

    traces = []

    @netcl.jit
    def f(x, mode):
        traces.append(mode)
        return x + 1.0 if mode == "add" else x - 1.0
    x = jnp.asarray(np.float32([1.0, 2.0]))
    assert np.asarray(f(x, Mode("add"))).tolist() == [2.0, 3.0]
    assert np.asarray(f(x, Mode("sub"))).tolist() == [0.0, 1.0]
    f(x, Mode("add"))
    assert traces == ["add", "sub"]         # one trace per static value
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_static(Mode)


def test_default_registry():
    r = tu.default_registry
    assert r.flatten([1, (2, 3)]) == tu.tree_flatten([1, (2, 3)])
    assert r.flatten([1, (2, 3)], lambda x: isinstance(x, tuple))[0] == [1, (2, 3)]
    assert r.flatten_one_level((1, 2)) == ((1, 2), None)
    pairs, _ = r.flatten_with_path({"a": [1, 2]}, lambda path, x: len(path) == 1)
    assert pairs == [((tu.DictKey("a"),), [1, 2])]

    class N:
        def __init__(self, v):
            self.v = v
    r.register_node(N, lambda n: ((n.v,), None), lambda aux, ch: N(*ch))
    assert tu.tree_leaves([N(3)]) == [3] and r.is_node(N)

    @dataclasses.dataclass
    class D:
        x: int
        k: str
    r.register_dataclass_node(D, ["x"], ["k"])
    assert tu.tree_leaves(D(1, "k")) == [1]


# ---- broadcast, reduce_associative, treedef building ---------------------------------------

leaf = st.integers(-9, 9)


def _nodes(children):
    return (st.lists(children, min_size=1, max_size=3)
            | st.lists(children, min_size=1, max_size=3).map(tuple)
            | st.dictionaries(st.sampled_from("abc"), children, min_size=1, max_size=3)
            | st.builds(Point, children, children))


full_trees = st.recursive(leaf | st.none(), _nodes, max_leaves=10)


@st.composite
def prefix_and_full(draw):
    """A full tree and a prefix of it: some subtrees replaced by single leaves."""
    full = draw(full_trees)
    counter = iter(range(100, 1000))

    def cut(t):
        h = tu.flatten_one_level(t) if t is not None and tu.is_tree_node(type(t)) else None
        if h is None or draw(st.booleans()):
            return next(counter) if t is not None else None
        return _rebuild(t, [cut(c) for c in h[0]])
    return cut(full), full


def _rebuild(t, children):
    if isinstance(t, Point):
        return Point(*children)
    if isinstance(t, dict):
        return dict(zip(sorted(t), children))
    return type(t)(children)


@settings(max_examples=60, deadline=None)
@given(prefix_and_full())
def test_tree_broadcast_matches_jax(pair):
    prefix, full = pair
    ours = tu.tree_broadcast(prefix, full)
    assert ours == jtu.tree_broadcast(prefix, full)
    assert netcl.tree.broadcast(prefix, full) == ours
    assert tu.tree_structure(ours) == tu.tree_structure(full)


def test_tree_broadcast_is_leaf_and_mismatch():
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    for prefix, full in (((1, [2]), (3, [4, 5])), ((1, 2), (3, [4]))):
        assert tu.tree_broadcast(prefix, full, is_leaf=is_list) == \
            jtu.tree_broadcast(prefix, full, is_leaf=is_list)
    with pytest.raises(ValueError, match="tree_broadcast"):
        tu.tree_broadcast([1, 2], [(0, 0)])


@settings(max_examples=60, deadline=None)
@given(full_trees)
def test_tree_reduce_associative_brackets_as_jax(tree):
    pair = lambda a, b: (a, b)  # noqa: E731 - not commutative: the bracketing shows
    if not jtu.tree_leaves(tree):
        assert tu.tree_reduce_associative(pair, tree, identity="id") == "id"
        with pytest.raises(TypeError, match="tree_reduce_associative.*no identity"):
            tu.tree_reduce_associative(pair, tree)
        return
    assert tu.tree_reduce_associative(pair, tree) == jtu.tree_reduce_associative(pair, tree)
    assert netcl.tree.reduce_associative(operator.add, tree) == sum(tu.tree_leaves(tree))


@settings(max_examples=40, deadline=None)
@given(st.lists(full_trees, max_size=3))
def test_treedef_tuple_and_children_match_jax(trees):
    defs = [tu.tree_structure(t) for t in trees]
    td = tu.treedef_tuple(iter(defs))
    assert td == tu.tree_structure(tuple(trees))
    assert tu.treedef_children(td) == defs
    leaves = tu.tree_leaves(tuple(trees))
    jtd = jtu.treedef_tuple([jtu.tree_structure(t) for t in trees])
    assert td.unflatten(leaves) == jtd.unflatten(leaves)
    assert [c.num_leaves for c in tu.treedef_children(td)] == \
        [c.num_leaves for c in jtu.treedef_children(jtd)]
    assert tu.treedef_children(tu.tree_structure(1)) == []
    with pytest.raises(TypeError, match="treedef_tuple: expected PyTreeDefs"):
        tu.treedef_tuple([1])


# ---- paths, static fields, key types, module import ----------------------------------------

def test_is_leaf_takes_path():
    tree = {"a": [1, 2], "b": [3]}
    ours = tu.tree_leaves_with_path(tree, is_leaf=lambda p, x: p == (tu.DictKey("a"),),
                                    is_leaf_takes_path=True)
    theirs = jtu.tree_leaves_with_path(tree, is_leaf=lambda p, x: p == (jtu.DictKey("a"),),
                                       is_leaf_takes_path=True)
    assert [(tu.keystr(p), x) for p, x in ours] == [(jtu.keystr(p), x) for p, x in theirs] \
        == [("['a']", [1, 2]), ("['b'][0]", 3)]
    out = netcl.tree.map_with_path(lambda p, x: len(p), tree, is_leaf_takes_path=True,
                                   is_leaf=lambda p, x: p == (tu.DictKey("a"),))
    assert out == {"a": 1, "b": [2]}
    # without the flag, is_leaf takes the value only (as before)
    assert tu.tree_leaves_with_path(tree, is_leaf=lambda x: x == [3])[-1][1] == [3]


def test_tree_static_marks_a_dataclass_field_as_aux_data():
    f, jf = netcl.tree.static(default=3, metadata={"doc": "d"}), jax.tree.static(default=3)
    assert f.metadata["static"] is True and f.metadata["doc"] == "d" and f.default == 3
    assert jf.metadata["static"] is True

    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: typing.Any
        kind: str = netcl.tree.static(default="add")
    leaves, td = tu.tree_flatten(Op(x=1.5))
    assert leaves == [1.5] and td.unflatten([2.5]) == Op(2.5, "add")
    assert tu.tree_structure(Op(1, "add")) != tu.tree_structure(Op(1, "sub"))


def test_key_types_are_jax_s():
    assert repr(tu.KeyEntry) == repr(jtu.KeyEntry) == "~KeyEntry"
    assert typing.get_origin(tu.KeyPath) is tuple
    assert typing.get_args(tu.KeyPath) == (tu.KeyEntry, Ellipsis)


def test_nn_initializers_imports_as_a_module():
    mod = importlib.import_module("netcl.nn.initializers")
    assert mod is netcl.nn.initializers
    from netcl.nn.initializers import glorot_normal, zeros  # noqa: F401
    w = glorot_normal()(netcl.random.PRNGKey(0), (3, 4), jnp.float32)
    assert w.shape == (3, 4)
