"""Indexing in netcl.numpy: x[...], x.at[...], take, take_along_axis, nonzero and friends,
diagonal/diag, tril/triu, trace.

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
from ..core.shapes import broadcast_shapes, normalize_axis, prod
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from ._util import asarray_arg

__all__ = ["_getitem", "_IndexUpdateHelper", "take", "take_along_axis", "nonzero", "argwhere",
           "flatnonzero", "diagonal", "diag", "diagflat", "tril", "triu", "trace",
           "diag_indices", "diag_indices_from", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from"]


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


def _upload_index(host):
    return to_array(np.asarray(host, dtype=np.int32, order="C"), "indexing")


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
    if i.dtype != dtypes.int32:
        i = ew.convert_element_type(i, dtypes.int32)
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


# ---- x.at[idx] -------------------------------------------------------------------------------

_SCATTER = {"set": st.scatter_p, "add": st.scatter_add_p, "multiply": st.scatter_mul_p,
            "min": st.scatter_min_p, "max": st.scatter_max_p}


def _values_like(values, shape, x, where):
    """values cast to x's dtype and broadcast to `shape` (checked before any work)."""
    v = asarray_arg(values, where)
    shape = tuple(shape)
    vshape = tuple(v.shape)
    while len(vshape) > len(shape) and vshape[0] == 1:  # NumPy drops leading size-1 dims
        vshape = vshape[1:]
    try:
        ok = broadcast_shapes(vshape, shape, where=where) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{where}: values of shape {tuple(v.shape)} cannot be broadcast to "
                         f"the indexed shape {shape}")
    if vshape != tuple(v.shape):
        v = views.reshape(v, vshape)
    if v.dtype != x.dtype or v.weak_type != x.weak_type:
        v = ew.convert_element_type(v, x.dtype, x.weak_type)
    return views.broadcast_to_rank(v, shape)


def _single_array_index(idx):
    if isinstance(idx, tuple):
        if len(idx) != 1:
            return None
        idx = idx[0]
    if _is_array(idx):
        return idx if idx.dtype.kind in "iu" and idx.ndim >= 1 else None
    if isinstance(idx, (list, np.ndarray)):
        h = np.asarray(idx)
        return h if h.dtype.kind in "iu" and h.ndim >= 1 else None
    return None


def _update(x, idx, values, mode):
    where = f"at[].{mode}"
    x = asarray_arg(x, where)
    prim = _SCATTER[mode]
    arr = _single_array_index(idx)
    if x.ndim >= 1 and arr is not None and (isinstance(arr, np.ndarray) or mode == "add"):
        # x.at[indices] along axis 0 (embedding updates): one scatter, no flattening
        n = x.shape[0]
        shape = tuple(arr.shape) + tuple(x.shape[1:])
        if isinstance(arr, np.ndarray):
            arr = _normalize_static(arr, n, 0, where)
        v = _values_like(values, shape, x, where)
        if isinstance(arr, np.ndarray):
            i, valid = _upload_index(arr), None
        else:
            i, valid = _normalize_dyn(arr, n, True)
        if valid is not None:
            valid = views.broadcast_in_dim(valid, shape, tuple(range(valid.ndim)))
            v = ew.select(valid, v, views.full(shape, 0, v.dtype))
        return prim.bind(x, i, v, axis=0, batch_dims=0)
    plan = _plan(x.shape, idx, where)
    v = _values_like(values, plan.shape, x, where)
    box = _unit_step_box(plan, x.ndim)
    if box is not None:
        # a box of unit steps (x.at[0], x.at[:, 1:3], ...): combine on the region, write it back
        start, limit = box
        shape = tuple(b - a for a, b in zip(start, limit))
        new = views.reshape(v, shape)
        if mode != "set":
            region = views.slice(x, start, limit)
            new = _COMBINE[mode](x.dtype)(region, new)
        return st.dynamic_update_slice(x, new, start)
    # general case: find the flat positions x[idx] reads, then scatter into the flat array
    n = x.size
    sel, valid = _execute(views.reshape(st.iota(dtypes.int32, n), x.shape), plan, mark=True)
    flat_x = views.reshape(x, (n,))
    if valid is not None:  # out-of-range device indices write to a dummy slot, then dropped
        sel = ew.select(valid, sel, _i32(sel.shape, n))
        flat_x = st.pad(flat_x, views.full((), 0, x.dtype), ((0, 1, 0),))
    m = sel.size
    out = prim.bind(flat_x, views.reshape(sel, (m,)), views.reshape(v, (m,)), axis=0,
                    batch_dims=0)
    if valid is not None:
        out = views.slice(out, (0,), (n,))
    return views.reshape(out, x.shape)


