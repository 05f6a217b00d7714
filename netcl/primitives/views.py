"""Layout primitives that are views in eager mode: no kernel, only new strides and offset.

broadcast_in_dim, reshape, transpose, squeeze, rev and slice change how a buffer is read,
not its contents, so eager execution returns a strided `Array` over the same storage (a
reshape of a non-contiguous view first makes it dense). Kernels read views through the
strided index of `core.codegen`; jit fuses them into index arithmetic the same way.
Also here: `full`/`full_like` (a broadcast scalar constant) and the batching helpers.
"""
import builtins
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayBase
from ..core.shapes import canonical_shape, contiguous_strides, normalize_axes, prod
from ..core.tracing import Primitive, ShapedArray

__all__ = ["broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "rev", "slice",
           "full", "full_like", "broadcast_to_rank"]


def operand(x, where):
    """x as an Array or Tracer: lax functions take those, NumPy arrays and Python scalars;
    anything else is a TypeError naming `where`."""
    if isinstance(x, ArrayBase):
        return x
    from ..core.eval import to_array
    return to_array(x, where)


def int_tuple(values, where, arg):
    """A sequence of ints as a tuple, or a TypeError naming `where` and `arg`."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a sequence of ints, got {values!r}") from None


def _view_launcher(view_fn):
    """make_launcher for view primitives. A launcher serves one input layout, so the view's
    shape, strides and offset are computed once here and each call only wraps the input's
    buffer (a reshape that must copy computes per call)."""
    def make_launcher(device, args, params, out):
        (x,) = args
        y = view_fn(x, out, **params)
        if device.is_numpy or y._storage is not x._storage or y._buf is not x._buf:
            return lambda x: view_fn(x, out, **params)
        shape, dtype, strides, offset = y.shape, y.dtype, y.strides, y.offset
        weak, contig, lid = y.weak_type, y._contig, y._layout_id()

        def view(x):
            return Array(x.device, x._buf, x._storage, shape, dtype, strides, offset, weak,
                         contig, lid)
        return view
    return make_launcher


# ---- broadcast_in_dim ----------------------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim", fusion="view")


def _broadcast_in_dim_abstract(x, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise ValueError(f"broadcast_in_dim: operand of shape {x.shape} needs {x.ndim} "
                         f"broadcast_dimensions, got {broadcast_dimensions}")
    if any(b >= len(shape) or b < 0 for b in broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ValueError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must be "
                         f"strictly increasing dimensions of the result shape {shape}")
    for d, b in zip(x.shape, broadcast_dimensions):
        if d != 1 and d != shape[b]:
            raise ValueError(f"broadcast_in_dim: operand shape {x.shape} cannot be broadcast to "
                             f"{shape} along dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_view(x, out, shape, broadcast_dimensions):
    strides = [0] * len(shape)
    for i, b in enumerate(broadcast_dimensions):
        if x.shape[i] == shape[b]:
            strides[b] = x.strides[i]
    return x._view(shape, tuple(strides), x.offset)


def _broadcast_in_dim_ref(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, b in enumerate(broadcast_dimensions):
        expanded[b] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_vjp(ct, out, x, shape, broadcast_dimensions):
    from .reductions import reduce_sum
    kept = set(broadcast_dimensions)
    summed = tuple(d for d in range(len(shape)) if d not in kept)
    summed += tuple(b for i, b in enumerate(broadcast_dimensions)
                    if x.shape[i] == 1 and shape[b] != 1)
    if summed:
        ct = reduce_sum(ct, tuple(sorted(summed)))
    return (reshape(ct, x.shape),)


def _broadcast_in_dim_batch(args, dims, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    x = move_batch_axis(x, d, 0)
    return broadcast_in_dim(x, (x.shape[0],) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


broadcast_in_dim_p.abstract_eval = _broadcast_in_dim_abstract
broadcast_in_dim_p.make_launcher = _view_launcher(_broadcast_in_dim_view)
broadcast_in_dim_p.reference = _broadcast_in_dim_ref
broadcast_in_dim_p.vjp = _broadcast_in_dim_vjp
broadcast_in_dim_p.batch = _broadcast_in_dim_batch


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """lax.broadcast_in_dim: x's dimension i becomes result dimension broadcast_dimensions[i]."""
    x = operand(x, "broadcast_in_dim")
    shape = canonical_shape(shape, "broadcast_in_dim")
    bd = int_tuple(broadcast_dimensions, "broadcast_in_dim", "broadcast_dimensions")
    if tuple(x.shape) == shape and bd == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bd)


