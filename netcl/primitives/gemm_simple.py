"""The simple tiled batched GEMM: integers (int32/uint32 accumulating in uint, int64/uint64
in ulong, so that products wrap as the type's arithmetic does), and the fallback where gemm.py's tuned kernel
fails to build. gemm.py's signature (``netcl_gemm``), one thread per element of C."""
from ..core import dtypes, kernels

_SIMPLE_SOURCE = """
#define TS {ts}
typedef {T} T;
typedef {ACC} ACC;
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void netcl_gemm(__global T* C, __global const T* A, __global const T* B,
    int M, int N, int K, int lda, int ldb, int ldc,
    int batch_stride_a, int batch_stride_b, int batch_stride_c,
    int off_a, int off_b, int off_c) {{
  __local ACC As[TS][TS + 1];
  __local ACC Bs[TS][TS + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int n = get_global_id(0), m = get_global_id(1), b = get_global_id(2);
  A += off_a + (long)b * batch_stride_a;
  B += off_b + (long)b * batch_stride_b;
  C += off_c + (long)b * batch_stride_c;
  ACC acc = (ACC)0;
  for (int k0 = 0; k0 < K; k0 += TS) {{
    const int ka = k0 + tx, kb = k0 + ty;
    As[ty][tx] = (m < M && ka < K) ? (ACC)A[{a_index}] : (ACC)0;
    Bs[ty][tx] = (n < N && kb < K) ? (ACC)B[{b_index}] : (ACC)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TS; ++kk) acc += As[ty][kk] * Bs[kk][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (m < M && n < N) C[(long)m * ldc + n] = (T)acc;
}}
"""

_SIMPLE_CTYPES = {dtypes.float32: ("float", "float"), dtypes.float64: ("double", "double"),
                  dtypes.int32: ("int", "uint"), dtypes.uint32: ("uint", "uint"),
                  dtypes.int64: ("long", "ulong"), dtypes.uint64: ("ulong", "ulong")}


def _simple_tile(device):
    mwg = device.capabilities.max_work_group_size
    return 16 if mwg >= 256 else 8 if mwg >= 64 else 4 if mwg >= 16 else 1


def simple_source(dtype, trans_a, trans_b, tile=16):
    """OpenCL C of the simple tiled batched GEMM (signature of gemm.py's netcl_gemm)."""
    t, acc = _SIMPLE_CTYPES[dtype]
    a_index = "(long)ka * lda + m" if trans_a else "(long)m * lda + ka"
    b_index = "(long)n * ldb + kb" if trans_b else "(long)kb * ldb + n"
    return _SIMPLE_SOURCE.format(ts=tile, T=t, ACC=acc, a_index=a_index, b_index=b_index)


def _simple_dims(tile, batch, M, N):
    up = kernels.round_up
    return (up(N, tile), up(M, tile), batch), (tile, tile, 1)
