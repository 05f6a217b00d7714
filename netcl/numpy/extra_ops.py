"""jax.numpy's indexing helpers (indices, ix_, mgrid, ogrid, r_, c_, s_, index_exp,
ravel_multi_index, unravel_index, mask_indices) and array operations (insert, delete,
resize, rollaxis, unstack, choose, compress, extract, place, put, put_along_axis,
fill_diagonal, trim_zeros), composed from other netcl.numpy
operations so that grad, jit and vmap work through them.

Positions that decide the result's shape (insert's and delete's `obj`, compress's condition
without `size=`) must be concrete, as in JAX. Arguments are checked before any kernel runs.

>>> import netcl.numpy as jnp
>>> jnp.insert(jnp.arange(3), 1, 9)        # [0, 9, 1, 2]
>>> jnp.unravel_index(5, (2, 3))           # (1, 2)
"""
import numpy as np

from ..core import dtypes
from ..core.shapes import normalize_axis
from .. import numpy as jnp
from ._composite_util import bool_arg, int_arg, is_array
from ._util import asarray_arg

__all__ = ["indices", "ix_", "mgrid", "ogrid", "r_", "c_", "s_", "index_exp",
           "ravel_multi_index", "unravel_index", "mask_indices", "insert", "delete", "resize",
           "rollaxis", "unstack", "choose", "compress", "extract", "place", "put",
           "put_along_axis", "fill_diagonal", "trim_zeros"]

s_ = np.s_
index_exp = np.index_exp


def _shape_arg(shape, where, arg="shape"):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{where}: {arg} must be a tuple of ints, got {type(shape).__name__} "
                        f"{shape!r}")
    return tuple(int_arg(d, where, arg, 0) for d in shape)


def _axis(axis, ndim, where, arg="axis"):
    return normalize_axis(int_arg(axis, where, arg), ndim, where=where)


def _concrete_ints(v, where, arg):
    """A NumPy int array from a concrete value (traced arrays are refused)."""
    if is_array(v):
        try:
            v = np.asarray(v)
        except Exception:  # noqa: BLE001 (a tracer)
            raise TypeError(f"{where}: {arg} must be concrete (it decides the result's shape); "
                            "got a traced array") from None
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {arg} must be an int or a sequence of ints, got bool")
    try:
        a = np.asarray(v)
    except Exception:  # noqa: BLE001
        a = np.asarray(v, dtype=object)
    if a.dtype.kind not in "iu" and not (a.size == 0 and dtypes.kind(a.dtype) == "f"):
        raise TypeError(f"{where}: {arg} must be an int or a sequence of ints, got "
                        f"{type(v).__name__} {v!r}"[:200])
    return a.astype(np.int64)


# ---- index grids --------------------------------------------------------------------------------

def indices(dimensions, dtype=None, sparse=False):
    """The index grid of an array of shape `dimensions`: an array of shape
    (len(dimensions), *dimensions), or with sparse=True a tuple of broadcastable arrays.

    >>> jnp.indices((2, 3))[1]     # [[0, 1, 2], [0, 1, 2]]
    """
    dims = _shape_arg(dimensions, "indices", "dimensions")
    dt = dtypes.default_int_dtype() if dtype is None else \
        dtypes.canonicalize(dtype, where="indices")
    sparse = bool_arg(sparse, "indices", "sparse")
    out = []
    for i, d in enumerate(dims):
        shape = (1,) * i + (d,) + (1,) * (len(dims) - i - 1)
        a = jnp.reshape(jnp.arange(d, dtype=dt), shape)
        out.append(a if sparse else jnp.broadcast_to(a, dims))
    if sparse:
        return tuple(out)
    return jnp.stack(out) if out else jnp.zeros((0,), dt)


def ix_(*args):
    """Open-mesh index arrays from 1-d integer sequences: the k-th of n gets shape
    (1, ..., len, ..., 1), so that x[jnp.ix_(a, b)] takes the cross product.

    >>> [a.shape for a in jnp.ix_(jnp.arange(2), jnp.arange(3))]    # [(2, 1), (1, 3)]
    """
    arrs = [asarray_arg(jnp.asarray(a) if isinstance(a, (list, tuple)) else a, "ix_")
            for a in args]
    for k, a in enumerate(arrs):
        if a.ndim != 1:
            raise ValueError(f"ix_: arguments must be 1-dimensional, argument {k} has shape "
                             f"{tuple(a.shape)}")
        if a.dtype == dtypes.bool_:
            raise TypeError("ix_: boolean arguments are not supported (JAX refuses them too); "
                            "pass jnp.nonzero(mask)[0]")
    n = len(arrs)
    return tuple(jnp.reshape(a, (1,) * k + (a.shape[0],) + (1,) * (n - k - 1))
                 for k, a in enumerate(arrs))


