"""Joining, splitting and repeating arrays in netcl.numpy: concatenate, stack and its
variants, split/array_split, pad, tile, repeat, roll, append.

Splits are views (no kernel). concatenate/stack are one `concatenate` primitive (one copy
per operand). pad's constant mode is `lax.pad`; its edge/reflect/symmetric/wrap modes are one
`gather` per padded axis with the source positions computed on the host.
"""
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.shapes import normalize_axis
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from ._util import asarray_arg, promote

__all__ = ["concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
           "row_stack", "split", "array_split", "hsplit", "vsplit", "dsplit", "pad", "tile",
           "repeat", "roll", "append"]


def _is_array(x):
    return isinstance(x, (Array, Tracer))


def _sequence(arrays, where):
    if _is_array(arrays):
        if arrays.ndim == 0:
            raise ValueError(f"{where}: expected a sequence of arrays, got a 0-d array")
        return [arrays[i] for i in range(arrays.shape[0])]
    if isinstance(arrays, np.ndarray):
        return list(arrays)
    try:
        arrays = list(arrays)
    except TypeError:
        raise TypeError(f"{where}: expected a sequence of arrays, got "
                        f"{type(arrays).__name__}") from None
    if not arrays:
        raise ValueError(f"{where}: need at least one array")
    return arrays


def _convert(xs, dtype, where):
    dt = None if dtype is None else dtypes.canonicalize(dtype, where=where)  # before promote
    xs = promote(where, *xs)
    if dt is not None:
        xs = [x if x.dtype == dt else ew.convert_element_type(x, dt) for x in xs]
    return xs


def _insert_axis(x, axis):
    """x with a size-1 axis at `axis` (a broadcast view: never a copy)."""
    shape = list(x.shape)
    shape.insert(axis, 1)
    return views.broadcast_in_dim(x, tuple(shape),
                                  tuple(d if d < axis else d + 1 for d in range(x.ndim)))


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (axis=None: flatten them first); dtypes promote.

    >>> netcl.numpy.concatenate([netcl.numpy.zeros((2, 3)), netcl.numpy.ones((1, 3))])
    """
    xs = [asarray_arg(x, "concatenate") for x in _sequence(arrays, "concatenate")]
    if axis is None:
        xs = [views.reshape(x, (x.size,)) for x in xs]
        axis = 0
    for i, x in enumerate(xs):
        if x.ndim == 0:
            raise ValueError(f"concatenate: zero-dimensional arrays cannot be concatenated "
                             f"(array {i})")
    nd = xs[0].ndim
    for i, x in enumerate(xs):
        if x.ndim != nd:
            raise ValueError(f"concatenate: all the input arrays must have the same number of "
                             f"dimensions, but the array at index 0 has shape "
                             f"{tuple(xs[0].shape)} and the array at index {i} has shape "
                             f"{tuple(x.shape)}")
    ax = normalize_axis(axis, nd, "concatenate")
    for i, x in enumerate(xs):
        if any(a != b for d, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if d != ax):
            raise ValueError(f"concatenate: the input array dimensions except for the "
                             f"concatenation axis {ax} must match exactly, but the array at "
                             f"index 0 has shape {tuple(xs[0].shape)} and the array at index "
                             f"{i} has shape {tuple(x.shape)}")
    xs = _convert(xs, dtype, "concatenate")  # (after the checks: nothing is enqueued first)
    xs = [x for x in xs if x.shape[ax]] or xs[:1]
    return st.concatenate(xs, ax)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays of one shape along a new axis.

    >>> netcl.numpy.stack([x, y], axis=1)
    """
    if out is not None:
        raise ValueError("stack: out= is not supported (netcl arrays are immutable)")
    xs = [asarray_arg(x, "stack") for x in _sequence(arrays, "stack")]
    for i, x in enumerate(xs):
        if tuple(x.shape) != tuple(xs[0].shape):
            raise ValueError(f"stack: all input arrays must have the same shape, but the array "
                             f"at index 0 has shape {tuple(xs[0].shape)} and the array at "
                             f"index {i} has shape {tuple(x.shape)}")
    ax = normalize_axis(axis, xs[0].ndim + 1, "stack")
    xs = _convert(xs, dtype, "stack")
    return st.concatenate([_insert_axis(x, ax) for x in xs], ax)


