"""Raw-pyopencl tests of netcl.primitives.gemm on the default (PoCL) device.

Every kernel run poisons C with NaN, and fills every element of A and B that
the kernel must NOT read (offsets, leading-dimension padding, batch gaps) with
NaN too, so a missed write or a stray read shows up as a NaN.
"""
from __future__ import annotations

import dataclasses
import itertools
from types import SimpleNamespace

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from netcl.primitives import gemm as G  # noqa: E402
from netcl.primitives import gemm_tiers as GT  # noqa: E402
from netcl.primitives.gemm import GemmConfig  # noqa: E402

_STATE: dict = {}
_KERNELS: dict = {}   # (config, dtype, trans_a, trans_b, epilogue) -> cl.Kernel


def _ctx():
    if "ctx" not in _STATE:
        try:
            dev = cl.get_platforms()[0].get_devices()[0]
        except Exception as ex:  # pragma: no cover - no OpenCL at all
            pytest.skip(f"no OpenCL device: {ex}")
        ctx = cl.Context([dev])
        _STATE.update(ctx=ctx, dev=dev, queue=cl.CommandQueue(ctx),
                      fp64="cl_khr_fp64" in dev.extensions)
    return _STATE["ctx"], _STATE["queue"], _STATE["dev"]


def _is_cpu_device():
    _, _, dev = _ctx()
    return bool(dev.type & cl.device_type.CPU)


def _kernel(cfg, dtype, ta, tb, epi):
    key = (cfg, dtype, ta, tb, epi)
    k = _KERNELS.get(key)
    if k is None:
        ctx, _, _ = _ctx()
        prg = cl.Program(ctx, G.gemm_source(cfg, dtype, ta, tb, epi)).build()
        k = _KERNELS[key] = cl.Kernel(prg, G.GEMM_KERNEL_NAME)
    return k


def _pack(mats, rows, cols, ld, off, stride, dtype, rng):
    """Flat NaN-poisoned buffer holding mats[i] (rows x cols) at off + i*stride, leading dim ld."""
    nb = mats.shape[0]
    size = off + (nb - 1) * stride + (rows - 1) * ld + cols if rows and cols else off + 1
    flat = np.full(max(size, 1) + int(rng.integers(0, 3)), np.nan, dtype)
    for i in range(nb):
        for r in range(rows):
            base = off + i * stride + r * ld
            flat[base:base + cols] = mats[i, r]
    return flat


