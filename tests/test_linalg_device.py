"""Device kernels of cholesky and triangular_solve (netcl.primitives.linalg_device) against
NumPy: the one-launch kernels (n <= SMALL_N) and the blocked algorithms (larger n, forced
on CPU devices where the policy prefers the host), both kernel families (the GPU family's
work-group kernels run on PoCL through override_target), float32 and float64, batched and
odd sizes, strided operands; NaN semantics of the host path (not positive definite: NaN
lower triangle; a zero on a read diagonal: NaN solution); gradients through the existing
rules in float64; jit, vmap, cho_solve; bad inputs."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.linalg as sla
from netcl.primitives import linalg_device as ld
from netcl.primitives import linalg_host as lh
from netcl.test_util import check_grads, forget_launchers, override_target
from util import raises_with

DEVICE = netcl.default_device()
pytestmark = pytest.mark.skipif(DEVICE.is_numpy, reason="device kernels: none on the fallback")

F32 = dict(rtol=3e-4, atol=3e-5)
F64 = dict(rtol=1e-10, atol=1e-12)


def _tol(dtype):
    return F32 if np.dtype(dtype) == np.float32 else F64


@pytest.fixture
def device_always(monkeypatch):
    """Device kernels at every size (the CPU policy sends some to the host)."""
    monkeypatch.setattr(ld, "_prefer_host", lambda device, name, n, batch: False)
    forget_launchers()
    yield
    forget_launchers()


def _rng(seed=0):
    return np.random.default_rng(seed)


def _spd(rng, shape, dtype):
    n = shape[-1]
    x = rng.standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) / n + np.eye(n)).astype(dtype)


def _tri(rng, shape, lower, dtype):
    n = shape[-1]
    t = rng.standard_normal(shape) * 0.5 / n ** 0.5 + 2 * np.eye(n)
    return (np.tril(t) if lower else np.triu(t)).astype(dtype)


def _nan_lower_zero_upper(x):
    """Whether x (..., n, n) is NaN on and below the diagonal and 0 above it."""
    lo = np.tril(np.ones(x.shape[-2:], bool))
    return bool(np.isnan(x[..., lo]).all() and (x[..., ~lo] == 0).all())


def _device_launch(prim, *args, **params):
    """The launcher eager dispatch uses for these arguments (a device Launch lists kernels;
    the host path's does not)."""
    from netcl.core.eval import eval_interpreter
    return eval_interpreter.launcher(prim, args, params)


# ---- cholesky ---------------------------------------------------------------------------------

CHOL_SHAPES = [(1, 1), (3, 3), (5, 7, 7), (2, 3, 17, 17), (9, 64, 64), (65, 65), (2, 150, 150)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_matches_numpy(device_always, dtype):
    rng = _rng(1)
    for shape in CHOL_SHAPES:
        a = _spd(rng, shape, dtype)
        got = lh.cholesky(jnp.asarray(a))
        assert got.dtype == dtype and got.shape == shape
        want = np.linalg.cholesky(a.astype(np.float64))
        np.testing.assert_allclose(np.asarray(got), want, **_tol(dtype), err_msg=str(shape))
        assert _device_launch(lh.cholesky_p, jnp.asarray(a)).kernels or shape[-1] > ld.SMALL_N


def test_cholesky_reads_strided_operands_and_lower_triangle_only(device_always):
    rng = _rng(2)
    for n in (6, 70):
        a = _spd(rng, (4, n, n), np.float32)
        junk = a + np.triu(rng.standard_normal((n, n)), 1).astype(np.float32)  # upper: ignored
        want = np.linalg.cholesky(a)
        t = jnp.swapaxes(jnp.asarray(np.ascontiguousarray(np.swapaxes(junk, -1, -2))), -1, -2)
        np.testing.assert_allclose(np.asarray(lh.cholesky(t)), want, **F32)
        # a batch axis that does not merge with the others: copied first
        x = jnp.asarray(np.stack([junk, junk], axis=1))[:, 1]
        np.testing.assert_allclose(np.asarray(lh.cholesky(x)), want, **F32)
        y = jnp.asarray(np.concatenate([junk, junk]))[::2]
        np.testing.assert_allclose(np.asarray(lh.cholesky(y)),
                                   np.linalg.cholesky(np.concatenate([a, a])[::2]), **F32)


@pytest.mark.parametrize("n", [5, 80])
def test_cholesky_not_positive_definite_is_nan_as_the_host_path(device_always, n):
    rng = _rng(3)
    a = _spd(rng, (4, n, n), np.float64)
    a[1, n - 1, n - 1] = -5.0               # fails at the last column (of the last block)
    a[2, 0, 0] = 0.0                        # fails at the first
    a[3, 2, 1] = np.nan                     # NaN in (LAPACK: NaN where it propagates)
    got = np.asarray(lh.cholesky(jnp.asarray(a)))
    want = lh._cholesky_ref(a)
    np.testing.assert_array_equal(np.isnan(got[:3]), np.isnan(want[:3]))
    assert _nan_lower_zero_upper(got[1:3])
    assert np.isnan(want[3]).any()
    np.testing.assert_allclose(got[0], want[0], **F64)


def test_cholesky_gpu_family_work_group_kernels(device_always):
    rng = _rng(4)
    with override_target(DEVICE, kernel_family="gpu"):
        for dtype, shape in [(np.float32, (3, 9, 9)), (np.float64, (64, 64)),
                             (np.float32, (2, 100, 100))]:
            a = _spd(rng, shape, dtype)
            got = np.asarray(lh.cholesky(jnp.asarray(a)))
            np.testing.assert_allclose(got, np.linalg.cholesky(a.astype(np.float64)),
                                       **_tol(dtype))
        a = _spd(rng, (2, 5, 5), np.float32)
        a[0, 3, 3] = -1
        got = np.asarray(lh.cholesky(jnp.asarray(a)))
        assert _nan_lower_zero_upper(got[0]) and not np.isnan(got[1]).any()


def test_cholesky_zero_size():
    for shape in [(0, 3, 3), (0, 0), (2, 0, 0)]:
        got = lh.cholesky(jnp.zeros(shape, jnp.float32))
        assert got.shape == shape


# ---- triangular_solve -------------------------------------------------------------------------

def _solve_ref(t, b, lower, transpose_a, unit):
    t = t.astype(np.float64)
    m = np.tril(t) if lower else np.triu(t)
    if unit:
        i = np.arange(t.shape[-1])
        m[..., i, i] = 1
    if transpose_a:
        m = np.swapaxes(m, -1, -2)
    return np.linalg.solve(m, b.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lower", [True, False])
def test_triangular_solve_matches_numpy(device_always, dtype, lower):
    rng = _rng(5)
    for shape, k in [((1, 1), 1), ((4, 4), 3), ((3, 9, 9), 1), ((2, 2, 33, 33), 11),
                     ((150, 150), 5), ((2, 70, 70), 9)]:
        for transpose_a in (False, True):
            for unit in (False, True):
                t = _tri(rng, shape, lower, dtype)
                b = rng.standard_normal(shape[:-1] + (k,)).astype(dtype)
                got = lh.triangular_solve(jnp.asarray(t), jnp.asarray(b), left_side=True,
                                          lower=lower, transpose_a=transpose_a,
                                          unit_diagonal=unit)
                assert got.dtype == dtype
                np.testing.assert_allclose(np.asarray(got), _solve_ref(t, b, lower, transpose_a,
                                                                       unit),
                                           **_tol(dtype), err_msg=f"{shape} {k} "
                                           f"{transpose_a} {unit}")


def test_triangular_solve_right_side_strided_and_other_triangle_ignored(device_always):
    rng = _rng(6)
    for n in (7, 90):
        t = _tri(rng, (2, n, n), True, np.float32)
        full = t + np.triu(rng.standard_normal((n, n)), 1).astype(np.float32)
        b = rng.standard_normal((2, 4, n)).astype(np.float32)
        tt = jnp.swapaxes(jnp.asarray(np.ascontiguousarray(np.swapaxes(full, -1, -2))), -1, -2)
        got = lh.triangular_solve(tt, jnp.asarray(b), left_side=False, lower=True)
        want = np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2).astype(np.float64),
                                           np.swapaxes(b, -1, -2)), -1, -2)
        np.testing.assert_allclose(np.asarray(got), want, **F32)


