"""Time W5's convolutions (forward, input and kernel gradients; batch 256) with each of a set
of tensor-core GEMM tiles forced (gemm_mma.MmaConfig), to find the tiles per conv shape.

    python benchmarks/conv_tile_sweep.py [--dtype bfloat16|float32] [--batch 256]

Every product of a pass takes the forced configuration (16-bit operands load 8 to a vector;
split kernel gradients their K step as forced); "table" is conv_gemm's own choice. Figures:
median ms of --repeats synchronised runs per pass and candidate, and the fastest per pass.
"""
import argparse
import dataclasses
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402
import netcl.numpy as jnp  # noqa: E402
from netcl.primitives import conv as C, gemm_mma  # noqa: E402

from conv_bench import DN, W5, timeit  # noqa: E402

M = gemm_mma.MmaConfig
CANDIDATES = [None,  # the table
              M(4, 2, 2, 8), M(4, 2, 2, 4), M(4, 1, 2, 4), M(2, 2, 4, 8), M(2, 2, 4, 4),
              M(4, 1, 4, 4), M(2, 1, 4, 8), M(4, 1, 2, 8), M(8, 1, 2, 8), M(4, 2, 4, 4),
              M(2, 2, 2, 4), M(4, 1, 4, 8)]


def forced(cfg, half):
    """A stand-in for gemm_mma.choose_mma_config returning `cfg` (vec 8 for 16-bit)."""
    def choose(M_, N_, operands="tf32", long_k=False, local_mem=48 * 1024, min_blocks=0):
        c = cfg if operands == "tf32" else dataclasses.replace(cfg, vec=8)
        for bk in ((c.bk, 64) if long_k and operands != "tf32" else (c.bk,)):
            deep = dataclasses.replace(c, bk=bk)
            if deep.local_mem_bytes("float", operands) <= local_mem:
                c = deep
        return c
    return choose


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    dt = np.dtype(getattr(jnp, args.dtype))
    rng = np.random.default_rng(0)
    params = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                  rhs_dilation=(1, 1), feature_group_count=1, batch_group_count=1,
                  precision=None, preferred_element_type=None)
    table = gemm_mma.choose_mma_config
    print(f"{netcl.default_device().name}; {args.dtype}; batch {args.batch}")
    for name, hw, cin, cout in W5[1:]:
        x = jnp.asarray(rng.standard_normal((args.batch, hw, hw, cin)).astype(dt))
        w = jnp.asarray((rng.standard_normal((3, 3, cin, cout)) / np.sqrt(9 * cin)).astype(dt))
        p = dict(params, dimension_numbers=C.conv_dimension_numbers(x.shape, w.shape, DN))
        y = C.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)
        ct = jnp.asarray(rng.standard_normal(y.shape).astype(dt))
        runs = {"fwd": lambda: C.conv_general_dilated(x, w, (1, 1), "SAME",
                                                      dimension_numbers=DN),
                "dlhs": lambda: C._conv_transpose_lhs(ct, x, w, **p),
                "drhs": lambda: C._conv_transpose_rhs(ct, x, w, **p)}
        for kind, fn in runs.items():
            best = []
            for cfg in CANDIDATES:
                gemm_mma.choose_mma_config = table if cfg is None else forced(cfg, dt.itemsize == 2)
                netcl.test_util.forget_launchers()
                try:
                    t, _ = timeit(fn, args.repeats)
                except Exception as e:    # too much local memory, say
                    print(f"{name} {kind} {cfg}: {type(e).__name__} {str(e)[:100]}")
                    continue
                label = "table" if cfg is None else \
                    f"{cfg.warps_m}x{cfg.warps_n} mi{cfg.mi} nj{cfg.nj} ({cfg.bm}x{cfg.bn})"
                best.append((t, label))
                print(f"{name} {kind:5s} {label:28s} {t * 1e3:8.3f} ms", flush=True)
            gemm_mma.choose_mma_config = table
            best.sort()
            print(f"{name} {kind:5s} fastest: {best[0][1]} {best[0][0] * 1e3:.3f} ms; table "
                  f"{dict((l, t) for t, l in best)['table'] * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
