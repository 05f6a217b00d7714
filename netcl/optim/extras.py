"""Wrappers and optimizers from optax that netcl.optim lacked: `inject_hyperparams`
(hyperparameters in the state, changeable between steps), `flatten`, `MultiSteps` (gradient
accumulation), `apply_if_finite`, `zero_nans`, `ema`, `scale_by_amsgrad` / `amsgrad`.

Names, arguments, defaults, state types and semantics follow optax. Conditional updates
(MultiSteps, apply_if_finite) compute both outcomes and select with `jnp.where`, so a step
stays one straight-line program under jit and vmap.

    >>> opt = optim.inject_hyperparams(optim.adam)(learning_rate=1e-3)
    >>> state = opt.init(params)
    >>> state.hyperparams['learning_rate'] = 1e-4        # takes effect at the next update
    >>> opt = optim.MultiSteps(optim.adam(1e-3), every_k_schedule=4)   # 4 micro-batches
"""
import functools
import inspect
import numbers
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import Array
from ..core.tracing import ConcretizationError, Tracer
from ..tree_util import tree_leaves, tree_map, tree_structure
from . import _checks as chk
from .base import GradientTransformation
from .combine import chain
from .loss_scale import select_tree
from .numerics import safe_increment, tree_cast, tree_zeros_like, update_moment
from .numerics import bias_correction as _bias_correction
from .numerics import update_moment_per_elem_norm
from .transforms import scale_by_learning_rate

__all__ = ["InjectHyperparamsState", "InjectStatefulHyperparamsState", "WrappedScheduleState",
           "inject_hyperparams", "flatten", "MultiStepsState", "MultiSteps", "skip_not_finite",
           "skip_large_updates", "ApplyIfFiniteState", "apply_if_finite", "ZeroNansState",
           "zero_nans", "EmaState", "ema", "ScaleByAmsgradState", "scale_by_amsgrad",
           "amsgrad"]


def _count0():
    return jnp.zeros([], jnp.int32)


def _check_transformation(where, name, t):
    ok = isinstance(t, GradientTransformation) or (
        isinstance(t, tuple) and len(t) == 2 and all(callable(f) for f in t))
    if not ok:
        raise TypeError(f"{where}: {name} must be a GradientTransformation (an init/update "
                        f"pair), got {type(t).__name__}")
    return t


def _check_int(where, name, value, lo):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}")
    if value < lo:
        raise ValueError(f"{where}: {name} must be >= {lo}, got {value!r}")
    return int(value)


def _float_dtype(where, name, dtype):
    if dtype is None:
        return None
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{where}: {name} must be a dtype, got {dtype!r}") from None
    if dtypes.kind(d) != "f":
        raise TypeError(f"{where}: {name} must be a floating dtype, got {d}")
    return d


# ---- inject_hyperparams ---------------------------------------------------------------------

class WrappedScheduleState(NamedTuple):
    """The state of a schedule wrapped by inject_hyperparams: its step count.

    >>> state.hyperparams_states['learning_rate'].count     # steps taken so far
    """
    count: Any  # 0-d int32


class InjectStatefulHyperparamsState(NamedTuple):
    """inject_hyperparams' state: step count, the current hyperparameter values (0-d arrays,
    a dict; edit it between steps), each schedule's state, and the inner optimizer's state.

    >>> state.hyperparams['learning_rate'] = 1e-4
    """
    count: Any  # 0-d int32
    hyperparams: Any
    hyperparams_states: Any
    inner_state: Any


# optax's older name for the same state (its fields are a subset of these)
InjectHyperparamsState = InjectStatefulHyperparamsState


def _is_numeric(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, (Array, Tracer)):
        return True
    if isinstance(v, (np.ndarray, np.generic)):
        return dtypes.kind(v.dtype) in "iuf"
    return isinstance(v, numbers.Real)


def _is_dtype(v):
    if isinstance(v, (type, np.dtype)):
        return True
    try:                       # netcl's scalar types (jnp.float32) are callable objects
        np.dtype(v)
    except (TypeError, ValueError):
        return False
    return True


def _is_schedule(v):
    # a class or a dtype (jnp.float32) is an argument, not a schedule
    return callable(v) and not isinstance(v, (Array, Tracer)) and not _is_dtype(v)


def _highest_float(tree):
    best = None
    for x in tree_leaves(tree):
        d = getattr(x, "dtype", None)
        if d is not None and dtypes.kind(np.dtype(d)) == "f":
            if best is None or np.dtype(d).itemsize > best.itemsize:
                best = np.dtype(d)
    return best if best is not None else np.dtype(np.float32)


