"""Parameter initializers with ``jax.nn.initializers``' names and semantics.

Every initializer is a function ``init(key, shape, dtype=float) -> Array`` (Python's float:
the default float at call time, float64 with x64, as JAX's ``jnp.float_``); the factories
(``normal(stddev)``, ``glorot_normal(in_axis, out_axis)``, ``variance_scaling(...)``, ...)
return one, while ``zeros`` and ``ones`` are initializers themselves (as in JAX)::

    >>> from netcl import random
    >>> from netcl.stax import initializers as init
    >>> W = init.glorot_normal()(random.PRNGKey(0), (784, 512))
    >>> b = init.zeros(random.PRNGKey(1), (512,))

Variance scaling (as JAX): with ``fan_in`` = (size of ``in_axis``) x receptive field and
``fan_out`` = (size of ``out_axis``) x receptive field, where the receptive field is the
product of every other dimension (the spatial dims of a conv kernel, ``batch_axis``
excluded), the target variance is ``scale / n`` with ``n`` = fan_in, fan_out or their mean
(``mode``). ``distribution`` is

* ``"truncated_normal"``: a standard normal truncated to (-2, 2), rescaled by
  ``sqrt(variance) / 0.87962566103423978`` (the std-dev of that truncated normal) so the
  variance is exactly the target; this is what ``*_normal`` (glorot/he/lecun) use, as in JAX;
* ``"normal"``: an untruncated normal with the target variance;
* ``"uniform"``: uniform in ``[-sqrt(3 * variance), sqrt(3 * variance))``.

The random streams are netcl.random's, which follow JAX's threefry streams, so the same key
gives (to a few ulps) the parameters JAX would.
"""
import math
import operator

import numpy as np

from .. import numpy as jnp
from .. import random
from ..core import dtypes

__all__ = ["variance_scaling", "glorot_normal", "glorot_uniform", "xavier_normal",
           "xavier_uniform", "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform",
           "lecun_normal", "lecun_uniform", "normal", "uniform", "truncated_normal", "constant",
           "zeros", "ones"]

# Standard deviation of a standard normal truncated to (-2, 2).
_TRUNC_STD = 0.87962566103423978


def _dtype(dtype, where):
    dt = dtypes.canonicalize(dtype, arg="dtype", where=where)
    if dtypes.kind(np.dtype(dt)) != "f":
        raise TypeError(f"{where}: dtype must be a floating type, got {np.dtype(dt)}")
    return dt


def _shape(shape, where):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{where}: shape must be a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{where}: shape {shape} has a negative dimension")
    return shape


def _axes(axis, ndim, shape, where, name):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{where}: {name}={axis!r} is out of range for a weight of shape "
                             f"{shape} (rank {ndim})")
        out.append(a % ndim)
    return tuple(out)


