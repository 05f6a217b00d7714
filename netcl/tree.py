"""netcl.tree: the short names of `jax.tree` over netcl.tree_util's functions.

>>> netcl.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
"""
from .tree_util import (all_leaves, tree_all as all, tree_flatten as flatten,  # noqa: A004
                        tree_flatten_with_path as flatten_with_path, tree_leaves as leaves,
                        tree_leaves_with_path as leaves_with_path, tree_map as map,
                        tree_map_with_path as map_with_path, tree_reduce as reduce,
                        tree_structure as structure, tree_transpose as transpose,
                        tree_unflatten as unflatten)

__all__ = ["all", "all_leaves", "broadcast", "flatten", "flatten_with_path", "leaves",
           "leaves_with_path", "map", "map_with_path", "reduce", "reduce_associative",
           "structure", "transpose", "unflatten"]


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """`prefix_tree` with each leaf repeated over the subtree of `full_tree` below it.

    >>> netcl.tree.broadcast([1, 2], [(0, 0), 0])
    [(1, 1), 2]
    """
    prefix_leaves, prefix_def = flatten(prefix_tree, is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    return unflatten(prefix_def, [map(lambda _, v=v: v, sub, is_leaf=is_leaf)
                                  for v, sub in zip(prefix_leaves, subtrees)])


_NO_IDENTITY = object()


def reduce_associative(operation, tree, *, identity=_NO_IDENTITY, is_leaf=None):
    """The leaves combined with an associative `operation`, pairwise as a balanced tree.

    >>> netcl.tree.reduce_associative(lambda a, b: a + b, [1, 2, 3, 4])
    10
    """
    items = leaves(tree, is_leaf)
    if not items:
        if identity is _NO_IDENTITY:
            raise TypeError("reduce_associative: the tree has no leaves and no identity")
        return identity
    while len(items) > 1:
        pairs = [operation(items[k], items[k + 1]) for k in range(0, len(items) - 1, 2)]
        items = pairs + ([items[-1]] if len(items) % 2 else [])
    return items[0]
