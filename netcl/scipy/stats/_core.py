"""jax.scipy.stats's statistics of samples: `mode`, `rankdata`, `sem`. Sort-based and
vectorised over the other axes (no per-column loop), so jit and vmap go through them.

>>> st.rankdata(jnp.asarray([10, 30, 20, 30]))    # [1., 3.5, 2., 3.5]
"""
import math
from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...core import dtypes
from ...core.shapes import normalize_axis
from .. import _util as _u

__all__ = ["mode", "rankdata", "sem", "ModeResult"]


class ModeResult(NamedTuple):
    mode: object
    count: object


def _check_nan_policy(where, nan_policy, allowed=("propagate",)):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{where}: Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy not in allowed:
        raise NotImplementedError(f"{where}: nan_policy={nan_policy!r} is not implemented "
                                  "(as in JAX: under jit, whether x holds NaNs is not known); "
                                  "check for NaNs outside the function")


def _axis(where, axis, ndim):
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{where}: axis must be None or an int, got {axis!r}")
    return normalize_axis(int(axis), ndim, where)


def _runs(s, axis):
    """For s sorted along `axis`: the 0-based start of each entry's run of equal values,
    and one past its end (NaNs count as equal, as jnp.unique's equal_nan)."""
    n = s.shape[axis]
    a, b = (lax.slice_in_dim(s, 1, n, axis=axis), lax.slice_in_dim(s, 0, n - 1, axis=axis))
    differs = (a != b) & ~(jnp.isnan(a) & jnp.isnan(b)) if dtypes.kind(s.dtype) == "f" \
        else a != b
    edge = jnp.ones(s.shape[:axis] + (1,) + s.shape[axis + 1:], bool)
    first = jnp.concatenate([edge, differs], axis=axis)      # starts a run
    last = jnp.concatenate([differs, edge], axis=axis)       # ends a run
    shape = [1] * s.ndim
    shape[axis] = n
    idx = jnp.reshape(jnp.arange(n), shape)
    start = lax.cummax(jnp.where(first, idx, 0), axis=axis)
    stop = lax.cummin(jnp.where(last, idx + 1, n), axis=axis, reverse=True)
    return start, stop


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (the smallest of equally common ones) and its
    count, as ``ModeResult(mode, count)``; axis=None: over the flattened array.

    >>> st.mode(jnp.asarray([2, 4, 1, 1, 3, 4, 4, 2, 3]))    # ModeResult(mode=4, count=3)
    """
    where = "mode"
    _u.shape_dtype(where, "a", a)       # (an array or a scalar: lists refused, as JAX)
    _check_nan_policy(where, nan_policy)
    keepdims = _u.check_bool(where, "keepdims", keepdims)
    x = jnp.atleast_1d(jnp.asarray(a))
    shape = x.shape
    if axis is not None:
        axis = _axis(where, axis, x.ndim)
    if keepdims:
        out_shape = tuple(1 if axis is None or i == axis else d for i, d in enumerate(shape))
    else:
        out_shape = () if axis is None else tuple(d for i, d in enumerate(shape) if i != axis)
    x = jnp.reshape(x, (-1, 1)) if axis is None else jnp.moveaxis(x, axis, 0)
    x = jnp.reshape(x, (x.shape[0], math.prod(x.shape[1:])))
    if x.shape[0] == 0:      # nothing to count: NaN and 0 in the default float, as JAX
        fill = jnp.zeros(out_shape, dtypes.default_float_dtype())
        return ModeResult(fill + np.nan, fill)
    s = jnp.sort(x, axis=0)
    start, stop = _runs(s, 0)
    count = stop - start
    # the first position of the longest run: the smallest value among the most common
    best = jnp.argmax(count, axis=0)
    vals = jnp.take_along_axis(s, best[None], axis=0)[0]
    counts = jnp.max(count, axis=0)
    return ModeResult(jnp.reshape(vals, out_shape), jnp.reshape(counts, out_shape))


_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1 along `axis` (of the flattened array when None), ties by `method`:
    "average", "min", "max", "dense" or "ordinal"; in the default float dtype. A slice with
    a NaN ranks as all NaN (JAX's "propagate").

    >>> st.rankdata(jnp.asarray([1, 3, 2, 3]), "min")    # [1., 3., 2., 3.]
    """
    where = "rankdata"
    _u.shape_dtype(where, "a", a)
    _check_nan_policy(where, nan_policy)
    if method not in _METHODS:
        raise ValueError(f"{where}: unknown method {method!r}; expected one of {_METHODS}")
    x = jnp.asarray(a)
    if axis is None:
        x, axis = jnp.ravel(x), 0
    else:
        axis = _axis(where, axis, x.ndim)
    x = jnp.moveaxis(x, axis, -1)
    out_dtype = dtypes.default_float_dtype()
    if x.shape[-1] == 0:
        return jnp.moveaxis(jnp.zeros(x.shape, out_dtype), -1, axis)
    sorter = jnp.argsort(x, axis=-1, stable=True)      # ties in the order they come
    inv = jnp.argsort(sorter, axis=-1)                  # the inverse permutation
    if method == "ordinal":
        ranks = (inv + 1).astype(out_dtype)
    else:
        s = jnp.take_along_axis(x, sorter, axis=-1)
        start, stop = _runs(s, s.ndim - 1)
        if method == "dense":
            first = start == jnp.arange(s.shape[-1])
            sorted_rank = jnp.cumsum(first.astype(inv.dtype), axis=-1)
        elif method == "min":
            sorted_rank = start + 1
        elif method == "max":
            sorted_rank = stop
        else:
            sorted_rank = (start + 1 + stop).astype(out_dtype) * 0.5
        ranks = jnp.take_along_axis(sorted_rank, inv, axis=-1).astype(out_dtype)
    if dtypes.kind(x.dtype) == "f":
        ranks = jnp.where(jnp.any(jnp.isnan(x), axis=-1, keepdims=True), np.nan, ranks)
    return jnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n) along `axis` (all axes when
    None); nan_policy="omit" leaves NaNs out of both.

    >>> st.sem(jnp.asarray([2, 4, 1, 1, 3, 4, 4, 2, 3]))    # 0.4082483
    """
    where = "sem"
    keepdims = _u.check_bool(where, "keepdims", keepdims)
    (b,), dt = _u.floats(where, a=a)
    if axis is not None:
        axis = _axis(where, axis, b.ndim)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        out = jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / np.sqrt(size)
    elif nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims).astype(b.dtype)
        out = jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count)
    else:
        raise ValueError(f"{where}: nan_policy={nan_policy!r} is not supported; use "
                         "'propagate' or 'omit'")
    return _u.finish(out, dt)


_u.export(globals(), "", ["mode", "rankdata", "sem"])
