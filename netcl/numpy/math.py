"""Elementwise math of netcl.numpy (jax.numpy's names and promotion rules)."""
import math as _math
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..primitives import elementwise as ew
from ..primitives.complex_ops import lex_compare
from ..primitives.views import full_like
from ..core.shapes import broadcast_shapes
from ._util import asarray_arg, promote_broadcast, promote_to_float

__all__ = []


def _export(fn):
    __all__.append(fn.__name__)
    return fn


def _float_unary(name, op):
    def f(x):
        (x,) = promote_to_float(name, x)
        return op(x)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}; integer inputs are promoted to float32.\n\n" \
                f">>> netcl.numpy.{name}(netcl.numpy.ones(3))"
    return _export(f)


for _name, _op in [("exp", ew.exp), ("exp2", ew.exp2), ("log", ew.log), ("log1p", ew.log1p),
                   ("expm1", ew.expm1), ("sqrt", ew.sqrt), ("tanh", ew.tanh), ("sin", ew.sin),
                   ("cos", ew.cos), ("tan", ew.tan), ("arcsin", ew.asin), ("arccos", ew.acos),
                   ("arctan", ew.atan), ("sinh", ew.sinh), ("cosh", ew.cosh),
                   ("arcsinh", ew.asinh), ("arccosh", ew.acosh), ("arctanh", ew.atanh),
                   ("reciprocal", ew.reciprocal)]:
    globals()[_name] = _float_unary(_name, _op)


@_export
def log2(x):
    """Base-2 logarithm."""
    (x,) = promote_to_float("log2", x)
    return ew.mul(ew.log(x), full_like(x, 1 / _math.log(2)))


@_export
def log10(x):
    """Base-10 logarithm."""
    (x,) = promote_to_float("log10", x)
    return ew.mul(ew.log(x), full_like(x, 1 / _math.log(10)))


def _same_kind_unary(name, op, kinds="fiu"):
    def f(x):
        (x,) = promote_broadcast(name, x)
        if dtypes.kind(x.dtype) not in kinds:
            raise TypeError(f"{name}: unsupported dtype {x.dtype}")
        return op(x)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, keeping the input dtype."
    return _export(f)


negative = _same_kind_unary("negative", ew.neg, "fiuc")
absolute = _same_kind_unary("absolute", ew.abs_, "fiuc")
abs = absolute  # noqa: A001 (numpy's name)
__all__.append("abs")
sign = _same_kind_unary("sign", ew.sign, "fiuc")
square = _same_kind_unary("square", ew.square, "fiuc")


@_export
def positive(x):
    return asarray_arg(x, "positive")


def _no_complex(name, x):
    """JAX's refusal of complex operands where the operation orders values (floor, ceil,
    fabs, ...): a TypeError rather than an unrounded result."""
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{name}: complex values are not supported (got {x.dtype}), as in "
                        "JAX; round the real and imaginary parts (jnp.real, jnp.imag)")


def _by_complex_parts(fn, x):
    """fn applied to a complex x's real and imaginary parts (rounding, as JAX's)."""
    from ..primitives.complex_ops import complex as complex_, imag, real
    return complex_(fn(real(x)), fn(imag(x)))


def _rounding(name, op):
    def f(x):
        (x,) = promote_broadcast(name, x)
        if name == "rint" and dtypes.is_complex(x.dtype):
            return _by_complex_parts(op, x)
        _no_complex(name, x)
        return op(x) if dtypes.kind(x.dtype) == "f" else x
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}; integers are returned unchanged."
    return _export(f)


floor = _rounding("floor", ew.floor)
ceil = _rounding("ceil", ew.ceil)
rint = _rounding("rint", lambda x: ew.round_(x, 1))
trunc = _rounding("trunc", lambda x: ew.mul(ew.sign(x), ew.floor(ew.abs_(x))))
fix = trunc
__all__.append("fix")


@_export
def round(x, decimals=0):  # noqa: A001 (numpy's name)
    """Round half to even, like numpy.round; `decimals` may be negative."""
    (x,) = promote_broadcast("round", x)
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__} "
                        f"{decimals!r}") from None
    if dtypes.is_complex(x.dtype):
        return _by_complex_parts(lambda part: round(part, decimals), x)
    if dtypes.kind(x.dtype) != "f":
        if decimals < 0:  # as JAX: rather than returning x unrounded
            raise NotImplementedError(f"round: integer inputs ({x.dtype}) with decimals < 0 "
                                      f"(got {decimals}) are not supported")
        return x
    if decimals == 0:
        return ew.round_(x, 1)
    scale = full_like(x, 10.0 ** decimals)
    return ew.div(ew.round_(ew.mul(x, scale), 1), scale)


around = round
__all__.append("around")


