"""Optimizers as ``(init_fn, update_fn, params_fn)`` triples of pure functions: the API of
``jax.example_libraries.optimizers`` on netcl arrays.

::

    init_fn(params)                  -> opt_state     (params: any pytree of arrays)
    update_fn(i, grads, opt_state)   -> opt_state     (i: step index, int or 0-d array)
    params_fn(opt_state)             -> params        (params_fn(init_fn(p)) == p)

Example::

    from netcl.example_libraries import optimizers, stax
    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)

    @netcl.jit
    def step(i, opt_state, x, y):
        g = netcl.grad(loss)(get_params(opt_state), x, y)
        return opt_update(i, g, opt_state)

Step sizes are numbers or schedules (callables of the step index, see ``exponential_decay``
and friends). Hyperparameters are checked when an optimizer is made, and ``update_fn`` checks
the step index, the gradient tree and the state before it computes anything, so a mistake
raises a TypeError/ValueError naming the function and the argument instead of producing NaNs.

Unlike JAX with x64 enabled, a schedule whose value comes out float64 (a traced step index
divided by an int) does not promote float32 parameters: every leaf keeps its dtype, so a
jitted step sees the same signature on every call.
"""
import functools
import numbers
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import AnyArray as Array
from ..tree_util import (register_pytree_node, tree_flatten, tree_flatten_with_path, keystr,
                         tree_map, tree_unflatten)

__all__ = ["Optimizer", "OptimizerState", "JoinPoint", "optimizer", "sgd", "momentum",
           "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads",
           "unpack_optimizer_state", "pack_optimizer_state"]

Step = Any                     # Python int or 0-d (possibly traced) integer array
Schedule = Callable[[Step], Any]

# The state of a whole parameter tree is the per-leaf states, each flattened: `packed_state`
# holds one leaf list per parameter leaf, `tree_def` the parameter tree and `subtree_defs`
# each per-leaf state's structure. The treedefs are aux data, so jit traces only the arrays.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    """What an optimizer constructor returns: ``init_fn, update_fn, params_fn``."""
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


# ---- argument checks -------------------------------------------------------------------------

def _real(where, name, value, lo=None, hi=None, lo_open=False, hi_open=False):
    """A scalar hyperparameter: a static number must lie in the interval and comes back as a
    Python float (weakly typed, as in JAX); a 0-d netcl array passes as is, since its value
    may be traced."""
    if isinstance(value, Array):
        if value.ndim != 0:
            raise TypeError(f"{where}: {name} must be a scalar, got an array of shape "
                            f"{tuple(value.shape)}")
        return value
    if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where}: {name} must be a real number or a 0-d netcl array, got "
                        f"{type(value).__name__} {value!r}")
    v = float(value)
    bad = v != v
    bad = bad or (lo is not None and (v < lo or (lo_open and v == lo)))
    bad = bad or (hi is not None and (v > hi or (hi_open and v == hi)))
    if bad:
        interval = ("(" if lo_open or lo is None else "[") + \
            ("-inf" if lo is None else f"{lo:g}") + ", " + \
            ("inf" if hi is None else f"{hi:g}") + (")" if hi_open or hi is None else "]")
        raise ValueError(f"{where}: {name} must be in {interval}, got {value!r}")
    return v


def _rate(where, name, value, allow_one=True):
    return _real(where, name, value, 0.0, 1.0, hi_open=not allow_one)


def _step_size(where, step_size):
    """A step size: a schedule (any callable) or a number >= 0."""
    if callable(step_size):
        return step_size
    return constant(_real(where, "step_size", step_size, lo=0.0))


def _check_step(where, i):
    """The step index `i`: a non-negative number or a 0-d numeric array (possibly traced).
    A negative index would make adam's bias correction divide by zero."""
    if isinstance(i, Array):
        if i.ndim != 0 or dtypes.kind(np.dtype(i.dtype)) not in "iuf":
            raise TypeError(f"{where}: the step index i must be a scalar int, got an array of "
                            f"shape {tuple(i.shape)} and dtype {i.dtype}")
        return i
    if isinstance(i, (np.ndarray, np.generic)) and np.ndim(i) == 0:
        i = i.item()
    if isinstance(i, bool) or not isinstance(i, numbers.Real):
        raise TypeError(f"{where}: the step index i must be an int or a 0-d array, got "
                        f"{type(i).__name__} {i!r}")
    if not i >= 0:
        raise ValueError(f"{where}: the step index i must be >= 0, got {i!r}")
    return i