def check_gemm(cfg, dtype, ta, tb, M, N, K, batch=1, bcast_a=False, bcast_b=False,
               offs=(0, 0, 0), pads=(0, 0, 0), gaps=(0, 0, 0), epi=None, epi_ref=None, seed=0):
    ctx, queue, dev = _ctx()
    if dtype == "double" and not _STATE["fp64"]:
        pytest.skip("no fp64")
    if cfg.threads > dev.max_work_group_size or cfg.local_mem_bytes(dtype, ta) > dev.local_mem_size:
        pytest.skip(f"{cfg} does not fit {dev.name}")
    npdt = np.float32 if dtype == "float" else np.float64
    rng = np.random.default_rng(seed)
    na = 1 if bcast_a else batch
    nb = 1 if bcast_b else batch
    a = rng.standard_normal((na, M, K)).astype(npdt)
    b = rng.standard_normal((nb, K, N)).astype(npdt)
    # memory images (A^T / B^T when transposed)
    am = a.transpose(0, 2, 1) if ta else a
    bm = b.transpose(0, 2, 1) if tb else b
    lda = am.shape[2] + pads[0]
    ldb = bm.shape[2] + pads[1]
    ldc = N + pads[2]
    bsa = 0 if bcast_a else am.shape[1] * lda + gaps[0]
    bsb = 0 if bcast_b else bm.shape[1] * ldb + gaps[1]
    bsc = M * ldc + gaps[2]
    fa = _pack(am, am.shape[1], am.shape[2], lda, offs[0], bsa, npdt, rng)
    fb = _pack(bm, bm.shape[1], bm.shape[2], ldb, offs[1], bsb, npdt, rng)
    csize = offs[2] + (batch - 1) * bsc + M * ldc + 3
    fc = np.full(csize, np.nan, npdt)

    mf = cl.mem_flags
    A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=fa)
    B = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=fb)
    C = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=fc)
    k = _kernel(cfg, dtype, ta, tb, epi)
    i32 = np.int32
    k.set_args(C, A, B, i32(M), i32(N), i32(K), i32(lda), i32(ldb), i32(ldc),
               i32(bsa), i32(bsb), i32(bsc), i32(offs[0]), i32(offs[1]), i32(offs[2]))
    gsize, lsize = G.launch_dims(cfg, batch, M, N)
    assert len(gsize) == len(lsize)
    assert all(g % l == 0 for g, l in zip(gsize, lsize))
    if batch and M and N:
        assert 0 not in gsize
        cl.enqueue_nd_range_kernel(queue, k, gsize, lsize)
    else:
        assert 0 in gsize
    cl.enqueue_copy(queue, fc, C)
    queue.finish()

    a64 = np.broadcast_to(a.astype(np.float64), (batch, M, K))
    b64 = np.broadcast_to(b.astype(np.float64), (batch, K, N))
    ref = np.matmul(a64, b64)
    bound = np.matmul(np.abs(a64), np.abs(b64))
    if epi_ref is not None:
        ref = epi_ref(ref)
    rtol = 1e-4 if dtype == "float" else 1e-11
    got = np.empty((batch, M, N), npdt)
    written = np.zeros(csize, bool)
    for i in range(batch):
        for r in range(M):
            base = offs[2] + i * bsc + r * ldc
            got[i, r] = fc[base:base + N]
            written[base:base + N] = True
    ctxt = f"cfg={cfg} {dtype} ta={ta} tb={tb} M={M} N={N} K={K} batch={batch} epi={epi}"
    assert not np.isnan(got).any(), "unwritten outputs: " + ctxt
    err = np.abs(got - ref)
    tol = rtol * (bound + np.abs(ref) + 1.0)
    assert (err <= tol).all(), f"max err {err.max():.3g}: " + ctxt
    assert np.isnan(fc[~written]).all(), "wrote outside C: " + ctxt


# --------------------------------------------------------------------------- configs

CPU_BIG_F = GT.CPU_CONFIGS["float"][0]
CPU_BIG_D = GT.CPU_CONFIGS["double"][0]
GPU_BIG_F = GT.GPU_CONFIGS["float"][0]
GPU_BIG_D = GT.GPU_CONFIGS["double"][0]
TRANS = list(itertools.product([False, True], repeat=2))

# (config, dtype) pairs covered by the fixed-shape tests: what choose_config
# can return on CPU and GPU, plus the fallback.
ALL_CONFIGS = [
    (CPU_BIG_F, "float"), (GT.CPU_SMALL["float"], "float"),
    (CPU_BIG_D, "double"), (GT.CPU_SMALL["double"], "double"),
    (GPU_BIG_F, "float"), (GT.GPU_SMALL["float"], "float"),
    (GPU_BIG_D, "double"), (GT.CPU_NARROW["float"][0], "float"),
]
# NN only (same generator, other constants): keeps the cold PoCL run short.
NN_ONLY = [(GT.GPU_SMALL["double"], "double"), (GT.FALLBACK, "float"),
           (GT.CPU_NARROW["double"][0], "double"), (GT.CPU_NARROW["float"][1], "float"),
           *[(c, "float") for c in GT.CPU_TIERS["float"][1:-1]], (GT.GPU_TIERS["float"][1], "float"),
           (GT.GPU_TIERS["float"][2], "float"), (GT.GPU_TIERS["float"][3], "float"),
           (GT.CPU_TALL["float"], "float")]


def _cid(p):
    cfg, dt = p
    return f"{cfg.kind}{cfg.bm}x{cfg.bn}k{cfg.bk}{'m' if cfg.m_fastest else ''}-{dt}"


