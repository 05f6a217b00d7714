"""W4 or W5 train steps of netcl and JAX timed in turn, in one process (sync after each step).

    python benchmarks/interleaved.py W4 [steps] [block] [--donate]

On a shared machine the same command's figure moves by a third from run to run (the 2-core
CPU here: W4 from 48 to 78 steps/s); steps taken in turn see the same load, so their ratio
is what to read. Prints min, first quartile and median per library. ``block`` > 1 takes
that many steps of one library before switching (a library's worker threads may still spin
for a while after its step, which taxes the other's next step). ``--donate``: both steps
donate the parameters and optimizer state (donate_argnums), updating them in place.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402

import workloads  # noqa: E402


def main():
    argv = [a for a in sys.argv[1:] if a != "--donate"]
    donate = len(argv) < len(sys.argv) - 1
    wid = argv[0] if argv else "W4"
    steps = int(argv[1]) if len(argv) > 1 else 40
    block = int(argv[2]) if len(argv) > 2 else 1
    model = {"W4": "mlp", "W5": "cnn"}[wid]
    dev = netcl.default_device()
    kind = "gpu" if dev.kind == "gpu" else "cpu"
    bs = workloads.shapes(kind)[wid]
    runs = {"netcl": (workloads._netcl_train_step(model, bs, np.random.default_rng(0), donate),
                      dev.synchronize)}
    try:
        import jax
        jdev = jax.devices("gpu")[0] if kind == "gpu" and jax.default_backend() == "gpu" \
            else jax.devices("cpu")[0]
        runs["jax"] = workloads._jax_train_step(model, bs, np.random.default_rng(0), jdev,
                                               donate)
    except ImportError:
        print("(jax not available)")
    for run, sync in runs.values():
        for _ in range(5):
            run()
        sync()
    times = {name: [] for name in runs}
    order = list(runs)
    for i in range(-(-steps // block)):
        for name in (order if i % 2 else order[::-1]):
            run, sync = runs[name]
            for _ in range(block):
                t = time.perf_counter()
                run()
                sync()
                times[name].append(time.perf_counter() - t)
    print(f"{wid} batch {bs} on {dev.name}, {len(times['netcl'])} steps each, in turn"
          + (f" in blocks of {block}" if block > 1 else "") + (", donated" if donate else ""))
    for name, ts in times.items():
        ts.sort()
        med = ts[len(ts) // 2]
        print(f"  {name:6} min {ts[0] * 1e3:8.3f}  q1 {ts[len(ts) // 4] * 1e3:8.3f}  "
              f"median {med * 1e3:8.3f} ms  -> {1 / med:8.1f} steps/s")


if __name__ == "__main__":
    main()
