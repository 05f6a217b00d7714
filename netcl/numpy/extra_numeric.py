"""More jax.numpy functions composed from other netcl.numpy operations: products (vecdot,
matvec, vecmat, block), applying functions (apply_along_axis, apply_over_axes, vectorize,
fromfunction), sorting (lexsort, partition, argpartition) and sets (setdiff1d, union1d,
intersect1d, unique_values, unique_counts, unique_inverse, unique_all). Polynomials,
statistics, signals and windows: signals.py.

Everything binds existing primitives, so grad, jit and vmap work through these; arguments are
checked before any kernel runs.

>>> import netcl.numpy as jnp
>>> jnp.union1d(jnp.asarray([3, 1]), jnp.asarray([2, 1]))               # [1, 2, 3]
"""
from collections import namedtuple

import numpy as np

from ..core import dtypes
from .. import numpy as jnp
from ._composite_util import bool_arg, int_arg, is_array, scalar_arg
from ._util import asarray_arg
from .extra_ops import _axis, _shape_arg, _sized_nonzero, _traced

__all__ = ["vecdot", "matvec", "vecmat", "block", "apply_along_axis", "apply_over_axes",
           "vectorize", "fromfunction", "lexsort", "partition", "argpartition", "setdiff1d",
           "union1d", "intersect1d", "unique_values", "unique_counts", "unique_inverse",
           "unique_all"]


def _arr(x, where):
    return asarray_arg(jnp.asarray(x) if isinstance(x, (list, tuple)) else x, where)


# ---- products -----------------------------------------------------------------------------------

