"""grad family, custom rules, vmap, make_ir and their errors."""
import collections

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.test_util import check_grads
from util import assert_close


def f64(*shape, seed=0, lo=-1.0, hi=1.0):
    return jnp.asarray(np.random.default_rng(seed).uniform(lo, hi, size=shape))


def test_grad_argnums_pytrees_and_aux():
    def loss(params, x):
        w, b = params["w"], params["b"]
        y = jnp.tanh(x * w + b)
        return jnp.sum(y * y), y
    params = {"w": f64(3, seed=1), "b": f64(3, seed=2)}
    x = f64(3, seed=3)
    g, aux = netcl.grad(loss, has_aux=True)(params, x)
    assert set(g) == {"w", "b"} and aux.shape == (3,)
    w, b, xx = (np.asarray(params["w"]), np.asarray(params["b"]), np.asarray(x))
    t = np.tanh(xx * w + b)
    assert_close(g["w"], 2 * t * (1 - t * t) * xx)
    (v, _), (gp, gx) = netcl.value_and_grad(loss, argnums=(0, 1), has_aux=True)(params, x)
    assert_close(gx, 2 * t * (1 - t * t) * w)
    assert abs(float(v) - np.sum(t * t)) < 1e-10


def test_python_control_flow_on_values_in_eager_grad():
    def f(x):
        if float(x) > 0:
            return x * x
        return -x
    assert float(netcl.grad(f)(jnp.array(3.0))) == 6.0
    assert float(netcl.grad(f)(jnp.array(-3.0))) == -1.0


def test_higher_order_and_hessian():
    f = lambda x: jnp.sum(jnp.sin(x) * x ** 2)  # noqa: E731
    x = f64(4, seed=4)
    H = netcl.hessian(f)(x)
    xx = np.asarray(x)
    want = np.diag(-np.sin(xx) * xx ** 2 + 4 * xx * np.cos(xx) + 2 * np.sin(xx))
    assert_close(H, want, rtol=1e-8, atol=1e-8)
    J = netcl.jacrev(jnp.sin)(x)
    assert_close(J, np.diag(np.cos(xx)), atol=1e-12)
    Jf = netcl.jacfwd(lambda a: a * 2.0 + 1.0)(x)
    assert_close(Jf, 2 * np.eye(4))
    d3 = netcl.grad(netcl.grad(netcl.grad(lambda s: s ** 4)))(jnp.array(2.0))
    assert float(d3) == 48.0


def test_jvp_vjp_api():
    x = f64(3)
    y, t = netcl.jvp(lambda a: a * a, (x,), (jnp.ones_like(x),))
    assert_close(t, 2 * np.asarray(x))
    y, pull = netcl.vjp(lambda a, b: (a * b, a + b), x, x)
    ga, gb = pull((jnp.ones(3, jnp.float64), jnp.ones(3, jnp.float64)))
    assert_close(ga, np.asarray(x) + 1)
    with pytest.raises(ValueError, match="same structure"):
        netcl.jvp(jnp.sin, (x,), (x, x))


def test_stop_gradient_and_integer_inputs():
    g = netcl.grad(lambda x: jnp.sum(x * netcl.stop_gradient(x)))(f64(3))
    assert_close(g, np.asarray(f64(3)))
    # integer arrays flow through with zero derivative
    g = netcl.grad(lambda x, i: jnp.sum(x * i.astype(jnp.float64)))(f64(2), jnp.array([2, 3]))
    assert_close(g, [2.0, 3.0])


def test_custom_jvp_used_by_both_modes():
    @netcl.custom_jvp
    def safe_log1pexp(x):
        return jnp.log1p(jnp.exp(x))

    @safe_log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_log1pexp(x), t * netcl.nn.sigmoid(x)

    x = jnp.array([0.0, 100.0, 1000.0])
    g = netcl.grad(lambda v: jnp.sum(safe_log1pexp(v)))(x)
    assert np.all(np.isfinite(np.asarray(g)))
    assert_close(g, [0.5, 1.0, 1.0])
    _, t = netcl.jvp(safe_log1pexp, (x,), (jnp.ones(3),))
    assert_close(t, [0.5, 1.0, 1.0])


def test_custom_vjp():
    @netcl.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (jnp.clip(g, -1.0, 1.0),))
    g = netcl.grad(lambda x: jnp.sum(clip_gradient(x) * 10.0))(jnp.ones(3))
    assert np.asarray(g).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="forward-mode"):
        netcl.jvp(clip_gradient, (jnp.ones(2),), (jnp.ones(2),))


def test_checkpoint_gives_same_gradient():
    def block(w, x):
        return jnp.tanh(jnp.sin(x * w) * w)
    x, w = f64(5, seed=5), f64(5, seed=6)
    g1 = netcl.grad(lambda w: jnp.sum(block(w, x)))(w)
    g2 = netcl.grad(lambda w: jnp.sum(netcl.checkpoint(block)(w, x)))(w)
    assert_close(g1, np.asarray(g2), rtol=1e-12)


