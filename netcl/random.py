"""netcl.random: jax.random's functions over the Threefry-2x32 counter-based generator.

A key is a uint32 array of shape (2,), as JAX's legacy `jax.random.PRNGKey` keys are (there
are no typed key arrays: `key(seed)` is an alias of `PRNGKey(seed)`). Every function is pure:
the same key gives the same numbers, on every device and on the NumPy fallback, and all the
work runs on the device through the `threefry2x32` primitive
(`netcl.primitives.random_bits`), so the functions trace under jit, grad and vmap.

The streams follow JAX's default threefry implementation with `jax_threefry_partitionable`
on (JAX's default since 0.5.0) and 64-bit types off (`jax_enable_x64=False`):

  PRNGKey(seed)      [0, seed mod 2^32]
  split(key, shape)  element i = threefry2x32(key, (0, i)) as the pair (y1, y2)
  fold_in(key, d)    threefry2x32(key, (0, d)) as the pair (y1, y2)
  bits(key, shape)   element i = y1 ^ y2 of threefry2x32(key, (0, i))
  uniform            float32: (bits >> 9 | 0x3f800000) reinterpreted, minus 1, scaled;
                     max(minval, u * (maxval - minval) + minval)
  normal             sqrt(2) * erf_inv(uniform(nextafter(-1, 0), 1))

so PRNGKey, split, fold_in, bits, randint, bernoulli and uniform are bit-identical to JAX,
on every device (PoCL, NVIDIA and the NumPy fallback give the same bits; under jit a GPU
compiler may fuse u * span + minval into an fma, which moves uniform with a span that is not
a power of two by an ulp). normal and the other transcendental samplers agree with JAX and
across devices to a few ulps: erf_inv and log are approximations whose float32 rounding
differs between XLA, OpenCL drivers and NumPy. `categorical` and `choice`
use the reductions (argmax, cumsum, sum) and netcl.numpy.take; `permutation` (and `choice`
without replacement) sort by random keys: on the device through netcl.lax.sort_key_val when
netcl has it, otherwise on the host in eager mode only (see `permutation`).

>>> from netcl import random
>>> key = random.PRNGKey(0)
>>> key, sub = random.split(key)
>>> x = random.normal(sub, (3, 4))
"""
import math
import operator

import numpy as np

from .core import dtypes
from .core.array import Array
from .core.devices import default_device
from .core.eval import to_array
from .core.shapes import broadcast_shapes, canonical_shape, normalize_axis, prod
from .core.tracing import Tracer
from .primitives import elementwise as ew
from .primitives import views
from .primitives.random_bits import (bitcast_convert_type, iota_2x32_shape, nextafter,
                                     shift_right_logical, threefry2x32)

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "truncated_normal", "bernoulli", "randint", "categorical",
           "gumbel", "exponential", "laplace", "logistic", "cauchy", "rademacher",
           "permutation", "choice"]

_U32 = dtypes.uint32
_M32 = 0xFFFFFFFF


# ---- keys ------------------------------------------------------------------------------------

def _is_array(x):
    return isinstance(x, (Array, Tracer))


def _device(x):
    """The device of a concrete array (constants are made there), else the default."""
    return x.device if isinstance(x, Array) else default_device()


def _counters(key, shape):
    """iota_2x32_shape on the key's device (traced keys: the default device at run time)."""
    return iota_2x32_shape(shape, key.device if isinstance(key, Array) else None)


def _check_impl(name, impl):
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"{name}: impl={impl!r} is not available; netcl implements only "
                         "'threefry2x32'")


def _check_key(name, key):
    """The key as an array, or a TypeError/ValueError naming `name`."""
    if not _is_array(key):
        if not isinstance(key, np.ndarray):
            raise TypeError(f"{name}: expected a PRNG key (a uint32 array of shape (2,) from "
                            f"netcl.random.PRNGKey or split), got {type(key).__name__}")
        if key.dtype != np.uint32:
            raise TypeError(f"{name}: a PRNG key must have dtype uint32, got {key.dtype}")
        key = to_array(key, name)
    if key.dtype != _U32:
        raise TypeError(f"{name}: a PRNG key must have dtype uint32 (from netcl.random.PRNGKey "
                        f"or split), got {key.dtype}")
    if tuple(key.shape) != (2,):
        raise ValueError(f"{name}: expected a single PRNG key of shape (2,), got shape "
                         f"{tuple(key.shape)}; map over a batch of keys with netcl.vmap")
    return key


