"""The tensor-core (TF32 mma.sync) GEMM of netcl.primitives.gemm_mma, on NVIDIA GPUs of
compute capability 8.0 or newer (skipped elsewhere; the source generator is checked
everywhere). Results are compared with float64 products of the TF32-rounded operands, which
the kernel must match to float32 accumulation error."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

from netcl.primitives import gemm_mma as MM  # noqa: E402
from netcl.primitives.gemm import GEMM_KERNEL_NAME, GemmEpilogue  # noqa: E402


def _device():
    for p in cl.get_platforms():
        for d in p.get_devices():
            if MM.supports_mma(d):
                return d
    return None


DEV = _device()
needs_mma = pytest.mark.skipif(DEV is None, reason="needs an NVIDIA GPU of sm_80 or newer")


def _tf32(x):
    """Round float32 to TF32 (10 mantissa bits), to nearest, ties away from zero (cvt.rna)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return b.view(np.float32)


@pytest.mark.parametrize("cfg", MM.MMA_TIERS + MM.SMALL_TIERS)
def test_source_generates(cfg):
    src = MM.mma_source(cfg, False, True, "acc * 2")
    assert "mma.sync.aligned.m16n8k8" in src and GEMM_KERNEL_NAME in src


def test_bad_config():
    with pytest.raises(ValueError, match="accumulates in float32"):
        MM.MmaConfig().validate("double")
    with pytest.raises(ValueError, match="operands must be"):
        MM.MmaConfig().validate("float", "f8")
    with pytest.raises(ValueError, match="bad MmaConfig"):
        MM.MmaConfig(bk=8).validate("float", "bf16")
    with pytest.raises(ValueError, match="bad MmaConfig"):
        MM.MmaConfig(bk=12).validate()


def _run(cfg, ta, tb, M, N, K, batch=1, epilogue=None, extra=None):
    ctx = cl.Context([DEV])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    A = rng.standard_normal((batch, M, K)).astype(np.float32)
    B = rng.standard_normal((batch, K, N)).astype(np.float32)
    a_mem = np.ascontiguousarray(A.transpose(0, 2, 1) if ta else A)
    b_mem = np.ascontiguousarray(B.transpose(0, 2, 1) if tb else B)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_mem)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_mem)
    C = np.full((batch, M, N), np.nan, np.float32)
    dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=C)
    prg = cl.Program(ctx, MM.mma_source(cfg, ta, tb, epilogue)).build()
    k = cl.Kernel(prg, GEMM_KERNEL_NAME)
    lda = M if ta else K
    ldb = K if tb else N
    args = [dc, da, db] + [np.int32(v) for v in (M, N, K, lda, ldb, N, M * K, K * N, M * N,
                                                 0, 0, 0)]
    if extra is not None:
        args.append(extra(ctx))
    k.set_args(*args)
    g, l_ = MM.launch_dims(cfg, batch, M, N)
    cl.enqueue_nd_range_kernel(q, k, g, l_)
    cl.enqueue_copy(q, C, dc)
    q.finish()
    want = _tf32(A).astype(np.float64) @ _tf32(B).astype(np.float64)
    return C, want, K


def _close(C, want, K):
    scale = np.sqrt(K) * np.abs(want).max() * 1e-6 + 1e-6
    assert not np.isnan(C).any()
    np.testing.assert_allclose(C, want, rtol=0, atol=10 * scale)


@needs_mma
@pytest.mark.parametrize("cfg,ta,tb", [(c, ta, tb) for c in MM.MMA_TIERS + MM.SMALL_TIERS
                                       for ta, tb in itertools.product((False, True), repeat=2)])
def test_products(cfg, ta, tb):
    for M, N, K in [(256, 128, 64), (130, 70, 40), (7, 5, 3), (300, 33, 290)]:
        _close(*_run(cfg, ta, tb, M, N, K))


@needs_mma
def test_batched_and_epilogue():
    C, want, K = _run(MM.MMA_TIERS[1], False, False, 96, 72, 48, batch=3, epilogue="acc * 2 + 1")
    _close(C, 2 * want + 1, K)


