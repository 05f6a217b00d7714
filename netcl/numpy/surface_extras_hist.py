"""More of jax.numpy's surface, composed from netcl.numpy operations (grad, jit and vmap work
through them where JAX's do): multi-dimensional histograms (histogram2d, histogramdd, built
on histogram's bin edges and comparison search), polynomials from roots and polynomial
division (poly, polydiv), and the set function setxor1d. Arguments are checked before any
kernel runs.

>>> import netcl.numpy as jnp
>>> jnp.poly(jnp.asarray([1.0, 2.0]))                            # [1., -3., 2.]
>>> jnp.setxor1d(jnp.asarray([1, 2, 3]), jnp.asarray([2, 3, 4]))  # [1, 4]
"""
import numpy as np

from ..core import dtypes
from ..core.tracing import ConcretizationError
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from .. import numpy as jnp
from ._composite_util import (bool_arg, index_axis, int_arg, is_array, promote_inexact,
                              scalar_arg, slice_axis)
from ._util import asarray_arg, promote
from .extra_numeric import _arr, _size_args
from .extra_ops import _traced
from .searching import _bin_edges, _count_before

__all__ = ["histogram2d", "histogramdd", "poly", "polydiv", "setxor1d"]


# ---- histograms --------------------------------------------------------------------------------

def _check_bins(b, where):
    """One dimension's bins: an int >= 1 or a 1-d array of edges (checked, not computed)."""
    if isinstance(b, str):
        raise NotImplementedError(f"{where}: string values of bins ({b!r}) are not supported; "
                                  "give a number of bins or the edges")
    if is_array(b) or isinstance(b, np.ndarray):
        a = asarray_arg(b, where)
        if a.ndim == 1 and a.shape[0] == 0:
            raise ValueError(f"{where}: bins must have at least one edge")
        if a.ndim > 1:
            raise ValueError(f"{where}: bins must be an int or a 1-d array of edges, got an "
                             f"array of shape {tuple(a.shape)}")
        if a.ndim == 1:
            return
    elif isinstance(b, (list, tuple)):
        raise TypeError(f"{where}: bins of a dimension must be an int or an array of edges, "
                        f"got a {type(b).__name__}; convert it with netcl.numpy.asarray first")
    int_arg(b, where, "bins", 1)


def _bins_per_dim(bins, d, where):
    if isinstance(bins, (list, tuple)):
        if len(bins) != d:
            raise ValueError(f"{where}: bins must be an int, or one entry per dimension "
                             f"({d}), got {len(bins)} entries")
        per = list(bins)
    elif is_array(bins) and bins.ndim == 1:   # (as JAX: one entry per dimension)
        if bins.shape[0] != d:
            raise ValueError(f"{where}: bins must be an int, or one entry per dimension "
                             f"({d}), got an array of shape {tuple(bins.shape)}")
        per = [index_axis(bins, i, 0) for i in range(d)]
    else:
        per = [bins] * d
    for b in per:
        _check_bins(b, where)
    return per


def _ranges_per_dim(rng, d, where):
    if rng is None:
        return [None] * d
    if not isinstance(rng, (list, tuple)) or len(rng) != d:
        raise ValueError(f"{where}: range must be None or a sequence of {d} pairs (lo, hi) or "
                         f"Nones, got {rng!r}"[:300])
    for r in rng:
        if r is None:
            continue
        if is_array(r) or isinstance(r, np.ndarray):
            if tuple(r.shape) != (2,):
                raise ValueError(f"{where}: a range must be two scalars (lo, hi), got an array "
                                 f"of shape {tuple(r.shape)}")
        elif isinstance(r, (list, tuple)) and len(r) == 2:
            for v in r:
                v = scalar_arg(v, where, "range")
                if not is_array(v) and not np.isfinite(v):
                    raise ValueError(f"{where}: range must be finite, got {r!r}")
        else:
            raise ValueError(f"{where}: a range must be None or two scalars (lo, hi), got "
                             f"{r!r}"[:300])
    return list(rng)