def _slice_range(s, where):
    """A 1-d array for a slice of mgrid/ogrid/r_: an int step is arange's, a complex step
    (5j) a number of points (linspace, end included)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    stop = s.stop
    for v, n in ((start, "start"), (stop, "stop"), (step, "step")):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, complex, np.number)):
            raise TypeError(f"{where}: slice {n} must be a number, got {type(v).__name__} {v!r}")
    if isinstance(start, complex) or isinstance(stop, complex):
        raise TypeError(f"{where}: slice start and stop must be real numbers")
    if isinstance(step, complex):
        num = int(abs(step))
        return jnp.linspace(float(start), float(stop), num)
    if step == 0:
        raise ValueError(f"{where}: slice step must not be zero")
    return jnp.arange(start, stop, step)


class _Grid:
    def __init__(self, sparse, name):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        for k in keys:
            if not isinstance(k, slice):
                raise TypeError(f"{self.name}: indices must be slices (start:stop:step), got "
                                f"{type(k).__name__} {k!r}")
        rs = [_slice_range(k, self.name) for k in keys]
        if single:
            return rs[0]
        dt = jnp.result_type(*rs)
        rs = [r if r.dtype == dt else r.astype(dt) for r in rs]
        grids = jnp.meshgrid(*rs, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else jnp.stack(grids)

    def __repr__(self):
        return f"netcl.numpy.{self.name}"


mgrid = _Grid(False, "mgrid")
mgrid.__doc__ = """Dense grids: jnp.mgrid[0:2, 0:3] has shape (2, 2, 3); a complex step (5j)
is a number of points. >>> jnp.mgrid[0:3]     # [0, 1, 2]"""
ogrid = _Grid(True, "ogrid")
ogrid.__doc__ = """Open (sparse) grids: jnp.ogrid[0:2, 0:3] is [shape (2, 1), shape (1, 3)].
>>> jnp.ogrid[0:3]    # [0, 1, 2]"""


class _Concat:
    """r_ and c_: concatenation of slices (as arange), scalars and arrays."""

    def __init__(self, name, axis, ndmin):
        self.name, self.axis, self.ndmin = name, axis, ndmin

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        axis = self.axis
        if keys and isinstance(keys[0], str):
            d = keys[0]
            if "," in d or d in ("r", "c"):
                raise NotImplementedError(f"{self.name}: only an axis directive ('0', '-1', "
                                          f"...) is supported, got {d!r}")
            try:
                axis = int(d)
            except ValueError:
                raise ValueError(f"{self.name}: could not understand directive {d!r}") from None
            keys = keys[1:]
        parts = []
        for k in keys:
            if isinstance(k, slice):
                a = _slice_range(k, self.name)
            elif isinstance(k, str):
                raise ValueError(f"{self.name}: a string directive must come first, got {k!r}")
            elif isinstance(k, (list, tuple)):
                a = jnp.asarray(k)
            else:
                a = asarray_arg(k, self.name)
            if a.ndim == 0:
                a = jnp.reshape(a, (1,))
            if self.ndmin == 2 and a.ndim == 1:
                a = jnp.reshape(a, (a.shape[0], 1))   # c_: 1-d items become columns
            parts.append(a)
        if not parts:
            return jnp.zeros((0,), dtypes.default_float_dtype())
        return jnp.concatenate(parts, axis=axis)

    def __repr__(self):
        return f"netcl.numpy.{self.name}"


