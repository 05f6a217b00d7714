"""gather and the scatter family (scatter_add, scatter, scatter_mul, scatter_min, scatter_max).

Kernels (one build per item size or dtype; sizes, strides and offsets are arguments):

  nc_gather   one work-item per output element; the index is clamped into range.
  nc_scatter  deterministic, without atomics: `nc_scatter_csr` (one work-item per batch entry)
              counting-sorts the index positions by target row into segments (a stable,
              sort-free bucketing), then one work-item per output element folds its segment's
              updates in index order (add, multiply, min, max, or the last one for `scatter`;
              the mode is a kernel argument, so one build per dtype serves the whole family).
              Every run gives bit-identical results. The bucketing is sequential per batch
              entry: O(N + I) work on one work-item, cheap next to the fold.

gather / scatter use a simple but general form (named as in jax.lax, not its dimension
numbers): with `batch_dims` = nb and `axis` = k,

  operand: (B..., A..., N, C...)   B = operand.shape[:nb], A = operand.shape[nb:k], N = shape[k]
  indices: (B..., I...)            int32, clamped into [0, N)
  gather(operand, indices)[b, a, i, c] = operand[b, a, indices[b, i], c]
  scatter_add(operand, indices, updates) = operand, then
      out[b, a, indices[b, i], c] += updates[b, a, i, c]

so np.take (nb = 0), take_along_axis (nb = rank - 1, axis last), embedding lookups and their
gradients are one primitive each; the vjp of gather is scatter_add and the other way round,
and vmap adds one batch dimension in front.
"""
import operator

import numpy as np

from ...core import commands, dtypes, kernels
from ...core.ad_util import instantiate, is_zero
from ...core.array import Array
from ...core.shapes import normalize_axis, prod
from ...core.tracing import Primitive, ShapedArray
from .. import elementwise as ew
from ..views import bdim_at_front, broadcast_in_dim, full, move_batch_axis, reshape
from ..views import operand as _operand
from .common import (_RAW_CTYPE, _batch_size, _check_size, _const_buffer, _empty_launcher,
                     _zero_tangent, _zeros, index32)
from .shape_ops import iota

# ---- kernels -------------------------------------------------------------------------------

_GATHER_SRC = """
__kernel void nc_gather(__global {T}* out, __global const {T}* op, const int op_off,
                        __global const int* idx, const int idx_off, __constant int* meta,
                        const int rank, const int n, const int axis_size, const int axis_stride) {{
  /* meta: output shape [0, rank), operand strides per output dimension [rank, 2 rank),
     index strides per output dimension [2 rank, 3 rank) */
  const int i = get_global_id(0);
  if (i >= n) return;
  int o = op_off, k = idx_off, rem = i;
  for (int d = rank - 1; d >= 0; --d) {{
    const int c = rem % meta[d]; rem /= meta[d];
    o += c * meta[rank + d]; k += c * meta[2 * rank + d];
  }}
  const int j = clamp(idx[k], 0, axis_size - 1);
  out[i] = op[o + j * axis_stride];
}}
"""

_SCATTER_CSR_SRC = """
__kernel void nc_scatter_csr(__global int* offsets, __global int* perm, __global const int* idx,
                             const int idx_off, __constant int* meta, const int nb,
                             const int ni, const int nbatch, const int I, const int N) {
  /* meta: batch shape [0, nb), index strides of the batch dims [nb, 2 nb), then the index
     shape (ni), the index strides (ni) and the update strides (ni) of the index dims.
     Result per batch entry b: offsets[b*(N+1) + j] .. offsets[b*(N+1) + j + 1] delimit the
     positions (update offsets, in index order) whose index is j. */
  const int b = get_global_id(0);
  if (b >= nbatch) return;
  int base = idx_off, rem = b;
  for (int d = nb - 1; d >= 0; --d) {
    const int c = rem % meta[d]; rem /= meta[d]; base += c * meta[nb + d];
  }
  __constant int* ishape = meta + 2 * nb;
  __constant int* istr = ishape + ni;
  __constant int* ustr = istr + ni;
  __global int* cnt = offsets + b * (N + 1);
  __global int* pb = perm + b * I;
  for (int k = 0; k <= N; ++k) cnt[k] = 0;
  for (int i = 0; i < I; ++i) {
    int a = base; rem = i;
    for (int d = ni - 1; d >= 0; --d) {
      const int c = rem % ishape[d]; rem /= ishape[d]; a += c * istr[d];
    }
    cnt[clamp(idx[a], 0, N - 1) + 1] += 1;
  }
  for (int k = 1; k <= N; ++k) cnt[k] += cnt[k - 1];
  for (int i = 0; i < I; ++i) {
    int a = base, u = 0; rem = i;
    for (int d = ni - 1; d >= 0; --d) {
      const int c = rem % ishape[d]; rem /= ishape[d]; a += c * istr[d]; u += c * ustr[d];
    }
    const int j = clamp(idx[a], 0, N - 1);
    pb[cnt[j]] = u;
    cnt[j] += 1;
  }
  for (int k = N; k > 0; --k) cnt[k] = cnt[k - 1];
  cnt[0] = 0;
}
"""

