"""jax.lax functions netcl builds from its primitives (so grad, jit and vmap go through them):
scans and reductions with a combining function (`associative_scan`, `reduce`,
`reduce_and/or/xor`, `cumlogsumexp`), indexing helpers (`index_in_dim`, `slice_in_dim`,
`dynamic_update_index_in_dim`, `index_take`, `split`, `tile`, `collapse`, `broadcast`,
`broadcasted_iota`, `select_n`), bit operations (`population_count`, `clz`, `mulhi`,
`reduce_precision`), special functions (`erfc`, `lgamma`, `digamma`, and those
netcl.scipy.special provides), implicit differentiation (`custom_root`,
`custom_linear_solve`), `conv_general_dilated_patches`, shape helpers and
`optimization_barrier`.

>>> netcl.lax.associative_scan(jnp.add, jnp.arange(5.0))     # [0, 1, 3, 6, 10]
"""
import operator

import numpy as np

from . import numpy as jnp
from .core import dtypes
from .core.array import Array
from .core.shapes import canonical_shape
from .core.tracing import Tracer
from .transforms.ad import stop_gradient, jvp as _jvp
from .tree_util import tree_flatten, tree_map, tree_unflatten
from .lax_extras_util import arr as _arr, ints as _ints

__all__ = ["associative_scan", "reduce", "reduce_and", "reduce_or", "reduce_xor",
           "cumlogsumexp", "broadcast", "broadcasted_iota", "broadcast_shapes", "collapse",
           "tile", "split", "select_n", "index_in_dim", "slice_in_dim",
           "dynamic_update_index_in_dim", "index_take", "population_count", "clz", "mulhi",
           "reduce_precision", "erfc", "lgamma", "digamma", "igamma", "igammac", "betainc",
           "bessel_i0e", "bessel_i1e", "polygamma", "zeta", "custom_root",
           "custom_linear_solve", "optimization_barrier", "conv_general_dilated_patches",
           "conv_shape_tuple", "conv_general_shape_tuple", "reduce_window_shape_tuple"]


def _axis(axis, ndim, where, arg="axis"):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{where}: {arg} must be an int, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{where}: {arg}={axis} is out of range for an operand of rank {ndim}")
    return int(axis) % max(ndim, 1)


def _sl(x, start, stop, step, axis):
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop, step)
    return x[tuple(idx)]


# ---- scans and reductions with a combining function -----------------------------------------

