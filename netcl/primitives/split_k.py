"""Split-K for GEMMs with few output tiles and a long contraction.

A product like a classifier's (256 x 8192) @ (8192 x 10) has 16 output tiles: on a GPU, 16
work-groups each walk K = 8192 while the other compute units idle.
Splitting K into equal chunks runs them as one batched GEMM into a [parts][M][N]
temporary, and one small kernel adds the parts in a fixed order (deterministic results).
dot_general uses it on GPUs; the convolutions' kernel gradients (conv_gemm.py) share the
choice of the part count.
"""
import numpy as np

from ..core import dtypes, kernels

_SUM_SOURCE = """
__kernel void netcl_splitk_sum(__global {S}* out, __global const {T}* t, const int n,
                               const int parts) {{
  const int i = get_global_id(0);
  if (i >= n) return;
  {T} acc = t[i];
  for (int p = 1; p < parts; ++p) acc += t[(long)p * n + i];
  {store}
}}
"""


def even_parts(K, parts, align=16):
    """The part count nearest `parts` (between half and twice it) that splits K into equal
    chunks of a multiple of `align`; `parts` itself when none does (a shorter last chunk)."""
    for p in sorted(range(max(2, parts // 2), 2 * parts + 1), key=lambda p: abs(p - parts)):
        if K % (align * p) == 0:
            return p
    return parts


def gpu_parts(device, tiles, K, min_chunk=512):
    """How many equal K chunks a GPU product with `tiles` output tiles should run as (1: no
    split): enough work-groups for a few per compute unit, chunks of at least min_chunk."""
    groups = 4 * device.capabilities.compute_units
    if not device.target.split_k or tiles * 2 >= groups or K < 8 * min_chunk:
        return 1
    parts = even_parts(K, max(2, min(-(-groups // tiles), K // min_chunk, 64)))
    return parts if K % parts == 0 else 1


def sum_kernel(device, dtype, out_dtype=None):
    """A fresh kernel adding `parts` partial results of `dtype` into an `out_dtype` result
    (default the same; a 16-bit float rounds the sum once): (out, t, n, parts)."""
    from ..core.kernels import compute_ctype, storage_ctype, store
    out_dtype = out_dtype or dtype
    src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if dtype == dtypes.float64
           else "") + _SUM_SOURCE.format(T=compute_ctype(dtype), S=storage_ctype(out_dtype),
                                         store=store(out_dtype, "out", "i", "acc"))
    return kernels.kernel(device, src, "netcl_splitk_sum")


def chunk_strides(trans_a, lda, trans_b, ldb, kc):
    """Element strides between consecutive K chunks of A (M x K) and B (K x N)."""
    return (kc * lda if trans_a else kc), (kc if trans_b else kc * ldb)


def set_sum_args(k, n, parts):
    k.set_arg(2, np.int32(n))
    k.set_arg(3, np.int32(parts))
