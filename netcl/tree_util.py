"""Pytrees: nested containers of leaves, with the names and semantics of ``jax.tree_util``.

Nodes: tuple, list, dict (keys sorted; unsortable keys keep insertion order),
namedtuple (any tuple subclass with ``_fields``), ``None`` (a node with no
children, not a leaf), ``OrderedDict`` (insertion order), ``defaultdict``
(``default_factory`` is aux data), ``Partial`` and registered types. Everything
else is a leaf.

Extension over JAX: every dataclass *instance* is a node even if unregistered.
Its children are its fields in field order, except fields declared with
``field(metadata={'static': True})``, which are aux data. It is rebuilt with
``object.__new__`` + ``object.__setattr__`` (frozen dataclasses work;
``__init__``/``__post_init__`` do not re-run). Registration takes precedence.

    >>> leaves, treedef = tree_flatten({'a': (1, 2), 'b': None})
    >>> leaves, treedef
    ([1, 2], PyTreeDef({'a': (*, *), 'b': None}))
    >>> tree_unflatten(treedef, [10, 20])
    {'a': (10, 20), 'b': None}

Key paths (the key classes, keystr, the *_with_path functions) and the registry's extension
points (registration with keys, register_static, flatten_one_level, default_registry):
tree_keys.py. Standard library only; imports no other
netcl module but that one.
"""
import collections
import dataclasses
import functools
import itertools
import operator

from .tree_keys import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry,  # noqa: F401
                        KeyPath, SequenceKey, default_registry, flatten_one_level,
                        flatten_one_level_with_keys, is_tree_node, keystr,
                        register_pytree_with_keys, register_pytree_with_keys_class,
                        register_static, tree_flatten_with_path, tree_leaves_with_path,
                        tree_map_with_path)

__all__ = [
    "PyTreeDef", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves",
    "tree_structure", "tree_all", "tree_reduce", "tree_transpose", "treedef_is_leaf",
    "all_leaves", "register_pytree_node", "register_pytree_node_class", "register_dataclass", "Partial",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
    "default_registry", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
    "tree_broadcast", "tree_reduce_associative", "treedef_children", "treedef_tuple",
]


class _Handler:
    """How to take one node type apart and put it back. ``dict_keys(aux)`` is set for
    dict-like kinds (children are the values at those keys)."""
    __slots__ = ("type", "kind", "name", "flatten", "unflatten", "flatten_keyed", "dict_keys")

    def __init__(self, type_, kind, flatten, unflatten, flatten_keyed, name=None, dict_keys=None):
        self.type, self.kind, self.name = type_, kind, name or type_.__name__
        self.flatten = flatten              # x -> (children, aux)
        self.unflatten = unflatten          # (aux, list_of_children) -> x
        self.flatten_keyed = flatten_keyed  # x -> (iterable of (key, child), aux)
        self.dict_keys = dict_keys


def _dict_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        return tuple(d)


def _dict_handler(type_, kind, aux_of, keys_of, make):
    """Handler for a dict-like type: ``aux_of(x)`` is its aux, ``keys_of(aux)`` its key order."""
    def flatten(x):
        aux = aux_of(x)
        return [x[k] for k in keys_of(aux)], aux

    def flatten_keyed(x):
        aux = aux_of(x)
        return [(DictKey(k), x[k]) for k in keys_of(aux)], aux
    return _Handler(type_, kind, flatten, lambda a, v: make(a, zip(keys_of(a), v)),
                    flatten_keyed, dict_keys=keys_of)


def _seq_keyed(x):
    return [(SequenceKey(i), c) for i, c in enumerate(x)], None


_TUPLE = _Handler(tuple, "tuple", lambda x: (x, None), lambda a, v: tuple(v), _seq_keyed)
_LIST = _Handler(list, "list", lambda x: (x, None), lambda a, v: v, _seq_keyed)
_NONE = _Handler(type(None), "none", lambda x: ((), None), lambda a, v: None, lambda x: ((), None))
_DICT = _dict_handler(dict, "dict", _dict_keys, (lambda a: a), lambda a, kv: dict(kv))
_ODICT = _dict_handler(collections.OrderedDict, "ordereddict", tuple, (lambda a: a),
                       lambda a, kv: collections.OrderedDict(kv))