def _convert(v, dtype, forced):
    """A hyperparameter value as an array: floats in `dtype`; a netcl array keeps its own
    dtype unless `forced` (hyperparam_dtype) or weakly typed; ints stay ints."""
    if isinstance(v, (Array, Tracer)):
        if dtypes.kind(v.dtype) == "f" and (forced or getattr(v, "weak_type", False)) \
                and v.dtype != dtype:
            return v.astype(dtype)
        return v
    if isinstance(v, (float, np.floating)) or (isinstance(v, np.ndarray) and
                                               dtypes.kind(v.dtype) == "f"):
        return jnp.asarray(v, dtype)
    return jnp.asarray(v)


def inject_hyperparams(inner_factory, static_args=(), hyperparam_dtype=None):
    """Wrap an optimizer factory so that its numeric hyperparameters live in the state.

    `inject_hyperparams(factory)(*args, **kwargs)` takes the factory's arguments; numbers and
    arrays become 0-d arrays in `state.hyperparams` (a dict you may edit between steps: the
    next update uses the new values, without recompiling a jitted step), and callables are
    schedules evaluated at each step's count (0-based) and written there too. Booleans,
    None, dtypes, strings and the names in `static_args` are passed through unchanged (list a
    callable that is not a schedule, e.g. a mask function, in `static_args`). Float values
    take `hyperparam_dtype`, or else the params' widest float dtype.

    >>> opt = optim.inject_hyperparams(optim.sgd)(learning_rate=0.1, momentum=0.9)
    >>> state = opt.init(params)
    >>> updates, state = opt.update(grads, state, params)
    >>> state.hyperparams['learning_rate'] = 0.01            # used from the next step on
    >>> opt = optim.inject_hyperparams(optim.adam)(optim.linear_schedule(1e-3, 0.0, 100))
    """
    where = "inject_hyperparams"
    if not callable(inner_factory):
        raise TypeError(f"{where}: inner_factory must be a callable returning a "
                        f"GradientTransformation, got {type(inner_factory).__name__}")
    if isinstance(static_args, str):
        static_args = {static_args}
    else:
        try:
            static_args = set(static_args)
        except TypeError:
            raise TypeError(f"{where}: static_args must be a string or an iterable of "
                            f"strings, got {static_args!r}") from None
    forced = _float_dtype(where, "hyperparam_dtype", hyperparam_dtype)
    try:
        signature = inspect.signature(inner_factory)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: cannot read the signature of {inner_factory!r}") from None
    if not static_args.issubset(signature.parameters):
        raise ValueError(f"{where}: static_args must name parameters of "
                         f"{getattr(inner_factory, '__name__', 'inner_factory')}; unknown: "
                         f"{sorted(static_args - set(signature.parameters))}, parameters: "
                         f"{list(signature.parameters)}")
    fname = getattr(inner_factory, "__name__", "inner_factory")

    @functools.wraps(inner_factory)
    def wrapped_transform(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{where}({fname}): {e}") from None
        bound.apply_defaults()
        sched_hps, numeric_hps, other_hps = {}, {}, {}
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(f"{where}: {fname} takes *args/**kwargs ({name}); wrap a "
                                f"factory with named parameters")
            if name in static_args or isinstance(value, bool):
                other_hps[name] = value
            elif _is_schedule(value):
                sched_hps[name] = value
            elif _is_numeric(value):
                numeric_hps[name] = value
            else:
                other_hps[name] = value
        _validate(inner_factory, other_hps, numeric_hps, sched_hps)
        names = set(numeric_hps) | set(sched_hps)

        def dtype_of(tree):
            return forced if forced is not None else _highest_float(tree)

        def init_fn(params):
            dtype = dtype_of(params)
            hparams = {k: _convert(v, dtype, forced) for k, v in numeric_hps.items()}
            hstates = {k: WrappedScheduleState(count=_count0()) for k in sched_hps}
            hparams.update({k: _convert(f(hstates[k].count), dtype, forced)
                            for k, f in sched_hps.items()})
            inner = inner_factory(**other_hps, **hparams)
            return InjectStatefulHyperparamsState(count=_count0(), hyperparams=hparams,
                                                  hyperparams_states=hstates,
                                                  inner_state=inner.init(params))

        def update_fn(updates, state, params=None):
            chk.state_type(where, state, InjectStatefulHyperparamsState)
            if not isinstance(state.hyperparams, dict) or set(state.hyperparams) != names:
                got = sorted(state.hyperparams) if isinstance(state.hyperparams, dict) \
                    else type(state.hyperparams).__name__
                raise ValueError(f"{where}({fname}): state.hyperparams must be a dict with "
                                 f"the keys {sorted(names)}, got {got}")
            dtype = dtype_of(updates if params is None else params)
            # static numbers written into state.hyperparams go to the factory as they are,
            # so that it checks them (a negative learning rate raises here)
            call = dict(state.hyperparams)
            call.update({k: f(state.hyperparams_states[k].count)
                         for k, f in sched_hps.items()})
            inner = inner_factory(**other_hps, **call)
            new_updates, inner_state = inner.update(updates, state.inner_state, params)
            hparams = {k: _convert(v, dtype, forced) for k, v in call.items()}
            hstates = {k: WrappedScheduleState(count=safe_increment(s.count))
                       for k, s in state.hyperparams_states.items()}
            return new_updates, InjectStatefulHyperparamsState(
                count=safe_increment(state.count), hyperparams=hparams,
                hyperparams_states=hstates, inner_state=inner_state)

        return GradientTransformation(init_fn, update_fn)

    return wrapped_transform


def _validate(inner_factory, other_hps, numeric_hps, sched_hps):
    """Build the inner transformation once with the static numbers as given and every array
    or schedule value abstract (traced, so no kernel runs): the factory's own checks reject
    bad static hyperparameters now rather than at init."""
    from ..transforms.staging import make_ir
    static = {k: v for k, v in numeric_hps.items() if not isinstance(v, (Array, Tracer))}
    dynamic = [k for k in numeric_hps if k not in static] + list(sched_hps)
    # stand-ins of the arrays' shapes and dtypes (the values themselves may be tracers of an
    # enclosing jit, which this separate trace must not capture)
    values = [np.zeros(tuple(numeric_hps[k].shape), numeric_hps[k].dtype)
              if k in numeric_hps else 0.0 for k in dynamic]

    def build(*vals):
        inner_factory(**other_hps, **static, **dict(zip(dynamic, vals)))
        return jnp.zeros([], jnp.float32)
    try:
        make_ir(build)(*values)
    except ConcretizationError:
        pass   # the factory needs concrete values: it is checked when init builds it


# ---- flatten ------------------------------------------------------------------------------

def flatten(inner):
    """Run `inner` on one vector: the concatenation of every leaf of the updates (and
    params), split and reshaped back afterwards. Fewer, larger kernels for trees of many
    small leaves; the inner state holds flat vectors.

    >>> opt = optim.flatten(optim.adam(1e-3))
    """
    _check_transformation("flatten", "inner", inner)
    inner_init, inner_update = inner[0], inner[1]

    def _flat(tree, what):
        leaves = tree_leaves(tree)
        if not leaves:
            raise ValueError(f"flatten: {what} has no array leaves")
        return jnp.concatenate([jnp.reshape(jnp.asarray(x), (-1,)) for x in leaves])

    def _unflat(like, flat):
        leaves = [jnp.asarray(x) for x in tree_leaves(like)]
        offsets, total = [], 0
        for x in leaves[:-1]:
            total += int(np.prod(x.shape, dtype=np.int64))
            offsets.append(total)
        parts = jnp.split(flat, offsets) if offsets else [flat]
        return tree_structure(like).unflatten(
            [jnp.reshape(p, x.shape) for p, x in zip(parts, leaves)])

    def init_fn(params):
        return inner_init(_flat(params, "params"))

    def update_fn(updates, state, params=None):
        if params is not None:
            chk.same_structure("flatten", updates, "updates", params, "params")
            params = _flat(params, "params")
        flat, state = inner_update(_flat(updates, "updates"), state, params)
        return _unflat(updates, flat), state

    return GradientTransformation(init_fn, update_fn)


# ---- MultiSteps ---------------------------------------------------------------------------

class MultiStepsState(NamedTuple):
    """mini_step: micro-steps accumulated (0 .. k-1); gradient_step: inner updates made;
    inner_opt_state; acc_grads: the running mean (or sum) of the gradients; skip_state:
    what should_skip_update_fn returned last.

    >>> state.mini_step, state.gradient_step
    """
    mini_step: Any
    gradient_step: Any
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


def skip_not_finite(updates, gradient_step, params):
    """A should_skip_update_fn for MultiSteps: skip micro-steps whose updates hold an inf or
    NaN. Returns (should_skip, {'should_skip', 'num_not_finite'}).

    >>> optim.MultiSteps(opt, 4, should_skip_update_fn=optim.skip_not_finite)
    """
    del gradient_step, params
    num = jnp.zeros([], jnp.int32)
    for x in tree_leaves(updates):
        num = num + jnp.sum(jnp.logical_not(jnp.isfinite(x))).astype(jnp.int32)
    should_skip = num > 0
    return should_skip, {"should_skip": should_skip, "num_not_finite": num}


def skip_large_updates(updates, gradient_step, params, max_squared_norm):
    """A should_skip_update_fn for MultiSteps (bind max_squared_norm with functools.partial):
    skip micro-steps whose squared global norm is not below max_squared_norm (NaN included).

    >>> optim.MultiSteps(opt, 4, functools.partial(optim.skip_large_updates,
    ...                                            max_squared_norm=100.0))
    """
    del gradient_step, params
    norm_sq = jnp.zeros([], jnp.float32)
    for x in tree_leaves(updates):
        norm_sq = norm_sq + jnp.sum(x * x).astype(jnp.float32)
    should_skip = jnp.logical_not(norm_sq < max_squared_norm)
    return should_skip, {"should_skip": should_skip, "norm_squared": norm_sq}


def _no_skip(updates, gradient_step, params):
    del updates, gradient_step, params
    return None, ()


class MultiSteps:
    """Accumulate gradients over `every_k_schedule` calls to `update` (micro-batches), then
    apply the wrapped optimizer once to their mean (use_grad_mean=True) or sum; the calls in
    between return zero updates and leave the inner state as it was.

    every_k_schedule: an int >= 1, or a function of the gradient step giving k.
    should_skip_update_fn(updates, gradient_step, params) -> (0-d bool, skip_state): skipped
    micro-steps change nothing (see skip_not_finite, skip_large_updates).

    >>> ms = optim.MultiSteps(optim.adam(1e-3), every_k_schedule=4)
    >>> state = ms.init(params)
    >>> updates, state = ms.update(grads, state, params)       # zeros for 3 calls in 4
    >>> opt = ms.gradient_transformation()                     # an init/update pair
    """

    def __init__(self, opt, every_k_schedule, use_grad_mean=True, should_skip_update_fn=None,
                 accumulator_dtype=jnp.float32):
        where = "MultiSteps"
        self._opt = _check_transformation(where, "opt", opt)
        if callable(every_k_schedule):
            self._every_k_schedule = every_k_schedule
        else:
            k = _check_int(where, "every_k_schedule", every_k_schedule, 1)
            self._every_k_schedule = lambda step: k
        if not isinstance(use_grad_mean, (bool, np.bool_)):
            raise TypeError(f"{where}: use_grad_mean must be a bool, got {use_grad_mean!r}")
        self._use_grad_mean = bool(use_grad_mean)
        if should_skip_update_fn is not None and not callable(should_skip_update_fn):
            raise TypeError(f"{where}: should_skip_update_fn must be callable or None, got "
                            f"{type(should_skip_update_fn).__name__}")
        self._should_skip_update_fn = should_skip_update_fn
        self._accumulator_dtype = _float_dtype(where, "accumulator_dtype", accumulator_dtype)

    @property
    def inner_opt(self):
        """The wrapped optimizer."""
        return self._opt

    def _skip_fn(self):
        return self._should_skip_update_fn or _no_skip

    def init(self, params):
        """The initial MultiStepsState for `params`."""
        gradient_step = _count0()
        _, skip_state = self._skip_fn()(tree_zeros_like(params), gradient_step, params)
        return MultiStepsState(mini_step=_count0(), gradient_step=gradient_step,
                               inner_opt_state=self._opt[0](params),
                               acc_grads=tree_zeros_like(params, self._accumulator_dtype),
                               skip_state=skip_state)

    def update(self, updates, state, params=None):
        """Accumulate `updates`; every k-th call, the inner optimizer's update of the
        accumulated gradients (zeros otherwise)."""
        where = "MultiSteps.update"
        chk.state_type(where, state, MultiStepsState)
        chk.same_structure(where, updates, "updates", state.acc_grads, "state.acc_grads")
        k_steps = self._every_k_schedule(state.gradient_step)
        should_skip, skip_state = self._skip_fn()(updates, state.gradient_step, params)
        if should_skip is not None:
            s = jnp.asarray(should_skip)
            if s.shape != () or s.dtype != jnp.bool_:
                raise ValueError(f"{where}: should_skip_update_fn must return a 0-d bool "
                                 f"array first, got {s.dtype} of shape {tuple(s.shape)}")

        n = state.mini_step

        def acc(g, a):
            if self._use_grad_mean:   # Welford: the running mean, without a large sum
                d = g - a
                return a + d / (n + 1).astype(d.dtype)
            return g + a
        acc_grads = tree_map(acc, updates, state.acc_grads)
        cast = tree_map(lambda a, g: a.astype(jnp.asarray(g).dtype), acc_grads, updates)
        final, new_inner = self._opt[1](cast, state.inner_opt_state, params)

        emit = n == k_steps - 1
        new_state = MultiStepsState(
            mini_step=safe_increment(n) % k_steps,
            gradient_step=jnp.where(emit, safe_increment(state.gradient_step),
                                    state.gradient_step),
            inner_opt_state=tree_map(
                lambda old, new: jnp.where(emit, new, old).astype(jnp.asarray(old).dtype),
                state.inner_opt_state, new_inner),
            acc_grads=tree_map(
                lambda a: jnp.where(emit, jnp.zeros_like(a), a).astype(
                    self._accumulator_dtype or a.dtype), acc_grads),
            skip_state=skip_state)
        final = tree_map(lambda u: jnp.where(emit, u, jnp.zeros_like(u)), final)
        if should_skip is None:
            return final, new_state
        skipped = state._replace(skip_state=skip_state)
        return (select_tree(should_skip, tree_map(jnp.zeros_like, final), final),
                select_tree(should_skip, skipped, new_state))

    def has_updated(self, state):
        """A 0-d bool: did the last update apply the inner optimizer?"""
        return jnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self):
        """This accumulation as a GradientTransformation (init, update)."""
        return GradientTransformation(init=self.init, update=self.update)


