"""Where the host's time goes while it enqueues a jitted train step (cProfile over many
steps, device synchronised only at the end), by function, costliest first.

    python benchmarks/host_profile.py W5 [rows]     # or W4
"""
import cProfile
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402

import workloads  # noqa: E402


def main():
    wid = sys.argv[1] if len(sys.argv) > 1 else "W4"
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    run = workloads._netcl_train_step("mlp" if wid == "W4" else "cnn", 256,
                                      np.random.default_rng(0))
    dev = netcl.default_device()
    for _ in range(5):
        run()
    dev.synchronize()
    n = 100 if wid == "W4" else 30
    t = time.perf_counter()
    for _ in range(n):
        run()
    host = (time.perf_counter() - t) / n
    dev.synchronize()
    print(f"{wid}: host {host * 1e3:.3f} ms/step to enqueue, "
          f"{(time.perf_counter() - t) / n * 1e3:.3f} ms/step with the device")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        run()
    prof.disable()
    dev.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(rows)


if __name__ == "__main__":
    main()