@pytest.mark.parametrize("n", [4, 75])
def test_triangular_solve_singular_is_nan_as_the_host_path(device_always, n):
    rng = _rng(7)
    t = _tri(rng, (3, n, n), False, np.float64)
    t[1, n - 2, n - 2] = 0.0
    b = rng.standard_normal((3, n, 2))
    for unit in (False, True):
        got = np.asarray(lh.triangular_solve(jnp.asarray(t), jnp.asarray(b), left_side=True,
                                             lower=False, unit_diagonal=unit))
        want = lh._triangular_solve_ref(t, b, lower=False, transpose_a=False,
                                        unit_diagonal=unit)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert np.isnan(got[1]).all() != unit
        np.testing.assert_allclose(got[0], want[0], **F64)


def test_triangular_solve_gpu_family(device_always):
    rng = _rng(8)
    with override_target(DEVICE, kernel_family="gpu"):
        for shape, k, lower in [((3, 9, 9), 2, True), ((100, 100), 3, False)]:
            t = _tri(rng, shape, lower, np.float32)
            b = rng.standard_normal(shape[:-1] + (k,)).astype(np.float32)
            got = lh.triangular_solve(jnp.asarray(t), jnp.asarray(b), left_side=True,
                                      lower=lower, transpose_a=True)
            np.testing.assert_allclose(np.asarray(got), _solve_ref(t, b, lower, True, False),
                                       **F32)


