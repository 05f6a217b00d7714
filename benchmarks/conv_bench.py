"""Time the convolutions of workload W5 (BENCHMARKS.md): forward and both gradients.

    python benchmarks/conv_bench.py                  # batch 32 (the CPU shape)
    python benchmarks/conv_bench.py --batch 256      # the GPU shape
    python benchmarks/conv_bench.py --impl direct    # force the direct kernel (default: auto)
    python benchmarks/conv_bench.py --dtype float64 --repeats 11 --pool
    python benchmarks/conv_bench.py --batch 256 --dtype bfloat16   # 16-bit operands
    python benchmarks/conv_bench.py --im2col generic # the im2col kernel of the GEMM path
                                                     # (special, or implicit: P never stored;
                                                     # default: implicit on GPUs)
    python benchmarks/conv_bench.py --im2col-time    # also time each im2col alone (GB/s)

W5's convolutions are 3x3, stride 1, SAME, NHWC input / HWIO kernel:
    conv1 32x32x3 -> 32,   conv2 32x32x32 -> 64,   conv3 16x16x64 -> 128 (after a 2x2 pool).
For each: the forward conv, the input gradient and the kernel gradient (the two convolutions
conv_general_dilated's vjp binds), each timed as the median of --repeats runs after warm-up
with the device synchronised, reported in ms and GFLOP/s (2*N*H*W*Cin*Cout*9 flops each).
--pool also times W5's 2x2 max pools (forward and select_and_scatter_add backward).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402
import netcl.numpy as jnp  # noqa: E402
from netcl.primitives import conv as C  # noqa: E402

W5 = [("conv1", 32, 3, 32), ("conv2", 32, 32, 64), ("conv3", 16, 64, 128)]
DN = ("NHWC", "HWIO", "NHWC")


def timeit(fn, repeats, warmup=2):
    """(median wall seconds, median process CPU seconds) of fn() run to completion. On a
    CPU device the CPU time (all threads, PoCL's workers included) is the steadier figure
    when other processes share the cores; wall ~ CPU / cores on an idle machine."""
    for _ in range(warmup):
        netcl.block_until_ready(fn())
    ts, cs = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        netcl.block_until_ready(fn())
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return statistics.median(ts), statistics.median(cs)


def record_im2col():
    """A list that collects the im2col launchers the GEMM path builds from now on, each
    remembering the input buffer of its last call."""
    from netcl.primitives.conv import conv_gemm
    found, make = [], conv_gemm._im2col_launcher

    def recording(*a, **k):
        run = make(*a, **k)

        def rec(p_buf, x_buf):
            rec.x_buf = x_buf
            run(p_buf, x_buf)
        rec.run, rec.x_buf = run, None
        found.append(rec)
        return rec
    conv_gemm._im2col_launcher = recording
    return found


def time_im2col(dev, recs, repeats):
    """Time each recorded im2col alone into a scratch P: the mean of `repeats` back-to-back
    launches, the queue drained before and after."""
    import pyopencl as cl
    for rec in recs:
        run = rec.run
        p = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, run.p_bytes)
        run(p, rec.x_buf)
        dev.queue.finish()
        t0 = time.perf_counter()
        for _ in range(repeats):
            run(p, rec.x_buf)
        dev.queue.finish()
        t = (time.perf_counter() - t0) / repeats
        print(f"{'':6s} {'im2col':6s} {t * 1e3:8.3f} ms  {run.p_bytes / t / 1e9:7.1f} GB/s "
              f"written  ({run.mode}, {run.items} work-items, P {run.p_bytes / 1e6:.1f} MB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--dtype", default="float32",
                    choices=["float32", "float64", "bfloat16", "float16"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--impl", default="auto", choices=["auto", "direct", "gemm"])
    ap.add_argument("--im2col", default="auto",
                    choices=["auto", "generic", "special", "implicit"],
                    help="how the GEMM path makes P (auto: implicit on GPUs, generic on CPUs)")
    ap.add_argument("--im2col-vec", type=int, default=None, choices=[1, 2, 4, 8],
                    help="most P elements per work-item of the special im2col (default 4)")
    ap.add_argument("--im2col-time", action="store_true",
                    help="also time each pass's im2col kernel alone (GB/s of P written)")
    ap.add_argument("--pool", action="store_true", help="also time the 2x2 max pools")
    args = ap.parse_args()
    im2cols = record_im2col() if args.im2col_time else None
    if args.impl != "auto":
        C._impl_override = args.impl
    if args.im2col != "auto":
        C._im2col_override = args.im2col
    if args.im2col_vec is not None:
        from netcl.primitives.conv import conv_gemm
        conv_gemm._IM2COL_VEC = args.im2col_vec
    dev = netcl.default_device()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"device: {dev.name} ({dev.kind}); batch {args.batch}; {args.dtype}; impl "
          f"{args.impl}; im2col {args.im2col}; median of {args.repeats}; host load average "
          f"{load:.1f}")
    rng = np.random.default_rng(0)
    dt = np.dtype(getattr(jnp, args.dtype))
    params = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                  rhs_dilation=(1, 1), feature_group_count=1, batch_group_count=1,
                  precision=None, preferred_element_type=None)
    total = {"fwd": 0.0, "dlhs": 0.0, "drhs": 0.0}
    flops_all = 0
    print(f"{'layer':6s} {'pass':5s} {'ms':>9s} {'GFLOP/s':>9s} {'cpu ms':>9s}")
    for name, hw, cin, cout in W5:
        x = jnp.asarray(rng.standard_normal((args.batch, hw, hw, cin)).astype(dt))
        w = jnp.asarray((rng.standard_normal((3, 3, cin, cout)) / np.sqrt(9 * cin)).astype(dt))
        dn = C.conv_dimension_numbers(x.shape, w.shape, DN)
        p = dict(params, dimension_numbers=dn)
        y = C.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)
        ct = jnp.asarray(rng.standard_normal(y.shape).astype(dt))
        flops = 2 * args.batch * hw * hw * cin * cout * 9
        flops_all += flops
        runs = {
            "fwd": lambda: C.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN),
            "dlhs": lambda: C._conv_transpose_lhs(ct, x, w, **p),
            "drhs": lambda: C._conv_transpose_rhs(ct, x, w, **p),
        }
        for kind, fn in runs.items():
            t, c = timeit(fn, args.repeats)
            total[kind] += t
            print(f"{name:6s} {kind:5s} {t * 1e3:9.2f} {flops / t / 1e9:9.1f} {c * 1e3:9.2f}")
            if im2cols:
                time_im2col(dev, im2cols, args.repeats)
            if im2cols is not None:
                im2cols.clear()
    t_all = sum(total.values())
    print(f"{'total':6s} {'all':5s} {t_all * 1e3:9.2f} {3 * flops_all / t_all / 1e9:9.1f}"
          f"   (fwd {total['fwd'] * 1e3:.1f} ms, dlhs {total['dlhs'] * 1e3:.1f} ms, "
          f"drhs {total['drhs'] * 1e3:.1f} ms)")
    if args.pool:
        for name, hw, c in (("pool1", 32, 64), ("pool2", 16, 128)):
            x = jnp.asarray(rng.standard_normal((args.batch, hw, hw, c)).astype(dt))
            wargs = ((1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            y = C.reduce_window_max(x, *wargs)
            ct = jnp.asarray(rng.standard_normal(y.shape).astype(dt))
            tf, cf = timeit(lambda: C.reduce_window_max(x, *wargs), args.repeats)
            tb, cb = timeit(lambda: C.select_and_scatter_add(ct, x, "ge", *wargs), args.repeats)
            gb = x.size * dt.itemsize / 1e9
            print(f"{name:6s} fwd {tf * 1e3:8.2f} ms ({gb / tf:.1f} GB/s read, cpu "
                  f"{cf * 1e3:.1f} ms)   bwd {tb * 1e3:8.2f} ms (cpu {cb * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
