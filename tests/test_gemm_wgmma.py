"""Hopper's warpgroup tensor-core GEMM (netcl.primitives.gemm_wgmma), on NVIDIA GPUs of
compute capability 9.0 (skipped elsewhere; the source generator, the configuration choice
and the PTX retargeting of kernels.build_program are checked everywhere). Results are
compared with float64 products of the 16-bit operands, which the kernel must match to
float32 accumulation error, and then to the rounding of its output dtype."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

from netcl.core import kernels  # noqa: E402
from netcl.core.target import nvidia_wgmma  # noqa: E402
from netcl.primitives import gemm_wgmma as W  # noqa: E402
from netcl.primitives.gemm import GEMM_KERNEL_NAME, GemmEpilogue  # noqa: E402


def _device():
    for p in cl.get_platforms():
        for d in p.get_devices():
            if nvidia_wgmma(d):
                return d
    return None


DEV = _device()
needs_wgmma = pytest.mark.skipif(DEV is None, reason="needs an NVIDIA GPU of sm_90")
TRANS = list(itertools.product((False, True), repeat=2))


@pytest.mark.parametrize("cfg", W.TIERS)
@pytest.mark.parametrize("ta,tb", TRANS)
def test_source_defers_the_warpgroup_instructions(cfg, ta, tb):
    src = W.wgmma_source(cfg, ta, tb, "bf16", "bfloat16")
    assert kernels.ptx_target_mark("sm_90a") in src and GEMM_KERNEL_NAME in src
    # every wgmma statement sits behind the deferral comment (the sm_90 build assembles)
    for line in src.splitlines():
        if "wgmma." in line and "asm" in line:
            assert f"{kernels.PTX_DEFERRED} wgmma." in line
    # imm-trans flags: A M-major where transposed, B N-major where not transposed
    assert f", p, 1, 1, {int(ta)}, {int(not tb)};" in src


def test_ptx_retarget_enables_deferred_statements():
    ptx = (".version 9.0\n.target sm_90, texmode_independent\n.address_size 64\n"
           "\t// begin inline asm\n\t//@ wgmma.fence.sync.aligned;\n\t// end inline asm\n"
           "\t// a comment that stays\n")
    out = kernels.retarget_ptx(ptx, "sm_90a")
    assert ".target sm_90a, texmode_independent" in out
    assert "\t wgmma.fence.sync.aligned;" in out and "//@" not in out
    assert "// a comment that stays" in out


def test_bad_config():
    with pytest.raises(ValueError, match="operands must be"):
        W.WgmmaConfig().validate("f8")
    with pytest.raises(ValueError, match="bad WgmmaConfig"):
        W.WgmmaConfig(bn=256, n_inst=96).validate()
    with pytest.raises(ValueError, match="bad WgmmaConfig"):
        W.WgmmaConfig(stages=2, inflight=1).validate()
    with pytest.raises(ValueError, match="cannot store C"):
        W.wgmma_source(W.TIERS[0], False, False, "bf16", "double")
    with pytest.raises(ValueError, match="cannot store C"):
        W.wgmma_source(W.TIERS[0], False, True, "tf32", "bfloat16")
    with pytest.raises(ValueError, match="K-major"):
        W.wgmma_source(W.TIERS[0], False, False, "tf32")


def test_choose_config():
    big = W.choose_config(8192, 8192, 227 * 1024, 132)
    assert (big.bm, big.bn) == (128, 256)
    # few columns: a narrower block; too few blocks for the device: none
    narrow = W.choose_config(262144, 64, 227 * 1024, 132)
    assert (narrow.bm, narrow.bn) == (128, 64)
    assert W.choose_config(256, 1024, 227 * 1024, 132) is None
    assert W.choose_config(256, 1024, 227 * 1024, 8) is not None
    # every tier needs more than the 48 KB an OpenCL driver reports by default
    assert W.choose_config(8192, 8192, 48 * 1024, 132) is None
    for cfg in W.TIERS:
        cfg.validate()
        assert cfg.local_mem_bytes() <= 227 * 1024


def _tf32(x):
    """float32 `x` rounded to TF32 (10 mantissa bits), to nearest, ties away (cvt.rna)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def _words(x, operands):
    """(storage, float64 values the kernel multiplies) of float32 `x`: 16-bit words, or
    float32 words already rounded to TF32."""
    if operands == "tf32":
        t = _tf32(x)
        return t, t.astype(np.float64)
    if operands == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint16), h.astype(np.float64)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)       # bf16: the top half
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _run(cfg, ta, tb, M, N, K, operands="bf16", out="float", batch=1, pad=0, epilogue=None):
    """C of the kernel for random operands (each stored `pad` elements into its buffer),
    and the float64 product of the values it multiplies."""
    ctx = cl.Context([DEV])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a_w, a_v = _words(rng.standard_normal((batch, M, K)).astype(np.float32), operands)
    b_w, b_v = _words(rng.standard_normal((batch, K, N)).astype(np.float32), operands)
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
    extra = []
    if epilogue is not None:
        second = np.full((batch, M, N), np.nan, np.float32)
        d2 = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=second)
        extra = [d2]
    src = W.wgmma_source(cfg, ta, tb, operands, out, epilogue)
    k = cl.Kernel(kernels.build_program(ctx, DEV, src), GEMM_KERNEL_NAME)
    lda, ldb = (M if ta else K), (K if tb else N)
    k.set_args(dc, da, db, *[np.int32(v) for v in (M, N, K, lda, ldb, N, M * K, K * N, M * N,
                                                   pad, pad, 0)], *extra)
    g, l_ = W.launch_dims(cfg, batch, M, N)
    cl.enqueue_nd_range_kernel(q, k, g, l_)
    cl.enqueue_copy(q, C, dc)
    if extra:
        cl.enqueue_copy(q, second, extra[0])
    q.finish()
    if out == "bfloat16":
        C = (C.astype(np.uint32) << 16).view(np.float32)
    want = a_v @ b_v
    return (C.astype(np.float64), want, K) if not extra else (C, second, want, K)


