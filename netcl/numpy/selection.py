"""Selecting elements by index in netcl.numpy: take, take_along_axis (with JAX's
out-of-range modes), diagonal/diag/diagflat, tril/triu, trace, and the index helpers
diag_indices, tril_indices, triu_indices (and their *_from forms)."""
import operator

import numpy as np

from ..core import dtypes
from ..core.eval import to_array
from ..core.shapes import broadcast_shapes, normalize_axis, prod
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from ._util import asarray_arg
from .indexing import (_i32, _is_array, _normalize_dyn, _normalize_static, _result_index,
                       _upload_index)

__all__ = ["take", "take_along_axis", "diagonal", "diag", "diagflat", "tril", "triu", "trace",
           "diag_indices", "diag_indices_from", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from"]

# ---- take / take_along_axis --------------------------------------------------------------------

_MODES = ("fill", "clip", "wrap", "promise_in_bounds", "raise")


def _int_indices(indices, where):
    """Host int array (np.ndarray) or a netcl integer array (any width: _prepare makes it
    int32)."""
    if _is_array(indices):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"{where}: indices must be integers, got {indices.dtype}")
        return indices
    h = np.asarray(indices)
    if isinstance(indices, (list, tuple)) and h.size == 0:
        h = h.astype(np.int64)
    if h.dtype.kind not in "iu":
        raise TypeError(f"{where}: indices must be integers, got {h.dtype}")
    return h


def _default_fill(dtype):
    if dtypes.kind(dtype) == "f":
        return float("nan")
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return True


def _prepare(idx, n, mode, where):
    """(index to gather with, bool validity mask or None) for the given out-of-range mode."""
    if isinstance(idx, np.ndarray):
        v = idx.astype(np.int64)
        if mode == "raise":
            return _upload_index(_normalize_static(v, n, "of the taken axis", where)), None
        if mode == "wrap":
            return _upload_index(np.mod(v, n) if n else v), None
        v = np.where((v < 0) & (v >= -n), v + n, v)
        valid = (v >= 0) & (v < n)
        i = _upload_index(np.clip(v, 0, max(n - 1, 0)))
        if mode == "fill" and not valid.all():
            return i, to_array(valid, where)
        return i, None
    if mode == "raise":
        raise ValueError(f"{where}: mode='raise' needs concrete (NumPy or list) indices; "
                         "use mode='fill', 'clip' or 'wrap' with netcl arrays")
    if mode == "wrap":
        from .math import remainder
        return remainder(idx, n) if n else idx, None
    i, valid = _normalize_dyn(idx, n, mode == "fill")
    return i, valid


def _check_mode(mode, where):
    mode = "fill" if mode is None else mode
    if mode not in _MODES:
        raise ValueError(f"{where}: mode must be one of {', '.join(map(repr, _MODES))}, "
                         f"got {mode!r}")
    return mode


def _take_core(a, idx, axis, batch_dims, mode, fill_value, where):
    n = a.shape[axis]
    out_shape = tuple(a.shape[:axis]) + tuple(idx.shape[batch_dims:]) + tuple(a.shape[axis + 1:])
    fill = _default_fill(a.dtype) if fill_value is None else fill_value
    if n == 0 and prod(idx.shape) > 0:
        if mode != "fill":
            raise IndexError(f"{where}: cannot take from axis {axis} of size 0")
        return views.full(out_shape, fill, a.dtype)
    i, valid = _prepare(idx, n, mode, where)
    res = st.gather(a, i, axis, batch_dims=batch_dims)
    if valid is not None:
        mask = views.broadcast_in_dim(valid, res.shape,
                                      tuple(range(batch_dims)) +
                                      tuple(range(axis, axis + idx.ndim - batch_dims)))
        res = ew.select(mask, res, views.full(res.shape, fill, res.dtype))
    return res


