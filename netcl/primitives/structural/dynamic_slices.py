"""dynamic_slice and dynamic_update_slice: boxes at run-time start indices (clamped into
range as in JAX), and their *_in_dim forms. Eager launches are nc_copy (copy_kernels.py);
per-example starts under vmap become gathers. A compiled loop whose starts are known on the
host (its counter: scan's x = xs[i], ys[i] = y) runs `host_start_launch`es instead: the
clamped starts become the copy's offsets, with no device array of starts per step."""
import operator

import numpy as np

from ...core import dtypes
from ...core.ad_util import instantiate, is_zero
from ...core.array import Array
from ...core.launch import Launch
from ...core.shapes import contiguous_strides, normalize_axis
from ...core.tracing import Primitive, ShapedArray
from .. import elementwise as ew
from ..views import bdim_at_front, broadcast_in_dim, full, move_batch_axis, reshape
from ..views import operand as _operand
from .common import _batch_size, _empty_launcher, _zero_tangent, _zeros, index32
from .copy_kernels import _copy_piece, _copy_piece_at, _pack_starts
from .gather_scatter import gather
from .shape_ops import iota

# ---- dynamic_slice / dynamic_update_slice ----------------------------------------------------

dynamic_slice_p = Primitive("dynamic_slice")
dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _check_starts(name, x, starts):
    if len(starts) != x.ndim:
        raise ValueError(f"{name}: an operand of shape {tuple(x.shape)} needs {x.ndim} start "
                         f"indices, got {len(starts)}")
    for d, s in enumerate(starts):
        if s.ndim != 0 or s.dtype != dtypes.int32:
            raise TypeError(f"{name}: start index {d} must be a 0-d int32 array, got "
                            f"{s.dtype}{list(s.shape)}")


def _dynamic_slice_abstract(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        raise ValueError(f"dynamic_slice: slice_sizes {slice_sizes} must have one entry per "
                         f"dimension of the operand shape {tuple(x.shape)}, each in "
                         "[0, dimension]")
    return ShapedArray(tuple(slice_sizes), x.dtype, x.weak_type)


def _dynamic_slice_launcher(device, args, params, out):
    x = args[0]
    sizes = params["slice_sizes"]
    if out.size == 0:
        return _empty_launcher(device, out)
    run = _copy_piece(device, x.dtype.itemsize, sizes, contiguous_strides(sizes), 0,
                      x.strides, x.offset, [n - s for n, s in zip(x.shape, sizes)], dyn=1)
    shape, dtype, weak = out.shape, out.dtype, out.weak_type

    def launch(x, *starts):
        res = Array.empty(device, shape, dtype, weak)
        if starts:
            run(res._buf, x._buf, _pack_starts(device, starts)._buf)
        else:
            run(res._buf, x._buf)
        return res
    return launch


def _clamped_starts(shape, sizes, starts):
    return [int(np.clip(int(s), 0, n - k)) for s, n, k in zip(starts, shape, sizes)]


def _dynamic_slice_ref(x, *starts, slice_sizes):
    st = _clamped_starts(x.shape, slice_sizes, starts)
    return x[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))]


def _dynamic_slice_jvp(primals, tangents, slice_sizes):
    out = dynamic_slice_p.bind(*primals, slice_sizes=slice_sizes)
    t = tangents[0]
    if is_zero(t):
        return out, _zero_tangent(out)
    return out, dynamic_slice_p.bind(t, *primals[1:], slice_sizes=slice_sizes)


def _dynamic_slice_vjp(ct, out, x, *starts, slice_sizes):
    ct_x = dynamic_update_slice_p.bind(_zeros(x.shape, ct.dtype), ct, *starts)
    return (ct_x,) + (None,) * len(starts)


def _int_const(v):
    return full((), int(v), dtypes.int32)


def _clamp_start(s, hi):
    """Clamp a batch of start indices (int32) into [0, hi], as dynamic_slice does."""
    return ew.clamp(full(s.shape, 0, s.dtype), s, full(s.shape, max(hi, 0), s.dtype))


