"""Adafactor (Shazeer & Stern 2018) and its parts, with optax's names, defaults and state:
`scale_by_factored_rms` (the factored second-moment estimate), `clip_by_block_rms`,
`scale_by_param_block_rms` and the `adafactor` chain.

A leaf of two or more dimensions whose two largest dimensions are both at least
`min_dim_size_to_factor` keeps one row and one column of second moments (over its two largest
axes) instead of a full array; other leaves keep a full one.

    >>> opt = optim.adafactor(learning_rate=1e-2)
    >>> state = opt.init(params)
    >>> updates, state = opt.update(grads, state, params)    # needs params
"""
import numbers
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core.array import Array
from ..core.tracing import Tracer
from ..tree_util import tree_leaves, tree_map, tree_structure
from . import _checks as chk
from .base import GradientTransformation, init_empty_state
from .combine import chain
from .extras import ema
from .numerics import abs_sq, safe_increment
from .transforms import add_decayed_weights, scale, scale_by_learning_rate

__all__ = ["FactoredState", "scale_by_factored_rms", "clip_by_block_rms",
           "scale_by_param_block_rms", "adafactor"]


def _decay_rate_pow(i, exponent=0.8):
    """Adafactor's second-moment decay at step i (0-based): 1 - (i + 1)^-exponent."""
    t = jnp.asarray(i + 1).astype(jnp.float32)
    return 1.0 - t ** (-exponent)


def _factored_dims(shape, factored, min_dim_size_to_factor):
    """The (second largest, largest) axes of `shape` to factor over, or None."""
    if not factored or len(shape) < 2:
        return None
    sorted_dims = np.argsort(shape, kind="stable")
    if shape[sorted_dims[-2]] < min_dim_size_to_factor:
        return None
    return int(sorted_dims[-2]), int(sorted_dims[-1])


class FactoredState(NamedTuple):
    """count: steps so far; v_row, v_col: the factored moments (shape (1,) for leaves that
    are not factored); v: the full moments (shape (1,) for factored leaves). Each of v_row,
    v_col, v has the params' tree structure.

    >>> optim.adafactor(1e-2).init({'w': jnp.zeros((256, 512))})[0].v_row['w'].shape  # (256,)
    """
    count: Any  # 0-d int32
    v_row: Any
    v_col: Any
    v: Any


def _int(where, name, value, lo=None):
    if isinstance(value, (Array, Tracer)):
        raise TypeError(f"{where}: {name} must be a static int (it decides the shapes of the "
                        f"state), got an array; with inject_hyperparams, name it in "
                        f"static_args")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}")
    if lo is not None and value < lo:
        raise ValueError(f"{where}: {name} must be >= {lo}, got {value!r}")
    return int(value)