def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Dot products of vectors along `axis` (the other dimensions broadcast), x1 conjugated
    where complex (the array API's vecdot, as JAX).

    >>> jnp.vecdot(jnp.ones((2, 3)), jnp.arange(3.0))    # [3., 3.]
    """
    a, b = asarray_arg(x1, "vecdot"), asarray_arg(x2, "vecdot")
    ax_a, ax_b = _axis(axis, a.ndim, "vecdot"), _axis(axis, b.ndim, "vecdot")
    if a.shape[ax_a] != b.shape[ax_b]:
        raise ValueError(f"vecdot: axes of length {a.shape[ax_a]} and {b.shape[ax_b]} differ "
                         f"(shapes {tuple(a.shape)} and {tuple(b.shape)})")
    a, b = jnp.moveaxis(a, ax_a, -1), jnp.moveaxis(b, ax_b, -1)
    jnp.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if a.dtype == b.dtype == dtypes.bool_:   # bool dot products are bools (any of and)
        return jnp.any(jnp.logical_and(a, b), axis=-1)
    return jnp.sum(jnp.multiply(jnp.conj(a), b), axis=-1)


def matvec(x1, x2, /):
    """Matrix-vector products over the last axes: (..., m, n) with (..., n) gives (..., m).

    >>> jnp.matvec(jnp.eye(2), jnp.asarray([1.0, 2.0]))    # [1., 2.]
    """
    a, b = asarray_arg(x1, "matvec"), asarray_arg(x2, "matvec")
    if a.ndim < 2 or b.ndim < 1:
        raise ValueError(f"matvec: x1 must be at least 2-d and x2 at least 1-d, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"matvec: shapes {tuple(a.shape)} and {tuple(b.shape)} do not match "
                         "in the contracted dimension")
    jnp.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-1]))
    return jnp.matmul(a, jnp.expand_dims(b, -1))[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix products over the last axes: (..., m) with (..., m, n) gives (..., n).

    >>> jnp.vecmat(jnp.asarray([1.0, 2.0]), jnp.eye(2))    # [1., 2.]
    """
    a, b = asarray_arg(x1, "vecmat"), asarray_arg(x2, "vecmat")
    if a.ndim < 1 or b.ndim < 2:
        raise ValueError(f"vecmat: x1 must be at least 1-d and x2 at least 2-d, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"vecmat: shapes {tuple(a.shape)} and {tuple(b.shape)} do not match "
                         "in the contracted dimension")
    jnp.broadcast_shapes(tuple(a.shape[:-1]), tuple(b.shape[:-2]))
    return jnp.matmul(jnp.expand_dims(a, -2), b)[..., 0, :]


def block(arrays):
    """Assemble an array from nested lists of blocks: the innermost lists join along the last
    axis, the next along the one before, ...

    >>> jnp.block([[jnp.eye(2), jnp.zeros((2, 1))]]).shape     # (2, 3)
    """
    def depth(x, path):
        if isinstance(x, tuple):
            raise TypeError(f"block: {path} is a tuple; only lists may be nested")
        if isinstance(x, list):
            if not x:
                raise ValueError(f"block: {path} is an empty list")
            ds = [depth(e, f"{path}[{i}]") for i, e in enumerate(x)]
            if len(set(d for d, _ in ds)) != 1:
                raise ValueError(f"block: list depths are mismatched at {path}")
            return ds[0][0] + 1, max(m for _, m in ds)
        a = asarray_arg(x, "block")
        return 0, a.ndim

    d, maxdim = depth(arrays, "arrays")
    ndim = max(d, maxdim)

    def build(x, level):
        if isinstance(x, list):
            return jnp.concatenate([build(e, level + 1) for e in x], axis=-(d - level))
        a = asarray_arg(x, "block")
        return jnp.reshape(a, (1,) * (ndim - a.ndim) + tuple(a.shape))

    return build(arrays, 0)


# ---- applying functions -------------------------------------------------------------------------

def _callable(f, where, arg):
    if not callable(f):
        raise TypeError(f"{where}: {arg} must be callable, got {type(f).__name__}")


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-d slices of arr along axis (by vmap over the other axes).

    >>> jnp.apply_along_axis(jnp.sum, 1, jnp.ones((2, 3)))     # [3., 3.]
    """
    from .. import vmap
    _callable(func1d, "apply_along_axis", "func1d")
    arr = asarray_arg(arr, "apply_along_axis")
    axis = _axis(axis, arr.ndim, "apply_along_axis")

    def f(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, arr.ndim - axis):
        f = vmap(f, in_axes=i, out_axes=-1)
    for _ in range(axis):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func, a, axes):
    """a = func(a, axis) for each axis in turn, keeping the rank (a reduced axis is kept
    with length 1).

    >>> jnp.apply_over_axes(jnp.sum, jnp.ones((2, 3)), [0, 1])    # [[6.]]
    """
    _callable(func, "apply_over_axes", "func")
    a = asarray_arg(a, "apply_over_axes")
    axes = [axes] if isinstance(axes, (int, np.integer)) else axes
    if not isinstance(axes, (list, tuple)):
        raise TypeError(f"apply_over_axes: axes must be an int or a sequence of ints, got "
                        f"{type(axes).__name__}")
    axes = [_axis(ax, a.ndim, "apply_over_axes", "axes") for ax in axes]
    for ax in axes:
        b = func(a, ax)
        if b.ndim == a.ndim:
            a = b
        elif b.ndim == a.ndim - 1:
            a = jnp.expand_dims(b, ax)
        else:
            raise ValueError("apply_over_axes: func must return an array of the same rank or "
                             "one less")
    return a


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """A function that applies pyfunc (written for scalars) elementwise over broadcast
    arguments, by vmap. `excluded` names positional indices or keywords passed through as
    they are; `signature=` is not supported.

    >>> f = jnp.vectorize(lambda a, b: jnp.where(a > b, a - b, a + b))
    >>> f(jnp.asarray([1.0, 5.0]), 2.0)     # [3., 3.]
    """
    import functools
    from .. import tree_util, vmap
    _callable(pyfunc, "vectorize", "pyfunc")
    if signature is not None:
        raise NotImplementedError("vectorize: signature= is not supported")
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, (int, str)):
            raise TypeError(f"vectorize: excluded must hold ints and strings, got {e!r}")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in excluded}
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        pos = [i for i in range(len(args)) if i not in excluded]
        names = [k for k in kwargs if k not in excluded]
        vals = [asarray_arg(jnp.asarray(args[i]) if isinstance(args[i], (list, tuple))
                            else args[i], "vectorize") for i in pos] + \
            [asarray_arg(kwargs[k], "vectorize") for k in names]
        shape = jnp.broadcast_shapes(*[tuple(v.shape) for v in vals]) if vals else ()

        def call(*flat):
            a = list(args)
            for i, v in zip(pos, flat):
                a[i] = v
            for i, v in fixed.items():
                a[i] = v
            kw = dict(fixed_kw)
            kw.update(zip(names, flat[len(pos):]))
            return pyfunc(*a, **kw)

        if not shape:
            return call(*vals)
        size = int(np.prod(shape))
        flat = [jnp.reshape(jnp.broadcast_to(v, shape), (size,)) for v in vals]
        out = vmap(call)(*flat)
        return tree_util.tree_map(lambda o: jnp.reshape(o, shape + tuple(o.shape[1:])), out)

    return wrapped


def fromfunction(function, shape, *, dtype=None, **kwargs):
    """An array of `shape` whose element at (i, j, ...) is function(i, j, ...) (applied with
    vmap to index arrays of `dtype`, default the default float: float64 with x64, as in
    JAX).

    >>> jnp.fromfunction(lambda i, j: i + j, (2, 2))    # [[0., 1.], [1., 2.]]
    """
    from .. import vmap
    _callable(function, "fromfunction", "function")
    shape = _shape_arg(shape, "fromfunction")
    dt = dtypes.default_float_dtype() if dtype is None else \
        dtypes.canonicalize(dtype, where="fromfunction")
    nd = len(shape)

    def f(*idx):
        return function(*idx, **kwargs)
    for i in range(nd - 1, -1, -1):
        f = vmap(f, in_axes=tuple(0 if j == i else None for j in range(nd)))
    return f(*[jnp.arange(s, dtype=dt) for s in shape])


# ---- sorting ------------------------------------------------------------------------------------

def lexsort(keys, axis=-1):
    """Indices that sort by several keys: the last key is the primary one (stable).

    >>> jnp.lexsort((jnp.asarray([1, 0, 1]), jnp.asarray([0, 0, 1])))    # [1, 0, 2]
    """
    if is_array(keys):
        if keys.ndim == 0:
            raise TypeError("lexsort: keys must be a sequence of arrays or an array of rank >= 1")
        keys = [keys[i] for i in range(keys.shape[0])]
    if not isinstance(keys, (list, tuple)) or not keys:
        raise TypeError("lexsort: keys must be a non-empty sequence of arrays")
    ks = [asarray_arg(k, "lexsort") for k in keys]
    shape = tuple(ks[0].shape)
    for k in ks:
        if tuple(k.shape) != shape:
            raise ValueError(f"lexsort: all keys must have one shape, got {tuple(k.shape)} and "
                             f"{shape}")
    if not shape:
        raise ValueError("lexsort: keys must be at least 1-d")
    axis = _axis(axis, len(shape), "lexsort")
    idx = jnp.argsort(ks[0], axis=axis, stable=True)
    for k in ks[1:]:
        order = jnp.argsort(jnp.take_along_axis(k, idx, axis=axis), axis=axis, stable=True)
        idx = jnp.take_along_axis(idx, order, axis=axis)
    return idx


def _kth(a, kth, axis, where):
    a = asarray_arg(a, where)
    if dtypes.is_complex(a.dtype):      # JAX's NotImplementedError (its top_k refuses them)
        raise NotImplementedError(f"{where}: a of shape {tuple(a.shape)} and dtype {a.dtype} "
                                  f"is complex; jnp.{where} of complex numbers is not "
                                  "implemented, as in JAX (jnp.sort orders them)")
    if a.ndim == 0:
        raise ValueError(f"{where}: a must be at least 1-d")
    axis = _axis(axis, a.ndim, where)
    kth = int_arg(kth, where, "kth")
    n = a.shape[axis]
    if not -n <= kth < n:
        raise ValueError(f"{where}: kth {kth} is out of bounds for axis {axis} of length {n}")
    return a, axis


def partition(a, kth, axis=-1):
    """a rearranged along axis so that the element at kth is where sorting would put it,
    smaller ones before it and larger ones after (here: fully sorted). Complex arrays raise
    NotImplementedError, as in JAX.

    >>> jnp.partition(jnp.asarray([3, 1, 2]), 1)[1]    # 2
    """
    a, axis = _kth(a, kth, axis, "partition")
    return jnp.sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    """Indices that partition a along axis (see partition; here: a stable argsort), int32
    as JAX's (which come from lax.top_k). Complex arrays raise NotImplementedError.

    >>> jnp.argpartition(jnp.asarray([3, 1, 2]), 1)[1]   # 2
    """
    a, axis = _kth(a, kth, axis, "argpartition")
    return jnp.argsort(a, axis=axis, stable=True).astype(dtypes.int32)



# ---- sets ---------------------------------------------------------------------------------------

def _size_args(size, fill_value, where):
    if size is not None:
        size = int_arg(size, where, "size", 0)
    if fill_value is not None:
        scalar_arg(fill_value, where, "fill_value")
    return size


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values in either array (flattened); `size` as in jnp.unique.

    >>> jnp.union1d(jnp.asarray([3, 1]), jnp.asarray([2, 1]))    # [1, 2, 3]
    """
    a, b = _arr(ar1, "union1d"), _arr(ar2, "union1d")
    size = _size_args(size, fill_value, "union1d")
    both = jnp.concatenate([jnp.ravel(a), jnp.ravel(b)])
    return jnp.unique(both, size=size, fill_value=fill_value)


def _compacted(u, keep, size, fill_value, where):
    """The entries of the sorted 1-d u where keep holds, in order; with size, padded."""
    if size is None:
        if _traced(keep):
            raise TypeError(f"{where}: traced inputs need size= (the result's shape depends "
                            "on the values)")
        return u[jnp.asarray(np.nonzero(np.asarray(keep))[0].astype(np.int32))]
    idx = _sized_nonzero(keep, size)
    if fill_value is None:
        fill_value = 0
    return jnp.take(u, idx, mode="fill", fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ar1 that are not in ar2.

    >>> jnp.setdiff1d(jnp.asarray([1, 2, 3, 4]), jnp.asarray([2, 4]))    # [1, 3]
    """
    a, b = _arr(ar1, "setdiff1d"), _arr(ar2, "setdiff1d")
    bool_arg(assume_unique, "setdiff1d", "assume_unique")
    size = _size_args(size, fill_value, "setdiff1d")
    if size is None and (_traced(a) or _traced(b)):
        raise TypeError("setdiff1d: traced inputs need size= (the result's shape depends on "
                        "the values)")
    u, = (jnp.unique(jnp.ravel(a)),) if size is None else (jnp.unique(jnp.ravel(a)),)
    if u.size == 0:
        return u if size is None else jnp.full((size,), 0 if fill_value is None else fill_value,
                                               u.dtype)
    keep = jnp.isin(u, jnp.ravel(b), invert=True) if b.size else jnp.ones(u.shape, bool)
    return _compacted(u, keep, size, fill_value, "setdiff1d")


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values in both arrays; return_indices=True also gives the indices of
    their first occurrences in each (flattened) array.

    >>> jnp.intersect1d(jnp.asarray([1, 2, 3]), jnp.asarray([3, 1, 5]))    # [1, 3]
    """
    a, b = _arr(ar1, "intersect1d"), _arr(ar2, "intersect1d")
    bool_arg(assume_unique, "intersect1d", "assume_unique")
    ri = bool_arg(return_indices, "intersect1d", "return_indices")
    size = _size_args(size, fill_value, "intersect1d")
    if size is None and (_traced(a) or _traced(b)):
        raise TypeError("intersect1d: traced inputs need size= (the result's shape depends "
                        "on the values)")
    fa, fb = jnp.ravel(a), jnp.ravel(b)
    if fa.size == 0 or fb.size == 0:
        dt = jnp.result_type(fa, fb)
        n = 0 if size is None else size
        empty = jnp.full((n,), 0 if fill_value is None else fill_value, dt)
        if ri:
            z = jnp.zeros((n,), dtypes.int32)
            return empty, z, z
        return empty
    if ri:
        u1, i1 = jnp.unique(fa, return_index=True)
        u2, i2 = jnp.unique(fb, return_index=True)
    else:
        u1, u2 = jnp.unique(fa), jnp.unique(fb)
    keep = jnp.isin(u1, u2)
    vals = _compacted(u1, keep, size, fill_value, "intersect1d")
    if not ri:
        return vals
    ind1 = _compacted(i1, keep, size, 0, "intersect1d")
    pos = jnp.clip(jnp.searchsorted(u2, vals), 0, u2.shape[0] - 1)
    ind2 = jnp.take(i2, pos)
    if size is not None:
        n_real = jnp.sum(keep.astype(dtypes.int32))
        ar = jnp.arange(size)
        ind2 = jnp.where(jnp.less(ar, n_real), ind2, 0)
    return vals, ind1, ind2


_UniqueAll = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
_UniqueCounts = namedtuple("UniqueCountsResult", ["values", "counts"])
_UniqueInverse = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of x (flattened; NaNs are not merged).

    >>> jnp.unique_values(jnp.asarray([3, 1, 3]))    # [1, 3]
    """
    x = _arr(x, "unique_values")
    _size_args(size, fill_value, "unique_values")
    return jnp.unique(x, equal_nan=False, size=size,
                      fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts) of the unique values of x.

    >>> jnp.unique_counts(jnp.asarray([3, 1, 3])).counts    # [1, 2]
    """
    x = _arr(x, "unique_counts")
    _size_args(size, fill_value, "unique_counts")
    v, c = jnp.unique(x, return_counts=True, equal_nan=False,
                      size=size, fill_value=fill_value)
    return _UniqueCounts(v, c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices): values[inverse_indices] rebuilds x (inverse has x's shape).

    >>> jnp.unique_inverse(jnp.asarray([3, 1, 3])).inverse_indices    # [1, 0, 1]
    """
    x = _arr(x, "unique_inverse")
    _size_args(size, fill_value, "unique_inverse")
    v, inv = jnp.unique(x, return_inverse=True, equal_nan=False, size=size,
                        fill_value=fill_value)
    return _UniqueInverse(v, jnp.reshape(inv, x.shape))


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices, inverse_indices, counts) of the unique values of x.

    >>> jnp.unique_all(jnp.asarray([3, 1, 3])).indices    # [1, 0]
    """
    x = _arr(x, "unique_all")
    _size_args(size, fill_value, "unique_all")
    v, i, inv, c = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                              equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueAll(v, i, jnp.reshape(inv, x.shape), c)


# ---- polynomials --------------------------------------------------------------------------------
