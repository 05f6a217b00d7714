"""Which GEMM configuration (gemm.GemmConfig) a device and a product shape get: the tuned
tiers per device class and dtype, biggest block first, and `choose_config`, which picks one
that fits the device and gives every compute unit work (then, on CPUs, deepens its K panels).
gemm.py and gemm_cpu.py generate the kernels; this file only chooses."""
from __future__ import annotations

from dataclasses import replace

from .gemm import _DTYPES, GemmConfig


def family_of(cl_device) -> str:
    """The tier table ("cpu" or "gpu") of a bare OpenCL device, for tools that tune or test
    GEMMs outside netcl; netcl's own products pass their device's `Target.gemm_tiers`."""
    import pyopencl as cl
    try:
        return "cpu" if cl_device.type & cl.device_type.CPU else "gpu"
    except Exception:  # pragma: no cover - exotic drivers
        return "gpu"


def _fits(cfg: GemmConfig, dtype: str, max_wg: int, local_mem: int) -> bool:
    # (CPU kernels run one work-item per group, which walks the group's slivers)
    return (cfg.kind == "cpu" or cfg.threads <= max_wg) and \
        _local_bytes(cfg, dtype) + 256 <= local_mem


def _local_bytes(cfg: GemmConfig, dtype: str, trans_a: bool = True) -> int:
    """Local memory of `cfg`'s kernel: its panels, and on CPUs the accumulators kept between
    K panels (gemm_cpu.spill_bytes)."""
    n = cfg.local_mem_bytes(dtype, trans_a)
    if cfg.kind == "cpu":
        from .gemm_cpu import spill_bytes
        n += spill_bytes(cfg, dtype)
    return n


