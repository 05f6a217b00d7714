"""jit: same results as eager, fusion (kernel counts), caching, static args, donation, errors."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from util import assert_close, mlp_adam_step

UNARY = [jnp.sin, jnp.exp, jnp.tanh, netcl.nn.sigmoid, jnp.abs, lambda v: v * v,
         lambda v: v * 0.5 + 1.0, netcl.nn.relu, lambda v: jnp.maximum(v, -0.25)]
BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum,
          lambda a, b: jnp.where(a > b, a, b * 2.0)]


@st.composite
def programs(draw):
    """A random straight-line program over three inputs of compatible shapes."""
    ops = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            ops.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, 9))))
        else:
            ops.append(("b", draw(st.integers(0, len(BINARY) - 1)), draw(st.integers(0, 9)),
                        draw(st.integers(0, 9))))
    return ops


def run_program(ops, x, y, z):
    vals = [x, y, z]
    for op in ops:
        if op[0] == "u":
            vals.append(UNARY[op[1]](vals[op[2] % len(vals)]))
        else:
            vals.append(BINARY[op[1]](vals[op[2] % len(vals)], vals[op[3] % len(vals)]))
    return vals[-1], vals[-2]


@settings(max_examples=25, deadline=None)
@given(ops=programs(), seed=st.integers(0, 1000), bshape=st.sampled_from([(3, 4), (4,), (1, 4),
                                                                          (3, 1), ()]))
def test_random_elementwise_programs_match_eager(ops, seed, bshape):
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal(bshape).astype(np.float32))
    z = jnp.transpose(jnp.asarray(rng.standard_normal((4, 3)).astype(np.float32)))
    eager = run_program(ops, x, y, z)
    jitted = netcl.jit(run_program, static_argnums=0)(tuple(ops), x, y, z)
    for a, b in zip(jitted, eager):
        assert_close(a, np.asarray(b), rtol=1e-5, atol=1e-6)


def w1(x, a, b):
    return jnp.tanh(x * a + b) * netcl.nn.sigmoid(x) + 0.5 * x


def test_w1_is_one_kernel():
    x = jnp.ones(1000)
    low = netcl.jit(w1).lower(x, 1.5, 0.25)
    assert len(low.kernels) == 1, low.as_text()
    src = low.kernels[0].source
    if not netcl.default_device().is_numpy:  # the fallback runs references, not OpenCL C
        assert "tanh" in src and "exp" in src and "__kernel" in src
    assert "fused" in low.as_text()
    assert_close(low.compile()(x, 1.5, 0.25), np.asarray(w1(x, 1.5, 0.25)))
    with pytest.raises(TypeError, match="Argument types differ from the types for which "
                                        "this computation was compiled"):
        low.compile()(jnp.ones(10), 1.5, 0.25)


def _exact_math(x):
    return (jnp.sqrt(x), jnp.abs(x), jnp.floor(x), jnp.ceil(x), netcl.lax.round(x),
            jnp.rint(x), netcl.lax.rsqrt(x), jnp.maximum(x, 0.5), jnp.minimum(x, 0.5))


def _exact_math_scalar(x):      # a bool output and floor_div: a kernel of scalar code
    return jnp.isfinite(x), jnp.floor_divide(x, 0.75)


def test_inline_math_is_exact_and_keeps_fused_kernels_vectorised():
    """sqrt, abs, floor, ... are spelled netcl_<name> (kernels.INLINE_MATH: Clang's inline
    builtins on CPU targets): the fused kernel keeps its float8 path, and every value, the
    tail's and the special ones included, is NumPy's correctly rounded result."""
    vals = np.array([0.0, -0.0, 0.25, 0.5, 1.5, 2.5, -2.5, -0.5, 3.7, -3.7, 1e30, -1e-30,
                     np.inf, -np.inf, np.nan, 7.0], np.float32)
    x = np.concatenate([vals, np.random.default_rng(0).uniform(-9, 9, 83).astype(np.float32)])
    low = netcl.jit(_exact_math).lower(jnp.asarray(x))
    assert len(low.kernels) == 1, low.as_text()
    dev = netcl.default_device()
    if not dev.is_numpy:
        src = low.kernels[0].source
        assert "netcl_sqrt(" in src and "isnan" not in src
        if dev.kind == "cpu":
            assert "float8" in src, src      # 99 elements: 12 vectors and a scalar tail
    with np.errstate(invalid="ignore", divide="ignore"):
        want = (np.sqrt(x), np.abs(x), np.floor(x), np.ceil(x),
                np.sign(x) * np.floor(np.abs(x) + np.float32(0.5)), np.rint(x),
                np.float32(1) / np.sqrt(x), np.where(np.isnan(x) | (x > 0.5), x, 0.5),
                np.where(np.isnan(x) | (x < 0.5), x, 0.5),
                np.isfinite(x), np.floor(x / np.float32(0.75)))
    got = netcl.jit(_exact_math)(jnp.asarray(x)) + netcl.jit(_exact_math_scalar)(jnp.asarray(x))
    # OpenCL lets sqrt and division be off by ulps (NVIDIA's are); CPU builds round them
    # correctly, as NumPy does. Everything else is exact on every conformant device.
    rounded = dev.is_numpy or dev.kind == "cpu"
    for k, (g, ref) in enumerate(zip(got, want)):
        g = np.asarray(g)
        if k in (0, 6) and not rounded:
            np.testing.assert_allclose(g, ref, rtol=4e-7)
        elif k != 10 or rounded:        # (floor of an inexact quotient may step down)
            np.testing.assert_array_equal(g, ref.astype(g.dtype))


def test_cache_and_retrace_logging(caplog, monkeypatch):
    traces = []

    @netcl.jit
    def f(x):
        traces.append(1)
        return x * 2.0
    monkeypatch.setenv("NETCL_LOG_COMPILES", "1")
    f(jnp.ones(3, jnp.float32))
    f(jnp.ones(3, jnp.float32) + 1.0)
    assert len(traces) == 1
    f(jnp.ones(4, jnp.float32))
    assert len(traces) == 2
    err = caplog.text       # (a WARNING on the "netcl" logger, as JAX logs compilations)
    assert "first call" in err and "argument leaf 0: float32[4] (was float32[3])" in err
    f(jnp.ones(4, jnp.int32))
    assert len(traces) == 3


def test_cache_keeps_the_most_recent_signatures_and_clears(monkeypatch):
    traces = []

    def f(x, n):
        traces.append(n)
        return x * 2.0
    monkeypatch.setenv("NETCL_JIT_CACHE_SIZE", "3")
    g = netcl.jit(f, static_argnums=1)
    x = jnp.ones(3)
    for n in range(5):                       # 0..4 compiled; 0 and 1 evicted
        np.testing.assert_array_equal(np.asarray(g(x, n)), 2.0)
    assert len(g.cache) == 3 and traces == [0, 1, 2, 3, 4]
    g(x, 4); g(x, 2)                          # hits, 2 is now the most recent
    assert traces == [0, 1, 2, 3, 4]
    g(x, 0)                                   # evicted before: traced again; evicts 3
    g(x, 2)
    assert traces == [0, 1, 2, 3, 4, 0]
    g(x, 3)
    assert traces[-1] == 3 and len(g.cache) == 3
    h = netcl.jit(lambda x: x + 1.0)
    h(x)
    netcl.clear_caches()                      # every jitted function forgets its code
    assert len(g.cache) == 0 and len(h.cache) == 0
    np.testing.assert_array_equal(np.asarray(g(x, 2)), 2.0)
    assert traces[-1] == 2
    np.testing.assert_array_equal(np.asarray(h(x)), 2.0)
    monkeypatch.setenv("NETCL_JIT_CACHE_SIZE", "lots")
    with pytest.raises(ValueError, match="NETCL_JIT_CACHE_SIZE='lots'"):
        netcl.jit(f)


def test_static_argnums_and_concretization_error():
    def f(x, n):
        for _ in range(n):
            x = x + 1.0
        return x
    g = netcl.jit(f, static_argnums=1)
    assert float(g(jnp.zeros(()), 3)) == 3.0
    assert float(g(jnp.zeros(()), 5)) == 5.0
    with pytest.raises(netcl.ConcretizationError, match="static_argnums"):
        netcl.jit(lambda x: x if x > 0 else -x)(jnp.ones(()))
    with pytest.raises(ValueError, match="not hashable"):
        netcl.jit(f, static_argnums=1)(jnp.zeros(()), [1, 2])
    with pytest.raises(ValueError, match="static_argnums"):
        netcl.jit(f, static_argnums=5)(jnp.zeros(()), 1)
    with pytest.raises(TypeError, match="static"):
        netcl.jit(lambda x, s: x)(jnp.ones(2), "text")
    h = netcl.jit(lambda x, mode="a": x * (2.0 if mode == "a" else 3.0), static_argnames="mode")
    assert float(h(jnp.ones(()), mode="b")) == 3.0


def test_constants_pytrees_and_compositions():
    w = jnp.asarray(np.arange(3.0, dtype=np.float32))

    def loss(p, x):
        return jnp.sum(jnp.tanh(p["a"] * x + w) ** 2)
    p = {"a": jnp.ones(3)}
    x = jnp.asarray(np.array([0.1, 0.2, 0.3], np.float32))
    g_eager = netcl.grad(loss)(p, x)
    g_jit_of_grad = netcl.jit(netcl.grad(loss))(p, x)
    g_grad_of_jit = netcl.grad(netcl.jit(loss))(p, x)
    assert_close(g_jit_of_grad["a"], np.asarray(g_eager["a"]), rtol=1e-5)
    assert_close(g_grad_of_jit["a"], np.asarray(g_eager["a"]), rtol=1e-5)
    xs = jnp.ones((5, 3))
    v1 = netcl.jit(netcl.vmap(lambda x: loss(p, x)))(xs)
    v2 = netcl.vmap(netcl.jit(lambda x: loss(p, x)))(xs)
    assert_close(v1, np.asarray(v2), rtol=1e-5)
    inner = netcl.jit(lambda v: v * 3.0)
    outer = netcl.jit(lambda v: inner(v) + 1.0)
    assert float(outer(jnp.ones(()))) == 4.0


def test_donation():
    f = netcl.jit(lambda x, y: x * 2.0 + y, donate_argnums=0)
    x = jnp.ones(4)
    out = f(x, jnp.ones(4))
    assert np.asarray(out).tolist() == [3.0] * 4
    assert x.deleted
    with pytest.raises(RuntimeError, match="Array has been deleted"):   # (JAX's error)
        np.asarray(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(x, jnp.ones(4))
    y = jnp.ones(4)
    with pytest.raises(ValueError, match="donated array is also passed"):
        f(y, y)
    with pytest.raises(ValueError, match="donated array is also passed"):
        f(y, y=y)                          # as a keyword argument too
    assert not y.deleted
    with pytest.raises(ValueError, match="both static and donated"):
        netcl.jit(lambda a: a, static_argnums=0, donate_argnums=0)


def test_donated_argument_returned_as_it_came_stays_valid():
    """A donated array the function returns untouched comes back as a live array (the
    caller's handle is deleted, the buffer lives on in the output), also in a view."""
    f = netcl.jit(lambda a, b: (a, a + b, a.reshape(2, 2), a), donate_argnums=0)
    x = jnp.asarray(np.arange(4, dtype=np.float32))
    same, total, view, twice = f(x, jnp.ones(4))
    assert x.deleted and not same.deleted and not view.deleted and not twice.deleted
    np.testing.assert_array_equal(np.asarray(twice), np.arange(4))
    np.testing.assert_array_equal(np.asarray(same), np.arange(4))
    np.testing.assert_array_equal(np.asarray(total), np.arange(4) + 1)
    np.testing.assert_array_equal(np.asarray(view), np.arange(4).reshape(2, 2))
    again, _, _, _ = f(same, jnp.ones(4))  # the returned array can be donated in turn
    np.testing.assert_array_equal(np.asarray(again), np.arange(4))


def test_tracer_leak_out_of_jit():
    leaked = []

    @netcl.jit
    def f(x):
        leaked.append(x)
        return x + 1.0
    f(jnp.ones(2))
    with pytest.raises(netcl.LeakedTracerError, match="leaked"):
        leaked[0] * 2.0


def test_make_ir_of_jitted_shows_fusion_free_ir():
    ir = netcl.make_ir(netcl.jit(lambda x: jnp.sin(x) + 1.0))(jnp.ones(2))
    assert "sin" in str(ir)


def test_control_flow_eager_jit_and_grad():
    from netcl import lax
    body = lambda i, v: v * 1.01 + 0.5  # noqa: E731
    eager = lax.fori_loop(0, 100, body, jnp.ones(3))
    jitted = netcl.jit(lambda x: lax.fori_loop(0, 100, body, x))(jnp.ones(3))
    assert_close(jitted, np.asarray(eager), rtol=1e-6)
    assert "while" in str(netcl.make_ir(lambda x: lax.fori_loop(0, 100, body, x))(jnp.ones(3)))
    # while_loop with a data-dependent trip count, staged
    f = netcl.jit(lambda x: lax.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, x))
    assert float(f(jnp.array(3.0))) == 192.0
    # cond: eager picks one branch; traced computes both and selects
    assert float(lax.cond(jnp.array(True), jnp.sin, jnp.cos, jnp.array(0.0))) == 0.0
    g = netcl.jit(lambda p, x: lax.cond(p, lambda v: v * 2.0, lambda v: v - 1.0, x))
    assert float(g(jnp.array(False), jnp.array(5.0))) == 4.0
    # eager grad through Python-level control flow
    d = netcl.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, x))(jnp.array(2.0))
    assert float(d) == 32.0  # d/dx x^4
    c, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(4.0))
    assert float(c) == 6.0 and np.asarray(ys).tolist() == [0.0, 0.0, 2.0, 9.0]
    with pytest.raises(TypeError, match="while_loop: the body must return"):
        netcl.jit(lambda x: lax.while_loop(lambda v: v < 3.0, lambda v: (v + 1.0, v), x))(
            jnp.array(0.0))


