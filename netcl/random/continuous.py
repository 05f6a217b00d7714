"""Continuous samplers: uniform, normal, truncated_normal, gumbel, exponential, laplace,
logistic, cauchy, and the shared parameter/shape helpers of all the samplers.

  uniform   float32: (bits >> 9 | 0x3f800000) reinterpreted, minus 1, scaled;
            max(minval, u * (maxval - minval) + minval)
  normal    sqrt(2) * erf_inv(uniform(nextafter(-1, 0), 1))

`dtype` defaults to Python's float, as in JAX: the default float at call time (float32, or
float64 with x64).

uniform is bit-identical to JAX on every device (PoCL, NVIDIA and the NumPy fallback give
the same bits; under jit a GPU compiler may fuse u * span + minval into an fma, which moves
uniform with a span that is not a power of two by an ulp). normal and the other
transcendental samplers agree with JAX and across devices to a few ulps: erf_inv and log are
approximations whose float32 rounding differs between XLA, OpenCL drivers and NumPy.
"""
import math

import numpy as np

from .compiled import compiled_when_eager
from ..core import dtypes
from ..core.array import Array
from ..core.shapes import broadcast_shapes, canonical_shape
from ..primitives import elementwise as ew
from ..primitives import views
from ..primitives.random_bits import bitcast_convert_type, nextafter, shift_right_logical
from .keys import _bits32, _device, _is_array, _threefry_pairs


# ---- float samplers --------------------------------------------------------------------------

def _float_dtype(name, dtype, device):
    d = dtypes.canonicalize(dtype, where=name)
    if dtypes.kind(d) != "f":
        raise ValueError(f"{name}: dtype must be a float dtype, got {d}")
    if d == dtypes.float64 and not device.capabilities.fp64:
        raise TypeError(f"{name}: float64 requested but {device.name} has no fp64 support")
    return d


def _param(name, arg, x, dtype, device):
    """A distribution parameter as an array of `dtype` (Python scalars: cached constants)."""
    if _is_array(x):
        return ew.convert_element_type(x, dtype)
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return views.full((), x, dtype, device=device)
    try:
        host = np.asarray(x)
    except Exception:
        raise TypeError(f"{name}: {arg} must be a number or an array, got "
                        f"{type(x).__name__}") from None
    if dtypes.kind(host.dtype) not in "biuf":
        raise TypeError(f"{name}: {arg} must be numeric, got dtype {host.dtype}")
    return Array.from_numpy(device, host.astype(dtype))


def _shape_of(x):
    return tuple(x.shape) if _is_array(x) else np.shape(x)


def _check_shape(name, shape, *param_shapes):
    """JAX's rule: parameter shapes broadcast to exactly `shape`."""
    try:
        got = broadcast_shapes(shape, *param_shapes, where=name)
    except ValueError:
        got = None
    if got != tuple(shape):
        raise ValueError(f"{name}: parameter shapes {', '.join(map(str, param_shapes))} must "
                         f"broadcast to the requested shape {tuple(shape)}")


def _unit_floats(name, key, shape, dtype):
    """Uniform [0, 1) values of `dtype`, bit-identical to JAX's construction."""
    if dtype == dtypes.float32:
        b = _bits32(name, key, shape)
        mantissa = shift_right_logical(b, views.full_like(b, 9))
        one_bits = views.full_like(b, 0x3F800000)
        f = bitcast_convert_type(ew.or_(mantissa, one_bits), dtypes.float32)
        return ew.sub(f, views.full_like(f, 1.0))
    if dtype in dtypes.STORAGE_FLOATS:
        # JAX: the low 16 bits of y1 ^ y2, (b >> 6 | 0x3c00) as half, minus 1 = m * 2^-10.
        # bfloat16 has 7 mantissa bits, for which JAX draws 8: the low 8 bits, (b >> 1 |
        # 0x3f80) as bfloat16, minus 1 = m * 2^-7. An 8-bit float: the low 8 bits, m of its
        # mantissa's width (exact in each format).
        width, nmant = (16, 10) if dtype == dtypes.float16 else (8, 7) \
            if dtype == dtypes.bfloat16 else (8, int(dtypes.finfo(dtype).nmant))
        b = _bits32(name, key, shape)
        m = shift_right_logical(ew.and_(b, views.full_like(b, (1 << width) - 1)),
                                views.full_like(b, width - nmant))
        f = ew.convert_element_type(m, dtypes.float32)
        f = ew.mul(f, views.full_like(f, 2.0 ** -nmant))
        return ew.convert_element_type(f, dtype)
    # float64 (JAX with x64): 64 bits y1 << 32 | y2; (bits >> 12) * 2^-52 = y1 * 2^-32 +
    # (y2 >> 12) * 2^-52, exact in double (the two parts occupy disjoint bits).
    y1, y2 = _threefry_pairs(name, key, shape)
    hi = ew.convert_element_type(y1, dtypes.float64)
    lo = ew.convert_element_type(shift_right_logical(y2, views.full_like(y2, 12)),
                                 dtypes.float64)
    return ew.add(ew.mul(hi, views.full_like(hi, 2.0 ** -32)),
                  ew.mul(lo, views.full_like(lo, 2.0 ** -52)))