# ---- through the rules and the public functions -----------------------------------------------

def test_float64_gradients_through_the_device_kernels(device_always):
    rng = _rng(9)
    a = jnp.asarray(_spd(rng, (2, 5, 5), np.float64))
    check_grads(lh.cholesky, [a], order=2, modes=("fwd", "rev"))
    t = jnp.asarray(_tri(rng, (2, 4, 4), False, np.float64))
    b = jnp.asarray(rng.standard_normal((2, 4, 3)))
    check_grads(lambda t, b: lh.triangular_solve(t, b, left_side=True, lower=False,
                                                 transpose_a=True), [t, b], order=2,
                modes=("fwd", "rev"))
    a70 = jnp.asarray(_spd(rng, (70, 70), np.float64))      # the blocked path
    check_grads(lambda a: jnp.sum(lh.cholesky(a) ** 2), [a70], order=1, modes=("rev",))


def test_jit_vmap_and_cho_solve_on_the_device(device_always, kernel_launches):
    rng = _rng(10)
    a = _spd(rng, (6, 8, 8), np.float32)
    b = rng.standard_normal((6, 8, 2)).astype(np.float32)
    want = np.linalg.solve(a.astype(np.float64), b)
    f = netcl.jit(lambda a, b: sla.cho_solve(sla.cho_factor(a, lower=True), b))
    got = f(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(got), want, **F32)
    got = netcl.vmap(lambda a, b: sla.cho_solve((jnp.linalg.cholesky(a), True), b))(
        jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(got), want, **F32)
    assert "enqueue_nd_range_kernel" in kernel_launches


def test_device_policy():
    f32 = jnp.zeros((2, 3, 3), jnp.float32)
    out = lh.cholesky_p.abstract_eval(f32)
    assert ld.launcher("cholesky", DEVICE, (f32,), {}, out) is not None
    assert ld.launcher("eigh", DEVICE, (f32,), {}, out) is None     # no kernels: the host
    low, high, few = ld.HOST_WINS[(DEVICE.target.kernel_family, "cholesky")]
    assert ld._prefer_host(DEVICE, "cholesky", high, few - 1)
    assert not ld._prefer_host(DEVICE, "cholesky", high, few)
    assert not ld._prefer_host(DEVICE, "cholesky", low, 1)
    assert not ld._prefer_host(DEVICE, "cholesky", high + 1, 1)
    if DEVICE.target.kernel_family == "cpu":
        assert not ld._prefer_host(DEVICE, "triangular_solve", 200, 1)
    a = jnp.zeros((high, high), jnp.float32)
    assert ld.launcher("cholesky", DEVICE, (a,), {}, lh.cholesky_p.abstract_eval(a)) is None


def test_bad_inputs_raise_before_anything_runs(device_work):
    i33 = jnp.asarray(np.eye(3, dtype=np.int32))
    f23 = jnp.zeros((2, 3), jnp.float32)
    f33, f32_ = jnp.zeros((3, 3), jnp.float32), jnp.zeros((3, 2), jnp.float32)
    h33 = jnp.zeros((3, 3), jnp.float16)
    f64 = f32_.astype(jnp.float64)
    device_work.clear()
    raises_with(TypeError, lambda: lh.cholesky(i33), "cholesky", "int32")
    raises_with(TypeError, lambda: lh.cholesky(h33), "cholesky", "float16")
    raises_with(ValueError, lambda: lh.cholesky(f23), "cholesky", "(2, 3)", "square")
    raises_with(ValueError, lambda: lh.triangular_solve(f33, f23, left_side=True),
                "triangular_solve", "(2, 3)")
    raises_with(TypeError, lambda: lh.triangular_solve(f33, f64, left_side=True),
                "triangular_solve", "dtypes")
    raises_with(TypeError, lambda: lh.triangular_solve(f33, f32_, left_side=1),
                "triangular_solve", "left_side")
    assert device_work == []


