"""Sorting and what builds on it, as jax.numpy's: sort, argsort, median, quantile,
percentile (and their nan- forms), unique; lax.top_k. All rest on one primitive, argsort
(primitives/sorting.py): values are `take_along_axis` of the order, so gradients flow
through the gather.

>>> jnp.sort(jnp.array([3.0, 1.0, 2.0]))          # [1., 2., 3.]
>>> jnp.median(jnp.arange(5.0))                    # 2.
"""
import numpy as np

from ..core import dtypes
from ..core.shapes import normalize_axes, normalize_axis
from ..primitives.sorting import argsort_p
from ._util import asarray_arg

__all__ = ["sort", "argsort", "median", "quantile", "percentile", "nanmedian", "nanquantile",
           "nanpercentile", "unique"]


def _along_last(a, axis, where):
    """(a with `axis` moved last (flattened for None), the axis to move it back to)."""
    from .manipulation import moveaxis, ravel
    a = asarray_arg(a, where)
    if axis is None:
        return ravel(a), None
    axis = normalize_axis(axis, a.ndim, where, "axis")
    return (a if axis == a.ndim - 1 else moveaxis(a, axis, -1)), axis


def _back(x, axis):
    from .manipulation import moveaxis
    return x if axis is None or axis == x.ndim - 1 else moveaxis(x, -1, axis)


def _ascending(x):
    """Stable ascending order along the last axis; complex numbers by real part, then
    imaginary part (as NumPy and JAX)."""
    if dtypes.is_complex(x.dtype):
        from .aliases import imag, real
        from .extra_numeric import lexsort
        return lexsort((imag(x), real(x)), axis=-1)
    return argsort_p.bind(x)


def _order(x, descending):
    """Stable order along the last axis (descending: equal keys still in index order)."""
    if not descending:
        return _ascending(x)
    from .manipulation import flip
    n = x.shape[-1]
    rev = _ascending(flip(x, -1))           # ascending, ties in reversed index order
    return flip(n - 1 - rev, -1)            # reversed: descending, ties in index order


