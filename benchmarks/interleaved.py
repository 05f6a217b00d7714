"""W1-W5 of netcl and JAX timed in turn, in one process (sync after each run).

    python benchmarks/interleaved.py W4 [steps] [block] [--donate]
    python benchmarks/interleaved.py W1 [runs]      # also W2, W3

On a shared machine the same command's figure moves by a third from run to run (the 2-core
CPU here: W4 from 48 to 78 steps/s); steps taken in turn see the same load, so their ratio
is what to read. Prints min, first quartile and median per library, the median CPU time of
a run (process time over every thread: what a run costs whatever the other tenants take)
and the ratio of the median rates. ``block`` > 1 takes that many steps of one library
before switching (a library's worker threads may still spin for a while after its step,
which taxes the other's next step). ``--donate``: both steps donate the parameters and
optimizer state (donate_argnums), updating them in place. W1-W3 time netcl's jitted W1 and
W2 and its W3 matmul against JAX's jitted ones (benchmarks/workloads.py).
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
    dev = netcl.default_device()
    kind = "gpu" if dev.kind == "gpu" else "cpu"
    runs, unit, amount, label = _cases(wid, kind, dev, donate)
    for run, sync in runs.values():
        for _ in range(5):
            run()
        sync()
    times = {name: [] for name in runs}
    cpu = {name: [] for name in runs}
    order = list(runs)
    for i in range(-(-steps // block)):
        for name in (order if i % 2 else order[::-1]):
            run, sync = runs[name]
            for _ in range(block):
                c, t = time.process_time(), time.perf_counter()
                run()
                sync()
                times[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
    print(f"{wid} {label} on {dev.name}, {len(times['netcl'])} runs each, in turn"
          + (f" in blocks of {block}" if block > 1 else "") + (", donated" if donate else ""))
    for name, ts in times.items():
        ts.sort()
        med = ts[len(ts) // 2]
        cs = sorted(cpu[name])
        print(f"  {name:6} min {ts[0] * 1e3:8.3f}  q1 {ts[len(ts) // 4] * 1e3:8.3f}  "
              f"median {med * 1e3:8.3f} ms  -> {amount / med:8.1f} {unit}  "
              f"(cpu median {cs[len(cs) // 2] * 1e3:.3f} ms)")
    if "jax" in times:
        ratio = times["jax"][len(times["jax"]) // 2] / times["netcl"][len(times["netcl"]) // 2]
        print(f"  netcl / jax (median rate): {ratio:.3f}")


def _cases(wid, kind, dev, donate):
    """({library: (run, sync)}, unit, amount per run, label) of workload `wid`: W4/W5's train
    steps, or W1-W3's jitted case (figure: amount / seconds)."""
    if wid in ("W4", "W5"):
        bs = workloads.shapes(kind)[wid]
        model = {"W4": "mlp", "W5": "cnn"}[wid]
        runs = {"netcl": (workloads._netcl_train_step(model, bs, np.random.default_rng(0),
                                                      donate), dev.synchronize)}
        try:
            import jax
            jdev = jax.devices("gpu")[0] if kind == "gpu" and jax.default_backend() == "gpu" \
                else jax.devices("cpu")[0]
            runs["jax"] = workloads._jax_train_step(model, bs, np.random.default_rng(0), jdev,
                                                   donate)
        except ImportError:
            print("(jax not available)")
        return runs, "steps/s", 1.0, f"batch {bs}"
    pick = {"W1": "jit", "W2": "jit", "W3": "eager"}[wid]
    runs, unit, amount, label = {}, None, None, None
    for lib, make in (("netcl", workloads.netcl_cases), ("jax", workloads.jax_cases)):
        try:
            cases = make(kind, {wid})
        except ImportError:
            print(f"({lib} not available)")
            continue
        for cid, variant, shape, fn, sync, unit, amount in cases:
            if cid == wid and (lib == "jax" or variant == pick):
                runs[lib], label = (fn, sync), shape
    return runs, unit, amount, label


if __name__ == "__main__":
    main()
