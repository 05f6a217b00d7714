"""Sorting: the argsort primitive (a bitonic network on the device) against NumPy's stable
argsort over drawn shapes, dtypes, ties and NaNs; jnp.sort/argsort/median/quantile/
percentile/nan-forms/unique and lax.top_k/sort against JAX, with gradients, jit and vmap."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.primitives.sorting import argsort_p

jax = pytest.importorskip("jax")
jjnp = jax.numpy
SETTINGS = settings(max_examples=25, deadline=None)


@SETTINGS
@given(data=st.data())
def test_argsort_matches_numpy(data):
    dtype = data.draw(st.sampled_from([np.float32, np.int32, np.uint32, np.float16, np.bool_]))
    shape = data.draw(st.sampled_from([(1,), (5,), (2, 16), (3, 17), (2, 0), (0, 3), (130,),
                                       (2, 3, 9)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.integers(-3, 4, shape).astype(dtype)        # few distinct values: many ties
    if dtype in (np.float32, np.float16) and x.size:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = np.nan
        flat[rng.integers(0, flat.size)] = -0.0
    got = np.asarray(argsort_p.bind(jnp.asarray(x)))
    np.testing.assert_array_equal(got, argsort_p.reference(x))
    np.testing.assert_array_equal(got, np.argsort(x, axis=-1, kind="stable"))


CASES = {
    "sort": lambda l, a: l.sort(a),
    "sort axis 0": lambda l, a: l.sort(a, axis=0),
    "sort flat": lambda l, a: l.sort(a, axis=None),
    "sort descending": lambda l, a: l.sort(a, descending=True),
    "argsort": lambda l, a: l.argsort(a),
    "argsort descending": lambda l, a: l.argsort(a, axis=0, descending=True),
    "median": lambda l, a: l.median(a),
    "median axis": lambda l, a: l.median(a, axis=1, keepdims=True),
    "quantile": lambda l, a: l.quantile(a, 0.3, axis=1),
    "quantiles": lambda l, a: l.quantile(a, l.array([0.1, 0.5, 0.9]), axis=0),
    "quantile lower": lambda l, a: l.quantile(a, 0.3, axis=1, method="lower"),
    "quantile higher": lambda l, a: l.quantile(a, 0.3, axis=1, method="higher"),
    "quantile nearest": lambda l, a: l.quantile(a, 0.3, axis=1, method="nearest"),
    "quantile midpoint": lambda l, a: l.quantile(a, 0.3, axis=1, method="midpoint"),
    "percentile": lambda l, a: l.percentile(a, 40.0, axis=1),
    "nanmedian": lambda l, a: l.nanmedian(a, axis=1),
    "nanquantile": lambda l, a: l.nanquantile(a, 0.7),
    "nanpercentile": lambda l, a: l.nanpercentile(a, 25.0, axis=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sorting_functions_agree_with_jax(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 7)).astype(np.float32)
    x[1, 2] = np.nan
    x[2, :3] = 1.0                      # ties
    ours = np.asarray(CASES[name](jnp, jnp.asarray(x)))
    with jax.enable_x64(netcl.config.enable_x64):   # (argsort: the default int)
        theirs = np.asarray(CASES[name](jjnp, jjnp.asarray(x)))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_unique_and_top_k_agree_with_jax():
    rng = np.random.default_rng(2)
    xi = rng.integers(0, 5, (3, 9)).astype(np.int32)
    for kw in ({}, {"return_index": True, "return_inverse": True, "return_counts": True},
               {"size": 8, "fill_value": -1}, {"size": 3}):
        ours, theirs = jnp.unique(jnp.asarray(xi), **kw), jjnp.unique(xi, **kw)
        for a, b in zip(ours if isinstance(ours, tuple) else [ours],
                        theirs if isinstance(theirs, tuple) else [theirs]):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(netcl.jit(lambda a: jnp.unique(a, size=6))(xi),
                                  jjnp.unique(xi, size=6))
    f = np.array([1.0, np.nan, 1.0, np.nan, -2.0], np.float32)
    np.testing.assert_array_equal(jnp.unique(jnp.asarray(f)), jjnp.unique(f))
    x = rng.standard_normal((3, 10)).astype(np.float32)
    x[0, :4] = 2.0
    for a, b in zip(netcl.lax.top_k(jnp.asarray(x), 4), jax.lax.top_k(x, 4)):
        np.testing.assert_array_equal(a, b)
    k, v = netcl.lax.sort((jnp.asarray(x), jnp.asarray(x * 10)))
    np.testing.assert_array_equal(v, np.sort(x, -1) * 10)


def test_gradients_jit_and_vmap():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(9)
    w = np.arange(9.0)
    for ours, theirs in (
            (lambda a: jnp.sum(jnp.sort(a) * w), lambda a: jjnp.sum(jjnp.sort(a) * w)),
            (jnp.median, jjnp.median),
            (lambda a: jnp.quantile(a, 0.37), lambda a: jjnp.quantile(a, 0.37)),
            (lambda a: jnp.sum(netcl.lax.top_k(a, 3)[0] * w[:3]),
             lambda a: jjnp.sum(jax.lax.top_k(a, 3)[0] * w[:3]))):
        np.testing.assert_allclose(netcl.grad(ours)(jnp.asarray(x)), jax.grad(theirs)(x),
                                   rtol=1e-6)
        np.testing.assert_allclose(netcl.jit(netcl.grad(ours))(x), jax.grad(theirs)(x),
                                   rtol=1e-6)
    from netcl.test_util import check_grads
    check_grads(lambda a: jnp.sum(jnp.sort(a) ** 2 * w), (jnp.asarray(x),), order=1)
    xb = rng.standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_array_equal(netcl.vmap(jnp.argsort)(jnp.asarray(xb)),
                                  np.argsort(xb, -1, kind="stable"))
    np.testing.assert_array_equal(netcl.vmap(jnp.sort, in_axes=1, out_axes=1)(jnp.asarray(xb)),
                                  np.sort(xb, 0))


def test_bad_inputs():
    with pytest.raises(ValueError, match="quantile: q=1.5 must be in"):
        jnp.quantile(jnp.ones(3), 1.5)
    with pytest.raises(ValueError, match="method='cubic'"):
        jnp.quantile(jnp.ones(3), 0.5, method="cubic")
    with pytest.raises(ValueError, match="top_k: k=4"):
        netcl.lax.top_k(jnp.ones(3), 4)
    with pytest.raises(TypeError, match="unique: under a transform give size="):
        netcl.jit(jnp.unique)(jnp.ones(3))
    with pytest.raises(ValueError, match="sort: axis=2"):
        jnp.sort(jnp.ones((2, 2)), axis=2)