_SCATTER_ACC_SRC = """
__kernel void nc_scatter(__global {S}* out, __global const {S}* op, const int op_off,
                         __global const {S}* upd, const int upd_off,
                         __global const int* offsets, __global const int* perm,
                         __constant int* meta, const int rank, const int n, const int nb,
                         const int axis, const int N, const int I, const int mode) {{
  /* meta: operand shape [0, rank), operand strides [rank, 2 rank), update strides per operand
     dimension [2 rank, 3 rank) (0 at `axis`: the index dims' offsets come from perm).
     mode (uniform over the launch, so the switch costs no divergence): 0 add, 1 multiply,
     2 min, 3 max, 4 set (the last update in index order). */
  const int i = get_global_id(0);
  if (i >= n) return;
  int o = op_off, u = upd_off, rem = i, bl = 0, bmul = 1, j = 0;
  for (int d = rank - 1; d >= 0; --d) {{
    const int c = rem % meta[d]; rem /= meta[d];
    o += c * meta[rank + d]; u += c * meta[2 * rank + d];
    if (d == axis) j = c;
    if (d < nb) {{ bl += c * bmul; bmul *= meta[d]; }}
  }}
  {C} acc = {load_op};
  __global const int* seg = offsets + bl * (N + 1);
  __global const int* pb = perm + bl * I;
  const int s0 = seg[j], s1 = seg[j + 1];
  switch (mode) {{
    case 0: for (int k = s0; k < s1; ++k) {{ const {C} v = {load_upd}; acc = {add}; }} break;
    case 1: for (int k = s0; k < s1; ++k) {{ const {C} v = {load_upd}; acc = {mul}; }} break;
    case 2: for (int k = s0; k < s1; ++k) {{ const {C} v = {load_upd}; acc = {min}; }} break;
    case 3: for (int k = s0; k < s1; ++k) {{ const {C} v = {load_upd}; acc = {max}; }} break;
    default: if (s1 > s0) {{ const int k = s1 - 1; acc = {load_upd}; }}
  }}
  {store}
}}
"""

_COMBINE = {
    "add": {"f": "acc + v", "i": "acc + v", "u": "acc + v", "b": "acc | v"},
    "mul": {"f": "acc * v", "i": "acc * v", "u": "acc * v", "b": "acc & v"},
    "min": {"f": "((acc < v || acc != acc) ? acc : v)", "i": "min(acc, v)", "u": "min(acc, v)",
            "b": "min(acc, v)"},
    "max": {"f": "((acc > v || acc != acc) ? acc : v)", "i": "max(acc, v)", "u": "max(acc, v)",
            "b": "max(acc, v)"},
}
_MODE_CODE = {"add": 0, "mul": 1, "min": 2, "max": 3, "set": 4}


def _combine_templates(dtype):
    """Every mode's combine for `dtype` (one kernel source holds them all); complex numbers
    multiply as complex numbers and have no min/max (their abstract eval refuses those)."""
    if dtypes.is_complex(dtype):
        c = kernels.compute_ctype(dtype)
        return {"add": "acc + v", "mul": f"({c})(acc.x * v.x - acc.y * v.y, "
                                         "acc.x * v.y + acc.y * v.x)",
                "min": "acc", "max": "acc"}
    return {m: _COMBINE[m][dtypes.kind(dtype)] for m in _COMBINE}