def _awkward(cfg):
    bm, bn = cfg.bm, cfg.bn
    return [(1, 1, 1), (1, 7, 13), (7, 1, 13), (13, 7, 1), (3, 5, 0),
            (bm - 1, bn + 1, 31), (bm + 1, bn - 1, cfg.bk + 1), (bm, bn, 2 * cfg.bk),
            (2 * bm, 2 * bn, 64), (127, 257, 41), (1031, 3, 7), (5, 1031, 2), (2, 3, 1031)]


# NN and TT between them exercise every operand loader (plain and transposed);
# the mixed cases run for the configs the devices pick for big work (the GPU
# one only on GPUs: on PoCL each build of it costs seconds).
CASES = [(p, t) for p in ALL_CONFIGS for t in [(False, False), (True, True)]]
CASES += [(p, (False, False)) for p in NN_ONLY]
CASES += [(p, t) for p in [(CPU_BIG_F, "float"), (GPU_BIG_F, "float")] for t in [(False, True), (True, False)]]
CASES += [((GT.CPU_NARROW["float"][0], "float"), (True, False))]  # a classifier's weight gradient


def _case_id(c):
    (cfg_dt, (ta, tb)) = c
    return _cid(cfg_dt) + "-" + ("T" if ta else "N") + ("T" if tb else "N")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_awkward_shapes(case):
    (cfg, dt), (ta, tb) = case
    if cfg is GPU_BIG_F and ta != tb and _is_cpu_device():
        pytest.skip("mixed transposes of the GPU config run on GPUs only")
    for j, (M, N, K) in enumerate(_awkward(cfg)):
        # aligned (offsets 0 / multiples of 4) and misaligned operands, with batching
        check_gemm(cfg, dt, ta, tb, M, N, K, batch=1, seed=j)
        if M * N * K <= 40000:
            check_gemm(cfg, dt, ta, tb, M, N, K, batch=2, offs=(4, 8, 4), pads=(4, 0, 4),
                       gaps=(4, 4, 0), seed=j)
            check_gemm(cfg, dt, ta, tb, M, N, K, batch=2, offs=(1, 3, 2), pads=(1, 2, 3),
                       gaps=(3, 1, 2), bcast_a=True, seed=j)


@pytest.mark.parametrize("cfg_dt", [(CPU_BIG_F, "float"), (GPU_BIG_F, "float"), (CPU_BIG_D, "double")],
                         ids=_cid)
def test_full_tiles_and_k_blocks(cfg_dt):
    """Several full tiles, several K panels, aligned (fast paths) and misaligned."""
    cfg, dt = cfg_dt
    M, N = 2 * cfg.bm + 3, 2 * cfg.bn
    for K in (cfg.bk * 2, 300):
        check_gemm(cfg, dt, False, False, M, N, K)
        check_gemm(cfg, dt, True, True, M, N, K, offs=(1, 2, 3))
    check_gemm(cfg, dt, False, False, M, N, 300, batch=2, bcast_b=True, offs=(4, 4, 4))
    check_gemm(cfg, dt, True, True, M, N, 300, batch=2, bcast_a=True, pads=(3, 0, 1))


