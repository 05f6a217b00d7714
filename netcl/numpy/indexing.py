"""Indexing in netcl.numpy: x[...] (index parsing and the gather it becomes), and nonzero,
flatnonzero, argwhere (the index arrays a boolean mask stands for). x.at[...] updates live in
index_update.py, take/take_along_axis and diagonals/triangles in selection.py.

`x[idx]` follows NumPy's rules: ints (negative too), slices with any step, None, Ellipsis,
integer arrays (broadcast together; when advanced indices are separated by a slice, None or
Ellipsis, their dimensions go first) and boolean masks. Basic indexing (ints, slices, None,
Ellipsis) is a view in eager mode: no kernel. Integer arrays become one `gather`.

Out-of-range indices: static ones (Python ints, NumPy arrays, lists) raise IndexError naming
the axis and its size, as NumPy does; indices held in netcl arrays are only known on the
device, so, as in JAX, they are clamped into range when reading and dropped when updating
(`x.at[i].set(v)` with i out of range leaves x unchanged).
"""
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.eval import to_array
from ..core.shapes import broadcast_shapes, prod
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from ..primitives.structural.common import index32
from ._util import asarray_arg

__all__ = ["_getitem", "nonzero", "argwhere", "flatnonzero"]


def _is_array(x):
    return isinstance(x, (Array, Tracer))


def _i32(shape, value):
    return views.full(tuple(shape), int(value), dtypes.int32)


def _host_mask(m, where):
    try:
        return np.asarray(m)
    except TypeError as e:
        raise TypeError(f"{where}: a boolean mask index needs concrete values (the result's "
                        "shape depends on them), so it cannot be used under jit or vmap; use "
                        "netcl.numpy.where instead") from e


def _upload_index(host, dtype=dtypes.int32):
    """Host indices on the device: int32 to index with, or `dtype` for results (the
    default int: JAX's nonzero and tril_indices give int64 with x64)."""
    return to_array(np.asarray(host, dtype=dtype, order="C"), "indexing")


def _result_index(host):
    return _upload_index(host, dtypes.default_int_dtype())


# ---- parsing ---------------------------------------------------------------------------------

