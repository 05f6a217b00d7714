"""Reductions of netcl.numpy: sum, mean, var, std, max, min, prod, argmax, argmin, all, any,
cumsum, cumprod, count_nonzero, average, ptp and the NaN-ignoring variants.

JAX's dtype rules: the sum or product of bools and ints is the default int or wider (int64
and uint64 for int32 and uint32 with x64; cumulative ones keep the ints' dtype), the
mean / var / std / average of 32-bit integers is float32 (of 64-bit ones float64), 16- and
8-bit float statistics are computed in float32 and returned in the input's dtype. `axis` is
None (all axes), an int or a tuple; `keepdims`, `where` and `initial` follow NumPy.

>>> import netcl.numpy as jnp
>>> x = jnp.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> jnp.sum(x, axis=0)            # [4., 6.]
>>> jnp.var(x, ddof=1)            # 1.6666666
"""
import math as _math

import numpy as np

from ..core import dtypes
from ..core.shapes import normalize_axes, normalize_axis
from ..core.shapes import prod as _size
from ..primitives import elementwise as ew
from ..primitives import reductions as red
from ..primitives import views
from ._util import asarray_arg, promote_broadcast

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "argmax",
           "argmin", "all", "any", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
           "count_nonzero", "average", "ptp", "nansum", "nanprod", "nanmax", "nanmin",
           "nanmean", "nanargmax", "nanargmin"]

_sum, _max, _min, _all, _any = sum, max, min, all, any  # Python's, before the names are reused


# ---- argument handling ---------------------------------------------------------------------

def _axes(a, axis, where):
    """None, an int or a sequence of ints -> sorted tuple of distinct non-negative axes."""
    if axis is not None and not isinstance(axis, (int, tuple, list)) and \
            not hasattr(axis, "__index__"):
        raise TypeError(f"{where}: axis must be None, an int or a tuple of ints, "
                        f"got {type(axis).__name__}")
    return normalize_axes(axis if isinstance(axis, (tuple, list)) or axis is None
                          else int(axis), a.ndim, where)


def _no_out(out, where):
    if out is not None:
        raise ValueError(f"{where}: the out argument is not supported (netcl arrays are "
                         "immutable); use the returned array")


def _dtype_arg(dtype, where):
    return None if dtype is None else dtypes.canonicalize(dtype, where=where)


def _mean_dtype(dtype, where):
    """A mean's dtype argument: a number type (a mean of bools is not a bool)."""
    dt = _dtype_arg(dtype, where)
    if dt == dtypes.bool_:
        raise TypeError(f"{where}: dtype=bool is not supported for a mean")
    return dt


def _keep(r, a_shape, axes, keepdims):
    """Reinsert the reduced axes as size-1 dimensions when keepdims."""
    if not keepdims:
        return r
    shape = tuple(1 if i in axes else s for i, s in enumerate(a_shape))
    return views.reshape(r, shape)


def _cast(x, dtype):
    return x if x.dtype == dtype else ew.convert_element_type(x, dtype, False)


def _where_mask(where_, a, fname):
    """`where` broadcast to a's shape, as bool."""
    w = asarray_arg(where_, fname)
    if w.dtype != dtypes.bool_:
        w = ew.ne(w, views.full_like(w, 0))
    from ..core.shapes import broadcast_shapes
    shape = broadcast_shapes(w.shape, a.shape, where=fname)
    if shape != tuple(a.shape):
        raise ValueError(f"{fname}: where of shape {tuple(w.shape)} does not broadcast to the "
                         f"array's shape {tuple(a.shape)}")
    return views.broadcast_to_rank(w, shape)


def _fill_where(a, where_, value, fname):
    if where_ is None:
        return a
    return ew.select(_where_mask(where_, a, fname), a, views.full_like(a, value))


def _count(a, axes, where_, fname, dtype):
    """Number of elements reduced into each result (as `dtype`), honouring `where`."""
    if where_ is None:
        n = _size(a.shape[i] for i in axes)
        shape = tuple(s for i, s in enumerate(a.shape) if i not in axes)
        return views.full(shape, n, dtype)
    m = _cast(_where_mask(where_, a, fname), dtypes.int32)
    return _cast(red.reduce_sum(m, axes), dtype)


def _float_work(a):
    """(dtype the statistic is computed in, dtype of the result) for mean/var/std/average."""
    if dtypes.kind(a.dtype) != "f":     # (float32 for int32 arrays, as in JAX)
        d = dtypes.inexact_dtype(a.dtype, a.weak_type)
        return d, d
    if a.dtype in dtypes.STORAGE_FLOATS:
        return dtypes.float32, a.dtype
    return a.dtype, a.dtype


