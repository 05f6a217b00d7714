"""The LU surface: netcl.scipy.linalg.lu / lu_factor / lu_solve and netcl.lax.linalg (lu,
lu_pivots_to_permutation, cholesky, triangular_solve) against SciPy and JAX, with
gradients in float64 and bad inputs."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.linalg as sla
from netcl.test_util import check_grads

scipy_linalg = pytest.importorskip("scipy.linalg")


def _matrix(rng, shape, dtype=np.float64):
    a = rng.standard_normal(shape).astype(dtype)
    a[..., 0, 0] = 0                 # pivoting matters
    return a


@pytest.mark.parametrize("n", [1, 3, 17])
def test_scipy_lu_factor_lu_and_lu_solve_match_scipy(n):
    rng = np.random.default_rng(n)
    a = _matrix(rng, (n, n)) + (np.eye(n) if n == 1 else 0)
    b = rng.standard_normal((n, 2))
    lu, piv = sla.lu_factor(jnp.asarray(a))
    want_lu, want_piv = scipy_linalg.lu_factor(a)
    np.testing.assert_allclose(np.asarray(lu), want_lu, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(piv), want_piv)
    assert piv.dtype == np.int32
    for got, want in zip(sla.lu(jnp.asarray(a)), scipy_linalg.lu(a)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)
    pl, u = sla.lu(jnp.asarray(a), permute_l=True)
    np.testing.assert_allclose(np.asarray(pl @ u), a, rtol=1e-10, atol=1e-12)
    for trans in (0, 1, "T"):
        np.testing.assert_allclose(
            np.asarray(sla.lu_solve((lu, piv), jnp.asarray(b), trans=trans)),
            scipy_linalg.lu_solve((want_lu, want_piv), b, trans=1 if trans else 0),
            rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(sla.lu_solve((lu, piv), jnp.asarray(b[:, 0]))),
                               scipy_linalg.lu_solve((want_lu, want_piv), b[:, 0]),
                               rtol=1e-9, atol=1e-10)


def test_batched_jitted_and_differentiated():
    rng = np.random.default_rng(3)
    a = _matrix(rng, (3, 5, 5))
    b = rng.standard_normal((3, 5, 2))

    def solve(a, b):
        return sla.lu_solve(sla.lu_factor(a), b)
    x = netcl.jit(solve)(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)
    check_grads(solve, (jnp.asarray(a[0]), jnp.asarray(b[0])), order=1)
    check_grads(lambda a: sla.lu(a)[2], (jnp.asarray(a[1]),), order=1)


def test_lax_linalg_matches_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    a = _matrix(rng, (2, 6, 6), np.float32)
    for got, want in zip(netcl.lax.linalg.lu(jnp.asarray(a)), jax.lax.linalg.lu(a)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    piv = netcl.lax.linalg.lu(jnp.asarray(a))[1]
    np.testing.assert_array_equal(
        np.asarray(netcl.lax.linalg.lu_pivots_to_permutation(piv, 6)),
        np.asarray(jax.lax.linalg.lu_pivots_to_permutation(np.asarray(piv), 6)))
    t = np.tril(a) + 4 * np.eye(6, dtype=np.float32)
    b = rng.standard_normal((2, 6, 3)).astype(np.float32)
    for left in (True, False):
        for trans in (False, True):
            bb = b if left else np.swapaxes(b, -1, -2)
            kw = dict(left_side=left, lower=True, transpose_a=trans, unit_diagonal=trans)
            np.testing.assert_allclose(
                np.asarray(netcl.lax.linalg.triangular_solve(jnp.asarray(t), jnp.asarray(bb),
                                                             **kw)),
                np.asarray(jax.lax.linalg.triangular_solve(t, bb, **kw)), rtol=1e-5, atol=1e-5)
    spd = a @ np.swapaxes(a, -1, -2) + 6 * np.eye(6, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(netcl.lax.linalg.cholesky(jnp.asarray(spd))),
                               np.asarray(jax.lax.linalg.cholesky(spd)), rtol=1e-5, atol=1e-5)


def test_bad_inputs_name_the_function():
    a = jnp.ones((3, 3))
    with pytest.raises(ValueError, match="scipy.linalg.lu_factor"):
        sla.lu_factor(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="scipy.linalg.lu_solve: lu_and_piv must be the pair"):
        sla.lu_solve(a, jnp.ones(3))
    with pytest.raises(ValueError, match="scipy.linalg.lu_solve: invalid trans"):
        sla.lu_solve(sla.lu_factor(a), jnp.ones(3), trans=5)
    with pytest.raises(ValueError, match="scipy.linalg.lu_solve: piv must be"):
        sla.lu_solve((a, jnp.ones(3)), jnp.ones(3))
    with pytest.raises(TypeError, match="scipy.linalg.lu: permute_l must be a bool"):
        sla.lu(a, permute_l=1)
    with pytest.raises(ValueError, match="lax.linalg.lu_pivots_to_permutation"):
        netcl.lax.linalg.lu_pivots_to_permutation(jnp.zeros(3, jnp.int32), 2)