ROW_PATTERNS = {
    "softmax": (lambda x: netcl.nn.softmax(x), 1),
    "log_softmax": (lambda x: netcl.nn.log_softmax(x), 1),
    "logsumexp": (lambda x: netcl.nn.logsumexp(x, axis=-1), 1),
    "layer_norm": (lambda x: (x - x.mean(-1, keepdims=True)) /
                   jnp.sqrt(x.var(-1, keepdims=True) + 1e-5), 2),
    "cross_entropy": (lambda x: -jnp.mean(jnp.sum(netcl.nn.log_softmax(x) * (x > 0), axis=-1)),
                      3),
}


@pytest.mark.parametrize("name", sorted(ROW_PATTERNS))
def test_row_patterns_fuse_and_match_eager(name):
    f, max_kernels = ROW_PATTERNS[name]
    rng = np.random.default_rng(0)
    for shape in [(6, 10), (3, 4, 300), (1, 1)]:
        x = jnp.asarray(rng.standard_normal(shape).astype(np.float32) * 3)
        low = netcl.jit(f).lower(x)
        if shape[-1] > 1:
            assert len(low.kernels) <= max_kernels, low.as_text()
        assert_close(netcl.jit(f)(x), np.asarray(f(x)), rtol=2e-5, atol=2e-6)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), shape=st.sampled_from([(5, 7), (2, 3, 33), (4, 1), (8,)]),
       red=st.sampled_from(["sum", "max", "min", "mean"]), pre=st.sampled_from([0, 1, 2]),
       post=st.sampled_from([0, 1, 2]))