# ---- gather --------------------------------------------------------------------------------

gather_p = Primitive("gather")


def _check_gather_dims(name, x, idx, axis, batch_dims):
    if x.ndim == 0:
        raise ValueError(f"{name}: the operand must have at least one dimension, got 0-d")
    if not 0 <= batch_dims <= axis < x.ndim:
        raise ValueError(f"{name}: need 0 <= batch_dims ({batch_dims}) <= axis ({axis}) < "
                         f"operand rank ({x.ndim}) for operand shape {tuple(x.shape)}")
    if idx.dtype != dtypes.int32:
        raise TypeError(f"{name}: indices must be int32, got {idx.dtype}")
    if idx.ndim < batch_dims or tuple(idx.shape[:batch_dims]) != tuple(x.shape[:batch_dims]):
        raise ValueError(f"{name}: the first batch_dims={batch_dims} dimensions of indices "
                         f"{tuple(idx.shape)} must equal the operand's {tuple(x.shape)}")


def _gathered_shape(x_shape, idx_shape, axis, batch_dims):
    return tuple(x_shape[:axis]) + tuple(idx_shape[batch_dims:]) + tuple(x_shape[axis + 1:])


def _gather_abstract(x, idx, axis, batch_dims):
    _check_gather_dims("gather", x, idx, axis, batch_dims)
    shape = _gathered_shape(x.shape, idx.shape, axis, batch_dims)
    if x.shape[axis] == 0 and prod(shape) > 0:
        raise ValueError(f"gather: cannot gather from axis {axis} of size 0 (operand shape "
                         f"{tuple(x.shape)}, indices shape {tuple(idx.shape)})")
    _check_size("gather", shape)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _gather_launcher(device, args, params, out):
    x, idx = args
    axis, nb = params["axis"], params["batch_dims"]
    if out.size == 0:
        return _empty_launcher(device, out)
    ni, nc = idx.ndim - nb, x.ndim - axis - 1
    na = axis - nb
    ostr = list(x.strides[:axis]) + [0] * ni + list(x.strides[axis + 1:])
    istr = list(idx.strides[:nb]) + [0] * na + list(idx.strides[nb:]) + [0] * nc
    rank = len(out.shape)
    k = kernels.kernel(device, _GATHER_SRC.format(T=_RAW_CTYPE[x.dtype.itemsize]), "nc_gather")
    meta = _const_buffer(device, list(out.shape) + ostr + istr)
    k.set_arg(2, np.int32(x.offset))
    k.set_arg(4, np.int32(idx.offset))
    k.set_arg(5, meta)
    k.set_arg(6, np.int32(rank))
    k.set_arg(7, np.int32(out.size))
    k.set_arg(8, np.int32(x.shape[axis]))
    k.set_arg(9, np.int32(x.strides[axis]))
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, out.size)
    shape, dtype, weak = out.shape, out.dtype, out.weak_type
    queue, set_arg, enqueue = device.queue, k.set_arg, commands.launch

    def launch(x, idx):
        res = Array.empty(device, shape, dtype, weak)
        set_arg(0, res._buf)
        set_arg(1, x._buf)
        set_arg(3, idx._buf)
        enqueue(queue, k, gsize, lsize)
        return res
    return launch


def _gather_ref(x, idx, axis, batch_dims):
    shape = _gathered_shape(x.shape, idx.shape, axis, batch_dims)
    if prod(shape) == 0:
        return np.zeros(shape, x.dtype)
    idx = np.clip(idx, 0, x.shape[axis] - 1)
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    out = np.empty(shape, x.dtype)
    for b in np.ndindex(*x.shape[:batch_dims]):
        out[b] = np.take(x[b], idx[b], axis=axis - batch_dims)
    return out


def _gather_jvp(primals, tangents, axis, batch_dims):
    out = gather_p.bind(*primals, axis=axis, batch_dims=batch_dims)
    t = tangents[0]
    if is_zero(t):
        return out, _zero_tangent(out)
    return out, gather_p.bind(t, primals[1], axis=axis, batch_dims=batch_dims)


