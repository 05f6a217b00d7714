"""Device time of every kernel in a real (pipelined) jitted train step, from OpenCL
profiling events, and the host time of enqueuing the step.

    python benchmarks/kernel_profile.py            # W4 (MLP) and W5 (CNN), shapes by device
    python benchmarks/kernel_profile.py W5 30      # W5 only, the 30 costliest kernels
    python benchmarks/kernel_profile.py W5b        # W5 under autocast(bfloat16)

Unlike profile_step.py (which runs each step alone and waits for the device), this wraps
PyOpenCL's command queue with profiling enabled and records one event per kernel launch,
so the figures are what the device spends per kernel while the step runs as usual:

  host ms/step    time to enqueue one step (Python, PyOpenCL and driver), device idle-free
  device ms/step  sum of kernel execution times (start to end of each event)
  step ms         wall time per step with the queue kept full (what the benchmark sees)

A step is host-bound when host ~ step > device, device-bound when device ~ step.
"""
import collections
import os
import sys
import time

import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_events = []
_recording = [False]
_enqueue = cl.enqueue_nd_range_kernel
_Queue = cl.CommandQueue


def _profiling_queue(context, device=None, properties=None):
    return _Queue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)


def _recording_enqueue(queue, kernel, gsize, lsize, *args, **kw):
    ev = _enqueue(queue, kernel, gsize, lsize, *args, **kw)
    if _recording[0]:
        _events.append((kernel.function_name, tuple(gsize), ev))
    return ev


# Patched before netcl builds any queue or launcher (launchers capture the function).
cl.CommandQueue = _profiling_queue
cl.enqueue_nd_range_kernel = _recording_enqueue

import netcl  # noqa: E402
import numpy as np  # noqa: E402

import workloads  # noqa: E402


def profile(wid, model, bs, steps=20, top=16):
    import netcl.numpy as jnp
    dev = netcl.default_device()
    run = workloads._netcl_train_step(model, bs, np.random.default_rng(0),
                                      compute=jnp.bfloat16 if wid.endswith("b") else None)
    for _ in range(3):
        run()
    dev.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        run()
    host = (time.perf_counter() - t) / steps
    dev.synchronize()
    step = (time.perf_counter() - t) / steps
    _events.clear()
    _recording[0] = True
    for _ in range(steps):
        run()
    dev.synchronize()
    _recording[0] = False
    per = collections.defaultdict(float)
    count = collections.Counter()
    for name, gsize, ev in _events:
        key = f"{name[:44]} {gsize}"
        per[key] += (ev.profile.end - ev.profile.start) * 1e-9 / steps
        count[key] += 1
    device = sum(per.values())
    print(f"\n{wid} batch {bs} on {dev.name}: {len(_events) // steps} kernels/step; "
          f"host {host * 1e3:.3f} ms/step, device {device * 1e3:.3f} ms/step, "
          f"step {step * 1e3:.3f} ms ({1 / step:.0f} steps/s)")
    for key, v in sorted(per.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {v * 1e3:8.3f} ms  {count[key] // steps:3d}x  {key}")


def main():
    which = [a for a in sys.argv[1:] if not a.isdigit()] or ["W4", "W5"]
    top = int(next((a for a in sys.argv[1:] if a.isdigit()), 16))
    kind = "gpu" if netcl.default_device().kind == "gpu" else "cpu"
    sz = workloads.shapes(kind)
    for wid, model in (("W4", "mlp"), ("W5", "cnn"), ("W4b", "mlp"), ("W5b", "cnn")):
        if wid in which:
            profile(wid, model, sz[wid[:2]], top=top)


if __name__ == "__main__":
    main()