_DDICT = _dict_handler(collections.defaultdict, "defaultdict",
                       lambda x: (x.default_factory, _dict_keys(x)), operator.itemgetter(1),
                       lambda a, kv: collections.defaultdict(a[0], kv))

_registry = {h.type: h for h in (_TUPLE, _LIST, _DICT, _NONE, _ODICT, _DDICT)}
_auto = {}    # namedtuple / unregistered dataclass type -> handler (kept: stable identity)
_cache = {}   # type -> handler, or None for leaf types (cleared on registration)
_MISS = object()
# A treedef node is ``None`` (a leaf) or a tuple ``(handler, aux, children_nodes)``.


def _namedtuple_handler(t):
    return _Handler(t, "namedtuple", lambda x: (x, None), lambda a, v: t(*v),
                    lambda x: ([(GetAttrKey(f), c) for f, c in zip(t._fields, x)], None),
                    name=f"namedtuple[{t.__name__}]")


def _dataclass_handler(t):
    fields = dataclasses.fields(t)
    data = tuple(f.name for f in fields if not f.metadata.get("static", False))
    meta = tuple(f.name for f in fields if f.metadata.get("static", False))

    def unflatten(aux, vals):
        obj = object.__new__(t)
        for n, v in zip(meta + data, (*aux, *vals)):
            object.__setattr__(obj, n, v)
        return obj
    return _attr_handler(t, "dataclass", data, meta, unflatten)


def _attr_handler(t, kind, data, meta, unflatten):
    """Handler whose children are attributes ``data`` and aux the attributes ``meta``."""
    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def flatten_keyed(x):
        return [(GetAttrKey(n), getattr(x, n)) for n in data], tuple(getattr(x, n) for n in meta)
    return _Handler(t, kind, flatten, unflatten, flatten_keyed)


def _lookup(t):
    """Handler for type ``t``, or None if instances of ``t`` are leaves."""
    h = _cache.get(t, _MISS)
    if h is not _MISS:
        return h
    h = _registry.get(t) or _auto.get(t)
    if h is None:
        if issubclass(t, tuple) and hasattr(t, "_fields"):
            h = _auto[t] = _namedtuple_handler(t)
        elif dataclasses.is_dataclass(t):
            h = _auto[t] = _dataclass_handler(t)
    if len(_cache) > 4096:
        _cache.clear()
    _cache[t] = h
    return h


def _count(node):
    """(num_leaves, num_nodes) of a treedef node."""
    if node is None:
        return 1, 1
    counts = [_count(c) for c in node[2]]
    return sum(c[0] for c in counts), 1 + sum(c[1] for c in counts)


def _build(node, it):
    h, aux, children = node
    vals = [next(it) if c is None else _build(c, it) for c in children]
    if h is _TUPLE:
        return tuple(vals)
    if h is _DICT:
        return dict(zip(aux, vals))
    return vals if h is _LIST else h.unflatten(aux, vals)


def _node_repr(node):
    if node is None:
        return "*"
    h, aux, children = node
    cs, k = [_node_repr(c) for c in children], h.kind
    if k == "tuple":
        return "(" + ", ".join(cs) + ("," if len(cs) == 1 else "") + ")"
    if k == "list":
        return "[" + ", ".join(cs) + "]"
    if k == "none":
        return "None"
    if h.dict_keys is not None:
        body = "{" + ", ".join(f"{key!r}: {c}" for key, c in zip(h.dict_keys(aux), cs)) + "}"
        return {"dict": body, "ordereddict": f"OrderedDict({body})"}.get(
            k, f"{h.name}({aux[0]!r}, {body})" if k == "defaultdict" else f"{h.name}({body})")
    name = h.name if k == "namedtuple" else f"{h.name}[{aux!r}]"
    return f"CustomNode({name}, [{', '.join(cs)}])"


def _describe(node):
    """Human description of a treedef node, for error messages."""
    h, aux, children = node
    if h is _NONE:
        return "None"
    if h.kind in ("tuple", "list", "namedtuple"):
        return f"{h.name} of length {len(children)}"
    if h.dict_keys:
        return f"{h.name} with keys {list(h.dict_keys(aux))}"
    return f"{h.name} node with node data {aux!r} and {len(children)} children"