def _key_words(name, key):
    """(k1, k2): the two 0-d uint32 words of a checked key (views when eager)."""
    key = _check_key(name, key)
    k1 = views.reshape(views.slice(key, (0,), (1,)), ())
    k2 = views.reshape(views.slice(key, (1,), (2,)), ())
    return key, k1, k2


_lane_masks = {}


def _stack_pair(a, b):
    """Stack two arrays of one shape and dtype along a new last axis of size 2."""
    device = _device(a)
    mask = _lane_masks.get(device)
    if mask is None:
        mask = _lane_masks[device] = Array.from_numpy(device, np.array([True, False]))
    shape = tuple(a.shape) + (2,)
    dims = tuple(range(a.ndim))
    return ew.select(views.broadcast_in_dim(mask, shape, (a.ndim,)),
                     views.broadcast_in_dim(a, shape, dims),
                     views.broadcast_in_dim(b, shape, dims))


def PRNGKey(seed, *, impl=None):
    """A PRNG key (uint32[2]) from an integer seed, as jax.random.PRNGKey without x64:
    [0, seed mod 2^32].

    `seed` is a Python or NumPy integer in [-2^63, 2^63), or a 0-d integer array (which may
    be traced, e.g. under vmap over seeds).

    >>> netcl.random.PRNGKey(42)     # Array([ 0, 42], dtype=uint32)
    """
    _check_impl("PRNGKey", impl)
    if _is_array(seed):
        if seed.ndim:
            raise TypeError(f"PRNGKey: seed must be a scalar, got an array of shape "
                            f"{tuple(seed.shape)}; map over seeds with netcl.vmap")
        if seed.dtype.kind not in "iu":
            raise TypeError(f"PRNGKey: seed must be an integer, got dtype {seed.dtype}")
        low = ew.convert_element_type(seed, _U32)
        return _stack_pair(views.full((), 0, _U32, device=_device(seed)), low)
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("PRNGKey: seed must be an integer, got a bool")
    try:
        s = operator.index(seed)
    except TypeError:
        if np.ndim(seed):
            raise TypeError(f"PRNGKey: seed must be a scalar, got shape {np.shape(seed)}; "
                            "map over seeds with netcl.vmap") from None
        raise TypeError(f"PRNGKey: seed must be an integer, got {type(seed).__name__} "
                        f"{seed!r}") from None
    if not -2**63 <= s < 2**63:
        raise ValueError(f"PRNGKey: seed {s} does not fit in 64 bits")
    return Array.from_numpy(default_device(), np.array([0, s & _M32], dtype=np.uint32))


def key(seed, *, impl=None):
    """Alias of `PRNGKey` (netcl has no typed key arrays; keys are raw uint32[2])."""
    _check_impl("key", impl)
    return PRNGKey(seed)


