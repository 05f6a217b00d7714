"""netcl.random's samplers of distributions.py, multivariate.py and key_extras.py against
jax.random: the same key gives the same numbers (to float rounding) with x64 off (float32)
and on (float64, JAX's 64-bit uniforms), shapes and dtypes as JAX's; moments as a sanity
check; jit, vmap and grad; bad arguments raising errors that name the function."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import random
from util import raises_with

jax = pytest.importorskip("jax")
jr = jax.random


# (the fixture `x64`: tests/conftest.py)


def _cmp(got, want, rtol, atol=0.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


# (name, positional arguments after the key, keyword arguments)
SAMPLERS = [
    ("lognormal", (0.5, (64,)), {}),
    ("lognormal", (), {"shape": (5,)}),
    ("lognormal", (np.array([0.5, 1.0, 2.0], np.float32),), {}),
    ("rayleigh", (2.0, (64,)), {}),
    ("rayleigh", (np.array([[1.0], [3.0]], np.float32), (2, 8)), {}),
    ("pareto", (3.0, (64,)), {}),
    ("weibull_min", (1.5, 2.0, (64,)), {}),
    ("weibull_min", (1.0, np.array([0.5, 1.0, 4.0], np.float32)), {}),
    ("maxwell", ((64,),), {}),
    ("maxwell", ((),), {}),
    ("double_sided_maxwell", (0.5, 2.0, (64,)), {}),
    ("double_sided_maxwell", (np.zeros(3, np.float32), 1.0), {}),
    ("double_sided_maxwell", (np.zeros(3, np.float32), 1.0, (2,)), {}),
    ("geometric", (0.25, (64,)), {}),
    ("geometric", (np.array([0.1, 0.5, 0.9], np.float32),), {}),
    ("triangular", (0.0, 0.3, 1.0, (64,)), {}),
    ("triangular", (-1.0, np.array([-1.0, 0.0, 2.0], np.float32), 2.0), {}),
    ("wald", (2.0, (64,)), {}),
    ("wald", (np.array([0.5, 1.0, 3.0], np.float32), (4, 3)), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SAMPLERS,
                         ids=[f"{s[0]}{i}" for i, s in enumerate(SAMPLERS)])
def test_same_numbers_as_jax(x64, name, args, kwargs):
    for seed in (0, 7):
        got = getattr(random, name)(random.PRNGKey(seed), *args, **kwargs)
        want = getattr(jr, name)(jr.PRNGKey(seed), *args, **kwargs)
        _cmp(got, want, rtol=1e-12 if x64 and name != "wald" else 2e-6 if not x64 else 1e-9)


@pytest.mark.parametrize("name", ["lognormal", "rayleigh", "pareto", "maxwell", "triangular",
                                  "wald", "weibull_min", "double_sided_maxwell"])
def test_explicit_float32(x64, name):
    args = {"lognormal": (0.7, (16,)), "rayleigh": (1.5, (16,)), "pareto": (2.0, (16,)),
            "maxwell": ((16,),), "triangular": (0.0, 0.5, 1.0, (16,)), "wald": (1.0, (16,)),
            "weibull_min": (1.0, 2.0, (16,)),
            "double_sided_maxwell": (0.0, 1.0, (16,))}[name]
    got = getattr(random, name)(random.PRNGKey(3), *args, dtype=jnp.float32)
    want = getattr(jr, name)(jr.PRNGKey(3), *args, dtype=np.float32)
    _cmp(got, want, rtol=2e-6)


def test_geometric_dtypes(x64):
    got = random.geometric(random.PRNGKey(1), 0.3, (8,), dtype=jnp.int32)
    _cmp(got, jr.geometric(jr.PRNGKey(1), 0.3, (8,), dtype=np.int32), 0)
    # an integer p is promoted to the default float, as JAX promotes it
    assert np.asarray(random.geometric(random.PRNGKey(1), jnp.asarray(1), (2,))).min() >= 1


def test_multivariate_normal(x64):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)).astype(np.float32)
    cov = a @ a.T + np.eye(3, dtype=np.float32)
    mean = np.array([1.0, -1.0, 0.5], np.float32)
    k, jk = random.PRNGKey(5), jr.PRNGKey(5)
    got = random.multivariate_normal(k, jnp.asarray(mean), jnp.asarray(cov), (20,))
    _cmp(got, jr.multivariate_normal(jk, mean, cov, (20,)), rtol=1e-5, atol=1e-5)
    # batch shapes from mean and cov; dtype of the normals given
    means = np.stack([mean, -mean])
    got = random.multivariate_normal(k, jnp.asarray(means), jnp.asarray(cov),
                                     dtype=jnp.float32)
    _cmp(got, jr.multivariate_normal(jk, means, cov, dtype=np.float32), rtol=1e-5, atol=1e-5)
    # svd and eigh: LAPACK's factor, which may differ from XLA's in column signs; the
    # covariance is what they must share (here the factors agree, so the values do too)
    for method in ("svd", "eigh"):
        got = random.multivariate_normal(k, jnp.asarray(mean), jnp.asarray(cov), (20,),
                                         method=method)
        want = jr.multivariate_normal(jk, mean, cov, (20,), method=method)
        assert np.asarray(got).shape == want.shape and np.asarray(got).dtype == want.dtype


def test_multivariate_normal_moments():
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    mean = np.array([1.0, -2.0], np.float32)
    for method in ("cholesky", "svd", "eigh"):
        x = np.asarray(random.multivariate_normal(random.PRNGKey(0), jnp.asarray(mean),
                                                  jnp.asarray(cov), (20000,), method=method))
        np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.08)


@pytest.mark.parametrize("n,shape,m", [(3, (), None), (4, (2,), 2), (2, (), 5)])
def test_orthogonal(x64, n, shape, m):
    got = random.orthogonal(random.PRNGKey(2), n, shape, m=m)
    want = jr.orthogonal(jr.PRNGKey(2), n, shape, m=m)
    _cmp(got, want, rtol=1e-5, atol=1e-5 if not x64 else 1e-12)
    q = np.asarray(got)
    eye = np.eye(min(n, m or n))
    gram = q.swapaxes(-1, -2) @ q if n >= (m or n) else q @ q.swapaxes(-1, -2)
    np.testing.assert_allclose(gram, np.broadcast_to(eye, gram.shape), atol=1e-5)


def test_moments():
    k = random.PRNGKey(11)
    n = 40000
    f32 = jnp.float32

    def stats(x):
        x = np.asarray(x, np.float64)
        return x.mean(), x.var()
    m, v = stats(random.lognormal(k, 0.5, (n,), f32))
    np.testing.assert_allclose([m, v], [np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)],
                               rtol=0.05)
    m, v = stats(random.rayleigh(k, 2.0, (n,), f32))
    np.testing.assert_allclose([m, v], [2 * np.sqrt(np.pi / 2), (4 - np.pi) / 2 * 4],
                               rtol=0.05)
    m, _ = stats(random.pareto(k, 4.0, (n,), f32))
    np.testing.assert_allclose(m, 4 / 3, rtol=0.05)
    m, v = stats(random.weibull_min(k, 2.0, 1.5, (n,), f32))
    from math import gamma
    np.testing.assert_allclose([m, v], [2 * gamma(1 + 1 / 1.5),
                                        4 * (gamma(1 + 2 / 1.5) - gamma(1 + 1 / 1.5) ** 2)],
                               rtol=0.05)
    m, v = stats(random.maxwell(k, (n,), f32))
    np.testing.assert_allclose([m, v], [2 * np.sqrt(2 / np.pi), (3 * np.pi - 8) / np.pi],
                               rtol=0.05)
    m, v = stats(random.double_sided_maxwell(k, 1.0, 2.0, (n,), f32))
    np.testing.assert_allclose([m, v], [1.0, 3 * 4.0], rtol=0.05, atol=0.05)
    m, v = stats(random.geometric(k, 0.25, (n,)))
    np.testing.assert_allclose([m, v], [4.0, 0.75 / 0.0625], rtol=0.05)
    m, v = stats(random.triangular(k, 0.0, 0.3, 1.0, (n,), f32))
    np.testing.assert_allclose([m, v], [1.3 / 3, (1 + 0.09 - 0.3) / 18], rtol=0.05)
    m, v = stats(random.wald(k, 2.0, (n,), f32))
    np.testing.assert_allclose([m, v], [2.0, 8.0], rtol=0.08)


def test_jit_vmap_grad():
    k = random.PRNGKey(4)
    f32 = jnp.float32
    sig = jnp.asarray(np.float32(0.5))
    eager = random.lognormal(k, sig, (6,), f32)
    jitted = netcl.jit(lambda k, s: random.lognormal(k, s, (6,), f32))(k, sig)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6)
    keys = random.split(k, 3)
    got = netcl.vmap(lambda kk: random.wald(kk, 2.0, (2,), f32))(keys)
    want = jax.vmap(lambda kk: jr.wald(kk, 2.0, (2,), np.float32))(np.asarray(keys))
    _cmp(got, want, rtol=2e-6)
    got = netcl.vmap(lambda kk: random.orthogonal(kk, 3, dtype=f32))(keys)
    want = jax.vmap(lambda kk: jr.orthogonal(kk, 3, dtype=np.float32))(np.asarray(keys))
    _cmp(got, want, rtol=1e-5, atol=1e-5)
    for name, args in [("multivariate_normal", (jnp.zeros(2, f32), jnp.eye(2, dtype=f32), (3,))),
                       ("double_sided_maxwell", (0.0, 1.0, (3,))),
                       ("geometric", (0.3, (3,))), ("weibull_min", (1.0, 2.0, (3,))),
                       ("triangular", (0.0, 0.5, 1.0, (3,))), ("maxwell", ((3,),))]:
        fn = getattr(random, name)
        np.testing.assert_allclose(np.asarray(netcl.jit(lambda k: fn(k, *args))(k)),
                                   np.asarray(fn(k, *args)), rtol=1e-6, err_msg=name)
    # reparameterized gradients, as JAX's
    for name, x in [("rayleigh", 2.0), ("lognormal", 0.5), ("pareto", 3.0), ("wald", 2.0)]:
        g = netcl.grad(lambda p: jnp.sum(getattr(random, name)(k, p, (5,), f32)))(f32(x))
        jg = jax.grad(lambda p: jax.numpy.sum(getattr(jr, name)(jr.PRNGKey(4), p, (5,),
                                                                np.float32)))(np.float32(x))
        np.testing.assert_allclose(np.asarray(g), jg, rtol=1e-4, err_msg=name)
    g = netcl.grad(lambda m: jnp.sum(random.multivariate_normal(k, m, jnp.eye(2, dtype=f32),
                                                                (4,))))(jnp.zeros(2, f32))
    np.testing.assert_allclose(np.asarray(g), [4.0, 4.0])


def test_key_utilities():
    k = random.PRNGKey(3)
    assert random.clone(k) is k
    assert random.key_impl(k) == jr.key_impl(jr.PRNGKey(3)) == "threefry2x32"
    assert random.key_impl(random.split(k, (2, 3))) == "threefry2x32"
    assert random.key_dtype() == np.uint32
    assert random.key_dtype("threefry2x32") == np.uint32
    raises_with(ValueError, lambda: random.key_dtype("rbg"), "key_dtype", "rbg")
    raises_with(TypeError, lambda: random.key_impl(np.zeros(2, np.uint32)), "key_impl")
    raises_with(TypeError, lambda: random.clone(jnp.zeros(2, jnp.float32)), "clone")
    raises_with(TypeError, lambda: random.key_impl(jnp.zeros(3, jnp.uint32)), "key_impl")


def test_bad_arguments():
    k = random.PRNGKey(0)
    from netcl.dtypes import TypePromotionError
    raises_with(TypeError, lambda: random.lognormal(3, 1.0), "lognormal", "key")
    raises_with(ValueError, lambda: random.rayleigh(random.split(k, 2), 1.0), "rayleigh",
                "vmap")
    raises_with(ValueError, lambda: random.rayleigh(k, 1.0, dtype=jnp.int32), "rayleigh",
                "float")
    raises_with(ValueError, lambda: random.pareto(k, jnp.ones(3), (2,)), "pareto", "(2,)")
    raises_with(TypeError, lambda: random.pareto(k, [1.0, 2.0]), "pareto", "b")
    raises_with(TypeError, lambda: random.wald(k, "a"), "wald", "mean")
    raises_with(TypePromotionError, lambda: random.lognormal(
        k, jnp.ones(2, jnp.float32), dtype=jnp.float16), "lognormal", "sigma", "float16")
    raises_with(ValueError, lambda: random.geometric(k, 0.5, dtype=jnp.float32),
                "geometric", "integer")
    raises_with(ValueError, lambda: random.triangular(k, 0.0, jnp.ones(3), 1.0, (4,)),
                "triangular", "(4,)")
    raises_with(ValueError, lambda: random.maxwell(k, (-1,)), "maxwell")
    raises_with(ValueError, lambda: random.weibull_min(k, 1.0, 1.0, dtype=jnp.int32),
                "weibull_min", "float")
    raises_with(TypeError, lambda: random.double_sided_maxwell(k, [0.0], 1.0),
                "double_sided_maxwell", "loc")
    mvn = random.multivariate_normal
    raises_with(ValueError, lambda: mvn(k, jnp.zeros(2), jnp.eye(2), method="qr"),
                "multivariate_normal", "method")
    raises_with(ValueError, lambda: mvn(k, jnp.zeros(()), jnp.eye(2)),
                "multivariate_normal", "mean")
    raises_with(ValueError, lambda: mvn(k, jnp.zeros(2), jnp.ones(2)),
                "multivariate_normal", "cov")
    raises_with(ValueError, lambda: mvn(k, jnp.zeros(2), jnp.eye(3)),
                "multivariate_normal", "(3, 3)")
    raises_with(ValueError, lambda: mvn(k, jnp.zeros((3, 2)), jnp.eye(2), (4,)),
                "multivariate_normal", "(4,)")
    raises_with(TypeError, lambda: mvn(k, [0.0, 0.0], jnp.eye(2)), "multivariate_normal",
                "mean")
    raises_with(ValueError, lambda: mvn(k, jnp.zeros(2), jnp.eye(2), dtype=jnp.int32),
                "multivariate_normal", "float")
    raises_with(TypeError, lambda: random.orthogonal(k, 2.5), "orthogonal", "n")
    raises_with(ValueError, lambda: random.orthogonal(k, -1), "orthogonal", "n")
    raises_with(TypeError, lambda: random.orthogonal(k, 3, m="4"), "orthogonal", "m")
    raises_with(ValueError, lambda: random.orthogonal(k, 3, dtype=jnp.int32), "orthogonal",
                "float")


# ---- the gamma family (gamma.py): JAX's rejection sampler, vectorized -------------------

GAMMA_FAMILY = [
    ("gamma", (np.array([0.3, 1.0, 5.0, 0.01], np.float32),)),
    ("gamma", (2.0, (12,))),
    ("loggamma", (np.array([0.3, 1.0, 5.0, 0.01], np.float32),)),
    ("beta", (2.0, 0.5, (6,))),
    ("dirichlet", (np.array([0.5, 1.0, 2.0], np.float32), (2,))),
    ("chisquare", (3.0, (6,))),
    ("t", (5.0, (6,))),
    ("f", (3.0, 5.0, (6,))),
]


@pytest.mark.parametrize("name,args", GAMMA_FAMILY,
                         ids=[f"{s[0]}{i}" for i, s in enumerate(GAMMA_FAMILY)])
def test_gamma_family_same_numbers_as_jax(x64, name, args):
    got = getattr(random, name)(random.PRNGKey(7), *args)
    want = getattr(jr, name)(jr.PRNGKey(7), *args)
    _cmp(got, want, rtol=1e-12 if x64 else 2e-6, atol=0 if x64 else 1e-7)


def test_gamma_jit_vmap_moments_and_errors():
    k = random.PRNGKey(1)
    f32 = jnp.float32
    g = netcl.jit(lambda k, a: random.gamma(k, a, (20,), dtype=f32))
    want = random.gamma(k, f32(0.7), (20,), dtype=f32)
    np.testing.assert_allclose(np.asarray(g(k, f32(0.7))), np.asarray(want), rtol=1e-6)
    keys = random.split(k, 3)
    got = netcl.vmap(lambda kk: random.gamma(kk, 2.0, (4,), dtype=f32))(keys)
    ref = jax.vmap(lambda kk: jr.gamma(kk, 2.0, (4,), dtype=np.float32))(np.asarray(keys))
    _cmp(got, ref, rtol=2e-6)
    x = np.asarray(random.gamma(k, 3.0, (4000,), dtype=f32), np.float64)
    np.testing.assert_allclose([x.mean(), x.var()], [3.0, 3.0], rtol=0.08)
    # the derivative in the shape parameter: JAX's implicit reparameterization
    for a in (0.3, 2.0, 40.0):
        np.testing.assert_allclose(
            np.asarray(netcl.grad(lambda a: jnp.sum(random.gamma(k, a, (3,), dtype=f32)))(
                f32(a))),
            np.asarray(jax.grad(lambda a: jax.numpy.sum(jr.gamma(np.asarray(k), a, (3,),
                                                                 dtype=np.float32)))(
                np.float32(a))),
            rtol=2e-4)
    np.testing.assert_allclose(
        np.asarray(netcl.grad(lambda a: jnp.sum(random.loggamma(k, a, (3,), dtype=f32)))(
            f32(0.2))),
        np.asarray(jax.grad(lambda a: jax.numpy.sum(jr.loggamma(np.asarray(k), a, (3,),
                                                                dtype=np.float32)))(
            np.float32(0.2))),
        rtol=2e-4)
    # with a constant parameter, differentiating the rest is fine
    g = netcl.grad(lambda s: jnp.sum(s * random.gamma(k, 2.0, (3,), dtype=f32)))(f32(1.0))
    np.testing.assert_allclose(np.asarray(g), np.asarray(
        jnp.sum(random.gamma(k, 2.0, (3,), dtype=f32))), rtol=1e-6)
    raises_with(ValueError, lambda: random.gamma(k, jnp.ones(3), (2,)), "gamma", "(2,)")
    raises_with(ValueError, lambda: random.gamma(k, 1.0, dtype=jnp.int32), "gamma", "float")
    raises_with(TypeError, lambda: random.beta(k, [1.0], 1.0), "beta", "a")
    raises_with(ValueError, lambda: random.dirichlet(k, jnp.float32(1.0)), "dirichlet",
                "alpha")
    raises_with(ValueError, lambda: random.dirichlet(k, jnp.ones((2, 3)), (3,)),
                "dirichlet", "(3,)")
    from netcl.dtypes import TypePromotionError
    raises_with(TypePromotionError, lambda: random.chisquare(
        k, jnp.ones(2, jnp.float32), dtype=jnp.float16), "chisquare", "df")
    raises_with(TypeError, lambda: random.t(3, 1.0), "t", "key")
