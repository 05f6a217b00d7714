"""How a convolution runs as GEMMs: `_plan_gemm` decides whether the im2col + GEMM path
(conv_gemm.py) serves a convolution and plans it: the GEMM's sizes, whether the kernel is
read in place or packed, the storage order of the patches matrix P and the im2col's slots
(a dimension per slot, the loop one last, with the multiply-shift constants of their
sizes); `_split_k` and friends choose how many K chunks a kernel gradient's product is cut
into; `_half_operands` whether 16-bit operands stay 16-bit on tensor cores. Pure
arithmetic on the geometry and the device's Target: no kernel is built here."""
from ...core import dtypes
from ...core.shapes import contiguous_strides, prod
from .. import split_k
from .conv_kernels import _IM, _SLOT_FIELDS, _gemm_dtype
from .kernel_metadata import _INDEX_LIMIT, _magic


def _forced_impl():
    """The path tests and benchmarks force ("direct" or "gemm"; None: decide by size). They
    set `_impl_override` on the package `netcl.primitives.conv`, so it is read from there."""
    from .. import conv
    return conv._impl_override


def _im2col_mode(device):
    """How P is made: "implicit" (GPUs: never stored; the GEMM reads its elements straight
    from the input, `_implicit_gather`, where the geometry allows, else as "special"),
    "special" (an im2col kernel with the geometry baked in, vectors along the channel run;
    one build per geometry) or "generic" (CPUs: one im2col build per dtype, sizes in a
    metadata buffer). Tests and benchmarks force one by setting `_im2col_override` on the
    package `netcl.primitives.conv`."""
    from .. import conv
    forced = conv._im2col_override
    if forced is not None:
        return forced
    return device.target.conv_lowering


def _forced_implicit():
    from .. import conv
    return conv._im2col_override == "implicit"


def _half_operands(device, dtype, geo):
    """"f16" or "bf16" where this conv's GEMMs take its 16-bit operands as stored, on tensor
    cores (the products of two 16-bit floats are exact in float32, whatever the precision
    asked); None where they run in float32 (or float64). Needs P gathered or made by the
    specialised im2col (no lhs dilation), which can move 16-bit words unconverted."""
    kind = {dtypes.float16: "f16", dtypes.bfloat16: "bf16"}.get(dtype)
    if kind is None or not device.target.tensor_cores or any(v != 1 for v in geo.ld) or \
            _im2col_mode(device) == "generic":
        return None
    return kind


def _p_dtype(plan, dtype):
    """The dtype P and the packed kernel are stored in."""
    return dtype if plan.half else _gemm_dtype(dtype)


class _GemmPlan:
    pass


def _gemm_available():
    try:
        from .. import gemm  # noqa: F401
        return True
    except ImportError:
        return False