def test_cpu_panels_deepen_with_k_within_local_memory():
    """CPU configs take K panels of up to 1024 rows where they fit local memory (a transposed
    A is staged there too); products with a deep panel, several panels and a short last one
    match NumPy in every transposition."""
    cpu = _fake("cpu", 4096, 512 * 1024)
    deep = GT.choose_config(cpu, "float", 128, 1024, 300, trans_a=False)
    assert deep.bk == 512 and dataclasses.replace(deep, bk=256) == CPU_BIG_F
    assert GT.choose_config(cpu, "float", 128, 1024, 784, trans_a=False).bk == 1024
    assert GT.choose_config(cpu, "float", 128, 1024, 5000, trans_a=False).bk == 1024
    # staged A^T: 1024 x (64 + 132) floats exceed 512 KB, 512 rows fit
    assert GT.choose_config(cpu, "float", 128, 1024, 784, trans_a=True).bk == 512
    assert GT.choose_config(_fake("cpu", 4096, 32 * 1024), "float", 128, 1024, 784).bk <= 128
    _, _, dev = _ctx()
    if dev.type & cl.device_type.CPU:
        M, N = 70, 2 * CPU_BIG_F.bn + 5
        for K in (300, 1500):
            for ta, tb in TRANS:
                cfg = GT.choose_config(dev, "float", M, N, K, trans_a=ta)
                assert cfg.bk >= 512
                check_gemm(cfg, "float", ta, tb, M, N, K, offs=(1, 2, 3), pads=(1, 0, 2), seed=K)


@pytest.mark.parametrize("cfg_dt", [(CPU_BIG_F, "float"), (GT.GPU_SMALL["float"], "float")], ids=_cid)
def test_epilogue(cfg_dt):
    """relu plus the row/col/batch indices; K = 0 gives epilogue(0)."""
    cfg, dt = cfg_dt
    epi = "max(acc, (T)0) + (T)(row * 1000 + col) + (T)batch * (T)0.5"

    def epi_ref(r):
        bb, m, n = np.meshgrid(np.arange(r.shape[0]), np.arange(r.shape[1]), np.arange(r.shape[2]),
                               indexing="ij")
        return np.maximum(r, 0) + m * 1000 + n + 0.5 * bb

    for K in (0, 5, 19):
        check_gemm(cfg, dt, False, False, 23, 29, K, batch=3, epi=epi, epi_ref=epi_ref, offs=(0, 0, 1))
    check_gemm(cfg, dt, False, False, cfg.bm + 2, cfg.bn, 7, epi=epi, epi_ref=epi_ref)


@pytest.mark.parametrize("cfg_dt", [(GT.CPU_SMALL["float"], "float"), (GT.GPU_SMALL["float"], "float")],
                         ids=_cid)
def test_large_batch(cfg_dt):
    cfg, dt = cfg_dt
    check_gemm(cfg, dt, False, False, 3, 5, 4, batch=3000, bcast_b=True)
    check_gemm(cfg, dt, True, True, 2, 1, 3, batch=1500)
    check_gemm(cfg, dt, False, False, 4, 4, 4, batch=0)


# --------------------------------------------------------------------------- hypothesis

def _hyp_configs():
    _, _, dev = _ctx()
    out = []
    for dt, shape in (("float", (64, 64, 64)), ("float", (1024, 1024, 1024)), ("double", (64, 64, 64))):
        c = GT.choose_config(dev, dt, *shape)
        if (c, dt) not in out:
            out.append((c, dt))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(),
       M=st.integers(0, 70), N=st.integers(0, 70), K=st.integers(0, 70),
       batch=st.integers(1, 4), ta=st.booleans(), tb=st.booleans(),
       bcast_a=st.booleans(), bcast_b=st.booleans(),
       offs=st.tuples(*[st.integers(0, 5)] * 3), pads=st.tuples(*[st.integers(0, 3)] * 3),
       gaps=st.tuples(*[st.integers(0, 3)] * 3))
def test_hypothesis(data, M, N, K, batch, ta, tb, bcast_a, bcast_b, offs, pads, gaps):
    cfgs = _hyp_configs()
    cfg, dt = data.draw(st.sampled_from(cfgs), label="config")
    check_gemm(cfg, dt, ta, tb, M, N, K, batch=batch, bcast_a=bcast_a, bcast_b=bcast_b,
               offs=offs, pads=pads, gaps=gaps, seed=M * 7919 + N * 31 + K)


# --------------------------------------------------------------------------- choose_config

def _fake(kind, max_wg, local):
    t = cl.device_type.CPU if kind == "cpu" else cl.device_type.GPU
    return SimpleNamespace(type=t, max_work_group_size=max_wg, local_mem_size=local, name="fake",
                           max_compute_units=132 if kind == "gpu" else 2)


