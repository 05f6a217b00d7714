"""Time W5's convolutions (forward, input and kernel gradients; batch 256) with each of a set
of tensor-core GEMM tiles forced, to find the tiles per conv shape.

    python benchmarks/conv_tile_sweep.py [--dtype bfloat16|float32] [--batch 256] [--mma]

Every product of a pass takes the forced configuration: by default gemm_mma_staged.py's
(the products whose P tiles arrive by cp.async), with `--mma` gemm_mma.py's (16-bit
operands load 8 to a vector; split kernel gradients their K step as forced); "table" is
conv_gemm's own choice. Figures: median ms of --repeats synchronised runs per pass and
candidate, and the fastest per pass.
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
from netcl.primitives import conv as C, gemm_mma, gemm_mma_staged as staged  # noqa: E402

from conv_bench import DN, W5, timeit  # noqa: E402

M = gemm_mma.MmaConfig
CANDIDATES = [None,  # the table
              M(4, 2, 2, 8), M(4, 2, 2, 4), M(4, 1, 2, 4), M(2, 2, 4, 8), M(2, 2, 4, 4),
              M(4, 1, 4, 4), M(2, 1, 4, 8), M(4, 1, 2, 8), M(8, 1, 2, 8), M(4, 2, 4, 4),
              M(2, 2, 2, 4), M(4, 1, 4, 8)]
S = staged.StagedConfig
STAGED = [None,
          S(2, 2, 4, 4, bk=64, stages=3, group_m=8), S(2, 2, 4, 8, bk=64, stages=3, group_m=8),
          S(4, 1, 2, 8, bk=64, stages=3, group_m=8), S(2, 1, 4, 8, bk=64, stages=3, group_m=8),
          S(4, 2, 4, 4, bk=64, stages=3, group_m=8), S(4, 1, 4, 8, bk=64, stages=3, group_m=8),
          S(2, 2, 4, 4, bk=32, stages=4, group_m=8), S(2, 2, 2, 4, bk=64, stages=3, group_m=8),
          S(4, 2, 2, 8, bk=64, stages=3, group_m=8), S(2, 2, 4, 4, bk=64, stages=4, group_m=8),
          S(4, 2, 2, 4, bk=64, stages=3, group_m=8), S(2, 2, 4, 4, bk=64, stages=3, group_m=1)]


def forced_staged(cfg, table):
    """A stand-in for gemm_mma_staged.choose_config returning `cfg` (TF32 operands: the same
    bytes per K step) where its tiles fit, else the table's choice."""
    import dataclasses as dc

    def choose(operands, M_, N_, local_mem, ta=False, tb=False, async_copy=True):
        c = dc.replace(cfg, bk=cfg.bk // 2) if operands == "tf32" else cfg
        try:
            c.validate(operands)
        except ValueError:
            return table(operands, M_, N_, local_mem, ta, tb, async_copy)
        if c.local_mem_bytes(ta, tb, async_copy, operands) + 256 > local_mem:
            return table(operands, M_, N_, local_mem, ta, tb, async_copy)
        return c
    return choose


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
    ap.add_argument("--mma", action="store_true", help="force gemm_mma.py's tiles instead")
    args = ap.parse_args()
    dt = np.dtype(getattr(jnp, args.dtype))
    rng = np.random.default_rng(0)
    params = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                  rhs_dilation=(1, 1), feature_group_count=1, batch_group_count=1,
                  precision=None, preferred_element_type=None)
    mod, attr = (gemm_mma, "choose_mma_config") if args.mma else (staged, "choose_config")
    table = getattr(mod, attr)
    cands = CANDIDATES if args.mma else STAGED
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
            for cfg in cands:
                setattr(mod, attr, table if cfg is None else
                        forced(cfg, dt.itemsize == 2) if args.mma else forced_staged(cfg, table))
                netcl.test_util.forget_launchers()
                try:
                    t, _ = timeit(fn, args.repeats)
                except Exception as e:    # too much local memory, say
                    print(f"{name} {kind} {cfg}: {type(e).__name__} {str(e)[:100]}")
                    continue
                label = "table" if cfg is None else \
                    f"{cfg.warps_m}x{cfg.warps_n} mi{cfg.mi} nj{cfg.nj} ({cfg.bm}x{cfg.bn})" + \
                    ("" if args.mma else f" bk{cfg.bk} s{cfg.stages} g{cfg.group_m}")
                best.append((t, label))
                print(f"{name} {kind:5s} {label:28s} {t * 1e3:8.3f} ms", flush=True)
            setattr(mod, attr, table)
            best.sort()
            print(f"{name} {kind:5s} fastest: {best[0][1]} {best[0][0] * 1e3:.3f} ms; table "
                  f"{dict((l, t) for t, l in best)['table'] * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
