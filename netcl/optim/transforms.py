"""Gradient transformations, one idea each, with optax's names, defaults and semantics.

Each function validates its (static) hyperparameters once, then returns a
`GradientTransformation` whose `update` only binds netcl.numpy ops. Step counts are 0-d int32
arrays in the state, so schedules and bias corrections trace under jit.
"""
from typing import Any, NamedTuple

from .. import lax
from .. import numpy as jnp
from ..tree_util import tree_leaves, tree_map, tree_structure
from . import _checks as chk
from .base import EmptyState, GradientTransformation, identity, init_empty_state
from . import numerics as nm
from .numerics import (abs_sq, safe_increment, safe_norm, tree_cast, tree_full_like,
                       tree_zeros_like, update_moment, update_moment_per_elem_norm)

__all__ = [
    "ScaleState", "ScaleByScheduleState", "TraceState", "ScaleByAdamState", "ScaleByRmsState",
    "ScaleByRmsWithCountState", "ScaleByRStdDevState", "ScaleByRStdDevWithCountState",
    "ScaleByRssState", "ScaleByTrustRatioState", "ScaleByLionState", "AddDecayedWeightsState",
    "AddNoiseState",
    "scale", "scale_by_learning_rate", "scale_by_schedule", "scale_by_adam", "scale_by_rms",
    "scale_by_stddev", "scale_by_rss", "scale_by_trust_ratio", "scale_by_lion", "trace",
    "add_decayed_weights", "add_noise",
]

ScaleState = EmptyState
ScaleByTrustRatioState = EmptyState
AddDecayedWeightsState = EmptyState


def _count0():
    return jnp.zeros([], jnp.int32)


def _times(step, g):
    """step * g in g's dtype: a static number stays weak; an array is cast to g.dtype."""
    if chk.is_static_number(step):
        return g * step
    return jnp.asarray(step, dtype=g.dtype) * g


def _moments(where, updates, state, *fields):
    for f in fields:
        chk.same_structure(where, updates, "updates", getattr(state, f), f"state.{f}")


# ---- scaling by a constant or a schedule -----------------------------------------------------

def scale(step_size):
    """Multiply updates by a fixed `step_size` (any sign: `scale(-lr)` is descent).

    >>> scale(-0.1).update(grads, EmptyState())
    """
    step_size = chk.hyperparam("scale", "step_size", step_size)

    def update_fn(updates, state, params=None):
        del params
        return tree_map(lambda g: _times(step_size, g), updates), state
    return GradientTransformation(init_empty_state, update_fn)


class ScaleByScheduleState(NamedTuple):
    count: Any  # 0-d int32: updates applied so far


def scale_by_schedule(step_size_fn):
    """Multiply updates by `step_size_fn(count)`, count = number of updates so far (0-based).

    >>> scale_by_schedule(exponential_decay(1.0, 100, 0.5))
    """
    if not callable(step_size_fn):
        raise TypeError(f"scale_by_schedule: step_size_fn must be callable (a schedule), got "
                        f"{type(step_size_fn).__name__}")

    def init_fn(params):
        del params
        return ScaleByScheduleState(count=_count0())

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("scale_by_schedule", state, ScaleByScheduleState)
        step_size = step_size_fn(state.count)
        updates = tree_map(lambda g: _times(step_size, g), updates)
        return updates, ScaleByScheduleState(count=safe_increment(state.count))
    return GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate=None, *, flip_sign=True):
    """Multiply by -learning_rate (or +learning_rate with flip_sign=False); a float >= 0 or a
    schedule. `None` is the identity.

    >>> chain(scale_by_adam(), scale_by_learning_rate(1e-3))
    """
    if learning_rate is None:
        return identity()
    learning_rate = chk.learning_rate("scale_by_learning_rate", learning_rate)
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: m * learning_rate(count))
    return scale(m * learning_rate)


# ---- momentum -----------------------------------------------------------------------------

class TraceState(NamedTuple):
    trace: Any


