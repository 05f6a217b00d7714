"""Dtypes netcl supports, their OpenCL C spelling, and JAX's type-promotion rules.

Supported: bool, int32, uint32, float16 and bfloat16 (storage; math in float), JAX's 8-bit
floats (float8_e4m3fn, float8_e5m2 and the other ml_dtypes float8 formats) and MX floats
(float4_e2m1fn, float6_e2m3fn, float6_e3m2fn) (storage, one byte each; math in float, see
float8.py), JAX's narrow integers int4, uint4, int2, uint2, int1, uint1 (storage, one byte
each as in ml_dtypes' arrays: the value's bits in the low bits; math in int/uint registers,
wrapped to the width when stored, see SUBBYTE_INTS and subbyte.py), float32, complex64
(OpenCL's float2: real and imaginary parts interleaved, NumPy's layout), and with
`netcl.config.enable_x64` int64, uint64 (OpenCL's long/ulong: core in every full-profile
device), float64 and complex128 (double2; where the device has cl_khr_fp64). Without x64,
NumPy's 64-bit inputs follow JAX: int64/uint64 become int32/uint32, float64 float32 and
complex128 complex64.

The defaults follow JAX and read the setting at each call: the default float (Python
floats, creation functions and samplers without a dtype, a weak float meeting ints) is
float32, or float64 with x64; the default int (Python ints, arange, argmax, indices) is
int32, or int64 with x64. Strong int32/uint32/bool arrays that need a float become float32
in both modes, 64-bit ints float64, as in JAX (`inexact_dtype`).

Two canonicalisations: `canonicalize` for dtype *arguments* (``dtype=``, ``astype``), which
raises for dtypes netcl cannot hold (int8, strings, ...) instead of silently giving another,
and `canonicalize_data` for the dtype of data handed in (a NumPy uint8 image becomes uint32,
values kept). Python data goes through `from_python`/`check_int`: a Python int that would
wrap in its integer target raises OverflowError, as in JAX.

Promotion follows JAX's lattice: the 8-bit (and MX) floats sit above the weak float and
below nothing, so one meets only bools, ints and Python scalars (keeping its dtype); with any
other float (another float8 format, bfloat16, float32) it raises `TypePromotionError`, as JAX
does: they are converted explicitly, never silently. The narrow integers sit above bool and
below nothing: one meets only bools, itself and Python ints (which wrap into its width, as
in JAX); with any other dtype, or a Python float, it raises `TypePromotionError` (JAX 0.10's
"1-bit, 2-bit and 4-bit integers" rule).
"""
import warnings

import ml_dtypes
import numpy as np

from . import float8 as _float8
from .config import config as _config

bool_ = np.dtype(np.bool_)
int32 = np.dtype(np.int32)
uint32 = np.dtype(np.uint32)
int64 = np.dtype(np.int64)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
# ml_dtypes' bfloat16 (as JAX's): NumPy gives it kind 'V', so code asks `kind(d)` or
# `is_float(d)` instead of reading d.kind.
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
# ml_dtypes' 8-bit floats (as JAX's), in float8.FORMATS' order; NumPy gives most of them
# kind 'V' too. Each is also a module attribute named as the dtype (float8_e4m3fn, ...).
# The MX floats (float4_e2m1fn, float6_e2m3fn, float6_e3m2fn) are among them: one byte each
# too, with the same rules of storage and promotion (float8.py's "mx" formats).
FLOAT8 = tuple(_float8.FORMATS)
MX_FLOATS = tuple(d for d in FLOAT8 if _float8.FORMATS[d].rules == "mx")
globals().update({d.name: d for d in FLOAT8})
# ml_dtypes' narrow integers (as JAX's jnp.int4, ...), NumPy kind 'V' as well: one byte per
# element holding the value's low bits (ml_dtypes' layout: int4 -1 is 0x0f); loaded into
# int/uint registers (sign-extended from the width), stored wrapped to the width. Each is a
# module attribute named as the dtype (int4, ...). (ml_dtypes before 0.5 lacks the 1- and
# 2-bit ones.)
SUBBYTE_INTS = tuple(np.dtype(getattr(ml_dtypes, n)) for n in
                     ("int4", "uint4", "int2", "uint2", "int1", "uint1") if hasattr(ml_dtypes, n))