def _plan_gemm(geo, dtype, device):
    """A _GemmPlan for this conv, or None where the direct kernel is the better (or only) way.
    `dtype` is the operands' dtype; 16-bit floats stay 16-bit where `_half_operands` says
    so (`plan.half`), else go through the float32 GEMM (im2col and the packed kernel
    convert)."""
    if dtypes.kind(dtype) != "f" or geo.total == 0 or not _gemm_available():
        return None
    half = _half_operands(device, dtype, geo)
    GG = geo.G * geo.B
    Og = geo.O // GG
    Kg = geo.Cg * prod(geo.K)
    out_dims = sorted(range(2 + geo.nsp), key=lambda j: geo.out_spec[j])  # logical, physical order
    rows = [j for j in out_dims if j != 1]          # 0 = batch, 2+s = spatial s
    pos_o = out_dims.index(1)
    outer = prod(geo.out_shape[geo.out_spec[j]] for j in out_dims[:pos_o])
    inner = prod(geo.out_shape[geo.out_spec[j]] for j in out_dims[pos_o + 1:])
    M = geo.Nout * prod(geo.S)
    p_bytes = GG * M * Kg * (dtype if half else _gemm_dtype(dtype)).itemsize
    forced = _forced_impl()
    if forced != "gemm":
        work = M * Og * Kg
        if forced == "direct" or GG > 16 or not (
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
    plan.half = half
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
    # 16-bit kernels for a float32 GEMM are always packed (packing converts them)
    native = dtype == _p_dtype(plan, dtype)
    if native and contiguous and (geo.rso == 1 or geo.O == 1 or Og == 1 and GG == 1) and \
            s_last > 0:
        plan.b_mode, plan.ldb = "nt", s_last        # B[k, o] = W[k * ldb + o]
    elif native and contiguous and s_last == 1 and geo.rso > 0:
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
    plan.p_dims = _p_dims(geo, pdims, pstride, GG, M * Kg)
    if device.target.kernel_family != "cpu":
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


def _p_dims(geo, pdims, pstride, GG, group_stride):
    """P's dims of size > 1 in storage order (slowest first) as (name, size, lhs coef,
    position coefs b0 b1 b2, P stride), for the specialised im2col; None if P is not dense
    in that order (it always is: a safety net)."""
    dims = []
    if GG > 1:
        goffa = geo.Cg * geo.lsc if geo.G > 1 else geo.Nout * geo.lsn
        dims.append(("g", GG, goffa, 0, 0, 0, group_stride))
    for d in sorted((d for d in pdims if d[2] > 1), key=lambda d: -pstride[d]):
        kind, j, size = d
        b = [0, 0, 0]
        if kind == "r" and j == 0:
            name, a = "n", geo.lsn                     # output batch
        elif kind == "r":
            name, a, b[j - 2] = f"y{j - 2}", 0, geo.st[j - 2]  # output position
        elif j == 1:
            name, a = "c", geo.lsc                     # input feature in the group
        else:
            name, a, b[j - 2] = f"k{j - 2}", 0, geo.rd[j - 2]  # window position
        dims.append((name, size, a, *b, pstride[d]))
    expect = 1
    for d in reversed(dims):
        if d[6] != expect:
            return None
        expect *= d[1]
    return dims


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
    from .. import gemm_tiers
    if K < 2048:
        return 1
    tname = "double" if dtype == dtypes.float64 else "float"
    cfg = _split_config(device, tname, M, N) or \
        gemm_tiers.choose_config(device.cl_device, tname, M, N, max(K // 8, 1),
                                 family=device.target.gemm_tiers)
    tiles = -(-M // cfg.bm) * -(-N // cfg.bn)
    cus = device.capabilities.compute_units
    if tiles >= 4 * cus:
        return 1
    if device.target.kernel_family == "cpu":
        parts = min(-(-4 * cus // tiles), K // 1024, 64)
    else:
        # GPUs: about 8 work-groups per compute unit, chunks down to 256 (a CNN's kernel
        # gradients, such as 288x64x262144 or 576x128x65536, run faster in 256 parts than
        # in fewer, longer ones; 64 parts leave a first layer's 27x32 far from peak)
        parts = min(-(-8 * cus // tiles), K // 256, 256)
    parts = max(1, parts)
    # Prefer a count that splits K into equal multiples of 16: a shorter last part runs as
    # a launch of its own on only `tiles` work-groups, which can take as long as all the
    # other parts together.
    return split_k.even_parts(K, parts) if parts > 1 else 1


# 16-bit operand kinds of the tensor-core kernels, as dtypes
_HALF_DTYPES = {"f16": dtypes.float16, "bf16": dtypes.bfloat16}


def _staged_split_k(device, operands, M, N, K, ta, tb):
    """The K chunks of a split 16-bit product on a tensor-core kernel whose P tiles are
    copied by cp.async (dot_tensor_cores.half_config): about two work-groups per compute
    unit. Its chunks pay their pipeline's start and the partial sums' traffic, which the
    longer chunks amortise (a CNN's kernel gradients ran fastest with 64 parts rather than
    _split_k's 256)."""
    from ..dot_tensor_cores import half_config
    cfg = half_config(device, operands, M, N, ta, tb)
    tiles = -(-M // cfg.bm) * -(-N // cfg.bn)
    parts = min(-(-2 * device.capabilities.compute_units // tiles), K // 256)
    return split_k.even_parts(K, parts) if parts > 1 else 1


def _split_config(device, tname, M, N):
    """The GEMM tiles of a split-K product on a GPU: the biggest tier that pads M x N by at
    most a third, since the split, not the tile count, gives the device its parallelism,
    and big tiles read the operands fewer times (a 288x64x262144 kernel gradient reads
    P twice and the output gradient nine times with 32x32 tiles, once and three times with
    128x64). None on CPUs: choose_config decides there."""
    from .. import gemm_tiers
    if device.target.kernel_family == "cpu":
        return None
    max_wg = device.capabilities.max_work_group_size
    local_mem = device.capabilities.local_mem_size
    for cfg in gemm_tiers.GPU_TIERS[tname]:
        padded = -(-M // cfg.bm) * cfg.bm * -(-N // cfg.bn) * cfg.bn
        if gemm_tiers._fits(cfg, tname, max_wg, local_mem) and padded <= 1.34 * M * N:
            return cfg
    return None
