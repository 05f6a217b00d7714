"""The im2col + GEMM path of conv_general_dilated, for convolutions large enough to matter
(`_plan_gemm` decides; otherwise the direct kernel runs). The im2col kernel gathers the
patches matrix P, and batched GEMMs of `gemm.py` multiply it with the kernel read in place
(or packed when it is a strided view, e.g. the reversed kernel of the input gradient),
writing the output in its own layout. On GPUs the im2col is generated per geometry
(`_im2col_launcher`, `conv_kernels._im2col_special_source`): literal sizes (divisions
become multiply-shifts, no metadata loads) and coalesced vector stores, as the generic
kernel writes P at a small fraction of a GPU's memory bandwidth. CPUs keep the generic
kernel: on PoCL it is the faster one (it loops along the contiguous read per work-item).
Kernel gradients (few output tiles, huge K) split K across work-groups and add the parts.
16-bit floats: where the Target has tensor cores, P and the kernel stay 16-bit (the gathers
and the im2col move bits) and the GEMM multiplies them as stored, accumulating in float32
(`_half_operands`); elsewhere they run through the float32 GEMM (the im2col and the packing
convert, one kernel narrows the result)."""
import dataclasses

import numpy as np

from ...core import commands, dtypes, kernels
from ...core.array import Array
from ...core.launch import Launch
from ...core.shapes import contiguous_strides, prod
from ...core.tracing import ShapedArray
from .conv_gemm_plan import (_HALF_DTYPES, _forced_implicit, _im2col_mode, _p_dtype,
                             _plan_gemm, _split_config, _split_k, _staged_split_k)
from .conv_kernels import (_gemm_dtype, _im2col_special_source, _p_chunk_source,
                           _p_gather_source, _p_vector_load)
from .kernel_metadata import _const_buffer


def _implicit_gather(device, in_dtype, geo, plan):
    """For the implicit GEMM: ``gather(vec, name, bk)``, the C functions that read P's elements
    from the input (conv_kernels._p_gather_source), or None where P is stored by an im2col.

    Why: on a GPU a CNN train step's im2cols take a large share of its device time, P being
    9 to 18 times the size of its input; read in place, the input's tiles stay in the L2
    cache."""
    ld = plan.M if plan.p_transposed else plan.Kg        # P's columns
    raw = plan.half is not None
    if _im2col_mode(device) != "implicit" or plan.p_dims is None or \
            _p_gather_source(in_dtype, geo, plan.p_dims, "probe", 1, ld, raw=raw) is None:
        return None
    if _p_vector_load(in_dtype, geo, plan.p_dims, 2, raw) is None and not _forced_implicit():
        # element by element (3 input channels: a first layer) the gathers cost more than
        # the im2col saves (a first layer's kernel gradient runs faster with the im2col)
        return None
    return lambda vec, name, bk: _p_gather_source(in_dtype, geo, plan.p_dims, name, vec, ld,
                                                  bk, raw)


# the most P elements one work-item of the specialised im2col stores (1, 2, 4 or 8)
_IM2COL_VEC = 4


