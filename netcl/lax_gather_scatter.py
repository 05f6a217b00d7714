"""jax.lax.gather and the scatter family in JAX's signature (dimension numbers, slice sizes,
out-of-bounds modes), beside netcl's own take-along-axis form.

netcl.lax.gather / scatter / scatter_add / scatter_mul / scatter_min / scatter_max /
scatter_sub / scatter_apply accept both forms:

  netcl's:  gather(operand, indices, axis, batch_dims=0)
            scatter_add(operand, indices, updates, axis, batch_dims=0)
  JAX's:    gather(operand, start_indices, GatherDimensionNumbers(...), slice_sizes, *,
                   mode=None, fill_value=None, ...)
            scatter_add(operand, scatter_indices, updates, ScatterDimensionNumbers(...), *,
                        mode=None, ...)

A dimension-numbers record (netcl's or anything with its fields), or the keywords
dimension_numbers= / slice_sizes=, select JAX's form. It is built from netcl operations, so
grad, jit and vmap go through it: for every output element (gather) or update element
(scatter) the flat index into the raveled operand is computed (start indices, clamped or
checked per mode, plus window offsets and batching iotas), then one take-along-axis gather
or one scatter on the raveled operand does the work. XLA's semantics, as JAX documents them:

  gather   CLIP and PROMISE_IN_BOUNDS (the default) clamp each start so the whole window is
           in bounds; FILL_OR_DROP gives fill_value (NaN for inexact dtypes, the minimum for
           signed, the maximum for unsigned integers, True for bool) for windows that are
           not wholly in bounds.
  scatter  CLIP clamps; FILL_OR_DROP (the default) and PROMISE_IN_BOUNDS drop the windows
           that are not wholly in bounds (routed to a spare slot past the end that is cut
           off afterwards).

The index vector is the last dimension of the indices, as in JAX.

>>> dn = netcl.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
...                                       start_index_map=(0,))
>>> netcl.lax.gather(jnp.array([10, 11, 12]), jnp.array([[2], [0]]), dn, (1,))   # [12 10]
"""
import numpy as np

from . import numpy as jnp
from .core import dtypes
from .lax_extras_util import arr as _arr, ints as _ints
from .lax_more import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers

__all__ = ["install", "jax_gather", "jax_scatter_apply"]

_GATHER_FIELDS = GatherDimensionNumbers._fields
_SCATTER_FIELDS = ScatterDimensionNumbers._fields


# ---- argument checks ---------------------------------------------------------------------------

def _is_record(v, fields):
    """Whether v is a dimension-numbers record (netcl's, JAX's, or any object with the
    three leading fields)."""
    return v is not None and all(hasattr(v, f) for f in fields[:3])


def _record(v, fields, where):
    if not _is_record(v, fields):
        raise TypeError(f"{where}: dimension_numbers must be a "
                        f"{'Gather' if fields is _GATHER_FIELDS else 'Scatter'}"
                        f"DimensionNumbers, got {type(v).__name__} {v!r}")
    return {f: _ints(getattr(v, f, ()), where, f"dimension_numbers.{f}") for f in fields}


def _mode(mode, where):
    try:
        m = GatherScatterMode.from_any(mode)
    except ValueError:
        raise ValueError(f"{where}: unknown mode {mode!r} (GatherScatterMode, 'clip', 'fill', "
                         "'drop', 'promise_in_bounds' or None)") from None
    if m is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{where}: mode ONE_HOT is not supported")
    return m


def _dims_ok(dims, rank, where, name, sorted_=False):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{where}: {name} must not repeat; got {dims}")
    if sorted_ and list(dims) != sorted(dims):
        raise TypeError(f"{where}: {name} must be sorted; got {dims}")
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"{where}: {name} {dims} out of range [0, {rank})")


def _index_operand(indices, where, name):
    idx = _arr(indices, where, name)
    if dtypes.kind(idx.dtype) not in "iu":
        raise TypeError(f"{where}: {name} must be integers, got {idx.dtype}")
    if idx.ndim == 0:
        raise TypeError(f"{where}: {name} must have at least one dimension (the index "
                        "vector is its last), got a 0-d array")
    return idx


