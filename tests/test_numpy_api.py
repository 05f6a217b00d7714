"""netcl.nn against NumPy formulas, and bad inputs of the netcl.numpy surface."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from util import assert_close


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _np_lse(x, axis):
    m = x.max(axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis, keepdims=True))).squeeze(axis)


NN = {
    "relu": (netcl.nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (netcl.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "sigmoid": (netcl.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softplus": (netcl.nn.softplus, lambda x: np.logaddexp(x, 0)),
    "log_sigmoid": (netcl.nn.log_sigmoid, lambda x: -np.logaddexp(-x, 0)),
    "silu": (netcl.nn.silu, lambda x: x / (1 + np.exp(-x))),
    "elu": (netcl.nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "leaky_relu": (netcl.nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "gelu_tanh": (netcl.nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(
        np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "softmax": (netcl.nn.softmax, lambda x: _np_softmax(x, -1)),
    "log_softmax": (netcl.nn.log_softmax, lambda x: np.log(_np_softmax(x, -1))),
    "logsumexp": (lambda x: netcl.nn.logsumexp(x, axis=-1), lambda x: _np_lse(x, -1)),
    "standardize": (netcl.nn.standardize, lambda x: (x - x.mean(-1, keepdims=True)) /
                    np.sqrt(x.var(-1, keepdims=True) + 1e-5)),
}


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(NN)), seed=st.integers(0, 1000),
       shape=st.sampled_from([(5,), (3, 4), (2, 3, 7), (1, 1)]), scale=st.sampled_from([1.0, 30.0]))
def test_nn_matches_numpy(name, seed, shape, scale):
    f, ref = NN[name]
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    want = ref(x.astype(np.float64))
    assert_close(f(jnp.asarray(x)), want.astype(np.float32), rtol=2e-5, atol=2e-5)


def test_relu_derivatives_match_jax():
    """0 at x == 0 (JAX's custom rule), through grad, jvp, jit and vmap; also for float64."""
    x = np.array([-2.0, -0.0, 0.0, 1e-30, 3.0, np.nan])
    want = np.array([0, 0, 0, 1, 1, 0])
    for dt in (np.float32, np.float64):
        d = jnp.asarray(x.astype(dt))
        g = netcl.grad(lambda v: jnp.sum(netcl.nn.relu(v) * 2.0))
        np.testing.assert_array_equal(np.asarray(g(d)), 2 * want.astype(dt))
        np.testing.assert_array_equal(np.asarray(netcl.jit(g)(d)), 2 * want.astype(dt))
        _, t = netcl.jvp(netcl.nn.relu, (d,), (jnp.ones_like(d),))
        np.testing.assert_array_equal(np.asarray(t), want.astype(dt))
        per = netcl.vmap(netcl.grad(netcl.nn.relu))(d)
        np.testing.assert_array_equal(np.asarray(per), want.astype(dt))


def test_nn_extremes_and_one_hot():
    big = jnp.array([-1e4, 0.0, 1e4])
    assert np.all(np.isfinite(np.asarray(netcl.nn.softplus(big))))
    assert np.asarray(netcl.nn.logsumexp(jnp.array([-np.inf, -np.inf]))).item() == -np.inf
    assert float(netcl.nn.logsumexp(jnp.array([1000.0, 1000.0]))) == pytest.approx(1000.6931)
    oh = netcl.nn.one_hot(jnp.array([0, 2, 5]), 3)
    assert np.asarray(oh).tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    assert netcl.nn.one_hot(jnp.array([[1]]), 4, axis=0).shape == (4, 1, 1)
    with pytest.raises(TypeError, match="one_hot: labels must be integers"):
        netcl.nn.one_hot(jnp.ones(3), 3)
    with pytest.raises(ValueError, match="one_hot: num_classes"):
        netcl.nn.one_hot(jnp.array([1]), -1)


@pytest.mark.parametrize("fn, err, match", [
    (lambda: jnp.reshape(jnp.ones((2, 3)), (4, 2)), ValueError, r"reshape.*\(2, 3\).*\(4, 2\)"),
    (lambda: jnp.reshape(jnp.ones(6), (-1, -1)), ValueError, "only one dimension can be -1"),
    (lambda: jnp.sum(jnp.ones((2, 3)), axis=2), ValueError, "sum"),
    (lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)), ValueError, "transpose"),
    (lambda: jnp.swapaxes(jnp.ones((2, 3)), 0, 5), ValueError, "swapaxes.*axis2"),
    (lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((3, 2))]), ValueError, "concatenate"),
    (lambda: jnp.matmul(jnp.ones((2, 3)), jnp.ones((4, 2))), ValueError, "matmul"),
    (lambda: jnp.ones((2, 3)) + jnp.ones((3, 2)), TypeError, r"\(2, 3\), \(3, 2\)"),
    (lambda: jnp.exp("x"), TypeError, "exp"),
    (lambda: jnp.array({"a": 1}), TypeError, "array"),
    (lambda: jnp.zeros((2, -1)), ValueError, "negative"),
    (lambda: jnp.ones(3).astype("complex256"), TypeError, "complex256"),
    (lambda: jnp.squeeze(jnp.ones((2, 3)), 0), ValueError, "squeeze"),
    (lambda: jnp.ones((2, 3))[5], IndexError, "5"),
    (lambda: jnp.arange(0, 5, 0), ValueError, "arange: step"),
    (lambda: jnp.where(jnp.ones(3) > 0, jnp.ones(3)), ValueError, "where"),
])
def test_bad_inputs_raise_typed_errors(fn, err, match):
    with pytest.raises(err, match=match):
        fn()
