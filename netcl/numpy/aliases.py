"""jax.numpy's aliases (the array-API names acos, permute_dims, bitwise_invert, ...), dtype
queries (iinfo, finfo, promote_types, can_cast, isdtype) and small elementwise functions
composed from existing operations (fmax, fmin, gcd, lcm, ldexp, frexp, modf, divmod,
spacing, logaddexp2, nan_to_num, nanvar, nanstd, logspace, geomspace).

Each binds only existing primitives, so grad, jit and vmap work through them; arguments are
checked before any kernel runs.

>>> import netcl.numpy as jnp
>>> jnp.acos(jnp.asarray([1.0]))             # [0.]
>>> jnp.fmax(jnp.asarray([1.0, jnp.nan]), 0.5)   # [1., 0.5]
"""
import math as _math

import numpy as np

from ..core import dtypes
from ..primitives import complex_ops, views
from ..primitives import elementwise as ew
from ._composite_util import bool_arg, int_arg, is_array
from ._util import asarray_arg, promote_broadcast, promote_to_float, promotion_operand
from .scalar_types import scalar_types
from . import creation as _cr
from . import manipulation as _man
from . import math as _m
from . import reductions as _red

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "fabs", "astype",
           "matrix_transpose", "permute_dims", "bitwise_invert", "bitwise_left_shift",
           "bitwise_right_shift", "left_shift", "right_shift", "isneginf", "isposinf",
           "isreal", "isrealobj", "iscomplex", "iscomplexobj", "isscalar", "real", "imag",
           "conj", "conjugate", "nan_to_num", "nanvar", "nanstd", "logspace", "geomspace",
           "iinfo", "finfo", "promote_types", "can_cast", "isdtype", "fmax", "fmin", "gcd",
           "lcm", "ldexp", "frexp", "modf", "divmod", "spacing", "logaddexp2", "int_", "uint",
           "single", "double"]

int_, uint, single, double = scalar_types(dtypes.int64, dtypes.uint64, dtypes.float32,
                                          dtypes.float64)
int_.__name__, uint.__name__, single.__name__, double.__name__ = \
    "int_", "uint", "single", "double"

iinfo = dtypes.iinfo     # (ml_dtypes.iinfo: int4, uint4, ... too)
finfo = dtypes.finfo


# ---- array-API spellings ------------------------------------------------------------------------

def acos(x, /):
    """Inverse cosine (jnp.arccos). >>> jnp.acos(jnp.asarray([1.0]))   # [0.]"""
    return _m.arccos(x)


def acosh(x, /):
    """Inverse hyperbolic cosine (jnp.arccosh). >>> jnp.acosh(jnp.asarray([1.0]))  # [0.]"""
    return _m.arccosh(x)


def asin(x, /):
    """Inverse sine (jnp.arcsin). >>> jnp.asin(jnp.asarray([0.0]))   # [0.]"""
    return _m.arcsin(x)


def asinh(x, /):
    """Inverse hyperbolic sine (jnp.arcsinh). >>> jnp.asinh(jnp.asarray([0.0]))  # [0.]"""
    return _m.arcsinh(x)


def atan(x, /):
    """Inverse tangent (jnp.arctan). >>> jnp.atan(jnp.asarray([0.0]))   # [0.]"""
    return _m.arctan(x)


def atanh(x, /):
    """Inverse hyperbolic tangent (jnp.arctanh). >>> jnp.atanh(jnp.asarray([0.0]))  # [0.]"""
    return _m.arctanh(x)


def atan2(x1, x2, /):
    """Quadrant-aware arctan(x1 / x2) (jnp.arctan2).

    >>> jnp.atan2(jnp.asarray([1.0]), jnp.asarray([1.0]))   # [0.785...]
    """
    return _m.arctan2(x1, x2)


def fabs(x, /):
    """Absolute value as a float (integers and bools become the default float).

    >>> jnp.fabs(jnp.asarray([-2, 3]))    # [2., 3.] float32
    """
    (x,) = promote_to_float("fabs", x)
    from .math import _no_complex
    _no_complex("fabs", x)
    return ew.abs_(x)