def _gather_vjp(ct, out, x, idx, axis, batch_dims):
    return (scatter_add_p.bind(_zeros(x.shape, ct.dtype), idx, ct, axis=axis,
                               batch_dims=batch_dims), None)


def _gather_batch(args, dims, axis, batch_dims):
    (x, idx), (dx, di) = args, dims
    if di is None and batch_dims == 0:
        return gather_p.bind(move_batch_axis(x, dx, 0), idx, axis=axis + 1, batch_dims=0), 0
    if dx is None and batch_dims == 0:
        return gather_p.bind(x, move_batch_axis(idx, di, 0), axis=axis, batch_dims=0), axis
    size = _batch_size(args, dims)
    return gather_p.bind(bdim_at_front(x, dx, size), bdim_at_front(idx, di, size),
                         axis=axis + 1, batch_dims=batch_dims + 1), 0


gather_p.abstract_eval = _gather_abstract
gather_p.make_launcher = _gather_launcher
gather_p.reference = _gather_ref
gather_p.jvp = _gather_jvp
gather_p.vjp = _gather_vjp
gather_p.batch = _gather_batch


def _index_array(indices, name):
    if not (hasattr(indices, "dtype") and hasattr(indices, "shape")) or \
            isinstance(indices, np.ndarray):
        from ...core.eval import to_array
        host = np.asarray(indices)
        if host.dtype.kind not in "iu":
            raise TypeError(f"{name}: indices must be integers, got {host.dtype}")
        # (clamped into int32: the kernels clamp into the axis anyway)
        return to_array(np.clip(host, -2**31, 2**31 - 1).astype(np.int32), name)
    if dtypes.kind(indices.dtype) not in "iu":
        return indices      # (the primitive's abstract_eval names the dtype)
    return index32(indices)


def gather(operand, indices, axis, batch_dims=0):
    """operand[b..., a..., indices[b..., i...], c...]: np.take along `axis` with the first
    `batch_dims` dimensions of operand and indices paired (take_along_axis style).

    Indices are integers of any width, clamped into [0, operand.shape[axis]) (never read
    out of range); the primitive takes them as int32.
    The output shape is operand.shape[:axis] + indices.shape[batch_dims:] +
    operand.shape[axis + 1:].
    """
    operand = _operand(operand, "gather")
    if operand.ndim == 0:
        raise ValueError("gather: the operand must have at least one dimension, got 0-d")
    axis = normalize_axis(axis, operand.ndim, "gather")
    return gather_p.bind(operand, _index_array(indices, "gather"), axis=axis,
                         batch_dims=operator.index(batch_dims))


# ---- the scatter family --------------------------------------------------------------------

def _scatter_abstract(name):
    def abstract(x, idx, upd, axis, batch_dims):
        _check_gather_dims(name, x, idx, axis, batch_dims)
        want = _gathered_shape(x.shape, idx.shape, axis, batch_dims)
        if tuple(upd.shape) != want:
            raise ValueError(f"{name}: updates must have shape {want} (operand "
                             f"{tuple(x.shape)}, indices {tuple(idx.shape)}, axis {axis}, "
                             f"batch_dims {batch_dims}), got {tuple(upd.shape)}")
        if upd.dtype != x.dtype:
            raise TypeError(f"{name}: updates dtype {upd.dtype} differs from the operand's "
                            f"{x.dtype}")
        if dtypes.is_complex(x.dtype) and name in ("scatter_min", "scatter_max"):
            raise TypeError(f"{name}: operand of dtype {x.dtype} is not supported (complex "
                            "numbers have no order)")
        if x.shape[axis] == 0 and upd.size > 0:
            raise ValueError(f"{name}: cannot scatter into axis {axis} of size 0 (operand "
                             f"shape {tuple(x.shape)})")
        _check_size(name, x.shape)
        _check_size(name, upd.shape)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return abstract


