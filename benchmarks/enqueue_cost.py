"""The host's cost of one kernel enqueue through PyOpenCL, by number of arguments set per
launch, on the default device (the floor under every launcher's Python).

    python benchmarks/enqueue_cost.py
"""
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402

SRC = """
__kernel void k0(__global float *a) { a[get_global_id(0)] += 1.0f; }
__kernel void k4(__global float *a, __global const float *b, __global const float *c,
                 __global const float *d) { a[get_global_id(0)] += b[0] + c[0] + d[0]; }
__kernel void k16(__global float *a, __global const float *b, __global const float *c,
                  __global const float *d, int i0, int i1, int i2, int i3, int i4, int i5,
                  int i6, int i7, int i8, int i9, int i10, int i11)
{ a[get_global_id(0)] += b[0] + c[0] + d[0] + i0 + i11; }
"""


def per_launch(fn, n=400, rounds=7):
    """Median µs per call over rounds of n calls, the queue drained between rounds."""
    dev = netcl.default_device()
    out = []
    for _ in range(rounds):
        dev.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) / n * 1e6)
    dev.synchronize()
    return statistics.median(out)


def main():
    dev = netcl.default_device()
    ctx, q = dev.context, dev.queue
    prg = cl.Program(ctx, SRC).build()
    k0, k4, k16 = (cl.Kernel(prg, n) for n in ("k0", "k4", "k16"))
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096) for _ in range(8)]
    k0.set_arg(0, bufs[0])
    for i in range(4):
        k4.set_arg(i, bufs[i])
        k16.set_arg(i, bufs[i])
    for i in range(4, 16):
        k16.set_arg(i, np.int32(i))
    enq = cl.enqueue_nd_range_kernel
    g, l_ = (256,), (64,)
    rows = [
        ("enqueue only, 1 buffer set once", lambda: enq(q, k0, g, l_)),
        ("enqueue only, 16 args set once", lambda: enq(q, k16, g, l_)),
        ("set 1 buffer + enqueue", lambda: (k0.set_arg(0, bufs[1]), enq(q, k0, g, l_))),
        ("set 4 buffers + enqueue", lambda: ([k4.set_arg(i, bufs[4 + i]) for i in range(4)],
                                             enq(q, k4, g, l_))),
        ("kernel(queue, g, l, 4 buffers)", lambda: k4(q, g, l_, *bufs[:4])),
    ]
    big = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 << 20)
    kbig = cl.Kernel(prg, "k0")
    kbig.set_arg(0, big)
    rows.append(("enqueue only, global size 2^20", lambda: enq(q, kbig, (1 << 20,), (256,))))
    kept = []  # (never released here: the point is the driver's cost of creating one)
    rows.append(("new 4 KB cl.Buffer + enqueue", lambda: (
        kept.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)),
        k0.set_arg(0, kept[-1]), enq(q, k0, g, l_))))
    print(f"{dev.name}")
    for name, fn in rows:
        print(f"  {name:34s} {per_launch(fn):7.2f} µs")


if __name__ == "__main__":
    main()