@pytest.mark.parametrize("dev_args", [("gpu", 1024, 48 * 1024), ("gpu", 256, 32 * 1024),
                                      ("gpu", 64, 16 * 1024), ("gpu", 32, 4096),
                                      ("cpu", 4096, 512 * 1024), ("cpu", 1024, 32 * 1024),
                                      ("cpu", 16, 8192)])
def test_choose_config_respects_limits(dev_args):
    dev = _fake(*dev_args)
    for dt in ("float", "double"):
        for shape in [(1, 1, 1), (64, 64, 64), (1024, 1024, 1024), (8192, 8192, 8192), (3, 5000, 7),
                      (128, 10, 1024), (1024, 16, 128)]:
            cfg = GT.choose_config(dev, dt, *shape)
            assert isinstance(cfg, GemmConfig)
            hash(cfg)
            cfg.validate(dt)
            assert cfg.threads <= dev.max_work_group_size
            assert cfg.local_mem_bytes(dt) <= dev.local_mem_size
            gs, ls = G.launch_dims(cfg, 2, *shape[:2])
            assert all(g % l == 0 for g, l in zip(gs, ls))
            assert np.prod(ls) <= dev.max_work_group_size


def test_cpu_tall_tier_only_for_long_contractions_of_many_blocks():
    """CPU_TALL's 264-row blocks go to long contractions that give every compute unit
    CPU_TALL_BLOCKS_PER_CU blocks; a batch of 128 rows, short contractions (weight
    gradients), products of few blocks and doubles keep the tier table's blocks."""
    cpu = _fake("cpu", 4096, 1 << 20)
    tall = GT.CPU_TALL["float"]

    def blocks(dt, M, N, K):
        cfg = GT.choose_config(cpu, dt, M, N, K, trans_a=False)
        return (cfg.wg_m, cfg.wg_n, cfg.tm, cfg.tn)
    assert blocks("float", 1024, 1024, 1024) == (tall.wg_m, tall.wg_n, tall.tm, tall.tn)
    assert blocks("float", 32768, 64, 288) == (tall.wg_m, tall.wg_n, tall.tm, tall.tn)
    for shape in [(128, 1024, 784), (1024, 1024, 128), (784, 1024, 256), (528, 128, 1024),
                  (300, 1024, 1024), (128, 10, 1024)]:
        assert blocks("float", *shape)[0] != tall.wg_m, shape
    assert blocks("double", 1024, 1024, 1024)[0] != tall.wg_m