def _compute_fans(shape, in_axis, out_axis, batch_axis, where):
    """(fan_in, fan_out) as JAX computes them."""
    if len(shape) < 2:
        raise ValueError(f"{where}: cannot compute fan-in/fan-out of a weight of shape {shape} "
                         f"(rank {len(shape)}); variance scaling needs rank >= 2")
    ins = _axes(in_axis, len(shape), shape, where, "in_axis")
    outs = _axes(out_axis, len(shape), shape, where, "out_axis")
    batch = _axes(batch_axis, len(shape), shape, where, "batch_axis")
    in_size = math.prod(shape[a] for a in ins)
    out_size = math.prod(shape[a] for a in outs)
    batch_size = math.prod(shape[a] for a in batch)
    total = math.prod(shape)
    if total == 0:
        return 1.0, 1.0  # an empty weight: nothing is drawn, any finite scale will do
    receptive = total / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=float):
    """An initializer whose samples have variance ``scale / n`` (see the module docstring).

    mode: "fan_in", "fan_out" or "fan_avg"; distribution: "truncated_normal", "normal" or
    "uniform". in_axis / out_axis / batch_axis: ints or tuples of ints of the weight.

    >>> he = variance_scaling(2.0, "fan_in", "truncated_normal")
    >>> W = he(random.PRNGKey(0), (3, 3, 16, 32))    # HWIO conv kernel: fan_in = 3*3*16
    """
    where = "variance_scaling"
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)):
        raise TypeError(f"{where}: scale must be a number, got {scale!r}")
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"{where}: scale must be a positive finite number, got {scale!r}")
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"{where}: invalid mode {mode!r}; expected 'fan_in', 'fan_out' or "
                         "'fan_avg'")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"{where}: invalid distribution {distribution!r}; expected "
                         "'truncated_normal', 'normal' or 'uniform'")
    default_dtype = dtype

    def init(key, shape, dtype=default_dtype):
        shape = _shape(shape, where)
        dt = _dtype(dtype, where)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis, where)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = float(scale) / n
        if distribution == "truncated_normal":
            x = random.truncated_normal(key, -2.0, 2.0, shape, dt)
            return jnp.multiply(x, math.sqrt(variance) / _TRUNC_STD)
        if distribution == "normal":
            return jnp.multiply(random.normal(key, shape, dt), math.sqrt(variance))
        lim = math.sqrt(3.0 * variance)
        return random.uniform(key, shape, dt, -lim, lim)
    init.__name__ = f"variance_scaling_{mode}_{distribution}"
    return init


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=float):
    """Glorot / Xavier normal: variance_scaling(1.0, "fan_avg", "truncated_normal")."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=float):
    """Glorot / Xavier uniform: variance_scaling(1.0, "fan_avg", "uniform")."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=float):
    """He / Kaiming normal: variance_scaling(2.0, "fan_in", "truncated_normal")."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=float):
    """He / Kaiming uniform: variance_scaling(2.0, "fan_in", "uniform")."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=float):
    """LeCun normal: variance_scaling(1.0, "fan_in", "truncated_normal")."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=float):
    """LeCun uniform: variance_scaling(1.0, "fan_in", "uniform")."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


xavier_normal, xavier_uniform = glorot_normal, glorot_uniform
kaiming_normal, kaiming_uniform = he_normal, he_uniform


def _check_positive(value, name, where):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{where}: {name} must be a number, got {value!r}")
    if not value >= 0 or not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a non-negative finite number, got {value!r}")
    return float(value)


def normal(stddev=1e-2, dtype=float):
    """Samples from N(0, stddev^2) (jax.nn.initializers.normal; stax's bias default)."""
    stddev = _check_positive(stddev, "stddev", "normal")
    default_dtype = dtype

    def init(key, shape, dtype=default_dtype):
        x = random.normal(key, _shape(shape, "normal"), _dtype(dtype, "normal"))
        return jnp.multiply(x, stddev)
    return init


def truncated_normal(stddev=1e-2, dtype=float, lower=-2.0, upper=2.0):
    """A standard normal truncated to (lower, upper), times ``stddev`` (as JAX: the
    result's std-dev is below ``stddev``)."""
    stddev = _check_positive(stddev, "stddev", "truncated_normal")
    default_dtype = dtype

    def init(key, shape, dtype=default_dtype):
        x = random.truncated_normal(key, lower, upper, _shape(shape, "truncated_normal"),
                                    _dtype(dtype, "truncated_normal"))
        return jnp.multiply(x, stddev)
    return init


def uniform(scale=1e-2, dtype=float):
    """Samples from U[0, scale) (jax.nn.initializers.uniform)."""
    scale = _check_positive(scale, "scale", "uniform")
    default_dtype = dtype

    def init(key, shape, dtype=default_dtype):
        return random.uniform(key, _shape(shape, "uniform"), _dtype(dtype, "uniform"), 0.0,
                              scale)
    return init


def constant(value, dtype=float):
    """Every element equal to ``value``."""
    default_dtype = dtype

    def init(key, shape, dtype=default_dtype):
        return jnp.full(_shape(shape, "constant"), value,
                        dtypes.canonicalize(dtype, arg="dtype", where="constant"))
    return init


def zeros(key, shape, dtype=float):
    """All zeros (an initializer itself, as jax.nn.initializers.zeros; ``key`` is unused)."""
    return jnp.zeros(_shape(shape, "zeros"), dtypes.canonicalize(dtype, arg="dtype",
                                                                  where="zeros"))


def ones(key, shape, dtype=float):
    """All ones (an initializer itself, as jax.nn.initializers.ones; ``key`` is unused)."""
    return jnp.ones(_shape(shape, "ones"), dtypes.canonicalize(dtype, arg="dtype",
                                                                where="ones"))
