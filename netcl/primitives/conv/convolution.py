"""conv_general_dilated_p, with all its rules, and the lax-level functions
`conv_general_dilated`, `conv`, `conv_with_general_padding`, `conv_transpose`.

  conv_general_dilated_p   lhs, rhs -> out, any layout (dimension_numbers), 1-3 spatial dims,
                           strides, explicit padding (negative crops), lhs/rhs dilation,
                           feature groups (incl. depthwise) and batch groups

Every configuration can run through the direct kernel (conv_kernels.py); convolutions large
enough to matter run as im2col + GEMM (conv_gemm.py). Derivatives follow JAX: the jvp is
bilinear, the vjp is two more convolutions (so grad of grad works).
"""
import operator

import numpy as np

from ...core import commands, dtypes, kernels
from ...core.array import Array
from ...core.ad_util import Zero, is_zero
from ...core.shapes import contiguous_strides, prod
from ...core.tracing import Primitive, ShapedArray
from .conv_gemm import _gemm_launcher
from .conv_gemm_plan import _plan_gemm
from .conv_kernels import _ConvGeometry, _conv_source, _gemm_dtype
from .dimension_numbers import (ConvDimensionNumbers, _canonical_precision, _dilate,
                                _explicit_padding, _int_tuple, conv_dimension_numbers,
                                padtype_to_pads)
from .kernel_metadata import _const_buffer


# =============================================================================================
# conv_general_dilated: abstract evaluation
# =============================================================================================

conv_general_dilated_p = Primitive("conv_general_dilated", fusion="opaque", precision="low")