def _describe_obj(x):
    h = _lookup(type(x))
    if h is None:
        r = repr(x)
        return f"leaf {r if len(r) <= 40 else r[:37] + '...'} of type {type(x).__name__}"
    if h.dict_keys:
        return f"{h.name} with keys {list(x)}"
    children, aux = h.flatten(x)
    return _describe((h, aux, tuple(children)))


class _Mismatch(Exception):
    def __init__(self, msg):
        super().__init__(msg)
        self.msg, self.path = msg, []


def _up_to(node, x, out, _get=_cache.get, _MISS=_MISS):
    """Append the subtrees of ``x`` sitting at the leaves of ``node``; raise _Mismatch."""
    h, aux, children = node
    xh = _get(type(x), _MISS)
    if xh is _MISS:
        xh = _lookup(type(x))
    if xh is not h:
        bad = True
    elif h is _TUPLE or h is _LIST or h.kind == "namedtuple":
        xs, bad = x, len(x) != len(children)
    elif h.dict_keys is not None and h is not _ODICT:  # same keys, any order
        keys = h.dict_keys(aux)
        bad = len(x) != len(keys) or any(k not in x for k in keys)
        xs = None if bad else [x[k] for k in keys]
    else:
        xs, xaux = h.flatten(x)
        xs = list(xs)
        bad = len(xs) != len(children) or xaux != aux
    if bad:
        raise _Mismatch(f"expected {_describe(node)}, got {_describe_obj(x)}")
    for i, c in enumerate(children):
        if c is None:
            out.append(xs[i])
            continue
        try:
            _up_to(c, xs[i], out)
        except _Mismatch as e:
            e.path.insert(0, DictKey(h.dict_keys(aux)[i]) if h.dict_keys else
                          list(h.flatten_keyed(x)[0])[i][0])
            raise


def _flatten_up_to(treedef, tree, what, argno=None):
    if treedef._node is None:
        return [tree]
    out = []
    try:
        _up_to(treedef._node, tree, out)
    except _Mismatch as e:
        where = keystr(e.path) or "the root"
        arg = "" if argno is None else f" (in tree argument {argno})"
        try:
            other = repr(tree_structure(tree))
        except Exception:  # noqa: BLE001 - only for the message
            other = "<unflattenable>"
        raise ValueError(f"{what}: structures differ at {where}{arg}: {e.msg}.\n"
                         f"  expected structure: {treedef!r}\n  got structure:      {other}") from None
    return out


