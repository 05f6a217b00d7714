"""jax.scipy.special's complex functions (netcl/scipy/special_complex.py): wofz against JAX in
both half-planes (complex64, complex128, real arguments), under jit and vmap, with its
derivative checked; sph_harm_y against JAX for every order of the degrees up to 6, with
n_max clipping, and its errors."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.special as sp
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")
js = pytest.importorskip("jax.scipy.special")

RNG = np.random.default_rng(5)
Z = np.concatenate([RNG.standard_normal(64) * 3 + 1j * RNG.standard_normal(64) * 3,
                    [0, 1 + 1j, -2 - 0.5j, 5j, -5j, 10 + 0.1j, 1e-3j, 3 - 4j, -30 + 2j]])


def test_wofz_agrees_with_jax(x64_on):
    want = np.asarray(js.wofz(Z))
    got = np.asarray(sp.wofz(jnp.asarray(Z)))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(netcl.jit(sp.wofz)(jnp.asarray(Z))), want,
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(netcl.vmap(sp.wofz)(jnp.asarray(Z))), want,
                               rtol=1e-12, atol=1e-14)
    real = np.linspace(-4, 4, 9)
    np.testing.assert_allclose(np.asarray(sp.wofz(jnp.asarray(real))),
                               np.asarray(js.wofz(real)), rtol=1e-12, atol=1e-14)


def test_wofz_complex64_and_dtypes():
    z64 = Z[np.abs(Z) < 8].astype(np.complex64)
    got = sp.wofz(jnp.asarray(z64))
    assert got.dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(got), np.asarray(js.wofz(z64)), rtol=2e-4,
                               atol=1e-5)
    assert sp.wofz(jnp.asarray([0.5], jnp.float32)).dtype == jnp.complex64
    with pytest.raises(TypeError, match="wofz: z must be a number array, got <U1"):
        sp.wofz(np.array(["a"]))


def test_wofz_derivative(x64_on):
    z = jnp.asarray(np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.0j]))
    check_grads(sp.wofz, (z,), order=1, modes=("fwd", "rev"))
    g = netcl.grad(lambda x: jnp.real(sp.wofz(x * (1 + 0.5j))))(jnp.asarray(0.7))
    gj = jax.grad(lambda x: jax.numpy.real(js.wofz(x * (1 + 0.5j))))(0.7)
    np.testing.assert_allclose(float(g), float(gj), rtol=1e-12)


def test_sph_harm_y_agrees_with_jax(x64_on):
    n = np.array([k for k in range(7) for _ in range(-k, k + 1)])
    m = np.array([j for k in range(7) for j in range(-k, k + 1)])
    theta = RNG.uniform(0, np.pi, n.size)
    phi = RNG.uniform(0, 2 * np.pi, n.size)
    want = np.asarray(js.sph_harm_y(n, m, theta, phi))
    got = np.asarray(sp.sph_harm_y(jnp.asarray(n), jnp.asarray(m), jnp.asarray(theta),
                                   jnp.asarray(phi)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    jitted = netcl.jit(lambda a, b, t, p: sp.sph_harm_y(a, b, t, p, n_max=6))
    np.testing.assert_allclose(np.asarray(jitted(jnp.asarray(n), jnp.asarray(m),
                                                 jnp.asarray(theta), jnp.asarray(phi))),
                               want, rtol=1e-11, atol=1e-13)
    # degrees above n_max are clipped to it, as JAX's
    clipped = sp.sph_harm_y(jnp.asarray([6]), jnp.asarray([2]), jnp.asarray([0.4]),
                            jnp.asarray([1.0]), n_max=4)
    np.testing.assert_allclose(np.asarray(clipped),
                               np.asarray(js.sph_harm_y(np.array([4]), np.array([2]),
                                                        np.array([0.4]), np.array([1.0]))),
                               rtol=1e-11)


def test_sph_harm_y_errors():
    with pytest.raises(NotImplementedError, match="sph_harm_y: diff_n"):
        sp.sph_harm_y(jnp.asarray([1]), jnp.asarray([0]), jnp.asarray([0.1]),
                      jnp.asarray([0.1]), diff_n=1)
    with pytest.raises(TypeError, match="sph_harm_y: n and m must be integer arrays"):
        sp.sph_harm_y(jnp.asarray([1.0]), jnp.asarray([0]), jnp.asarray([0.1]),
                      jnp.asarray([0.1]))
