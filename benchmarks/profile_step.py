"""Where a jitted train step spends its time: each step of the compiled executable timed on
its own (device synchronised before and after), summed by primitive.

    python benchmarks/profile_step.py            # W4 (MLP) and W5 (CNN), shapes by device

The sum of the rows is larger than a real step (every step waits for the device here), but
the ranking shows which kernels to work on.
"""
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import netcl  # noqa: E402
from netcl.tree_util import tree_flatten  # noqa: E402

import workloads  # noqa: E402


def executable_of(jitted):
    return next(iter(jitted.cache.values()))


def time_steps(exe, flat, dev, repeats=5):
    totals = collections.defaultdict(float)
    counts = collections.Counter()
    for _ in range(repeats):
        env = [None] * exe.n_slots
        env[:len(flat)] = flat
        for s, c in exe.const_slots:
            env[s] = c
        for prim, params, ins, outs, multi, _ in exe.steps:
            args = [env[i] for i in ins]
            dev.synchronize()
            t = time.perf_counter()
            res = prim.bind(*args, **params)
            dev.synchronize()
            name = prim.name[:40]
            if prim.name in ("dot_general", "conv_general_dilated"):
                name += " " + " x ".join(str(tuple(a.shape)) for a in args)
            totals[name] += (time.perf_counter() - t) / repeats
            counts[name] += 1
            if multi:
                for s, r in zip(outs, res):
                    env[s] = r
            else:
                env[outs[0]] = res
    return totals, {k: v // repeats for k, v in counts.items()}


def main():
    dev = netcl.default_device()
    kind = "gpu" if dev.kind == "gpu" else "cpu"
    sz = workloads.shapes(kind)
    import numpy as np
    for wid, model in (("W4", "mlp"), ("W5", "cnn")):
        run = workloads._netcl_train_step(model, sz[wid], np.random.default_rng(0))
        for _ in range(3):
            run()
        dev.synchronize()
        cells = dict(zip(run.__code__.co_freevars, (c.cell_contents for c in run.__closure__)))
        step, state, x, y = cells["step"], cells["state"], cells["x"], cells["y"]
        exe = executable_of(step)
        flat = tree_flatten(((state[0], state[1], x, y), {}))[0]
        t = time.perf_counter()
        for _ in range(10):
            run()
        dev.synchronize()
        real = (time.perf_counter() - t) / 10
        totals, counts = time_steps(exe, flat, dev)
        print(f"\n{wid} on {dev.name}: {len(exe.steps)} steps; real step {real * 1e3:.2f} ms, "
              f"sum of isolated steps {sum(totals.values()) * 1e3:.2f} ms")
        for name, v in sorted(totals.items(), key=lambda kv: -kv[1])[:14]:
            print(f"  {v * 1e3:8.3f} ms  {counts[name]:3d}x  {name}")


if __name__ == "__main__":
    main()