def _check_kind(kind, order, where):
    if order is not None:
        raise TypeError(f"{where}: order is not supported (structured arrays), as in JAX")
    if kind not in (None, "stable", "quicksort", "mergesort", "heapsort"):
        raise ValueError(f"{where}: kind={kind!r} is not a sort kind")


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices that sort `a` along `axis` (stable: equal keys in index order; NaNs last), as
    the default int (int64 with x64, as in JAX).

    >>> jnp.argsort(jnp.array([3.0, 1.0, 2.0]))     # [1, 2, 0]
    """
    _check_kind(kind, order, "argsort")
    x, back = _along_last(a, axis, "argsort")
    if x.ndim == 0:
        from .creation import zeros
        return zeros((), dtypes.default_int_dtype())
    order = _order(x, descending)
    return _back(order.astype(dtypes.default_int_dtype()), back)


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """`a` sorted along `axis` (None: flattened), NaNs last; differentiable. Descending is
    the ascending sort reversed, as JAX's (keys that compare equal, as -0.0 and 0.0, come
    in reversed order; argsort's descending order keeps them in index order).

    >>> jnp.sort(jnp.array([[3, 1], [0, 2]]), axis=0)
    """
    from .manipulation import flip
    from .selection import take_along_axis
    _check_kind(kind, order, "sort")
    x, back = _along_last(a, axis, "sort")
    if x.ndim == 0:
        return x
    s = take_along_axis(x, _ascending(x), axis=-1)
    return _back(flip(s, -1) if descending else s, back)


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    """The q-th quantiles (q in [0, 1], a scalar or an array) of `a` along `axis`, as
    jnp.quantile: NaNs propagate (see nanquantile).

    >>> jnp.quantile(jnp.arange(5.0), 0.25)            # 1.
    """
    return _quantile(a, q, axis, method if interpolation is None else interpolation,
                     keepdims, "quantile", skip_nan=False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    """quantile with q in percent."""
    return _quantile(a, q, axis, method if interpolation is None else interpolation,
                     keepdims, "percentile", skip_nan=False, percent=True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along `axis` (None: of everything); NaNs propagate.

    >>> jnp.median(jnp.array([1.0, 3.0, 2.0, 4.0]))    # 2.5
    """
    return _quantile(a, 0.5, axis, "linear", keepdims, "median", skip_nan=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    """quantile ignoring NaNs (all-NaN slices give NaN)."""
    return _quantile(a, q, axis, method if interpolation is None else interpolation,
                     keepdims, "nanquantile", skip_nan=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    """percentile ignoring NaNs."""
    return _quantile(a, q, axis, method if interpolation is None else interpolation,
                     keepdims, "nanpercentile", skip_nan=True, percent=True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs."""
    return _quantile(a, 0.5, axis, "linear", keepdims, "nanmedian", skip_nan=True)


def _quantile(a, q, axis, method, keepdims, where, skip_nan, percent=False):
    from .creation import asarray
    from .math import add, ceil, clip, floor, isnan, multiply, subtract, where as select
    from .manipulation import expand_dims, reshape
    from .reductions import any as any_, sum as sum_
    from .selection import take_along_axis
    if method not in _METHODS:
        raise ValueError(f"{where}: method={method!r} must be one of {_METHODS}")
    a = asarray_arg(a, where)
    if dtypes.is_complex(a.dtype):      # JAX's ValueError
        raise ValueError(f"{where}: a of shape {tuple(a.shape)} and dtype {a.dtype} is "
                         "complex; quantiles of complex numbers are not supported, as in JAX "
                         "(the operation is poorly defined)")
    if dtypes.kind(a.dtype) not in "fiu":
        raise TypeError(f"{where}: needs a numeric array, got {a.dtype}")
    top = 100.0 if percent else 1.0
    scalar_q = isinstance(q, (int, float)) and not isinstance(q, bool)
    if scalar_q and not 0.0 <= q <= top:
        raise ValueError(f"{where}: q={q} must be in [0, {top:g}]")
    if not scalar_q:
        q = asarray_arg(q, where)
        if dtypes.kind(q.dtype) not in "fiu" or q.ndim > 1:
            raise TypeError(f"{where}: q must be a number or a 1-d numeric array, got "
                            f"{q.dtype}{list(q.shape)}")
    axes = normalize_axes(axis, a.ndim, where)
    if dtypes.kind(a.dtype) != "f":         # (checked first: nothing has run yet)
        a = a.astype(dtypes.inexact_dtype(a.dtype, a.weak_type))
    qa = asarray(q, dtype=a.dtype)
    if percent:
        qa = qa / 100.0
    kept = [d for d in range(a.ndim) if d not in axes]
    from .manipulation import transpose
    x = transpose(a, kept + list(axes))
    x = reshape(x, tuple(a.shape[d] for d in kept) + (-1,))
    n = x.shape[-1]
    s = take_along_axis(x, argsort_p.bind(x), axis=-1)         # NaNs last
    valid = subtract(n, sum_(isnan(x), axis=-1)) if skip_nan else \
        asarray(n, dtype=dtypes.int32)
    pos = multiply(expand_dims(qa, tuple(range(qa.ndim, qa.ndim + s.ndim - 1)))
                   if qa.ndim else qa, subtract(valid, 1).astype(a.dtype))
    lo = clip(floor(pos), 0, max(n - 1, 0)).astype(dtypes.int32)
    hi = clip(ceil(pos), 0, max(n - 1, 0)).astype(dtypes.int32)

    def at(i):
        if qa.ndim:             # q's axes lead: gather each quantile along the last axis
            return _take_quantiles(s, i)
        return take_along_axis(s, expand_dims(i, -1) if i.ndim == s.ndim - 1 else
                               reshape(i, (1,) * (s.ndim - 1) + (1,)), axis=-1)[..., 0]
    lo_v, hi_v = at(lo), at(hi)
    frac = subtract(pos, floor(pos))
    if method == "linear":
        out = add(lo_v, multiply(frac, subtract(hi_v, lo_v)))
    elif method == "lower":
        out = lo_v
    elif method == "higher":
        out = hi_v
    elif method == "midpoint":
        out = multiply(add(lo_v, hi_v), 0.5)
    else:
        from .math import round as round_
        out = select(round_(pos) == floor(pos), lo_v, hi_v)
    nan_rows = any_(isnan(x), axis=-1)
    if skip_nan:
        out = select(valid == 0, np.nan, out)
    else:
        out = select(nan_rows, np.nan, out)
    if keepdims:
        for d in axes:
            out = expand_dims(out, d + (qa.ndim if qa.ndim else 0))
    return out


def _take_quantiles(s, i):
    """s[..., i[k, ...]] for each leading quantile index k."""
    from .manipulation import broadcast_to, expand_dims, moveaxis
    from .selection import take_along_axis
    k = i.shape[0]
    batch = s.shape[:-1]
    idx = broadcast_to(i if i.ndim == 1 + len(batch) else
                       expand_dims(i, tuple(range(1, 1 + len(batch)))), (k,) + batch)
    got = take_along_axis(s, moveaxis(idx, 0, -1), axis=-1)     # (..., k)
    return moveaxis(got, -1, 0)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    """The sorted unique values of `ar` (flattened), as jnp.unique (`sorted`: accepted and
    unused, as in JAX, whose result is sorted either way): under jit give `size`
    (the result has that many entries, padded with `fill_value`, default the first sorted
    value: the smallest, NaNs sorting last); optional first indices, inverse and counts.
    Equal values give their first occurrence. Complex numbers sort lexicographically; one
    with a NaN part is nan+0j, as in JAX.

    >>> jnp.unique(jnp.array([3, 1, 3, 2]))              # [1, 2, 3]
    """
    from ..core.array import Array
    from .creation import asarray, full, zeros
    from .joining import concatenate
    from .manipulation import ravel
    from .math import isnan, not_equal, where
    from .reductions import cumsum
    from .selection import take_along_axis
    if axis is not None:
        raise NotImplementedError("unique: axis= is not supported yet (flattened only)")
    x = ravel(asarray_arg(ar, "unique"))
    n = x.shape[0]
    if dtypes.is_complex(x.dtype):
        x = where(isnan(x), np.nan, x)        # (JAX's: NaN in either part is nan+0j)
    order = _ascending(x).astype(dtypes.int32)      # (lexsort's, for complex, is wider)
    s = take_along_axis(x, order, axis=-1)
    first = concatenate([asarray([True]), not_equal(s[1:], s[:-1])]) if n else \
        zeros((0,), dtypes.bool_)
    if equal_nan and n and dtypes.is_inexact(s.dtype):
        from .math import logical_and, logical_not
        both_nan = logical_and(isnan(s[1:]), isnan(s[:-1]))
        first = concatenate([asarray([True]), logical_and(first[1:], logical_not(both_nan))])
    if size is None:
        if not isinstance(x, Array):
            raise TypeError("unique: under a transform give size= (the number of entries)")
        size = int(np.count_nonzero(np.asarray(first)))    # (eager: the values are here)
    else:
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"unique: size must be an int >= 0, got {size!r}")
    slot = cumsum(first.astype(dtypes.int32)) - 1                # each sorted value's entry
    # (JAX's default fill: the first sorted value, the smallest but for NaNs, sorted last)
    fill = (s[0] if n else 0) if fill_value is None else fill_value
    # each entry from its group's first sorted value (the first in index order, as JAX's:
    # -0.0 and 0.0, or complex numbers with such parts, are equal but differ)
    values = full((size,), fill, x.dtype).at[where(first, slot, size)].set(
        s, mode="drop") if n else full((size,), fill, x.dtype)
    outs = [values]
    if return_index:
        firsts = full((size,), n, dtypes.int32).at[slot].min(order) if n else \
            zeros((size,), dtypes.int32)
        outs.append(firsts.astype(dtypes.default_int_dtype()))
    if return_inverse:
        inv = zeros((n,), dtypes.int32).at[order].set(slot) if n else zeros((0,), dtypes.int32)
        outs.append(inv.reshape(tuple(asarray_arg(ar, "unique").shape)).astype(
            dtypes.default_int_dtype()))
    if return_counts:
        counts = zeros((size,), dtypes.int32).at[slot].add(1, mode="drop") if n else \
            zeros((size,), dtypes.int32)
        outs.append(counts.astype(dtypes.default_int_dtype()))
    return outs[0] if len(outs) == 1 else tuple(outs)
