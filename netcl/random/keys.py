"""PRNG keys and raw bits: PRNGKey/key, split, fold_in, bits, key_data, wrap_key_data.

A key is a uint32 array of shape (2,), as JAX's legacy `jax.random.PRNGKey` keys are (there
are no typed key arrays: `key(seed)` is an alias of `PRNGKey(seed)`). All the work runs on the
device through the `threefry2x32` primitive (`netcl.primitives.random_bits`), so the
functions trace under jit, grad and vmap.

The streams follow JAX's default threefry implementation with `jax_threefry_partitionable`
on (JAX's default since 0.5.0) and 64-bit types off (`jax_enable_x64=False`):

  PRNGKey(seed)      [0, seed mod 2^32]
  split(key, shape)  element i = threefry2x32(key, (0, i)) as the pair (y1, y2)
  fold_in(key, d)    threefry2x32(key, (0, d)) as the pair (y1, y2)
  bits(key, shape)   element i = y1 ^ y2 of threefry2x32(key, (0, i))

The private helpers here (_check_key, _bits32, _threefry_pairs, ...) are the streams the
samplers in continuous.py and discrete.py draw from.
"""
import operator

import numpy as np

from .compiled import compiled_when_eager
from ..core import dtypes
from ..core.array import Array
from ..core.devices import default_device
from ..core.eval import to_array
from ..core.shapes import canonical_shape
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives.random_bits import shift_left, shift_right_logical
from ..primitives import views
from ..primitives.random_bits import iota_2x32_shape, threefry2x32


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
    """A PRNG key (uint32[2]) from an integer seed, as jax.random.PRNGKey: the seed's high
    and low 32 bits as a 64-bit int with x64 (and for int64 seed arrays), [0, seed mod 2^32]
    without.

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
        if seed.dtype.itemsize == 8:
            high = ew.convert_element_type(
                shift_right_logical(seed, views.full((), 32, seed.dtype)), _U32)
        else:
            high = views.full((), 0, _U32, device=_device(seed))
        return _stack_pair(high, low)
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
    high = (s % 2**64) >> 32 if dtypes.default_int_dtype() == dtypes.int64 else 0
    return Array.from_numpy(default_device(), np.array([high, s & _M32], dtype=np.uint32))


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


@compiled_when_eager
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


def _bits64(name, key, shape):
    """64 random bits per element as JAX draws them (threefry, partitionable): the pair's
    first word high, its second low."""
    y1, y2 = _threefry_pairs(name, key, shape)
    hi = ew.convert_element_type(y1, dtypes.uint64)
    hi = shift_left(hi, views.full(tuple(hi.shape), 32, dtypes.uint64))
    return ew.or_(hi, ew.convert_element_type(y2, dtypes.uint64))


def _bits(name, key, shape, nbits):
    """`nbits` (32 or 64) random bits per element, as uint32 or uint64."""
    return _bits64(name, key, shape) if nbits == 64 else _bits32(name, key, shape)


@compiled_when_eager
def bits(key, shape=(), dtype=None):
    """Uniform random unsigned values of `shape`: uint32, or with dtype=uint64 (x64) 64 bits
    each, as JAX's `jax.random.bits`.

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
        if dtypes.canonicalize(d, where="bits") == dtypes.uint64:
            return _bits64("bits", key, canonical_shape(shape, "bits"))
    shape = canonical_shape(shape, "bits")
    return _bits32("bits", key, shape)
