"""dot_general on tensor cores (devices whose Target has ``tensor_cores``): the kernel of a
float32 product in TF32, and the launcher of a product of float16 or bfloat16 operands,
which reads the operands' 16-bit storage as it is and writes the half or float32 result
itself (gemm_mma_staged.py; 16-bit products whose tiles arrive by cp.async take
gemm_wgmma.py's kernel on devices whose Target has ``wgmma``, `half_config`; a TF32 product
with a statement epilogue, jit's fused groups, takes gemm_mma.py's kernel). matmul_precision.gemm_arithmetic decides which
products come here; linalg.py falls back to its float32 kernels where a kernel fails to
build."""
import dataclasses
import warnings

import numpy as np
import pyopencl as cl

from ..core import commands, dtypes, kernels
from ..core.array import Array
from ..core.launch import Launch
from ..core.shapes import contiguous_strides
from . import gemm, gemm_mma, gemm_mma_staged as staged, gemm_wgmma, split_k

_failed = set()    # (device, source) pairs whose build failed


def _build(device, src, what):
    """The kernel `netcl_gemm` of `src`, or None (warned once) where it fails to build."""
    key = (device.cl_device.int_ptr, src)
    if key in _failed:
        return None
    try:
        return kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
    except kernels.KernelBuildError as e:
        _failed.add(key)
        lines = str(e).splitlines()
        warnings.warn(f"netcl: the {what} tensor-core GEMM failed to build on {device.name} "
                      f"({lines[1] if len(lines) > 1 else e}); using the float32 kernels",
                      RuntimeWarning, stacklevel=7)
        return None


def half_config(device, operands, M, N, ta, tb, async_copy=True):
    """The tiles of a product of 16-bit `operands` ("f16", "bf16") on tensor cores:
    gemm_wgmma.py's where the device has wgmma and the tiles arrive by cp.async (operands
    `staged.aligned`), else gemm_mma_staged.py's."""
    limit = device.target.local_mem_limit
    if async_copy and device.target.wgmma:
        cfg = gemm_wgmma.choose_config(M, N, limit, device.capabilities.compute_units)
        if cfg is not None:
            return cfg
    return staged.choose_config(operands, M, N, limit, ta, tb, async_copy)


def half_kernel(device, cfg, ta, tb, operands, out, epilogue=None, async_copy=True,
                gather_a=None, M=0, N=0):
    """(kernel, config) of a 16-bit product on tensor cores with the tiles `cfg` (from
    `half_config`; `M`, `N` choose again where it changes), kernel None where it does not
    build. Where gemm_wgmma.py's kernel fails to build (a driver that takes no PTX as a
    program binary), the device's Target loses ``wgmma`` (warned once) and
    gemm_mma_staged.py's kernel runs instead."""
    if isinstance(cfg, gemm_wgmma.WgmmaConfig):
        src = gemm_wgmma.wgmma_source(cfg, ta, tb, operands, out, epilogue, gather_a)
        try:
            k = kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
            k._netcl_source = src
            return k, cfg
        except (kernels.KernelBuildError, cl.Error) as e:
            warnings.warn(f"netcl: the wgmma GEMM failed to build on {device.name} "
                          f"({str(e).splitlines()[0][:300]}); using mma.sync", RuntimeWarning,
                          stacklevel=3)
            device.target = dataclasses.replace(device.target, wgmma=False)
            cfg = half_config(device, operands, M, N, ta, tb, async_copy)
    src = staged.staged_source(cfg, ta, tb, operands, out, epilogue, async_copy, gather_a)
    return _build(device, src, operands), cfg


def tf32_kernel(device, trans_a, trans_b, B, M, N, epilogue=None, aligned=False):
    """(kernel, global size, local size, None) of a float32 product on TF32 tensor cores,
    as linalg._gemm_kernel returns them, or None where the kernel does not build.
    `aligned`: the operands' rows and bases lie on 16 bytes (staged.aligned)."""
    if epilogue is None or isinstance(epilogue, str):
        cfg = staged.choose_config("tf32", M, N, device.target.local_mem_limit, trans_a,
                                   trans_b, aligned)
        src = staged.staged_source(cfg, trans_a, trans_b, "tf32", "float", epilogue, aligned)
    else:
        cfg = gemm_mma.choose_mma_config(M, N)
        src = gemm_mma.mma_source(cfg, trans_a, trans_b, epilogue)
    k = _build(device, src, "TF32")
    if k is None:
        return None
    g, l_ = gemm.launch_dims(cfg, B, M, N)
    return k, g, l_, None


