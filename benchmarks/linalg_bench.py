"""Device kernels vs the host path (NumPy's LAPACK) of cholesky, triangular_solve, lu, solve,
slogdet and qr.

    python benchmarks/linalg_bench.py                                   # the default grid
    python benchmarks/linalg_bench.py --op trsm --batch 1 --n 128 256 512 --k 1 64
    python benchmarks/linalg_bench.py --dtype float64 --repeat 21
    python benchmarks/linalg_bench.py --op qr --batch 1 --n 256 1024 --m 2048     # tall

For each (batch, n) of the grid both launchers of the primitive are built for the same
operands (linalg_device.launcher, whatever linalg_device's policy would choose, and the host
launcher of linalg_host) and timed in turn, each call synchronised (the host path waits for
the queue anyway): --repeat rounds of A then B, the medians reported with their ratio
(host / device: above 1 the device kernel wins). trsm solves a lower L (n, n) against b
(n, k), batched; solve a general A (n, n) against b (n, k); qr factors A (m, n), m = n
unless --m is given (the error column: the larger of Q's and R's). The host path of lu is its
NumPy reference (NumPy has no LAPACK getrf): solve and slogdet are the comparisons that
matter.
"""
import argparse
import statistics
import time

import numpy as np

import netcl
import netcl.numpy as jnp
from netcl.core.devices import LOCK
from netcl.primitives import linalg_device as ld
from netcl.primitives import linalg_device_qr as ldq
from netcl.primitives import linalg_host as lh
from netcl.primitives import linalg_lu as llu


def _time(run, args, device):
    t0 = time.perf_counter()
    run(*args)
    device.synchronize()
    return time.perf_counter() - t0


def _operands(op, batch, n, k, dtype, rng, m=None):
    lead = (batch,) if batch > 1 else ()
    if op == "qr":
        return lh.qr_p, (rng.standard_normal(lead + (m or n, n)).astype(dtype),), {}
    if op == "chol":
        x = rng.standard_normal(lead + (n, n))
        a = x @ np.swapaxes(x, -1, -2) / n + np.eye(n)
        return lh.cholesky_p, (a.astype(dtype),), {}
    if op in ("lu", "solve", "slogdet"):
        a = (rng.standard_normal(lead + (n, n)) + np.eye(n)).astype(dtype)
        if op == "solve":
            return lh.solve_p, (a, rng.standard_normal(lead + (n, k)).astype(dtype)), {}
        return (llu.lu_p if op == "lu" else lh.slogdet_p), (a,), {}
    t = np.tril(rng.standard_normal(lead + (n, n)) * 0.5 / n ** 0.5 + 2 * np.eye(n))
    b = rng.standard_normal(lead + (n, k))
    return (lh.triangular_solve_p, (t.astype(dtype), b.astype(dtype)),
            dict(lower=True, transpose_a=False, unit_diagonal=False))


def compare(op, batch, n, k, dtype, repeat, warmup, rng, m=None):
    device = netcl.default_device()
    prim, hosts, params = _operands(op, batch, n, k, dtype, rng, m)
    args = tuple(jnp.asarray(h) for h in hosts)
    out = prim.abstract_eval(*args, **params)
    with LOCK:
        dev = ld.launcher(prim.name, device, args, params, out)
        host = lh._host_launcher(prim)(device, args, params, out)
    if dev is None:
        return None
    # the device result against the host's
    got, want = dev(*args), host(*args)
    pairs = (zip(got, want) if prim.name == "qr" else
             [(got[0], want[0])] if isinstance(got, tuple) else [(got, want)])
    err = 0.0
    for g, w in pairs:
        g, w = np.asarray(g), np.asarray(w)
        err = max(err, float(np.max(np.abs(g - w), initial=0.0)
                             / max(1.0, float(np.max(np.abs(w), initial=0.0)))))
    for _ in range(warmup):
        _time(dev, args, device)
        _time(host, args, device)
    td, th = [], []
    for _ in range(repeat):                # interleaved: A, B, A, B, ...
        td.append(_time(dev, args, device))
        th.append(_time(host, args, device))
    return statistics.median(td), statistics.median(th), err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", choices=("chol", "trsm", "lu", "solve", "slogdet", "qr", "both"),
                    default="both")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 16, 256, 4096])
    ap.add_argument("--n", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256, 512])
    ap.add_argument("--k", type=int, nargs="+", default=[1, 16], help="trsm, solve: columns of b")
    ap.add_argument("--m", type=int, nargs="+", default=[0],
                    help="qr: rows of A (0: n, square)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--max-bytes", type=float, default=3e8,
                    help="skip grid points whose operands exceed this")
    ap.add_argument("--force-device", action="store_true",
                    help="time the device kernels at every size (ignore linalg_device.HOST_WINS)")
    args = ap.parse_args()
    if args.dtype == "float64":
        netcl.config.update("enable_x64", True)
    if args.force_device:
        ld._prefer_host = lambda device, name, n, batch: False
        ldq._prefer_host = lambda device, m, n, batch: False
    dtype = np.dtype(args.dtype)
    rng = np.random.default_rng(0)
    print(f"device: {netcl.default_device()}  dtype {dtype}  median of {args.repeat}, "
          "interleaved")
    print(f"{'op':5} {'batch':>6} {'m':>5} {'n':>5} {'k':>4} {'device ms':>10} "
          f"{'host ms':>10} {'host/dev':>9} {'rel err':>9}")
    ops = ("chol", "trsm") if args.op == "both" else (args.op,)
    for op in ops:
        for n in args.n:
            for m in (args.m if op == "qr" else (0,)):
                m = m or n
                for batch in args.batch:
                    for k in (args.k if op in ("trsm", "solve") else (0,)):
                        if batch * m * (n + k) * dtype.itemsize > args.max_bytes:
                            continue
                        r = compare(op, batch, n, k, dtype, args.repeat, args.warmup, rng, m)
                        head = f"{op:5} {batch:6} {m:5} {n:5} {k:4}"
                        if r is None:
                            print(f"{head}   (host path by policy)")
                            continue
                        td, th, err = r
                        print(f"{head} {td * 1e3:10.3f} {th * 1e3:10.3f} {th / td:9.2f} "
                              f"{err:9.1e}", flush=True)


if __name__ == "__main__":
    main()