def _dynamic_slice_batch(args, dims, slice_sizes):
    x, starts = args[0], args[1:]
    dx, dstarts = dims[0], dims[1:]
    size = _batch_size(args, dims)
    if all(d is None for d in dstarts):
        x = move_batch_axis(x, dx, 0)
        return dynamic_slice_p.bind(x, _int_const(0), *starts,
                                    slice_sizes=(size,) + tuple(slice_sizes)), 0
    # Per-example starts: one batched gather per dimension (indices start_b + iota).
    x = bdim_at_front(x, dx, size)
    for d, k in enumerate(slice_sizes):
        n = x.shape[d + 1]
        s = _clamp_start(bdim_at_front(starts[d], dstarts[d], size), n - k)
        idx = ew.add(broadcast_in_dim(s, (size, k), (0,)),
                     broadcast_in_dim(iota(dtypes.int32, k), (size, k), (1,)))
        x = gather(x, idx, d + 1, batch_dims=1)
    return x, 0


dynamic_slice_p.abstract_eval = _dynamic_slice_abstract
dynamic_slice_p.make_launcher = _dynamic_slice_launcher
dynamic_slice_p.reference = _dynamic_slice_ref
dynamic_slice_p.jvp = _dynamic_slice_jvp
dynamic_slice_p.vjp = _dynamic_slice_vjp
dynamic_slice_p.batch = _dynamic_slice_batch


def _dynamic_update_slice_abstract(x, update, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice: update dtype {update.dtype} differs from the "
                        f"operand's {x.dtype}")
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise ValueError(f"dynamic_update_slice: update of shape {tuple(update.shape)} does not "
                         f"fit in the operand of shape {tuple(x.shape)}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dynamic_update_slice_launcher(device, args, params, out):
    x, u = args[0], args[1]
    if out.size == 0:
        return _empty_launcher(device, out)
    ostr = contiguous_strides(out.shape)
    item = x.dtype.itemsize
    copy = _copy_piece(device, item, x.shape, ostr, 0, x.strides, x.offset)
    put = _copy_piece(device, item, u.shape, ostr, 0, u.strides, u.offset,
                      [n - k for n, k in zip(x.shape, u.shape)], dyn=2)
    shape, dtype, weak = out.shape, out.dtype, out.weak_type
    dense = x._contig and x.offset == 0 and not device.is_numpy

    def write(res, u, starts):
        if put is not None:
            if starts:
                put(res._buf, u._buf, _pack_starts(device, starts)._buf)
            else:
                put(res._buf, u._buf)
        return res

    def launch(x, u, *starts):
        res = Array.empty(device, shape, dtype, weak)
        copy(res._buf, x._buf)
        return write(res, u, starts)

    def run_into(offers, x, u, *starts):
        """launch, writing over x's own buffer where `offers` holds it: only the update
        is copied (a scan stacking its outputs then moves one slice per step, not all)."""
        st = x._storage
        if dense and any(o is st for o in offers):
            offers.remove(st)
            return write(Array(device, x._buf, st, shape, dtype, x.strides, 0, weak, True),
                         u, starts)
        return launch(x, u, *starts)
    return Launch(launch, run_into)


def _dynamic_update_slice_ref(x, update, *starts):
    st = _clamped_starts(x.shape, update.shape, starts)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(st, update.shape))] = update
    return out


def _dynamic_update_slice_jvp(primals, tangents):
    out = dynamic_update_slice_p.bind(*primals)
    tx, tu = tangents[0], tangents[1]
    if is_zero(tx) and is_zero(tu):
        return out, _zero_tangent(out)
    return out, dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *primals[2:])


def _dynamic_update_slice_vjp(ct, out, x, update, *starts):
    ct_x = dynamic_update_slice_p.bind(ct, _zeros(update.shape, ct.dtype), *starts)
    ct_u = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update.shape))
    return (ct_x, ct_u) + (None,) * len(starts)


