"""jax.numpy functions composed from other netcl.numpy operations: comparisons of whole
arrays (isclose, allclose, array_equal, array_equiv), differences and integrals (diff,
ediff1d, trapezoid, unwrap, nancumsum, nancumprod), grids and products (meshgrid, cross,
vander, rot90) and choosing between values (select, piecewise).

Each one binds only existing primitives (slices, elementwise ops, reductions, concatenate),
so grad, jit and vmap work through them. Arguments are checked before any kernel runs.

>>> import netcl.numpy as jnp
>>> jnp.diff(jnp.asarray([1.0, 4.0, 9.0]))          # [3., 5.]
>>> jnp.allclose(jnp.ones(3), jnp.ones(3) + 1e-7)    # True
"""
import numpy as np

from ..core import dtypes
from ..core.shapes import IncompatibleShapesError, broadcast_shapes, normalize_axis
from ..primitives import elementwise as ew
from ..primitives import views
from ._composite_util import (PY_SCALAR as _PY_SCALAR, bool_arg, index_axis, int_arg, is_array,
                              isnan as _isnan, promote_inexact, scalar_arg, slice_axis, to_bool)
from ._util import asarray_arg, promote, promote_broadcast, promote_to_float
from .joining import concatenate, stack
from .manipulation import flip, moveaxis, transpose
from .math import (absolute, add, equal, floor_divide, greater, less, logical_and, multiply,
                   negative, remainder, subtract, true_divide, where)
from .reductions import all as _all, cumprod, cumsum, sum as _sum

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "diff", "ediff1d", "meshgrid",
           "cross", "nancumsum", "nancumprod", "vander", "trapezoid", "unwrap", "rot90",
           "select", "piecewise"]

