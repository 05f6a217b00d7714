"""The GEMM autotuner (netcl/primitives/gemm_autotune.py) against the built-in tables: for
each product shape, the time to tune its class, which configuration won, and the product's
time with the table's tiles and with the tuned ones, interleaved (same process, rounds
alternating) so that a shared machine's load falls on both.

    python benchmarks/autotune_bench.py [--rounds 7] [--shapes 1024x1024x1024,128x1024x784]

A scratch tuning cache is used (the user's is left alone). Shapes are MxNxK of float32 NN
products at "highest" precision (the tiled kernels the tuner chooses for; TF32 products
run on tensor-core kernels of their own); the defaults are W3's square product and the
MLP's and a convolution's products.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--shapes", default=None)
    args = p.parse_args()
    os.environ["NETCL_TUNING_CACHE"] = os.path.join(tempfile.mkdtemp(), "tuning.json")
    import netcl
    import netcl.numpy as jnp
    from netcl.primitives import gemm_autotune, gemm_tiers
    netcl.config.update("default_matmul_precision", "highest")
    dev = netcl.default_device()
    gpu = dev.target.gemm_tiers == "gpu"
    default = ("8192x8192x8192,256x1024x784,262144x64x288" if gpu else
               "1024x1024x1024,128x1024x784,128x1024x1024,1024x1024x128,8192x32x288")
    shapes = [tuple(int(v) for v in s.split("x")) for s in (args.shapes or default).split(",")]
    print(f"device: {dev.name} ({dev.target.gemm_tiers} tiers); median of {args.rounds} "
          "rounds, GFLOP/s")
    print(f"{'M x N x K':>18s} {'tune s':>7s} {'table':>8s} {'tuned':>8s}  winner")
    rng = np.random.default_rng(0)
    for M, N, K in shapes:
        a = jnp.asarray(rng.standard_normal((M, K), dtype=np.float32))
        b = jnp.asarray(rng.standard_normal((K, N), dtype=np.float32))
        t = time.perf_counter()
        netcl.tune(lambda: (a @ b).block_until_ready())
        tune_s = time.perf_counter() - t
        cls = gemm_autotune.ShapeClass.of("float", False, False, M, N, K)
        won = gemm_autotune.recorded(dev, cls)
        table = gemm_tiers.choose_config(dev.cl_device, "float", M, N, K, False,
                                         family=dev.target.gemm_tiers)
        times = {"off": [], "cached": []}
        for _ in range(args.rounds):
            for mode in times:
                netcl.config.update("autotune", mode)
                (a @ b).block_until_ready()                 # (launcher built, warm)
                t = time.perf_counter()
                (a @ b).block_until_ready()
                times[mode].append(time.perf_counter() - t)
        flops = 2.0 * M * N * K
        g = {m: flops / statistics.median(v) / 1e9 for m, v in times.items()}
        same = "(the table's)" if won == table else str(won)
        print(f"{f'{M}x{N}x{K}':>18s} {tune_s:7.2f} {g['off']:8.1f} {g['cached']:8.1f}  {same}")
        netcl.config.update("autotune", "cached")


if __name__ == "__main__":
    main()
