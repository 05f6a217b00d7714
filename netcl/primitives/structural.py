"""Structural primitives: iota, concatenate, pad, dynamic_slice, dynamic_update_slice, gather
and the scatter family (scatter_add, scatter, scatter_mul, scatter_min, scatter_max).

Kernels (few distinct sources; sizes, strides and offsets are arguments):

  nc_copy     one strided box copy, typed by item size only (uchar/ushort/uint/ulong), so
              float32, int32 and uint32 share one build. With `dyn` set it adds clamped start
              indices read from device memory to the source (dynamic_slice) or destination
              (dynamic_update_slice) offset. concatenate is one copy per operand, pad a fill
              (a copy from the 0-d padding value with zero strides) plus one copy into the
              strided interior, dynamic_update_slice a copy of the operand plus one of the
              update. No kernel ever reads or writes out of bounds: starts are clamped as in
              JAX (into [0, dim - size]).
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
import pyopencl as cl

from ..core import dtypes, kernels
from ..core.ad_util import Zero, instantiate, is_zero
from ..core.array import Array
from ..core.shapes import contiguous_strides, normalize_axis, prod
from ..core.tracing import Primitive, ShapedArray
from . import elementwise as ew
from .views import (bdim_at_front, broadcast_in_dim, full, move_batch_axis, reshape,
                    slice as lax_slice)

__all__ = ["iota", "concatenate", "pad", "dynamic_slice", "dynamic_update_slice",
           "dynamic_slice_in_dim", "dynamic_update_slice_in_dim", "dynamic_index_in_dim",
           "gather", "scatter_add", "scatter", "scatter_mul", "scatter_min", "scatter_max"]

_INT_LIMIT = 2**31 - 1


def _check_size(name, shape):
    if prod(shape) > _INT_LIMIT:
        raise ValueError(f"{name}: arrays of {prod(shape)} elements exceed the 2^31 index limit")


# ---- kernels -------------------------------------------------------------------------------

_RAW_CTYPE = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}

_COPY_SRC = """
__kernel void nc_copy(__global {T}* out, const int out_off, __global const {T}* in,
                      const int in_off, __constant int* meta, __global const int* starts,
                      const int rank, const int n, const int dyn) {{
  /* meta: box shape [0, rank), destination strides [rank, 2 rank), source strides
     [2 rank, 3 rank), largest start [3 rank, 4 rank) (dyn: 1 source, 2 destination) */
  const int i = get_global_id(0);
  if (i >= n) return;
  int o = out_off, s = in_off, rem = i;
  for (int d = rank - 1; d >= 0; --d) {{
    const int c = rem % meta[d]; rem /= meta[d];
    o += c * meta[rank + d]; s += c * meta[2 * rank + d];
  }}
  if (dyn) {{
    for (int d = 0; d < rank; ++d) {{
      const int st = clamp(starts[d], 0, meta[3 * rank + d]);
      if (dyn == 1) s += st * meta[2 * rank + d]; else o += st * meta[rank + d];
    }}
  }}
  out[o] = in[s];
}}
"""

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
    "min": {"f": "((acc < v || isnan(acc)) ? acc : v)", "i": "min(acc, v)", "u": "min(acc, v)",
            "b": "min(acc, v)"},
    "max": {"f": "((acc > v || isnan(acc)) ? acc : v)", "i": "max(acc, v)", "u": "max(acc, v)",
            "b": "max(acc, v)"},
}
_MODE_CODE = {"add": 0, "mul": 1, "min": 2, "max": 3, "set": 4}


def _const_buffer(device, values):
    arr = np.array(list(values) or [0], dtype=np.int32)
    return cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=arr)


def _copy_piece(device, itemsize, box, out_strides, out_off, in_strides, in_off,
                max_start=None, dyn=0):
    """A prepared launch of nc_copy; returns run(out_buf, in_buf, starts_buf) or None if empty."""
    n = prod(box)
    if n == 0:
        return None
    rank = len(box)
    k = kernels.kernel(device, _COPY_SRC.format(T=_RAW_CTYPE[itemsize]), "nc_copy")
    meta = _const_buffer(device, list(box) + list(out_strides) + list(in_strides)
                         + list(max_start if max_start is not None else [0] * rank))
    k.set_arg(1, np.int32(out_off))
    k.set_arg(3, np.int32(in_off))
    k.set_arg(4, meta)
    k.set_arg(5, meta)  # placeholder; replaced by the packed starts when dyn
    k.set_arg(6, np.int32(rank))
    k.set_arg(7, np.int32(n))
    k.set_arg(8, np.int32(dyn if rank else 0))
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, n)
    queue, set_arg, enqueue = device.queue, k.set_arg, cl.enqueue_nd_range_kernel

    def run(out_buf, in_buf, starts_buf=None):
        set_arg(0, out_buf)
        set_arg(2, in_buf)
        if starts_buf is not None:
            set_arg(5, starts_buf)
        enqueue(queue, k, gsize, lsize)
    return run


def _pack_starts(device, starts):
    """The 0-d int32 start indices side by side in one small device buffer (no kernel)."""
    packed = Array.empty(device, (len(starts),), dtypes.int32)
    for d, s in enumerate(starts):
        cl.enqueue_copy(device.queue, packed._buf, s._buf, byte_count=4,
                        src_offset=s.offset * 4, dst_offset=d * 4)
    return packed


def _empty_launcher(device, aval):
    return lambda *xs: Array.empty(device, aval.shape, aval.dtype, aval.weak_type)


def _zeros(shape, dtype):
    return full(tuple(shape), 0, dtype)


def _zero_tangent(x):
    return Zero(ShapedArray(x.shape, x.dtype, x.weak_type))


def _batch_size(args, dims):
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise AssertionError("no batched argument")


# ---- iota ----------------------------------------------------------------------------------

iota_p = Primitive("iota")


def _iota_abstract(*, dtype, size):
    if dtype.kind not in "iuf":
        raise TypeError(f"iota: dtype must be an integer or floating type, got {dtype}")
    if size < 0:
        raise ValueError(f"iota: size must be non-negative, got {size}")
    _check_size("iota", (size,))
    return ShapedArray((size,), dtype, False)


def _iota_launcher(device, args, params, out):
    dtype, size = params["dtype"], params["size"]
    if size == 0:
        return _empty_launcher(device, out)
    from ..core.devices import default_device
    src = ("__kernel void nc_iota(__global {S}* out, const int n) {{\n"
           "  const int i = get_global_id(0);\n"
           "  if (i < n) {{ {store} }}\n}}\n").format(
        S=kernels.storage_ctype(dtype),
        store=kernels.store(dtype, "out", "i", f"({kernels.compute_ctype(dtype)})i"))
    per_device = {}

    def build(dev):
        k = kernels.kernel(dev, src, "nc_iota")
        k.set_arg(1, np.int32(size))
        gsize, lsize = kernels.grid_1d(dev, size)
        return k, gsize, lsize

    per_device[device] = build(device)

    def launch():
        # The eager cache key of a primitive without operands has no device in it: build
        # per device so a changed default device still gets its own array.
        dev = default_device()
        if dev.is_numpy:
            return Array.from_numpy(dev, np.arange(size, dtype=dtype))
        entry = per_device.get(dev)
        if entry is None:
            entry = per_device[dev] = build(dev)
        k, gsize, lsize = entry
        res = Array.empty(dev, (size,), dtype, False)
        k.set_arg(0, res._buf)
        cl.enqueue_nd_range_kernel(dev.queue, k, gsize, lsize)
        return res
    return launch


iota_p.abstract_eval = _iota_abstract
iota_p.make_launcher = _iota_launcher
iota_p.reference = lambda *, dtype, size: np.arange(size, dtype=dtype)
iota_p.jvp = lambda primals, tangents, **p: (iota_p.bind(**p),
                                             Zero(ShapedArray((p["size"],), p["dtype"])))
iota_p.vjp = lambda ct, out, **p: ()
iota_p.batch = lambda args, dims, **p: (iota_p.bind(**p), None)


def iota(dtype, size):
    """lax.iota: the 1-d array [0, 1, ..., size - 1] of `dtype`."""
    dtype = dtypes.canonicalize(dtype, where="iota")
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"iota: size must be an int, got {type(size).__name__}") from None
    return iota_p.bind(dtype=dtype, size=size)


# ---- concatenate ---------------------------------------------------------------------------

concatenate_p = Primitive("concatenate")


def _concatenate_abstract(*ops, dimension):
    if not ops:
        raise ValueError("concatenate: needs at least one operand")
    shapes = ", ".join(str(tuple(o.shape)) for o in ops)
    nd = ops[0].ndim
    if nd == 0:
        raise ValueError("concatenate: operands must have at least one dimension, got 0-d")
    if not 0 <= dimension < nd:
        raise ValueError(f"concatenate: dimension {dimension} is out of range for operands of "
                         f"rank {nd}")
    for o in ops:
        if o.dtype != ops[0].dtype:
            raise TypeError(f"concatenate: operands must have equal dtypes, got "
                            f"{', '.join(str(x.dtype) for x in ops)}")
        if o.ndim != nd or any(a != b for d, (a, b) in enumerate(zip(o.shape, ops[0].shape))
                               if d != dimension):
            raise ValueError(f"concatenate: operand shapes must agree except in dimension "
                             f"{dimension}, got {shapes}")
    shape = list(ops[0].shape)
    shape[dimension] = sum(o.shape[dimension] for o in ops)
    _check_size("concatenate", shape)
    return ShapedArray(tuple(shape), ops[0].dtype, all(o.weak_type for o in ops))


def _concatenate_launcher(device, args, params, out):
    dim = params["dimension"]
    if out.size == 0:
        return _empty_launcher(device, out)
    ostr = contiguous_strides(out.shape)
    pieces, pos = [], 0
    for x in args:
        run = _copy_piece(device, x.dtype.itemsize, x.shape, ostr, pos * ostr[dim],
                          x.strides, x.offset)
        pieces.append(run)
        pos += x.shape[dim]
    shape, dtype, weak = out.shape, out.dtype, out.weak_type

    def launch(*xs):
        res = Array.empty(device, shape, dtype, weak)
        for run, x in zip(pieces, xs):
            if run is not None:
                run(res._buf, x._buf)
        return res
    return launch


def _concatenate_jvp(primals, tangents, dimension):
    out = concatenate_p.bind(*primals, dimension=dimension)
    if all(is_zero(t) for t in tangents):
        return out, _zero_tangent(out)
    return out, concatenate_p.bind(*[instantiate(t) for t in tangents], dimension=dimension)


def _concatenate_vjp(ct, out, *ops, dimension):
    cts, pos = [], 0
    for o in ops:
        start = [0] * ct.ndim
        limit = list(ct.shape)
        start[dimension], limit[dimension] = pos, pos + o.shape[dimension]
        cts.append(lax_slice(ct, tuple(start), tuple(limit)))
        pos += o.shape[dimension]
    return tuple(cts)


def _concatenate_batch(args, dims, dimension):
    size = _batch_size(args, dims)
    xs = [bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


concatenate_p.abstract_eval = _concatenate_abstract
concatenate_p.make_launcher = _concatenate_launcher
concatenate_p.reference = lambda *ops, dimension: np.concatenate(ops, axis=dimension)
concatenate_p.jvp = _concatenate_jvp
concatenate_p.vjp = _concatenate_vjp
concatenate_p.batch = _concatenate_batch


def concatenate(operands, dimension):
    """lax.concatenate: join operands of equal dtype along `dimension` (other dims equal)."""
    operands = tuple(operands)
    if not operands:
        raise ValueError("concatenate: needs at least one operand")
    dimension = normalize_axis(dimension, operands[0].ndim, "concatenate", "dimension") \
        if operands[0].ndim else operator.index(dimension)
    if len(operands) == 1:
        concatenate_p.abstract_eval(operands[0], dimension=dimension)  # same checks
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


# ---- pad -----------------------------------------------------------------------------------

pad_p = Primitive("pad")


def _pad_shape(shape, config):
    return tuple(lo + hi + n + max(0, n - 1) * it for n, (lo, hi, it) in zip(shape, config))


def _pad_abstract(x, pv, padding_config):
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad: padding_config {padding_config} needs one (lo, hi, interior) "
                         f"entry per dimension of the operand shape {x.shape}")
    if pv.ndim != 0:
        raise ValueError(f"pad: padding_value must be a scalar (0-d), got shape {pv.shape}")
    if pv.dtype != x.dtype:
        raise TypeError(f"pad: padding_value dtype {pv.dtype} differs from the operand's "
                        f"{x.dtype}")
    for d, (lo, hi, it) in enumerate(padding_config):
        if it < 0:
            raise ValueError(f"pad: interior padding must be non-negative, got {it} in "
                             f"dimension {d} of padding_config {padding_config}")
    shape = _pad_shape(x.shape, padding_config)
    if any(s < 0 for s in shape):
        raise ValueError(f"pad: padding_config {padding_config} gives a negative dimension "
                         f"{shape} for operand shape {x.shape}")
    _check_size("pad", shape)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_launcher(device, args, params, out):
    x, pv = args
    config = params["padding_config"]
    shape = out.shape
    if out.size == 0:
        return _empty_launcher(device, out)
    ostr = contiguous_strides(shape)
    box, in_off, out_off, o_str = [], x.offset, 0, []
    for d, (lo, hi, it) in enumerate(config):
        s, n, size = it + 1, x.shape[d], shape[d]
        i0 = max(0, -(lo // s)) if lo < 0 else 0       # first operand element kept
        i1 = min(n, (size - 1 - lo) // s + 1)            # one past the last
        cnt = max(0, i1 - i0)
        box.append(cnt)
        in_off += i0 * x.strides[d] if cnt else 0
        out_off += (lo + i0 * s) * ostr[d] if cnt else 0
        o_str.append(ostr[d] * s)
    item = x.dtype.itemsize
    copy = _copy_piece(device, item, box, o_str, out_off, x.strides, in_off)
    fill = None if prod(box) == out.size else \
        _copy_piece(device, item, shape, ostr, 0, (0,) * len(shape), pv.offset)
    dtype, weak = out.dtype, out.weak_type

    def launch(x, pv):
        res = Array.empty(device, shape, dtype, weak)
        if fill is not None:
            fill(res._buf, pv._buf)
        if copy is not None:
            copy(res._buf, x._buf)
        return res
    return launch


def _pad_ref(x, pv, padding_config):
    y = x
    for d, (lo, hi, it) in enumerate(padding_config):
        n = y.shape[d]
        if it and n > 1:
            shape = list(y.shape)
            shape[d] = n + (n - 1) * it
            z = np.full(shape, pv, x.dtype)
            sl = [slice(None)] * y.ndim
            sl[d] = slice(None, None, it + 1)
            z[tuple(sl)] = y
            y = z
        widths = [(0, 0)] * y.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        y = np.pad(y, widths, mode="constant", constant_values=pv)
        sl = [slice(None)] * y.ndim
        sl[d] = slice(max(-lo, 0), y.shape[d] - max(-hi, 0))
        y = y[tuple(sl)]
    return np.asarray(y, dtype=x.dtype)


def _pad_jvp(primals, tangents, padding_config):
    out = pad_p.bind(*primals, padding_config=padding_config)
    tx, tv = tangents
    if is_zero(tx) and is_zero(tv):
        return out, _zero_tangent(out)
    return out, pad_p.bind(instantiate(tx), instantiate(tv), padding_config=padding_config)


def _pad_vjp(ct, out, x, pv, padding_config):
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    t = pad(ct, full((), 0, ct.dtype), unpad)
    t_x = lax_slice(t, (0,) * t.ndim, t.shape, tuple(it + 1 for _, _, it in padding_config))
    if ct.dtype.kind != "f":
        return t_x, None
    from .reductions import reduce_sum
    axes = tuple(range(ct.ndim))
    total = reduce_sum(ct, axes) if axes else ct
    inner = reduce_sum(t_x, axes) if axes else t_x
    return t_x, ew.sub(total, inner)


def _pad_batch(args, dims, padding_config):
    (x, pv), (dx, dv) = args, dims
    config = ((0, 0, 0),) + tuple(padding_config)
    if dv is None:
        return pad_p.bind(move_batch_axis(x, dx, 0), pv, padding_config=config), 0
    size = _batch_size(args, dims)
    x = bdim_at_front(x, dx, size)
    padded = pad_p.bind(x, full((), 0, x.dtype), padding_config=config)
    mask = pad_p.bind(full(x.shape[1:], True, dtypes.bool_), full((), False, dtypes.bool_),
                      padding_config=tuple(padding_config))
    mask = broadcast_in_dim(mask, padded.shape, tuple(range(1, padded.ndim)))
    values = broadcast_in_dim(move_batch_axis(pv, dv, 0), padded.shape, (0,))
    return ew.select(mask, padded, values), 0


pad_p.abstract_eval = _pad_abstract
pad_p.make_launcher = _pad_launcher
pad_p.reference = _pad_ref
pad_p.jvp = _pad_jvp
pad_p.vjp = _pad_vjp
pad_p.batch = _pad_batch


def pad(operand, padding_value, padding_config):
    """lax.pad: `padding_config` holds (lo, hi, interior) per dimension; negative lo/hi crop.

    `padding_value` is a 0-d array of the operand's dtype (or a Python scalar).
    """
    try:
        config = tuple((operator.index(lo), operator.index(hi), operator.index(it))
                       for lo, hi, it in padding_config)
    except (TypeError, ValueError):
        raise TypeError(f"pad: padding_config must be a sequence of (lo, hi, interior) int "
                        f"triples, got {padding_config!r}") from None
    if not hasattr(padding_value, "dtype") or isinstance(padding_value, (np.generic, np.ndarray)):
        padding_value = full((), np.asarray(padding_value).item(), operand.dtype)
    if all(c == (0, 0, 0) for c in config) and len(config) == operand.ndim:
        pad_p.abstract_eval(operand, padding_value, padding_config=config)  # same checks
        return operand
    return pad_p.bind(operand, padding_value, padding_config=config)


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

    def launch(x, u, *starts):
        res = Array.empty(device, shape, dtype, weak)
        copy(res._buf, x._buf)
        if put is not None:
            if starts:
                put(res._buf, u._buf, _pack_starts(device, starts)._buf)
            else:
                put(res._buf, u._buf)
        return res
    return launch


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
dynamic_update_slice_p.jvp = _dynamic_update_slice_jvp
dynamic_update_slice_p.vjp = _dynamic_update_slice_vjp
dynamic_update_slice_p.batch = _dynamic_update_slice_batch


def _start_index(s, name):
    if hasattr(s, "dtype") and hasattr(s, "shape"):
        if s.ndim != 0:
            raise TypeError(f"{name}: start indices must be scalars, got shape {tuple(s.shape)}")
        if s.dtype.kind not in "iu":
            raise TypeError(f"{name}: start indices must be integers, got {s.dtype}")
        return s if s.dtype == dtypes.int32 else ew.convert_element_type(s, dtypes.int32)
    try:
        v = operator.index(s)
    except TypeError:
        raise TypeError(f"{name}: start indices must be ints or 0-d integer arrays, got "
                        f"{type(s).__name__}") from None
    return _int_const(int(np.clip(v, -2**31, 2**31 - 1)))


def dynamic_slice(operand, start_indices, slice_sizes):
    """lax.dynamic_slice: a `slice_sizes` box at run-time starts (clamped into range)."""
    starts = tuple(_start_index(s, "dynamic_slice") for s in start_indices)
    try:
        sizes = tuple(operator.index(s) for s in slice_sizes)
    except TypeError:
        raise TypeError(f"dynamic_slice: slice_sizes must be ints, got {slice_sizes!r}") from None
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices):
    """lax.dynamic_update_slice: `operand` with `update` written at run-time starts (clamped)."""
    starts = tuple(_start_index(s, "dynamic_update_slice") for s in start_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """lax.dynamic_slice_in_dim: dynamic_slice along one axis."""
    axis = normalize_axis(axis, operand.ndim, "dynamic_slice_in_dim")
    starts = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """lax.dynamic_index_in_dim: one index along `axis` (kept as size 1 unless keepdims=False)."""
    axis = normalize_axis(axis, operand.ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return out
    return reshape(out, tuple(s for d, s in enumerate(out.shape) if d != axis))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """lax.dynamic_update_slice_in_dim: dynamic_update_slice along one axis."""
    axis = normalize_axis(axis, operand.ndim, "dynamic_update_slice_in_dim")
    starts = [0] * operand.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


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
    queue, set_arg, enqueue = device.queue, k.set_arg, cl.enqueue_nd_range_kernel

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
        from ..core.eval import to_array
        host = np.asarray(indices)
        if host.dtype.kind not in "iu":
            raise TypeError(f"{name}: indices must be integers, got {host.dtype}")
        if host.size and (host.min() < -2**31 or host.max() > 2**31 - 1):
            raise ValueError(f"{name}: indices do not fit in int32")
        return to_array(host.astype(np.int32), name)
    if indices.dtype == dtypes.uint32:
        return ew.convert_element_type(indices, dtypes.int32)
    return indices


def gather(operand, indices, axis, batch_dims=0):
    """operand[b..., a..., indices[b..., i...], c...]: np.take along `axis` with the first
    `batch_dims` dimensions of operand and indices paired (take_along_axis style).

    Indices are int32 and clamped into [0, operand.shape[axis]) (never read out of range).
    The output shape is operand.shape[:axis] + indices.shape[batch_dims:] +
    operand.shape[axis + 1:].
    """
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
            **{m: _COMBINE[m][d.kind] for m in _COMBINE})
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
        queue, enqueue = device.queue, cl.enqueue_nd_range_kernel

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
        work_dtype = np.float32 if x.dtype == np.float16 else x.dtype
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