def _im2col_launcher(device, in_dtype, geo, plan, src):
    """run(P_buf, lhs_buf) enqueueing the im2col of `plan`: the specialised kernel where
    `_im2col_mode` asks for it and it covers the geometry, else the generic one from `src`.
    `run.mode` says which."""
    queue, enqueue = device.queue, commands.launch
    special = None
    if _im2col_mode(device) in ("special", "implicit") and plan.p_dims is not None:
        special = _im2col_special_source(in_dtype, geo, plan.p_dims, _IM2COL_VEC,
                                         raw=plan.half is not None)
    k = None
    if special is not None:
        ssrc, vec, items = special
        try:
            k = kernels.kernel(device, ssrc, "conv_im2col")
            g, l_ = kernels.grid_1d(device, items)
            mode = f"special{vec}"
        except kernels.KernelBuildError as e:   # the generic kernel still works
            if plan.half is not None:            # (not on 16-bit words)
                raise
            import warnings
            warnings.warn(f"conv_general_dilated: the specialised im2col failed to build on "
                          f"{device.name}; using the generic one ({str(e)[:300]})")
    if k is None:
        k = kernels.kernel(device, src, "conv_im2col")
        meta = _const_buffer(device, plan.im2col_meta)
        k.set_arg(2, meta)
        k._netcl_meta = meta
        g, l_ = kernels.grid_1d(device, plan.im2col_items)
        mode = "generic"

    def run(p_buf, x_buf):
        k.set_arg(0, p_buf)
        k.set_arg(1, x_buf)
        enqueue(queue, k, g, l_)
    run.mode, run.items = mode, g[0]
    run.p_bytes = plan.p_elems * _p_dtype(plan, in_dtype).itemsize
    run.kernel = kernels.described(k)
    return run


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
        if parts > 1 and plan.half and _staged_chunks(
                device, _HALF_DTYPES[plan.half], geo, plan,
                (ta, tb, 1, M, Og, Kg, lda, ldw, Og, 0, 0, 0, 0, w_off, 0, True, True),
                plan.half) is not None:
            parts = _staged_split_k(device, plan.half, M, Og, Kg, ta, tb)
        if parts > 1:
            kc = -(-Kg // parts)
            kc = -(-kc // 16) * 16
            parts = -(-Kg // kc)
            a_cs = kc * M if plan.p_transposed else kc
            b_cs = kc if wmode == "t" else kc * ldw
            if Kg == parts * kc:       # equal parts: one batched launch
                calls.append((ta, tb, parts, M, Og, kc, lda, ldw, Og, a_cs, b_cs, M * Og,
                              0, w_off, 0, True, True))
                return calls, parts
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


def _use_tf32(device, dtype, precision):
    """Whether this conv's GEMMs run on tensor cores in TF32 (gemm_mma.py): float32 GEMMs
    whose precision allows it (matmul_precision: "default" and "high", or None with no
    other config default, as PyTorch's cuDNN convolutions and XLA on these GPUs) where the
    Target has tensor cores. "highest" keeps float32 products."""
    from ..matmul_precision import gemm_arithmetic
    return dtype == dtypes.float32 and \
        gemm_arithmetic(device.target, dtype, precision) == "tf32"


# C's type in the tensor-core kernels, by output dtype
_MMA_OUT = {dtypes.float32: "float", dtypes.float16: "half", dtypes.bfloat16: "bfloat16"}


def _staged_chunks(device, in_dtype, geo, plan, call, operands):
    """C source of ``netcl_gather_a_at`` (conv_kernels._p_chunk_source) where GEMM `call`
    (one of `_gemm_calls`) can run gemm_mma_staged.py's kernel, P's tiles copied by
    cp.async straight from the input; None where it cannot: P not the A operand, P's
    columns not whole aligned 16-byte chunks, or the kernel not 16-byte aligned.

    Why: the register-staged kernel's element-wise gathers keep the tensor cores mostly
    idle on a CNN's convolutions; whole chunks copied asynchronously overlap the products."""
    from .. import gemm_mma_staged as staged
    (ta, tb, batch, M, N, K, lda, ldb, ldc, bsa, bsb, bsc, oa, ob, oc, a_is_p,
     c_tmp) = call
    E = 16 // staged.OPERANDS[operands][1]
    if not a_is_p or plan.p_dims is None or (M if ta else K) % E or \
            _im2col_mode(device) != "implicit" or \
            not staged.aligned(operands, ldb, ob, bsb if batch > 1 else 0):
        return None
    return _p_chunk_source(in_dtype, geo, plan.p_dims, "netcl_gather_a", E, lda,
                           raw=operands != "tf32")


def _gemm_kernel(device, dtype, ta, tb, M, N, K, split=False, epilogue=None, gather=None,
                 a_is_p=True, tf32=False, half=None, out_dtype=dtypes.float32, chunks=None):
    """(kernel, config) of one GEMM call; `gather` (from `_implicit_gather`) reads P, the A
    operand where `a_is_p`, else B, straight from the input; `tf32`: on tensor cores;
    `half` ("f16"/"bf16"): 16-bit operands on tensor cores, C stored as `out_dtype`;
    `chunks` (from `_staged_chunks`): a kernel copying P's tiles by cp.async (16-bit
    operands: dot_tensor_cores.half_kernel's, TF32: gemm_mma_staged.py's)."""
    from .. import gemm, gemm_tiers
    tname = "double" if dtype == dtypes.float64 else "float"
    if chunks is not None and half:       # (gemm_wgmma.py's kernel where the device has it)
        from .. import dot_tensor_cores as dtc
        cfg = dtc.half_config(device, half, M, N, ta, tb)
        k, cfg = dtc.half_kernel(device, cfg, ta, tb, half, _MMA_OUT[out_dtype], epilogue,
                                 gather_a=chunks, M=M, N=N)
        if k is None:
            raise kernels.KernelBuildError(device, "", f"the {half} tensor-core GEMM of a "
                                           "convolution failed to build")
        return k, cfg
    if chunks is not None:
        from .. import gemm_mma_staged as staged
        cfg = staged.choose_config("tf32", M, N, device.target.local_mem_limit, ta, tb)
        src = staged.staged_source(cfg, ta, tb, "tf32", _MMA_OUT[out_dtype], epilogue,
                                   gather_a=chunks)
        k = kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
        k._netcl_source = src
        return k, cfg
    if tf32 or half:
        from .. import gemm_mma
        cfg = gemm_mma.choose_mma_config(M, N, half or "tf32", long_k=split,
                                         local_mem=device.target.local_mem_limit)
        gsrc = gather(cfg.vec, "netcl_gather_a" if a_is_p else "netcl_gather_b", cfg.bk) \
            if gather is not None else None
        src = gemm_mma.mma_source(cfg, ta, tb, epilogue, gsrc if a_is_p else None,
                                  None if a_is_p else gsrc, operands=half or "tf32",
                                  out=_MMA_OUT[out_dtype])
        try:
            k = kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
            k._netcl_source = src
            return k, cfg
        except kernels.KernelBuildError as e:    # a driver without the PTX: float32 tiles
            if half:     # (16-bit operands have no float32 kernel; the caller falls back)
                raise
            import warnings
            warnings.warn(f"conv_general_dilated: the tensor-core GEMM failed to build on "
                          f"{device.name}; using float32 tiles ({str(e)[:300]})")
            device.target = dataclasses.replace(device.target, tensor_cores=False)
    cfg = (split and _split_config(device, tname, M, N)) or \
        gemm_tiers.choose_config(device.cl_device, tname, M, N, K,
                                 family=device.target.gemm_tiers)
    gather_a = gather_b = None
    if gather is not None:
        if cfg.kind != "tiled":      # a CPU forced to the implicit GEMM (tests): GPU tiles
            cl_dev = device.cl_device
            cfg = next((c for c in reversed(gemm_tiers.GPU_TIERS[tname]) if gemm_tiers._fits(
                c, tname, cl_dev.max_work_group_size, cl_dev.local_mem_size)), gemm_tiers.FALLBACK)
        if a_is_p:
            gather_a = gather(cfg.vec, "netcl_gather_a", cfg.bk)
        else:
            gather_b = gather(cfg.vec, "netcl_gather_b", cfg.bk)
    src = gemm.gemm_source(cfg, tname, ta, tb, epilogue, gather_a, gather_b)
    k = kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
    k._netcl_source = src     # for jit's lower().kernels
    return k, cfg


def make_conv_epilogue_launcher(device, lhs, rhs, params, conv_aval, extras, acc_index, body,
                                out_vars, out_avals):
    """A launcher ``(lhs, rhs, *extras) -> outputs`` for a convolution whose result feeds an
    elementwise group (a bias and activation, a relu mask), run in the epilogue of its one
    GEMM (dot_epilogue.build_epilogue: rows are the output's pixels, columns its features).
    None where the convolution runs otherwise: the direct kernel, feature groups, features
    not the output's last dimension, a split contraction, non-float dtypes."""
    from ..dot_epilogue import build_epilogue, epilogue_outputs
    from .conv_kernels import _ConvGeometry, _conv_source
    kd = lhs.dtype
    if device.is_numpy or kd not in (dtypes.float32, dtypes.float64, dtypes.float16,
                                     dtypes.bfloat16) or rhs.dtype != kd or \
            conv_aval.dtype != kd or (kd == dtypes.float64 and not device.capabilities.fp64):
        return None
    geo = _ConvGeometry(lhs, rhs, conv_aval, params)
    nd = len(conv_aval.shape)
    if geo.total == 0 or geo.out_spec[1] != nd - 1:
        return None
    plan = _plan_gemm(geo, kd, device)
    if plan is None or plan.inner != 1 or plan.GG != 1 or \
            (kd.itemsize == 2 and plan.half is None) or \
            _split_k(device, _gemm_dtype(kd), plan.M, plan.Og, plan.Kg) > 1:
        return None
    epilogue = build_epilogue(device, kd, extras, acc_index, body, out_vars, out_avals,
                              tuple(range(nd - 1)), (nd - 1,))
    if epilogue is None:
        return None
    return _gemm_launcher(device, lhs, rhs, geo, plan, _conv_source(kd, kd), conv_aval, None,
                          (epilogue, epilogue_outputs(device, out_avals), len(extras)))


def _gemm_launcher(device, lhs, rhs, geo, plan, src, out_aval, new_out, epilogue=None):
    """The im2col + GEMM launcher for a conv planned by `_plan_gemm`; with `epilogue`
    (gemm.GemmEpilogue, new_outputs, number of extras; see make_conv_epilogue_launcher)
    one that takes the extras and returns the epilogue's outputs."""
    from ...core.pool import Storage
    in_dtype, out_dtype = lhs.dtype, out_aval.dtype
    gdt = _gemm_dtype(in_dtype)           # the accumulators' (and partial sums') dtype
    pdt = _p_dtype(plan, in_dtype)        # P's and the packed kernel's
    shape, weak = out_aval.shape, out_aval.weak_type
    queue, pool = device.queue, device.pool
    strides = contiguous_strides(shape)
    enqueue = commands.launch
    gather = _implicit_gather(device, in_dtype, geo, plan)
    tf32 = plan.half is None and _use_tf32(device, gdt, geo.precision)
    im2col = None if gather else _im2col_launcher(device, in_dtype, geo, plan, src)
    p_bytes = plan.p_elems * pdt.itemsize
    pack = None
    from ...core.codegen import make_elementwise_launcher
    from ..elementwise import convert_element_type_p, copy_p
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
        if in_dtype == pdt:
            copy_launch = make_elementwise_launcher(copy_p, device, [probe], {},
                                                    ShapedArray(vshape, in_dtype))
        else:
            copy_launch = make_elementwise_launcher(
                convert_element_type_p, device, [probe], dict(new_dtype=pdt, weak_type=False),
                ShapedArray(vshape, pdt))
        roff = rhs.offset

        def pack(w):
            return copy_launch(Array(device, w._buf, w._storage, vshape, in_dtype, vstrides,
                                     roff, False, probe._contig))
    from .. import gemm
    calls = []
    gemm_calls, parts = _gemm_calls(plan, geo, gdt, device, 0 if pack else rhs.offset)
    # tensor cores with 16-bit operands store the result's dtype themselves, unless K is split
    c_dtype = out_dtype if plan.half and not parts else gdt
    for call in gemm_calls:
        (ta, tb, batch, M, N, K, lda, ldb, ldc, bsa, bsb, bsc, oa, ob, oc, a_is_p,
         c_tmp) = call
        chunks = _staged_chunks(device, in_dtype, geo, plan, call, plan.half or "tf32") \
            if gather is not None and (tf32 or plan.half) else None
        kg, cfg = _gemm_kernel(device, gdt, ta, tb, M, N, K, split=c_tmp,
                               epilogue=epilogue[0] if epilogue else None, gather=gather,
                               a_is_p=a_is_p, tf32=tf32, half=plan.half,
                               out_dtype=gdt if c_tmp else c_dtype, chunks=chunks)
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
    if out_dtype != c_dtype:
        # a 16-bit output the GEMM does not store: it writes float32, one kernel narrows
        wprobe = Array(device, None, None, shape, gdt, strides, 0, False, True)
        narrow = make_elementwise_launcher(convert_element_type_p, device, [wprobe],
                                           dict(new_dtype=out_dtype, weak_type=weak), out_aval)
        wide_bytes = prod(shape) * gdt.itemsize

    def make_p(x):
        """(buffer the GEMMs read P from, its storage): the input itself for the implicit
        GEMM, else a pooled buffer the im2col fills. The caller holds the storage until the
        GEMMs are enqueued; it then returns to the pool, and the in-order queue orders any
        later reuse after them."""
        if im2col is None:
            return x._buf, None
        pst = Storage(pool, p_bytes)
        im2col(pst.buf, x._buf)
        return pst.buf, pst

    if epilogue is not None:
        (kg, g, l_, a_is_p, _), = calls           # one GEMM (no groups, no split)
        new_outputs, first_out = epilogue[1], 15 + epilogue[2]

        def reusing(offers, x, w, *extras):
            outs = new_outputs(kg, first_out, offers)
            pbuf, pst = make_p(x)  # noqa: F841 (pst: held until enqueued)
            wb = pack(w)._buf if pack is not None else w._buf
            kg.set_arg(0, outs[0]._buf)      # C: unused by the epilogue, any buffer will do
            kg.set_arg(1, pbuf if a_is_p else wb)
            kg.set_arg(2, wb if a_is_p else pbuf)
            for j, e in enumerate(extras):
                kg.set_arg(15 + j, e._buf)
            enqueue(queue, kg, g, l_)
            return tuple(outs)

        def launch_epilogue(*args):
            return reusing((), *args)
        before = ((im2col.kernel,) if im2col is not None else ()) + \
            (copy_launch.kernels if pack is not None else ())
        return Launch(launch_epilogue, reusing,
                      before + (kernels.described(kg),))

    def launch_gemm(x, w):
        if narrow is None:
            out = new_out()
        else:
            wst = Storage(pool, wide_bytes)
            out = Array(device, wst.buf, wst, shape, gdt, strides, 0, False, True)
        tmp = Storage(pool, tmp_bytes) if ksum is not None else None
        pbuf, pst = make_p(x)  # noqa: F841 (pst: held until enqueued)
        wb = pack(w)._buf if pack is not None else w._buf
        for kg, g, l_, a_is_p, c_tmp in calls:
            kg.set_arg(0, tmp.buf if c_tmp else out._buf)
            kg.set_arg(1, pbuf if a_is_p else wb)
            kg.set_arg(2, wb if a_is_p else pbuf)
            enqueue(queue, kg, g, l_)
        if ksum is not None:
            ksum.set_arg(0, out._buf)
            ksum.set_arg(1, tmp.buf)
            enqueue(queue, ksum, sum_g, sum_l)
        if narrow is not None:
            return narrow(out)
        return out        # pst returns to the pool; the in-order queue orders later reuse
    return launch_gemm