_COMBINE = {
    "add": lambda dt: ew.or_ if dt == dtypes.bool_ else ew.add,
    "multiply": lambda dt: ew.and_ if dt == dtypes.bool_ else ew.mul,
    "min": lambda dt: ew.and_ if dt == dtypes.bool_ else ew.min_,
    "max": lambda dt: ew.or_ if dt == dtypes.bool_ else ew.max_,
}


def _unit_step_box(plan, ndim):
    """(start, limit) per axis when a basic index selects a box with unit steps, else None."""
    if plan.pre is not None:
        start, limit, kept_shape, ints = plan.pre
        rest = _unit_step_box(plan.rest, len(kept_shape))
        if rest is None:
            return None
        start, limit = list(start), list(limit)
        for d, a, b in zip([d for d in range(ndim) if d not in ints], *rest):
            start[d], limit[d] = a, b
        return tuple(start), tuple(limit)
    if plan.advs or plan.rev_dims or any(s != 1 for s in plan.step):
        return None
    return plan.start, plan.limit


class _IndexUpdateRef:
    """x.at[idx]: functional updates returning a new array (x is never modified).

    Duplicate indices: `add`/`multiply`/`min`/`max` combine every update (in index order,
    deterministically); `set` keeps the last one, as NumPy's `x[idx] = v` does.
    """
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """x[idx]; mode 'fill' is not supported (device indices are clamped)."""
        if mode not in (None, "clip", "promise_in_bounds"):
            raise NotImplementedError(f"at[].get: mode={mode!r} is not supported; use "
                                      "netcl.numpy.take(..., mode='fill') for filled reads")
        return _getitem(self.array, self.index)

    def set(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = values."""
        return _update(self.array, self.index, values, "set")

    def add(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] += values (duplicates accumulate)."""
        return _update(self.array, self.index, values, "add")

    def multiply(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] *= values (duplicates multiply)."""
        return _update(self.array, self.index, values, "multiply")

    mul = multiply

    def divide(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] /= values (float arrays)."""
        x = asarray_arg(self.array, "at[].divide")
        if x.dtype.kind != "f":
            raise TypeError(f"at[].divide: needs a float array, got {x.dtype}")
        from .math import true_divide
        return _update(x, self.index, true_divide(1.0, values), "multiply")

    def min(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = minimum(x[idx], values)."""
        return _update(self.array, self.index, values, "min")

    def max(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = maximum(x[idx], values)."""
        return _update(self.array, self.index, values, "max")


class _IndexUpdateHelper:
    """The `x.at` property: `x.at[idx].set(v)`, `.add(v)`, `.multiply(v)`, `.min(v)`,
    `.max(v)`, `.divide(v)`, `.get()`.

    >>> x = netcl.numpy.zeros(5)
    >>> x.at[[1, 3]].set(2.0)       # [0, 2, 0, 2, 0]
    """
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


# ---- take / take_along_axis --------------------------------------------------------------------

_MODES = ("fill", "clip", "wrap", "promise_in_bounds", "raise")


def _int_indices(indices, where):
    """Host int array (np.ndarray) or a netcl int32 array."""
    if _is_array(indices):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"{where}: indices must be integers, got {indices.dtype}")
        return indices if indices.dtype == dtypes.int32 else \
            ew.convert_element_type(indices, dtypes.int32)
    h = np.asarray(indices)
    if isinstance(indices, (list, tuple)) and h.size == 0:
        h = h.astype(np.int64)
    if h.dtype.kind not in "iu":
        raise TypeError(f"{where}: indices must be integers, got {h.dtype}")
    return h


def _default_fill(dtype):
    if dtype.kind == "f":
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


# ---- nonzero and friends (host) -----------------------------------------------------------------

def _host_bool(a, where):
    if _is_array(a):
        return _host_mask(a, where) != 0
    return np.asarray(a) != 0


def _sized(idx, size, fill_value):
    if size is None:
        return idx
    size = operator.index(size)
    if len(idx) >= size:
        return idx[:size]
    fill = 0 if fill_value is None else fill_value
    return np.concatenate([idx, np.full(size - len(idx), fill, idx.dtype)])


def nonzero(a, size=None, fill_value=None):
    """Indices of the non-zero elements, one int32 array per dimension.

    The values are copied to the host to count them (the result's shape depends on them),
    so this is not allowed under jit or vmap. `size` truncates or pads (with `fill_value`,
    default 0) the result to a fixed length.
    """
    h = _host_bool(a, "nonzero")
    if h.ndim == 0:
        raise ValueError("nonzero: calling nonzero on 0-d arrays is not allowed; use "
                         "atleast_1d(a).nonzero()")
    return tuple(_upload_index(_sized(i, size, fill_value)) for i in np.nonzero(h))


def flatnonzero(a, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened array (host-side count, as nonzero)."""
    h = _host_bool(a, "flatnonzero").reshape(-1)
    return _upload_index(_sized(np.flatnonzero(h), size, fill_value))


def argwhere(a, size=None, fill_value=None):
    """(count, ndim) int32 array of the indices of non-zero elements (host-side count)."""
    h = _host_bool(a, "argwhere")
    res = np.argwhere(h)
    if size is not None:
        size = operator.index(size)
        fill = 0 if fill_value is None else fill_value
        res = res[:size] if len(res) >= size else np.concatenate(
            [res, np.full((size - len(res), res.shape[1]), fill, res.dtype)])
    return _upload_index(res.reshape(-1, h.ndim))


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
    offset = operator.index(offset)
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
    k = operator.index(k)
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
    k = operator.index(k)
    return ew.select(_tri_mask(m.shape, k, lower), m, views.full(m.shape, 0, m.dtype))


def tril(m, k=0):
    """Lower triangle of the last two axes: elements with column <= row + k kept, else 0."""
    return _triangle(m, k, True, "tril")


def triu(m, k=0):
    """Upper triangle of the last two axes: elements with column >= row + k kept, else 0."""
    return _triangle(m, k, False, "triu")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along the `offset` diagonal of axes (axis1, axis2); bool sums as int32."""
    from ..primitives.reductions import reduce_sum
    d = diagonal(a, offset, axis1, axis2)
    dt = dtypes.int32 if d.dtype == dtypes.bool_ else d.dtype
    if dtype is not None:
        dt = dtypes.canonicalize(dtype, where="trace")
    if dt != d.dtype:
        d = ew.convert_element_type(d, dt)
    return reduce_sum(d, (d.ndim - 1,))


# ---- index helpers (host) ---------------------------------------------------------------------

def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x n x ... array: ndim copies of arange(n)."""
    i = _upload_index(np.arange(operator.index(n)))
    return (i,) * operator.index(ndim)


def diag_indices_from(arr):
    a = asarray_arg(arr, "diag_indices_from")
    if a.ndim < 2 or len(set(a.shape)) != 1:
        raise ValueError(f"diag_indices_from: needs an array of at least 2 dimensions, all of "
                         f"equal length; got shape {tuple(a.shape)}")
    return diag_indices(a.shape[0], a.ndim)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an (n, m) array."""
    return tuple(_upload_index(i) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an (n, m) array."""
    return tuple(_upload_index(i) for i in np.triu_indices(n, k, m))


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
