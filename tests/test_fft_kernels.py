"""The device FFT kernels alone (netcl/primitives/fft_kernels.py), on raw PyOpenCL buffers:
batched forward and inverse DFTs against numpy.fft (in float64) for power-of-two lengths
(Stockham), short odd ones (the direct DFT) and the rest (Bluestein), complex64 and, where
the device has fp64, complex128; offsets, scratch, bad arguments; drawn lengths and batches;
and the GPU kernel family on this device. The fft primitive on Arrays: test_fft.py."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
from netcl.primitives.fft_bluestein import direct_max
from netcl.primitives.fft_kernels import enqueue_fft, fft_plan, scratch_bytes

cl = pytest.importorskip("pyopencl")

LENGTHS = [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 64, 100, 128, 256, 1000, 1024, 4096]
# relative error bound, per log2(n), against numpy.fft in float64 (errors measured here are
# 5-20x below: 2e-7 for complex64 Bluestein at n = 3000, 1e-15 for complex128)
EPS = {np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-14}


@pytest.fixture(scope="module")
def dev():
    d = netcl.default_device()
    if d.is_numpy:
        pytest.skip("no OpenCL device")
    return d


def dtypes_of(dev):
    return [np.complex64] + ([np.complex128] if dev.capabilities.fp64 else [])


def random_rows(rng, batch, n, dtype):
    return (rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))).astype(dtype)


def buffer(dev, host=None, nbytes=None):
    mf = cl.mem_flags
    if host is not None and host.nbytes:
        return cl.Buffer(dev.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    return cl.Buffer(dev.context, mf.READ_WRITE, max(nbytes or 0, 16))


def device_fft(dev, x, inverse, src_pad=0, dst_pad=0):
    """fft/ifft of the rows of `x` (batch, n) through raw buffers, the input at element
    `src_pad` of its buffer and the output at `dst_pad` of its own."""
    batch, n = x.shape
    plan = fft_plan(dev, n, batch, x.dtype, inverse)
    src_host = np.concatenate([np.full(src_pad, 7 + 7j, x.dtype), x.reshape(-1)])
    src = buffer(dev, src_host)
    dst = buffer(dev, nbytes=(dst_pad + x.size) * x.itemsize)
    need = scratch_bytes(plan)
    scratch = buffer(dev, nbytes=need) if need else None
    enqueue_fft(dev.queue, plan, src, dst, scratch, src_offset_elems=src_pad,
                dst_offset_elems=dst_pad).wait()
    out = np.empty(dst_pad + x.size, x.dtype)
    if out.size:
        cl.enqueue_copy(dev.queue, out, dst)
    back = np.empty_like(src_host)
    if back.size:
        cl.enqueue_copy(dev.queue, back, src)
    np.testing.assert_array_equal(back, src_host)       # src is only read
    return out[dst_pad:].reshape(batch, n), plan


def assert_matches_numpy(got, x, inverse):
    n = x.shape[-1]
    want = (np.fft.ifft if inverse else np.fft.fft)(x.astype(np.complex128), axis=-1)
    tol = EPS[x.dtype] * max(1.0, math.log2(max(n, 1)))
    scale = np.abs(want).max() if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("inverse", [False, True], ids=["fft", "ifft"])
@pytest.mark.parametrize("n", LENGTHS)
def test_matches_numpy(dev, n, inverse):
    rng = np.random.default_rng(n)
    batch = 3 if n <= 1024 else 2
    for dtype in dtypes_of(dev):
        x = random_rows(rng, batch, n, dtype)
        got, plan = device_fft(dev, x, inverse)
        assert got.dtype == dtype
        assert_matches_numpy(got, x, inverse)
        expected = ("copy" if n == 1 else "stockham" if n & (n - 1) == 0 else
                    "direct" if n <= direct_max(dev) else "bluestein")
        assert plan.algorithm == expected


@pytest.mark.parametrize("n,batch", [(16, 1), (16, 37), (1000, 5), (7, 300), (4096, 9)])
def test_batches_and_offsets(dev, n, batch):
    rng = np.random.default_rng(batch)
    for dtype in dtypes_of(dev):
        x = random_rows(rng, batch, n, dtype)
        for inverse in (False, True):
            got, _ = device_fft(dev, x, inverse, src_pad=5, dst_pad=3)
            assert_matches_numpy(got, x, inverse)


@pytest.mark.parametrize("n", [1 << 17, 40000])
def test_long_rows_take_several_passes(dev, n):
    """Rows longer than one work-group's local memory: passes through scratch (Bluestein:
    two chains of them, of M = 131072)."""
    rng = np.random.default_rng(0)
    x = random_rows(rng, 2, n, np.complex64)
    for inverse in (False, True):
        got, plan = device_fft(dev, x, inverse, src_pad=2, dst_pad=1)
        assert_matches_numpy(got, x, inverse)
        assert len(plan.passes) >= (4 if plan.algorithm == "bluestein" else 2)
        assert scratch_bytes(plan) > 0


def test_inverse_undoes_forward(dev):
    rng = np.random.default_rng(3)
    for n in (12, 256, 100):
        x = random_rows(rng, 4, n, np.complex64)
        y, _ = device_fft(dev, x, inverse=False)
        back, _ = device_fft(dev, y, inverse=True)
        np.testing.assert_allclose(back, x, rtol=1e-5, atol=1e-5)


def test_batch_zero_and_length_one(dev):
    plan = fft_plan(dev, 8, 0, np.complex64, inverse=False)
    assert plan.algorithm == "copy" and scratch_bytes(plan) == 0
    enqueue_fft(dev.queue, plan, buffer(dev, nbytes=16), buffer(dev, nbytes=16), None).wait()
    x = np.array([[1 + 2j], [3 - 4j]], np.complex64)
    for inverse in (False, True):
        got, plan = device_fft(dev, x, inverse)
        np.testing.assert_array_equal(got, x)
        assert plan.algorithm == "copy"


def test_plans_are_cached_and_scratch_is_sized(dev):
    a = fft_plan(dev, 1000, 4, np.complex64, False)
    assert fft_plan(dev, 1000, 4, np.dtype(np.complex64), False) is a
    assert fft_plan(dev, 1000, 4, np.complex64, True) is not a
    assert (a.n, a.batch, a.dtype, a.inverse) == (1000, 4, np.complex64, False)
    assert scratch_bytes(a) >= 4 * 2048 * 8     # rows of M = 2048 in scratch
    assert scratch_bytes(fft_plan(dev, 1024, 4, np.complex64, False)) == 0
    assert fft_plan(dev.cl_device, 8, 2, np.complex64, False).n == 8   # a pyopencl.Device


@pytest.mark.parametrize("n,batch,message", [(0, 1, "n must be >= 1, got n=0"),
                                             (-3, 1, "n must be >= 1, got n=-3"),
                                             (8, -1, "batch must be >= 0, got batch=-1")])
def test_bad_sizes_raise(dev, n, batch, message):
    with pytest.raises(ValueError, match=f"fft_plan: {message}"):
        fft_plan(dev, n, batch, np.complex64, False)


def test_bad_arguments_raise(dev):
    with pytest.raises(TypeError, match="fft_plan: dtype"):
        fft_plan(dev, 8, 1, np.float32, False)
    with pytest.raises(TypeError, match="fft_plan: n must be an int"):
        fft_plan(dev, 8.0, 1, np.complex64, False)
    plan = fft_plan(dev, 1000, 2, np.complex64, False)
    x = buffer(dev, nbytes=2000 * 8)
    y = buffer(dev, nbytes=2000 * 8)
    with pytest.raises(ValueError, match="scratch"):
        enqueue_fft(dev.queue, plan, x, y, None)
    with pytest.raises(ValueError, match="dst holds"):
        enqueue_fft(dev.queue, plan, x, buffer(dev, nbytes=100), buffer(dev, nbytes=1 << 20))
    with pytest.raises(ValueError, match="overlaps"):
        enqueue_fft(dev.queue, fft_plan(dev, 8, 1, np.complex64, False), x, x, None,
                    dst_offset_elems=4)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 300), batch=st.integers(0, 6), inverse=st.booleans(),
       double=st.booleans(), seed=st.integers(0, 2**16))
def test_drawn_lengths_match_numpy(dev, n, batch, inverse, double, seed):
    dtype = np.complex128 if double and dev.capabilities.fp64 else np.complex64
    x = random_rows(np.random.default_rng(seed), batch, n, dtype)
    got, _ = device_fft(dev, x, inverse, src_pad=seed % 3, dst_pad=seed % 2)
    assert_matches_numpy(got, x, inverse)


@pytest.mark.parametrize("n", [8, 12, 1024, 100, 1 << 15])
def test_gpu_kernel_family_on_this_device(dev, n):
    """The work-group kernels GPUs get (several work-items sharing each pass), run here."""
    if not dev.target.host_cpu:
        pytest.skip("this device runs them in the other tests")
    rng = np.random.default_rng(n)
    with netcl.test_util.override_target(dev, kernel_family="gpu"):
        for inverse in (False, True):
            x = random_rows(rng, 3, n, np.complex64)
            got, plan = device_fft(dev, x, inverse, src_pad=1)
            assert all(p.local_size[0] > 1 for p in plan.passes)
            assert_matches_numpy(got, x, inverse)
