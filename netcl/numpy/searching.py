"""Searching and counting in netcl.numpy, as jax.numpy has them: searchsorted, digitize,
interp, isin, in1d, bincount, histogram and histogram_bin_edges.

netcl has no sort or binary-search primitive, so searches compare every query with every
element (`searchsorted(a, v)` compares each of v's elements with all of a: O(len(a) * v.size)
work and memory, one fused comparison and one sum; JAX's method='compare_all'). That is
fast for moderate sizes (thousands by thousands) and works under jit, vmap and grad.
Floats are ordered as JAX sorts them: -0.0 equals 0.0 and NaN comes after everything;
complex numbers by real part, then imaginary part, each so.

>>> import netcl.numpy as jnp
>>> jnp.searchsorted(jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([2.0, 2.5]))   # [1, 2]
>>> jnp.interp(jnp.asarray(1.5), jnp.asarray([1.0, 2.0]), jnp.asarray([10.0, 20.0]))  # 15.
"""
import numpy as np

from ..core import dtypes
from ..core.tracing import ConcretizationError
from ..primitives import elementwise as ew
from ..primitives import views
from ._util import asarray_arg, promote
from ._composite_util import (bool_arg, index_axis, int_arg, is_array, promote_inexact,
                              scalar_arg, slice_axis, to_float)
from .composites import diff
from .joining import concatenate
from .math import add, clip, divide, equal, greater, less, maximum, multiply, subtract, where
from .reductions import any as _any, all as _all, max as _max, min as _min, sum as _sum
from .selection import take

__all__ = ["searchsorted", "digitize", "interp", "isin", "in1d", "bincount",
           "histogram_bin_edges", "histogram"]

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _method(method, where, allow_none=False):
    if method is None and allow_none:
        return
    if method not in _METHODS:
        raise ValueError(f"{where}: method must be one of {', '.join(map(repr, _METHODS))}, "
                         f"got {method!r} (netcl always compares all; the result is the same)")


def _count_before(a, v, side):
    """For each element of v, how many elements of the 1-d a come before it (side='left':
    a[i] < v; 'right': a[i] <= v) in JAX's total order of floats; int32, of v's shape."""
    n = a.shape[0]
    if n == 0 or v.size == 0:
        return views.full(tuple(v.shape), 0, dtypes.int32)
    if a.dtype == dtypes.bool_:
        a = ew.convert_element_type(a, dtypes.int32)
        v = ew.convert_element_type(v, dtypes.int32)
    shape = tuple(v.shape) + (n,)
    A = views.broadcast_in_dim(a, shape, (v.ndim,))
    V = views.broadcast_in_dim(v, shape, tuple(range(v.ndim)))
    if dtypes.is_complex(a.dtype):
        c = _complex_before(A, V, side)
        return _sum(ew.convert_element_type(c, dtypes.int32), -1, dtype=dtypes.int32)
    if side == "left":
        c = ew.lt(A, V)
        if dtypes.kind(a.dtype) == "f":   # everything but NaN is before a NaN
            c = ew.or_(c, ew.and_(ew.ne(V, V), ew.eq(A, A)))
    else:
        c = ew.le(A, V)
        if dtypes.kind(a.dtype) == "f":   # everything is at or before a NaN
            c = ew.or_(c, ew.ne(V, V))
    return _sum(ew.convert_element_type(c, dtypes.int32), -1, dtype=dtypes.int32)