# ---- apply_if_finite, zero_nans ---------------------------------------------------------------

class ApplyIfFiniteState(NamedTuple):
    """notfinite_count: consecutive non-finite updates (reset by a finite one); last_finite:
    was the last update finite; total_notfinite: all non-finite updates so far.

    >>> int(state.total_notfinite)      # updates skipped (or forced through) so far
    """
    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


def _all_finite(tree):
    out = jnp.asarray(True)
    for x in tree_leaves(tree):
        out = jnp.logical_and(out, jnp.all(jnp.isfinite(x)))
    return out


def apply_if_finite(inner, max_consecutive_errors):
    """Skip updates holding an inf or NaN (zero updates, inner state unchanged), unless more
    than `max_consecutive_errors` came in a row: then apply them anyway.

    >>> opt = optim.apply_if_finite(optim.adam(1e-3), max_consecutive_errors=5)
    """
    where = "apply_if_finite"
    _check_transformation(where, "inner", inner)
    max_errors = _check_int(where, "max_consecutive_errors", max_consecutive_errors, 0)

    def init_fn(params):
        return ApplyIfFiniteState(notfinite_count=_count0(), last_finite=jnp.asarray(True),
                                  total_notfinite=_count0(), inner_state=inner[0](params))

    def update_fn(updates, state, params=None):
        chk.state_type(where, state, ApplyIfFiniteState)
        finite = _all_finite(updates)
        notfinite_count = jnp.where(finite, _count0(), safe_increment(state.notfinite_count))
        new_updates, new_inner = inner[1](updates, state.inner_state, params)
        apply = jnp.logical_or(finite, notfinite_count > max_errors)
        new_updates = select_tree(apply, new_updates, tree_map(jnp.zeros_like, new_updates))
        inner_state = select_tree(apply, new_inner, state.inner_state)
        return new_updates, ApplyIfFiniteState(
            notfinite_count=notfinite_count, last_finite=finite,
            total_notfinite=jnp.where(finite, state.total_notfinite,
                                      safe_increment(state.total_notfinite)),
            inner_state=inner_state)

    return GradientTransformation(init_fn, update_fn)


