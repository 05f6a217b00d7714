"""jit's matmul epilogue fusion: a dot_general whose only reader is an elementwise group runs
the group in the GEMM kernel's store. Same results as eager, fewer kernels, safe fallbacks."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.primitives import dot_epilogue
from netcl.transforms.epilogue_fusion import EpiloguePrimitive
from netcl.tree_util import tree_leaves
from util import assert_close, float32_params, mlp_adam_step

ON_OPENCL = not netcl.default_device().is_numpy


def epilogue_eqns(low):
    return [e for e in low.ir.eqns if isinstance(e.prim, EpiloguePrimitive)]


def dense_relu(x, w, b):
    return jnp.maximum(x @ w + b, 0.0)


def test_dense_bias_relu_is_one_gemm_kernel():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((37, 50)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((50, 29)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal(29).astype(np.float32))
    low = netcl.jit(dense_relu).lower(x, w, b)
    assert len(low.kernels) == 1, low.as_text()
    assert len(epilogue_eqns(low)) == 1 and "dot_general+" in low.as_text()
    if ON_OPENCL:
        src = low.kernels[0].source
        assert "netcl_gemm_store" in src
    want = np.maximum(np.asarray(x) @ np.asarray(w) + np.asarray(b), 0)
    got = netcl.jit(dense_relu)(x, w, b)
    assert_close(got, want, rtol=1e-5, atol=1e-5)
    # the GEMM's tiles and the epilogue's uncontracted arithmetic are eager's
    assert_close(got, np.asarray(dense_relu(x, w, b)), rtol=1e-6, atol=1e-7)


def test_several_outputs_come_from_one_kernel():
    def f(x, w, b):
        z = x @ w + b
        return z, jnp.tanh(z), (z > 0).astype(jnp.float32)
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.standard_normal((16, 8)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((8, 12)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal(12).astype(np.float32))
    low = netcl.jit(f).lower(x, w, b)
    assert len(low.kernels) == 1, low.as_text()
    for got, want in zip(netcl.jit(f)(x, w, b), f(x, w, b)):
        assert_close(got, np.asarray(want), rtol=1e-6, atol=1e-6)


def test_product_read_elsewhere_is_not_fused():
    def f(x, w):
        y = x @ w
        return jnp.exp(y), jnp.sum(y)
    x = jnp.ones((4, 3))
    w = jnp.ones((3, 5))
    low = netcl.jit(f).lower(x, w)
    assert not epilogue_eqns(low), low.as_text()
    got = netcl.jit(f)(x, w)
    assert_close(got[0], np.full((4, 5), np.exp(3.0), np.float32), rtol=1e-6)
    assert float(got[1]) == 60.0


def test_batched_and_integer_products_are_not_fused():
    xb = jnp.ones((2, 3, 4))
    f = lambda a, c: jnp.exp(jnp.matmul(a, c))  # noqa: E731
    assert not epilogue_eqns(netcl.jit(f).lower(xb, jnp.ones((2, 4, 5))))
    xi = jnp.ones((3, 4), dtype=jnp.int32)
    g = lambda a, c: (a @ c) * 2  # noqa: E731
    assert not epilogue_eqns(netcl.jit(g).lower(xi, jnp.ones((4, 2), dtype=jnp.int32)))
    assert np.asarray(netcl.jit(g)(xi, jnp.ones((4, 2), dtype=jnp.int32))).tolist() == \
        [[8, 8]] * 3


@pytest.fixture
def fresh_jit():
    """jit(f) reuses f's compilation across calls of jit: tests that change how kernels are
    made start and end with empty caches."""
    netcl.clear_caches()
    yield
    netcl.clear_caches()


def test_two_kernel_fallback_matches(monkeypatch, fresh_jit):
    """Where the GEMM cannot take the epilogue, the primitive runs product and group apart."""
    monkeypatch.setattr(dot_epilogue, "make_epilogue_launcher", lambda *a, **k: None)
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((9, 7)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((7, 6)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal(6).astype(np.float32))
    got = netcl.jit(dense_relu)(x, w, b)
    assert_close(got, np.asarray(dense_relu(x, w, b)), rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(not ON_OPENCL, reason="buffers exist on OpenCL devices only")
def test_two_kernel_fallback_writes_the_group_in_place(monkeypatch, taken_buffers, fresh_jit):
    """Where the GEMM cannot take the epilogue, jit's IR keeps product and group apart, and
    the group takes the product's buffer (it is the product's only reader) for its output;
    every call still matches eager execution."""
    monkeypatch.setattr(dot_epilogue, "make_epilogue_launcher", lambda *a, **k: None)
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.standard_normal((9, 7)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((7, 6)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal(6).astype(np.float32))
    f = netcl.jit(dense_relu)
    want = np.asarray(dense_relu(x, w, b))
    for call in range(3):
        got = f(x, w, b)
        assert_close(got, want, rtol=1e-6, atol=1e-7)
        assert got._buf is taken_buffers[-1]
    assert len(taken_buffers) == 3
    low = f.lower(x, w, b)
    assert not epilogue_eqns(low) and "writes over" in low.as_text(), low.as_text()


EXTRAS = ["row", "col", "dense", "dense_t", "scalar", "literal"]


@settings(max_examples=30, deadline=None)
@given(m=st.sampled_from([1, 5, 64, 97]), n=st.sampled_from([1, 8, 33, 130]),
       k=st.sampled_from([1, 7, 70]), ta=st.booleans(), tb=st.booleans(),
       extras=st.lists(st.sampled_from(EXTRAS), min_size=1, max_size=3),
       act=st.sampled_from(["relu", "tanh", "sigmoid", "square"]), seed=st.integers(0, 99))
def test_random_epilogues_match_eager_and_numpy(m, n, k, ta, tb, extras, act, seed):
    rng = np.random.default_rng(seed)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    a_h, b_h = r(m, k), r(k, n)
    a = jnp.transpose(jnp.asarray(a_h.T.copy())) if ta else jnp.asarray(a_h)
    b = jnp.transpose(jnp.asarray(b_h.T.copy())) if tb else jnp.asarray(b_h)
    host = {"row": r(n), "col": r(m, 1), "dense": r(m, n), "dense_t": r(n, m), "scalar": r()}
    args = {name: jnp.asarray(v) for name, v in host.items()}
    acts = {"relu": netcl.nn.relu, "tanh": jnp.tanh, "sigmoid": netcl.nn.sigmoid,
            "square": lambda v: v * v}

    def f(a, b, row, col, dense, dense_t, scalar):
        vals = dict(row=row, col=col, dense=dense, dense_t=dense_t.T, scalar=scalar, literal=0.5)
        y = a @ b
        for e in extras:
            y = y * 0.75 + vals[e]
        return acts[act](y)

    jf = netcl.jit(f)
    ordered = [args[n_] for n_ in ("row", "col", "dense", "dense_t", "scalar")]
    low = jf.lower(a, b, *ordered)
    # the Target caps the dense extras an epilogue reads (CPUs: a streaming kernel over more
    # is faster); a broadcast extra is dense where the product has one row or one column
    limit = netcl.default_device().target.max_dense_epilogue_extras
    dense = {"dense": True, "dense_t": m == 1 or n == 1, "col": n == 1, "row": m == 1}
    if limit < 0 or sum(dense.get(e, False) for e in set(extras)) <= limit:
        assert len(epilogue_eqns(low)) == 1, low.as_text()
        assert len(low.kernels) == 1, low.as_text()
    got = jf(a, b, *ordered)
    assert_close(got, np.asarray(f(a, b, *ordered)), rtol=1e-5, atol=1e-6)
    hv = dict(host, dense_t=host["dense_t"].T, literal=np.float32(0.5))
    y = a_h.astype(np.float64) @ b_h
    for e in extras:
        y = y * 0.75 + hv[e]
    ref = {"relu": lambda v: np.maximum(v, 0), "tanh": np.tanh,
           "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "square": lambda v: v * v}[act](y)
    assert_close(got, ref.astype(np.float32), rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(ON_OPENCL and not netcl.default_device().capabilities.fp64,
                    reason="no float64 on this device")
def test_float64_epilogue():
    rng = np.random.default_rng(4)
    x = jnp.asarray(rng.standard_normal((20, 30)))
    w = jnp.asarray(rng.standard_normal((30, 10)))
    b = jnp.asarray(rng.standard_normal(10))
    got = netcl.jit(dense_relu)(x, w, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), np.maximum(np.asarray(x) @ np.asarray(w) +
                                                           np.asarray(b), 0), rtol=1e-12)


def test_mlp_train_step_uses_epilogues_and_matches_eager():
    step, params, st_ = mlp_adam_step(8, 12, (32, 16), 4)
    low = netcl.jit(step).lower(params, st_)
    # forward bias+relu (2), backward relu masks (2), at least
    assert len(epilogue_eqns(low)) >= 4, low.as_text()
    got, want = netcl.jit(step)(params, st_), step(params, st_)
    from netcl.tree_util import tree_leaves
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        assert_close(a, np.asarray(b), rtol=1e-5, atol=1e-6)


NHWC = ("NHWC", "HWIO", "NHWC")


def test_conv_bias_relu_runs_in_the_gemm_epilogue():
    from netcl import lax
    rng = np.random.default_rng(6)
    x = jnp.asarray(rng.standard_normal((2, 9, 9, 16)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((3, 3, 16, 32)).astype(np.float32) * 0.2)
    b = jnp.asarray(rng.standard_normal(32).astype(np.float32))

    def f(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)
        return netcl.nn.relu(y + b)
    low = netcl.jit(f).lower(x, w, b)
    eqns = epilogue_eqns(low)
    assert len(eqns) == 1 and eqns[0].prim.product.name == "conv_general_dilated", low.as_text()
    if ON_OPENCL:
        assert "netcl_gemm_store" in low.kernels[-1].source
    assert_close(netcl.jit(f)(x, w, b), np.asarray(f(x, w, b)), rtol=1e-5, atol=1e-5)


def test_cnn_train_step_uses_conv_epilogues_and_matches_eager():
    from netcl import optim, random, stax
    init, apply = stax.serial(stax.Conv(8, (3, 3), padding="SAME"), stax.Relu,
                              stax.Conv(16, (3, 3), padding="SAME"), stax.Relu,
                              stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(4),
                              stax.LogSoftmax)
    params = float32_params(init(random.PRNGKey(1), (4, 10, 10, 3))[1])
    opt = optim.sgd(0.05, momentum=0.9)
    rng = np.random.default_rng(8)
    x = jnp.asarray(rng.standard_normal((4, 10, 10, 3)).astype(np.float32))
    y = jnp.asarray(np.eye(4, dtype=np.float32)[rng.integers(0, 4, 4)])

    def step(params, st):
        loss, g = netcl.value_and_grad(
            lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
        upd, st = opt.update(g, st, params)
        return optim.apply_updates(params, upd), st, loss

    st_ = opt.init(params)
    low = netcl.jit(step).lower(params, st_)
    convs = [e for e in epilogue_eqns(low) if e.prim.product.name == "conv_general_dilated"]
    assert len(convs) >= 2, low.as_text()       # forward bias+relu of both convolutions
    got, want = netcl.jit(step)(params, st_), step(params, st_)
    from netcl.tree_util import tree_leaves
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        assert_close(a, np.asarray(b), rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not ON_OPENCL, reason="OpenCL kernels only")
@pytest.mark.parametrize("vector", [False, True])
def test_tiled_gpu_kernel_epilogue(monkeypatch, vector):
    """The GPU (tiled) GEMM's epilogue, scalar and on 4-column chunks, forced on this device
    (the tiled kernels compile on PoCL too); sizes with partial tiles."""
    from netcl.primitives import gemm_tiers
    tiled = gemm_tiers.GPU_TIERS["float"][-1]            # 32x32, rvec 4
    monkeypatch.setattr(gemm_tiers, "choose_config", lambda *a, **k: tiled)
    rng = np.random.default_rng(9)
    x = jnp.asarray(rng.standard_normal((45, 20)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((20, 70)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal(70).astype(np.float32))
    # 4 columns per epilogue call: the tier's rvec (vector stores); 3: scalar stores
    with netcl.test_util.override_target(netcl.default_device(),
                                         epilogue_vector_width=4 if vector else 3):
        low = netcl.jit(dense_relu).lower(x, w, b)
        src = low.kernels[0].source
        assert "reqd_work_group_size(8, 8, 1)" in src
        assert ("netcl_gemm_store_v(C, row * ldc + col" in src) == vector
        assert_close(netcl.jit(dense_relu)(x, w, b),
                     np.maximum(np.asarray(x) @ np.asarray(w) + np.asarray(b), 0), rtol=1e-5,
                     atol=1e-5)


@settings(max_examples=12, deadline=None)
@given(hw=st.sampled_from([(5, 7), (8, 8)]), cin=st.sampled_from([3, 8]),
       cout=st.sampled_from([4, 16]), stride=st.sampled_from([1, 2]),
       padding=st.sampled_from(["SAME", "VALID"]),
       extras=st.lists(st.sampled_from(["bias", "dense", "scalar"]), min_size=1, max_size=2),
       seed=st.integers(0, 99))
def test_random_conv_epilogues_match_eager(hw, cin, cout, stride, padding, extras, seed):
    from netcl import lax
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((3, *hw, cin)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((3, 3, cin, cout)).astype(np.float32) * 0.3)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (stride, stride), padding,  # noqa: E731
                                                 dimension_numbers=NHWC)
    out_shape = conv(x, w).shape
    vals = {"bias": jnp.asarray(rng.standard_normal(cout).astype(np.float32)),
            "dense": jnp.asarray(rng.standard_normal(out_shape).astype(np.float32)),
            "scalar": jnp.asarray(np.float32(0.5))}

    def f(x, w, bias, dense, scalar):
        y = conv(x, w)
        for e in extras:
            y = y * 1.5 + dict(bias=bias, dense=dense, scalar=scalar)[e]
        return jnp.tanh(y)
    args = (x, w, vals["bias"], vals["dense"], vals["scalar"])
    from netcl.primitives import conv as conv_pkg
    conv_pkg._impl_override = "gemm"        # the im2col+GEMM path even for small sizes
    try:
        want = np.asarray(f(*args))
        low = netcl.jit(f).lower(*args)
        assert len(epilogue_eqns(low)) == 1, low.as_text()
        if ON_OPENCL:
            assert "netcl_gemm_store" in low.kernels[-1].source
        assert_close(netcl.jit(f)(*args), want, rtol=1e-5, atol=1e-5)
    finally:
        conv_pkg._impl_override = None


# ---- the max-pooling gradient's epilogue (conv/scatter_epilogue.py) ------------------------

def _relu_pool(hw, win):
    from netcl import lax

    def f(x, t):   # relu, max-pooling, then a loss whose gradient flows back through both
        y = lax.reduce_window(jnp.maximum(x, 0.0), -np.inf, lax.max, (1, win, win, 1),
                              (1, win, win, 1), "VALID")
        return jnp.sum(y * t)
    return netcl.grad(f)


@pytest.mark.parametrize("hw,win,fused", [((8, 6), 2, True), ((9, 9), 3, True),
                                          ((7, 6), 2, False)])   # a remainder: no epilogue
def test_pooling_gradient_takes_the_relu_mask(hw, win, fused):
    rng = np.random.default_rng(4)
    x = rng.integers(-2, 3, (3, *hw, 5)).astype(np.float32)   # ties and zeros: masks matter
    t = rng.standard_normal((3, hw[0] // win, hw[1] // win, 5)).astype(np.float32)
    g = _relu_pool(hw, win)
    low = netcl.jit(g).lower(jnp.asarray(x), jnp.asarray(t))
    scatter = [e for e in epilogue_eqns(low) if e.prim.product.name == "select_and_scatter_add"]
    # (the IR fuses only where the kernel takes the epilogue; the NumPy fallback always)
    assert len(scatter) == int(fused or not ON_OPENCL), low.as_text()
    names = [k.name for k in low.kernels]
    if ON_OPENCL:
        assert ("window_select_scatter_epilogue" in low.kernels[-1].source) == fused, names
    want = np.asarray(g(jnp.asarray(x), jnp.asarray(t)))
    assert_close(netcl.jit(g)(jnp.asarray(x), jnp.asarray(t)), want, rtol=0, atol=0)
    # by hand: the window's first maximum gets t where the relu passed it (x > 0)
    ref = np.zeros_like(x)
    r = np.maximum(x, 0)
    for n, i, j, c in np.ndindex(t.shape):
        win_vals = r[n, i * win:(i + 1) * win, j * win:(j + 1) * win, c].reshape(-1)
        k = int(np.argmax(win_vals))
        p, q = i * win + k // win, j * win + k % win
        ref[n, p, q, c] = t[n, i, j, c] * (1.0 if x[n, p, q, c] > 0 else
                                           0.5 if x[n, p, q, c] == 0 else 0.0)
    assert_close(want, ref, rtol=1e-6, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 3), h=st.integers(1, 4), w=st.integers(1, 4), c=st.integers(1, 9),
       dtype=st.sampled_from([np.float32, np.float64, jnp.bfloat16, jnp.float16]),
       seed=st.integers(0, 99))
def test_random_pooling_epilogues_match_eager(n, h, w, c, dtype, seed):
    from netcl import lax
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.integers(-3, 3, (n, 2 * h, 2 * w, c)).astype(dtype))
    s = jnp.asarray(rng.standard_normal((n, h, w, c)).astype(dtype))
    e = jnp.asarray(rng.standard_normal((n, 2 * h, 2 * w, c)).astype(dtype))

    def f(s, x, e):
        g = lax.select_and_scatter_add(s, x, "ge", (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.tanh(g * e + 0.5), g - x * 2.0
    low = netcl.jit(f).lower(s, x, e)
    assert len(low.kernels) == 1, low.as_text()
    for got, want in zip(netcl.jit(f)(s, x, e), f(s, x, e)):
        assert_close(got, np.asarray(want), rtol=1e-6, atol=1e-6)


@settings(max_examples=12, deadline=None)
@given(lead=st.sampled_from([(1,), (5,), (130,), (3, 7)]), cols=st.integers(1, 40),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 99))
def test_column_sum_takes_its_update(lead, cols, dtype, seed):
    """A bias gradient (sum over the leading axes) and an optimizer update of it: one kernel,
    eager's results (on CPUs, 8 columns per work-item and the last C % 8 one by one)."""
    rng = np.random.default_rng(seed)
    g = jnp.asarray(rng.standard_normal((*lead, cols)).astype(dtype))
    m, b = (jnp.asarray(rng.standard_normal(cols).astype(dtype)) for _ in range(2))
    lr = jnp.asarray(np.asarray(0.01, dtype))

    def f(g, m, b, lr):
        m2 = 0.9 * m + 0.1 * jnp.sum(g, axis=tuple(range(len(lead))))
        return b - lr * m2, m2
    low = netcl.jit(f).lower(g, m, b, lr)
    assert len(low.kernels) == 1, low.as_text()
    if np.prod(lead) > 1:               # a sum over one row is a reshape, fused anyway
        assert low.kernels[0].name == "column_sum_epilogue", low.as_text()
    if ON_OPENCL and np.prod(lead) > 1:
        assert "column_sum_epilogue" in low.kernels[0].source
    gn = np.asarray(g).reshape(-1, cols).astype(np.float64)
    m2 = 0.9 * np.asarray(m) + 0.1 * gn.sum(0)
    for got, eager, want in zip(netcl.jit(f)(g, m, b, lr), f(g, m, b, lr),
                                (np.asarray(b) - 0.01 * m2, m2)):
        assert got.dtype == dtype
        assert_close(got, np.asarray(eager), rtol=1e-5, atol=1e-5)
        assert_close(got, want, rtol=1e-4, atol=1e-4)



