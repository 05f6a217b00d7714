"""Does the host's cost of a kernel enqueue depend on how many devices its context holds?
netcl keeps one context per platform (pmap's collectives share its pinned buffers); a
driver may track every buffer's home device across a context's devices at each launch.
This times launches of a small kernel (four buffer arguments set per launch, as a
launcher sets its output and inputs) on the platform's GPUs: in a context of one device,
in one context of all, round robin over the devices in that shared context, and round
robin over one context per device; then the same shared-context round robin with
PyOpenCL's event objects against ctypes calls that ask for none.

    python benchmarks/enqueue_contexts.py [launches]
"""
import ctypes
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enqueue_threads import _libopencl  # noqa: E402

SRC = """__kernel void k(__global float *a, __global const float *b, __global const float *c,
                     __global const float *d) { a[get_global_id(0)] += b[0] + c[0] + d[0]; }"""


def _setup(ctx, dev):
    q = cl.CommandQueue(ctx, dev)
    k = cl.Kernel(cl.Program(ctx, SRC).build(devices=[dev]), "k")
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096) for _ in range(8)]
    cl.enqueue_fill_buffer(q, bufs[0], np.float32(0), 0, 4096 * 8 // 8)
    return q, k, bufs


def _rate(units, n, rounds=5):
    """µs per launch, round robin over `units` [(queue, kernel, buffers)], median of rounds."""
    out = []
    for _ in range(rounds):
        for q, _, _ in units:
            q.finish()
        t = time.perf_counter()
        for i in range(n):
            q, k, b = units[i % len(units)]
            j = i & 3
            k.set_arg(0, b[j])
            k.set_arg(1, b[j + 1])
            k.set_arg(2, b[j + 2])
            k.set_arg(3, b[j + 3])
            cl.enqueue_nd_range_kernel(q, k, (256,), (128,))
        elapsed = time.perf_counter() - t
        out.append(elapsed / n * 1e6)
    for q, _, _ in units:
        q.finish()
    return statistics.median(out)


def _rate_ctypes(units, n, rounds=5):
    """As _rate, clEnqueueNDRangeKernel through ctypes with no event asked for."""
    enq = _libopencl()      # (clEnqueueNDRangeKernel)
    g, loc = (ctypes.c_size_t * 1)(256), (ctypes.c_size_t * 1)(128)
    ptrs = [(q.int_ptr, k.int_ptr) for q, k, _ in units]
    out = []
    for _ in range(rounds):
        for q, _, _ in units:
            q.finish()
        t = time.perf_counter()
        for i in range(n):
            _, k, b = units[i % len(units)]
            j = i & 3
            k.set_arg(0, b[j])
            k.set_arg(1, b[j + 1])
            k.set_arg(2, b[j + 2])
            k.set_arg(3, b[j + 3])
            qp, kp = ptrs[i % len(units)]
            enq(qp, kp, 1, None, ctypes.byref(g), ctypes.byref(loc), 0, None, None)
        out.append((time.perf_counter() - t) / n * 1e6)
    for q, _, _ in units:
        q.finish()
    return statistics.median(out)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    plat = next(p for p in cl.get_platforms()
                if p.get_devices(cl.device_type.GPU) or p.get_devices())
    devs = plat.get_devices()
    print(f"{plat.name}: {len(devs)} x {devs[0].name}; {n} launches a round")
    alone = _setup(cl.Context([devs[0]]), devs[0])
    shared_ctx = cl.Context(devs)
    shared = [_setup(shared_ctx, d) for d in devs]
    own = [_setup(cl.Context([d]), d) for d in devs]
    for _ in range(2):      # (interleaved: the second pass is the one to read)
        rows = [("one device, its own context", _rate([alone], n)),
                (f"one device of a context of {len(devs)}", _rate(shared[:1], n)),
                (f"{len(devs)} devices round robin, one shared context", _rate(shared, n)),
                (f"{len(devs)} devices round robin, a context each", _rate(own, n)),
                (f"{len(devs)} devices, shared context, ctypes without events",
                 _rate_ctypes(shared, n)),
                (f"{len(devs)} devices, a context each, ctypes without events",
                 _rate_ctypes(own, n))]
    for name, us in rows:
        print(f"  {name:58s} {us:6.2f} us/launch")


if __name__ == "__main__":
    main()
