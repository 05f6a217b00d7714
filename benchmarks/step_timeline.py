"""The device's timeline of one jitted train step run alone (as benchmarks/run.py times it:
device synchronised after every step): when each kernel was queued by the host, submitted
to the device, started and ended, from OpenCL profiling events.

    python benchmarks/step_timeline.py W5 [flush_every]

`flush_every` N > 0 calls clFlush after every N-th launch (a driver may hold commands on
the host until a flush or a full batch; this shows whether that leaves the device idle).
Printed: the median step time, then one line per kernel of the last step (times in µs from
the first kernel's queued time), the idle time inside that step (gaps between kernels), and
each kernel's median and minimum run time over all steps.
"""
import os
import statistics
import sys
import time

import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_events = []
_enqueue = cl.enqueue_nd_range_kernel
_Queue = cl.CommandQueue
_flush_every = int(sys.argv[2]) if len(sys.argv) > 2 else 0
_count = [0]


def _profiling_queue(context, device=None, properties=None):
    return _Queue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)


def _recording_enqueue(queue, kernel, gsize, lsize, *args, **kw):
    ev = _enqueue(queue, kernel, gsize, lsize, *args, **kw)
    _events.append((kernel.function_name, ev))
    _count[0] += 1
    if _flush_every and _count[0] % _flush_every == 0:
        queue.flush()
    return ev


cl.CommandQueue = _profiling_queue
cl.enqueue_nd_range_kernel = _recording_enqueue

import netcl  # noqa: E402

import workloads  # noqa: E402


def main():
    wid = sys.argv[1] if len(sys.argv) > 1 else "W5"
    run, bs, _ = workloads.warm_train_step(wid)
    sync = netcl.default_device().synchronize
    steps, runs = [], []
    for _ in range(30):
        _events.clear()
        t = time.perf_counter()
        run()
        sync()
        steps.append(time.perf_counter() - t)
        runs.append([(name, (ev.profile.end - ev.profile.start) / 1e3) for name, ev in _events])
    print(f"{wid} batch {bs}, flush every {_flush_every or 'never'}: step "
          f"{statistics.median(steps) * 1e3:.3f} ms (median of 30)")
    t0 = _events[0][1].profile.queued
    end_prev, idle = None, 0
    for name, ev in _events:
        p = ev.profile
        q, s, b, e = ((v - t0) / 1e3 for v in (p.queued, p.submit, p.start, p.end))
        gap = 0 if end_prev is None else max(0.0, b - end_prev)
        idle += gap
        print(f"  {name[:34]:34s} queued {q:8.1f} submit {s:8.1f} start {b:8.1f} "
              f"end {e:8.1f}  ({e - b:6.1f} run, {gap:6.1f} idle before)")
        end_prev = e
    print(f"  idle between kernels: {idle:.1f} µs; first start {(_events[0][1].profile.start - t0) / 1e3:.1f} µs after queued")
    # one step's times move with the machine's load: the median and minimum over all steps
    print("  run time per kernel over the 30 steps (µs): median / min")
    for i, (name, _) in enumerate(runs[-1]):
        ts = [r[i][1] for r in runs if len(r) == len(runs[-1])]
        print(f"  {i:3d} {name[:34]:34s} {statistics.median(ts):8.1f} {min(ts):8.1f}")
    total = [sum(t for _, t in r) for r in runs]
    print(f"  sum of kernel run times: median {statistics.median(total):.1f}, min {min(total):.1f} µs")


if __name__ == "__main__":
    main()