@needs_mma
def test_statement_epilogue_writes_two_outputs():
    epi = GemmEpilogue(params="__global float* o1", args="o1",
                       body="C[ci] = max(acc, 0.0f); o1[ci] = acc;")
    C, want, K = _run(MM.MMA_TIERS[1], False, False, 130, 70, 40, epilogue=epi,
                      extra=lambda ctx: cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 130 * 70))
    _close(C, np.maximum(want, 0), K)


# ---- gemm_mma.py with 16-bit operands (m16n8k16; the convolutions' implicit GEMMs) ----

@pytest.mark.parametrize("operands,out", [("bf16", "bfloat16"), ("f16", "half"),
                                          ("bf16", "float")])
def test_half_source_generates(operands, out):
    src = MM.mma_source(MM.choose_mma_config(100, 64, operands), True, False,
                        operands=operands, out=out)
    assert f"m16n8k16.row.col.f32.{operands}.{operands}.f32" in src


def _run_half(cfg, ta, tb, M, N, K, operands, out, batch=1):
    import ml_dtypes
    dt = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[operands]
    odt = {"float": np.float32, "half": np.float16, "bfloat16": ml_dtypes.bfloat16}[out]
    ctx = cl.Context([DEV])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(M * 5 + N + K)
    A = rng.standard_normal((batch, M, K)).astype(dt)
    B = rng.standard_normal((batch, K, N)).astype(dt)
    a_mem = np.ascontiguousarray(A.transpose(0, 2, 1) if ta else A)
    b_mem = np.ascontiguousarray(B.transpose(0, 2, 1) if tb else B)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_mem.view(np.uint16))
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_mem.view(np.uint16))
    C = np.zeros((batch, M, N), odt)
    dc = cl.Buffer(ctx, mf.READ_WRITE, C.nbytes)
    from netcl.core.kernels import _with_preambles
    src = _with_preambles(MM.mma_source(cfg, ta, tb, operands=operands, out=out))
    k = cl.Kernel(cl.Program(ctx, src).build(), GEMM_KERNEL_NAME)
    lda, ldb = (M if ta else K), (K if tb else N)
    k.set_args(dc, da, db, *[np.int32(v) for v in (M, N, K, lda, ldb, N, M * K, K * N, M * N,
                                                   0, 0, 0)])
    g, l_ = MM.launch_dims(cfg, batch, M, N)
    cl.enqueue_nd_range_kernel(q, k, g, l_)
    cl.enqueue_copy(q, C.view(np.uint16) if C.itemsize == 2 else C, dc)
    q.finish()
    want = A.astype(np.float64) @ B.astype(np.float64)
    return C.astype(np.float64), want, odt


@needs_mma
@pytest.mark.parametrize("ta,tb", list(itertools.product((False, True), repeat=2)))
@pytest.mark.parametrize("operands,out", [("bf16", "bfloat16"), ("f16", "half"),
                                          ("bf16", "float")])
def test_half_products(ta, tb, operands, out):
    for M, N, K, batch in [(256, 128, 64, 1), (130, 70, 40, 2), (7, 5, 3, 1), (300, 33, 290, 1)]:
        for cfg in (MM.choose_mma_config(M, N, operands),
                    MM.choose_mma_config(M, N, operands, min_blocks=1000)):   # a small tier
            C, want, odt = _run_half(cfg, ta, tb, M, N, K, operands, out, batch)
            # float32 sums of exact products, rounded once to the output's type
            tol = np.sqrt(K) * np.abs(want).max() * 1e-6 + 1e-6
            import ml_dtypes
            rel = 0 if out == "float" else float(ml_dtypes.finfo(odt).eps)
            np.testing.assert_allclose(C, want, rtol=rel, atol=10 * tol)


# ---- the staged kernel (gemm_mma_staged.py): f16 / bf16 (m16n8k16) and TF32 (m16n8k8) ----

from netcl.core.target import nvidia_local_mem_limit  # noqa: E402
from netcl.primitives import gemm_mma_staged as MH  # noqa: E402

