"""Can the host enqueue kernels for several devices at once? PyOpenCL holds the GIL in
`enqueue_nd_range_kernel`, so threads do not overlap its calls; a call through ctypes
releases the GIL for the driver's own time. This times N launches per device on every local
device (a tiny kernel, arguments set once): one thread enqueueing for all devices in turn
through PyOpenCL, the same through ctypes, and one thread per device through ctypes.

    python benchmarks/enqueue_threads.py [launches per device]
"""
import ctypes
import ctypes.util
import os
import sys
import threading
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402

SRC = "__kernel void k(__global float *a) { a[get_global_id(0)] += 1.0f; }"


def _libopencl():
    """clEnqueueNDRangeKernel of the OpenCL library PyOpenCL loaded (its wheel bundles an
    ICD loader), through ctypes.CDLL, which releases the GIL during each call."""
    with open("/proc/self/maps") as f:
        loaded = [ln.split()[-1] for ln in f if "libOpenCL" in ln]
    name = loaded[0] if loaded else (ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
    lib = ctypes.CDLL(name)
    f = lib.clEnqueueNDRangeKernel
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                  ctypes.c_void_p]
    return f


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    devices = netcl.local_devices()
    work = []
    for d in devices:
        prg = cl.Program(d.context, SRC).build(devices=[d.cl_device])
        k = cl.Kernel(prg, "k")
        buf = cl.Buffer(d.context, cl.mem_flags.READ_WRITE, 4 * 256)
        k.set_arg(0, buf)
        work.append((d, k, buf))
    enqueue = _libopencl()
    gsize = (ctypes.c_size_t * 1)(256)
    lsize = (ctypes.c_size_t * 1)(64)

    def pyopencl_one(d, k, m):
        for _ in range(m):
            cl.enqueue_nd_range_kernel(d.queue, k, (256,), (64,))

    def ctypes_one(d, k, m):
        q, kp = d.queue.int_ptr, k.int_ptr
        for _ in range(m):
            if enqueue(q, kp, 1, None, gsize, lsize, 0, None, None):
                raise RuntimeError("clEnqueueNDRangeKernel failed")

    def finish():
        for d, _, _ in work:
            d.queue.finish()

    def sequential(one):
        for _ in range(n // 100):
            for d, k, _ in work:
                one(d, k, 100)

    def threaded(one):
        ts = [threading.Thread(target=one, args=(d, k, n)) for d, k, _ in work]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    print(f"{len(devices)} device(s): {', '.join(d.name for d in devices)}; {n} launches each")
    for name, run in (("PyOpenCL, one thread", lambda: sequential(pyopencl_one)),
                      ("ctypes, one thread", lambda: sequential(ctypes_one)),
                      ("PyOpenCL, a thread per device", lambda: threaded(pyopencl_one)),
                      ("ctypes, a thread per device", lambda: threaded(ctypes_one))):
        best = None
        for _ in range(3):
            finish()
            t = time.perf_counter()
            run()
            host = time.perf_counter() - t
            finish()
            best = host if best is None else min(best, host)
        total = n * len(devices)
        print(f"  {name:32s} {best / total * 1e6:6.2f} us a launch "
              f"({total / best / 1e3:.0f}k launches/s)")


if __name__ == "__main__":
    main()
