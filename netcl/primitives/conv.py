"""Convolutions and windowed reductions, with jax.lax's names and semantics.

  conv_general_dilated_p   lhs, rhs -> out, any layout (dimension_numbers), 1-3 spatial dims,
                           strides, explicit padding (negative crops), lhs/rhs dilation,
                           feature groups (incl. depthwise) and batch groups
  reduce_window_{sum,max,min}_p   windowed reductions over any dims (pooling)
  select_and_scatter_add_p / select_and_gather_add_p   the max/min-pooling derivatives

Lax-level functions normalise user arguments and bind: `conv_general_dilated`, `conv`,
`conv_with_general_padding`, `conv_transpose`, `conv_dimension_numbers`, `reduce_window`,
`reduce_window_sum`/`_max`/`_min`, `padtype_to_pads`.

Kernels. Every configuration runs through a direct kernel (one work-item per output element,
looping over the window and the group's input channels; sizes and strides in a small
__constant metadata buffer, so one build per dtype serves every shape and layout).
Convolutions large enough to matter run as im2col + the tiled GEMM of `gemm.py` (`_plan_gemm`
decides): a kernel gathers the patches matrix P (rows: the output's non-feature dims in the
output's memory order; columns: the kernel's non-output dims in the kernel's memory order),
and batched GEMMs multiply it with the kernel read in place (or packed when it is a strided
view, e.g. the reversed kernel of the input gradient), writing the output in its own layout.
Kernel gradients (few output tiles, huge K) split K across work-groups and add the parts;
float16 runs through the float32 GEMM (im2col and packing convert, one kernel narrows).
Window kernels are generated per operand rank and per-dim class (`_window_classes`), so
trivial dims cost nothing and VALID-style windows need no bounds checks.

Performance notes (PoCL on x86, measured): integer division is the slowest part of index
arithmetic, so every n / d uses a multiply-shift (`_magic`); isnan() is an out-of-line call
that made the pooling loops ~10x slower, so NaNs are detected on the bits; metadata is read
into private constants once per work-item (loads inside loops are not hoisted).

Derivatives follow JAX: conv's jvp is bilinear, its vjp is two more convolutions (so grad of
grad works); reduce_window_sum's transpose is a reduce_window_sum; max/min pooling
differentiate through select_and_gather_add (jvp) and select_and_scatter_add (vjp), which
are each other's transposes.
"""
import operator
from typing import NamedTuple

import numpy as np

from ..core import dtypes, kernels
from ..core.array import Array
from ..core.ad_util import Zero, is_zero
from ..core.shapes import contiguous_strides, prod
from ..core.tracing import Primitive, ShapedArray

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_transpose", "padtype_to_pads", "reduce_window",
           "reduce_window_sum", "reduce_window_max", "reduce_window_min",
           "select_and_scatter_add", "select_and_gather_add"]

_INDEX_LIMIT = 2**31 - 1
_MAX_SPATIAL = 3   # conv kernels handle up to 3 spatial dims (more: NotImplementedError)
_MAX_WINDOW_RANK = 8


# =============================================================================================
# dimension numbers and padding
# =============================================================================================

class ConvDimensionNumbers(NamedTuple):
    """(lhs_spec, rhs_spec, out_spec), each a tuple of dimension indices:
    lhs/out: (batch dim, feature dim, spatial dims...); rhs: (out feature dim, in feature dim,
    spatial dims...), as in jax.lax.ConvDimensionNumbers."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _spec_from_string(spec, pair, rhs_string):
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if rhs_string is not None:
        spatial.sort(key=lambda i: rhs_string.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """lax.conv_dimension_numbers: None (NCHW/OIHW/NCHW), a tuple of 3 layout strings such as
    ('NHWC', 'HWIO', 'NHWC'), or three permutations -> ConvDimensionNumbers."""
    where = "conv_general_dilated"
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"{where}: lhs and rhs must have the same rank, got lhs shape "
                        f"{lhs_shape} and rhs shape {rhs_shape}")
    nd = len(lhs_shape)
    if nd < 2:
        raise TypeError(f"{where}: lhs and rhs need rank >= 2 (batch and feature dims), got "
                        f"lhs shape {lhs_shape} and rhs shape {rhs_shape}")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError(f"{where}: dimension_numbers must be None, three layout strings or "
                        f"three permutations, got {dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs_s, rhs_s, out_s = dimension_numbers
        for i, (s, pair) in enumerate(zip(dimension_numbers, (("N", "C"), ("O", "I"),
                                                                ("N", "C")))):
            if len(s) != nd:
                raise TypeError(f"{where}: dimension_numbers[{i}]={s!r} must have one letter "
                                f"per dimension of lhs shape {lhs_shape} / rhs shape "
                                f"{rhs_shape} (rank {nd})")
            if s.count(pair[0]) != 1 or s.count(pair[1]) != 1 or len(set(s)) != len(s):
                raise TypeError(f"{where}: dimension_numbers[{i}]={s!r} must contain "
                                f"'{pair[0]}' and '{pair[1]}' exactly once and no repeated "
                                f"letters (dimension_numbers={tuple(dimension_numbers)})")
        sp = [set(s) - set(p) for s, p in zip(dimension_numbers, ("NC", "OI", "NC"))]
        if not sp[0] == sp[1] == sp[2]:
            raise TypeError(f"{where}: dimension_numbers {tuple(dimension_numbers)} must name "
                            "the same spatial letters in all three layouts")
        return ConvDimensionNumbers(_spec_from_string(lhs_s, "NC", rhs_s),
                                    _spec_from_string(rhs_s, "OI", None),
                                    _spec_from_string(out_s, "NC", rhs_s))
    try:
        specs = tuple(tuple(operator.index(d) for d in s) for s in dimension_numbers)
    except TypeError:
        raise TypeError(f"{where}: dimension_numbers must be three layout strings or three "
                        f"permutations, got {dimension_numbers!r}") from None
    for i, s in enumerate(specs):
        if sorted(s) != list(range(nd)):
            raise TypeError(f"{where}: dimension_numbers[{i}]={s} is not a permutation of the "
                            f"{nd} dimensions of lhs shape {lhs_shape} / rhs shape {rhs_shape}")
    return ConvDimensionNumbers(*specs)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME', 'SAME_LOWER' or 'VALID' -> explicit [(lo, hi), ...] (lax.padtype_to_pads)."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads: padding must be a string, got {padding!r}")
    p = padding.upper()
    if p == "VALID":
        return [(0, 0)] * len(in_shape)
    if p in ("SAME", "SAME_LOWER"):
        out = []
        for n, k, s in zip(in_shape, window_shape, window_strides):
            o = -(-n // s)
            total = max((o - 1) * s + k - n, 0)
            lo = total // 2 if p == "SAME" else total - total // 2
            out.append((lo, total - lo))
        return out
    raise ValueError(f"padtype_to_pads: unknown padding {padding!r}; expected 'SAME', "
                     "'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs")


def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _int_tuple(x, n, name, where, default=1):
    if x is None:
        return (default,) * n
    if isinstance(x, int) or hasattr(x, "__index__") and not hasattr(x, "__len__"):
        x = (x,) * n
    try:
        t = tuple(operator.index(v) for v in x)
    except TypeError:
        raise TypeError(f"{where}: {name} must be a sequence of {n} ints, got {x!r}") from None
    if len(t) != n:
        raise ValueError(f"{where}: {name}={t} must have {n} entries (one per spatial/window "
                         "dimension)")
    return t


def _explicit_padding(padding, n, where, ctx=""):
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence "
                        f"of {n} (low, high) int pairs, got {padding!r}{ctx}") from None
    if len(pads) != n:
        raise ValueError(f"{where}: padding {pads} must have {n} (low, high) pairs{ctx}")
    return pads


def _canonical_precision(precision):
    if precision is None:
        return None
    if isinstance(precision, (tuple, list)):
        return tuple(_canonical_precision(p) for p in precision)
    return str(getattr(precision, "name", precision)).lower()


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
    if lhs.dtype.kind != "f":
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
    if out_dtype.kind != "f":
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
# conv_general_dilated: OpenCL kernels
# =============================================================================================

def _meta_layout(names):
    return {n: i for i, n in enumerate(names)}


def _magic(d):
    """(multiplier, shift) with n / d == (n * multiplier) >> shift for 0 <= n < 2^31
    (Granlund-Montgomery with a 32-bit multiplier; integer division is the slowest
    instruction of these index computations on CPUs). The multiplier is returned as the
    int32 bit pattern of a uint32."""
    d = max(int(d), 1)
    ell = (d - 1).bit_length()
    m = (1 << (31 + ell)) // d + 1
    return (m - (1 << 32) if m >= 1 << 31 else m), 31 + ell


# n / d for 0 <= n < 2^31, with (mg, sh) = _magic(d)
_NDIV = "#define NDIV(n, mg, sh) ((int)(((ulong)(uint)(n) * (ulong)(uint)(mg)) >> (sh)))\n"


# direct kernel metadata (3 spatial slots; missing dims have size 1)
_DM = _meta_layout(
    ["nout", "oc", "cg", "og", "ob", "total",
     "osn", "oso", "os0", "os1", "os2", "sz0", "sz1", "sz2",
     "mosn", "sosn", "moso", "soso", "mos0", "sos0", "mos1", "sos1", "mos2", "sos2",
     "mnout", "snout", "moc", "soc", "msz0", "ssz0", "msz1", "ssz1", "msz2", "ssz2",
     "mob", "sob", "mog", "sog", "mld0", "sld0", "mld1", "sld1", "mld2", "sld2",
     "k0", "k1", "k2", "i0", "i1", "i2", "st0", "st1", "st2", "pl0", "pl1", "pl2",
     "ld0", "ld1", "ld2", "rd0", "rd1", "rd2",
     "loff", "lsn", "lsc", "ls0", "ls1", "ls2", "roff", "rso", "rsi", "rs0", "rs1", "rs2"])

# im2col metadata: 9 slots (0-7 decomposed from the work-item id, 8 looped) of
# (size, lhs address coef, position coefs b0 b1 b2, P storage stride)
_SLOT_FIELDS = ("sz", "a", "b0", "b1", "b2", "ps", "mg", "sh")
_IM = _meta_layout(
    ["total", "i0", "i1", "i2", "ls0", "ls1", "ls2", "ld0", "ld1", "ld2", "pl0", "pl1", "pl2",
     "loff", "goffa", "goffp", "nodil", "mld0", "mld1", "mld2", "sld0", "sld1", "sld2"]
    + [f"{f}{s}" for s in range(9) for f in _SLOT_FIELDS])


def _defines(prefix, layout):
    return "".join(f"#define {prefix}_{k.upper()} {v}\n" for k, v in layout.items())


def _conv_source(in_dtype, out_dtype):
    S, So = kernels.storage_ctype(in_dtype), kernels.storage_ctype(out_dtype)
    acc = "double" if dtypes.float64 in (in_dtype, out_dtype) else "float"
    ld = lambda p, i: f"(({acc}){kernels.load(in_dtype, p, i)})"  # noqa: E731
    P = kernels.storage_ctype(_gemm_dtype(in_dtype))                # im2col's matrix type
    lx = lambda i: f"(({P}){kernels.load(in_dtype, 'lhs', i)})"  # noqa: E731
    slot = "\n".join(
        f"  if (m[IM_SZ{s}] > 1) {{ const int q = NDIV(rem, m[IM_MG{s}], m[IM_SH{s}]);"
        f" const int c = rem - q * m[IM_SZ{s}]; rem = q;"
        f" addr += c * m[IM_A{s}]; q0 += c * m[IM_B0{s}]; q1 += c * m[IM_B1{s}];"
        f" q2 += c * m[IM_B2{s}]; ps += c * m[IM_PS{s}]; }}"
        for s in range(7, -1, -1))

    hoist = "".join(f"  const int dm_{k} = m[DM_{k.upper()}];\n" for k in _DM)
    lines = []
    for var, stride, size in (("n", "osn", "nout"), ("o", "oso", "oc"), ("y0", "os0", "sz0"),
                              ("y1", "os1", "sz1"), ("y2", "os2", "sz2")):
        lines.append(f"  const int {var}_q = NDIV(i, dm_m{stride}, dm_s{stride});")
        lines.append(f"  const int {var} = {var}_q - NDIV({var}_q, dm_m{size}, dm_s{size}) "
                     f"* dm_{size};")
    decomp = "\n".join(lines)
    src = f"""{_NDIV}{_defines("DM", _DM)}{_defines("IM", _IM)}