def _classify(idx, where):
    """Index entries as (kind, value): new, ellipsis, slice, bool0, int, mask (host bool),
    static (host int array) or dyn (netcl integer array)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = []
    for e in idx:
        if e is None:
            items.append(("new", None))
        elif e is Ellipsis:
            items.append(("ellipsis", None))
        elif isinstance(e, slice):
            items.append(("slice", e))
        elif isinstance(e, (bool, np.bool_)):
            items.append(("bool0", bool(e)))
        elif isinstance(e, (int, np.integer)):
            items.append(("int", int(e)))
        elif _is_array(e):
            if e.dtype == dtypes.bool_:
                h = _host_mask(e, where)
                items.append(("bool0", bool(h)) if h.ndim == 0 else ("mask", h))
            elif e.dtype.kind in "iu":
                items.append(("dyn", e))
            else:
                raise TypeError(f"{where}: indices must be integers or booleans, got an array "
                                f"of dtype {e.dtype}")
        else:
            if isinstance(e, (float, complex, str, bytes)):
                raise TypeError(f"{where}: indices must be integers, slices, None, Ellipsis or "
                                f"integer/boolean arrays, got {type(e).__name__} {e!r}")
            try:
                h = np.asarray(e)
            except Exception:
                raise TypeError(f"{where}: cannot index with an object of type "
                                f"{type(e).__name__}") from None
            if isinstance(e, (list, tuple)) and h.size == 0:
                h = h.astype(np.int32)
            if h.dtype == np.bool_:
                items.append(("bool0", bool(h)) if h.ndim == 0 else ("mask", h))
            elif h.dtype.kind in "iu":
                items.append(("int", int(h)) if h.ndim == 0 else ("static", h))
            else:
                raise TypeError(f"{where}: indices must be integers, slices, None, Ellipsis or "
                                f"integer/boolean arrays, got {type(e).__name__} of dtype "
                                f"{h.dtype}")
    return items


def _expand(shape, items, where):
    """Resolve Ellipsis and boolean masks; returns entries (kind, value, x axis or None) and
    each entry's position in the index. Positions decide whether advanced indices are
    adjacent; as in NumPy, an Ellipsis separates them even where it stands for no axis."""
    ndim = len(shape)
    if sum(k == "ellipsis" for k, _ in items) > 1:
        raise IndexError(f"{where}: an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k, _ in items if k in ("int", "slice", "static", "dyn")) + \
        sum(v.ndim for k, v in items if k == "mask")
    if consumed > ndim:
        raise IndexError(f"{where}: too many indices for array: array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    explicit = any(k == "ellipsis" for k, _ in items)
    if not explicit:
        items = items + [("ellipsis", None)]
    entries, pos, d, p = [], [], 0, 0
    for kind, v in items:
        if kind == "ellipsis":
            for _ in range(ndim - consumed):
                entries.append(("slice", slice(None), d))
                pos.append(p)
                d += 1
                p += 1
            if ndim == consumed and explicit:
                p += 1
        elif kind in ("new", "bool0"):
            entries.append((kind, v, None))
            pos.append(p)
            p += 1
        elif kind == "mask":
            k = v.ndim
            if tuple(v.shape) != tuple(shape[d:d + k]):
                raise IndexError(f"{where}: boolean index of shape {tuple(v.shape)} does not "
                                 f"match the indexed dimensions {tuple(shape[d:d + k])} (axes "
                                 f"{d} to {d + k - 1}) of an array of shape {tuple(shape)}")
            for arr in np.nonzero(v):
                entries.append(("static", arr, d))
                pos.append(p)
                d += 1
                p += 1
        else:
            entries.append((kind, v, d))
            pos.append(p)
            d += 1
            p += 1
    return entries, pos


# ---- the indexing engine -----------------------------------------------------------------------

def _normalize_dyn(i, n, mark):
    """Wrap negative device indices; with mark, also a bool mask of the in-range ones."""
    i = index32(i)
    valid = None
    if mark:
        valid = ew.and_(ew.ge(i, _i32(i.shape, -n)), ew.lt(i, _i32(i.shape, n)))
    wrapped = ew.select(ew.lt(i, _i32(i.shape, 0)), ew.add(i, _i32(i.shape, n)), i)
    return wrapped, valid


def _normalize_static(v, n, axis, where):
    v = np.asarray(v, dtype=np.int64)
    if v.size:
        bad = v[(v < -n) | (v >= n)]
        if bad.size:
            raise IndexError(f"{where}: index {int(bad.flat[0])} is out of bounds for axis "
                             f"{axis} with size {n}")
    return np.where(v < 0, v + n, v).astype(np.int32)


class _Plan:
    """What x[idx] does, worked out from shapes alone (every check happens here, before any
    work is enqueued): basic indexing as slice/rev views, then at most one gather."""
    __slots__ = ("pre", "rest", "start", "limit", "step", "rev_dims", "yshape", "kinds",
                 "xaxis", "advs", "adv_dims", "S", "p", "shape")


def _plan(shape, idx, where):
    shape = tuple(shape)
    entries, pos = _expand(shape, _classify(idx, where), where)
    nd = len(shape)
    plan = _Plan()
    plan.pre = plan.rest = None
    if any(k == "int" for k, _, _ in entries) and \
            not any(k in ("static", "dyn", "bool0") for k, _, _ in entries):
        # Basic indexing: take the ints first (x[0] of a dense array stays a dense view, so
        # dropping its axis is free), then the slices and new axes on what is left.
        start, limit = [0] * nd, list(shape)
        for kind, v, xd in entries:
            if kind == "int":
                n = shape[xd]
                if not -n <= v < n:
                    raise IndexError(f"{where}: index {v} is out of bounds for axis {xd} with "
                                     f"size {n}")
                start[xd], limit[xd] = v % n, v % n + 1
        ints = {xd for kind, _, xd in entries if kind == "int"}
        kept = tuple(s for d, s in enumerate(shape) if d not in ints)
        plan.pre = (tuple(start), tuple(limit), kept, ints)
        plan.rest = _plan(kept, tuple(v if kind == "slice" else None
                                      for kind, v, _ in entries if kind != "int"), where)
        plan.shape = plan.rest.shape
        return plan
    start, limit, step, rev_dims = [0] * nd, list(shape), [1] * nd, []
    kinds, advs, xaxis = [], {}, []
    for yd, (kind, v, xd) in enumerate(entries):
        xaxis.append(xd)
        if kind == "new":
            kinds.append("new")
        elif kind == "bool0":
            kinds.append("adv")
            advs[yd] = ("static", np.zeros(1 if v else 0, np.int32))
        elif kind == "int":
            n = shape[xd]
            if not -n <= v < n:
                raise IndexError(f"{where}: index {v} is out of bounds for axis {xd} with "
                                 f"size {n}")
            v %= n
            start[xd], limit[xd] = v, v + 1
            kinds.append("int")
        elif kind == "slice":
            n = shape[xd]
            try:
                s0, s1, s2 = v.indices(n)
            except ValueError as e:
                raise ValueError(f"{where}: {e} (axis {xd})") from None
            m = len(range(s0, s1, s2))
            if m == 0:
                start[xd] = limit[xd] = 0
            elif s2 > 0:
                start[xd], limit[xd], step[xd] = s0, s0 + (m - 1) * s2 + 1, s2
            else:
                start[xd], limit[xd], step[xd] = s0 + (m - 1) * s2, s0 + 1, -s2
                if m > 1:
                    rev_dims.append(xd)
            kinds.append("slice")
        else:
            kinds.append("adv")
            if kind == "static":  # checked and wrapped on the host
                v = _normalize_static(v, shape[xd], xd, where)
            advs[yd] = (kind, v)
    sliced = [-(-(lim - st) // sp) if lim > st else 0 for st, lim, sp in zip(start, limit, step)]
    # one dimension per entry: new axes (and 0-d booleans) become size-1 dimensions
    yshape = tuple(1 if xd is None else sliced[xd] for xd in xaxis)
    plan.start, plan.limit, plan.step, plan.rev_dims = tuple(start), tuple(limit), \
        tuple(step), tuple(rev_dims)
    plan.yshape, plan.kinds, plan.xaxis, plan.advs = yshape, kinds, xaxis, advs
    plan.adv_dims = sorted(advs)
    if not advs:
        plan.S = plan.p = None
        plan.shape = tuple(s for s, k in zip(yshape, kinds) if k != "int")
        return plan
    try:
        S = broadcast_shapes(*(tuple(advs[d][1].shape) for d in plan.adv_dims), where=where)
    except ValueError:
        raise IndexError(f"{where}: shape mismatch: indexing arrays could not be broadcast "
                         f"together with shapes "
                         f"{' '.join(str(tuple(advs[d][1].shape)) for d in plan.adv_dims)}"
                         ) from None
    adv_int = sorted(plan.adv_dims + [d for d, k in enumerate(kinds) if k == "int"])
    positions = [pos[d] for d in adv_int]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    keep = [d for d, k in enumerate(kinds) if k not in ("adv", "int")]
    plan.S = S
    plan.p = sum(1 for d in keep if d < adv_int[0]) if adjacent else 0
    out = [yshape[d] for d in keep]
    out[plan.p:plan.p] = list(S)
    plan.shape = tuple(out)
    return plan


def _execute(x, plan, mark=False):
    """Apply a plan to x; with mark=True also a bool mask over the result that is False where
    a device index was out of range (None when there is none)."""
    if plan.pre is not None:
        start, limit, kept, _ = plan.pre
        return _execute(views.reshape(views.slice(x, start, limit), kept), plan.rest, mark)
    y = views.slice(x, plan.start, plan.limit, plan.step)
    if plan.rev_dims:
        y = views.rev(y, plan.rev_dims)
    yshape, kinds, xaxis, advs = plan.yshape, plan.kinds, plan.xaxis, plan.advs
    if not advs:
        if "int" in kinds:
            return views.reshape(y, plan.shape), None
        if "new" in kinds:
            return views.broadcast_in_dim(
                y, plan.shape, tuple(i for i, k in enumerate(kinds) if k != "new")), None
        return y, None
    if len(yshape) != y.ndim:
        y = views.broadcast_in_dim(y, yshape, tuple(i for i, xd in enumerate(xaxis)
                                                     if xd is not None))
    adv_dims, S = plan.adv_dims, plan.S
    norm, valids = {}, []
    for yd in adv_dims:  # wrap negative device indices (static ones already are)
        kind, v = advs[yd]
        if kind == "static":
            norm[yd] = v
        else:
            norm[yd], valid = _normalize_dyn(v, yshape[yd], mark)
            if valid is not None:
                valids.append(valid)
    if len(adv_dims) == 1:
        (yd,) = adv_dims
        i = norm[yd]
        res = st.gather(y, _upload_index(i) if isinstance(i, np.ndarray) else i, yd)
        labels = [("y", d) for d in range(yd)] + [("s", j) for j in range(len(S))] + \
            [("y", d) for d in range(yd + 1, len(yshape))]
    else:
        others = [d for d in range(len(yshape)) if d not in advs]
        sizes = [yshape[d] for d in adv_dims]
        yt = views.transpose(y, tuple(adv_dims + others))
        yt = views.reshape(yt, (prod(sizes),) + tuple(yshape[d] for d in others))
        mult = [prod(sizes[j + 1:]) for j in range(len(sizes))]
        if all(isinstance(norm[d], np.ndarray) for d in adv_dims):
            flat = sum(np.broadcast_to(norm[d].astype(np.int64), S) * m
                       for d, m in zip(adv_dims, mult))
            flat = _upload_index(np.asarray(flat))
        else:
            flat = None
            for d, m, n in zip(adv_dims, mult, sizes):
                i = norm[d]
                if isinstance(i, np.ndarray):
                    i = _upload_index(i)
                else:  # clamp each index on its own before combining
                    i = ew.clamp(_i32(i.shape, 0), i, _i32(i.shape, max(n - 1, 0)))
                i = views.broadcast_to_rank(i, S)
                if m != 1:
                    i = ew.mul(i, _i32(S, m))
                flat = i if flat is None else ew.add(flat, i)
        res = st.gather(yt, flat, 0)
        labels = [("s", j) for j in range(len(S))] + [("y", d) for d in others]
    # drop the int dimensions (res is a fresh dense array: a free reshape), then place S
    keep_labels = [lab for lab in labels if not (lab[0] == "y" and kinds[lab[1]] == "int")]
    if len(keep_labels) != len(labels):
        res = views.reshape(res, tuple(s for s, lab in zip(res.shape, labels)
                                       if lab in keep_labels))
    target = [("y", d) for d, k in enumerate(kinds) if k not in ("adv", "int")]
    target[plan.p:plan.p] = [("s", j) for j in range(len(S))]
    res = views.transpose(res, tuple(keep_labels.index(t) for t in target))
    mask = None
    if valids:
        ok = None
        for v in valids:
            v = views.broadcast_to_rank(v, S)
            ok = v if ok is None else ew.and_(ok, v)
        mask = views.broadcast_in_dim(ok, res.shape, tuple(range(plan.p, plan.p + len(S))))
    return res, mask


def _getitem(x, idx):
    """x[idx] with NumPy's indexing rules (see the module docstring).

    Boolean masks are copied to the host to count their True entries (the result's shape
    depends on them), so they are not allowed under jit or vmap; use `where` there.
    """
    x = asarray_arg(x, "__getitem__")
    return _execute(x, _plan(x.shape, idx, "__getitem__"))[0]



# ---- nonzero and friends (host) -----------------------------------------------------------------

def _host_bool(a, where):
    if _is_array(a):
        return _host_mask(a, where) != 0
    h = np.asarray(a)
    if dtypes.kind(h.dtype) not in "biuf":
        raise TypeError(f"{where}: expected a numeric array, got {type(a).__name__}")
    return h != 0


def _sized(idx, size, fill_value):
    if size is None:
        return idx
    size = operator.index(size)
    if len(idx) >= size:
        return idx[:size]
    fill = 0 if fill_value is None else fill_value
    return np.concatenate([idx, np.full(size - len(idx), fill, idx.dtype)])


def nonzero(a, size=None, fill_value=None):
    """Indices of the non-zero elements, one array of the default int (int64 with x64) per
    dimension.

    The values are copied to the host to count them (the result's shape depends on them),
    so this is not allowed under jit or vmap. `size` truncates or pads (with `fill_value`,
    default 0) the result to a fixed length.
    """
    h = _host_bool(a, "nonzero")
    if h.ndim == 0:
        raise ValueError("nonzero: calling nonzero on 0-d arrays is not allowed; use "
                         "atleast_1d(a).nonzero()")
    return tuple(_result_index(_sized(i, size, fill_value)) for i in np.nonzero(h))


def flatnonzero(a, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened array (host-side count, as nonzero)."""
    h = _host_bool(a, "flatnonzero").reshape(-1)
    return _result_index(_sized(np.flatnonzero(h), size, fill_value))


def argwhere(a, size=None, fill_value=None):
    """(count, ndim) array (the default int) of the indices of non-zero elements (host-side
    count).

    >>> jnp.argwhere(jnp.asarray([0, 3, 4]))      # [[1], [2]]
    """
    h = _host_bool(a, "argwhere")
    res = np.argwhere(h)
    if size is not None:
        size = operator.index(size)
        fill = 0 if fill_value is None else fill_value
        res = res[:size] if len(res) >= size else np.concatenate(
            [res, np.full((size - len(res), res.shape[1]), fill, res.dtype)])
    return _result_index(res.reshape(-1, h.ndim))
