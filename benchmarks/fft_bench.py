"""Batched 1-D FFTs on the default device (netcl.primitives.fft_kernels) against numpy.fft
on the host.

    python benchmarks/fft_bench.py                              # the default shapes
    python benchmarks/fft_bench.py --shape 256x1024 1x1048576 --dtype complex128
    python benchmarks/fft_bench.py --repeat 41 --inverse
    python benchmarks/fft_bench.py --peers     # + netcl's jitted jnp.fft.fft, JAX, PyTorch

Each shape is BATCHxN: BATCH rows of N complex numbers, transformed along the rows. The
device plan (built, and its kernels compiled, before timing) runs from one raw buffer into
another, --stream of them enqueued back to back and waited for once (so that a GPU's time
is not a launch's round trip; --stream 1 for the latency of one); numpy.fft.fft (pocketfft,
one thread) runs on a host array of the same dtype. Rounds alternate device and host
(--repeat rounds after --warmup); the medians per transform are printed in ms, with GFLOP/s
at the conventional 5 N log2 N flops per row (for every N, as FFT benchmarks count
mixed-radix and Bluestein lengths too: 1000 and 3000 run mixed-radix, the prime 509
Bluestein), the host / device ratio (above 1: the device is faster), the device result's
largest error relative to NumPy's largest output, and the seconds the first call took
(planning, kernel builds: PoCL's disk cache keeps them for later processes).
"""
import argparse
import math
import statistics
import time

import numpy as np
import pyopencl as cl

import netcl
from netcl.primitives.fft_kernels import enqueue_fft, fft_plan, scratch_bytes

DEFAULT_SHAPES = ["256x1024", "1x1048576", "4096x64", "64x4096", "256x1000", "64x3000",
                  "16384x8", "1024x509"]


def _shape(text):
    batch, n = (int(v) for v in text.lower().split("x"))
    return batch, n


def _buffers(device, x, plan):
    mf = cl.mem_flags
    src = cl.Buffer(device.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    dst = cl.Buffer(device.context, mf.READ_WRITE, x.nbytes)
    need = scratch_bytes(plan)
    scratch = cl.Buffer(device.context, mf.READ_WRITE, need) if need else None
    return src, dst, scratch


def bench(device, batch, n, dtype, inverse, repeat, warmup, stream, rng):
    x = (rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))).astype(dtype)
    t0 = time.perf_counter()
    plan = fft_plan(device, n, batch, dtype, inverse)
    src, dst, scratch = _buffers(device, x, plan)
    enqueue_fft(device.queue, plan, src, dst, scratch).wait()
    first = time.perf_counter() - t0                 # plan, build, first run

    got = np.empty_like(x)
    cl.enqueue_copy(device.queue, got, dst).wait()
    host = np.fft.ifft if inverse else np.fft.fft
    want = host(x.astype(np.complex128), axis=-1)
    err = float(np.abs(got - want).max() / np.abs(want).max())

    def device_run():          # `stream` transforms back to back, one wait: time per transform
        t = time.perf_counter()
        for _ in range(stream - 1):
            enqueue_fft(device.queue, plan, src, dst, scratch)
        enqueue_fft(device.queue, plan, src, dst, scratch).wait()
        return (time.perf_counter() - t) / stream

    def host_run():
        t = time.perf_counter()
        host(x, axis=-1)
        return time.perf_counter() - t

    for _ in range(warmup):
        device_run()
        host_run()
    td, th = [], []
    for _ in range(repeat):            # interleaved: device, host, device, host, ...
        td.append(device_run())
        th.append(host_run())
    return plan, statistics.median(td), statistics.median(th), err, first