def trace(decay, nesterov=False, accumulator_dtype=None):
    """Momentum: t <- g + decay * t; updates t (or g + decay * t with nesterov).

    >>> chain(trace(0.9), scale(-0.1))     # SGD with momentum
    """
    decay = chk.decay_rate("trace", "decay", decay)

    def init_fn(params):
        return TraceState(trace=tree_zeros_like(params, accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("trace", state, TraceState)
        _moments("trace", updates, state, "trace")
        new_trace = tree_map(lambda g, t: g + decay * t, updates, state.trace)
        if nesterov:
            updates = tree_map(lambda g, t: g + decay * t, updates, new_trace)
        else:
            updates = new_trace
        return updates, TraceState(trace=tree_cast(new_trace, accumulator_dtype))
    return GradientTransformation(init_fn, update_fn)


# ---- adaptive scalings --------------------------------------------------------------------

class ScaleByAdamState(NamedTuple):
    count: Any  # 0-d int32
    mu: Any
    nu: Any


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *, nesterov=False):
    """Adam's rescaling: m_hat / (sqrt(v_hat + eps_root) + eps) with bias-corrected moving
    averages of g and g^2 (nesterov=True: NAdam's look-ahead first moment).

    >>> chain(scale_by_adam(), scale(-1e-3))    # adam(1e-3)
    """
    b1 = chk.decay_rate("scale_by_adam", "b1", b1, allow_one=False)
    b2 = chk.decay_rate("scale_by_adam", "b2", b2, allow_one=False)
    eps = chk.non_negative("scale_by_adam", "eps", eps)
    eps_root = chk.non_negative("scale_by_adam", "eps_root", eps_root)

    def init_fn(params):
        return ScaleByAdamState(count=_count0(), mu=tree_zeros_like(params, mu_dtype),
                                nu=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("scale_by_adam", state, ScaleByAdamState)
        _moments("scale_by_adam", updates, state, "mu", "nu")
        mu = update_moment(updates, state.mu, b1, 1)
        nu = update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        if nesterov:
            mu_hat = tree_map(lambda m, g: b1 * m + (1 - b1) * g,
                              nm.bias_correction(mu, b1, safe_increment(count)),
                              nm.bias_correction(updates, b1, count))
        else:
            mu_hat = nm.bias_correction(mu, b1, count)
        nu_hat = nm.bias_correction(nu, b2, count)
        if chk.is_static_number(eps_root) and eps_root == 0:
            updates = tree_map(lambda m, v: m / (jnp.sqrt(v) + eps), mu_hat, nu_hat)
        else:
            updates = tree_map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return updates, ScaleByAdamState(count=count, mu=tree_cast(mu, mu_dtype), nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRmsState(NamedTuple):
    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    count: Any  # 0-d int32
    nu: Any


def _rms_scaling(nu_hat, eps, eps_in_sqrt, mu_hat=None):
    if mu_hat is None:
        var = nu_hat
    else:
        var = tree_map(lambda m, n: n - abs_sq(m), mu_hat, nu_hat)
    if eps_in_sqrt:
        return tree_map(lambda n: lax.rsqrt(n + eps), var)
    return tree_map(lambda n: 1 / (jnp.sqrt(n) + eps), var)


def scale_by_rms(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
                 bias_correction=False):
    """RMSProp's rescaling: g / sqrt(nu + eps), nu the moving average of g^2 started at
    `initial_scale` (eps_in_sqrt=False: g / (sqrt(nu) + eps); bias_correction: divide nu by
    1 - decay^t, which needs a step count in the state).

    >>> chain(scale_by_rms(), scale(-1e-3))     # rmsprop(1e-3)
    """
    decay = chk.decay_rate("scale_by_rms", "decay", decay, allow_one=not bias_correction)
    eps = chk.non_negative("scale_by_rms", "eps", eps)
    initial_scale = chk.non_negative("scale_by_rms", "initial_scale", initial_scale)
    corrected = bias_correction
    state_cls = ScaleByRmsWithCountState if corrected else ScaleByRmsState

    def init_fn(params):
        nu = tree_full_like(params, initial_scale)
        return ScaleByRmsWithCountState(_count0(), nu) if corrected else ScaleByRmsState(nu)

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("scale_by_rms", state, state_cls)
        _moments("scale_by_rms", updates, state, "nu")
        nu = update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if corrected:
            count = safe_increment(state.count)
            nu_hat = nm.bias_correction(nu, decay, count)
        else:
            nu_hat = nu
        scaling = _rms_scaling(nu_hat, eps, eps_in_sqrt)
        updates = tree_map(lambda s, g: s * g, scaling, updates)
        return updates, (ScaleByRmsWithCountState(count, nu) if corrected
                         else ScaleByRmsState(nu))
    return GradientTransformation(init_fn, update_fn)


class ScaleByRStdDevState(NamedTuple):
    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    count: Any  # 0-d int32
    mu: Any
    nu: Any


def scale_by_stddev(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
                    bias_correction=False):
    """Centered RMSProp: g / sqrt(nu - mu^2 + eps) with mu, nu the moving averages of g, g^2.

    >>> chain(scale_by_stddev(), scale(-1e-3))  # rmsprop(1e-3, centered=True)
    """
    decay = chk.decay_rate("scale_by_stddev", "decay", decay, allow_one=not bias_correction)
    eps = chk.non_negative("scale_by_stddev", "eps", eps)
    initial_scale = chk.non_negative("scale_by_stddev", "initial_scale", initial_scale)
    corrected = bias_correction
    state_cls = ScaleByRStdDevWithCountState if corrected else ScaleByRStdDevState

    def init_fn(params):
        mu, nu = tree_zeros_like(params), tree_full_like(params, initial_scale)
        if corrected:
            return ScaleByRStdDevWithCountState(_count0(), mu, nu)
        return ScaleByRStdDevState(mu, nu)

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("scale_by_stddev", state, state_cls)
        _moments("scale_by_stddev", updates, state, "mu", "nu")
        mu = update_moment(updates, state.mu, decay, 1)
        nu = update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if corrected:
            count = safe_increment(state.count)
            mu_hat, nu_hat = (nm.bias_correction(mu, decay, count),
                              nm.bias_correction(nu, decay, count))
        else:
            mu_hat, nu_hat = mu, nu
        scaling = _rms_scaling(nu_hat, eps, eps_in_sqrt, mu_hat)
        updates = tree_map(lambda s, g: s * g, scaling, updates)
        return updates, (ScaleByRStdDevWithCountState(count, mu, nu) if corrected
                         else ScaleByRStdDevState(mu, nu))
    return GradientTransformation(init_fn, update_fn)


class ScaleByRssState(NamedTuple):
    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad's rescaling: g / sqrt(s + eps), s the running sum of g^2 (started at
    `initial_accumulator_value`); 0 where s is 0.

    >>> chain(scale_by_rss(), scale(-0.1))      # adagrad(0.1)
    """
    initial_accumulator_value = chk.non_negative("scale_by_rss", "initial_accumulator_value",
                                                 initial_accumulator_value)
    eps = chk.non_negative("scale_by_rss", "eps", eps)

    def init_fn(params):
        return ScaleByRssState(sum_of_squares=tree_full_like(params, initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("scale_by_rss", state, ScaleByRssState)
        _moments("scale_by_rss", updates, state, "sum_of_squares")
        sos = tree_map(lambda g, t: abs_sq(g) + t, updates, state.sum_of_squares)
        inv = tree_map(lambda t: jnp.where(t > 0, lax.rsqrt(t + eps), jnp.zeros_like(t)), sos)
        updates = tree_map(lambda s, g: s * g, inv, updates)
        return updates, ScaleByRssState(sum_of_squares=sos)
    return GradientTransformation(init_fn, update_fn)


def scale_by_trust_ratio(min_norm=0.0, trust_coefficient=1.0, eps=0.0):
    """LAMB/LARS layer-wise scaling: each leaf u times
    trust_coefficient * ||param|| / (||u|| + eps), or 1 where either norm is zero. Needs params.

    >>> chain(scale_by_adam(eps=1e-6), scale_by_trust_ratio(), scale(-1e-3))  # lamb
    """
    min_norm = chk.non_negative("scale_by_trust_ratio", "min_norm", min_norm)
    trust_coefficient = chk.non_negative("scale_by_trust_ratio", "trust_coefficient",
                                         trust_coefficient)
    eps = chk.non_negative("scale_by_trust_ratio", "eps", eps)

    def one(u, p):
        p_norm = safe_norm(p, min_norm)
        u_norm = safe_norm(u, min_norm)
        ratio = trust_coefficient * p_norm / (u_norm + eps)
        zero = jnp.logical_or(p_norm == 0.0, u_norm == 0.0)
        ratio = jnp.where(zero, jnp.ones_like(ratio), ratio)
        return u * ratio.astype(u.dtype)

    def update_fn(updates, state, params=None):
        chk.need_params("scale_by_trust_ratio", params, updates)
        return tree_map(one, updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


class ScaleByLionState(NamedTuple):
    count: Any  # 0-d int32
    mu: Any


def scale_by_lion(b1=0.9, b2=0.99, mu_dtype=None, *, mode="hard", smooth_beta=1.0):
    """Lion's update: sign((1 - b1) * g + b1 * m), then m <- (1 - b2) * g + b2 * m.
    mode="smooth" uses tanh(smooth_beta * x) for sign(x); mode="refined" keeps x where
    |x| < 1 and saturates to sign(x) beyond.

    >>> chain(scale_by_lion(), scale(-1e-4))    # lion(1e-4, weight_decay=0)
    """
    b1 = chk.decay_rate("scale_by_lion", "b1", b1)
    b2 = chk.decay_rate("scale_by_lion", "b2", b2)
    if mode not in ("hard", "smooth", "refined"):
        raise ValueError(f"scale_by_lion: mode must be 'hard', 'smooth' or 'refined', got "
                         f"{mode!r}")
    smooth_beta = chk.hyperparam("scale_by_lion", "smooth_beta", smooth_beta)

    def direction(g, m):
        x = (1 - b1) * g + b1 * m
        if mode == "smooth":
            return jnp.tanh(smooth_beta * x)
        if mode == "refined":
            return jnp.where(jnp.abs(x) < 1.0, x, jnp.sign(x))
        return jnp.sign(x)

    def init_fn(params):
        return ScaleByLionState(count=_count0(), mu=tree_zeros_like(params, mu_dtype))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("scale_by_lion", state, ScaleByLionState)
        _moments("scale_by_lion", updates, state, "mu")
        new_updates = tree_map(direction, updates, state.mu)
        mu = update_moment(updates, state.mu, b2, 1)
        return new_updates, ScaleByLionState(count=safe_increment(state.count),
                                             mu=tree_cast(mu, mu_dtype))
    return GradientTransformation(init_fn, update_fn)


# ---- additive terms -----------------------------------------------------------------------

def add_decayed_weights(weight_decay=0.0, mask=None):
    """updates + weight_decay * params (decoupled weight decay; needs params). `mask`: a tree
    of bools (or a function of params giving one) selecting the leaves that decay.

    >>> chain(scale_by_adam(), add_decayed_weights(1e-4), scale(-1e-3))   # adamw
    """
    weight_decay = chk.hyperparam("add_decayed_weights", "weight_decay", weight_decay)

    def update_fn(updates, state, params=None):
        chk.need_params("add_decayed_weights", params, updates)
        return tree_map(lambda g, p: g + _times(weight_decay, p), updates, params), state

    t = GradientTransformation(init_empty_state, update_fn)
    if mask is not None:
        from .wrappers import masked
        return masked(t, mask)
    return t


class AddNoiseState(NamedTuple):
    count: Any     # 0-d int32
    rng_key: Any   # uint32[2]


def add_noise(eta, gamma, key=None, *, seed=None):
    """Add Gaussian noise of variance eta / (1 + t)^gamma (t = steps so far) to each update.
    `key`: a PRNG key (netcl.random.PRNGKey) or an int seed (older optax's third argument);
    `seed`: an int seed; neither given: seed 0.

    >>> chain(add_noise(0.01, 0.55, netcl.random.PRNGKey(0)), scale(-0.1))    # noisy_sgd
    """
    from .. import random
    eta = chk.non_negative("add_noise", "eta", eta)
    gamma = chk.non_negative("add_noise", "gamma", gamma)
    if key is not None and seed is not None:
        raise ValueError("add_noise: give key or seed, not both")
    if key is None or chk.is_static_number(key):
        seed = int(key if key is not None else (seed or 0))
        key = None

    def init_fn(params):
        del params
        return AddNoiseState(count=_count0(),
                             rng_key=random.PRNGKey(seed) if key is None else key)

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("add_noise", state, AddNoiseState)
        leaves = tree_leaves(updates)
        count = safe_increment(state.count)
        std = jnp.sqrt(eta / count.astype(jnp.float32) ** gamma)
        keys = random.split(state.rng_key, len(leaves) + 1)
        noisy = [g + std.astype(g.dtype) * random.normal(keys[i + 1], g.shape, g.dtype)
                 for i, g in enumerate(leaves)]
        return (tree_structure(updates).unflatten(noisy),
                AddNoiseState(count=count, rng_key=keys[0]))
    return GradientTransformation(init_fn, update_fn)
