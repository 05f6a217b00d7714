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


@pytest.mark.parametrize("cfg", MM.MMA_TIERS)
def test_source_generates(cfg):
    src = MM.mma_source(cfg, False, True, "acc * 2")
    assert "mma.sync.aligned.m16n8k8" in src and GEMM_KERNEL_NAME in src


def test_bad_config():
    with pytest.raises(ValueError, match="float32 only"):
        MM.MmaConfig().validate("double")
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
@pytest.mark.parametrize("cfg,ta,tb", [(c, ta, tb) for c in MM.MMA_TIERS
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