r_ = _Concat("r_", 0, 1)
r_.__doc__ = """Concatenate along the first axis: slices become aranges.
>>> jnp.r_[1:3, jnp.asarray([7, 8]), 0]     # [1, 2, 7, 8, 0]"""
c_ = _Concat("c_", -1, 2)
c_.__doc__ = """Concatenate along the last axis, 1-d items as columns.
>>> jnp.c_[jnp.asarray([1, 2]), jnp.asarray([3, 4])]    # [[1, 3], [2, 4]]"""


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of the coordinate arrays `multi_index` into an array of shape `dims`.
    mode='raise' checks bounds (concrete indices only), 'wrap' wraps, 'clip' clips.

    >>> jnp.ravel_multi_index((jnp.asarray([1, 0]), jnp.asarray([2, 1])), (2, 3))   # [5, 1]
    """
    dims = _shape_arg(dims, "ravel_multi_index", "dims")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', got "
                         f"{mode!r}")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    if not isinstance(multi_index, (tuple, list)):
        raise TypeError("ravel_multi_index: multi_index must be a tuple of integer arrays, got "
                        f"{type(multi_index).__name__}")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for "
                         f"{len(dims)} dimensions")
    idx = [asarray_arg(i, "ravel_multi_index") for i in multi_index]
    for i in idx:
        if i.dtype.kind not in "iu":
            raise TypeError(f"ravel_multi_index: indices must be integers, got {i.dtype}")
    jnp.broadcast_shapes(*[tuple(i.shape) for i in idx])
    if mode == "raise":
        for i, d in zip(idx, dims):
            h = _concrete_ints(i, "ravel_multi_index", "multi_index (with mode='raise')")
            if np.any((h < 0) | (h >= d)):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [jnp.remainder(i, d) if d else i for i, d in zip(idx, dims)]
    else:
        idx = [jnp.clip(i, 0, max(d - 1, 0)) for i, d in zip(idx, dims)]
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    if order == "C":
        strides = strides[::-1]
    out = None
    for i, s in zip(idx, strides):
        t = jnp.multiply(i.astype(dtypes.int32), int(s))
        out = t if out is None else jnp.add(out, t)
    return jnp.asarray(0) if out is None else out


def unravel_index(indices, shape):
    """The coordinate arrays of flat `indices` into an array of `shape` (C order); indices out
    of range are clipped, negative ones count from the end (as jnp.unravel_index).

    >>> jnp.unravel_index(jnp.asarray([5, 1]), (2, 3))    # ([1, 0], [2, 1])
    """
    shape = _shape_arg(shape, "unravel_index")
    i = asarray_arg(indices, "unravel_index")
    if i.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got {i.dtype}")
    total = int(np.prod(shape))
    if total == 0:
        if i.size:
            raise ValueError("unravel_index: cannot unravel into an empty shape")
        return tuple(jnp.zeros(i.shape, dtypes.int32) for _ in shape)
    i = i.astype(dtypes.int32) if i.dtype != dtypes.int32 else i
    i = jnp.clip(i, -total, total - 1)
    i = jnp.where(jnp.less(i, 0), jnp.add(i, total), i)
    out = []
    for d in shape[::-1]:
        out.append(jnp.remainder(i, d))
        i = jnp.floor_divide(i, d)
    return tuple(out[::-1])


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where mask_func(ones((n, n)), k) is nonzero (e.g. jnp.triu).

    >>> jnp.mask_indices(3, jnp.triu)    # ([0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2])
    """
    n = int_arg(n, "mask_indices", "n", 0)
    if not callable(mask_func):
        raise TypeError(f"mask_indices: mask_func must be callable, got "
                        f"{type(mask_func).__name__}")
    k = int_arg(k, "mask_indices", "k")
    m = mask_func(jnp.ones((n, n), dtypes.int32), k)
    return jnp.nonzero(m, size=size)


# ---- insert, delete, resize ---------------------------------------------------------------------

def _flat_or_axis(arr, axis, where):
    if axis is None:
        return jnp.ravel(arr), 0
    return arr, _axis(axis, arr.ndim, where)


def _positions(obj, n, where, allow_slice=True):
    """Concrete positions along an axis of length n: (np int array, was it a scalar)."""
    if isinstance(obj, slice):
        return np.arange(n)[obj], False
    a = _concrete_ints(obj, where, "obj")
    if a.ndim > 1:
        raise ValueError(f"{where}: obj must be an int or a 1-d sequence of ints, got shape "
                         f"{a.shape}")
    return a, a.ndim == 0


