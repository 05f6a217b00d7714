"""Key paths of pytrees, with ``jax.tree_util``'s key classes: the entries a path is made
of (`SequenceKey`, `DictKey`, `GetAttrKey`, `FlattenedIndexKey`, typed as `KeyEntry` and
`KeyPath`), `keystr`, which renders a path, and the *_with_path functions (tree_util's node
handlers make the keys).

    >>> keystr((DictKey('a'), SequenceKey(1)))
    "['a'][1]"

Also the registry's extension points that JAX documents next to keys: registration with keys
(`register_pytree_with_keys[_class]`), `register_static`, one-level flattening
(`flatten_one_level[_with_keys]`), `is_tree_node` and `default_registry`. tree_util.py
imports this module (and re-exports these), so this one reaches tree_util only inside its
functions, when they are called.
"""
from typing import Any, TypeVar

KeyEntry = TypeVar("KeyEntry", bound=Any)      # (JAX's: the type of one path entry)
KeyPath = tuple[KeyEntry, ...]


def _tu():
    from . import tree_util     # (imported here: tree_util imports this module)
    return tree_util


class _KeyEntry:
    """Hashable key-path entry holding one value (like JAX's key classes)."""
    __slots__ = ()

    def __init__(self, value):
        setattr(self, self.__slots__[0], value)

    def _value(self):
        return getattr(self, self.__slots__[0])

    def __eq__(self, other):
        return type(other) is type(self) and other._value() == self._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self.__slots__[0]}={self._value()!r})"

    def __str__(self):
        return self._fmt.format(self._value())


class SequenceKey(_KeyEntry):
    """Index into a tuple/list; ``str(SequenceKey(0)) == '[0]'``."""
    __slots__, __match_args__, _fmt = ("idx",), ("idx",), "[{}]"


class DictKey(_KeyEntry):
    """Key of a dict; ``str(DictKey('a')) == "['a']"``."""
    __slots__, __match_args__, _fmt = ("key",), ("key",), "[{!r}]"


class GetAttrKey(_KeyEntry):
    """Attribute of a namedtuple/dataclass; ``str(GetAttrKey('x')) == '.x'``."""
    __slots__, __match_args__, _fmt = ("name",), ("name",), ".{}"


class FlattenedIndexKey(_KeyEntry):
    """Child index of a custom node registered without keys."""
    __slots__, __match_args__, _fmt = ("key",), ("key",), "[<flat index {}>]"


def keystr(keys, *, simple=False, separator=""):
    """Render a key path: ``keystr((DictKey('a'), SequenceKey(1))) == "['a'][1]"``;
    ``simple=True, separator='/'`` gives ``'a/1'``."""
    if simple:
        return separator.join(str(k._value()) if isinstance(k, _KeyEntry) else str(k) for k in keys)
    return separator.join(str(k) for k in keys)


# ---- flattening with key paths ---------------------------------------------------------------