def _scatter_launcher(mode):
    def make(device, args, params, out):
        x, idx, upd = args
        axis, nb = params["axis"], params["batch_dims"]
        if out.size == 0:
            return _empty_launcher(device, out)
        ni = idx.ndim - nb
        nbatch, I, N = prod(x.shape[:nb]), prod(idx.shape[nb:]), x.shape[axis]
        _check_size("scatter", (nbatch, N + 1))
        _check_size("scatter", (nbatch, I))
        # 1. bucket the index positions by target row (per batch entry)
        csr = kernels.kernel(device, _SCATTER_CSR_SRC, "nc_scatter_csr")
        cmeta = _const_buffer(device, list(x.shape[:nb]) + list(idx.strides[:nb])
                              + list(idx.shape[nb:]) + list(idx.strides[nb:])
                              + list(upd.strides[axis:axis + ni]))
        for i, v in ((3, idx.offset), (5, nb), (6, ni), (7, nbatch), (8, I), (9, N)):
            csr.set_arg(i, np.int32(v))
        csr.set_arg(4, cmeta)
        csr._netcl_meta = cmeta
        cgrid = kernels.grid_1d(device, nbatch)
        # 2. fold each output element's bucket in index order
        d = x.dtype
        src = _SCATTER_ACC_SRC.format(
            S=kernels.storage_ctype(d), C=kernels.compute_ctype(d),
            load_op=kernels.load(d, "op", "o"), load_upd=kernels.load(d, "upd", "u + pb[k]"),
            store=kernels.store(d, "out", "i", "acc"),
            **_combine_templates(d))
        acc = kernels.kernel(device, src, "nc_scatter")
        ustr = [upd.strides[j] if j < axis else 0 if j == axis else upd.strides[j - 1 + ni]
                for j in range(x.ndim)]
        ameta = _const_buffer(device, list(x.shape) + list(x.strides) + ustr)
        for i, v in ((2, x.offset), (4, upd.offset), (8, x.ndim), (9, out.size), (10, nb),
                     (11, axis), (12, N), (13, I), (14, _MODE_CODE[mode])):
            acc.set_arg(i, np.int32(v))
        acc.set_arg(7, ameta)
        acc._netcl_meta = ameta
        agrid = kernels.grid_1d(device, out.size)
        shape, dtype, weak = out.shape, out.dtype, out.weak_type
        queue, enqueue = device.queue, commands.launch

        def launch(x, idx, upd):
            offsets = Array.empty(device, (nbatch * (N + 1),), dtypes.int32)
            perm = Array.empty(device, (max(1, nbatch * I),), dtypes.int32)
            csr.set_arg(0, offsets._buf)
            csr.set_arg(1, perm._buf)
            csr.set_arg(2, idx._buf)
            enqueue(queue, csr, *cgrid)
            res = Array.empty(device, shape, dtype, weak)
            acc.set_arg(0, res._buf)
            acc.set_arg(1, x._buf)
            acc.set_arg(3, upd._buf)
            acc.set_arg(5, offsets._buf)
            acc.set_arg(6, perm._buf)
            enqueue(queue, acc, *agrid)
            return res
        return launch
    return make


_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_ref(mode):
    def ref(x, idx, upd, axis, batch_dims):
        work_dtype = dtypes.compute_dtype(x.dtype)
        out = np.array(x, dtype=work_dtype, copy=True, order="C")  # reshaped as a view below
        if out.size == 0 or upd.size == 0:
            return out.astype(x.dtype)
        nb = batch_dims
        nbt, N = prod(x.shape[:nb]), x.shape[axis]
        A, C, I = prod(x.shape[nb:axis]), prod(x.shape[axis + 1:]), prod(idx.shape[nb:])
        o4 = out.reshape(nbt, A, N, C)
        i2 = np.clip(idx.reshape(nbt, I), 0, N - 1)
        u4 = np.asarray(upd, dtype=work_dtype).reshape(nbt, A, I, C)
        bix = np.arange(nbt)
        with np.errstate(all="ignore"):
            if mode == "set":
                for i in range(I):
                    o4[bix, :, i2[:, i], :] = u4[:, :, i, :]
            else:
                _UFUNC[mode].at(o4, (bix[:, None], slice(None), i2, slice(None)),
                                np.moveaxis(u4, 2, 1))
        return out.astype(x.dtype)
    return ref