def _conv_abstract(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision=None,
                   preferred_element_type=None):
    where = "conv_general_dilated"
    dn = dimension_numbers
    ctx = (f" (lhs shape {tuple(lhs.shape)}, rhs shape {tuple(rhs.shape)}, "
           f"dimension_numbers {tuple(dn)})")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"{where}: lhs and rhs must have the same rank{ctx}")
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dn):
        if sorted(spec) != list(range(lhs.ndim)):
            raise ValueError(f"{where}: {name} {spec} is not a permutation of the {lhs.ndim} "
                             f"dimensions{ctx}")
    nsp = lhs.ndim - 2
    for name, v in (("window_strides", window_strides), ("padding", padding),
                    ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp:
            raise ValueError(f"{where}: {name} {v} must have {nsp} entries, one per spatial "
                             f"dimension{ctx}")
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if any(s < 1 for s in v):
            raise ValueError(f"{where}: {name} {v} must be positive{ctx}")
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"{where}: lhs and rhs must have the same dtype, got {lhs.dtype} and "
                        f"{rhs.dtype}{ctx}")
    if dtypes.kind(lhs.dtype) != "f":
        raise TypeError(f"{where}: operands must be floating point, got {lhs.dtype}{ctx}")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1:
        raise ValueError(f"{where}: feature_group_count ({G}) and batch_group_count ({B}) "
                         f"must be positive{ctx}")
    if G > 1 and B > 1:
        raise ValueError(f"{where}: at most one of feature_group_count ({G}) and "
                         f"batch_group_count ({B}) may exceed 1{ctx}")
    lhs_spec, rhs_spec, out_spec = dn
    n, c = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    o, i = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if c % G:
        raise ValueError(f"{where}: feature_group_count={G} must divide the lhs feature "
                         f"dimension ({c}){ctx}")
    if c // G != i:
        raise ValueError(f"{where}: lhs feature dimension ({c}) / feature_group_count ({G}) "
                         f"must equal the rhs input feature dimension ({i}){ctx}")
    if o % G:
        raise ValueError(f"{where}: feature_group_count={G} must divide the rhs output "
                         f"feature dimension ({o}){ctx}")
    if n % B:
        raise ValueError(f"{where}: batch_group_count={B} must divide the lhs batch "
                         f"dimension ({n}){ctx}")
    if o % B:
        raise ValueError(f"{where}: batch_group_count={B} must divide the rhs output feature "
                         f"dimension ({o}){ctx}")
    out_sp = []
    for j in range(nsp):
        ind = _dilate(lhs.shape[lhs_spec[2 + j]], lhs_dilation[j])
        kd = _dilate(rhs.shape[rhs_spec[2 + j]], rhs_dilation[j])
        lo, hi = padding[j]
        padded = ind + lo + hi
        if padded < 0:
            raise ValueError(f"{where}: negative padding {padding[j]} is larger than spatial "
                             f"dimension {j} (size {ind} after lhs dilation){ctx}")
        out_sp.append(0 if padded < kd else (padded - kd) // window_strides[j] + 1)
    canon = (n // B, o) + tuple(out_sp)
    shape = [0] * lhs.ndim
    for k, d in enumerate(out_spec):
        shape[d] = canon[k]
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    if dtypes.kind(out_dtype) != "f":
        raise TypeError(f"{where}: preferred_element_type must be a floating dtype, got "
                        f"{out_dtype}{ctx}")
    return ShapedArray(tuple(shape), out_dtype, False)


conv_general_dilated_p.abstract_eval = _conv_abstract


# =============================================================================================
# conv_general_dilated: NumPy reference (direct, in float64)
# =============================================================================================

def _dilate_pad_np(x, axes, dilation, padding, fill):
    """x with `fill` inserted between elements (dilation) and padding (negative crops)."""
    for ax, d, (lo, hi) in zip(axes, dilation, padding):
        n = x.shape[ax]
        if d > 1 and n > 0:
            shape = list(x.shape)
            shape[ax] = _dilate(n, d)
            y = np.full(shape, fill, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(None, None, d)
            y[tuple(idx)] = x
            x = y
        pw = [(0, 0)] * x.ndim
        pw[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, pw, constant_values=fill)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def _conv_ref(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
              dimension_numbers, feature_group_count, batch_group_count, precision=None,
              preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    x = np.transpose(lhs, lhs_spec).astype(np.float64)           # (N, C, S...)
    w = np.transpose(rhs, rhs_spec).astype(np.float64)           # (O, I, K...)
    nsp = x.ndim - 2
    sp = tuple(range(2, 2 + nsp))
    x = _dilate_pad_np(x, sp, lhs_dilation, padding, 0.0)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    G, B = feature_group_count, batch_group_count
    win = w.shape[2:]
    out_sp = tuple(0 if x.shape[2 + j] < _dilate(win[j], rhs_dilation[j]) else
                   (x.shape[2 + j] - _dilate(win[j], rhs_dilation[j])) // window_strides[j] + 1
                   for j in range(nsp))
    out = np.zeros((N // B, O) + out_sp, np.float64)
    if out.size and I:
        for k in np.ndindex(*win):
            idx = (slice(None), slice(None)) + tuple(
                slice(k[j] * rhs_dilation[j],
                      k[j] * rhs_dilation[j] + window_strides[j] * (out_sp[j] - 1) + 1,
                      window_strides[j]) for j in range(nsp))
            patch = x[idx]                                        # (N, C, out...)
            wk = w[(slice(None), slice(None)) + k]                # (O, I)
            if B > 1:
                pb = patch.reshape((B, N // B, C) + out_sp)
                r = np.einsum("bnc...,boc->nbo...", pb, wk.reshape(B, O // B, C))
            else:
                pg = patch.reshape((N, G, C // G) + out_sp)
                r = np.einsum("ngc...,goc->ngo...", pg, wk.reshape(G, O // G, I))
            out += r.reshape((N // B, O) + out_sp)
    return np.transpose(out, np.argsort(out_spec)).astype(out_dtype)


conv_general_dilated_p.reference = _conv_ref


# =============================================================================================
# conv_general_dilated: launching (direct kernel or im2col + GEMM)
# =============================================================================================

def _conv_launcher(device, args, params, out_aval):
    from ...core.pool import Storage
    lhs, rhs = args
    geo = _ConvGeometry(lhs, rhs, out_aval, params)
    in_dtype, out_dtype = lhs.dtype, out_aval.dtype
    shape, weak = out_aval.shape, out_aval.weak_type
    queue, pool = device.queue, device.pool
    strides = contiguous_strides(shape)
    nbytes = prod(shape) * out_dtype.itemsize

    def new_out():
        st = Storage(pool, nbytes)
        return Array(device, st.buf, st, shape, out_dtype, strides, 0, weak, True)

    if geo.total == 0:
        return lambda x, w: new_out()
    src = _conv_source(in_dtype, out_dtype)
    plan = (_plan_gemm(geo, in_dtype, device)
            if out_dtype in (in_dtype, _gemm_dtype(in_dtype)) else None)
    if plan is not None:
        try:
            return _gemm_launcher(device, lhs, rhs, geo, plan, src, out_aval, new_out)
        except kernels.KernelBuildError as e:   # keep working on a driver that rejects it
            import warnings
            warnings.warn(f"conv_general_dilated: the im2col/GEMM kernels failed to build "
                          f"on {device.name}; using the direct kernel ({str(e)[:300]})")
    k = kernels.kernel(device, src, "conv_direct")
    meta = _const_buffer(device, geo.direct_meta())
    k.set_arg(3, meta)
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, geo.total)
    enqueue = commands.launch

    def launch_direct(x, w):
        out = new_out()
        k.set_arg(0, out._buf)
        k.set_arg(1, x._buf)
        k.set_arg(2, w._buf)
        enqueue(queue, k, gsize, lsize)
        return out
    return launch_direct


conv_general_dilated_p.make_launcher = _conv_launcher


# =============================================================================================
# conv_general_dilated: lax-level functions
# =============================================================================================

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """lax.conv_general_dilated: general n-d convolution (see the module docstring).

    padding: 'SAME', 'SAME_LOWER', 'VALID' or [(lo, hi), ...] per spatial dim (negative
    values crop). dimension_numbers: None (NCHW/OIHW/NCHW), strings such as
    ('NHWC', 'HWIO', 'NHWC'), or a ConvDimensionNumbers of three permutations.
    """
    from ...core.eval import to_array
    from ...core.tracing import Tracer
    if not isinstance(lhs, (Array, Tracer)):
        lhs = to_array(lhs, "conv_general_dilated")
    if not isinstance(rhs, (Array, Tracer)):
        rhs = to_array(rhs, "conv_general_dilated")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    nsp = lhs.ndim - 2
    where = "conv_general_dilated"
    ctx = (f" (lhs shape {tuple(lhs.shape)}, rhs shape {tuple(rhs.shape)}, "
           f"dimension_numbers {tuple(dn)})")
    ws = _int_tuple(window_strides, nsp, "window_strides", where)
    ld = _int_tuple(lhs_dilation, nsp, "lhs_dilation", where)
    rd = _int_tuple(rhs_dilation, nsp, "rhs_dilation", where)
    if isinstance(padding, str):
        if any(d != 1 for d in ld):
            raise ValueError(f"{where}: string padding {padding!r} is not defined with "
                             f"lhs_dilation {ld}; give explicit padding or use "
                             f"conv_transpose{ctx}")
        in_sp = [lhs.shape[d] for d in dn.lhs_spec[2:]]
        k_sp = [_dilate(rhs.shape[d], r) for d, r in zip(dn.rhs_spec[2:], rd)]
        try:
            pads = tuple(tuple(p) for p in padtype_to_pads(in_sp, k_sp, ws, padding))
        except ValueError:
            raise ValueError(f"{where}: unknown padding {padding!r}; expected 'SAME', "
                             f"'SAME_LOWER', 'VALID' or (low, high) pairs{ctx}") from None
    else:
        pads = _explicit_padding(padding, nsp, where, ctx)
    fg, bg = operator.index(feature_group_count), operator.index(batch_group_count)
    pet = None if preferred_element_type is None else dtypes.canonicalize(
        preferred_element_type, arg="preferred_element_type", where=where)
    params = dict(window_strides=ws, padding=pads, lhs_dilation=ld, rhs_dilation=rd,
                  dimension_numbers=dn, feature_group_count=fg, batch_group_count=bg,
                  precision=_canonical_precision(precision))
    if dtypes.is_complex(lhs.dtype) and lhs.dtype == rhs.dtype:
        # (bilinear: four real convolutions on the real kernels, as complex_ops' products)
        from ..complex_ops import bilinear_by_parts
        part = None if pet is None else dtypes.COMPLEX_PART.get(pet, pet)
        return bilinear_by_parts(lambda a, b: conv_general_dilated_p.bind(
            a, b, preferred_element_type=part, **params), lhs, rhs)
    return conv_general_dilated_p.bind(lhs, rhs, preferred_element_type=pet, **params)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """lax.conv: NCHW input, OIHW kernel, 'SAME'/'VALID' (or explicit) padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """lax.conv_with_general_padding: NCHW/OIHW with explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else -(-pad_len // 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f"conv_transpose: unknown padding {padding!r}; expected 'SAME', "
                         "'VALID' or (low, high) pairs")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """lax.conv_transpose: the fractionally strided convolution (lhs dilated by `strides`).

    'SAME'/'VALID' padding follow the forward conv's meaning (Keras Conv2DTranspose output
    sizes); explicit pairs pad the dilated input directly. transpose_kernel=True flips the
    spatial dims and swaps I/O of the kernel (the gradient of conv, as TF/Keras do).
    """
    from ..views import operand, rev, transpose
    lhs, rhs = operand(lhs, "conv_transpose"), operand(rhs, "conv_transpose")
    nd = lhs.ndim
    if nd != rhs.ndim or nd < 2:
        raise ValueError(f"conv_transpose: lhs shape {tuple(lhs.shape)} and rhs shape "
                         f"{tuple(rhs.shape)} must have the same rank >= 2")
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if nd not in defaults:
            raise ValueError(f"conv_transpose: no default dimension_numbers for rank {nd}")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    nsp = nd - 2
    strides = _int_tuple(strides, nsp, "strides", "conv_transpose")
    rd = _int_tuple(rhs_dilation, nsp, "rhs_dilation", "conv_transpose")
    k_sp = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = tuple(_conv_transpose_padding(_dilate(k, r), s, padding.upper())
                     for k, r, s in zip(k_sp, rd, strides))
    else:
        pads = _explicit_padding(padding, nsp, "conv_transpose")
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, lhs_dilation=strides,
                                rhs_dilation=rd, dimension_numbers=dn, precision=precision,
                                preferred_element_type=preferred_element_type)


# =============================================================================================
# conv_general_dilated: derivatives and batching (all written with primitives)
# =============================================================================================

def _reshape_axis_out_of(src, size1, x):
    from ..views import reshape
    shape = list(x.shape)
    size2 = shape[src] // size1
    shape[src:src + 1] = [size1, size2]
    return reshape(x, tuple(shape))


def _reshape_axis_into(src, dst, x):
    """Merge axis src into axis dst (dst numbered after src is removed), src outermost."""
    from ..views import reshape, transpose
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    new_shape = [x.shape[i] for i in range(x.ndim) if i != src]
    new_shape[dst] *= x.shape[src]
    return reshape(transpose(x, tuple(perm)), tuple(new_shape))


def _vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                     lhs_dilation, rhs_dilation):
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window_dimensions, window_strides,
                                           out_shape, padding, lhs_dilation, rhs_dilation):
        ind, kd, od = _dilate(n, ld), _dilate(k, rd), _dilate(o, s)
        before = kd - lo - 1
        after = ind + kd - 1 - od - before
        pads.append((before, after))
    return tuple(pads)


def _vjp_rhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                     lhs_dilation, rhs_dilation):
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window_dimensions, window_strides,
                                           out_shape, padding, lhs_dilation, rhs_dilation):
        ind, kd, od = _dilate(n, ld), _dilate(k, rd), _dilate(o, s)
        pads.append((lo, (od - ind) + (kd - lo - 1)))
    return tuple(pads)


def _convert(x, dtype):
    from ..elementwise import convert_element_type
    return x if x.dtype == dtype else convert_element_type(x, dtype)


def _conv_transpose_lhs(g, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision=None, preferred_element_type=None):
    from ..views import rev
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    t_rhs_spec = (rhs_spec[1], rhs_spec[0]) + tuple(rhs_spec[2:])
    if G > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], G, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif B > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], B, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        G = B
    pads = _vjp_lhs_padding([lhs_aval.shape[d] for d in lhs_spec[2:]],
                            [rhs.shape[d] for d in rhs_spec[2:]], window_strides,
                            [g.shape[d] for d in out_spec[2:]], padding, lhs_dilation,
                            rhs_dilation)
    w = _convert(rev(rhs, tuple(rhs_spec[2:])), g.dtype)
    out = conv_general_dilated_p.bind(
        g, w, window_strides=tuple(lhs_dilation), padding=pads,
        lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(out_spec, t_rhs_spec, lhs_spec),
        feature_group_count=G, batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type)
    out = _convert(out, lhs_aval.dtype)
    if B > 1:
        out = _reshape_axis_out_of(lhs_spec[1], B, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_transpose_rhs(g, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision=None, preferred_element_type=None):
    from ..views import full
    if prod(g.shape) == 0:
        return full(rhs_aval.shape, 0, rhs_aval.dtype)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    swap = lambda s: (s[1], s[0]) + tuple(s[2:])  # noqa: E731
    G, B = feature_group_count, batch_group_count
    if B > 1:
        G, B = B, 1
    elif G > 1:
        G, B = 1, G
    pads = _vjp_rhs_padding([lhs.shape[d] for d in lhs_spec[2:]],
                            [rhs_aval.shape[d] for d in rhs_spec[2:]], window_strides,
                            [g.shape[d] for d in out_spec[2:]], padding, lhs_dilation,
                            rhs_dilation)
    out = conv_general_dilated_p.bind(
        _convert(lhs, g.dtype), g, window_strides=tuple(rhs_dilation), padding=pads,
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(swap(lhs_spec), swap(out_spec), swap(rhs_spec)),
        feature_group_count=G, batch_group_count=B, precision=precision,
        preferred_element_type=preferred_element_type)
    return _convert(out, rhs_aval.dtype)


def _conv_vjp(ct, out, lhs, rhs, **params):
    return (_conv_transpose_lhs(ct, lhs, rhs, **params),
            _conv_transpose_rhs(ct, lhs, rhs, **params))


def _conv_jvp(primals, tangents, **params):
    lhs, rhs = primals
    tl, tr = tangents
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    t = None
    if not is_zero(tl):
        t = conv_general_dilated_p.bind(tl, rhs, **params)
    if not is_zero(tr):
        t2 = conv_general_dilated_p.bind(lhs, tr, **params)
        if t is None:
            t = t2
        else:
            from ..elementwise import add
            t = add(t, t2)
    if t is None:
        t = Zero(ShapedArray(out.shape, out.dtype, out.weak_type))
    return out, t


def _conv_batch(args, dims, **params):
    lhs, rhs = args
    lb, rb = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    G, B = params["feature_group_count"], params["batch_group_count"]
    bind = conv_general_dilated_p.bind
    size = lhs.shape[lb] if lb is not None else rhs.shape[rb]
    if size == 0:
        from ..views import full
        la = ShapedArray(tuple(s for i, s in enumerate(lhs.shape) if i != lb), lhs.dtype)
        ra = ShapedArray(tuple(s for i, s in enumerate(rhs.shape) if i != rb), rhs.dtype)
        o = _conv_abstract(la, ra, **params)
        return full((0,) + o.shape, 0, o.dtype), 0
    if lb is not None and rb is not None:
        if B > 1:
            new_lhs = _reshape_axis_into(lb, lhs_spec[0], lhs)
            params = dict(params, batch_group_count=B * size)
        else:
            new_lhs = _reshape_axis_into(lb, lhs_spec[1], lhs)
            params = dict(params, feature_group_count=G * size)
        new_rhs = _reshape_axis_into(rb, rhs_spec[0], rhs)
        out = bind(new_lhs, new_rhs, **params)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lb is not None:
        if B == 1:
            new_lhs = _reshape_axis_into(lb, lhs_spec[0], lhs)
            out = bind(new_lhs, rhs, **params)
            return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
        # batch groups stay outermost in the lhs batch dim: (B, size, N/B)
        new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lb <= lhs_spec[0]), B, lhs)
        new_lhs = _reshape_axis_into(lb + int(lhs_spec[0] < lb), lhs_spec[0] + 1, new_lhs)
        new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = bind(new_lhs, rhs, **params)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    if G == 1 and B == 1:
        new_rhs = _reshape_axis_into(rb, rhs_spec[0], rhs)
        out = bind(lhs, new_rhs, **params)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # groups stay outermost in the rhs output feature dim: (groups, size, O/groups)
    groups = G if G > 1 else B
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rb <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rb + int(rhs_spec[0] < rb), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = bind(lhs, new_rhs, **params)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = _reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


conv_general_dilated_p.jvp = _conv_jvp
conv_general_dilated_p.vjp = _conv_vjp
conv_general_dilated_p.batch = _conv_batch