def _peer_timers(x, inverse, stream):
    """{name: fn() -> seconds per transform} for netcl's public jnp.fft (jitted: the
    dispatch included), JAX's jitted jnp.fft and PyTorch's torch.fft, where installed; each
    runs `stream` transforms back to back and waits once, as the raw plan is timed."""
    import netcl.numpy as njnp
    timers = {}
    name = "ifft" if inverse else "fft"
    xn = njnp.asarray(x)
    fn = netcl.jit(getattr(njnp.fft, name))

    def run_netcl():
        t = time.perf_counter()
        for _ in range(stream):
            y = fn(xn)
        y.block_until_ready()
        return (time.perf_counter() - t) / stream
    timers["netcl jnp.fft"] = run_netcl
    try:
        import jax
        import jax.numpy as jjnp
        xj = jax.device_put(x)
        fj = jax.jit(getattr(jjnp.fft, name))

        def run_jax():
            t = time.perf_counter()
            for _ in range(stream):
                y = fj(xj)
            y.block_until_ready()
            return (time.perf_counter() - t) / stream
        timers[f"JAX ({jax.default_backend()})"] = run_jax
    except ImportError:
        pass
    try:
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        xt = torch.from_numpy(x).to(dev)
        ft = getattr(torch.fft, name)

        def run_torch():
            t = time.perf_counter()
            for _ in range(stream):
                ft(xt)
            if dev == "cuda":
                torch.cuda.synchronize()
            return (time.perf_counter() - t) / stream
        timers[f"PyTorch ({dev})"] = run_torch
    except ImportError:
        pass
    return timers


def peers(args, dtype, rng):
    for text in args.shape:
        batch, n = _shape(text)
        x = (rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))).astype(dtype)
        timers = _peer_timers(x, args.inverse, args.stream)
        times = {k: [] for k in timers}
        for _ in range(args.warmup):
            for f in timers.values():
                f()
        for _ in range(args.repeat):          # interleaved, round by round
            for k, f in timers.items():
                times[k].append(f())
        flops = 5.0 * n * math.log2(max(n, 2)) * batch
        print(f"{text:>12} " + "  ".join(
            f"{k}: {statistics.median(v) * 1e3:.3f} ms ({flops / statistics.median(v) / 1e9:.0f}"
            " GFLOP/s)" for k, v in times.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", nargs="+", default=DEFAULT_SHAPES, help="BATCHxN, e.g. 256x1024")
    p.add_argument("--dtype", default="complex64", choices=["complex64", "complex128"])
    p.add_argument("--inverse", action="store_true", help="time ifft instead of fft")
    p.add_argument("--repeat", type=int, default=21)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--stream", type=int, default=10,
                   help="device transforms enqueued back to back per timed round")
    p.add_argument("--peers", action="store_true",
                   help="also time netcl's jitted jnp.fft, JAX and PyTorch (same rounds)")
    args = p.parse_args()

    device = netcl.default_device()
    if device.is_numpy:
        raise SystemExit("fft_bench: no OpenCL device")
    dtype = np.dtype(args.dtype)
    rng = np.random.default_rng(0)
    print(f"device: {device.name} ({device.platform}); {dtype}, "
          f"{'ifft' if args.inverse else 'fft'}, medians of {args.repeat} rounds of "
          f"{args.stream}")
    print(f"{'shape':>12} {'algorithm':>10} {'passes':>6} {'device ms':>10} {'GFLOP/s':>8} "
          f"{'numpy ms':>9} {'GFLOP/s':>8} {'numpy/dev':>9} {'rel err':>8} {'first s':>8}")
    for text in args.shape:
        batch, n = _shape(text)
        plan, td, th, err, first = bench(device, batch, n, dtype, args.inverse, args.repeat,
                                         args.warmup, args.stream, rng)
        flops = 5.0 * n * math.log2(max(n, 2)) * batch
        print(f"{text:>12} {plan.algorithm:>10} {len(plan.passes):>6} {td * 1e3:10.3f} "
              f"{flops / td / 1e9:8.2f} {th * 1e3:9.3f} {flops / th / 1e9:8.2f} "
              f"{th / td:9.2f} {err:8.1e} {first:8.2f}")
    if args.peers:
        peers(args, dtype, rng)


if __name__ == "__main__":
    main()