def _check_batching(where, x, idx, op_bdims, idx_bdims, names):
    _dims_ok(op_bdims, x.ndim, where, names[0], sorted_=True)
    _dims_ok(idx_bdims, idx.ndim - 1, where, names[1])
    if len(op_bdims) != len(idx_bdims):
        raise TypeError(f"{where}: {names[0]} {op_bdims} and {names[1]} {idx_bdims} must "
                        "have equal lengths")
    a = tuple(x.shape[d] for d in op_bdims)
    b = tuple(idx.shape[d] for d in idx_bdims)
    if a != b:
        raise TypeError(f"{where}: operand batching dimensions {op_bdims} of shape {a} differ "
                        f"from the indices' batching dimensions {idx_bdims} of shape {b}")


# ---- the flat index ----------------------------------------------------------------------------

def _to_int32(s):
    """Integer indices as int32, saturated first (an int64 index of 2**40 stays out of
    bounds instead of wrapping into range)."""
    dt = np.dtype(s.dtype)
    if dt == np.int32:
        return s
    if dt.itemsize >= 4:
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -2**31), min(int(info.max), 2**31 - 1)
        s = jnp.minimum(jnp.maximum(s, jnp.asarray(lo, dt)), jnp.asarray(hi, dt))
    return s.astype(jnp.int32)


def _flat_index(where, op_shape, idx, out_shape, batch_pos, window_pos, start_map, batching,
                sizes, clip):
    """(flat, valid): the int32 index into the raveled operand of every element of an array
    of `out_shape` (gather's output, scatter's updates), and where the window is wholly in
    bounds (None when `clip`, which clamps the starts instead).

    batch_pos: the out dimensions that run over idx.shape[:-1], in order; window_pos:
    {operand dim: out dim} for the window dimensions; start_map: the operand dimension of
    each index-vector entry; batching: (operand dim, index dim) pairs; sizes: the window
    size in every operand dimension."""
    from .lax import broadcast_in_dim, index_in_dim
    n = int(np.prod(op_shape, dtype=np.int64))
    if n + 1 >= 2**31:
        raise ValueError(f"{where}: operand of shape {tuple(op_shape)} has 2**31 or more "
                         "elements; netcl's gather/scatter index in int32")
    strides = [int(np.prod(op_shape[d + 1:], dtype=np.int64)) for d in range(len(op_shape))]
    bshape = tuple(idx.shape[:-1])
    # (the batching and window parts depend on shapes only: NumPy constants)
    const = np.zeros(bshape, np.int64)
    for od, bd in batching:
        ax = [1] * len(bshape)
        ax[bd] = bshape[bd]
        const = const + np.arange(bshape[bd]).reshape(ax) * strides[od]
    wdims = sorted(window_pos)
    wshape = tuple(sizes[d] for d in wdims)
    woff = np.zeros(wshape, np.int64)
    for j, d in enumerate(wdims):
        ax = [1] * len(wshape)
        ax[j] = wshape[j]
        woff = woff + np.arange(wshape[j]).reshape(ax) * strides[d]
    base, valid = jnp.asarray(const.astype(np.int32)), None
    for k, d in enumerate(start_map):
        s = _to_int32(index_in_dim(idx, k, idx.ndim - 1, keepdims=False))
        hi = op_shape[d] - sizes[d]
        if not clip:
            ok = (s >= 0) & (s <= hi)
            valid = ok if valid is None else valid & ok
        s = jnp.clip(s, 0, hi)
        base = base + s * jnp.int32(strides[d])
    flat = broadcast_in_dim(base, tuple(out_shape), tuple(batch_pos))
    if woff.size and woff.any():
        flat = flat + broadcast_in_dim(jnp.asarray(woff.astype(np.int32)), tuple(out_shape),
                                       tuple(window_pos[d] for d in wdims))
    if valid is not None:
        valid = broadcast_in_dim(valid, tuple(out_shape), tuple(batch_pos))
    return flat, valid


# ---- gather ------------------------------------------------------------------------------------

def _default_fill(dtype):
    if dtype == dtypes.bool_:
        return True
    k = dtypes.kind(dtype)
    if k == "i":
        return int(np.iinfo(np.dtype(dtype)).min)
    if k == "u":
        return int(np.iinfo(np.dtype(dtype)).max)
    return np.nan


