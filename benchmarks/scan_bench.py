"""A recurrence under jit(grad): lax.scan as a compiled loop against the same scan written
out step by step (unroll=True), and JAX beside with --peers: the first call (trace and
compile, kernels from a warm cache), the time of a call after it (the median of --repeat
calls, each waited for), and what one call enqueues per step (kernels, and buffer copies:
host transfers and device-to-device), counted on fresh launchers after the timing.

    python benchmarks/scan_bench.py [--steps 500] [--hidden 32] [--peers] [--written-out]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def rnn_loss(lib, np_, unroll):
    def f(W, U, xs):
        def step(h, x):
            h = np_.tanh(h @ W + x @ U)
            return h, h[0]
        h, ys = lib.lax.scan(step, np_.zeros(W.shape[0]), xs, unroll=unroll)
        return np_.sum(h ** 2) + np_.sum(ys)
    return f


def timed(make, block, repeat):
    t = time.perf_counter()
    block(make())
    first = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        block(make())
        times.append(time.perf_counter() - t)
    return first, float(np.median(times))


def enqueues_per_call(netcl, make):
    """(kernels, buffer copies) one call enqueues, on launchers built afresh around
    PyOpenCL's enqueue functions wrapped to count (launchers look them up when built)."""
    if netcl.default_device().is_numpy:
        return 0, 0
    import pyopencl as cl
    counts = {"enqueue_nd_range_kernel": 0, "enqueue_copy": 0, "enqueue_fill_buffer": 0}
    saved = {name: getattr(cl, name) for name in counts}

    def counting(name):
        def wrapped(*args, **kwargs):
            counts[name] += 1
            return saved[name](*args, **kwargs)
        return wrapped
    try:
        for name in counts:
            setattr(cl, name, counting(name))
        netcl.test_util.forget_launchers()
        g = make()
        netcl.block_until_ready(g())
        for name in counts:
            counts[name] = 0
        netcl.block_until_ready(g())
    finally:
        for name, fn in saved.items():
            setattr(cl, name, fn)
        netcl.test_util.forget_launchers()
    return (counts["enqueue_nd_range_kernel"] + counts["enqueue_fill_buffer"],
            counts["enqueue_copy"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--peers", action="store_true")
    p.add_argument("--written-out", action="store_true", help="also time unroll=True "
                   "(compiles one copy of the body per step: minutes for long scans)")
    args = p.parse_args()
    import netcl
    import netcl.numpy as jnp
    rng = np.random.default_rng(0)
    H = args.hidden
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    U = (rng.standard_normal((8, H)) * 0.2).astype(np.float32)
    xs = rng.standard_normal((args.steps, 8)).astype(np.float32)
    print(f"{args.steps}-step tanh RNN, hidden {H}, jit(grad) w.r.t. both weights, on "
          f"{netcl.default_device().name}")
    kinds = [("loop", 1)] + ([("written out", True)] if args.written_out else [])
    for name, unroll in kinds:
        def make(unroll=unroll):
            g = netcl.jit(netcl.grad(rnn_loss(netcl, jnp, unroll), argnums=(0, 1)))
            return lambda: g(W, U, xs)
        first, each = timed(make(), netcl.block_until_ready, args.repeat)
        kernels, copies = enqueues_per_call(netcl, make)
        print(f"netcl {name:12s}: first call {first:7.2f} s, then {each * 1e3:8.2f} ms a call; "
              f"{kernels / args.steps:.2f} kernels and {copies / args.steps:.2f} copies a step")
    if args.peers:
        import jax
        g = jax.jit(jax.grad(rnn_loss(jax, jax.numpy, 1), argnums=(0, 1)))
        first, each = timed(lambda: g(W, U, xs), jax.block_until_ready, args.repeat)
        print(f"JAX   loop        : first call {first:7.2f} s, then {each * 1e3:8.2f} ms a call")


if __name__ == "__main__":
    main()