globals().update({d.name: d for d in SUBBYTE_INTS})
# the width in bits of each narrow integer, and its NumPy kind ('i' / 'u')
SUBBYTE_BITS = {d: ml_dtypes.iinfo(d).bits for d in SUBBYTE_INTS}
_SUBBYTE_KIND = {d: "u" if d.name.startswith("u") else "i" for d in SUBBYTE_INTS}

SUPPORTED = (bool_, int32, uint32, int64, uint64, *SUBBYTE_INTS, float16, bfloat16, *FLOAT8,
             float32, float64, complex64, complex128)
# The dtypes only x64 enables (without it they canonicalise to these)
_X64_ONLY = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
# complex dtype -> the float dtype of its parts, and back
COMPLEX_PART = {complex64: float32, complex128: float64}
COMPLEX_OF = {float32: complex64, float64: complex128}
# 16-bit floats held in memory only: loaded into float registers, rounded when stored.
HALF = (float16, bfloat16)
# Every float held in memory only (the 16- and 8-bit ones): math in float32, rounded when
# stored, and by a fused kernel after each op (codegen.Op.render).
STORAGE_FLOATS = HALF + FLOAT8

# OpenCL C type used in memory, and the type arithmetic happens in. A bfloat16 is the top
# half of a float32, a float8 or narrow integer one uchar (kernels.load / kernels.store
# convert them).
STORAGE_CTYPE = {bool_: "uchar", int32: "int", uint32: "uint", int64: "long", uint64: "ulong",
                 float16: "half", bfloat16: "ushort", float32: "float", float64: "double",
                 complex64: "float2", complex128: "double2", **{d: "uchar" for d in FLOAT8},
                 **{d: "uchar" for d in SUBBYTE_INTS}}
COMPUTE_CTYPE = {bool_: "int", int32: "int", uint32: "uint", int64: "long", uint64: "ulong",
                 float16: "float", bfloat16: "float", float32: "float", float64: "double",
                 complex64: "float2", complex128: "double2", **{d: "float" for d in FLOAT8},
                 **{d: "int" if _SUBBYTE_KIND[d] == "i" else "uint" for d in SUBBYTE_INTS}}
# Every dtype whose results live in registers wider than the dtype: a fused kernel rounds
# (floats) or wraps (narrow integers) each such result as the eager store would
# (kernels.round_to).
NARROW_IN_REGISTERS = STORAGE_FLOATS + SUBBYTE_INTS
# ml_dtypes' dtypes (NumPy kind 'V') -> the kind they stand for
_ML_KIND = {bfloat16: "f", **{d: "f" for d in FLOAT8}, **_SUBBYTE_KIND}


def kind(dtype):
    """NumPy's kind character of `dtype` ('b', 'i', 'u', 'f', ...), with 'f' for bfloat16
    and the 8-bit and MX floats, 'i' / 'u' for the narrow integers (whose NumPy kind is 'V').

    >>> kind(bfloat16)                     # 'f'
    >>> kind(uint4)                        # 'u'
    """
    k = dtype.kind
    return _ML_KIND.get(dtype, k) if k == "V" else k


def finfo(dtype):
    """Machine limits of a float dtype, bfloat16 and the 8-bit floats included
    (ml_dtypes.finfo; np.finfo refuses them).

    >>> finfo(bfloat16).eps                # 0.0078125
    """
    return ml_dtypes.finfo(dtype)


def iinfo(dtype):
    """Machine limits of an integer dtype, the narrow integers included (ml_dtypes.iinfo;
    np.iinfo refuses them).

    >>> iinfo(int4).min                    # -8
    """
    return ml_dtypes.iinfo(dtype)


def wrap_ints(values, dtype):
    """Integer `values` (a NumPy array or Python int) wrapped into narrow integer `dtype`'s
    range (two's complement), as a Python int or int64 array: JAX converts ints into them
    this way (`jnp.array(9, jnp.int4)` is -7).

    >>> wrap_ints(9, int4)                 # -7
    """
    bits = SUBBYTE_BITS[dtype]
    low = values & ((1 << bits) - 1)
    return low - ((low >> (bits - 1)) << bits) if _SUBBYTE_KIND[dtype] == "i" else low


