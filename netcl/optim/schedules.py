"""Schedules: functions of the step count giving a hyperparameter's value (optax's names,
defaults and formulas).

A schedule accepts a Python int or a 0-d int32 netcl array (the count an optimizer keeps in
its state, possibly traced under jit) and returns a 0-d float32 array (constant_schedule
returns its value as is). Constructors validate their static arguments; the schedules
themselves bind only netcl.numpy ops.

    >>> lr = warmup_cosine_decay_schedule(0.0, 1e-3, warmup_steps=100, decay_steps=1000)
    >>> opt = netcl.optim.adam(lr)
"""
import numbers

from .. import numpy as jnp
from . import _checks as chk

__all__ = ["constant_schedule", "polynomial_schedule", "linear_schedule", "exponential_decay",
           "cosine_decay_schedule", "warmup_cosine_decay_schedule",
           "warmup_exponential_decay_schedule", "piecewise_constant_schedule",
           "join_schedules"]


def _count(count):
    """The step count as a 0-d int32 array (an int32 array passes through unchanged)."""
    return jnp.asarray(count, dtype=jnp.int32)


def _int(where, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def constant_schedule(value):
    """Always `value`.

    >>> constant_schedule(0.1)(100)   # 0.1
    """
    chk.hyperparam("constant_schedule", "value", value)
    return lambda count: value


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0):
    """(init - end) * (1 - t / transition_steps)^power + end, with
    t = clip(count - transition_begin, 0, transition_steps). transition_steps <= 0 gives the
    constant init_value; a negative transition_begin counts as 0 (as in optax).

    >>> polynomial_schedule(1.0, 0.0, 2, 10)(5)   # 0.25
    """
    where = "polynomial_schedule"
    init_value = chk.hyperparam(where, "init_value", init_value)
    end_value = chk.hyperparam(where, "end_value", end_value)
    power = chk.hyperparam(where, "power", power)
    transition_steps = _int(where, "transition_steps", transition_steps)
    transition_begin = max(_int(where, "transition_begin", transition_begin), 0)
    if transition_steps <= 0:
        return lambda count: init_value

    def schedule(count):
        t = jnp.clip(_count(count) - transition_begin, 0, transition_steps)
        frac = 1 - t / transition_steps
        return (init_value - end_value) * frac ** power + end_value
    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """Linear from init_value (at transition_begin) to end_value (transition_steps later),
    constant outside.

    >>> linear_schedule(0.0, 1.0, 10)(3)   # 0.3
    """
    where = "linear_schedule"
    init_value = chk.hyperparam(where, "init_value", init_value)
    end_value = chk.hyperparam(where, "end_value", end_value)
    transition_steps = _int(where, "transition_steps", transition_steps)
    transition_begin = max(_int(where, "transition_begin", transition_begin), 0)
    if transition_steps <= 0:
        return lambda count: init_value

    def schedule(count):
        t = jnp.clip(_count(count) - transition_begin, 0, transition_steps)
        frac = 1 - t / transition_steps
        return (init_value - end_value) * frac + end_value
    return schedule


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0,
                      staircase=False, end_value=None):
    """init_value * decay_rate^((count - transition_begin) / transition_steps) (the exponent
    floored when staircase), init_value before transition_begin; end_value bounds it (below
    when decay_rate < 1, above otherwise). transition_steps <= 0 or decay_rate == 0 give the
    constant init_value (as in optax).

    >>> exponential_decay(1.0, transition_steps=10, decay_rate=0.5)(20)   # 0.25
    """
    where = "exponential_decay"
    init_value = chk.hyperparam(where, "init_value", init_value)
    transition_steps = _int(where, "transition_steps", transition_steps)
    decay_rate = chk.hyperparam(where, "decay_rate", decay_rate, lo=0.0)
    transition_begin = max(_int(where, "transition_begin", transition_begin), 0)
    if end_value is not None:
        end_value = chk.hyperparam(where, "end_value", end_value)
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value
    clip_fn = jnp.maximum if decay_rate < 1.0 else jnp.minimum

    def schedule(count):
        t = _count(count) - transition_begin
        p = t / transition_steps
        if staircase:
            p = jnp.floor(p)
        value = jnp.where(t <= 0, jnp.asarray(init_value, jnp.float32),
                          init_value * jnp.power(decay_rate, p))
        if end_value is not None:
            value = clip_fn(value, end_value)
        return value
    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """init_value * ((1 - alpha) * c^exponent + alpha), c = (1 + cos(pi * t / decay_steps)) / 2,
    t = min(count, decay_steps): from init_value down to alpha * init_value, then constant.

    >>> cosine_decay_schedule(1.0, 100)(50)   # 0.5
    """
    where = "cosine_decay_schedule"
    init_value = chk.hyperparam(where, "init_value", init_value)
    decay_steps = _int(where, "decay_steps", decay_steps)
    if decay_steps <= 0:
        raise ValueError(f"{where}: decay_steps must be positive, got {decay_steps}")
    alpha = chk.hyperparam(where, "alpha", alpha)
    exponent = chk.hyperparam(where, "exponent", exponent)

    def schedule(count):
        t = jnp.minimum(_count(count), decay_steps)
        c = 0.5 * (1 + jnp.cos(jnp.pi * (t / decay_steps)))
        c = jnp.maximum(c, 0.0)  # cos(pi) rounds to just above -1 in float32
        return init_value * ((1 - alpha) * c ** exponent + alpha)
    return schedule


