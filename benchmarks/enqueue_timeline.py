"""The host's time inside each enqueue call of a train step, by kernel (and for copies),
to find which launches cost the host most (the driver's cost differs by launch).

    python benchmarks/enqueue_timeline.py W5            # one device's jitted step
    python benchmarks/enqueue_timeline.py W8 [devices]  # pmap_bench's step over N devices

The step runs back to back (no synchronisation between steps, as pmap_bench times W8) for
`STEPS` steps after a warm-up; printed: µs per step spent inside enqueue calls against the
step's wall time, then per kernel name: calls per step, median and max µs per call.
"""
import collections
import os
import statistics
import sys
import time

import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

STEPS = 40
_calls = collections.defaultdict(list)
_recording = [False]
_enqueue_kernel, _enqueue_copy = cl.enqueue_nd_range_kernel, cl.enqueue_copy


def _timed_kernel(queue, kernel, *args, **kwargs):
    t = time.perf_counter()
    ev = _enqueue_kernel(queue, kernel, *args, **kwargs)
    if _recording[0]:
        _calls[getattr(kernel, "_netcl_name", kernel.function_name)].append(
            time.perf_counter() - t)
    return ev


def _timed_copy(queue, dest, src, **kwargs):
    t = time.perf_counter()
    ev = _enqueue_copy(queue, dest, src, **kwargs)
    if _recording[0]:
        kind = ("copy to host" if not isinstance(dest, cl.MemoryObjectHolder) else
                "copy from host" if not isinstance(src, cl.MemoryObjectHolder) else
                "copy on device")
        _calls[kind].append(time.perf_counter() - t)
    return ev


cl.enqueue_nd_range_kernel, cl.enqueue_copy = _timed_kernel, _timed_copy

import netcl  # noqa: E402


def main():
    wid = sys.argv[1] if len(sys.argv) > 1 else "W5"
    if wid == "W8":
        import pmap_bench
        n = int(sys.argv[2]) if len(sys.argv) > 2 else len(netcl.local_devices())
        run, sync = pmap_bench.cnn_step(n, 256, mapped=True)
    else:
        import workloads
        run, _, _ = workloads.warm_train_step(wid)
        sync = netcl.default_device().synchronize
    for _ in range(5):
        run()
    sync()
    _recording[0] = True
    t = time.perf_counter()
    for _ in range(STEPS):
        run()
    sync()
    wall = (time.perf_counter() - t) / STEPS
    _recording[0] = False
    inside = sum(sum(v) for v in _calls.values()) / STEPS
    print(f"{wid}: {wall * 1e6:.0f} us a step, {inside * 1e6:.0f} us of it inside enqueue "
          f"calls ({sum(len(v) for v in _calls.values()) / STEPS:.0f} calls a step)")
    rows = sorted(_calls.items(), key=lambda kv: -sum(kv[1]))
    for name, times in rows:
        print(f"  {name[:40]:40s} {len(times) / STEPS:5.1f}/step  median "
              f"{statistics.median(times) * 1e6:7.1f} us  max {max(times) * 1e6:8.1f} us  "
              f"total {sum(times) / STEPS * 1e6:7.1f} us/step")


if __name__ == "__main__":
    main()