def _unpack_state(where, opt_state):
    if not isinstance(opt_state, OptimizerState):
        raise TypeError(f"{where}: opt_state must be the OptimizerState made by init_fn (or "
                        f"pack_optimizer_state), got {type(opt_state).__name__}")
    states_flat, tree, subtrees = opt_state
    if len(states_flat) != tree.num_leaves or len(subtrees) != tree.num_leaves:
        raise ValueError(f"{where}: opt_state is inconsistent: its parameter tree has "
                         f"{tree.num_leaves} leaves but it holds {len(states_flat)} states "
                         f"and {len(subtrees)} state structures")
    return states_flat, tree, subtrees


def _leaf_shape(where, name, x):
    if isinstance(x, Array):
        return tuple(x.shape)
    if isinstance(x, (np.ndarray, np.generic, numbers.Number)):
        return tuple(np.shape(x))
    raise TypeError(f"{where}: every leaf of {name} must be an array or a number, got "
                    f"{type(x).__name__}")


# ---- the decorator ---------------------------------------------------------------------------

def optimizer(opt_maker):
    """Lift an optimizer written for one array to one over pytrees of arrays.

    `opt_maker(*args)` returns ``(init, update, get_params)`` acting on a single array:
    ``init(x0) -> state``, ``update(i, g, state) -> state`` (state: any pytree of arrays, the
    same structure in and out) and ``get_params(state) -> x``. The decorated constructor
    returns an `Optimizer` whose functions take whole parameter trees.

    >>> @optimizer
    ... def signsgd(step_size):
    ...     return (lambda x: x, lambda i, g, x: x - step_size * jnp.sign(g), lambda x: x)
    >>> opt_init, opt_update, get_params = signsgd(0.01)
    """
    if not callable(opt_maker):
        raise TypeError(f"optimizer: opt_maker must be callable, got {type(opt_maker).__name__}")
    name = getattr(opt_maker, "__name__", "optimizer")

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        fns = opt_maker(*args, **kwargs)
        if not (isinstance(fns, (tuple, list)) and len(fns) == 3
                and all(map(callable, fns))):
            raise TypeError(f"optimizer: {name} must return an (init, update, get_params) "
                            f"triple of functions, got {fns!r}")
        init, update, get_params = fns

        def init_fn(x0_tree):
            where = f"optimizers.{name} init_fn"
            x0_flat, tree = tree_flatten(x0_tree)
            for x in x0_flat:
                _leaf_shape(where, "params", x)
            states_flat, subtrees = [], []
            for x0 in x0_flat:
                leaves, sub = tree_flatten(init(jnp.asarray(x0)))
                states_flat.append(leaves)
                subtrees.append(sub)
            return OptimizerState(tuple(states_flat), tree, tuple(subtrees))

        def update_fn(i, grad_tree, opt_state):
            where = f"optimizers.{name} update_fn"
            states_flat, tree, subtrees = _unpack_state(where, opt_state)
            i = _check_step(where, i)
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(f"{where}: grads do not have the structure of the parameters "
                                f"the state was initialised with\n  params: {tree!r}\n"
                                f"  grads:  {grad_tree_def!r}")
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, states_flat)]
            for k, (g, st) in enumerate(zip(grad_flat, states)):
                want = _leaf_shape(where, "the state", get_params(st))
                if _leaf_shape(where, "grads", g) != want:
                    path = keystr(tree_flatten_with_path(grad_tree)[0][k][0])
                    raise ValueError(f"{where}: grads{path} has shape {tuple(np.shape(g))} "
                                     f"but the parameter has shape {want}")
            new_flat = []
            for g, st, sub in zip(grad_flat, states, subtrees):
                leaves, sub2 = tree_flatten(update(i, g, st))
                if sub2 != sub:
                    raise TypeError(f"{where}: the update changed the state's structure from "
                                    f"{sub!r} to {sub2!r}")
                new_flat.append(leaves)
            return OptimizerState(tuple(new_flat), tree, tuple(subtrees))

        def params_fn(opt_state):
            states_flat, tree, subtrees = _unpack_state(f"optimizers.{name} params_fn",
                                                        opt_state)
            return tree_unflatten(tree, [get_params(tree_unflatten(s, leaves))
                                         for s, leaves in zip(subtrees, states_flat)])

        for fn, part in ((init_fn, "init_fn"), (update_fn, "update_fn"),
                         (params_fn, "params_fn")):
            fn.__name__ = fn.__qualname__ = f"{name}.{part}"
        return Optimizer(init_fn, update_fn, params_fn)
    return tree_opt_maker