def test_random_reduction_programs_match_eager(seed, shape, red, pre, post):
    def f(x, y):
        a = [x, jnp.exp(x * 0.5), jnp.tanh(x) + y][pre]
        r = getattr(jnp, red)(a, axis=-1, keepdims=True)
        return [a - r, jnp.sqrt(jnp.abs(r) + 1.0) * a, r * 2.0][post]
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    y = jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    assert_close(netcl.jit(f)(x, y), np.asarray(f(x, y)), rtol=2e-5, atol=2e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000),
       case=st.sampled_from([((6, 10), (10,), False), ((6, 10), (6, 1), False),
                             ((2, 3, 33), (33,), False), ((2, 3, 33), (2, 3, 1), False),
                             ((2, 3, 33), (3, 33), True), ((2, 3, 33), (2, 1, 1), True),
                             ((6, 10), (1, 1), False)]))
def test_row_kernels_read_column_and_row_broadcasts_directly(seed, case):
    """A bias per column or a value per row, broadcast into a row group, reads at k or at
    the row (no generic index arithmetic); other broadcasts take the generic index."""
    shape, bshape, generic = case
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal(shape).astype(np.float32) * 3)
    b = jnp.asarray(rng.standard_normal(bshape).astype(np.float32))

    def f(x, b):
        z = x * 0.5 + b
        return netcl.nn.log_softmax(z), jnp.sum(netcl.nn.softmax(z) * b, axis=-1)
    [row] = [k for k in netcl.jit(f).lower(x, b).kernels if k.name.startswith("rowfused")]
    if not netcl.default_device().is_numpy:     # (the NumPy fallback has no sources)
        assert ("meta[" in row.source) == generic, row.source
    for got, want in zip(netcl.jit(f)(x, b), f(x, b)):
        assert_close(got, np.asarray(want), rtol=2e-5, atol=2e-6)


