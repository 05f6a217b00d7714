"""Check and time netcl GEMM kernel configurations (workload W3: square fp32 matmul).

    python benchmarks/gemm_tune.py                 # default device, n = 1024 (CPU) / 8192 (GPU)
    python benchmarks/gemm_tune.py --n 2048 --repeats 7
    python benchmarks/gemm_tune.py --w4            # the GEMM shapes of workload W4 (CPU)
    NETCL_GEMM_DEVICE=NVIDIA python benchmarks/gemm_tune.py --trans

Prints GFLOP/s per configuration (median of repeats after warm-up, device
synchronised around each run), with torch.matmul (TF32 off) beside it when
torch with CUDA is importable, and numpy on a CPU device.  ``--out FILE``
also writes the table as markdown.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from netcl.primitives import gemm as G  # noqa: E402
from netcl.primitives import gemm_tiers as GT  # noqa: E402
from netcl.primitives.gemm import GemmConfig  # noqa: E402


def pick_device():
    want = os.environ.get("NETCL_GEMM_DEVICE", "").lower()
    devs = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
    if not devs:
        raise SystemExit("no OpenCL device")
    if want:
        for p, d in devs:
            if want in d.name.lower() or want in p.name.lower():
                return d
        raise SystemExit(f"no OpenCL device matches {want!r}: {[d.name for _, d in devs]}")
    return devs[0][1]


def cpu_candidates(dtype):
    C = lambda **k: GemmConfig(kind="cpu", **k)  # noqa: E731
    if dtype == "double":
        return [C(wg_m=16, wg_n=8, tm=6, tn=8, bk=256, vec=4),
                C(wg_m=16, wg_n=8, tm=4, tn=8, bk=256, vec=4),
                C(wg_m=8, wg_n=8, tm=6, tn=8, bk=128, vec=4)]
    # PoCL 3.0, 2 znver3 cores, n = 1024, GFLOP per CPU-second (robust to other
    # load on the machine): 16x4 kc512 74, 16x8 kc256 60, 16x2 kc512 78 (but TT 38).
    return [
        C(wg_m=16, wg_n=4, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=11, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=11, wg_n=4, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=22, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=16, wg_n=2, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=16, wg_n=8, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=16, wg_n=8, tm=6, tn=16, bk=256, vec=8, m_fastest=True),
        C(wg_m=16, wg_n=8, tm=4, tn=16, bk=256, vec=8),
        C(wg_m=16, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=8, wg_n=8, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=16, wg_n=8, tm=6, tn=16, bk=128, vec=8),
        C(wg_m=16, wg_n=8, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=32, wg_n=8, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=16, wg_n=8, tm=3, tn=32, bk=256, vec=8),
        C(wg_m=16, wg_n=8, tm=8, tn=8, bk=256, vec=8),
        C(wg_m=16, wg_n=4, tm=4, tn=32, bk=256, vec=16),
        GemmConfig(kind="tiled", wg_m=8, wg_n=8, tm=4, tn=4, bk=16, vec=4, rvec=4, double_buffer=False),
    ]


def gpu_candidates(dtype):
    T = lambda **k: GemmConfig(kind="tiled", **k)  # noqa: E731
    if dtype == "double":
        return [T(wg_m=16, wg_n=16, tm=8, tn=8, bk=8, vec=2, rvec=2, pad=2),
                T(wg_m=16, wg_n=16, tm=4, tn=4, bk=8, vec=2, rvec=2, pad=2),
                T(wg_m=16, wg_n=16, tm=8, tn=4, bk=8, vec=2, rvec=2, pad=2),
                T(wg_m=16, wg_n=16, tm=4, tn=8, bk=8, vec=2, rvec=2, pad=2),
                T(wg_m=16, wg_n=16, tm=8, tn=4, bk=16, vec=2, rvec=2, pad=2),
                T(wg_m=8, wg_n=8, tm=4, tn=4, bk=8, vec=2, rvec=2, pad=2, double_buffer=False),
                T(wg_m=8, wg_n=8, tm=2, tn=2, bk=8, vec=2, rvec=2, pad=2, double_buffer=False)]
    # H200, n = 8192 (TFLOP/s), rounds 1-2 (benchmarks/results/gemm_h200_round*):
    # 128x128 16x8/thread 44.8, 256x128 16x8 44.6, 128x128 8x8 40.8 (bk16 35.9,
    # single-buffered 26.2), 128x256 8x16 37.3, 128x128 8x16 36.7, 64x128 4x8 37.8.
    return [
        T(wg_m=8, wg_n=16, tm=16, tn=8, bk=8, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=16, wg_n=16, tm=8, tn=8, bk=8, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=16, wg_n=16, tm=4, tn=8, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=8, wg_n=8, tm=4, tn=4, bk=16, vec=4, rvec=4, pad=4, double_buffer=False),
        T(wg_m=8, wg_n=16, tm=16, tn=8, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=16, wg_n=16, tm=16, tn=8, bk=8, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=8, wg_n=16, tm=16, tn=8, bk=8, vec=4, rvec=4, pad=0, double_buffer=True),
        T(wg_m=8, wg_n=16, tm=16, tn=4, bk=8, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=4, wg_n=16, tm=16, tn=8, bk=8, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=16, wg_n=16, tm=8, tn=8, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
        T(wg_m=16, wg_n=16, tm=4, tn=4, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
    ]


def cfg_str(c: GemmConfig) -> str:
    if c.kind == "cpu":
        s = f"cpu {c.bm}x{c.bn} wg{c.wg_m}x{c.wg_n} {c.tm}x{c.tn}/v{c.vec} kc{c.bk}"
        return s + (" mfast" if c.m_fastest else "")
    return (f"tiled {c.bm}x{c.bn} wg{c.wg_m}x{c.wg_n} {c.tm}x{c.tn} bk{c.bk} v{c.vec} r{c.rvec} "
            f"p{c.pad}{' db' if c.double_buffer else ''}")


class Runner:
    def __init__(self, dev):
        self.ctx = cl.Context([dev])
        self.q = cl.CommandQueue(self.ctx)
        self.dev = dev
        self.kernels = {}

    def kernel(self, cfg, dtype, ta, tb):
        key = (cfg, dtype, ta, tb)
        if key not in self.kernels:
            t = time.perf_counter()
            prg = cl.Program(self.ctx, G.gemm_source(cfg, dtype, ta, tb)).build()
            k = cl.Kernel(prg, G.GEMM_KERNEL_NAME)
            self.kernels[key] = (k, time.perf_counter() - t)
            if getattr(self, "verbose", False):
                try:
                    p2 = cl.Program(self.ctx, G.gemm_source(cfg, dtype, ta, tb)).build(options=["-cl-nv-verbose"])
                    log = p2.get_build_info(self.dev, cl.program_build_info.LOG)
                    info = [ln.strip() for ln in log.splitlines()
                            if "registers" in ln or "spill" in ln or "smem" in ln.lower()]
                    print("    ptxas:", " | ".join(info)[:300])
                except Exception as ex:  # pragma: no cover
                    print("    ptxas info unavailable:", ex)
        return self.kernels[key]

    def setup(self, cfg, dtype, ta, tb, M, N, K, a, b, c_buf):
        k, _ = self.kernel(cfg, dtype, ta, tb)
        i32 = np.int32
        lda = M if ta else K
        ldb = K if tb else N
        k.set_args(c_buf, a, b, i32(M), i32(N), i32(K), i32(lda), i32(ldb), i32(N),
                   i32(0), i32(0), i32(0), i32(0), i32(0), i32(0))
        g, l = G.launch_dims(cfg, 1, M, N)
        return lambda: cl.enqueue_nd_range_kernel(self.q, k, g, l)


def check_small(r: Runner, cfg, dtype, ta, tb):
    """Awkward shapes against numpy; returns max relative error."""
    npdt = np.float32 if dtype == "float" else np.float64
    rng = np.random.default_rng(1)
    worst = 0.0
    for (M, N, K) in [(cfg.bm + 1, cfg.bn - 1, 37), (131, 67, 257)]:
        a = rng.standard_normal((M, K)).astype(npdt)
        b = rng.standard_normal((K, N)).astype(npdt)
        am = np.ascontiguousarray(a.T) if ta else a
        bm = np.ascontiguousarray(b.T) if tb else b
        mf = cl.mem_flags
        A = cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=am)
        B = cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bm)
        c = np.full((M, N), np.nan, npdt)
        C = cl.Buffer(r.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=c)
        r.setup(cfg, dtype, ta, tb, M, N, K, A, B, C)()
        cl.enqueue_copy(r.q, c, C)
        r.q.finish()
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = float(np.max(np.abs(c - ref)) / (np.max(np.abs(ref)) + 1e-30))
        worst = max(worst, err if np.isfinite(err) else np.inf)
    return worst


def time_fn(fn, sync, warmup, repeats, with_min=False):
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t)
    return (statistics.median(ts), min(ts)) if with_min else statistics.median(ts)


def bench_torch(n, warmup, repeats):
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a = torch.randn(n, n, device="cuda", dtype=torch.float32)
    b = torch.randn(n, n, device="cuda", dtype=torch.float32)
    out = torch.empty(n, n, device="cuda", dtype=torch.float32)
    t = time_fn(lambda: torch.matmul(a, b, out=out), torch.cuda.synchronize, warmup, repeats)
    return 2.0 * n ** 3 / t / 1e9, f"torch {torch.__version__} cuda matmul fp32 (allow_tf32=False)"


# The GEMMs of one W4 train step (MLP 784-1024-1024-10, batch 128) as the kernel sees
# them: (label, M, N, K, trans_a, trans_b).
W4_SHAPES = [
    ("fwd1", 128, 1024, 784, False, False),
    ("fwd2", 128, 1024, 1024, False, False),
    ("fwd3", 128, 10, 1024, False, False),
    ("dx2", 128, 1024, 1024, False, True),
    ("dx3", 128, 1024, 10, False, True),
    ("dW1", 784, 1024, 128, True, False),
    ("dW2", 1024, 1024, 128, True, False),
    ("dW3", 1024, 10, 128, True, False),
]


def w4_candidates():
    C = lambda **k: GemmConfig(kind="cpu", **k)  # noqa: E731
    return [
        C(wg_m=8, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=16, wg_n=4, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=8, wg_n=4, tm=6, tn=16, bk=256, vec=8, m_fastest=True),
        C(wg_m=11, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=11, wg_n=4, tm=6, tn=16, bk=256, vec=8, m_fastest=True),
        C(wg_m=16, wg_n=4, tm=4, tn=24, bk=256, vec=8),
        C(wg_m=16, wg_n=4, tm=4, tn=24, bk=256, vec=8, m_fastest=True),
        C(wg_m=16, wg_n=4, tm=4, tn=16, bk=256, vec=8),
        C(wg_m=8, wg_n=8, tm=8, tn=8, bk=256, vec=8),
        C(wg_m=8, wg_n=8, tm=6, tn=16, bk=256, vec=8),
        C(wg_m=8, wg_n=4, tm=6, tn=16, bk=128, vec=8),
        C(wg_m=8, wg_n=4, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=11, wg_n=4, tm=6, tn=16, bk=512, vec=8),
        C(wg_m=22, wg_n=4, tm=6, tn=16, bk=256, vec=8),
    ]


def bench_w4(dev, cands, repeats, inner=10, shapes=W4_SHAPES):
    """Per W4 shape: ms and GFLOP/s of choose_config's pick and of each candidate
    (median over ``repeats`` batches of ``inner`` back-to-back launches, queue finished
    around each batch; ``cpu`` is process time, all threads, per launch)."""
    r = Runner(dev)
    mf = cl.mem_flags
    rng = np.random.default_rng(0)
    total = {}
    for label, M, N, K, ta, tb in shapes:
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        A = cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a.T) if ta else a)
        B = cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(b.T) if tb else b)
        Cb = cl.Buffer(r.ctx, mf.READ_WRITE, size=M * N * 4)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        chosen = GT.choose_config(dev, "float", M, N, K, ta)
        flop = 2.0 * M * N * K
        for cfg in [chosen] + [c for c in cands if c != chosen]:
            fn = r.setup(cfg, "float", ta, tb, M, N, K, A, B, Cb)
            fn()
            c = np.empty((M, N), np.float32)
            cl.enqueue_copy(r.q, c, Cb)
            r.q.finish()
            err = float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
            for _ in range(3):
                fn()
            r.q.finish()
            walls, cpus = [], []
            for _ in range(repeats):
                t, p = time.perf_counter(), time.process_time()
                for _ in range(inner):
                    fn()
                r.q.finish()
                walls.append((time.perf_counter() - t) / inner)
                cpus.append((time.process_time() - p) / inner)
            t, tc = statistics.median(walls), statistics.median(cpus)
            tmin = min(walls)
            tag = " [chosen]" if cfg == chosen else ""
            print(f"{label:5s} {M:5d}x{N:5d}x{K:5d} {'T' if ta else 'N'}{'T' if tb else 'N'} "
                  f"{cfg_str(cfg) + tag:52s} {t * 1e3:7.3f} ms (min {tmin * 1e3:7.3f}) {flop / t / 1e9:6.1f} GFLOP/s "
                  f"cpu {tc * 1e3:7.3f} ms err {err:.1e}{'' if err < 1e-4 else ' WRONG'}", flush=True)
            if cfg == chosen:
                total[label] = t
    print(f"chosen configs, sum over the W4 GEMMs (dW2/fwd2/dx2 once each): "
          f"{sum(total.values()) * 1e3:.3f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--dtype", default="float", choices=["float", "double"])
    ap.add_argument("--repeats", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--only", type=str, default="", help="comma list of candidate indices")
    ap.add_argument("--trans", action="store_true", help="also time the 3 transposed variants of the best")
    ap.add_argument("--out", type=str, default="")
    ap.add_argument("--w4", action="store_true", help="time the W4 GEMM shapes (CPU candidates)")
    ap.add_argument("--cands", choices=["auto", "cpu", "gpu"], default="auto",
                    help="candidate list (default: by device type)")
    ap.add_argument("--dump", type=str, default="",
                    help="write the best config's source and program binary (PTX on NVIDIA) here")
    ap.add_argument("--verbose-build", action="store_true",
                    help="NVIDIA: print ptxas register/spill info (-cl-nv-verbose) per config")
    args = ap.parse_args()

    dev = pick_device()
    is_cpu = GT.family_of(dev) == "cpu"
    if args.w4:
        cands = w4_candidates()
        if args.only:
            cands = [cands[int(i)] for i in args.only.split(",")]
        shapes = W4_SHAPES
        if args.n:   # square n x n x n instead (NN and NT)
            shapes = [(f"sq{tr}", args.n, args.n, args.n, False, tr == "NT") for tr in ("NN", "NT")]
        bench_w4(dev, cands, args.repeats or 7, shapes=shapes, inner=2 if args.n else 10)
        return
    n = args.n or (1024 if is_cpu else 8192)
    repeats = args.repeats or (7 if is_cpu else 10)
    dtype = args.dtype
    npdt = np.float32 if dtype == "float" else np.float64
    print(f"device: {dev.name.strip()} | {dev.platform.name} | {dev.version} | "
          f"max_wg {dev.max_work_group_size} local {dev.local_mem_size} CU {dev.max_compute_units}")
    print(f"n = {n}, dtype = {dtype}, median of {repeats} after {args.warmup} warm-up")
    chosen = GT.choose_config(dev, dtype, n, n, n)
    use_cpu = is_cpu if args.cands == "auto" else args.cands == "cpu"
    cands = cpu_candidates(dtype) if use_cpu else gpu_candidates(dtype)
    if chosen not in cands:
        cands.insert(0, chosen)
    if args.only:
        cands = [cands[int(i)] for i in args.only.split(",")]

    flop = 2.0 * n ** 3
    results = []
    ref = bench_torch(n, args.warmup, repeats)   # first: a failing kernel below can kill the context
    if ref is not None:
        print(f"{ref[1]}: {ref[0]:.1f} GFLOP/s", flush=True)
        results.append((ref[1], "NN", ref[0], flop / ref[0] / 1e9, 0.0, 0.0, True))

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(npdt)
    b = rng.standard_normal((n, n)).astype(npdt)
    rows = rng.choice(n, size=min(n, 48), replace=False)
    ref_rows = a[rows].astype(np.float64) @ b.astype(np.float64)
    scale = np.max(np.abs(ref_rows))
    tol = 1e-4 if dtype == "float" else 1e-10
    env = {}

    def fresh():
        """(Re)create context, queue and buffers (a faulting kernel can poison a context)."""
        r = Runner(dev)
        r.verbose = args.verbose_build and "nvidia" in dev.platform.name.lower()
        mf = cl.mem_flags
        env.update(
            r=r,
            A=cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a),
            B=cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b),
            AT=cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a.T)),
            BT=cl.Buffer(r.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(b.T)),
            C=cl.Buffer(r.ctx, mf.READ_WRITE, size=n * n * a.itemsize))

    fresh()

    def one(cfg, ta=False, tb=False, label=None):
        label = label or cfg_str(cfg)
        r, C = env["r"], env["C"]
        try:
            _, tbuild = r.kernel(cfg, dtype, ta, tb)
            e_small = check_small(r, cfg, dtype, ta, tb)
            fn = r.setup(cfg, dtype, ta, tb, n, n, n, env["AT"] if ta else env["A"],
                         env["BT"] if tb else env["B"], C)
            cl.enqueue_fill_buffer(r.q, C, npdt(np.nan), 0, n * n * a.itemsize)
            fn()
            c = np.empty((n, n), npdt)
            cl.enqueue_copy(r.q, c, C)
            r.q.finish()
            e_big = float(np.max(np.abs(c[rows] - ref_rows)) / scale)
            t, tmin = time_fn(fn, r.q.finish, args.warmup, repeats, with_min=True)
        except Exception as ex:  # keep going: a config may not build, fit or launch
            print(f"{label:58s} FAILED: {type(ex).__name__}: {str(ex).splitlines()[0][:200]}", flush=True)
            env.clear()
            fresh()
            return None
        ok = e_small < tol and e_big < tol
        gf = flop / t / 1e9
        tr = ("T" if ta else "N") + ("T" if tb else "N")
        line = (f"{label:58s} {tr} {gf:10.1f} GFLOP/s {t * 1e3:9.3f} ms (min {tmin * 1e3:8.3f}) "
                f"build {tbuild:5.2f} s err {max(e_small, e_big):.1e} {'ok' if ok else 'WRONG'}")
        print(line, flush=True)
        results.append((label, tr, gf, t, tbuild, max(e_small, e_big), ok))
        return gf if ok else None

    best, best_gf = None, -1.0
    for cfg in cands:
        gf = one(cfg, label=cfg_str(cfg) + (" [chosen]" if cfg == chosen else ""))
        if gf is not None and gf > best_gf:
            best, best_gf = cfg, gf
    if best is not None:
        print(f"best: {cfg_str(best)}  {best_gf:.1f} GFLOP/s  (choose_config: {cfg_str(chosen)})")
        if args.trans:
            for ta, tb in [(False, True), (True, False), (True, True)]:
                one(best, ta, tb)
        if args.dump:
            try:
                os.makedirs(args.dump, exist_ok=True)
                src = G.gemm_source(best, dtype, False, False)
                with open(os.path.join(args.dump, "gemm_best.cl"), "w") as f:
                    f.write(src)
                prg = cl.Program(env["r"].ctx, src).build()
                with open(os.path.join(args.dump, "gemm_best.bin"), "wb") as f:
                    f.write(prg.get_info(cl.program_info.BINARIES)[0])
            except Exception as ex:  # pragma: no cover
                print("dump failed:", ex)

    if is_cpu and dtype == "float":
        t = time_fn(lambda: a @ b, lambda: None, args.warmup, repeats)
        print(f"numpy {np.__version__} matmul: {flop / t / 1e9:.1f} GFLOP/s")
        results.append((f"numpy {np.__version__} matmul", "NN", flop / t / 1e9, t, 0.0, 0.0, True))

    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# GEMM tuning: {dev.name.strip()} ({dev.platform.name}, {dev.version})\n\n")
            f.write(f"n = {n}, dtype = {dtype}, median of {repeats} runs after {args.warmup} warm-up; "
                    f"command: `python benchmarks/gemm_tune.py {' '.join(sys.argv[1:])}`\n\n")
            f.write("| config | trans | GFLOP/s | ms | build s | max rel err | ok |\n|---|---|---|---|---|---|---|\n")
            for lab, tr, gf, t, tb_, e, ok in results:
                f.write(f"| {lab} | {tr} | {gf:.1f} | {t * 1e3:.3f} | {tb_:.2f} | {e:.1e} | {'yes' if ok else 'NO'} |\n")
        print("wrote", args.out)


if __name__ == "__main__":
    main()