def _histdd_args(n, d, bins, rng, weights, density, where):
    """histogramdd's arguments for N points in D dimensions, checked before any kernel:
    (bins per dimension, range per dimension, weights, density)."""
    density = False if density is None else bool_arg(density, where, "density")
    if weights is not None:
        weights = asarray_arg(weights, where)
        if tuple(weights.shape) != (n,):
            raise ValueError(f"{where}: weights must have one weight per sample, shape "
                             f"({n},), got {tuple(weights.shape)}")
    per_bins = _bins_per_dim(bins, d, where)
    per_range = _ranges_per_dim(rng, d, where)
    if n == 0 and any(r is None for r in per_range):
        raise ValueError(f"{where}: an empty sample needs an explicit range for every "
                         "dimension (its min and max are undefined)")
    return per_bins, per_range, weights, density


def _histdd(sample, args, where):
    """histogramdd of the (N, D) array `sample` (args: _histdd_args'): (hist, edges)."""
    per_bins, per_range, weights, density = args
    n, d = sample.shape
    if weights is None:
        (sample,) = promote_inexact(where, sample)
    else:
        sample, weights = promote_inexact(where, sample, weights)
    edges, idx = [], []
    for i in range(d):
        col = index_axis(sample, i, 1)
        e, _ = _bin_edges(col, per_bins[i], per_range[i], where)
        if e.dtype != col.dtype:
            e = ew.convert_element_type(e, col.dtype)
        m = e.shape[0]
        k = _count_before(e, col, "right")          # searchsorted(e, col, side='right')
        last = views.broadcast_to_rank(index_axis(e, m - 1, 0), col.shape)
        idx.append(jnp.where(ew.eq(col, last), m - 1, k))  # the last bin is closed
        edges.append(e)
    nbins = [e.shape[0] + 1 for e in edges]          # with an underflow and overflow bin
    flat = None
    stride = 1
    for i in reversed(range(d)):
        term = idx[i] if stride == 1 else jnp.multiply(idx[i], stride)
        flat = term if flat is None else jnp.add(flat, term)
        stride *= nbins[i]
    if weights is None:
        weights = views.full((n,), 1, dtypes.int32)   # integer counts, as JAX's bincount
    hist = views.full((stride,), 0, weights.dtype)
    if n:
        hist = hist.at[flat].add(weights)
    hist = views.reshape(hist, tuple(nbins))
    hist = views.slice(hist, (1,) * d, tuple(b - 1 for b in nbins))
    if density:
        hist = ew.convert_element_type(hist, sample.dtype)
        hist = jnp.divide(hist, jnp.sum(hist))
        for i, e in enumerate(edges):
            w = jnp.diff(e)
            hist = jnp.divide(hist, views.reshape(w, tuple(w.shape[0] if j == i else 1
                                                           for j in range(d))))
    return hist, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A D-dimensional histogram of N points, sample of shape (N, D): (hist, edges), hist of
    shape (bins per dimension), edges a list of D arrays. `bins`: an int, or one entry per
    dimension (an int or a 1-d array of edges); `range`: None or one (lo, hi) or None per
    dimension; each bin is half-open except the last, which includes its right edge;
    points outside are dropped. Counts are int32 (JAX's), weights' dtype with `weights`
    (shape (N,)), floats with density=True (dividing by the total and the bin volumes).

    >>> h, edges = jnp.histogramdd(jnp.asarray([[0.0, 1.0], [1.0, 2.0]]), bins=2)   # h: eye(2)
    """
    s = asarray_arg(sample, "histogramdd")
    if s.ndim != 2:
        raise ValueError(f"histogramdd: sample must be a 2-d array (N points, D dimensions), "
                         f"got shape {tuple(s.shape)}")
    args = _histdd_args(s.shape[0], s.shape[1], bins, range, weights, density, "histogramdd")
    return _histdd(s, args, "histogramdd")


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The 2-d histogram of the points (x[i], y[i]): (hist, x_edges, y_edges). `bins`: an int,
    a 1-d array of edges for both, or a pair (ints or arrays, one per axis); `range`,
    `weights` and `density` as in histogramdd.

    >>> h, xe, ye = jnp.histogram2d(jnp.asarray([0.0, 1.0]), jnp.asarray([1.0, 2.0]), bins=2)
    """
    x, y = asarray_arg(x, "histogram2d"), asarray_arg(y, "histogram2d")
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"histogram2d: x and y must be 1-d arrays of one length, got shapes "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    if is_array(bins) and bins.ndim == 1 and bins.shape[0] not in (1, 2):
        bins = [bins, bins]                  # one array of edges for both axes
    elif isinstance(bins, (list, tuple)) and len(bins) != 2:
        raise ValueError(f"histogram2d: bins must be an int, an array of edges or a pair, got "
                         f"a {type(bins).__name__} of length {len(bins)}; convert edges with "
                         "netcl.numpy.asarray")
    args = _histdd_args(x.shape[0], 2, bins, range, weights, density, "histogram2d")
    x, y = promote("histogram2d", x, y)
    hist, (ex, ey) = _histdd(jnp.stack([x, y], axis=1), args, "histogram2d")
    return hist, ex, ey


# ---- polynomials -------------------------------------------------------------------------------

def poly(seq_of_zeros):
    """The coefficients (highest power first, leading 1) of the polynomial with the given
    roots; a 0-d input is one root, an empty one gives 1.0. Integer roots give floats.

    A non-empty square matrix gives its characteristic polynomial, from its eigenvalues
    (jnp.linalg.eigvals): complex coefficients even for a real matrix, as in JAX.

    >>> jnp.poly(jnp.asarray([1.0, 2.0, 3.0]))    # [1., -6., 11., -6.]
    >>> jnp.poly(jnp.asarray([[1.0, 2.0], [3.0, 4.0]]))    # [1+0j, -5+0j, -2+0j]
    """
    r = asarray_arg(seq_of_zeros, "poly")
    if r.ndim == 2 and r.shape[0] == r.shape[1] and r.shape[0] != 0:
        r = jnp.linalg.eigvals(r)      # (the roots of det(x I - A), complex; ints promoted)
    if r.ndim > 1:
        raise ValueError(f"poly: input must be 1-d (the roots) or a non-empty square matrix, "
                         f"got shape {tuple(r.shape)}")
    (r,) = promote_inexact("poly", r)
    if r.ndim == 0:
        r = views.reshape(r, (1,))
    n = r.shape[0]
    if n == 0:
        return views.full((), 1, r.dtype)
    zero = views.full((), 0, r.dtype)
    a = views.full((1,), 1, r.dtype)
    for k in range(n):     # a(x) * (x - r_k): [a, 0] - r_k * [0, a]
        a = ew.sub(st.pad(a, zero, ((0, 1, 0),)),
                   ew.mul(views.broadcast_to_rank(index_axis(r, k, 0), (a.shape[0] + 1,)),
                          st.pad(a, zero, ((1, 0, 0),))))
    return a


def polydiv(u, v, *, trim_leading_zeros=False):
    """Polynomial division u / v (coefficients highest power first): (quotient, remainder).
    As in JAX, the remainder keeps u's length (leading zeros where the quotient took u's
    terms) so that it works under jit; trim_leading_zeros=True drops leading entries below
    sqrt(eps), as NumPy's does (reads the values: not under jit). Floats out, as in JAX.

    >>> jnp.polydiv(jnp.asarray([5.0, 7.0, 9.0]), jnp.asarray([4.0, 1.0]))
    ([1.25, 1.4375], [0., 0., 7.5625])
    """
    u, v = asarray_arg(u, "polydiv"), asarray_arg(v, "polydiv")
    for name, a in (("u", u), ("v", v)):
        if a.ndim != 1:
            raise ValueError(f"polydiv: {name} must be a 1-d array of coefficients, got shape "
                             f"{tuple(a.shape)}")
    if v.shape[0] == 0:
        raise ValueError("polydiv: v (the divisor) has no coefficients")
    trim = bool_arg(trim_leading_zeros, "polydiv", "trim_leading_zeros")
    if trim and (_traced(u) or _traced(v)):
        raise TypeError("polydiv: trim_leading_zeros=True reads the remainder's values, which "
                        "a traced array (under jit, vmap or grad) does not have")
    u, v = promote_inexact("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = ew.div(views.full((), 1, v.dtype), index_axis(v, 0, 0))
    zero = views.full((), 0, v.dtype)
    qs = []
    for k in range(m - n + 1):
        d = ew.mul(scale, index_axis(u, k, 0))
        qs.append(views.reshape(d, (1,)))
        shifted = st.pad(ew.mul(views.broadcast_to_rank(d, v.shape), v), zero,
                         ((k, m - n - k, 0),))
        u = ew.add(u, ew.neg(shifted))
    q = jnp.concatenate(qs) if qs else views.full((1,), 0, u.dtype)
    if trim:
        u = _trim_small(u)
    return q, u


def _trim_small(r):
    """r without its leading entries of magnitude below sqrt(eps) (all of them: empty)."""
    try:
        h = np.abs(np.asarray(r).astype(np.float64))
    except ConcretizationError as e:
        raise TypeError("polydiv: trim_leading_zeros=True needs concrete values") from e
    tol = float(np.sqrt(dtypes.finfo(r.dtype).eps))
    big = np.flatnonzero(~(h < tol))
    return slice_axis(r, int(big[0]) if big.size else r.shape[0], r.shape[0], 0)


# ---- setxor1d ----------------------------------------------------------------------------------

def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values found in exactly one of the two arrays (flattened). Under jit give
    `size`: the result has that many entries, padded with `fill_value` (default: the
    smallest value of the result; 0 when it is empty), as in JAX.

    >>> jnp.setxor1d(jnp.asarray([1, 2, 3, 4]), jnp.asarray([3, 4, 5, 6]))    # [1, 2, 5, 6]
    """
    a, b = _arr(ar1, "setxor1d"), _arr(ar2, "setxor1d")
    unique = not bool_arg(assume_unique, "setxor1d", "assume_unique")
    size = _size_args(size, fill_value, "setxor1d")
    if size is None and (_traced(a) or _traced(b)):
        raise TypeError("setxor1d: traced inputs need size= (the result's shape depends on "
                        "the values)")
    a, b = promote("setxor1d", jnp.ravel(a), jnp.ravel(b))
    if size is None:              # JAX's algorithm (eager: the values are here)
        if unique:
            a, b = jnp.unique(a), jnp.unique(b)
        aux = jnp.concatenate([a, b])
        if aux.shape[0] == 0:
            return aux
        aux = jnp.sort(aux)
        t = views.full((1,), True, dtypes.bool_)
        flag = jnp.concatenate([t, jnp.not_equal(aux[1:], aux[:-1]), t])
        keep = np.asarray(jnp.logical_and(flag[1:], flag[:-1]))
        return aux[jnp.asarray(np.flatnonzero(keep).astype(np.int32))]
    c = jnp.concatenate([a, b])
    if c.shape[0] == 0 or size == 0:
        return jnp.full((size,), 0 if fill_value is None else fill_value, c.dtype)
    u, counts = jnp.unique(c, return_counts=True, size=c.shape[0])
    if unique:    # in exactly one of the arrays (NaN: NaNs in exactly one)
        ina, inb = jnp.isin(u, a), jnp.isin(u, b)
        if dtypes.kind(u.dtype) == "f":
            nan = jnp.isnan(u)
            ina = jnp.logical_or(ina, jnp.logical_and(nan, jnp.any(jnp.isnan(a))))
            inb = jnp.logical_or(inb, jnp.logical_and(nan, jnp.any(jnp.isnan(b))))
        keep = jnp.logical_and(jnp.greater(counts, 0), jnp.not_equal(ina, inb))
    else:
        keep = jnp.equal(counts, 1)
    # No bool results next to int32 ones here (keep read as int32, take by clip): under jit
    # a fused group's int32 output may take a dying bool input's buffer of the same size
    # class (core/codegen._multi_launcher) and overwrite elements not read yet.
    csum = jnp.cumsum(keep.astype(dtypes.int32))
    idx = jnp.searchsorted(csum, jnp.arange(1, size + 1, dtype=dtypes.int32)).astype(
        dtypes.int32)                                  # the k-th kept entry, else len(u)
    vals = jnp.take(u, idx, mode="clip")         # (the entries past n_real are replaced)
    n_real = csum[-1]
    real = jnp.less(jnp.arange(size, dtype=dtypes.int32), n_real)
    if fill_value is None:
        fill_value = jnp.where(jnp.greater(n_real, 0), vals[0], jnp.zeros((), vals.dtype))
    return jnp.where(real, vals, fill_value)