def _dynamic_update_slice_batch(args, dims):
    (x, u), starts = args[:2], args[2:]
    (dx, du), dstarts = dims[:2], dims[2:]
    size = _batch_size(args, dims)
    x, u = bdim_at_front(x, dx, size), bdim_at_front(u, du, size)
    if all(d is None for d in dstarts):
        return dynamic_update_slice_p.bind(x, u, _int_const(0), *starts), 0
    # Per-example starts: gather the update into place and select it inside its box.
    if any(k == 0 for k in u.shape[1:]):
        return x, 0
    g, mask = u, None
    for d in range(x.ndim - 1):
        n, k = x.shape[d + 1], u.shape[d + 1]
        s = _clamp_start(bdim_at_front(starts[d], dstarts[d], size), n - k)
        rel = ew.sub(broadcast_in_dim(iota(dtypes.int32, n), (size, n), (1,)),
                     broadcast_in_dim(s, (size, n), (0,)))
        inside = ew.and_(ew.ge(rel, full(rel.shape, 0, dtypes.int32)),
                         ew.lt(rel, full(rel.shape, k, dtypes.int32)))
        idx = ew.clamp(full(rel.shape, 0, dtypes.int32), rel, full(rel.shape, k - 1, dtypes.int32))
        g = gather(g, idx, d + 1, batch_dims=1)
        m = broadcast_in_dim(inside, x.shape, (0, d + 1))
        mask = m if mask is None else ew.and_(mask, m)
    if mask is None:  # rank-0 operand: the update replaces it
        return g, 0
    return ew.select(mask, g, x), 0


dynamic_update_slice_p.abstract_eval = _dynamic_update_slice_abstract
dynamic_update_slice_p.make_launcher = _dynamic_update_slice_launcher
dynamic_update_slice_p.reference = _dynamic_update_slice_ref
# the operand, where it dies: the output keeps it outside the update, which nothing reads
dynamic_update_slice_p.in_place_inputs = lambda n_inputs: (0,)
dynamic_update_slice_p.jvp = _dynamic_update_slice_jvp
dynamic_update_slice_p.vjp = _dynamic_update_slice_vjp
dynamic_update_slice_p.batch = _dynamic_update_slice_batch


def host_start_launch(prim, device, args, params, fixed):
    """The Launch of a dynamic_slice or dynamic_update_slice equation whose start indices
    are known on the host when it runs, for arguments laid out like `args`: per start,
    `fixed` holds its value (a constant) or None (a host int, passed in its argument
    position at run time; what is passed for a fixed one is not read). The starts are
    clamped as JAX does and become the copy's offset. None for other primitives."""
    x = args[0]
    if prim is dynamic_slice_p:
        sizes, n_before, strides = tuple(params["slice_sizes"]), 1, x.strides
    elif prim is dynamic_update_slice_p:
        sizes, n_before = tuple(args[1].shape), 2
        strides = contiguous_strides(x.shape)      # (of the output, which is dense)
    else:
        return None
    his = [max(n - k, 0) for n, k in zip(x.shape, sizes)]
    base = sum(min(max(int(v), 0), h) * st for v, h, st in zip(fixed, his, strides)
               if v is not None)
    var = tuple((n_before + d, h, st) for d, (v, h, st) in enumerate(zip(fixed, his, strides))
                if v is None)

    def offset(starts):
        off = base
        for j, h, st in var:
            s = starts[j]
            off += (0 if s < 0 else h if s > h else s) * st
        return off
    out = prim.abstract_eval(*args, **params)
    shape, dtype, weak = out.shape, out.dtype, out.weak_type
    item = x.dtype.itemsize
    if prim is dynamic_slice_p:
        if out.size == 0:
            return Launch(_empty_launcher(device, out))
        take = _copy_piece_at(device, item, sizes, contiguous_strides(sizes), x.strides)
        x_off = x.offset

        def launch_slice(*a):
            res = Array.empty(device, shape, dtype, weak)
            take(res._buf, 0, a[0]._buf, x_off + offset(a))
            return res
        return Launch(launch_slice)
    if out.size == 0:
        return Launch(_empty_launcher(device, out))
    u = args[1]
    copy = _copy_piece(device, item, x.shape, strides, 0, x.strides, x.offset)
    put = _copy_piece_at(device, item, u.shape, strides, u.strides)
    u_off = u.offset
    dense = x._contig and x.offset == 0

    def write(res, a):
        if put is not None:
            put(res._buf, offset(a), a[1]._buf, u_off)
        return res

    def launch_update(*a):
        res = Array.empty(device, shape, dtype, weak)
        copy(res._buf, a[0]._buf)
        return write(res, a)

    def run_into(offers, *a):
        """launch_update, writing over x's own buffer where `offers` holds it: one step of
        a scan moves its slice of the stacked outputs, not the whole stack."""
        x = a[0]
        st = x._storage
        if dense and any(o is st for o in offers):
            offers.remove(st)
            return write(Array(device, x._buf, st, shape, dtype, x.strides, 0, weak, True),
                         a)
        return launch_update(*a)
    return Launch(launch_update, run_into)