def test_loss_value_and_logits_gradient_share_one_row_kernel():
    """A cross-entropy's log-softmax, per-row losses and logits gradient are one row kernel:
    the loss's mean over the rows (0-d, for the outputs only) moves after it instead of
    closing it; a row reduction of other inputs over the same rows joins an open group."""
    rng = np.random.default_rng(4)
    z = jnp.asarray(rng.standard_normal((6, 10)).astype(np.float32) * 3)
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 6)])

    def f(z, y):
        return netcl.value_and_grad(
            lambda z: -jnp.mean(jnp.sum(netcl.nn.log_softmax(z) * y, axis=-1)))(z)

    def g(z, y):
        return netcl.nn.softmax(z), jnp.sum(jnp.exp(y), axis=-1) + 1.0
    for fun, names in [(f, ["rowfused", "rowfused"]), (g, ["rowfused"])]:
        low = netcl.jit(fun).lower(z, y)
        assert [k.name.rstrip("0123456789") for k in low.kernels] == names, low.as_text()
        for a, b in zip(netcl.jit(fun)(z, y), fun(z, y)):
            assert_close(a, np.asarray(b), rtol=2e-6, atol=1e-6)


def test_row_group_with_two_outputs_sharing_the_reduced_value():
    def f(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        s = jnp.sum(e, axis=-1, keepdims=True)
        return e / s, e * 2.0 + s
    x = jnp.asarray(np.random.default_rng(3).standard_normal((5, 19)).astype(np.float32))
    got, want = netcl.jit(f)(x), f(x)
    for a, b in zip(got, want):
        assert_close(a, np.asarray(b), rtol=2e-6, atol=1e-6)


def test_lowered_kernels_are_the_launches_of_a_train_step(monkeypatch):
    """lower().kernels lists what a call enqueues, in order: on CPUs a weight gradient's
    pack kernel and its optimizer update as a kernel of its own are in the list."""
    import pyopencl as cl
    if netcl.default_device().is_numpy:
        pytest.skip("no OpenCL device: nothing is enqueued")
    launched, enqueue = [], cl.enqueue_nd_range_kernel

    def recording(queue, kernel, *args, **kw):
        launched.append(kernel.function_name)
        return enqueue(queue, kernel, *args, **kw)
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", recording)
    netcl.test_util.forget_launchers()      # launchers bind the enqueue when they are built
    try:
        # (the first weight gradient, 256x384 over a batch of 128, is above
        # linalg.PACK_MIN_FMAS: its operands are packed)
        step, params, state = mlp_adam_step(128, 256, (384, 128), 10, lr=1e-3, seed=0)
        jf = netcl.jit(step)
        listed = [k.name for k in jf.lower(params, state).kernels]
        params, state, _ = jf(params, state)
        launched.clear()
        jf(params, state)

        def numbered(names):    # (a group's number comes from its trace; a kernel built
            # with others in one program may carry the batch's suffix, program_batch)
            return [re.sub(r"[0-9]+", "#", re.sub(r"__b[0-9]+$", "", n)) for n in names]
        assert numbered(launched) == numbered(listed)
        if netcl.default_device().kind == "cpu":   # weight gradients read packed operands
            assert "netcl_pack_slivers" in listed
    finally:
        netcl.test_util.forget_launchers()


def test_optimizer_scalars_share_one_kernel_and_constants_fold():
    """Adam's step count and both bias corrections are one small kernel (or a segment of
    one: horizontal fusion may gather it with other groups); -1/batch of a mean's
    gradient folds to a literal (no kernel); scalar broadcasts are read, not materialised."""
    from netcl import optim
    params = {"w": jnp.ones((6, 5)), "b": jnp.ones(5)}
    opt = optim.adam(1e-2)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32))

    def step(p, s):
        g = netcl.grad(lambda p: jnp.mean((x @ p["w"] + p["b"]) ** 2))(p)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s

    low = netcl.jit(step).lower(params, opt.init(params))
    scalar_kernels = [e for e in low.ir.eqns if any(o.aval.ndim == 0 for o in e.outputs)]
    assert len(scalar_kernels) == 1, low.as_text()
    assert not any(e.prim.name == "broadcast_in_dim" and e.inputs[0].aval.ndim == 0
                   for e in low.ir.eqns), low.as_text()
    got, want = netcl.jit(step)(params, opt.init(params)), step(params, opt.init(params))
    from netcl.tree_util import tree_leaves
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        assert_close(a, np.asarray(b), rtol=1e-5, atol=1e-6)