def astype(x, dtype=None, /, *, copy=False, device=None):
    """x converted to dtype (jnp.astype). >>> jnp.astype(jnp.arange(3), jnp.float32)"""
    x = asarray_arg(x, "astype")
    if dtype is None:
        raise TypeError("astype: dtype must be a dtype, got None")
    dt = dtypes.canonicalize(dtype, where="astype")
    bool_arg(copy, "astype", "copy")
    if device is not None:
        raise NotImplementedError("astype: device= is not supported; use device_put")
    if x.dtype == dt:
        return x
    return ew.convert_element_type(x, dt, False)


def matrix_transpose(x, /):
    """Swap the last two axes (x.ndim >= 2). >>> jnp.matrix_transpose(jnp.ones((2, 3))).shape
    (3, 2)"""
    x = asarray_arg(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape "
                         f"{tuple(x.shape)}")
    return _man.swapaxes(x, -1, -2)


def permute_dims(a, /, axes):
    """jnp.transpose under the array-API name. >>> jnp.permute_dims(jnp.ones((2, 3)), (1, 0))"""
    if axes is None:
        raise TypeError("permute_dims: axes must be a tuple of ints, got None")
    return _man.transpose(a, axes)


def bitwise_invert(x, /):
    """Bitwise NOT (jnp.bitwise_not). >>> jnp.bitwise_invert(jnp.asarray([0]))   # [-1]"""
    return _m.bitwise_not(x)


def _shift_args(where, x1, x2):
    return promote_broadcast(where, x1, x2, kinds="iu")


def left_shift(x1, x2, /):
    """x1 << x2 on integers. >>> jnp.left_shift(jnp.asarray([1, 2]), 3)   # [8, 16]"""
    from ..lax import shift_left
    a, b = _shift_args("left_shift", x1, x2)
    return shift_left(a, b)


def right_shift(x1, x2, /):
    """x1 >> x2 on integers (arithmetic for signed, logical for unsigned).

    >>> jnp.right_shift(jnp.asarray([-8, 8]), 2)   # [-2, 2]
    """
    from ..lax import shift_right_arithmetic, shift_right_logical
    a, b = _shift_args("right_shift", x1, x2)
    return (shift_right_logical if dtypes.kind(a.dtype) == "u" else
            shift_right_arithmetic)(a, b)


def bitwise_left_shift(x1, x2, /):
    """jnp.left_shift. >>> jnp.bitwise_left_shift(jnp.asarray([1]), 4)   # [16]"""
    return left_shift(x1, x2)


def bitwise_right_shift(x1, x2, /):
    """jnp.right_shift. >>> jnp.bitwise_right_shift(jnp.asarray([16]), 4)   # [1]"""
    return right_shift(x1, x2)


# ---- real-number predicates ---------------------------------------------------------------------

def _isinf_sign(where, x, sign):
    (x,) = promote_broadcast(where, x)
    from .math import _no_complex
    _no_complex(where, x)
    if dtypes.kind(x.dtype) != "f":
        return views.full_like(x, False, dtypes.bool_)
    return ew.eq(x, views.full_like(x, sign * np.inf))


def isneginf(x, /):
    """True where x is -inf. >>> jnp.isneginf(jnp.asarray([-jnp.inf, 1.0]))   # [True, False]"""
    return _isinf_sign("isneginf", x, -1)


def isposinf(x, /):
    """True where x is +inf. >>> jnp.isposinf(jnp.asarray([jnp.inf, 1.0]))   # [True, False]"""
    return _isinf_sign("isposinf", x, 1)


def isreal(x, /):
    """True where x's imaginary part is 0 (everywhere for real dtypes).

    >>> jnp.isreal(jnp.asarray([1.0, 1j]))    # [True, False]
    """
    (x,) = promote_broadcast("isreal", x)
    if dtypes.is_complex(x.dtype):
        return ew.eq(complex_ops.imag(x), views.full_like(x, 0, dtypes.COMPLEX_PART[x.dtype]))
    return views.full_like(x, True, dtypes.bool_)