def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of `elems` (an array or pytree of arrays of one length along `axis`)
    with the associative function `fn(a, b)` (elementwise on arrays, as in JAX), in
    O(log n) applications of `fn` (JAX's odd/even recursion), as jax.lax.associative_scan.

    >>> netcl.lax.associative_scan(jnp.maximum, jnp.array([1.0, 3.0, 2.0]))   # [1, 3, 3]
    """
    if not callable(fn):
        raise TypeError(f"associative_scan: fn must be callable, got {type(fn).__name__}")
    flat, tree = tree_flatten(elems)
    if not flat:
        raise ValueError("associative_scan: elems has no arrays")
    flat = [_arr(e, "associative_scan", "elems") for e in flat]
    ax = _axis(axis, flat[0].ndim, "associative_scan")
    if flat[0].ndim == 0:
        raise ValueError("associative_scan: elems must have at least one axis")
    n = flat[0].shape[ax]
    for e in flat[1:]:
        if e.ndim <= ax or e.shape[ax] != n:
            raise ValueError(f"associative_scan: elems must all have length {n} along axis "
                             f"{ax}, got shapes {[tuple(f.shape) for f in flat]}")
    if reverse:
        flat = [jnp.flip(e, ax) for e in flat]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        o, t = tree_flatten(out)
        if t != tree:
            raise TypeError(f"associative_scan: fn returned structure {t}, expected {tree}")
        return o

    def scan(es):
        m = es[0].shape[ax]
        if m < 2:
            return es
        reduced = combine([_sl(e, 0, m - 1, 2, ax) for e in es],
                          [_sl(e, 1, None, 2, ax) for e in es])
        odd = scan(reduced)
        if m % 2 == 0:
            even = combine([_sl(e, 0, -1, None, ax) for e in odd],
                           [_sl(e, 2, None, 2, ax) for e in es])
        else:
            even = combine(odd, [_sl(e, 2, None, 2, ax) for e in es])
        even = [jnp.concatenate([_sl(e, 0, 1, None, ax), r], axis=ax)
                for e, r in zip(es, even)]
        return [_interleave(a, b, ax) for a, b in zip(even, odd)]
    out = scan(flat)
    if reverse:
        out = [jnp.flip(e, ax) for e in out]
    return tree_unflatten(tree, out)


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along axis (a one longer than b, or as long)."""
    nb = b.shape[axis]
    head = jnp.stack([_sl(a, 0, nb, None, axis), b], axis=axis + 1)
    shape = list(a.shape)
    shape[axis] = 2 * nb
    head = jnp.reshape(head, tuple(shape))
    if a.shape[axis] == nb:
        return head
    return jnp.concatenate([head, _sl(a, nb, None, None, axis)], axis=axis)


def _known_monoid(computation, init):
    """'add', 'mul', 'max', 'min', 'and', 'or', 'xor' where `computation` is that operation
    and `init` its identity, else None."""
    from . import lax as _lax
    names = {}
    for name, fns in (("add", (_lax.add, jnp.add, operator.add)),
                      ("mul", (_lax.mul, jnp.multiply, operator.mul)),
                      ("max", (_lax.max, jnp.maximum)), ("min", (_lax.min, jnp.minimum)),
                      ("and", (_lax.bitwise_and, jnp.bitwise_and, jnp.logical_and,
                               operator.and_)),
                      ("or", (_lax.bitwise_or, jnp.bitwise_or, jnp.logical_or, operator.or_)),
                      ("xor", (_lax.bitwise_xor, jnp.bitwise_xor, jnp.logical_xor,
                               operator.xor))):
        for f in fns:
            names[id(f)] = name
            names[id(getattr(f, "__wrapped__", f))] = name
    return names.get(id(computation))


def _tree_reduce(combine, xs, n):
    """Reduce the leading axis (length n) of the arrays xs with combine (order kept)."""
    while n > 1:
        h = n // 2
        r = combine([x[0:2 * h:2] for x in xs], [x[1:2 * h:2] for x in xs])
        if n % 2:
            r = [jnp.concatenate([a, x[2 * h:]], axis=0) for a, x in zip(r, xs)]
        xs, n = r, h + n % 2
    return [x[0] for x in xs]


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` (an array or a pytree of arrays of one shape) over `dimensions`
    with `computation(xs, ys)`, starting from `init_values`, as jax.lax.reduce. Known
    monoids (lax/jnp add, mul, max, min, bitwise and/or/xor with their identity) use
    netcl's reductions; any other computation is applied to whole arrays in a pairwise
    tree (O(log n) calls), so it must be elementwise and associative (as XLA requires).

    >>> netcl.lax.reduce(x, 0.0, netcl.lax.add, (0,))        # x.sum(0)
    >>> netcl.lax.reduce((v, i), (-jnp.inf, 0), argmax_pair, (1,))   # tuples work too
    """
    if not callable(computation):
        raise TypeError(f"reduce: computation must be callable, got "
                        f"{type(computation).__name__}")
    flat, tree = tree_flatten(operands)
    init_flat, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise ValueError(f"reduce: init_values has structure {init_tree}, operands {tree}")
    flat = [_arr(x, "reduce", "operands") for x in flat]
    shape = tuple(flat[0].shape)
    if any(tuple(x.shape) != shape for x in flat):
        raise ValueError(f"reduce: operands must have one shape, got "
                         f"{[tuple(x.shape) for x in flat]}")
    try:
        dims = tuple(sorted({_axis(d, len(shape), "reduce", "dimensions")
                             for d in dimensions}))
    except TypeError:
        raise TypeError(f"reduce: dimensions must be a sequence of ints, got "
                        f"{dimensions!r}") from None
    if len(flat) == 1:
        x, init = flat[0], init_flat[0]
        monoid = _known_monoid(computation, init)
        if monoid is not None and _is_identity(monoid, init, x.dtype):
            return tree_unflatten(tree, [_monoid_reduce(monoid, x, dims)])
    keep = [d for d in range(len(shape)) if d not in dims]
    n = int(np.prod([shape[d] for d in dims], dtype=np.int64)) if dims else 1
    moved = [jnp.reshape(jnp.transpose(x, dims + tuple(keep)), (n,) + tuple(shape[d]
                                                                          for d in keep))
             for x in flat]
    inits = [jnp.broadcast_to(jnp.asarray(i, dtype=x.dtype), tuple(shape[d] for d in keep))
             for i, x in zip(init_flat, flat)]

    def combine(a, b):
        out = computation(tree_unflatten(tree, a), tree_unflatten(tree, b))
        o, t = tree_flatten(out)
        if t != tree:
            raise TypeError(f"reduce: computation returned structure {t}, expected {tree}")
        return o
    if n == 0:
        return tree_unflatten(tree, inits)
    res = _tree_reduce(combine, moved, n)
    return tree_unflatten(tree, combine(inits, res))


_IDENTITY = {"add": 0, "mul": 1, "or": 0, "xor": 0}


def _is_identity(monoid, init, dtype):
    if isinstance(init, (Array, Tracer)):
        if isinstance(init, Tracer):
            return False
        init = np.asarray(init)
    v = np.asarray(init)
    if v.shape != ():
        return False
    if monoid in _IDENTITY:
        return v == _IDENTITY[monoid]
    if monoid == "and":
        return bool(v) if dtype == np.bool_ else int(v) == -1 or (
            dtype == np.uint32 and int(v) == 2 ** 32 - 1)
    k = dtypes.kind(dtype)
    if monoid == "max":
        return (k == "f" and v == -np.inf) or (k in "iu" and v == np.iinfo(dtype).min) or \
            (k == "b" and not v)
    if monoid == "min":
        return (k == "f" and v == np.inf) or (k in "iu" and v == np.iinfo(dtype).max) or \
            (k == "b" and bool(v))
    return False


def _monoid_reduce(monoid, x, dims):
    if monoid == "add":
        return jnp.sum(x, axis=dims, dtype=x.dtype) if x.dtype != np.bool_ else \
            jnp.any(x, axis=dims)
    if monoid == "mul":
        return jnp.prod(x, axis=dims, dtype=x.dtype) if x.dtype != np.bool_ else \
            jnp.all(x, axis=dims)
    if monoid == "max":
        return jnp.max(x, axis=dims) if x.size else jnp.full(_kept(x, dims), _lowest(x.dtype))
    if monoid == "min":
        return jnp.min(x, axis=dims) if x.size else jnp.full(_kept(x, dims), _highest(x.dtype))
    return _bitwise_reduce(monoid, x, dims, "reduce")


def _kept(x, dims):
    return tuple(s for d, s in enumerate(x.shape) if d not in dims)


def _lowest(dt):
    return -np.inf if dtypes.kind(dt) == "f" else (False if dt == np.bool_ else
                                                   np.iinfo(dt).min)


def _highest(dt):
    return np.inf if dtypes.kind(dt) == "f" else (True if dt == np.bool_ else np.iinfo(dt).max)


def _bitwise_reduce(op, x, dims, where):
    if x.dtype == np.bool_:
        if op == "and":
            return jnp.all(x, axis=dims)
        if op == "or":
            return jnp.any(x, axis=dims)
        return jnp.sum(x.astype(np.int32), axis=dims) % 2 == 1
    if dtypes.kind(x.dtype) not in "iu":
        raise TypeError(f"{where}: bitwise {op} needs a bool or integer operand, got {x.dtype}")
    fn = {"and": jnp.bitwise_and, "or": jnp.bitwise_or, "xor": jnp.bitwise_xor}[op]
    keep = [d for d in range(x.ndim) if d not in dims]
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64)) if dims else 1
    moved = jnp.reshape(jnp.transpose(x, tuple(dims) + tuple(keep)),
                        (n,) + tuple(x.shape[d] for d in keep))
    if n == 0:
        ident = -1 if op == "and" else 0
        return jnp.full(tuple(x.shape[d] for d in keep), ident, x.dtype)
    return _tree_reduce(lambda a, b: [fn(a[0], b[0])], [moved], n)[0]


def _bitwise_reduction(op):
    def reduction(operand, axes):
        where = f"reduce_{op}"
        x = _arr(operand, where)
        try:
            dims = tuple(sorted({_axis(a, x.ndim, where, "axes") for a in axes}))
        except TypeError:
            raise TypeError(f"{where}: axes must be a sequence of ints, got {axes!r}") \
                from None
        return _bitwise_reduce(op, x, dims, where)
    reduction.__name__ = f"reduce_{op}"
    reduction.__doc__ = (f"Bitwise {op} of a bool or integer operand over `axes`, as "
                         f"jax.lax.reduce_{op}.\n\n    >>> netcl.lax.reduce_{op}(jnp.array("
                         f"[True, False]), (0,))\n    ")
    return reduction


reduce_and = _bitwise_reduction("and")
reduce_or = _bitwise_reduction("or")
reduce_xor = _bitwise_reduction("xor")


def cumlogsumexp(operand, axis=0, reverse=False):
    """log(cumsum(exp(operand))) along `axis`, without overflow or underflow (an
    associative scan of logaddexp), as jax.lax.cumlogsumexp.

    >>> netcl.lax.cumlogsumexp(jnp.array([0.0, 0.0]))    # [0, log 2]
    """
    x = _arr(operand, "cumlogsumexp")
    if dtypes.kind(x.dtype) != "f":
        raise TypeError(f"cumlogsumexp: operand must be a float array, got {x.dtype}")
    _axis(axis, x.ndim, "cumlogsumexp")
    return associative_scan(jnp.logaddexp, x, reverse=reverse, axis=axis)


# ---- shapes, slices, indexing ---------------------------------------------------------------

def broadcast(operand, sizes):
    """`operand` broadcast to shape `sizes + operand.shape` (new leading dimensions), as
    jax.lax.broadcast.

    >>> netcl.lax.broadcast(jnp.ones(3), (2,)).shape     # (2, 3)
    """
    x = _arr(operand, "broadcast")
    return jnp.broadcast_to(x, canonical_shape(sizes, "broadcast", "sizes") + tuple(x.shape))


def broadcasted_iota(dtype=None, shape=None, dimension=None):
    """An array of `shape` whose values count along `dimension`, as
    jax.lax.broadcasted_iota.

    >>> netcl.lax.broadcasted_iota(jnp.int32, (2, 3), 1)    # [[0, 1, 2], [0, 1, 2]]
    """
    if dtype is None or shape is None or dimension is None:
        raise TypeError("broadcasted_iota: needs dtype, shape and dimension, got "
                        f"({dtype!r}, {shape!r}, {dimension!r})")
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"broadcasted_iota: shape must be a sequence of ints, got "
                        f"{shape!r}") from None
    if any(v < 0 for v in shape):
        raise ValueError(f"broadcasted_iota: shape {shape} has a negative dimension")
    d = _axis(dimension, len(shape), "broadcasted_iota", "dimension")
    dt = dtypes.canonicalize(dtype, where="broadcasted_iota")
    r = jnp.arange(shape[d], dtype=dt)
    sh = [1] * len(shape)
    sh[d] = shape[d]
    return jnp.broadcast_to(jnp.reshape(r, tuple(sh)), shape)


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives `shapes`, as jax.lax.broadcast_shapes.

    >>> netcl.lax.broadcast_shapes((2, 1), (3,))    # (2, 3)
    """
    return tuple(jnp.broadcast_shapes(*shapes))


def collapse(operand, start_dimension, stop_dimension=None):
    """`operand` with dimensions [start_dimension, stop_dimension) merged into one, as
    jax.lax.collapse.

    >>> netcl.lax.collapse(jnp.ones((2, 3, 4)), 0, 2).shape    # (6, 4)
    """
    x = _arr(operand, "collapse")
    stop = x.ndim if stop_dimension is None else stop_dimension
    lo = _axis(start_dimension, x.ndim, "collapse", "start_dimension")
    hi = stop % (x.ndim + 1) if -x.ndim - 1 < stop <= x.ndim else None
    if hi is None or hi < lo:
        raise ValueError(f"collapse: stop_dimension={stop_dimension} is out of range for "
                         f"start_dimension={start_dimension} and shape {tuple(x.shape)}")
    size = int(np.prod(x.shape[lo:hi], dtype=np.int64))
    return jnp.reshape(x, tuple(x.shape[:lo]) + (size,) + tuple(x.shape[hi:]))


def tile(operand, reps):
    """`operand` repeated `reps[i]` times along each dimension (len(reps) == ndim), as
    jax.lax.tile.

    >>> netcl.lax.tile(jnp.array([1, 2]), (3,))     # [1, 2, 1, 2, 1, 2]
    """
    x = _arr(operand, "tile")
    reps = _ints(reps, "tile", "reps")
    if len(reps) != x.ndim:
        raise ValueError(f"tile: reps {reps} must have one entry per dimension of the operand "
                         f"of shape {tuple(x.shape)}")
    return jnp.tile(x, reps)


def split(operand, sizes, axis=0):
    """Pieces of `operand` along `axis` of the given `sizes` (which must add up to its
    length), as jax.lax.split.

    >>> netcl.lax.split(jnp.arange(5), (2, 3))    # [[0, 1], [2, 3, 4]]
    """
    x = _arr(operand, "split")
    ax = _axis(axis, x.ndim, "split")
    try:
        sizes = [operator.index(s) for s in sizes]
    except TypeError:
        raise TypeError(f"split: sizes must be a sequence of ints, got {sizes!r}") from None
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[ax]:
        raise ValueError(f"split: sizes {tuple(sizes)} must be non-negative and add up to "
                         f"{x.shape[ax]} (axis {ax} of shape {tuple(x.shape)})")
    out, start = [], 0
    for s in sizes:
        out.append(_sl(x, start, start + s, None, ax))
        start += s
    return out


def select_n(which, *cases):
    """cases[which] elementwise: `which` is bool (two cases) or int32 (any number), a
    scalar or of the cases' shape; as jax.lax.select_n. Out-of-range indices are
    undefined in JAX; here they give the last case.

    >>> netcl.lax.select_n(jnp.array([0, 1]), jnp.zeros(2), jnp.ones(2))     # [0, 1]
    """
    if not cases:
        raise ValueError("select_n: needs at least one case")
    w = _arr(which, "select_n", "which")
    cs = [_arr(c, "select_n", "cases") for c in cases]
    shape, dt = tuple(cs[0].shape), cs[0].dtype
    for c in cs[1:]:
        if tuple(c.shape) != shape or c.dtype != dt:
            raise TypeError(f"select_n: cases must have one shape and dtype, got "
                            f"{[(tuple(c.shape), str(c.dtype)) for c in cs]}")
    if w.shape != () and tuple(w.shape) != shape:
        raise TypeError(f"select_n: which must be a scalar or have the cases' shape {shape}, "
                        f"got {tuple(w.shape)}")
    if w.dtype == np.bool_:
        if len(cs) > 2:
            raise TypeError(f"select_n: a bool which selects between at most 2 cases, got "
                            f"{len(cs)}")
        return cs[0] if len(cs) == 1 else jnp.where(w, cs[1], cs[0])
    if dtypes.kind(w.dtype) not in "iu":
        raise TypeError(f"select_n: which must be bool or an integer array, got {w.dtype}")
    out = cs[0]
    for i, c in enumerate(cs[1:], 1):
        out = jnp.where(w >= i, c, out)
    return out


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The slice at a static `index` along `axis` (kept as a size-1 dimension by default),
    as jax.lax.index_in_dim.

    >>> netcl.lax.index_in_dim(jnp.ones((3, 4)), 1, axis=0).shape     # (1, 4)
    """
    x = _arr(operand, "index_in_dim")
    ax = _axis(axis, x.ndim, "index_in_dim")
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"index_in_dim: index must be an int (use dynamic_index_in_dim for a "
                        f"traced one), got {type(index).__name__}")
    n = x.shape[ax]
    if not -n <= index < n:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {ax} of size "
                         f"{n}")
    i = int(index) % n
    out = _sl(x, i, i + 1, None, ax)
    return out if keepdims else jnp.squeeze(out, ax)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[start_index:limit_index:stride] along `axis` (static bounds, None for the
    ends, negative counted from the end), as jax.lax.slice_in_dim.

    >>> netcl.lax.slice_in_dim(jnp.arange(6), 1, 5, 2)     # [1, 3]
    """
    x = _arr(operand, "slice_in_dim")
    ax = _axis(axis, x.ndim, "slice_in_dim")
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"slice_in_dim: stride must be a positive int, got {stride!r}")
    n = x.shape[ax]
    for name, v in (("start_index", start_index), ("limit_index", limit_index)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
            raise TypeError(f"slice_in_dim: {name} must be an int or None, got {v!r}")
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    if not 0 <= start <= limit <= n:
        raise ValueError(f"slice_in_dim: bounds [{start_index}, {limit_index}) are not a valid "
                         f"slice of axis {ax} of size {n}")
    return _sl(x, start, limit, int(stride), ax)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """`operand` with the slice at (possibly traced) `index` along `axis` replaced by
    `update` (with or without that size-1 dimension), as
    jax.lax.dynamic_update_index_in_dim.

    >>> netcl.lax.dynamic_update_index_in_dim(jnp.zeros((3, 2)), jnp.ones(2), 1, 0)
    """
    from . import lax as _lax
    x = _arr(operand, "dynamic_update_index_in_dim")
    u = _arr(update, "dynamic_update_index_in_dim", "update")
    ax = _axis(axis, x.ndim, "dynamic_update_index_in_dim")
    if x.ndim == 0:
        raise ValueError("dynamic_update_index_in_dim: operand must have at least one axis")
    given = tuple(u.shape)
    if u.ndim == x.ndim - 1:
        u = jnp.expand_dims(u, ax)
    expect = tuple(x.shape[:ax]) + (1,) + tuple(x.shape[ax + 1:])
    if tuple(u.shape) != expect:
        raise ValueError(f"dynamic_update_index_in_dim: update of shape {given} "
                         f"does not fit operand {tuple(x.shape)} at one index of axis {ax}")
    if not isinstance(index, (int, np.integer)) and (
            np.ndim(index) != 0 if not isinstance(index, (Array, Tracer)) else index.ndim != 0):
        raise TypeError(f"dynamic_update_index_in_dim: index must be a scalar, got shape "
                        f"{tuple(np.shape(index))}")
    if u.dtype != x.dtype:
        raise TypeError(f"dynamic_update_index_in_dim: update dtype {u.dtype} differs from the "
                        f"operand's {x.dtype}")
    return _lax.dynamic_update_slice_in_dim(x, u, index, ax)


def index_take(src, idxs, axes):
    """src[idxs[0], idxs[1], ...] with the index arrays applied to `axes` (all of one
    length N): shape (N,) + the other dimensions, as jax.lax.index_take.

    >>> netcl.lax.index_take(x, (jnp.array([0, 1]), jnp.array([2, 0])), (0, 1))
    """
    x = _arr(src, "index_take", "src")
    axes = tuple(_axis(a, x.ndim, "index_take", "axes")
                 for a in _ints(axes, "index_take", "axes"))
    if isinstance(idxs, (Array, Tracer)) or not isinstance(idxs, (tuple, list)):
        raise TypeError(f"index_take: idxs must be a tuple of index arrays, got "
                        f"{type(idxs).__name__}")
    idxs = [_arr(i, "index_take", "idxs") for i in idxs]
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    if len(set(axes)) != len(axes):
        raise ValueError(f"index_take: axes {axes} repeat an axis")
    for i in idxs:
        if i.ndim != 1 or dtypes.kind(i.dtype) not in "iu":
            raise TypeError(f"index_take: idxs must be 1-d integer arrays, got "
                            f"{[(tuple(j.shape), str(j.dtype)) for j in idxs]}")
    if len({int(i.shape[0]) for i in idxs}) > 1:
        raise ValueError(f"index_take: idxs have different lengths "
                         f"{[int(i.shape[0]) for i in idxs]}")
    rest = tuple(d for d in range(x.ndim) if d not in axes)
    moved = jnp.transpose(x, axes + rest)
    if not idxs:
        return moved
    return moved[tuple(idxs)]


# ---- special functions ----------------------------------------------------------------------

def _special(name, sp_name, params, doc):
    """lax.<name>(<params>) forwarding to netcl.scipy.special.<sp_name> where it exists."""
    def call(*args):
        from .scipy import special
        f = getattr(special, sp_name, None)
        if f is None:
            raise NotImplementedError(f"{name}: not available (netcl.scipy.special has no "
                                      f"{sp_name} yet)")
        return f(*args)
    src = f"def {name}({', '.join(params)}):\n    return call({', '.join(params)})\n"
    env = {"call": call}
    exec(src, env)      # (an explicit signature: a wrong number of arguments names `name`)
    fn = env[name]
    fn.__doc__ = doc
    fn.__module__ = __name__
    return fn


erfc = _special("erfc", "erfc", ("x",), "1 - erf(x), accurate for large x "
                "(netcl.scipy.special.erfc).\n\n    >>> netcl.lax.erfc(jnp.array([3.0]))\n    ")
lgamma = _special("lgamma", "gammaln", ("x",), "log|Gamma(x)| (netcl.scipy.special.gammaln)."
                  "\n\n    >>> netcl.lax.lgamma(jnp.array([5.0]))     # log 24\n    ")
digamma = _special("digamma", "digamma", ("x",), "The derivative of lgamma "
                   "(netcl.scipy.special.digamma).\n\n    >>> netcl.lax.digamma(jnp.array("
                   "[1.0]))\n    ")
igamma = _special("igamma", "gammainc", ("a", "x"), "Regularised lower incomplete gamma "
                  "P(a, x) (netcl.scipy.special.gammainc, where available).")
igammac = _special("igammac", "gammaincc", ("a", "x"), "Regularised upper incomplete gamma "
                   "Q(a, x) (netcl.scipy.special.gammaincc, where available).")
betainc = _special("betainc", "betainc", ("a", "b", "x"), "Regularised incomplete beta "
                   "I_x(a, b) (netcl.scipy.special.betainc, where available).")
bessel_i0e = _special("bessel_i0e", "i0e", ("x",), "exp(-|x|) I0(x) "
                      "(netcl.scipy.special.i0e, where available).")
bessel_i1e = _special("bessel_i1e", "i1e", ("x",), "exp(-|x|) I1(x) "
                      "(netcl.scipy.special.i1e, where available).")
polygamma = _special("polygamma", "_lax_polygamma", ("m", "x"),
                     "The m-th derivative of digamma (netcl.scipy.special.polygamma, where "
                     "available).")
zeta = _special("zeta", "zeta", ("x", "q"), "Hurwitz zeta (netcl.scipy.special.zeta, where "
                "available).")


# ---- implicit differentiation ---------------------------------------------------------------

def _straight_through(x, correction):
    """x in value; correction's derivative (its value is ~0 and is dropped)."""
    return tree_map(lambda a, c: a + (c - stop_gradient(c)), x, correction)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """A root x of f (f(x) = 0) found by `solve(f, initial_guess)`, differentiated
    implicitly, as jax.lax.custom_root: the derivative with respect to what `f` closes over
    is -J^-1 (df/dparams), J = df/dx at the root, with `tangent_solve(g, y)` solving
    g(x) = y for the linear map g (the solver's iterations are not differentiated).

    >>> sqrt2 = netcl.lax.custom_root(lambda x: x * x - 2.0, 1.0, newton, scalar_solve)
    """
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise TypeError(f"custom_root: {name} must be callable, got {type(fn).__name__}")
    guess = tree_map(lambda v: stop_gradient(_arr(v, "custom_root", "initial_guess")),
                     initial_guess)
    res = solve(f, guess)
    sol, aux = res if has_aux else (res, None)
    sol = tree_map(stop_gradient, sol)
    residual = f(sol)       # ~0 in value; its derivative is df/dparams at the root

    def lin(v):     # (v may be a Python scalar: `lambda g, y: y / g(1.0)` is JAX's idiom)
        v = tree_map(lambda t, s: jnp.broadcast_to(jnp.asarray(t, dtype=s.dtype), s.shape),
                     v, sol)
        return _jvp(f, (sol,), (v,))[1]
    correction = tree_map(lambda c: -c, tangent_solve(lin, residual))
    out = _straight_through(sol, correction)
    return (out, aux) if has_aux else out


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """x with matvec(x) = b found by `solve(matvec, b)`, differentiated implicitly, as
    jax.lax.custom_linear_solve: d x = A^-1 (db - dA x), computed by applying `solve` to
    the residual b - matvec(x) (whose value is ~0), so `solve` must be differentiable in
    its right-hand side (a direct solve, or a fixed number of iterations); the solver's own
    iterations are not differentiated. (`transpose_solve`/`symmetric` are accepted; netcl
    reaches the transpose through reverse mode of `solve`.)

    >>> x = netcl.lax.custom_linear_solve(lambda v: A @ v, b, lambda mv, r: jnp.linalg.solve(A, r))
    """
    for name, fn in (("matvec", matvec), ("solve", solve)):
        if not callable(fn):
            raise TypeError(f"custom_linear_solve: {name} must be callable, got "
                            f"{type(fn).__name__}")
    b = tree_map(lambda v: _arr(v, "custom_linear_solve", "b"), b)
    res = solve(matvec, tree_map(stop_gradient, b))
    x, aux = res if has_aux else (res, None)
    x = tree_map(stop_gradient, x)
    residual = tree_map(lambda bb, m: bb - m, b, matvec(x))
    correction = solve(matvec, residual)
    if has_aux:
        correction = correction[0]
    out = _straight_through(x, correction)
    return (out, aux) if has_aux else out


def optimization_barrier(operand):
    """`operand` itself (a pytree of arrays), as jax.lax.optimization_barrier: JAX uses it
    to stop XLA moving computations across it; netcl's jit does not move computations
    across a function's data dependencies anyway, and offers no stronger barrier.

    >>> x, y = netcl.lax.optimization_barrier((x, y))
    """
    return operand


from .lax_bits import *  # noqa: E402,F401,F403
from .lax_conv_extras import *  # noqa: E402,F401,F403