def compute_dtype(dtype):
    """The NumPy dtype arithmetic on `dtype` happens in: float32 for the 16- and 8-bit
    floats (as kernels compute them), `dtype` itself otherwise (NumPy computes on the
    narrow integers itself, wrapping, as kernels store them).

    >>> compute_dtype(bfloat16)            # dtype('float32')
    """
    return float32 if dtype in STORAGE_FLOATS else dtype


_SUPPORTED_NAMES = ", ".join(str(s) for s in SUPPORTED)
# Narrower ints in *data* widen (value preserving); as a dtype argument they raise.
_NARROW_INTS = {np.dtype(np.int8): int32, np.dtype(np.int16): int32,
                np.dtype(np.uint8): uint32, np.dtype(np.uint16): uint32}


def canonicalize(dtype, *, arg="dtype", where="netcl"):
    """The supported numpy dtype a dtype argument (str, numpy dtype, Python type) names.

    int64/uint64 give int32/uint32 without x64 (as in JAX); Python's `float` and `int` give
    the default float and int (float64 and int64 with x64, as in JAX); dtypes netcl cannot hold (int8, int16,
    uint8, uint16, complex, object, strings, ...) raise a TypeError naming `where` and `arg`.

    >>> canonicalize("float32")            # dtype('float32')
    >>> canonicalize(np.int8, where="astype")   # TypeError: astype: dtype=int8 is not ...
    """
    if dtype is float:
        return default_float_dtype()
    if dtype is int:
        return default_int_dtype()
    if dtype is bool:
        return bool_
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{where}: {arg}={dtype!r} is not a dtype") from None
    if d in (float64, complex128) and not _x64():
        narrow = _X64_ONLY[d]
        warnings.warn(f"{where}: explicitly requested dtype {d} is not available and is "
                      f"truncated to {narrow}; netcl.config.update('enable_x64', True) (or "
                      "NETCL_ENABLE_X64=1) enables it, as jax_enable_x64 does in JAX",
                      UserWarning, stacklevel=3)
        return narrow
    if d in _X64_ONLY and not _x64():
        return _X64_ONLY[d]
    if d in SUPPORTED:
        return d
    raise TypeError(f"{where}: {arg}={d} is not supported; netcl supports {_SUPPORTED_NAMES} "
                    "(int64/uint64/complex128 with x64; without it they are taken as "
                    "int32/uint32/complex64, as in JAX)")


def canonicalize_data(dtype, *, where="netcl"):
    """The supported dtype that data of numpy dtype `dtype` is stored as: narrow ints widen
    to int32/uint32 (values kept), 64-bit ints become 32-bit without x64 (as JAX).

    >>> canonicalize_data(np.uint8)        # dtype('uint32')
    """
    d = np.dtype(dtype)
    if d in _X64_ONLY and not _x64():
        return _X64_ONLY[d]
    return _NARROW_INTS.get(d) or canonicalize(d, where=where)


def _x64():
    return _config.enable_x64


def default_float_dtype():
    """The float dtype nothing else decides: that of Python floats, of creation functions and
    samplers called without a dtype, and of a weak float meeting ints. float64 with x64
    enabled and float32 otherwise, as JAX's `jnp.float_` canonicalised. Read at each call,
    since `netcl.config.update("enable_x64", ...)` may change it at any time.

    >>> default_float_dtype()              # dtype('float32') unless x64 is enabled
    """
    return float64 if _config.enable_x64 else float32


def default_complex_dtype():
    """The complex dtype of Python complex numbers and of a weak complex meeting ints or
    bools: complex128 with x64 enabled and complex64 otherwise, as JAX's `jnp.complex_`.

    >>> default_complex_dtype()            # dtype('complex64') unless x64 is enabled
    """
    return complex128 if _config.enable_x64 else complex64


def default_int_dtype():
    """The integer dtype of Python ints, integer creation functions without a dtype, and
    indices (argmax, argsort, nonzero): int64 with x64 enabled and int32 otherwise, as JAX's
    `jnp.int_` canonicalised (Python ints must fit it: see `check_int`).

    >>> default_int_dtype()                # dtype('int32') unless x64 is enabled
    """
    return int64 if _config.enable_x64 else int32


def default_uint_dtype():
    """The unsigned counterpart of `default_int_dtype` (sums of uint32 under x64 give it).

    >>> default_uint_dtype()               # dtype('uint32') unless x64 is enabled
    """
    return uint64 if _config.enable_x64 else uint32


