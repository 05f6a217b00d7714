"""Reduction throughput: a full float32 sum and a row sum, in GB/s of input read.

    python benchmarks/reductions_bench.py                  # CPU sizes: n = 2^22, 2048x1024
    python benchmarks/reductions_bench.py --n 67108864 --rows 8192 --cols 4096   # GPU sizes

Median of --repeat timed runs after --warmup runs, the device synchronised around each.
Also reports the float64 error of the full sum, and a cumsum of the same vector.
"""
import argparse
import statistics
import time

import numpy as np

import netcl
import netcl.numpy as jnp
from netcl.primitives import reductions as R


def bench(fn, x, warmup, repeat):
    dev = x.device
    for _ in range(warmup):
        fn(x)
    dev.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(x)
        dev.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2**22, help="full-sum length (GPU: 2^26)")
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()

    dev = netcl.default_device()
    print(f"device: {dev}")
    rng = np.random.default_rng(0)

    host = rng.standard_normal(args.n, dtype=np.float32) + 1.0
    x = jnp.asarray(host)
    t = bench(lambda a: R.reduce_sum(a, (0,)), x, args.warmup, args.repeat)
    got = float(R.reduce_sum(x, (0,)))
    want = float(host.astype(np.float64).sum())
    print(f"full sum  f32 n={args.n:>10d}: {t * 1e3:8.3f} ms  {host.nbytes / t / 1e9:7.2f} GB/s"
          f"  (rel. error vs float64 {abs(got - want) / abs(want):.1e})")

    t = bench(lambda a: R.reduce_max(a, (0,)), x, args.warmup, args.repeat)
    print(f"full max  f32 n={args.n:>10d}: {t * 1e3:8.3f} ms  {host.nbytes / t / 1e9:7.2f} GB/s")

    t = bench(lambda a: R.cumsum(a, 0), x, args.warmup, args.repeat)
    print(f"cumsum    f32 n={args.n:>10d}: {t * 1e3:8.3f} ms  "
          f"{2 * host.nbytes / t / 1e9:7.2f} GB/s (read + write)")

    m = rng.standard_normal((args.rows, args.cols), dtype=np.float32)
    xm = jnp.asarray(m)
    shape = f"{args.rows}x{args.cols}"
    t = bench(lambda a: R.reduce_sum(a, (1,)), xm, args.warmup, args.repeat)
    print(f"row sum   f32 {shape:>12s}: {t * 1e3:8.3f} ms  {m.nbytes / t / 1e9:7.2f} GB/s")
    t = bench(lambda a: R.reduce_sum(a, (0,)), xm, args.warmup, args.repeat)
    print(f"col sum   f32 {shape:>12s}: {t * 1e3:8.3f} ms  {m.nbytes / t / 1e9:7.2f} GB/s")
    t = bench(lambda a: R.argmax(a, 1), xm, args.warmup, args.repeat)
    print(f"row argmax f32 {shape:>11s}: {t * 1e3:8.3f} ms  {m.nbytes / t / 1e9:7.2f} GB/s")


if __name__ == "__main__":
    main()
