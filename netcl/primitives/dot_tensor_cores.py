"""dot_general on tensor cores (devices whose Target has ``tensor_cores``): the kernel of a
float32 product in TF32, and the launcher of a product of float16 or bfloat16 operands,
which reads the operands' 16-bit storage as it is and writes the half or float32 result
itself (both gemm_mma_staged.py; a TF32 product with a statement epilogue, jit's fused
groups, takes gemm_mma.py's kernel). matmul_precision.gemm_arithmetic decides which
products come here; linalg.py falls back to its float32 kernels where a kernel fails to
build."""
import warnings

import numpy as np
import pyopencl as cl

from ..core import dtypes, kernels
from ..core.array import Array
from ..core.launch import Launch
from ..core.shapes import contiguous_strides
from . import gemm, gemm_mma, gemm_mma_staged as staged, split_k

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
    finishes, as linalg._gemm_setup returns them, its size arguments set: gemm_mma.py's
    kernel, which takes epilogues, with 16-bit operands. None where a product of so few
    output tiles would split K (split_k.py: the product and its group then run apart) or
    the kernel does not build."""
    cfg = gemm_mma.choose_mma_config(M, N, arith,
                                     min_blocks=device.capabilities.compute_units)
    if split_k.gpu_parts(device, -(-M // cfg.bm) * -(-N // cfg.bn), K) > 1:
        return None
    k = _build(device, gemm_mma.mma_source(cfg, pa.trans, pb.trans, epilogue, operands=arith),
               arith)
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
    limit = device.target.local_mem_limit

    def config(batch, strides=None):
        async_copy = operands_aligned(arith, pa, pb, batch, strides)
        return staged.choose_config(arith, M, N, limit, pa.trans, pb.trans, async_copy), \
            async_copy
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
    src = staged.staged_source(cfg, pa.trans, pb.trans, arith,
                               "float" if parts > 1 else out, async_copy=async_copy)
    k = _build(device, src, arith)
    if k is None:
        return None
    gsize, lsize = gemm.launch_dims(cfg, parts if parts > 1 else B, M, N)
    for i, v in enumerate(sizes):
        k.set_arg(3 + i, np.int32(v))
    shape, out_dtype, weak = out_aval.shape, out_aval.dtype, out_aval.weak_type
    out_strides = contiguous_strides(shape)
    nbytes = B * M * N * out_dtype.itemsize
    queue, pool, enqueue, set_arg = device.queue, device.pool, cl.enqueue_nd_range_kernel, k.set_arg
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