__kernel void conv_direct(__global {So}* out, __global const {S}* lhs,
                          __global const {S}* rhs, __constant int* m) {{
  const int i = get_global_id(0);
  if (i >= m[DM_TOTAL]) return;
{hoist}{decomp}
  const int nin = NDIV(o, dm_mob, dm_sob) * dm_nout + n;
  const int lbase = dm_loff + nin * dm_lsn + NDIV(o, dm_mog, dm_sog) * dm_cg * dm_lsc;
  const int rbase = dm_roff + o * dm_rso;
  {acc} a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int k0 = 0; k0 < dm_k0; ++k0) {{
    int p0 = y0 * dm_st0 + k0 * dm_rd0 - dm_pl0;
    if (p0 < 0) continue;
    {{ const int q = NDIV(p0, dm_mld0, dm_sld0); if (q * dm_ld0 != p0) continue; p0 = q; }}
    if (p0 >= dm_i0) break;
    for (int k1 = 0; k1 < dm_k1; ++k1) {{
      int p1 = y1 * dm_st1 + k1 * dm_rd1 - dm_pl1;
      if (p1 < 0) continue;
      {{ const int q = NDIV(p1, dm_mld1, dm_sld1); if (q * dm_ld1 != p1) continue; p1 = q; }}
      if (p1 >= dm_i1) break;
      for (int k2 = 0; k2 < dm_k2; ++k2) {{
        int p2 = y2 * dm_st2 + k2 * dm_rd2 - dm_pl2;
        if (p2 < 0) continue;
        {{ const int q = NDIV(p2, dm_mld2, dm_sld2); if (q * dm_ld2 != p2) continue; p2 = q; }}
        if (p2 >= dm_i2) break;
        const int la = lbase + p0 * dm_ls0 + p1 * dm_ls1 + p2 * dm_ls2;
        const int ra = rbase + k0 * dm_rs0 + k1 * dm_rs1 + k2 * dm_rs2;
        int c = 0;   /* four partial sums: the adds do not wait on each other */
        for (; c + 4 <= dm_cg; c += 4) {{
          a0 += {ld("lhs", "la + c * dm_lsc")} * {ld("rhs", "ra + c * dm_rsi")};
          a1 += {ld("lhs", "la + (c + 1) * dm_lsc")} * {ld("rhs", "ra + (c + 1) * dm_rsi")};
          a2 += {ld("lhs", "la + (c + 2) * dm_lsc")} * {ld("rhs", "ra + (c + 2) * dm_rsi")};
          a3 += {ld("lhs", "la + (c + 3) * dm_lsc")} * {ld("rhs", "ra + (c + 3) * dm_rsi")};
        }}
        for (; c < dm_cg; ++c)
          a0 += {ld("lhs", "la + c * dm_lsc")} * {ld("rhs", "ra + c * dm_rsi")};
      }}
    }}
  }}
  const {acc} acc = (a0 + a1) + (a2 + a3);
  {kernels.store(out_dtype, "out", "i", "acc")}
}}

/* im2col: P[g][m][k] (or P[g][k][m]) = lhs element read by output row m at window column k,
   0 outside the (dilated, padded) input. One work-item per 8 decomposed coordinates, looping
   over slot 8 (the dimension read contiguously). */
__kernel void conv_im2col(__global {P}* P, __global const {S}* lhs, __constant int* m) {{
  const int gid = get_global_id(0);
  if (gid >= m[IM_TOTAL]) return;
  int rem = gid, addr = 0, q0 = 0, q1 = 0, q2 = 0, ps = 0;
{slot}
  addr += m[IM_LOFF] + rem * m[IM_GOFFA];
  ps += rem * m[IM_GOFFP];
  q0 -= m[IM_PL0]; q1 -= m[IM_PL1]; q2 -= m[IM_PL2];
  const int n = m[IM_SZ8], da = m[IM_A8], d0 = m[IM_B08], d1 = m[IM_B18], d2 = m[IM_B28];
  const int dps = m[IM_PS8];
  const int i0 = m[IM_I0], i1 = m[IM_I1], i2 = m[IM_I2];
  const int ls0 = m[IM_LS0], ls1 = m[IM_LS1], ls2 = m[IM_LS2];
  if (m[IM_NODIL]) {{
    if (d0 == 0 && d1 == 0 && d2 == 0) {{   /* positions fixed along the loop */
      if (q0 >= 0 && q0 < i0 && q1 >= 0 && q1 < i1 && q2 >= 0 && q2 < i2) {{
        const int base = addr + q0 * ls0 + q1 * ls1 + q2 * ls2;
        for (int t = 0; t < n; ++t) P[ps + t * dps] = {lx("base + t * da")};
      }} else {{
        for (int t = 0; t < n; ++t) P[ps + t * dps] = 0;
      }}
      return;
    }}
    for (int t = 0; t < n; ++t) {{
      const int p0 = q0 + t * d0, p1 = q1 + t * d1, p2 = q2 + t * d2;
      const int ok = p0 >= 0 && p0 < i0 && p1 >= 0 && p1 < i1 && p2 >= 0 && p2 < i2;
      P[ps + t * dps] = ok ? {lx("addr + t * da + p0 * ls0 + p1 * ls1 + p2 * ls2")} : 0;
    }}
    return;
  }}
  const int l0 = m[IM_LD0], l1 = m[IM_LD1], l2 = m[IM_LD2];
  const int ml0 = m[IM_MLD0], ml1 = m[IM_MLD1], ml2 = m[IM_MLD2];
  const int sl0 = m[IM_SLD0], sl1 = m[IM_SLD1], sl2 = m[IM_SLD2];
  for (int t = 0; t < n; ++t) {{
    const int p0 = q0 + t * d0, p1 = q1 + t * d1, p2 = q2 + t * d2;
    const int r0 = NDIV(max(p0, 0), ml0, sl0), r1 = NDIV(max(p1, 0), ml1, sl1);
    const int r2 = NDIV(max(p2, 0), ml2, sl2);
    const int ok = p0 >= 0 && p1 >= 0 && p2 >= 0 && r0 * l0 == p0 && r1 * l1 == p1 &&
                   r2 * l2 == p2 && r0 < i0 && r1 < i1 && r2 < i2;
    P[ps + t * dps] = ok ? {lx("addr + t * da + r0 * ls0 + r1 * ls1 + r2 * ls2")} : 0;
  }}
}}