def _close(C, want, K, out="float"):
    assert not np.isnan(C).any()
    scale = np.sqrt(K) * np.abs(want).max() * 1e-6 + 1e-6
    rtol = {"float": 0, "half": 2.0 ** -11, "bfloat16": 2.0 ** -8}[out]
    np.testing.assert_allclose(C, want, rtol=rtol, atol=10 * scale)


# sizes that are multiples of 8 (cp.async's 16-byte chunks), ragged against the blocks and
# the K step of 64; one product of several K steps and blocks in each direction
SIZES = [(256, 256, 128), (136, 72, 40), (8, 8, 24), (264, 200, 296), (520, 776, 392)]


@needs_wgmma
@pytest.mark.parametrize("tier", range(len(W.TIERS)))
@pytest.mark.parametrize("ta,tb", TRANS)
def test_products(tier, ta, tb):
    for M, N, K in SIZES:
        _close(*_run(W.TIERS[tier], ta, tb, M, N, K))


@needs_wgmma
@pytest.mark.parametrize("cfg", [W.WgmmaConfig(inflight=0, stages=3),
                                 W.WgmmaConfig(wgs=2, mt=2, bn=128, n_inst=128),
                                 W.WgmmaConfig(bn=256, n_inst=128, group_m=1)])
def test_variants(cfg):
    for ta, tb in TRANS:
        _close(*_run(cfg, ta, tb, *SIZES[3]))


@needs_wgmma
@pytest.mark.parametrize("ta,tb", TRANS)
@pytest.mark.parametrize("operands,out", [("bf16", "bfloat16"), ("f16", "half"),
                                          ("f16", "float")])
def test_dtypes_and_outputs(ta, tb, operands, out):
    _close(*_run(W.TIERS[1], ta, tb, 136, 72, 40, operands, out), out)


