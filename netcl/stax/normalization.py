"""BatchNorm (with explicit running statistics) and LayerNorm.

BatchNorm's parameters are stax's ``(beta, gamma)``. Its running statistics are *state*,
threaded explicitly (never hidden in params, so optimizers never touch them):

    _, params, state = init_fun(rng, input_shape, return_state=True)
    y = apply_fun(params, x)                                 # stax: batch statistics
    y, state = apply_fun(params, x, state=state)             # train: batch stats + update
    y, _ = apply_fun(params, x, state=state, mode="eval")    # eval: running stats

The state of one BatchNorm is ``BatchNormState(mean, var)`` (a namedtuple, so a pytree),
each of the parameters' shape, initially zeros and ones. In train mode the new state is
``momentum * old + (1 - momentum) * batch_statistic`` (Flax's convention: the biased batch
variance, momentum 0.99 by default), computed from stop_gradient'ed batch statistics.
"""
import collections
import math

from .. import lax
from .. import numpy as jnp
from .. import random
from ..transforms.ad import stop_gradient
from ._core import as_shape, check_mode, shape_of, stateless
from .initializers import ones, zeros

__all__ = ["BatchNorm", "BatchNormState", "LayerNorm"]

BatchNormState = collections.namedtuple("BatchNormState", ["mean", "var"])
BatchNormState.__doc__ = "BatchNorm's running statistics: mean and (biased) variance."


def _axes(axis, ndim, where, shape):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, int):
            raise TypeError(f"{where}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise ValueError(f"{where}: axis {axis!r} is out of range for inputs of shape "
                             f"{shape} (rank {ndim})")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axis in {axis!r} for inputs of shape {shape}")
    return tuple(sorted(out))


def _check_number(v, name, where, lo, hi, lo_open=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{where}: {name} must be a number, got {v!r}")
    if not (lo < v if lo_open else lo <= v) or not v <= hi:
        raise ValueError(f"{where}: {name}={v!r} must be in {'(' if lo_open else '['}{lo}, "
                         f"{hi}]")
    return float(v)


def _affine(z, beta, gamma, bshape, center, scale):
    if scale:
        z = jnp.multiply(z, jnp.reshape(gamma, bshape))
    if center:
        z = jnp.add(z, jnp.reshape(beta, bshape))
    return z


def _check_params(where, params, pshape, center, scale, xs):
    beta, gamma = params
    for name, p, used in (("beta", beta, center), ("gamma", gamma, scale)):
        if used and shape_of(p) != pshape:
            raise ValueError(f"{where}: inputs of shape {xs} need {name} of shape {pshape}, "
                             f"got {shape_of(p)}")
    return beta, gamma


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones, momentum=0.99):
    """Batch normalisation over ``axis`` (stax's default (0, 1, 2): NHWC feature maps; use
    ``axis=0`` after a Dense layer), with optional running statistics (see the module
    docstring for the state convention).

    params: ``(beta, gamma)`` of the non-normalised dims' shape (``()`` in place of beta
    without ``center``, of gamma without ``scale``), as stax.
    apply_fun(params, x, state=None, mode='train'):
      * no state: normalise with the batch statistics and return the outputs (stax's
        behaviour; mode='eval' without state is an error);
      * with state, mode='train': return ``(outputs, new_state)``, outputs from the batch
        statistics, new_state the momentum-averaged running statistics;
      * with state, mode='eval' (or 'test'): normalise with state's running statistics and
        return ``(outputs, state)``.
    """
    where = "BatchNorm"
    epsilon = _check_number(epsilon, "epsilon", where, 0.0, math.inf)
    momentum = _check_number(momentum, "momentum", where, 0.0, 1.0)
    axis_arg = axis

    def param_shape(shape):
        axes = _axes(axis_arg, len(shape), where, shape)
        return axes, tuple(d for i, d in enumerate(shape) if i not in axes)

    def init_fun(rng, input_shape, *, return_state=False):
        input_shape = as_shape(input_shape, where)
        _, pshape = param_shape(input_shape)
        if any(d < 0 for d in pshape):
            raise ValueError(f"{where}: input_shape {input_shape} has an unknown size in a "
                             f"dimension that is not normalised over (axis={axis_arg!r})")
        k1, k2 = random.split(rng)
        beta = beta_init(k1, pshape) if center else ()
        gamma = gamma_init(k2, pshape) if scale else ()
        if not return_state:
            return input_shape, (beta, gamma)
        state = BatchNormState(jnp.zeros(pshape), jnp.ones(pshape))
        return input_shape, (beta, gamma), state

    def apply_fun(params, x, *, state=None, mode="train", **kwargs):
        xs = shape_of(x)
        axes, pshape = param_shape(xs)
        beta, gamma = _check_params(where, params, pshape, center, scale, xs)
        bshape = tuple(1 if i in axes else d for i, d in enumerate(xs))
        m = check_mode(mode, where)
        if state is not None:
            try:
                r_mean, r_var = state
            except (TypeError, ValueError):
                raise TypeError(f"{where}: state must be a BatchNormState(mean, var) from "
                                f"init_fun(..., return_state=True), got {state!r}") from None
            for name, s in (("mean", r_mean), ("var", r_var)):
                if shape_of(s) != pshape:
                    raise ValueError(f"{where}: inputs of shape {xs} need running {name} of "
                                     f"shape {pshape}, got {shape_of(s)}")
        if m == "train":
            mean = jnp.mean(x, axis=axes, keepdims=True)
            centred = jnp.subtract(x, mean)
            var = jnp.mean(jnp.square(centred), axis=axes, keepdims=True)
        else:
            if state is None:
                raise ValueError(f"{where}: mode='eval' normalises with running statistics; "
                                 "pass state=... (from init_fun(rng, shape, return_state=True) "
                                 "and train-mode updates)")
            mean, var = jnp.reshape(r_mean, bshape), jnp.reshape(r_var, bshape)
            centred = jnp.subtract(x, mean)
        z = jnp.multiply(centred, lax.rsqrt(jnp.add(var, epsilon)))
        y = _affine(z, beta, gamma, bshape, center, scale)
        if state is None:
            return y
        if m == "eval":
            return y, state
        keep = momentum
        new_mean = jnp.add(jnp.multiply(r_mean, keep),
                           jnp.multiply(stop_gradient(jnp.reshape(mean, pshape)), 1.0 - keep))
        new_var = jnp.add(jnp.multiply(r_var, keep),
                          jnp.multiply(stop_gradient(jnp.reshape(var, pshape)), 1.0 - keep))
        return y, BatchNormState(new_mean, new_var)

    init_fun.stax_state = apply_fun.stax_state = True
    return init_fun, apply_fun


