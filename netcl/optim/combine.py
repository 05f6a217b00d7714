"""Composition of gradient transformations."""
from .base import GradientTransformation

__all__ = ["chain"]


def chain(*transforms):
    """Apply `transforms` in sequence; the state is the tuple of their states.

    >>> opt = chain(clip_by_global_norm(1.0), scale_by_adam(), scale_by_learning_rate(1e-3))
    """
    for i, t in enumerate(transforms):
        if not isinstance(t, GradientTransformation):
            if isinstance(t, tuple) and len(t) == 2 and all(callable(f) for f in t):
                continue  # any (init, update) pair works, as in optax
            raise TypeError(f"chain: argument {i} must be a GradientTransformation, got "
                            f"{type(t).__name__}")
    inits = tuple(t[0] for t in transforms)
    updates_fns = tuple(t[1] for t in transforms)

    def init_fn(params):
        return tuple(init(params) for init in inits)

    def update_fn(updates, state, params=None):
        if not isinstance(state, tuple) or len(state) != len(updates_fns):
            got = f"a {type(state).__name__} of length {len(state)}" \
                if isinstance(state, tuple) else f"a {type(state).__name__}"
            raise ValueError(f"chain: expected a tuple of {len(updates_fns)} states (one per "
                             f"transformation), got {got}; was the state made by another "
                             f"optimizer's init?")
        new_state = []
        for fn, s in zip(updates_fns, state):
            updates, s = fn(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init_fn, update_fn)
