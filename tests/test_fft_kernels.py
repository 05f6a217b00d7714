"""The device FFT kernels alone (netcl/primitives/fft_kernels.py), on raw PyOpenCL buffers:
batched forward and inverse DFTs against numpy.fft (in float64) for lengths 2^a 3^b 5^c 7^d
(mixed-radix Stockham: in one kernel, one row per vector lane, or passes through scratch),
short others on GPUs (the direct DFT) and the rest (Bluestein), complex64 and, where the
device has fp64, complex128; offsets, scratch, bad arguments; drawn lengths and batches; and
the GPU kernel family on this device. The fft primitive on Arrays: test_fft.py.

Kernels are compiled per length and dtype (about 0.5 s each on PoCL, cached on disk): the
lengths are chosen to cover the kernel shapes and radices with few builds (Bluestein's M of
509 and 17 is a length tested anyway), and built together first (`prebuilt`)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
from netcl.primitives.fft_bluestein import direct_max
from netcl.primitives.fft_kernels import enqueue_fft, fft_plan, scratch_bytes
from netcl.primitives.fft_passes import stockham_length, stockham_shapes
from netcl.primitives.fft_stockham import step_radices

cl = pytest.importorskip("pyopencl")

POWERS_OF_TWO = [1, 2, 4, 8, 16, 64, 256, 1024, 4096]
# radices 3, 5, 7 and their mixes with 2: rows per vector lane (short ones, on CPU devices),
# a kernel per row, steps of 9 and a lone 2 last; 17 and 509: Bluestein (M = 64, 1024)
MIXED = [3, 5, 6, 7, 9, 10, 12, 15, 25, 27, 45, 60, 100, 125, 243, 360, 1000, 1536, 3000,
         4096 * 3, 5 ** 6]
LENGTHS = POWERS_OF_TWO + MIXED + [17, 509]
# relative error bound, per log2(n), against numpy.fft in float64 (errors measured here are
# 5-20x below: 1.9e-7 for complex64 Bluestein at n = 40009, 9e-16 for complex128)
EPS = {np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-14}


@pytest.fixture(scope="module")
def dev():
    d = netcl.default_device()
    if d.is_numpy:
        pytest.skip("no OpenCL device")
    return d


@pytest.fixture(scope="module", autouse=True)
def prebuilt(dev):
    """The Stockham kernels of the lengths below (and of Bluestein's M for drawn lengths),
    built as one program: a compiler run per length costs PoCL about 0.2 s more than its
    share of a combined one (PoCL still compiles each kernel's machine code at its first
    launch, about 0.3-1 s)."""
    from netcl.primitives.fft_passes import build_kernels
    from netcl.primitives.fft_stockham import KERNEL_NAME, pass_source
    lengths = [n for n in LENGTHS + [1 << 17, 5 ** 7, 32, 128, 512]
               if n > 1 and stockham_length(n)]
    build_kernels(dev, [pass_source(s, np.dtype(t)) for t in dtypes_of(dev) for n in lengths
                        for s in stockham_shapes(dev, n, np.dtype(t))], KERNEL_NAME)


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
        expected = ("copy" if n == 1 else "stockham" if stockham_length(n) else
                    "direct" if n <= direct_max(dev) else "bluestein")
        assert plan.algorithm == expected


@pytest.mark.parametrize("n,batch", [(16, 1), (16, 37), (1000, 5), (7, 300), (60, 37),
                                     (4096, 9), (509, 3)])
def test_batches_and_offsets(dev, n, batch):
    rng = np.random.default_rng(batch)
    for dtype in dtypes_of(dev):
        x = random_rows(rng, batch, n, dtype)
        for inverse in (False, True):
            got, _ = device_fft(dev, x, inverse, src_pad=5, dst_pad=3)
            assert_matches_numpy(got, x, inverse)


@pytest.mark.parametrize("n", [1 << 17, 5 ** 7, 40009])
def test_long_rows_take_several_passes(dev, n):
    """Rows longer than one work-group's local memory: passes through scratch (5^7: radices
    625 and 125, whose runs of sub-transforms straddle the work-groups' on CPU devices;
    Bluestein, 40009 a prime: two chains of them, of M = 131072)."""
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
    a = fft_plan(dev, 509, 4, np.complex64, False)
    assert fft_plan(dev, 509, 4, np.dtype(np.complex64), False) is a
    assert fft_plan(dev, 509, 4, np.complex64, True) is not a
    assert (a.n, a.batch, a.dtype, a.inverse) == (509, 4, np.complex64, False)
    assert scratch_bytes(a) >= 4 * 1024 * 8     # rows of M = 1024 in scratch
    assert scratch_bytes(fft_plan(dev, 1024, 4, np.complex64, False)) == 0
    assert scratch_bytes(fft_plan(dev, 1000, 4, np.complex64, False)) == 0
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
    plan = fft_plan(dev, 509, 2, np.complex64, False)
    x = buffer(dev, nbytes=1018 * 8)
    y = buffer(dev, nbytes=1018 * 8)
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


@pytest.mark.parametrize("n", [8, 12, 1024, 100, 1 << 15, 5 ** 6, 11])
def test_gpu_kernel_family_on_this_device(dev, n):
    """The work-group kernels GPUs get (several work-items sharing each pass), run here
    (5^6: passes of 125 whose groups of 16 sub-transforms straddle rows and output blocks;
    11: the direct DFT, which CPU devices do not take)."""
    if not dev.target.host_cpu:
        pytest.skip("this device runs them in the other tests")
    rng = np.random.default_rng(n)
    with netcl.test_util.override_target(dev, kernel_family="gpu"):
        for inverse in (False, True):
            x = random_rows(rng, 3, n, np.complex64)
            got, plan = device_fft(dev, x, inverse, src_pad=1)
            assert all(p.local_size[0] > 1 for p in plan.passes)
            assert plan.algorithm == ("direct" if n == 11 else "stockham")
            assert_matches_numpy(got, x, inverse)


def test_lengths_and_steps():
    """Which lengths take the Stockham passes, and the steps of a pass: powers of two in
    radix-8 steps, then one of 4 or 2; the odd part in steps of 9, 7, 5, 3, larger first; a
    lone 2 last."""
    assert [n for n in range(2, 30) if not stockham_length(n)] == [11, 13, 17, 19, 22, 23,
                                                                   26, 29]
    assert not stockham_length(509) and stockham_length(2 ** 10 * 3 ** 4 * 5 ** 2 * 7)
    assert step_radices(1024) == [8, 8, 8, 2] and step_radices(1000) == [8, 5, 5, 5]
    assert step_radices(3 ** 10) == [9] * 5 and step_radices(6) == [3, 2]
    assert step_radices(4 * 7 * 5 * 27) == [4, 9, 7, 5, 3]
    assert step_radices(250) == [5, 5, 5, 2]


@pytest.mark.parametrize("n", [5 ** 7, 3 ** 11, 2 ** 20 * 3, 7 ** 8, 2 ** 27])
def test_long_rows_split_into_passes(dev, n):
    """The passes of long rows: radices that multiply to n, near equal, each pass fitting
    local memory (no build: shapes only)."""
    for dtype in dtypes_of(dev):
        dtype = np.dtype(dtype)
        shapes = stockham_shapes(dev, n, dtype)
        assert math.prod(s.radix for s in shapes) == n
        assert [s.ns for s in shapes] == [math.prod(t.radix for t in shapes[:i])
                                          for i in range(len(shapes))]
        limit = dev.target.local_mem_limit
        assert not limit or all(s.local_bytes(dtype) <= limit for s in shapes)
        radices = [s.radix for s in shapes]     # near equal: within a prime factor (<= 7)
        assert len(shapes) > 1 and max(radices) <= 7 * min(radices)


@pytest.mark.parametrize("m", [2, 3, 5, 6, 7, 8, 9, 12, 15, 25, 27, 49, 60])
def test_codelets_compute_the_dft(m):
    """The straight-line C of an m-point DFT (fft_codelets.Emitter), run as Python
    arithmetic (its statements are C and Python alike once the f suffixes go), against
    numpy.fft in float64 (no device)."""
    from netcl.primitives.fft_codelets import Emitter
    em = Emitter("double", "t", 1)
    ys = em.dft([(f"x{j}r", f"x{j}i") for j in range(m)])
    x = random_rows(np.random.default_rng(m), 1, m, np.complex128)[0]
    env = {f"x{j}{part}": getattr(x[j], name) for j in range(m)
           for part, name in (("r", "real"), ("i", "imag"))}
    for line in em.lines:           # const double tNr = ..., tNi = ...;
        for assignment in line[len("const double "):-1].split(", "):
            name, expr = assignment.split(" = ")
            env[name] = eval(expr, {}, env)
    got = np.array([env[r] + 1j * env[i] for r, i in ys])
    np.testing.assert_allclose(got, np.fft.fft(x), rtol=0, atol=1e-14 * np.abs(x).sum())


def test_unit_roots_are_accurate():
    """Twiddles and codelet constants: exact where the root is (+-1 +- i) / sqrt(2)^k, and
    within an ulp of float64 elsewhere (np.exp of the rounded angle is up to 9 off)."""
    from netcl.primitives.fft_codelets import unit_roots
    w = unit_roots(np.arange(8), 8)
    h = np.sqrt(0.5)
    np.testing.assert_array_equal(w, [1, h - h * 1j, -1j, -h - h * 1j, -1, -h + h * 1j, 1j,
                                      h + h * 1j])
    assert unit_roots(1, 3) == complex(-0.5, -np.sqrt(0.75))
    assert unit_roots(-1, 6) == unit_roots(5, 6) == complex(0.5, np.sqrt(0.75))
    for m in (7, 1000, 3 ** 10, 1 << 20):
        k = np.arange(0, m, max(1, m // 4096))
        w = unit_roots(k, m)
        assert np.abs(w - np.exp(-2j * np.pi * (k / m))).max() < 1.5e-15
        assert np.abs(np.abs(w) - 1).max() <= 2.3e-16
