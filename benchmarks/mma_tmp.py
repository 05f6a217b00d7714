import time, numpy as np, pyopencl as cl, sys
sys.path.insert(0, '.')
from netcl.primitives import gemm_mma as MM, gemm as G
dev = [d for p in cl.get_platforms() for d in p.get_devices()][0]
print(dev.name, MM.supports_mma(dev))
ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
def bench(kind, cfg, ta, tb, M, N, K):
    src = MM.mma_source(cfg, ta, tb) if kind == "mma" else G.gemm_source(cfg, "float", ta, tb)
    k = cl.Kernel(cl.Program(ctx, src).build(), "netcl_gemm")
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4*M*K); b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4*K*N)
    c = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4*M*N)
    cl.enqueue_fill_buffer(q, a, np.float32(1), 0, 4*M*K); cl.enqueue_fill_buffer(q, b, np.float32(1), 0, 4*K*N)
    k.set_args(c, a, b, *[np.int32(v) for v in (M, N, K, M if ta else K, K if tb else N, N, 0, 0, 0, 0, 0, 0)])
    g, l = (MM.launch_dims if kind == "mma" else G.launch_dims)(cfg, 1, M, N)
    for _ in range(3): cl.enqueue_nd_range_kernel(q, k, g, l)
    q.finish(); n = 20; t = time.perf_counter()
    for _ in range(n): cl.enqueue_nd_range_kernel(q, k, g, l)
    q.finish(); dt = (time.perf_counter() - t) / n
    out = np.empty(4, np.float32); cl.enqueue_copy(q, out, c); 
    print(f"{kind:5s} {cfg.bm}x{cfg.bn} {'T' if ta else 'N'}{'T' if tb else 'N'} {M}x{N}x{K}: {dt*1e3:.3f} ms {2*M*N*K/dt/1e12:.1f} TF  (c[0]={out[0]})")
for M, N, K in [(262144, 64, 288), (262144, 32, 576), (65536, 128, 576), (65536, 64, 1152), (8192, 8192, 8192)]:
    bench("tiled", G.choose_config(dev, "float", M, N, K), False, False, M, N, K)
    for cfg in MM.MMA_TIERS:
        bench("mma", cfg, False, False, M, N, K)
bench("mma", MM.MMA_TIERS[1], True, False, 288, 64, 262144)
bench("tiled", G.choose_config(dev, "float", 288, 64, 262144), True, False, 288, 64, 262144)