@needs_wgmma
def test_batched_offsets_and_statement_epilogue():
    C, want, K = _run(W.TIERS[0], False, True, 96, 80, 48, batch=3, pad=8)
    _close(C, want, K)
    epi = GemmEpilogue("__global float* o1", "o1",
                       "C[ci] = acc; o1[ci] = acc > 0.0f ? acc : 0.0f;")
    C, second, want, K = _run(W.TIERS[2], True, False, 72, 136, 40, epilogue=epi)
    _close(C.astype(np.float64), want, K)
    _close(second.astype(np.float64), np.maximum(want, 0), K)


def test_a_driver_that_cannot_build_it_falls_back():
    # a target claiming wgmma whose driver cannot build the kernel (PoCL builds no PTX):
    # the target loses wgmma (warned), the mma.sync kernel is tried next, and the product
    # still comes out right (here from the float32 kernels, PoCL building no PTX at all)
    import warnings

    import netcl
    import netcl.numpy as jnp
    dev = netcl.default_device()
    if dev.is_numpy or dev.target.tensor_cores:
        pytest.skip("needs an OpenCL device without tensor cores")
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((384, 256)), jnp.bfloat16)
    b = jnp.asarray(rng.standard_normal((256, 512)), jnp.bfloat16)
    want = np.asarray(a.astype(jnp.float32) @ b.astype(jnp.float32))
    with netcl.test_util.override_target(dev, tensor_cores=True, wgmma=True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # (PoCL's few compute units: these few blocks are enough for wgmma's tiles)
            got = np.asarray((a @ b).astype(jnp.float32))
            assert not dev.target.wgmma
    assert any("wgmma GEMM failed to build" in str(w.message) for w in caught)
    np.testing.assert_allclose(got, want, rtol=2 ** -7, atol=1e-2)


@needs_wgmma
@pytest.mark.parametrize("tier", range(len(W.TIERS)))
def test_tf32_products(tier):
    for M, N, K in SIZES:
        _close(*_run(W.TIERS[tier], False, True, M, N, K, "tf32"))
    C, want, K = _run(W.TIERS[tier], False, True, 96, 80, 48, "tf32", batch=2, pad=4)
    _close(C, want, K)


@needs_wgmma
@pytest.mark.tf32
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt", "batched"])
def test_tf32_matmul_at_default_precision(layout, monkeypatch):
    # jnp.matmul of float32 at the default precision on an sm_90 device: both operands
    # packed K-major and rounded to TF32, then the wgmma kernel (dot_tensor_cores.tf32_run)
    import netcl
    import netcl.numpy as jnp
    from netcl.primitives import dot_tensor_cores as dtc
    dev = netcl.default_device()
    if not dev.target.wgmma:
        pytest.skip("the default device has no wgmma")
    rng = np.random.default_rng(3)
    M, N, K = 2056, 1032, 328          # (ragged against every block and K step)
    batch = 2 if layout == "batched" else 1
    a = rng.standard_normal((batch, M, K)).astype(np.float32)
    b = rng.standard_normal((batch, K, N)).astype(np.float32)
    want = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    da, db = jnp.asarray(a), jnp.asarray(b)
    if layout[0] == "t":
        da = jnp.asarray(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(0, 2, 1)
    if layout[1:] == "t":
        db = jnp.asarray(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(0, 2, 1)
    if batch == 1:
        da, db, want = da[0], db[0], want[0]
    assert W.choose_config(M, N, dev.target.local_mem_limit,
                           dev.capabilities.compute_units) is not None
    # (the product took the packs and the wgmma kernel: tf32_run made its launcher)
    made = []
    real = dtc.tf32_run

    def spy(*args):
        run = real(*args)
        made.append(run)
        return run
    monkeypatch.setattr(dtc, "tf32_run", spy)
    netcl.test_util.forget_launchers()
    got = np.asarray(jnp.matmul(da, db)).astype(np.float64)
    _close(got, want, K)
    assert made and made[-1] is not None
    assert any("netcl_tf32_" in k.source for k in made[-1].kernels)
    assert any(".tf32.tf32" in k.source for k in made[-1].kernels)
