"""W3 (BENCHMARKS.md): square float32 matmul through `netcl.numpy.matmul`, eager.

    python benchmarks/matmul_bench.py                 # n = 1024 on a CPU device, 8192 on a GPU
    python benchmarks/matmul_bench.py --n 2048 --repeats 20
    NETCL_DEVICE=gpu python benchmarks/matmul_bench.py --check

Reports GFLOP/s (2 n^3 flops per product) from the median of `--repeats` timed calls after
`--warmup` untimed ones; each timed call is synchronised (`block_until_ready`) before and
after, so the figure includes netcl's dispatch cost and excludes nothing the device does.
Also prints the tile configuration gemm.py picked for this device and shape.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402
import netcl.numpy as jnp  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="matrix side (default 1024 on CPU, "
                    "8192 on GPU)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64", "float16"])
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=None, help="timed calls (default: 10, or "
                    "fewer so that the run takes about 20 s)")
    ap.add_argument("--check", action="store_true", help="compare one result with numpy")
    args = ap.parse_args(argv)

    dev = netcl.default_device()
    n = args.n or (8192 if dev.kind == "gpu" else 1024)
    rng = np.random.default_rng(0)
    dt = np.dtype(args.dtype)
    a_h = rng.standard_normal((n, n)).astype(dt)
    b_h = rng.standard_normal((n, n)).astype(dt)
    a, b = jnp.asarray(a_h), jnp.asarray(b_h)

    t0 = time.perf_counter()
    c = jnp.matmul(a, b).block_until_ready()
    first = time.perf_counter() - t0
    for _ in range(max(0, args.warmup - 1)):
        c = jnp.matmul(a, b)
    c.block_until_ready()

    t0 = time.perf_counter()
    jnp.matmul(a, b).block_until_ready()
    one = time.perf_counter() - t0
    repeats = args.repeats or max(3, min(10, int(20 / max(one, 1e-6))))
    times = []
    for _ in range(repeats):
        dev.synchronize()
        t0 = time.perf_counter()
        c = jnp.matmul(a, b)
        c.block_until_ready()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    gflops = 2.0 * n ** 3 / med / 1e9

    cfg = "numpy fallback"
    if not dev.is_numpy:
        from netcl.primitives import gemm, gemm_tiers
        name = "double" if dt == np.float64 else "float"
        cfg = gemm_tiers.choose_config(dev.cl_device, name, n, n, n)
    print(f"device: {dev}")
    print(f"W3 matmul {n}x{n} {dt.name}: median {med * 1e3:.2f} ms over {repeats} runs "
          f"(first call incl. build {first:.2f} s) -> {gflops:.1f} GFLOP/s")
    print(f"config: {cfg}")
    if args.check:
        want = a_h.astype(np.float64) @ b_h.astype(np.float64)
        got = np.asarray(c, dtype=np.float64)
        err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
        print(f"max error relative to max |C|: {err:.2e}")
    return gflops


if __name__ == "__main__":
    main()
