"""Device Householder QR (netcl.primitives.linalg_device_qr) against np.linalg.qr (LAPACK's
geqrf + orgqr: the same reflectors, so Q and R are compared directly, signs included): drawn
shapes (tall, wide, square, batched, 1x1, empty) through the one-launch kernel and the
blocked algorithm, float32 and float64, both kernel families (the GPU family's
work-group kernels run on PoCL through override_target), strided operands; Q R = A, Q's
orthonormal columns, R upper triangular; NaN and inf in, NaN out; tiny and huge matrices;
rank-deficient ones; the public modes, jit, vmap and gradients through the existing rules."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.primitives import linalg_device as ld
from netcl.primitives import linalg_device_qr as ldq
from netcl.primitives import linalg_host as lh
from netcl.primitives.linalg_device import SMALL_N
from netcl.primitives.linalg_device_qr import CPU_LANES_N
from netcl.test_util import check_grads, forget_launchers, override_target

DEVICE = netcl.default_device()
PREFER_HOST = ldq._prefer_host          # (the policy itself: the fixture below replaces it)
pytestmark = pytest.mark.skipif(DEVICE.is_numpy, reason="device kernels: none on the fallback")

SETTINGS = settings(max_examples=30, deadline=None)
# the largest matrix of the one-launch kernel on this device (above: blocked)
ONE_LAUNCH = CPU_LANES_N if DEVICE.target.kernel_family == "cpu" else SMALL_N


@pytest.fixture(scope="module", autouse=True)
def device_always():
    """Device kernels at every size (the policy may send some to the host)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ldq, "_prefer_host", lambda device, m, n, batch: False)
        forget_launchers()
        yield
    forget_launchers()


def _tol(dtype, scale=1.0, cond=1.0):
    """Tolerances of a comparison with LAPACK: both round, and Q's and R's sensitivity grows
    with the condition number of A's leading min(m, n) columns."""
    eps = np.finfo(dtype).eps
    return dict(rtol=2000 * eps, atol=max(250 * eps, 10 * eps * cond) * scale)


def _cond(a):
    """The largest condition number of a's matrices' leading min(m, n) columns."""
    k = min(a.shape[-2:])
    if not a.size:
        return 1.0
    return float(np.max(np.linalg.cond(a[..., :k].astype(np.float64))))


def _device_launch(a):
    """The launcher eager dispatch uses for qr of `a` (a device Launch of one kernel lists
    it; the blocked one and the host path list none)."""
    from netcl.core.eval import eval_interpreter
    return eval_interpreter.launcher(lh.qr_p, (a,), {})


def _check_properties(a, q, r, dtype):
    """Q R = A, Q^T Q = I, R upper triangular, shapes and dtypes of the reduced QR."""
    *batch, m, n = a.shape
    k = min(m, n)
    assert q.shape == (*batch, m, k) and r.shape == (*batch, k, n)
    assert q.dtype == dtype and r.dtype == dtype
    eps = 1e-5 if np.dtype(dtype) == np.float32 else 1e-13
    big = max(1.0, float(np.max(np.abs(a), initial=0.0)))
    qd, rd = q.astype(np.float64), r.astype(np.float64)
    np.testing.assert_allclose(qd @ rd, a, atol=20 * eps * big * max(m, n, 1) ** 0.5)
    eye = np.broadcast_to(np.eye(k), qd.shape[:-2] + (k, k))
    np.testing.assert_allclose(np.swapaxes(qd, -1, -2) @ qd, eye, atol=20 * eps * max(m, 1) ** 0.5)
    assert (np.tril(r, -1) == 0).all()


def _check(a, family_note=""):
    """Device qr of a against np.linalg.qr and the QR properties."""
    dtype = a.dtype
    q, r = (np.asarray(x) for x in lh.qr(jnp.asarray(a)))
    _check_properties(a, q, r, dtype)
    if a.size:
        wq, wr = np.linalg.qr(a)
        scale, cond = max(1.0, float(np.abs(a).max())), _cond(a)
        np.testing.assert_allclose(q, wq, **_tol(dtype, 1.0, cond),
                                   err_msg=f"Q {a.shape} {family_note}")
        np.testing.assert_allclose(r, wr, **_tol(dtype, scale, cond),
                                   err_msg=f"R {a.shape} {family_note}")