def sum_dtype(dtype):
    """The dtype JAX's sum and prod give `dtype` (its promote_integers): bools and ints
    narrower than the default int widen to it, unsigned ones to its unsigned counterpart;
    floats and 64-bit ints keep theirs.

    >>> sum_dtype(bool_)                   # dtype('int64') with x64, int32 without
    """
    k = kind(dtype)
    if k == "b":
        return default_int_dtype()
    if k == "i":
        return dtype if dtype.itemsize >= default_int_dtype().itemsize else default_int_dtype()
    if k == "u":
        return dtype if dtype.itemsize >= default_uint_dtype().itemsize else \
            default_uint_dtype()
    return dtype


def inexact_dtype(dtype, weak=False):
    """The float dtype an operation that needs floats (sin, true division, mean) gives
    operands of `dtype`, as JAX's promote_dtypes_inexact: floats keep theirs; strong int32,
    uint32 and bool become float32 (in JAX under x64 too), int64 and uint64 float64; a weak
    int (a Python int, which JAX types int64 under x64) gives the default float.

    >>> inexact_dtype(int32)               # dtype('float32') in both modes
    >>> inexact_dtype(int32, weak=True)    # dtype('float64') with x64 enabled
    """
    k = kind(dtype)
    if k in "fc":
        return dtype
    if k in "iu" and (weak or dtype.itemsize == 8):
        return default_float_dtype()
    return float32


_INT_RANGE = {int32: (-2**31, 2**31 - 1), uint32: (0, 2**32 - 1),
              int64: (-2**63, 2**63 - 1), uint64: (0, 2**64 - 1)}


def check_int(value, dtype, *, where="netcl", weak=False):
    """Raise OverflowError where the Python int `value` does not fit integer `dtype` (a no-op
    for other dtypes), instead of wrapping. `weak`: the int is a scalar operand of arithmetic
    with a uint32 (uint64) array, where int32 (int64) values are also taken (modulo 2**32,
    2**64, as in JAX: `u - 1` and `u + (-1)` agree). The narrow integers (int4, ...) wrap
    any int that fits the default int (weak) or 64 bits (data), as in JAX.

    >>> check_int(2**40, int32, where="full")  # OverflowError: full: Python int 1099511627776 ...
    """
    if dtype in SUBBYTE_BITS:
        # a narrow integer takes any int its source type holds, wrapped (as JAX converts):
        # a weak one must fit the default int (JAX types it so), data int64 / uint64
        if weak:
            check_int(value, default_int_dtype(), where=where)
        elif not -2**63 <= value < 2**64:
            raise OverflowError(f"{where}: Python int {value} too large to convert to {dtype}")
        return
    rng = _INT_RANGE.get(dtype)
    if rng is None:
        return
    lo, hi = rng
    if weak and dtype in (uint32, uint64):
        lo = -hi // 2 - 1
    if not lo <= value <= hi:
        raise OverflowError(f"{where}: Python int {value} too large to convert to {dtype}")


def _python_leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _python_leaves(o)
    else:
        yield obj


def from_python(obj, host, dtype=None, *, where="netcl"):
    """`host` (np.asarray(obj), numeric) in the dtype netcl stores it as, without wrapping.

    `dtype`: the canonical dtype asked for, or None: then `canonicalize_data` of host's, and
    Python floats (float64 in NumPy) give the default float (float32, or float64 with x64),
    as jnp.array does. Where `obj` is Python data (a scalar, list or tuple), ints out of the
    target integer dtype's range raise OverflowError, as in JAX: `jnp.array([2**31])` would
    otherwise be -2**31 without x64. NumPy int64 arrays wrap to int32 without x64, as in
    JAX.

    >>> from_python([1, 2**31], np.asarray([1, 2**31]), where="array")   # OverflowError
    """
    # (NumPy's float64 scalars are Python floats too, but data: they keep float64 with x64)
    python = type(obj) in (bool, int, float, complex) or isinstance(obj, (list, tuple))
    if host.dtype == object and python:  # ints beyond 64 bits: NumPy keeps Python objects
        big = next((v for v in _python_leaves(obj) if type(v) is int
                    and not -2**63 <= v < 2**64), None)
        if big is not None and dtype is not None and kind(dtype) == "f":
            host = np.asarray(obj, dtype=np.float64)  # 2**70 as a float is fine
        elif big is not None:
            raise OverflowError(f"{where}: Python int {big} too large to convert to "
                                f"{dtype or default_int_dtype()}")
    if kind(host.dtype) not in "biufc":
        raise TypeError(f"{where}: expected a numeric array, got {type(obj).__name__} "
                        f"(NumPy sees dtype {host.dtype})")
    if dtype is None:
        dtype = canonicalize_data(host.dtype, where=where)
        if python and host.dtype == float64:
            dtype = default_float_dtype()
        elif python and host.dtype == complex128:
            dtype = default_complex_dtype()
        elif python and kind(host.dtype) in "iu":   # (NumPy makes 2**63 uint64: JAX raises)
            dtype = default_int_dtype()
    if python and kind(host.dtype) in "iu" and host.size and dtype in _INT_RANGE:
        lo, hi = int(host.min()), int(host.max())
        check_int(lo if lo < _INT_RANGE[dtype][0] else hi, dtype, where=where)
    if python and host.dtype.kind == "f" and host.size and dtype in SUBBYTE_BITS:
        _check_floats_fit(host, dtype, where)
    with np.errstate(over="ignore"):  # Python floats beyond float32 become inf, as in JAX
        return host.astype(dtype, copy=False)


