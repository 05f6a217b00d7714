"""W3 and W3h (BENCHMARKS.md): square matmul through `netcl.numpy.matmul`, eager, beside
PyTorch (cuBLAS) and JAX in the same run.

    python benchmarks/matmul_bench.py                      # W3: float32, "highest"
    python benchmarks/matmul_bench.py --precision default  # float32 at the default (TF32 on
                                                           # tensor-core GPUs)
    python benchmarks/matmul_bench.py --dtype bfloat16 --peers   # W3h, with torch and JAX
    python benchmarks/matmul_bench.py --all --peers        # every row above, one table
    NETCL_DEVICE=gpu python benchmarks/matmul_bench.py --check

n = 1024 on a CPU device, 8192 on a GPU. Half rows (float16, bfloat16) have 16-bit inputs
and float32 accumulation in every library (16-bit results). Precision per row: "highest"
is float32 products everywhere (torch: allow_tf32 off; JAX: precision=HIGHEST); "default"
is each library's default for float32 (netcl and JAX: TF32 on NVIDIA sm_80+; torch with
allow_tf32 on, which is not its default).

Figures: the median of `--repeats` timed calls after `--warmup` untimed ones, each
synchronised before and after (so netcl's dispatch cost is included), as TFLOP/s (GPU) or
GFLOP/s (CPU), 2 n^3 flops per product. `--check` also prints each result's largest error
against a float64 product of the same (rounded) inputs, relative to the largest |C|.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netcl  # noqa: E402
import netcl.numpy as jnp  # noqa: E402

ROWS = [("float32", "highest"), ("float32", "default"), ("float16", None), ("bfloat16", None)]


def _median(fn, sync, warmup, repeats, budget_s=20.0):
    for _ in range(warmup):
        out = fn()
    sync(out)
    t0 = time.perf_counter()
    sync(fn())
    one = time.perf_counter() - t0
    repeats = repeats or max(3, min(10, int(budget_s / max(one, 1e-6))))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        sync(out)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _inputs(n, dtype):
    """Two n x n float32 arrays of normal values, rounded to `dtype` (as float32)."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        import ml_dtypes
        return (a.astype(ml_dtypes.bfloat16).astype(np.float32),
                b.astype(ml_dtypes.bfloat16).astype(np.float32))
    return a, b


def _error(got, a, b):
    if a.shape[0] > 2048:      # the float64 reference on a slice of rows
        a, got = a[:256], np.asarray(got)[:256]
    want = a.astype(np.float64) @ b.astype(np.float64)
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / np.max(np.abs(want)))


def netcl_row(n, dtype, precision, args, a_h, b_h):
    if dtype == "bfloat16":
        from netcl.core import dtypes
        dt = dtypes.bfloat16
    else:
        dt = np.dtype(dtype)
    a, b = jnp.asarray(a_h).astype(dt), jnp.asarray(b_h).astype(dt)
    t0 = time.perf_counter()
    jnp.matmul(a, b, precision=precision).block_until_ready()
    first = time.perf_counter() - t0
    med, c = _median(lambda: jnp.matmul(a, b, precision=precision),
                     lambda x: x.block_until_ready(), args.warmup, args.repeats)
    note = f"first call incl. build {first:.2f} s"
    if args.check:
        note += f"; max error {_error(np.asarray(c).astype(np.float32), a_h, b_h):.2e}"
    return med, note


def torch_row(n, dtype, precision, args, a_h, b_h):
    import torch
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = precision == "default"
    dt = getattr(torch, dtype)
    a, b = torch.from_numpy(a_h).to(dev).to(dt), torch.from_numpy(b_h).to(dev).to(dt)
    sync = (lambda x: torch.cuda.synchronize()) if dev == "cuda" else (lambda x: None)
    med, c = _median(lambda: a @ b, sync, args.warmup, args.repeats)
    note = f"allow_tf32={torch.backends.cuda.matmul.allow_tf32}" if dtype == "float32" else ""
    if args.check:
        note += f" max error {_error(c.float().cpu().numpy(), a_h, b_h):.2e}"
    return med, note


def jax_row(n, dtype, precision, args, a_h, b_h):
    import jax
    import jax.numpy as jjnp
    dev = jax.devices()[0]
    dt = getattr(jjnp, dtype)
    a, b = (jax.device_put(jjnp.asarray(x, dtype=dt), dev) for x in (a_h, b_h))
    prec = None if precision in (None, "default") else precision
    f = jax.jit(lambda a, b: jjnp.matmul(a, b, precision=prec))
    med, c = _median(lambda: f(a, b), jax.block_until_ready, args.warmup, args.repeats)
    note = f"precision={prec}"
    if args.check:
        note += f" max error {_error(np.asarray(c, np.float32), a_h, b_h):.2e}"
    return med, note


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="matrix side (default 1024 on CPU, "
                    "8192 on GPU)")
    ap.add_argument("--dtype", default="float32",
                    choices=["float32", "float64", "float16", "bfloat16"])
    ap.add_argument("--precision", default="highest", choices=["highest", "default"],
                    help="float32 rows: 'highest' (W3) or each library's default")
    ap.add_argument("--all", action="store_true", help="W3 at highest and default, W3h fp16 "
                    "and bf16")
    ap.add_argument("--peers", action="store_true", help="also PyTorch and JAX")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=None, help="timed calls (default: 10, or "
                    "fewer so that a row takes about 20 s)")
    ap.add_argument("--check", action="store_true", help="print each result's error")
    args = ap.parse_args(argv)

    dev = netcl.default_device()
    gpu = dev.kind == "gpu"
    n = args.n or (8192 if gpu else 1024)
    unit, scale = ("TFLOP/s", 1e12) if gpu else ("GFLOP/s", 1e9)
    rows = ROWS if args.all else [(args.dtype, args.precision if args.dtype in
                                   ("float32", "float64") else None)]
    libs = [("netcl", netcl_row)] + ([("torch", torch_row), ("jax", jax_row)]
                                     if args.peers else [])
    print(f"device: {dev}; n = {n}")
    results = []
    for dtype, precision in rows:
        a_h, b_h = _inputs(n, dtype)
        for lib, fn in libs:
            try:
                med, note = fn(n, dtype, precision, args, a_h, b_h)
            except Exception as e:     # a library without this dtype or device: say so
                print(f"{lib} {dtype} {precision}: failed: {type(e).__name__}: {e}"[:400])
                continue
            fig = 2.0 * n ** 3 / med / scale
            wid = "W3h" if dtype in ("float16", "bfloat16") else "W3"
            results.append((wid, dtype, precision or "-", lib, med, fig, note))
            print(f"{wid:4} {dtype:9} {precision or '-':8} {lib:6} {med * 1e3:9.3f} ms "
                  f"{fig:9.1f} {unit}  {note}", flush=True)
    if not dev.is_numpy and gpu:
        from netcl.primitives import dot_tensor_cores
        print(f"half tiles at n = {n}: "
              f"{dot_tensor_cores.half_config(dev, 'bf16', n, n, False, False)}")
    return results


if __name__ == "__main__":
    main()
