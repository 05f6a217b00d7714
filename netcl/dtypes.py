"""netcl.dtypes: jax.dtypes' helpers over netcl's dtypes (bool, int32, uint32, the narrow
integers int4, uint4, int2, uint2, int1, uint1, float16, bfloat16, the 8-bit floats
(float8_e4m3fn, float8_e5m2, ...) and MX floats (float4_e2m1fn, float6_e2m3fn,
float6_e3m2fn), float32; int64, uint64 and float64 with x64).

>>> netcl.dtypes.canonicalize_dtype(np.float64)     # float32 unless x64 is enabled
>>> netcl.dtypes.issubdtype(jnp.bfloat16, jnp.floating)   # True
"""
import numpy as np

from .core import dtypes as _dtypes

__all__ = ["bfloat16", "canonicalize_dtype", "finfo", "float0", "iinfo", "issubdtype",
           "itemsize_bits", "result_type", "scalar_type_of", "TypePromotionError",
           "extended", "prng_key"]

bfloat16 = _dtypes.bfloat16
# The dtype of tangents of integer inputs in JAX (custom_jvp rules build zeros of it).
float0 = np.dtype([("float0", np.void, 0)])


class extended(np.generic):
    """jax.dtypes.extended: the abstract type of JAX's extended dtypes (typed PRNG keys).
    netcl has none: its keys are uint32 arrays (as JAX's raw keys, `random.PRNGKey`), so no
    netcl dtype is a subtype and `issubdtype(key.dtype, prng_key)` is False, which sends
    programs written for both kinds of key down their raw-key path."""


class prng_key(extended):
    """jax.dtypes.prng_key (see `extended`)."""


# jax.dtypes.TypePromotionError: an 8-bit float meeting another float raises it, as in JAX
# (and random's samplers for an argument they cannot safely cast)
TypePromotionError = _dtypes.TypePromotionError


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype netcl stores data of `dtype` as: float64, int64 and uint64 become float32,
    int32 and uint32 unless x64 is enabled, int8/int16/uint8/uint16 widen to int32 / uint32
    (netcl has no narrow integers); unsupported dtypes raise a TypeError.

    >>> netcl.dtypes.canonicalize_dtype("int64")    # dtype('int32') unless x64 is enabled
    """
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"canonicalize_dtype: {dtype!r} is not a dtype") from None
    if d == float0:
        return d
    return _dtypes.canonicalize_data(d, where="canonicalize_dtype")


def issubdtype(a, b):
    """NumPy's issubdtype where bfloat16 is a floating type (as jax.dtypes.issubdtype).

    >>> netcl.dtypes.issubdtype(jnp.bfloat16, np.inexact)    # True
    """
    from .numpy import issubdtype as _issubdtype
    return _issubdtype(a, b)


def finfo(dtype):
    """Machine limits of a float dtype, bfloat16 included.

    >>> netcl.dtypes.finfo(jnp.bfloat16).eps     # 0.0078125
    """
    d = _as_dtype(dtype, "finfo")
    if _dtypes.kind(d) != "f":
        raise TypeError(f"finfo: {d} is not a float dtype")
    return _dtypes.finfo(d)


def iinfo(dtype):
    """Machine limits of an integer dtype, int4, uint4, ... included.

    >>> netcl.dtypes.iinfo(jnp.int32).max     # 2147483647
    >>> netcl.dtypes.iinfo(jnp.int4).min      # -8
    """
    d = _as_dtype(dtype, "iinfo")
    if _dtypes.kind(d) not in "iu":
        raise TypeError(f"iinfo: {d} is not an integer dtype")
    return _dtypes.iinfo(d)


def result_type(*args, return_weak_type_flag=False):
    """The dtype JAX's promotion gives `args` (arrays, scalars, dtypes; Python's int and
    float types are weak, as Python scalars), and with `return_weak_type_flag` whether it
    is weak.

    >>> netcl.dtypes.result_type(jnp.ones(2, jnp.int32), 1.0)    # float32 (float64 with x64)
    """
    from .numpy._util import promotion_operand
    d, weak = _dtypes.result_type(*[promotion_operand(a, "result_type") for a in args])
    return (d, weak) if return_weak_type_flag else d


def scalar_type_of(x):
    """The Python scalar type of an array's or scalar's dtype (bool, int or float).

    >>> netcl.dtypes.scalar_type_of(jnp.ones(2))     # float
    """
    d = np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)
    k = _dtypes.kind(d)
    if k == "b":
        return bool
    if k in "iu":
        return int
    if k == "f":
        return float
    raise TypeError(f"scalar_type_of: no Python scalar type for dtype {d}")


def itemsize_bits(dtype):
    """Bits per element of `dtype`: 4 for int4 and float4_e2m1fn, 6 for the float6 formats,
    as in JAX (each is held in one byte).

    >>> netcl.dtypes.itemsize_bits(jnp.bfloat16)    # 16
    """
    d = _as_dtype(dtype, "itemsize_bits")
    if d in _dtypes.SUBBYTE_BITS:
        return _dtypes.SUBBYTE_BITS[d]
    if d in _dtypes.MX_FLOATS:
        return _dtypes.finfo(d).bits
    return d.itemsize * 8


def _as_dtype(dtype, where):
    try:
        return np.dtype(getattr(dtype, "dtype", dtype))
    except TypeError:
        raise TypeError(f"{where}: {dtype!r} is not a dtype") from None