def _uniform(name, key, shape, dtype, minval, maxval):
    device = _device(key)
    _check_shape(name, shape, _shape_of(minval), _shape_of(maxval))
    minval = _param(name, "minval", minval, dtype, device)
    maxval = _param(name, "maxval", maxval, dtype, device)
    floats = _unit_floats(name, key, shape, dtype)
    pshape = broadcast_shapes(minval.shape, maxval.shape, where=name)
    span = ew.sub(views.broadcast_to_rank(maxval, pshape), views.broadcast_to_rank(minval, pshape))
    span = views.broadcast_to_rank(span, shape)
    low = views.broadcast_to_rank(minval, shape)
    return ew.max_(low, ew.add(ew.mul(floats, span), low))


@compiled_when_eager
def uniform(key, shape=(), dtype=float, minval=0.0, maxval=1.0):
    """Uniform values in [minval, maxval) (minval/maxval broadcast to `shape`).

    >>> netcl.random.uniform(netcl.random.PRNGKey(0), (5,))
    """
    dtype = _float_dtype("uniform", dtype, _device(key))
    shape = canonical_shape(shape, "uniform")
    return _uniform("uniform", key, shape, dtype, minval, maxval)


def _normal(name, key, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(name, key, shape, dtype, lo, 1.0)
    return ew.mul(views.full_like(u, math.sqrt(2)), ew.erf_inv(u))


@compiled_when_eager
def normal(key, shape=(), dtype=float):
    """Standard normal values: sqrt(2) * erf_inv(u), u uniform in (-1, 1) (JAX's method).
    A complex dtype gives (x + iy) / sqrt(2) with x and y drawn from the two halves of a
    split key, as JAX does (unit variance of |z|).

    >>> random.normal(random.PRNGKey(0), (2,), jnp.complex64)
    """
    shape = canonical_shape(shape, "normal")
    d = dtypes.canonicalize(dtype, where="normal")
    if dtypes.is_complex(d):
        from .keys import split
        from ..primitives.complex_ops import complex as complex_
        part = _float_dtype("normal", dtypes.COMPLEX_PART[d], _device(key))
        k_re, k_im = split(key)
        scale = views.full(shape, 1 / math.sqrt(2), part, device=_device(key))
        return complex_(ew.mul(_normal("normal", k_re, shape, part), scale),
                        ew.mul(_normal("normal", k_im, shape, part), scale))
    dtype = _float_dtype("normal", dtype, _device(key))
    return _normal("normal", key, shape, dtype)


@compiled_when_eager
def truncated_normal(key, lower, upper, shape=None, dtype=float):
    """Standard normal values conditioned on lower < x < upper (inverse-CDF sampling).

    `shape` defaults to the broadcast shape of lower and upper; results lie in the open
    interval (clamped to the next floats inside the bounds, as JAX does).
    """
    device = _device(key)
    dtype = _float_dtype("truncated_normal", dtype, device)
    if shape is None:
        shape = broadcast_shapes(_shape_of(lower), _shape_of(upper), where="truncated_normal")
    else:
        shape = canonical_shape(shape, "truncated_normal")
        _check_shape("truncated_normal", shape, _shape_of(lower), _shape_of(upper))
    lower = _param("truncated_normal", "lower", lower, dtype, device)
    upper = _param("truncated_normal", "upper", upper, dtype, device)
    sqrt2 = math.sqrt(2)
    a = ew.erf(ew.div(lower, views.full_like(lower, sqrt2)))
    b = ew.erf(ew.div(upper, views.full_like(upper, sqrt2)))
    u = _uniform("truncated_normal", key, shape, dtype, a, b)
    out = ew.mul(views.full_like(u, sqrt2), ew.erf_inv(u))
    lo = nextafter(lower, views.full_like(lower, np.inf))
    hi = nextafter(upper, views.full_like(upper, -np.inf))
    out = ew.max_(out, views.broadcast_to_rank(lo, shape))
    return ew.min_(out, views.broadcast_to_rank(hi, shape))


@compiled_when_eager
def gumbel(key, shape=(), dtype=float, mode="low"):
    """Standard Gumbel values: -log(-log(u)), u uniform in [tiny, 1) (mode="high": JAX's
    more precise tail, the same numbers as JAX's).

    >>> netcl.random.gumbel(netcl.random.PRNGKey(0), (3,))
    """
    mode = gumbel_mode("gumbel", mode)
    dtype = _float_dtype("gumbel", dtype, _device(key))
    shape = canonical_shape(shape, "gumbel")
    return _gumbel("gumbel", key, shape, dtype, mode)


def gumbel_mode(name, mode):
    """JAX's mode= of the Gumbel-based samplers: None (its default, 'low'), 'low', 'high'."""
    if mode is None:
        return "low"
    if mode not in ("low", "high"):
        raise ValueError(f"{name}: mode must be 'low' or 'high', got {mode!r}")
    return mode


def _gumbel(name, key, shape, dtype, mode="low"):
    info = dtypes.finfo(dtype)
    if mode == "high":      # (as JAX: a second uniform fills in the low bits below 0.5)
        both = _uniform(name, key, (2,) + tuple(shape), dtype, 0.0, 1.0)
        high = views.reshape(views.slice(both, (0,) * (len(shape) + 1), (1,) + tuple(shape)),
                             tuple(shape))
        low = views.reshape(views.slice(both, (1,) + (0,) * len(shape), (2,) + tuple(shape)),
                            tuple(shape))
        filled = ew.add(ew.add(high, ew.mul(low, views.full_like(low, 2.0 ** -info.nmant))),
                        views.full_like(low, float(info.tiny)))
        x = ew.select(ew.ge(high, views.full_like(high, 0.5)), high, filled)
        return ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(x)))))
    u = _uniform(name, key, shape, dtype, float(info.tiny), 1.0)
    return ew.neg(ew.log(ew.neg(ew.log(u))))