/* split-K: out[i] = sum of the GEMM's partial results t[s][i] */
__kernel void conv_splitk_sum(__global {P}* out, __global const {P}* t, const int n,
                              const int parts) {{
  const int i = get_global_id(0);
  if (i >= n) return;
  {P} acc = 0;
  for (int s = 0; s < parts; ++s) acc += t[s * n + i];
  out[i] = acc;
}}
"""
    return src


def _const_buffer(device, values):
    import pyopencl as cl
    arr = np.asarray(values, dtype=np.int64)
    if arr.size and (arr.max() > _INDEX_LIMIT or arr.min() < -2**31):
        raise ValueError("conv: an index exceeds the 2^31 limit of the kernels")
    arr = arr.astype(np.int32)
    if arr.size == 0:
        arr = np.zeros(1, np.int32)
    return cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=arr)


class _ConvGeometry:
    """Everything about one conv call in canonical (logical) terms, from avals and layouts."""

    def __init__(self, lhs, rhs, out, params):
        dn = params["dimension_numbers"]
        lhs_spec, rhs_spec, out_spec = dn
        self.nsp = nsp = len(lhs_spec) - 2
        if nsp > _MAX_SPATIAL:
            raise NotImplementedError(f"conv_general_dilated: {nsp} spatial dimensions; the "
                                      f"OpenCL kernels handle at most {_MAX_SPATIAL}")
        self.G = params["feature_group_count"]
        self.B = params["batch_group_count"]
        pad3 = lambda v, fill: tuple(v) + (fill,) * (_MAX_SPATIAL - len(v))  # noqa: E731
        self.N = lhs.shape[lhs_spec[0]]
        self.C = lhs.shape[lhs_spec[1]]
        self.O = rhs.shape[rhs_spec[0]]
        self.Cg = rhs.shape[rhs_spec[1]]
        self.Nout = out.shape[out_spec[0]]
        self.I = pad3([lhs.shape[d] for d in lhs_spec[2:]], 1)
        self.K = pad3([rhs.shape[d] for d in rhs_spec[2:]], 1)
        self.S = pad3([out.shape[d] for d in out_spec[2:]], 1)
        self.st = pad3(params["window_strides"], 1)
        self.pl = pad3([lo for lo, _ in params["padding"]], 0)
        self.ld = pad3(params["lhs_dilation"], 1)
        self.rd = pad3(params["rhs_dilation"], 1)
        ls = lhs.strides
        self.loff = lhs.offset
        self.lsn, self.lsc = ls[lhs_spec[0]], ls[lhs_spec[1]]
        self.ls = pad3([ls[d] for d in lhs_spec[2:]], 0)
        rs = rhs.strides
        self.roff = rhs.offset
        self.rso, self.rsi = rs[rhs_spec[0]], rs[rhs_spec[1]]
        self.rs = pad3([rs[d] for d in rhs_spec[2:]], 0)
        ocs = contiguous_strides(out.shape)
        self.osn, self.oso = ocs[out_spec[0]], ocs[out_spec[1]]
        self.os = pad3([ocs[d] for d in out_spec[2:]], 1)
        self.out_spec, self.rhs_spec = out_spec, rhs_spec
        self.out_shape, self.rhs_shape = out.shape, rhs.shape
        self.total = prod(out.shape)
        for name, a in (("lhs", lhs), ("rhs", rhs), ("output", out)):
            if prod(a.shape) > _INDEX_LIMIT:
                raise ValueError(f"conv_general_dilated: the {name} has {prod(a.shape)} "
                                 "elements, more than the kernels' 2^31 index limit")

    def direct_meta(self):
        v = dict(nout=self.Nout, oc=self.O, cg=self.Cg, og=max(self.O // self.G, 1),
                 ob=max(self.O // self.B, 1), total=self.total, osn=self.osn, oso=self.oso,
                 loff=self.loff, lsn=self.lsn, lsc=self.lsc, roff=self.roff, rso=self.rso,
                 rsi=self.rsi)
        for j in range(3):
            v.update({f"os{j}": self.os[j], f"sz{j}": self.S[j], f"k{j}": self.K[j],
                      f"i{j}": self.I[j], f"st{j}": self.st[j], f"pl{j}": self.pl[j],
                      f"ld{j}": self.ld[j], f"rd{j}": self.rd[j], f"ls{j}": self.ls[j],
                      f"rs{j}": self.rs[j]})
        for k in ("osn", "oso", "os0", "os1", "os2", "nout", "oc", "sz0", "sz1", "sz2", "ob",
                  "og", "ld0", "ld1", "ld2"):
            v["m" + k], v["s" + k] = _magic(v[k])
        return [v[k] for k in _DM]


# ---- the im2col + GEMM plan -------------------------------------------------------------------

# Tests set this to "direct" or "gemm" (then clear the eager launcher cache) to force a path.
_impl_override = None


class _GemmPlan:
    pass


def _gemm_available():
    try:
        from . import gemm  # noqa: F401
        return True
    except ImportError:
        return False


def _gemm_dtype(dtype):
    """The GEMM runs in float64 for float64 convs, else in float32 (float16 is storage)."""
    return dtypes.float64 if dtype == dtypes.float64 else dtypes.float32


def _plan_gemm(geo, dtype, device):
    """A _GemmPlan for this conv, or None where the direct kernel is the better (or only) way.
    `dtype` is the operands' dtype; float16 goes through the float32 GEMM (im2col and the
    packed kernel convert)."""
    if dtype.kind != "f" or geo.total == 0 or not _gemm_available():
        return None
    GG = geo.G * geo.B
    Og = geo.O // GG
    Kg = geo.Cg * prod(geo.K)
    out_dims = sorted(range(2 + geo.nsp), key=lambda j: geo.out_spec[j])  # logical, physical order
    rows = [j for j in out_dims if j != 1]          # 0 = batch, 2+s = spatial s
    pos_o = out_dims.index(1)
    outer = prod(geo.out_shape[geo.out_spec[j]] for j in out_dims[:pos_o])
    inner = prod(geo.out_shape[geo.out_spec[j]] for j in out_dims[pos_o + 1:])
    M = geo.Nout * prod(geo.S)
    p_bytes = GG * M * Kg * _gemm_dtype(dtype).itemsize
    if _impl_override != "gemm":
        work = M * Og * Kg
        if _impl_override == "direct" or GG > 16 or not (
                (Kg >= 8 and Og >= 4 and M * Og >= 1024 and work >= 1 << 18) or
                (Kg >= 64 and Og >= 2 and work >= 1 << 22 and M * Og < 1 << 16)):
            return None
        if inner != 1 and (inner < 16 or (outer > 1 and GG > 4)):
            return None
        if p_bytes > device.capabilities.global_mem_size // 4:
            return None
    if GG * M * Kg > _INDEX_LIMIT:
        return None
    if Kg == 0 or Og == 0 or M == 0:
        return None
    plan = _GemmPlan()
    plan.GG, plan.Og, plan.Kg, plan.M = GG, Og, Kg, M
    plan.inner, plan.outer = inner, outer

    # -- the K dims (window columns), in the kernel's memory order: 'c' or window j
    rhs_dims = sorted(range(2 + geo.nsp), key=lambda j: geo.rhs_spec[j])
    kdims = [j for j in rhs_dims if j != 0]         # 1 = in feature, 2+s = window s
    ksize = {1: geo.Cg, **{2 + s: geo.K[s] for s in range(geo.nsp)}}
    kstride = {1: geo.rsi, **{2 + s: geo.rs[s] for s in range(geo.nsp)}}
    # can the GEMM read the kernel in place as a (K x Og) matrix per group?
    big = [j for j in kdims if ksize[j] > 1]
    contiguous, expect = True, None
    for j in reversed(big):
        if expect is not None and kstride[j] != expect:
            contiguous = False
        expect = kstride[j] * ksize[j]
    s_last = kstride[big[-1]] if big else 1
    plan.b_mode = "pack"
    if dtype != _gemm_dtype(dtype):
        pass                                        # float16: packing converts to float32
    elif contiguous and (geo.rso == 1 or geo.O == 1 or Og == 1 and GG == 1) and s_last > 0:
        plan.b_mode, plan.ldb = "nt", s_last        # B[k, o] = W[k * ldb + o]
    elif contiguous and s_last == 1 and geo.rso > 0 and dtype == _gemm_dtype(dtype):
        plan.b_mode, plan.ldb = "t", geo.rso        # B[k, o] = W[o * ldb + k]
    if plan.b_mode == "pack":
        # reorder K dims for the im2col: most contiguous lhs read last
        eff = _lhs_read_strides(geo)
        kdims = sorted(kdims, key=lambda j: -eff[("k", j)])
        plan.pack_dims = kdims
    plan.kdims = kdims

    # -- P storage and the im2col slot assignment
    eff = _lhs_read_strides(geo)
    rsize = {0: geo.Nout, **{2 + s: geo.S[s] for s in range(geo.nsp)}}
    pdims = [("r", j, rsize[j]) for j in rows] + [("k", j, ksize[j]) for j in kdims]
    cand = [d for d in pdims if d[2] > 1]
    last_r = [d for d in pdims if d[0] == "r" and d[2] > 1]
    last_k = [d for d in pdims if d[0] == "k" and d[2] > 1]
    last_r = last_r[-1] if last_r else None
    last_k = last_k[-1] if last_k else None
    if cand:
        def rank(d):
            return (eff[(d[0], d[1])], 0 if d is last_r else (1 if d is last_k else 2))
        loop = min(cand, key=rank)
    else:
        loop = pdims[-1]
    plan.p_transposed = loop is last_r and last_r is not None
    # storage strides
    rstr = contiguous_strides([d[2] for d in pdims if d[0] == "r"])
    kstr = contiguous_strides([d[2] for d in pdims if d[0] == "k"])
    pstride, ri, ki = {}, 0, 0
    for d in pdims:
        if d[0] == "r":
            pstride[d] = rstr[ri] * (1 if plan.p_transposed else Kg)
            ri += 1
        else:
            pstride[d] = kstr[ki] * (M if plan.p_transposed else 1)
            ki += 1
    if device.kind != "cpu":
        loop = None          # GPUs: one element per work-item, contiguous stores across items
    decomposed = [d for d in pdims if d is not loop]
    decomposed.sort(key=lambda d: -pstride[d])       # slot 0 slowest ... fastest last
    slots = decomposed + [None] * (8 - len(decomposed)) + [loop]

    def coefs(d):
        kind, j, size = d
        a, b = 0, [0, 0, 0]
        if kind == "r":
            if j == 0:
                a = geo.lsn
            else:
                b[j - 2] = geo.st[j - 2]
        else:
            if j == 1:
                a = geo.lsc
            else:
                b[j - 2] = geo.rd[j - 2]
        return [size, a, b[0], b[1], b[2], pstride[d], *_magic(size)]

    meta = dict(i0=geo.I[0], i1=geo.I[1], i2=geo.I[2], ls0=geo.ls[0], ls1=geo.ls[1],
                ls2=geo.ls[2], ld0=geo.ld[0], ld1=geo.ld[1], ld2=geo.ld[2], pl0=geo.pl[0],
                pl1=geo.pl[1], pl2=geo.pl[2], loff=geo.loff,
                goffa=geo.Cg * geo.lsc if geo.G > 1 else (geo.Nout * geo.lsn if geo.B > 1 else 0),
                goffp=M * Kg, nodil=int(all(v == 1 for v in geo.ld)))
    for j in range(3):
        meta[f"mld{j}"], meta[f"sld{j}"] = _magic(geo.ld[j])
    items = GG
    for s, d in enumerate(slots):
        vals = coefs(d) if d is not None else [1, 0, 0, 0, 0, 0, *_magic(1)]
        for f, v in zip(_SLOT_FIELDS, vals):
            meta[f"{f}{s}"] = v
        if s < 8:
            items *= vals[0]
    meta["total"] = items
    plan.im2col_meta = [meta[k] for k in _IM]
    plan.im2col_items = items
    plan.p_elems = GG * M * Kg
    return plan


def _lhs_read_strides(geo):
    """How far apart (in lhs elements) consecutive coordinates of each P dim read."""
    e = {("r", 0): abs(geo.lsn), ("k", 1): abs(geo.lsc)}
    for s in range(geo.nsp):
        e[("r", 2 + s)] = geo.st[s] * abs(geo.ls[s]) / geo.ld[s]
        e[("k", 2 + s)] = geo.rd[s] * abs(geo.ls[s]) / geo.ld[s]
    return e


def _split_k(device, dtype, M, N, K):
    """How many K chunks to split a (M x N x K) GEMM into so that the device has enough
    tiles to work on (1: no split). Kernel gradients (M = window*C_in, N = C_out small,
    K = batch*H*W large) otherwise run on a handful of work-groups."""
    from . import gemm
    if K < 2048:
        return 1
    tname = "double" if dtype == dtypes.float64 else "float"
    cfg = gemm.choose_config(device.cl_device, tname, M, N, max(K // 8, 1))
    tiles = -(-M // cfg.bm) * -(-N // cfg.bn)
    target = 4 * device.capabilities.compute_units
    if tiles >= target:
        return 1
    return max(1, min(-(-target // tiles), K // 1024, 64))


def _gemm_calls(plan, geo, dtype, device, w_off):
    """[(trans_a, trans_b, batch, M, N, K, lda, ldb, ldc, bsa, bsb, bsc, off_a, off_b, off_c,
    a_is_P, c_is_tmp)] enqueues computing the output from P and the (packed) kernel, and the
    split-K partial count (0: none; else the calls write partial sums into a temporary
    [parts][M][Og] that a last kernel adds up)."""
    GG, Og, Kg, M = plan.GG, plan.Og, plan.Kg, plan.M
    if plan.b_mode == "pack":
        wmode, ldw, w_gstride, w_off = "nt", Og, Kg * Og, 0
    else:
        wmode, ldw, w_off = plan.b_mode, plan.ldb, w_off
        w_gstride = Og * geo.rso
    calls = []
    if plan.inner == 1:        # out[m, o]: C (M x Og) = P (M x Kg) @ W (Kg x Og), batched over g
        ta, lda = (True, M) if plan.p_transposed else (False, Kg)
        tb = wmode == "t"
        parts = _split_k(device, dtype, M, Og, Kg) if GG == 1 else 1
        if parts > 1:
            kc = -(-Kg // parts)
            kc = -(-kc // 16) * 16
            parts = -(-Kg // kc)
            a_cs = kc * M if plan.p_transposed else kc
            b_cs = kc if wmode == "t" else kc * ldw
            if parts > 1:
                calls.append((ta, tb, parts - 1, M, Og, kc, lda, ldw, Og, a_cs, b_cs, M * Og,
                              0, w_off, 0, True, True))
            last = parts - 1
            calls.append((ta, tb, 1, M, Og, Kg - last * kc, lda, ldw, Og, 0, 0, 0,
                          last * a_cs, w_off + last * b_cs, last * M * Og, True, True))
            return calls, parts
        calls.append((ta, tb, GG, M, Og, Kg, lda, ldw, geo.O, M * Kg, w_gstride, Og,
                      0, w_off, 0, True, False))
    else:                      # out[b, o, j]: C_b (Og x inner) = W^T (Og x Kg) @ P_b^T (Kg x inner)
        inner, outer = plan.inner, plan.outer
        ta = wmode == "nt"
        if plan.p_transposed:
            tb, ldp, bsp = False, M, inner
        else:
            tb, ldp, bsp = True, Kg, inner * Kg
        if outer == 1:
            calls.append((ta, tb, GG, Og, inner, Kg, ldw, ldp, inner, w_gstride, M * Kg,
                          Og * inner, w_off, 0, 0, False, False))
        else:
            for g in range(GG):
                calls.append((ta, tb, outer, Og, inner, Kg, ldw, ldp, inner, 0, bsp,
                              geo.O * inner, w_off + g * w_gstride, g * M * Kg,
                              g * Og * inner, False, False))
    return calls, 0


def _gemm_kernel(device, dtype, ta, tb, M, N, K):
    from . import gemm
    tname = "double" if dtype == dtypes.float64 else "float"
    cfg = gemm.choose_config(device.cl_device, tname, M, N, K)
    src = gemm.gemm_source(cfg, tname, ta, tb)
    return kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME), cfg


def _conv_launcher(device, args, params, out_aval):
    import pyopencl as cl
    from ..core.pool import Storage
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
    enqueue = cl.enqueue_nd_range_kernel

    def launch_direct(x, w):
        out = new_out()
        k.set_arg(0, out._buf)
        k.set_arg(1, x._buf)
        k.set_arg(2, w._buf)
        enqueue(queue, k, gsize, lsize)
        return out
    return launch_direct


def _gemm_launcher(device, lhs, rhs, geo, plan, src, out_aval, new_out):
    """The im2col + GEMM launcher for a conv planned by `_plan_gemm`."""
    import pyopencl as cl
    from ..core.pool import Storage
    in_dtype, out_dtype = lhs.dtype, out_aval.dtype
    gdt = _gemm_dtype(in_dtype)
    shape, weak = out_aval.shape, out_aval.weak_type
    queue, pool = device.queue, device.pool
    strides = contiguous_strides(shape)
    enqueue = cl.enqueue_nd_range_kernel
    kim = kernels.kernel(device, src, "conv_im2col")
    meta = _const_buffer(device, plan.im2col_meta)
    kim.set_arg(2, meta)
    kim._netcl_meta = meta
    im_g, im_l = kernels.grid_1d(device, plan.im2col_items)
    p_bytes = plan.p_elems * gdt.itemsize
    pack = None
    from ..core.codegen import make_elementwise_launcher
    from .elementwise import convert_element_type_p, copy_p
    if plan.b_mode == "pack":
        # the kernel as a dense [g][k...][o] array in the GEMM's dtype: a strided view of rhs,
        # copied (converted) once per call
        GG, Og = plan.GG, plan.Og
        ksize = {1: geo.Cg, **{2 + s: geo.K[s] for s in range(geo.nsp)}}
        kstride = {1: geo.rsi, **{2 + s: geo.rs[s] for s in range(geo.nsp)}}
        vshape = (GG,) + tuple(ksize[j] for j in plan.pack_dims) + (Og,)
        vstrides = (Og * geo.rso,) + tuple(kstride[j] for j in plan.pack_dims) + (geo.rso,)
        probe = Array(device, None, None, vshape, in_dtype, vstrides, rhs.offset, False,
                      vstrides == contiguous_strides(vshape))
        if in_dtype == gdt:
            copy_launch = make_elementwise_launcher(copy_p, device, [probe], {},
                                                    ShapedArray(vshape, in_dtype))
        else:
            copy_launch = make_elementwise_launcher(
                convert_element_type_p, device, [probe], dict(new_dtype=gdt, weak_type=False),
                ShapedArray(vshape, gdt))
        roff = rhs.offset

        def pack(w):
            return copy_launch(Array(device, w._buf, w._storage, vshape, in_dtype, vstrides,
                                     roff, False, probe._contig))
    from . import gemm
    calls = []
    gemm_calls, parts = _gemm_calls(plan, geo, gdt, device, 0 if pack else rhs.offset)
    for (ta, tb, batch, M, N, K, lda, ldb, ldc, bsa, bsb, bsc, oa, ob, oc, a_is_p,
         c_tmp) in gemm_calls:
        kg, cfg = _gemm_kernel(device, gdt, ta, tb, M, N, K)
        for i, v in enumerate((M, N, K, lda, ldb, ldc, bsa, bsb, bsc, oa, ob, oc)):
            kg.set_arg(3 + i, np.int32(v))
        g, l_ = gemm.launch_dims(cfg, batch, M, N)
        calls.append((kg, g, l_, a_is_p, c_tmp))
    ksum = None
    if parts:
        n_out = plan.M * plan.Og
        tmp_bytes = parts * n_out * gdt.itemsize
        ksum = kernels.kernel(device, src, "conv_splitk_sum")
        ksum.set_arg(2, np.int32(n_out))
        ksum.set_arg(3, np.int32(parts))
        sum_g, sum_l = kernels.grid_1d(device, n_out)

    narrow = None
    if out_dtype != gdt:
        # float16 output: the GEMM writes float32, one conversion kernel stores half
        wprobe = Array(device, None, None, shape, gdt, strides, 0, False, True)
        narrow = make_elementwise_launcher(convert_element_type_p, device, [wprobe],
                                           dict(new_dtype=out_dtype, weak_type=weak), out_aval)
        wide_bytes = prod(shape) * gdt.itemsize

    def launch_gemm(x, w):
        if narrow is None:
            out = new_out()
        else:
            wst = Storage(pool, wide_bytes)
            out = Array(device, wst.buf, wst, shape, gdt, strides, 0, False, True)
        pst = Storage(pool, p_bytes)
        tmp = Storage(pool, tmp_bytes) if ksum is not None else None
        kim.set_arg(0, pst.buf)
        kim.set_arg(1, x._buf)
        enqueue(queue, kim, im_g, im_l)
        wb = pack(w)._buf if pack is not None else w._buf
        for kg, g, l_, a_is_p, c_tmp in calls:
            kg.set_arg(0, tmp.buf if c_tmp else out._buf)
            kg.set_arg(1, pst.buf if a_is_p else wb)
            kg.set_arg(2, wb if a_is_p else pst.buf)
            enqueue(queue, kg, g, l_)
        if ksum is not None:
            ksum.set_arg(0, out._buf)
            ksum.set_arg(1, tmp.buf)
            enqueue(queue, ksum, sum_g, sum_l)
        if narrow is not None:
            return narrow(out)
        return out        # pst returns to the pool; the in-order queue orders later reuse
    return launch_gemm


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
    from ..core.eval import to_array
    from ..core.tracing import Tracer
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
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=ws, padding=pads, lhs_dilation=ld, rhs_dilation=rd,
        dimension_numbers=dn, feature_group_count=fg, batch_group_count=bg,
        precision=_canonical_precision(precision), preferred_element_type=pet)


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
    from .views import rev, transpose
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
    from .views import reshape
    shape = list(x.shape)
    size2 = shape[src] // size1
    shape[src:src + 1] = [size1, size2]
    return reshape(x, tuple(shape))


def _reshape_axis_into(src, dst, x):
    """Merge axis src into axis dst (dst numbered after src is removed), src outermost."""
    from .views import reshape, transpose
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
    from .elementwise import convert_element_type
    return x if x.dtype == dtype else convert_element_type(x, dtype)


def _conv_transpose_lhs(g, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision=None, preferred_element_type=None):
    from .views import rev
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
    from .views import full
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
            from .elementwise import add
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
        from .views import full
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


# =============================================================================================
# windowed reductions: reduce_window_{sum,max,min}, select_and_scatter_add,
# select_and_gather_add
# =============================================================================================

_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")


def _window_out_shape(name, shape, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    nd = len(shape)
    ctx = (f" (operand shape {tuple(shape)}, window_dimensions {window_dimensions}, "
           f"window_strides {window_strides}, padding {padding})")
    for pname, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                     ("padding", padding), ("base_dilation", base_dilation),
                     ("window_dilation", window_dilation)):
        if len(v) != nd:
            raise ValueError(f"{name}: {pname} {v} must have one entry per operand "
                             f"dimension ({nd}){ctx}")
    if any(w < 0 for w in window_dimensions):
        raise ValueError(f"{name}: window_dimensions must be non-negative{ctx}")
    for pname, v in (("window_strides", window_strides), ("base_dilation", base_dilation),
                     ("window_dilation", window_dilation)):
        if any(s < 1 for s in v):
            raise ValueError(f"{name}: {pname} {v} must be positive{ctx}")
    out = []
    for n, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        padded = _dilate(n, bd) + lo + hi
        if padded < 0:
            raise ValueError(f"{name}: negative padding ({lo}, {hi}) is larger than the "
                             f"dimension (size {_dilate(n, bd)} after base dilation){ctx}")
        wdil = _dilate(w, wd)
        out.append(0 if padded < wdil else (padded - wdil) // s + 1)
    return tuple(out)


def _window_abstract(name, kinds="fi"):
    def abstract(x, *, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
        if x.dtype.kind not in kinds or x.dtype == dtypes.uint32:
            raise TypeError(f"{name}: operand dtype {x.dtype} is not supported (floating "
                            f"point{' or int32' if 'i' in kinds else ''})")
        if x.ndim > _MAX_WINDOW_RANK:
            raise NotImplementedError(f"{name}: rank {x.ndim} > {_MAX_WINDOW_RANK}")
        shape = _window_out_shape(name, x.shape, window_dimensions, window_strides, padding,
                                  base_dilation, window_dilation)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract


_IDENTITY = {"sum": 0.0, "max": -np.inf, "min": np.inf}


def _identity_np(op, dtype):
    if dtype.kind == "f":
        return _IDENTITY[op]
    info = np.iinfo(dtype)
    return {"sum": 0, "max": info.min, "min": info.max}[op]


def _window_slices(out_shape, window_dimensions, window_strides, window_dilation):
    """For each window offset: the strided slice of the padded operand it reads."""
    for k in np.ndindex(*window_dimensions):
        yield k, tuple(slice(kk * wd, kk * wd + s * (o - 1) + 1, s) for kk, wd, s, o in
                       zip(k, window_dilation, window_strides, out_shape))


def _reduce_window_ref(op):
    def ref(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        out_shape = _window_out_shape("reduce_window_" + op, x.shape, window_dimensions,
                                      window_strides, padding, base_dilation, window_dilation)
        work = np.float64 if x.dtype.kind == "f" else np.int64
        ident = _identity_np(op, x.dtype)
        xp = _dilate_pad_np(x.astype(work), range(x.ndim), base_dilation, padding, ident)
        acc = np.full(out_shape, ident, work)
        if prod(out_shape):
            comb = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
            for _, sl in _window_slices(out_shape, window_dimensions, window_strides,
                                        window_dilation):
                acc = comb(acc, xp[sl])
        return acc.astype(x.dtype)
    return ref


def _selected_flat_index(operand, select, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation):
    """For each window: the flat index of the operand element it selects (-1 for none):
    the first (in window order) real element that is >= (ge) / <= (le) all others, the
    first NaN winning over numbers. (Window order is increasing flat index.)"""
    out_shape = _window_out_shape("select_and_scatter_add", operand.shape, window_dimensions,
                                  window_strides, padding, base_dilation, window_dilation)
    x = operand.astype(np.float64)
    idx = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    xp = _dilate_pad_np(x, range(x.ndim), base_dilation, padding, 0.0)
    ip = _dilate_pad_np(idx, range(x.ndim), base_dilation, padding, -1)
    best = np.zeros(out_shape, np.float64)
    sel = np.full(out_shape, -1, np.int64)
    if prod(out_shape):
        for _, sl in _window_slices(out_shape, window_dimensions, window_strides,
                                    window_dilation):
            v, i = xp[sl], ip[sl]
            with np.errstate(invalid="ignore"):
                better = (v > best) if select == "ge" else (v < best)
            take = (i >= 0) & ((sel < 0) | better | (np.isnan(v) & ~np.isnan(best)))
            best = np.where(take, v, best)
            sel = np.where(take, i, sel)
    return sel


def _select_and_scatter_add_ref(source, operand, *, select, window_dimensions, window_strides,
                                padding, base_dilation, window_dilation):
    sel = _selected_flat_index(operand, select, window_dimensions, window_strides, padding,
                               base_dilation, window_dilation)
    out = np.zeros(operand.size, np.float64)
    ok = sel >= 0
    np.add.at(out, sel[ok], source.astype(np.float64)[ok])
    return out.reshape(operand.shape).astype(source.dtype)


def _select_and_gather_add_ref(tangent, operand, *, select, window_dimensions, window_strides,
                               padding, base_dilation, window_dilation):
    sel = _selected_flat_index(operand, select, window_dimensions, window_strides, padding,
                               base_dilation, window_dilation)
    flat = tangent.reshape(-1)
    out = np.where(sel >= 0, flat[np.maximum(sel, 0)] if flat.size else 0, 0)
    return np.asarray(out).astype(tangent.dtype)


# ---- window kernels ---------------------------------------------------------------------------

# metadata: rank, offsets of the two inputs, then per-dim arrays of 8
_WM_ARRAYS = ("in", "out", "win", "st", "pl", "bd", "wd", "xs", "ss", "xd", "od",
              "inm", "ins", "outm", "outs", "stm", "sts", "bdm", "bds")
_WM_SCALARS = ("rank", "xoff", "soff", "total", "wsize", "nodil")


def _window_meta(x_shape, out_shape, params, x_layout, s_layout=None):
    R = len(x_shape)
    pad8 = lambda v, fill: list(v) + [fill] * (_MAX_WINDOW_RANK - len(v))  # noqa: E731
    arrays = {
        "in": pad8(x_shape, 1), "out": pad8(out_shape, 1),
        "win": pad8(params["window_dimensions"], 1), "st": pad8(params["window_strides"], 1),
        "pl": pad8([lo for lo, _ in params["padding"]], 0),
        "bd": pad8(params["base_dilation"], 1), "wd": pad8(params["window_dilation"], 1),
        "xs": pad8(x_layout[0], 0), "ss": pad8(s_layout[0] if s_layout else [0] * R, 0),
        "xd": pad8(contiguous_strides(x_shape), 0), "od": pad8(contiguous_strides(out_shape), 0),
    }
    for a in ("in", "out", "st", "bd"):
        arrays[a + "m"], arrays[a + "s"] = map(list, zip(*[_magic(v) for v in arrays[a]]))
    scal = dict(rank=R, xoff=x_layout[1], soff=s_layout[1] if s_layout else 0, total=0,
                wsize=prod(params["window_dimensions"]),
                nodil=int(all(b == 1 for b in params["base_dilation"])))
    return scal, arrays


def _window_meta_values(scal, arrays):
    return [scal[k] for k in _WM_SCALARS] + [v for a in _WM_ARRAYS for v in arrays[a]]


def _window_classes(x_shape, out_shape, params):
    """Per operand dim, how the kernels treat it (part of the kernel source):
    'T' trivial (window 1, stride 1, no padding/dilation: y == x), 'F'/'f' a window of one
    element (f: with base dilation), 'V' a window needing no bounds checks, 'L'/'l' a window
    with checks (l: with base dilation)."""
    cls = []
    for d, (n, o) in enumerate(zip(x_shape, out_shape)):
        w, st, lo = (params["window_dimensions"][d], params["window_strides"][d],
                     params["padding"][d][0])
        bd, wd = params["base_dilation"][d], params["window_dilation"][d]
        if w == 1:
            if st == 1 and lo == 0 and bd == 1 and n == o:
                cls.append("T")
            else:
                cls.append("F" if bd == 1 else "f")
        elif bd == 1 and lo == 0 and (o == 0 or (o - 1) * st + (w - 1) * wd < n):
            cls.append("V")
        else:
            cls.append("L" if bd == 1 else "l")
    return "".join(cls)


def _window_source(dtype, classes):
    """The window kernels for one operand rank and dim classes (`_window_classes`)."""
    R = len(classes)
    S = kernels.storage_ctype(dtype)
    T = kernels.compute_ctype(dtype)
    isf = dtype.kind == "f"
    ld = lambda p, i: kernels.load(dtype, p, i)  # noqa: E731
    defs = "".join(f"#define WM_{k.upper()} {i}\n" for i, k in enumerate(_WM_SCALARS))
    base = len(_WM_SCALARS)
    # Every metadata value is read once into a private constant (loads from m inside the
    # loops are not hoisted by PoCL's compiler and cost ~3x); unused ones are dropped.
    defs += "".join(f"#define WA_{k.upper()}(d) wa_{k}_##d\n" for k in _WM_ARRAYS)
    prologue = "".join(
        f"  const int wa_{k}_{d} = m[{base + 8 * i + d}];\n"
        for i, k in enumerate(_WM_ARRAYS) for d in range(R))
    prologue += "  const int xoff = m[WM_XOFF], soff = m[WM_SOFF];\n"
    # NaN handling without isnan() (an out-of-line call on PoCL that makes these loops ~10x
    # slower): a NaN anywhere in a max/min window wins (sticky flag / first NaN index).
    if dtype == dtypes.float64:
        nanbits = "((as_ulong(v) & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL)"
    else:
        nanbits = "((as_uint(v) & 0x7fffffffu) > 0x7f800000u)"
    if isf:
        init = f"(op == 0 ? ({T})0 : (op == 1 ? -({T})INFINITY : ({T})INFINITY))"
        combine = (f"acc = op == 0 ? acc + v : (op == 1 ? (v > acc ? v : acc) : "
                   f"(v < acc ? v : acc)); nf |= {nanbits};")
        nan_select = f" if (sn < 0 && {nanbits}) sn = FLAT;"
        finish_reduce = f"  if (op != 0 && nf) acc = ({T})NAN;\n"
        finish_select = "  if (s < 0 && fv != INT_MAX) s = fv;\n  if (sn >= 0) s = sn;\n"
    else:
        init = "(op == 0 ? 0 : (op == 1 ? INT_MIN : INT_MAX))"
        combine = "acc = op == 0 ? acc + v : (op == 1 ? max(acc, v) : min(acc, v));"
        nan_select = finish_reduce = ""
        finish_select = "  if (s < 0 && fv != INT_MAX) s = fv;\n"
    better = "(op == 1 ? v > best : v < best)"

    def decompose(var, size):
        out = []
        for d in range(R - 1, 0, -1):
            out.append(f"  const int {var}{d}_q = NDIV(rem, {size}M({d}), {size}S({d}));\n"
                       f"  const int {var}{d} = rem - {var}{d}_q * {size}({d}); "
                       f"rem = {var}{d}_q;\n")
        out.append(f"  const int {var}0 = rem;\n")
        return "".join(out)

    def position(d, ind, k, skip):
        """Code computing p{d} (operand coordinate) of window offset k; `skip` leaves."""
        c = classes[d]
        code = [f"{ind}int p{d} = y{d} * WA_ST({d}){k} - WA_PL({d});"]
        if c in "fl":
            code.append(f"{ind}if (p{d} < 0) {skip[0]}")
            code.append(f"{ind}{{ const int q = NDIV(p{d}, WA_BDM({d}), WA_BDS({d})); "
                        f"if (p{d} != q * WA_BD({d})) {skip[0]} p{d} = q; }}")
            code.append(f"{ind}if (p{d} >= WA_IN({d})) {skip[1]}")
        elif c in "FL":
            code.append(f"{ind}if (p{d} < 0) {skip[0]}")
            code.append(f"{ind}if (p{d} >= WA_IN({d})) {skip[1]}")
        return code

    def window_code(body, flat=False):
        """Loops over the window of output y: a = operand offset, f = dense flat index."""
        code = ["  int a = xoff, f = 0, ok = 1;"]
        for d in range(R):
            c = classes[d]
            if c == "T":
                code.append(f"  a += y{d} * WA_XS({d});" + (f" f += y{d} * WA_XD({d});"
                                                           if flat else ""))
            elif c in "Ff":
                code.append("  do {")
                code += position(d, "    ", "", ("{ ok = 0; break; }", "{ ok = 0; break; }"))
                code.append(f"    a += p{d} * WA_XS({d});" + (f" f += p{d} * WA_XD({d});"
                                                              if flat else ""))
                code.append("  } while (0);")
        code.append("  if (ok) {")
        ind, prev_a, prev_f = "    ", "a", "f"
        loops = [d for d in range(R) if classes[d] in "VLl"]
        for d in loops:
            code.append(f"{ind}for (int k{d} = 0; k{d} < WA_WIN({d}); ++k{d}) {{")
            ind += "  "
            code += position(d, ind, f" + k{d} * WA_WD({d})", ("continue;", "break;"))
            code.append(f"{ind}const int a{d} = {prev_a} + p{d} * WA_XS({d});")
            prev_a = f"a{d}"
            if flat:
                code.append(f"{ind}const int f{d} = {prev_f} + p{d} * WA_XD({d});")
                prev_f = f"f{d}"
        code.append(f"{ind}{body(prev_a, prev_f)}")
        for _ in loops:
            ind = ind[:-2]
            code.append(f"{ind}}}")
        code.append("  }")
        return "\n".join(code)

    reduce_body = lambda a, f: f"const {T} v = {ld('x', a)}; {combine}"  # noqa: E731
    select_body = lambda a, f: (f"const {T} v = {ld('x', a)}; "  # noqa: E731
                                f"const int take = {better}; "
                                f"best = take ? v : best; s = take ? {f} : s; fv = min(fv, {f});"
                                + nan_select.replace("FLAT", f))
    # scatter: operand element x lies in window y at offset k when y*st + k*wd - pl = x*bd
    sc = ["  int yf = 0, sa = soff, ok = 1;"]
    for d in range(R):
        c = classes[d]
        if c == "T":
            sc.append(f"  yf += x{d} * WA_OD({d}); sa += x{d} * WA_SS({d});")
        elif c in "Ff":
            sc.append("  do {")
            sc.append(f"    const int t = x{d} * WA_BD({d}) + WA_PL({d});")
            sc.append("    if (t < 0) { ok = 0; break; }")
            sc.append(f"    const int y = NDIV(t, WA_STM({d}), WA_STS({d}));")
            sc.append(f"    if (t != y * WA_ST({d}) || y >= WA_OUT({d})) {{ ok = 0; break; }}")
            sc.append(f"    yf += y * WA_OD({d}); sa += y * WA_SS({d});")
            sc.append("  } while (0);")
    sc.append("  if (ok) {")
    ind, prev_y, prev_s = "    ", "yf", "sa"
    loops = [d for d in range(R) if classes[d] in "VLl"]
    for d in loops:
        sc.append(f"{ind}for (int k{d} = 0; k{d} < WA_WIN({d}); ++k{d}) {{")
        ind += "  "
        # branch-free (the taken/not-taken pattern is data-dependent): invalid offsets
        # read element 0 and are masked out
        sc.append(f"{ind}const int t{d} = x{d} * WA_BD({d}) + WA_PL({d}) - k{d} * WA_WD({d});")
        sc.append(f"{ind}if (t{d} < 0) break;")
        sc.append(f"{ind}const int y{d} = NDIV(t{d}, WA_STM({d}), WA_STS({d}));")
        prev_ok = "1" if prev_y == "yf" else f"ok{prev_y[2:]}"
        sc.append(f"{ind}const int ok{d} = {prev_ok} & (t{d} == y{d} * WA_ST({d})) & "
                  f"(y{d} < WA_OUT({d}));")
        sc.append(f"{ind}const int yf{d} = {prev_y} + y{d} * WA_OD({d});")
        sc.append(f"{ind}const int sa{d} = {prev_s} + y{d} * WA_SS({d});")
        prev_y, prev_s = f"yf{d}", f"sa{d}"
    if loops:
        okv = f"ok{loops[-1]}"
        sc.append(f"{ind}{{ const {T} sv = {ld('src', f'({okv} ? {prev_s} : soff)')}; "
                  f"acc += ({okv} && sel[{okv} ? {prev_y} : 0] == i) ? sv : ({T})0; }}")
    else:
        sc.append(f"{ind}if (sel[{prev_y}] == i) acc += {ld('src', prev_s)};")
    for _ in loops:
        ind = ind[:-2]
        sc.append(f"{ind}}}")
    sc.append("  }")
    scatter_code = "\n".join(sc)
    gather_addr = "".join(f"    {{ const int q = NDIV(s, WA_INM({d}), WA_INS({d})); "
                          f"addr += (s - q * WA_IN({d})) * WA_SS({d}); s = q; }}\n"
                          for d in range(R - 1, -1, -1))
    return f"""{_NDIV}{defs}