def _lr(step_size, i, x):
    """step_size(i), in x's dtype when it is an array of another float dtype (see the module
    docstring); Python numbers stay weakly typed."""
    lr = step_size(i)
    if isinstance(lr, np.generic):
        lr = lr.item()
    if isinstance(lr, Array) and lr.dtype != x.dtype and jnp.issubdtype(x.dtype, jnp.floating):
        lr = lr.astype(x.dtype)
    return lr


def _first(state):
    return state[0]


def _inv_sqrt_or_zero(a):
    # where a == 0 the gradient seen so far is zero: no step, instead of 0 * inf = NaN
    return jnp.where(a > 0, 1.0 / jnp.sqrt(a), 0.0)


# ---- optimizers ------------------------------------------------------------------------------

@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x -= step_size(i) * g``.

    >>> opt_init, opt_update, get_params = sgd(0.1)
    >>> state = opt_update(0, grads, opt_init(params))
    """
    step_size = _step_size("optimizers.sgd", step_size)
    return (lambda x0: x0,
            lambda i, g, x: x - _lr(step_size, i, x) * g,
            lambda x: x)


@optimizer
def momentum(step_size, mass):
    """SGD with momentum: ``v = mass * v + g; x -= step_size(i) * v``; mass in [0, 1].

    >>> opt_init, opt_update, get_params = momentum(0.1, mass=0.9)
    """
    step_size = _step_size("optimizers.momentum", step_size)
    mass = _rate("optimizers.momentum", "mass", mass)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _lr(step_size, i, x) * velocity, velocity
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, _first)


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum: ``v = mass * v + g; x -= step_size(i) * (mass * v + g)``.

    >>> opt_init, opt_update, get_params = nesterov(0.1, mass=0.9)
    """
    step_size = _step_size("optimizers.nesterov", step_size)
    mass = _rate("optimizers.nesterov", "mass", mass)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _lr(step_size, i, x) * (mass * velocity + g), velocity
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, _first)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the normalised gradient:
    ``G += g**2; m = (1 - momentum) * g / sqrt(G) + momentum * m; x -= step_size(i) * m``.

    >>> opt_init, opt_update, get_params = adagrad(0.1)
    """
    step_size = _step_size("optimizers.adagrad", step_size)
    mom = _rate("optimizers.adagrad", "momentum", momentum)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1.0 - mom) * (g * _inv_sqrt_or_zero(g_sq)) + mom * m
        return x - _lr(step_size, i, x) * m, g_sq, m
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first)


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: ``a = gamma * a + (1 - gamma) * g**2; x -= step_size(i) * g / sqrt(a + eps)``.

    >>> opt_init, opt_update, get_params = rmsprop(1e-3, gamma=0.9)
    """
    step_size = _step_size("optimizers.rmsprop", step_size)
    gamma = _rate("optimizers.rmsprop", "gamma", gamma)
    eps = _real("optimizers.rmsprop", "eps", eps, lo=0.0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - _lr(step_size, i, x) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, _first)


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum: ``mom = momentum * mom + step_size(i) * g / sqrt(a + eps);
    x -= mom`` (``a`` as in `rmsprop`).

    >>> opt_init, opt_update, get_params = rmsprop_momentum(1e-3, momentum=0.9)
    """
    where = "optimizers.rmsprop_momentum"
    step_size = _step_size(where, step_size)
    gamma = _rate(where, "gamma", gamma)
    eps = _real(where, "eps", eps, lo=0.0)
    mass = _rate(where, "momentum", momentum)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = mass * mom + _lr(step_size, i, x) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first)


def _bias_correction(b, i, dtype):
    # 1 - b**(i+1) with b in the state's dtype, so a float64 host constant does not promote
    return 1 - jnp.asarray(b, dtype) ** (i + 1)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba 2015); b1 and b2 in [0, 1), eps >= 0.

    >>> opt_init, opt_update, get_params = adam(1e-3)
    >>> opt_state = opt_update(0, grads, opt_init(params))
    """
    where = "optimizers.adam"
    step_size = _step_size(where, step_size)
    b1 = _rate(where, "b1", b1, allow_one=False)
    b2 = _rate(where, "b2", b2, allow_one=False)
    eps = _real(where, "eps", eps, lo=0.0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / _bias_correction(b1, i, m.dtype)
        vhat = v / _bias_correction(b2, i, m.dtype)
        return x - _lr(step_size, i, x) * mhat / (jnp.sqrt(vhat) + eps), m, v
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first)


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with the infinity norm: ``u = max(b2 * u, |g|)``; b1 in [0, 1),
    b2 in [0, 1], eps >= 0.

    >>> opt_init, opt_update, get_params = adamax(2e-3)
    """
    where = "optimizers.adamax"
    step_size = _step_size(where, step_size)
    b1 = _rate(where, "b1", b1, allow_one=False)
    b2 = _rate(where, "b2", b2)
    eps = _real(where, "eps", eps, lo=0.0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        lr = _lr(step_size, i, x) / _bias_correction(b1, i, m.dtype)
        return x - lr * m / (u + eps), m, u
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per index of every axis (memory linear in the
    sum of the dimensions rather than their product), with momentum.

    The state of a parameter is ``(x, m, vs)``, ``vs[j]`` of shape ``(x.shape[j],)`` (one of
    the parameter's shape for a 0-d parameter). JAX also keeps the shape as int leaves,
    which jit would trace; the values computed are the same.

    >>> opt_init, opt_update, get_params = sm3(0.1)
    """
    step_size = _step_size("optimizers.sm3", step_size)
    mass = _rate("optimizers.sm3", "momentum", momentum)

    def init(x0):
        vs = [jnp.zeros(n, x0.dtype) for n in x0.shape] if x0.ndim else [jnp.zeros_like(x0)]
        return x0, jnp.zeros_like(x0), vs

    def update(i, g, state):
        x, m, vs = state
        nd = x.ndim
        if nd == 0:
            accum = vs[0] + jnp.square(g)
        else:
            # v_j broadcast along axis j: each entry's bound is the min over its axes
            cols = [v.reshape(tuple(-1 if k == j else 1 for k in range(nd)))
                    for j, v in enumerate(vs)]
            accum = functools.reduce(jnp.minimum, cols) + jnp.square(g)
        m = (1.0 - mass) * (g * _inv_sqrt_or_zero(accum)) + mass * m
        x = x - _lr(step_size, i, x) * m
        if nd == 0:
            return x, m, [accum]
        vs = [jnp.max(accum, axis=tuple(k for k in range(nd) if k != j)) if nd > 1 else accum
              for j in range(nd)]
        return x, m, vs
    return init, update, _first


