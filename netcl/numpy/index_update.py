"""x.at[idx]: functional updates (set, add, multiply, divide, min, max) and get. An index
is planned as x[idx] is (indexing.py), then becomes one scatter, or, for a box of unit steps,
one dynamic_update_slice."""
import numpy as np

from ..core import dtypes
from ..core.shapes import broadcast_shapes
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from ._util import asarray_arg
from .indexing import (_execute, _getitem, _i32, _is_array, _normalize_dyn, _normalize_static,
                       _plan, _upload_index)

__all__ = ["_IndexUpdateHelper"]

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


def _filled_get(x, index, fill_value):
    """x[index] where out-of-range integer indices read `fill_value`: each integer index's
    axis gets one more entry holding the fill, and those indices point at it."""
    from .creation import full
    from .joining import concatenate
    from .math import greater_equal, less, logical_and, where
    from .selection import _default_fill
    parts = list(index) if isinstance(index, tuple) else [index]
    consumed = sum(1 for p in parts if p is not None and p is not Ellipsis)
    axis, fixed = 0, []
    fill = _default_fill(x.dtype) if fill_value is None else fill_value
    for p in parts:
        if p is None:
            fixed.append(p)
            continue
        if p is Ellipsis:
            axis += x.ndim - consumed
            fixed.append(p)
            continue
        integer = isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))
        if integer or (_is_array(p) and np.dtype(getattr(p, "dtype", None) or
                                                 np.asarray(p).dtype).kind in "iu"):
            n = x.shape[axis]
            idx = asarray_arg(p, "at[].get")
            inside = logical_and(greater_equal(idx, -n), less(idx, n))
            fixed.append(where(inside, where(less(idx, 0), idx + n, idx), n))
            pad_shape = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
            x = concatenate([x, full(pad_shape, fill, x.dtype)], axis=axis)
        else:
            fixed.append(p)
        axis += 1
    return _getitem(x, tuple(fixed) if isinstance(index, tuple) else fixed[0])


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
        """x[idx]. Out-of-range integer indices (arrays or ints) clamp by default ('clip',
        'promise_in_bounds'); with mode='fill' they read `fill_value` (default NaN for
        floats, the extreme value for ints), as JAX's.

        >>> x.at[jnp.array([9, 1])].get(mode="fill", fill_value=-1.0)
        """
        if mode not in (None, "clip", "promise_in_bounds", "fill"):
            raise ValueError(f"at[].get: mode must be 'clip', 'fill' or 'promise_in_bounds', "
                             f"got {mode!r}")
        if mode == "fill":
            return _filled_get(asarray_arg(self.array, "at[].get"), self.index, fill_value)
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
        if dtypes.kind(x.dtype) != "f":
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