def _scatter_prim(name, mode):
    p = Primitive(name)
    p.abstract_eval = _scatter_abstract(name)
    p.make_launcher = _scatter_launcher(mode)
    p.reference = _scatter_ref(mode)
    p.batch = _scatter_batch(p)
    return p


def _scatter_batch(prim):
    def rule(args, dims, axis, batch_dims):
        (x, idx, upd), (dx, di, du) = args, dims
        size = _batch_size(args, dims)
        x, upd = bdim_at_front(x, dx, size), bdim_at_front(upd, du, size)
        if di is None and batch_dims == 0:  # the batch is one more leading operand dim
            return prim.bind(x, idx, upd, axis=axis + 1, batch_dims=0), 0
        return prim.bind(x, bdim_at_front(idx, di, size), upd, axis=axis + 1,
                         batch_dims=batch_dims + 1), 0
    return rule


scatter_add_p = _scatter_prim("scatter_add", "add")
scatter_p = _scatter_prim("scatter", "set")
scatter_mul_p = _scatter_prim("scatter_mul", "mul")
scatter_min_p = _scatter_prim("scatter_min", "min")
scatter_max_p = _scatter_prim("scatter_max", "max")


def _linear_scatter_jvp(prim):
    """scatter_add and scatter (set) are linear in (operand, updates) jointly."""
    def jvp(primals, tangents, axis, batch_dims):
        out = prim.bind(*primals, axis=axis, batch_dims=batch_dims)
        tx, tu = tangents[0], tangents[2]
        if is_zero(tx) and is_zero(tu):
            return out, _zero_tangent(out)
        return out, prim.bind(instantiate(tx), primals[1], instantiate(tu), axis=axis,
                              batch_dims=batch_dims)
    return jvp


def _scatter_add_vjp(ct, out, x, idx, upd, axis, batch_dims):
    return ct, None, gather_p.bind(ct, idx, axis=axis, batch_dims=batch_dims)


def _index_dims_in_updates(idx, axis, batch_dims):
    ni = idx.ndim - batch_dims
    return tuple(range(batch_dims)) + tuple(range(axis, axis + ni))


def _last_writer_mask(x, idx, upd, axis, batch_dims):
    """Bool mask over the updates: True where the update is the one `scatter` keeps (the
    last in index order among those hitting the same row)."""
    nb = batch_dims
    ishape = tuple(idx.shape[nb:])
    ids = reshape(iota(dtypes.int32, prod(ishape)), ishape)
    ids = broadcast_in_dim(ids, tuple(idx.shape), tuple(range(nb, idx.ndim)))
    rows = tuple(x.shape[:nb]) + (x.shape[axis],)
    last = scatter_max_p.bind(full(rows, -1, dtypes.int32), idx, ids, axis=nb, batch_dims=nb)
    won = ew.eq(gather_p.bind(last, idx, axis=nb, batch_dims=nb), ids)
    return broadcast_in_dim(won, tuple(upd.shape), _index_dims_in_updates(idx, axis, nb))


def _scatter_set_vjp(ct, out, x, idx, upd, axis, batch_dims):
    kw = dict(axis=axis, batch_dims=batch_dims)
    ct_x = scatter_p.bind(ct, idx, _zeros(upd.shape, ct.dtype), **kw)
    g = gather_p.bind(ct, idx, **kw)
    ct_u = ew.select(_last_writer_mask(x, idx, upd, axis, batch_dims), g,
                     _zeros(g.shape, g.dtype))
    return ct_x, None, ct_u


def _scatter_mul_jvp(primals, tangents, axis, batch_dims):
    x, idx, upd = primals
    tx, tu = tangents[0], tangents[2]
    kw = dict(axis=axis, batch_dims=batch_dims)
    out = scatter_mul_p.bind(x, idx, upd, **kw)
    t = _zero_tangent(out)
    if not is_zero(tx):
        t = scatter_mul_p.bind(tx, idx, upd, **kw)
    if not is_zero(tu):  # d(x * prod u) = out * sum(du / u)  (updates must be non-zero)
        rel = scatter_add_p.bind(_zeros(x.shape, x.dtype), idx, ew.div(tu, upd), **kw)
        t2 = ew.mul(out, rel)
        t = t2 if is_zero(t) else ew.add(t, t2)
    return out, t