def _binary(name, op, float_only=False):
    def f(x, y):
        xs = (promote_to_float if float_only else promote_broadcast)(name, x, y)
        return op(*xs)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name} with NumPy broadcasting and JAX type promotion."
    return _export(f)


def _add(x, y):
    return ew.or_(x, y) if x.dtype == dtypes.bool_ else ew.add(x, y)


def _mul(x, y):
    return ew.and_(x, y) if x.dtype == dtypes.bool_ else ew.mul(x, y)


add = _binary("add", _add)
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", _mul)
true_divide = _binary("true_divide", ew.div, float_only=True)
divide = true_divide
__all__.append("divide")
maximum = _binary("maximum", lambda x, y: ew.or_(x, y) if x.dtype == dtypes.bool_ else ew.max_(x, y))
minimum = _binary("minimum", lambda x, y: ew.and_(x, y) if x.dtype == dtypes.bool_ else ew.min_(x, y))
arctan2 = _binary("arctan2", ew.atan2, float_only=True)


@_export
def floor_divide(x, y):
    """x // y (floor division; integer division by zero gives 0)."""
    x, y = promote_broadcast("floor_divide", x, y)
    if x.dtype == dtypes.bool_:
        raise TypeError("floor_divide: bool operands are not supported")
    return ew.floor_div(x, y)


@_export
def remainder(x, y):
    """x % y with the sign of y (Python's and NumPy's convention)."""
    x, y = promote_broadcast("remainder", x, y)
    r = ew.rem(x, y)
    if dtypes.kind(x.dtype) == "u":
        return r
    zero = full_like(r, 0)
    fix_ = ew.and_(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
    return ew.select(fix_, ew.add(r, y), r)


mod = remainder
__all__.append("mod")


@_export
def fmod(x, y):
    """C-style remainder (sign of x)."""
    return ew.rem(*promote_broadcast("fmod", x, y))


@_export
def power(x, y):
    """x ** y. An integer Python exponent uses exact repeated multiplication; a concrete
    negative integer exponent of an integer (or bool) base raises, as in JAX and NumPy.

    >>> jnp.power(jnp.array([2.0, 4.0]), -1)     # [0.5, 0.25]
    >>> jnp.array([2, 1]) ** -1                  # IntegerPowerError (a ValueError)
    """
    if isinstance(y, np.integer) and not isinstance(y, np.bool_):
        y = int(y)
    if isinstance(y, int) and not isinstance(y, bool):
        (x,) = promote_broadcast("power", x)
        if y < 0 and dtypes.kind(x.dtype) != "f":
            raise ew.IntegerPowerError(f"power: Integers cannot be raised to negative powers, "
                                       f"got a base of dtype {x.dtype} and exponent {y}")
        if y <= 64:
            return ew.integer_pow(x, y)
    x, yv = promote_broadcast("power", x, y)
    if dtypes.kind(x.dtype) != "f" and type(y) in (Array, np.ndarray) and y.ndim == 0 and \
            int(np.asarray(y)) < 0:  # a concrete 0-d exponent: its value is known here
        raise ew.IntegerPowerError(f"power: Integers cannot be raised to negative powers, got "
                                   f"a base of dtype {x.dtype} and exponent {int(np.asarray(y))}")
    return ew.pow_(x, yv)


pow = power  # noqa: A001 (numpy's name)
__all__.append("pow")


def _compare(name, op, direction=None):
    def f(x, y):
        x, y = promote_broadcast(name, x, y)
        if direction is not None and dtypes.is_complex(x.dtype):
            return lex_compare(x, y, direction)
        return op(x, y)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, returning bool." + (
        "" if direction is None else " Complex numbers compare lexicographically (real part, "
        "then imaginary part), as in JAX; a NaN in the deciding part compares false.")
    return _export(f)


equal = _compare("equal", ew.eq)
not_equal = _compare("not_equal", ew.ne)
less = _compare("less", ew.lt, "lt")
less_equal = _compare("less_equal", ew.le, "le")
greater = _compare("greater", ew.gt, "gt")
greater_equal = _compare("greater_equal", ew.ge, "ge")


def _logical(name, op):
    def f(x, y):
        x, y = promote_broadcast(name, x, y)
        return op(_to_bool(x), _to_bool(y))
    f.__name__ = name
    return _export(f)


def _to_bool(x):
    return x if x.dtype == dtypes.bool_ else ew.ne(x, full_like(x, 0))


logical_and = _logical("logical_and", ew.and_)
logical_or = _logical("logical_or", ew.or_)
logical_xor = _logical("logical_xor", ew.xor)


@_export
def logical_not(x):
    (x,) = promote_broadcast("logical_not", x)
    return ew.not_(_to_bool(x))