def insert(arr, obj, values, axis=None):
    """arr with `values` inserted before the positions `obj` (an int, a 1-d sequence of ints or
    a slice; concrete) along axis (None: the flattened array).

    >>> jnp.insert(jnp.asarray([1, 2, 3]), 1, 9)          # [1, 9, 2, 3]
    >>> jnp.insert(jnp.zeros((2, 2)), 1, 5.0, axis=1)     # a column of 5s
    """
    arr = asarray_arg(arr, "insert")
    values = jnp.asarray(values) if isinstance(values, (list, tuple)) else \
        asarray_arg(values, "insert")
    arr, axis = _flat_or_axis(arr, axis, "insert")
    n = arr.shape[axis]
    pos, scalar = _positions(obj, n, "insert")
    pos = np.where(pos < 0, pos + n, pos)
    if np.any((pos < 0) | (pos > n)):
        raise IndexError(f"insert: index {obj!r} is out of bounds for axis {axis} with size {n}")
    if scalar:
        v = values
        if v.ndim < arr.ndim:
            v = jnp.reshape(v, (1,) * (arr.ndim - v.ndim) + tuple(v.shape))
        v = jnp.moveaxis(v, 0, axis) if v.ndim == arr.ndim else v
        k = v.shape[axis] if v.ndim == arr.ndim else 1
        target = tuple(k if d == axis else s for d, s in enumerate(arr.shape))
        new = np.full(k, int(pos))
    else:
        k = pos.shape[0]
        target = tuple(k if d == axis else s for d, s in enumerate(arr.shape))
        v = values
        new = pos
    v = jnp.broadcast_to(v, target) if tuple(v.shape) != target else v
    order = np.argsort(new, kind="stable")
    new_at = np.empty(k, np.int64)
    new_at[order] = new[order] + np.arange(k)     # where each value lands
    keep = np.ones(n + k, bool)
    keep[new_at] = False
    src = np.empty(n + k, np.int64)
    src[keep] = np.arange(n)
    src[new_at] = n + np.arange(k)
    both = jnp.concatenate([arr, v.astype(arr.dtype)], axis=axis)
    return jnp.take(both, jnp.asarray(src.astype(np.int32)), axis=axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries at `obj` (an int, a sequence of ints, a slice or a boolean mask;
    concrete) along axis (None: the flattened array).

    >>> jnp.delete(jnp.asarray([1, 2, 3, 4]), [0, 2])    # [2, 4]
    """
    arr = asarray_arg(arr, "delete")
    arr, axis = _flat_or_axis(arr, axis, "delete")
    n = arr.shape[axis]
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        o = np.asarray(obj) if not is_array(obj) else None
        if is_array(obj) and obj.dtype == dtypes.bool_ or o is not None and o.dtype == bool \
                and o.ndim == 1:
            m = np.asarray(obj)
            if m.shape != (n,):
                raise ValueError(f"delete: boolean obj must have shape ({n},), got {m.shape}")
            keep = ~m
        else:
            pos = _concrete_ints(obj, "delete", "obj").reshape(-1)
            if np.any((pos < -n) | (pos >= n)):
                raise IndexError(f"delete: index {obj!r} is out of bounds for axis {axis} with "
                                 f"size {n}")
            keep[pos] = False
    return jnp.take(arr, jnp.asarray(np.nonzero(keep)[0].astype(np.int32)), axis=axis)


def resize(a, new_shape):
    """An array of new_shape filled with a's elements (flattened), repeated as needed.

    >>> jnp.resize(jnp.asarray([1, 2, 3]), (2, 2))    # [[1, 2], [3, 1]]
    """
    a = asarray_arg(a, "resize")
    shape = _shape_arg(new_shape, "resize", "new_shape")
    size = int(np.prod(shape))
    flat = jnp.ravel(a)
    if a.size == 0 or size == 0:
        return jnp.zeros(shape, a.dtype)
    reps = -(-size // a.size)
    return jnp.reshape(jnp.tile(flat, reps)[:size], shape)


def rollaxis(a, axis, start=0):
    """Move `axis` to sit before position `start` (NumPy's older moveaxis).

    >>> jnp.rollaxis(jnp.ones((2, 3, 4)), 2).shape     # (4, 2, 3)
    """
    a = asarray_arg(a, "rollaxis")
    axis = _axis(axis, a.ndim, "rollaxis")
    start = int_arg(start, "rollaxis", "start")
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start must be in [{-a.ndim}, {a.ndim}], got {start}")
    if start < 0:
        start += a.ndim
    if start > axis:
        start -= 1
    return jnp.moveaxis(a, axis, start)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple. >>> jnp.unstack(jnp.ones((2, 3)))[0].shape
    (3,)"""
    x = asarray_arg(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    axis = _axis(axis, x.ndim, "unstack")
    return tuple(jnp.take(x, i, axis=axis) for i in range(x.shape[axis]))


# ---- choosing and placing -----------------------------------------------------------------------

def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for each i (a and the choices broadcast); mode 'wrap' or 'clip' for
    indices out of range ('raise' is not supported, as in JAX).

    >>> jnp.choose(jnp.asarray([0, 1, 0]), [jnp.zeros(3), jnp.ones(3)])    # [0., 1., 0.]
    """
    if out is not None:
        raise NotImplementedError("choose: out= is not supported")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if mode == "raise":
        raise NotImplementedError("choose: mode='raise' is not supported; use 'wrap' or 'clip'")
    a = asarray_arg(a, "choose")
    if a.dtype.kind not in "iu":
        raise TypeError(f"choose: a must be integer, got {a.dtype}")
    if is_array(choices):
        choices = [choices[i] for i in range(choices.shape[0])] if choices.ndim else [choices]
    if not isinstance(choices, (list, tuple)) or not choices:
        raise TypeError("choose: choices must be a non-empty sequence of arrays")
    cs = [asarray_arg(c, "choose") for c in choices]
    shape = jnp.broadcast_shapes(tuple(a.shape), *[tuple(c.shape) for c in cs])
    n = len(cs)
    a = jnp.remainder(a, n) if mode == "wrap" else jnp.clip(a, 0, n - 1)
    dt = jnp.result_type(*cs)
    stacked = jnp.stack([jnp.broadcast_to(c.astype(dt), shape) for c in cs])
    idx = jnp.broadcast_to(a, shape)[None].astype(dtypes.int32)
    return jnp.take_along_axis(stacked, idx, axis=0)[0]


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis (None: flattened) where the 1-d condition is true; without
    `size` the condition must be concrete, with it the result has `size` slices (padded with
    fill_value).

    >>> jnp.compress(jnp.asarray([True, False, True]), jnp.arange(3))   # [0, 2]
    """
    if out is not None:
        raise NotImplementedError("compress: out= is not supported")
    c = jnp.asarray(condition) if isinstance(condition, (list, tuple)) else \
        asarray_arg(condition, "compress")
    if c.ndim != 1:
        raise ValueError(f"compress: condition must be 1-dimensional, got shape "
                         f"{tuple(c.shape)}")
    a = asarray_arg(a, "compress")
    a, axis = _flat_or_axis(a, axis, "compress")
    if size is not None:
        size = int_arg(size, "compress", "size", 0)
    n = a.shape[axis]
    if c.shape[0] > n:
        if _traced(c):
            raise TypeError("compress: a traced condition must not be longer than the axis")
        if np.asarray(c)[n:].any():
            raise ValueError(f"compress: condition has {c.shape[0]} entries, more than axis "
                             f"{axis}'s length {n}, and the extra ones are not all False")
    n = min(n, c.shape[0])
    if size is not None and size > n:
        raise ValueError(f"compress: size must not exceed the length {n} of the axis, got "
                         f"{size}")
    c = c[:n] if c.shape[0] > n else c
    a = jnp.take(a, jnp.arange(n), axis=axis) if a.shape[axis] > n else a
    c = c if c.dtype == dtypes.bool_ else jnp.not_equal(c, 0)
    if size is None:
        if _traced(c):
            raise TypeError("compress: a traced condition needs size= (the result's shape "
                            "depends on it)")
        idx = jnp.asarray(np.nonzero(np.asarray(c))[0].astype(np.int32))
        return jnp.take(a, idx, axis=axis)
    idx = _sized_nonzero(c, size)
    return jnp.take(a, idx, axis=axis, mode="fill", fill_value=fill_value)


def _sized_nonzero(mask, size):
    """The indices of the first `size` true entries of the 1-d bool mask, then len(mask)s
    (traceable: the k-th true entry is where the running count first reaches k + 1)."""
    counts = jnp.cumsum(mask.astype(dtypes.int32))
    return jnp.searchsorted(counts, jnp.arange(1, size + 1, dtype=dtypes.int32)).astype(
        dtypes.int32)


def _traced(x):
    from ..core.tracing import Tracer
    return isinstance(x, Tracer)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr (flattened) where condition (flattened) is true.

    >>> jnp.extract(jnp.asarray([1, 0, 1]), jnp.asarray([4, 5, 6]))    # [4, 6]
    """
    if is_array(condition) and not _traced(condition):
        c = np.ravel(np.asarray(condition))   # read once (compress checks it on the host)
    elif is_array(condition):
        c = jnp.ravel(condition)
    elif isinstance(condition, (bool, int, float, np.number, np.bool_, np.ndarray)):
        c = np.ravel(np.asarray(condition))   # flattened on the host: no kernel for this
    else:
        c = asarray_arg(condition, "extract")
    arr = asarray_arg(arr, "extract")
    return compress(c, jnp.ravel(arr), size=size, fill_value=fill_value)


def _no_inplace(inplace, where):
    if bool_arg(inplace, where, "inplace"):
        raise ValueError(f"{where}: netcl arrays are immutable; pass inplace=False to get the "
                         "updated array returned")


def place(arr, mask, vals, *, inplace=True):
    """arr with the places where mask is true set to vals (repeated as needed, in order);
    pass inplace=False (arrays are immutable).

    >>> jnp.place(jnp.zeros(4), jnp.asarray([1, 0, 1, 1]), jnp.asarray([7.0, 8.0]),
    ...           inplace=False)     # [7., 0., 8., 7.]
    """
    _no_inplace(inplace, "place")
    arr = asarray_arg(arr, "place")
    m = asarray_arg(mask, "place")
    v = jnp.ravel(asarray_arg(vals, "place"))
    if tuple(m.shape) != tuple(arr.shape):
        raise ValueError(f"place: mask shape {tuple(m.shape)} differs from arr shape "
                         f"{tuple(arr.shape)}")
    if v.size == 0:
        raise ValueError("place: vals must not be empty")
    mf = jnp.ravel(m) if m.dtype == dtypes.bool_ else jnp.not_equal(jnp.ravel(m), 0)
    pos = jnp.subtract(jnp.cumsum(mf.astype(dtypes.int32)), 1)
    got = jnp.take(v.astype(arr.dtype), jnp.remainder(jnp.maximum(pos, 0), v.size))
    return jnp.reshape(jnp.where(mf, got, jnp.ravel(arr)), arr.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the flat positions `ind` set to v (repeated or cut to len(ind)); pass
    inplace=False. mode None or 'clip' clips out-of-range indices (None counting negative
    ones from the end, as jnp.put), 'wrap' wraps.

    >>> jnp.put(jnp.zeros(4), jnp.asarray([0, 2]), 5.0, inplace=False)   # [5., 0., 5., 0.]
    """
    _no_inplace(inplace, "put")
    if mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported; use 'wrap' or 'clip'")
    if mode not in (None, "wrap", "clip"):
        raise ValueError(f"put: mode must be None, 'wrap' or 'clip', got {mode!r}")
    a = asarray_arg(a, "put")
    i = jnp.ravel(jnp.asarray(ind) if isinstance(ind, (list, tuple)) else asarray_arg(ind, "put"))
    if i.dtype.kind not in "iu":
        raise TypeError(f"put: ind must be integer, got {i.dtype}")
    vv = jnp.ravel(jnp.asarray(v) if isinstance(v, (list, tuple)) else asarray_arg(v, "put"))
    if vv.size == 0 or i.size == 0:
        return a
    if vv.size < i.size:
        vv = jnp.tile(vv, -(-i.size // vv.size))
    vv = vv[:i.size].astype(a.dtype)
    n = a.size
    flat = jnp.ravel(a)
    if mode == "wrap":
        i = jnp.remainder(i, n)
    elif mode == "clip":
        i = jnp.clip(i, 0, n - 1)
    else:   # as jnp.put: unravel_index's clipping, negative indices from the end
        i = jnp.clip(i, -n, n - 1)
        i = jnp.where(jnp.less(i, 0), jnp.add(i, n), i)
    return jnp.reshape(flat.at[i].set(vv, mode="drop"), a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with arr[..., indices[..., j, ...], ...] = values along axis (take_along_axis's
    inverse); pass inplace=False.

    >>> jnp.put_along_axis(jnp.zeros((2, 2)), jnp.asarray([[1], [0]]), 1.0, axis=1,
    ...                    inplace=False)     # [[0., 1.], [1., 0.]]
    """
    _no_inplace(inplace, "put_along_axis")
    arr = asarray_arg(arr, "put_along_axis")
    idx = asarray_arg(indices, "put_along_axis")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"put_along_axis: indices must be integer, got {idx.dtype}")
    if axis is None:
        arr2 = jnp.ravel(arr)
        if idx.ndim != 1:
            raise ValueError("put_along_axis: with axis=None, indices must be 1-d")
        return jnp.reshape(put_along_axis(arr2, idx, values, 0, inplace=False, mode=mode),
                           arr.shape)
    axis = _axis(axis, arr.ndim, "put_along_axis")
    if idx.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices must have arr's rank {arr.ndim}, got "
                         f"shape {tuple(idx.shape)}")
    shape = list(jnp.broadcast_shapes(
        tuple(1 if d == axis else s for d, s in enumerate(idx.shape)),
        tuple(1 if d == axis else s for d, s in enumerate(arr.shape))))
    shape[axis] = idx.shape[axis]
    shape = tuple(shape)
    vals = asarray_arg(values, "put_along_axis")
    jnp.broadcast_shapes(tuple(vals.shape), shape)
    full = []
    for d in range(arr.ndim):
        if d == axis:
            k = jnp.broadcast_to(idx, shape)
            k = jnp.where(jnp.less(k, 0), jnp.add(k, arr.shape[axis]), k)
            full.append(k)
        else:
            full.append(jnp.broadcast_to(jnp.reshape(jnp.arange(shape[d]), tuple(
                shape[d] if e == d else 1 for e in range(arr.ndim))), shape))
    return arr.at[tuple(full)].set(jnp.broadcast_to(vals, shape).astype(arr.dtype),
                                   mode="drop" if mode is None else mode)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal (a[i, i, ...]) set to val (repeated as needed); pass
    inplace=False. All dimensions must be equal when a.ndim > 2.

    >>> jnp.fill_diagonal(jnp.zeros((2, 2)), 3.0, inplace=False)    # [[3., 0.], [0., 3.]]
    """
    _no_inplace(inplace, "fill_diagonal")
    if bool_arg(wrap, "fill_diagonal", "wrap"):
        raise NotImplementedError("fill_diagonal: wrap=True is not supported")
    a = asarray_arg(a, "fill_diagonal")
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: a must be at least 2-d, got shape {tuple(a.shape)}")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions of a must be equal when a.ndim > 2, "
                         f"got shape {tuple(a.shape)}")
    v = jnp.ravel(asarray_arg(val, "fill_diagonal"))
    n = min(a.shape)
    if n == 0 or v.size == 0:
        return a
    if v.size < n:
        v = jnp.tile(v, -(-n // v.size))
    i = jnp.arange(n)
    return a.at[(i,) * a.ndim].set(v[:n].astype(a.dtype))


def trim_zeros(filt, trim="fb", axis=None):
    """filt (1-d, concrete) without its leading ('f') and/or trailing ('b') zeros.

    >>> jnp.trim_zeros(jnp.asarray([0, 1, 2, 0]))    # [1, 2]
    """
    if not isinstance(trim, str) or not set(trim.lower()) <= {"f", "b"}:
        raise ValueError(f"trim_zeros: trim must be a string of 'f' and 'b', got {trim!r}")
    if axis is not None:
        raise NotImplementedError("trim_zeros: axis= is not supported")
    f = asarray_arg(filt, "trim_zeros")
    if f.ndim != 1:
        raise ValueError(f"trim_zeros: filt must be 1-d, got shape {tuple(f.shape)}")
    if _traced(f):
        raise TypeError("trim_zeros: filt must be concrete (the result's shape depends on it)")
    nz = np.nonzero(np.asarray(f))[0]
    if nz.size == 0:
        return f[:0]
    lo = int(nz[0]) if "f" in trim.lower() else 0
    hi = int(nz[-1]) + 1 if "b" in trim.lower() else f.shape[0]
    return f[lo:hi]