def take(a, indices, axis=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of `a` at `indices` along `axis` (the flattened array when axis is None).

    Negative indices count from the end. Out-of-range indices follow `mode`, as in JAX:
    'fill' (the default) gives `fill_value` (NaN for floats, the most negative int for signed
    ints, the largest for unsigned, True for bool), 'clip' clamps, 'wrap' wraps around,
    'raise' raises IndexError (NumPy/list indices only).

    >>> netcl.numpy.take(netcl.numpy.arange(5.0), [0, -1, 7])   # [0., 4., nan]
    """
    a = asarray_arg(a, "take")
    mode = _check_mode(mode, "take")
    if axis is None:
        a = views.reshape(a, (a.size,))
        axis = 0
    elif a.ndim == 0:
        raise ValueError(f"take: axis={axis} is out of bounds for a 0-d array")
    axis = normalize_axis(axis, a.ndim, "take")
    idx = _int_indices(indices, "take")
    return _take_core(a, idx, axis, 0, mode, fill_value, "take")


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """out[..., j, ...] = arr[..., indices[..., j, ...], ...] along `axis`; the other
    dimensions of arr and indices broadcast. Out-of-range indices follow `mode` as in `take`.

    >>> idx = netcl.numpy.argsort(x, axis=1); netcl.numpy.take_along_axis(x, idx, axis=1)
    """
    a = asarray_arg(arr, "take_along_axis")
    mode = _check_mode(mode, "take_along_axis")
    idx = _int_indices(indices, "take_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None indices must be 1-d, got shape "
                             f"{tuple(idx.shape)}")
        a = views.reshape(a, (a.size,))
        axis = 0
    if a.ndim == 0:
        raise ValueError("take_along_axis: arr must have at least one dimension")
    axis = normalize_axis(axis, a.ndim, "take_along_axis")
    if idx.ndim != a.ndim:
        raise ValueError(f"take_along_axis: indices and arr must have the same number of "
                         f"dimensions; got indices of shape {tuple(idx.shape)} for arr of "
                         f"shape {tuple(a.shape)}")
    others = [d for d in range(a.ndim) if d != axis]
    try:
        bshape = broadcast_shapes(tuple(a.shape[d] for d in others),
                                  tuple(idx.shape[d] for d in others), where="take_along_axis")
    except ValueError:
        raise ValueError(f"take_along_axis: arr of shape {tuple(a.shape)} and indices of shape "
                         f"{tuple(idx.shape)} do not broadcast outside axis {axis}") from None
    perm = tuple(others) + (axis,)
    a_t = views.transpose(views.broadcast_to_rank(
        a, _with_axis(bshape, others, axis, a.shape[axis])), perm)
    m = idx.shape[axis]
    if isinstance(idx, np.ndarray):
        idx_t = np.transpose(np.broadcast_to(idx, _with_axis(bshape, others, axis, m)), perm)
    else:
        idx_t = views.transpose(views.broadcast_to_rank(
            idx, _with_axis(bshape, others, axis, m)), perm)
    nb = a.ndim - 1
    res = _take_core(a_t, idx_t, nb, nb, mode, fill_value, "take_along_axis")
    inv = [0] * a.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    return views.transpose(res, tuple(inv))


def _with_axis(bshape, others, axis, size):
    shape = [0] * (len(others) + 1)
    for d, s in zip(others, bshape):
        shape[d] = s
    shape[axis] = size
    return tuple(shape)

# ---- diagonals and triangles ------------------------------------------------------------------

def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal over axes (axis1, axis2), appended as the last axis.

    A strided view of the flattened matrices (no kernel for a dense input).
    """
    a = asarray_arg(a, "diagonal")
    if a.ndim < 2:
        raise ValueError(f"diagonal: needs an array of at least two dimensions, got shape "
                         f"{tuple(a.shape)}")
    ax1 = normalize_axis(axis1, a.ndim, "diagonal", "axis1")
    ax2 = normalize_axis(axis2, a.ndim, "diagonal", "axis2")
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both {ax1})")
    offset = _int(offset, "diagonal", "offset")
    rest = [d for d in range(a.ndim) if d not in (ax1, ax2)]
    t = views.transpose(a, tuple(rest) + (ax1, ax2))
    n, m = a.shape[ax1], a.shape[ax2]
    lead = tuple(a.shape[d] for d in rest)
    k = max(0, min(n, m - offset)) if offset >= 0 else max(0, min(n + offset, m))
    flat = views.reshape(t, lead + (n * m,))
    if k == 0:
        return views.slice(flat, (0,) * flat.ndim, lead + (0,))
    s = offset if offset >= 0 else -offset * m
    return views.slice(flat, (0,) * len(lead) + (s,), lead + (s + (k - 1) * (m + 1) + 1,),
                       (1,) * len(lead) + (m + 1,))