def half_epilogue_kernel(device, pa, pb, M, N, K, epilogue, arith):
    """(kernel, global size, local size, None) of a product of 16-bit operands (`arith`
    "f16" or "bf16") on tensor cores whose result a statement epilogue (gemm.GemmEpilogue)
    finishes, as linalg._gemm_setup returns them, its size arguments set: gemm_wgmma.py's
    kernel where `half_config` gives it and the operands suit cp.async, else gemm_mma.py's
    (register-staged, any layout), both taking epilogues. None where a product of so few
    output tiles would split K (split_k.py: the product and its group then run apart) or
    the kernel does not build."""
    cus = device.capabilities.compute_units
    cfg = gemm_wgmma.choose_config(M, N, device.target.local_mem_limit, cus) \
        if device.target.wgmma and operands_aligned(arith, pa, pb, 1) else None
    if cfg is None:
        cfg = gemm_mma.choose_mma_config(M, N, arith, min_blocks=cus)
    if split_k.gpu_parts(device, -(-M // cfg.bm) * -(-N // cfg.bn), K) > 1:
        return None
    if isinstance(cfg, gemm_wgmma.WgmmaConfig):
        k, cfg = half_kernel(device, cfg, pa.trans, pb.trans, arith, "float", epilogue, M=M, N=N)
    else:
        k = _build(device, gemm_mma.mma_source(cfg, pa.trans, pb.trans, epilogue,
                                               operands=arith), arith)
    if k is None:
        return None
    for i, v in enumerate((M, N, K, pa.ld, pb.ld, N, pa.bstride, pb.bstride, M * N, pa.offset,
                           pb.offset, 0)):
        k.set_arg(3 + i, np.int32(v))
    g, l_ = gemm.launch_dims(cfg, 1, M, N)
    return k, g, l_, None


def operands_aligned(operands, pa, pb, B, bstrides=None):
    """Whether both prepared operands (linalg._Prep) suit cp.async (staged.aligned);
    `bstrides`: their batch strides where not their own (split-K chunks)."""
    sa, sb = bstrides or (pa.bstride, pb.bstride)
    return staged.aligned(operands, pa.ld, pa.offset, sa if B > 1 else 0) and \
        staged.aligned(operands, pb.ld, pb.offset, sb if B > 1 else 0)


_OUT = {dtypes.float32: "float", dtypes.float16: "half"}


def _out_name(dtype):
    bf16 = getattr(dtypes, "bfloat16", None)
    return "bfloat16" if bf16 is not None and dtype == bf16 else _OUT.get(dtype)


def half_run(device, lhs, rhs, lhs_dims, rhs_dims, B, M, N, K, out_aval, arith):
    """run(a, b) for a product of 16-bit float operands on half-precision tensor cores
    (`arith` "f16" or "bf16"), its result of `out_aval` (the operands' dtype or float32)
    written by the kernel (or, with few output tiles and a long K, by the sum of K chunks'
    float32 products: split_k.py); None where the kernel does not build (the caller converts the
    operands to float32). `lhs_dims` = (batch, free, contracting) dimensions of lhs,
    `rhs_dims` = (batch, contracting, free) of rhs."""
    from ..core.pool import Storage
    from .linalg import _check_index_limit, _Prep, _preparer, launched_kernels
    out = _out_name(out_aval.dtype)
    if out is None:
        return None
    pa = _Prep(lhs, *lhs_dims, lhs.dtype)       # as they are, or copied dense (same dtype)
    pb = _Prep(rhs, *rhs_dims, rhs.dtype)
    _check_index_limit(lhs, rhs, pa, pb, B, M, N, K)

    def config(batch, strides=None):
        async_copy = operands_aligned(arith, pa, pb, batch, strides)
        return half_config(device, arith, M, N, pa.trans, pb.trans, async_copy), async_copy
    cfg, async_copy = config(B)
    # few output tiles and a long K (a classifier's product): K in chunks, as float32 parts
    parts = split_k.gpu_parts(device, -(-M // cfg.bm) * -(-N // cfg.bn), K) if B == 1 else 1
    sizes = (M, N, K, pa.ld, pb.ld, N, pa.bstride, pb.bstride, M * N, pa.offset, pb.offset, 0)
    if parts > 1:
        _check_index_limit(lhs, rhs, pa, pb, 1, M, N, K, parts)
        kc = K // parts
        sa, sb = split_k.chunk_strides(pa.trans, pa.ld, pb.trans, pb.ld, kc)
        cfg, async_copy = config(parts, (sa, sb))
        sizes = (M, N, kc, pa.ld, pb.ld, N, sa, sb, M * N, pa.offset, pb.offset, 0)
    k, cfg = half_kernel(device, cfg, pa.trans, pb.trans, arith, "float" if parts > 1 else out,
                         async_copy=async_copy, M=M, N=N)
    if k is None:
        return None
    gsize, lsize = gemm.launch_dims(cfg, parts if parts > 1 else B, M, N)
    for i, v in enumerate(sizes):
        k.set_arg(3 + i, np.int32(v))
    shape, out_dtype, weak = out_aval.shape, out_aval.dtype, out_aval.weak_type
    out_strides = contiguous_strides(shape)
    nbytes = B * M * N * out_dtype.itemsize
    queue, pool, enqueue, set_arg = device.queue, device.pool, commands.launch, k.set_arg
    prep = _preparer(pa, pb)
    ksum = None
    if parts > 1:
        ksum = split_k.sum_kernel(device, dtypes.float32, out_dtype)
        split_k.set_sum_args(ksum, M * N, parts)
        sum_g, sum_l = kernels.grid_1d(device, M * N)
        tmp_bytes = parts * M * N * 4

    def run(a, b):
        if prep is not None:
            a, b = prep(a, b)
        tmp = Storage(pool, tmp_bytes) if ksum is not None else None
        st = Storage(pool, nbytes)
        res = Array(device, st.buf, st, shape, out_dtype, out_strides, 0, weak, True)
        set_arg(0, res._buf if tmp is None else tmp.buf)
        set_arg(1, a._buf)
        set_arg(2, b._buf)
        enqueue(queue, k, gsize, lsize)
        if ksum is not None:
            ksum.set_arg(0, res._buf)
            ksum.set_arg(1, tmp.buf)
            enqueue(queue, ksum, sum_g, sum_l)
        return res      # tmp returns to the pool; the in-order queue orders its reuse
    return Launch(run, kernels=launched_kernels(k, None, prep, (ksum,) if ksum else ()))


def tf32_run(device, lhs, rhs, lhs_dims, rhs_dims, B, M, N, K, out_aval):
    """run(a, b) for a float32 product at TF32 on Hopper's warpgroup instructions
    (gemm_wgmma.py), or None where the device has none or the product is too small for
    their blocks. wgmma takes only K-major TF32 operands and ignores their low bits, so
    each operand is first written K-major and rounded to TF32 (gemm_wgmma.TF32_PACK_SOURCE:
    one pass over A and over B, about a tenth of an 8192-square product's time), then
    multiplied. `lhs_dims` = (batch, free, contracting) dimensions of lhs, `rhs_dims` =
    (batch, contracting, free) of rhs."""
    from ..core.pool import Storage
    from .linalg import _INT_MAX, _index_extent, _Prep, _preparer
    if not device.target.wgmma or out_aval.dtype != dtypes.float32:
        return None
    cfg = gemm_wgmma.choose_config(M, N, device.target.local_mem_limit,
                                   device.capabilities.compute_units)
    if cfg is None:
        return None
    src = gemm_wgmma.wgmma_source(cfg, False, True, "tf32", "float")
    try:
        k = kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
    except (kernels.KernelBuildError, cl.Error) as e:
        warnings.warn(f"netcl: the wgmma GEMM failed to build on {device.name} "
                      f"({str(e).splitlines()[0][:300]}); using mma.sync", RuntimeWarning,
                      stacklevel=7)
        device.target = dataclasses.replace(device.target, wgmma=False)
        return None
    lb, lf, lc = lhs_dims
    rb, rc, rf = rhs_dims
    pa = _Prep(lhs, lb, lf, lc, dtypes.float32)        # A as (batch, M, K)
    pb = _Prep(rhs, rb, rf, rc, dtypes.float32)        # B as (batch, N, K): B^T
    if max(B * M * N, B * max(M, N) * K, _index_extent(pa, M, K, B),
           _index_extent(pb, N, K, B)) > _INT_MAX:
        return None          # (the other kernels say why, or run it)
    packs = []
    for p, R in ((pa, M), (pb, N)):
        name, g, l_ = gemm_wgmma.tf32_pack_dims(p.trans, B, R, K)
        kp = kernels.kernel(device, gemm_wgmma.TF32_PACK_SOURCE, name)
        for i, v in enumerate((R, K, p.ld, p.bstride if B > 1 else 0, p.offset)):
            kp.set_arg(2 + i, np.int32(v))
        packs.append((kp, g, l_, B * R * K * 4))
    for i, v in enumerate((M, N, K, K, K, N, M * K, N * K, M * N, 0, 0, 0)):
        k.set_arg(3 + i, np.int32(v))
    gsize, lsize = gemm.launch_dims(cfg, B, M, N)
    shape = out_aval.shape
    out_strides, weak = contiguous_strides(shape), out_aval.weak_type
    queue, pool, enqueue = device.queue, device.pool, commands.launch
    prep = _preparer(pa, pb)
    (ka, ga, la, na), (kb, gb, lb_, nb) = packs

    def run(a, b):
        if prep is not None:
            a, b = prep(a, b)
        ta, tb = Storage(pool, na), Storage(pool, nb)
        ka.set_arg(0, ta.buf)
        ka.set_arg(1, a._buf)
        enqueue(queue, ka, ga, la)
        kb.set_arg(0, tb.buf)
        kb.set_arg(1, b._buf)
        enqueue(queue, kb, gb, lb_)
        st = Storage(pool, B * M * N * 4)
        out = Array(device, st.buf, st, shape, dtypes.float32, out_strides, 0, weak, True)
        k.set_arg(0, out._buf)
        k.set_arg(1, ta.buf)
        k.set_arg(2, tb.buf)
        enqueue(queue, k, gsize, lsize)
        return out      # the packed operands return to the pool; the in-order queue orders reuse
    described = None if prep is not None else \
        tuple(kernels.described(m) for m in (ka, kb, k))
    return Launch(run, kernels=described)