def test_free_scalars_join_the_first_row_kernel():
    """An optimizer's step count and bias corrections (0-d values of the call's inputs only)
    are computed by the first row kernel when nothing reads them before it; a 0-d value
    read before the row kernel keeps a kernel of its own. Both as eager."""
    from netcl import optim
    from netcl.transforms.fusion import FusedPrimitive
    from netcl.tree_util import tree_leaves
    rng = np.random.default_rng(5)
    params = {"w": jnp.asarray(rng.standard_normal((6, 10)).astype(np.float32))}
    x = jnp.asarray(rng.standard_normal((4, 6)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 4)])
    opt = optim.adam(1e-2)

    def step(p, s):
        loss, g = netcl.value_and_grad(
            lambda p: -jnp.mean(jnp.sum(netcl.nn.log_softmax(x @ p["w"]) * y, axis=-1)))(p)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s, loss

    def scalar_groups(low):
        return [e for e in low.ir.eqns if isinstance(e.prim, FusedPrimitive) and
                e.outputs[0].aval.ndim == 0]
    state = opt.init(params)
    low = netcl.jit(step).lower(params, state)
    assert not scalar_groups(low), low.as_text()
    if not netcl.default_device().is_numpy:     # row 0 alone computes them (b1 ** count)
        src = next(k.source for k in low.kernels if k.name.startswith("rowfused"))
        assert "pow(" in src and src.index("pow(") > src.index("if (row == 0)"), src
    jf, p, s, pe, se = netcl.jit(step), params, state, params, state
    for _ in range(3):
        p, s, loss = jf(p, s)
        pe, se, loss_e = step(pe, se)
        for a, b in zip(tree_leaves((p, s, loss)), tree_leaves((pe, se, loss_e))):
            assert_close(a, np.asarray(b), rtol=1e-5, atol=1e-6)

    def early(x, t):
        scale = t * 2.0 + 1.0
        return netcl.nn.log_softmax(x * scale), scale
    t = jnp.asarray(np.float32(0.25))
    assert len(scalar_groups(netcl.jit(early).lower(x, t))) == 1
    for a, b in zip(netcl.jit(early)(x, t), early(x, t)):
        assert_close(a, np.asarray(b), rtol=1e-6, atol=1e-6)


