"""Time tensor-core (TF32 mma.sync) GEMM configurations of netcl.primitives.gemm_mma on W5's
convolution shapes, with P stored (no gather): device time per product, TFLOP/s; with
`--half`, configurations of gemm_mma_staged.py's kernel (16-bit or TF32 operands) on a
square product; with `--tf32-square`, gemm_mma.py's TF32 tiers on a square product; with
`--wgmma`, gemm_wgmma.py's configurations (Hopper) beside the staged kernel's first tier and,
where PyTorch is installed, cuBLAS, in the same run.

    python benchmarks/gemm_mma_bench.py         # on the default OpenCL device (NVIDIA sm_80+)
    python benchmarks/gemm_mma_bench.py --half 8192 [--operands bf16|tf32] [--trans NT]
    python benchmarks/gemm_mma_bench.py --tf32-square 8192     # gemm_mma.py's TF32 kernel
    python benchmarks/gemm_mma_bench.py --wgmma 8192 [--operands bf16] [--trans NN]

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
from netcl.primitives import gemm_mma_staged as MH  # noqa: E402
from netcl.primitives import gemm_wgmma as WG  # noqa: E402
from netcl.core import kernels as KN  # noqa: E402

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
    return _time(queue, k, g, l_, runs)


H = MH.StagedConfig
# staged-kernel candidates: (warps_m, warps_n, mi, nj) blocks, K steps, stages, fragment loads
HALF_CANDIDATES = [
    H(2, 2, 4, 8, bk=64, stages=3), H(2, 2, 4, 8, bk=64, stages=3, group_m=8),
    H(2, 2, 4, 8, bk=64, stages=3, group_m=16), H(2, 4, 4, 8, bk=64, stages=3, group_m=8),
    H(2, 2, 4, 8, bk=32, stages=4, group_m=8),
]


def sweep_candidates(operands="bf16", local_limit=227 * 1024):
    """A wider grid of staged configurations than HALF_CANDIDATES (`--sweep`): 4 or 8 warps
    of 64x64, K steps of 32 and 64 (16-bit) with 2-5 stages, bands of 8 block rows; those
    whose local tiles fit `local_limit` bytes (an sm_90 block's shared memory)."""
    bks = (16, 32) if operands == "tf32" else (32, 64)
    out = []
    for wm, wn in ((2, 2), (2, 4), (4, 2)):
        for bk in bks:
            for stages in (2, 3, 4, 5):
                cfg = H(wm, wn, 4, 8, bk=bk, stages=stages, group_m=8)
                if cfg.local_mem_bytes(operands=operands) <= local_limit:
                    out.append(cfg)
    return out


TF32_CANDIDATES = [
    H(2, 2, 4, 8, bk=32, stages=3), H(2, 2, 4, 8, bk=32, stages=3, group_m=8),
    H(2, 2, 4, 8, bk=16, stages=4, group_m=8), H(2, 4, 4, 8, bk=32, stages=3, group_m=8),
    H(2, 2, 4, 8, bk=32, stages=3, ldmatrix=False, group_m=8),
]
# measured on an H200 (float32 C, 8192^3 NN): f16 with register staging at 123 TFLOP/s where
# cp.async gave 360; without ldmatrix 290; bk 64 with 4 stages 292, bk 128 with 2 stages 234;
# group_m 8 376. TF32 (bk 32, 3 stages) 147 with cvt.rna, 116 rounding in integer arithmetic.


def _time(queue, k, g, l_, runs):
    for _ in range(2):
        cl.enqueue_nd_range_kernel(queue, k, g, l_)
    queue.finish()
    t = time.perf_counter()
    for _ in range(runs):
        cl.enqueue_nd_range_kernel(queue, k, g, l_)
    queue.finish()
    return (time.perf_counter() - t) / runs


def bench_half(ctx, queue, n, operands="f16", trans="NN", runs=10, cfgs=None, regs=False):
    """Mean device time of an n x n x n product of each staged configuration (float32 C),
    with cp.async or (`regs`) register staging."""
    ta, tb = trans[0] == "T", trans[1] == "T"
    mf = cl.mem_flags.READ_WRITE
    es = MH.OPERANDS[operands][1]
    a, b = (cl.Buffer(ctx, mf, es * n * n) for _ in range(2))
    c = cl.Buffer(ctx, mf, 4 * n * n)
    out = []
    cfgs = cfgs or (TF32_CANDIDATES if operands == "tf32" else HALF_CANDIDATES)
    for cfg in cfgs:
        for async_copy in ((False,) if regs else (True,)):
            try:
                src = MH.staged_source(cfg, ta, tb, operands, "float", async_copy=async_copy)
                k = cl.Kernel(cl.Program(ctx, src).build(), "netcl_gemm")
            except Exception as e:     # too much local memory for this device, say
                print(f"{cfg}: does not build ({str(e).splitlines()[0][:120]})", flush=True)
                continue
            k.set_args(c, a, b, *[np.int32(v) for v in (n, n, n, n, n, n, 0, 0, 0, 0, 0, 0)])
            g, l_ = G.launch_dims(cfg, 1, n, n)
            dt = _time(queue, k, g, l_, runs)
            tf = 2 * n ** 3 / dt / 1e12
            out.append((tf, cfg, async_copy))
            print(f"half {operands} {trans} {cfg.warps_m}x{cfg.warps_n} warps mi {cfg.mi} nj "
                  f"{cfg.nj} ({cfg.bm}x{cfg.bn}) bk {cfg.bk} stages {cfg.stages} group_m "
                  f"{cfg.group_m} ldmatrix "
                  f"{cfg.ldmatrix} {'cp.async' if async_copy else 'registers'} "
                  f"local {cfg.local_mem_bytes(ta, tb, async_copy, operands)} B: "
                  f"{dt * 1e3:.3f} ms "
                  f"{tf:.1f} TFLOP/s", flush=True)
    return sorted(out, key=lambda r: -r[0])


WGMMA_CANDIDATES = WG.TIERS + [
    WG.WgmmaConfig(wgs=2, mt=1, bn=256, n_inst=256, stages=4, inflight=0),
    WG.WgmmaConfig(wgs=2, mt=1, bn=256, n_inst=256, stages=3),
    WG.WgmmaConfig(wgs=2, mt=1, bn=256, n_inst=128, stages=4),
    WG.WgmmaConfig(wgs=2, mt=2, bn=128, n_inst=128, stages=4),
    WG.WgmmaConfig(wgs=2, mt=1, bn=256, n_inst=256, stages=4, group_m=16),
]


def bench_wgmma(ctx, queue, n, operands="bf16", trans="NN", runs=10):
    """TFLOP/s of an n^3 product (16-bit C) of each WGMMA_CANDIDATES configuration, of the
    staged kernel's first tier and of torch.matmul (cuBLAS) on the same GPU, in turn."""
    ta, tb = trans[0] == "T", trans[1] == "T"
    out = "bfloat16" if operands == "bf16" else "half"
    mf = cl.mem_flags.READ_WRITE
    a, b, c = (cl.Buffer(ctx, mf, 2 * n * n) for _ in range(3))
    dev = ctx.devices[0]
    rows = []
    for cfg in WGMMA_CANDIDATES + [MH.HALF_TIERS[0]]:
        src = (WG.wgmma_source(cfg, ta, tb, operands, out) if isinstance(cfg, WG.WgmmaConfig)
               else MH.staged_source(cfg, ta, tb, operands, out))
        k = cl.Kernel(KN.build_program(ctx, dev, src), "netcl_gemm")
        k.set_args(c, a, b, *[np.int32(v) for v in (n, n, n, n, n, n, 0, 0, 0, 0, 0, 0)])
        g, l_ = G.launch_dims(cfg, 1, n, n)
        tf = 2 * n ** 3 / _time(queue, k, g, l_, runs) / 1e12
        rows.append((tf, cfg))
        print(f"{operands} {trans} {cfg}: {tf:.1f} TFLOP/s", flush=True)
    try:
        import torch
    except ImportError:
        return rows
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[operands]
    x, y = (torch.randn(n, n, device="cuda", dtype=dt) for _ in range(2))
    for _ in range(3):
        x @ y
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(runs):
        x @ y
    torch.cuda.synchronize()
    print(f"torch {torch.__version__} {operands}: "
          f"{2 * n ** 3 / ((time.perf_counter() - t) / runs) / 1e12:.1f} TFLOP/s", flush=True)
    return rows


def bench_tf32_square(ctx, queue, n, runs=5):
    mf = cl.mem_flags.READ_WRITE
    a, b, c = (cl.Buffer(ctx, mf, 4 * n * n) for _ in range(3))
    for cfg in MM.MMA_TIERS[:1] + [C(2, 2, 4, 8), C(2, 4, 4, 4), C(4, 2, 2, 8, bk=16)]:
        try:
            k = cl.Kernel(cl.Program(ctx, MM.mma_source(cfg, False, False)).build(), "netcl_gemm")
        except Exception as e:
            print(f"{cfg}: does not build ({str(e).splitlines()[0][:120]})", flush=True)
            continue
        k.set_args(c, a, b, *[np.int32(v) for v in (n, n, n, n, n, n, 0, 0, 0, 0, 0, 0)])
        g, l_ = G.launch_dims(cfg, 1, n, n)
        dt = _time(queue, k, g, l_, runs)
        print(f"tf32 {cfg.warps_m}x{cfg.warps_n} warps mi {cfg.mi} nj {cfg.nj} ({cfg.bm}x"
              f"{cfg.bn}) bk {cfg.bk}: {dt * 1e3:.3f} ms {2 * n ** 3 / dt / 1e12:.1f} TFLOP/s",
              flush=True)


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--half", type=int, default=0, help="time half configurations at n^3")
    ap.add_argument("--operands", default="f16", choices=list(MH.OPERANDS))
    ap.add_argument("--trans", default="NN")
    ap.add_argument("--sweep", action="store_true", help="with --half: time sweep_candidates()")
    ap.add_argument("--tf32-square", type=int, default=0)
    ap.add_argument("--wgmma", type=int, default=0, help="time gemm_wgmma.py at n^3")
    args = ap.parse_args()
    dev = cl.get_platforms()[0].get_devices()[0]
    if not MM.supports_mma(dev):
        sys.exit(f"{dev.name}: no TF32 mma.sync (needs an NVIDIA GPU of sm_80 or newer)")
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    print(f"{dev.name}: local memory {dev.local_mem_size} B")
    if args.half:
        cfgs = sweep_candidates(args.operands) if args.sweep else None
        best = bench_half(ctx, queue, args.half, args.operands, args.trans, cfgs=cfgs)
        print("fastest:", *(f"{tf:.1f} {cfg} async={a}" for tf, cfg, a in best[:3]), sep="\n  ")
    if args.tf32_square:
        bench_tf32_square(ctx, queue, args.tf32_square)
    if args.wgmma:
        bench_wgmma(ctx, queue, args.wgmma, args.operands, args.trans)
    if args.half or args.tf32_square or args.wgmma:
        return
    for M, N, K, cfgs in CASES:
        for cfg in cfgs:
            dt = bench(ctx, queue, cfg, M, N, K)
            print(f"{cfg.warps_m}x{cfg.warps_n} warps, mi {cfg.mi} nj {cfg.nj} bk {cfg.bk} "
                  f"({cfg.bm}x{cfg.bn}) {M}x{N}x{K}: {dt * 1e3:.3f} ms "
                  f"{2 * M * N * K / dt / 1e12:.1f} TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