class PyTreeDef:
    """The structure of a pytree (everything but its leaves). Hashable, comparable.

        >>> td = tree_structure([1, {'a': 2}]); td
        PyTreeDef([*, {'a': *}])
        >>> td.num_leaves, td.num_nodes, td.unflatten('xy')
        (2, 4, ['x', {'a': 'y'}])
    """
    __slots__ = ("_node", "_leaves", "_hash")

    def __init__(self, node, num_leaves=None):
        self._node, self._leaves, self._hash = node, num_leaves, None

    @property
    def num_leaves(self):
        if self._leaves is None:
            self._leaves = _count(self._node)[0]
        return self._leaves

    @property
    def num_nodes(self):
        return _count(self._node)[1]

    def children(self):
        """Treedefs of the root's children (``[]`` for a leaf)."""
        return [] if self._node is None else [PyTreeDef(c) for c in self._node[2]]

    def node_data(self):
        """``(node_type, aux_data)`` of the root, or None for a leaf."""
        return None if self._node is None else (self._node[0].type, self._node[1])

    def unflatten(self, leaves):
        """Build a pytree of this structure from an iterable of leaves."""
        leaves = leaves if isinstance(leaves, (list, tuple)) else list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"tree_unflatten: too {'few' if len(leaves) < self.num_leaves else 'many'} "
                             f"leaves for {self!r}; expected {self.num_leaves}, got {len(leaves)}")
        return leaves[0] if self._node is None else _build(self._node, iter(leaves))

    def builder(self):
        """A function ``leaves -> pytree`` for a list of exactly ``num_leaves`` leaves
        (unchecked): the node walk of ``unflatten`` compiled once into one Python
        expression, for callers that rebuild the same structure many times (jit's
        outputs)."""
        consts, counter = [], [0]

        def expr(node):
            if node is None:
                counter[0] += 1
                return f"L[{counter[0] - 1}]"
            h, aux, children = node
            parts = [expr(c) for c in children]
            if h is _TUPLE:
                return "(" + "".join(p + ", " for p in parts) + ")"
            if h is _LIST:
                return "[" + ", ".join(parts) + "]"
            consts.append((h, aux))
            k = len(consts) - 1
            if h is _DICT:
                return f"dict(zip(C[{k}][1], ({''.join(p + ', ' for p in parts)})))"
            return f"C[{k}][0].unflatten(C[{k}][1], [{', '.join(parts)}])"
        body = expr(self._node)
        return eval(f"lambda L: {body}", {"C": consts})

    def matcher(self):
        """A function ``tree -> leaves`` that returns ``tree_flatten(tree)[0]`` when ``tree``
        has this structure and None otherwise: the walk of ``tree_flatten`` compiled once
        into straight-line type and length checks, for callers that take apart trees of the
        same structure many times (jit's arguments). What sits where a leaf belongs is not
        checked: callers accepting only some leaf types check those.

            >>> tree_structure([1, (2, 3)]).matcher()(['a', ('b', 'c')])
            ['a', 'b', 'c']
        """
        consts, lines, leaves = {"_get": _cache.get}, [], []
        names = (f"x{i}" for i in itertools.count())    # fresh local variable names

        def visit(node, var):
            if node is None:
                leaves.append(var)
                return
            h, aux, children = node
            n = len(children)
            if h is _NONE:
                lines.append(f"if {var} is not None: return None")
                return
            if h is _TUPLE or h is _LIST:
                lines.append(f"if type({var}) is not {h.type.__name__} or len({var}) != {n}: "
                             "return None")
                items = var
            else:   # any other node kind: its own handler takes it apart
                k = len(consts)
                consts[f"H{k}"], consts[f"A{k}"] = h, aux
                items = next(names)
                lines.append(f"if _get(type({var})) is not H{k}: return None")
                lines.append(f"{items}, aux = H{k}.flatten({var})")
                lines.append(f"if len({items}) != {n} or aux != A{k}: return None")
            if n == 0:
                return
            vs = [next(names) for _ in children]
            lines.append(f"{''.join(v + ', ' for v in vs)}= {items}")
            for c, v in zip(children, vs):
                visit(c, v)
        visit(self._node, "tree")
        src = "def match(tree):\n" + "".join(f"    {ln}\n" for ln in lines) + \
            f"    return [{', '.join(leaves)}]\n"
        exec(src, consts)
        return consts["match"]

    def flatten_up_to(self, xs):
        """Subtrees of ``xs`` at this treedef's leaves (``xs`` must have this structure as prefix)."""
        return _flatten_up_to(self, xs, "flatten_up_to")

    def compose(self, inner):
        """This structure with every leaf replaced by ``inner``."""
        def sub(n):
            return inner._node if n is None else (n[0], n[1], tuple(sub(c) for c in n[2]))
        return PyTreeDef(sub(self._node))

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._node == other._node

    def __hash__(self):
        if self._hash is None:
            try:
                self._hash = hash(self._node)
            except TypeError:   # aux data that is not hashable (a dict): as in JAX, such
                self._hash = _loose_hash(self._node)    # treedefs compare by equality
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({_node_repr(self._node)})"


def _loose_hash(node):
    """A hash of a node whose unhashable aux data counts by type only (equality, which
    compares it by value, decides)."""
    if node is None:
        return hash(None)
    kind, aux, children = node
    try:
        aux_key = hash(aux)
    except TypeError:
        aux_key = hash(type(aux).__qualname__)
    return hash((kind, aux_key, tuple(_loose_hash(c) for c in children)))


