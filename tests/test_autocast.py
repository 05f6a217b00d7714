"""autocast (transforms/autocast.py) and netcl.mixed_precision: float16 products with
float32 gradients, the IR's dtypes, composition with jit/grad/vmap, jmp's policies, and a
float16 step with dynamic loss scaling skipping an overflow."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import mixed_precision as mp
from netcl import stax

RNG = np.random.default_rng(0)


def _mlp():
    init, apply = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    _, params = init(netcl.random.PRNGKey(0), (-1, 16))
    x = jnp.asarray(RNG.standard_normal((8, 16)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 8)])
    return params, x, y, (lambda p, x, y: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))


def _cnn():
    # (tanh, not relu: a float16 pre-activation within rounding of 0 flips a relu mask and
    # moves a kernel gradient entry by a whole input times its upstream gradient)
    init, apply = stax.serial(stax.Conv(8, (3, 3), padding="SAME"), stax.Tanh, stax.Flatten,
                              stax.Dense(10), stax.LogSoftmax)
    _, params = init(netcl.random.PRNGKey(1), (4, 8, 8, 3))
    x = jnp.asarray(RNG.standard_normal((4, 8, 8, 3)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 4)])
    return params, x, y, (lambda p, x, y: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))


@pytest.mark.parametrize("model", [_mlp, _cnn], ids=["mlp", "cnn"])
def test_autocast_matches_float32_and_gives_float32_gradients(model):
    params, x, y, loss = model()
    half = netcl.autocast(loss, jnp.float16)
    np.testing.assert_allclose(half(params, x, y), loss(params, x, y), rtol=5e-3)
    want = netcl.tree_util.tree_leaves(netcl.grad(loss)(params, x, y))
    for got in (netcl.grad(half)(params, x, y), netcl.jit(netcl.grad(half))(params, x, y)):
        for a, b in zip(netcl.tree_util.tree_leaves(got), want):
            assert a.dtype == np.float32
            a, b = np.asarray(a), np.asarray(b)
            assert np.linalg.norm(a - b) <= 1e-2 * np.linalg.norm(b), (a, b)


def test_the_ir_shows_half_products_and_float32_exp_log_and_sums():
    params, x, y, loss = _mlp()
    ir = netcl.make_ir(netcl.autocast(loss, jnp.float16))(params, x, y)
    dots = [e for e in ir.eqns if e.prim.name == "dot_general"]
    assert dots and all(v.aval.dtype == np.float16 for e in dots for v in e.inputs)
    for e in ir.eqns:
        if e.prim.name in ("exp", "log", "reduce_sum", "reduce_max"):
            assert all(v.aval.dtype == np.float32 for v in e.inputs), e
    assert any(e.prim.name == "convert_element_type" for e in ir.eqns)
    plain = netcl.make_ir(loss)(params, x, y)
    assert not any(e.prim.name == "convert_element_type" for e in plain.eqns)


def test_keep_fp32_ops_and_compositions():
    h = jnp.asarray(RNG.standard_normal(5).astype(np.float16))
    out = netcl.autocast(lambda v: jnp.exp(v))(h)
    assert out.dtype == np.float32                        # exp runs in float32
    w = jnp.asarray(RNG.standard_normal((6, 3)).astype(np.float32))
    xs = jnp.asarray(RNG.standard_normal((4, 2, 6)).astype(np.float32))
    f = netcl.autocast(lambda w, x: jnp.tanh(x @ w))
    assert f(w, xs[0]).dtype == np.float16                # the product and what follows it
    a = netcl.vmap(f, in_axes=(None, 0))(w, xs)
    b = netcl.autocast(netcl.vmap(lambda w, x: jnp.tanh(x @ w), in_axes=(None, 0)))(w, xs)
    c = netcl.jit(f)(w, xs[1])
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(c, a[1])
    np.testing.assert_allclose(np.asarray(a, np.float32), np.tanh(np.asarray(xs) @ np.asarray(w)),
                               atol=5e-3)
    assert netcl.autocast(f, jnp.float32) is f            # float32: nothing to do
    with pytest.raises(TypeError, match="autocast: expected a function"):
        netcl.autocast(3)
    with pytest.raises(ValueError, match="autocast: dtype must be float16"):
        netcl.autocast(f, jnp.int32)


def test_policies_as_jmp():
    for spec in ("params=float32,compute=float16,output=float32", "p=f32,c=f16,o=f32",
                 "compute=half,params=float32"):
        pol = mp.get_policy(spec)
        assert (pol.param_dtype, pol.compute_dtype, pol.output_dtype) == \
            (np.float32, np.float16, np.float32), spec
    assert mp.get_policy("float16").output_dtype == np.float16
    assert str(mp.get_policy("p=f32,c=f16,o=f32")) == "p=float32,c=float16,o=float32"
    pol = mp.get_policy("p=f32,c=f16,o=f32")
    tree = {"w": jnp.ones(3), "n": jnp.arange(3), "s": "name", "h": np.ones(2, np.float32)}
    cast = pol.cast_to_compute(tree)
    assert cast["w"].dtype == np.float16 and cast["h"].dtype == np.float16
    assert cast["n"].dtype == np.int32 and cast["s"] == "name"
    assert pol.cast_to_param(cast)["w"].dtype == np.float32
    for bad, err in (("p=f32,x=f16", "cannot read 'x=f16'"), ("p=int32", "int32"),
                     ("p=f8", "unknown dtype")):
        with pytest.raises(ValueError, match=err):
            mp.get_policy(bad)
    with pytest.raises(TypeError, match="get_policy: expected a string"):
        mp.get_policy(3)
    assert mp.DynamicLossScale is netcl.optim.DynamicLossScale


def test_float16_step_with_an_overflow_is_skipped_and_halves_the_loss_scale():
    params, x, y, loss = _mlp()
    pol = mp.get_policy("p=f32,c=f16,o=f32")

    def step(params, ls, blow_up):
        def scaled(p):
            value = loss(pol.cast_to_compute(p), pol.cast_to_compute(x), y) * blow_up
            return ls.scale(pol.cast_to_output(value))
        grads = ls.unscale(netcl.grad(scaled)(params))
        finite = mp.all_finite(grads)
        new = netcl.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return mp.select_tree(finite, new, params), ls.adjust(finite)
    ls = mp.DynamicLossScale(2.0 ** 15)
    kept, ls2 = step(params, ls, jnp.asarray(1e30, jnp.float32))    # overflows in float16
    assert float(ls2.loss_scale) == 2.0 ** 14
    for a, b in zip(netcl.tree_util.tree_leaves(kept), netcl.tree_util.tree_leaves(params)):
        np.testing.assert_array_equal(a, b)
    moved, ls3 = step(params, ls2, jnp.asarray(1.0, jnp.float32))
    assert float(ls3.loss_scale) == 2.0 ** 14 and int(ls3.counter) == 1
    assert any(not np.array_equal(a, b) for a, b in zip(netcl.tree_util.tree_leaves(moved),
                                                        netcl.tree_util.tree_leaves(params)))