H = MH.StagedConfig
# the variants the kernel generator offers: plain local loads instead of ldmatrix, deeper
# pipelines with shorter K steps, 8 warps
HALF_VARIANTS = [H(ldmatrix=False, bk=64, stages=3), H(bk=16, stages=4),
                 H(2, 4, 4, 8, bk=16, stages=3), H(bk=32, stages=3, group_m=2),
                 H(2, 2, 2, 2, bk=32, stages=3, group_m=8)]
LOCAL = 0 if DEV is None else max(DEV.local_mem_size, nvidia_local_mem_limit(DEV) or 0)


def _fits(cfg, ta, tb, async_copy, operands="f16"):
    return cfg.local_mem_bytes(ta, tb, async_copy, operands) + 256 <= LOCAL


@pytest.mark.parametrize("ta,tb", list(itertools.product((False, True), repeat=2)))
@pytest.mark.parametrize("operands,out", [("bf16", o) for o in MH.OUTPUTS] + [("tf32", "float")])
def test_staged_source_generates(ta, tb, operands, out):
    ptx = {"bf16": "m16n8k16.row.col.f32.bf16.bf16.f32", "tf32": "m16n8k8.row.col.f32.tf32"}
    for cfg in (MH.TF32_TIERS if operands == "tf32" else MH.HALF_TIERS) + HALF_VARIANTS:
        for async_copy in (True, False):
            src = MH.staged_source(cfg, ta, tb, operands, out, "acc * 2", async_copy)
            body = src.split("__kernel")[1]
            assert "mma.sync.aligned." + ptx[operands] in src and GEMM_KERNEL_NAME in src
            assert ("NETCL_CP16(" in body) == async_copy
            if operands != "tf32":
                assert ("NETCL_LDSM4" in body) == cfg.ldmatrix


def test_staged_bad_config():
    with pytest.raises(ValueError, match="bad StagedConfig"):
        H(bk=24).validate()
    with pytest.raises(ValueError, match="bad StagedConfig"):
        H(nj=3).validate()
    with pytest.raises(ValueError, match="staged mma GEMM: operands"):
        MH.staged_source(H(), False, False, "f8")
    with pytest.raises(ValueError, match="staged_source"):
        MH.staged_source(H(), False, False, "tf32", "half")


def test_choose_config_fits_local_memory():
    for operands in ("f16", "tf32"):
        for lm in (48 * 1024, 100 * 1024, 227 * 1024):
            for ta, tb in itertools.product((False, True), repeat=2):
                cfg = MH.choose_config(operands, 8192, 8192, lm, ta, tb)
                assert cfg.local_mem_bytes(ta, tb, True, operands) + 256 <= lm
                assert cfg.bn == 128
        assert MH.choose_config(operands, 4096, 40, 48 * 1024).bn <= 64
    assert MH.aligned("f16", 64, 8, 0) and not MH.aligned("f16", 64, 4, 0)
    assert MH.aligned("tf32", 64, 4, 0) and not MH.aligned("tf32", 66, 0, 0)