# ---- step-size schedules ---------------------------------------------------------------------

def constant(step_size):
    """The schedule that is `step_size` at every step.

    >>> constant(0.1)(1000)   # 0.1
    """
    value = _real("optimizers.constant", "step_size", step_size)
    return lambda i: value


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``; decay_steps > 0, decay_rate >= 0.

    >>> exponential_decay(1.0, decay_steps=10, decay_rate=0.5)(20)   # 0.25
    """
    where = "optimizers.exponential_decay"
    step_size = _real(where, "step_size", step_size)
    decay_steps = _real(where, "decay_steps", decay_steps, lo=0.0, lo_open=True)
    decay_rate = _real(where, "decay_rate", decay_rate, lo=0.0)
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)``, with ``floor(i / decay_steps)`` when
    staircase; decay_steps > 0, decay_rate >= 0 (a negative rate divides by zero at some step).

    >>> inverse_time_decay(1.0, decay_steps=10, decay_rate=1.0)(10)   # 0.5
    """
    where = "optimizers.inverse_time_decay"
    step_size = _real(where, "step_size", step_size)
    decay_steps = _real(where, "decay_steps", decay_steps, lo=0.0, lo_open=True)
    decay_rate = _real(where, "decay_rate", decay_rate, lo=0.0)
    if not isinstance(staircase, (bool, np.bool_)):
        raise TypeError(f"{where}: staircase must be a bool, got {type(staircase).__name__}")
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From step_size to final_step_size over decay_steps, then constant:
    ``(step_size - final) * (1 - min(i, decay_steps) / decay_steps) ** power + final``;
    decay_steps > 0, power >= 0.

    >>> polynomial_decay(1.0, decay_steps=10, final_step_size=0.0)(5)   # 0.5
    """
    where = "optimizers.polynomial_decay"
    step_size = _real(where, "step_size", step_size)
    decay_steps = _real(where, "decay_steps", decay_steps, lo=0.0, lo_open=True)
    final_step_size = _real(where, "final_step_size", final_step_size)
    power = _real(where, "power", power, lo=0.0)

    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        return (1 - step_num / decay_steps) ** power * (step_size - final_step_size) \
            + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` where k is the number of boundaries strictly below i; len(values) must
    be len(boundaries) + 1 and the boundaries non-decreasing.

    >>> piecewise_constant([100, 200], [1.0, 0.1, 0.01])(150)   # 0.1
    """
    where = "optimizers.piecewise_constant"
    b_host, v_host = np.asarray(boundaries), np.asarray(values)
    if b_host.ndim != 1 or v_host.ndim != 1:
        raise ValueError(f"{where}: boundaries and values must be 1-d sequences, got shapes "
                         f"{b_host.shape} and {v_host.shape}")
    if b_host.shape[0] != v_host.shape[0] - 1:
        raise ValueError(f"{where}: values must be one longer than boundaries, got "
                         f"{v_host.shape[0]} values and {b_host.shape[0]} boundaries")
    for name, a in (("boundaries", b_host), ("values", v_host)):
        if dtypes.kind(a.dtype) not in "iuf":
            raise TypeError(f"{where}: {name} must be real numbers, got dtype {a.dtype}")
    # counting the boundaries below i picks the right piece only when they are sorted
    if np.any(np.diff(b_host) < 0):
        raise ValueError(f"{where}: boundaries must be non-decreasing, got {b_host.tolist()}")
    b_arr, v_arr = jnp.array(b_host), jnp.array(v_host)

    def schedule(i):
        if not isinstance(i, Array):     # a host count: no kernel for the lookup
            return v_arr[int(np.sum(np.asarray(i) > b_host))]
        return v_arr[jnp.sum(i > b_arr)]
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule as is, or a scalar as the `constant` schedule.

    >>> make_schedule(0.1)(5)   # 0.1
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    try:
        return constant(scalar_or_schedule)
    except TypeError:
        raise TypeError(f"optimizers.make_schedule: expected a callable schedule or a scalar, "
                        f"got {type(scalar_or_schedule).__name__} "
                        f"{scalar_or_schedule!r}") from None