def jax_gather(operand, start_indices, dimension_numbers, slice_sizes, *, mode=None,
               fill_value=None):
    """jax.lax.gather with XLA's semantics (see the module docstring).

    >>> x = jnp.arange(12.0).reshape(3, 4)
    >>> dn = netcl.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                                       start_index_map=(0,))
    >>> netcl.lax.gather(x, jnp.array([[2], [0]]), dn, (1, 4))      # rows 2 and 0
    """
    from .primitives.structural.gather_scatter import gather as take_along
    from .lax import reshape, select, full
    where = "gather"
    x = _arr(operand, where)
    idx = _index_operand(start_indices, where, "start_indices")
    dn = _record(dimension_numbers, _GATHER_FIELDS, where)
    # (JAX's gather takes mode None as PROMISE_IN_BOUNDS, which clamps; scatter's None drops)
    m = _mode(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode, where)
    sizes = _ints(slice_sizes, where, "slice_sizes")
    offset, collapsed, smap = dn["offset_dims"], dn["collapsed_slice_dims"], dn["start_index_map"]
    op_b, idx_b = dn["operand_batching_dims"], dn["start_indices_batching_dims"]
    out_rank = len(offset) + idx.ndim - 1
    _dims_ok(offset, out_rank, where, "offset_dims", sorted_=True)
    _dims_ok(collapsed, x.ndim, where, "collapsed_slice_dims", sorted_=True)
    _dims_ok(smap, x.ndim, where, "start_index_map")
    _check_batching(where, x, idx, op_b, idx_b,
                    ("operand_batching_dims", "start_indices_batching_dims"))
    if len(smap) != idx.shape[-1]:
        raise TypeError(f"{where}: start_index_map {smap} has {len(smap)} entries but the "
                        f"index vector (last dimension of start_indices, shape "
                        f"{tuple(idx.shape)}) has {idx.shape[-1]}")
    if set(collapsed) & set(op_b) or set(smap) & set(op_b):
        raise TypeError(f"{where}: operand_batching_dims {op_b} must be disjoint from "
                        f"collapsed_slice_dims {collapsed} and start_index_map {smap}")
    if len(sizes) != x.ndim:
        raise TypeError(f"{where}: slice_sizes {sizes} must have one entry per operand "
                        f"dimension (operand shape {tuple(x.shape)})")
    if len(sizes) != len(offset) + len(collapsed) + len(op_b):
        raise TypeError(f"{where}: every operand dimension must be an offset, collapsed or "
                        f"batching dimension; got slice_sizes {sizes}, offset_dims {offset}, "
                        f"collapsed_slice_dims {collapsed}, operand_batching_dims {op_b}")
    for d, s in enumerate(sizes):
        if not 0 <= s <= x.shape[d] and idx.size:
            raise TypeError(f"{where}: slice_sizes[{d}]={s} is out of range [0, "
                            f"{x.shape[d]}] for operand shape {tuple(x.shape)}")
    for d in collapsed + op_b:
        if sizes[d] != 1:
            raise TypeError(f"{where}: slice_sizes[{d}] must be 1 for a collapsed or batching "
                            f"dimension, got {sizes[d]}")
    window = [d for d in range(x.ndim) if d not in collapsed and d not in op_b]
    batch_pos = [o for o in range(out_rank) if o not in offset]
    bshape = iter(idx.shape[:-1])
    wsize = iter(sizes[d] for d in window)
    out_shape = tuple(next(wsize) if o in offset else next(bshape) for o in range(out_rank))
    if 0 in out_shape or x.size == 0:
        fill = 0 if fill_value is None else fill_value
        return full(out_shape, fill, x.dtype)
    clip = m is not GatherScatterMode.FILL_OR_DROP
    flat, valid = _flat_index(where, tuple(x.shape), idx, out_shape, batch_pos,
                              dict(zip(window, offset)), smap, list(zip(op_b, idx_b)),
                              sizes, clip)
    out = take_along(reshape(x, (x.size,)), flat, 0)
    if valid is None:
        return out
    fill = _default_fill(x.dtype) if fill_value is None else fill_value
    return select(valid, out, full(out_shape, fill, x.dtype))


# ---- scatter -----------------------------------------------------------------------------------