def _atleast(x, n):
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 2:
        return _insert_axis(x, 2)
    if n == 3 and x.ndim == 1:
        return _insert_axis(_insert_axis(x, 0), 2)
    while x.ndim < n:
        x = _insert_axis(x, 0)
    return x


def hstack(tup, dtype=None):
    """Stack horizontally: along axis 1, or axis 0 for 1-d arrays."""
    xs = [_atleast(asarray_arg(x, "hstack"), 1) for x in _sequence(tup, "hstack")]
    return concatenate(xs, 0 if xs[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Stack vertically: 1-d arrays become rows, then join along axis 0."""
    xs = [_atleast(asarray_arg(x, "vstack"), 2) for x in _sequence(tup, "vstack")]
    return concatenate(xs, 0, dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """Stack along the third axis (arrays are made at least 3-d first)."""
    xs = [_atleast(asarray_arg(x, "dstack"), 3) for x in _sequence(tup, "dstack")]
    return concatenate(xs, 2, dtype)


def column_stack(tup):
    """1-d arrays become columns; 2-d arrays are joined along axis 1."""
    xs = [asarray_arg(x, "column_stack") for x in _sequence(tup, "column_stack")]
    xs = [_insert_axis(x, 1) if x.ndim == 1 else _atleast(x, 2) for x in xs]
    return concatenate(xs, 1)


def _split(ary, indices_or_sections, axis, equal, where):
    a = asarray_arg(ary, where)
    if a.ndim == 0:
        raise ValueError(f"{where}: cannot split a 0-d array")
    ax = normalize_axis(axis, a.ndim, where)
    n = a.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{where}: number of sections must be larger than 0, got {sections}")
        if equal and n % sections:
            raise ValueError(f"{where}: array split does not result in an equal division: axis "
                             f"{ax} of size {n} into {sections} sections")
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        bounds = np.cumsum([0] + sizes).tolist()
        pairs = list(zip(bounds[:-1], bounds[1:]))
    else:
        try:
            points = [operator.index(i) for i in indices_or_sections]
        except TypeError:
            raise TypeError(f"{where}: indices_or_sections must be an int or a sequence of "
                            f"ints, got {indices_or_sections!r}") from None
        bounds = [0] + points + [n]
        pairs = []
        for s, e in zip(bounds[:-1], bounds[1:]):
            s0, e0, _ = slice(s, e).indices(n)
            pairs.append((s0, max(s0, e0)))
    out = []
    for s, e in pairs:
        start = [0] * a.ndim
        limit = list(a.shape)
        start[ax], limit[ax] = s, e
        out.append(views.slice(a, tuple(start), tuple(limit)))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int, which must divide the axis) or at the given
    indices; the pieces are views."""
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary, indices_or_sections, axis=0):
    """Like split, but an int number of sections need not divide the axis."""
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary, indices_or_sections):
    a = asarray_arg(ary, "hsplit")
    return split(a, indices_or_sections, 0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    a = asarray_arg(ary, "vsplit")
    if a.ndim < 2:
        raise ValueError(f"vsplit: needs an array of at least 2 dimensions, got shape "
                         f"{tuple(a.shape)}")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    a = asarray_arg(ary, "dsplit")
    if a.ndim < 3:
        raise ValueError(f"dsplit: needs an array of at least 3 dimensions, got shape "
                         f"{tuple(a.shape)}")
    return split(a, indices_or_sections, 2)


# ---- pad -----------------------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def _pad_widths(pad_width, ndim):
    if _is_array(pad_width):
        pad_width = np.asarray(pad_width)
    try:
        w = np.asarray(pad_width)
        if w.dtype.kind not in "iu":
            raise TypeError
        w = np.broadcast_to(w, (ndim, 2))
    except TypeError:
        raise TypeError(f"pad: pad_width must be ints, got {pad_width!r}") from None
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} cannot be broadcast to (ndim={ndim}, 2)"
                         ) from None
    if (w < 0).any():
        raise ValueError(f"pad: pad_width can't contain negative values, got {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in w]


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array like numpy.pad: modes 'constant' (constant_values, default 0, a scalar or
    per-axis (before, after) pairs), 'edge', 'reflect', 'symmetric', 'wrap' and 'empty'
    (zeros here).

    >>> netcl.numpy.pad(x, ((1, 1), (0, 2)), mode="reflect")
    """
    a = asarray_arg(array, "pad")
    if callable(mode) or mode not in _PAD_MODES:
        raise ValueError(f"pad: mode={mode!r} is not supported; supported modes are "
                                  f"{', '.join(_PAD_MODES)}")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}.get(mode, set())
    extra = set(kwargs) - allowed
    if extra:
        raise ValueError(f"pad: unsupported keyword argument(s) for mode {mode!r}: "
                         f"{', '.join(sorted(extra))}")
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("pad: only reflect_type='even' is supported")
    widths = _pad_widths(pad_width, a.ndim)
    if all(w == (0, 0) for w in widths):
        return a
    if mode in ("constant", "empty"):
        return _pad_constant(a, widths, kwargs.get("constant_values", 0))
    for ax, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = a.shape[ax]
        if n == 0:
            raise ValueError(f"pad: can't extend empty axis {ax} of shape {tuple(a.shape)} "
                             f"using mode {mode!r}; only 'constant' and 'empty' can")
        src = np.pad(np.arange(n), (lo, hi), mode=mode)
        a = st.gather(a, src.astype(np.int32), ax)
    return a


def _pad_constant(a, widths, values):
    zero_cfg = [(0, 0, 0)] * a.ndim
    if _is_array(values):
        v = values if values.dtype == a.dtype else ew.convert_element_type(values, a.dtype)
        if v.ndim != 0:
            raise ValueError(f"pad: an array constant_values must be 0-d, got shape "
                             f"{tuple(v.shape)}")
        return st.pad(a, v, tuple((lo, hi, 0) for lo, hi in widths))
    vals = np.asarray(values)
    if vals.dtype == object or dtypes.kind(vals.dtype) not in "biuf":
        raise TypeError(f"pad: constant_values must be numbers, got {values!r}")
    try:
        vals = np.broadcast_to(vals, (a.ndim, 2))
    except ValueError:
        raise ValueError(f"pad: constant_values {values!r} cannot be broadcast to "
                         f"(ndim={a.ndim}, 2)") from None
    if (vals == vals.flat[0]).all() or not vals.size:
        fill = views.full((), vals.flat[0].item() if vals.size else 0, a.dtype)
        return st.pad(a, fill, tuple((lo, hi, 0) for lo, hi in widths))
    # per-axis values: pad one side at a time, axis by axis (later axes own the corners)
    for ax, (lo, hi) in enumerate(widths):
        for side, w in ((0, lo), (1, hi)):
            if w:
                cfg = list(zero_cfg)
                cfg[ax] = (w, 0, 0) if side == 0 else (0, w, 0)
                a = st.pad(a, views.full((), vals[ax, side].item(), a.dtype), tuple(cfg))
    return a


# ---- tile / repeat / roll / append -------------------------------------------------------

def tile(A, reps):
    """Repeat the whole array `reps` times along each axis.

    >>> netcl.numpy.tile(netcl.numpy.arange(3), 2)   # [0 1 2 0 1 2]
    """
    a = asarray_arg(A, "tile")
    try:
        reps = (operator.index(reps),) if not isinstance(reps, (tuple, list)) else \
            tuple(operator.index(r) for r in reps)
    except TypeError:
        raise TypeError(f"tile: reps must be an int or a sequence of ints, got {reps!r}") from None
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    nd = max(len(reps), a.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - a.ndim) + tuple(a.shape)
    if a.ndim < nd:
        a = views.reshape(a, shape)
    if all(r == 1 for r in reps):
        return a
    inter = []
    for r, s in zip(reps, shape):
        inter += [r, s]
    b = views.broadcast_in_dim(a, tuple(inter), tuple(range(1, 2 * nd, 2)))
    return views.reshape(b, tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None, total_repeat_length=None):
    """Repeat each element `repeats` times (an int, or one count per element along axis).

    Per-element counts given as a netcl array are copied to the host (the result's shape
    depends on them), so under jit pass them as a NumPy array or list. With
    total_repeat_length the result is cut to, or padded (repeating the last element) to,
    that length, as in JAX.
    """
    a = asarray_arg(a, "repeat")
    if axis is None:
        a = views.reshape(a, (a.size,))
        axis = 0
    elif a.ndim == 0:
        raise ValueError(f"repeat: axis={axis} is out of bounds for a 0-d array")
    ax = normalize_axis(axis, a.ndim, "repeat")
    n = a.shape[ax]
    if _is_array(repeats):
        try:
            repeats = np.asarray(repeats)
        except TypeError as e:
            raise TypeError("repeat: repeats held in a traced array need concrete values; "
                            "pass them as a NumPy array or list") from e
    r = np.asarray(repeats)
    if r.dtype.kind not in "iu":
        raise TypeError(f"repeat: repeats must be integers, got {r.dtype}")
    if (r < 0).any():
        raise ValueError(f"repeat: repeats may not contain negative values, got {repeats!r}")
    if r.ndim == 0 or r.shape == (1,):
        count = int(r.reshape(-1)[0])
        if total_repeat_length is None:
            shape = list(a.shape)
            b = views.broadcast_in_dim(_insert_axis(a, ax + 1),
                                       tuple(shape[:ax + 1]) + (count,) + tuple(shape[ax + 1:]),
                                       tuple(range(a.ndim + 1)))
            shape[ax] = n * count
            return views.reshape(b, tuple(shape))
        src = np.repeat(np.arange(n), count)
    else:
        if r.shape != (n,):
            raise ValueError(f"repeat: repeats of shape {r.shape} do not match axis {ax} of "
                             f"size {n} (array shape {tuple(a.shape)})")
        src = np.repeat(np.arange(n), r)
    if total_repeat_length is not None:
        t = operator.index(total_repeat_length)
        if len(src) >= t:
            src = src[:t]
        elif len(src):
            src = np.concatenate([src, np.full(t - len(src), src[-1])])
        else:
            raise ValueError(f"repeat: cannot fill total_repeat_length={t} from no elements")
    if len(src) == 0:
        shape = list(a.shape)
        shape[ax] = 0
        return views.full(tuple(shape), 0, a.dtype)
    return st.gather(a, src.astype(np.int32), ax)


def roll(a, shift, axis=None):
    """Shift elements along axis (the flattened array when axis is None), wrapping around.

    `shift` may be a Python int (two slices joined) or a 0-d netcl integer array (a dynamic
    slice of the array doubled: no host copy, usable under jit).
    """
    a = asarray_arg(a, "roll")
    if axis is None:
        return views.reshape(roll(views.reshape(a, (a.size,)), shift, 0), a.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must have the same length")
    total = {}
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(ax, a.ndim, "roll")
        if _is_array(s):
            if s.ndim != 0 or s.dtype.kind not in "iu":
                raise TypeError(f"roll: a shift array must be a 0-d integer, got "
                                f"{s.dtype}{list(s.shape)}")
            total.setdefault(ax, []).append(s)
        else:
            try:
                total.setdefault(ax, []).append(operator.index(s))
            except TypeError:
                raise TypeError(f"roll: shift must be an int, got {type(s).__name__}") from None
    for ax, ss in total.items():
        n = a.shape[ax]
        if n == 0:
            continue
        static = sum(s for s in ss if not _is_array(s)) % n
        dyn = [s for s in ss if _is_array(s)]
        if dyn:
            from .math import remainder
            amount = dyn[0]
            for s in dyn[1:]:
                amount = ew.add(amount, s)
            amount = ew.convert_element_type(amount, dtypes.int32)
            if static:
                amount = ew.add(amount, views.full((), static, dtypes.int32))
            start = ew.sub(views.full((), n, dtypes.int32), remainder(amount, n))
            doubled = st.concatenate([a, a], ax)
            a = st.dynamic_slice_in_dim(doubled, start, n, ax)
        elif static:
            lo = [0] * a.ndim
            hi = list(a.shape)
            tail_lo = list(lo)
            tail_lo[ax] = n - static
            head_hi = list(hi)
            head_hi[ax] = n - static
            a = st.concatenate([views.slice(a, tuple(tail_lo), tuple(hi)),
                                views.slice(a, tuple(lo), tuple(head_hi))], ax)
    return a


def append(arr, values, axis=None):
    """arr with values appended (both flattened when axis is None)."""
    a = asarray_arg(arr, "append")
    v = asarray_arg(values, "append")
    if axis is None:
        return concatenate([views.reshape(a, (a.size,)), views.reshape(v, (v.size,))], 0)
    return concatenate([a, v], axis)

