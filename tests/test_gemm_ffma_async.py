"""Float32 products at full precision on cp.async-staged FFMA tiles
(netcl.primitives.gemm_ffma_async). The source generator and the pack kernel (plain OpenCL
C) are checked on every device; the GEMM itself where the default device has cp.async
(NVIDIA sm_80 and newer), against float64 products, for every operand layout, ragged
sizes, batches and offsets."""
from __future__ import annotations

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

import netcl
import netcl.numpy as jnp
from netcl.core import kernels
from netcl.primitives import gemm_ffma_async as F


def test_source():
    cfg = F.AsyncFfmaConfig()
    src = F.ffma_async_source(cfg)
    assert F.KERNEL_NAME in src and "cp.async.cg.shared.global" in src
    assert f"reqd_work_group_size({cfg.wg_n}, {cfg.wg_m}, 1)" in src
    assert src.count("mad(") == cfg.tm * cfg.tn
    # two stages: each iteration waits for every copy it started
    assert "cp.async.wait_group 0;" in src
    assert "cp.async.wait_group 1;" in F.ffma_async_source(F.AsyncFfmaConfig(stages=3))
    assert cfg.local_mem_bytes() <= 48 * 1024     # (what every NVIDIA driver grants)


@pytest.mark.parametrize("R,K,batch,ld,off", [(37, 45, 1, 45, 0), (64, 32, 2, 40, 3),
                                              (5, 70, 3, 70, 8)])
def test_pack_transposes_and_pads(R, K, batch, ld, off):
    # (batch, R, K) rows of length K at stride ld from element off -> (batch, K, ldo),
    # R contiguous, zeros in [R, ldo)
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no OpenCL device")
    rng = np.random.default_rng(0)
    bstride = R * ld
    flat = rng.standard_normal(off + batch * bstride).astype(np.float32)
    ldo = -(-R // 4) * 4
    ctx, queue = dev.context, dev.queue
    mf = cl.mem_flags
    src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=flat)
    out = cl.Buffer(ctx, mf.READ_WRITE, batch * K * ldo * 4)
    k = kernels.kernel(dev, F.PACK_SOURCE, "netcl_free_major_pack")
    k.set_args(out, src, np.int32(R), np.int32(K), np.int32(ld), np.int64(bstride),
               np.int64(off), np.int32(ldo))
    cl.enqueue_nd_range_kernel(queue, k, (-(-K // 32) * 32, -(-R // 32) * 8, batch),
                               (32, 8, 1))
    got = np.empty((batch, K, ldo), np.float32)
    cl.enqueue_copy(queue, got, out)
    x = flat[off:].reshape(batch, R, ld)[:, :, :K]
    np.testing.assert_array_equal(got[:, :, :R], x.transpose(0, 2, 1))
    np.testing.assert_array_equal(got[:, :, R:], 0)


def test_not_taken_without_cp_async_or_for_small_products():
    dev = netcl.default_device()
    a = jnp.ones((4, 8), dtype=jnp.float32)
    out_aval = netcl.ShapeDtypeStruct((4, 4), jnp.float32)
    run = F.ffma_async_run(dev, a, a.T, ((), (0,), (1,)), ((), (0,), (1,)), 1, 4, 4, 8,
                           out_aval)
    assert run is None      # (too small everywhere; no cp.async off NVIDIA)


def _async_device():
    dev = netcl.default_device()
    if dev.is_numpy or not dev.target.tensor_cores:
        pytest.skip("the default device has no cp.async (NVIDIA sm_80+)")
    return dev


def _spy(monkeypatch):
    """Lower MIN_WORK so that test-sized products take the kernel; [Launch] made."""
    made = []
    real = F.ffma_async_run

    def spy(*args, **kwargs):
        run = real(*args, **kwargs)
        made.append(run)
        return run
    monkeypatch.setattr(F, "MIN_WORK", 1)
    monkeypatch.setattr(F, "ffma_async_run", spy)
    netcl.test_util.forget_launchers()
    return made


def _close(got, want, K):
    scale = np.sqrt(K) * np.abs(want).max()
    assert np.abs(got - want).max() <= 1e-5 * scale


@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt", "batched", "offset", "misaligned"])
def test_products_at_highest_precision(layout, monkeypatch):
    dev = _async_device()
    rng = np.random.default_rng(1)
    # (ragged against the blocks and K tiles; rows of 16 bytes, as operands read in place
    # must have: "misaligned" has B's rows of 1201 floats, which gemm.py's kernel takes)
    M, N, K = 2052, 1201 if layout == "misaligned" else 1204, 333
    if dev.capabilities.compute_units > -(-M // 128) * -(-N // 128):
        pytest.skip("more compute units than the product's blocks")
    batch = 2 if layout == "batched" else 1
    a = rng.standard_normal((batch, M, K)).astype(np.float32)
    b = rng.standard_normal((batch, K, N)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    da, db = jnp.asarray(a), jnp.asarray(b)
    if layout[0] == "t":
        da = jnp.asarray(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(0, 2, 1)
    if layout[1:] == "t":
        db = jnp.asarray(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(0, 2, 1)
    if layout == "offset":       # views from element 4 (aligned) and 1 (packed)
        da = jnp.asarray(np.concatenate([np.zeros((1, 4, K), np.float32), a], 1))[:, 4:]
        db = jnp.asarray(np.concatenate([np.zeros((1, 1, N), np.float32), b], 1))[:, 1:]
    if batch == 1:
        da, db, want = da[0], db[0], want[0]
    made = _spy(monkeypatch)
    got = np.asarray(jnp.matmul(da, db, precision="highest")).astype(np.float64)
    _close(got, want, K)
    assert made and (made[-1] is None) == (layout == "misaligned")


def test_small_products_keep_the_tiled_kernel(monkeypatch):
    _async_device()
    made = _spy(monkeypatch)
    monkeypatch.setattr(F, "MIN_WORK", 1 << 30)
    a = jnp.ones((256, 256), dtype=jnp.float32)
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, a, precision="highest")), 256.0)
    assert made == [None]