def iscomplex(x, /):
    """True where x's imaginary part is not 0 (nowhere for real dtypes).

    >>> jnp.iscomplex(jnp.asarray([1.0, 1j]))  # [False, True]
    """
    (x,) = promote_broadcast("iscomplex", x)
    if dtypes.is_complex(x.dtype):
        return ew.ne(complex_ops.imag(x), views.full_like(x, 0, dtypes.COMPLEX_PART[x.dtype]))
    return views.full_like(x, False, dtypes.bool_)


def isrealobj(x, /):
    """Whether x's dtype is not complex. >>> jnp.isrealobj(jnp.ones(2))  # True"""
    return not iscomplexobj(x)


def iscomplexobj(x, /):
    """Whether x has a complex dtype (only NumPy inputs can). >>> jnp.iscomplexobj(1.0)  # False"""
    if x is None:
        return False
    try:
        return np.issubdtype(getattr(x, "dtype", None) or np.result_type(x), np.complexfloating)
    except (TypeError, ValueError):
        return False


def isscalar(element, /):
    """Whether element is a scalar: a Python or NumPy scalar, or a 0-d array (as jnp.isscalar).

    >>> jnp.isscalar(1.0), jnp.isscalar(jnp.asarray(1.0)), jnp.isscalar(jnp.ones(2))
    (True, True, False)
    """
    if np.isscalar(element):
        return True
    if is_array(element) or isinstance(element, np.ndarray):
        return element.ndim == 0
    return False


def real(val, /):
    """The real part (val itself for real dtypes).

    >>> jnp.real(jnp.asarray([1 + 2j]))       # [1]
    """
    (val,) = promote_broadcast("real", val)
    return complex_ops.real(val) if dtypes.is_complex(val.dtype) else val


def imag(val, /):
    """The imaginary part (zeros for real dtypes).

    >>> jnp.imag(jnp.asarray([1 + 2j]))       # [2]
    """
    (val,) = promote_broadcast("imag", val)
    return complex_ops.imag(val) if dtypes.is_complex(val.dtype) else views.full_like(val, 0)


def conjugate(x, /):
    """The complex conjugate (x itself for real dtypes).

    >>> jnp.conjugate(jnp.asarray([1 + 2j]))  # [1-2j]
    """
    (x,) = promote_broadcast("conjugate", x)
    return complex_ops.conj(x) if dtypes.is_complex(x.dtype) else x


def conj(x, /):
    """jnp.conjugate. >>> jnp.conj(jnp.asarray([1 + 2j]))   # [1-2j]"""
    (x,) = promote_broadcast("conj", x)
    return complex_ops.conj(x) if dtypes.is_complex(x.dtype) else x


# ---- NaN handling -------------------------------------------------------------------------------