def key_data(keys):
    """The uint32 data of keys: the keys themselves (keys are raw uint32 arrays here)."""
    if not _is_array(keys) or keys.dtype != _U32 or not keys.ndim or keys.shape[-1] != 2:
        raise TypeError(f"key_data: expected uint32 key data of shape (..., 2), got "
                        f"{getattr(keys, 'dtype', type(keys).__name__)} "
                        f"{tuple(getattr(keys, 'shape', ()))}")
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from uint32 data of shape (..., 2): the data itself (keys are raw here)."""
    _check_impl("wrap_key_data", impl)
    if not _is_array(key_bits_array):
        key_bits_array = to_array(np.asarray(key_bits_array), "wrap_key_data")
    return key_data(key_bits_array)


def split(key, num=2):
    """`num` new keys (an int, or a tuple for a shape of keys) from one key: shape (*num, 2).

    >>> k1, k2 = netcl.random.split(netcl.random.PRNGKey(0))
    """
    key, k1, k2 = _key_words("split", key)
    shape = canonical_shape(num, "split", "num")
    hi, lo = _counters(key, shape)
    y1, y2 = threefry2x32(k1, k2, hi, lo)
    return _stack_pair(y1, y2)


def _uint32_data(name, data, device):
    """`data` as a 0-d uint32 array (Python ints in [-2^31, 2^32) wrap modulo 2^32)."""
    if _is_array(data):
        if data.ndim:
            raise TypeError(f"{name}: data must be a scalar, got an array of shape "
                            f"{tuple(data.shape)}; map over data with netcl.vmap")
        if data.dtype.kind not in "iu":
            raise TypeError(f"{name}: data must be an integer, got dtype {data.dtype}")
        return ew.convert_element_type(data, _U32)
    if isinstance(data, (bool, np.bool_)):
        raise TypeError(f"{name}: data must be an integer, got a bool")
    try:
        d = operator.index(data)
    except TypeError:
        raise TypeError(f"{name}: data must be a scalar integer, got {type(data).__name__} "
                        f"{data!r}") from None
    if not -2**31 <= d < 2**32:
        raise ValueError(f"{name}: data {d} does not fit in 32 bits")
    return views.full((), d & _M32, _U32, device=device)


def fold_in(key, data):
    """A new key from `key` and a 32-bit integer `data` (e.g. a step or layer index).

    >>> k = netcl.random.fold_in(netcl.random.PRNGKey(0), 7)
    """
    key, k1, k2 = _key_words("fold_in", key)
    device = _device(key)
    d = _uint32_data("fold_in", data, device)
    y1, y2 = threefry2x32(k1, k2, views.full((), 0, _U32, device=device), d)
    return _stack_pair(y1, y2)


# ---- bits --------------------------------------------------------------------------------

def _threefry_pairs(name, key, shape):
    """(y1, y2) of threefry2x32(key, counters) for the flat index of every element."""
    key, k1, k2 = _key_words(name, key)
    hi, lo = _counters(key, shape)
    return threefry2x32(k1, k2, hi, lo)


def _bits32(name, key, shape):
    y1, y2 = _threefry_pairs(name, key, shape)
    return ew.xor(y1, y2)


def bits(key, shape=(), dtype=None):
    """Uniform random uint32 values of `shape` (JAX's `jax.random.bits` with x64 off).

    >>> netcl.random.bits(netcl.random.PRNGKey(0), (4,))
    """
    if dtype is not None:
        try:
            d = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"bits: dtype={dtype!r} is not a dtype") from None
        if d.kind != "u":
            raise ValueError(f"bits: dtype must be an unsigned integer dtype, got {d}")
        if d.itemsize < 4:
            raise TypeError(f"bits: netcl has no {d} dtype; use uint32")
    shape = canonical_shape(shape, "bits")
    return _bits32("bits", key, shape)


# ---- float samplers --------------------------------------------------------------------------

def _float_dtype(name, dtype, device):
    d = dtypes.canonicalize(dtype, where=name)
    if d.kind != "f":
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
    if host.dtype.kind not in "biuf":
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
    if dtype == dtypes.float16:
        # JAX: the low 16 bits of y1 ^ y2, (b >> 6 | 0x3c00) as half, minus 1 = m * 2^-10.
        b = _bits32(name, key, shape)
        m = shift_right_logical(ew.and_(b, views.full_like(b, 0xFFFF)), views.full_like(b, 6))
        f = ew.convert_element_type(m, dtypes.float32)
        f = ew.mul(f, views.full_like(f, 2.0 ** -10))
        return ew.convert_element_type(f, dtypes.float16)
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


def uniform(key, shape=(), dtype=dtypes.float32, minval=0.0, maxval=1.0):
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


def normal(key, shape=(), dtype=dtypes.float32):
    """Standard normal values: sqrt(2) * erf_inv(u), u uniform in (-1, 1) (JAX's method)."""
    dtype = _float_dtype("normal", dtype, _device(key))
    shape = canonical_shape(shape, "normal")
    return _normal("normal", key, shape, dtype)


def truncated_normal(key, lower, upper, shape=None, dtype=dtypes.float32):
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


def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability p (uniform(key, shape, p.dtype) < p)."""
    device = _device(key)
    if _is_array(p):
        if p.dtype.kind != "f":
            raise TypeError(f"bernoulli: p must have a floating dtype, got {p.dtype}")
        pd = p.dtype
    elif isinstance(p, float):
        pd = dtypes.float32
    else:
        host = np.asarray(p)
        if host.dtype.kind != "f":
            raise TypeError(f"bernoulli: p must have a floating dtype, got {host.dtype}")
        pd = dtypes.canonicalize(host.dtype, where="bernoulli")
    if shape is None:
        shape = _shape_of(p)
    else:
        shape = canonical_shape(shape, "bernoulli")
        _check_shape("bernoulli", shape, _shape_of(p))
    p = _param("bernoulli", "p", p, pd, device)
    u = _uniform("bernoulli", key, shape, pd, 0.0, 1.0)
    return ew.lt(u, views.broadcast_to_rank(p, shape))


def gumbel(key, shape=(), dtype=dtypes.float32, mode="low"):
    """Standard Gumbel values: -log(-log(u)), u uniform in [tiny, 1)."""
    if mode != "low":
        raise ValueError(f"gumbel: mode={mode!r} is not supported; netcl implements 'low'")
    dtype = _float_dtype("gumbel", dtype, _device(key))
    shape = canonical_shape(shape, "gumbel")
    return _gumbel("gumbel", key, shape, dtype)


def _gumbel(name, key, shape, dtype):
    u = _uniform(name, key, shape, dtype, float(np.finfo(dtype).tiny), 1.0)
    return ew.neg(ew.log(ew.neg(ew.log(u))))


def exponential(key, shape=(), dtype=dtypes.float32):
    """Standard exponential values: -log1p(-u)."""
    dtype = _float_dtype("exponential", dtype, _device(key))
    shape = canonical_shape(shape, "exponential")
    u = _uniform("exponential", key, shape, dtype, 0.0, 1.0)
    return ew.neg(ew.log1p(ew.neg(u)))


def laplace(key, shape=(), dtype=dtypes.float32):
    """Standard Laplace values: sign(u) * log1p(-|u|), u uniform in (-1, 1)."""
    dtype = _float_dtype("laplace", dtype, _device(key))
    shape = canonical_shape(shape, "laplace")
    u = _uniform("laplace", key, shape, dtype, -1.0 + float(np.finfo(dtype).epsneg), 1.0)
    return ew.mul(ew.sign(u), ew.log1p(ew.neg(ew.abs_(u))))


def logistic(key, shape=(), dtype=dtypes.float32):
    """Standard logistic values: log(u / (1 - u)), u uniform in [eps, 1)."""
    dtype = _float_dtype("logistic", dtype, _device(key))
    shape = canonical_shape(shape, "logistic")
    u = _uniform("logistic", key, shape, dtype, float(np.finfo(dtype).eps), 1.0)
    return ew.log(ew.div(u, ew.sub(views.full_like(u, 1), u)))


def cauchy(key, shape=(), dtype=dtypes.float32):
    """Standard Cauchy values: tan(pi * (u - 1/2)), u uniform in [eps, 1)."""
    dtype = _float_dtype("cauchy", dtype, _device(key))
    shape = canonical_shape(shape, "cauchy")
    u = _uniform("cauchy", key, shape, dtype, float(np.finfo(dtype).eps), 1.0)
    return ew.tan(ew.mul(views.full_like(u, math.pi), ew.sub(u, views.full_like(u, 0.5))))


# ---- integer samplers ------------------------------------------------------------------------

def _int_bound(name, arg, x, dtype, device):
    """(bound as `dtype`, whether it exceeds dtype's max): JAX's convert-and-clip of an
    integer bound (float bounds are truncated to int32 first, as JAX's astype(int))."""
    info = np.iinfo(dtype)
    if isinstance(x, (int, np.integer, np.bool_)):  # exact on the host
        v = int(x)
        return views.full((), min(max(v, info.min), info.max), dtype, device=device), \
            v > info.max
    if not _is_array(x):
        host = np.asarray(x)
        if host.dtype.kind not in "biuf":
            raise TypeError(f"{name}: {arg} must be an integer or an array, got "
                            f"{type(x).__name__}")
        x = to_array(host if host.dtype.kind != "f" else host.astype(np.int32), name, device)
    if x.dtype.kind not in "iu":
        x = ew.convert_element_type(x, dtypes.int32)
    over = False
    if x.dtype != dtype:
        if x.dtype == _U32:  # uint32 bound, int32 result: clip above
            top = views.full_like(x, info.max)
            over = ew.gt(x, top)
            x = ew.min_(x, top)
        else:  # int32 bound, uint32 result: clip below
            x = ew.max_(x, views.full_like(x, 0))
        x = ew.convert_element_type(x, dtype)
    return x, over


def _is_static_number(x):
    """A finite Python/NumPy scalar (a bound known before anything is traced)."""
    if isinstance(x, (float, np.floating)):
        return math.isfinite(x)
    return isinstance(x, (bool, int, np.integer, np.bool_))


def randint(key, shape, minval, maxval, dtype=dtypes.int32):
    """Integers uniform in [minval, maxval) (bounds broadcast to `shape`). JAX's method: two
    words of bits reduced modulo the span.

    Scalar bounds with minval >= maxval raise ValueError (an empty range); array bounds are
    data and follow JAX: where maxval <= minval the result is minval.

    >>> netcl.random.randint(netcl.random.PRNGKey(0), (3,), 0, 10)
    """
    key = _check_key("randint", key)
    device = _device(key)
    dtype = dtypes.canonicalize(dtype, where="randint")
    if dtype.kind not in "iu":
        raise TypeError(f"randint: dtype must be an integer dtype, got {dtype}")
    shape = canonical_shape(shape, "randint")
    if _is_static_number(minval) and _is_static_number(maxval) \
            and not math.trunc(minval) < math.trunc(maxval):
        raise ValueError(f"randint: minval ({minval}) must be less than maxval ({maxval})")
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    lo, _ = _int_bound("randint", "minval", minval, dtype, device)
    hi, over = _int_bound("randint", "maxval", maxval, dtype, device)
    pshape = broadcast_shapes(lo.shape, hi.shape, where="randint")
    lo_p, hi_p = views.broadcast_to_rank(lo, pshape), views.broadcast_to_rank(hi, pshape)

    keys = split(key)
    k_hi = views.reshape(views.slice(keys, (0, 0), (1, 2)), (2,))
    k_lo = views.reshape(views.slice(keys, (1, 0), (2, 2)), (2,))
    higher = _bits32("randint", k_hi, shape)
    lower = _bits32("randint", k_lo, shape)

    span = ew.sub(ew.convert_element_type(hi_p, _U32), ew.convert_element_type(lo_p, _U32))
    span = ew.select(ew.le(hi_p, lo_p), views.full_like(span, 1), span)
    if over is not False:
        grow = ew.gt(hi_p, lo_p)
        if over is not True:
            grow = ew.and_(views.broadcast_to_rank(over, pshape), grow)
        span = ew.select(grow, ew.add(span, views.full_like(span, 1)), span)
    mult = ew.rem(views.full_like(span, 2 ** 16), span)
    mult = ew.rem(ew.mul(mult, mult), span)

    span_s, mult_s = views.broadcast_to_rank(span, shape), views.broadcast_to_rank(mult, shape)
    offset = ew.add(ew.mul(ew.rem(higher, span_s), mult_s), ew.rem(lower, span_s))
    offset = ew.rem(offset, span_s)
    low_s = ew.convert_element_type(views.broadcast_to_rank(lo, shape), _U32)
    return ew.convert_element_type(ew.add(low_s, offset), dtype)


def rademacher(key, shape=(), dtype=dtypes.int32):
    """-1 or +1 with equal probability."""
    dtype = dtypes.canonicalize(dtype, where="rademacher")
    shape = canonical_shape(shape, "rademacher")
    b = ew.convert_element_type(bernoulli(key, 0.5, shape), dtype)
    return ew.sub(ew.mul(views.full_like(b, 2), b), views.full_like(b, 1))


# ---- samplers built on reductions, sorts and gathers ----------------------------------------

def _numpy_fn(name, where):
    from . import numpy as jnp
    fn = getattr(jnp, name, None)
    if fn is None:
        raise NotImplementedError(f"{where} needs netcl.numpy.{name}, which this build of "
                                  "netcl does not provide yet")
    return fn


def categorical(key, logits, axis=-1, shape=None):
    """Samples of categorical distributions given by unnormalised log-probabilities along
    `axis` (the Gumbel-max trick: argmax(logits + gumbel noise)); int32 indices.

    `shape` defaults to logits' shape without `axis`; a longer shape draws several samples
    per distribution (its leading dimensions).
    """
    from .numpy._util import asarray_arg
    key = _check_key("categorical", key)
    logits = asarray_arg(logits, "categorical")
    if logits.dtype.kind != "f":
        raise TypeError(f"categorical: logits must have a floating dtype, got {logits.dtype}")
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    ax = normalize_axis(axis, logits.ndim, "categorical")
    batch_shape = tuple(s for i, s in enumerate(logits.shape) if i != ax)
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(ax, logits.shape[ax])
    full_shape = tuple(prefix) + tuple(logits_shape)
    from .primitives.reductions import argmax
    noise = _gumbel("categorical", key, full_shape, logits.dtype)
    scores = ew.add(noise, views.broadcast_to_rank(logits, full_shape))
    return argmax(scores, len(prefix) + ax, dtypes.int32)


def _arange(n, key):
    _, lo = _counters(key, (n,))
    return ew.convert_element_type(lo, dtypes.int32)


def _searchsorted_left(sorted_1d, values_1d):
    """For each value, the number of entries of sorted_1d strictly below it (numpy's
    searchsorted, side='left'), by comparing all pairs: O(len(values) * len(sorted))."""
    from .primitives.reductions import reduce_sum
    n, m = sorted_1d.shape[0], values_1d.shape[0]
    below = ew.lt(views.broadcast_in_dim(sorted_1d, (m, n), (1,)),
                  views.broadcast_in_dim(values_1d, (m, n), (0,)))
    return reduce_sum(ew.convert_element_type(below, dtypes.int32), (1,))


def _sort_by_keys(sort_keys, x, axis, where="permutation"):
    """x reordered along `axis` by ascending sort_keys (stable)."""
    from . import lax
    sort_key_val = getattr(lax, "sort_key_val", None)
    if sort_key_val is not None:
        return sort_key_val(sort_keys, x, axis)[1]
    # No device sort in this build: eager-only host path (see `permutation`).
    if not (isinstance(sort_keys, Array) and isinstance(x, Array)):
        raise NotImplementedError(
            f"{where}: under jit/vmap/grad netcl needs a device sort "
            "(netcl.lax.sort_key_val), which this build does not provide yet; call it "
            "outside the transform")
    order = np.argsort(np.asarray(sort_keys), axis=axis, kind="stable")
    host = np.take_along_axis(np.asarray(x), order, axis=axis)
    return Array.from_numpy(x.device, host, x.weak_type)


def _shuffle(key, x, axis):
    # JAX's method: sort by fresh 32-bit keys, enough rounds that all keys are distinct with
    # high probability (3 * log(n) / log(2^32 - 1) rounds).
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = split(key)
        key = views.reshape(views.slice(keys, (0, 0), (1, 2)), (2,))
        sub = views.reshape(views.slice(keys, (1, 0), (2, 2)), (2,))
        x = _sort_by_keys(_bits32("permutation", sub, tuple(x.shape)), x, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of range(x) (x an int) or of x's entries along `axis`.

    As JAX: sorts along `axis` by random 32-bit keys (`independent=True` shuffles each slice
    separately; otherwise whole slices move together). The sort runs on the device through
    `netcl.lax.sort_key_val` when netcl has it; until then the sort runs on the host, which
    works in eager mode only (under jit/vmap/grad it raises NotImplementedError).
    """
    from .numpy._util import asarray_arg
    key = _check_key("permutation", key)
    if not _is_array(x) and np.ndim(x) == 0:
        if isinstance(x, (bool, np.bool_)) or np.asarray(x).dtype.kind not in "iu":
            raise TypeError(f"permutation: x must be an integer or an array with at least "
                            f"one dimension, got {x!r}")
        n = operator.index(x)
        if n < 0:
            raise ValueError(f"permutation: x must be non-negative, got {n}")
        return _shuffle(key, _arange(n, key), 0)
    x = asarray_arg(x, "permutation")
    if x.ndim == 0:
        if x.dtype.kind not in "iu":
            raise TypeError(f"permutation: x must be an integer or at least 1-d, got a 0-d "
                            f"{x.dtype} array")
        return _shuffle(key, _arange(operator.index(x), key), 0)
    ax = normalize_axis(axis, x.ndim, "permutation")
    if independent or x.ndim == 1:
        return _shuffle(key, x, ax)
    ind = _shuffle(key, _arange(x.shape[ax], key), 0)
    return _numpy_fn("take", "permutation")(x, ind, axis=ax)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random samples of a (an int n means range(n)) along `axis`, with or without
    replacement, uniformly or with probabilities p.

    JAX's methods: randint (uniform, with replacement); a prefix of a permutation (uniform,
    without); the inverse CDF (p, with: cumsum, then a search done by comparing every draw
    with every cumulative probability, O(draws * len(p)) work); Gumbel top-k (p, without: a
    sort, eager-only until netcl has a device sort, as `permutation`).
    """
    from .numpy._util import asarray_arg
    key = _check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = canonical_shape(shape, "choice")
    scalar = not _is_array(a) and np.ndim(a) == 0
    if scalar:
        if isinstance(a, (bool, np.bool_)) or np.asarray(a).dtype.kind not in "iu":
            raise TypeError(f"choice: a must be an integer or an array, got {a!r}")
        n_inputs = operator.index(a)
        arr = None
    else:
        arr = asarray_arg(a, "choice")
        if arr.ndim == 0:
            raise ValueError("choice: a must be an integer or an array with a dimension")
        axis = normalize_axis(axis, arr.ndim, "choice")
        n_inputs = arr.shape[axis]
    n_draws = prod(shape)
    out_dtype = dtypes.int32 if arr is None else arr.dtype
    if n_draws == 0:
        out_shape = shape if arr is None else arr.shape[:axis] + shape + arr.shape[axis + 1:]
        return views.full(out_shape, 0, out_dtype, device=_device(key))
    if n_inputs <= 0:
        raise ValueError(f"choice: a must be greater than 0 unless no samples are taken, "
                         f"got {n_inputs}")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                         f"population (size {n_inputs}) when replace=False")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
        else:
            perm = permutation(key, n_inputs)
            ind = views.slice(perm, (0,), (n_draws,))
    else:
        p = asarray_arg(p, "choice")
        if p.dtype.kind != "f":
            p = ew.convert_element_type(p, dtypes.float32)
        if tuple(p.shape) != (n_inputs,):
            raise ValueError(f"choice: p must be None or a 1-d vector of the same size as "
                             f"a.shape[axis], got p of shape {tuple(p.shape)} for "
                             f"{n_inputs} inputs")
        if replace:
            from .primitives.reductions import cumsum
            cum = cumsum(p, 0)
            total = views.reshape(views.slice(cum, (n_inputs - 1,), (n_inputs,)), ())
            u = _uniform("choice", key, shape, p.dtype, 0.0, 1.0)
            r = ew.mul(views.broadcast_to_rank(total, shape),
                       ew.sub(views.full_like(u, 1), u))
            ind = _searchsorted_left(cum, views.reshape(r, (n_draws,)))
        else:
            g = ew.sub(ew.neg(_gumbel("choice", key, (n_inputs,), p.dtype)), ew.log(p))
            order = _sort_by_keys(g, _arange(n_inputs, key), 0, "choice")
            ind = views.slice(order, (0,), (n_draws,))
    if arr is None:
        return views.reshape(ind, shape)
    ind = views.reshape(ind, (n_draws,))
    out = _numpy_fn("take", "choice of an array")(arr, ind, axis=axis)
    return views.reshape(out, arr.shape[:axis] + shape + arr.shape[axis + 1:])