def _bitwise(name, op):
    def f(x, y):
        x, y = promote_broadcast(name, x, y, kinds="iub")
        return op(x, y)
    f.__name__ = name
    return _export(f)


bitwise_and = _bitwise("bitwise_and", ew.and_)
bitwise_or = _bitwise("bitwise_or", ew.or_)
bitwise_xor = _bitwise("bitwise_xor", ew.xor)


@_export
def bitwise_not(x):
    (x,) = promote_broadcast("bitwise_not", x)
    if dtypes.kind(x.dtype) == "f":
        raise TypeError(f"bitwise_not: operand must be integer or bool, got {x.dtype}")
    return ew.not_(x)


invert = bitwise_not
__all__.append("invert")


@_export
def isfinite(x):
    (x,) = promote_broadcast("isfinite", x)
    return ew.is_finite(x) if dtypes.is_inexact(x.dtype) else full_like(x, True, dtypes.bool_)


@_export
def isnan(x):
    (x,) = promote_broadcast("isnan", x)
    return ew.ne(x, x) if dtypes.is_inexact(x.dtype) else full_like(x, False, dtypes.bool_)


@_export
def isinf(x):
    (x,) = promote_broadcast("isinf", x)
    if not dtypes.is_inexact(x.dtype):
        return full_like(x, False, dtypes.bool_)
    mag = ew.abs_(x)      # (hypot of a complex x: inf where either part is, NaN beside inf too)
    return ew.eq(mag, full_like(mag, float("inf")))


@_export
def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """Elements of x where condition, else y (broadcast). One-argument form: the indices of
    the non-zero elements, as nonzero(condition, size=size, fill_value=fill_value) (size and
    fill_value belong to that form only, as in JAX).

    >>> jnp.where(jnp.array([0, 3, 0, 5]), size=3, fill_value=-1)     # (Array([1, 3, -1]),)
    """
    if x is None and y is None:
        from .indexing import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value are only for the one-argument form "
                         "where(condition)")
    c = asarray_arg(condition, "where")
    x, y = (v if type(v) in (bool, int, float) else asarray_arg(v, "where") for v in (x, y))
    broadcast_shapes(c.shape, *(v.shape for v in (x, y) if hasattr(v, "shape")), where="where")
    x, y = promote_broadcast("where", x, y)
    from ..primitives.views import broadcast_to_rank
    shape = broadcast_shapes(c.shape, x.shape, where="where")
    return ew.select(broadcast_to_rank(_to_bool(c), shape), broadcast_to_rank(x, shape),
                     broadcast_to_rank(y, shape))