# ---- utilities -------------------------------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of all leaves of a pytree of arrays together (e.g. for weight decay).

    >>> l2_norm({'a': jnp.full(4, 1.0), 'b': [jnp.full(5, 0.0)]})   # 2.0
    """
    leaves, _ = tree_flatten(tree)
    for x in leaves:
        _leaf_shape("optimizers.l2_norm", "tree", x)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale a gradient tree down so that its `l2_norm` is at most max_norm (> 0; at 0 a zero
    gradient would become 0/0).

    >>> grads = clip_grads(grads, 1.0)
    """
    max_norm = _real("optimizers.clip_grads", "max_norm", max_norm, lo=0.0, lo_open=True)
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# ---- serialisation ---------------------------------------------------------------------------

class JoinPoint:
    """A leaf of the parameter tree in `unpack_optimizer_state`'s output, holding that
    parameter's own state tree (`subtree`)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):       # containers of arrays look iterable to serialisers
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """An OptimizerState as the parameter tree with a `JoinPoint` (holding that parameter's
    state tree) at each leaf: plain containers, for saving.

    >>> marked = unpack_optimizer_state(opt_state)
    >>> opt_state = pack_optimizer_state(marked)
    """
    states_flat, tree, subtrees = _unpack_state("optimizers.unpack_optimizer_state", opt_state)
    return tree_unflatten(tree, [JoinPoint(tree_unflatten(s, leaves))
                                 for s, leaves in zip(subtrees, states_flat)])


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`.

    >>> opt_state = pack_optimizer_state(unpack_optimizer_state(opt_state))
    """
    joins, tree = tree_flatten(marked_pytree)
    for j in joins:
        if not isinstance(j, JoinPoint):
            raise TypeError(f"optimizers.pack_optimizer_state: every leaf of marked_pytree "
                            f"must be a JoinPoint (as unpack_optimizer_state makes), got "
                            f"{type(j).__name__}")
    flat = [tree_flatten(j.subtree) for j in joins]
    return OptimizerState(tuple(leaves for leaves, _ in flat), tree,
                          tuple(sub for _, sub in flat))
