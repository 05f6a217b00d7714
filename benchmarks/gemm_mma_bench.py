"""Time tensor-core (TF32 mma.sync) GEMM configurations of netcl.primitives.gemm_mma on W5's
convolution shapes, with P stored (no gather): device time per product, TFLOP/s.

    python benchmarks/gemm_mma_bench.py         # on the default OpenCL device (NVIDIA sm_80+)

H100 (this session): 262144x64x288 0.18 ms (53 TFLOP/s) for every 128x64 layout tried;
65536x128x576 0.126 ms (76); 262144x32x576 0.275 ms (35): the warp layout barely matters,
the products with few columns stream A at about 2 TB/s.
"""
import os
import sys
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from netcl.primitives import gemm as G  # noqa: E402
from netcl.primitives import gemm_mma as MM  # noqa: E402

C = MM.MmaConfig
CASES = [  # (M, N, K, configs): W5's products at batch 256
    (262144, 64, 288, [C(4, 2, 2, 4), C(2, 2, 4, 4), C(4, 2, 4, 4), C(2, 2, 4, 4, bk=16),
                       C(4, 1, 2, 8), C(2, 1, 4, 8)]),
    (262144, 32, 576, [C(4, 1, 2, 4), C(2, 1, 4, 4), C(4, 1, 4, 4), C(8, 1, 2, 4),
                       C(2, 1, 4, 4, bk=16), C(4, 1, 4, 4, bk=16)]),
    (65536, 128, 576, [C(4, 2, 2, 8), C(2, 2, 4, 8), C(2, 4, 4, 4)]),
    (65536, 64, 1152, [C(4, 2, 2, 4), C(2, 2, 4, 4), C(4, 2, 4, 4)]),
]


def bench(ctx, queue, cfg, M, N, K, runs=20):
    """Mean device time of one M x N x K product (A, B uninitialised: timing only)."""
    k = cl.Kernel(cl.Program(ctx, MM.mma_source(cfg, False, False)).build(), "netcl_gemm")
    mf = cl.mem_flags.READ_WRITE
    a, b, c = (cl.Buffer(ctx, mf, 4 * n) for n in (M * K, K * N, M * N))
    k.set_args(c, a, b, *[np.int32(v) for v in (M, N, K, K, N, N, 0, 0, 0, 0, 0, 0)])
    g, l_ = G.launch_dims(cfg, 1, M, N)
    for _ in range(3):
        cl.enqueue_nd_range_kernel(queue, k, g, l_)
    queue.finish()
    t = time.perf_counter()
    for _ in range(runs):
        cl.enqueue_nd_range_kernel(queue, k, g, l_)
    queue.finish()
    return (time.perf_counter() - t) / runs


def main():
    dev = cl.get_platforms()[0].get_devices()[0]
    if not MM.supports_mma(dev):
        sys.exit(f"{dev.name}: no TF32 mma.sync (needs an NVIDIA GPU of sm_80 or newer)")
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    for M, N, K, cfgs in CASES:
        for cfg in cfgs:
            dt = bench(ctx, queue, cfg, M, N, K)
            print(f"{cfg.warps_m}x{cfg.warps_n} warps, mi {cfg.mi} nj {cfg.nj} bk {cfg.bk} "
                  f"({cfg.bm}x{cfg.bn}) {M}x{N}x{K}: {dt * 1e3:.3f} ms "
                  f"{2 * M * N * K / dt / 1e12:.1f} TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