def diag(v, k=0):
    """1-d input: a 2-d array with v on the k-th diagonal; 2-d input: its k-th diagonal."""
    v = asarray_arg(v, "diag")
    k = _int(k, "diag", "k")
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {tuple(v.shape)}")
    n = v.shape[0]
    zero = views.full((), 0, v.dtype)
    if n == 0:
        return views.full((abs(k), abs(k)), 0, v.dtype)
    # each value followed by n zeros, cut to n*n: the values land on the diagonal
    rows = st.pad(views.reshape(v, (n, 1)), zero, ((0, 0, 0), (0, n, 0)))
    d = views.reshape(views.slice(views.reshape(rows, (n * (n + 1),)), (0,), (n * n,)), (n, n))
    if k > 0:
        d = st.pad(d, zero, ((0, k, 0), (k, 0, 0)))
    elif k < 0:
        d = st.pad(d, zero, ((-k, 0, 0), (0, -k, 0)))
    return d


def diagflat(v, k=0):
    """The flattened input on the k-th diagonal of a 2-d array."""
    v = asarray_arg(v, "diagflat")
    _int(k, "diagflat", "k")
    return diag(views.reshape(v, (v.size,)), k)


def _tri_mask(shape, k, lower):
    n, m = shape[-2], shape[-1]
    rows = views.broadcast_in_dim(st.iota(dtypes.int32, n), (n, m), (0,))
    cols = views.broadcast_in_dim(st.iota(dtypes.int32, m), (n, m), (1,))
    shifted = ew.add(rows, _i32((n, m), k))
    mask = ew.ge(shifted, cols) if lower else ew.le(shifted, cols)
    return views.broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def _triangle(m, k, lower, where):
    m = asarray_arg(m, where)
    if m.ndim < 2:
        raise ValueError(f"{where}: needs an array of at least two dimensions, got shape "
                         f"{tuple(m.shape)}")
    k = _int(k, where, "k")
    return ew.select(_tri_mask(m.shape, k, lower), m, views.full(m.shape, 0, m.dtype))


def tril(m, k=0):
    """Lower triangle of the last two axes: elements with column <= row + k kept, else 0."""
    return _triangle(m, k, True, "tril")


def triu(m, k=0):
    """Upper triangle of the last two axes: elements with column >= row + k kept, else 0."""
    return _triangle(m, k, False, "triu")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along the `offset` diagonal of axes (axis1, axis2), in the dtype of `sum` (bools
    and narrow ints as the default int).

    >>> jnp.trace(jnp.eye(3, dtype=jnp.int32))     # 3
    """
    from ..primitives.reductions import reduce_sum
    d = diagonal(a, offset, axis1, axis2)
    dt = dtypes.sum_dtype(d.dtype)
    if dtype is not None:
        dt = dtypes.canonicalize(dtype, where="trace")
    if dt != d.dtype:
        d = ew.convert_element_type(d, dt)
    return reduce_sum(d, (d.ndim - 1,))


# ---- index helpers (host) ---------------------------------------------------------------------

def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x n x ... array: ndim copies of arange(n)."""
    n, ndim = _int(n, "diag_indices", "n"), _int(ndim, "diag_indices", "ndim")
    i = _result_index(np.arange(n))
    return (i,) * ndim


def diag_indices_from(arr):
    a = asarray_arg(arr, "diag_indices_from")
    if a.ndim < 2 or len(set(a.shape)) != 1:
        raise ValueError(f"diag_indices_from: needs an array of at least 2 dimensions, all of "
                         f"equal length; got shape {tuple(a.shape)}")
    return diag_indices(a.shape[0], a.ndim)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an (n, m) array."""
    n, k, m = _tri_args(n, k, m, "tril_indices")
    return tuple(_result_index(i) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an (n, m) array."""
    n, k, m = _tri_args(n, k, m, "triu_indices")
    return tuple(_result_index(i) for i in np.triu_indices(n, k, m))


def _tri_args(n, k, m, where):
    """n, k, m as Python ints (m may be None), or a TypeError naming the argument."""
    return (_int(n, where, "n"), _int(k, where, "k"), None if m is None else _int(m, where, "m"))


def _int(v, where, arg):
    """v as a Python int, or a TypeError naming the function and the argument."""
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be an int, got {type(v).__name__} {v!r}") from None


def tril_indices_from(arr, k=0):
    a = asarray_arg(arr, "tril_indices_from")
    if a.ndim != 2:
        raise ValueError(f"tril_indices_from: needs a 2-d array, got shape {tuple(a.shape)}")
    return tril_indices(a.shape[0], k, a.shape[1])


def triu_indices_from(arr, k=0):
    a = asarray_arg(arr, "triu_indices_from")
    if a.ndim != 2:
        raise ValueError(f"triu_indices_from: needs a 2-d array, got shape {tuple(a.shape)}")
    return triu_indices(a.shape[0], k, a.shape[1])
