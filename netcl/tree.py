"""netcl.tree: the short names of `jax.tree` over netcl.tree_util's functions, and `static`
(a dataclass field that register_dataclass and netcl's dataclass nodes keep as aux data).

>>> netcl.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
"""
import dataclasses

from .tree_util import (all_leaves, tree_all as all, tree_broadcast as broadcast,  # noqa: A004
                        tree_flatten as flatten, tree_flatten_with_path as flatten_with_path,
                        tree_leaves as leaves, tree_leaves_with_path as leaves_with_path,
                        tree_map as map, tree_map_with_path as map_with_path,
                        tree_reduce as reduce, tree_reduce_associative as reduce_associative,
                        tree_structure as structure, tree_transpose as transpose,
                        tree_unflatten as unflatten)

__all__ = ["all", "all_leaves", "broadcast", "flatten", "flatten_with_path", "leaves",
           "leaves_with_path", "map", "map_with_path", "reduce", "reduce_associative",
           "static", "structure", "transpose", "unflatten"]


def static(**kwargs):
    """A ``dataclasses.field(**kwargs)`` marked ``metadata={'static': True}``: the field is
    aux data of the pytree node, not a child (jit keys its cache on it).

    >>> @netcl.tree_util.register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: object
    ...     kind: str = netcl.tree.static(default="add")
    >>> netcl.tree.leaves(Op(x=1.0))
    [1.0]
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