def test_choose_config_real_device_and_source():
    _, _, dev = _ctx()
    cfg = GT.choose_config(dev, "float", 1024, 1024, 1024)
    assert cfg.threads <= dev.max_work_group_size
    src = G.gemm_source(cfg, "double", False, True, "max(acc, (T)0)")
    assert src.lstrip().startswith("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    assert f"__kernel void {G.GEMM_KERNEL_NAME}(" in src
    assert "OPENCL EXTENSION cl_khr_fp64" not in G.gemm_source(cfg, "float", False, False)
    with pytest.raises(ValueError):
        G.gemm_source(cfg, "half", False, False)


# --------------------------------------------------------------------------- packed operands

def check_packed(cfg, dtype, M, N, K, offs=(0, 0), pads=(0, 0), epi=None, epi_ref=None, seed=0):
    """gemm_cpu.pack_source then packed_source (A^T B), NaN-poisoned like check_gemm."""
    from netcl.primitives import gemm_cpu as GC
    ctx, queue, dev = _ctx()
    if dtype == "double" and not _STATE["fp64"]:
        pytest.skip("no fp64")
    npdt = np.float32 if dtype == "float" else np.float64
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(npdt)
    b = rng.standard_normal((K, N)).astype(npdt)
    lda, ldb = M + pads[0], N + pads[1]
    fa = _pack(a.T[None], K, M, lda, offs[0], 0, npdt, rng)
    fb = _pack(b[None], K, N, ldb, offs[1], 0, npdt, rng)
    fc = np.full(M * N + 3, np.nan, npdt)
    mf = cl.mem_flags
    A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=fa)
    B = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=fb)
    C = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=fc)
    es = np.dtype(npdt).itemsize
    PA = cl.Buffer(ctx, mf.READ_WRITE, max(-(-M // cfg.tm) * cfg.tm * K * es, 1))
    PB = cl.Buffer(ctx, mf.READ_WRITE, max(-(-N // cfg.tn) * cfg.tn * K * es, 1))
    i32 = np.int32
    key = ("packed", cfg, dtype, epi)
    if key not in _KERNELS:
        _KERNELS[key] = (
            cl.Kernel(cl.Program(ctx, GC.pack_source(dtype, cfg.tm, cfg.tn)).build(), GC.PACK_KERNEL_NAME),
            cl.Kernel(cl.Program(ctx, GC.packed_source(cfg, dtype, epi)).build(), G.GEMM_KERNEL_NAME))
    kp, kg = _KERNELS[key]
    kp.set_args(PA, A, i32(lda), i32(M), i32(offs[0]), PB, B, i32(ldb), i32(N), i32(offs[1]), i32(K))
    kg.set_args(C, PA, PB, i32(M), i32(N), i32(K), i32(0), i32(0), i32(N),
                i32(0), i32(0), i32(0), i32(0), i32(0), i32(0))
    cl.enqueue_nd_range_kernel(queue, kp, (-(-K // 16) * 16 or 16, 2), (16, 1))
    gsize, lsize = G.launch_dims(cfg, 1, M, N)
    cl.enqueue_nd_range_kernel(queue, kg, gsize, lsize)
    cl.enqueue_copy(queue, fc, C)
    queue.finish()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if epi_ref is not None:
        ref = epi_ref(ref)
    got = fc[:M * N].reshape(M, N)
    ctxt = f"packed cfg={cfg} {dtype} M={M} N={N} K={K} offs={offs} pads={pads} epi={epi}"
    assert not np.isnan(got).any(), "unwritten outputs: " + ctxt
    assert np.isnan(fc[M * N:]).all(), "wrote outside C: " + ctxt
    rtol = 1e-4 if dtype == "float" else 1e-11
    bound = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert (np.abs(got - ref) <= rtol * (bound + np.abs(ref) + 1.0)).all(), ctxt


PACKED_CONFIGS = [(GT.CPU_TIERS["float"][1], "float"), (GT.CPU_TIERS["double"][0], "double"),
                  (GemmConfig(kind="cpu", wg_m=8, wg_n=4, tm=6, tn=16, bk=64, vec=8, m_fastest=True),
                   "float")]


@pytest.mark.parametrize("cfg_dt", PACKED_CONFIGS, ids=_cid)
def test_packed_operands_fixed_shapes(cfg_dt):
    cfg, dt = cfg_dt
    bm, bn, bk = cfg.bm, cfg.bn, cfg.bk
    for M, N, K in [(bm + 1, bn + 1, 1), (2 * bm - 1, 3 * bn + 5, bk + 3), (1, 1, 7),
                    (cfg.tm - 1, cfg.tn + 1, 2 * bk)]:
        check_packed(cfg, dt, M, N, K)
    check_packed(cfg, dt, 70, 40, 33, offs=(3, 5), pads=(2, 7))
    check_packed(cfg, dt, 70, 40, 33, epi="max(acc, (T)0)", epi_ref=lambda r: np.maximum(r, 0))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(M=st.integers(1, 150), N=st.integers(1, 150), K=st.integers(1, 300),
       offs=st.tuples(st.integers(0, 5), st.integers(0, 5)),
       pads=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_packed_operands_hypothesis(M, N, K, offs, pads):
    check_packed(GT.CPU_TIERS["float"][1], "float", M, N, K, offs, pads, seed=M * 31 + N + K)