def test_nn_gradients_finite_for_large_inputs():
    x = jnp.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    for f in (netcl.nn.softplus, netcl.nn.sigmoid, netcl.nn.log_sigmoid, netcl.nn.silu,
              netcl.nn.gelu, netcl.nn.elu):
        g = netcl.grad(lambda v: jnp.sum(f(v)))(x)
        assert np.all(np.isfinite(np.asarray(g))), f.__name__


def test_vmap_pytrees_none_and_nesting():
    Point = collections.namedtuple("Point", "x y")
    p = Point(jnp.ones((4, 2)), jnp.ones(2) * 3.0)
    out = netcl.vmap(lambda p: p.x * p.y, in_axes=(Point(0, None),))(p)
    assert out.shape == (4, 2) and float(out[0, 0]) == 3.0
    out = netcl.vmap(lambda a: {"s": a * 2.0}, out_axes={"s": 1})(jnp.ones((4, 3)))
    assert out["s"].shape == (3, 4)
    with pytest.raises(ValueError, match="different sizes"):
        netcl.vmap(jnp.add)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="out of range"):
        netcl.vmap(jnp.sin, in_axes=2)(jnp.ones(3))


def test_vmap_of_grad_and_grad_of_vmap():
    w = f64(3, seed=7)
    xs = f64(5, 3, seed=8)
    loss = lambda w, x: jnp.sum(jnp.tanh(w * x))  # noqa: E731
    per = netcl.vmap(netcl.grad(loss), in_axes=(None, 0))(w, xs)
    want = np.stack([np.asarray(netcl.grad(loss)(w, xs[i])) for i in range(5)])
    assert_close(per, want, rtol=1e-12)
    g = netcl.grad(lambda w: jnp.sum(netcl.vmap(loss, (None, 0))(w, xs)))(w)
    assert_close(g, want.sum(0), rtol=1e-10)


def test_vmap_bool_control_flow_error():
    with pytest.raises(TypeError, match="vmap"):
        netcl.vmap(lambda x: x if x > 0 else -x)(jnp.ones(3))


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar"):
        netcl.grad(lambda x: x * 2.0)(jnp.ones(3))
    with pytest.raises(TypeError, match="float"):
        netcl.grad(lambda x: jnp.sum(x))(jnp.ones(3, jnp.int32))
    with pytest.raises(TypeError, match="float scalar"):
        netcl.grad(lambda x: (x > 0).astype(jnp.int32).sum())(jnp.ones(3))
    with pytest.raises(ValueError, match="argnums"):
        netcl.grad(lambda x: jnp.sum(x), argnums=3)(jnp.ones(3))


def test_leaked_tracer_error():
    leaked = []

    def f(x):
        leaked.append(x)
        return jnp.sum(x * x)
    netcl.grad(f)(jnp.ones(2))
    with pytest.raises(netcl.LeakedTracerError, match="leaked"):
        leaked[0] + 1.0


def test_make_ir_and_concretization_error():
    ir = netcl.make_ir(lambda x, y: jnp.sin(x) * y + 1.0)(jnp.ones(3, jnp.float32),
                                                          jnp.ones(3, jnp.float32))
    text = str(ir)
    assert "sin" in text and "mul" in text and "add" in text and "float32[3]" in text
    with pytest.raises(netcl.ConcretizationError, match="static_argnums"):
        netcl.make_ir(lambda x: x * 2.0 if x.sum() > 0 else x)(jnp.ones(3))


def test_composed_models_check_grads():
    rng = np.random.default_rng(9)
    W1, b1 = jnp.asarray(rng.normal(size=(4, 5)) * 0.5), jnp.asarray(rng.normal(size=5) * 0.1)
    W2 = jnp.asarray(rng.normal(size=(5, 3)) * 0.5)
    x = jnp.asarray(rng.normal(size=(6, 4)))
    y = jnp.asarray(np.eye(3)[rng.integers(0, 3, 6)])

    def mlp_loss(W1, b1, W2):
        h = netcl.nn.relu(x @ W1 + b1)
        return -jnp.mean(jnp.sum(netcl.nn.log_softmax(h @ W2) * y, axis=-1))
    check_grads(mlp_loss, (W1, b1, W2), order=2, modes=("rev",))

    def layer_norm(v):
        m = jnp.mean(v, -1, keepdims=True)
        s = jnp.var(v, -1, keepdims=True)
        return jnp.sum(jnp.tanh((v - m) / jnp.sqrt(s + 1e-5)))
    check_grads(layer_norm, (x,), order=2)
    check_grads(lambda v: netcl.nn.logsumexp(v, axis=-1).sum(), (x,), order=2)


def test_conv_pool_net_check_grads():
    from netcl import lax
    rng = np.random.default_rng(10)
    x = jnp.asarray(rng.normal(size=(2, 6, 6, 2)))
    k1 = jnp.asarray(rng.normal(size=(3, 3, 2, 3)) * 0.5)
    k2 = jnp.asarray(rng.normal(size=(2, 2, 3, 2)) * 0.5)

    def net(k1, k2):
        h = lax.conv_general_dilated(x, k1, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jnp.tanh(h)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(h, k2, (1, 1), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(netcl.nn.softplus(h))
    check_grads(net, (k1, k2), order=2, modes=("rev",))
