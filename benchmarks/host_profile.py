"""Where the host's time goes while it enqueues a jitted train step, by function, costliest
first (cProfile; builtins such as PyOpenCL's enqueue and set_arg show as their own rows).

    python benchmarks/host_profile.py W5 [rows]     # or W4
    python benchmarks/host_profile.py W8 [rows] [devices]   # the pmapped step (pmap_bench's)

The device is synchronised after every step, as benchmarks/run.py does, so the figures are
those of the benchmark: `enqueue` is the host's time to return from the step, `wait` the
time the device still needed after that.
"""
import cProfile
import os
import pstats
import statistics
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402

import workloads  # noqa: E402


def main():
    wid = sys.argv[1] if len(sys.argv) > 1 else "W4"
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if wid == "W8":
        import pmap_bench
        n_dev = int(sys.argv[3]) if len(sys.argv) > 3 else len(netcl.local_devices())
        bs, kind = 256, netcl.default_device().kind
        run, sync = pmap_bench.cnn_step(n_dev, bs, mapped=True)
        for _ in range(5):
            run()
        sync()
        wid = f"W8 on {n_dev} devices,"
    else:
        run, bs, kind = workloads.warm_train_step(wid)
        sync = netcl.default_device().synchronize
    n = 100 if wid == "W4" and kind == "gpu" else 30
    enq, wait = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        run()
        t1 = time.perf_counter()
        sync()
        enq.append(t1 - t0)
        wait.append(time.perf_counter() - t1)
    med = statistics.median
    print(f"{wid} batch {bs}: enqueue {med(enq) * 1e3:.3f} ms, wait {med(wait) * 1e3:.3f} ms, "
          f"step {med([a + b for a, b in zip(enq, wait)]) * 1e3:.3f} ms (medians)")
    prof = cProfile.Profile()
    for _ in range(n):
        prof.enable()
        run()
        prof.disable()
        sync()
    pstats.Stats(prof).sort_stats("tottime").print_stats(rows)


if __name__ == "__main__":
    main()