def scale_by_factored_rms(factored=True, decay_rate=0.8, step_offset=0,
                          min_dim_size_to_factor=128, epsilon=1e-30,
                          decay_rate_fn=_decay_rate_pow):
    """Divide updates by a (factored) estimate of their root mean square, Adafactor's
    rescaling. The moments decay at decay_rate_fn(count - step_offset, decay_rate), by
    default 1 - (t + 1)^-decay_rate; epsilon is added to g^2. Needs params (for shapes).

    >>> optim.chain(optim.scale_by_factored_rms(), optim.scale(-1e-2))
    """
    where = "scale_by_factored_rms"
    if not isinstance(factored, (bool, np.bool_)):
        raise TypeError(f"{where}: factored must be a bool, got {factored!r}")
    decay_rate = chk.hyperparam(where, "decay_rate", decay_rate)
    step_offset = chk.hyperparam(where, "step_offset", step_offset)
    if chk.is_static_number(step_offset):
        step_offset = int(step_offset)
    min_dim = _int(where, "min_dim_size_to_factor", min_dim_size_to_factor, 0)
    epsilon = chk.non_negative(where, "epsilon", epsilon)
    if not callable(decay_rate_fn):
        raise TypeError(f"{where}: decay_rate_fn must be callable, got "
                        f"{type(decay_rate_fn).__name__}")

    def init_one(p):
        p = jnp.asarray(p)
        dims = _factored_dims(p.shape, factored, min_dim)
        dummy = jnp.zeros((1,), p.dtype)
        if dims is None:
            return dummy, dummy, jnp.zeros_like(p)
        d1, d0 = dims
        row = tuple(s for i, s in enumerate(p.shape) if i != d0)
        col = tuple(s for i, s in enumerate(p.shape) if i != d1)
        return jnp.zeros(row, p.dtype), jnp.zeros(col, p.dtype), dummy

    def init_fn(params):
        treedef = tree_structure(params)
        out = [init_one(p) for p in tree_leaves(params)]
        v_row, v_col, v = ([treedef.unflatten([o[i] for o in out]) for i in range(3)]
                           if out else [params] * 3)
        return FactoredState(count=jnp.zeros([], jnp.int32), v_row=v_row, v_col=v_col, v=v)

    def update_fn(updates, state, params=None):
        chk.need_params(where, params, updates)
        chk.state_type(where, state, FactoredState)
        for f in ("v_row", "v_col", "v"):
            chk.same_structure(where, updates, "updates", getattr(state, f), f"state.{f}")
        decay_t = decay_rate_fn(state.count - step_offset, decay_rate)

        def one(g, v_row, v_col, v, p):
            dtype = jnp.asarray(p).dtype
            dims = _factored_dims(jnp.asarray(p).shape, factored, min_dim)
            dummy = jnp.zeros((1,), dtype)
            grad_sqr = abs_sq(g) + epsilon
            if dims is not None:
                d1, d0 = dims
                new_row = (decay_t * v_row + (1.0 - decay_t) * jnp.mean(grad_sqr, axis=d0)
                           ).astype(dtype)
                new_col = (decay_t * v_col + (1.0 - decay_t) * jnp.mean(grad_sqr, axis=d1)
                           ).astype(dtype)
                reduced_d1 = d1 - 1 if d1 > d0 else d1
                row_col_mean = jnp.mean(new_row, axis=reduced_d1, keepdims=True)
                row_factor = (new_row / row_col_mean) ** -0.5
                col_factor = new_col ** -0.5
                u = g * jnp.expand_dims(row_factor, d0) * jnp.expand_dims(col_factor, d1)
                return u, new_row, new_col, dummy
            new_v = (decay_t * v + (1.0 - decay_t) * grad_sqr).astype(dtype)
            return g * new_v ** -0.5, dummy, dummy, new_v

        treedef = tree_structure(updates)
        out = [one(*xs) for xs in zip(*(tree_leaves(t) for t in (
            updates, state.v_row, state.v_col, state.v, params)))]
        if not out:
            return updates, state._replace(count=safe_increment(state.count))
        u, v_row, v_col, v = [treedef.unflatten([o[i] for o in out]) for i in range(4)]
        return u, FactoredState(count=safe_increment(state.count), v_row=v_row, v_col=v_col,
                                v=v)

    return GradientTransformation(init_fn, update_fn)


def clip_by_block_rms(threshold):
    """Scale each leaf u by 1 / max(1, rms(u) / threshold): no leaf's root mean square
    exceeds `threshold`.

    >>> optim.clip_by_block_rms(1.0)
    """
    threshold = chk.hyperparam("clip_by_block_rms", "threshold", threshold, lo=0.0,
                               lo_open=True)

    def update_fn(updates, state, params=None):
        del params

        def one(u):
            denom = jnp.maximum(1.0, jnp.sqrt(jnp.mean(abs_sq(u))) / threshold)
            return u / denom.astype(u.dtype)
        return tree_map(one, updates), state

    return GradientTransformation(init_empty_state, update_fn)