def test_scalar_steps_launch_just_before_their_first_reader():
    """A step computing only scalars runs just before the step that first reads it, so a
    call's first launch is real work (the device idles until it comes); a scalar only the
    call returns runs last."""
    x = jnp.asarray(np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32))

    def f(x, t):
        c = (t + 1.0) * 2.0                  # traced first
        return jnp.tanh(x @ x) @ x * c, t * 3.0

    low = netcl.jit(f).lower(x, jnp.asarray(3.0))
    eqns = low.ir.eqns
    scalar = [k for k, e in enumerate(eqns) if all(o.aval.ndim == 0 for o in e.outputs)]
    assert scalar and scalar[0] > 0 and eqns[0].prim.name.startswith("dot_general"), low.as_text()
    readers = [k for k, e in enumerate(eqns) if any(v.id == o.id for v in e.inputs
                                                    for o in eqns[scalar[0]].outputs)]
    assert readers and readers[0] == scalar[0] + 1, low.as_text()
    got = netcl.jit(f)(x, jnp.asarray(3.0))
    want = f(x, jnp.asarray(3.0))
    for a, b in zip(got, want):
        assert_close(a, np.asarray(b), rtol=1e-5, atol=1e-5)


def test_reductions_run_just_after_their_inputs():
    """A step that reads much more than it writes (a column sum with its update) runs right
    after the producers of its inputs, while they are in cache, not where the trace put it
    (after an unrelated product); small reductions and everything else keep their order."""
    rng = np.random.default_rng(2)
    x, w, v = (jnp.asarray(rng.standard_normal(s).astype(np.float32))
               for s in ((256, 128), (128, 128), (128, 64)))

    def f(x, w, v):
        h = jnp.maximum(x @ w, 0.0)          # 128 KB
        other = jnp.tanh(w @ w) @ v          # traced before the sum, independent of h
        return other, jnp.sum(h, axis=0) * 0.5, jnp.sum(v)

    low = netcl.jit(f).lower(x, w, v)
    eqns = low.ir.eqns
    names = [e.prim.name for e in eqns]
    at = next(k for k, n in enumerate(names) if n.startswith("reduce_sum") and
              eqns[k].outputs[0].aval.shape == (128,))
    assert at == 1 and names[0].startswith("dot_general"), low.as_text()
    small = next(k for k, e in enumerate(eqns) if e.outputs[0].aval.shape == ())
    assert small == len(eqns) - 1, low.as_text()
    got = netcl.jit(f)(x, w, v)
    for a, b in zip(got, f(x, w, v)):
        assert_close(a, np.asarray(b), rtol=1e-4, atol=1e-4)


def test_cache_tells_layouts_apart_by_weak_type():
    """The call's fast lookup by layout ids retraces where the full key would: a weak-typed
    argument (a Python scalar) against a float32 array of the same shape."""
    traces = []

    @netcl.jit
    def f(x):
        traces.append(1)
        return x * 2.0
    f(2.0)
    f(3.0)
    assert len(traces) == 1
    f(jnp.asarray(np.float32(2.0)))
    assert len(traces) == 2
    f(4.0)
    assert len(traces) == 2