def _complex_before(A, V, side):
    """A before V (side='left': A < V; 'right': A <= V) for complex numbers in JAX's sort
    order: lexicographic by parts, each part in the float order above."""
    from ..primitives.complex_ops import imag, real

    def lt(x, y):       # x < y, NaN after every number
        return ew.or_(ew.lt(x, y), ew.and_(ew.ne(y, y), ew.eq(x, x)))

    def eq(x, y):
        return ew.or_(ew.eq(x, y), ew.and_(ew.ne(x, x), ew.ne(y, y)))
    ar, ai, vr, vi = real(A), imag(A), real(V), imag(V)
    second = lt(ai, vi) if side == "left" else ew.not_(lt(vi, ai))
    return ew.or_(lt(ar, vr), ew.and_(eq(ar, vr), second))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where the elements of v would be inserted into the sorted 1-d array a to keep
    it sorted: the first such place (side='left': the count of a's elements < v) or the last
    (side='right': the count <= v). int32, of v's shape. `sorter` (indices sorting a) reads a
    in that order.

    Implemented by comparing all pairs (see the module docstring): O(len(a) * v.size) work
    and memory. `method` is accepted for JAX's signature; the result does not depend on it.

    >>> a = jnp.asarray([1, 2, 2, 3])
    >>> jnp.searchsorted(a, jnp.asarray([2, 5])), jnp.searchsorted(a, 2, side="right")
    ([1, 4], 3)
    """
    a = asarray_arg(a, "searchsorted")
    v = asarray_arg(v, "searchsorted") if type(v) not in (bool, int, float) else v
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-d, got shape {tuple(a.shape)}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    _method(method, "searchsorted")
    if sorter is not None:
        sorter = asarray_arg(sorter, "searchsorted")
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"searchsorted: sorter must be an integer array, got {sorter.dtype}")
        if tuple(sorter.shape) != tuple(a.shape):
            raise ValueError(f"searchsorted: sorter of shape {tuple(sorter.shape)} must have "
                             f"a's shape {tuple(a.shape)}")
    a, v = promote("searchsorted", a, v)
    if sorter is not None:
        a = take(a, sorter, mode="clip")
    return _count_before(a, v, side)


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each element of x, for monotonic 1-d `bins` (increasing or
    decreasing): with increasing bins, i such that bins[i-1] <= x < bins[i]
    (bins[i-1] < x <= bins[i] when right). int32, of x's shape; 0 and len(bins) mark values
    outside. Comparison based, as searchsorted.

    >>> jnp.digitize(jnp.asarray([0.5, 1.0, 2.5]), jnp.asarray([1.0, 2.0]))   # [0, 1, 2]
    """
    x = asarray_arg(x, "digitize") if type(x) not in (bool, int, float) else x
    bins = asarray_arg(bins, "digitize")
    right = bool_arg(right, "digitize", "right")
    _method(method, "digitize", allow_none=True)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-d, got shape {tuple(bins.shape)}")
    bins, x = promote("digitize", bins, x)
    n = bins.shape[0]
    if n == 0:
        return views.full(tuple(x.shape), 0, dtypes.int32)
    side = "left" if right else "right"
    up = _count_before(bins, x, side)
    down = subtract(n, _count_before(views.rev(bins, (0,)), x, side))
    increasing = ew.ge(index_axis(bins, n - 1, 0), index_axis(bins, 0, 0))
    return where(increasing, up, down)


def _side_value(v, where, arg):
    """interp's left / right: None, 'extrapolate' or a value; (extrapolate?, value)."""
    if isinstance(v, str):
        if v != "extrapolate":
            raise ValueError(f"{where}: the only string value of {arg} is 'extrapolate', got "
                             f"{v!r}")
        return True, None
    if v is None or type(v) in (bool, int, float):
        return False, v
    return False, asarray_arg(v, where)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x (xp increasing, 1-d).
    Values below xp[0] give `left` (default fp[0]), above xp[-1] `right` (default fp[-1]);
    'extrapolate' extends the end segments instead. With `period`, x and xp are angles.

    Built on searchsorted (comparison based, O(len(xp) * x.size)); differentiable in x, xp
    and fp. With `period` xp is sorted by comparisons too (O(len(xp) ** 2)).

    >>> jnp.interp(jnp.asarray([0.0, 1.5, 5.0]), jnp.asarray([1.0, 2.0]),
    ...            jnp.asarray([10.0, 20.0]))                       # [10., 15., 20.]
    """
    x = asarray_arg(x, "interp") if type(x) not in (bool, int, float) else x
    xp, fp = asarray_arg(xp, "interp"), asarray_arg(fp, "interp")
    if xp.ndim != 1 or tuple(xp.shape) != tuple(fp.shape):
        raise ValueError(f"interp: xp and fp must be 1-d arrays of the same length, got shapes "
                         f"{tuple(xp.shape)} and {tuple(fp.shape)}")
    if xp.shape[0] == 0:
        raise ValueError("interp: xp and fp must not be empty")
    ext_left, left = _side_value(left, "interp", "left")
    ext_right, right = _side_value(right, "interp", "right")
    if period is not None:
        period = scalar_arg(period, "interp", "period")
    x, xp = promote_inexact("interp", x, xp)
    fp = to_float(fp)
    if period is not None:
        from .math import absolute, remainder
        per = absolute(period if is_array(period) else views.full((), period, xp.dtype))
        x, xp = remainder(x, per), remainder(xp, per)
        order = _argsort_small(xp)
        xp, fp = take(xp, order), take(fp, order)
        n = xp.shape[0]
        xp = concatenate([subtract(slice_axis(xp, n - 1, n, 0), per), xp,
                          add(slice_axis(xp, 0, 1, 0), per)])
        fp = concatenate([slice_axis(fp, n - 1, n, 0), fp, slice_axis(fp, 0, 1, 0)])
    n = xp.shape[0]
    i = clip(_count_before(xp, x, "right"), 1, max(n - 1, 1))
    im1 = subtract(i, 1)
    if n == 1:
        i = im1
    xp_i, xp_im1 = take(xp, i, mode="clip"), take(xp, im1, mode="clip")
    fp_i, fp_im1 = take(fp, i, mode="clip"), take(fp, im1, mode="clip")
    df = subtract(fp_i, fp_im1)
    dx = subtract(xp_i, xp_im1)
    delta = subtract(x, xp_im1)
    eps = float(np.spacing(dtypes.finfo(np.dtype(xp.dtype)).eps))
    dx0 = ew.le(ew.abs_(dx), views.full_like(dx, eps))
    f = where(dx0, fp_im1, add(fp_im1, multiply(divide(delta, where(dx0, 1, dx)), df)))
    if not ext_left:
        f = _outside(f, x, index_axis(xp, 0, 0), less,
                     index_axis(fp, 0, 0) if left is None else left, period)
    if not ext_right:
        f = _outside(f, x, index_axis(xp, n - 1, 0), greater,
                     index_axis(fp, n - 1, 0) if right is None else right, period)
    return f


def _outside(f, x, edge, beyond, value, period):
    if period is not None:
        return f
    return where(beyond(x, edge), value, f)


def _argsort_small(a):
    """A stable argsort of a 1-d array by comparisons (O(n ** 2)): the rank of a[i] is the
    count of elements before it; position k takes the i of rank k."""
    n = a.shape[0]
    A = views.broadcast_in_dim(a, (n, n), (1,))       # A[i, j] = a[j]
    Ai = views.broadcast_in_dim(a, (n, n), (0,))      # Ai[i, j] = a[i]
    j = views.broadcast_in_dim(_iota(n), (n, n), (1,))
    i = views.broadcast_in_dim(_iota(n), (n, n), (0,))
    before = ew.or_(ew.lt(A, Ai), ew.and_(ew.eq(A, Ai), ew.lt(j, i)))
    rank = _sum(ew.convert_element_type(before, dtypes.int32), 1, dtype=dtypes.int32)  # (n,)
    hit = ew.eq(views.broadcast_in_dim(rank, (n, n), (1,)), i)            # [k, i]
    return _sum(where(hit, j, 0), 1, dtype=dtypes.int32)


def _iota(n):
    from ..primitives.structural import iota
    return iota(dtypes.int32, n)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """For each element, whether it equals some element of test_elements (the negation
    with invert=True); bool, of element's shape. NaN is in nothing.

    Comparison based: O(element.size * test_elements.size) work and memory. `method` and
    `assume_unique` are accepted for JAX's signature; the result does not depend on them.

    >>> jnp.isin(jnp.asarray([1, 2, 3]), jnp.asarray([3, 1]))   # [True, False, True]
    """
    return _in(element, test_elements, assume_unique, invert, method, "isin")


def in1d(ar1, ar2, assume_unique=False, invert=False, *, method="auto"):
    """isin of the flattened ar1 (1-d result), NumPy's older name.

    >>> jnp.in1d(jnp.asarray([[1, 2], [3, 4]]), jnp.asarray([4, 1]))   # [T, F, F, T]
    """
    r = _in(ar1, ar2, assume_unique, invert, method, "in1d")
    return views.reshape(r, (r.size,))


def _in(e, t, assume_unique, invert, method, where):
    e = asarray_arg(e, where) if type(e) not in (bool, int, float) else e
    t = asarray_arg(t, where) if type(t) not in (bool, int, float) else t
    invert = bool_arg(invert, where, "invert")
    bool_arg(assume_unique, where, "assume_unique")
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"{where}: method must be 'auto', 'compare_all', 'binary_search' or "
                         f"'sort', got {method!r}")
    e, t = promote(where, e, t)
    shape = tuple(e.shape)
    if e.size == 0 or t.size == 0:
        return views.full(shape, invert, dtypes.bool_)
    e1, t1 = views.reshape(e, (e.size,)), views.reshape(t, (t.size,))
    pair = (e.size, t.size)
    E = views.broadcast_in_dim(e1, pair, (0,))
    T = views.broadcast_in_dim(t1, pair, (1,))
    r = _all(ew.ne(E, T), -1) if invert else _any(ew.eq(E, T), -1)
    return views.reshape(r, shape)


# ---- counting ----------------------------------------------------------------------------------

def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts of each value of the non-negative ints x (weights summed instead, when given):
    out[i] = sum(weights[x == i]). The length is `length` when given (larger values are
    dropped), else max(minlength, x.max() + 1), which reads x: under jit or vmap `length`
    must be given, as in JAX. As in JAX, negative values count in bin 0.

    >>> jnp.bincount(jnp.asarray([0, 1, 1, 3]))                # [1, 2, 0, 1]
    >>> netcl.jit(lambda x: jnp.bincount(x, length=5))(x)      # [1, 2, 0, 1, 0]
    """
    x = asarray_arg(x, "bincount")
    if x.dtype.kind not in "iub":
        raise TypeError(f"bincount: x must be an integer array, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-d, got shape {tuple(x.shape)}")
    minlength = int_arg(minlength, "bincount", "minlength", 0)
    if length is not None:
        length = int_arg(length, "bincount", "length", 0)
    if weights is not None:
        weights = asarray_arg(weights, "bincount")
        if tuple(weights.shape) != tuple(x.shape):
            raise ValueError(f"bincount: weights of shape {tuple(weights.shape)} must have x's "
                             f"shape {tuple(x.shape)}")
    if length is None:
        try:
            h = np.asarray(x)
        except ConcretizationError as e:
            raise TypeError("bincount: the output length depends on the values of x, which a "
                            "traced array (under jit or vmap) does not have; pass a static "
                            "length=") from e
        length = max(minlength, int(max(0, h.max())) + 1 if h.size else 0)
    if x.dtype == dtypes.bool_:
        x = ew.convert_element_type(x, dtypes.int32)
    if weights is None:     # counts: the default int, as JAX's
        weights = views.full(tuple(x.shape), 1, dtypes.default_int_dtype())
    out = views.full((length,), 0, weights.dtype)
    if length == 0 or x.shape[0] == 0:
        return out
    return out.at[maximum(x, 0)].add(weights)


def _inexact_dtype(a):
    return dtypes.inexact_dtype(a.dtype, a.weak_type)


def _range_arg(rng, dtype, fname):
    """histogram's range: two scalars (a tuple or a (2,) array), as 0-d arrays of dtype."""
    if is_array(rng) or isinstance(rng, np.ndarray):
        r = asarray_arg(rng, fname)
        if tuple(r.shape) != (2,):
            raise ValueError(f"{fname}: range must be two scalars (lo, hi), got an array of "
                             f"shape {tuple(r.shape)}")
        lo, hi = index_axis(r, 0, 0), index_axis(r, 1, 0)
    elif isinstance(rng, (tuple, list)) and len(rng) == 2:
        lo, hi = (scalar_arg(v, fname, "range") for v in rng)
    else:
        raise ValueError(f"{fname}: range must be None or two scalars (lo, hi), got {rng!r}")
    for v in (lo, hi):
        if not is_array(v) and not np.isfinite(v):
            raise ValueError(f"{fname}: range must be finite, got {rng!r}")
    out = []
    for v in (lo, hi):
        if not is_array(v):
            v = views.full((), v, dtype)
        elif v.dtype != dtype:
            v = ew.convert_element_type(v, dtype)
        out.append(v)
    return out


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 (numpy's name)
    """The edges of histogram's bins: `bins` + 1 evenly spaced values over `range` (default
    [a.min(), a.max()], widened by 0.5 each way when empty), or `bins` itself when it is a
    1-d array (cast to a's float dtype). `weights` is not used.

    >>> jnp.histogram_bin_edges(jnp.asarray([0.0, 1.0, 4.0]), bins=4)   # [0, 1, 2, 3, 4]
    """
    return _bin_edges(a, bins, range, "histogram_bin_edges")[0]


def _bin_edges(a, bins, rng, fname):
    """(edges, a as an array); every argument is checked before the first kernel."""
    if isinstance(bins, str):
        raise NotImplementedError(f"{fname}: string values of bins ({bins!r}) are not "
                                  "supported; give a number of bins or the edges")
    a = asarray_arg(a, fname)
    dtype = _inexact_dtype(a)
    if is_array(bins) or isinstance(bins, np.ndarray):
        b = asarray_arg(bins, fname)
        if b.ndim == 1:
            if b.shape[0] == 0:
                raise ValueError(f"{fname}: bins must have at least one edge")
            return (b if b.dtype == dtype else ew.convert_element_type(b, dtype)), a
        if b.ndim != 0:
            raise ValueError(f"{fname}: bins must be an int or a 1-d array of edges, got an "
                             f"array of shape {tuple(b.shape)}")
    if isinstance(bins, (list, tuple)):
        raise TypeError(f"{fname}: bins must be an int or an array of edges, got a "
                        f"{type(bins).__name__}; convert it with netcl.numpy.asarray first")
    nb = int_arg(bins, fname, "bins", 1)
    if rng is None:
        if a.size == 0:
            raise ValueError(f"{fname}: an empty array needs an explicit range (its min and "
                             "max are undefined)")
        lo, hi = _min(a), _max(a)
        if lo.dtype != dtype:
            lo, hi = (ew.convert_element_type(v, dtype) for v in (lo, hi))
    else:
        lo, hi = _range_arg(rng, dtype, fname)
    same = equal(hi, lo)
    lo, hi = where(same, subtract(lo, 0.5), lo), where(same, add(hi, 0.5), hi)
    # linspace as NumPy's (and netcl's): lo + k * (hi - lo) / nb, and exactly hi at the end
    step = divide(subtract(hi, lo), nb)
    inner = add(lo, multiply(_iota_float(nb, dtype), step))
    return concatenate([inner, views.reshape(hi, (1,))]), a


def _iota_float(nb, dtype):
    from ..primitives.structural import iota
    return iota(dtype, nb)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A histogram of the values of a: (counts, edges). `bins` is a number of equal bins over
    `range` (default [a.min(), a.max()]) or a 1-d array of edges; every bin is half-open
    [lo, hi) except the last, which includes its right edge; values outside (and NaN) are
    not counted. `weights` (a's shape) are summed instead of counting; density=True divides
    by the bin widths and the total, so that the histogram integrates to 1. Counts are
    floats, as in JAX.

    Bins are found with searchsorted (comparison based: O(a.size * len(edges))).

    >>> jnp.histogram(jnp.asarray([1.0, 2.0, 2.0, 4.0]), bins=3)
    ([1., 2., 1.], [1., 2., 3., 4.])
    """
    density = False if density is None else bool_arg(density, "histogram", "density")
    a0 = asarray_arg(a, "histogram")
    if weights is not None:
        weights = asarray_arg(weights, "histogram")
        if tuple(weights.shape) != tuple(a0.shape):
            raise ValueError(f"histogram: weights of shape {tuple(weights.shape)} must have "
                             f"a's shape {tuple(a0.shape)}")
    edges, a = _bin_edges(a0, bins, range, "histogram")
    if weights is None:
        (a,) = promote_inexact("histogram", a)
        weights = views.full_like(a, 1)
    else:
        a, weights = promote_inexact("histogram", a, weights)
    a = views.reshape(a, (a.size,))
    weights = views.reshape(weights, (weights.size,))
    if edges.dtype != a.dtype:
        edges = ew.convert_element_type(edges, a.dtype)
    m = edges.shape[0]
    idx = _count_before(edges, a, "right")
    idx = where(ew.eq(a, views.broadcast_to_rank(index_axis(edges, m - 1, 0), a.shape)),
                m - 1, idx)
    counts = views.full((m,), 0, weights.dtype)
    if a.shape[0]:
        counts = counts.at[idx].add(weights)
    counts = slice_axis(counts, 1, m, 0)
    if density:
        counts = divide(divide(counts, diff(edges)), _sum(counts))
    return counts, edges