def _seq(v, name, arg):
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{name}: {arg} must be a sequence with one entry per dimension, got "
                        f"{type(v).__name__}")
    return v


def _start_index(s, name):
    if hasattr(s, "dtype") and hasattr(s, "shape"):
        if s.ndim != 0:
            raise TypeError(f"{name}: start indices must be scalars, got shape {tuple(s.shape)}")
        if s.dtype.kind not in "iu":
            raise TypeError(f"{name}: start indices must be integers, got {s.dtype}")
        return index32(s)
    try:
        v = operator.index(s)
    except TypeError:
        raise TypeError(f"{name}: start indices must be ints or 0-d integer arrays, got "
                        f"{type(s).__name__}") from None
    return _int_const(int(np.clip(v, -2**31, 2**31 - 1)))


def dynamic_slice(operand, start_indices, slice_sizes):
    """lax.dynamic_slice: a `slice_sizes` box at run-time starts (clamped into range)."""
    operand = _operand(operand, "dynamic_slice")
    starts = tuple(_start_index(s, "dynamic_slice") for s in _seq(start_indices, "dynamic_slice",
                                                                  "start_indices"))
    try:
        sizes = tuple(operator.index(s) for s in slice_sizes)
    except TypeError:
        raise TypeError(f"dynamic_slice: slice_sizes must be ints, got {slice_sizes!r}") from None
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices):
    """lax.dynamic_update_slice: `operand` with `update` written at run-time starts (clamped)."""
    operand = _operand(operand, "dynamic_update_slice")
    update = _operand(update, "dynamic_update_slice")
    starts = tuple(_start_index(s, "dynamic_update_slice")
                   for s in _seq(start_indices, "dynamic_update_slice", "start_indices"))
    return dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """lax.dynamic_slice_in_dim: dynamic_slice along one axis."""
    operand = _operand(operand, "dynamic_slice_in_dim")
    axis = normalize_axis(axis, operand.ndim, "dynamic_slice_in_dim")
    starts = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """lax.dynamic_index_in_dim: one index along `axis` (kept as size 1 unless keepdims=False)."""
    operand = _operand(operand, "dynamic_index_in_dim")
    axis = normalize_axis(axis, operand.ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return out
    return reshape(out, tuple(s for d, s in enumerate(out.shape) if d != axis))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """lax.dynamic_update_slice_in_dim: dynamic_update_slice along one axis."""
    operand = _operand(operand, "dynamic_update_slice_in_dim")
    axis = normalize_axis(axis, operand.ndim, "dynamic_update_slice_in_dim")
    starts = [0] * operand.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)