def test_fast_path_checks_structure_and_every_leaf():
    """A call with the last signature's structure skips the generic flatten (a compiled
    matcher plus layout ids); any other structure, layout or leaf type takes the full
    lookup and gives what eager execution gives."""
    traces = []

    @netcl.jit
    def f(p, x):
        traces.append(1)
        return [p[0] * x + p[1][0], p[1][1] - x]
    x = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    p = (jnp.ones((2, 3)), [jnp.full((2, 3), 2.0), jnp.full((2, 3), 3.0)])
    want = [np.asarray(p[0]) * np.asarray(x) + 2.0, 3.0 - np.asarray(x)]

    def check(p, x, want, n_traces):
        got = f(p, x)
        assert isinstance(got, list) and len(got) == 2
        for g, w in zip(got, want):
            assert_close(g, w)
        assert len(traces) == n_traces
    check(p, x, want, 1)
    check(p, x, want, 1)                                             # the fast path
    xt = jnp.transpose(jnp.asarray(np.asarray(x).T.copy()))          # strided, same values
    check(p, xt, want, 1)
    check((p[0], (p[1][0], p[1][1])), x, want, 2)                    # tuple for the list
    check(p, 2.0, [np.asarray(p[0]) * 2.0 + 2.0, 1.0 + 0 * np.asarray(p[0])], 3)
    check(p, x, want, 3)
    check(p, x.astype(np.float64), want, 4)
    with pytest.raises(TypeError, match="argument of type str"):
        f((p[0], [p[1][0], "a"]), x)
    check(p, x, want, 4)


def test_compiled_executable_accepts_other_layouts():
    """The launchers recorded on the first run serve dense arguments; a strided view takes
    the generic path and still gives the right answer."""
    f = lambda a, b: jnp.tanh(a) * b + 1.0  # noqa: E731
    a = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4) / 10)
    b = jnp.ones((3, 4), jnp.float32)
    jf = netcl.jit(f)
    exe = jf.lower(a, b).compile().executable
    at = jnp.transpose(jnp.asarray(np.asarray(a).T.copy()))   # same values, strided
    assert_close(exe([at, b])[0], np.tanh(np.asarray(a)) + 1.0)   # first run: strided
    assert_close(jf(a, b), np.tanh(np.asarray(a)) + 1.0)          # jit's dense call after it
    assert_close(exe([a, b])[0], np.tanh(np.asarray(a)) + 1.0)
    assert_close(exe([at, b])[0], np.tanh(np.asarray(a)) + 1.0)
    assert_close(exe([a, b * 2.0])[0], np.tanh(np.asarray(a)) * 2.0 + 1.0)


def test_passes_are_named_checked_and_dumped(tmp_path, monkeypatch):
    from netcl.core.ir import IR
    from netcl.transforms.passes import PASSES, IRCheckError, check_ir
    names = [p.name for p in PASSES]
    assert len(set(names)) == len(names)
    order = [names.index(n) for n in ("row_fuse", "fuse_elementwise", "fuse_epilogues")]
    assert order == sorted(order)
    monkeypatch.setenv("NETCL_DUMP_IR", str(tmp_path))

    def softmax_scaled(x):
        return jax_like_softmax(x) * 2.0
    x = jnp.ones((4, 8))
    out = netcl.jit(softmax_scaled)(x)
    np.testing.assert_allclose(np.asarray(out), np.full((4, 8), 0.25), rtol=1e-6)
    (folder,) = [d for d in tmp_path.iterdir() if d.name.endswith("softmax_scaled")]
    files = sorted(f.name for f in folder.iterdir())
    assert files == ["00_traced.txt"] + [f"{k:02d}_{n}.txt" for k, n in enumerate(names, 1)]
    assert "rowfused" in (folder / f"{names.index('row_fuse') + 1:02d}_row_fuse.txt").read_text()
    assert "rowfused" not in (folder / "00_traced.txt").read_text()
    # the check catches what a broken pass could leave: a read before the definition
    ir = netcl.make_ir(lambda a: jnp.exp(a) + 1.0)(x)
    check_ir(ir)
    broken = IR(ir.invars, ir.constvars, ir.consts, list(reversed(ir.eqns)), ir.outvars)
    with pytest.raises(IRCheckError, match="reads .* before it is defined"):
        check_ir(broken, "reversed")


