"""Time the workloads of ../shared/BENCHMARKS.md and print a table.

    python benchmarks/run.py                       # netcl, shapes by device kind
    python benchmarks/run.py --only W1,W2 --peers  # with JAX and PyTorch where installed
    python benchmarks/run.py --only W4,W5 --peers --precision tf32   # at one precision
    python benchmarks/run.py --only W4b,W5b --peers  # bfloat16 compute, float32 parameters

Figures: the median of repeated runs after warm-up, device synchronised after each run.
Negative `amount` in a case means "time per unit" (us/op, us/call) instead of a rate.

`--precision` puts every library's float32 products and convolutions at one precision:
"highest" (float32 products: netcl's and JAX's jax_default_matmul_precision "highest",
torch's allow_tf32 off for matmuls and cuDNN) or "tf32" (netcl's and JAX's default, TF32 on
NVIDIA sm_80+; torch's allow_tf32 on for both); without it each library keeps its defaults
(torch: TF32 convolutions, float32 matmuls). W3 is "highest" either way.

W4b and W5b (not in the default list) are W4's and W5's steps with bfloat16 compute:
netcl.autocast, JAX with jmp's "p=f32,c=bf16,o=f32" policy, torch.autocast on CUDA (see
workloads.py). `--precision` applies to their float32 products that remain (none of netcl's
or JAX's; torch.autocast's float32 ops).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import workloads  # noqa: E402


def median_time(fn, sync, repeat=15, warmup=3, budget_s=20.0):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    start = time.perf_counter()
    while len(times) < repeat and (time.perf_counter() - start < budget_s or len(times) < 3):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _set_precision(precision, peers):
    import netcl
    netcl.config.update("jax_default_matmul_precision",
                        "highest" if precision == "highest" else None)
    if not peers:
        return
    try:
        import jax
        jax.config.update("jax_default_matmul_precision",
                          "highest" if precision == "highest" else None)
    except ImportError:
        pass
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = \
            precision == "tf32"
    except ImportError:
        pass
    print(f"precision: {precision} for every library")


def _host_line(dev):
    """The host CPU's model and vector extensions, and the device's preferred float vector
    width (a 2-core AVX2 and an AVX-512 host give different CPU figures)."""
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    width = getattr(dev.cl_device, "preferred_vector_width_float", None) \
        if dev.cl_device is not None else None
    return (f"host: {model} ({isa}, {os.cpu_count()} cores); device's preferred float "
            f"vector width {width}; netcl's vector width {dev.target.vector_width}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="W1,W2,W3,W4,W5,W6,W7",
                   help="comma-separated ids, of W1-W7, W4b, W5b")
    p.add_argument("--peers", action="store_true", help="also time JAX and PyTorch")
    p.add_argument("--precision", choices=["highest", "default", "tf32"], default=None,
                   help="one matmul/conv precision for every library (default: each its own; "
                        "'default' is 'tf32', JAX's and netcl's default on NVIDIA sm_80+)")
    args = p.parse_args()
    which = set(args.only.split(","))
    import netcl
    if args.precision:
        _set_precision("tf32" if args.precision == "default" else args.precision, args.peers)
    dev = netcl.default_device()
    kind = "gpu" if dev.kind == "gpu" else "cpu"
    print(f"netcl on {dev.name} ({dev.kind}); shapes for {kind}")
    print(_host_line(dev))
    rows = []
    libs = [("netcl", workloads.netcl_cases)]
    if args.peers:
        libs += [("jax", workloads.jax_cases), ("torch", workloads.torch_cases)]
    for lib, make in libs:
        try:
            cases = make(kind, which)
        except ImportError as e:
            print(f"({lib} not available: {e})")
            continue
        for wid, variant, shape, fn, sync, unit, amount in cases:
            try:
                t = median_time(fn, sync)
            except Exception as e:  # report, keep going with the other workloads
                print(f"{lib} {wid} {variant} failed: {type(e).__name__}: {e}")
                continue
            fig = t * -amount if amount < 0 else amount / t
            rows.append((wid, lib, variant, shape, fig, unit))
            print(f"  {wid} {lib:6} {variant:6} {fig:12.2f} {unit}", flush=True)
    print(f"\n{'id':4} {'lib':6} {'mode':6} {'shape':14} {'figure':>12}  unit")
    for wid, lib, variant, shape, fig, unit in sorted(rows):
        print(f"{wid:4} {lib:6} {variant:6} {shape:14} {fig:12.2f}  {unit}")


if __name__ == "__main__":
    main()
