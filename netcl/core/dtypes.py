"""Dtypes netcl supports, their OpenCL C spelling, and JAX's type-promotion rules.

Supported: bool, int32, uint32, float16 (storage; math in float), float32 (the default),
float64 (where the device has cl_khr_fp64). NumPy's int64/float64 inputs follow JAX:
int64 becomes int32; float64 stays float64 only when it comes from a NumPy array or is
asked for by name, so `jnp.array([1.0])` is float32.
"""
import numpy as np

bool_ = np.dtype(np.bool_)
int32 = np.dtype(np.int32)
uint32 = np.dtype(np.uint32)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)

SUPPORTED = (bool_, int32, uint32, float16, float32, float64)
DEFAULT_FLOAT = float32
DEFAULT_INT = int32

# OpenCL C type used in memory, and the type arithmetic happens in.
STORAGE_CTYPE = {bool_: "uchar", int32: "int", uint32: "uint", float16: "half",
                 float32: "float", float64: "double"}
COMPUTE_CTYPE = {bool_: "int", int32: "int", uint32: "uint", float16: "float",
                 float32: "float", float64: "double"}

# The JAX lattice restricted to our dtypes: the promoted type of two strong types.
_RANK = {bool_: 0, uint32: 1, int32: 1, float16: 2, float32: 3, float64: 4}


def canonicalize(dtype, *, arg="dtype", where="netcl"):
    """Map any dtype-like (str, numpy dtype, Python type) to a supported numpy dtype."""
    if dtype is float:
        return float32
    if dtype is int:
        return int32
    if dtype is bool:
        return bool_
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{where}: {arg}={dtype!r} is not a dtype") from None
    if d == np.int64 or d == np.int16 or d == np.int8:
        return int32
    if d == np.uint64 or d == np.uint16 or d == np.uint8:
        return uint32
    if d in SUPPORTED:
        return d
    raise TypeError(f"{where}: {arg}={d} is not supported; netcl supports "
                    f"{', '.join(str(s) for s in SUPPORTED)}")


def is_float(dtype):
    return dtype.kind == "f"


def is_int(dtype):
    return dtype.kind in "iu"


def promote_types(a, b):
    """Promoted dtype of two strong dtypes (JAX's table, without 64-bit ints)."""
    if a == b:
        return a
    ra, rb = _RANK[a], _RANK[b]
    if ra == rb == 1:  # int32 with uint32: JAX gives int64, canonical int32
        return int32
    return a if ra > rb else b


def _weak_kind(dtype):
    return 0 if dtype == bool_ else (1 if dtype.kind in "iu" else 2)


def result_type(*operands):
    """(dtype, weak_type) of combining operands, each an object with .dtype and .weak_type.

    Weak types (Python scalars and results computed only from them) take the type of the
    strong operands when their kind fits: `float32_array * 2.0` is float32, `int32_array * 2.5`
    is float32 (the default float), `float16_array + 1` is float16.
    """
    strong = None
    weak = None
    for x in operands:
        d = x.dtype
        if x.weak_type:
            weak = d if weak is None else promote_types(weak, d)
        else:
            strong = d if strong is None else promote_types(strong, d)
    if strong is None:
        return weak, True
    if weak is None or _weak_kind(weak) <= _weak_kind(strong):
        return strong, False
    # A weak float meeting strong ints/bools: the default float; weak int meeting bool: int32.
    return (DEFAULT_FLOAT if _weak_kind(weak) == 2 else DEFAULT_INT), False


def scalar_dtype(value):
    """The weak dtype of a Python scalar."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int32
    if isinstance(value, (float, np.floating)):
        return float32
    raise TypeError(f"{type(value).__name__} is not a numeric scalar")
