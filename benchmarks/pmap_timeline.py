"""Why a pmapped step is slower than one device's: each device's idle time, split into time
waiting for the host to enqueue (the next command was queued after the previous one ended)
and time waiting for another device (the command was queued in time but started later: an
event from another queue, the all-reduce's copies).

    python benchmarks/pmap_timeline.py [devices] [steps]     # W8 (pmap_bench's step)

The step runs back to back (as pmap_bench times W8) on queues with profiling; printed per
device over the middle steps: busy time, idle waiting for the host, idle waiting for a
dependency, and the commands after the longest waits of each kind.
"""
import collections
import os
import statistics
import sys
import time

import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_Queue, _enqueue_kernel, _enqueue_copy = cl.CommandQueue, cl.enqueue_nd_range_kernel, \
    cl.enqueue_copy
_events = []        # (queue, name, event)
_recording = [False]


def _profiling_queue(context, device=None, properties=None):
    return _Queue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)


def _kernel(queue, kernel, *args, **kwargs):
    ev = _enqueue_kernel(queue, kernel, *args, **kwargs)
    if _recording[0]:
        _events.append((queue, getattr(kernel, "_netcl_name", kernel.function_name), ev))
    return ev


def _copy(queue, dest, src, **kwargs):
    ev = _enqueue_copy(queue, dest, src, **kwargs)
    if _recording[0] and ev is not None:
        name = ("copy to host" if not isinstance(dest, cl.MemoryObjectHolder) else
                "copy from host" if not isinstance(src, cl.MemoryObjectHolder) else "copy")
        _events.append((queue, name, ev))
    return ev


cl.CommandQueue, cl.enqueue_nd_range_kernel, cl.enqueue_copy = _profiling_queue, _kernel, _copy

import netcl  # noqa: E402
import pmap_bench  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else len(netcl.local_devices())
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    run, sync = pmap_bench.cnn_step(n, 256 if netcl.default_device().kind == "gpu" else 8,
                                    mapped=True)
    for _ in range(5):
        run()
    sync()
    _recording[0] = True
    t = time.perf_counter()
    for _ in range(steps):
        run()
    sync()
    wall = (time.perf_counter() - t) / steps
    _recording[0] = False
    by_queue = collections.defaultdict(list)
    for q, name, ev in _events:
        p = ev.profile
        by_queue[q.int_ptr].append((name, p.queued, p.start, p.end))
    print(f"W8 over {n} devices: {wall * 1e3:.3f} ms a step ({steps} steps, profiling on)")
    for d, cmds in enumerate(by_queue.values()):
        cmds.sort(key=lambda c: c[2])
        # the middle half of the run: no warm-up or drain at its ends
        lo, hi = len(cmds) // 4, 3 * len(cmds) // 4
        busy = host = dep = 0
        host_waits, dep_waits = collections.Counter(), collections.Counter()
        for prev, cur in zip(cmds[lo:hi], cmds[lo + 1:hi + 1]):
            name, queued, start, end = cur
            busy += end - start
            idle = max(0, start - prev[3])
            starved = min(idle, max(0, queued - prev[3]))
            host += starved
            dep += idle - starved
            host_waits[name] += starved
            dep_waits[name] += idle - starved
        span = cmds[hi][3] - cmds[lo][2]
        per = span / (steps / 2) / 1e3
        print(f"  device {d}: {len(cmds) / steps:.0f} commands a step; per step {per:7.1f} us: "
              f"busy {busy / span * per:7.1f}, waiting for the host {host / span * per:7.1f}, "
              f"for another device {dep / span * per:7.1f}")
        for what, waits in (("host", host_waits), ("dependency", dep_waits)):
            top = ", ".join(f"{k} {v / 1e3 / (steps / 2):.0f}" for k, v in waits.most_common(4))
            print(f"    longest waits for the {what} before (us a step): {top}")
    print(f"  (median command run time: "
          f"{statistics.median([(e - s) / 1e3 for c in by_queue.values() for _, _, s, e in c]):.1f} us)")


if __name__ == "__main__":
    main()