def _scatter_mul_vjp(ct, out, x, idx, upd, axis, batch_dims):
    kw = dict(axis=axis, batch_dims=batch_dims)
    ct_x = scatter_mul_p.bind(ct, idx, upd, **kw)
    ct_u = ew.div(gather_p.bind(ew.mul(ct, out), idx, **kw), upd)
    return ct_x, None, ct_u


def _minmax_masks(prim, x, idx, upd, out, kw):
    """Which operand entries and updates attain the result, and how many tie (>= 1)."""
    dt = x.dtype
    mx = ew.convert_element_type(ew.eq(x, out), dt)
    mu = ew.convert_element_type(ew.eq(upd, gather_p.bind(out, idx, **kw)), dt)
    count = ew.add(mx, scatter_add_p.bind(_zeros(x.shape, dt), idx, mu, **kw))
    return mx, mu, count


def _minmax_jvp(prim):
    def jvp(primals, tangents, axis, batch_dims):
        x, idx, upd = primals
        tx, tu = tangents[0], tangents[2]
        kw = dict(axis=axis, batch_dims=batch_dims)
        out = prim.bind(x, idx, upd, **kw)
        if is_zero(tx) and is_zero(tu):
            return out, _zero_tangent(out)
        mx, mu, count = _minmax_masks(prim, x, idx, upd, out, kw)
        num = _zeros(x.shape, x.dtype) if is_zero(tx) else ew.mul(tx, mx)
        if not is_zero(tu):
            num = scatter_add_p.bind(num, idx, ew.mul(tu, mu), **kw)
        return out, ew.div(num, count)
    return jvp


def _minmax_vjp(prim):
    def vjp(ct, out, x, idx, upd, axis, batch_dims):
        kw = dict(axis=axis, batch_dims=batch_dims)
        mx, mu, count = _minmax_masks(prim, x, idx, upd, out, kw)
        share = ew.div(ct, count)
        return ew.mul(share, mx), None, ew.mul(gather_p.bind(share, idx, **kw), mu)
    return vjp


scatter_add_p.jvp = _linear_scatter_jvp(scatter_add_p)
scatter_add_p.vjp = _scatter_add_vjp
scatter_p.jvp = _linear_scatter_jvp(scatter_p)
scatter_p.vjp = _scatter_set_vjp
scatter_mul_p.jvp = _scatter_mul_jvp
scatter_mul_p.vjp = _scatter_mul_vjp
for _p in (scatter_min_p, scatter_max_p):
    _p.jvp = _minmax_jvp(_p)
    _p.vjp = _minmax_vjp(_p)


def _scatter_fn(prim, doc):
    def f(operand, indices, updates, axis, batch_dims=0):
        operand, updates = _operand(operand, prim.name), _operand(updates, prim.name)
        if operand.ndim == 0:
            raise ValueError(f"{prim.name}: the operand must have at least one dimension, "
                             "got 0-d")
        axis = normalize_axis(axis, operand.ndim, prim.name)
        return prim.bind(operand, _index_array(indices, prim.name), updates, axis=axis,
                         batch_dims=operator.index(batch_dims))
    f.__name__ = prim.name
    f.__doc__ = doc
    return f


scatter_add = _scatter_fn(scatter_add_p, """The transpose of `gather`: out = operand, then
    out[b..., a..., indices[b..., i...], c...] += updates[b..., a..., i..., c...].

    updates.shape == gather's output shape; indices are int32, clamped into range (as gather
    does). Duplicate indices accumulate, deterministically, in index order.""")
scatter = _scatter_fn(scatter_p, """Like scatter_add, but each row receives the update of the
    last (in index order) index that hits it, as NumPy's `x[idx] = v` does.""")
scatter_mul = _scatter_fn(scatter_mul_p, """Like scatter_add with multiplication. The derivative
    with respect to the updates divides by them: it assumes non-zero updates.""")
scatter_min = _scatter_fn(scatter_min_p, """Like scatter_add with minimum (NaN propagates);
    tied minima share the derivative equally.""")
scatter_max = _scatter_fn(scatter_max_p, """Like scatter_add with maximum (NaN propagates);
    tied maxima share the derivative equally.""")