@settings(max_examples=12, deadline=None)
@given(rows=st.sampled_from([2, 9, 130]), cols=st.sampled_from([1, 8, 40, 70]),
       n=st.integers(2, 3), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 99))
def test_column_sums_of_several_arrays_share_one_kernel(rows, cols, n, dtype, seed):
    """An update group reading the column sums of several arrays (two layers' bias gradients
    updated in one group) sums them all in its one kernel, with eager's results."""
    rng = np.random.default_rng(seed)
    gs = [jnp.asarray(rng.standard_normal((rows, cols)).astype(dtype)) for _ in range(n)]
    b = jnp.asarray(rng.standard_normal(cols).astype(dtype))

    def f(b, *gs):
        sums = [jnp.sum(g, axis=0) for g in gs]
        return [b - 0.1 * s * (k + 1) for k, s in enumerate(sums)] + \
            [0.1 * (sums[0] - sums[-1])]
    low = netcl.jit(f).lower(b, *gs)
    assert [k.name for k in low.kernels] == ["column_sum_epilogue"], low.as_text()
    sums = [np.asarray(g).astype(np.float64).sum(0) for g in gs]
    want = [np.asarray(b) - 0.1 * s * (k + 1) for k, s in enumerate(sums)] + \
        [0.1 * (sums[0] - sums[-1])]
    for _ in range(2):
        got = netcl.jit(f)(b, *gs)
        for g_, e_, w_ in zip(got, f(b, *gs), want):
            assert g_.dtype == dtype
            assert_close(g_, np.asarray(e_), rtol=1e-5, atol=1e-5)
            assert_close(g_, w_, rtol=1e-4, atol=1e-4)