def join_schedules(schedules, boundaries):
    """schedules[0] until boundaries[0], then schedules[1] counted from boundaries[0], ...

    >>> join_schedules([constant_schedule(1.0), linear_schedule(1.0, 0.0, 10)], [5])
    """
    schedules, boundaries = list(schedules), list(boundaries)
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(f"join_schedules: needs one more schedule than boundaries, got "
                         f"{len(schedules)} schedules and {len(boundaries)} boundaries")
    boundaries = [_int("join_schedules", "boundaries", b) for b in boundaries]
    if any(not callable(s) for s in schedules):
        raise TypeError("join_schedules: every schedule must be callable")

    def schedule(count):
        count = _count(count)
        out = jnp.asarray(schedules[0](count), jnp.float32)
        for b, s in zip(boundaries, schedules[1:]):
            out = jnp.where(count < b, out, s(count - b))
        return out
    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps,
                                 end_value=0.0, exponent=1.0):
    """Linear warmup from init_value to peak_value over warmup_steps, then cosine decay to
    end_value at decay_steps (decay_steps counts the warmup too).

    >>> warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=10, decay_steps=110)(60)  # 0.5
    """
    where = "warmup_cosine_decay_schedule"
    peak_value = chk.hyperparam(where, "peak_value", peak_value)
    end_value = chk.hyperparam(where, "end_value", end_value)
    warmup_steps = _int(where, "warmup_steps", warmup_steps)
    decay_steps = _int(where, "decay_steps", decay_steps)
    if decay_steps - warmup_steps <= 0:
        raise ValueError(f"{where}: decay_steps ({decay_steps}) must exceed warmup_steps "
                         f"({warmup_steps}): it counts the warmup steps too")
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)],
        [warmup_steps])


def warmup_exponential_decay_schedule(init_value, peak_value, warmup_steps, transition_steps,
                                      decay_rate, transition_begin=0, staircase=False,
                                      end_value=None):
    """Linear warmup to peak_value over warmup_steps, then exponential_decay from peak_value."""
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         exponential_decay(peak_value, transition_steps, decay_rate, transition_begin,
                           staircase, end_value)],
        [warmup_steps])


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """init_value times the product of every scale whose boundary is <= count.

    >>> piecewise_constant_schedule(1.0, {10: 0.1, 20: 0.1})(15)   # 0.1
    """
    where = "piecewise_constant_schedule"
    init_value = chk.hyperparam(where, "init_value", init_value)
    items = []
    if boundaries_and_scales is not None:
        for b, s in sorted(dict(boundaries_and_scales).items()):
            b = _int(where, "boundaries_and_scales (a boundary)", b)
            s = chk.hyperparam(where, f"boundaries_and_scales[{b}]", s, lo=0.0)
            items.append((b, s))

    def schedule(count):
        count = _count(count)
        v = jnp.full([], init_value, jnp.float32)
        for b, s in items:
            v = jnp.where(count < b, v, v * s)
        return v
    return schedule
