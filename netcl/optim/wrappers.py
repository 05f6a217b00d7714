"""Wrappers that change where an inner transformation applies."""
from typing import Any, NamedTuple

from ..tree_util import tree_map
from .base import GradientTransformation

__all__ = ["MaskedState", "MaskedNode", "masked"]


class MaskedState(NamedTuple):
    inner_state: Any


class MaskedNode(NamedTuple):
    """Stands in for a masked-out leaf or subtree (a pytree node with no leaves)."""


def _mask_tree(tree, mask_tree):
    return tree_map(lambda m, t: t if m else MaskedNode(), mask_tree, tree)


def masked(inner, mask):
    """Apply `inner` only where `mask` is True; other updates pass through unchanged.

    `mask` is a tree of Python bools with the params' structure (or a prefix of it), or a
    function of the params/updates returning one. The inner state only covers the selected
    leaves.

    >>> masked(add_decayed_weights(1e-4), {'w': True, 'b': False})
    """
    def mask_of(tree):
        return mask(tree) if callable(mask) else mask

    def init_fn(params):
        return MaskedState(inner_state=inner.init(_mask_tree(params, mask_of(params))))

    def update_fn(updates, state, params=None):
        if not isinstance(state, MaskedState):
            raise ValueError(f"masked: expected a MaskedState as state, got "
                             f"{type(state).__name__}; was the state made by another "
                             f"optimizer's init?")
        m = mask_of(updates)
        inner_updates, inner_state = inner.update(
            _mask_tree(updates, m), state.inner_state,
            None if params is None else _mask_tree(params, m))
        new_updates = tree_map(lambda keep, new, old: new if keep else old,
                               m, inner_updates, updates)
        return new_updates, MaskedState(inner_state=inner_state)
    return GradientTransformation(init_fn, update_fn)