# ---- whole-array comparisons -------------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise `|a - b| <= atol + rtol * |b|` (or a == b), as jnp.isclose.

    Integer and bool operands are compared as floats; infinities are close only to the same
    infinity, NaN to nothing unless equal_nan. rtol and atol are scalars.

    >>> jnp.isclose(jnp.asarray([1.0, 1.1]), 1.0)      # [True, False]
    """
    rtol = scalar_arg(rtol, "isclose", "rtol")
    atol = scalar_arg(atol, "isclose", "atol")
    equal_nan = bool_arg(equal_nan, "isclose", "equal_nan")
    a, b = promote_to_float("isclose", a, b)
    abs_b = ew.abs_(b)       # (real for complex b: the tolerances are real too)
    tol_r = _scalar_like(rtol, abs_b)
    tol_a = _scalar_like(atol, abs_b)
    in_range = ew.le(ew.abs_(ew.sub(a, b)), ew.add(tol_a, ew.mul(tol_r, abs_b)))
    out = ew.or_(ew.eq(a, b), ew.and_(ew.is_finite(b), in_range))
    if equal_nan:
        out = ew.or_(out, ew.and_(_isnan(a), _isnan(b)))
    return out


def _scalar_like(v, x):
    """Scalar v (a number or 0-d array) in x's dtype, broadcast to x's shape."""
    if type(v) in _PY_SCALAR:
        return views.full_like(x, v)
    if v.dtype != x.dtype:
        v = ew.convert_element_type(v, x.dtype, x.weak_type)
    return views.broadcast_to_rank(v, tuple(x.shape))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True (a 0-d bool array) when every element of a is close to b (see isclose).

    >>> jnp.allclose(jnp.ones(3), jnp.ones(3) * (1 + 1e-7))   # True
    """
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """True (a 0-d bool array) when a1 and a2 have the same shape and elements; arrays of
    different shapes give False. NaNs are equal only with equal_nan.

    >>> jnp.array_equal(jnp.arange(3), jnp.asarray([0.0, 1.0, 2.0]))   # True
    """
    a1, a2 = asarray_arg(a1, "array_equal"), asarray_arg(a2, "array_equal")
    equal_nan = bool_arg(equal_nan, "array_equal", "equal_nan")
    if tuple(a1.shape) != tuple(a2.shape):
        return views.full((), False, dtypes.bool_)
    a1, a2 = promote("array_equal", a1, a2)
    eq = ew.eq(a1, a2)
    if equal_nan and dtypes.kind(a1.dtype) == "f":
        eq = ew.or_(eq, ew.and_(_isnan(a1), _isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    """True (a 0-d bool array) when a1 and a2 broadcast together and are equal everywhere;
    shapes that do not broadcast give False.

    >>> jnp.array_equiv(jnp.ones((2, 3)), jnp.ones(3))   # True
    """
    a1, a2 = asarray_arg(a1, "array_equiv"), asarray_arg(a2, "array_equiv")
    try:
        broadcast_shapes(a1.shape, a2.shape, where="array_equiv")
    except IncompatibleShapesError:
        return views.full((), False, dtypes.bool_)
    a1, a2 = promote_broadcast("array_equiv", a1, a2)
    return _all(ew.eq(a1, a2))


# ---- differences ---------------------------------------------------------------------------------

def _edge(v, arr, axis, where, arg):
    """diff's prepend/append: a scalar broadcast to one slice of arr along axis, or an array
    whose other dimensions match arr's (checked here, before any kernel)."""
    v = asarray_arg(v, where)
    if v.ndim == 0:
        shape = tuple(1 if k == axis else d for k, d in enumerate(arr.shape))
        return views.broadcast_to_rank(v, shape)
    if v.ndim != arr.ndim or any(d != e for k, (d, e) in enumerate(zip(v.shape, arr.shape))
                                 if k != axis):
        raise ValueError(f"{where}: {arg} of shape {tuple(v.shape)} does not match the array's "
                         f"shape {tuple(arr.shape)} outside axis {axis}")
    return v


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along `axis`: out[i] = a[i + 1] - a[i], applied n times
    (for bool arrays, a[i + 1] != a[i]). `prepend` / `append` (scalars or arrays matching a
    outside `axis`) are joined to a first.

    >>> jnp.diff(jnp.asarray([1, 2, 4, 7]), n=2)                  # [1, 1]
    >>> jnp.diff(jnp.asarray([1.0, 3.0]), prepend=0.0)             # [1., 2.]
    """
    arr = asarray_arg(a, "diff")
    n = int_arg(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    if isinstance(axis, (bool, np.bool_)) or not hasattr(axis, "__index__"):
        raise TypeError(f"diff: axis must be an int, got {type(axis).__name__} {axis!r}")
    if n == 0:
        return arr
    if arr.ndim == 0:
        raise ValueError("diff: requires an array of at least one dimension, got a 0-d array")
    ax = normalize_axis(axis, arr.ndim, "diff")
    parts = []
    if prepend is not None:
        parts.append(_edge(prepend, arr, ax, "diff", "prepend"))
    parts.append(arr)
    if append is not None:
        parts.append(_edge(append, arr, ax, "diff", "append"))
    if len(parts) > 1:
        arr = concatenate(parts, ax)
    op = ew.ne if arr.dtype == dtypes.bool_ else ew.sub
    for _ in range(n):
        m = arr.shape[ax]
        arr = op(slice_axis(arr, 1, m, ax), slice_axis(arr, 0, m - 1, ax))
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with `to_begin` and
    `to_end` (cast to its dtype and flattened) joined before and after.

    >>> jnp.ediff1d(jnp.asarray([1, 2, 4]), to_begin=jnp.asarray([-9]))   # [-9, 1, 2]
    """
    arr = asarray_arg(ary, "ediff1d")
    if arr.dtype == dtypes.bool_:
        raise TypeError("ediff1d: bool arrays are not supported (subtraction of bools); "
                        "convert to int first")
    extra = [(k, asarray_arg(v, "ediff1d")) for k, v in (("to_begin", to_begin),
                                                           ("to_end", to_end)) if v is not None]
    arr = views.reshape(arr, (arr.size,))
    m = arr.shape[0]
    out = ew.sub(slice_axis(arr, 1, m, 0), slice_axis(arr, 0, m - 1, 0))
    ext = {}
    for k, v in extra:
        v = views.reshape(v, (v.size,))
        ext[k] = v if v.dtype == arr.dtype else ew.convert_element_type(v, arr.dtype,
                                                                        arr.weak_type)
    parts = ([ext["to_begin"]] if "to_begin" in ext else []) + [out] + \
        ([ext["to_end"]] if "to_end" in ext else [])
    return concatenate(parts) if len(parts) > 1 else out


# ---- grids -------------------------------------------------------------------------------------

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-d coordinate vectors, as a list.

    indexing='xy' (Cartesian: the first two outputs have shape (len(x2), len(x1), ...)) or
    'ij' (matrix: shape (len(x1), len(x2), ...)); sparse=True gives broadcastable arrays
    with size-1 dimensions instead of full grids. Each output keeps its input's dtype.

    >>> X, Y = jnp.meshgrid(jnp.arange(3), jnp.arange(2))   # both of shape (2, 3)
    """
    args = [asarray_arg(x, "meshgrid") for x in xi]
    if not copy:
        raise ValueError("meshgrid: only copy=True is supported (netcl arrays are immutable)")
    sparse = bool_arg(sparse, "meshgrid", "sparse")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    bad = [tuple(a.shape) for a in args if a.ndim != 1]
    if bad:
        raise ValueError(f"meshgrid: arguments must be 1-d, got shapes "
                         f"{[tuple(a.shape) for a in args]}")
    swap = indexing == "xy" and len(args) >= 2
    if swap:
        args[0], args[1] = args[1], args[0]
    full_shape = tuple(a.shape[0] for a in args)
    out = []
    for i, a in enumerate(args):
        shape = tuple(a.shape[0] if k == i else 1 for k in range(len(args))) if sparse \
            else full_shape
        out.append(views.broadcast_in_dim(a, shape, (i,)))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


# ---- cross product -----------------------------------------------------------------------------

def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, taken as 3-vectors with z = 0) along
    `axisa` of a and `axisb` of b; the other dimensions broadcast. The vectors of the result
    lie along `axisc`; two 2-vectors give the scalar z component. `axis` sets all three.

    >>> jnp.cross(jnp.asarray([1.0, 0.0, 0.0]), jnp.asarray([0.0, 1.0, 0.0]))   # [0, 0, 1]
    """
    a, b = asarray_arg(a, "cross"), asarray_arg(b, "cross")
    if axis is not None:
        axisa = axisb = axisc = axis
    for name, x in (("a", a), ("b", b)):
        if x.ndim == 0:
            raise ValueError(f"cross: {name} must have at least one dimension, got a 0-d array")
    ia = normalize_axis(axisa, a.ndim, "cross", "axisa")
    ib = normalize_axis(axisb, b.ndim, "cross", "axisb")
    da, db = a.shape[ia], b.shape[ib]
    if da not in (2, 3) or db not in (2, 3):
        raise ValueError(f"cross: the vector dimension must be 2 or 3, got {da} (axis {ia} of "
                         f"a, shape {tuple(a.shape)}) and {db} (axis {ib} of b, shape "
                         f"{tuple(b.shape)})")
    batch = broadcast_shapes(tuple(s for k, s in enumerate(a.shape) if k != ia),
                             tuple(s for k, s in enumerate(b.shape) if k != ib), where="cross")
    if not (da == 2 and db == 2):
        normalize_axis(axisc, len(batch) + 1, "cross", "axisc")
    a, b = promote("cross", a, b)
    if a.dtype == dtypes.bool_:
        raise TypeError("cross: bool arrays are not supported (subtraction of bools)")
    a0, a1 = index_axis(a, 0, ia), index_axis(a, 1, ia)
    b0, b1 = index_axis(b, 0, ib), index_axis(b, 1, ib)
    if da == 2 and db == 2:
        return subtract(multiply(a0, b1), multiply(a1, b0))
    z = multiply(a0, b1)
    z = subtract(z, multiply(a1, b0))
    if da == 3 and db == 3:
        a2, b2 = index_axis(a, 2, ia), index_axis(b, 2, ib)
        x = subtract(multiply(a1, b2), multiply(a2, b1))
        y = subtract(multiply(a2, b0), multiply(a0, b2))
    elif da == 3:   # b2 = 0
        a2 = index_axis(a, 2, ia)
        x = ew.neg(multiply(a2, b1))
        y = multiply(a2, b0)
    else:           # a2 = 0
        b2 = index_axis(b, 2, ib)
        x = multiply(a1, b2)
        y = ew.neg(multiply(a0, b2))
    x, y, z = (views.broadcast_to_rank(v, batch) for v in (x, y, z))
    return moveaxis(stack([x, y, z]), 0, axisc)


# ---- NaN-ignoring cumulative operations --------------------------------------------------------

def _nan_cumulative(name, fn, fill):
    def f(a, axis=None, dtype=None, out=None):
        a = asarray_arg(a, name)
        if out is not None:
            raise ValueError(f"{name}: the out argument is not supported (netcl arrays are "
                             "immutable); use the returned array")
        dt = None if dtype is None else dtypes.canonicalize(dtype, where=name)
        if a.ndim == 0:
            a = views.reshape(a, (1,))
        if axis is not None:
            normalize_axis(axis, a.ndim, name)
        if dtypes.kind(a.dtype) == "f":
            a = ew.select(_isnan(a), views.full_like(a, fill), a)
        if dt == dtypes.bool_:   # as JAX and NumPy: the running any / all of a != 0
            return to_bool(fn(to_bool(a), axis, dtypes.int32))
        return fn(a, axis, dtype)
    f.__name__ = name
    f.__doc__ = (f"Running {'sum' if fill == 0 else 'product'} along `axis` (of the flattened "
                 f"array when axis is None) treating NaNs as {fill}; bools and int32 "
                 f"accumulate in int32 (dtype=bool gives the running "
                 f"{'any' if fill == 0 else 'all'} of a != 0).\n\n"
                 f">>> jnp.{name}(jnp.asarray([1.0, jnp.nan, 3.0]))   # "
                 f"{'[1., 1., 4.]' if fill == 0 else '[1., 1., 3.]'}")
    return f


nancumsum = _nan_cumulative("nancumsum", cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", cumprod, 1)


# ---- vander, trapezoid, unwrap, rot90 ----------------------------------------------------------

def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-d array: column j is x ** (N - 1 - j) (x ** j when
    increasing), N columns (default len(x)). Powers are repeated products, so integer
    inputs stay exact (wrapping on overflow) and derivatives are exact.

    >>> jnp.vander(jnp.asarray([1, 2, 3]), 3)    # [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    x = asarray_arg(x, "vander")
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-d, got shape {tuple(x.shape)}")
    N = x.shape[0] if N is None else int_arg(N, "vander", "N", 0)
    increasing = bool_arg(increasing, "vander", "increasing")
    if x.dtype == dtypes.bool_:
        raise TypeError("vander: bool arrays are not supported; convert to int first")
    if N == 0:
        return views.full((x.shape[0], 0), 0, x.dtype)
    cols = [views.full_like(x, 1)]
    for _ in range(N - 1):
        cols.append(x if len(cols) == 1 else ew.mul(cols[-1], x))
    if not increasing:
        cols = cols[::-1]
    return stack(cols, axis=1)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along `axis` by the trapezoidal rule, with sample points `x` (1-d of
    length y.shape[axis], or an array that broadcasts with y) or spacing `dx` (a scalar or
    an array). Integers are integrated as floats; an empty axis integrates to 0.

    >>> jnp.trapezoid(jnp.asarray([1.0, 2.0, 3.0]))                         # 4.0
    >>> jnp.trapezoid(jnp.asarray([1.0, 2.0]), x=jnp.asarray([0.0, 3.0]))  # 4.5
    """
    y = asarray_arg(y, "trapezoid")
    if y.ndim == 0:
        raise ValueError("trapezoid: y must have at least one dimension, got a 0-d array")
    ax = normalize_axis(axis, y.ndim, "trapezoid")
    n = y.shape[ax]
    if x is None:
        d = dx if type(dx) in _PY_SCALAR else asarray_arg(dx, "trapezoid")
        if not isinstance(d, _PY_SCALAR) and d.ndim > 0:
            if d.ndim > y.ndim:
                raise ValueError(f"trapezoid: dx of shape {tuple(d.shape)} has more "
                                 f"dimensions than y of shape {tuple(y.shape)}")
            dshape = (1,) * (y.ndim - d.ndim) + tuple(d.shape)
            dshape = dshape[:ax] + dshape[ax + 1:] + (dshape[ax],)
            _trapezoid_check(y, ax, dshape, "dx")
            d = moveaxis(views.reshape(d, (1,) * (y.ndim - d.ndim) + tuple(d.shape)), ax, -1)
        (y,) = promote_inexact("trapezoid", y)
    else:
        x = asarray_arg(x, "trapezoid")
        if x.ndim == 1:
            if x.shape[0] != n:
                raise ValueError(f"trapezoid: x of shape {tuple(x.shape)} must have the length "
                                 f"of y along axis {ax}, {n} (y has shape {tuple(y.shape)})")
        elif x.ndim == 0:
            raise ValueError("trapezoid: x must have at least one dimension, got a 0-d array")
        else:
            if x.ndim > y.ndim:
                raise ValueError(f"trapezoid: x of shape {tuple(x.shape)} has more dimensions "
                                 f"than y of shape {tuple(y.shape)}")
            xax = normalize_axis(axis, x.ndim, "trapezoid")
            xs = tuple(x.shape)
            xs = xs[:xax] + xs[xax + 1:] + (max(xs[xax] - 1, 0),)
            _trapezoid_check(y, ax, xs, "x")
        y, x = promote_inexact("trapezoid", y, x)
        if x.ndim == 1:
            d = diff(x)
        else:
            d = moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, ax, -1)
    last = y.ndim - 1
    if n > 0 and (isinstance(d, _PY_SCALAR) or d.ndim == 0 or d.shape[-1] == 1):
        dr = d if isinstance(d, _PY_SCALAR) or d.ndim == 0 else index_axis(d, 0, d.ndim - 1)
        inner = subtract(_sum(y, -1), multiply(0.5, add(index_axis(y, 0, last),
                                                        index_axis(y, n - 1, last))))
        return multiply(dr, inner)
    mids = add(slice_axis(y, 1, n, last), slice_axis(y, 0, n - 1, last))
    return multiply(0.5, _sum(multiply(d, mids), -1))


def _trapezoid_check(y, ax, dshape, arg):
    """The spacings (moved to the last axis) must broadcast with y's n - 1 intervals."""
    ys = tuple(y.shape)
    intervals = ys[:ax] + ys[ax + 1:] + (max(ys[ax] - 1, 0),)
    ok = dshape[-1] in (1, intervals[-1])
    try:
        broadcast_shapes(dshape, intervals, where="trapezoid")
    except IncompatibleShapesError:
        ok = False
    if not ok:
        raise ValueError(f"trapezoid: the spacings from {arg} (shape {dshape} with the "
                         f"integration axis last) do not broadcast with y's {intervals[-1]} "
                         f"intervals along axis {ax} (y has shape {ys})")


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap a phase: where consecutive values along `axis` jump by at least `discont`
    (default period / 2), add multiples of `period` so that they jump by less.

    >>> jnp.unwrap(jnp.asarray([0.0, 3.0, 6.5]))   # [0., 3., 0.21681...]
    """
    p = asarray_arg(p, "unwrap")
    if p.ndim == 0:
        raise ValueError("unwrap: p must have at least one dimension, got a 0-d array")
    ax = normalize_axis(axis, p.ndim, "unwrap")
    period = scalar_arg(period, "unwrap", "period")
    if discont is not None:
        discont = scalar_arg(discont, "unwrap", "discont")
    p, per = promote("unwrap", p, period)
    if p.dtype == dtypes.bool_:
        raise TypeError("unwrap: bool arrays with a bool period are not supported")
    if p.shape[ax] == 0:
        return p
    if discont is None:
        discont = true_divide(per, 2)
    interval = floor_divide(per, 2) if p.dtype.kind in "iu" else true_divide(per, 2)
    dd = diff(p, axis=ax)
    ddmod = subtract(remainder(add(dd, interval), per), interval)
    ddmod = where(logical_and(equal(ddmod, negative(interval)), greater(dd, 0)), interval, ddmod)
    correct = where(less(absolute(dd), discont), 0, subtract(ddmod, dd))
    m = p.shape[ax]
    rest = add(slice_axis(p, 1, m, ax), cumsum(correct, axis=ax))
    return concatenate([slice_axis(p, 0, 1, ax), rest], ax)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate an array by 90 degrees k times in the plane of `axes` (from the first axis
    towards the second).

    >>> jnp.rot90(jnp.asarray([[1, 2], [3, 4]]))     # [[2, 4], [1, 3]]
    """
    m = asarray_arg(m, "rot90")
    if m.ndim < 2:
        raise ValueError(f"rot90: the array must have at least two dimensions, got shape "
                         f"{tuple(m.shape)}")
    k = int_arg(k, "rot90", "k")
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise ValueError(f"rot90: axes must be a pair of ints, got {axes!r}")
    ax1 = normalize_axis(axes[0], m.ndim, "rot90", "axes")
    ax2 = normalize_axis(axes[1], m.ndim, "rot90", "axes")
    if ax1 == ax2:
        raise ValueError(f"rot90: the two axes must be different, got {tuple(axes)}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


# ---- select / piecewise ------------------------------------------------------------------------

def _as_list(v, where, arg):
    if is_array(v):
        if v.ndim == 0:
            raise ValueError(f"{where}: {arg} must be a sequence, got a 0-d array")
        return [index_axis(v, i, 0) for i in range(v.shape[0])]
    if isinstance(v, np.ndarray):
        return list(v)
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{where}: {arg} must be a list or tuple, got {type(v).__name__}")
    return list(v)


def _value(v, where):
    return v if type(v) in _PY_SCALAR else asarray_arg(v, where)


def select(condlist, choicelist, default=0):
    """Elements of the first choice whose condition holds, else `default`: out =
    choicelist[i] where condlist[i] is the first true condition. Conditions that are not
    bool count as true where nonzero; all arguments broadcast together.

    >>> x = jnp.arange(6)
    >>> jnp.select([x < 2, x > 3], [x, x ** 2], -1)    # [0, 1, -1, -1, 16, 25]
    """
    conds = _as_list(condlist, "select", "condlist")
    choices = _as_list(choicelist, "select", "choicelist")
    if len(conds) != len(choices):
        raise ValueError(f"select: condlist and choicelist must have the same length, got "
                         f"{len(conds)} and {len(choices)}")
    if not conds:
        raise ValueError("select: condlist must be non-empty")
    conds = [asarray_arg(c, "select") for c in conds]
    choices = [_value(c, "select") for c in choices]
    default = _value(default, "select")
    shape = broadcast_shapes(*(c.shape for c in conds),
                             *(v.shape for v in choices + [default] if is_array(v)),
                             where="select")
    vals = promote("select", default, *choices)
    vals = [views.broadcast_to_rank(v, shape) for v in vals]
    out = vals[0]
    for c, v in zip(conds[::-1], vals[:0:-1]):
        out = ew.select(views.broadcast_to_rank(to_bool(c), shape), v, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """A function defined piecewise: where condlist[i] holds, funclist[i] (a function,
    called as f(x, *args, **kw), or a constant); a later true condition overrides an earlier
    one. An extra last entry of funclist is the default where no condition holds (else 0).
    Results are cast to x's dtype.

    Every function is evaluated on the whole of x and the results are selected elementwise
    (as jax.numpy's, whose lax.switch becomes a select under its vectorisation), so the
    functions must be elementwise and give values of x's shape or broadcastable to it.

    >>> x = jnp.asarray([-2.0, 0.5, 3.0])
    >>> jnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 10, 0.0])   # [2, 0, 30]
    """
    x = asarray_arg(x, "piecewise")
    conds = _as_list(condlist, "piecewise", "condlist")
    if not isinstance(funclist, (list, tuple)):
        raise TypeError(f"piecewise: funclist must be a list or tuple, got "
                        f"{type(funclist).__name__}")
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        funcs = [funclist[-1]] + list(funclist[:-1])
    elif nf == nc:
        funcs = [0] + list(funclist)
    else:
        raise ValueError(f"piecewise: with {nc} condition(s), either {nc} or {nc + 1} "
                         f"functions are expected; got {nf}")
    shape = tuple(x.shape)
    masks = []
    for i, c in enumerate(conds):
        c = asarray_arg(c, "piecewise")
        try:
            ok = broadcast_shapes(c.shape, shape, where="piecewise") == shape
        except IncompatibleShapesError:
            ok = False
        if not ok:
            raise ValueError(f"piecewise: condition {i} of shape {tuple(c.shape)} does not "
                             f"broadcast to x's shape {shape}")
        masks.append(c)
    for i, f in enumerate(funcs):
        if not callable(f) and not (type(f) in _PY_SCALAR or is_array(f) or
                                    isinstance(f, (np.ndarray, np.number, np.bool_))):
            raise TypeError(f"piecewise: funclist entries must be functions or constants, got "
                            f"{type(f).__name__}")
    vals = [_piece(f, x, args, kw, i) for i, f in enumerate(funcs)]
    out = vals[0]
    for c, v in zip(masks, vals[1:]):
        out = ew.select(views.broadcast_to_rank(to_bool(c), shape), v, out)
    return out


def _piece(f, x, args, kw, i):
    shape = tuple(x.shape)
    if callable(f):
        v = f(x, *args, **kw)
        v = asarray_arg(v, "piecewise") if not isinstance(v, (list, tuple)) else None
        if v is None:
            raise TypeError(f"piecewise: function {i} returned a list or tuple, not an array")
    else:
        v = asarray_arg(f, "piecewise")
    try:
        ok = broadcast_shapes(v.shape, shape, where="piecewise") == shape
    except IncompatibleShapesError:
        ok = False
    if not ok:
        raise ValueError(f"piecewise: the value of funclist entry {i} has shape "
                         f"{tuple(v.shape)}, which does not broadcast to x's shape {shape}")
    if v.dtype != x.dtype or v.weak_type != x.weak_type:
        v = ew.convert_element_type(v, x.dtype, x.weak_type)
    return views.broadcast_to_rank(v, shape)