def _scatter_plan(where, x, idx, update_shape, dimension_numbers, mode):
    """(flat, valid) for a scatter of updates of `update_shape` into x: the flat operand
    index of every update element, and which windows land wholly in bounds (None: CLIP)."""
    dn = _record(dimension_numbers, _SCATTER_FIELDS, where)
    m = _mode(mode, where)
    uwd, ins, smap = (dn["update_window_dims"], dn["inserted_window_dims"],
                      dn["scatter_dims_to_operand_dims"])
    op_b, idx_b = dn["operand_batching_dims"], dn["scatter_indices_batching_dims"]
    urank = len(update_shape)
    if urank != len(uwd) + idx.ndim - 1:
        raise TypeError(f"{where}: updates of shape {tuple(update_shape)} must have rank "
                        f"{len(uwd) + idx.ndim - 1} (len(update_window_dims)={len(uwd)} plus "
                        f"the indices' rank {idx.ndim} minus 1)")
    _dims_ok(uwd, urank, where, "update_window_dims", sorted_=True)
    _dims_ok(ins, x.ndim, where, "inserted_window_dims", sorted_=True)
    _dims_ok(smap, x.ndim, where, "scatter_dims_to_operand_dims")
    _check_batching(where, x, idx, op_b, idx_b,
                    ("operand_batching_dims", "scatter_indices_batching_dims"))
    if len(smap) != idx.shape[-1]:
        raise TypeError(f"{where}: scatter_dims_to_operand_dims {smap} has {len(smap)} "
                        f"entries but the index vector (last dimension of scatter_indices, "
                        f"shape {tuple(idx.shape)}) has {idx.shape[-1]}")
    if set(ins) & set(op_b) or set(smap) & set(op_b):
        raise TypeError(f"{where}: operand_batching_dims {op_b} must be disjoint from "
                        f"inserted_window_dims {ins} and scatter_dims_to_operand_dims {smap}")
    if len(uwd) + len(ins) + len(op_b) != x.ndim:
        raise TypeError(f"{where}: update_window_dims {uwd}, inserted_window_dims {ins} and "
                        f"operand_batching_dims {op_b} must together cover the operand's "
                        f"{x.ndim} dimensions")
    window = [d for d in range(x.ndim) if d not in ins and d not in op_b]
    sizes = [1] * x.ndim
    for d, u in zip(window, uwd):
        sizes[d] = update_shape[u]
        if sizes[d] > x.shape[d]:
            raise TypeError(f"{where}: the update window of size {sizes[d]} (updates "
                            f"dimension {u}, shape {tuple(update_shape)}) exceeds operand "
                            f"dimension {d} of size {x.shape[d]}")
    batch_pos = [u for u in range(urank) if u not in uwd]
    want = tuple(idx.shape[:-1])
    got = tuple(update_shape[u] for u in batch_pos)
    if got != want:
        raise TypeError(f"{where}: the scatter dimensions {tuple(batch_pos)} of updates "
                        f"(shape {tuple(update_shape)}) must match the indices' batch shape "
                        f"{want}, got {got}")
    clip = m is GatherScatterMode.CLIP
    return _flat_index(where, tuple(x.shape), idx, tuple(update_shape), batch_pos,
                       dict(zip(window, uwd)), smap, list(zip(op_b, idx_b)), sizes, clip)


def _flat_scatter(where, legacy, operand, scatter_indices, updates, dimension_numbers, mode):
    """A JAX-form scatter done as netcl's form on the raveled operand (`legacy` is netcl's
    function: (operand, indices, updates, axis))."""
    from .lax import concatenate, reshape, select, slice_in_dim, full
    x = _arr(operand, where)
    idx = _index_operand(scatter_indices, where, "scatter_indices")
    u = _arr(updates, where, "updates")
    flat, valid = _scatter_plan(where, x, idx, tuple(u.shape), dimension_numbers, mode)
    if u.dtype != x.dtype:
        raise TypeError(f"{where}: updates dtype {u.dtype} differs from the operand's "
                        f"{x.dtype}")
    if u.size == 0:
        return x
    n = x.size
    xf = reshape(x, (n,))
    if valid is None:
        return reshape(legacy(xf, flat, u, 0), tuple(x.shape))
    # dropped windows land in a spare slot past the end, cut off afterwards
    xf = concatenate([xf, full((1,), 0, x.dtype)], 0)
    flat = select(valid, flat, full(flat.shape, n, flat.dtype))
    return reshape(slice_in_dim(legacy(xf, flat, u, 0), 0, n), tuple(x.shape))


