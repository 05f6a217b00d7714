"""iota, concatenate and pad: primitives that build or join arrays along static shapes
(concatenate and pad are nc_copy launches, see copy_kernels.py)."""
import operator

import numpy as np

from ...core import commands, dtypes, kernels
from ...core.ad_util import Zero, instantiate, is_zero
from ...core.array import Array
from ...core.shapes import contiguous_strides, normalize_axis, prod
from ...core.tracing import Primitive, ShapedArray
from .. import elementwise as ew
from ..views import bdim_at_front, broadcast_in_dim, full, move_batch_axis
from ..views import operand as _operand, slice as lax_slice
from .common import _batch_size, _check_size, _empty_launcher, _zero_tangent
from .copy_kernels import _copy_piece

# ---- iota ----------------------------------------------------------------------------------

iota_p = Primitive("iota")


def _iota_abstract(*, dtype, size):
    if dtypes.kind(dtype) not in "iuf":
        raise TypeError(f"iota: dtype must be an integer or floating type, got {dtype}")
    if size < 0:
        raise ValueError(f"iota: size must be non-negative, got {size}")
    _check_size("iota", (size,))
    return ShapedArray((size,), dtype, False)


def _iota_launcher(device, args, params, out):
    dtype, size = params["dtype"], params["size"]
    if size == 0:
        return _empty_launcher(device, out)
    src = ("__kernel void nc_iota(__global {S}* out, const int n) {{\n"
           "  const int i = get_global_id(0);\n"
           "  if (i < n) {{ {store} }}\n}}\n").format(
        S=kernels.storage_ctype(dtype),
        store=kernels.store(dtype, "out", "i", f"({kernels.compute_ctype(dtype)})i"))
    # (the eager cache keys an operand-less primitive by the default device, so this
    # launcher is `device`'s, also inside a compiled plan run with another default)
    k = kernels.kernel(device, src, "nc_iota")
    k.set_arg(1, np.int32(size))
    gsize, lsize = kernels.grid_1d(device, size)

    def launch():
        res = Array.empty(device, (size,), dtype, False)
        k.set_arg(0, res._buf)
        commands.launch(device.queue, k, gsize, lsize)
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
    if not isinstance(operands, (list, tuple)):
        raise TypeError(f"concatenate: operands must be a sequence of arrays, got "
                        f"{type(operands).__name__}")
    operands = tuple(_operand(x, "concatenate") for x in operands)
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
    if dtypes.kind(ct.dtype) != "f":
        return t_x, None
    from ..reductions import reduce_sum
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
    operand = _operand(operand, "pad")
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
