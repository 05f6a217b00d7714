"""netcl.random's poisson, binomial, multinomial, generalized_normal and ball (samplers.py,
vectors.py) against jax.random: the same key gives the same numbers (integers exactly, floats to
rounding) with x64 off and on; moments on a few thousand draws; jit and vmap as JAX
composes them (vmap of the loops gives what a loop over the keys gives); bad arguments
raising errors that name the function and the argument."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import random
from util import raises_with

jax = pytest.importorskip("jax")
jr = jax.random

# (the fixture `x64`: tests/conftest.py)


def _cmp(got, want, rtol=2e-6, atol=1e-7, max_flips=0):
    """got == want: dtype and shape, floats to rtol/atol, integer values exactly except
    for at most `max_flips` (draws where a float32 log or lgamma rounds differently in
    XLA and here and a rejection test goes the other way: samplers.py's docstring)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        off = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        off = got != want
    assert off.sum() <= max_flips, (f"{off.sum()} of {off.size} differ at "
                                    f"{np.flatnonzero(off)[:5]}: {got[off][:5]} vs "
                                    f"{want[off][:5]}")


F32 = np.float32
_rng = np.random.default_rng(0)
# edge values first (lam == 0, Knuth's method below 10 and NaN, rejection above), then
# rejection draws at large rates
LAM = np.concatenate([[0.0, 0.5, 1.0, 5.0, 9.9, 10.0, 20.0, 300.0, np.nan, 3.0],
                      _rng.uniform(10, 3000, 490)]).astype(F32)
# inversion, BTRS, a float n (floored), NaN and negative n, inf n, p outside [0, 1], p = 0
# and 1; then BTRS draws at large n
N = np.concatenate([[0, 5, 100, 1e4, np.inf, -1, np.nan, 30, 12.7, 50, 40],
                    np.floor(_rng.uniform(0, 3000, 489))]).astype(F32)
P = np.concatenate([[0.3, 0.9, 0.5, 0.7, 0.2, 0.5, 0.5, -0.1, 0.6, 1.0, 0.0],
                    _rng.uniform(0, 1, 489)]).astype(F32)
PROBS = np.array([[0.2, 0.3, 0.5], [0.0, 0.9, 0.1]], F32)

# name -> (positional arguments after the key, keyword arguments, integer flips allowed:
# draws where a float32 log or lgamma of XLA and of netcl round apart and a rejection test
# goes the other way, about one in a thousand at rates in the thousands)
SAMPLERS = {
    "poisson": ((LAM, (2, 500)), {}, 4),
    "binomial": ((N, P, (2, 500)), {}, 4),
    "multinomial": ((np.array([20.0, 7.0], F32), PROBS), {"shape": (3, 2, 3)}, 0),
    "generalized_normal": ((np.array([0.7, 2.0, 5.0], F32), (4, 3)), {}, 0),
    "ball": ((3, 1.5, (8,)), {}, 0),
}


# x64 on: float64 draws (and int64 counts) for poisson, binomial and ball (ball's normals
# are generalized_normal's; multinomial's binomials are binomial's)
@pytest.mark.parametrize("name,x64", [(n, False) for n in SAMPLERS] +
                         [(n, True) for n in ("poisson", "binomial", "ball")],
                         indirect=["x64"],
                         ids=[f"{n}-x64_off" for n in SAMPLERS] +
                         [f"{n}-x64_on" for n in ("poisson", "binomial", "ball")])
def test_same_numbers_as_jax(x64, name):
    args, kwargs, flips = SAMPLERS[name]
    jax_sampler = jax.jit(lambda k: getattr(jr, name)(k, *args, **kwargs))  # (one compile)
    for seed in (0, 7):
        got = getattr(random, name)(random.PRNGKey(seed), *args, **kwargs)
        want = jax_sampler(jr.PRNGKey(seed))
        _cmp(got, want, rtol=1e-12 if x64 and name in ("generalized_normal", "ball")
             else 2e-6, atol=0 if x64 else 1e-7, max_flips=flips)


def test_dtypes_as_jax():
    """An integer n with float32 p (drawn in float32), explicit dtypes, default dtypes."""
    k, jk = random.PRNGKey(3), jr.PRNGKey(3)
    args = (np.array([7, 400], np.int32), np.array([[0.25], [0.8]], F32))
    _cmp(random.binomial(k, *args, dtype=jnp.float32),
         jr.binomial(jk, *args, dtype=np.float32))
    # x64 is on here (conftest.py): JAX's defaults are then int64 and float64 (checked
    # by tracing only)
    probs = jnp.asarray(PROBS[0])
    for f, dtype in [(lambda k: random.poisson(k, 3.0), np.int64),
                     (lambda k: random.poisson(k, 3.0, dtype=jnp.uint32), np.uint32),
                     (lambda k: random.binomial(k, 10, F32(0.3), (3,)), np.float64),
                     (lambda k: random.multinomial(k, 10, probs), np.float64),
                     (lambda k: random.multinomial(k, 10, probs, dtype=jnp.int32), np.int32),
                     (lambda k: random.ball(k, 2, 2.0, dtype=jnp.float32), np.float32)]:
        assert netcl.eval_shape(f, k).dtype == dtype


def test_moments():
    k = random.PRNGKey(3)
    m = 4000

    def stats(x):
        x = np.asarray(x, np.float64)
        return x.mean(0), x.var(0)
    for lam in (4.0, 60.0):
        mean, var = stats(random.poisson(k, lam, (m,)))
        np.testing.assert_allclose([mean, var], [lam, lam], rtol=0.08)
    for n, p in ((20.0, 0.3), (500.0, 0.6)):
        mean, var = stats(random.binomial(k, n, p, (m,)))
        np.testing.assert_allclose([mean, var], [n * p, n * p * (1 - p)], rtol=0.08)
    probs = jnp.asarray(np.array([0.2, 0.5, 0.3], F32))
    counts = np.asarray(random.multinomial(k, 30.0, probs, shape=(m, 3)))
    assert (counts.sum(-1) == 30).all() and counts.min() >= 0
    mean, var = stats(counts)
    np.testing.assert_allclose(mean, 30 * np.asarray(probs), rtol=0.05)
    np.testing.assert_allclose(var, 30 * np.asarray(probs) * (1 - np.asarray(probs)),
                               rtol=0.1)
    # exp(-|x|^2): a normal of variance 1/2; exp(-|x|): Laplace of variance 2
    for p, want in ((2.0, 0.5), (1.0, 2.0)):
        mean, var = stats(random.generalized_normal(k, p, (m,), jnp.float32))
        np.testing.assert_allclose([mean, var], [0.0, want], rtol=0.08, atol=0.05)
    # uniform in the unit disc: |x|^2 is uniform on [0, 1]; in the L1 ball: |x|_1 <= 1
    x = np.asarray(random.ball(k, 2, 2, (m,), jnp.float32), np.float64)
    r2 = (x * x).sum(-1)
    assert r2.max() <= 1 and abs(r2.mean() - 0.5) < 0.03
    x = np.asarray(random.ball(k, 3, 1.0, (m,), jnp.float32), np.float64)
    assert np.abs(x).sum(-1).max() <= 1 + 1e-6


def test_jit_and_vmap():
    """vmap gives what a loop over the keys gives (JAX's vmap of its loops does), also
    under jit and around jit; jit gives the eager numbers."""
    k = random.PRNGKey(1)
    keys = random.split(k, 3)
    probs = jnp.asarray(np.array([0.1, 0.6, 0.3], F32))
    cases = [
        ("poisson", lambda kk: random.poisson(kk, 12.0, (5,))),
        ("binomial", lambda kk: random.binomial(kk, 40.0, 0.4, (5,))),
        ("multinomial", lambda kk: random.multinomial(kk, 20.0, probs)),
        ("ball", lambda kk: random.ball(kk, 3, 2, (2,))),      # (generalized_normal's)
    ]
    transforms = {"vmap": netcl.vmap, "jit(vmap)": lambda g: netcl.jit(netcl.vmap(g)),
                  "vmap(jit)": lambda g: netcl.vmap(netcl.jit(g))}
    staged = {"poisson": "jit(vmap)", "binomial": "vmap(jit)"}
    for name, f in cases:
        want = np.stack([np.asarray(f(keys[j])) for j in range(3)])
        # (each sampler under vmap; the staged forms for two: all run through _per_key)
        for how in ("vmap",) + ((staged[name],) if name in staged else ()):
            np.testing.assert_allclose(np.asarray(transforms[how](f)(keys)), want,
                                       rtol=1e-12, err_msg=f"{name} {how}")
    # JAX's vmap, over keys and over a parameter (one key: each example its own loop)
    lam = np.array([1.0, 15.0, 3.0], F32)
    got = netcl.vmap(lambda kk, l: random.poisson(kk, l, (4,), jnp.int32))(keys, lam)
    want = jax.vmap(lambda kk, l: jr.poisson(kk, l, (4,), np.int32))(np.asarray(keys), lam)
    _cmp(got, want)
    got = netcl.vmap(lambda l: random.poisson(k, l, (4,)))(jnp.asarray(lam))
    _cmp(got, np.stack([np.asarray(random.poisson(k, lam[i], (4,))) for i in range(3)]))
    # nested vmaps
    kk2 = random.split(k, (2, 3))
    f = netcl.vmap(netcl.vmap(lambda kk, n: random.binomial(kk, n, 0.7, (4,))),
                   in_axes=(0, None))
    want = [[np.asarray(random.binomial(kk2[i, j], lam[j] * 10, 0.7, (4,)))
             for j in range(3)] for i in range(2)]
    _cmp(f(kk2, jnp.asarray(lam * 10)), np.array(want))
    # jit with traced parameters gives the eager numbers
    got = netcl.jit(lambda kk, n, p: random.binomial(kk, n, p, (6,)))(k, F32(50.0), F32(0.3))
    _cmp(got, random.binomial(k, F32(50.0), F32(0.3), (6,)))
    # generalized_normal's derivative in p is gamma's (random_gamma_grad), as JAX's
    with jax.enable_x64(netcl.config.enable_x64):      # (rademacher's bits follow x64)
        want = jax.grad(lambda p: jax.numpy.sum(jax.random.generalized_normal(
            np.asarray(k), p, (3,), F32)))(F32(1.5))
    np.testing.assert_allclose(np.asarray(netcl.jit(netcl.grad(
        lambda p: jnp.sum(random.generalized_normal(k, p, (3,), F32))))(F32(1.5))),
        np.asarray(want), rtol=2e-4)


def test_bad_arguments():
    k = random.PRNGKey(0)
    third = jnp.ones(3) / 3
    raises_with(TypeError, lambda: random.poisson(3, 1.0), "poisson", "key")
    raises_with(ValueError, lambda: random.poisson(random.split(k), 1.0), "poisson", "vmap")
    raises_with(ValueError, lambda: random.poisson(k, 1.0, dtype=jnp.float32), "poisson",
                "integer")
    raises_with(TypeError, lambda: random.poisson(k, [1.0]), "poisson", "lam")
    raises_with(TypeError, lambda: random.poisson(k, "a"), "poisson", "lam")
    raises_with(ValueError, lambda: random.poisson(k, jnp.ones(3), (2,)), "poisson", "(2,)")
    raises_with(ValueError, lambda: random.binomial(k, 10, 0.5, dtype=jnp.int32), "binomial",
                "float")
    raises_with(TypeError, lambda: random.binomial(k, [10], 0.5), "binomial", "n")
    raises_with(TypeError, lambda: random.binomial(k, 10, [0.5]), "binomial", "p")
    raises_with(ValueError, lambda: random.binomial(k, jnp.ones(3), 0.3, (2,)), "binomial",
                "(2,)")
    raises_with(TypeError, lambda: random.binomial(np.zeros(2, F32), 10, 0.5), "binomial",
                "uint32")
    raises_with(TypeError, lambda: random.multinomial(k, 10, [0.5, 0.5]), "multinomial", "p")
    raises_with(ValueError, lambda: random.multinomial(k, 10, third, shape=(4,)),
                "multinomial", "(4,)")
    raises_with(ValueError, lambda: random.multinomial(k, 10, jnp.float32(1.0)),
                "multinomial", "outcome")
    raises_with(ValueError, lambda: random.multinomial(k, jnp.ones(2), third), "multinomial",
                "n of shape (2,)")
    raises_with(TypeError, lambda: random.multinomial(k, 10, third, unroll=0), "multinomial",
                "unroll")
    raises_with(ValueError, lambda: random.generalized_normal(k, 2.0, (2,), jnp.int32),
                "generalized_normal", "float")
    raises_with(ValueError, lambda: random.generalized_normal(k, jnp.ones(3), (2,)),
                "generalized_normal", "(2,)")
    raises_with(TypeError, lambda: random.generalized_normal(k, [2.0]),
                "generalized_normal", "p")
    raises_with(TypeError, lambda: random.ball(k, 2.5), "ball", "d")
    raises_with(ValueError, lambda: random.ball(k, -1), "ball", "d")
    raises_with(TypeError, lambda: random.ball(k, 2, jnp.ones(2)), "ball", "p")
    raises_with(ValueError, lambda: random.ball(k, 2, dtype=jnp.int32), "ball", "float")
    raises_with(TypeError, lambda: random.ball("k", 2), "ball", "key")