@_export
def clip(arr=None, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002
    """Limit values to [min, max] (either may be None; neither: arr unchanged, as JAX);
    NaN stays NaN. Complex operands raise ValueError, as in JAX. The names before JAX 0.4.27
    (a, a_min, a_max), still usual in programs, work with a DeprecationWarning.

    >>> jnp.clip(jnp.asarray([-1.0, 0.5, 2.0]), min=0, max=1)     # [0., 0.5, 1.]
    """
    import warnings
    for old, new, v in (("a", "arr", a), ("a_min", "min", a_min), ("a_max", "max", a_max)):
        if v is not None:
            # (JAX 0.4.27 to 0.4.3x warned; later JAX dropped them; programs still pass them)
            warnings.warn(f"clip: the argument {old}= is deprecated, use {new}=",
                          DeprecationWarning, stacklevel=3)
    for new, cur, old, v in (("arr", arr, "a", a), ("min", min, "a_min", a_min),
                             ("max", max, "a_max", a_max)):
        if cur is not None and v is not None:
            raise ValueError(f"clip: give {new} or {old}, not both")
    arr = a if arr is None else arr
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    if arr is None:
        raise ValueError("clip: no input was provided (arr)")
    arr = asarray_arg(arr, "clip")
    if lo is None and hi is None:
        return arr
    # every argument converted and the shapes checked before the first kernel
    lo, hi = (b if b is None or type(b) in (bool, int, float) else asarray_arg(b, "clip")
              for b in (lo, hi))
    for arg, b in (("arr", arr), ("min", lo), ("max", hi)):
        if hasattr(b, "dtype") and dtypes.is_complex(b.dtype):
            # JAX's ValueError: its lexicographic max/min would clip real parts only
            raise ValueError(f"clip: {arg} of shape {tuple(b.shape)} and dtype {b.dtype} is "
                             "complex; complex values have no ordering and cannot be "
                             "clipped (as in JAX): clip jnp.real(a) / jnp.imag(a) instead")
    broadcast_shapes(arr.shape, *(b.shape for b in (lo, hi) if hasattr(b, "shape")),
                     where="clip")
    if lo is not None:
        arr = maximum(arr, lo)
    if hi is not None:
        arr = minimum(arr, hi)
    return arr


@_export
def sinc(x):
    (x,) = promote_to_float("sinc", x)
    px = ew.mul(x, full_like(x, _math.pi))
    zero = ew.eq(x, full_like(x, 0))
    safe = ew.select(zero, full_like(x, 1), px)
    return ew.select(zero, full_like(x, 1), ew.div(ew.sin(safe), safe))


@_export
def deg2rad(x):
    (x,) = promote_to_float("deg2rad", x)
    return ew.mul(x, full_like(x, _math.pi / 180))


@_export
def rad2deg(x):
    (x,) = promote_to_float("rad2deg", x)
    return ew.mul(x, full_like(x, 180 / _math.pi))


radians, degrees = deg2rad, rad2deg
__all__ += ["radians", "degrees"]


@_export
def hypot(x, y):
    """sqrt(x**2 + y**2) without overflow or underflow in the squares (JAX's formula:
    hypot(1e30, 1e30) is 1.41e30 in float32, not inf; the gradient at (0, 0) is finite).

    >>> jnp.hypot(3.0, 4.0)     # 5.0
    """
    x, y = promote_to_float("hypot", x, y)
    x, y = ew.abs_(x), ew.abs_(y)
    inf = full_like(x, float("inf"))
    any_inf = ew.or_(ew.eq(x, inf), ew.eq(y, inf))   # hypot(inf, nan) is inf
    big, small = ew.max_(x, y), ew.min_(x, y)
    zero = ew.eq(big, full_like(x, 0))
    ratio = ew.div(small, ew.select(zero, full_like(x, 1), big))
    scaled = ew.mul(big, ew.sqrt(ew.add(full_like(x, 1), ew.mul(ratio, ratio))))
    return ew.select(any_inf, inf, ew.select(zero, big, scaled))


@_export
def logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow; its derivative is exp(x - out), exp(y - out)
    (at x == y each gets 1/2, as in JAX, where max and abs would give 1 and 0)."""
    x, y = promote_to_float("logaddexp", x, y)
    return _logaddexp(x, y)


def _logaddexp_value(x, y):
    m = ew.max_(x, y)
    d = ew.neg(ew.abs_(ew.sub(x, y)))
    # where both are -inf (or equal infinities) d is NaN: the answer is m
    d = ew.select(ew.ne(d, d), full_like(d, float("-inf")), d)
    return ew.add(m, ew.log1p(ew.exp(d)))


def _finite_or_zero(v):
    """v with infinities as 0 (so that exp(x - out) is exp(0) where both are -inf)."""
    return ew.select(ew.eq(ew.abs_(v), full_like(v, float("inf"))), full_like(v, 0), v)


def _logaddexp_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = _logaddexp(x, y)
    fo = _finite_or_zero(out)
    return out, ew.add(ew.mul(tx, ew.exp(ew.sub(_finite_or_zero(x), fo))),
                       ew.mul(ty, ew.exp(ew.sub(_finite_or_zero(y), fo))))


def _make_logaddexp():
    from ..transforms.custom import custom_jvp
    f = custom_jvp(_logaddexp_value)
    f.defjvp(_logaddexp_jvp)
    return f


_logaddexp = _make_logaddexp()


@_export
def heaviside(x1, x2):
    x1, x2 = promote_broadcast("heaviside", x1, x2)
    zero = full_like(x1, 0)
    return ew.select(ew.lt(x1, zero), zero,
                     ew.select(ew.gt(x1, zero), full_like(x1, 1), x2))


@_export
def copysign(x1, x2):
    x1, x2 = promote_to_float("copysign", x1, x2)
    neg_ = ew.or_(ew.lt(x2, full_like(x2, 0)),
                  ew.and_(ew.eq(x2, full_like(x2, 0)),
                          ew.lt(ew.div(full_like(x2, 1), x2), full_like(x2, 0))))
    a = ew.abs_(x1)
    return ew.select(neg_, ew.neg(a), a)


@_export
def signbit(x):
    (x,) = promote_broadcast("signbit", x)
    zero = full_like(x, 0)
    if dtypes.kind(x.dtype) != "f":
        return ew.lt(x, zero)
    return ew.or_(ew.lt(x, zero), ew.and_(ew.eq(x, zero),
                                          ew.lt(ew.div(full_like(x, 1), x), zero)))


@_export
def float_power(x, y):
    x, y = promote_to_float("float_power", x, y)
    return ew.pow_(x, y)


@_export
def cbrt(x):
    (x,) = promote_to_float("cbrt", x)
    return ew.cbrt(x)   # the device's cbrt: exact cubes stay exact, grad(cbrt)(0) is inf