class ZeroNansState(NamedTuple):
    """found_nan: per leaf, a 0-d bool: did the last updates hold a NaN there.

    >>> bool(state[0].found_nan['w'])   # with chain(zero_nans(), ...)
    """
    found_nan: Any


def zero_nans():
    """Replace NaNs in the updates by 0; the state records, per leaf, whether it had any.

    >>> opt = optim.chain(optim.zero_nans(), optim.adam(1e-3))
    """
    def init_fn(params):
        return ZeroNansState(found_nan=tree_map(lambda p: jnp.asarray(False), params))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("zero_nans", state, ZeroNansState)
        found = tree_map(lambda u: jnp.any(jnp.isnan(u)), updates)
        updates = tree_map(lambda u: jnp.where(jnp.isnan(u), jnp.zeros_like(u), u), updates)
        return updates, ZeroNansState(found_nan=found)

    return GradientTransformation(init_fn, update_fn)


# ---- ema, amsgrad -------------------------------------------------------------------------

class EmaState(NamedTuple):
    """count: steps so far; ema: the moving average (params' structure).

    >>> optim.ema(0.9).init(params).ema
    """
    count: Any  # 0-d int32
    ema: Any


def ema(decay, debias=True, accumulator_dtype=None):
    """Exponential moving average of the updates: e <- decay * e + (1 - decay) * g, returned
    divided by 1 - decay^t when debias.

    >>> optim.chain(optim.ema(0.9), optim.scale(-0.1))
    """
    decay = chk.decay_rate("ema", "decay", decay, allow_one=not debias)
    accumulator_dtype = _float_dtype("ema", "accumulator_dtype", accumulator_dtype)

    def init_fn(params):
        return EmaState(count=_count0(), ema=tree_zeros_like(params, accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type("ema", state, EmaState)
        chk.same_structure("ema", updates, "updates", state.ema, "state.ema")
        new_ema = update_moment(updates, state.ema, decay, 1)
        count = safe_increment(state.count)
        out = _bias_correction(new_ema, decay, count) if debias else new_ema
        return out, EmaState(count=count, ema=tree_cast(new_ema, accumulator_dtype))

    return GradientTransformation(init_fn, update_fn)


class ScaleByAmsgradState(NamedTuple):
    """count; mu, nu: the moving averages of g and g^2; nu_max: the running maximum of the
    (bias-corrected) nu.

    >>> optim.amsgrad(1e-3).init(params)[0].nu_max
    """
    count: Any  # 0-d int32
    mu: Any
    nu: Any
    nu_max: Any


def scale_by_amsgrad(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
                     bias_correction_mu=True, bias_correction_nu=True):
    """AMSGrad's rescaling: m_hat / (sqrt(nu_max + eps_root) + eps), nu_max the running
    maximum of the (bias-corrected) second moment.

    >>> optim.chain(optim.scale_by_amsgrad(), optim.scale(-1e-3))     # amsgrad(1e-3)
    """
    where = "scale_by_amsgrad"
    b1 = chk.decay_rate(where, "b1", b1, allow_one=False)
    b2 = chk.decay_rate(where, "b2", b2, allow_one=False)
    eps = chk.non_negative(where, "eps", eps)
    eps_root = chk.non_negative(where, "eps_root", eps_root)
    mu_dtype = _float_dtype(where, "mu_dtype", mu_dtype)

    def init_fn(params):
        return ScaleByAmsgradState(count=_count0(), mu=tree_zeros_like(params, mu_dtype),
                                   nu=tree_zeros_like(params), nu_max=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        chk.state_type(where, state, ScaleByAmsgradState)
        for f in ("mu", "nu", "nu_max"):
            chk.same_structure(where, updates, "updates", getattr(state, f), f"state.{f}")
        mu = update_moment(updates, state.mu, b1, 1)
        nu = update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        mu_hat = _bias_correction(mu, b1, count) if bias_correction_mu else mu
        nu_eff = _bias_correction(nu, b2, count) if bias_correction_nu else nu
        nu_max = tree_map(jnp.maximum, state.nu_max, nu_eff)
        out = tree_map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_max)
        return out, ScaleByAmsgradState(count=count, mu=tree_cast(mu, mu_dtype), nu=nu,
                                        nu_max=nu_max)

    return GradientTransformation(init_fn, update_fn)


def amsgrad(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
            bias_correction_mu=True, bias_correction_nu=True):
    """AMSGrad (Reddi et al. 2018): chain(scale_by_amsgrad(...), scale_by_learning_rate(lr)).

    >>> opt = optim.amsgrad(1e-3)
    """
    lr = chk.learning_rate("amsgrad", learning_rate)
    for name, v in (("b1", b1), ("b2", b2)):
        chk.decay_rate("amsgrad", name, v, allow_one=False)
    chk.non_negative("amsgrad", "eps", eps)
    chk.non_negative("amsgrad", "eps_root", eps_root)
    return chain(scale_by_amsgrad(b1, b2, eps, eps_root, mu_dtype, bias_correction_mu,
                                  bias_correction_nu),
                 scale_by_learning_rate(lr))