def _walk_path(x, h, path, out, is_leaf, _lookup):
    keyed, aux = h.flatten_keyed(x)
    nodes = []
    for k, c in keyed:
        p = path + (k,)
        ch = None if is_leaf is not None and is_leaf(p, c) else _lookup(type(c))
        if ch is None:
            out.append((p, c))
            nodes.append(None)
        else:
            nodes.append(_walk_path(c, ch, p, out, is_leaf, _lookup))
    return (h, aux, tuple(nodes))


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Like ``tree_flatten`` but leaves come as ``(key_path, leaf)`` pairs
    (``is_leaf_takes_path=True``: ``is_leaf(key_path, x)``).

        >>> tree_flatten_with_path({'a': [5]})[0]
        [((DictKey(key='a'), SequenceKey(idx=0)), 5)]
    """
    tu = _tu()
    if is_leaf is not None and not is_leaf_takes_path:
        is_leaf = (lambda f: lambda _, x: f(x))(is_leaf)
    h = None if is_leaf is not None and is_leaf((), tree) else tu._lookup(type(tree))
    if h is None:
        return [((), tree)], tu.PyTreeDef(None, 1)
    out = []
    node = _walk_path(tree, h, (), out, is_leaf, tu._lookup)
    return out, tu.PyTreeDef(node, len(out))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``(key_path, leaf)`` pairs: ``tree_leaves_with_path([7]) == [((SequenceKey(0),), 7)]``."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """``tree_map`` where ``f`` also gets the key path as first argument.

        >>> tree_map_with_path(lambda p, x: keystr(p), {'a': (1,)})
        {'a': ("['a'][0]",)}
    """
    if not callable(f):
        raise TypeError(f"tree_map_with_path: f must be callable, got {type(f).__name__} {f!r}")
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [_tu()._flatten_up_to(treedef, r, "tree_map_with_path", i + 2)
              for i, r in enumerate(rest)]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


# ---- the registry's extension points ------------------------------------------------------

def _handler_or_raise(tree, where):
    h = _tu()._lookup(type(tree))
    if h is None:
        raise ValueError(f"{where}: can't tree-flatten type: {type(tree)} (a leaf, not a "
                         "registered pytree node)")
    return h


def flatten_one_level(tree):
    """``(children, aux_data)`` of the root node of `tree`, its children not flattened
    further; ValueError for a leaf.

        >>> flatten_one_level({'a': [1, 2], 'b': {'c': 3}})
        ([[1, 2], {'c': 3}], ('a', 'b'))
    """
    h = _handler_or_raise(tree, "flatten_one_level")
    if h.kind == "namedtuple":      # (netcl keeps no aux for these; JAX's is the class)
        return list(tree), type(tree)
    return h.flatten(tree)


def flatten_one_level_with_keys(tree):
    """``([(key, child), ...], aux_data)`` of the root node of `tree`; ValueError for a leaf.

        >>> flatten_one_level_with_keys((7,))
        ([(SequenceKey(idx=0), 7)], None)
    """
    h = _handler_or_raise(tree, "flatten_one_level_with_keys")
    keyed, aux = h.flatten_keyed(tree)
    return list(keyed), type(tree) if h.kind == "namedtuple" else aux


def is_tree_node(typ):
    """True if instances of type `typ` are pytree nodes (built in, registered, namedtuples;
    in netcl also every dataclass, see tree_util).

        >>> is_tree_node(tuple), is_tree_node(int)
        (True, False)
    """
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: expected a type, got {type(typ).__name__} {typ!r}")
    return _tu()._lookup(typ) is not None


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Make `nodetype` a node whose children have keys: ``flatten_with_keys(x) ->
    ([(key, child), ...], aux)``, ``unflatten_func(aux, children) -> x``; the optional
    ``flatten_func(x) -> (children, aux)`` is a faster path for walks without keys (same
    order, same aux).

        >>> class Box:
        ...     def __init__(self, v): self.v = v
        >>> register_pytree_with_keys(Box, lambda b: ([(GetAttrKey('v'), b.v)], None),
        ...                           lambda aux, ch: Box(*ch))
    """
    if flatten_func is None:
        def flatten_func(x):
            keyed, aux = flatten_with_keys(x)
            return [c for _, c in keyed], aux
    _tu().register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    """Class decorator: `cls` has the method ``tree_flatten_with_keys()`` and the classmethod
    ``tree_unflatten(aux, children)`` (and, optionally, ``tree_flatten()``).

        >>> @register_pytree_with_keys_class
        ... class Pair:
        ...     def __init__(self, a, b): self.a, self.b = a, b
        ...     def tree_flatten_with_keys(self):
        ...         return [(GetAttrKey('a'), self.a), (GetAttrKey('b'), self.b)], None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, ch): return cls(*ch)
    """
    flat = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flat)
    return cls


def register_static(cls):
    """Register `cls` as a node with no children whose instance is its aux data: a static
    value inside a pytree (jit keys its cache on it, so it must be hashable).

        >>> @register_static
        ... class Mode(str): pass
        >>> tree_util.tree_leaves([Mode('add'), 1])
        [1]
    """
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


class _Registry:
    """The registry of pytree node types, as ``jax.tree_util.default_registry``: netcl has
    one, and these methods reach it."""

    def flatten(self, tree, leaf_predicate=None):
        """tree_flatten: ``(leaves, treedef)``."""
        return _tu().tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """``(children, aux)`` of a node, None for a leaf."""
        h = _tu()._lookup(type(tree))
        return None if h is None else h.flatten(tree)

    def flatten_one_level_with_keys(self, tree):
        """``([(key, child), ...], aux)`` of a node, None for a leaf."""
        h = _tu()._lookup(type(tree))
        return None if h is None else flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree, leaf_predicate=None):
        """tree_flatten_with_path, with ``leaf_predicate(key_path, x)``."""
        return _tu().tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def is_node(self, type):   # noqa: A002 - JAX's argument name
        return is_tree_node(type)

    def register_node(self, type, to_iterable, from_iterable,  # noqa: A002
                      to_iterable_with_keys=None):
        _tu().register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, type, data_fields, meta_fields, /):  # noqa: A002
        _tu().register_dataclass(type, data_fields, meta_fields)

    def __repr__(self):
        return "netcl.tree_util.default_registry"


default_registry = _Registry()