__kernel void window_reduce(__global {S}* out, __global const {S}* x, __constant int* m,
                            const int op) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("y", "WA_OUT")}  {T} acc = {init};
  uint nf = 0;
{window_code(reduce_body)}
{finish_reduce}  {kernels.store(dtype, "out", "i", "acc")}
}}

/* for each window: the dense flat index of the selected operand element, -1 if none */
__kernel void window_select(__global int* sel, __global const {S}* x, __constant int* m,
                            const int op) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("y", "WA_OUT")}  {T} best = {init};
  int s = -1, sn = -1, fv = INT_MAX;
{window_code(select_body, flat=True)}
{finish_select}  sel[i] = s;
}}

/* non-overlapping windows: out (zero-filled) [selected element of y] = src[y] */
__kernel void window_select_scatter(__global {S}* out, __global const {S}* src,
                                    __global const {S}* x, __constant int* m, const int op) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("y", "WA_OUT")}  {T} best = {init};
  int s = -1, sn = -1, fv = INT_MAX;
{window_code(select_body, flat=True)}
{finish_select}  if (s >= 0) {{
    const int sa = soff{"".join(f" + y{d} * WA_SS({d})" for d in range(R))};
    {kernels.store(dtype, "out", "s", ld("src", "sa"))}
  }}
}}

