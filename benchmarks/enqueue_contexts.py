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
                     __global const float *d) { a[get_global_id(0)] += b[0] + c[0] + d[0]; }
__kernel void k16(__global float *a, __global const float *b1, __global const float *b2,
    __global const float *b3, __global const float *b4, __global const float *b5,
    __global const float *b6, __global const float *b7, __global const float *b8,
    __global const float *b9, __global const float *b10, __global const float *b11,
    __global const float *b12, __global const float *b13, __global const float *b14,
    __global const float *b15) { a[get_global_id(0)] += b1[0] + b15[0]; }
__kernel void spin(__global float *a, int n) {
    float x = a[get_global_id(0)];
    for (int i = 0; i < n; ++i) x = x * 0.999f + 0.001f;
    a[get_global_id(0)] = x; }"""


def _setup(ctx, dev):
    q = cl.CommandQueue(ctx, dev)
    prg = cl.Program(ctx, SRC).build(devices=[dev])
    k = cl.Kernel(prg, "k")
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096) for _ in range(8)]
    for b in bufs:
        cl.enqueue_fill_buffer(q, b, np.float32(0), 0, 4096)
    return q, k, bufs


def _rate_wide(q, k16, bufs, n, rounds=5, behind=None):
    """µs per launch of a kernel of 16 buffer arguments, each set per launch, cycling over
    `bufs` (16 of them: the same every launch; many: a step's worth of pool buffers);
    `behind`: a kernel enqueued first that keeps the device busy while the host enqueues
    (the launches queue up behind it, as a train step's do)."""
    out = []
    for _ in range(rounds):
        q.finish()
        if behind is not None:
            cl.enqueue_nd_range_kernel(q, behind, (128 * 132,), None)
        t = time.perf_counter()
        for i in range(n):
            for j in range(16):
                k16.set_arg(j, bufs[(i * 16 + j) % len(bufs)])
            cl.enqueue_nd_range_kernel(q, k16, (256,), (128,))
        out.append((time.perf_counter() - t) / n * 1e6)
    q.finish()
    return statistics.median(out)


def _wide_rows(ctx, dev, label):
    q = cl.CommandQueue(ctx, dev)
    prg = cl.Program(ctx, SRC).build(devices=[dev])
    k16 = cl.Kernel(prg, "k16")
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096) for _ in range(256)]
    for b in bufs:
        cl.enqueue_fill_buffer(q, b, np.float32(0), 0, 4096)
    spin = cl.Kernel(prg, "spin")
    busy = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 128 * 132)
    cl.enqueue_fill_buffer(q, busy, np.float32(0), 0, 4 * 128 * 132)
    spin.set_arg(0, busy)
    spin._netcl_busy = busy     # (a kernel does not keep its arguments alive)
    gpu = bool(dev.type & cl.device_type.GPU)
    spin.set_arg(1, np.int32(2_000_000 if gpu else 20_000))
    return [(f"16 buffers, the same each launch, {label}",
             lambda n: _rate_wide(q, k16, bufs[:16], n)),
            (f"16 buffers of 256 in turn, {label}", lambda n: _rate_wide(q, k16, bufs, n)),
            (f"the same, queued behind a busy kernel, {label}",
             lambda n: _rate_wide(q, k16, bufs, n, behind=spin))]


def _rate(units, n, rounds=5, ctypes_enqueue=False):
    """µs per launch, round robin over `units` [(queue, kernel, buffers)], median of rounds;
    with `ctypes_enqueue`, clEnqueueNDRangeKernel through ctypes, asking for no event."""
    enq = _libopencl() if ctypes_enqueue else None
    g, loc = (ctypes.c_size_t * 1)(256), (ctypes.c_size_t * 1)(128)
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
            if enq is None:
                cl.enqueue_nd_range_kernel(q, k, (256,), (128,))
            else:
                enq(q.int_ptr, k.int_ptr, 1, None, ctypes.byref(g), ctypes.byref(loc), 0,
                    None, None)
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
                 _rate(shared, n, ctypes_enqueue=True)),
                (f"{len(devs)} devices, a context each, ctypes without events",
                 _rate(own, n, ctypes_enqueue=True))]
    wide = _wide_rows(cl.Context([devs[0]]), devs[0], "a context of one device") + \
        _wide_rows(shared_ctx, devs[0], f"a context of {len(devs)}")
    rows += [(name, f(n)) for name, f in wide]
    for name, us in rows:
        print(f"  {name:58s} {us:6.2f} us/launch")


if __name__ == "__main__":
    main()