def jax_scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                      mode=None):
    """jax.lax.scatter_apply: func applied at each scattered position, once per update (as
    XLA applies its combiner), in JAX's form.

    >>> dn = netcl.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> netcl.lax.scatter_apply(jnp.zeros(3), jnp.array([[0], [0]]), lambda v: v + 1, dn,
    ...                         update_shape=(2,))                   # [2. 0. 0.]
    """
    from .lax import concatenate, reshape, select, slice_in_dim, full
    from .lax_more import scatter_apply as legacy
    where = "scatter_apply"
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__}")
    x = _arr(operand, where)
    idx = _index_operand(scatter_indices, where, "scatter_indices")
    ushape = _ints(update_shape, where, "update_shape")
    flat, valid = _scatter_plan(where, x, idx, ushape, dimension_numbers, mode)
    if int(np.prod(ushape, dtype=np.int64)) == 0:
        return x
    n = x.size
    xf = reshape(x, (n,))
    if valid is not None:
        xf = concatenate([xf, full((1,), 0, x.dtype)], 0)
        flat = select(valid, flat, full(flat.shape, n, flat.dtype))
    out = legacy(xf, flat, func, 0)
    return reshape(slice_in_dim(out, 0, n) if valid is not None else out, tuple(x.shape))


# ---- the public functions: both forms ----------------------------------------------------------

def _legacy_axis(where, axis, batch_dims):
    if axis is None:
        raise TypeError(f"{where}: give either netcl's axis (and batch_dims) or JAX's "
                        "dimension_numbers")
    return axis, 0 if batch_dims is None else batch_dims


def make_gather(legacy):
    """netcl.lax.gather taking both forms; `legacy` is netcl's (operand, indices, axis,
    batch_dims) function."""
    def gather(operand, start_indices=None, dimension_numbers=None, slice_sizes=None, *,
               unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None,
               indices=None, axis=None, batch_dims=None):
        """Gather: JAX's form, gather(operand, start_indices, GatherDimensionNumbers,
        slice_sizes, *, mode=None, fill_value=None) with XLA's semantics (see
        netcl.lax_gather_scatter), or netcl's take-along-axis form, gather(operand,
        indices, axis, batch_dims=0) (indices clamped into range).

        unique_indices and indices_are_sorted are hints, accepted and not needed.

        >>> netcl.lax.gather(jnp.arange(5.0), jnp.array([3, 1]), 0)          # [3. 1.]
        >>> dn = netcl.lax.GatherDimensionNumbers((), (0,), (0,))
        >>> netcl.lax.gather(jnp.arange(5.0), jnp.array([[3], [9]]), dn, (1,),
        ...                  mode="fill")                                       # [3. nan]
        """
        if start_indices is None:
            start_indices = indices
        if start_indices is None:
            raise TypeError("gather: missing the argument start_indices")
        if _is_record(dimension_numbers, _GATHER_FIELDS) or (
                axis is None and dimension_numbers is None and slice_sizes is not None) or \
                (dimension_numbers is not None and not _is_int(dimension_numbers)):
            if slice_sizes is None:
                raise TypeError("gather: JAX's form needs slice_sizes")
            return jax_gather(operand, start_indices, dimension_numbers, slice_sizes,
                              mode=mode, fill_value=fill_value)
        if mode is not None or fill_value is not None:
            raise TypeError("gather: mode= and fill_value= belong to JAX's form (with "
                            "dimension_numbers and slice_sizes); netcl's axis form clamps")
        ax = axis if dimension_numbers is None else dimension_numbers
        nb = slice_sizes if batch_dims is None else batch_dims
        return legacy(operand, start_indices, *_legacy_axis("gather", ax, nb))
    return gather


def _is_int(v):
    try:
        int(v.__index__())
        return True
    except (AttributeError, TypeError):
        return False


