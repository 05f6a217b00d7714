"""Peak device memory of W4's and W5's jitted train steps, float32 against bfloat16 compute
(W4b, W5b: the loss under netcl.autocast), from the buffer pool's high-water mark.

    python benchmarks/step_memory.py              # W5 and W5b at the device's shape
    python benchmarks/step_memory.py W4 W4b W5 W5b

For each step: the bytes live before a call (parameters, optimizer state, the batch), and the
most bytes live at once during calls on top of them (new parameters and state, activations
kept for the backward pass, gradients, temporaries), as the pool counts them (size classes:
up to 12.5% above the requested bytes). The pool has no reset of its high-water mark, so the
script sets it to the bytes in use before timing each step.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import workloads  # noqa: E402


def step_peak(wid, calls=3):
    """(bytes live before a call, peak bytes above that during `calls` calls) of wid's step."""
    import netcl
    dev = netcl.default_device()
    run, _, _ = workloads.warm_train_step(wid, warmup=2)
    pool = dev.pool
    dev.synchronize()
    before = pool.bytes_in_use
    pool.peak_bytes_in_use = before     # (no reset method: the counter is a plain attribute)
    for _ in range(calls):
        run()
    dev.synchronize()
    return before, pool.peak_bytes_in_use - before


def main():
    import netcl
    which = sys.argv[1:] or ["W5", "W5b"]
    dev = netcl.default_device()
    if dev.pool is None:
        print(f"{dev.name} has no buffer pool (the NumPy fallback): nothing to measure")
        return
    kind = "gpu" if dev.kind == "gpu" else "cpu"
    print(f"netcl on {dev.name} ({dev.kind}); shapes for {kind}")
    print(f"{'id':4} {'batch':>5} {'live before':>12} {'step peak':>12} {'total':>12}")
    for wid in which:
        before, peak = step_peak(wid)
        bs = workloads.shapes(kind)[wid[:2]]
        print(f"{wid:4} {bs:5d} {before / 2**20:9.2f} MiB {peak / 2**20:9.2f} MiB "
              f"{(before + peak) / 2**20:9.2f} MiB", flush=True)


if __name__ == "__main__":
    main()