def _check_floats_fit(host, dtype, where):
    """Python floats made a narrow integer: NaN and values out of its range raise (as JAX
    raises; ml_dtypes would wrap them), the others are truncated toward zero."""
    if np.isnan(host).any():
        raise ValueError(f"{where}: cannot convert float NaN to integer ({dtype})")
    info = iinfo(dtype)
    t = np.trunc(host)
    if t.min() < info.min or t.max() > info.max:
        bad = host[(t < info.min) | (t > info.max)].flat[0]
        raise OverflowError(f"{where}: Python float {bad!r} is out of range for {dtype} "
                            f"[{info.min}, {info.max}]")


def is_float(dtype):
    return kind(dtype) == "f"


def is_complex(dtype):
    return dtype.kind == "c"


def is_inexact(dtype):
    """Float or complex: the dtypes that have derivatives."""
    return kind(dtype) in "fc"


def is_int(dtype):
    return kind(dtype) in "iu"


# JAX's lattice over our dtypes: each dtype's immediate successors (a bool is below every
# type; u32 and i32 meet at i64, u64 and the signed ints at the weak float, i.e. the default
# float; the two 16-bit floats at float32; float64 and complex64 at complex128). The 8-bit
# and MX floats have none: JAX promotes them with nothing but bools, ints and weak floats.
# The narrow integers have none either, and sit above bool only: JAX promotes them with
# nothing but bools and themselves (and weak ints, see `result_type`).
_WEAK_FLOAT = "weak float"    # (names no np.dtype equals: np.dtype("float64") == "float")
_WEAK_COMPLEX = "weak complex"
_UPPER = {bool_: (uint32, int32, *SUBBYTE_INTS), uint32: (int64, uint64), int32: (int64,),
          int64: (_WEAK_FLOAT,), uint64: (_WEAK_FLOAT,),
          _WEAK_FLOAT: (float16, bfloat16, *FLOAT8, _WEAK_COMPLEX),
          _WEAK_COMPLEX: (complex64,),
          float16: (float32,), bfloat16: (float32,), float32: (float64, complex64),
          float64: (complex128,), complex64: (complex128,), complex128: (),
          **{d: () for d in FLOAT8}, **{d: () for d in SUBBYTE_INTS}}


def _above(d):
    seen, todo = set(), [d]
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(_UPPER[x])
    return seen


_ABOVE = {d: _above(d) for d in _UPPER}


class TypePromotionError(TypeError, ValueError):
    """Two dtypes with no implicit promotion (an 8-bit or MX float with another float, a
    narrow integer with any other dtype but bool, or with a Python float), as
    jax.dtypes.TypePromotionError (a ValueError there; a TypeError too here, as netcl's other
    dtype errors are). netcl.dtypes.TypePromotionError is this class.

    >>> promote_types(float8_e4m3fn, float32)   # TypePromotionError: ... float8_e4m3fn ...
    """


def _lub(a, b):
    """The least upper bound of two elements of JAX's lattice (TypePromotionError where
    there is none)."""
    if a == b:
        return a
    common = _ABOVE[a] & _ABOVE[b]
    if not common:
        _no_promotion(*[_canonical(x)[0].name for x in (a, b)])
    return next(d for d in common if common <= _ABOVE[d])


