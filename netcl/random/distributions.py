"""More of jax.random's samplers, each drawing what JAX draws from a key (the same numbers to
float32 rounding): lognormal, rayleigh, pareto, weibull_min, maxwell, double_sided_maxwell,
geometric, triangular, wald.

Each is JAX's transformation of the uniform, normal or exponential streams of
continuous.py (which are JAX's own), in JAX's order:

  lognormal             exp(sigma * normal)
  rayleigh              scale * sqrt(-2 * log(u))
  pareto                exp(exponential / b)
  weibull_min           (-log1p(-u)) ** (1 / concentration) * scale
  maxwell               the length of a normal 3-vector (a trailing axis of 3 normals)
  double_sided_maxwell  split(key) -> maxwell, rademacher signs; sign * maxwell * scale + loc
  geometric             floor(log(u) / log1p(-p)) + 1, u == 0 taken as 1
  triangular            inverse CDF of one uniform
  wald                  split(key) -> normal v, uniform z; Michael, Schucany and Haas' method

Parameter shapes broadcast to `shape` (JAX's rule: the result of broadcasting must be
`shape`; shape=None means the parameters' broadcast shape), and array parameters must cast
safely to `dtype` (a float64 array for a float32 result raises TypePromotionError, as in
JAX). weibull_min and double_sided_maxwell take their shapes as JAX does (see each).

>>> from netcl import random
>>> random.lognormal(random.PRNGKey(0), 0.5, (3,))
"""
import warnings

import numpy as np

from .compiled import compiled_when_eager
from ..core import dtypes
from ..core.shapes import broadcast_shapes, canonical_shape
from ..primitives import elementwise as ew
from ..primitives import views
from .continuous import _check_shape, _float_dtype, _normal, _param, _shape_of, _uniform
from .keys import _check_key, _device, _is_array, split

__all__ = ["lognormal", "rayleigh", "pareto", "weibull_min", "maxwell",
           "double_sided_maxwell", "geometric", "triangular", "wald"]


def _jnp():
    from .. import numpy as jnp     # (netcl.numpy imports this package's parent: late)
    return jnp


# ---- argument handling (JAX's checks, in JAX's order) -------------------------------------

def _dtype(name, dtype, key):
    return _float_dtype(name, float if dtype is None else dtype, _device(key))