def _walk(x, h, leaves, is_leaf, _get=_cache.get, _MISS=_MISS, _T=_TUPLE, _L=_LIST, _D=_DICT):
    """Flatten node ``x`` (handler ``h``) appending to ``leaves``; return its treedef node."""
    if h is _T or h is _L:
        children, aux = x, None
    elif h is _D:
        aux = _dict_keys(x)
        children = [x[k] for k in aux]
    else:
        children, aux = h.flatten(x)
    nodes = []
    for c in children:
        if is_leaf is not None and is_leaf(c):
            ch = None
        else:
            ch = _get(type(c), _MISS)
            if ch is _MISS:
                ch = _lookup(type(c))
        if ch is None:
            leaves.append(c)
            nodes.append(None)
        else:
            nodes.append(_walk(c, ch, leaves, is_leaf))
    return (h, aux, tuple(nodes))


def tree_flatten(tree, is_leaf=None):
    """Split a pytree into a list of leaves and a ``PyTreeDef``.

        >>> tree_flatten([1, (2, None)])
        ([1, 2], PyTreeDef([*, (*, None)]))
    """
    h = None if is_leaf is not None and is_leaf(tree) else _lookup(type(tree))
    if h is None:
        return [tree], PyTreeDef(None, 1)
    leaves = []
    node = _walk(tree, h, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef, leaves):
    """Inverse of ``tree_flatten``: ``tree_unflatten(tree_structure((1, 2)), [3, 4]) == (3, 4)``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    """Leaves in flatten order: ``tree_leaves([None, 1, {'a': 2}]) == [1, 2]``."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The ``PyTreeDef`` of a tree: ``tree_structure((1, 2))`` is ``PyTreeDef((*, *))``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest`` (which must have
    ``tree``'s structure down to ``tree``'s leaves; below those, whole subtrees are passed).

        >>> tree_map(lambda x, y: x + y, {'a': 1, 'b': (2, 3)}, {'a': 10, 'b': (20, 30)})
        {'a': 11, 'b': (22, 33)}
    """
    if not callable(f):
        raise TypeError(f"tree_map: f must be callable, got {type(f).__name__} {f!r}")
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [_flatten_up_to(treedef, r, "tree_map", i + 2) for i, r in enumerate(rest)]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_all(tree, *, is_leaf=None):
    """``all(tree_leaves(tree))``: ``tree_all([True, (1, None)]) is True``."""
    return all(tree_leaves(tree, is_leaf))


_NO_INIT = object()


def tree_reduce(function, tree, initializer=_NO_INIT, is_leaf=None):
    """``functools.reduce`` over the leaves: ``tree_reduce(operator.add, [1, (2, 3)]) == 6``."""
    init = () if initializer is _NO_INIT else (initializer,)
    return functools.reduce(function, tree_leaves(tree, is_leaf), *init)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn an outer-of-inner tree into an inner-of-outer tree (``inner_treedef=None``:
    infer it from the first inner subtree).

        >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
        ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner, outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner * outer:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    it = iter(flat)
    lol = [[next(it) for _ in range(inner)] for _ in range(outer)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*lol)])


def treedef_is_leaf(treedef):
    """True for a treedef with one node (a leaf, ``None`` or an empty container), as JAX."""
    return treedef.num_nodes == 1


def treedef_children(treedef):
    """Treedefs of the root's children: ``treedef_children(tree_structure((1, [2])))`` is
    ``[PyTreeDef(*), PyTreeDef([*])]``."""
    return treedef.children()


def treedef_tuple(treedefs):
    """The treedef of a tuple with children `treedefs`:
    ``treedef_tuple([tree_structure(1), tree_structure([2])]) == tree_structure((1, [2]))``."""
    nodes = []
    for t in treedefs:
        if not isinstance(t, PyTreeDef):
            raise TypeError(f"treedef_tuple: expected PyTreeDefs, got {type(t).__name__}")
        nodes.append(t._node)
    return PyTreeDef((_TUPLE, None, tuple(nodes)))


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """`prefix_tree`'s leaves repeated over the subtrees of `full_tree` below them, in
    `full_tree`'s structure (`is_leaf` applies to `prefix_tree`, as in JAX).

        >>> tree_broadcast([1, 2], [(0, 0), 0])
        [(1, 1), 2]
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to(treedef, full_tree, "tree_broadcast")
    out = [x for x, sub in zip(leaves, subtrees) for _ in range(len(tree_leaves(sub)))]
    return tree_structure(full_tree).unflatten(out)