def _float_scalar(v, where, arg):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        raise TypeError(f"{where}: {arg} must be a number or None, got {type(v).__name__} {v!r}")
    return float(v)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf (default the dtype's max), -inf -> neginf (default its min).

    >>> jnp.nan_to_num(jnp.asarray([jnp.nan, jnp.inf, 1.0]))   # [0., 3.4e38, 1.]
    """
    nan_v = _float_scalar(nan, "nan_to_num", "nan")
    if nan_v is None:
        raise TypeError("nan_to_num: nan must be a number, got None")
    posinf, neginf = (_float_scalar(posinf, "nan_to_num", "posinf"),
                      _float_scalar(neginf, "nan_to_num", "neginf"))
    (x,) = promote_broadcast("nan_to_num", x)
    if dtypes.kind(x.dtype) != "f":
        return x
    fi = dtypes.finfo(x.dtype)
    posinf = float(fi.max) if posinf is None else posinf
    neginf = float(fi.min) if neginf is None else neginf
    out = ew.select(ew.ne(x, x), views.full_like(x, nan_v), x)
    out = ew.select(ew.eq(x, views.full_like(x, np.inf)), views.full_like(x, posinf), out)
    return ew.select(ew.eq(x, views.full_like(x, -np.inf)), views.full_like(x, neginf), out)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Variance of the non-NaN elements, divided by (count - ddof); NaN where that is <= 0.
    `mean`: a precomputed mean (broadcastable as with keepdims=True), as JAX's.

    >>> jnp.nanvar(jnp.asarray([1.0, jnp.nan, 3.0]))   # 1.0
    """
    a = asarray_arg(a, "nanvar")
    if out is not None:
        raise NotImplementedError("nanvar: out= is not supported")
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.number)):
        raise TypeError(f"nanvar: ddof must be a number, got {type(ddof).__name__} {ddof!r}")
    keepdims = bool_arg(keepdims, "nanvar", "keepdims")
    dt = None if dtype is None else dtypes.canonicalize(dtype, where="nanvar")
    if dt is not None and dtypes.kind(dt) != "f":
        raise TypeError(f"nanvar: dtype must be a floating dtype, got {dt}")
    if where is not None:
        raise NotImplementedError("nanvar: where= is not supported")
    _check_axis(a, axis, "nanvar")
    if dtypes.kind(a.dtype) != "f":
        return _red.var(a, axis=axis, dtype=dt, ddof=ddof, keepdims=keepdims, mean=mean)
    x = a if dt is None or dt == a.dtype else ew.convert_element_type(a, dt, False)
    ok = ew.eq(x, x)
    if mean is None:
        mu = views.broadcast_to_rank(_red.nanmean(x, axis=axis, keepdims=True),
                                     tuple(x.shape))
    else:
        mu = _red._given_mean(mean, x, x.dtype, "nanvar")
    d = ew.select(ok, ew.sub(x, mu), views.full_like(x, 0))
    ss = _red.sum(ew.mul(d, d), axis=axis, keepdims=keepdims)
    n = _red.sum(ew.convert_element_type(ok, ss.dtype, False), axis=axis, keepdims=keepdims)
    n = ew.sub(n, views.full_like(n, ddof))
    pos = ew.gt(n, views.full_like(n, 0))
    return ew.select(pos, ew.div(ss, n), views.full_like(ss, np.nan))


