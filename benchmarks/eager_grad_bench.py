"""Host cost of eager grad (W7) and eager dispatch (W6): kernel launches per W7 call,
microseconds per W7 call and per W6 op, with the device synchronised after each sample as
benchmarks/run.py does.

    python benchmarks/eager_grad_bench.py [rounds]        # medians and ranges over rounds

Launches are counted by wrapping pyopencl.enqueue_nd_range_kernel (and enqueue_copy /
fill_buffer) before any launcher is built (launchers look the function up when built).
"""
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

COUNTS = {"kernel": 0, "copy": 0, "fill": 0}


def _counting(fn, what):
    def wrapped(*a, **k):
        COUNTS[what] += 1
        return fn(*a, **k)
    return wrapped


cl.enqueue_nd_range_kernel = _counting(cl.enqueue_nd_range_kernel, "kernel")
cl.enqueue_copy = _counting(cl.enqueue_copy, "copy")
cl.enqueue_fill_buffer = _counting(cl.enqueue_fill_buffer, "fill")

import netcl  # noqa: E402
import netcl.numpy as jnp  # noqa: E402
import workloads  # noqa: E402


def launches_per_call(g, x, sync):
    g(x)
    sync()
    for k in COUNTS:
        COUNTS[k] = 0
    g(x)
    sync()
    return dict(COUNTS)


def time_w7(g, x, sync, n=200):
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        g(x)
    sync()
    return (time.perf_counter() - t0) / n * 1e6


def time_w6(sync, n=3):
    r0, b = jnp.ones(4), jnp.ones(4)
    best = []
    for _ in range(n):
        sync()
        t0 = time.perf_counter()
        r = r0
        for _ in range(1000):
            r = r + b
        sync()
        best.append((time.perf_counter() - t0) / 1000 * 1e6)
    return min(best)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    sync = netcl.default_device().synchronize
    g = netcl.grad(workloads.w7_fn(jnp))
    xh = np.random.default_rng(0).standard_normal(16, dtype=np.float32)
    x = jnp.asarray(xh)
    for _ in range(20):
        g(x)
    print("launches per W7 call:", launches_per_call(g, x, sync))
    w7, w6 = [], []
    for _ in range(rounds):
        w7.append(time_w7(g, x, sync))
        w6.append(time_w6(sync))
    med = statistics.median
    print(f"W7 us/call: median {med(w7):.1f} (range {min(w7):.1f}-{max(w7):.1f})")
    print(f"W6 us/op:   median {med(w6):.2f} (range {min(w6):.2f}-{max(w6):.2f})")
    print("grad:", np.asarray(g(x))[:4])


if __name__ == "__main__":
    main()