/* out[x] = sum of src[y] over the windows y that selected x (a gather: no atomics) */
__kernel void window_scatter(__global {S}* out, __global const {S}* src,
                             __global const int* sel, __constant int* m) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("x", "WA_IN")}  {T} acc = 0;
{scatter_code}
  {kernels.store(dtype, "out", "i", "acc")}
}}

/* out[y] = t[selected element of window y] (0 if none) */
__kernel void window_gather(__global {S}* out, __global const {S}* t,
                            __global const int* sel, __constant int* m) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int s = sel[i];
  {T} v = 0;
  if (s >= 0) {{
    int addr = soff;
{gather_addr}    v = {ld("t", "addr")};
  }}
  {kernels.store(dtype, "out", "i", "v")}
}}
"""


def _window_params(params):
    return {k: params[k] for k in _WINDOW_PARAMS}


def _new_out_fn(device, shape, dtype, weak):
    from ..core.pool import Storage
    strides = contiguous_strides(shape)
    nbytes = prod(shape) * dtype.itemsize
    pool = device.pool

    def new_out():
        st = Storage(pool, nbytes)
        return Array(device, st.buf, st, shape, dtype, strides, 0, weak, True)
    return new_out


def _check_window_sizes(name, *shapes):
    for s in shapes:
        if prod(s) > _INDEX_LIMIT:
            raise ValueError(f"{name}: an array of shape {tuple(s)} exceeds the kernels' 2^31 "
                             "index limit")


def _reduce_window_launcher(op):
    code = {"sum": 0, "max": 1, "min": 2}[op]

    def make(device, args, params, out_aval):
        import pyopencl as cl
        (x,) = args
        _check_window_sizes("reduce_window_" + op, x.shape, out_aval.shape)
        new_out = _new_out_fn(device, out_aval.shape, out_aval.dtype, out_aval.weak_type)
        n = prod(out_aval.shape)
        if n == 0:
            return lambda x: new_out()
        scal, arrays = _window_meta(x.shape, out_aval.shape, params, (x.strides, x.offset))
        scal["total"] = n
        k = kernels.kernel(device, _window_source(x.dtype, _window_classes(x.shape, out_aval.shape, params)), "window_reduce")
        meta = _const_buffer(device, _window_meta_values(scal, arrays))
        k.set_arg(2, meta)
        k.set_arg(3, np.int32(code))
        k._netcl_meta = meta
        gsize, lsize = kernels.grid_1d(device, n)
        queue, enqueue = device.queue, cl.enqueue_nd_range_kernel

        def launch(x):
            out = new_out()
            k.set_arg(0, out._buf)
            k.set_arg(1, x._buf)
            enqueue(queue, k, gsize, lsize)
            return out
        return launch
    return make


def _select_kernel(device, operand, out_shape, params, select):
    """(kernel computing the selected flat index per window, its grid, the window count)."""
    scal, arrays = _window_meta(operand.shape, out_shape, params,
                                (operand.strides, operand.offset))
    n = prod(out_shape)
    scal["total"] = n
    k = kernels.kernel(device, _window_source(operand.dtype, _window_classes(operand.shape, out_shape, params)), "window_select")
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    k.set_arg(2, meta)
    k.set_arg(3, np.int32(1 if select == "ge" else 2))
    k._netcl_meta = meta
    return k, kernels.grid_1d(device, max(n, 1)), n


def _select_and_scatter_add_launcher(device, args, params, out_aval):
    import pyopencl as cl
    from ..core.pool import Storage
    source, operand = args
    wp = _window_params(params)
    out_shape = source.shape
    _check_window_sizes("select_and_scatter_add", operand.shape, source.shape)
    new_out = _new_out_fn(device, out_aval.shape, out_aval.dtype, out_aval.weak_type)
    n_in = prod(operand.shape)
    n_out = prod(out_shape)
    if n_in == 0:
        return lambda s, x: new_out()
    queue, enqueue, pool = device.queue, cl.enqueue_nd_range_kernel, device.pool
    classes = _window_classes(operand.shape, out_shape, wp)
    src = _window_source(source.dtype, classes)
    disjoint = all(st >= _dilate(w, wd) for w, st, wd in zip(
        wp["window_dimensions"], wp["window_strides"], wp["window_dilation"]))
    if disjoint:
        # every operand element is in at most one window: zero-fill, then each window writes
        # its source value to the element it selects (one pass, no index buffer)
        scal, arrays = _window_meta(operand.shape, out_shape, wp,
                                    (operand.strides, operand.offset),
                                    (source.strides, source.offset))
        scal["total"] = n_out
        kss = kernels.kernel(device, src, "window_select_scatter")
        meta = _const_buffer(device, _window_meta_values(scal, arrays))
        kss.set_arg(3, meta)
        kss.set_arg(4, np.int32(1 if params["select"] == "ge" else 2))
        kss._netcl_meta = meta
        g1, l1 = kernels.grid_1d(device, max(n_out, 1))
        nbytes = n_in * out_aval.dtype.itemsize
        zero = np.uint8(0)

        def launch_disjoint(s, x):
            out = new_out()
            cl.enqueue_fill_buffer(queue, out._buf, zero, 0, nbytes)
            if n_out:
                kss.set_arg(0, out._buf)
                kss.set_arg(1, s._buf)
                kss.set_arg(2, x._buf)
                enqueue(queue, kss, g1, l1)
            return out
        return launch_disjoint
    ksel, (sg, sl), _ = _select_kernel(device, operand, out_shape, wp, params["select"])
    scal, arrays = _window_meta(operand.shape, out_shape, wp, (operand.strides, 0),
                                (source.strides, source.offset))
    scal["total"] = n_in
    ksc = kernels.kernel(device, src, "window_scatter")
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    ksc.set_arg(3, meta)
    ksc._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, n_in)
    sel_bytes = max(n_out, 1) * 4

    def launch(s, x):
        out = new_out()
        sel = Storage(pool, sel_bytes)
        if n_out:
            ksel.set_arg(0, sel.buf)
            ksel.set_arg(1, x._buf)
            enqueue(queue, ksel, sg, sl)
        ksc.set_arg(0, out._buf)
        ksc.set_arg(1, s._buf)
        ksc.set_arg(2, sel.buf)
        enqueue(queue, ksc, gsize, lsize)
        return out
    return launch


def _select_and_gather_add_launcher(device, args, params, out_aval):
    import pyopencl as cl
    from ..core.pool import Storage
    tangent, operand = args
    wp = _window_params(params)
    out_shape = out_aval.shape
    _check_window_sizes("select_and_gather_add", operand.shape, out_shape)
    new_out = _new_out_fn(device, out_shape, out_aval.dtype, out_aval.weak_type)
    n_out = prod(out_shape)
    if n_out == 0:
        return lambda t, x: new_out()
    ksel, (sg, sl), _ = _select_kernel(device, operand, out_shape, wp, params["select"])
    scal, arrays = _window_meta(operand.shape, out_shape, wp, (operand.strides, 0),
                                (tangent.strides, tangent.offset))
    scal["total"] = n_out
    kga = kernels.kernel(device, _window_source(tangent.dtype, _window_classes(operand.shape, out_shape, wp)), "window_gather")
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    kga.set_arg(3, meta)
    kga._netcl_meta = meta
    queue, enqueue, pool = device.queue, cl.enqueue_nd_range_kernel, device.pool

    def launch(t, x):
        out = new_out()
        sel = Storage(pool, n_out * 4)
        ksel.set_arg(0, sel.buf)
        ksel.set_arg(1, x._buf)
        enqueue(queue, ksel, sg, sl)
        kga.set_arg(0, out._buf)
        kga.set_arg(1, t._buf)
        kga.set_arg(2, sel.buf)
        enqueue(queue, kga, sg, sl)
        return out
    return launch


# ---- the primitives ---------------------------------------------------------------------------

reduce_window_sum_p = Primitive("reduce_window_sum", fusion="opaque")
reduce_window_max_p = Primitive("reduce_window_max", fusion="opaque")
reduce_window_min_p = Primitive("reduce_window_min", fusion="opaque")
select_and_scatter_add_p = Primitive("select_and_scatter_add", fusion="opaque")
select_and_gather_add_p = Primitive("select_and_gather_add", fusion="opaque")

for _op, _p in (("sum", reduce_window_sum_p), ("max", reduce_window_max_p),
                ("min", reduce_window_min_p)):
    _p.abstract_eval = _window_abstract("reduce_window_" + _op)
    _p.reference = _reduce_window_ref(_op)
    _p.make_launcher = _reduce_window_launcher(_op)


def _pair_abstract(name, first, first_is_window_shaped):
    """select_and_scatter_add (source: one value per window -> operand-shaped result) and
    select_and_gather_add (tangent: operand-shaped -> one value per window)."""
    def abstract(a, operand, *, select, window_dimensions, window_strides, padding,
                 base_dilation, window_dilation):
        if select not in ("ge", "le"):
            raise ValueError(f"{name}: select must be 'ge' or 'le', got {select!r}")
        if a.dtype.kind != "f" or operand.dtype.kind != "f":
            raise TypeError(f"{name}: {first} and operand must be floating point, got "
                            f"{a.dtype} and {operand.dtype}")
        if operand.ndim > _MAX_WINDOW_RANK:
            raise NotImplementedError(f"{name}: rank {operand.ndim} > {_MAX_WINDOW_RANK}")
        out = _window_out_shape(name, operand.shape, window_dimensions, window_strides,
                                padding, base_dilation, window_dilation)
        want = out if first_is_window_shaped else tuple(operand.shape)
        if tuple(a.shape) != want:
            raise ValueError(f"{name}: {first} has shape {tuple(a.shape)}, expected {want} "
                             f"for operand shape {tuple(operand.shape)} and window "
                             f"{window_dimensions}")
        if first_is_window_shaped:
            return ShapedArray(tuple(operand.shape), a.dtype, a.weak_type)
        return ShapedArray(out, a.dtype, a.weak_type)
    return abstract


select_and_scatter_add_p.abstract_eval = _pair_abstract("select_and_scatter_add", "source",
                                                        True)
select_and_scatter_add_p.reference = _select_and_scatter_add_ref
select_and_scatter_add_p.make_launcher = _select_and_scatter_add_launcher
select_and_gather_add_p.abstract_eval = _pair_abstract("select_and_gather_add", "tangent", False)
select_and_gather_add_p.reference = _select_and_gather_add_ref
select_and_gather_add_p.make_launcher = _select_and_gather_add_launcher


# ---- derivatives ------------------------------------------------------------------------------

def _zero_of(out):
    return Zero(ShapedArray(out.shape, out.dtype, out.weak_type))


def _reduce_window_sum_transpose(ct, operand_shape, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    pads = _vjp_lhs_padding(operand_shape, window_dimensions, window_strides, ct.shape,
                            padding, base_dilation, window_dilation)
    return reduce_window_sum_p.bind(ct, window_dimensions=window_dimensions,
                                    window_strides=tuple(base_dilation), padding=pads,
                                    base_dilation=tuple(window_strides),
                                    window_dilation=window_dilation)


def _rws_jvp(primals, tangents, **params):
    out = reduce_window_sum_p.bind(primals[0], **params)
    t = tangents[0]
    return out, (_zero_of(out) if is_zero(t) else reduce_window_sum_p.bind(t, **params))


def _rws_vjp(ct, out, x, **params):
    return (_reduce_window_sum_transpose(ct, x.shape, **params),)


reduce_window_sum_p.jvp = _rws_jvp
reduce_window_sum_p.vjp = _rws_vjp


def _chooser_rules(prim, select):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        if is_zero(t):
            return out, _zero_of(out)
        return out, select_and_gather_add_p.bind(t, x, select=select, **params)

    def vjp(ct, out, x, **params):
        return (select_and_scatter_add_p.bind(ct, x, select=select, **params),)
    prim.jvp, prim.vjp = jvp, vjp


_chooser_rules(reduce_window_max_p, "ge")
_chooser_rules(reduce_window_min_p, "le")


def _linear_pair_rules(prim, transpose_prim):
    """prim(a, operand) is linear in a; the operand only selects (zero derivative)."""
    def jvp(primals, tangents, **params):
        (a, x), (ta, _) = primals, tangents
        out = prim.bind(a, x, **params)
        if is_zero(ta):
            return out, _zero_of(out)
        return out, prim.bind(ta, x, **params)

    def vjp(ct, out, a, x, **params):
        return (transpose_prim.bind(ct, x, **params), None)
    prim.jvp, prim.vjp = jvp, vjp


_linear_pair_rules(select_and_scatter_add_p, select_and_gather_add_p)
_linear_pair_rules(select_and_gather_add_p, select_and_scatter_add_p)


# ---- batching: the vmapped axis becomes a window dimension of size 1 ------------------------

def _batched_window_params(params):
    p = dict(params)
    p["window_dimensions"] = (1,) + tuple(params["window_dimensions"])
    p["window_strides"] = (1,) + tuple(params["window_strides"])
    p["padding"] = ((0, 0),) + tuple(params["padding"])
    p["base_dilation"] = (1,) + tuple(params["base_dilation"])
    p["window_dilation"] = (1,) + tuple(params["window_dilation"])
    return p


def _window_batch(prim):
    def rule(args, dims, **params):
        from .views import move_batch_axis
        x = move_batch_axis(args[0], dims[0], 0)
        return prim.bind(x, **_batched_window_params(params)), 0
    return rule


def _pair_batch(prim):
    def rule(args, dims, **params):
        from .views import bdim_at_front
        a, x = args
        da, dx = dims
        size = a.shape[da] if da is not None else x.shape[dx]
        return prim.bind(bdim_at_front(a, da, size), bdim_at_front(x, dx, size),
                         **_batched_window_params(params)), 0
    return rule


for _p in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
    _p.batch = _window_batch(_p)
for _p in (select_and_scatter_add_p, select_and_gather_add_p):
    _p.batch = _pair_batch(_p)


# ---- lax-level functions ----------------------------------------------------------------------

def _window_args(name, x, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
    nd = x.ndim
    wdims = _int_tuple(window_dimensions, nd, "window_dimensions", name)
    ws = _int_tuple(window_strides, nd, "window_strides", name)
    bd = _int_tuple(base_dilation, nd, "base_dilation", name)
    wd = _int_tuple(window_dilation, nd, "window_dilation", name)
    if isinstance(padding, str):
        if padding.upper() in ("SAME", "SAME_LOWER", "VALID"):
            pads = tuple(tuple(p) for p in padtype_to_pads(
                [_dilate(n, b) for n, b in zip(x.shape, bd)],
                [_dilate(w, d) for w, d in zip(wdims, wd)], ws, padding))
        else:
            raise ValueError(f"{name}: unknown padding {padding!r}; expected 'SAME', "
                             f"'SAME_LOWER', 'VALID' or (low, high) pairs (operand shape "
                             f"{tuple(x.shape)}, window_dimensions {wdims})")
    else:
        pads = _explicit_padding(padding, nd, name, f" (operand shape {tuple(x.shape)})")
    return dict(window_dimensions=wdims, window_strides=ws, padding=pads, base_dilation=bd,
                window_dilation=wd)


def _as_operand(x, name):
    from ..core.eval import to_array
    from ..core.tracing import Tracer
    return x if isinstance(x, (Array, Tracer)) else to_array(x, name)


def reduce_window_sum(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """Sum over windows (sum pooling); padding and base-dilation holes count as 0."""
    x = _as_operand(operand, "reduce_window_sum")
    return reduce_window_sum_p.bind(x, **_window_args(
        "reduce_window_sum", x, window_dimensions, window_strides, padding, base_dilation,
        window_dilation))


def reduce_window_max(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """Max over windows (max pooling); padding and holes count as -inf."""
    x = _as_operand(operand, "reduce_window_max")
    return reduce_window_max_p.bind(x, **_window_args(
        "reduce_window_max", x, window_dimensions, window_strides, padding, base_dilation,
        window_dilation))


def reduce_window_min(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """Min over windows; padding and holes count as +inf."""
    x = _as_operand(operand, "reduce_window_min")
    return reduce_window_min_p.bind(x, **_window_args(
        "reduce_window_min", x, window_dimensions, window_strides, padding, base_dilation,
        window_dilation))


def select_and_scatter_add(source, operand, select, window_dimensions, window_strides, padding,
                           base_dilation=None, window_dilation=None):
    """Add each source element (one per window) to the operand element its window selects
    (select='ge': the window max, 'le': the min): the gradient of max/min pooling."""
    x = _as_operand(operand, "select_and_scatter_add")
    return select_and_scatter_add_p.bind(
        _as_operand(source, "select_and_scatter_add"), x, select=select,
        **_window_args("select_and_scatter_add", x, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation))


def select_and_gather_add(tangent, operand, select, window_dimensions, window_strides, padding,
                          base_dilation=None, window_dilation=None):
    """For each window, the tangent element at the operand element the window selects."""
    x = _as_operand(operand, "select_and_gather_add")
    return select_and_gather_add_p.bind(
        _as_operand(tangent, "select_and_gather_add"), x, select=select,
        **_window_args("select_and_gather_add", x, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation))


def _computation_name(computation):
    if isinstance(computation, str):
        c = computation.lower()
        if c in ("add", "sum"):
            return "sum"
        if c in ("max", "min"):
            return c
    else:
        from . import elementwise as ew
        if computation in (ew.add,):
            return "sum"
        if computation in (ew.max_,):
            return "max"
        if computation in (ew.min_,):
            return "min"
        for name in ("add", "max", "min"):
            if getattr(computation, "__name__", None) in (name, name + "_") and \
                    getattr(computation, "__module__", "").startswith("netcl"):
                return "sum" if name == "add" else name
    raise TypeError(f"reduce_window: computation {computation!r} is not supported; use "
                    "netcl.lax.add / netcl.lax.max / netcl.lax.min or 'add' / 'max' / 'min'")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """lax.reduce_window for computation add/max/min (XLA semantics: padding and
    base-dilation holes hold init_value, and each window's reduction starts from it)."""
    from ..core.tracing import Tracer
    op = _computation_name(computation)
    x = _as_operand(operand, "reduce_window")
    params = _window_args("reduce_window", x, window_dimensions, window_strides, padding,
                          base_dilation, window_dilation)
    prim = {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
            "min": reduce_window_min_p}[op]
    out = prim.bind(x, **params)
    ident = _identity_np(op, x.dtype)
    concrete = None
    if not isinstance(init_value, Tracer):
        try:
            concrete = np.asarray(init_value).reshape(())
        except Exception:
            raise TypeError(f"reduce_window: init_value must be a scalar, got "
                            f"{init_value!r}") from None
        if concrete.item() == ident:
            return out
    elif init_value.ndim != 0:
        raise TypeError(f"reduce_window: init_value must be a scalar, got shape "
                        f"{init_value.shape}")
    from .elementwise import add, max_, min_, mul, sub
    from .views import full_like
    if concrete is not None:
        init = full_like(out, concrete.item())
    else:
        init = _broadcast_scalar(_convert(init_value, x.dtype), out.shape)
    if op == "max":
        return max_(out, init)
    if op == "min":
        return min_(out, init)
    # sum: init once per window plus once per padding/hole position in the window
    ones = full_like(x, 1)
    valid = reduce_window_sum_p.bind(ones, **params)
    count = full_like(out, prod(params["window_dimensions"]) + 1)
    return add(out, mul(init, sub(count, valid)))


def _broadcast_scalar(s, shape):
    from .views import broadcast_in_dim
    return broadcast_in_dim(s, tuple(shape), ())
