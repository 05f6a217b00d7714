"""autocast (transforms/autocast.py) and netcl.mixed_precision: float16 and bfloat16 products
with float32 gradients (an MLP, CNNs, a single-head attention block), the IR's dtypes,
composition with jit/grad/vmap (a jitted function inside is autocast too), jmp's policies,
and a float16 step with dynamic loss scaling skipping an overflow."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import mixed_precision as mp
from netcl import optim, stax
from netcl.tree_util import tree_leaves
from util import float32_params

RNG = np.random.default_rng(0)


def _mlp():
    init, apply = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    params = float32_params(init(netcl.random.PRNGKey(0), (-1, 16))[1])
    x = jnp.asarray(RNG.standard_normal((8, 16)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 8)])
    return params, x, y, (lambda p, x, y: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))


def _cnn():
    # (tanh, not relu: a float16 pre-activation within rounding of 0 flips a relu mask and
    # moves a kernel gradient entry by a whole input times its upstream gradient)
    init, apply = stax.serial(stax.Conv(8, (3, 3), padding="SAME"), stax.Tanh, stax.Flatten,
                              stax.Dense(10), stax.LogSoftmax)
    params = float32_params(init(netcl.random.PRNGKey(1), (4, 8, 8, 3))[1])
    x = jnp.asarray(RNG.standard_normal((4, 8, 8, 3)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 4)])
    return params, x, y, (lambda p, x, y: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))


def _relu_cnn():
    # _cnn's shapes, with relu and max pooling (own generator: the same data whichever
    # tests run before)
    rng = np.random.default_rng(1)
    init, apply = stax.serial(stax.Conv(8, (3, 3), padding="SAME"), stax.Relu,
                              stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(10),
                              stax.LogSoftmax)
    params = float32_params(init(netcl.random.PRNGKey(2), (4, 8, 8, 3))[1])
    x = jnp.asarray(rng.standard_normal((4, 8, 8, 3)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 4)])
    return params, x, y, (lambda p, x, y: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))


def _attend(p, x):
    """Single-head self-attention: softmax(q k^T / sqrt(d)) v, then the output projection."""
    q, k, v = x @ p["q"], x @ p["k"], x @ p["v"]
    a = netcl.nn.softmax(q @ k.T / x.shape[-1] ** 0.5, axis=-1)
    return (a @ v) @ p["o"]


def _attention():
    # _mlp's x (8 tokens of width 16), 16x16 projections
    rng = np.random.default_rng(2)
    params = {n: jnp.asarray(rng.standard_normal((16, 16)).astype(np.float32) / 4)
              for n in "qkvo"}
    x = jnp.asarray(rng.standard_normal((8, 16)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((8, 16)).astype(np.float32))
    return params, x, y, (lambda p, x, y: jnp.mean((_attend(p, x) - y) ** 2))


def _close(got, want, tol):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert np.linalg.norm(got - want) <= tol * np.linalg.norm(want), (got, want)


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


@pytest.mark.parametrize("model", [_relu_cnn, _attention], ids=["cnn", "attention"])
def test_bfloat16_cnn_and_attention_match_float32_with_float32_gradients(model):
    params, x, y, loss = model()
    half = netcl.autocast(loss, jnp.bfloat16)
    _close(half(params, x, y), loss(params, x, y), 1e-2)
    want = tree_leaves(netcl.grad(loss)(params, x, y))
    # A relu or max-pool decision that bfloat16 rounding flips moves a whole input patch
    # times its cotangent in the convolution kernel's gradient (with 4 small images, up to
    # 0.12 of its norm over 16 draws of the data); the other gradients stay within 0.04.
    tols = [0.25] + [5e-2] * 3 if model is _relu_cnn else [5e-2] * 4
    for a, b, tol in zip(tree_leaves(netcl.jit(netcl.grad(half))(params, x, y)), want, tols):
        assert a.dtype == np.float32
        _close(a, b, tol)
    if model is _attention:     # the block's output itself, before the loss
        f = netcl.autocast(_attend, jnp.bfloat16)
        assert f(params, x).dtype == jnp.bfloat16
        _close(f(params, x), _attend(params, x), 2e-2)


def test_the_ir_shows_bfloat16_products_and_float32_softmax():
    params, x, y, loss = _attention()
    ir = netcl.make_ir(netcl.autocast(loss, jnp.bfloat16))(params, x, y)
    assert sum(e.prim.name == "dot_general" for e in ir.eqns) == 6
    softmax = False     # the scores' scaling (a bfloat16 div) comes before the softmax
    for e in ir.eqns:
        softmax = softmax or e.prim.name == "reduce_max"
        if e.prim.name == "dot_general":
            assert all(v.aval.dtype == jnp.bfloat16 for v in e.inputs), e
        elif e.prim.name in ("exp", "reduce_max", "reduce_sum") or \
                (softmax and e.prim.name == "div"):
            assert all(v.aval.dtype == np.float32 for v in e.inputs), e
    assert softmax
    params, x, y, loss = _relu_cnn()
    ir = netcl.make_ir(netcl.autocast(loss, jnp.bfloat16))(params, x, y)
    convs = [e for e in ir.eqns if e.prim.name == "conv_general_dilated"]
    assert convs and all(v.aval.dtype == jnp.bfloat16 for e in convs for v in e.inputs)


def test_jit_grad_vmap_and_a_jitted_function_inside():
    # Results of one computation through different kernels (jit's fused ones, batched
    # products) may differ in a few bfloat16 roundings: 2e-3 of the norm allows those, and
    # not float32 in place of bfloat16 (6e-3 to 8e-3 off for the block's output and the
    # gradients here; the IR and the dtypes tell the loss's case).
    params, x, y, loss = _attention()
    half = netcl.autocast(loss, jnp.bfloat16)
    eager = netcl.grad(half)(params, x, y)
    for a, b in zip(tree_leaves(netcl.jit(netcl.grad(half))(params, x, y)), tree_leaves(eager)):
        _close(a, b, 2e-3)
    # vmap over a batch of two sequences, either way round
    xs = jnp.stack([x, x[::-1]])
    f = netcl.autocast(_attend, jnp.bfloat16)
    a = netcl.vmap(f, in_axes=(None, 0))(params, xs)
    b = netcl.autocast(netcl.vmap(_attend, in_axes=(None, 0)), jnp.bfloat16)(params, xs)
    assert a.dtype == b.dtype == jnp.bfloat16
    _close(a, b, 2e-3)
    _close(a[1], f(params, x[::-1]), 2e-3)
    # a jitted function called inside autocast is autocast too (as vmap and grad go
    # through jit): eagerly, under make_ir and jit, and under grad
    inner = netcl.jit(_attend)
    out = netcl.autocast(inner, jnp.bfloat16)(params, x)
    assert out.dtype == jnp.bfloat16
    _close(out, f(params, x), 2e-3)
    g = netcl.autocast(lambda p, x, y: jnp.mean((inner(p, x) - y) ** 2), jnp.bfloat16)
    ir = netcl.make_ir(g)(params, x, y)
    assert all(v.aval.dtype == jnp.bfloat16 for e in ir.eqns if e.prim.name == "dot_general"
               for v in e.inputs)
    _close(netcl.jit(g)(params, x, y), half(params, x, y), 2e-3)
    for a, b in zip(tree_leaves(netcl.grad(g)(params, x, y)), tree_leaves(eager)):
        assert a.dtype == np.float32
        _close(a, b, 2e-3)
    # a checkpointed block is autocast inside its checkpoint
    c = netcl.autocast(netcl.checkpoint(_attend), jnp.bfloat16)
    assert c(params, x).dtype == jnp.bfloat16
    _close(c(params, x), f(params, x), 2e-3)


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


def test_bad_dtypes_and_policies_name_the_function():
    f = lambda x: x     # noqa: E731
    for bad, shown in ((jnp.int32, "int32"), (np.int8, "int8"), (jnp.float64, "float64"),
                       ("float64", "'float64'"), ("fp8", "'fp8'"), (None, "None")):
        with pytest.raises(ValueError, match=f"autocast: dtype must be float16 or bfloat16 "
                                             fr"\(or float32: no autocast\), got {shown}$"):
            netcl.autocast(f, bad)
    for bad, err in (("p=f32,c=fp8,o=f32", "get_policy: unknown dtype 'fp8'"),
                     ("compute=int8", "get_policy: unknown dtype 'int8'"),
                     ("p=f32;c=bf16", "get_policy: unknown dtype 'f32;c=bf16'"),
                     ("p=f32,c=bf16,q=f16", "get_policy: cannot read 'q=f16'")):
        with pytest.raises(ValueError, match=err):
            mp.get_policy(bad)
    with pytest.raises(ValueError, match="Policy.compute_dtype: int32 is not a floating"):
        mp.Policy(jnp.float32, jnp.int32, jnp.float32)


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
    assert cast["n"].dtype == tree["n"].dtype and cast["s"] == "name"    # ints untouched
    assert pol.cast_to_param(cast)["w"].dtype == np.float32
    for bad, err in (("p=f32,x=f16", "cannot read 'x=f16'"), ("p=int32", "int32"),
                     ("p=f8", "unknown dtype")):
        with pytest.raises(ValueError, match=err):
            mp.get_policy(bad)
    with pytest.raises(TypeError, match="get_policy: expected a string"):
        mp.get_policy(3)
    assert mp.DynamicLossScale is netcl.optim.DynamicLossScale


@pytest.mark.parametrize("how", ["policy", "jit_autocast"])
def test_float16_step_with_an_overflow_is_skipped_and_halves_the_loss_scale(how):
    params, x, y, loss = _mlp()
    pol = mp.get_policy("p=f32,c=f16,o=f32")
    opt = optim.sgd(0.1, momentum=0.9)
    if how == "policy":         # jmp's way: cast parameters and inputs to the compute dtype
        def half_loss(p, blow_up):
            value = loss(pol.cast_to_compute(p), pol.cast_to_compute(x), y) * blow_up
            return pol.cast_to_output(value)
    else:                       # autocast's way, in a jitted step
        def half_loss(p, blow_up):
            return netcl.autocast(loss, jnp.float16)(p, x, y) * blow_up

    def step(params, opt_state, ls, blow_up):
        grads = ls.unscale(netcl.grad(lambda p: ls.scale(half_loss(p, blow_up)))(params))
        finite = mp.all_finite(grads)
        updates, new_state = opt.update(grads, opt_state, params)
        new = optim.apply_updates(params, updates)
        return (mp.select_tree(finite, new, params), mp.select_tree(finite, new_state, opt_state),
                ls.adjust(finite))
    if how == "jit_autocast":
        step = netcl.jit(step)
    ls, state = mp.DynamicLossScale(2.0 ** 15), opt.init(params)
    # the float32 loss times 1e30 stays finite; its cotangent overflows float16 in the
    # products' backward pass
    kept, kept_state, ls2 = step(params, state, ls, jnp.asarray(1e30, jnp.float32))
    assert float(ls2.loss_scale) == 2.0 ** 14 and int(ls2.counter) == 0
    for a, b in zip(tree_leaves((kept, kept_state)), tree_leaves((params, state))):
        np.testing.assert_array_equal(a, b)
    moved, _, ls3 = step(params, state, ls2, jnp.asarray(1.0, jnp.float32))
    assert float(ls3.loss_scale) == 2.0 ** 14 and int(ls3.counter) == 1
    assert all(a.dtype == np.float32 for a in tree_leaves(moved))
    assert any(not np.array_equal(a, b) for a, b in zip(tree_leaves(moved), tree_leaves(params)))
