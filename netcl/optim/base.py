"""The optimizer interface: a `GradientTransformation` is a pair of pure functions

    init(params) -> state
    update(updates, state, params=None) -> (updates, state)

where `updates` (gradients on the way in, parameter deltas on the way out), `params` and
`state` are pytrees of netcl arrays. Transformations compose with `chain`; an optimizer is a
chain ending in a (negative) learning-rate scale, and `apply_updates` adds its output to the
params. Nothing is mutated, so a whole training step can be differentiated, vmapped or jitted.
"""
from typing import Any, Callable, NamedTuple

from .. import numpy as jnp
from ..tree_util import tree_map
from ._checks import same_structure

__all__ = ["GradientTransformation", "EmptyState", "OptState", "Params", "Updates", "Schedule",
           "ScalarOrSchedule", "identity", "init_empty_state", "apply_updates", "stateless"]

OptState = Any          # a pytree of arrays
Params = Any            # a pytree of arrays
Updates = Any           # a pytree of arrays, of params' structure
Schedule = Callable     # step count (int or 0-d int32 array) -> scalar
ScalarOrSchedule = Any  # float | Schedule


class GradientTransformation(NamedTuple):
    """`init(params) -> state`; `update(updates, state, params=None) -> (updates, state)`."""
    init: Callable
    update: Callable


class EmptyState(NamedTuple):
    """The state of a stateless transformation (a pytree node with no leaves)."""


def init_empty_state(params):
    del params
    return EmptyState()


def identity():
    """Leaves updates unchanged.

    >>> updates, state = identity().update(grads, identity().init(params))
    """
    def update_fn(updates, state, params=None):
        del params
        return updates, state
    return GradientTransformation(init_empty_state, update_fn)


def stateless(f):
    """A transformation from `f(updates, params) -> updates` that keeps no state."""
    def update_fn(updates, state, params=None):
        return f(updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def _apply(p, u):
    if p is None:
        return None
    p = jnp.asarray(p)
    return (p + u).astype(p.dtype)


def apply_updates(params, updates):
    """params + updates leaf by leaf, each result keeping its param's dtype (so a float32
    update does not promote float16 params). `None` params stay `None`.

    >>> params = apply_updates(params, updates)
    """
    same_structure("apply_updates", params, "params", updates, "updates")
    return tree_map(_apply, params, updates, is_leaf=lambda x: x is None)