def _sum_dtype(a, dtype, promote_integers=True):
    """JAX's accumulation dtype: bools and narrower ints give the default int (its unsigned
    counterpart for unsigned ints), unless `promote_integers` is off."""
    if dtype is not None:
        return dtype
    promote = promote_integers or a.dtype == dtypes.bool_
    return dtypes.sum_dtype(a.dtype) if promote else a.dtype


# ---- sum / prod / max / min ------------------------------------------------------------------

def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):  # noqa: A001 (numpy's name)
    """Sum of array elements over the given axes (ints wrap on overflow, as in JAX; int32
    sums are int64 with x64, as JAX's `promote_integers`).

    >>> netcl.numpy.sum(netcl.numpy.asarray([[1, 2], [3, 4]]), axis=1)   # [3, 7]
    """
    a = asarray_arg(a, "sum")
    _no_out(out, "sum")
    axes = _axes(a, axis, "sum")
    dt = _sum_dtype(a, _dtype_arg(dtype, "sum"), promote_integers)
    if dt == dtypes.bool_:  # numpy: a sum in bool is a logical or
        return any(a, axis=axis, keepdims=keepdims, where=where)
    x = _fill_where(_cast(a, dt), where, 0, "sum")
    r = red.reduce_sum(x, axes)
    if initial is not None:
        r = ew.add(r, views.full_like(r, initial))
    return _keep(r, a.shape, axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product of array elements over the given axes (ints wrap on overflow; int32
    products are int64 with x64, as in JAX).

    >>> netcl.numpy.prod(netcl.numpy.asarray([[1, 2], [3, 4]]), axis=1)   # [2, 12]
    """
    a = asarray_arg(a, "prod")
    _no_out(out, "prod")
    axes = _axes(a, axis, "prod")
    dt = _sum_dtype(a, _dtype_arg(dtype, "prod"), promote_integers)
    if dt == dtypes.bool_:
        return all(a, axis=axis, keepdims=keepdims, where=where)
    x = _fill_where(_cast(a, dt), where, 1, "prod")
    r = red.reduce_prod(x, axes)
    if initial is not None:
        r = ew.mul(r, views.full_like(r, initial))
    return _keep(r, a.shape, axes, keepdims)


def _extreme(name, reduce, combine, identity_sign):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = asarray_arg(a, name)
        _no_out(out, name)
        axes = _axes(a, axis, name)
        if initial is None:
            if where is not None:
                raise ValueError(f"{name}: reduction with where= needs an initial value "
                                 "(the maximum/minimum has no identity)")
            empty = [i for i in axes if a.shape[i] == 0]
            if empty:  # as NumPy and JAX: even when the result would be empty
                raise ValueError(f"{name}: zero-size reduction along axis {empty[0]} of an "
                                 f"array of shape {tuple(a.shape)} has no identity; pass "
                                 "initial=")
            x = a
        elif dtypes.is_complex(a.dtype):
            # JAX's steps, which matter here (the complex fold is not associative, and
            # lax.max keeps its second operand unless the first compares greater): masked
            # elements become the identity, and the result is max(initial, fold)
            x = _fill_where(a, where, complex(identity_sign * _math.inf, 0), name)
            r = reduce(x, axes)
            return _keep(combine(views.full_like(r, initial), r), a.shape, axes, keepdims)
        else:
            x = _fill_where(a, where, initial, name)
        r = reduce(x, axes)
        if initial is not None:
            r = combine(r, views.full_like(r, initial))
        return _keep(r, a.shape, axes, keepdims)
    f.__name__ = name
    f.__doc__ = (f"The {'largest' if identity_sign < 0 else 'smallest'} element over the given "
                 "axes (NaN propagates). A zero-size reduction needs `initial`. Complex "
                 "numbers in JAX's lexicographic order (real part, then imaginary part), "
                 f"folded with lax.{name} in order (see lax.reduce_{name}).\n\n"
                 f">>> jnp.{name}(jnp.asarray([1 + 2j, 3 - 1j, 3 - 2j]))     # "
                 f"{'3-1j' if identity_sign < 0 else '1+2j'}")
    return f


max = _extreme("max", red.reduce_max, ew.max_, -1)  # noqa: A001
min = _extreme("min", red.reduce_min, ew.min_, 1)  # noqa: A001
amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where every element over the given axes is nonzero (True for empty)."""
    a = asarray_arg(a, "all")
    _no_out(out, "all")
    axes = _axes(a, axis, "all")
    x = a if a.dtype == dtypes.bool_ else ew.ne(a, views.full_like(a, 0))
    x = _fill_where(x, where, True, "all")
    return _keep(red.reduce_min(x, axes), a.shape, axes, keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where some element over the given axes is nonzero (False for empty)."""
    a = asarray_arg(a, "any")
    _no_out(out, "any")
    axes = _axes(a, axis, "any")
    x = a if a.dtype == dtypes.bool_ else ew.ne(a, views.full_like(a, 0))
    x = _fill_where(x, where, False, "any")
    return _keep(red.reduce_max(x, axes), a.shape, axes, keepdims)


def count_nonzero(a, axis=None, keepdims=False):
    """Number of nonzero elements over the given axes, as the default int (int64 with x64).

    >>> netcl.numpy.count_nonzero(netcl.numpy.asarray([0, 3, 0, 1]))   # 2
    """
    a = asarray_arg(a, "count_nonzero")
    axes = _axes(a, axis, "count_nonzero")
    nz = a if a.dtype == dtypes.bool_ else ew.ne(a, views.full_like(a, 0))
    return _keep(red.reduce_sum(_cast(nz, dtypes.default_int_dtype()), axes), a.shape, axes,
                 keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (maximum - minimum) over the given axes."""
    a = asarray_arg(a, "ptp")
    _no_out(out, "ptp")
    if a.dtype == dtypes.bool_:
        raise TypeError("ptp: bool arrays are not supported (the difference of bools is "
                        "undefined); convert to int first")
    return ew.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


# ---- statistics ------------------------------------------------------------------------------

def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over the given axes; integers give float32 (as in JAX).

    >>> netcl.numpy.mean(netcl.numpy.asarray([1, 2, 3, 4]))   # 2.5
    """
    a = asarray_arg(a, "mean")
    _no_out(out, "mean")
    axes = _axes(a, axis, "mean")
    work, res = _float_work(a)
    dt = _mean_dtype(dtype, "mean")
    if dt is not None:
        work = dtypes.compute_dtype(dt)
        res = dt
    x = _fill_where(_cast(a, work), where, 0, "mean")
    r = ew.div(red.reduce_sum(x, axes), _count(a, axes, where, "mean", work))
    return _keep(_cast(r, res), a.shape, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Variance over the given axes: mean of squared deviations, divided by N - ddof.
    `mean`, when given, is the precomputed mean (broadcastable as with keepdims=True), as
    JAX's (saves the first pass).

    >>> m = jnp.mean(x, axis=0, keepdims=True); jnp.var(x, axis=0, mean=m)
    """
    a = asarray_arg(a, "var")
    _no_out(out, "var")
    if correction is not None:
        if ddof != 0:
            raise ValueError("var: pass ddof or correction, not both")
        ddof = correction
    if not isinstance(ddof, (bool, int, float, np.number)):
        raise TypeError(f"var: ddof must be a number, got {type(ddof).__name__} {ddof!r}")
    axes = _axes(a, axis, "var")
    work, res = _float_work(a)
    dt = _mean_dtype(dtype, "var")
    if dt is not None:
        work = dtypes.compute_dtype(dt)
        res = dt
    x = _cast(a, work)
    n = _count(a, axes, where, "var", work)
    xm = _fill_where(x, where, 0, "var")
    if mean is None:
        mu = ew.div(red.reduce_sum(xm, axes), n)
        kept = tuple(i for i in range(a.ndim) if i not in axes)
        mu = views.broadcast_in_dim(mu, tuple(a.shape), kept)
    else:
        mu = _given_mean(mean, a, work, "var")
    d = ew.sub(x, mu)
    d = _fill_where(d, where, 0, "var")
    if dtypes.is_complex(d.dtype):    # |d|^2, real (as NumPy's and JAX's var)
        from ..primitives.complex_ops import conj, real
        d2, n = real(ew.mul(d, conj(d))), real(n)
        res = dtypes.COMPLEX_PART[res] if dtypes.is_complex(res) else res
    else:
        d2 = ew.mul(d, d)
    ss = red.reduce_sum(d2, axes)
    r = ew.div(ss, ew.sub(n, views.full_like(n, ddof)))
    return _keep(_cast(r, res), a.shape, axes, keepdims)


def _given_mean(mean, a, work, where):
    """A precomputed mean broadcast to a's shape in the work dtype (ValueError naming
    `where` when it does not broadcast)."""
    from ..core.shapes import broadcast_shapes
    m = asarray_arg(mean, where)
    if broadcast_shapes(tuple(m.shape), tuple(a.shape), where=where) != tuple(a.shape):
        raise ValueError(f"{where}: mean of shape {tuple(m.shape)} does not broadcast to the "
                         f"array's shape {tuple(a.shape)}")
    m = _cast(m, work)
    return views.broadcast_to_rank(m, tuple(a.shape))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Standard deviation over the given axes (the square root of `var`; `mean`: a
    precomputed mean, as var's).

    >>> jnp.std(jnp.asarray([1.0, 3.0]), mean=2.0)      # 1.0
    """
    dt = _dtype_arg(dtype, "std")
    if dt is not None and dtypes.kind(dt) != "f":  # before var's kernels: sqrt needs floats
        raise TypeError(f"std: dtype must be a floating dtype, got {dt}")
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
            correction=correction)
    if v.dtype in dtypes.STORAGE_FLOATS:
        return _cast(ew.sqrt(_cast(v, dtypes.float32)), v.dtype)
    return ew.sqrt(v)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean over the given axes; 1-d weights along a single axis are allowed.

    >>> netcl.numpy.average(x, axis=0, weights=netcl.numpy.asarray([1.0, 3.0]))
    """
    a = asarray_arg(a, "average")
    if weights is None:
        r = mean(a, axis, keepdims=keepdims)
        if returned:
            axes = _axes(a, axis, "average")
            n = views.full(r.shape, _size(a.shape[i] for i in axes), r.dtype)
            return r, n
        return r
    w = asarray_arg(weights, "average")
    axes = _axes(a, axis, "average")
    if tuple(w.shape) != tuple(a.shape):
        if axis is None or len(axes) != 1:
            raise ValueError(f"average: weights of shape {tuple(w.shape)} differ from the "
                             f"array's shape {tuple(a.shape)}; give a single axis for 1-d "
                             "weights")
        if w.ndim != 1 or w.shape[0] != a.shape[axes[0]]:
            raise ValueError(f"average: 1-d weights must have length a.shape[axis] = "
                             f"{a.shape[axes[0]]}, got shape {tuple(w.shape)}")
        w = views.broadcast_in_dim(w, tuple(a.shape), (axes[0],))
    a, w = promote_broadcast("average", a, w)
    work, res = _float_work(a)
    a, w = _cast(a, work), _cast(w, work)
    wsum = red.reduce_sum(w, axes)
    r = ew.div(red.reduce_sum(ew.mul(a, w), axes), wsum)
    r = _keep(_cast(r, res), a.shape, axes, keepdims)
    if returned:
        return r, _keep(_cast(wsum, res), a.shape, axes, keepdims)
    return r


# ---- argmax / argmin --------------------------------------------------------------------------

def _arg(name, prim_fn):
    def f(a, axis=None, out=None, keepdims=False):
        a = asarray_arg(a, name)
        _no_out(out, name)
        red.no_complex_order(a, name, "a")
        if axis is None:
            x = views.reshape(a, (a.size,))
            r = prim_fn(x, 0, dtypes.default_int_dtype())
            return views.reshape(r, (1,) * a.ndim) if keepdims else r
        ax = normalize_axis(axis, a.ndim, name)
        r = prim_fn(a, ax, dtypes.default_int_dtype())
        return _keep(r, a.shape, (ax,), keepdims)
    f.__name__ = name
    f.__doc__ = (f"Index of the {'maximum' if name.endswith('max') else 'minimum'} along `axis` "
                 "(of the flattened array when axis is None); the first NaN wins, then the "
                 "first occurrence, as the default int (int64 with x64). An empty axis raises "
                 "ValueError; complex numbers TypeError, as in JAX.")
    return f


argmax = _arg("argmax", red.argmax)
argmin = _arg("argmin", red.argmin)


# ---- cumulative ---------------------------------------------------------------------------------

def _cumulative(name, prim_fn):
    def f(a, axis=None, dtype=None, out=None):
        a = asarray_arg(a, name)
        _no_out(out, name)
        dt = _dtype_arg(dtype, name) or a.dtype     # (ints keep theirs, as in JAX)
        if dt == dtypes.bool_:
            dt = dtypes.default_int_dtype()
        ax = 0 if axis is None else normalize_axis(axis, a.ndim, name)  # before the cast
        x = _cast(a, dt)
        if axis is None:
            x = views.reshape(x, (x.size,))
        return prim_fn(x, ax)
    f.__name__ = name
    f.__doc__ = (f"Running {'sum' if 'sum' in name else 'product'} along `axis` (of the "
                 "flattened array when axis is None); bools accumulate in the default int, ints "
                 "in their own dtype.")
    return f


cumsum = _cumulative("cumsum", red.cumsum)
cumprod = _cumulative("cumprod", red.cumprod)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array-API form of cumsum (axis required above 1-d; include_initial prepends 0)."""
    return _cumulative_api("cumulative_sum", cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array-API form of cumprod (include_initial prepends 1)."""
    return _cumulative_api("cumulative_prod", cumprod, x, axis, dtype, include_initial, 1)


def _cumulative_api(name, fn, x, axis, dtype, include_initial, init):
    x = asarray_arg(x, name)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for arrays of rank {x.ndim} > 1")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{name}: needs an array of rank >= 1, got a scalar")
    r = fn(x, axis, dtype)
    if not include_initial:
        return r
    from ..primitives.structural import concatenate
    ax = normalize_axis(axis, x.ndim, name)
    shape = tuple(1 if i == ax else s for i, s in enumerate(r.shape))
    return concatenate([views.full(shape, init, r.dtype), r], ax)


# ---- NaN-ignoring variants ----------------------------------------------------------------------

def _isnan(a):
    return ew.ne(a, a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero."""
    a = asarray_arg(a, "nansum")
    _axes(a, axis, "nansum"), _dtype_arg(dtype, "nansum"), _no_out(out, "nansum")  # first
    if dtypes.kind(a.dtype) == "f":
        a = ew.select(_isnan(a), views.full_like(a, 0), a)
    return sum(a, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaNs as one."""
    a = asarray_arg(a, "nanprod")
    _axes(a, axis, "nanprod"), _dtype_arg(dtype, "nanprod"), _no_out(out, "nanprod")  # first
    if dtypes.kind(a.dtype) == "f":
        a = ew.select(_isnan(a), views.full_like(a, 1), a)
    return prod(a, axis, dtype, out, keepdims, initial, where)


def _nan_extreme(name, fn, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = asarray_arg(a, name)
        _axes(a, axis, name), _no_out(out, name)  # before the NaN mask's kernels
        if not dtypes.is_inexact(a.dtype):
            return fn(a, axis, out, keepdims, initial, where)
        # (a complex number is NaN where either part is; it becomes -inf+0j / inf+0j)
        nan = _isnan(a)
        r = fn(ew.select(nan, views.full_like(a, fill), a), axis, out, keepdims, initial, where)
        if initial is not None:     # (as JAX and NumPy: then an all-NaN slice gives `initial`)
            return r
        # an all-NaN slice gives NaN (NumPy also warns)
        all_nan = all(nan, axis, keepdims=keepdims)
        return ew.select(all_nan, views.full_like(r, float("nan")), r)
    f.__name__ = name
    f.__doc__ = (f"{name[3:]} ignoring NaNs; an all-NaN slice gives NaN (`initial` where "
                 "given). Complex numbers: see max.\n\n"
                 f">>> jnp.{name}(jnp.asarray([1.0, jnp.nan, 2.0]))     # "
                 f"{'2.' if name == 'nanmax' else '1.'}")
    return f


nanmax = _nan_extreme("nanmax", max, -_math.inf)
nanmin = _nan_extreme("nanmin", min, _math.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Mean of the non-NaN elements (NaN where there are none)."""
    a = asarray_arg(a, "nanmean")
    _axes(a, axis, "nanmean"), _mean_dtype(dtype, "nanmean"), _no_out(out, "nanmean")  # first
    if dtypes.kind(a.dtype) != "f":
        return mean(a, axis, dtype, out, keepdims, where=where)
    _no_out(out, "nanmean")
    keep = ew.not_(_isnan(a))
    if where is not None:
        keep = ew.and_(keep, _where_mask(where, a, "nanmean"))
    return mean(a, axis, dtype, None, keepdims, where=keep)


def _nan_arg(name, fn, fill):
    def f(a, axis=None, out=None, keepdims=False):
        a = asarray_arg(a, name)
        if axis is not None:  # checked before the NaN mask's kernels
            normalize_axis(axis, a.ndim, name)
        _no_out(out, name)
        red.no_complex_order(a, name, "a")
        if dtypes.kind(a.dtype) != "f":
            return fn(a, axis, out, keepdims)
        nan = _isnan(a)
        r = fn(ew.select(nan, views.full_like(a, fill), a), axis, out, keepdims)
        all_nan = all(nan, axis, keepdims=keepdims)
        return ew.select(all_nan, views.full_like(r, -1), r)
    f.__name__ = name
    f.__doc__ = f"{name[3:]} ignoring NaNs; an all-NaN slice gives -1 (as in JAX)."
    return f


nanargmax = _nan_arg("nanargmax", argmax, -_math.inf)
nanargmin = _nan_arg("nanargmin", argmin, _math.inf)