def _check_axis(a, axis, where):
    from ..core.shapes import normalize_axis
    if axis is None:
        return
    for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)):
        if isinstance(ax, (bool, np.bool_)):
            raise TypeError(f"{where}: axis must be an int or a tuple of ints, got {axis!r}")
        normalize_axis(int_arg(ax, where, "axis"), a.ndim, where=where)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Standard deviation of the non-NaN elements (sqrt of nanvar; `mean`: a precomputed
    mean, as nanvar's).

    >>> jnp.nanstd(jnp.asarray([1.0, jnp.nan, 3.0]))   # 1.0
    """
    v = nanvar(a, axis, dtype, out, ddof, keepdims, where, mean)
    if v.dtype in dtypes.STORAGE_FLOATS:
        return ew.convert_element_type(ew.sqrt(ew.convert_element_type(v, dtypes.float32, False)),
                                       v.dtype, False)
    return ew.sqrt(v)


# ---- spaced samples -----------------------------------------------------------------------------

def _space_args(where, num, endpoint, dtype, axis):
    num = int_arg(num, where, "num", 0)
    endpoint = bool_arg(endpoint, where, "endpoint")
    dt = None if dtype is None else dtypes.canonicalize(dtype, where=where)
    if int_arg(axis, where, "axis") not in (0, -1):
        raise NotImplementedError(f"{where}: only axis=0 is supported for scalar start/stop")
    return num, endpoint, dt


def _num_arg(v, where, arg):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        if is_array(v) and v.ndim == 0:
            raise TypeError(f"{where}: {arg} must be a concrete Python number, got an array "
                            "(convert it with float())")
        raise TypeError(f"{where}: {arg} must be a number, got {type(v).__name__} {v!r}")
    return float(v)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """`num` samples base**t for t evenly spaced from start to stop.

    >>> jnp.logspace(0.0, 2.0, 3)    # [1., 10., 100.]
    """
    start, stop = _num_arg(start, "logspace", "start"), _num_arg(stop, "logspace", "stop")
    base = _num_arg(base, "logspace", "base")
    num, endpoint, dt = _space_args("logspace", num, endpoint, dtype, axis)
    t = _cr.linspace(start, stop, num, endpoint=endpoint,
                     dtype=dt if dt is not None and dtypes.kind(dt) == "f" else None)
    out = _m.power(views.full_like(t, base), t)
    return out if dt is None or dt == out.dtype else ew.convert_element_type(out, dt, False)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` samples evenly spaced on a log scale from start to stop (same sign, nonzero).

    >>> jnp.geomspace(1.0, 1000.0, 4)    # [1., 10., 100., 1000.]
    """
    start, stop = _num_arg(start, "geomspace", "start"), _num_arg(stop, "geomspace", "stop")
    num, endpoint, dt = _space_args("geomspace", num, endpoint, dtype, axis)
    if start == 0 or stop == 0:
        raise ValueError("geomspace: start and stop must be nonzero")
    if (start < 0) != (stop < 0):
        raise ValueError("geomspace: start and stop must have the same sign (no complex "
                         "dtypes)")
    sign = -1.0 if start < 0 else 1.0
    t = _cr.linspace(_math.log10(abs(start)), _math.log10(abs(stop)), num, endpoint=endpoint,
                     dtype=dt if dt is not None and dtypes.kind(dt) == "f" else None)
    out = ew.mul(_m.power(views.full_like(t, 10.0), t), views.full_like(t, sign))
    if num > 0:  # the endpoints exactly, as NumPy and JAX give them
        idx = _cr.arange(num)
        out = ew.select(ew.eq(idx, views.full_like(idx, 0)), views.full_like(out, start), out)
        if endpoint and num > 1:
            out = ew.select(ew.eq(idx, views.full_like(idx, num - 1)),
                            views.full_like(out, stop), out)
    return out if dt is None or dt == out.dtype else ew.convert_element_type(out, dt, False)


# ---- dtype queries ------------------------------------------------------------------------------

def _dtype_of(v, where, arg):
    if v is None or isinstance(v, (bool, int, float)) and not isinstance(v, type):
        raise TypeError(f"{where}: {arg} must be a dtype, got {type(v).__name__} {v!r}")
    try:   # (NumPy's scalar classes have a `dtype` descriptor, not a dtype)
        return np.dtype(v if isinstance(v, type) else getattr(v, "dtype", v))
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a dtype, got {type(v).__name__} {v!r}") from None


def promote_types(a, b):
    """The dtype two dtypes promote to under JAX's rules (netcl's supported dtypes). Python's
    int and float are weak, as in JAX: `promote_types(jnp.float32, float)` is float32 also
    with x64.

    >>> jnp.promote_types(jnp.int32, jnp.float16)    # dtype('float16')
    """
    ops = []
    for v, arg in ((a, "a"), (b, "b")):
        if not (v is int or v is float):      # (those two stay Python types: weak)
            v = dtypes.canonicalize(_dtype_of(v, "promote_types", arg), arg=arg,
                                    where="promote_types")
        ops.append(promotion_operand(v, "promote_types"))
    return dtypes.result_type(*ops)[0]


def can_cast(from_, to, casting="safe"):
    """Whether a cast from `from_` to `to` is allowed under `casting` (NumPy's rule).

    >>> jnp.can_cast(jnp.int32, jnp.float64)    # True
    """
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"can_cast: casting must be one of 'no', 'equiv', 'safe', "
                         f"'same_kind', 'unsafe', got {casting!r}")
    return bool(np.can_cast(_dtype_of(from_, "can_cast", "from_"),
                            _dtype_of(to, "can_cast", "to"), casting))


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u",
          "integral": "iu", "real floating": "f", "complex floating": "c",
          "numeric": "iufc"}


def isdtype(dtype=None, kind=None):
    """Whether dtype is of `kind`: a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or a
    tuple of those (the array API's isdtype).

    >>> jnp.isdtype(jnp.float32, 'real floating')   # True
    """
    d = _dtype_of(dtype, "isdtype", "dtype")
    if kind is None:
        raise TypeError("isdtype: kind must be a dtype, a kind name or a tuple of those, got "
                        "None")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; expected one of "
                                 f"{sorted(_KINDS)}")
            if dtypes.kind(d) in _KINDS[k]:
                return True
        else:
            if d == _dtype_of(k, "isdtype", "kind"):
                return True
    return False