# Tiers per device class and dtype, biggest block first: choose_config takes the
# first tier that fits the device and still gives every compute unit work.
# Tuned with benchmarks/gemm_tune.py (CPU tiers on PoCL, GPU tiers on an NVIDIA GPU); the
# timings are in benchmarks/results/gemm_*.
CPU_TIERS = {
    # 132 = 22 * 6 and 66 = 11 * 6 rows: one or two blocks cover 128 rows (a batch of 128)
    # padding 3% where 48-row blocks pad 12.5%, and every block re-packs the B panel it
    # shares with the blocks above and below it, so fewer, taller blocks pack it fewer
    # times; the tallest block is the fastest on an MLP's products and on 1024^3.
    "float": [
        GemmConfig(kind="cpu", wg_m=22, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        GemmConfig(kind="cpu", wg_m=11, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        GemmConfig(kind="cpu", wg_m=8, wg_n=4, tm=6, tn=16, bk=256, vec=8),
        GemmConfig(kind="cpu", wg_m=4, wg_n=4, tm=4, tn=8, bk=128, vec=8),
    ],
    "double": [
        GemmConfig(kind="cpu", wg_m=16, wg_n=8, tm=6, tn=8, bk=256, vec=4),
        GemmConfig(kind="cpu", wg_m=8, wg_n=4, tm=6, tn=8, bk=256, vec=4),
        GemmConfig(kind="cpu", wg_m=4, wg_n=4, tm=4, tn=4, bk=128, vec=4),
    ],
}
GPU_TIERS = {
    # 128x128 with 16x8 per thread for large products (close to cuBLAS on square ones),
    # 64x128 with 4x8 for mid-sized ones, 32x32 the smallest.
    "float": [
        GemmConfig(kind="tiled", wg_m=8, wg_n=16, tm=16, tn=8, bk=8, vec=4, rvec=4, pad=4, double_buffer=True),
        # 128x64, for tall products with 64 columns (convolutions with 64 output channels:
        # M = 262144, N = 64, K = 288, well ahead of 32x32 tiles)
        GemmConfig(kind="tiled", wg_m=16, wg_n=16, tm=8, tn=4, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
        # 128x32, for 32 columns (on the same conv shape nearly as fast as 128x64)
        GemmConfig(kind="tiled", wg_m=16, wg_n=8, tm=8, tn=4, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
        GemmConfig(kind="tiled", wg_m=16, wg_n=16, tm=4, tn=8, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
        # 32x32, double-buffered: faster than single-buffered for an MLP's 256x1024x784
        GemmConfig(kind="tiled", wg_m=8, wg_n=8, tm=4, tn=4, bk=16, vec=4, rvec=4, pad=4, double_buffer=True),
    ],
    # the bigger the tile, the faster on large products (128x128 with 8x8 per thread first)
    "double": [
        GemmConfig(kind="tiled", wg_m=16, wg_n=16, tm=8, tn=8, bk=8, vec=2, rvec=2, pad=2, double_buffer=True),
        GemmConfig(kind="tiled", wg_m=16, wg_n=16, tm=4, tn=4, bk=8, vec=2, rvec=2, pad=2, double_buffer=True),
        GemmConfig(kind="tiled", wg_m=8, wg_n=8, tm=4, tn=4, bk=8, vec=2, rvec=2, pad=2, double_buffer=False),
    ],
}
# GPUs, products with at most 16 rows or columns (a classifier's 10 outputs): 16x16 blocks
# give the few columns more work-groups (faster than 32x32 on a 256x10x1024 product).
GPU_TINY = {
    "float": GemmConfig(kind="tiled", wg_m=8, wg_n=8, tm=2, tn=2, bk=16, vec=2, rvec=2, pad=2,
                        double_buffer=True),
}
# CPUs, products with at most 16 columns (a classifier's 10 outputs): one 16-column sliver
# per group, which packs no padding columns and gives the cores more groups (a quarter
# faster than the 66x64 tier on a classifier's 128x10x1024 NN and 1024x10x128 TN products,
# whose groups skip the slivers wholly past N).
CPU_NARROW = {
    "float": [GemmConfig(kind="cpu", wg_m=8, wg_n=1, tm=6, tn=16, bk=256, vec=8),
              GemmConfig(kind="cpu", wg_m=4, wg_n=1, tm=6, tn=16, bk=256, vec=8)],
    "double": [GemmConfig(kind="cpu", wg_m=8, wg_n=2, tm=6, tn=8, bk=256, vec=4),
               GemmConfig(kind="cpu", wg_m=4, wg_n=2, tm=6, tn=8, bk=256, vec=4)],
}
# CPUs, long contractions (K > 256) with many blocks: blocks of 264 rows pack each K panel
# of B once for twice the rows of the 132-row tier, so packing (the part of a square
# product's time that is not multiply-adds) halves; the sums are those of the other tiers.
# Short contractions (weight gradients), the 128 rows of a batch and products of few
# blocks (whose groups balance the cores less evenly) keep the tiers above.
CPU_TALL = {
    "float": GemmConfig(kind="cpu", wg_m=44, wg_n=4, tm=6, tn=16, bk=256, vec=8),
}
CPU_TALL_MIN_K = 257
CPU_TALL_BLOCKS_PER_CU = 8
# Last resort for devices too small for every tier (64 threads would do).
FALLBACK = GemmConfig(kind="tiled", wg_m=4, wg_n=4, tm=1, tn=1, bk=4, vec=1, rvec=1, pad=1, double_buffer=False)

# Back-compatible names: the biggest and the smallest tier.
CPU_CONFIGS = {dt: t[:1] for dt, t in CPU_TIERS.items()}
CPU_SMALL = {dt: t[-1] for dt, t in CPU_TIERS.items()}
GPU_CONFIGS = {dt: t[:1] for dt, t in GPU_TIERS.items()}
GPU_SMALL = {dt: t[-1] for dt, t in GPU_TIERS.items()}


def choose_config(device, dtype: str, M: int, N: int, K: int, trans_a: bool = True,
                  family: str = None) -> GemmConfig:
    """Pick a tile configuration for ``device`` (a ``pyopencl.Device``) and shape, from the
    tier table ``family`` ("cpu" or "gpu"; by default the device type's, `family_of`).

    Takes the biggest tier (fastest per element on large products) that fits
    ``max_work_group_size`` and ``local_mem_size`` and that, for this M x N,
    gives about one block per compute unit (two on CPUs) without padding the
    product by more than a quarter; else the smallest tier that fits. On CPUs the
    panel depth then grows with K (`_cpu_panel_depth`; ``trans_a=False`` says A is not
    staged in local memory, which leaves room for deeper panels).
    """
    cfg = _choose_tier(device, dtype, M, N, K, family or family_of(device))
    if cfg.kind == "cpu":
        cfg = _cpu_panel_depth(cfg, dtype, K, int(device.local_mem_size), trans_a)
    return cfg


def candidates(device, dtype: str, M: int, N: int, K: int, trans_a: bool = True,
               family: str = None) -> list:
    """The configurations an autotuner times for this product (gemm_autotune.py): the one
    `choose_config` picks first, then every other tier of the table that fits the device
    (CPUs: the narrow tiers too, and each with the panel depth `choose_config` gives it)."""
    family = family or family_of(device)
    max_wg, local_mem = int(device.max_work_group_size), int(device.local_mem_size)
    if family == "cpu":
        pool = CPU_TIERS[dtype] + CPU_NARROW.get(dtype, []) + \
            ([CPU_TALL[dtype]] if dtype in CPU_TALL else [])
    else:
        pool = GPU_TIERS[dtype] + ([GPU_TINY[dtype]] if dtype in GPU_TINY else [])
    out = [choose_config(device, dtype, M, N, K, trans_a, family)]
    for cfg in pool:
        if _fits(cfg, dtype, max_wg, local_mem):
            if cfg.kind == "cpu":
                cfg = _cpu_panel_depth(cfg, dtype, K, local_mem, trans_a)
            if cfg not in out:
                out.append(cfg)
    return out


def _cpu_panel_depth(cfg: GemmConfig, dtype: str, K: int, local_mem: int, trans_a: bool) -> GemmConfig:
    """`cfg` with K panels of 512 or 1024 rows where K is that long and the panel fits local
    memory: every panel costs a group a barrier (PoCL saves and restores each work-item's
    accumulators there) and a pass packing B, so fewer, deeper panels make an MLP's
    products and large square ones a little faster. (Depths are powers of two so that
    products of similar K share one kernel.)"""
    depth = cfg.bk
    while depth < min(K, 1024):
        depth *= 2
    while depth > cfg.bk and \
            _local_bytes(replace(cfg, bk=depth), dtype, trans_a) + 256 > local_mem:
        depth //= 2
    return cfg if depth == cfg.bk else replace(cfg, bk=depth)


def _tall_fits(dtype: str, M: int, N: int, K: int, cus: int, max_wg: int, local_mem: int) -> bool:
    """Whether a CPU product takes CPU_TALL's blocks: a long contraction that fills the
    cores with CPU_TALL_BLOCKS_PER_CU blocks each, padding it by at most a quarter."""
    tall = CPU_TALL.get(dtype)
    if tall is None or K < CPU_TALL_MIN_K or not _fits(tall, dtype, max_wg, local_mem):
        return False
    tm_, tn_ = -(-max(M, 1) // tall.bm), -(-max(N, 1) // tall.bn)
    return tm_ * tn_ >= CPU_TALL_BLOCKS_PER_CU * cus and \
        tm_ * tall.bm * tn_ * tall.bn <= 1.25 * max(M, 1) * max(N, 1)


def _choose_tier(device, dtype: str, M: int, N: int, K: int, family: str) -> GemmConfig:
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'float' or 'double', got {dtype!r}")
    max_wg = int(device.max_work_group_size)
    local_mem = int(device.local_mem_size)
    try:
        cus = max(1, int(device.max_compute_units))
    except Exception:
        cus = 1
    cpu = family == "cpu"
    if cpu:
        tiers, min_blocks = CPU_TIERS[dtype], 2 * cus
    else:
        tiers, min_blocks = GPU_TIERS[dtype], cus
    fitting = [c for c in tiers if _fits(c, dtype, max_wg, local_mem)]
    if not fitting:
        return FALLBACK
    tiny = GPU_TINY.get(dtype)
    if not cpu and min(M, N) <= 16 and tiny is not None and \
            _fits(tiny, dtype, max_wg, local_mem):
        return tiny
    if cpu and N <= CPU_NARROW[dtype][0].bn:
        narrow = [c for c in CPU_NARROW[dtype] if _fits(c, dtype, max_wg, local_mem)]
        for cfg in narrow:
            if -(-max(M, 1) // cfg.bm) >= 0.75 * min_blocks:
                return cfg
        if narrow:
            return narrow[-1]
    if cpu and _tall_fits(dtype, M, N, K, cus, max_wg, local_mem):
        return CPU_TALL[dtype]
    if cpu and K <= 256 and len(fitting) > 2:
        # short contractions (weight gradients over a batch of 128): the second tier's
        # smaller blocks pack less per flop, and win on a 1024x1024x128 TN product
        fitting = fitting[1:]
    m, n = max(M, 1), max(N, 1)
    for cfg in fitting:
        tm_, tn_ = -(-m // cfg.bm), -(-n // cfg.bn)
        padded = tm_ * cfg.bm * tn_ * cfg.bn
        if tm_ * tn_ >= 0.75 * min_blocks and padded <= 1.25 * m * n:
            return cfg
    return fitting[-1]