@SETTINGS
@given(data=st.data())
def test_qr_matches_lapack_drawn_shapes(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    ranges = [(1, 12), (13, SMALL_N), (SMALL_N + 1, ONE_LAUNCH), (ONE_LAUNCH + 1, 160)]
    sizes = st.one_of(*(st.integers(lo, hi) for lo, hi in ranges if lo <= hi))
    m, n = data.draw(sizes), data.draw(sizes)
    batches = [(), (1,), (3,), (2, 5), (17,)] if max(m, n) <= ONE_LAUNCH else [(), (2,)]
    batch = data.draw(st.sampled_from(batches))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    scale = data.draw(st.sampled_from([1.0, 1e-3, 1e4]))
    a = (rng.standard_normal(batch + (m, n)) * scale).astype(dtype)
    if data.draw(st.booleans()):    # read transposed, through strides
        t = jnp.swapaxes(jnp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))), -1, -2)
        q, r = (np.asarray(x) for x in lh.qr(t))
        wq, wr = np.linalg.qr(a)
        np.testing.assert_allclose(q, wq, **_tol(dtype, 1.0, _cond(a)))
        np.testing.assert_allclose(r, wr, **_tol(dtype, scale, _cond(a)))
    else:
        _check(a)


@pytest.mark.parametrize("family", ["cpu", "gpu"])
def test_both_kernel_families_one_launch_and_blocked(family):
    rng = np.random.default_rng(1)
    one_launch = CPU_LANES_N if family == "cpu" else SMALL_N
    native = DEVICE.target.kernel_family
    with override_target(DEVICE, kernel_family=family):
        for dtype in (np.float32, np.float64):
            shapes = [(1, 1), (5, 3), (3, 5), (9, 8, 8), (2, SMALL_N, SMALL_N),
                      (SMALL_N + 1, 7), (7, SMALL_N + 30), (2, 100, 70)]
            if family == "cpu":
                shapes += [(CPU_LANES_N, CPU_LANES_N), (CPU_LANES_N + 1, 20), (20, 140),
                           (150, 140)]
            for shape in shapes:
                a = rng.standard_normal(shape).astype(dtype)
                _check(a, family)
                # (the CPU family's local matrices exceed a GPU's local memory: blocked)
                small = ldq._small(DEVICE, np.dtype(dtype), *shape[-2:])
                # (PoCL's local memory is the core's L2 cache: 512 KiB holds no 128 x 128)
                fits = DEVICE.capabilities.local_mem_size >= ldq._local_need(
                    DEVICE, np.dtype(dtype), ldq._cap(*shape[-2:]))
                assert small == (max(shape[-2:]) <= one_launch and fits) or family != native
                assert bool(_device_launch(jnp.asarray(a)).kernels) == small


def test_batch_of_small_matrices_is_one_launch(device_work):
    a = jnp.asarray(np.random.default_rng(2).standard_normal((300, 6, 5)).astype(np.float32))
    device_work.clear()
    q, r = lh.qr(a)
    q.block_until_ready()
    assert device_work == ["enqueue_nd_range_kernel"]      # and no host transfer


def test_strided_operands():
    rng = np.random.default_rng(3)
    for m, n in [(6, 4), (80, 40), (140, 40)]:
        a = rng.standard_normal((4, m, n)).astype(np.float32)
        wq, wr = np.linalg.qr(a)
        # a batch axis that does not merge with the other: copied first
        x = jnp.asarray(np.stack([a, a], axis=1))[:, 1]
        for got, want in zip(lh.qr(x), (wq, wr)):
            np.testing.assert_allclose(np.asarray(got), want, **_tol(np.float32, 1.0, _cond(a)))
        y = jnp.asarray(np.concatenate([a, a]))[::2]        # a strided batch
        for got, want in zip(lh.qr(y), np.linalg.qr(np.concatenate([a, a])[::2])):
            np.testing.assert_allclose(np.asarray(got), want, **_tol(np.float32, 1.0, _cond(a)))
        z = jnp.asarray(a)[:, 1:, ::2]                       # a sliced matrix
        for got, want in zip(lh.qr(z), np.linalg.qr(a[:, 1:, ::2])):
            np.testing.assert_allclose(np.asarray(got), want, **_tol(np.float32, 1.0, _cond(a)))


