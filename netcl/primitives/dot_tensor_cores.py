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
from . import gemm, gemm_mma, gemm_mma_staged as staged

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
    written by the kernel; None where the kernel does not build (the caller converts the
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
    async_copy = operands_aligned(arith, pa, pb, B)
    cfg = staged.choose_config(arith, M, N, device.target.local_mem_limit, pa.trans, pb.trans,
                               async_copy)
    src = staged.staged_source(cfg, pa.trans, pb.trans, arith, out, async_copy=async_copy)
    k = _build(device, src, arith)
    if k is None:
        return None
    gsize, lsize = gemm.launch_dims(cfg, B, M, N)
    for i, v in enumerate((M, N, K, pa.ld, pb.ld, N, pa.bstride, pb.bstride, M * N, pa.offset,
                           pb.offset, 0)):
        k.set_arg(3 + i, np.int32(v))
    shape, out_dtype, weak = out_aval.shape, out_aval.dtype, out_aval.weak_type
    out_strides = contiguous_strides(shape)
    nbytes = B * M * N * out_dtype.itemsize
    queue, pool, enqueue, set_arg = device.queue, device.pool, cl.enqueue_nd_range_kernel, k.set_arg
    prep = _preparer(pa, pb)

    def run(a, b):
        if prep is not None:
            a, b = prep(a, b)
        st = Storage(pool, nbytes)
        res = Array(device, st.buf, st, shape, out_dtype, out_strides, 0, weak, True)
        set_arg(0, res._buf)
        set_arg(1, a._buf)
        set_arg(2, b._buf)
        enqueue(queue, k, gsize, lsize)
        return res
    return Launch(run, kernels=launched_kernels(k, None, prep))
