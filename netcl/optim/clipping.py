"""Clipping of updates: by value and by the global L2 norm of the whole tree."""
from .. import numpy as jnp
from ..tree_util import tree_leaves, tree_map
from . import _checks as chk
from .base import EmptyState, GradientTransformation, init_empty_state

__all__ = ["ClipState", "ClipByGlobalNormState", "clip", "clip_by_global_norm", "global_norm"]

ClipState = EmptyState
ClipByGlobalNormState = EmptyState


def global_norm(updates):
    """sqrt of the sum of squares of every element of every leaf (a 0-d array).

    >>> global_norm({'w': netcl.numpy.full((2,), 3.0), 'b': netcl.numpy.full((1,), 4.0)})
    """
    leaves = tree_leaves(updates)
    if not leaves:
        return jnp.zeros([], jnp.float32)
    total = None
    for x in leaves:
        s = jnp.sum(x * x)
        total = s if total is None else total + s
    return jnp.sqrt(total)


def clip(max_delta):
    """Clip every element of the updates to [-max_delta, max_delta].

    >>> chain(clip(1.0), scale(-0.1))
    """
    max_delta = chk.non_negative("clip", "max_delta", max_delta)

    def update_fn(updates, state, params=None):
        del params
        return tree_map(lambda g: jnp.clip(g, -max_delta, max_delta), updates), state
    return GradientTransformation(init_empty_state, update_fn)


def clip_by_global_norm(max_norm):
    """Scale the whole tree by max_norm / global_norm when the global norm exceeds max_norm
    (otherwise leave it unchanged).

    >>> chain(clip_by_global_norm(1.0), scale_by_adam(), scale(-1e-3))
    """
    max_norm = chk.hyperparam("clip_by_global_norm", "max_norm", max_norm, lo=0.0,
                              lo_open=True)

    def update_fn(updates, state, params=None):
        del params
        g_norm = global_norm(updates)
        # max_norm / max(g_norm, max_norm): exactly 1 below the threshold, and no 0/0 (nor a
        # NaN gradient) at g_norm == 0.
        factor = max_norm / jnp.maximum(g_norm, max_norm)
        return tree_map(lambda t: t * factor.astype(t.dtype), updates), state
    return GradientTransformation(init_empty_state, update_fn)