def _arg_dtype(name, arg, x):
    """(dtype, weak) of a parameter: Python scalars are weak; lists are refused."""
    if _is_array(x):
        return x.dtype, bool(getattr(x, "weak_type", False))
    if isinstance(x, (bool, int, float)):
        return None, True
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name}: {arg} must be a number or an array, got "
                        f"{type(x).__name__}; convert it with netcl.numpy.array first")
    try:
        d = np.asarray(x).dtype
    except Exception:
        raise TypeError(f"{name}: {arg} must be a number or an array, got "
                        f"{type(x).__name__}") from None
    if dtypes.kind(d) not in "biuf":
        raise TypeError(f"{name}: {arg} must be numeric, got dtype {d}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # (float64 data without x64: float32)
        return dtypes.canonicalize_data(d, where=name), False


def _check_safe_cast(name, dtype, named):
    """JAX's _check_all_safe_to_cast: each strongly typed parameter promotes to `dtype`."""
    from ..dtypes import TypePromotionError
    for arg, x in named:
        d, weak = _arg_dtype(name, arg, x)
        if weak:
            continue
        if dtypes.promote_types(d, dtype) != dtype:
            raise TypePromotionError(f"{name}: cannot safely cast {arg} of dtype {d} to "
                                     f"{dtype}")


def _shape(name, shape, named):
    """JAX's _check_broadcast_shapes: shape=None is the parameters' broadcast shape."""
    shapes = [_shape_of(x) for _, x in named]
    if shape is None:
        return broadcast_shapes(*shapes, where=name) if shapes else ()
    shape = canonical_shape(shape, name)
    _check_shape(name, shape, *shapes)
    return shape


def checked_arguments(name, key, shape, dtype, named):
    """(checked key, float dtype, shape) of sampler `name` whose parameters are `named`
    [(argument, value)], with JAX's checks and errors."""
    key = _check_key(name, key)
    dtype = _dtype(name, dtype, key)
    for arg, x in named:
        _arg_dtype(name, arg, x)
    shape = _shape(name, shape, named)
    _check_safe_cast(name, dtype, named)
    return key, dtype, shape


def _setup(name, key, shape, dtype, named):
    """(checked key, float dtype, shape, parameters as arrays of dtype broadcast to shape)."""
    key, dtype, shape = checked_arguments(name, key, shape, dtype, named)
    device = _device(key)
    params = [views.broadcast_to_rank(_param(name, arg, x, dtype, device), shape)
              for arg, x in named]
    return key, dtype, shape, params


def _const(x, v):
    return views.full_like(x, v)


def _split2(key):
    """The two keys of split(key), as JAX's samplers split."""
    keys = split(key)
    return (views.reshape(views.slice(keys, (0, 0), (1, 2)), (2,)),
            views.reshape(views.slice(keys, (1, 0), (2, 2)), (2,)))


# ---- samplers -------------------------------------------------------------------------------

@compiled_when_eager
def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Log-normal values exp(sigma * z), z standard normal (`sigma`: the standard deviation
    of the underlying normal; broadcasts to `shape`).

    >>> netcl.random.lognormal(netcl.random.PRNGKey(0), 0.5, (3,))
    """
    key, dtype, shape, (sigma,) = _setup("lognormal", key, shape, dtype, [("sigma", sigma)])
    return ew.exp(ew.mul(_normal("lognormal", key, shape, dtype), sigma))


@compiled_when_eager
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh values scale * sqrt(-2 log u), u uniform in [0, 1).

    >>> netcl.random.rayleigh(netcl.random.PRNGKey(0), 2.0, (3,))
    """
    key, dtype, shape, (scale,) = _setup("rayleigh", key, shape, dtype, [("scale", scale)])
    u = _uniform("rayleigh", key, shape, dtype, 0.0, 1.0)
    log_u = ew.log(u)
    return ew.mul(scale, ew.sqrt(ew.mul(log_u, _const(log_u, -2))))


@compiled_when_eager
def pareto(key, b, shape=None, dtype=None):
    """Pareto values (shape parameter b, support [1, inf)): exp(e / b), e standard
    exponential.

    >>> netcl.random.pareto(netcl.random.PRNGKey(0), 3.0, (3,))
    """
    key, dtype, shape, (b,) = _setup("pareto", key, shape, dtype, [("b", b)])
    u = _uniform("pareto", key, shape, dtype, 0.0, 1.0)
    e = ew.neg(ew.log1p(ew.neg(u)))
    return ew.exp(ew.div(e, b))


@compiled_when_eager
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull values (-log1p(-u)) ** (1 / concentration) * scale. As in JAX, `shape` is
    the uniforms' shape and scale and concentration broadcast against it with NumPy's rules
    (the result may be larger than `shape`).

    >>> netcl.random.weibull_min(netcl.random.PRNGKey(0), 1.0, 1.5, (3,))
    """
    name = "weibull_min"
    key = _check_key(name, key)
    dtype = _dtype(name, dtype, key)
    shape = canonical_shape(shape, name)
    jnp = _jnp()
    scale = _jnp_param(name, "scale", scale)
    concentration = _jnp_param(name, "concentration", concentration)
    u = _uniform(name, key, shape, dtype, 0.0, 1.0)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def _jnp_param(name, arg, x):
    """A parameter for netcl.numpy arithmetic: Python scalars stay (weak), the rest become
    arrays (np.ndarray data as its canonical dtype)."""
    _arg_dtype(name, arg, x)
    if isinstance(x, (bool, int, float)) or _is_array(x):
        return x
    return _jnp().asarray(x)


@compiled_when_eager
def maxwell(key, shape=(), dtype=None):
    """Maxwell values: the length of a vector of 3 standard normals (the normals of shape
    shape + (3,)).

    >>> netcl.random.maxwell(netcl.random.PRNGKey(0), (3,))
    """
    key = _check_key("maxwell", key)
    dtype = _dtype("maxwell", dtype, key)
    shape = canonical_shape(shape, "maxwell")
    return _maxwell(key, shape, dtype)


def _maxwell(key, shape, dtype):
    z = _normal("maxwell", key, shape + (3,), dtype)
    return _jnp().sqrt(_jnp().sum(z * z, axis=-1))


@compiled_when_eager
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell values: sign * maxwell * scale + loc, the signs Rademacher. As in
    JAX the result's shape is shape + broadcast(loc.shape, scale.shape), where an empty
    `shape` is first taken as that broadcast shape.

    >>> netcl.random.double_sided_maxwell(netcl.random.PRNGKey(0), 0.0, 1.0, (3,))
    """
    from .discrete import rademacher
    name = "double_sided_maxwell"
    key = _check_key(name, key)
    dtype = _dtype(name, dtype, key)
    shape = canonical_shape(shape, name)
    loc = _jnp_param(name, "loc", loc)
    scale = _jnp_param(name, "scale", scale)
    pshape = broadcast_shapes(_shape_of(loc), _shape_of(scale), where=name)
    if not shape:
        shape = pshape
    shape = shape + pshape
    maxwell_key, rademacher_key = _split2(key)
    maxwell_rvs = _maxwell(maxwell_key, shape, dtype)
    sign = rademacher(rademacher_key, shape, dtype)
    return sign * maxwell_rvs * scale + loc


@compiled_when_eager
def geometric(key, p, shape=None, dtype=None):
    """Geometric values (the number of Bernoulli(p) trials up to the first success, >= 1):
    floor(log(u) / log1p(-p)) + 1, of an integer `dtype` (default: the default int).

    >>> netcl.random.geometric(netcl.random.PRNGKey(0), 0.25, (3,))
    """
    name = "geometric"
    key = _check_key(name, key)
    out = dtypes.canonicalize(int if dtype is None else dtype, where=name)
    if dtypes.kind(out) not in "iu":
        raise ValueError(f"{name}: dtype must be an integer dtype, got {out}")
    pd, weak = _arg_dtype(name, "p", p)
    shape = _shape(name, shape, [("p", p)])
    # JAX's promote_dtypes_inexact(p): Python scalars and integers give the default float
    pd = dtypes.default_float_dtype() if weak or dtypes.kind(pd) != "f" else pd
    p = _param(name, "p", p, pd, _device(key))
    u = _uniform(name, key, shape, pd, 0.0, 1.0)
    u = ew.select(ew.eq(u, _const(u, 0)), _const(u, 1), u)
    log_1mp = views.broadcast_to_rank(ew.log1p(ew.neg(p)), shape)
    g = ew.add(ew.floor(ew.div(ew.log(u), log_1mp)), _const(u, 1))
    return ew.convert_element_type(g, out)


@compiled_when_eager
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular values on [left, right] with peak at `mode` (inverse CDF of a uniform).

    >>> netcl.random.triangular(netcl.random.PRNGKey(0), 0.0, 0.3, 1.0, (3,))
    """
    key, dtype, shape, (left, mode, right) = _setup(
        "triangular", key, shape, dtype, [("left", left), ("mode", mode), ("right", right)])
    width = ew.sub(right, left)
    fc = ew.div(ew.sub(mode, left), width)
    u = _uniform("triangular", key, shape, dtype, 0.0, 1.0)
    out1 = ew.add(left, ew.sqrt(ew.mul(ew.mul(u, width), ew.sub(mode, left))))
    out2 = ew.sub(right, ew.sqrt(ew.mul(ew.mul(ew.sub(_const(u, 1), u), width),
                                        ew.sub(right, mode))))
    return ew.select(ew.lt(u, fc), out1, out2)


@compiled_when_eager
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) values of mean `mean` and shape parameter 1 (Michael,
    Schucany and Haas' method: one normal and one uniform per value, from split keys).

    >>> netcl.random.wald(netcl.random.PRNGKey(0), 2.0, (3,))
    """
    key, dtype, shape, (mean,) = _setup("wald", key, shape, dtype, [("mean", mean)])
    k1, k2 = _split2(key)
    v = _normal("wald", k1, shape, dtype)
    z = _uniform("wald", k2, shape, dtype, 0.0, 1.0)
    y = ew.mul(v, v)
    y_sq = ew.mul(y, y)
    mean_sq = ew.mul(mean, mean)
    sqrt_term = ew.sqrt(ew.add(ew.mul(ew.mul(_const(mean, 4), mean), y),
                               ew.mul(mean_sq, y_sq)))
    half = _const(mean, 2)
    x = ew.sub(ew.add(mean, ew.div(ew.mul(mean_sq, y), half)),
               ew.mul(ew.div(mean, half), sqrt_term))
    return ew.select(ew.le(z, ew.div(mean, ew.add(mean, x))), x, ew.div(mean_sq, x))