def make_scatter(name, legacy):
    """netcl.lax.<name> (a scatter taking updates) accepting both forms."""
    def scatter(operand, scatter_indices=None, updates=None, dimension_numbers=None,
                batch_dims=None, *, indices_are_sorted=False, unique_indices=False, mode=None,
                indices=None, axis=None):
        if scatter_indices is None:
            scatter_indices = indices
        if scatter_indices is None or updates is None:
            raise TypeError(f"{name}: missing the argument "
                            f"{'scatter_indices' if scatter_indices is None else 'updates'}")
        if _is_record(dimension_numbers, _SCATTER_FIELDS) or (
                dimension_numbers is not None and not _is_int(dimension_numbers)):
            if batch_dims is not None:
                raise TypeError(f"{name}: batch_dims belongs to netcl's axis form; JAX's form "
                                "takes batching dimensions in ScatterDimensionNumbers")
            return _flat_scatter(name, legacy, operand, scatter_indices, updates,
                                 dimension_numbers, mode)
        if mode is not None:
            raise TypeError(f"{name}: mode= belongs to JAX's form (with "
                            "ScatterDimensionNumbers); netcl's axis form clamps")
        ax = axis if dimension_numbers is None else dimension_numbers
        return legacy(operand, scatter_indices, updates, *_legacy_axis(name, ax, batch_dims))
    scatter.__name__ = scatter.__qualname__ = name
    op = {"scatter": "replaced by", "scatter_add": "plus", "scatter_sub": "minus",
          "scatter_mul": "times", "scatter_min": "the minimum with",
          "scatter_max": "the maximum with"}[name]
    scatter.__doc__ = f"""operand with the entries at the scattered positions {op} the
        updates. JAX's form: {name}(operand, scatter_indices, updates,
        ScatterDimensionNumbers, *, mode=None) with XLA's semantics (mode None is
        FILL_OR_DROP: windows not wholly in bounds are dropped; see
        netcl.lax_gather_scatter); netcl's form: {name}(operand, indices, updates, axis,
        batch_dims=0) (indices clamped into range).

        >>> dn = netcl.lax.ScatterDimensionNumbers((), (0,), (0,))
        >>> netcl.lax.{name}(jnp.ones(3), jnp.array([[0], [2]]), jnp.array([5.0, 7.0]), dn)
        """
    return scatter


def make_scatter_apply(legacy):
    """netcl.lax.scatter_apply accepting both forms."""
    def scatter_apply(operand, scatter_indices=None, func=None, dimension_numbers=None,
                      batch_dims=None, *, update_shape=(), indices_are_sorted=False,
                      unique_indices=False, mode=None, indices=None, axis=None):
        """operand with func applied at the scattered positions, once per index. JAX's
        form: scatter_apply(operand, scatter_indices, func, ScatterDimensionNumbers, *,
        update_shape=(), mode=None); netcl's: scatter_apply(operand, indices, func, axis,
        batch_dims=0).

        >>> netcl.lax.scatter_apply(jnp.zeros(3), jnp.array([0, 0, 2]), lambda v: v + 1, 0)
        """
        if scatter_indices is None:
            scatter_indices = indices
        if scatter_indices is None or func is None:
            raise TypeError("scatter_apply: missing the argument "
                            f"{'scatter_indices' if scatter_indices is None else 'func'}")
        if _is_record(dimension_numbers, _SCATTER_FIELDS) or (
                dimension_numbers is not None and not _is_int(dimension_numbers)):
            if batch_dims is not None:
                raise TypeError("scatter_apply: batch_dims belongs to netcl's axis form")
            return jax_scatter_apply(operand, scatter_indices, func, dimension_numbers,
                                     update_shape=update_shape, mode=mode)
        if mode is not None:
            raise TypeError("scatter_apply: mode= belongs to JAX's form (with "
                            "ScatterDimensionNumbers)")
        ax = axis if dimension_numbers is None else dimension_numbers
        return legacy(operand, scatter_indices, func,
                      *_legacy_axis("scatter_apply", ax, batch_dims))
    return scatter_apply


def install(namespace):
    """Replace netcl.lax's gather/scatter functions in `namespace` (netcl.lax's globals)
    with ones that take both forms, each wrapping the netcl-form function it replaces."""
    namespace["gather"] = make_gather(namespace["gather"])
    for name in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
                 "scatter_sub"):
        namespace[name] = make_scatter(name, namespace[name])
    namespace["scatter_apply"] = make_scatter_apply(namespace["scatter_apply"])