def LayerNorm(axis=-1, epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Layer normalisation over ``axis`` (default the last): per example, subtract the mean
    and divide by sqrt(variance + epsilon) over those axes, then ``gamma * z + beta``.

    params: ``(beta, gamma)`` of the normalised dims' shape (``()`` in place of a disabled
    one), like BatchNorm's (which is the complementary shape). Same in train and eval.
    """
    where = "LayerNorm"
    epsilon = _check_number(epsilon, "epsilon", where, 0.0, math.inf)
    axis_arg = axis

    def param_shape(shape):
        axes = _axes(axis_arg, len(shape), where, shape)
        return axes, tuple(shape[a] for a in axes)

    def init_fun(rng, input_shape):
        input_shape = as_shape(input_shape, where)
        _, pshape = param_shape(input_shape)
        if any(d < 0 for d in pshape):
            raise ValueError(f"{where}: input_shape {input_shape} has an unknown size in a "
                             f"normalised dimension (axis={axis_arg!r})")
        k1, k2 = random.split(rng)
        beta = beta_init(k1, pshape) if center else ()
        gamma = gamma_init(k2, pshape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        xs = shape_of(x)
        axes, pshape = param_shape(xs)
        beta, gamma = _check_params(where, params, pshape, center, scale, xs)
        bshape = tuple(d if i in axes else 1 for i, d in enumerate(xs))
        mean = jnp.mean(x, axis=axes, keepdims=True)
        centred = jnp.subtract(x, mean)
        var = jnp.mean(jnp.square(centred), axis=axes, keepdims=True)
        z = jnp.multiply(centred, lax.rsqrt(jnp.add(var, epsilon)))
        return _affine(z, beta, gamma, bshape, center, scale)

    return stateless(init_fun, apply_fun)