@compiled_when_eager
def exponential(key, shape=(), dtype=float):
    """Standard exponential values: -log1p(-u)."""
    dtype = _float_dtype("exponential", dtype, _device(key))
    shape = canonical_shape(shape, "exponential")
    u = _uniform("exponential", key, shape, dtype, 0.0, 1.0)
    return ew.neg(ew.log1p(ew.neg(u)))


@compiled_when_eager
def laplace(key, shape=(), dtype=float):
    """Standard Laplace values: sign(u) * log1p(-|u|), u uniform in (-1, 1)."""
    dtype = _float_dtype("laplace", dtype, _device(key))
    shape = canonical_shape(shape, "laplace")
    u = _uniform("laplace", key, shape, dtype, -1.0 + float(dtypes.finfo(dtype).epsneg), 1.0)
    return ew.mul(ew.sign(u), ew.log1p(ew.neg(ew.abs_(u))))


@compiled_when_eager
def logistic(key, shape=(), dtype=float):
    """Standard logistic values: log(u / (1 - u)), u uniform in [eps, 1)."""
    dtype = _float_dtype("logistic", dtype, _device(key))
    shape = canonical_shape(shape, "logistic")
    u = _uniform("logistic", key, shape, dtype, float(dtypes.finfo(dtype).eps), 1.0)
    return ew.log(ew.div(u, ew.sub(views.full_like(u, 1), u)))


@compiled_when_eager
def cauchy(key, shape=(), dtype=float):
    """Standard Cauchy values: tan(pi * (u - 1/2)), u uniform in [eps, 1)."""
    dtype = _float_dtype("cauchy", dtype, _device(key))
    shape = canonical_shape(shape, "cauchy")
    u = _uniform("cauchy", key, shape, dtype, float(dtypes.finfo(dtype).eps), 1.0)
    return ew.tan(ew.mul(views.full_like(u, math.pi), ew.sub(u, views.full_like(u, 0.5))))
