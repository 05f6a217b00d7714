"""Time the workloads of ../shared/BENCHMARKS.md that netcl can run, print a table.

    python benchmarks/run.py                  # shapes by device kind (cpu or gpu)
    python benchmarks/run.py --only W1,W6 --peers   # also JAX / PyTorch where installed

Median of repeated runs after warm-up, with the device synchronised. Eager mode (jit is
another capability); W1 and W2 therefore launch several kernels per call here.
"""
import argparse
import statistics
import time

import numpy as np

import netcl
import netcl.numpy as jnp


def median_time(fn, sync, repeat=20, warmup=3, min_time=0.0):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    start = time.perf_counter()
    while len(times) < repeat or time.perf_counter() - start < min_time:
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
        if len(times) > 10 * repeat:
            break
    return statistics.median(times)


def shapes(kind):
    gpu = kind == "gpu"
    return {"W1": 2**26 if gpu else 2**22, "W2": (8192, 4096) if gpu else (2048, 1024),
            "W3": 8192 if gpu else 1024}


# ---- the workloads, written once against a numpy-like module --------------------------------

def w1(np_, x, a, b, sigmoid):
    return np_.tanh(x * a + b) * sigmoid(x) + 0.5 * x


def w7_fn(np_):
    def f(x):
        y = np_.sin(x) * 2.0 + np_.cos(x * x)
        z = np_.exp(-y * y) + np_.tanh(y) * x
        z = np_.log1p(z * z) - np_.sqrt(np_.abs(x) + 1.0)
        return np_.sum(z * y + x / (1.0 + x * x))
    return f


def bench_netcl(which):
    dev = netcl.default_device()
    sync = dev.synchronize
    sz = shapes(dev.kind)
    rng = np.random.default_rng(0)
    rows = []
    if "W1" in which:
        n = sz["W1"]
        x = jnp.asarray(rng.standard_normal(n, dtype=np.float32))
        t = median_time(lambda: w1(jnp, x, 1.5, 0.25, netcl.nn.sigmoid), sync)
        rows.append(("W1", f"n={n}", 16 * n / t / 1e9, "GB/s"))
    if "W2" in which:
        r, c = sz["W2"]
        x = jnp.asarray(rng.standard_normal((r, c), dtype=np.float32))
        t = median_time(lambda: netcl.nn.softmax(x, axis=-1), sync)
        rows.append(("W2", f"{r}x{c}", 8 * r * c / t / 1e9, "GB/s"))
    if "W3" in which:
        n = sz["W3"]
        a = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
        b = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
        t = median_time(lambda: a @ b, sync, repeat=10)
        rows.append(("W3", f"n={n}", 2 * n**3 / t / 1e9, "GFLOP/s"))
    if "W6" in which:
        r0 = jnp.ones(4)
        b = jnp.ones(4)

        def run():
            r = r0
            for _ in range(1000):
                r = r + b
            return r
        t = median_time(run, sync, repeat=10)
        rows.append(("W6", "1000 x (4,)", t / 1000 * 1e6, "us/op"))
    if "W7" in which:
        g = netcl.grad(w7_fn(jnp))
        x = jnp.asarray(rng.standard_normal(16, dtype=np.float32))
        t = median_time(lambda: g(x), sync, repeat=30)
        rows.append(("W7", "16-vector", t * 1e6, "us/call"))
    return rows


def bench_torch(which, kind):
    import torch
    dev = "cuda" if kind == "gpu" and torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    sz = shapes(kind)
    rows = []
    if "W1" in which:
        x = torch.randn(sz["W1"], device=dev)
        t = median_time(lambda: w1(torch, x, 1.5, 0.25, torch.sigmoid), sync)
        rows.append(("W1", "torch eager", 16 * sz["W1"] / t / 1e9, "GB/s"))
    if "W2" in which:
        r, c = sz["W2"]
        x = torch.randn(r, c, device=dev)
        t = median_time(lambda: torch.softmax(x, -1), sync)
        rows.append(("W2", "torch eager", 8 * r * c / t / 1e9, "GB/s"))
    if "W3" in which:
        torch.backends.cuda.matmul.allow_tf32 = False
        n = sz["W3"]
        a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
        t = median_time(lambda: a @ b, sync, repeat=10)
        rows.append(("W3", "torch", 2 * n**3 / t / 1e9, "GFLOP/s"))
    if "W6" in which:
        r0, b = torch.ones(4, device=dev), torch.ones(4, device=dev)

        def run():
            r = r0
            for _ in range(1000):
                r = r + b
            return r
        t = median_time(run, sync, repeat=10)
        rows.append(("W6", "torch eager", t / 1000 * 1e6, "us/op"))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="W1,W2,W3,W6,W7")
    p.add_argument("--peers", action="store_true", help="also time PyTorch where installed")
    args = p.parse_args()
    which = set(args.only.split(","))
    dev = netcl.default_device()
    print(f"netcl on {dev.name} ({dev.kind})")
    rows = [("netcl",) + r for r in bench_netcl(which)]
    if args.peers:
        try:
            rows += [("torch",) + r for r in bench_torch(which, dev.kind)]
        except ImportError:
            print("(PyTorch not installed)")
    print(f"{'lib':6} {'id':4} {'shape':14} {'figure':>12}  unit")
    for lib, wid, shape, fig, unit in sorted(rows, key=lambda r: (r[1], r[0])):
        print(f"{lib:6} {wid:4} {shape:14} {fig:12.2f}  {unit}")


if __name__ == "__main__":
    main()