def _safe_rms(x, min_rms):
    """max(rms(x), min_rms), with a finite gradient where rms(x) <= min_rms."""
    rms = jnp.sqrt(jnp.mean(abs_sq(x)))
    small = rms <= min_rms
    masked = jnp.where(small, jnp.ones_like(x), x)
    return jnp.where(small, jnp.asarray(min_rms, dtype=rms.dtype),
                     jnp.sqrt(jnp.mean(abs_sq(masked))))


def scale_by_param_block_rms(min_scale=1e-3):
    """Scale each leaf of the updates by max(rms(param), min_scale) (Adafactor's relative
    step size). Needs params.

    >>> optim.chain(optim.scale_by_factored_rms(), optim.scale_by_param_block_rms())
    """
    where = "scale_by_param_block_rms"
    min_scale = chk.non_negative(where, "min_scale", min_scale)

    def update_fn(updates, state, params=None):
        chk.need_params(where, params, updates)
        return tree_map(lambda u, p: u * _safe_rms(jnp.asarray(p), min_scale).astype(u.dtype),
                        updates, params), state

    return GradientTransformation(init_empty_state, update_fn)


class _WeightDecayScheduleState(NamedTuple):
    count: Any  # 0-d int32


def _add_decayed_weights_schedule(schedule, mask):
    """add_decayed_weights with a scheduled weight decay (optax accepts either)."""
    def init_fn(params):
        del params
        return _WeightDecayScheduleState(count=jnp.zeros([], jnp.int32))

    def update_fn(updates, state, params=None):
        chk.need_params("adafactor", params, updates)
        chk.state_type("adafactor", state, _WeightDecayScheduleState)
        s = schedule(state.count)
        out = tree_map(lambda g, p: g + jnp.asarray(s, g.dtype) * p, updates, params)
        return out, _WeightDecayScheduleState(count=safe_increment(state.count))

    t = GradientTransformation(init_fn, update_fn)
    if mask is not None:
        from .wrappers import masked
        return masked(t, mask)
    return t


def adafactor(learning_rate=None, min_dim_size_to_factor=128, decay_rate=0.8,
              decay_offset=0, multiply_by_parameter_scale=True, clipping_threshold=1.0,
              momentum=None, dtype_momentum=jnp.float32, weight_decay_rate=None, eps=1e-30,
              factored=True, weight_decay_mask=None):
    """Adafactor, as optax builds it: chain(scale_by_factored_rms, clip_by_block_rms
    (clipping_threshold), scale_by_learning_rate(lr, flip_sign=False),
    scale_by_param_block_rms (multiply_by_parameter_scale), ema(momentum, debias=False),
    add_decayed_weights(weight_decay_rate, weight_decay_mask), scale(-1)); the optional
    parts are left out when their argument is None/False. Needs params.

    >>> opt = optim.adafactor(learning_rate=1e-2)
    """
    where = "adafactor"
    if learning_rate is not None:
        learning_rate = chk.learning_rate(where, learning_rate)
    if clipping_threshold is not None:
        chk.hyperparam(where, "clipping_threshold", clipping_threshold, lo=0.0, lo_open=True)
    if momentum is not None:
        chk.decay_rate(where, "momentum", momentum)
    if weight_decay_rate is not None and not callable(weight_decay_rate):
        chk.hyperparam(where, "weight_decay_rate", weight_decay_rate)
    chk.non_negative(where, "eps", eps)
    if not isinstance(multiply_by_parameter_scale, (bool, np.bool_)):
        raise TypeError(f"{where}: multiply_by_parameter_scale must be a bool, got "
                        f"{multiply_by_parameter_scale!r}")
    tx = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor,
                                eps)]
    if clipping_threshold is not None:
        tx.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        tx.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        tx.append(scale_by_param_block_rms())
    if momentum is not None:
        tx.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        if callable(weight_decay_rate):
            tx.append(_add_decayed_weights_schedule(weight_decay_rate, weight_decay_mask))
        else:
            tx.append(add_decayed_weights(weight_decay_rate, weight_decay_mask))
    tx.append(scale(-1))
    return chain(*tx)