def jax_like_softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def test_transforms_of_a_jitted_function_stay_compiled():
    """grad, jvp, vmap and hessian of jit(f) run compiled versions of their derivative of f,
    made once per signature: calling them again traces nothing; values equal the
    transforms of the plain function."""
    traces = []

    def plain(x, w):
        h = jnp.tanh(x @ w)
        return jnp.sum(h * h), h * 2.0
    f = netcl.jit(lambda x, w: (traces.append(1), plain(x, w))[1])
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.standard_normal((4, 3)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((3, 2)).astype(np.float32))
    loss = lambda g: (lambda x, w: g(x, w)[0])   # noqa: E731
    want = netcl.grad(loss(plain), argnums=(0, 1))(x, w)
    for _ in range(3):
        got = netcl.grad(loss(f), argnums=(0, 1))(x, w)
    assert len(traces) == 2                  # the forward and the backward, once each
    for a, b in zip(got, want):
        assert_close(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    n = len(traces)
    for _ in range(2):
        per_row = netcl.vmap(f, in_axes=(0, None))(x[:, None], w)
    assert len(traces) == n + 1
    for a, b in zip(per_row, netcl.vmap(plain, in_axes=(0, None))(x[:, None], w)):
        assert_close(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    t = (jnp.ones_like(x), jnp.ones_like(w))
    (_, y), (_, dy) = netcl.jvp(f, (x, w), t)
    assert_close(np.asarray(dy), np.asarray(netcl.jvp(plain, (x, w), t)[1][1]), rtol=1e-5,
                 atol=1e-6)
    assert_close(np.asarray(netcl.hessian(loss(f))(x, w)),
                 np.asarray(netcl.hessian(loss(plain))(x, w)), rtol=1e-4, atol=1e-5)
    # staged inside another function, the call is traced through and fuses with the rest
    ir = netcl.make_ir(lambda x, w: netcl.grad(loss(f))(x, w) * 3.0)(x, w)
    assert "jit_call" not in str(ir)
    assert_close(np.asarray(netcl.jit(netcl.grad(loss(f)))(x, w)), np.asarray(want[0]),
                 rtol=1e-5, atol=1e-6)


def test_cpu_row_kernels_walk_rows_with_the_bits_of_a_row_per_work_item():
    """On CPUs a row kernel's work-item walks about Target.elementwise_walk vectors' worth of
    rows, in work-groups of one (a partial last walk where the rows do not divide): the
    same bits as a work-item per row (a walk of 1)."""
    dev = netcl.default_device()
    if dev.is_numpy or dev.kind != "cpu":
        pytest.skip("CPU row kernels")
    rng = np.random.default_rng(4)
    per_item = dev.target.elementwise_walk * dev.target.vector_width // 10
    shapes = [(per_item * 2 + 3, 10), (5, 3), (3, 5000), (per_item - 1, 10)]
    xs = [jnp.asarray(rng.standard_normal(s).astype(np.float32) * 3) for s in shapes]

    def f(x):
        return netcl.nn.log_softmax(x), netcl.nn.softmax(x * 0.5).sum(-1)

    walked = [[np.asarray(o) for o in netcl.jit(f)(x)] for x in xs]
    for x, outs in zip(xs, walked):
        for got, want in zip(outs, f(x)):
            assert_close(got, np.asarray(want), rtol=2e-5, atol=2e-6)
    with netcl.test_util.override_target(dev, elementwise_walk=1):
        plain = [[np.asarray(o) for o in netcl.jit(f)(x)] for x in xs]
    for a, b in zip(walked, plain):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)


def test_a_reshape_that_copies_a_strided_intermediate():
    """A reshape of a transposed intermediate copies: building the call's launchers on
    layout probes (no buffers) must neither run that copy nor take it for a view."""
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    f = lambda v: jnp.reshape(jnp.transpose(v * 2), (-1,)) + 1  # noqa: E731
    want = (x * 2).T.reshape(-1) + 1
    assert_close(netcl.jit(f)(jnp.asarray(x)), want)
    assert_close(f(jnp.asarray(x)), want)          # the eager launcher cache is not misled
    y = np.arange(60.0, dtype=np.float32).reshape(4, 5, 3)
    g = lambda v: jnp.sum(jnp.reshape(jnp.transpose(v, (1, 0, 2))[::2], (-1, 3)) ** 2)  # noqa
    assert_close(netcl.jit(g)(jnp.asarray(y)),
                 np.sum(np.transpose(y, (1, 0, 2))[::2].reshape(-1, 3) ** 2), rtol=1e-6)
    # (a grouped, dilated, strided convolution's gradient reshapes such views)
    from netcl.primitives import conv as C
    kw = dict(window_strides=(2, 1), padding=((1, 0), (0, 2)), feature_group_count=2,
              rhs_dilation=(1, 2))
    rng = np.random.default_rng(11)
    a = jnp.asarray(rng.standard_normal((2, 4, 5, 4)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((6, 2, 3, 2)).astype(np.float32))
    grad = netcl.grad(lambda a, w: jnp.sum(C.conv_general_dilated(a, w, **kw) ** 2), (0, 1))
    for got, ref in zip(netcl.jit(grad)(a, w), grad(a, w)):
        assert_close(got, np.asarray(ref), rtol=1e-5, atol=1e-5)