def tree_reduce_associative(operation, tree, *, identity=_NO_INIT, is_leaf=None):
    """The leaves combined by an associative `operation` as a balanced tree, split at half
    the length as JAX does (``(l0 op l1) op (l2 op (l3 op l4))``); `identity` is the result
    for no leaves.

        >>> tree_reduce_associative(operator.add, [1, (2, 3), 4])
        10
    """
    items = tree_leaves(tree, is_leaf)
    if not items:
        if identity is _NO_INIT:
            raise TypeError("tree_reduce_associative: the tree has no leaves and no identity "
                            "(give identity= for that case)")
        return identity

    def reduce(lo, hi):
        if hi - lo == 1:
            return items[lo]
        mid = lo + (hi - lo) // 2
        return operation(reduce(lo, mid), reduce(mid, hi))
    return reduce(0, len(items))


def all_leaves(iterable, is_leaf=None):
    """True if every element is a leaf: ``all_leaves([1, 'a']) and not all_leaves([1, (2,)])``."""
    if is_leaf is None:
        return all(_lookup(type(x)) is None for x in iterable)
    lst = list(iterable)
    return lst == tree_leaves(lst, is_leaf)


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Make ``nodetype`` a node: ``flatten_func(x) -> (children, aux)``,
    ``unflatten_func(aux, children) -> x``; ``aux`` must be hashable and comparable.
    Optional ``flatten_with_keys_func(x) -> ([(key, child), ...], aux)`` names children.

        >>> class Box:
        ...     def __init__(self, v): self.v = v
        >>> register_pytree_node(Box, lambda b: ((b.v,), None), lambda aux, ch: Box(*ch))
        >>> tree_leaves([Box(1), Box((2, 3))])
        [1, 2, 3]
    """
    if nodetype in _registry:
        raise ValueError(f"Duplicate pytree node type registration for {nodetype!r}")
    if flatten_with_keys_func is None:
        def flatten_with_keys_func(x):
            children, aux = flatten_func(x)
            return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    _registry[nodetype] = _Handler(nodetype, "custom", flatten_func,
                                   lambda aux, vals: unflatten_func(aux, tuple(vals)),
                                   flatten_with_keys_func)
    _cache.clear()


def register_pytree_node_class(cls):
    """Class decorator: ``cls`` has method ``tree_flatten()`` and classmethod
    ``tree_unflatten(aux, children)``.

        >>> @register_pytree_node_class
        ... class Pair:
        ...     def __init__(self, a, b): self.a, self.b = a, b
        ...     def tree_flatten(self): return (self.a, self.b), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, ch): return cls(*ch)
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a class whose attributes ``data_fields`` are children and ``meta_fields``
    aux data; rebuilt by ``nodetype(**fields)``. For dataclasses the lists may be omitted
    (``metadata={'static': True}`` marks meta fields). Returns ``nodetype``.

        >>> @functools.partial(register_dataclass, data_fields=['x'], meta_fields=['n'])
        ... @dataclasses.dataclass
        ... class P:
        ...     x: float
        ...     n: int
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: data_fields and meta_fields are required when "
                            f"nodetype is not a dataclass; got {nodetype!r}")
        fs = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fs if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fs if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        if {*data_fields, *meta_fields} != init:
            raise ValueError(f"register_dataclass: data_fields and meta_fields must name exactly "
                             f"the init=True fields of {nodetype.__name__}: {sorted(init)}")

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))
    h = _attr_handler(nodetype, "custom", data_fields, meta_fields, None)
    register_pytree_node(nodetype, h.flatten, unflatten, h.flatten_keyed)
    return nodetype


class _HashableCallableShim:
    """Wraps a functools.partial so Partial(partial(...)) keeps it whole as aux data."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return self.fun == (other.fun if isinstance(other, _HashableCallableShim) else other)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: args/keywords are children, the function
    is aux data. ``tree_leaves(Partial(f, 1, k=2)) == [1, 2]``."""

    def __new__(klass, func, *args, **kw):
        if isinstance(func, functools.partial):
            original, func = func, _HashableCallableShim(func)
            out = super().__new__(klass, func, *args, **kw)
            func.func, func.args, func.keywords = original.func, original.args, original.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))