# ---- lu, solve, slogdet (linalg_device_lu) ----------------------------------------------------

LU_SHAPES = [(1, 1), (3, 3), (4, 17, 17), (64, 64), (2, 100, 100)]


def _general(rng, shape, dtype):
    """Well-conditioned matrices that still pivot: a random matrix plus a diagonal shift."""
    n = shape[-1]
    return (rng.standard_normal(shape) + 2 * n ** 0.5 * np.eye(n)[::-1]).astype(dtype)


def _check_lu(a, f, piv, perm, dtype):
    """lu's three results against SciPy's getrf (the pivots too) and A[perm] = L U."""
    import scipy.linalg as sl
    import warnings
    n = a.shape[-1]
    a2 = a.reshape((-1, n, n)).astype(np.float64)
    f, piv, perm = (np.asarray(x).reshape((a2.shape[0],) + x.shape[-2 if x is f else -1:])
                    for x in (f, piv, perm))
    assert f.dtype == dtype and piv.dtype == np.int32 and perm.dtype == np.int32
    for i in range(a2.shape[0]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sl.LinAlgWarning)     # (singular: expected)
            want, wpiv = sl.lu_factor(a2[i])
        np.testing.assert_array_equal(piv[i], wpiv)
        np.testing.assert_allclose(f[i], want, **_tol(dtype))
        low = np.tril(f[i], -1) + np.eye(n)
        np.testing.assert_allclose(low @ np.triu(f[i]), a2[i][perm[i]], **_tol(dtype))