# ---- elementwise --------------------------------------------------------------------------------

def fmax(x1, x2):
    """Elementwise maximum ignoring NaN (NaN only where both are). As JAX's: x1 where
    x1 > x2 or x2 is NaN, else x2; complex numbers compare lexicographically and are NaN
    where either part is.

    >>> jnp.fmax(jnp.asarray([1.0, jnp.nan]), jnp.asarray([2.0, 0.5]))   # [2., 0.5]
    """
    a, b = promote_broadcast("fmax", x1, x2)
    gt = complex_ops.lex_compare(a, b, "gt") if dtypes.is_complex(a.dtype) else ew.gt(a, b)
    return ew.select(ew.or_(gt, ew.ne(b, b)), a, b)


def fmin(x1, x2):
    """Elementwise minimum ignoring NaN (NaN only where both are); see fmax.

    >>> jnp.fmin(jnp.asarray([1.0, jnp.nan]), jnp.asarray([2.0, 0.5]))   # [1., 0.5]
    """
    a, b = promote_broadcast("fmin", x1, x2)
    lt = complex_ops.lex_compare(a, b, "lt") if dtypes.is_complex(a.dtype) else ew.lt(a, b)
    return ew.select(ew.or_(lt, ew.ne(b, b)), a, b)


def gcd(x1, x2):
    """Greatest common divisor of integers (non-negative; gcd(0, 0) = 0).

    >>> jnp.gcd(jnp.asarray([12, 18]), 8)    # [4, 2]
    """
    from ..lax import while_loop
    a, b = promote_broadcast("gcd", x1, x2, kinds="iu")
    a = ew.abs_(a) if dtypes.kind(a.dtype) == "i" else a
    b = ew.abs_(b) if dtypes.kind(b.dtype) == "i" else b
    zero = views.full_like(a, 0)

    def cond(c):
        return _red.any(ew.ne(c[1], zero))

    def body(c):
        x, y = c
        nz = ew.ne(y, zero)
        safe = ew.select(nz, y, views.full_like(y, 1))
        return ew.select(nz, y, x), ew.select(nz, ew.rem(x, safe), zero)

    return while_loop(cond, body, (ew.max_(a, b), ew.min_(a, b)))[0]


def lcm(x1, x2):
    """Least common multiple of integers (non-negative; 0 where either is 0).

    >>> jnp.lcm(jnp.asarray([4, 6]), 10)    # [20, 30]
    """
    a, b = promote_broadcast("lcm", x1, x2, kinds="iu")
    g = gcd(a, b)
    zero = views.full_like(g, 0)
    nz = ew.ne(g, zero)
    q = ew.div(ew.abs_(a) if dtypes.kind(a.dtype) == "i" else a,
               ew.select(nz, g, views.full_like(g, 1)))
    return ew.select(nz, ew.mul(q, ew.abs_(b) if dtypes.kind(b.dtype) == "i" else b), zero)


def ldexp(x1, x2, /):
    """x1 * 2**x2 for integer x2 (floats result).

    >>> jnp.ldexp(jnp.asarray([1.0, 3.0]), jnp.asarray([2, -1]))   # [4., 1.5]
    """
    x2a = x2 if type(x2) is int else asarray_arg(x2, "ldexp")
    if type(x2) is not int and x2a.dtype.kind not in "iu":
        raise TypeError(f"ldexp: x2 must be integer, got dtype {x2a.dtype}")
    (x1,) = promote_to_float("ldexp", x1)
    x1, e = promote_broadcast("ldexp", x1, x2a)  # the float dtype; shapes broadcast
    # two halves, so that 2**e stays finite where x1 * 2**e is (e up to twice the range)
    h = ew.floor(ew.mul(e, views.full_like(e, 0.5)))
    two = views.full_like(e, 2.0)
    return ew.mul(ew.mul(x1, _m.power(two, h)), _m.power(two, ew.sub(e, h)))