def test_empty_shapes():
    for shape in [(0, 3, 3), (0, 0), (4, 0), (0, 4), (2, 0, 3), (2, 5, 0)]:
        q, r = lh.qr(jnp.zeros(shape, jnp.float32))
        m, n = shape[-2:]
        assert q.shape == shape[:-2] + (m, min(m, n)) and r.shape == shape[:-2] + (min(m, n), n)


@pytest.mark.parametrize("n", [5, 70, 140])
def test_nan_and_inf_in_nan_out_other_matrices_unaffected(n):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, n, n))
    a[1, n // 2, 1] = np.nan
    a[2, 0, 0] = np.inf
    q, r = (np.asarray(x) for x in lh.qr(jnp.asarray(a)))
    for i in (1, 2):
        assert np.isnan(q[i]).any() and np.isnan(r[i]).any()
    wq, wr = np.linalg.qr(a[[0, 3]])
    np.testing.assert_allclose(q[[0, 3]], wq, **_tol(np.float64, 1.0, _cond(a[[0, 3]])))
    np.testing.assert_allclose(r[[0, 3]], wr, **_tol(np.float64, 1.0, _cond(a[[0, 3]])))


@pytest.mark.parametrize("dtype, scales", [(np.float32, (1e-30, 1e-20, 1e25)),
                                           (np.float64, (1e-200, 1e150))])
def test_tiny_and_huge_matrices_as_lapack(dtype, scales):
    rng = np.random.default_rng(5)
    for scale in scales:
        for shape in [(3, 6, 6), (90, 70), (140, 70)]:
            a = (rng.standard_normal(shape) * scale).astype(dtype)
            q, r = (np.asarray(x) for x in lh.qr(jnp.asarray(a)))
            wq, wr = np.linalg.qr(a)
            tol = _tol(dtype, 1.0, _cond(a / scale))
            np.testing.assert_allclose(q, wq, **tol, err_msg=f"{scale} {shape}")
            np.testing.assert_allclose(r / scale, wr / scale, **tol,
                                       err_msg=f"{scale} {shape}")
    a = rng.standard_normal((2, 6, 6)).astype(dtype)        # columns of mixed magnitude
    a[..., 2] *= 1e-25
    a[..., 4] *= 1e22
    q, r = (np.asarray(x, np.float64) for x in lh.qr(jnp.asarray(a)))
    err = np.abs(q @ r - a).max(axis=-2) / np.abs(a).max(axis=-2)
    assert (err < (1e-5 if dtype == np.float32 else 1e-13)).all()


def test_rank_deficient_and_structured_matrices():
    rng = np.random.default_rng(6)
    for dtype in (np.float32, np.float64):
        for n in (6, 75, 140):
            a = np.stack([np.ones((n, n)), np.zeros((n, n)), np.eye(n), np.triu(rng.random((n, n))),
                          np.outer(rng.random(n), rng.random(n))]).astype(dtype)
            a[3, :, 2] = 0                          # a zero column inside
            q, r = (np.asarray(x) for x in lh.qr(jnp.asarray(a)))
            _check_properties(a, q, r, dtype)
            # the zero matrix: every reflector the identity (tau = 0), as LAPACK's
            np.testing.assert_array_equal(q[1], np.eye(n))
            np.testing.assert_array_equal(r[1], 0)
            wq, wr = np.linalg.qr(a[2:4])           # triangular: exact reflectors
            np.testing.assert_allclose(q[2:4], wq, **_tol(dtype))
            np.testing.assert_allclose(r[2:4], wr, **_tol(dtype))


def test_public_modes_jit_vmap():
    rng = np.random.default_rng(7)
    for shape in [(4, 7, 5), (5, 7), (3, 80, 66), (2, 140, 30)]:
        a = rng.standard_normal(shape).astype(np.float32)
        wq, wr = np.linalg.qr(a)
        x = jnp.asarray(a)
        q, r = jnp.linalg.qr(x)
        np.testing.assert_allclose(np.asarray(q), wq, **_tol(np.float32, 1.0, _cond(a)))
        tol = _tol(np.float32, 1.0, _cond(a))
        np.testing.assert_allclose(np.asarray(jnp.linalg.qr(x, mode="r")), wr, **tol)
        if shape[-2] <= shape[-1]:
            np.testing.assert_allclose(np.asarray(jnp.linalg.qr(x, mode="complete")[0]), wq,
                                       **_tol(np.float32, 1.0, _cond(a)))
        got = netcl.jit(lambda x: jnp.linalg.qr(x)[1])(x)
        np.testing.assert_allclose(np.asarray(got), wr, **_tol(np.float32, 1.0, _cond(a)))
        if len(shape) == 3:
            got = netcl.vmap(lambda x: jnp.linalg.qr(x)[0])(x)
            np.testing.assert_allclose(np.asarray(got), wq, **_tol(np.float32, 1.0, _cond(a)))


def test_gradients_through_the_existing_rules():
    rng = np.random.default_rng(8)
    for shape in [(2, 4, 3), (3, 5), (4, 4)]:
        a = jnp.asarray(rng.standard_normal(shape))
        check_grads(lambda a: jnp.linalg.qr(a), [a], order=1, modes=("fwd", "rev"))
    a = jnp.asarray(rng.standard_normal((ONE_LAUNCH + 2, 3)))    # the blocked algorithm
    check_grads(lambda a: jnp.sum(jnp.linalg.qr(a)[0][:4] ** 2) + jnp.sum(jnp.linalg.qr(a)[1]),
                [a], order=1, modes=("rev",))


def test_scipy_qr_modes_on_the_device_path():
    sla = pytest.importorskip("netcl.scipy.linalg")
    spl = pytest.importorskip("scipy.linalg")
    if not hasattr(sla, "qr"):
        pytest.skip("netcl.scipy.linalg has no qr")
    rng = np.random.default_rng(9)
    for shape in [(5, 3), (3, 5), (6, 6), (ONE_LAUNCH + 10, 20)]:
        a = rng.standard_normal(shape).astype(np.float32)
        tol = _tol(np.float32, 1.0, _cond(a))
        for mode in ("economic", "r"):
            for got, want in zip(sla.qr(jnp.asarray(a), mode=mode), spl.qr(a, mode=mode)):
                np.testing.assert_allclose(np.asarray(got), want, **tol, err_msg=mode)
        q, r = (np.asarray(x, np.float64) for x in sla.qr(jnp.asarray(a)))   # 'full'
        m, n = shape
        assert q.shape == (m, m) and r.shape == (m, n) and (np.tril(r, -1) == 0).all()
        np.testing.assert_allclose(q @ r, a, atol=1e-4)
        np.testing.assert_allclose(q.T @ q, np.eye(m), atol=1e-5)
        np.testing.assert_allclose(q[:, :min(m, n)], np.linalg.qr(a)[0], **tol)


def test_policy_and_coverage():
    family = DEVICE.target.kernel_family
    for low, high, few in ldq.HOST_WINS.get(family, ()):
        assert PREFER_HOST(DEVICE, high, 3, few - 1) and PREFER_HOST(DEVICE, 3, high, 1)
        assert not PREFER_HOST(DEVICE, high, high, few)
        assert not PREFER_HOST(DEVICE, low, low, 1) and not PREFER_HOST(DEVICE, high + 1, 2, 1)
    f32 = jnp.zeros((2, 5, 3), jnp.float32)
    assert ld.launcher("qr", DEVICE, (f32,), {}, lh.qr_p.abstract_eval(f32)) is not None
    c64 = jnp.zeros((2, 5, 3), jnp.complex64)       # complex: LAPACK's routines on the host
    assert ld.launcher("qr", DEVICE, (c64,), {}, lh.qr_p.abstract_eval(c64)) is None
    q, r = lh.qr(c64 + 1j)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), np.asarray(c64 + 1j), atol=1e-5)