@pytest.mark.parametrize("family", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_matches_scipy_both_kernel_families(device_always, family, dtype):
    from netcl.primitives import linalg_lu as llu
    rng = _rng(11)
    with override_target(DEVICE, kernel_family=family):
        for shape in LU_SHAPES:
            a = _general(rng, shape, dtype)
            a[..., 0, 0] = 0                  # a zero on the diagonal: pivoting matters
            a[..., 0, -1] += 1                # (and not singular at n = 1... but 1x1 is)
            x = jnp.asarray(a)
            f, piv, perm = llu.lu(x)
            assert f.shape == shape and piv.shape == shape[:-1]
            _check_lu(a, f, piv, perm, dtype)
            # (the CPU family's kernels on a GPU's local memory: not covered, the host runs)
            assert _device_launch(llu.lu_p, x).kernels or shape[-1] > ld.SMALL_N or \
                not ld._covered(DEVICE, np.dtype(dtype))


def test_lu_reference_and_singular_matrices_as_lapack(device_always):
    from netcl.primitives import linalg_lu as llu
    rng = _rng(12)
    for n in (5, 70):
        a = rng.standard_normal((3, n, n))
        a[1, :, 2] = 0                        # a zero column: a zero pivot, not divided by
        a[2, 3] = 2 * a[2, 1]                 # dependent rows
        _check_lu(a, *llu._lu_ref(a), np.float64)
        f, piv, perm = llu.lu(jnp.asarray(a))
        _check_lu(a, f, piv, perm, np.float64)
        assert not np.isnan(np.asarray(f)).any()


@pytest.mark.parametrize("family", ["cpu", "gpu"])
def test_solve_and_slogdet_on_the_device_match_the_host_path(device_always, family):
    rng = _rng(13)
    with override_target(DEVICE, kernel_family=family):
        for dtype in (np.float32, np.float64):
            for shape, k in [((1, 1), 1), ((3, 3), 2), ((5, 17, 17), 3), ((64, 64), 1),
                             ((2, 100, 100), 4)]:
                a = _general(rng, shape, dtype)
                if shape[-1] > 1:
                    a[..., -1, -1] = 0                # a zero on the diagonal
                b = rng.standard_normal(shape[:-1] + (k,)).astype(dtype)
                x = lh.solve(jnp.asarray(a), jnp.asarray(b))
                assert x.dtype == dtype
                want = np.linalg.solve(a.astype(np.float64), b)
                np.testing.assert_allclose(np.asarray(x), want, **_tol(dtype), err_msg=str(shape))
                assert _device_launch(lh.solve_p, jnp.asarray(a), jnp.asarray(b)) is not None
                sign, logdet = lh.slogdet(jnp.asarray(a))
                ws, wl = np.linalg.slogdet(a.astype(np.float64))
                np.testing.assert_array_equal(np.asarray(sign), ws)
                np.testing.assert_allclose(np.asarray(logdet), wl, **_tol(dtype))


@pytest.mark.parametrize("n", [4, 70])
def test_singular_solve_and_slogdet_as_the_host_path(device_always, n):
    rng = _rng(14)
    a = rng.standard_normal((3, n, n))
    a[0, :, 1] = 0
    a[2, 2] = 0                           # a zero row: an exact zero pivot, as in LAPACK
    b = rng.standard_normal((3, n, 2))
    got = np.asarray(lh.solve(jnp.asarray(a), jnp.asarray(b)))
    want = lh._solve_ref(a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[0]).all() and not np.isnan(got[1]).any()
    np.testing.assert_allclose(got[1], want[1], **F64)
    sign, logdet = (np.asarray(x) for x in lh.slogdet(jnp.asarray(a)))
    ws, wl = lh._slogdet_ref(a)
    np.testing.assert_array_equal(sign, ws)
    np.testing.assert_array_equal(logdet[0], wl[0])          # -inf
    np.testing.assert_allclose(logdet[1:], wl[1:], rtol=1e-9, atol=1e-9)


def test_lu_solve_slogdet_gradients_and_jax_agreement(device_always):
    import jax
    import jax.numpy as jjnp
    from netcl.primitives import linalg_lu as llu
    rng = _rng(15)
    a = jnp.asarray(_general(rng, (2, 5, 5), np.float64))
    b = jnp.asarray(rng.standard_normal((2, 5, 3)))
    check_grads(lambda a: llu.lu(a)[0], [a], order=2, modes=("fwd", "rev"))
    check_grads(jnp.linalg.solve, [a, b], order=2, modes=("fwd", "rev"))
    check_grads(lambda a: jnp.linalg.slogdet(a)[1], [a], order=1, modes=("fwd", "rev"))
    check_grads(jnp.linalg.det, [a], order=1, modes=("fwd", "rev"))
    a70 = jnp.asarray(_general(rng, (70, 70), np.float64))     # the blocked LU
    check_grads(lambda a: jnp.sum(jnp.linalg.solve(a, jnp.ones((70, 1))) ** 2), [a70],
                order=1, modes=("rev",))
    a32 = _general(rng, (3, 6, 6), np.float32)
    b32 = rng.standard_normal((3, 6, 2)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.linalg.solve(jnp.asarray(a32), jnp.asarray(b32))),
                               np.asarray(jjnp.linalg.solve(a32, b32)), **F32)
    np.testing.assert_allclose(np.asarray(jnp.linalg.det(jnp.asarray(a32))),
                               np.asarray(jjnp.linalg.det(a32)), rtol=1e-4)
    for got, want in zip(jnp.linalg.slogdet(jnp.asarray(a32)), jjnp.linalg.slogdet(a32)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
    f, piv, perm = llu.lu(jnp.asarray(a32))
    jf, jpiv, jperm = jax.lax.linalg.lu(a32)
    np.testing.assert_array_equal(np.asarray(piv), np.asarray(jpiv))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(jperm))
    np.testing.assert_allclose(np.asarray(f), np.asarray(jf), **F32)


def test_lu_jit_vmap_and_bad_inputs(device_always):
    from netcl.primitives import linalg_lu as llu
    rng = _rng(16)
    a = _general(rng, (4, 6, 6), np.float32)
    got = netcl.jit(lambda a: llu.lu(a)[0])(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(got), np.asarray(llu.lu(jnp.asarray(a))[0]), **F32)
    got = netcl.vmap(lambda a: llu.lu(a)[2])(jnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(got), llu._lu_ref(a)[2])
    raises_with(ValueError, lambda: llu.lu(jnp.zeros((2, 3), jnp.float32)), "lu", "square")
    raises_with(TypeError, lambda: llu.lu(jnp.zeros((3, 3), jnp.int32)), "lu", "int32")