def frexp(x, /):
    """(mantissa, exponent): x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1 (0, inf and
    NaN give themselves and exponent 0).

    >>> jnp.frexp(jnp.asarray([8.0, 0.75]))   # ([0.5, 0.75], [4, 0])
    """
    (x,) = promote_to_float("frexp", x)
    ax = ew.abs_(x)
    special = ew.or_(ew.eq(ax, views.full_like(ax, 0)), ew.not_(ew.is_finite(x)))
    safe = ew.select(special, views.full_like(ax, 1), ax)
    e = ew.add(ew.floor(_m.log2(safe)), views.full_like(ax, 1))
    m = ldexp(safe, ew.convert_element_type(ew.neg(e), dtypes.int32, False))
    two = views.full_like(m, 2.0)
    big = ew.ge(m, views.full_like(m, 1.0))   # log2 rounding: fix by one either way
    m, e = ew.select(big, ew.div(m, two), m), ew.select(big, ew.add(e, views.full_like(e, 1)), e)
    small = ew.lt(m, views.full_like(m, 0.5))
    m, e = ew.select(small, ew.mul(m, two), m), ew.select(small, ew.sub(e, views.full_like(e, 1)),
                                                        e)
    m = ew.select(special, x, ew.mul(m, ew.sign(x)))
    e = ew.select(special, views.full_like(e, 0), e)
    return m, ew.convert_element_type(e, dtypes.int32, False)


def modf(x, /):
    """(fractional part, integral part), both with x's sign.

    >>> jnp.modf(jnp.asarray([2.5, -1.25]))   # ([0.5, -0.25], [2., -1.])
    """
    (x,) = promote_to_float("modf", x)
    whole = ew.select(ew.ge(x, views.full_like(x, 0)), ew.floor(x), ew.ceil(x))
    return ew.sub(x, whole), whole


def divmod(x1, x2, /):  # noqa: A001 (numpy's name)
    """(x1 // x2, x1 % x2). >>> jnp.divmod(jnp.asarray([7, -7]), 2)   # ([3, -4], [1, 1])"""
    a, b = promote_broadcast("divmod", x1, x2)
    if dtypes.kind(a.dtype) != "f":   # remainder 0 where b is 0 (NumPy's and JAX's divmod)
        zero = views.full_like(a, 0)
        return _m.floor_divide(a, b), ew.select(ew.eq(b, zero), zero, _m.remainder(a, b))
    # floats: the quotient from the C remainder, rounded, so that it is exact (NumPy's way)
    zero = views.full_like(a, 0)
    mod = ew.rem(a, b)
    div = ew.div(ew.sub(a, mod), b)
    fix = ew.and_(ew.ne(mod, zero), ew.ne(ew.lt(b, zero), ew.lt(mod, zero)))
    mod = ew.select(fix, ew.add(mod, b), mod)
    div = ew.select(fix, ew.sub(div, views.full_like(div, 1)), div)
    fl = ew.floor(div)
    fl = ew.select(ew.gt(ew.sub(div, fl), views.full_like(div, 0.5)),
                   ew.add(fl, views.full_like(fl, 1)), fl)
    fl = ew.select(ew.eq(b, zero), ew.div(a, b), fl)   # x / 0: inf (NaN for 0 / 0)
    return fl, mod


def spacing(x, /):
    """The distance from x to the next representable float away from zero.

    >>> jnp.spacing(jnp.asarray([1.0]))   # [1.1920929e-07]
    """
    from ..lax import nextafter
    (x,) = promote_to_float("spacing", x)
    toward = ew.select(_m.signbit(x), views.full_like(x, -np.inf), views.full_like(x, np.inf))
    return ew.sub(nextafter(x, toward), x)


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2), computed without overflow.

    >>> jnp.logaddexp2(jnp.asarray([1.0]), jnp.asarray([1.0]))   # [2.]
    """
    a, b = promote_to_float("logaddexp2", x1, x2)
    amax = ew.max_(a, b)
    delta = ew.sub(a, b)
    ad = ew.abs_(delta)
    tail = ew.div(ew.log1p(_m.exp2(ew.neg(ad))), views.full_like(ad, _math.log(2.0)))
    return ew.select(ew.ne(delta, delta), ew.add(a, b), ew.add(amax, tail))
