"""A/B of W5's jitted train step within one process (lent GPU machines differ from call to
call, so compare variants in the same run): steps/s per variant of the conv path.

    python benchmarks/w5_ab.py [batch]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402
from netcl.core.eval import eval_interpreter  # noqa: E402
from netcl.primitives import conv as C  # noqa: E402

import workloads  # noqa: E402

VARIANTS = {  # name: (_im2col_override, jax_default_matmul_precision)
    "im2col fp32": ("special", "highest"),
    "implicit fp32": ("implicit", "highest"),
    "implicit tf32": ("implicit", None),
}


def steps_per_s(bs, repeats=5, n=20):
    run = workloads._netcl_train_step("cnn", bs, np.random.default_rng(0))
    dev = netcl.default_device()
    for _ in range(3):
        run()
    dev.synchronize()
    best = 0
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            run()
        dev.synchronize()
        best = max(best, n / (time.perf_counter() - t))
    return best


def main():
    bs = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    for name, (im2col, precision) in VARIANTS.items():
        C._im2col_override = im2col
        eval_interpreter.launchers.clear()
        with netcl.core.config.default_matmul_precision(precision):
            print(f"W5 batch {bs}, {name:14s}: {steps_per_s(bs):7.1f} steps/s", flush=True)


if __name__ == "__main__":
    main()