# ---- reshape -----------------------------------------------------------------------------

reshape_p = Primitive("reshape", fusion="view")


def _reshape_abstract(x, new_sizes):
    if prod(new_sizes) != prod(x.shape):
        raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} "
                         f"({prod(x.shape)} elements) into shape {new_sizes} "
                         f"({prod(new_sizes)} elements)")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_view(x, out, new_sizes):
    strides = nocopy_reshape_strides(x.shape, x.strides, new_sizes)
    if strides is None:  # the elements are not evenly spaced in the new order: copy
        x = x._dense()
        strides = contiguous_strides(new_sizes)
    return x._view(new_sizes, strides, x.offset)


def nocopy_reshape_strides(shape, strides, new_shape):
    """Strides viewing (shape, strides) as new_shape without moving data, or None.

    The rule NumPy uses: group old and new dimensions into runs with equal products; a run
    of old dimensions must itself be contiguous (each stride = next stride * next size).
    """
    if prod(shape) == 0 or tuple(shape) == tuple(new_shape):
        return contiguous_strides(new_shape) if prod(shape) == 0 else tuple(strides)
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    new_idx = [i for i, d in enumerate(new_shape) if d != 1]
    new_dims = [new_shape[i] for i in new_idx]
    new_str = [0] * len(new_dims)
    oi = ni = 0
    while ni < len(new_dims) and oi < len(old):
        oj, nj = oi + 1, ni + 1
        po, pn = old[oi][0], new_dims[ni]
        while po != pn:
            if pn < po:
                pn *= new_dims[nj]
                nj += 1
            else:
                po *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_str[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_str[k - 1] = new_str[k] * new_dims[k]
        oi, ni = oj, nj
    out = [0] * len(new_shape)
    for i, st in zip(new_idx, new_str):
        out[i] = st
    return tuple(out)


reshape_p.abstract_eval = _reshape_abstract
reshape_p.make_launcher = _view_launcher(_reshape_view)
reshape_p.reference = lambda x, new_sizes: np.reshape(x, new_sizes)
reshape_p.vjp = lambda ct, out, x, new_sizes: (reshape(ct, x.shape),)


def _reshape_batch(args, dims, new_sizes):
    x = move_batch_axis(args[0], dims[0], 0)
    return reshape(x, (x.shape[0],) + tuple(new_sizes)), 0


reshape_p.batch = _reshape_batch


def reshape(x, new_sizes, dimensions=None):
    """lax.reshape (row-major); `dimensions` transposes first, as in JAX."""
    x = operand(x, "reshape")
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = canonical_shape(new_sizes, "reshape", "new_sizes")
    if tuple(x.shape) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


# ---- transpose ---------------------------------------------------------------------------

transpose_p = Primitive("transpose", fusion="view")


def _transpose_abstract(x, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose: permutation {permutation} is not a permutation of the "
                         f"axes of an array of shape {x.shape}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_view(x, out, permutation):
    return x._view(out.shape, tuple(x.strides[p] for p in permutation), x.offset)


def _inverse_perm(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


transpose_p.abstract_eval = _transpose_abstract
transpose_p.make_launcher = _view_launcher(_transpose_view)
transpose_p.reference = lambda x, permutation: np.transpose(x, permutation)
transpose_p.vjp = lambda ct, out, x, permutation: (transpose(ct, _inverse_perm(permutation)),)


def _transpose_batch(args, dims, permutation):
    x = move_batch_axis(args[0], dims[0], 0)
    return transpose(x, (0,) + tuple(p + 1 for p in permutation)), 0


transpose_p.batch = _transpose_batch


def transpose(x, permutation):
    """lax.transpose: result axis i is operand axis permutation[i]."""
    x = operand(x, "transpose")
    permutation = int_tuple(permutation, "transpose", "permutation")
    if permutation == tuple(range(len(permutation))) and len(permutation) == x.ndim:
        return x
    return transpose_p.bind(x, permutation=permutation)


# ---- squeeze / expand_dims (reshapes with checks) ------------------------------------------

def squeeze(x, dimensions):
    """lax.squeeze: drop the given size-1 dimensions."""
    x = operand(x, "squeeze")
    dims = normalize_axes(int_tuple(dimensions, "squeeze", "dimensions"), x.ndim, "squeeze",
                          "dimensions")
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(f"squeeze: dimension {d} of shape {x.shape} is not 1")
    return reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in dims))


def expand_dims(x, dimensions):
    """lax.expand_dims: insert size-1 dimensions at the given result positions."""
    x = operand(x, "expand_dims")
    dimensions = int_tuple(dimensions, "expand_dims", "dimensions")
    ndim = x.ndim + len(dimensions)
    dims = normalize_axes(dimensions, ndim, "expand_dims", "dimensions")
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


# ---- rev -----------------------------------------------------------------------------------

rev_p = Primitive("rev", fusion="view")


def _rev_abstract(x, dimensions):
    normalize_axes(dimensions, x.ndim, "rev", "dimensions")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _rev_view(x, out, dimensions):
    strides, offset = list(x.strides), x.offset
    for d in dimensions:
        if x.shape[d] > 0:
            offset += (x.shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    return x._view(x.shape, tuple(strides), offset)


rev_p.abstract_eval = _rev_abstract
rev_p.make_launcher = _view_launcher(_rev_view)
rev_p.reference = lambda x, dimensions: np.flip(x, dimensions) if dimensions else x
rev_p.vjp = lambda ct, out, x, dimensions: (rev(ct, dimensions),)
rev_p.batch = lambda args, dims, dimensions: (
    rev(move_batch_axis(args[0], dims[0], 0), tuple(d + 1 for d in dimensions)), 0)


def rev(x, dimensions):
    """lax.rev: reverse the order of elements along `dimensions`."""
    x = operand(x, "rev")
    dims = normalize_axes(int_tuple(dimensions, "rev", "dimensions"), x.ndim, "rev",
                          "dimensions")
    return rev_p.bind(x, dimensions=dims) if dims else x


# ---- slice ---------------------------------------------------------------------------------

slice_p = Primitive("slice", fusion="view")


def _slice_abstract(x, start_indices, limit_indices, strides):
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ValueError(f"slice: start_indices {start_indices}, limit_indices {limit_indices} "
                         f"and strides {strides} must each have one entry per dimension of "
                         f"shape {x.shape}")
    shape = []
    for d, (s, l, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if not (0 <= s <= l <= x.shape[d]) or st < 1:
            raise ValueError(f"slice: dimension {d} of shape {x.shape}: need 0 <= start ({s}) <= "
                             f"limit ({l}) <= {x.shape[d]} and stride ({st}) >= 1")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _slice_view(x, out, start_indices, limit_indices, strides):
    offset = x.offset + sum(s * st for s, st in zip(start_indices, x.strides))
    return x._view(out.shape, tuple(a * b for a, b in zip(x.strides, strides)), offset)


def _slice_ref(x, start_indices, limit_indices, strides):
    return x[tuple(builtins.slice(s, l, st)
                   for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_vjp(ct, out, x, start_indices, limit_indices, strides):
    from .structural import pad
    config = []
    for d, (s, st) in enumerate(zip(start_indices, strides)):
        m = out.shape[d]
        if m == 0:
            config.append((x.shape[d], 0, 0))
            continue
        last = s + (m - 1) * st
        config.append((s, x.shape[d] - last - 1, st - 1))
    zero = full((), 0, ct.dtype)
    return (pad(ct, zero, tuple(config)),)


def _slice_batch(args, dims, start_indices, limit_indices, strides):
    x = move_batch_axis(args[0], dims[0], 0)
    return slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                        limit_indices=(x.shape[0],) + tuple(limit_indices),
                        strides=(1,) + tuple(strides)), 0


slice_p.abstract_eval = _slice_abstract
slice_p.make_launcher = _view_launcher(_slice_view)
slice_p.reference = _slice_ref
slice_p.vjp = _slice_vjp
slice_p.batch = _slice_batch


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 (JAX's name)
    """lax.slice: the elements start <= i < limit stepping by strides, per dimension."""
    x = operand(x, "slice")
    start = int_tuple(start_indices, "slice", "start_indices")
    limit = int_tuple(limit_indices, "slice", "limit_indices")
    strides = (1,) * len(start) if strides is None else int_tuple(strides, "slice", "strides")
    if start == (0,) * x.ndim and limit == tuple(x.shape) and strides == (1,) * x.ndim:
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


# ---- linear rules: these ops apply unchanged to tangents -----------------------------------

def _linear_jvp(prim):
    def jvp(primals, tangents, **params):
        from ..core.ad_util import Zero, is_zero
        out = prim.bind(*primals, **params)
        t = tangents[0]
        return out, (Zero(ShapedArray(out.shape, out.dtype, out.weak_type)) if is_zero(t)
                     else prim.bind(t, **params))
    return jvp


for _p in (broadcast_in_dim_p, reshape_p, transpose_p, rev_p, slice_p):
    _p.jvp = _linear_jvp(_p)


# ---- constants -----------------------------------------------------------------------------

def full(shape, fill_value, dtype=None, device=None):
    """An array of `shape` filled with `fill_value` (eagerly: a broadcast 0-d constant)."""
    from ..core.eval import scalar_constant
    from ..core.devices import default_device
    shape = canonical_shape(shape, "full")
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value, "full") if not hasattr(fill_value, "dtype") \
            else fill_value.dtype
    dtype = dtypes.canonicalize(dtype, where="full")
    if type(fill_value) is int:  # would wrap in astype below (uint32 takes int32 values too)
        dtypes.check_int(fill_value, dtype, where="full", weak=True)
    if isinstance(fill_value, (bool, int, float, complex, np.number, np.bool_)):
        value = np.asarray(fill_value)
        if value.dtype.kind in "fc" and dtypes.kind(dtype) in "iu":
            # (as convert_element_type converts: saturated, NaN to 0, where NumPy's cast of
            # an out-of-range float is undefined)
            from .elementwise import _convert_ref
            value = _convert_ref(value.real if value.dtype.kind == "c" else value, dtype)
        c = scalar_constant(value.astype(dtype).item(), dtype,
                            device or default_device(), weak=False)
    else:  # a 0-d array or tracer
        from .elementwise import convert_element_type
        fill_value = operand(fill_value, "full")
        if fill_value.ndim:  # before the conversion kernel
            raise ValueError(f"full: fill_value must be a scalar, got shape {fill_value.shape}")
        c = convert_element_type(fill_value, dtype)
    return broadcast_in_dim(c, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    """`full` with x's shape and dtype unless given."""
    x = operand(x, "full_like")
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype,
                device=x.device if isinstance(x, Array) else None)


# ---- batching helpers used by every primitive's batching rule ------------------------------

def move_batch_axis(x, src, dst):
    """Move axis `src` of x to position `dst` (a transpose, eagerly a view)."""
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def bdim_at_front(x, bdim, size):
    """x with its batch axis first; an unbatched x (bdim None) is broadcast to have one."""
    if bdim is None:
        return broadcast_in_dim(x, (size,) + tuple(x.shape), tuple(range(1, x.ndim + 1)))
    return move_batch_axis(x, bdim, 0)


def broadcast_to_rank(x, shape):
    """Broadcast x (numpy rules) to `shape`: used by netcl.numpy before binding."""
    x = operand(x, "broadcast_to_rank")
    if x.shape == shape:
        return x
    shape = canonical_shape(shape, "broadcast_to_rank")
    if tuple(x.shape) == shape:
        return x
    n = len(shape) - x.ndim
    dims = tuple(range(n, len(shape)))
    return broadcast_in_dim(x, tuple(shape), dims)