def _no_promotion(a, b):
    """Raise JAX's TypePromotionError for dtypes (names) `a` and `b`."""
    narrow = {d.name for d in SUBBYTE_INTS}
    if a in narrow or b in narrow:
        why = ("1-bit, 2-bit and 4-bit integers promote implicitly with nothing but bools, "
               "themselves and Python ints")
        example = "int32"
    else:
        why = "8-bit and MX (4- and 6-bit) floats do not promote implicitly to other floats"
        example = "float32"
    raise TypePromotionError(
        f"input dtypes {a} and {b} have no implicit promotion path: as in JAX, {why}; "
        f"convert explicitly, e.g. x.astype('{example}')")


def _canonical(j):
    """(dtype, weak) of a lattice element: the weak float is the default float, weakly
    typed; 64-bit types give their 32-bit ones without x64."""
    if j is _WEAK_FLOAT:
        return default_float_dtype(), True
    if j is _WEAK_COMPLEX:
        return default_complex_dtype(), True
    return (_X64_ONLY[j] if j in _X64_ONLY and not _x64() else j), False


def promote_types(a, b):
    """Promoted dtype of two strong dtypes: JAX's table (the least upper bound in its
    lattice), canonicalised (int32 with uint32: int64, or int32 without x64).

    >>> promote_types(int64, uint64)       # dtype('float64'), as in JAX
    """
    return _canonical(_lub(a, b))[0]


def _weak_kind(dtype):
    return 0 if dtype == bool_ else (1 if kind(dtype) in "iu" else 2 if kind(dtype) == "f"
                                     else 3)


def result_type(*operands):
    """(dtype, weak_type) of combining operands, each an object with .dtype and .weak_type.

    Weak types (Python scalars and results computed only from them) take the type of the
    strong operands when their kind fits: `float32_array * 2.0` is float32 (with x64 too),
    `float16_array + 1` is float16, `bfloat16_array * 2.0` is bfloat16. A weak float meeting
    strong ints or bools gives a weak default float (`int32_array * 2.5`: float32, float64
    with x64), which later meets a float32 array as a Python float would, as in JAX. A
    narrow integer (int4, ...) takes weak ints (wrapped into its width when converted) and
    bools, and raises TypePromotionError for a weak float or complex, as in JAX.
    """
    strong = None
    weak = None
    for x in operands:
        d = x.dtype
        if x.weak_type:
            weak = d if weak is None else promote_types(weak, d)
        else:
            strong = d if strong is None else _lub(strong, d)
    if strong is _WEAK_FLOAT:     # uint64 met signed ints: the weak float, as in JAX
        strong, weak = None, default_float_dtype() if weak is None else \
            promote_types(weak, default_float_dtype())
    if strong is None:
        return weak, True
    strong = _canonical(strong)[0]
    if weak is None or _weak_kind(weak) <= _weak_kind(strong):
        return strong, False
    if strong in _SUBBYTE_KIND:     # a Python float or complex meets a narrow integer
        python = "float" if _weak_kind(weak) == 2 else "complex"
        _no_promotion(strong.name, f"weak {weak.name} (a Python {python})")
    if _weak_kind(weak) == 3 and kind(strong) == "f":   # a Python complex meets floats
        return promote_types(strong, complex64), False
    # A weak float meeting strong ints/bools: the default float; weak complex: the default
    # complex; weak int meeting bool: the default int; weak either way, as JAX's lattice
    # joins them.
    return ({1: default_int_dtype, 2: default_float_dtype,
             3: default_complex_dtype}[_weak_kind(weak)]()), True


def scalar_dtype(value, where="netcl"):
    """The weak dtype of a Python scalar: the default float or int (float64 and int64 with
    x64, as in JAX). A Python int must fit it (OverflowError, as in JAX), since it would
    otherwise wrap.

    >>> scalar_dtype(3)                    # dtype('int64') with x64, int32 without
    """
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        d = default_int_dtype()
        if type(value) is int:
            check_int(value, d, where=where)
        return d
    if isinstance(value, (float, np.floating)):
        return default_float_dtype()
    if isinstance(value, (complex, np.complexfloating)):
        return default_complex_dtype()
    raise TypeError(f"{type(value).__name__} is not a numeric scalar")