@pytest.fixture
def gpu_column_sums():
    """The GPUs' column-sum epilogue (a work-item per column) on this device."""
    if not ON_OPENCL:
        pytest.skip("no OpenCL device")
    with netcl.test_util.override_target(netcl.default_device(), column_sum_width=1):
        yield


def test_column_sum_epilogue_with_a_work_item_per_column(gpu_column_sums):
    """The GPUs' form of the kernel (groups of 32 columns by row slices), run here by asking
    for one column per work-item on a CPU: one and two sums, eager's results (45 columns:
    a partial second group; 70 rows: slices of unequal length)."""
    rng = np.random.default_rng(6)
    g, h = (jnp.asarray(rng.standard_normal((70, 45)).astype(np.float32)) for _ in range(2))
    m = jnp.asarray(rng.standard_normal(45).astype(np.float32))
    for f in (lambda g, h, m: jnp.sum(g, axis=0) * 2.0 + m,
              lambda g, h, m: (jnp.sum(g, axis=0) - m, jnp.sum(h, axis=0) * m)):
        low = netcl.jit(f).lower(g, h, m)
        assert [k.name for k in low.kernels] == ["column_sum_epilogue"], low.as_text()
        got_all, want_all = tree_leaves(netcl.jit(f)(g, h, m)), tree_leaves(f(g, h, m))
        for got, want in zip(got_all, want_all):
            assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_16_bit_column_sum_takes_its_float32_update(gpu_column_sums, dtype):
    """A 16-bit layer's bias gradient (under autocast) and the float32 update it feeds: one
    kernel on GPUs, the sum rounded to its dtype before the update as eager's reduction
    stores it (the float32 sums may differ in order: at most one 16-bit step apart)."""
    rng = np.random.default_rng(7)
    g = jnp.asarray(rng.standard_normal((70, 45)).astype(np.float32)).astype(dtype)
    b = jnp.asarray(rng.standard_normal(45).astype(np.float32))

    def f(g, b):
        return b - 0.5 * jnp.sum(g, axis=0).astype(jnp.float32)
    low = netcl.jit(f).lower(g, b)
    assert [k.name for k in low.kernels] == ["column_sum_epilogue"], low.as_text()
    got, want = np.asarray(netcl.jit(f)(g, b)), np.asarray(f(g, b))
    assert got.dtype == np.float32
    step = 0.5 * np.abs(np.asarray(jnp.sum(g, axis=0), np.float32)) * jnp.finfo(dtype).eps
    assert np.all(np.abs(got - want) <= step + 1e-6), (got - want, step)
    exact = np.asarray(g, np.float64).sum(0)
    np.testing.assert_allclose(got, np.asarray(b) - 0.5 * exact,
                               atol=float(np.abs(exact).max()) * float(jnp.finfo(dtype).eps))