def _to_words(x, operands):
    """(storage, float64 values the kernel multiplies) of float32 `x`."""
    if operands == "tf32":
        return x, _tf32(x).astype(np.float64)
    if operands == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint16), h.astype(np.float64)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)       # bf16: the top half
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _run_staged(cfg, ta, tb, M, N, K, operands="f16", out="float", async_copy=True, batch=1,
                pad=0):
    """C of the staged kernel for random operands (each stored `pad` elements into its
    buffer), and the float64 product of the values the kernel multiplies."""
    ctx = cl.Context([DEV])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a_w, a_v = _to_words(rng.standard_normal((batch, M, K)).astype(np.float32), operands)
    b_w, b_v = _to_words(rng.standard_normal((batch, K, N)).astype(np.float32), operands)
    a_mem = np.concatenate([np.zeros(pad, a_w.dtype),
                            (a_w.transpose(0, 2, 1) if ta else a_w).ravel()])
    b_mem = np.concatenate([np.zeros(pad, b_w.dtype),
                            (b_w.transpose(0, 2, 1) if tb else b_w).ravel()])
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_mem)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_mem)
    if out == "bfloat16":
        C = np.full((batch, M, N), 0x7fc0, np.uint16)          # NaN
    else:
        C = np.full((batch, M, N), np.nan, {"float": np.float32, "half": np.float16}[out])
    dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=C)
    src = MH.staged_source(cfg, ta, tb, operands, out, async_copy=async_copy)
    k = cl.Kernel(cl.Program(ctx, src).build(), GEMM_KERNEL_NAME)
    lda = M if ta else K
    ldb = K if tb else N
    k.set_args(dc, da, db, *[np.int32(v) for v in (M, N, K, lda, ldb, N, M * K, K * N, M * N,
                                                   pad, pad, 0)])
    g, l_ = MH.launch_dims(cfg, batch, M, N)
    cl.enqueue_nd_range_kernel(q, k, g, l_)
    cl.enqueue_copy(q, C, dc)
    q.finish()
    if out == "bfloat16":
        C = (C.astype(np.uint32) << 16).view(np.float32)
    return C.astype(np.float64), a_v @ b_v, K


def _close_staged(C, want, K, out="float"):
    assert not np.isnan(C).any()
    scale = np.sqrt(K) * np.abs(want).max() * 1e-6 + 1e-6
    rtol = {"float": 0, "half": 2.0 ** -11, "bfloat16": 2.0 ** -8}[out]
    np.testing.assert_allclose(C, want, rtol=rtol, atol=10 * scale)


# aligned leading dimensions (cp.async): sizes that are multiples of 8, ragged against the
# tiles and K steps; any layout (register staging): odd sizes, operands 3 elements into
# their buffers
ALIGNED = [(256, 128, 64), (136, 72, 40), (8, 8, 24), (264, 40, 296)]
ANY = [(130, 70, 40), (7, 5, 3), (300, 33, 290)]
TRANS = list(itertools.product((False, True), repeat=2))


@needs_mma
@pytest.mark.parametrize("operands", ["f16", "tf32"])
@pytest.mark.parametrize("tier", range(7))
@pytest.mark.parametrize("ta,tb", TRANS)
def test_staged_products(operands, tier, ta, tb):
    cfg = (MH.TF32_TIERS if operands == "tf32" else MH.HALF_TIERS)[tier]
    if _fits(cfg, ta, tb, True, operands):
        for M, N, K in ALIGNED:
            _close_staged(*_run_staged(cfg, ta, tb, M, N, K, operands))
    if _fits(cfg, ta, tb, False, operands):
        for M, N, K in ANY:
            _close_staged(*_run_staged(cfg, ta, tb, M, N, K, operands, async_copy=False, pad=3))


@needs_mma
@pytest.mark.parametrize("cfg", HALF_VARIANTS)
@pytest.mark.parametrize("operands", ["f16", "tf32"])
@pytest.mark.parametrize("ta,tb", TRANS)
def test_staged_variants(cfg, operands, ta, tb):
    if not _fits(cfg, ta, tb, True, operands):
        pytest.skip("needs more local memory than this device has")
    for M, N, K in ALIGNED[:2]:
        _close_staged(*_run_staged(cfg, ta, tb, M, N, K, operands))


@needs_mma
@pytest.mark.parametrize("ta,tb", TRANS)
@pytest.mark.parametrize("operands,out", [("bf16", "bfloat16"), ("bf16", "float"),
                                          ("f16", "half")])
def test_staged_dtypes_and_outputs(ta, tb, operands, out):
    cfg = MH.HALF_TIERS[1]
    _close_staged(*_run_staged(cfg, ta, tb, 136, 72, 40, operands, out), out)
    _close_staged(*_run_staged(cfg, ta, tb, 130, 70, 40, operands, out, async_copy=False,
                               pad=3), out)


@needs_mma
@pytest.mark.parametrize("operands", ["bf16", "tf32"])
def test_staged_batched(operands):
    C, want, K = _run_staged(MH.HALF_TIERS[0], False, True, 96, 80, 48, operands, batch=3)
    _close_staged(C, want, K)