def test_column_sums_that_cannot_take_an_update(monkeypatch):
    """Over the last axis (a row reduction), too many rows, a strided operand: the sum and the
    update run apart, with the same results (twice: later calls write the update in place)."""
    rng = np.random.default_rng(3)
    g = jnp.asarray(rng.standard_normal((12, 6)).astype(np.float32))
    m = jnp.asarray(rng.standard_normal(6).astype(np.float32))
    from netcl.primitives.reductions import sum_epilogue
    monkeypatch.setattr(sum_epilogue, "MAX_ROWS", 8)
    cases = [(lambda g, m: jnp.sum(g, axis=0) * 2.0 + m, g, m),                 # 12 rows > 8
             (lambda g, m: jnp.sum(g.T, axis=1) + m[:6], g, m),                  # row sums
             (lambda g, m: jnp.sum(g[::2], axis=0) - m, g, m),                   # strided
             (lambda g, m, h: jnp.sum(g, axis=0) * 2.0 + jnp.sum(h, axis=0) - m,
              g, m, g * 3.0)]                                    # two sums, 12 rows > 8
    for f, *args in cases:
        jf = netcl.jit(f)
        assert not any("column_sum_epilogue" in k.source for k in jf.lower(*args).kernels)
        for _ in range(2):
            assert_close(jf(*args), np.asarray(f(*args)), rtol=1e-6, atol=1e-6)
